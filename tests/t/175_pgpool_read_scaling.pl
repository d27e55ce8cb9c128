# Read scaling with pgpool-II: a primary and two streaming standbys behind pgpool, which sends
# each read-only statement to one of the three (statement-level load balancing) and writes to
# the primary.  One standby streamed from before any index existed (its pools come from WAL);
# the other was made from a base backup taken while a prepared transaction held the primary's
# snapshot, so its copied pools are being built again.  While they build, the statements pgpool
# sends there plan without those indexes and answer as the primary does; once built, every node
# plans the pm_index indexes, each counts scans of them, and every answer through pgpool equals
# the primary's at the same replay point.
use strict;
use warnings;
use FindBin;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use lib "$FindBin::Bin/../lib";
use PmNode;
use PmTable;

my $pgpool_bin = (grep { -x } map { "$_/pgpool" } split(/:/, $ENV{PATH}), '/usr/sbin')[0];
plan skip_all => 'pgpool-II is not installed' unless $pgpool_bin;

my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1);
$primary->append_conf('postgresql.conf',
	"shared_preload_libraries = 'pm_index'\nautovacuum = off\nmax_prepared_transactions = 2");
$primary->start;
$primary->safe_psql('postgres', 'CREATE EXTENSION pm_index');

# Standby a: made before the table and its indexes.
$primary->backup('empty');
my $standby_a = PostgreSQL::Test::Cluster->new('standby_a');
$standby_a->init_from_backup($primary, 'empty', has_streaming => 1);
$standby_a->start;

create_table($primary);

# Standby b: made from a base backup while a prepared transaction is open, which its builds of
# the copied pools wait for.
$primary->safe_psql('postgres',
	q{BEGIN; INSERT INTO t (k, s, v, bx) VALUES (-1, 'prepared', -7, box(point(150,150), point(151,151)));
	  PREPARE TRANSACTION 'hold'});
$primary->backup('built');
my $standby_b = PostgreSQL::Test::Cluster->new('standby_b');
$standby_b->init_from_backup($primary, 'built', has_streaming => 1);
$standby_b->start;
my @nodes = ($primary, $standby_a, $standby_b);
catch_up($primary, $_) for $standby_a, $standby_b;

