# hash_pm through crashes, VACUUM, a standby and a full log.  hash_pm's table is durable only at
# UNO checkpoints: every insert goes through the index's operation log and the replay workers
# apply it, checkpointing every 100 ms; the first use after a crash undoes the table to its last
# checkpoint and applies the log again.  One table with hash_pm indexes on a uuid, a text (NULLs
# and TOASTed values among them) and an int8 column, and a plain hash index on a copy of the
# int8 column as a reference:
#  1. immediate stops under pgbench inserts and deletes (synchronous_commit alternating), a
#     session beside them recording the rows whose commit was acknowledged;
#  2. an immediate stop with every insert waiting in the log (the workers paused);
#  3. VACUUM after deletes and an immediate stop right after, with the workers applying and with
#     rows waiting in the log that reuse the freed heap items;
#  4. a streaming standby, killed during replay and promoted;
#  5. the restart time with 200,000 rows waiting in each index's log (printed, not asserted).
# After every restart: hash_pm_check(index, true) passes; index scans (IS NOT NULL, IS NULL,
# = ANY over probe values; each heap TID once) count what sequential scans count; every row is
# found by a lookup of its own value through the index; acknowledged rows are all there.
use strict;
use warnings;
use Digest::MD5 qw(md5_hex);
use FindBin;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep time);
use lib "$FindBin::Bin/../lib";
use PmNode;

my $seed = test_seed();
my $t_begin = time();

my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1);
# lanes large enough for 200,000 waiting entries of one session (scenario 5): a hash_pm insert
# whose lane is full waits for the workers, which never come while they are paused
$primary->append_conf('postgresql.conf',
	"shared_preload_libraries = 'pm_index'\nautovacuum = off\npm_index.tier_log_size = '32MB'\n"
	  . "max_wal_size = '1GB'");
$primary->start;
$primary->safe_psql('postgres', 'CREATE EXTENSION pm_index');

# A row of key k (k >= 0): the same values in SQL (K replaced) and in Perl, for the probes.
my $ROW_SQL = q{K, md5(K::text)::uuid,
  CASE WHEN K % 23 = 0 THEN NULL WHEN K % 101 = 1 THEN repeat('w', 3000) || (K % 50000)
       ELSE 'val_' || (K % 50000) END,
  K % 100000, K % 100000};
sub row_sql { my ($k) = @_; (my $r = $ROW_SQL) =~ s/\bK\b/$k/g; return $r; }
sub s_of { my ($k) = @_; return $k % 101 == 1 ? ('w' x 3000) . ($k % 50000) : 'val_' . ($k % 50000); }

$primary->safe_psql(
	'postgres', setseed() . q{
	CREATE TABLE t (id bigserial, k int8, u uuid, s text, n int8, nc int8);
	CREATE INDEX t_u ON t USING hash_pm (u);
	CREATE INDEX t_s ON t USING hash_pm (s);
	CREATE INDEX t_n ON t USING hash_pm (n);
	CREATE INDEX t_nc ON t USING hash (nc);}
	  . 'INSERT INTO t (k, u, s, n, nc) SELECT ' . row_sql('k')
	  . ' FROM (SELECT (random() * 1000000)::int8 AS k FROM generate_series(1, 20000)) g');
ok($primary->poll_query_until('postgres',
		q{SELECT count(*) >= 1 FROM pg_stat_activity WHERE backend_type = 'pm_index tier replay'}),
	'the inserts went through the log: a replay worker runs');

# Probe keys: 150 of the table's and 150 Perl's (most of those absent from u, present in n and s).
my @probes = split /,/, $primary->safe_psql('postgres',
	'SELECT string_agg(k::text, \',\' ORDER BY id) FROM t WHERE id % 131 = 7');
push @probes, map { int(rand(1_000_000)) } 1 .. 150;
my $probe_u = '{' . join(',', map { md5_hex("$_") } @probes) . '}';
my $probe_s = '{' . join(',', map { '"' . s_of($_) . '"' } grep { $_ % 23 != 0 } @probes) . '}';
my %seen;
my $probe_n = '{' . join(',', grep { !$seen{$_}++ } map { $_ % 100000 } @probes) . '}';

my %COND = (
	t_u => [ 'u IS NOT NULL', "u = ANY('$probe_u')" ],
	t_s => [ 's IS NOT NULL', 's IS NULL', "s = ANY('$probe_s')" ],
	t_n => [ 'n IS NOT NULL', "n = ANY('$probe_n')" ]);
