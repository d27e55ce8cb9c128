# Pools copied by a base backup: a standby made from it never plans those nbtree_pm and fbrtree_pm
# indexes (their pools changed while they were copied); after promotion (and after restoring a base
# backup) each asks for REINDEX instead of answering from a pool nothing proves current; REINDEX makes
# it work again.  pg_dump and pg_restore recreate working indexes.  (Indexes created while a standby
# streams: 140_streaming_standby.pl.)
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1);
$primary->append_conf('postgresql.conf', "shared_preload_libraries = 'pm_index'");
$primary->start;
$primary->safe_psql(
	'postgres', q{
	CREATE EXTENSION pm_index;
	CREATE TABLE t (k int4, v text);
	INSERT INTO t SELECT g, 'v' || g FROM generate_series(1, 10000) g;
	CREATE INDEX t_k ON t USING nbtree_pm (k);
	CREATE TABLE b (id int, bx box);
	INSERT INTO b SELECT g, box(point(g, g), point(g + 1, g + 1)) FROM generate_series(1, 1000) g;
	CREATE INDEX b_bx ON b USING fbrtree_pm (bx);
	ANALYZE t, b;
});
like($primary->safe_psql('postgres', 'EXPLAIN SELECT * FROM t WHERE k = 5'),
	qr/Index Scan using t_k/, 'the primary uses the index');

$primary->backup('base');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'base', has_streaming => 1);
$standby->start;
$primary->safe_psql('postgres', 'DELETE FROM t WHERE k <= 5000; INSERT INTO t SELECT g, $$new$$ FROM generate_series(20001, 25000) g;');
$primary->wait_for_catchup($standby);

my $plan = $standby->safe_psql('postgres', 'SET enable_seqscan = off; EXPLAIN SELECT * FROM t WHERE k = 5');
unlike($plan, qr/t_k/, 'the standby never plans the nbtree_pm index copied by the backup');
unlike(
	$standby->safe_psql('postgres',
		q{SET enable_seqscan = off; EXPLAIN SELECT * FROM b WHERE bx && box '((0,0),(10,10))'}),
	qr/b_bx/, 'nor the fbrtree_pm index');
is($standby->safe_psql('postgres', 'SET enable_seqscan = off; SELECT count(*) FROM t WHERE k BETWEEN 1 AND 6000'),
	'1000', 'the standby answers from the heap');

$standby->promote;
$standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()');
my ($rc, $out, $err) = $standby->psql('postgres', 'SET enable_seqscan = off; SELECT count(*) FROM t WHERE k BETWEEN 1 AND 6000');
isnt($rc, 0, 'after promotion the index does not answer');
like($err, qr/index "t_k" cannot be used until it is rebuilt.*HINT:  REINDEX the index/s, 'it asks for REINDEX');
($rc, $out, $err) = $standby->psql('postgres', "INSERT INTO t VALUES (1, 'x')");
isnt($rc, 0, 'nor does it take inserts from a stale pool');
is($standby->safe_psql('postgres',
		"SELECT state FROM pm_index_pools() WHERE index = 't_k'::regclass"),
	'needs reindex', 'pm_index_pools() says so');

$standby->safe_psql('postgres', 'REINDEX INDEX t_k');
is($standby->safe_psql('postgres', 'SET enable_seqscan = off; SELECT count(*) FROM t WHERE k BETWEEN 1 AND 6000'),
	'1000', 'after REINDEX the index answers correctly');
$standby->safe_psql('postgres', "INSERT INTO t VALUES (1, 'x')");
is($standby->safe_psql('postgres', 'SELECT nbtree_pm_check($$t_k$$, true)'), '', 'and verifies');
$standby->restart;
is($standby->safe_psql('postgres', 'SET enable_seqscan = off; SELECT count(*) FROM t WHERE k = 1'),
	'1', 'the rebuilt pool is trusted after a plain restart');

# A base backup restored without standby mode (crash recovery from backup_label).
$primary->backup('base2');
my $restored = PostgreSQL::Test::Cluster->new('restored');
$restored->init_from_backup($primary, 'base2');
$restored->start;
($rc, $out, $err) = $restored->psql('postgres', 'SET enable_seqscan = off; SELECT count(*) FROM t WHERE k = 7000');
like($err, qr/cannot be used until it is rebuilt/, 'a restored base backup asks for REINDEX too');
$restored->safe_psql('postgres', 'REINDEX INDEX t_k');
is($restored->safe_psql('postgres', 'SET enable_seqscan = off; SELECT count(*) FROM t WHERE k = 7000'),
	'1', 'and works after it');

# pg_dump and pg_restore: the indexes are recreated by CREATE INDEX and work, both kinds.
my $dump = $primary->basedir . '/db.dump';
$primary->command_ok([ 'pg_dump', '-Fc', '-f', $dump, '-d', $primary->connstr('postgres') ],
	'pg_dump of a database with pm_index indexes');
$primary->safe_psql('postgres', 'CREATE DATABASE copy');
$primary->command_ok([ 'pg_restore', '-d', $primary->connstr('copy'), $dump ], 'pg_restore of it');
is( $primary->safe_psql(
		'copy', q{SELECT string_agg(c.relname || ':' || a.amname, ' ' ORDER BY c.relname)
		  FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE a.amname LIKE '%_pm'}),
	'b_bx:fbrtree_pm t_k:nbtree_pm',
	'the restored database has both indexes');
is( $primary->safe_psql(
		'copy', q{SET enable_seqscan = off; SET enable_bitmapscan = off;
		SELECT count(*) FROM t WHERE k BETWEEN 1 AND 6000;
		SELECT count(*) FROM b WHERE bx && box '((0,0),(10.5,10.5))';
		SELECT nbtree_pm_check('t_k', true); SELECT fbrtree_pm_check('b_bx', true);}),
	"1000\n10\n\n",
	'and they answer and verify');

$primary->stop;
$standby->stop;
$restored->stop;
done_testing();
