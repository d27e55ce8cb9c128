# PostgreSQL as the oracle: every operator class of the ordered access methods (nbtree_pm,
# phast_pm, nvbtree_pm), every operator of its family (cross-type members too), over boundary and
# random values, every plan shape and index ordering (the other two's shared classes ascending but
# for the key kinds: pm_diff.orderings), compared with btree on an identical table and with a
# sequential scan (tests/diff/nbtree_pm.sql); every operator class of fbrtree_pm (geometry with PostGIS), its
# search and ordering operators and PostGIS's predicates, compared with GiST and a sequential
# scan (tests/diff/fbrtree_pm.sql); random scroll cursor moves against btree's twin cursor
# (tests/diff/nbtree_pm.sql), with rows deleted, inserted and VACUUMed in their pause; random
# AND/OR/NOT WHERE shapes on tables of every access method (tests/diff/where.sql); every
# operator class of hash_pm over the same values, against hash and a sequential scan
# (tests/diff/hash_pm.sql).  Then one
# pass in a single snapshot while writers change the tables and VACUUM runs.  Seeded: the seed
# is printed, and PM_TEST_SEED=<seed> (or PM_DIFF_SEED) replays it.
# PM_DIFF_VALUES (default 5) is the number of random arguments per operator and type, and
# PM_DIFF_ROWS (default 200) the random rows per table; tests/torture raises both.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/../lib";
use PmNode;

my $seed = $ENV{PM_TEST_SEED} // $ENV{PM_DIFF_SEED} // int(rand(1_000_000_000));
my $values = $ENV{PM_DIFF_VALUES} || 5;
my $rows = $ENV{PM_DIFF_ROWS} || 200;
my @zones = ('UTC', 'America/New_York', 'Asia/Kolkata', 'Pacific/Kiritimati', 'America/St_Johns',
	'Europe/Berlin');
srand($seed);
my $zone = $zones[ int(rand(@zones)) ];
diag("differential: seed $seed, TimeZone $zone, $values values, $rows rows "
	  . "(replay: PM_TEST_SEED=$seed PM_TAP_FILTER=090_differential tests/run --only tap)");

# the rows of tiered indexes wait in their logs until the replay workers resume, after the
# queries of the types' tables
my $node = pm_node('diff', "timezone = '$zone'", 'autovacuum = off', 'pm_index.debug_tier_pause = on');
# PostgreSQL 18 removes a self-join on a unique index, which the merge-join shape is
$node->safe_psql('postgres', 'ALTER SYSTEM SET enable_self_join_elimination = off; SELECT pg_reload_conf()')
  if $node->safe_psql('postgres', 'SHOW server_version_num') >= 180000;
my $postgis = $node->safe_psql('postgres',
	q{SELECT count(*) FROM pg_available_extensions WHERE name IN ('postgis', 'pm_index_postgis')}) == 2;
$node->safe_psql('postgres', 'CREATE EXTENSION postgis; CREATE EXTENSION pm_index_postgis') if $postgis;
$node->safe_psql('postgres', join("\n", map { slurp_file("$FindBin::Bin/../diff/$_.sql") } qw(common nbtree_pm hash_pm fbrtree_pm where)));
# setseed() takes [-1, 1]
my $setseed = sprintf('SELECT setseed(%.9f);', ($seed % 2_000_000_001) / 1_000_000_000 - 1);

# The first failures of a pass, with the first line where the answers part.
sub report
{
	my ($where) = @_;
	my $failures = $node->safe_psql(
		'postgres', qq{
		SELECT count(*) FROM pm_diff.failures WHERE $where});
	ok($failures == 0, "no failures: $where") or do
	{
		diag(
			$node->safe_psql(
				'postgres', qq{
			SELECT format(E'%s: %s\n    got:  %s\n    want: %s', kind, query,
			         coalesce(g, '(end)'), coalesce(w, '(end)'))
			  FROM (SELECT kind, query, string_to_array(got, E'\n') ga, string_to_array(want, E'\n') wa
			          FROM pm_diff.failures WHERE $where LIMIT 5) f,
			       LATERAL (SELECT ga[i] g, wa[i] w FROM generate_series(1, greatest(cardinality(ga), cardinality(wa), 1)) i
			                 WHERE ga[i] IS DISTINCT FROM wa[i] LIMIT 1) d}));
	};
}

