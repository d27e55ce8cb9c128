# The DRAM tier grows as indexes need it: preloading costs little shared memory, indexes that
# grew while the server ran are all rebuilt after a restart, and only a cap the DBA set
# (pm_index.max_dram_tier_size) can stop an index's first use, with a HINT naming it and the
# pool left as it was, so once the cap is raised the index works again without a REINDEX.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/../lib";
use PmNode;

my $node = pm_node('dram_tier');

# Preloading adds the registry and the epoch slots to shared memory, not the DRAM tier.
my $plain = PostgreSQL::Test::Cluster->new('plain');
$plain->init;
$plain->start;
my $without = $plain->safe_psql('postgres', "SELECT setting::int FROM pg_settings WHERE name = 'shared_memory_size'");
$plain->stop;
my $with = $node->safe_psql('postgres', "SELECT setting::int FROM pg_settings WHERE name = 'shared_memory_size'");
ok($with - $without <= 16, "preloading pm_index adds ${\($with - $without)} MB to shared_memory_size ($without MB without)");

# Indexes that grow while the server runs, larger together than any fixed arena would be sized
# for them at the start; after a restart every one of them is rebuilt and answers.
$node->safe_psql(
	'postgres', q{
	CREATE TABLE t AS SELECT g AS k FROM generate_series(1, 1000000) g;
	CREATE INDEX t_k ON t USING nbtree_pm (k);
	CREATE TABLE u (k int8);
	CREATE INDEX u_k ON u USING nbtree_pm (k);
	CREATE INDEX u_q ON u USING phast_pm (k);
	INSERT INTO u SELECT g FROM generate_series(1, 1000000) g;
	VACUUM ANALYZE t;
	VACUUM ANALYZE u;});
my $query = 'SET enable_seqscan = off; SET enable_bitmapscan = off; SELECT count(*) FROM t WHERE k <= 1000';
my $uquery = 'SET enable_seqscan = off; SET enable_bitmapscan = off; SELECT count(*) FROM u WHERE k <= 1000';
$node->restart;
is($node->safe_psql('postgres', $query), '1000', 'after a restart the first index answers');
is($node->safe_psql('postgres', $uquery), '1000', 'and the second');
is($node->safe_psql('postgres', "SET enable_indexscan = off; SET enable_seqscan = off; $uquery"), '1000',
	'and the third');
cmp_ok(
	$node->safe_psql(
		'postgres', q{SELECT (SELECT dram_bytes FROM pm_index_stats('t_k'))
		+ (SELECT dram_bytes FROM pm_index_stats('u_k')) + (SELECT dram_bytes FROM pm_index_stats('u_q'))}),
	'>', 8 << 20, 'the DRAM tier grew past its first 8 MB to hold them');

# A cap too small for an index's volatile layer: the first query after a restart fails.
$node->append_conf('postgresql.conf', "pm_index.max_dram_tier_size = '2MB'");
$node->restart;
for my $try (1 .. 2)
{
	my ($rc, $out, $err) = $node->psql('postgres', $query);
	isnt($rc, 0, "query $try through the index fails while the cap is too small");
	like($err, qr/pm_index\.max_dram_tier_size/, "query $try: the error says which setting to raise");
}
is($node->safe_psql('postgres', q{SELECT state FROM pm_index_pools() WHERE index = 't_k'::regclass}),
	'in use', 'the pool is still in use, not corrupt');

$node->append_conf('postgresql.conf', "pm_index.max_dram_tier_size = -1");
$node->restart;
is($node->safe_psql('postgres', $query), '1000', 'without the cap the index answers');
is($node->safe_psql('postgres', q{SELECT count(*) FROM (SELECT nbtree_pm_check('t_k', true)) s}),
	'1', 'and verifies, every heap tuple indexed');
$node->safe_psql('postgres', 'INSERT INTO t SELECT g FROM generate_series(1000001, 1010000) g');
is($node->safe_psql('postgres', 'SET enable_seqscan = off; SELECT count(*) FROM t WHERE k > 1000000'),
	'10000', 'and takes inserts');
$node->stop;
done_testing();
