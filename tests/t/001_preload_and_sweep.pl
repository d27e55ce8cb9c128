# The preload requirement, the pool directory, and the startup orphan sweep.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
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
	"$live:corrupt 4000000000:orphan -:temporary",
	'pm_index_pools() reports a corrupt, an orphaned and a temporary pool file');
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
$node->start;
my $lost_query = 'SET enable_seqscan = off; SELECT count(*) FROM lost WHERE k < 50';
($ret, $stdout, $stderr) = $node->psql('postgres', $lost_query);
isnt($ret, 0, 'a scan of an index whose pool file is gone fails');
like($stderr, qr/ERROR:  .*\.pmpool/, 'the error names the pool file');
like($stderr, qr/HINT:  If the pool file was removed, REINDEX the index to rebuild it\./, 'the HINT says to REINDEX');
like($stderr, qr/CONTEXT:  index "lost_k"/, 'the context names the index');
$node->safe_psql('postgres', 'REINDEX INDEX lost_k');
is($node->safe_psql('postgres', $lost_query), '49', 'after REINDEX the index answers');

# A configured pool directory that does not exist: logged with a hint; the server stays up.
$node->append_conf('postgresql.conf', "pm_index.pool_dir = '/nonexistent/pm_index_pools'");
$node->restart;
ok( wait_for(
		sub {
			slurp_file($node->logfile) =~
			  /could not access pool directory "\/nonexistent\/pm_index_pools"/;
		}),
	'a missing pool_dir is reported');
like(slurp_file($node->logfile), qr/HINT:  Create the directory named by pm_index\.pool_dir/,
	'with a hint');
is($node->safe_psql('postgres', 'SELECT count(*) FROM pm_index_pools()'),
	'0', 'the server stays up and pm_index_pools() works');

$node->stop;
done_testing();