# Every index of access method am in pm_diff verifies, every heap tuple indexed.
sub all_verify
{
	my ($am, $when) = @_;
	is( $node->safe_psql(
			'postgres', qq{
		SELECT count(*) FROM (SELECT ${am}_check(c.oid, true) FROM pg_class c
		 WHERE c.relnamespace = 'pm_diff'::regnamespace AND c.relkind = 'i'
		   AND c.relam = (SELECT oid FROM pg_am WHERE amname = '$am')) s}) > 0 ? 'verified' : 'none',
		'verified', "every $am index verifies $when");
}

# each type as the regtype names it (the collation domains with their schema) and in table names
my @types = map { [ split /\|/ ] }
  split /\n/, $node->safe_psql('postgres', q{SELECT t::text || '|' || pm_diff.tname(t) FROM pm_diff.types() t});
$node->safe_psql('postgres', "$setseed SELECT pm_diff.setup_type(t, $rows) FROM pm_diff.types() t");
$node->safe_psql('postgres', 'VACUUM ANALYZE');
for my $tt (@types)
{
	my ($t, $tname) = @$tt;
	for my $o (split /\n/, $node->safe_psql('postgres', "SELECT name FROM pm_diff.orderings('$t')"))
	{
		$node->safe_psql('postgres', "$setseed SELECT pm_diff.run_type('$t', '$o', $values)");
		report("query LIKE '%pm_diff.pm\\_${tname}\\_$o %'");
	}
}
# hash_pm against hash, its rows waiting in its logs
my @hash_types = map { [ split /\|/ ] }
  split /\n/, $node->safe_psql('postgres', q{SELECT t::text || '|' || pm_diff.tname(t) FROM pm_diff.hash_types() t});
$node->safe_psql('postgres', 'SELECT pm_diff.hash_setup(t) FROM pm_diff.hash_types() t; ANALYZE');
for my $tt (@hash_types)
{
	my ($t, $tname) = @$tt;
	$node->safe_psql('postgres', "$setseed SELECT pm_diff.hash_run('$t', $values)");
	report("query LIKE '%pm_diff.hs\\_$tname %'");
}
is( $node->safe_psql(
		'postgres', q{SELECT count(*) FILTER (WHERE c.relname LIKE 'pm\_%\_tiered\_%') > 0
		                AND count(*) FILTER (WHERE c.relname LIKE 'hs\_%') > 0
		 FROM pg_class c, LATERAL pm_index_tier_lag(c.oid) l
		 WHERE c.relkind = 'i' AND l.waiting_entries > 0}),
	't', 'the tiered and hash_pm indexes were read with their rows waiting in their logs');
# multicolumn indexes of every shape and ordering
$node->safe_psql('postgres', 'ALTER SYSTEM SET pm_index.debug_tier_pause = off; SELECT pg_reload_conf()');
$node->safe_psql('postgres', "$setseed SELECT pm_diff.mc_setup($rows * 2)");
$node->safe_psql('postgres', 'VACUUM ANALYZE');
my @mc_orderings = split /\n/, $node->safe_psql('postgres', 'SELECT name FROM pm_diff.mc_orderings ORDER BY name');
for my $shape (split /\n/, $node->safe_psql('postgres', 'SELECT shape FROM pm_diff.mc_shapes ORDER BY shape'))
{
	for my $o (@mc_orderings)
	{
		$node->safe_psql('postgres', "$setseed SELECT pm_diff.mc_run($shape, '$o', @{[ 8 * $values ]})");
		report("query LIKE '%pm_diff.mc${shape}\\_$o %'");
	}
}
# WHERE shapes: AND/OR/NOT nesting over boolean, int and spatial conditions, planned and run
# on tables with the ordered access methods' and fbrtree_pm indexes, against btree and GiST and
# a sequential scan
$node->safe_psql('postgres', "$setseed SELECT pm_diff.wh_setup($rows * 2)");
$node->safe_psql('postgres', 'VACUUM ANALYZE pm_diff.wh_btree, '
	  . join(', ', map { "pm_diff.wh_$_" } ordered_ams($node)));
