# What a DBA's usual tools see of the indexes, and what they cost: pg_stat_user_indexes counts
# their scans as it counts btree's, GiST's and hash's, pg_stat_progress_create_index reports the tuples
# of a build, and a backend's address space grows with the pools it uses, not by a fixed
# maximum per pool.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/../lib";
use PmNode;

# no load workers: after a restart the view shows indexes not loaded until a query uses them
my $node = pm_node('monitoring', 'autovacuum = off', 'pm_index.startup_load_workers = 0');
my @ordered = ordered_ams($node);

# ---- idx_scan: every plan shape counts one scan, as the built-in index on the same table does
# (a range in the middle of the histogram: at its ends the planner probes btree indexes itself,
# which idx_scan counts too)
my %builtin = (nbtree_pm => 'btree', fbrtree_pm => 'gist', hash_pm => 'hash');
$builtin{$_} = 'btree' for @ordered;
my %column = (fbrtree_pm => 'p');
# (hash_pm: one value; the hash access method cannot take an array, and each of its values is a
# scan of its own in idx_scan)
my %where = (fbrtree_pm => "p <@ box '((0,0),(50,50))'", hash_pm => 'k = 5050');

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
# hash_pm inserts into its table as the build scans the heap: it has no load phase to watch
$node->safe_psql('postgres', 'CREATE INDEX big_hash_pm ON big USING hash_pm (k)');

# ---- sizes and states, cluster-wide
$node->safe_psql('postgres', 'CREATE DATABASE other');
$node->safe_psql('other', q{CREATE EXTENSION pm_index; CREATE TABLE o (k int8);
	INSERT INTO o SELECT generate_series(1, 50000); CREATE INDEX o_k ON o USING phast_pm (k)});
is( $node->safe_psql(
		'postgres', q{SELECT pm_index_size('big_nbtree_pm') = bytes FROM pm_index_pools()
		WHERE index = 'big_nbtree_pm'::regclass}),
	't', 'pm_index_size() is the bytes of the index\'s pool file');
cmp_ok($node->safe_psql('postgres', "SELECT pm_index_size('big_nbtree_pm')"), '>', 1 << 20,
	'which holds its entries (pg_relation_size shows the metapage only)');
is( $node->safe_psql(
		'postgres', q{SELECT database, index IS NULL, access_method, pm_bytes > 0, pool_state, dram_state
		FROM pm_index_indexes WHERE database = 'other'}),
	'other|t|phast_pm|t|in use|ready', 'pm_index_indexes shows another database\'s index');
is( $node->safe_psql(
		'postgres', q{SELECT access_method, dram_state FROM pm_index_indexes
		WHERE index = 'big_fbrtree_pm'::regclass}),
	'fbrtree_pm|ready', 'and this database\'s, by name');
# the view's DRAM bytes and entries are what pm_index_stats() finds by walking each index
for my $am (@ordered, 'fbrtree_pm', 'hash_pm')
{
	is( $node->safe_psql(
			'postgres', qq{SELECT i.dram_bytes = s.dram_bytes, i.entries = s.entries, i.entries
			FROM pm_index_indexes i, pm_index_stats('big_$am') s WHERE i.index = 'big_$am'::regclass}),
		't|t|1500000', "$am: pm_index_indexes has its DRAM-tier bytes and entries");
}
cmp_ok($node->safe_psql('postgres',
		q{SELECT dram_bytes FROM pm_index_indexes WHERE index = 'big_nbtree_pm'::regclass}),
	'>', 1 << 20, 'an nbtree_pm index of 1.5M entries holds megabytes of the DRAM tier');
my ($tier_bytes, $tier_used, $tier_max) = split(/\|/,
	$node->safe_psql('postgres', 'SELECT bytes, used_bytes, max_bytes FROM pm_index_dram_tier()'));
ok($tier_used > 0 && $tier_used <= $tier_bytes && $tier_bytes < $tier_max,
	"pm_index_dram_tier(): $tier_used of $tier_bytes bytes in use, up to $tier_max");
$node->restart;
is( $node->safe_psql(
		'postgres', q{SELECT count(*), count(*) FILTER (WHERE dram_state = 'not loaded') FROM pm_index_indexes}),
	$node->safe_psql('postgres', 'SELECT count(*), count(*) FROM pm_index_pools()'),
	'after a restart every index is listed, none loaded yet');
$node->safe_psql('postgres', q{CREATE ROLE watcher LOGIN IN ROLE pg_monitor; CREATE ROLE nobody_special LOGIN});
is($node->safe_psql('postgres', 'SELECT count(*) > 0 FROM pm_index_indexes', extra_params => [ '-U', 'watcher' ]),
	't', 'a member of pg_monitor reads the view');
