# Automatic failover with pg_auto_failover: a monitor, a primary and a secondary (made by
# pg_autoctl's pg_basebackup, so its copied pools are built again before it serves them), the
# table of the replication tests with an index of every access method, pgbench writing to it.
# The primary (its keeper and its server) is killed under load; the monitor promotes the
# secondary, which answers through every index at once (no REINDEX) and takes writes; the old
# primary's keeper, started again, runs pg_rewind and it rejoins as the secondary with its pools
# consistent: every index answers as the heap does and every verifier passes.
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

my $autoctl = (grep { -x } map { "$_/pg_autoctl" } split(/:/, $ENV{PATH}))[0];
plan skip_all => 'pg_auto_failover is not installed for this PostgreSQL'
  unless $autoctl && extension_installed('pgautofailover');
# pg_autoctl's servers make their sockets where Debian's build of the server puts them
plan skip_all => '/var/run/postgresql is not a directory the postgres user may write'
  unless -d '/var/run/postgresql' && -w '/var/run/postgresql';

# pg_autoctl keeps its configuration and state under XDG directories: this test's own.
$ENV{XDG_CONFIG_HOME} = PostgreSQL::Test::Utils::tempdir;
$ENV{XDG_DATA_HOME} = PostgreSQL::Test::Utils::tempdir;
$ENV{XDG_RUNTIME_DIR} = PostgreSQL::Test::Utils::tempdir;
my $pg_ctl = `pg_config --bindir`;
chomp $pg_ctl;
$pg_ctl .= '/pg_ctl';
my $logs = $PostgreSQL::Test::Utils::log_path;

# Nodes that pg_autoctl starts and stops; the test objects only connect to them (over TCP: the
# servers listen on '*').
sub autoctl_node
{
	my ($name) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->{_host} = '127.0.0.1';
	return $node;
}

# A pg_autoctl command, run to its end; its output.
sub autoctl
{
	my @args = @_;
	local $ENV{PGHOST} = 'localhost';
	my ($out, $err) = ('', '');
	IPC::Run::run([ $autoctl, @args ], '>', \$out, '2>', \$err)
	  or die "pg_autoctl @args failed:\n$out$err";
	note("pg_autoctl @args:\n$out$err");
	return $out . $err;
}

# pg_autoctl run for a node, in the background: its keeper supervises its server.
my %keepers;
sub keeper_start
{
	my ($node) = @_;
	local $ENV{PGHOST} = 'localhost';
	my $log = "$logs/" . $node->name . '.keeper.log';
	$keepers{ $node->name } =
	  IPC::Run::start([ $autoctl, 'run', '--pgdata', $node->data_dir ], '>>', $log, '2>>', $log);
	return;
}
END { $_->kill_kill for values %keepers }

# Settings every server of the test takes over pg_autoctl's (its shared_buffers follows the
# machine's memory): postgresql.auto.conf is read last.
sub small_server
{
	my ($node, @extra) = @_;
	PostgreSQL::Test::Utils::append_to_file($node->data_dir . '/postgresql.auto.conf',
		join("\n", "shared_buffers = '32MB'", 'max_connections = 40', 'autovacuum = off', @extra, ''));
	return;
}

my $monitor = autoctl_node('monitor');
autoctl('create', 'monitor', '--pgdata', $monitor->data_dir, '--pgport', $monitor->port, '--pgctl', $pg_ctl,
	'--hostname', 'localhost', '--auth', 'trust', '--no-ssl');
# A node is unhealthy after about 3 s without answers (20 s by default), and its secondary is
# promoted 3 s later (a dead primary cannot confirm its demotion: 30 s by default).
small_server($monitor,
	'pgautofailover.health_check_period = 1000', 'pgautofailover.health_check_timeout = 1000',
	'pgautofailover.health_check_max_retries = 1', 'pgautofailover.health_check_retry_delay = 500',
	'pgautofailover.node_considered_unhealthy_timeout = 3000', 'pgautofailover.primary_demote_timeout = 3000');
keeper_start($monitor);
my $monitor_uri = sprintf('postgres://autoctl_node@localhost:%d/pg_auto_failover?sslmode=disable', $monitor->port);
$monitor->poll_query_until('pg_auto_failover', 'SELECT true') or die 'the monitor did not start';

# The nodes' states as the monitor reports them: "name:reported/assigned" each.
sub states
{
	return $monitor->safe_psql('pg_auto_failover',
		q{SELECT string_agg(nodename || ':' || reportedstate || '/' || goalstate, ' ' ORDER BY nodename)
		    FROM pgautofailover.node});
}

sub wait_states
{
	my ($want, $what) = @_;
	my $now;
	for (1 .. 180)
	{
		$now = states();
		last if $now =~ $want;
		sleep(1);
	}
	like($now, $want, $what)
	  or diag(join("\n", map { "--- $_:\n" . `tail -n 30 $_` } glob("$logs/*.keeper.log")));
	return;
}