$node->safe_psql('postgres', "$setseed SELECT pm_diff.wh_run(@{[ 60 * $values ]})");
report(q{kind LIKE 'where%'});
# Scroll cursors with VACUUM in their pause: rows of the int8 tables deleted and committed, then
# in one REPEATABLE READ transaction scroll cursors on an ordered index's table and on btree's
# (pm_diff.cursor_open: an index or index-only scan) make half their random moves; meanwhile
# another session inserts rows into every int8 table (splitting nodes under the paused
# cursors) and VACUUM removes the deleted rows from the index's table (or waits for the
# index-only scan), then from btree's; then the other half of the moves.  Every move's rows
# must be equal (counted as 'cursor vacuum').
my @int8_tables = split /\n/, $node->safe_psql('postgres', "SELECT unnest(pm_diff.tables('int8'))");
my $bt_int8 = $int8_tables[-1];
for my $ord (split /\n/, $node->safe_psql('postgres', "SELECT name FROM pm_diff.orderings('int8') WHERE NOT uniq"))
{
	for my $shape ('index', 'indexonly')
	{
		my $round_seed = sprintf('SELECT setseed(%.9f);', rand(2) - 1);
		my $tested = "pm_diff.pm_int8_$ord";
		my $ids = $node->safe_psql('postgres',
			"$round_seed SELECT string_agg(id::text, ',') FROM (SELECT id FROM $bt_int8 ORDER BY random() LIMIT 40) s");
		$node->safe_psql('postgres', join(";\n", map { "DELETE FROM $_ WHERE id IN ($ids)" } @int8_tables));
		my $vacuums = "SELECT vacuum_count FROM pg_stat_user_tables WHERE relid = '$tested'::regclass";
		my $before = $node->safe_psql('postgres', $vacuums);
		my $scan = $node->background_psql('postgres');
		$scan->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ');
		$scan->query_safe($round_seed);
		my $q = $scan->query_safe("SELECT pm_diff.cursor_open('int8', '$ord', '$shape', 'tc', 'oc')");
		my $moves = $q eq '' ? '' : $scan->query_safe(
			"SELECT pm_diff.cursor_moves('int8', '$ord', '$shape', \$q\$$q\$q\$, 'tc', 'oc', 12, '', 'cursor vacuum')");
		$node->safe_psql(
			'postgres', "$round_seed
			CREATE TEMP TABLE ins AS SELECT nextval(pg_get_serial_sequence('$bt_int8', 'id'))::int AS id,
			       pm_diff.random_value('int8')::int8 AS v FROM generate_series(1, 300);
			" . join(";\n", map { "INSERT INTO $_ (id, v) SELECT id, v FROM ins" } @int8_tables));
		my $vacuum = $node->background_psql('postgres');
		$vacuum->query_until(qr/vacuuming/, "\\echo vacuuming\nVACUUM $tested;\nVACUUM $bt_int8;\n");
		# VACUUM of the index's table has ended, or waits for the paused scan
		$node->poll_query_until(
			'postgres', qq{
			SELECT ($vacuums) > $before OR EXISTS (SELECT FROM pg_stat_activity
			  WHERE query = 'VACUUM $tested;' AND wait_event_type IN ('Extension', 'BufferPin'))})
		  or die "VACUUM $tested neither ends nor waits for the scan";
		$scan->query_safe("SELECT pm_diff.cursor_moves('int8', '$ord', '$shape', \$q\$$q\$q\$, 'tc', 'oc', 12, "
			  . "\$q\$$moves(VACUUM) \$q\$, 'cursor vacuum')") if $moves ne '';
		$scan->query_safe('COMMIT');
		$scan->quit;
		$vacuum->query_safe('SELECT 1');
		$vacuum->quit;
	}
}

# fbrtree_pm: the sequential scan is the truth; where GiST differs from it, that is GiST's.
# The rows of the tiered twins (pm_diff.fbt_*) wait in their logs while they are read.
diag('differential: PostGIS is not installed, geometry is not compared') unless $postgis;
$node->safe_psql('postgres', 'ALTER SYSTEM SET pm_index.debug_tier_pause = on; SELECT pg_reload_conf()');
$node->safe_psql('postgres', "$setseed SELECT pm_diff.fbr_setup_type(t, $rows, class) FROM pm_diff.fbr_classes()");
$node->safe_psql('postgres', 'VACUUM ANALYZE');
for my $c (split /\n/, $node->safe_psql('postgres',
	q{SELECT t::text || '|' || coalesce(class, '') || '|' || pm_diff.fbr_tag(t, class) FROM pm_diff.fbr_classes()}))
{
	my ($t, $class, $tag) = split /\|/, $c, -1;
	my $class_arg = $class eq '' ? 'NULL' : "'$class'";
	$node->safe_psql('postgres', "$setseed SELECT pm_diff.fbr_run_type('$t', @{[ 4 * $values ]}, $class_arg)");
	report("query LIKE '%pm_diff.fb_\\_$tag %' AND kind <> 'builtin differs'");
}
# geometry of SRIDs 4326 and 3857 in untyped and typed columns and through an expression index,
# n-D values whose M ranges differ (tests/diff/fbrtree_pm.sql, pm_diff.fbr_variants)
if ($postgis)
{
	my @variants = split /\n/, $node->safe_psql('postgres', 'SELECT tag FROM pm_diff.fbr_variants()');
	$node->safe_psql('postgres', "$setseed SELECT pm_diff.fbr_setup_variant(tag, $rows) FROM pm_diff.fbr_variants()");
	$node->safe_psql('postgres', 'VACUUM ANALYZE');
	for my $tag (@variants)
	{
		$node->safe_psql('postgres', "$setseed SELECT pm_diff.fbr_run_variant('$tag', $values)");
		report("query LIKE '%pm_diff.fb_\\_$tag %' AND kind <> 'builtin differs'");
	}
}
is( $node->safe_psql(
		'postgres', q{SELECT bool_and(l.waiting_entries > 0) FROM pg_class c, LATERAL pm_index_tier_lag(c.oid) l
		 WHERE c.relkind = 'i' AND c.relname LIKE 'fbt\_%'}),
	't', 'the tiered fbrtree_pm indexes were read with their rows waiting in their logs');
$node->safe_psql('postgres', 'ALTER SYSTEM SET pm_index.debug_tier_pause = off; SELECT pg_reload_conf()');
diag('differential: GiST differs from a sequential scan in '
	  . $node->safe_psql('postgres', q{SELECT count(*) FROM pm_diff.failures WHERE kind = 'builtin differs'})
	  . ' fbrtree_pm checks (fbrtree_pm answers as the sequential scan)');

# every shape was planned and run (a check the planner never reached tests nothing)
is( $node->safe_psql(
		'postgres', q{
	SELECT string_agg(s, ',' ORDER BY s)
	  FROM unnest('{bitmap,index,indexonly,merge,parallel,parallelonly,"cursor index","cursor indexonly",
	                "cursor vacuum","where bitmapor","where bitmap","where index"}'::text[]) s
	 WHERE NOT EXISTS (SELECT FROM pm_diff.counts c WHERE c.shape = s AND c.n > 0)}),
	'', 'every plan shape ran');
diag('differential: ' . $node->safe_psql('postgres',
	q{SELECT string_agg(format('%s %s', n, shape), ', ' ORDER BY shape) FROM pm_diff.counts}));
diag('differential: fbrtree_pm answers per class: ' . $node->safe_psql('postgres',
	q{SELECT string_agg(format('%s %s', n, class), ', ' ORDER BY class) FROM pm_diff.class_counts}));
report(q{kind <> 'builtin differs' OR query LIKE '%pm_diff.bt\_%'});
all_verify($_, 'after the static passes') for ordered_ams($node), 'fbrtree_pm';
all_verify('hash_pm', 'after the static passes');

# The concurrent pass: an nbtree_pm, an fbrtree_pm and a hash_pm type, a writer on each (at most
# 3,000 rounds of 10 ms) and one on the unique int8 tables, on the unique tables of text in ICU
# (wide keys, sort keys) and on the multicolumn tables of text in ICU, numeric and timestamptz,
# VACUUM in a loop, the checks of each table in one REPEATABLE READ snapshot.
$node->safe_psql('postgres', 'TRUNCATE pm_diff.failures');
# The unique int8 tables have a writer of their own, whose values collide on purpose.
my @orderings = split /\n/, $node->safe_psql('postgres', "SELECT name FROM pm_diff.orderings('int8')");
# text in ICU's sort keys, or in en_US's where the server has no ICU
my $sorted_text = $node->safe_psql('postgres', 'SELECT pm_diff.sort_key_text()');
my %pass = (
	int8 => [ 'int8', 'pm_diff.tables', 'pm_diff.random_value', 'pm_diff.write',
		[ map { "SELECT pm_diff.run_type('int8', '$_', 2, false)" } @orderings ] ],
	int8_unique => [ 'int8', 'pm_diff.unique_tables', 'pm_diff.random_value', 'pm_diff.write_unique', [] ],
	text_unique => [ $sorted_text, 'pm_diff.unique_tables', 'pm_diff.random_value', 'pm_diff.write_unique',
		["SELECT pm_diff.run_type('$sorted_text', 'uq', 2, false)"] ],
	point => [ 'point', 'pm_diff.fbr_tables', 'pm_diff.fbr_random_value', 'pm_diff.write',
		["SELECT pm_diff.fbr_run_type('point', 4)"] ],
	hash_text => [ 'text', 'pm_diff.hash_tables', 'pm_diff.random_value', 'pm_diff.write',
		["SELECT pm_diff.hash_run('text', 2)"] ]);
my @busy;
for my $p (sort keys %pass)
{
	my ($t, $tables_fn, $random_fn, $writer) = @{ $pass{$p} };
	my @tables = split /\n/, $node->safe_psql('postgres', "SELECT unnest($tables_fn('$t'))");
	my ($out, $err, $vout, $verr) = ('', '', '', '');
	push @busy, [ psql_start($node, \$out, \$err, $setseed,
		"CALL $writer($tables_fn('$t'), '$t', '$random_fn', 3000)"), \$err ];
	push @busy, [ psql_start($node, \$vout, \$verr,
		map { ('SELECT pg_sleep(0.2)', map { "VACUUM $_" } @tables) } 1 .. 50), \$verr ];
}
my @mc_tables = map { ("pm_diff.mc2_$_", "pm_diff.mcbt2_$_") } @mc_orderings;
{
	my ($out, $err, $vout, $verr) = ('', '', '', '');
	push @busy, [ psql_start($node, \$out, \$err, $setseed, 'CALL pm_diff.mc_write(2, 3000)'), \$err ];
	push @busy, [ psql_start($node, \$vout, \$verr,
		map { ('SELECT pg_sleep(0.2)', map { "VACUUM $_" } @mc_tables) } 1 .. 50), \$verr ];
}
$pass{multicolumn} = [ undef, undef, undef, undef, [ map { "SELECT pm_diff.mc_run(2, '$_', 3)" } @mc_orderings ] ];
for my $p (sort keys %pass)
{
	for my $check (@{ $pass{$p}[4] })
	{
		$node->safe_psql('postgres', qq{BEGIN ISOLATION LEVEL REPEATABLE READ; $setseed
			$check; COMMIT;});
	}
}
$node->safe_psql('postgres', 'INSERT INTO pm_diff.stop VALUES (now())');
for my $b (@busy)
{
	$b->[0]->finish;
	is(${ $b->[1] }, '', 'writer or VACUUM loop ran without an error');
}
# a built-in index's own errors in the writers (pm_diff.write) are counted, not failed
diag('differential: the built-in indexes raised '
	  . $node->safe_psql('postgres', q{
		SELECT count(*) || ' errors of their own in the concurrent writers'
		       || coalesce(' (rounds rolled back in every table; first: '
		                   || (SELECT got || ' in ' || query FROM pm_diff.failures
		                        WHERE kind = 'builtin error' LIMIT 1) || ')', '')
		  FROM pm_diff.failures WHERE kind = 'builtin error'}));
report(q{kind NOT IN ('builtin differs', 'builtin error')});
all_verify($_, 'after the concurrent pass') for ordered_ams($node), 'fbrtree_pm';
all_verify('hash_pm', 'after the concurrent pass');
$node->stop;
done_testing();
