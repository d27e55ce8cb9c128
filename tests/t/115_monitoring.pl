# What a DBA's usual tools see of the indexes: pg_stat_user_indexes counts their scans as it
# counts btree's and GiST's, and pg_stat_progress_create_index reports the tuples of a build.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/../lib";
use PmNode;

my $node = pm_node('monitoring');
my @ordered = ordered_ams($node);

# ---- idx_scan: every plan shape counts one scan, as the built-in index on the same table does
# (a range in the middle of the histogram: at its ends the planner probes btree indexes itself,
# which idx_scan counts too)
my %builtin = (nbtree_pm => 'btree', fbrtree_pm => 'gist');
$builtin{$_} = 'btree' for @ordered;
my %column = (fbrtree_pm => 'p');
my %where = (fbrtree_pm => "p <@ box '((0,0),(50,50))'");

sub idx_scans
{
	my ($table) = @_;
	return $node->safe_psql('postgres',
		"SELECT idx_scan FROM pg_stat_user_indexes WHERE relname = '$table'");
}

for my $am (sort keys %builtin)
{
	my $col = $column{$am} // 'k';
	my $cond = $where{$am} // 'k BETWEEN 5000 AND 5100';
	my @shapes = (
		'SET enable_bitmapscan = off; SET enable_indexonlyscan = off',
		'SET enable_indexscan = off; SET enable_indexonlyscan = off',
		'SET enable_bitmapscan = off; SET enable_indexscan = off');

	# identical tables, one indexed by $am and one by the built-in method, the same queries on each
	for my $method ($am, $builtin{$am})
	{
		my $table = "s_${am}_$method";
		my $queries = join('',
			map { "$_; SELECT count(*) FROM (SELECT $col FROM $table WHERE $cond) s;\n" } @shapes);
		$node->safe_psql(
			'postgres', qq{
			CREATE TABLE $table (k int8, p point) WITH (autovacuum_enabled = off);
			INSERT INTO $table SELECT g, point(g % 1000, g / 1000) FROM generate_series(1, 20000) g;
			CREATE INDEX ON $table USING $method ($col);
			VACUUM ANALYZE $table;
			SET enable_seqscan = off;
			$queries});
	}
	is(idx_scans("s_${am}_$am"), idx_scans("s_${am}_$builtin{$am}"),
		"$am: idx_scan counts index, bitmap and index-only scans as $builtin{$am} does");
	is(idx_scans("s_${am}_$am"), '3', "$am: one per scan");
}

# ---- build progress: tuples_total and tuples_done move during the load as btree's do
$node->safe_psql(
	'postgres', q{
	CREATE TABLE progress_seen (am text, phase text, tuples_total int8, tuples_done int8);
	CREATE PROCEDURE watch_build(watched text) LANGUAGE plpgsql AS $$
	DECLARE
		since timestamptz := clock_timestamp();
		building bool := false;
	BEGIN
		LOOP
			INSERT INTO progress_seen
				SELECT watched, phase, tuples_total, tuples_done FROM pg_stat_progress_create_index;
			EXIT WHEN building AND NOT FOUND;
			building := building OR FOUND;
			EXIT WHEN clock_timestamp() - since > interval '120 s';
			COMMIT;		-- a new snapshot of the progress array
			PERFORM pg_sleep(0.001);
		END LOOP;
	END $$;
	CREATE TABLE big (k int8, p point) WITH (autovacuum_enabled = off);
	INSERT INTO big SELECT g, point(g % 1000, g / 1000) FROM generate_series(1, 1500000) g;});

for my $am (@ordered, 'fbrtree_pm')
{
	my $col = $column{$am} // 'k';
	my ($out, $err) = ('', '');
	my $watcher = psql_start($node, \$out, \$err, "CALL watch_build('$am')");
	$node->poll_query_until('postgres',
		"SELECT count(*) > 0 FROM pg_stat_activity WHERE query LIKE 'CALL watch_build%'");
	$node->safe_psql('postgres', "CREATE INDEX big_$am ON big USING $am ($col)");
	$watcher->finish;
	is($err, '', "$am: the progress watcher ran");
	my $load = $node->safe_psql(
		'postgres', qq{SELECT count(*), min(tuples_total), max(tuples_total), max(tuples_done)
		FROM progress_seen WHERE am = '$am' AND phase LIKE 'building index: loading%'});
	my ($samples, $min_total, $max_total, $max_done) = split(/\|/, $load);
	ok($samples > 0, "$am: the load phase was seen ($samples samples)");
	is("$min_total $max_total", '1500000 1500000', "$am: tuples_total is the number of entries");
	ok($max_done <= 1500000, "$am: tuples_done stays within tuples_total ($max_done)");
	ok($max_done > 0, "$am: tuples_done moves during the load") if $am ne 'fbrtree_pm';
}

$node->stop;
done_testing();