my ($rc, $out, $err) = $node->psql('postgres', 'SELECT * FROM pm_index_indexes', extra_params => [ '-U', 'nobody_special' ]);
like($err, qr/permission denied/, 'another role may not (the view names server files)');

# ---- upgrade: an install of 0.1.0 with an index in use is updated, and has what a new one has
my $objects = q{SELECT string_agg(o, E'\n' ORDER BY o) FROM (
	SELECT pg_describe_object(classid, objid, objsubid) AS o FROM pg_depend
	WHERE refclassid = 'pg_extension'::regclass AND deptype = 'e'
	AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'pm_index')) s};
my $acl = q{SELECT string_agg(a, ',' ORDER BY a) FROM (
	SELECT proname || coalesce(proacl::text, '') AS a FROM pg_proc WHERE proname LIKE 'pm\_index\_%'
	UNION ALL SELECT relname || coalesce(relacl::text, '') FROM pg_class WHERE relname LIKE 'pm\_index\_%') s};
$node->safe_psql('postgres', 'CREATE DATABASE upgraded');
$node->safe_psql('upgraded', q{CREATE EXTENSION pm_index VERSION '0.1.0';
	CREATE TABLE up (k int8); INSERT INTO up SELECT generate_series(1, 1000); CREATE INDEX up_k ON up USING nbtree_pm (k)});
$node->safe_psql('upgraded', 'ALTER EXTENSION pm_index UPDATE');
is($node->safe_psql('upgraded', 'SET enable_seqscan = off; SELECT count(*) FROM up WHERE k <= 10'), '10',
	'the index built before the update answers after it');
cmp_ok($node->safe_psql('upgraded', "SELECT pm_index_size('up_k')"), '>', 0, 'and has the new size function');
is($node->safe_psql('upgraded', "SELECT extversion FROM pg_extension WHERE extname = 'pm_index'"),
	$node->safe_psql('postgres', 'SELECT pm_index_version()'), 'ALTER EXTENSION UPDATE reaches the library\'s version');
is($node->safe_psql('upgraded', $objects), $node->safe_psql('postgres', $objects),
	'the updated extension has the objects of a fresh install');
is($node->safe_psql('upgraded', $acl), $node->safe_psql('postgres', $acl), 'and its privileges');

# pm_index_postgis from 0.1.0 (geometry_ops_2d only): the update adds geography and n-D classes,
# the 2-D index built before it keeps answering
SKIP:
{
	skip 'PostGIS is not installed for this PostgreSQL', 3
	  unless $node->safe_psql('postgres',
		q{SELECT count(*) FROM pg_available_extensions WHERE name IN ('postgis', 'pm_index_postgis')}) == 2;
	my $postgis_objects = $objects =~ s/extname = 'pm_index'/extname = 'pm_index_postgis'/r;
	$node->safe_psql('postgres', 'CREATE DATABASE gis_fresh');
	$node->safe_psql('gis_fresh', 'CREATE EXTENSION pm_index; CREATE EXTENSION postgis; CREATE EXTENSION pm_index_postgis');
	$node->safe_psql('upgraded', q{CREATE EXTENSION postgis; CREATE EXTENSION pm_index_postgis VERSION '0.1.0';
		CREATE TABLE gup AS SELECT i, ST_MakePoint(i, i) AS geom FROM generate_series(1, 1000) i;
		CREATE INDEX gup_geom ON gup USING fbrtree_pm (geom)});
	$node->safe_psql('upgraded', 'ALTER EXTENSION pm_index_postgis UPDATE');
	is($node->safe_psql('upgraded', $postgis_objects), $node->safe_psql('gis_fresh', $postgis_objects),
		'the updated pm_index_postgis has the objects of a fresh install');
	is($node->safe_psql('upgraded',
			'SET enable_seqscan = off; SELECT count(*) FROM gup WHERE geom && ST_MakeEnvelope(0, 0, 10, 10)'),
		'10', 'the geometry index built before the update answers after it');
	$node->safe_psql('upgraded', q{CREATE TABLE gup2 AS SELECT i, ST_MakePoint(i / 100.0, i / 200.0)::geography AS g
		FROM generate_series(1, 1000) i; CREATE INDEX ON gup2 USING fbrtree_pm (g)});
	is($node->safe_psql('upgraded',
			q{SET enable_seqscan = off; SELECT count(*) FROM gup2 WHERE ST_DWithin(g, 'POINT(0 0)'::geography, 2000)}),
		'1', 'and a geography index can be made');
}

# ---- address space: 20 small indexes used by one backend
my $nidx = 20;
$node->safe_psql('postgres',
	join('', map { "CREATE TABLE as_$_ (k int8); INSERT INTO as_$_ SELECT generate_series(1, 10000); CREATE INDEX ON as_$_ USING nbtree_pm (k);\n" } 1 .. $nidx));
