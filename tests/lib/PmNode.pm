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

our @EXPORT = qw(pm_node ordered_ams psql_start start_after_kill $BY_INDEX $BY_HEAP);

# Prefixes for a query: answered by index scans only, or by the heap only.
our $BY_INDEX = 'SET enable_seqscan = off; SET enable_bitmapscan = off; ';
our $BY_HEAP =
  'SET enable_indexscan = off; SET enable_indexonlyscan = off; SET enable_bitmapscan = off; ';

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
