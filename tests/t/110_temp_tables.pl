# Indexes on temporary tables across sessions: two sessions' same-named temporary indexes keep
# pools of their own; a session's pools go when it ends, and those of a session that a crash
# ended go at the next start (PostgreSQL removes temporary relation files then, and the sweep
# removes pools whose relation file is gone).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/../lib";
use PmNode;

my $node = pm_node('temp_tables');
my $temp_pools = q{SELECT count(*) FROM pm_index_pools() WHERE path ~ '/t[0-9]+_[0-9]+_[0-9]+_[0-9]+\.pmpool$'};
my $make = q{CREATE TEMP TABLE s (k int8, p point);
	CREATE INDEX s_k ON s USING nbtree_pm (k);
	CREATE INDEX s_p ON s USING fbrtree_pm (p);};

# Session A keeps its temporary indexes open while the others run.
my ($a_out, $a_err) = ('', '');
my $session_a = psql_start($node, \$a_out, \$a_err,
	"$make INSERT INTO s SELECT g, point(g, g) FROM generate_series(1, 1000) g;",
	'SELECT pg_sleep(600)');
$node->poll_query_until('postgres', "SELECT ($temp_pools) = 2") or die "session A made no pools: $a_err";

# Session B: the same names, its own pools and answers.
is( $node->safe_psql(
		'postgres', qq{$make INSERT INTO s SELECT g, point(-g, -g) FROM generate_series(1, 300) g;
		SET enable_seqscan = off; SET enable_bitmapscan = off;
		SELECT count(*), sum(k) FROM s WHERE k > 100;
		SELECT count(*) FROM s WHERE p <@ box '((-50,-50),(0,0))';
		$temp_pools}),
	"200|40100\n50\n4", 'a second session with the same names has pools of its own');
ok($node->poll_query_until('postgres', "SELECT ($temp_pools) = 2"), "session B's pools went when it ended");

# Storage commands on a temporary table: after each, the indexes answer as a sequential scan.
my $ts = PostgreSQL::Test::Utils::tempdir();
$node->safe_psql('postgres', "CREATE TABLESPACE tst LOCATION '$ts'");
my @commands = (
	'ALTER TABLE s SET TABLESPACE tst',
	'BEGIN; ALTER INDEX s_k SET TABLESPACE pg_default; ROLLBACK',
	'ALTER INDEX s_p SET TABLESPACE pg_default',
	'REINDEX (TABLESPACE pg_default) TABLE s',
	'VACUUM FULL s',
	'CLUSTER s USING s_k',
	'ALTER TABLE s ALTER COLUMN k TYPE int4',
	'TRUNCATE s');
my $by_index = q{SET enable_seqscan = off; SET enable_bitmapscan = off;
	SELECT count(*) FROM s WHERE k > 100; SELECT count(*) FROM s WHERE p <@ box '((0,0),(500,500))';
	RESET enable_seqscan; RESET enable_bitmapscan;};
my $by_heap = q{SET enable_indexscan = off; SET enable_indexonlyscan = off; SET enable_bitmapscan = off;
	SELECT count(*) FROM s WHERE k > 100; SELECT count(*) FROM s WHERE p <@ box '((0,0),(500,500))';
	RESET enable_indexscan; RESET enable_indexonlyscan; RESET enable_bitmapscan;};
my $script = $make;
for my $i (0 .. $#commands)
{
	$script .= "INSERT INTO s SELECT g, point(g, g) FROM generate_series($i * 1000, $i * 1000 + 999) g;
		$commands[$i]; $by_index $by_heap
		SELECT nbtree_pm_check('s_k', true), fbrtree_pm_check('s_p', true);";
}
my @out = split /\n/, $node->safe_psql('postgres', $script);
for my $i (0 .. $#commands)
{
	my @r = @out[ 5 * $i .. 5 * $i + 4 ];
	is("$r[0] $r[1]", "$r[2] $r[3]", "$commands[$i] on a temporary table: the indexes answer as the heap");
	is($r[4], '|', "$commands[$i] on a temporary table: the indexes verify");
}
ok($node->poll_query_until('postgres', "SELECT ($temp_pools) = 2"), "that session's pools went when it ended");

# A crash ends session A without its exit callbacks: the next start removes its pools.
$node->stop('immediate');
$session_a->kill_kill;
my $log_offset = -s $node->logfile;
$node->start;
ok($node->poll_query_until('postgres', "SELECT ($temp_pools) = 0"), 'after the crash the sweep removed them');
like(substr(slurp_file($node->logfile), $log_offset), qr/removed orphaned pool file ".*\/t\d+_\d+_\d+_\d+\.pmpool"/,
	'and logged it');
$node->stop;
done_testing();
