#!/usr/bin/env bash
# The Debian package (tools/make-deb, `make deb`) as a node gets it: built for Debian's
# PostgreSQL 15, its metadata and files checked, installed with apt over the build tests/run
# installed, a fresh cluster using it (CREATE EXTENSION, indexes of each kind answering as
# btree and GiST do, the verifiers), then removed, which takes its files away. Prints TAP; the
# caller installs its own build again afterwards. Root only (apt): skipped, and said so, otherwise.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PM_WORK=${TMPDIR:-/tmp}/package.$$
mkdir -p "$PM_WORK"
chmod 755 "$PM_WORK"
export PM_WORK
# shellcheck source=tests/lib/common.sh
. "$ROOT/tests/lib/common.sh"
CLUSTER="$PM_WORK/cluster"
trap 'pm_cluster_stop "$CLUSTER"; rm -rf "$PM_WORK"' EXIT
# shellcheck source=tests/lib/tap.sh
. "$ROOT/tests/lib/tap.sh"
echo "1..7"
if ((EUID != 0)); then
	for ((i = 1; i <= 7; i++)); do echo "ok $i # SKIP installing a package needs root"; done
	exit 0
fi

PACKAGE=postgresql-15-pm-index
deb=$(PG_CONFIG=/usr/lib/postgresql/15/bin/pg_config "$ROOT/tools/make-deb" "$PM_WORK" 2>"$PM_WORK/make-deb.err")
ok $? "tools/make-deb builds $PACKAGE"
info=$(dpkg-deb --info "$deb" 2>&1)
[[ $info == *"Package: $PACKAGE"* && $info == *"Depends: postgresql-15, libpmem1"* ]]
ok $? "its control names the package and depends on postgresql-15 and libpmem1"
contents=$(dpkg-deb --contents "$deb" 2>&1)
missing=0
for f in ./usr/lib/postgresql/15/lib/pm_index.so ./usr/share/postgresql/15/extension/pm_index.control \
	./usr/share/postgresql/15/extension/pm_index--0.1.0.sql \
	./usr/share/postgresql/15/extension/pm_index_postgis.control \
	"./usr/share/doc/$PACKAGE/README.md" "./usr/share/doc/$PACKAGE/copyright"; do
	[[ $contents == *" $f"* ]] || {
		echo "# missing: $f"
		missing=1
	}
done
ok $missing "it holds the library, the control and SQL files of both extensions and the docs"

DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$deb" >"$PM_WORK/apt.log" 2>&1 &&
	dpkg -s "$PACKAGE" 2>/dev/null | grep -q '^Status: install ok installed'
ok $? "apt-get install ./$(basename "$deb") installs it"

answers=""
if pm_cluster_start "$CLUSTER" >"$PM_WORK/cluster.log" 2>&1; then
	answers=$(psql -X -qAt -v ON_ERROR_STOP=1 2>&1 <<'SQL'
CREATE EXTENSION pm_index;
CREATE TABLE t (k int8, s text COLLATE "C", p point);
INSERT INTO t SELECT g, md5(g::text), point(g % 100, g / 100) FROM generate_series(1, 20000) g;
CREATE TABLE u AS TABLE t;
CREATE INDEX ON t USING nbtree_pm (k);
CREATE INDEX ON t USING nvbtree_pm (s);
CREATE INDEX ON t USING phast_pm (k);
CREATE INDEX t_p ON t USING fbrtree_pm (p);
CREATE INDEX ON u (k);
CREATE INDEX ON u (s);
CREATE INDEX ON u USING gist (p);
SET enable_seqscan = off;
SELECT (SELECT sum(k) FROM t WHERE k BETWEEN 500 AND 1500) = (SELECT sum(k) FROM u WHERE k BETWEEN 500 AND 1500)
   AND (SELECT count(*) FROM t WHERE s >= 'f') = (SELECT count(*) FROM u WHERE s >= 'f')
   AND (SELECT count(*) FROM t WHERE p <@ box '((10,10),(20,20))') = (SELECT count(*) FROM u WHERE p <@ box '((10,10),(20,20))');
SELECT count(*) FROM pm_index_indexes;
SQL
	)
fi
[[ $answers == $'t\n4' ]]
rc=$?
((rc == 0)) || sed 's/^/# /' <<<"$answers" | head -n 20
ok $rc "a fresh cluster takes CREATE EXTENSION from it; nbtree_pm, nvbtree_pm, phast_pm and fbrtree_pm answer as btree and GiST"
pm_cluster_stop "$CLUSTER"

DEBIAN_FRONTEND=noninteractive apt-get remove -y -q "$PACKAGE" >>"$PM_WORK/apt.log" 2>&1 &&
	! dpkg -s "$PACKAGE" 2>/dev/null | grep -q '^Status: install ok installed'
ok $? "apt-get remove removes it"
[[ ! -e /usr/lib/postgresql/15/lib/pm_index.so && ! -e /usr/share/postgresql/15/extension/pm_index.control ]]
ok $? "and its files with it"