my ($index_sql, $seq_sql) = ('', '');
for my $index (sort keys %COND)
{
	for my $c (@{ $COND{$index} })
	{
		$index_sql .= "SELECT count(*), count(DISTINCT ctid) FROM t WHERE $c;\n";
		$seq_sql .= "SELECT count(*), count(*) FROM t WHERE $c;\n";
	}
}
# the reference, hash, has no = ANY in index scans: a lookup per (distinct) probe value
my $REF_JOIN = "FROM unnest('$probe_n'::int8[]) p(v) JOIN t ON t.nc = p.v";
$index_sql .= "SELECT count(*), count(DISTINCT t.ctid) $REF_JOIN;\n";
$seq_sql .= "SELECT count(*), count(*) FROM t WHERE nc = ANY('$probe_n');\n";
my $checks = q{SELECT hash_pm_check('t_u', true), hash_pm_check('t_s', true), hash_pm_check('t_n', true)};

# Every row found by a lookup of its own value: the outer side a sequential scan (its condition
# not one the index answers), the inner side the hash_pm index.
my $SELF_SET = 'SET enable_seqscan = off; SET enable_bitmapscan = off; SET enable_hashjoin = off; '
  . 'SET enable_mergejoin = off; SET enable_material = off; SET max_parallel_workers_per_gather = 0; ';
