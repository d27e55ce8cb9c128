# The preload requirement, the pool directory, the startup orphan sweep, and what monitoring
# and errors say of indexes whose pools are missing.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use PmNode qw(psql_start);
use Time::HiRes qw(usleep);

# Wait until $cond->() is true (at most 30 s); returns its last value.
sub wait_for
{
	my ($cond) = @_;
	for (1 .. 300)
	{
		return 1 if $cond->();
		usleep(100_000);
	}
	return $cond->();
}

# Without the preload: a clear error with a HINT, and the server stays up.
my $plain = PostgreSQL::Test::Cluster->new('plain');
$plain->init;
$plain->start;
my ($ret, $stdout, $stderr) = $plain->psql('postgres', 'CREATE EXTENSION pm_index');
isnt($ret, 0, 'CREATE EXTENSION without the preload fails');
like($stderr, qr/ERROR:  pm_index must be loaded via shared_preload_libraries/,
	'the error says why');
like($stderr, qr/HINT:  Add pm_index to shared_preload_libraries in postgresql\.conf/,
	'the HINT says what to add');
is($plain->safe_psql('postgres', 'SELECT 1'), '1', 'the server is still up');
$plain->stop;

# With the preload.
my $node = PostgreSQL::Test::Cluster->new('main');
$node->init;
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'pm_index'");
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION pm_index');
my $pool_dir = $node->data_dir . '/pm_index';
ok(wait_for(sub { -d $pool_dir }), 'the default pool directory is created at startup');
ok( wait_for(sub { slurp_file($node->logfile) =~ /is not on persistent memory/ }),
	'the log says what durability an ordinary filesystem gives');

# Files in the pool directory: one for a live relfilenode, an orphan, an unfinished creation.
my $db = $node->safe_psql('postgres',
	"SELECT oid FROM pg_database WHERE datname = 'postgres'");
$node->safe_psql('postgres', 'CREATE TABLE keep_me (i int)');
my $live = $node->safe_psql('postgres', "SELECT pg_relation_filenode('keep_me')");
my $live_pool   = "$pool_dir/1663_${db}_${live}.pmpool";
my $orphan_pool = "$pool_dir/1663_${db}_4000000000.pmpool";
my $tmp_pool    = "$pool_dir/1663_${db}_4000000001.pmpool.tmp";
append_to_file($_, 'not a pool') for ($live_pool, $orphan_pool, $tmp_pool);
# an unfinished creation from before the restart below
utime(time() - 60, time() - 60, $tmp_pool) or die "utime: $!";

