# Shared pieces of the TAP tests: a node with pm_index, the settings that make a query answer
# through the indexes or through the heap alone, and psql started in the background.
package PmNode;

use strict;
use warnings;
use Exporter 'import';
use File::Basename;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More ();

our @EXPORT =
  qw(pm_node ordered_ams index_heap_differ psql_start start_after_kill catch_up replication_state test_seed setseed
  extension_installed $BY_INDEX $BY_HEAP $PGBENCH_NO_FAILURE);

# Prefixes for a query: answered by index scans only, or by the heap only.
our $BY_INDEX = 'SET enable_seqscan = off; SET enable_bitmapscan = off; ';
our $BY_HEAP =
  'SET enable_indexscan = off; SET enable_indexonlyscan = off; SET enable_bitmapscan = off; ';

# pgbench's output of a run that processed transactions and failed none.
our $PGBENCH_NO_FAILURE =
  qr/number of transactions actually processed: [1-9].*number of failed transactions: 0 /s;

# Is the extension's control file in the share directory of the PostgreSQL on PATH (a test
# that needs it skips without)?
sub extension_installed
{
	my ($name) = @_;
	my $sharedir = `pg_config --sharedir`;
	chomp $sharedir;
	return -f "$sharedir/extension/$name.control";
}

# PM_INITDB_TEMPLATE (tests/run makes one per run): a data directory that "initdb -A trust -N"
# made, copied in place of running initdb again for every node of every file, as PostgreSQL's own
# test library does from version 17 on.  A node initialized with other initdb options still runs
# initdb.
if (defined $ENV{PM_INITDB_TEMPLATE} && -d $ENV{PM_INITDB_TEMPLATE})
{
	my $system_or_bail = \&PostgreSQL::Test::Utils::system_or_bail;
	no warnings 'redefine';
	*PostgreSQL::Test::Utils::system_or_bail = sub {
		my @cmd = @_;
		if (@cmd == 6 && $cmd[0] eq 'initdb' && $cmd[1] eq '-D'
			&& join(' ', @cmd[ 3 .. 5 ]) eq '-A trust -N')
		{
			return $system_or_bail->('cp', '-RPp', $ENV{PM_INITDB_TEMPLATE}, $cmd[2]);
		}
		return $system_or_bail->(@cmd);
	};
}

# The seed of a test file's random choices, printed (so that a failure shows it) and given to
# Perl's rand; PM_TEST_SEED (or PM_DIFF_SEED, which the differential and scan tests took first)
# replays it.  setseed() makes the server's random() of one session follow it too; what
# concurrent sessions and kills at random moments do still depends on timing.
my $seed;

sub test_seed
{
	return $seed if defined $seed;
	$seed = $ENV{PM_TEST_SEED} // $ENV{PM_DIFF_SEED} // int(rand(1_000_000_000));
	srand($seed);
	my $file = basename($0, '.pl');
	Test::More::diag("seed $seed (replay: PM_TEST_SEED=$seed PM_TAP_FILTER=$file tests/run --only tap)");
	return $seed;
}

