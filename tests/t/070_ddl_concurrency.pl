# DDL while other sessions use the indexes: 2 sessions insert, delete and scan through an
# nbtree_pm, an fbrtree_pm, a phast_pm, an nvbtree_pm and a hash_pm index (each statement its own transaction, errors
# tolerated, as an application retrying would) while a third runs REINDEX, REINDEX CONCURRENTLY,
# ALTER TABLE (a rewrite), TRUNCATE, DROP INDEX and CREATE INDEX [CONCURRENTLY].  Afterwards the
# indexes verify, answer as the heap does, and only live indexes have pools.  The nbtree_pm,
# phast_pm, nvbtree_pm and fbrtree_pm indexes are made again WITH (tiered = on) in the first round, so the
# second round's DDL meets indexes whose inserts go through their operation logs.  Then
# cancellations:
# statement_timeout in a long index scan (nbtree_pm's, and hash_pm's walk), pg_cancel_backend in a
# long CREATE INDEX.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use FindBin;
use lib "$FindBin::Bin/../lib";
use PmNode;

test_seed();
my $node = pm_node('ddl');
$node->safe_psql(
	'postgres', setseed() . q{
	CREATE TABLE d (id bigserial, k int4, p point, q int4, h int4);
	INSERT INTO d (k, p, q, h) SELECT r, point(random() * 1000, random() * 1000), r, r
	  FROM (SELECT (random() * 1e6)::int AS r FROM generate_series(1, 20000)) s;
	CREATE INDEX d_k ON d USING nbtree_pm (k);
	CREATE INDEX d_p ON d USING fbrtree_pm (p);
	CREATE INDEX d_q ON d USING phast_pm (q);
	CREATE INDEX d_v ON d USING nvbtree_pm ((-q));
	CREATE INDEX d_h ON d USING hash_pm (h);
	CREATE TABLE errors (msg text);
	-- One transaction per round; every error but a deadlock (which DDL may legitimately
	-- cause) is recorded.
	CREATE PROCEDURE work(rounds int) LANGUAGE plpgsql AS $$
	DECLARE
	  base int;
	BEGIN
	  FOR i IN 1 .. rounds LOOP
	    base := (random() * 1e6)::int;
	    BEGIN
	      INSERT INTO d (k, p, q, h) SELECT base + g, point(random() * 1000, random() * 1000), base + g, base + g FROM generate_series(1, 10) g;
	      DELETE FROM d WHERE id IN (SELECT id FROM d WHERE k >= base ORDER BY k LIMIT 3);
	      PERFORM count(*) FROM d WHERE k BETWEEN base AND base + 5000;
	      PERFORM count(*) FROM d WHERE q BETWEEN base AND base + 5000;
	      PERFORM count(*) FROM d WHERE -q BETWEEN -base - 5000 AND -base;
	      PERFORM count(*) FROM d WHERE h = ANY (ARRAY[base + 1, base + 5, base + 10, base - 1]);
	      PERFORM count(*) FROM d WHERE p <@ box(point(base % 900, base % 900), point(base % 900 + 50, base % 900 + 50));
	    EXCEPTION WHEN deadlock_detected THEN NULL;
	      WHEN OTHERS THEN INSERT INTO errors VALUES (SQLSTATE || ': ' || SQLERRM);
	    END;
	    COMMIT;
	  END LOOP;
	END $$;});

my @workers;
for (1 .. 2)
{
	my ($out, $err) = ('', '');
	push @workers,
	  [ psql_start($node, \$out, \$err, 'SET enable_seqscan = off', 'CALL work(100000)'), \$err ];
}

my @ddl = (
	'REINDEX INDEX d_k',
	'REINDEX INDEX CONCURRENTLY d_p',
	'REINDEX INDEX CONCURRENTLY d_h',
	'ALTER TABLE d ALTER COLUMN k TYPE int8',
	'REINDEX TABLE CONCURRENTLY d',
	'DROP INDEX d_k',
	'CREATE INDEX CONCURRENTLY d_k ON d USING nbtree_pm (k) WITH (tiered = on)',
	'REINDEX INDEX CONCURRENTLY d_q',
	'REINDEX INDEX CONCURRENTLY d_v',
	'ALTER TABLE d ALTER COLUMN q TYPE int8',
	'ALTER TABLE d ALTER COLUMN h TYPE int8',
	'TRUNCATE d',
	'DROP INDEX d_q',
	'CREATE INDEX CONCURRENTLY d_q ON d USING phast_pm (q) WITH (tiered = on)',
	'DROP INDEX d_v',
	'CREATE INDEX CONCURRENTLY d_v ON d USING nvbtree_pm ((-q)) WITH (tiered = on)',
	'DROP INDEX d_p',
	'CREATE INDEX d_p ON d USING fbrtree_pm (p) WITH (tiered = on)',
	'DROP INDEX d_h',
	'CREATE INDEX CONCURRENTLY d_h ON d USING hash_pm (h)',
	'REINDEX INDEX d_h',
	'ALTER TABLE d ALTER COLUMN k TYPE int4',
	'REINDEX INDEX CONCURRENTLY d_k');
