# Every PostgreSQL 15 command that creates, moves, copies or drops an index's files, on a table
# with an nbtree_pm, an fbrtree_pm and a hash_pm index (one of the first two tiered, its inserts
# through its operation log, on each of a plain and a partitioned table): each SET TABLESPACE form, REINDEX in
# each form (TABLESPACE too), CLUSTER, VACUUM FULL, TRUNCATE, ALTER COLUMN TYPE, SET UNLOGGED and SET
# LOGGED, partition DETACH/ATTACH, CREATE DATABASE ... TEMPLATE, ALTER DATABASE ... SET
# TABLESPACE, DROP DATABASE.  Transactional
# ones run once rolled back and once committed.  After each: an INSERT, counts through each index equal to a
# sequential scan's, every index verified with heapallindexed, and no pool without its index.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/../lib";
use PmNode;

my $node = pm_node('storage');
my $ts1 = PostgreSQL::Test::Utils::tempdir_short();
my $ts2 = PostgreSQL::Test::Utils::tempdir_short();
$node->safe_psql('postgres', "CREATE TABLESPACE ts1 LOCATION '$ts1'; CREATE TABLESPACE ts2 LOCATION '$ts2'");

my $setup = q{
	CREATE TABLE m (k int, p point);
	INSERT INTO m SELECT g, point(g % 100, g / 100) FROM generate_series(1, 5000) g;
	CREATE INDEX m_k ON m USING nbtree_pm (k);
	CREATE INDEX m_p ON m USING fbrtree_pm (p) WITH (tiered = on);
	CREATE INDEX m_h ON m USING hash_pm ((k % 100));
	CREATE TABLE pt (k int, p point) PARTITION BY RANGE (k);
	CREATE TABLE pt1 PARTITION OF pt FOR VALUES FROM (MINVALUE) TO (2500);
	CREATE TABLE pt2 PARTITION OF pt FOR VALUES FROM (2500) TO (MAXVALUE);
	INSERT INTO pt SELECT * FROM m;
	CREATE INDEX pt_k ON pt USING nbtree_pm (k) WITH (tiered = on);
	CREATE INDEX pt_p ON pt USING fbrtree_pm (p);
	CREATE INDEX pt_h ON pt USING hash_pm ((k % 100));
	-- an INSERT (unless told not to), then "by nbtree_pm, by fbrtree_pm, by hash_pm, by the
	-- heap" (equal when right); every pm_index index of the table verified, every heap tuple
	-- indexed
	CREATE FUNCTION verify(t regclass, do_insert boolean DEFAULT true) RETURNS text LANGUAGE plpgsql AS $$
	DECLARE
	  by_k bigint; by_p bigint; by_h bigint; by_heap bigint; i regclass; am name;
	BEGIN
	  IF do_insert THEN
	    EXECUTE format('INSERT INTO %s VALUES (-1, point(-1, -1))', t);
	  END IF;
	  PERFORM set_config('enable_seqscan', 'off', true);
	  PERFORM set_config('enable_bitmapscan', 'off', true);
	  EXECUTE format('SELECT count(*) FROM %s WHERE k >= -1', t) INTO by_k;
	  EXECUTE format('SELECT count(*) FROM %s WHERE p <@ box(point(-10, -10), point(1e6, 1e6))', t) INTO by_p;
	  EXECUTE format('SELECT count(*) FROM %s WHERE (k %% 100) = ANY (ARRAY(SELECT generate_series(-99, 99)))', t)
	    INTO by_h;
	  PERFORM set_config('enable_seqscan', 'on', true);
	  PERFORM set_config('enable_indexscan', 'off', true);
	  PERFORM set_config('enable_indexonlyscan', 'off', true);
	  EXECUTE format('SELECT count(*) FROM %s', t) INTO by_heap;
	  PERFORM set_config('enable_indexscan', 'on', true);
	  PERFORM set_config('enable_indexonlyscan', 'on', true);
	  PERFORM set_config('enable_bitmapscan', 'on', true);
	  FOR i, am IN SELECT x.indexrelid::regclass, a.amname FROM pg_index x
	      JOIN pg_class c ON c.oid = x.indexrelid JOIN pg_am a ON a.oid = c.relam
	     WHERE x.indrelid IN (SELECT t UNION ALL SELECT relid FROM pg_partition_tree(t) WHERE isleaf)
	       AND c.relkind = 'i' LOOP
	    IF am = 'nbtree_pm' THEN PERFORM nbtree_pm_check(i, true);
	    ELSIF am = 'fbrtree_pm' THEN PERFORM fbrtree_pm_check(i, true);
	    ELSIF am = 'hash_pm' THEN PERFORM hash_pm_check(i, true); END IF;
	  END LOOP;
	  RETURN format('%s %s %s %s', by_k, by_p, by_h, by_heap);
	END $$;};
