# pg_upgrade of a cluster with pm_index indexes, from the PostgreSQL whose binaries
# PM_UPGRADE_FROM names (tests/run: a build of 15 with pm_index installed) to the one this test
# runs on.  pg_upgrade copies relation files, not pools: the new cluster's pools are the empty
# ones its schema restore built, which the indexes' metapages (copied from the old cluster) do
# not name, so every query through them fails with a HINT to REINDEX.  Copying the old
# cluster's pool files into the new pool directory before the first start (docs/operations.md)
# gives the upgraded indexes their own pools: the pools' format is the same on every major.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use File::Basename;
use File::Copy;
use FindBin;
use lib "$FindBin::Bin/../lib";
use PmNode;

my $from = $ENV{PM_UPGRADE_FROM} // '';
plan skip_all => 'PM_UPGRADE_FROM names no PostgreSQL to upgrade from' unless -x "$from/pg_upgrade";
my ($old_major) = `$from/pg_config --version` =~ /PostgreSQL (\d+)/;
my ($new_major) = `pg_config --version` =~ /PostgreSQL (\d+)/;
my $to = `pg_config --bindir`;
chomp $to;
plan skip_all => "upgrading from PostgreSQL $old_major to $new_major is not an upgrade"
  unless $old_major < $new_major;

my $conf = "shared_preload_libraries = 'pm_index'";
# --locale=C on both sides; on the old side it also keeps the nodes' initdb template (made by
# the new major) away.  18's initdb turns data checksums on, which pg_upgrade wants equal.
my $old = PostgreSQL::Test::Cluster->new('old', install_path => dirname($from));
$old->init(extra => [ '--locale=C', '--encoding=UTF8' ]);
$old->append_conf('postgresql.conf', $conf);
$old->start;
$old->safe_psql(
	'postgres', q{
	CREATE EXTENSION pm_index;
	CREATE TABLE t (id int4, s text COLLATE "C", b box, h int8);
	INSERT INTO t SELECT g, 'name ' || g, box(point(g % 100, g / 100), point(g % 100 + 1, g / 100 + 1)), g * 7
	  FROM generate_series(1, 5000) g;
	CREATE UNIQUE INDEX t_id ON t USING nbtree_pm (id);
	CREATE INDEX t_s ON t USING hash_pm (s);
	CREATE INDEX t_b ON t USING fbrtree_pm (b);
	CREATE INDEX t_h ON t USING phast_pm (h);
	CREATE INDEX t_tiered ON t USING nbtree_pm ((id % 100)) WITH (tiered = on);
	DELETE FROM t WHERE id % 10 = 0;
	VACUUM ANALYZE t;
});
my %query = (
	t_id => 'id BETWEEN 100 AND 900',
	t_s => q{s IN ('name 7', 'name 70', 'name 4999', 'none')},
	t_b => q{b && box '((10,10),(40,30))'},
	t_h => 'h BETWEEN 700 AND 7007',
	t_tiered => '(id % 100) = 17');
my $verify = q{SELECT nbtree_pm_check('t_id', true), hash_pm_check('t_s', true),
	fbrtree_pm_check('t_b', true), phast_pm_check('t_h', true), nbtree_pm_check('t_tiered', true)};

# The queries whose answer through their index differs from the heap's.
sub answers
{
	my ($node) = @_;
	return index_heap_differ($node, 'count(*), sum(id)', %query);
}
is(answers($old), '', "PostgreSQL $old_major: every index answers as the heap");
$old->stop;

my $new = PostgreSQL::Test::Cluster->new('new');
$new->init(extra => [ '--locale=C', '--encoding=UTF8', $new_major >= 18 ? ('--no-data-checksums') : () ]);
$new->append_conf('postgresql.conf', $conf);
my $sock = $new->host;
command_ok(
	[
		'pg_upgrade', '--no-sync', '-b', $from, '-B', $to,
		'-d', $old->data_dir, '-D', $new->data_dir, '-p', $old->port, '-P', $new->port,
		'-s', $sock
	],
	"pg_upgrade from PostgreSQL $old_major to $new_major");

# Without the old pools: the indexes are planned, and a scan through one refuses clearly.
$new->start;
my ($ret, $stdout, $stderr) = $new->psql('postgres', "${BY_INDEX}SELECT count(*) FROM t WHERE id = 5");
isnt($ret, 0, 'without the old pools a scan through an upgraded index fails');
like($stderr, qr/does not belong to index "t_id".*HINT:  REINDEX the index/s, 'and says to REINDEX it');
$new->stop;

# With the old cluster's pool files copied in: every index answers, verifies and takes writes.
my $old_pools = $old->data_dir . '/pm_index';
my $new_pools = $new->data_dir . '/pm_index';
my @pools = glob("$old_pools/*.pmpool");
is(scalar @pools, 5, 'the old cluster has a pool per index');
copy($_, $new_pools) or die "copy $_: $!" for @pools;
$new->start;
is(answers($new), '', "PostgreSQL $new_major: every upgraded index answers as the heap");
is($new->safe_psql('postgres', $verify), '||||', 'every upgraded index verifies against its table');
$new->safe_psql(
	'postgres', q{
	INSERT INTO t SELECT g, 'name ' || g, box(point(g % 100, g / 100), point(g % 100 + 1, g / 100 + 1)), g * 7
	  FROM generate_series(5001, 6000) g;
	UPDATE t SET s = s || 'x' WHERE id % 7 = 0;
	DELETE FROM t WHERE id % 11 = 0;
	VACUUM t;
});
is(answers($new), '', 'after writes and VACUUM on the new major every index answers as the heap');
is($new->safe_psql('postgres', $verify), '||||', 'and verifies');
$new->safe_psql('postgres', 'REINDEX INDEX t_b');
is(answers($new), '', 'REINDEX on the new major too');
$new->stop;

done_testing();
