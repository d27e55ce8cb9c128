# A streaming standby keeps its own pools from the primary's WAL: under pgbench load (inserts,
# non-HOT updates, deletes, VACUUM) its queries through every access method's index answer as a
# sequential scan does at the same replay point; the verifiers pass there and the entry counts are
# the primary's; a standby killed during replay comes back and catches up; SET TABLESPACE and a
# primary killed during a build leave it working, and a dropped index's pool goes; index-only
# cursors hold the replay of VACUUM's deletes, or are cancelled after the standby delay; a promotion mid-load serves reads and writes
# through the indexes at once, with no REINDEX.  pg_walinspect shows the records.
use strict;
use warnings;
use FindBin;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

use lib "$FindBin::Bin/../lib";
use PmNode;
use PmTable;

my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1);
$primary->append_conf('postgresql.conf',
	"shared_preload_libraries = 'pm_index'\nautovacuum = off\nmax_standby_streaming_delay = -1\n"
	  . 'allow_in_place_tablespaces = on');
$primary->start;
$primary->safe_psql('postgres', 'CREATE EXTENSION pm_index; CREATE EXTENSION pg_walinspect');

# The standby streams through a slot reserved now, and so saved on disk with a position the
# standby has: a primary killed while the standby is a WAL segment or more behind (as it may be,
# receiving a large build's records, on a busy machine) would otherwise recycle that segment at
# the checkpoint ending its crash recovery, and the standby could never stream again.
$primary->safe_psql('postgres', "SELECT pg_create_physical_replication_slot('standby', true)");

# The standby exists before any index: every pool it has comes from WAL.
$primary->backup('base');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'base', has_streaming => 1);
$standby->append_conf('postgresql.conf', "primary_slot_name = 'standby'");
$standby->start;

# Indexes built over rows (a build's records) and indexes rows go into one by one (inserts).
create_table($primary);
catch_up($primary, $standby);

for my $index (sort keys %QUERIES)
{
	like(
		$standby->safe_psql('postgres',
			"${BY_INDEX}EXPLAIN (COSTS OFF) SELECT count(*), sum(id) FROM t WHERE $QUERIES{$index}"),
		qr/Index (Only )?Scan using $index/,
		"the standby plans $index");
}

# The standby's answers through each index and through the heap, with replay paused.
sub compare_at_pause
{
	my ($what) = @_;
	my $differ;
	at_one_replay_point($standby, sub { $differ = answers_differ($standby) });
	is($differ, '', "$what: every index answers as the heap does at one replay point");
}

compare_at_pause('after the builds');

# Load: inserts, updates that move rows to new TIDs (an indexed column changes), deletes, and
# VACUUM, which frees heap items that later inserts reuse.
sub start_load
{
	my ($seconds, $out) = @_;
	return start_write_load($primary, $seconds, $out);
}

my $out = '';
my $load = start_load(12, \$out);
for my $round (1 .. 3)
{
	sleep(3);
	compare_at_pause("under load, round $round");
}
$load->finish;
like($out, qr/number of transactions actually processed: [1-9]/, 'the load ran');
$primary->safe_psql('postgres', 'VACUUM t');
catch_up($primary, $standby);
compare_at_pause('after the load and a VACUUM');

# The verifiers on the standby, replay paused (it is the index's one writer there).
$standby->safe_psql('postgres', 'SELECT pg_wal_replay_pause()');
$standby->poll_query_until('postgres', "SELECT pg_get_wal_replay_pause_state() = 'paused'");
is( $standby->safe_psql(
		'postgres', verify_sql()),
	verified(),
	'every verifier passes on the standby, every heap tuple indexed');
$standby->safe_psql('postgres', 'SELECT pg_wal_replay_resume()');
my ($rc, $stdout, $stderr) = $standby->psql('postgres', q{SELECT nbtree_pm_check('t_k')});
like($stderr, qr/needs WAL replay paused.*HINT:  Run SELECT pg_wal_replay_pause/s,
	'a verifier refuses to run while replay changes the index');