my @nodes = map { autoctl_node("node$_") } 1 .. 2;
sub create_node
{
	my ($node) = @_;
	autoctl('create', 'postgres', '--pgdata', $node->data_dir, '--pgport', $node->port, '--pgctl', $pg_ctl,
		'--pghost', 'localhost', '--hostname', 'localhost', '--name', $node->name, '--auth', 'trust',
		'--no-ssl', '--monitor', $monitor_uri);
	return;
}

# The primary: pm_index preloaded, the table and its indexes.  The secondary's data directory
# is its base backup, with these settings.
create_node($nodes[0]);
small_server($nodes[0], "shared_preload_libraries = 'pm_index'");
keeper_start($nodes[0]);
wait_states(qr/node1:single\/single/, 'node1 runs alone');
ok($nodes[0]->poll_query_until('postgres', "SELECT current_setting('shared_preload_libraries') = 'pm_index'"),
	'node1 serves, with pm_index preloaded');
$nodes[0]->safe_psql('postgres', 'CREATE EXTENSION pm_index');
create_table($nodes[0]);

# pg_autoctl's pg_basebackup waits for a spread checkpoint: one done now leaves it nothing to write
$nodes[0]->safe_psql('postgres', 'CHECKPOINT');
create_node($nodes[1]);
keeper_start($nodes[1]);
wait_states(qr/node1:primary\/primary node2:secondary\/secondary/, 'node2 is node1\'s secondary');

ok($nodes[1]->poll_query_until('postgres', "SELECT (" . building_sql() . ") IS NULL"),
	'node2: the pools its base backup copied are built again');

# The server's pid and its keeper's: killed together, as a machine that fails takes both.
sub kill_node
{
	my ($node) = @_;
	my ($postmaster) = split /\n/, slurp_file($node->data_dir . '/postmaster.pid');
	$keepers{ $node->name }->kill_kill;
	delete $keepers{ $node->name };
	kill 'KILL', $postmaster;
	return;
}

# pgbench writing on node1; node1 dies under it.
my $out = '';
my $load = start_write_load($nodes[0], 20, \$out);
sleep(4);
kill_node($nodes[0]);
$load->finish;
like($out, qr/processed: [1-9]/, 'pgbench wrote on node1 before it died');

wait_states(qr/node2:(wait_primary|primary)\/\1/, 'the monitor promoted node2');
note($monitor->safe_psql('pg_auto_failover',
	q{SELECT eventtime, nodename, reportedstate, goalstate, description FROM pgautofailover.event ORDER BY eventid}));
is($nodes[1]->safe_psql('postgres', 'SELECT pg_is_in_recovery()'), 'f', 'node2 is a primary');
is($nodes[1]->safe_psql('postgres', "SELECT coalesce((" . building_sql() . "), 'none')"), 'none',
	'node2: no pool is being built');
is(planned($nodes[1]), $INDEXES, 'node2: plans every index at once, with no REINDEX');
is(answers_differ($nodes[1]), '', 'node2: every index answers as the heap does');

$out = '';
$load = start_write_load($nodes[1], 5, \$out);
$load->finish;
like($out, $PGBENCH_NO_FAILURE, 'writes go on on node2')
  or diag($out);

# node1's keeper again: it rewinds node1 onto node2's timeline and follows it.
keeper_start($nodes[0]);
wait_states(qr/node1:secondary\/secondary node2:primary\/primary/, 'node1 rejoins as node2\'s secondary');
# (pg_rewind finds nothing to copy when node2 had received all of node1's WAL; when it copies,
# a backup_label makes node1 build its pools again)
my ($rewind) = slurp_file("$logs/node1.keeper.log") =~ /pg_rewind --target-pgdata.*?(no rewind required|Done!)/s;
ok($rewind, 'node1 went through pg_rewind');
note("pg_rewind: $rewind");
ok($nodes[0]->poll_query_until('postgres', "SELECT (" . building_sql() . ") IS NULL"), 'node1: no pool is left building');
$nodes[1]->wait_for_catchup('pgautofailover_standby_1');
is(planned($nodes[0]), $INDEXES, 'node1: plans every index');
my ($differ, $checks);
at_one_replay_point(
	$nodes[0],
	sub {
		$differ = answers_differ($nodes[0]);
		$checks = $nodes[0]->safe_psql('postgres', verify_sql());
	});
is($differ, '', 'node1: every index answers as the heap does');
is($checks, verified(), 'node1: every verifier passes, every heap tuple indexed');
is($nodes[1]->safe_psql('postgres', verify_sql()), verified(), 'node2: every verifier passes');

for my $node (@nodes, $monitor)
{
	autoctl('stop', '--pgdata', $node->data_dir);
	$keepers{ $node->name }->finish;
	delete $keepers{ $node->name };
}
done_testing();