is( $node->safe_psql(
		'postgres',
		"SELECT string_agg(coalesce(relfilenode::text, '-') || ':' || state, ' ' ORDER BY path)
		   FROM pm_index_pools()"),
	"$live:corrupt 4000000000:orphan -:incomplete",
	'pm_index_pools() reports a corrupt, an orphaned and an incomplete pool file');
like(
	$node->safe_psql(
		'postgres', "SELECT detail FROM pm_index_pools() WHERE relfilenode = $live"),
	qr/pool file ".*${live}\.pmpool" is truncated/,
	'the detail of a corrupt pool names the file and the problem');

$node->restart;
ok(wait_for(sub { !-e $orphan_pool }), 'the orphaned pool is removed at startup');
ok(wait_for(sub { !-e $tmp_pool }), 'the leftover temporary pool is removed at startup');
ok(-e $live_pool, 'a pool whose relfilenode exists is kept, even if corrupt');
like(slurp_file($node->logfile), qr/removed orphaned pool file ".*4000000000\.pmpool"/,
	'each removal is logged');

# An index whose pool file is gone: an error naming the file and the index, a HINT to
# REINDEX, and REINDEX repairs it.
$node->safe_psql('postgres',
	'CREATE TABLE lost (k int); INSERT INTO lost SELECT generate_series(1, 100);
	 CREATE INDEX lost_k ON lost USING nbtree_pm (k)');
my $lost_pool = "$pool_dir/1663_${db}_"
  . $node->safe_psql('postgres', "SELECT pg_relation_filenode('lost_k')")
  . '.pmpool';
$node->stop;
unlink($lost_pool) or die "unlink $lost_pool: $!";
my $log_from = -s $node->logfile;
$node->start;
ok( wait_for(sub { substr(slurp_file($node->logfile), $log_from) =~
			/WARNING:  pm_index: index "lost_k" of database "postgres" cannot be used: pool file "\Q$lost_pool\E" does not exist/ }),
	'the start logs a WARNING naming the index and its missing pool file');
is( $node->safe_psql(
		'postgres', q{SELECT database, access_method, pool_state, path FROM pm_index_indexes
		WHERE index = 'lost_k'::regclass}),
	"postgres|nbtree_pm|missing|$lost_pool", 'pm_index_indexes lists the index as missing');
is( $node->safe_psql('postgres', q{SELECT state, problem FROM pm_index_health() WHERE index = 'lost_k'::regclass}),
	qq{missing|pool file "$lost_pool" does not exist}, 'pm_index_health() reports it');
is($node->safe_psql('postgres', q{SELECT count(*) FROM pm_index_health() WHERE problem IS NULL}),
	'0', 'and no other index (there is none)');
my $lost_query = 'SET enable_seqscan = off; SELECT count(*) FROM lost WHERE k < 50';
($ret, $stdout, $stderr) = $node->psql('postgres', $lost_query);
isnt($ret, 0, 'a scan of an index whose pool file is gone fails');
like($stderr, qr/ERROR:  pool file "\Q$lost_pool\E" does not exist/, 'the error names the missing pool file');
like($stderr, qr/HINT:  If the pool file was removed, REINDEX the index to build it again\./, 'the HINT says to REINDEX');
like($stderr, qr/CONTEXT:  index "lost_k"/, 'the context names the index');
$node->safe_psql('postgres', 'REINDEX INDEX lost_k');
is($node->safe_psql('postgres', $lost_query), '49', 'after REINDEX the index answers');
is($node->safe_psql('postgres', q{SELECT state, problem IS NULL FROM pm_index_health()}),
	'in use|t', 'and is healthy');

# A CREATE INDEX killed mid-build leaves its pool and its relation file (PostgreSQL keeps an
# aborted relfilenode's file after a crash), and no catalog row names that relfilenode: an
# orphan.  While the build runs, its pool is no orphan.
$node->safe_psql('postgres', q{CREATE TABLE slow (k int8); INSERT INTO slow SELECT generate_series(1, 100000);
	CREATE FUNCTION slow_id(int8) RETURNS int8 IMMUTABLE LANGUAGE plpgsql AS
	  $$ BEGIN IF $1 % 100 = 0 THEN PERFORM pg_sleep(0.001); END IF; RETURN $1; END $$});
my ($build_out, $build_err) = ('', '');
my $build = psql_start($node, \$build_out, \$build_err, 'CREATE INDEX slow_k ON slow USING nbtree_pm (slow_id(k))');
ok( $node->poll_query_until(
		'postgres', 'SELECT count(*) > 0 FROM pg_stat_progress_create_index WHERE blocks_done > 10'),
	'a long CREATE INDEX is running');
my ($building, $building_state) = split(/\|/, $node->safe_psql('postgres',
	qq{SELECT relfilenode, state FROM pm_index_pools() WHERE index IS NULL AND relfilenode <> $live
	  AND database = (SELECT oid FROM pg_database WHERE datname = 'postgres')}));
isnt($building_state, 'orphan', "the pool being built is no orphan ($building_state)");
kill 'KILL', $node->safe_psql('postgres', 'SELECT pid FROM pg_stat_progress_create_index');
$build->finish;
# restart_after_crash is off: the postmaster stops after the kill
ok(wait_for(sub { !kill(0, $node->{_pid}) }), 'the server stopped after the kill');
$node->{_pid} = undef;
$node->start;
is($node->safe_psql('postgres', "SELECT index IS NULL, state FROM pm_index_pools() WHERE relfilenode = $building"),
	't|orphan', 'the crashed build\'s pool is an orphan');

# A temporary index's pool: named, and temporary.
is( $node->safe_psql(
		'postgres', q{CREATE TEMP TABLE tmp (k int8); CREATE INDEX tmp_k ON tmp USING phast_pm (k);
		SELECT index, state FROM pm_index_pools() WHERE index = 'tmp_k'::regclass}),
	'tmp_k|temporary', 'a temporary index\'s pool shows its name and temporary');

is($node->safe_psql('postgres', 'SHOW pm_index.pool_dir'), 'pm_index',
	'SHOW pm_index.pool_dir names the default directory, under the data directory');

# A configured pool directory that is empty: every index is listed as missing, the start warns
# of each, and errors name the directory and point at pm_index.pool_dir.
my $empty_dir = PostgreSQL::Test::Utils::tempdir;
chmod(0700, $empty_dir);
$node->append_conf('postgresql.conf', "pm_index.pool_dir = '$empty_dir'");
$log_from = -s $node->logfile;
$node->restart;
is($node->safe_psql('postgres', 'SHOW pm_index.pool_dir'), $empty_dir, 'SHOW names the configured directory');
ok( wait_for(sub { substr(slurp_file($node->logfile), $log_from) =~
			/WARNING:  pm_index: index "lost_k" of database "postgres" cannot be used: pool file ".*" does not exist, and pool directory "\Q$empty_dir\E" holds no pool file/ }),
	'empty pool_dir: the start logs a WARNING naming the index and the directory');
like(substr(slurp_file($node->logfile), $log_from), qr/HINT:  If pm_index\.pool_dir was changed/,
	'empty pool_dir: with a HINT about pm_index.pool_dir');
is($node->safe_psql('postgres', q{SELECT string_agg(index || ':' || pool_state, ' ') FROM pm_index_indexes}),
	'lost_k:missing', 'empty pool_dir: the view lists the index as missing');
($ret, $stdout, $stderr) = $node->psql('postgres', $lost_query);
like($stderr, qr/ERROR:  pool file ".*" does not exist, and pool directory "\Q$empty_dir\E" holds no pool file/,
	'empty pool_dir: the error names the directory');
like($stderr, qr/HINT:  If pm_index\.pool_dir was changed.*restart the server; if the pools were removed, REINDEX/,
	'empty pool_dir: the HINT names pm_index.pool_dir first');

# A configured pool directory that does not exist: logged with a hint; the server stays up.
$node->append_conf('postgresql.conf', "pm_index.pool_dir = '/nonexistent/pm_index_pools'");
$log_from = -s $node->logfile;
$node->restart;
ok( wait_for(
		sub {
			slurp_file($node->logfile) =~
			  /could not access pool directory "\/nonexistent\/pm_index_pools"/;
		}),
	'a missing pool_dir is reported');
like(slurp_file($node->logfile), qr/HINT:  Create the directory named by pm_index\.pool_dir/,
	'with a hint');
ok( wait_for(sub { substr(slurp_file($node->logfile), $log_from) =~
			/WARNING:  pm_index: index "lost_k" of database "postgres" cannot be used: pool directory "\/nonexistent\/pm_index_pools" does not exist/ }),
	'missing pool_dir: the start logs a WARNING naming the index and the directory');
is($node->safe_psql('postgres', q{SELECT index || ':' || state FROM pm_index_pools()}),
	'lost_k:missing', 'the server stays up and pm_index_pools() lists the index as missing');
is($node->safe_psql('postgres', q{SELECT state, problem FROM pm_index_health()}),
	'missing|pool directory "/nonexistent/pm_index_pools" does not exist', 'pm_index_health() says why');
($ret, $stdout, $stderr) = $node->psql('postgres', $lost_query);
like($stderr, qr/ERROR:  pool directory "\/nonexistent\/pm_index_pools" does not exist/,
	'missing pool_dir: the error names the directory');
like($stderr, qr/HINT:  Mount or create the directory pm_index\.pool_dir names/,
	'missing pool_dir: the HINT is about pm_index.pool_dir, not REINDEX');

$node->stop;
done_testing();