# As many entries per index as the primary's.
my $entries = qq{SELECT string_agg(i || '=' || (pm_index_stats(i::regclass)).entries, ' ' ORDER BY i)
	FROM unnest('\{$INDEXES\}'::text[]) i};
is($standby->safe_psql('postgres', $entries), $primary->safe_psql('postgres', $entries),
	'the standby holds as many entries per index as the primary');

# A standby killed while it replays: on restart its pools may be ahead of the heap pages replay
# meets again; they are used once replay has passed them, and answer as the heap does.
$out = '';
$load = start_load(8, \$out);
sleep(3);
$standby->stop('immediate');
sleep(1);
$standby->start;
$load->finish;
catch_up($primary, $standby);
compare_at_pause('after the standby was killed during replay');
like(
	$standby->safe_psql('postgres',
		"${BY_INDEX}EXPLAIN (COSTS OFF) SELECT count(*) FROM t WHERE $QUERIES{t_v}"),
	qr/Index (Only )?Scan using t_v/,
	'the restarted standby plans the index again');

# The records, as pg_walinspect shows them.
my $before = $primary->safe_psql('postgres', 'SELECT pg_current_wal_insert_lsn()');
$primary->safe_psql('postgres',
	q{INSERT INTO t (k, s, v, bx) VALUES (1, 'walinspect', 1, box(point(0,0), point(1,1)));
	  DELETE FROM t WHERE s = 'walinspect'; VACUUM (INDEX_CLEANUP ON) t; CHECKPOINT;});
my $records = $primary->safe_psql(
	'postgres', qq{SELECT record_type, description FROM pg_get_wal_records_info('$before', pg_current_wal_flush_lsn())
		WHERE resource_manager = 'pm_index' ORDER BY start_lsn});
like($records, qr/^INSERT\|rel \d+\/\d+\/\d+; nbtree_pm; 1 entry$/m, 'pg_walinspect shows an insert');
like($records, qr/^INSERT\|rel \d+\/\d+\/\d+; fbrtree_pm; 1 entry$/m, 'of each access method');
like($records, qr/^INSERT\|rel \d+\/\d+\/\d+; hash_pm; 1 entry$/m, 'hash_pm\'s too');
like($records, qr/^DELETE\|rel \d+\/\d+\/\d+; phast_pm; \d+ entr/m, 'and VACUUM\'s deletes');
# pg_waldump, a frontend program, cannot load the library's descriptions: it lists the records
# under the resource manager's id.
my $after = $primary->safe_psql('postgres', 'SELECT pg_current_wal_flush_lsn()');
my ($waldump, $waldump_err) = ('', '');
IPC::Run::run(
	[
		'pg_waldump', '--path', $primary->data_dir . '/pg_wal', '--start', $before, '--end', $after,
		'--rmgr', 'custom128'
	],
	'>', \$waldump, '2>', \$waldump_err);
like($waldump, qr/^rmgr: custom128 .*len \(rec\/tot\)/m, 'pg_waldump lists the records as custom128');

# SET TABLESPACE gives the index a new relfilenode: the standby copies its own pool as the primary
# copies its (a COPY record), and goes on using the index.
$primary->safe_psql('postgres',
	"CREATE TABLESPACE moved LOCATION ''; ALTER INDEX t_k SET TABLESPACE moved; ALTER INDEX t_bx SET TABLESPACE moved");
$primary->safe_psql('postgres', q{UPDATE t SET k = k + 1 WHERE id % 10 = 0});
catch_up($primary, $standby);
like(
	$standby->safe_psql('postgres',
		"${BY_INDEX}EXPLAIN (COSTS OFF) SELECT count(*) FROM t WHERE $QUERIES{t_k}"),
	qr/Index (Only )?Scan using t_k/,
	'after SET TABLESPACE the standby plans the moved index');
compare_at_pause('after SET TABLESPACE and updates');

