# Crash cycles under load, for the access methods' TAP tests: 2 pgbench clients run a script;
# the server is stopped with pg_ctl stop -m immediate at a random moment, synchronous_commit
# alternating on and off; after each restart the index checks run, and queries answered by
# the indexes must return what the same queries answer by sequential scans.
package PmCrashCycles;

use strict;
use warnings;
use Exporter 'import';
use IPC::Run;
use PmNode;
use Test::More;
use Time::HiRes qw(usleep);

our @EXPORT = qw(crash_cycles);

# crash_cycles($node, $script, $cycles, $check_sql, $index_sql, $seq_sql): the number of
# cycles after which $check_sql failed or $index_sql (run with sequential scans off) and
# $seq_sql (run with index scans off) answered differently; each failure is diag'ed.
sub crash_cycles
{
	my ($node, $script, $cycles, $check_sql, $index_sql, $seq_sql) = @_;
	my $failures = 0;

	for my $cycle (1 .. $cycles)
	{
		my $async = $cycle % 2 == 0;
		$node->safe_psql('postgres',
			"ALTER SYSTEM SET synchronous_commit = " . ($async ? "'off'" : "'on'") . "; SELECT pg_reload_conf();");

		my ($out, $err) = ('', '');
		my $pgbench = IPC::Run::start(
			[
				'pgbench', '-n', '-c', '2', '-j', '2', '-T', '30', '-f', $script,
				'-h', $node->host, '-p', $node->port, 'postgres'
			],
			'>', \$out, '2>', \$err);
		usleep(300_000 + int(rand(1_500_000)));
		$node->stop('immediate');
		$pgbench->finish;
		$node->start;

		my ($rc, $stdout, $stderr) = $node->psql('postgres', $check_sql);
		my $by_index = $node->safe_psql('postgres',
			$BY_INDEX . $index_sql);
		my $by_seq = $node->safe_psql('postgres',
			$BY_HEAP . $seq_sql);
		next if $rc == 0 && $by_index eq $by_seq;
		$failures++;
		diag("cycle $cycle (synchronous_commit " . ($async ? 'off' : 'on')
			  . "): $stderr; by index: $by_index; by sequential scan: $by_seq");
	}
	$node->safe_psql('postgres', 'ALTER SYSTEM RESET synchronous_commit; SELECT pg_reload_conf();');
	return $failures;
}

1;