my $vmsize = q{SELECT (regexp_match(pg_read_file('/proc/self/status'), 'VmSize:\s+(\d+)'))[1]::int8 * 1024};
my $touch = 'SELECT ' . join(' + ', map { "(SELECT count(*) FROM as_$_ WHERE k = 5)" } 1 .. $nidx);
my ($before, $found, $after) =
  split(/\n/, $node->safe_psql('postgres', "SET enable_seqscan = off; $vmsize; $touch; $vmsize"));
is($found, $nidx, "one backend used $nidx indexes");
my $pools = $node->safe_psql('postgres',
	"SELECT sum(bytes) FROM pm_index_pools() WHERE index::text LIKE 'as\\_%'");
my $per_index = ($after - $before) / $nidx;
note("VmSize grew by ${\(($after - $before) >> 20)} MB for $nidx pools of ${\($pools >> 20)} MB together");
cmp_ok($per_index, '<', 2 * $pools / $nidx + (16 << 20),
	'each pool costs the backend about its size plus a few MB of address space');

# Under an address-space limit that 20 pools of 64 GB windows would blow many times over, the
# same work succeeds.
my $limited = PostgreSQL::Test::Cluster->new('limited');
$limited->init;
$limited->append_conf('postgresql.conf', "shared_preload_libraries = 'pm_index'");
my $limit_kb = 4 << 20;    # 4 GB
system_or_bail('bash', '-c', "ulimit -v $limit_kb && pg_ctl -D " . $limited->data_dir .
	' -l ' . $limited->logfile . ' -w start -o "-p ' . $limited->port . ' -k ' . $limited->host . '"');
$limited->_update_pid(1);
$limited->safe_psql('postgres', 'CREATE EXTENSION pm_index');
$limited->safe_psql('postgres',
	join('', map { "CREATE TABLE as_$_ (k int8); INSERT INTO as_$_ SELECT generate_series(1, 10000); CREATE INDEX ON as_$_ USING nbtree_pm (k);\n" } 1 .. $nidx));
is($limited->safe_psql('postgres', "SET enable_seqscan = off; $touch"), $nidx,
	"under ulimit -v 4GB one backend uses $nidx indexes");
$limited->stop;

# ---- a pool at its maximum size: an ERROR that says what to do, and doing it works
$node->safe_psql('postgres', q{ALTER SYSTEM SET pm_index.max_pool_size = '16MB'; SELECT pg_reload_conf()});
for my $am (@ordered, 'fbrtree_pm', 'hash_pm')
{
	my $col = $column{$am} // 'k';
	$node->safe_psql('postgres', qq{CREATE TABLE capped_$am (k int8, p point);
		CREATE INDEX capped_${am}_idx ON capped_$am USING $am ($col)});
	my $fill = "INSERT INTO capped_$am SELECT g, point(g % 1000, g / 1000) FROM generate_series(1, 2000000) g";
	my ($ret, $stdout, $stderr) = $node->psql('postgres', "\\set VERBOSITY verbose\n$fill");
	isnt($ret, 0, "$am: inserts past pm_index.max_pool_size fail");
	like($stderr, qr/ERROR:  54000: pool file ".*" would exceed its maximum size of \d+ bytes/,
		"$am: program_limit_exceeded, naming the pool and its maximum");
	like($stderr, qr/HINT:  A pool keeps the maximum size it was created with: raise pm_index\.max_pool_size, then REINDEX/,
		"$am: the HINT says what to do");
	is($node->safe_psql('postgres', "SELECT count(*) FROM capped_$am"), '0', "$am: the insert rolled back");
}
$node->safe_psql('postgres', q{ALTER SYSTEM RESET pm_index.max_pool_size; SELECT pg_reload_conf()});
for my $am (@ordered, 'fbrtree_pm', 'hash_pm')
{
	my $col = $column{$am} // 'k';
	$node->safe_psql('postgres', "REINDEX INDEX capped_${am}_idx");
	$node->safe_psql('postgres',
		"INSERT INTO capped_$am SELECT g, point(g % 1000, g / 1000) FROM generate_series(1, 2000000) g");
	my $all = { fbrtree_pm => q{p <@ box '((0,0),(1000,3000))'}, hash_pm => 'k IS NOT NULL' }->{$am} // 'k > 0';
	is($node->safe_psql('postgres', "SET enable_seqscan = off; SELECT count(*) FROM capped_$am WHERE $all"),
		'2000000', "$am: after raising the setting and a REINDEX the same insert fits");
}

$node->stop;
done_testing();