# The primary killed during a build: the standby drops nothing it uses, and a new build replays.
$primary->safe_psql('postgres', 'CREATE TABLE big AS SELECT g AS k FROM generate_series(1, 300000) g');
my $build = IPC::Run::start(
	[
		'psql', '-XAtq', '-h', $primary->host, '-p', $primary->port, '-d', 'postgres',
		'-c', 'CREATE INDEX big_k ON big USING nbtree_pm (k)'
	],
	'>', \my $build_out, '2>', \my $build_err);
usleep(150_000);
$primary->stop('immediate');
$build->finish;
$primary->start;
$primary->safe_psql('postgres', 'CREATE INDEX IF NOT EXISTS big_k ON big USING nbtree_pm (k); ANALYZE big');
catch_up($primary, $standby);
is( $standby->safe_psql('postgres',
		"${BY_INDEX}SELECT count(*) FROM big WHERE k BETWEEN 1000 AND 2999"),
	'2000',
	'after a kill of the primary during a build, the index built again answers on the standby');
like(
	$standby->safe_psql('postgres',
		"${BY_INDEX}EXPLAIN (COSTS OFF) SELECT count(*) FROM big WHERE k BETWEEN 1000 AND 2999"),
	qr/Index (Only )?Scan using big_k/,
	'through the index');

# A dropped index's pool goes on the standby too, while it replays.
my $big_k_file = $primary->safe_psql('postgres', "SELECT pg_relation_filenode('big_k')");
is($standby->safe_psql('postgres', "SELECT count(*) FROM pm_index_pools() WHERE relfilenode = $big_k_file"),
	'1', 'the standby has the pool of the index');
$primary->safe_psql('postgres', 'DROP INDEX big_k');
catch_up($primary, $standby);
ok( $standby->poll_query_until(
		'postgres', "SELECT count(*) = 0 FROM pm_index_pools() WHERE relfilenode = $big_k_file"),
	'and removes it once the drop is replayed');

# Index-only scans on the standby against VACUUM's replayed deletes: a cursor that has copied
# entries of rows deleted before its snapshot holds the replay of their removal (which would free
# their heap items and set the pages all-visible) until it moves on, as a pinned btree page holds
# it; with max_standby_streaming_delay set, replay cancels it with a recovery conflict instead.
# The keys are spread over the pages, and the rows deleted are on other pages than the one the
# cursor stands on, which stays all-visible: the cursor holds no heap page's pin, only its index
# entries (a pinned heap page would stop replay at the heap's own record first).
my $IOS = 'SET enable_seqscan = off; SET enable_bitmapscan = off; SET enable_indexscan = off; ';
$primary->safe_psql(
	'postgres', q{
	CREATE TABLE io (k int8);
	INSERT INTO io SELECT (g * 7919) % 5003 FROM generate_series(1, 5002) g;
	CREATE INDEX io_k ON io USING nbtree_pm (k);
	VACUUM (FREEZE, ANALYZE) io;});
catch_up($primary, $standby);

sub replay_waits
{
	return $standby->poll_query_until('postgres',
		q{SELECT wait_event_type = 'Extension' FROM pg_stat_activity WHERE backend_type = 'startup'});
}

