# A DRAM tier too small for an index's volatile layer: the first query after a restart fails
# with a HINT to raise pm_index.dram_tier_size, and that failure leaves the pool as it was, so
# once the setting is raised the index works again without a REINDEX.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/../lib";
use PmNode;

my $node = pm_node('dram_full');
$node->safe_psql(
	'postgres', q{
	CREATE TABLE t AS SELECT g AS k FROM generate_series(1, 1000000) g;
	CREATE INDEX t_k ON t USING nbtree_pm (k);
	VACUUM ANALYZE t;});
my $query = 'SET enable_seqscan = off; SET enable_bitmapscan = off; SELECT count(*) FROM t WHERE k <= 1000';

# about 7 bytes of DRAM tier per entry: 1M entries do not fit in 2MB
$node->append_conf('postgresql.conf', "pm_index.dram_tier_size = '2MB'");
$node->restart;
for my $try (1 .. 2)
{
	my ($rc, $out, $err) = $node->psql('postgres', $query);
	isnt($rc, 0, "query $try through the index fails while the DRAM tier is too small");
	like($err, qr/pm_index\.dram_tier_size/, "query $try: the error says which setting to raise");
}
is($node->safe_psql('postgres', q{SELECT state FROM pm_index_pools() WHERE index = 't_k'::regclass}),
	'in use', 'the pool is still in use, not corrupt');

$node->append_conf('postgresql.conf', "pm_index.dram_tier_size = '64MB'");
$node->restart;
is($node->safe_psql('postgres', $query), '1000', 'after raising the setting the index answers');
is($node->safe_psql('postgres', q{SELECT count(*) FROM (SELECT nbtree_pm_check('t_k', true)) s}),
	'1', 'and verifies, every heap tuple indexed');
$node->safe_psql('postgres', 'INSERT INTO t SELECT g FROM generate_series(1000001, 1010000) g');
is($node->safe_psql('postgres', 'SET enable_seqscan = off; SELECT count(*) FROM t WHERE k > 1000000'),
	'10000', 'and takes inserts');
$node->stop;
done_testing();
