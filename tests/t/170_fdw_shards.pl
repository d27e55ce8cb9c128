# Sharding with postgres_fdw: a partitioned table on a coordinator whose partitions are foreign
# tables on two shard servers, each shard with nbtree_pm, phast_pm and fbrtree_pm indexes.  The
# coordinator needs no pm_index: it ships each query's conditions, ORDER BY and PostGIS functions
# (the server option extensions 'postgis') to the shards, whose planners choose their pm_index
# indexes.  Point, range, ORDER BY ... LIMIT, window, ST_DWithin and KNN queries are pushed down
# (the remote SQL in EXPLAIN VERBOSE), each shard plans them on its index and counts the scans,
# and every answer equals the one of a local table of the same rows on one server.  Inserts are
# routed to their shards; a shard killed under load comes back with its indexes reconciled and
# the coordinator's errors stop; a shard's streaming standby, promoted, takes its place.
use strict;
use warnings;
use FindBin;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use lib "$FindBin::Bin/../lib";
use PmNode;

plan skip_all => 'PostGIS is not installed for this PostgreSQL' unless extension_installed('postgis');

# Two shard servers with pm_index preloaded; the first streams to a standby made before any
# index exists, so that every pool the standby has comes from WAL.
my @shards;
for my $n (1 .. 2)
{
	my $shard = PostgreSQL::Test::Cluster->new("shard$n");
	$shard->init(allows_streaming => $n == 1);
	$shard->append_conf('postgresql.conf', "shared_preload_libraries = 'pm_index'\nautovacuum = off");
	$shard->start;
	$shard->safe_psql('postgres', 'CREATE EXTENSION pm_index');
	push @shards, $shard;
}
$shards[0]->safe_psql('postgres', "SELECT pg_create_physical_replication_slot('standby', true)");
$shards[0]->backup('base');
my $standby = PostgreSQL::Test::Cluster->new('shard1_standby');
$standby->init_from_backup($shards[0], 'base', has_streaming => 1);
$standby->append_conf('postgresql.conf', "primary_slot_name = 'standby'");
$standby->start;

# The coordinator: no pm_index, PostGIS for the column type and the functions it ships.
my $coordinator = PostgreSQL::Test::Cluster->new('coordinator');
$coordinator->init;
$coordinator->start;

# The rows: ids 1..16000 with k unique ((id * 7919) mod the prime 16001) and points in degrees
# (SRID 4326), each a little off a grid so that no two lie at one distance from a query point.
my $columns = 'id int8 NOT NULL, k int4, g geometry(Point, 4326)';
sub rows
{
	my ($from, $to) = @_;
	return qq{SELECT i, (i * 7919) % 16001,
		ST_SetSRID(ST_MakePoint(-10 + (i * 37) % 2003 / 100.0 + i * 1e-7, 35 + (i * 91) % 1511 / 100.0), 4326)
		FROM generate_series(${from}::int8, $to) i};
}

for my $shard (@shards)
{
	$shard->safe_psql('postgres', qq{
		CREATE EXTENSION postgis; CREATE EXTENSION pm_index_postgis;
		CREATE TABLE t ($columns);
	});
}

$coordinator->safe_psql('postgres', qq{
	CREATE EXTENSION postgis; CREATE EXTENSION postgres_fdw;
	CREATE TABLE pts ($columns) PARTITION BY HASH (id);
	CREATE TABLE single ($columns);
});
for my $n (1 .. 2)
{
	my $shard = $shards[ $n - 1 ];
	my ($host, $port) = ($shard->host, $shard->port);
	$coordinator->safe_psql('postgres', qq{
		CREATE SERVER shard$n FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host '$host', port '$port',
		  dbname 'postgres', extensions 'postgis', async_capable 'true', use_remote_estimate 'true',
		  batch_size '500');
		CREATE USER MAPPING FOR CURRENT_USER SERVER shard$n;
		CREATE FOREIGN TABLE pts_$n PARTITION OF pts FOR VALUES WITH (MODULUS 2, REMAINDER @{[ $n - 1 ]})
		  SERVER shard$n OPTIONS (table_name 't');
	});
}

# Rows go in through the coordinator: the first 10,000 before the shards' indexes exist (their
# builds), the rest after (inserts).
$coordinator->safe_psql('postgres', 'INSERT INTO pts ' . rows(1, 10000) . '; INSERT INTO single ' . rows(1, 10000));
for my $shard (@shards)
{
	$shard->safe_psql('postgres', q{
		CREATE UNIQUE INDEX t_id ON t USING nbtree_pm (id);
		CREATE INDEX t_k ON t USING phast_pm (k);
		CREATE INDEX t_g ON t USING fbrtree_pm (g);
	});
}
$coordinator->safe_psql('postgres', 'INSERT INTO pts ' . rows(10001, 16000) . '; INSERT INTO single ' . rows(10001, 16000));
$_->safe_psql('postgres', 'ANALYZE t') for @shards;
$coordinator->safe_psql('postgres', 'ANALYZE pts; ANALYZE single');

