# After a restart, background workers build every index's DRAM layer before anyone asks
# (pm_index.startup_load_workers), in every database; with 0 workers an index loads on first
# use. Either way the answers equal a sequential scan's.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/../lib";
use PmNode;

my $node = pm_node('startup_load', 'autovacuum = off');
$node->safe_psql('postgres', 'CREATE DATABASE second');
$node->safe_psql('second', 'CREATE EXTENSION pm_index');
for my $db ('postgres', 'second')
{
	$node->safe_psql(
		$db, q{
		CREATE TABLE t (k int8, p point);
		INSERT INTO t SELECT g, point(g % 1000, g / 1000) FROM generate_series(1, 200000) g;
		CREATE INDEX t_n ON t USING nbtree_pm (k);
		CREATE INDEX t_q ON t USING phast_pm (k);
		CREATE INDEX t_f ON t USING fbrtree_pm (p);
		CREATE INDEX t_h ON t USING hash_pm ((k % 1000));
		VACUUM ANALYZE t;});
}
my $states = q{SELECT string_agg(dram_state, ',' ORDER BY dram_state) FROM pm_index_indexes};
my $sweeper_done = q{SELECT count(*) = 0 FROM pg_stat_activity
	WHERE backend_type IN ('pm_index pool sweeper', 'pm_index load')};
my $queries = 'SELECT (SELECT count(*) FROM t WHERE k BETWEEN 1000 AND 1999), '
  . "(SELECT count(*) FROM t WHERE p <@ box '((0,0),(99,99))'), "
  . '(SELECT count(*) FROM t WHERE (k % 1000) = ANY (ARRAY[1, 7, 500]))';

my $offset = -s $node->logfile;
$node->restart;
ok($node->poll_query_until('postgres', "SELECT ($states) = '" . join(',', ('ready') x 8) . "'"),
	'after a restart every index of both databases is ready without a query touching it');
my $log = slurp_file($node->logfile, $offset);
like($log, qr/pm_index: worker \d of 2 loaded \d+ indexes of database/, 'the load workers say what they did');
for my $db ('postgres', 'second')
{
	is($node->safe_psql($db, "SET enable_seqscan = off; $queries"),
		$node->safe_psql($db, "$BY_HEAP $queries"), "$db: the loaded indexes answer as the heap does");
}

$node->append_conf('postgresql.conf', 'pm_index.startup_load_workers = 0');
$node->restart;
ok($node->poll_query_until('postgres', $sweeper_done), 'the sweeper has finished');
is($node->safe_psql('postgres', $states), join(',', ('not loaded') x 8),
	'with no load workers the indexes wait for their first use');
is($node->safe_psql('postgres', "SET enable_seqscan = off; $queries"),
	$node->safe_psql('postgres', "$BY_HEAP $queries"), 'which loads them and answers');
unlike(slurp_file($node->logfile), qr/terminated by signal|PANIC/, 'no process crashed');
$node->stop;
done_testing();