# Deletes rows of keys first+1 .. first+59 off first's page; opens a cursor from first on the
# standby and fetches one row.  Returns the cursor's session, its query and the heap's answer.
sub paused_cursor
{
	my ($first) = @_;
	my $query = "SELECT k FROM io WHERE k BETWEEN $first AND 4000 ORDER BY k";
	$primary->safe_psql('postgres',
		"DELETE FROM io WHERE k BETWEEN $first + 1 AND $first + 59
		 AND (ctid::text::point)[0] <> (SELECT (ctid::text::point)[0] FROM io WHERE k = $first)");
	catch_up($primary, $standby);
	my $expected = $standby->safe_psql('postgres', $BY_HEAP . $query);
	my $cursor = $standby->background_psql('postgres', on_error_stop => 0);
	$cursor->query_safe("${IOS}BEGIN ISOLATION LEVEL REPEATABLE READ; DECLARE c CURSOR FOR $query");
	is($cursor->query_safe('FETCH 1 FROM c'), $first, "the cursor from $first returns $first first");
	return ($cursor, $query, $expected);
}

like($standby->safe_psql('postgres', "${IOS}EXPLAIN (COSTS OFF) SELECT k FROM io WHERE k < 10"),
	qr/Index Only Scan using io_k/, 'the standby plans index-only scans');
my ($cursor, $io_query, $io_expected) = paused_cursor(1);
$primary->safe_psql('postgres', 'VACUUM (INDEX_CLEANUP ON) io');
ok(replay_waits(), "replay of VACUUM's deletes waits for the index-only cursor");
my $rest = $cursor->query_safe('FETCH ALL FROM c');
is("1\n$rest", $io_expected, 'the cursor returns what the heap has, no deleted row');
$cursor->query_safe('COMMIT');
$cursor->quit;
catch_up($primary, $standby);
is($standby->safe_psql('postgres', $IOS . $io_query), $io_expected,
	'after replay, index-only scans answer as the heap');

$standby->append_conf('postgresql.conf', 'max_standby_streaming_delay = 1s');
$standby->reload;
($cursor, $io_query, $io_expected) = paused_cursor(1001);
my $log_offset = -s $standby->logfile;
$primary->safe_psql('postgres', 'VACUUM (INDEX_CLEANUP ON) io');
catch_up($primary, $standby);
like(
	substr(slurp_file($standby->logfile), $log_offset),
	qr/(canceling statement|terminating connection) due to conflict with recovery/,
	'with max_standby_streaming_delay, replay cancels the idle cursor\'s session and goes on');
# the session is gone (an idle transaction's conflict ends it, as for btree)
eval { $cursor->quit; };
is($standby->safe_psql('postgres', $IOS . $io_query), $io_expected,
	'and index-only scans answer as the heap');

# Promotion mid-load: the new primary uses the indexes at once, for reads and writes.
$out = '';
$load = start_load(6, \$out);
sleep(2);
$standby->promote;
$standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()');
$standby->safe_psql('postgres',
	q{INSERT INTO t (k, s, v, bx) SELECT 4999, 'promoted ' || g, -g, box(point(-g, -g), point(-g, -g))
	  FROM generate_series(1, 100) g});
my %after_promotion = (
	t_k => 'k = 4999',
	t_s => q{s LIKE 'promoted%' AND s >= 'promoted' AND s < 'promotee'},
	t_v => 'v < 0',
	t_bx => q{bx && box '((-200,-200),(-1,-1))'},
	t_id => 'id > 0',
	t_h => '(v % 1000) = ANY (ARRAY[-1, -50, -100, 7])',
	t_kt => 'k * 2 = 9998',
	t_ct => q{center(bx) <@ box '((-200,-200),(-1,-1))'});
my @differ;
for my $index (sort keys %after_promotion)
{
	my $q = "SELECT count(*), sum(id) FROM t WHERE $after_promotion{$index}";
	like($standby->safe_psql('postgres', "${BY_INDEX}EXPLAIN (COSTS OFF) $q"),
		qr/Index (Only )?Scan using $index/, "the promoted standby plans $index");
	my ($by_index, $by_heap) =
	  map { $standby->safe_psql('postgres', "$_$q") } ($BY_INDEX, $BY_HEAP);
	push @differ, "$index: $by_index vs $by_heap" if $by_index ne $by_heap;
}
is(join('; ', @differ), '', 'and each answers as the heap does, rows written since included');
my $taken = $standby->safe_psql('postgres', "${BY_HEAP}SELECT min(id) FROM t");
($rc, $stdout, $stderr) = $standby->psql('postgres', "INSERT INTO t (id) VALUES ($taken)");
like($stderr, qr/duplicate key value violates unique constraint "t_id"/,
	'the unique index enforces uniqueness on the new primary');
is( $standby->safe_psql(
		'postgres', verify_sql()),
	verified(),
	'every verifier passes on the new primary');
$load->finish;

$standby->stop;
$primary->stop;
done_testing();