sub self_sql
{
	my ($from, $col) = @_;
	return join('; ',
		map { "SELECT count(*) FROM t a WHERE a.id > $from AND length(a.${_}::text) >= 0 "
			  . "AND NOT EXISTS (SELECT 1 FROM t b WHERE b.$_ = a.$_)" } ($col // qw(u s n)));
}

sub plans_ok
{
	my ($node, $who) = @_;
	my @wrong;
	for my $index (sort keys %COND)
	{
		for my $c (@{ $COND{$index} })
		{
			my $plan = $node->safe_psql('postgres', "${BY_INDEX}EXPLAIN (COSTS OFF) SELECT count(*) FROM t WHERE $c");
			push @wrong, "$index: $plan" if $plan !~ /Index Scan using $index on t/;
		}
	}
	my $plan = $node->safe_psql('postgres', "${BY_INDEX}EXPLAIN (COSTS OFF) SELECT count(*) $REF_JOIN");
	push @wrong, "t_nc: $plan" if $plan !~ /Index Scan using t_nc on t/;
	for my $col (qw(u s n))
	{
		$plan = $node->safe_psql('postgres', "${SELF_SET}EXPLAIN (COSTS OFF) " . self_sql(0, $col));
		push @wrong, "lookup of $col: $plan"
		  if $plan !~ /Seq Scan on t a\n(?:\s+(?:Disabled|Filter): .*\n)+\s+->  Index Scan using t_$col on t b\n\s+Index Cond: \(\Q$col\E = a\.\Q$col\E\)/;
	}
	is(join("\n", @wrong), '', "$who plans every probe and self-lookup through the hash indexes");
}
plans_ok($primary, 'the primary');

# The checks after a restart: the verifiers (not on a standby: they need replay paused), index
# scans against sequential scans, every row after id $from found by its own values.  Returns
# the answers by index.
sub verify
{
	my ($node, $what, %opt) = @_;
	my $standby = $node->safe_psql('postgres', 'SELECT pg_is_in_recovery()') eq 't';
	if ($standby)
	{
		$node->safe_psql('postgres', 'SELECT pg_wal_replay_pause()');
		$node->poll_query_until('postgres', "SELECT pg_get_wal_replay_pause_state() = 'paused'")
		  or die 'replay did not pause';
	}
	my ($rc, $out, $err) = $node->psql('postgres', $checks);
	is($rc, 0, "$what: hash_pm_check passes, every heap tuple indexed") or diag($err);
	my $by_index = $node->safe_psql('postgres', $BY_INDEX . $index_sql);
	my $by_seq = $node->safe_psql('postgres', $BY_HEAP . $seq_sql);
	is($by_index, $by_seq, "$what: index scans count what sequential scans count");
	is($node->safe_psql('postgres', $SELF_SET . self_sql($opt{from} // 0)), "0\n0\n0",
		"$what: every row is found by an index lookup of its own values");
	$node->safe_psql('postgres', 'SELECT pg_wal_replay_resume()') if $standby;
	return $by_index;
}
verify($primary, 'after the first inserts');

sub pause_workers
{
	my ($node, $on) = @_;
	$node->safe_psql('postgres',
		"ALTER SYSTEM SET pm_index.debug_tier_pause = $on; SELECT pg_reload_conf(); SELECT pg_sleep(0.5)");
}

sub waiting
{
	my ($node) = @_;
	return $node->safe_psql('postgres',
		q{SELECT min(waiting_entries) FROM unnest('{t_u,t_s,t_n}'::regclass[]) i, pm_index_tier_lag(i)});
}

# What each index holds against the heap's rows, once the workers applied the log.
sub entries_vs_rows
{
	my ($node) = @_;
	$node->poll_query_until('postgres',
		q{SELECT max(waiting_entries) = 0 FROM unnest('{t_u,t_s,t_n}'::regclass[]) i, pm_index_tier_lag(i)});
	return $node->safe_psql('postgres',
		q{SELECT string_agg(i || '=' || (pm_index_stats(i)).entries, ' ' ORDER BY i::text)
			|| ' rows=' || (SELECT count(*) FROM t) FROM unnest('{t_u,t_s,t_n}'::regclass[]) i});
}

# ---- 1. immediate stops under load ----
my $script = $primary->basedir . '/load.sql';
append_to_file($script, "\\set k random(1, 1000000)\n"
	  . 'INSERT INTO t (k, u, s, n, nc) SELECT ' . row_sql('x.k')
	  . " FROM (SELECT :k + g AS k FROM generate_series(0, 9) g) x;\n"
	  . "DELETE FROM t WHERE id IN (SELECT id FROM t WHERE n = :k % 100000 LIMIT 2);\n");

my $cycles = 6;
my $acked_total = 0;
for my $cycle (1 .. $cycles)
{
	my $async = $cycle % 2 == 0;
	$primary->safe_psql('postgres',
		'ALTER SYSTEM SET synchronous_commit = ' . ($async ? "'off'" : "'on'") . '; SELECT pg_reload_conf()');
	# one row a statement, of keys of this cycle's own (n < 0: the load deletes none), with
	# synchronous_commit on: a row psql printed is acknowledged
	my $first = $cycle * 100_000;
	my $acked_file = $primary->basedir . "/acked_$cycle.sql";
	append_to_file($acked_file, "SET synchronous_commit = on;\n"
		  . join('', map { "INSERT INTO t (u, s, n, nc) VALUES (md5('acked$_')::uuid, 'acked_$_', -$_, -$_) RETURNING -n;\n" }
			  $first .. $first + 19_999));
	my $acked_out = $primary->basedir . "/acked_$cycle.out";
	my ($out, $err, $aout, $aerr) = ('', '', '', '');
	my $pgbench = IPC::Run::start(
		[
			'pgbench', '-n', '-c', '2', '-j', '2', '-T', '30', "--random-seed=" . ($seed + $cycle),
			'-f', $script, '-h', $primary->host, '-p', $primary->port, 'postgres'
		],
		'>', \$out, '2>', \$err);
	my $acker = IPC::Run::start(
		[
			'psql', '-XAtq', '-v', 'ON_ERROR_STOP=1', '-h', $primary->host, '-p', $primary->port,
			'-d', 'postgres', '-f', $acked_file, '-o', $acked_out
		],
		'>', \$aout, '2>', \$aerr);
	usleep(500_000 + int(rand(1_500_000)));
	$primary->stop('immediate');
	$pgbench->finish;
	$acker->finish;
	$primary->start;

	my @acked = -e $acked_out ? grep { /^\d+$/ } split /\n/, slurp_file($acked_out) : ();
	$acked_total += @acked;
	my $what = "crash $cycle (synchronous_commit " . ($async ? 'off' : 'on') . ', ' . scalar(@acked) . ' acknowledged)';
	verify($primary, $what);
	if (@acked)
	{
		my $list_n = '{' . join(',', map { -$_ } @acked) . '}';
		my $list_s = '{' . join(',', map { "acked_$_" } @acked) . '}';
		my $list_u = '{' . join(',', map { md5_hex("acked$_") } @acked) . '}';
		is($primary->safe_psql('postgres', $BY_INDEX
				  . "SELECT count(*) FROM t WHERE u = ANY('$list_u'); SELECT count(*) FROM t WHERE s = ANY('$list_s'); "
				  . "SELECT count(*) FROM t WHERE n = ANY('$list_n'); SELECT count(*) FROM t WHERE nc = ANY('$list_n')"),
			join("\n", (scalar(@acked)) x 4), "$what: every acknowledged row is found through each index");
	}
}
$primary->safe_psql('postgres', 'ALTER SYSTEM RESET synchronous_commit; SELECT pg_reload_conf()');
ok($acked_total > 0, "$acked_total acknowledged rows in all were checked");

# ---- 2. every insert waiting in the log ----
pause_workers($primary, 'on');
my $from = $primary->safe_psql('postgres', 'SELECT max(id) FROM t');
$primary->safe_psql('postgres', setseed(2) . 'INSERT INTO t (k, u, s, n, nc) SELECT ' . row_sql('k')
	  . ' FROM (SELECT (random() * 1000000)::int8 AS k FROM generate_series(1, 15000)) g');
# a second session, a second lane; some of the rows deleted (their entries stay in the log)
$primary->safe_psql('postgres', 'INSERT INTO t (k, u, s, n, nc) SELECT ' . row_sql('k')
	  . ' FROM generate_series(2000000, 2004999) k; DELETE FROM t WHERE id > ' . $from . ' AND k % 5 = 0');
ok(waiting($primary) >= 20000, 'with the workers paused, the inserts wait in every index\'s log');
# off at the next start, not now
$primary->safe_psql('postgres', 'ALTER SYSTEM RESET pm_index.debug_tier_pause');
$primary->stop('immediate');
$primary->start;
verify($primary, 'after a crash with every insert in the log', from => $from);
is($primary->safe_psql('postgres', "${SELF_SET}SELECT count(*) FROM t WHERE id > $from AND "
		  . "u = ANY(ARRAY(SELECT md5(g::text)::uuid FROM generate_series(2000000, 2004999) g))"),
	$primary->safe_psql('postgres', "SELECT count(*) FROM t WHERE id > $from AND k >= 2000000"),
	'the rows of the log are found by probes of their values');

# ---- 3. VACUUM after deletes, then a crash ----
$primary->safe_psql('postgres', 'DELETE FROM t WHERE k % 3 = 0 OR n % 7 = 1; VACUUM t');
$primary->stop('immediate');
$primary->start;
verify($primary, 'after deletes, VACUUM and a crash right after');
note('entries after VACUUM and a crash: ' . entries_vs_rows($primary));

# Rows waiting in the log are deleted and vacuumed (VACUUM applies the log first); rows inserted
# after take the freed heap items and wait in the log when the server stops.
pause_workers($primary, 'on');
$from = $primary->safe_psql('postgres', 'SELECT max(id) FROM t');
$primary->safe_psql('postgres', 'INSERT INTO t (k, u, s, n, nc) SELECT ' . row_sql('k')
	  . ' FROM generate_series(3000000, 3007999) k');
$primary->safe_psql('postgres', "DELETE FROM t WHERE (id > $from AND k % 2 = 0) OR k % 11 = 3");
$primary->safe_psql('postgres', 'VACUUM t');
$primary->safe_psql('postgres', 'INSERT INTO t (k, u, s, n, nc) SELECT ' . row_sql('k')
	  . ' FROM generate_series(4000000, 4005999) k');
ok(waiting($primary) >= 6000, 'the rows after VACUUM wait in the log');
$primary->safe_psql('postgres', 'ALTER SYSTEM RESET pm_index.debug_tier_pause');
$primary->stop('immediate');
$primary->start;
verify($primary, 'after deletes of rows in the log, VACUUM, inserts into the freed items and a crash');
note('entries after VACUUM of rows in the log and a crash: ' . entries_vs_rows($primary));

# ---- 4. a streaming standby ----
# (most rows deleted first: a standby made from a backup fills its pools from the table, and
# hash_pm's fill is slow, a checkpoint per row)
$primary->safe_psql('postgres', 'DELETE FROM t WHERE k IS NULL OR k % 8 <> 0; VACUUM t');
$primary->safe_psql('postgres', "SELECT pg_create_physical_replication_slot('standby', true)");
$primary->backup('base');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'base', has_streaming => 1);
$standby->append_conf('postgresql.conf', "primary_slot_name = 'standby'");
my $t_fill = time();
$standby->start;
$standby->poll_query_until('postgres',
	q{SELECT count(*) = 3 FROM pm_index_indexes WHERE pool_state <> 'building' AND index IS NOT NULL})
  or die 'the standby\'s pools are not built';
note(sprintf('the standby started and filled its 3 pools from %s rows in %.1f s',
	$standby->safe_psql('postgres', 'SELECT count(*) FROM t'), time() - $t_fill));
$primary->safe_psql('postgres', setseed(4) . 'INSERT INTO t (k, u, s, n, nc) SELECT ' . row_sql('k')
	  . ' FROM (SELECT (random() * 1000000)::int8 AS k FROM generate_series(1, 6000)) g;'
	  . ' DELETE FROM t WHERE k % 13 = 5; VACUUM t');
my $t_replay = time();
catch_up($primary, $standby);
note(sprintf('the standby replayed 6,000 inserts (3 hash_pm entries each), deletes and VACUUM in %.1f s',
	time() - $t_replay));
plans_ok($standby, 'the standby');
my $on_primary = $primary->safe_psql('postgres', $BY_INDEX . $index_sql);
is(verify($standby, 'the standby after inserts, deletes and VACUUM'), $on_primary,
	'the standby answers as the primary');

# killed during replay
my ($out, $err) = ('', '');
my $load = IPC::Run::start(
	[
		'pgbench', '-n', '-c', '2', '-j', '2', '-T', '4', "--random-seed=" . ($seed + 100),
		'-f', $script, '-h', $primary->host, '-p', $primary->port, 'postgres'
	],
	'>', \$out, '2>', \$err);
usleep(1_000_000 + int(rand(1_500_000)));
$standby->stop('immediate');
$standby->start;
$load->finish;
like($out, qr/number of transactions actually processed: [1-9]/, 'the load ran on the primary');
$primary->safe_psql('postgres', 'DELETE FROM t WHERE k % 17 = 2; VACUUM t');
catch_up($primary, $standby);
$on_primary = $primary->safe_psql('postgres', $BY_INDEX . $index_sql);
is(verify($standby, 'the standby killed during replay'), $on_primary, 'the restarted standby answers as the primary');

# promoted, written, crashed
$standby->promote;
$standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()');
$from = $standby->safe_psql('postgres', 'SELECT max(id) FROM t');
$standby->safe_psql('postgres', 'INSERT INTO t (k, u, s, n, nc) SELECT ' . row_sql('k')
	  . ' FROM generate_series(5000000, 5009999) k; DELETE FROM t WHERE k % 19 = 4');
verify($standby, 'the promoted standby after inserts', from => $from);
$standby->safe_psql('postgres', 'INSERT INTO t (k, u, s, n, nc) SELECT ' . row_sql('k')
	  . ' FROM generate_series(5010000, 5014999) k');
$standby->stop('immediate');
$standby->start;
verify($standby, 'the promoted standby after a crash', from => $from);
$standby->stop;

# ---- 5. the restart time with a full log ----
pause_workers($primary, 'on');
$from = $primary->safe_psql('postgres', 'SELECT max(id) FROM t');
$primary->safe_psql('postgres', 'INSERT INTO t (k, u, s, n, nc) SELECT ' . row_sql('k')
	  . ' FROM generate_series(6000000, 6199999) k');
ok(waiting($primary) >= 200000, '200,000 entries wait in each index\'s log');
$primary->safe_psql('postgres', 'ALTER SYSTEM RESET pm_index.debug_tier_pause');
$primary->stop('immediate');
my $t0 = time();
$primary->start;
my $t1 = time();
is($primary->safe_psql('postgres', $BY_INDEX . "SELECT count(*) FROM t WHERE u = md5('6123456')::uuid"),
	'1', 'the first query through the index finds a row of the log');
my $t2 = time();
note(sprintf('restart with 200,000 entries in each of 3 logs: %.2f s until the first query '
	  . 'through the index returned (server start %.2f s, then the query %.2f s)', $t2 - $t0, $t1 - $t0, $t2 - $t1));
is($primary->safe_psql('postgres', $SELF_SET
	  . "SELECT count(*) FROM t a WHERE a.id > $from AND NOT EXISTS (SELECT 1 FROM t b WHERE b.u = a.u)"),
	'0', 'every row of the log is found through the uuid index');
my ($rc, $stdout, $stderr) = $primary->psql('postgres', $checks);
is($rc, 0, 'and the indexes verify') or diag($stderr);

$primary->stop;
note(sprintf('150_hash_pm took %.1f s', time() - $t_begin));
done_testing();
