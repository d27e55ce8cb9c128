# Scans against VACUUM: an index-only scan that has read entries VACUUM then deletes must not
# return them after VACUUM freed their heap items and marked the pages all-visible. VACUUM
# waits until such a scan moves on, as btree's VACUUM waits for the scan's pin on a leaf page;
# a scan abandoned by an abort (of a subtransaction too) releases what VACUUM waits for.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/../lib";
use PmNode;

my $node = pm_node('scan_vacuum', 'autovacuum = off');
my $IOS = 'SET enable_seqscan = off; SET enable_bitmapscan = off; SET enable_indexscan = off; ';

# kind => [ table definition and rows, the index's column, an index-only query, VACUUM's wait ]
my %cases;
for my $am (ordered_ams($node), 'btree')
{
	$cases{$am} = [
		'(k int8); INSERT INTO TAB SELECT g FROM generate_series(1, 1000) g',
		'k', 'SELECT k FROM TAB WHERE k BETWEEN 1 AND 1000 ORDER BY k',
		$am eq 'btree' ? 'BufferPin' : 'Extension'
	];
}
$cases{fbrtree_pm} = [
	'(p point); INSERT INTO TAB SELECT point(g, g) FROM generate_series(1, 1000) g',
	'p', q{SELECT p[0] FROM TAB WHERE p <@ box '((0,0),(2000,2000))'},
	'Extension'
];
$cases{'fbrtree_pm KNN'} = [
	$cases{fbrtree_pm}[0], 'p', q{SELECT p[0] FROM TAB ORDER BY p <-> point '(0,0)'},
	'Extension'
];

# A table with the kind's index, all-visible, and rows deleted that VACUUM has not removed.
sub setup
{
	my ($kind, $deleted) = @_;
	my ($definition, $column) = @{ $cases{$kind} };
	(my $am = $kind) =~ s/ .*//;
	(my $table = "t_$kind") =~ s/ /_/g;
	$definition =~ s/TAB/$table/g;
	my $where = $column eq 'k' ? "k IN ($deleted)" : "p[0] IN ($deleted)";
	$node->safe_psql(
		'postgres', qq{
		DROP TABLE IF EXISTS $table;
		CREATE TABLE $table $definition;
		CREATE INDEX ON $table USING $am ($column);
		VACUUM (FREEZE, ANALYZE) $table;
		DELETE FROM $table WHERE $where;});
	return $table;
}

sub query_of
{
	my ($kind, $table) = @_;
	(my $query = $cases{$kind}[2]) =~ s/TAB/$table/g;
	return $query;
}

sub vacuum_waits
{
	my ($kind, $table) = @_;
	return $node->poll_query_until(
		'postgres', qq{
		SELECT count(*) > 0 FROM pg_stat_activity
		WHERE query = 'VACUUM $table;' AND wait_event_type = '$cases{$kind}[3]'});
}

for my $kind (sort keys %cases)
{
	my $table = setup($kind, '10, 500, 990');
	my $query = query_of($kind, $table);
	like($node->safe_psql('postgres', "${IOS}EXPLAIN (COSTS OFF) $query"),
		qr/Index Only Scan/, "$kind: the query is an index-only scan");
	my $expected = $node->safe_psql('postgres', $BY_HEAP . $query);

	# the cursor has read the first entries when VACUUM removes three of them
	my $scan = $node->background_psql('postgres', on_error_stop => 0);
	$scan->query_safe("${IOS}BEGIN; DECLARE c CURSOR FOR $query");
	my $first = $scan->query_safe('FETCH 1 FROM c');
	my $vacuum = $node->background_psql('postgres');
	$vacuum->query_until(qr/vacuuming/, "\\echo vacuuming\nVACUUM $table;\n");
	ok(vacuum_waits($kind, $table), "$kind: VACUUM waits for the index-only scan");
	my $rest = $scan->query_safe('FETCH ALL FROM c');
	is("$first\n$rest", $expected, "$kind: the scan returns what the heap has, no deleted row");
	$scan->query_safe('COMMIT');
	$vacuum->query_safe('SELECT 1');
	$vacuum->quit;
	is($node->safe_psql('postgres', $IOS . $query),
		$expected, "$kind: after VACUUM, index-only scans answer as the heap");

	next if $kind eq 'btree';

	# scans abandoned by a subtransaction's abort, or by an error, hold VACUUM no longer
	for my $abandon ('ROLLBACK TO SAVEPOINT s', 'SELECT 1 / 0')
	{
		$table = setup($kind, '20, 600');
		$query = query_of($kind, $table);
		$scan->query_safe("${IOS}BEGIN; SAVEPOINT s; DECLARE c CURSOR FOR $query");
		$scan->query_safe('FETCH 1 FROM c');
		$scan->query($abandon);
		my ($rc, $out, $err) =
		  $node->psql('postgres', "SET statement_timeout = '60s'; VACUUM $table;");
		is($rc, 0, "$kind: after $abandon, VACUUM does not wait for the abandoned scan")
		  or diag($err);
		$scan->query('ROLLBACK');
		is( $node->safe_psql('postgres', $IOS . $query),
			$node->safe_psql('postgres', $BY_HEAP . $query),
			"$kind: ... and index-only scans answer as the heap");
	}
	$scan->quit;
}

done_testing();
