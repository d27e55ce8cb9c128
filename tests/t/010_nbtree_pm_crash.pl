# nbtree_pm under insert load from 2 clients, stopped with pg_ctl stop -m immediate at random
# moments (20 cycles, half with synchronous_commit = off): after each restart the indexes (on
# int4, float8 and text, whose keys sharing a 14-byte prefix are wide) verify against the heap,
# an index scan counts what a sequential scan counts, and no row comes back twice.  An unlogged
# index comes back empty with a fresh pool, which a backend that mapped the old pool file uses
# too.  Then: DROP, TRUNCATE, REINDEX and a rolled-back CREATE INDEX leave no pool file behind.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/../lib";
use PmCrashCycles;
use PmNode;
use IPC::Run;
use Time::HiRes qw(usleep);

test_seed();
my $node = pm_node('crash');
$node->safe_psql(
	'postgres', setseed() . q{
	CREATE TABLE t (id bigserial, k int4, v float8, s text COLLATE "C");
	CREATE INDEX t_k ON t USING nbtree_pm (k);
	CREATE INDEX t_v ON t USING nbtree_pm (v);
	CREATE INDEX t_s ON t USING nbtree_pm (s);
	INSERT INTO t (k, v, s) SELECT k, random(), 'prefix_common_' || k
	  FROM (SELECT (random() * 100000)::int AS k FROM generate_series(1, 20000)) g;
});

my $script = $node->basedir . '/insert.sql';
append_to_file($script, <<'SQL');
\set k random(1, 100000)
INSERT INTO t (k, v, s) SELECT :k + g, random(), 'prefix_common_' || (:k + g) FROM generate_series(1, 20) g;
DELETE FROM t WHERE id IN (SELECT id FROM t WHERE k = :k LIMIT 1);
SQL

my $cycles = 20;
my $failures = crash_cycles(
	$node, $script, $cycles,
	"SELECT nbtree_pm_check('t_k', true); SELECT nbtree_pm_check('t_v', true); SELECT nbtree_pm_check('t_s', true);",
	'SELECT count(*), count(DISTINCT ctid) FROM t WHERE k > 0; SELECT count(*), count(DISTINCT ctid) FROM t WHERE v >= 0;'
	  . q{ SELECT count(*), count(DISTINCT ctid) FROM t WHERE s >= 'prefix_common_5';},
	'SELECT count(*), count(*) FROM t WHERE k > 0; SELECT count(*), count(*) FROM t WHERE v >= 0;'
	  . q{ SELECT count(*), count(*) FROM t WHERE s >= 'prefix_common_5';});
is($failures, 0,
	"$cycles immediate stops under insert/delete load: every restart verifies, index scans count what sequential scans count, no row twice"
);
ok($node->safe_psql('postgres', 'SELECT count(*) FROM t') > 20000, 'the load inserted rows');
$node->safe_psql('postgres', 'DROP INDEX t_s');

# An unlogged table is emptied by crash recovery; its index comes back empty, with a new pool.
$node->safe_psql('postgres',
	'CREATE UNLOGGED TABLE u (k int8); CREATE INDEX u_k ON u USING nbtree_pm (k); INSERT INTO u SELECT g FROM generate_series(1, 5000) g; CHECKPOINT;'
);
$node->stop('immediate');
$node->start;
is( $node->safe_psql(
		'postgres',
		'SET enable_seqscan = off; SELECT count(*) FROM u WHERE k < 100; INSERT INTO u VALUES (5); SELECT count(*) FROM u WHERE k = 5; SELECT nbtree_pm_check($$u_k$$, true);'
	),
	"0\n1\n",
	'an unlogged index is reset with its table after a crash and works');
# A backend that mapped the reset index's old pool file while planning, before another backend
# made the fresh pool, uses the fresh one (startup load off: the sessions make the first use).
$node->safe_psql('postgres',
	'ALTER SYSTEM SET pm_index.startup_load_workers = 0; SELECT pg_reload_conf(); INSERT INTO u SELECT g FROM generate_series(1, 5000) g; CHECKPOINT;'
);
$node->stop('immediate');
$node->start;
my $planned = $node->background_psql('postgres');
$planned->query_safe('SET enable_seqscan = off');
$planned->query_safe('EXPLAIN SELECT count(*) FROM u WHERE k < 100');
is($node->safe_psql('postgres', 'SET enable_seqscan = off; SELECT count(*) FROM u WHERE k < 100'),
	'0', 'another backend makes the reset index its fresh pool');