# satisfies_hash_partition() on the coordinator, over the ids each shard holds
my $misplaced = $coordinator->safe_psql('postgres', q{
	WITH s1 AS MATERIALIZED (SELECT id FROM pts_1), s2 AS MATERIALIZED (SELECT id FROM pts_2)
	SELECT (SELECT count(*) FROM s1 WHERE NOT satisfies_hash_partition('pts'::regclass, 2, 0, id))
	     + (SELECT count(*) FROM s2 WHERE NOT satisfies_hash_partition('pts'::regclass, 2, 1, id))});
my @held = map { $_->safe_psql('postgres', 'SELECT count(DISTINCT id) FROM t') } @shards;
is("$misplaced $held[0] $held[1]", '0 ' . join(' ', $held[0], 16000 - $held[0]),
	'inserts through the coordinator land on the shard their hash names, every row once');
ok($held[0] > 7000 && $held[1] > 7000, "both shards hold rows ($held[0] and $held[1])");

# Each query (%s: the table), the index it is to run on at the shards, and the SQL text the
# remote query must carry for the condition or ordering to run there.
my $near = 'ST_SetSRID(ST_MakePoint(0.33, 41.7), 4326)';
my %queries = (
	point => [ 'SELECT id, k, ST_AsText(g) FROM %s WHERE id = 4711', 't_id', qr/WHERE \(\(id = 4711\)\)/ ],
	range => [ 'SELECT count(*), sum(id), min(k), max(k) FROM %s WHERE k BETWEEN 1000 AND 1900', 't_k',
		qr/WHERE \(\(k >= 1000\)\) AND \(\(k <= 1900\)\)/ ],
	order_limit => [ 'SELECT k FROM %s WHERE k >= 3000 ORDER BY k LIMIT 10', 't_k', qr/ORDER BY k ASC/ ],
	window => [
		'SELECT count(*), sum(id) FROM %s WHERE g && ST_MakeEnvelope(-5, 40, -3, 42, 4326)', 't_g',
		qr/WHERE \(\(g OPERATOR\(public\.&&\)/
	],
	dwithin => [
		"SELECT count(*), sum(id) FROM %s WHERE ST_DWithin(g, ST_SetSRID(ST_MakePoint(2, 45), 4326), 0.8)",
		't_g', qr/WHERE \(public\.st_dwithin\(g, /
	],
	knn => [ "SELECT id FROM %s ORDER BY g <-> $near LIMIT 7", 't_g', qr/ORDER BY \(g OPERATOR\(public\.<->\)/ ]);

# The queries whose answer through the shards differs from the single table's, as "name: a vs b".
sub answers_differ_from_single
{
	my ($single) = @_;
	my @differ;
	for my $name (sort keys %queries)
	{
		my ($a, $b) = map { $coordinator->safe_psql('postgres', sprintf($queries{$name}[0], $_)) } 'pts', $single;
		push @differ, "$name: $a vs $b" if $a ne $b;
	}
	return join('; ', @differ);
}

# The remote queries of a query's plan on the coordinator: [shard number, remote SQL] each.
sub remote_queries
{
	my ($plan) = @_;
	my (@remote, $shard);
	for my $line (split /\n/, $plan)
	{
		$shard = $1 if $line =~ /Foreign Scan on public\.pts_(\d)/;
		push @remote, [ $shard, $1 ] if $line =~ /Remote SQL: (.*)$/;
	}
	return @remote;
}

# Each query's plan pushes its condition or ordering to every shard it reaches, filters nothing
# on the coordinator, and each shard plans that remote SQL on its pm_index index.
sub check_pushdown
{
	my ($when) = @_;
	for my $name (sort keys %queries)
	{
		my ($sql, $index, $shipped) = @{ $queries{$name} };
		my $plan = $coordinator->safe_psql('postgres', 'EXPLAIN (VERBOSE, COSTS OFF) ' . sprintf($sql, 'pts'));
		my @remote = remote_queries($plan);
		my $all = (@remote == ($name eq 'point' ? 1 : 2)) && !grep { $_->[1] !~ $shipped } @remote;
		ok($all && $plan !~ /Filter:/, "$when: $name is pushed down to the shards it needs")
		  or diag($plan);
		my @not_on_index;
		for my $remote (@remote)
		{
			my ($n, $remote_sql) = @$remote;
			my $shard_plan = $shards[ $n - 1 ]->safe_psql('postgres', "EXPLAIN (COSTS OFF) $remote_sql");
			push @not_on_index, "shard$n: $shard_plan"
			  unless $shard_plan =~ /(Index|Index Only) Scan using $index on t|Bitmap Index Scan on $index/;
		}
		is(join("\n", @not_on_index), '', "$when: the shards plan $name on $index");
	}
}

check_pushdown('built and inserted');
like(
	$coordinator->safe_psql('postgres', 'EXPLAIN (COSTS OFF) ' . sprintf($queries{range}[0], 'pts')),
	qr/Async Foreign Scan on pts_1.*Async Foreign Scan on pts_2/s,
	'a query reaching both shards reads them asynchronously');

# The scans really run on the shards' indexes: each one's idx_scan grows by the queries.
my $scans = q{SELECT string_agg(indexrelname || '=' || idx_scan, ' ' ORDER BY indexrelname)
	FROM pg_stat_user_indexes WHERE relname = 't'};
my @before = map { $_->safe_psql('postgres', $scans) } @shards;
is(answers_differ_from_single('single'), '', 'every answer through the shards equals the single table\'s');
my $point_shard = $coordinator->safe_psql('postgres', q{SELECT tableoid::regclass FROM pts WHERE id = 4711});
for my $n (1 .. 2)
{
	my $shard = $shards[ $n - 1 ];
	my %was = map { split /=/ } split / /, $before[ $n - 1 ];
	# the point query reaches the one shard that holds its row
	my @used = grep { $_ ne 't_id' || $point_shard eq "pts_$n" } sort keys %was;
	my $grown = join(' AND ',
		map { "(SELECT idx_scan > $was{$_} FROM pg_stat_user_indexes WHERE indexrelname = '$_')" } @used);
	ok($shard->poll_query_until('postgres', "SELECT $grown"),
		"shard$n counted scans of @used") or diag($shard->safe_psql('postgres', $scans));
}

# Load through the coordinator (inserts routed to both shards, range queries over both) while
# shard1 is killed and restarted.  The clients hit by the kill stop; once shard1 is up the next
# transactions reconnect.
$coordinator->safe_psql('postgres', 'CREATE SEQUENCE load_ids START 100000');
my $dir = PostgreSQL::Test::Utils::tempdir;
PostgreSQL::Test::Utils::append_to_file("$dir/load.sql", q{
\set a random(1, 16000)
INSERT INTO pts (id, k, g) SELECT n, 20000 + n % 5000,
  ST_SetSRID(ST_MakePoint(-10 + n % 2003 / 100.0 + n * 1e-8, 35 + n % 1511 / 100.0), 4326)
  FROM (SELECT nextval('load_ids') n) s;
SELECT count(*) FROM pts WHERE k BETWEEN :a AND :a + 40;
});
sub load
{
	my ($seconds, $out) = @_;
	return IPC::Run::start(
		[
			'pgbench', '-n', '-c', '2', '-j', '2', '-T', $seconds, '-f', "$dir/load.sql",
			'-h', $coordinator->host, '-p', $coordinator->port, 'postgres'
		],
		'>', $out, '2>', $out);
}
my $out = '';
my $run = load(8, \$out);
sleep(3);
$shards[0]->stop('immediate');
sleep(1);
start_after_kill($shards[0]);
$run->finish;
like($out, qr/aborted in command .*ERROR:  .*(server|connection)/,
	'the coordinator\'s clients saw shard1 go');

$out = '';
$run = load(4, \$out);
$run->finish;
like($out, $PGBENCH_NO_FAILURE,
	'once shard1 is back the coordinator\'s transactions run without errors')
  or diag($out);
unlike($out, qr/aborted|ERROR/, 'no client stopped');

my $verify = q{SELECT nbtree_pm_check('t_id', true), phast_pm_check('t_k', true), fbrtree_pm_check('t_g', true)};
for my $n (1 .. 2)
{
	my $shard = $shards[ $n - 1 ];
	is( $shard->safe_psql('postgres', $verify),
		'||', "shard$n: the verifiers pass, every row indexed, after the load" . ($n == 1 ? ' and the kill' : ''));
	is( index_heap_differ(
			$shard, 'count(*), sum(id), sum(k)',
			t_id => 'id BETWEEN 100 AND 900000',
			t_k => 'k BETWEEN 1000 AND 22000',
			t_g => 'g && ST_MakeEnvelope(-8, 36, 4, 44, 4326)'),
		'', "shard$n: each index answers as the heap does");
}

# The rows as they are now, copied to one local table: the shards' answers equal its answers.
$coordinator->safe_psql('postgres', 'CREATE TABLE single_after_load AS SELECT * FROM pts; ANALYZE single_after_load');
$_->safe_psql('postgres', 'ANALYZE t') for @shards;
is(answers_differ_from_single('single_after_load'), '', 'after the load and the kill, the shards answer as one table does');

# shard1's standby takes its place: shard1 stops, the standby is promoted and the coordinator's
# server shard1 is pointed at it.  Its pools came from WAL: its indexes answer at once.
catch_up($shards[0], $standby);
$shards[0]->stop('immediate');
$standby->promote;
my ($host, $port) = ($standby->host, $standby->port);
$coordinator->safe_psql('postgres', "ALTER SERVER shard1 OPTIONS (SET host '$host', SET port '$port')");
$shards[0] = $standby;
check_pushdown('shard1 promoted');
is(answers_differ_from_single('single_after_load'), '', 'the promoted shard answers as before');
$coordinator->safe_psql('postgres', 'INSERT INTO pts ' . rows(2000001, 2002000) . '; INSERT INTO single_after_load ' . rows(2000001, 2002000));
is(answers_differ_from_single('single_after_load'), '', 'inserts go on to the promoted shard');
is($standby->safe_psql('postgres', $verify), '||', 'the promoted shard\'s verifiers pass');

done_testing();
