# Tiered indexes (WITH (tiered = on)) through crashes, standbys and storage commands: immediate
# stops under insert/delete load (the replay workers applying as the clients insert), and with
# every insert waiting in the log (the workers paused); after each restart the indexes verify
# against the heap and index scans count what sequential scans count.  A streaming standby
# answers as the primary while the primary's rows wait in its logs; SET TABLESPACE copies a pool
# whose rows wait; DROP INDEX while the workers apply; the workers start on the first tiered
# insert and show in pg_stat_activity.
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
my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1);
$primary->append_conf('postgresql.conf',
	"shared_preload_libraries = 'pm_index'\nautovacuum = off\nallow_in_place_tablespaces = on");
$primary->start;
$primary->safe_psql('postgres', 'CREATE EXTENSION pm_index');
is($primary->safe_psql('postgres',
		q{SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'pm_index tier replay'}),
	'0', 'no replay worker runs before a tiered index is written');

$primary->safe_psql(
	'postgres', setseed() . q{
	CREATE TABLE t (id bigserial, k int4, v int8, s text COLLATE "C", p point);
	CREATE INDEX t_k ON t USING nbtree_pm (k) WITH (tiered = on);
	CREATE INDEX t_v ON t USING phast_pm (v) WITH (tiered = on);
	CREATE INDEX t_s ON t USING nbtree_pm (s) WITH (tiered = on);
	CREATE INDEX t_p ON t USING fbrtree_pm (p) WITH (tiered = on);
	INSERT INTO t (k, v, s, p) SELECT k, k * 7, 'prefix_common_' || k, point(k % 1000, k / 1000)
	  FROM (SELECT (random() * 100000)::int AS k FROM generate_series(1, 20000)) g;
});
ok($primary->poll_query_until('postgres',
		q{SELECT count(*) >= 1 FROM pg_stat_activity WHERE backend_type = 'pm_index tier replay'}),
	'the inserts started a replay worker, which shows in pg_stat_activity');

my $checks = 'SELECT nbtree_pm_check($$t_k$$, true); SELECT phast_pm_check($$t_v$$, true); '
  . 'SELECT nbtree_pm_check($$t_s$$, true); SELECT fbrtree_pm_check($$t_p$$, true);';
# the distances of the 50 points nearest one: the same whichever of equally near rows come
my $nearest = q{SELECT string_agg(d::text, ',') FROM (SELECT p <-> point '(250,50)' d FROM t ORDER BY 1 LIMIT 50) n;};
my $index_sql = 'SELECT count(*), count(DISTINCT ctid) FROM t WHERE k > 0; '
  . 'SELECT count(*), count(DISTINCT ctid) FROM t WHERE v >= 0; '
  . q{SELECT count(*), count(DISTINCT ctid) FROM t WHERE s >= 'prefix_common_5'; }
  . q{SELECT count(*), count(DISTINCT ctid) FROM t WHERE p <@ box '((0,0),(500,60))'; } . $nearest;
my $seq_sql = 'SELECT count(*), count(*) FROM t WHERE k > 0; SELECT count(*), count(*) FROM t WHERE v >= 0; '
  . q{SELECT count(*), count(*) FROM t WHERE s >= 'prefix_common_5'; }
  . q{SELECT count(*), count(*) FROM t WHERE p <@ box '((0,0),(500,60))'; } . $nearest;

my $script = $primary->basedir . '/insert.sql';
append_to_file($script, <<'SQL');
\set k random(1, 100000)
INSERT INTO t (k, v, s, p) SELECT :k + g, (:k + g) * 7, 'prefix_common_' || (:k + g), point((:k + g) % 1000, (:k + g) / 1000) FROM generate_series(1, 20) g;
DELETE FROM t WHERE id IN (SELECT id FROM t WHERE k = :k LIMIT 1);
SQL

my $cycles = 8;
is(crash_cycles($primary, $script, $cycles, $checks, $index_sql, $seq_sql),
	0, "$cycles immediate stops under load with the workers applying: every restart verifies");