# "SELECT setseed(...);" for the test's seed (test_seed) and a number telling sessions apart.
sub setseed
{
	my ($session) = @_;
	my $s = (test_seed() + 7919 * ($session // 0)) % 2_000_000_001;
	return sprintf('SELECT setseed(%.9f);', $s / 1_000_000_000 - 1);
}

# Initialized, pm_index preloaded, started, the extension created in database postgres.
# Extra postgresql.conf lines are passed as further arguments.
sub pm_node
{
	my ($name, @conf) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init;
	$node->append_conf('postgresql.conf', join("\n", "shared_preload_libraries = 'pm_index'", @conf));
	$node->start;
	$node->safe_psql('postgres', 'CREATE EXTENSION pm_index');
	return $node;
}

# The conditions (index name => a condition on table t) whose answer, SELECT $what FROM t WHERE
# the condition, through the indexes differs from the heap's, as "index: a vs b".
sub index_heap_differ
{
	my ($node, $what, %conditions) = @_;
	my @differ;
	for my $index (sort keys %conditions)
	{
		my $q = "SELECT $what FROM t WHERE $conditions{$index}";
		my $by_index = $node->safe_psql('postgres', "$BY_INDEX$q");
		my $by_heap = $node->safe_psql('postgres', "$BY_HEAP$q");
		push @differ, "$index: $by_index vs $by_heap" if $by_index ne $by_heap;
	}
	return join('; ', @differ);
}

# The ordered access methods of the extension (tests/lib/ordered_ams.sql), for the tests that
# every one of them must pass.
sub ordered_ams
{
	my ($node) = @_;
	my $query = slurp_file(dirname(__FILE__) . '/ordered_ams.sql');
	return split(/\n/, $node->safe_psql('postgres', $query));
}

# Start a node whose server was killed, retrying while the old processes still hold its shared
# memory.  A failed start leaves the stale postmaster.pid's pid in the node object, which would
# make the next start refuse: forget it.
sub start_after_kill
{
	my ($node) = @_;
	for (1 .. 60)
	{
		return if $node->start(fail_ok => 1);
		$node->{_pid} = undef;
		sleep(1);
	}
	die 'the server did not start after the kill';
}

# What a standby that does not catch up is doing, for a diagnostic: its WAL receiver, where it
# received and replayed to, what its startup process and pm_index's workers wait for, the
# primary's walsenders and slots, and the last messages of both logs (statements left out).
# Every query has a timeout: a standby stuck in replay still answers, but nothing here may hang.
sub replication_state
{
	my ($primary, $standby) = @_;
	my $out = '';
	my $show = sub {
		my ($node, $what, $query) = @_;
		my ($rc, $stdout, $stderr) =
		  $node->psql('postgres', $query, extra_params => ['-x'], timeout => 30);
		$out .= sprintf("--- %s, %s:\n%s\n", $node->name, $what,
			$rc == 0 ? ($stdout eq '' ? '(no rows)' : $stdout) : "query failed: $stderr");
	};
	$show->($standby, 'WAL receiver', 'SELECT * FROM pg_stat_wal_receiver');
	$show->($standby, 'positions',
		q{SELECT pg_last_wal_receive_lsn() AS received, pg_last_wal_replay_lsn() AS replayed,
		         pg_last_xact_replay_timestamp() AS last_replayed_xact,
		         pg_get_wal_replay_pause_state() AS pause_state});
	$show->($standby, 'server processes',
		q{SELECT pid, backend_type, wait_event_type, wait_event, state, backend_xmin, query
		    FROM pg_stat_activity WHERE backend_type NOT IN ('client backend', 'checkpointer',
		      'background writer', 'walwriter') OR pid IN (SELECT pid FROM pg_locks WHERE NOT granted)});
	$show->($primary, 'walsenders', 'SELECT * FROM pg_stat_replication');
	$show->($primary, 'replication slots',
		'SELECT slot_name, active, restart_lsn, wal_status, pg_current_wal_lsn() FROM pg_replication_slots');
	for my $node ($standby, $primary)
	{
		# one message per element, with its continuation lines
		my @messages = grep { !/ (LOG:  statement|STATEMENT|LOG:  received replication command): / }
		  split /\n(?=\d{4}-\d\d-\d\d )/, slurp_file($node->logfile);
		$out .= sprintf("--- last messages of %s's log:\n%s\n",
			$node->name, join("\n", @messages[ (@messages > 20 ? -20 : -@messages) .. -1 ]));
	}
	return $out;
}

# The primary's wait_for_catchup of the standby; if it times out, what the standby was doing is
# printed before the test dies.
sub catch_up
{
	my ($primary, $standby) = @_;
	return if eval { $primary->wait_for_catchup($standby); 1 };
	my $error = $@;
	Test::More::diag(replication_state($primary, $standby));
	die $error;
}

# psql in the background running the statements (one -c each) in database postgres; its
# output goes to the scalars $out and $err refer to.  Returns the IPC::Run harness.
sub psql_start
{
	my ($node, $out, $err, @statements) = @_;
	return IPC::Run::start(
		[
			'psql', '-XAtq', '-h', $node->host, '-p', $node->port, '-d', 'postgres',
			map { ('-c', $_) } @statements
		],
		'>', $out, '2>', $err);
}

1;
