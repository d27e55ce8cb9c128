# fbrtree_pm under insert/delete load from 2 clients, stopped with pg_ctl stop -m immediate at
# random moments (12 cycles, half with synchronous_commit = off): after each restart both
# indexes verify against the heap (recovery repaired any split or merge a crash cut short,
# reconciliation removed entries whose heap tuples did not survive), an index scan counts what
# a sequential scan counts, and no row comes back twice.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/../lib";
use PmCrashCycles;
use PmNode;

test_seed();
my $node = pm_node('fbr_crash');
$node->safe_psql(
	'postgres', setseed() . q{
	CREATE TABLE s (id bigserial, p point, b box);
	INSERT INTO s (p, b)
	SELECT point(random() * 1000, random() * 1000),
	       box(point(x, y), point(x + random() * 5, y + random() * 5))
	  FROM (SELECT random() * 1000 AS x, random() * 1000 AS y FROM generate_series(1, 20000)) r;
	CREATE INDEX s_p ON s USING fbrtree_pm (p);
	CREATE INDEX s_b ON s USING fbrtree_pm (b);
});

# inserts in a small moving area split nodes; deletes of a strip merge them
my $script = $node->basedir . '/load.sql';
append_to_file($script, <<'SQL');
\set x random(0, 990)
INSERT INTO s (p, b)
SELECT CASE WHEN g % 10 = 0 THEN NULL ELSE point(:x + random() * 10, random() * 1000) END,
       box(point(:x + random() * 10, g), point(:x + random() * 10 + 1, g + 1))
  FROM generate_series(1, 20) g;
DELETE FROM s WHERE id IN (SELECT id FROM s WHERE p <@ box(point(:x, 0), point(:x + 3, 1000)) LIMIT 15);
SQL

my $cycles = 12;
my $failures = crash_cycles(
	$node, $script, $cycles,
	"SELECT fbrtree_pm_check('s_p', true); SELECT fbrtree_pm_check('s_b', true);",
	q{SELECT count(*), count(DISTINCT ctid) FROM s WHERE p <@ box '((0,0),(1000,1000))';
	  SELECT count(*), count(DISTINCT ctid) FROM s WHERE b && box '((0,0),(1000,1000))';
	  SELECT count(*), count(DISTINCT ctid) FROM (SELECT ctid FROM s ORDER BY p <-> point '(500,500)') k;},
	q{SELECT count(*), count(*) FROM s WHERE p <@ box '((0,0),(1000,1000))';
	  SELECT count(*), count(*) FROM s WHERE b && box '((0,0),(1000,1000))';
	  SELECT count(*), count(*) FROM s;});
is($failures, 0,
	"$cycles immediate stops under insert/delete load: every restart verifies, index scans count what sequential scans count, no row twice"
);
ok($node->safe_psql('postgres', 'SELECT count(*) FROM s') > 20000, 'the load inserted rows');
like(
	slurp_file($node->logfile),
	qr/reconciled index "s_p" with its table after a crash/,
	'reconciliation ran after the crashes');

# A kill that loses an uncommitted insert's WAL (the WAL writer sleeps) leaves its entry in the
# pool and no heap tuple; after the restart (no load workers: the first insert reconciles the
# index) the first insert takes that heap item with the same point. One entry names it, and a
# transaction prepared before the kill keeps its row's entry for its COMMIT PREPARED.
$node->append_conf('postgresql.conf',
	"wal_writer_delay = '10s'\npm_index.startup_load_workers = 0\nmax_prepared_transactions = 2");
$node->restart;
$node->safe_psql(
	'postgres', q{
	CREATE TABLE r (p point);
	CREATE INDEX r_p ON r USING fbrtree_pm (p);
	INSERT INTO r VALUES (point(1, 1));
	BEGIN; INSERT INTO r VALUES (point(3, 3)); PREPARE TRANSACTION 'before_kill';});
my $open = $node->background_psql('postgres');
$open->query_safe('BEGIN; INSERT INTO r VALUES (point(2, 2))');
$node->kill9;
$open->quit;
start_after_kill($node);
$node->safe_psql('postgres', 'INSERT INTO r VALUES (point(2, 2))');
$node->safe_psql('postgres', "COMMIT PREPARED 'before_kill'");
my $rows = q{SELECT string_agg(p::text || ctid::text, ',' ORDER BY ctid) FROM r WHERE p <@ box '((0,0),(3,3))'};
is( $node->safe_psql('postgres', $BY_INDEX . $rows),
	$node->safe_psql('postgres', $BY_HEAP . $rows),
	'after a kill, an insert into the heap item of a lost one leaves one entry, a prepared row keeps its own');
is($node->safe_psql('postgres', "SELECT fbrtree_pm_check('r_p', true)"), '', '... and the index verifies');

$node->stop;
done_testing();