$node->safe_psql('postgres', $setup);

# "n n n n": the four counts agree
sub agrees { my ($r) = @_; return $r =~ /^(\d+) \1 \1 \1$/; }

# Pools in pm_index_pools() that no index of their database owns.
sub orphans
{
	my ($db) = @_;
	return $node->safe_psql($db // 'postgres', q{
		SELECT count(*) FROM pm_index_pools()
		 WHERE database = (SELECT oid FROM pg_database WHERE datname = current_database()) AND index IS NULL});
}

sub check_after
{
	my ($what, $db) = @_;
	$db //= 'postgres';
	for my $t ('m', 'pt')
	{
		my ($rc, $out, $err) = $node->psql($db, "SELECT verify('$t')");
		ok($rc == 0 && agrees($out), "$what: $t answers, takes an INSERT and verifies")
		  or diag("got '$out', $err");
	}
	is(orphans($db), '0', "$what: no pool without its index");
}

# Transactional commands: rolled back (checked inside and after), then committed.  Inside the
# transaction the check inserts nothing: an INSERT after ALTER TABLE ... SET TABLESPACE, rolled
# back, leaves entries for heap tuples that vanish with the new relfilenode, in btree just as in
# pm_index (PostgreSQL 15's own behaviour; a later INSERT can reuse the TID).
my @transactional = (
	'ALTER INDEX m_k SET TABLESPACE ts1',
	'ALTER TABLE m_p SET TABLESPACE ts1',
	'ALTER TABLE m SET TABLESPACE ts2',
	'ALTER INDEX ALL IN TABLESPACE ts1 SET TABLESPACE ts2',
	'ALTER TABLE ALL IN TABLESPACE ts2 SET TABLESPACE ts1',
	'ALTER INDEX pt1_k_idx SET TABLESPACE ts2',
	'REINDEX INDEX m_k',
	'REINDEX TABLE m',
	'REINDEX (TABLESPACE ts2) TABLE m',
	'CLUSTER m USING m_k',
	'CLUSTER m USING m_p',
	'TRUNCATE m; INSERT INTO m SELECT g, point(g % 100, g / 100) FROM generate_series(1, 5000) g',
	'ALTER TABLE m ALTER COLUMN k TYPE int8',
	'ALTER TABLE m SET UNLOGGED',
	'ALTER TABLE m SET LOGGED',
	'ALTER TABLE pt DETACH PARTITION pt2; ALTER TABLE pt ATTACH PARTITION pt2 FOR VALUES FROM (2500) TO (MAXVALUE)',
	'ALTER TABLE pt DETACH PARTITION pt2');
for my $cmd (@transactional)
{
	my ($rc, $out, $err) =
	  $node->psql('postgres', "BEGIN; $cmd; SELECT verify('m', false); SELECT verify('pt', false); ROLLBACK;");
	my @in = split /\n/, $out;
	ok($rc == 0 && @in == 2 && agrees($in[0]) && agrees($in[1]), "$cmd (in its transaction): indexes answer")
	  or diag("got '$out', $err");
	check_after("$cmd, rolled back");
	$node->safe_psql('postgres', $cmd);
	check_after("$cmd, committed");
}
$node->safe_psql('postgres', 'ALTER TABLE pt ATTACH PARTITION pt2 FOR VALUES FROM (2500) TO (MAXVALUE)');
check_after('ATTACH PARTITION');