is($planned->query_safe('SELECT count(*) FROM u WHERE k < 100; SELECT nbtree_pm_check($$u_k$$, true)'),
	"0\n", 'and the backend that mapped the old pool file answers from the fresh one');
$planned->quit;
$node->safe_psql('postgres', 'ALTER SYSTEM RESET pm_index.startup_load_workers; SELECT pg_reload_conf(); DROP TABLE u');

# CREATE INDEX CONCURRENTLY and REINDEX CONCURRENTLY while 2 clients insert and delete: the
# validate phase must add every tuple the build scan missed, and nothing twice.
{
	my ($out, $err) = ('', '');
	my $pgbench = IPC::Run::start(
		[
			'pgbench', '-n', '-c', '2', '-j', '2', '-T', '8', '-f', $script,
			'-h', $node->host, '-p', $node->port, 'postgres'
		],
		'>', \$out, '2>', \$err);
	usleep(500_000);
	$node->safe_psql('postgres', 'CREATE INDEX CONCURRENTLY t_k_cic ON t USING nbtree_pm (k)');
	$node->safe_psql('postgres', 'REINDEX INDEX CONCURRENTLY t_k_cic');
	$pgbench->finish;
	is($node->safe_psql('postgres', "SELECT nbtree_pm_check('t_k_cic', true)"), '',
		'an index built and rebuilt CONCURRENTLY under insert load verifies against the heap');
	my $seq = $node->safe_psql('postgres',
		'SET enable_indexscan = off; SET enable_bitmapscan = off; SET enable_indexonlyscan = off; SELECT count(*) FROM t WHERE k > 0'
	);
	is( $node->safe_psql(
			'postgres', q{
		BEGIN;
		DROP INDEX t_k;        -- rolled back: only makes the planner use t_k_cic
		SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off;
		SELECT count(*) || ' ' || count(DISTINCT ctid) FROM t WHERE k > 0;
		ROLLBACK;
	}),
		"$seq $seq",
		'and its scans count what a sequential scan counts, no row twice');
	$node->safe_psql('postgres', 'DROP INDEX t_k_cic');
}

# Pool lifecycle: nothing is left behind.
sub pools
{
	return $node->safe_psql('postgres',
		"SELECT count(*) FROM pm_index_pools() WHERE database = (SELECT oid FROM pg_database WHERE datname = 'postgres')"
	);
}
my $before = pools();
is($before, '2', 'two indexes, two pools');
$node->safe_psql('postgres', 'REINDEX INDEX t_k');
is(pools(), '2', 'REINDEX replaces the pool');
$node->safe_psql('postgres', 'TRUNCATE t');
is(pools(), '2', 'TRUNCATE replaces the pools');
$node->safe_psql('postgres', 'BEGIN; CREATE INDEX t_rolled_back ON t USING nbtree_pm (k); ROLLBACK;');
is(pools(), '2', 'a rolled-back CREATE INDEX leaves no pool');
$node->safe_psql('postgres',
	'BEGIN; SAVEPOINT s; CREATE INDEX t_sub ON t USING nbtree_pm (k); ROLLBACK TO s; COMMIT;');
is(pools(), '2', 'a CREATE INDEX rolled back to a savepoint leaves no pool');
$node->safe_psql('postgres', 'DROP INDEX t_v');
is(pools(), '1', 'DROP INDEX removes its pool');
$node->safe_psql('postgres', 'CREATE INDEX CONCURRENTLY t_cic ON t USING nbtree_pm (v)');
$node->safe_psql('postgres', 'REINDEX INDEX CONCURRENTLY t_cic');
is(pools(), '2', 'CREATE and REINDEX INDEX CONCURRENTLY keep one pool per index');
$node->safe_psql('postgres', 'DROP TABLE t');
is(pools(), '0', 'DROP TABLE removes the pools');
my @files = glob($node->data_dir . '/pm_index/*');
is(scalar(@files), 0, 'the pool directory is empty');

$node->stop;
done_testing();