# pgpool-II: the three backends by their socket directories, statement-level load balancing,
# no failover (nothing here kills a node), no health checks.
my $dir = PostgreSQL::Test::Utils::tempdir;
my $socket_dir = PostgreSQL::Test::Utils::tempdir_short;
my $port = PostgreSQL::Test::Cluster::get_free_port();
my $pcp_port = PostgreSQL::Test::Cluster::get_free_port();
my $user = getpwuid($<);
my $conf = qq{backend_clustering_mode = 'streaming_replication'
listen_addresses = ''
port = $port
socket_dir = '$socket_dir'
pcp_listen_addresses = ''
pcp_port = $pcp_port
pcp_socket_dir = '$socket_dir'
wd_ipc_socket_dir = '$socket_dir'
pid_file_name = '$dir/pgpool.pid'
logdir = '$dir'
num_init_children = 4
max_pool = 2
enable_pool_hba = off
pool_passwd = ''
load_balance_mode = on
statement_level_load_balance = on
sr_check_user = '$user'
sr_check_period = 1
health_check_period = 0
failover_on_backend_error = off
log_per_node_statement = on
};
for my $i (0 .. $#nodes)
{
	$conf .= sprintf(
		"backend_hostname%d = '%s'\nbackend_port%d = %d\nbackend_weight%d = 1\n"
		  . "backend_data_directory%d = '%s'\nbackend_flag%d = 'DISALLOW_TO_FAILOVER'\n",
		$i, $nodes[$i]->host, $i, $nodes[$i]->port, $i, $i, $nodes[$i]->data_dir, $i);
}
PostgreSQL::Test::Utils::append_to_file("$dir/pgpool.conf", $conf);
PostgreSQL::Test::Utils::append_to_file("$dir/pcp.conf", '');
my $pgpool_log = "$dir/pgpool.log";
my $pgpool = IPC::Run::start([ $pgpool_bin, '-n', '-f', "$dir/pgpool.conf", '-F', "$dir/pcp.conf" ],
	'>', $pgpool_log, '2>&1');
END { $pgpool->kill_kill if $pgpool }

# psql through pgpool: the output, dying with pgpool's log on an error.
sub through_pgpool
{
	my ($sql) = @_;
	my ($out, $err) = ('', '');
	# from standard input: one query message per statement (pgpool sends a message of several
	# to the primary)
	my $ok = IPC::Run::run([ 'psql', '-XAtq', '-h', $socket_dir, '-p', $port, '-d', 'postgres',
			'-v', 'ON_ERROR_STOP=1' ], '<', \$sql, '>', \$out, '2>', \$err);
	die "through pgpool: $err\n--- pgpool's log:\n" . slurp_file($pgpool_log) unless $ok;
	chomp $out;
	return $out;
}

my $up;
for (1 .. 60)
{
	$up = eval { through_pgpool('SHOW pool_nodes') };
	last if $up && $up =~ /primary.*standby.*standby/s;
	sleep(1);
}
like($up, qr/primary.*standby.*standby/s, 'pgpool-II serves the primary and two standbys')
  or diag(slurp_file($pgpool_log));

# SHOW pool_nodes' select_cnt per node, in the nodes' order.
sub selects
{
	my @counts;
	for my $line (split /\n/, through_pgpool('SHOW pool_nodes'))
	{
		my @f = split /\|/, $line;
		$counts[ $f[0] ] = $f[8];
	}
	return @counts;
}

# The answer to each of %QUERIES, through the indexes where a node has them, asked through pgpool
# $rounds times over (each statement balanced on its own), against the primary's.
sub pgpool_differs
{
	my ($rounds) = @_;
	my @differ;
	for my $index (sort keys %QUERIES)
	{
		my $q = "SELECT count(*), sum(id), sum(k), sum(length(s)) FROM t WHERE $QUERIES{$index}";
		my $expected = $primary->safe_psql('postgres', "$BY_HEAP$q");
		my @answers = split /\n/, through_pgpool($BY_INDEX . join(";\n", ($q) x $rounds));
		push @differ, map { "$index: $_ vs $expected" } grep { $_ ne $expected } @answers;
		push @differ, "$index: " . scalar(@answers) . " answers" if @answers != $rounds;
	}
	return join('; ', @differ);
}

# Every query of %QUERIES asked through pgpool 20 times: the answers equal the primary's, and
# pgpool sent statements to each of the three nodes.
sub compare_through_pgpool
{
	my ($what) = @_;
	my @before = selects();
	is(pgpool_differs(20), '', "$what: every answer through pgpool equals the primary's");
	my @after = selects();
	is(join(',', map { $after[$_] > $before[$_] ? 'used' : 'unused' } 0 .. 2), 'used,used,used',
		"$what: pgpool balanced the statements over all three nodes");
	return;
}

# pgbench's read-only transactions through pgpool: they all end well.
PostgreSQL::Test::Utils::append_to_file("$dir/read.sql", qq{
\\set a random(1, 20000)
SELECT count(*), sum(id) FROM t WHERE k BETWEEN :a % 5000 AND :a % 5000 + 20;
SELECT count(*) FROM t WHERE v BETWEEN :a * 7 AND :a * 7 + 700;
SELECT count(*) FROM t WHERE bx && box(point(:a % 1000, :a / 20), point(:a % 1000 + 30, :a / 20 + 30));
});
sub read_load
{
	my ($what) = @_;
	my ($out, $err) = ('', '');
	IPC::Run::run([ 'pgbench', '-n', '-c', '2', '-j', '2', '-T', '3', '-f', "$dir/read.sql",
			'-h', $socket_dir, '-p', $port, 'postgres' ], '>', \$out, '2>', \$err);
	like("$out$err", $PGBENCH_NO_FAILURE,
		"$what: pgbench's read-only transactions through pgpool all end well") or diag("$out$err");
	unlike($err, qr/aborted|ERROR/, "$what: no client stopped");
}

# 1. Standby b's copied pools are being built: it plans without them, and the statements pgpool
# sends it answer as the primary's.
is($standby_b->safe_psql('postgres', building_sql()), $INDEXES, 'standby b: every copied pool is being built');
is(planned($standby_b), '', 'standby b: meanwhile its queries plan without those indexes');
is(planned($_), $INDEXES, $_->name . ': plans every pm_index index') for $primary, $standby_a;
compare_through_pgpool('while standby b builds');
read_load('while standby b builds');

# 2. The prepared transaction ends: standby b's builds end, and every node plans every index.
$primary->safe_psql('postgres', q{COMMIT PREPARED 'hold'});
catch_up($primary, $_) for $standby_a, $standby_b;
ok($standby_b->poll_query_until('postgres', "SELECT (" . building_sql() . ") IS NULL"), 'standby b: the builds end');
is(planned($_), $INDEXES, $_->name . ': plans every pm_index index') for @nodes;

my $scans = qq{SELECT sum(idx_scan) FROM pg_stat_user_indexes WHERE indexrelname = ANY ('\{$INDEXES\}')};
my @scans_before = map { $_->safe_psql('postgres', $scans) } @nodes;
compare_through_pgpool('built');
for my $i (0 .. $#nodes)
{
	ok($nodes[$i]->poll_query_until('postgres', "SELECT ($scans) > $scans_before[$i]"),
		$nodes[$i]->name . ': answered through its pm_index indexes');
}
read_load('built');

# The standbys' verifiers, replay paused: every heap tuple is in every index.
for my $standby ($standby_a, $standby_b)
{
	my $checks;
	at_one_replay_point($standby, sub { $checks = $standby->safe_psql('postgres', verify_sql()) });
	is($checks, verified(), $standby->name . ': every verifier passes');
}

$pgpool->signal('INT');    # fast shutdown
$pgpool->finish;
undef $pgpool;
done_testing();
