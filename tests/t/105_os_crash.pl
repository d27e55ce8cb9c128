# An operating-system crash on storage that is not persistent memory.  There a pool survives
# process and server crashes (its stores sit in the page cache) but not a kernel crash or power
# loss, which may keep any mix of old and new pages.  The test fakes a reboot by changing the boot
# id the server reads (PM_INDEX_BOOT_ID_FILE) and fakes the lost writeback by writing a pool file
# whose pages mix an earlier copy and the latest content.  Such a pool is never served: its first
# user replaces it with an empty pool that inserts go into at once, queries do not use it, and a
# background worker per database builds it from the table (with no worker, REINDEX does); a clean
# shutdown, a server crash without a reboot, and a reboot under pm_index.persistence = msync build
# nothing.
use strict;
use warnings;
use File::Copy;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/../lib";
use PmNode;

my $boot_file = PostgreSQL::Test::Utils::tempdir() . '/boot_id';

sub boot_as
{
	my ($id) = @_;
	open(my $fh, '>', $boot_file) or die "$boot_file: $!";
	print $fh "$id\n";
	close($fh) or die "$boot_file: $!";
	return;
}

boot_as('boot-1');
$ENV{PM_INDEX_BOOT_ID_FILE} = $boot_file;
# No load workers: which pools a start finds clean or in use is what this test reads, and a
# load worker opens every pool at each start (tests/t/120 covers them).
my $node = pm_node('os_crash', 'pm_index.startup_load_workers = 0');
$node->safe_psql('postgres', 'CREATE DATABASE other');
$node->safe_psql('other', 'CREATE EXTENSION pm_index');
my %indexes = (
	postgres => [ 't_k', 't_b', 't_h', 'f_k' ],
	other => ['u_k']);
$node->safe_psql(
	'postgres', q{
	CREATE TABLE t (k int8, b box);
	INSERT INTO t SELECT g, box(point(g % 300, g / 300), point(g % 300 + 1, g / 300 + 1))
	  FROM generate_series(1, 30000) g;
	CREATE INDEX t_k ON t USING nbtree_pm (k);
	CREATE INDEX t_b ON t USING fbrtree_pm (b);
	CREATE INDEX t_h ON t USING hash_pm ((k % 1000));
	VACUUM ANALYZE t;
	-- an index that client sessions can build and a background worker cannot (its
	-- application_name is empty): the build worker fails on it and must go on
	CREATE FUNCTION indexed_in_sessions(int8) RETURNS int8 IMMUTABLE LANGUAGE plpgsql AS $$
	BEGIN
		IF current_setting('application_name') = '' THEN
			RAISE EXCEPTION 'this index is built in client sessions only';
		END IF;
		RETURN $1;
	END $$;
	CREATE TABLE f AS SELECT g::int8 AS k FROM generate_series(1, 1000) g;
	CREATE INDEX f_k ON f USING nbtree_pm (indexed_in_sessions(k));
	VACUUM ANALYZE f;});
$node->safe_psql(
	'other', q{
	CREATE TABLE u AS SELECT g::int8 AS k FROM generate_series(1, 20000) g;
	CREATE INDEX u_k ON u USING nbtree_pm (k);
	VACUUM ANALYZE u;});

# Queries that must go through each index, with what a heap scan says.
my %probes = (
	t_k => [ 'postgres', 'SELECT count(*), sum(k) FROM t WHERE k BETWEEN 1000 AND 40000' ],
	t_b => [ 'postgres', q{SELECT count(*), sum(k) FROM t WHERE b && box '((10,10),(120,60))'} ],
	t_h => [ 'postgres', 'SELECT count(*), sum(k) FROM t WHERE (k % 1000) = ANY (ARRAY[1, 7, 500, 999])' ],
	u_k => [ 'other', 'SELECT count(*), sum(k) FROM u WHERE k > 5000' ]);

sub filenode
{
	my ($db, $index) = @_;
	return $node->safe_psql($db, "SELECT pg_relation_filenode('$index')");
}

sub filenodes
{
	return { map { my $db = $_; map { ($_ => filenode($db, $_)) } @{ $indexes{$db} } } keys %indexes };
}