for my $round (1 .. 2)
{
	for my $stmt (@ddl)
	{
		usleep(300_000);
		my ($rc, $stdout, $stderr) = $node->psql('postgres', $stmt);
		is($rc, 0, "round $round: $stmt while 2 sessions insert, delete and scan")
		  or diag($stderr);
	}
}
usleep(500_000);
$node->safe_psql('postgres',
	"SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE query LIKE 'CALL work%'");
for my $w (@workers)
{
	$w->[0]->finish;
	like(${ $w->[1] }, qr/canceling statement due to user request/, 'a worker ran until cancelled');
}
is($node->safe_psql('postgres', 'SELECT string_agg(DISTINCT msg, E\'\n\') FROM errors'),
	'', 'the workers met no unexpected error');
ok($node->safe_psql('postgres', 'SELECT count(*) FROM d') > 0, 'the workers inserted rows after the last TRUNCATE');
is($node->safe_psql('postgres', "SELECT nbtree_pm_check('d_k', true); SELECT fbrtree_pm_check('d_p', true); SELECT phast_pm_check('d_q', true); SELECT nvbtree_pm_check('d_v', true); SELECT hash_pm_check('d_h', true)"),
	"\n\n\n\n", 'the indexes verify against the heap');
my $probe = q{SELECT count(*), sum(id) FROM d WHERE k >= 0; SELECT count(*), sum(id) FROM d WHERE p <@ box '((0,0),(1000,1000))'; SELECT count(*), sum(id) FROM d WHERE q >= 0; SELECT count(*), sum(id) FROM d WHERE -q <= 0; SELECT count(*), sum(id) FROM d WHERE h IS NOT NULL;};
is( $node->safe_psql('postgres', $BY_INDEX . $probe),
	$node->safe_psql('postgres', $BY_HEAP . $probe),
	'and answer as the heap does');
is( $node->safe_psql(
		'postgres',
		"SELECT count(*) FROM pm_index_pools() WHERE database = (SELECT oid FROM pg_database WHERE datname = 'postgres')"),
	'5', 'only the five live indexes have pools');

# Cancellations: a long index scan stopped by statement_timeout, a long CREATE INDEX by
# pg_cancel_backend (an expression that sleeps now and then keeps it busy).
$node->safe_psql(
	'postgres', q{
	INSERT INTO d (k, p, q, h) SELECT g, point(g % 1000, g % 997), g, g FROM generate_series(1, 300000) g;
	CREATE FUNCTION slow_id(int8) RETURNS int8 IMMUTABLE LANGUAGE plpgsql AS
	  $$ BEGIN IF $1 % 100 = 0 THEN PERFORM pg_sleep(0.001); END IF; RETURN $1; END $$;});
my ($rc, $stdout, $stderr) = $node->psql('postgres',
	"SET statement_timeout = '300ms'; $BY_INDEX
	 SELECT count(*) FROM d WHERE k >= 0 AND slow_id(k) >= 0");
like($stderr, qr/canceling statement due to statement timeout/, 'statement_timeout stops a long index scan');
($rc, $stdout, $stderr) = $node->psql('postgres',
	"SET statement_timeout = '300ms'; $BY_INDEX
	 SELECT count(*) FROM d WHERE h IS NOT NULL AND slow_id(h) >= 0");
like($stderr, qr/canceling statement due to statement timeout/, 'and a long walk of the hash_pm index');

my ($out, $err) = ('', '');
my $build = psql_start($node, \$out, \$err, 'CREATE INDEX d_slow ON d USING nbtree_pm (slow_id(k))');
ok( $node->poll_query_until(
		'postgres', 'SELECT count(*) > 0 FROM pg_stat_progress_create_index WHERE blocks_done > 10'),
	'a long CREATE INDEX is running');
is($node->safe_psql('postgres', 'SELECT phase FROM pg_stat_progress_create_index'),
	'building index: scanning table', 'its progress shows the access method\'s phase');
$node->safe_psql('postgres',
	"SELECT pg_cancel_backend(pid) FROM pg_stat_progress_create_index");
$build->finish;
like($err, qr/canceling statement due to user request/, 'pg_cancel_backend stops it');
is($node->safe_psql('postgres', "SELECT count(*) FROM pg_class WHERE relname = 'd_slow'"),
	'0', 'the cancelled CREATE INDEX left no index');
is( $node->safe_psql(
		'postgres',
		"SELECT count(*) FROM pm_index_pools() WHERE database = (SELECT oid FROM pg_database WHERE datname = 'postgres')"),
	'5', 'and no pool');
is($node->safe_psql('postgres', "SELECT nbtree_pm_check('d_k', true); SELECT fbrtree_pm_check('d_p', true); SELECT phast_pm_check('d_q', true); SELECT nvbtree_pm_check('d_v', true); SELECT hash_pm_check('d_h', true)"),
	"\n\n\n\n", 'the other indexes still verify');
unlike(slurp_file($node->logfile), qr/terminated by signal|PANIC/, 'no backend crashed');

$node->stop;
done_testing();
