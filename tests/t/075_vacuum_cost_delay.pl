# VACUUM's cost-based delay covers the index phase of every access method: with a delay set, a
# VACUUM of a table whose only index is a pm_index one is seen sleeping on VacuumDelay while it
# is in its "vacuuming indexes" phase (work in a pool touches no buffer, so the access methods
# charge it themselves).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/../lib";
use PmNode;

my $node = pm_node('vacuum_delay');
my $seen_sleeping = q{SELECT count(*) > 0 FROM pg_stat_progress_vacuum p JOIN pg_stat_activity a USING (pid)
	WHERE p.phase = 'vacuuming indexes' AND a.wait_event = 'VacuumDelay'};

for my $am ([ 'nbtree_pm', 'k' ], [ 'fbrtree_pm', 'p' ])
{
	my ($amname, $column) = @$am;
	$node->safe_psql(
		'postgres', qq{
		CREATE TABLE v_$amname (k int8, p point) WITH (autovacuum_enabled = off);
		INSERT INTO v_$amname SELECT g, point(g % 1000, g / 1000) FROM generate_series(1, 200000) g;
		CREATE INDEX ON v_$amname USING $amname ($column);
		DELETE FROM v_$amname WHERE k % 2 = 0;});
	my ($out, $err) = ('', '');
	my $vacuum = psql_start($node, \$out, \$err,
		"SET vacuum_cost_delay = '1ms'", 'SET vacuum_cost_limit = 1', "VACUUM (INDEX_CLEANUP ON) v_$amname");
	ok($node->poll_query_until('postgres', $seen_sleeping),
		"$amname: VACUUM sleeps on its cost-based delay while it vacuums the index");
	$vacuum->finish;
	is($err, '', "$amname: the VACUUM completed");
	is($node->safe_psql('postgres', "SELECT count(*) FROM v_$amname WHERE k > 100000"), '50000',
		"$amname: the table is right after it");
}
$node->stop;
done_testing();