# Every probe answers through its index as the heap does; the indexes verify.
sub answers_right
{
	my ($what) = @_;
	for my $index (sort keys %probes)
	{
		my ($db, $q) = @{ $probes{$index} };
		my $plan = $node->safe_psql($db, "${BY_INDEX}EXPLAIN (COSTS OFF) $q");
		like($plan, qr/\b$index\b/, "$what: $index answers the probe");
		is($node->safe_psql($db, "$BY_INDEX$q"), $node->safe_psql($db, "$BY_HEAP$q"),
			"$what: $index answers as the heap does");
	}
	is( $node->safe_psql(
			'postgres', q{SELECT count(*) FROM (SELECT nbtree_pm_check('t_k', true),
				fbrtree_pm_check('t_b', true), hash_pm_check('t_h', true)) s}),
		'1', "$what: t_k, t_b and t_h verify, every heap tuple indexed");
	my $q = 'SELECT count(*), sum(k) FROM f WHERE indexed_in_sessions(k) <= 500';
	is($node->safe_psql('postgres', "$BY_INDEX$q"), $node->safe_psql('postgres', "$BY_HEAP$q"),
		"$what: f_k answers as the heap does");
	return;
}

# SIGKILL to the postmaster and all its children: nothing runs an exit callback.
sub crash_server
{
	my $pid = $node->{_pid};
	my @children = split /\s+/, `pgrep -P $pid`;
	kill 'KILL', $pid, grep { /^\d+$/ } @children;
	for (1 .. 100)
	{
		last unless grep { kill 0, $_ } $pid, grep { /^\d+$/ } @children;
		select(undef, undef, undef, 0.1);
	}
	$node->{_pid} = undef;
	return;
}

sub pool_path
{
	my ($db, $index) = @_;
	return $node->safe_psql($db, "SELECT path FROM pm_index_pools() WHERE index = '$index'::regclass");
}