# Every insert waits in the logs when the server stops: the first use after the restart applies
# them before anything reads the index.
sub pause_workers
{
	my ($node, $on) = @_;
	$node->safe_psql('postgres',
		"ALTER SYSTEM SET pm_index.debug_tier_pause = $on; SELECT pg_reload_conf(); SELECT pg_sleep(0.5)");
}
pause_workers($primary, 'on');
$primary->safe_psql('postgres',
	q{INSERT INTO t (k, v, s, p) SELECT g, g * 7, 'prefix_common_' || g, point(g % 1000, g / 1000) FROM generate_series(200001, 205000) g});
ok($primary->safe_psql('postgres', q{SELECT min(l.waiting_entries) FROM unnest('{t_k,t_p}'::regclass[]) i, pm_index_tier_lag(i) l}) >= 5000,
	'the inserts wait in the logs');
$primary->stop('immediate');
$primary->start;
is($primary->safe_psql('postgres', "SET enable_seqscan = off; SET enable_bitmapscan = off; $index_sql"),
	$primary->safe_psql('postgres', "SET enable_indexscan = off; SET enable_bitmapscan = off; $seq_sql"),
	'after a crash with every insert in the log, index scans count what sequential scans count');
is($primary->safe_psql('postgres', $checks), "\n\n\n", 'and the indexes verify');
is($primary->safe_psql('postgres', q{SELECT waiting_entries, waiting_bytes FROM pm_index_tier_lag('t_k')}),
	'0|0', 'the first use applied the log');

# A standby replays the primary's WAL records into its own pools: its answers are the primary's
# while the primary's rows wait in its logs.
$primary->safe_psql('postgres', "SELECT pg_create_physical_replication_slot('standby', true)");
$primary->backup('base');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'base', has_streaming => 1);
$standby->append_conf('postgresql.conf', "primary_slot_name = 'standby'");
$standby->start;
$primary->safe_psql('postgres', 'REINDEX TABLE t');
$primary->safe_psql('postgres',
	q{INSERT INTO t (k, v, s, p) SELECT g, g * 7, 'prefix_common_' || g, point(g % 1000, g / 1000) FROM generate_series(300001, 303000) g});
catch_up($primary, $standby);
my $on_primary = $primary->safe_psql('postgres', "SET enable_seqscan = off; SET enable_bitmapscan = off; $index_sql");
ok($primary->safe_psql('postgres', q{SELECT waiting_entries FROM pm_index_tier_lag('t_s')}) >= 3000,
	'the primary\'s inserts wait in its log');
$standby->poll_query_until('postgres',
	q{SELECT count(*) = 4 FROM pm_index_indexes WHERE pool_state <> 'building' AND index IS NOT NULL})
  or die 'the standby\'s pools are not built';
is($standby->safe_psql('postgres', "SET enable_seqscan = off; SET enable_bitmapscan = off; $index_sql"),
	$on_primary, 'the standby answers as the primary');

# SET TABLESPACE copies a pool whose rows wait in its log.
$primary->safe_psql('postgres', q{CREATE TABLESPACE ts LOCATION ''; ALTER INDEX t_k SET TABLESPACE ts});
is($primary->safe_psql('postgres', "SET enable_seqscan = off; SET enable_bitmapscan = off; $index_sql"),
	$on_primary, 'an index moved with rows in its log answers as before');
is($primary->safe_psql('postgres', 'SELECT nbtree_pm_check($$t_k$$, true)'), '', 'and verifies');

# The workers apply while an index is dropped.
pause_workers($primary, 'off');
$primary->safe_psql('postgres',
	q{INSERT INTO t (k, v, s) SELECT g, g * 7, 'prefix_common_' || g FROM generate_series(400001, 430000) g;
	  DROP INDEX t_v});
is($primary->safe_psql('postgres', "SET enable_seqscan = off; SET enable_bitmapscan = off; SELECT count(*) FROM t WHERE k > 400000"),
	'30000', 'the other indexes answer after a drop during replay');
$primary->poll_query_until('postgres', q{SELECT waiting_entries = 0 FROM pm_index_tier_lag('t_s')})
  or die 'the workers do not apply the log';
is($primary->safe_psql('postgres', 'SELECT nbtree_pm_check($$t_s$$, true)'), '', 'the workers applied the log');
catch_up($primary, $standby);
is($standby->safe_psql('postgres', 'SET enable_seqscan = off; SELECT count(*) FROM t WHERE k > 400000'),
	'30000', 'and the standby has the rows');
$standby->stop;
$primary->stop;
done_testing();