# commands outside a transaction block
for my $cmd ('REINDEX SCHEMA public', 'REINDEX DATABASE postgres', 'REINDEX SYSTEM postgres', 'REINDEX INDEX CONCURRENTLY m_k',
	'REINDEX TABLE CONCURRENTLY m', 'REINDEX (TABLESPACE ts1) TABLE CONCURRENTLY m',
	'REINDEX SCHEMA CONCURRENTLY public', 'VACUUM FULL m', 'VACUUM FULL pt')
{
	$node->safe_psql('postgres', $cmd);
	check_after($cmd);
}

# databases: a copy from a template, moved to another tablespace, dropped
$node->safe_psql('postgres', 'CREATE DATABASE tmpl');
$node->safe_psql('tmpl', "CREATE EXTENSION pm_index; $setup");
$node->safe_psql('postgres', 'CREATE DATABASE copy TEMPLATE tmpl');
check_after('CREATE DATABASE ... TEMPLATE: the copy', 'copy');
check_after('CREATE DATABASE ... TEMPLATE: the template', 'tmpl');
$node->safe_psql('postgres', 'ALTER DATABASE copy SET TABLESPACE ts1');
check_after('ALTER DATABASE ... SET TABLESPACE', 'copy');
$node->safe_psql('postgres', 'CREATE DATABASE copy2 TEMPLATE copy TABLESPACE ts2');
check_after('CREATE DATABASE ... TEMPLATE ... TABLESPACE', 'copy2');
my $pools_of = sub {
	my ($db) = @_;
	return $node->safe_psql('postgres',
		"SELECT count(*) FROM pm_index_pools() WHERE database = (SELECT oid FROM pg_database WHERE datname = '$db')");
};
my $copy_oid = $node->safe_psql('postgres', q{SELECT oid FROM pg_database WHERE datname = 'copy'});
isnt($pools_of->('copy'), '0', 'the copied database has pools');
$node->safe_psql('postgres', 'DROP DATABASE copy');
is($node->safe_psql('postgres', "SELECT count(*) FROM pm_index_pools() WHERE database = $copy_oid"),
	'0', 'DROP DATABASE removes its pools');

# A crash after ALTER DATABASE ... SET TABLESPACE committed and before it renamed the pools: the
# startup sweep finds each pool's index in the new tablespace by the UUID in its metapage.
my ($ts1_oid, $ts2_oid, $copy2_oid) = split /\|/, $node->safe_psql('postgres',
	q{SELECT (SELECT oid FROM pg_tablespace WHERE spcname = 'ts1'),
		(SELECT oid FROM pg_tablespace WHERE spcname = 'ts2'),
		(SELECT oid FROM pg_database WHERE datname = 'copy2')});
my $pool_dir = $node->safe_psql('postgres', 'SELECT min(path) FROM pm_index_pools()') =~ s{/[^/]*$}{}r;
$node->safe_psql('postgres', 'ALTER DATABASE copy2 SET TABLESPACE ts1');
$node->stop('immediate');
my @renamed = glob("$pool_dir/${ts1_oid}_${copy2_oid}_*.pmpool");
for my $new (@renamed)
{
	(my $old = $new) =~ s{/${ts1_oid}_}{/${ts2_oid}_};
	rename($new, $old) or die "rename $new: $!";
}
ok(@renamed > 0, 'pools of the moved database put back under their old names');
my $log_offset = -s $node->logfile;
$node->start;
$node->wait_for_log(qr/pm_index: renamed pool file/, $log_offset);
$node->poll_query_until('postgres', "SELECT count(*) = 0 FROM pm_index_pools() WHERE path LIKE '%/${ts2_oid}_${copy2_oid}_%'")
  or die 'the sweep left pools under the old names';
is(scalar(() = glob("$pool_dir/${ts1_oid}_${copy2_oid}_*.pmpool")), scalar(@renamed),
	'the startup sweep gave every pool its new name back');
check_after('a crash before ALTER DATABASE ... SET TABLESPACE renamed the pools', 'copy2');

# after a restart (the startup sweep) everything still answers and nothing was swept wrongly
$node->restart;
check_after('after a restart');
check_after('after a restart', 'copy2');
check_after('after a restart', 'tmpl');
$node->stop;
done_testing();