sub write_some
{
	my ($from) = @_;
	$node->safe_psql('postgres',
		"INSERT INTO t SELECT g, box(point(g % 300, 0), point(g % 300 + 2, 2)) FROM generate_series($from, $from + 4999) g;
		 DELETE FROM t WHERE k % 7 = 0 AND k < $from; VACUUM t;");
	$node->safe_psql('other', "INSERT INTO u SELECT generate_series($from, $from + 4999); DELETE FROM u WHERE k % 5 = 0;");
	$node->safe_psql('postgres', "INSERT INTO f SELECT generate_series($from, $from + 999)");
	return;
}

answers_right('as built');

# A clean shutdown writes the pools back and marks them clean: a reboot trusts them.
my $before = filenodes();
$node->stop;
boot_as('boot-2');
$node->start;
is($node->safe_psql('postgres', q{SELECT string_agg(DISTINCT state, ',') FROM pm_index_pools()}),
	'clean', 'after a clean shutdown the pools are marked clean');
answers_right('clean shutdown, reboot');
is_deeply(filenodes(), $before, 'nothing was rebuilt');
is($node->safe_psql('postgres', q{SELECT string_agg(DISTINCT state, ',') FROM pm_index_pools()}),
	'in use', 'used again, the pools are in use under the new boot');

# A server crash without a reboot: the page cache kept every store.
write_some(100001);
crash_server();
start_after_kill($node);
answers_right('server crash, same boot');
is_deeply(filenodes(), $before, 'nothing was rebuilt');

my $crashes = 0;

# An OS crash under boot id $boot: the pools' pages are a mix of an earlier copy and the latest
# content; the server starts again with the settings in @conf.  Returns the torn pools' paths.
sub os_crash
{
	my ($boot, @conf) = @_;
	my %copy;
	for my $db (keys %indexes)
	{
		for my $index (@{ $indexes{$db} })
		{
			my $path = pool_path($db, $index);
			copy($path, "$path.earlier") or die "copy $path: $!";
			$copy{$index} = $path;
		}
	}
	write_some(200001 + 100000 * $crashes++);
	crash_server();
	for my $path (values %copy)
	{
		my $latest = slurp_file($path);
		my $earlier = slurp_file("$path.earlier");
		my $torn = '';
		for (my $page = 0; $page * 4096 < length($latest); $page++)
		{
			my $from = ($page % 2 == 1 && $page * 4096 < length($earlier)) ? \$earlier : \$latest;
			$torn .= substr($$from, $page * 4096, 4096);
		}
		isnt($torn, $latest, "the torn image of $path differs from the pool's latest content");
		open(my $fh, '>', $path) or die "$path: $!";
		binmode($fh);
		print $fh $torn;
		close($fh) or die "$path: $!";
		unlink("$path.earlier");
	}
	boot_as($boot);
	$node->append_conf('postgresql.conf', join("\n", @conf));
	start_after_kill($node);
	return \%copy;
}

# With no worker slot free for the build (the logical replication launcher and the sweeper take
# both), the planner does not use the torn pools, queries answer from the heap, writes go on (their
# first use replaces each pool with an empty one being built), and REINDEX makes them usable.
my $log_offset = -s $node->logfile;
my $torn = os_crash('boot-3', 'max_worker_processes = 2');
$node->wait_for_log(qr/could not start a worker to build the indexes of database/, $log_offset);
for my $index (sort keys %probes)
{
	my ($db, $q) = @{ $probes{$index} };
	unlike($node->safe_psql($db, "${BY_INDEX}EXPLAIN (COSTS OFF) $q"), qr/\b$index\b/,
		"after an OS crash the planner does not use $index");
	is($node->safe_psql($db, "$BY_INDEX$q"), $node->safe_psql($db, "$BY_HEAP$q"),
		"after an OS crash the probe of $index answers as the heap does");
}
is($node->safe_psql('postgres', q{SELECT state FROM pm_index_pools() WHERE index = 't_k'::regclass}),
	'needs reindex', 'pm_index_pools() shows a torn pool as needing a rebuild');
write_some(300001);
pass('after an OS crash every index takes inserts');
$node->wait_for_log(qr/pm_index: index "t_k" is built again from its table in the background/,
	$log_offset);
pass('the first insert replaced the torn pool, and the log says so');
is( $node->safe_psql(
		'postgres', q{SELECT string_agg(DISTINCT state, ',') FROM pm_index_pools()
		  WHERE index IN ('t_k'::regclass, 't_b'::regclass, 't_h'::regclass, 'f_k'::regclass)}),
	'building', 'pm_index_pools() shows the replaced pools building');
for my $index (sort keys %probes)
{
	my ($db, $q) = @{ $probes{$index} };
	is($node->safe_psql($db, "$BY_INDEX$q"), $node->safe_psql($db, "$BY_HEAP$q"),
		"while $index is being built its probe answers as the heap does");
}
$node->safe_psql('postgres', 'REINDEX INDEX f_k; REINDEX INDEX t_k; REINDEX INDEX t_b; REINDEX INDEX t_h');
$node->safe_psql('other', 'REINDEX INDEX u_k');
ok(!-e $torn->{$_}, "REINDEX removed the pool of $_") for sort keys %$torn;
answers_right('OS crash, REINDEX by hand');

# With a worker slot, a background worker per database builds them in place.
$before = filenodes();
$log_offset = -s $node->logfile;
$torn = os_crash('boot-4', 'max_worker_processes = 8');
my ($rc, $out, $err) = $node->psql('postgres', "$BY_INDEX$probes{t_k}[1]");
ok($rc == 0 && $out eq $node->safe_psql('postgres', "$BY_HEAP$probes{t_k}[1]"),
	'right after the reboot the probe of t_k answers as the heap does')
  or diag("rc $rc, stdout '$out', stderr '$err'");
write_some(500001);
pass('and every index takes inserts');
for my $index (sort keys %probes)
{
	$node->wait_for_log(qr/pm_index: built index "$index" from its table/, $log_offset);
	pass("a background worker built $index");
}
# f_k comes first in the worker's order (its relfilenode is the lowest of the database's): the
# worker logged its failure and went on with t_b, t_k and t_h.
ok($before->{f_k} < $before->{t_b} && $before->{f_k} < $before->{t_k} && $before->{f_k} < $before->{t_h},
	'f_k was the first index of its database the worker took');
$node->wait_for_log(
	qr/pm_index: building the index with relfilenode $before->{f_k} failed: this index is built in client sessions only/,
	$log_offset);
pass('the worker logged the index it could not build');
is($node->safe_psql('postgres', q{SELECT state FROM pm_index_pools() WHERE index = 'f_k'::regclass}),
	'building', 'which stays building, unused');
$node->safe_psql('postgres', 'REINDEX INDEX f_k');
my $after = filenodes();
is($after->{$_}, $before->{$_}, "$_ was built in place, with its relfilenode") for sort keys %probes;
answers_right('OS crash, built in the background');
write_some(900001);
answers_right('OS crash, built, written again');

# Under msync every write is durable: an OS crash loses nothing and nothing is rebuilt.
$node->append_conf('postgresql.conf', 'pm_index.persistence = msync');
$node->restart;
answers_right('msync');
is($node->safe_psql('postgres', q{SELECT string_agg(DISTINCT state, ',') FROM pm_index_pools()}),
	'clean', 'under msync the pools in use are clean');
write_some(400001);
$before = filenodes();
crash_server();
$log_offset = -s $node->logfile;
boot_as('boot-5');
start_after_kill($node);
answers_right('msync, OS crash');
is_deeply(filenodes(), $before, 'nothing was rebuilt');
$node->stop;
unlike(substr(slurp_file($node->logfile), $log_offset), qr/built index|built again/,
	'and no worker built one');
done_testing();
