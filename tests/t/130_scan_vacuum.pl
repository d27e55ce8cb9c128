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

# Random rounds: rows deleted and committed, then a REPEATABLE READ transaction opens the same
# query twice, through the index and through the heap (one snapshot), and fetches part of the
# index's answer; meanwhile another session inserts rows into the same range (splitting
# nodes under the paused scan) and VACUUM removes the deleted ones; then the rest, and all of it
# again backwards. The cursors' answers must be equal.
my @queries = (
	[ 'ordered', 'SELECT k FROM TAB WHERE k BETWEEN LO AND HI ORDER BY k' ],
	[ 'ordered', 'SELECT k FROM TAB WHERE k >= LO ORDER BY k DESC' ],
	[ 'ordered', 'SELECT k, v FROM TAB WHERE k BETWEEN LO AND HI ORDER BY k' ],
	[ 'spatial', q{SELECT p[0], p[1] FROM TAB WHERE p <@ box '((LO,LO),(HI,HI))'} ],
	[ 'spatial', q{SELECT p[0], p[1] FROM TAB ORDER BY p <-> point '(LO,LO)'} ]);
test_seed();
my $INDEX_PLAN = 'SET enable_seqscan = off; SET enable_bitmapscan = off; SET enable_sort = off; ';
my $HEAP_PLAN = 'SET enable_seqscan = on; SET enable_indexscan = off; SET enable_indexonlyscan = off; '
  . 'SET enable_bitmapscan = off; SET enable_sort = on; ';
my $differences = 0;
my $rounds_seeded = 0;
my $rounds = 0;
for my $am (ordered_ams($node), 'fbrtree_pm')
{
	my $kind = $am eq 'fbrtree_pm' ? 'spatial' : 'ordered';
	my $table = "r_$am";
	$node->safe_psql(
		'postgres', $kind eq 'ordered'
		? qq{DROP TABLE IF EXISTS $table; CREATE TABLE $table (k int8, v int8);
		     INSERT INTO $table SELECT g * 10, g FROM generate_series(1, 20000) g;
		     CREATE INDEX ON $table USING $am (k) } . ($am eq 'nbtree_pm' ? 'INCLUDE (v)' : '') . qq{;
		     VACUUM (FREEZE, ANALYZE) $table;}
		: qq{DROP TABLE IF EXISTS $table; CREATE TABLE $table (p point);
		     INSERT INTO $table SELECT point(g % 1000, g / 20) FROM generate_series(1, 20000) g;
		     CREATE INDEX ON $table USING $am (p); VACUUM (FREEZE, ANALYZE) $table;});
	my $column = $kind eq 'ordered' ? 'k' : 'p[0]';
	my $span = $kind eq 'ordered' ? 200_000 : 1000;
	for my $q (grep { $_->[0] eq $kind } @queries)
	{
		for (1 .. 6)
		{
			my $lo = int(rand($span * 0.8));
			my $hi = $lo + int(rand($span * 0.2)) + 1;
			(my $query = $q->[1]) =~ s/TAB/$table/g;
			$query =~ s/LO/$lo/g;
			$query =~ s/HI/$hi/g;
			$node->safe_psql('postgres',
				setseed(++$rounds_seeded) . "DELETE FROM $table WHERE $column BETWEEN $lo AND $hi AND random() < 0.2");
			my $scan = $node->background_psql('postgres');
			$scan->query_safe(
				"BEGIN ISOLATION LEVEL REPEATABLE READ; $INDEX_PLAN DECLARE ci SCROLL CURSOR FOR $query; "
				  . "$HEAP_PLAN DECLARE ch CURSOR FOR $query");
			my $first = $scan->query_safe('FETCH ' . (1 + int(rand(300))) . ' FROM ci');
			$node->safe_psql(
				'postgres', setseed(++$rounds_seeded) . ($kind eq 'ordered'
				? "INSERT INTO $table SELECT $lo + (random() * ($hi - $lo))::int8, 0 FROM generate_series(1, 500)"
				: "INSERT INTO $table SELECT point($lo + random() * ($hi - $lo), random() * 1000) FROM generate_series(1, 500)"));
			my $vacuums = "SELECT vacuum_count FROM pg_stat_user_tables WHERE relname = '$table'";
			my $before = $node->safe_psql('postgres', $vacuums);
			my $vacuum = $node->background_psql('postgres');
			$vacuum->query_until(qr/vacuuming/, "\\echo vacuuming\nVACUUM $table;\n");
			# VACUUM has ended, or waits for the paused scan
			$node->poll_query_until(
				'postgres', qq{
				SELECT ($vacuums) > $before OR EXISTS (SELECT FROM pg_stat_activity
				  WHERE query = 'VACUUM $table;' AND wait_event_type = 'Extension')})
			  or die 'VACUUM neither ends nor waits for the scan';
			my $rest = $scan->query_safe('FETCH ALL FROM ci');
			my $by_index = join("\n", grep { $_ ne '' } $first, $rest);
			# and back from the end: the same rows in reverse
			my $back = join("\n", reverse split(/\n/, $scan->query_safe('FETCH BACKWARD ALL FROM ci')));
			my $by_heap = $scan->query_safe('FETCH ALL FROM ch');
			if ($back ne $by_index)
			{
				$differences++;
				diag("$am: $query: fetched backward, the paused index scan returns other rows");
			}
			# rows of equal sort keys (equal distances, equal k with other v) come in any order
			if ($query !~ /^SELECT k FROM/)
			{
				$by_index = join("\n", sort split(/\n/, $by_index));
				$by_heap = join("\n", sort split(/\n/, $by_heap));
			}
			$scan->query_safe('COMMIT');
			$scan->quit;
			$vacuum->query_safe('SELECT 1');
			$vacuum->quit;
			$rounds++;
			next if $by_index eq $by_heap;
			$differences++;
			diag("$am: $query: the paused index scan differs from the heap's answer");
		}
	}
}
is($differences, 0, "$rounds paused scans with inserts and VACUUM in the pause answer as the heap");

done_testing();
