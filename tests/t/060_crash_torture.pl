# Crash torture: 2 pgbench clients insert, update, delete, VACUUM and try duplicates in a table
# with an nbtree_pm, an fbrtree_pm, a phast_pm, a unique nbtree_pm text index, a
# multicolumn nbtree_pm index (an expression DESC, text, int8), a hash_pm index on an
# expression (its inserts through its operation log, applied by the replay workers), and tiered
# nbtree_pm and fbrtree_pm indexes on expressions (WITH (tiered = on)); the server is
# killed at random moments (SIGKILL of the postmaster, pg_ctl stop -m immediate and SIGKILL of
# one pgbench backend in turn, synchronous_commit on and off in turn).  After every restart the
# indexes verify against the heap (heapallindexed), 250 random predicates answer by index scan
# exactly what they answer by sequential scan, no TID comes back twice and no value of the
# unique index is in two rows.
# Then the targeted kills: during CREATE INDEX, REINDEX CONCURRENTLY and VACUUM, and inside an
# nbtree_pm leaf SMO, a phast_pm LNode split and an fbrtree_pm split
# (pm_index.debug_smo_pause), by SIGKILL of the postmaster and of the backend alone.
#
# PM_TORTURE_CYCLES sets the random cycles (10 here; tests/torture runs 100).  The last line
# of the output sums up: cycles, transactions acknowledged before the kills, violations.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use Time::HiRes qw(usleep);
use FindBin;
use lib "$FindBin::Bin/../lib";
use PmNode;

my $cycles = $ENV{PM_TORTURE_CYCLES} || 10;

test_seed();
my $node = pm_node('torture', 'autovacuum = off', 'restart_after_crash = on');
$node->safe_psql(
	'postgres', setseed() . q{
	CREATE TABLE tt (id bigserial, k int8, p point, q int8, u text COLLATE "C");
	CREATE INDEX tt_k ON tt USING nbtree_pm (k);
	CREATE INDEX tt_p ON tt USING fbrtree_pm (p);
	CREATE INDEX tt_q ON tt USING phast_pm (q);
	CREATE INDEX tt_nq ON tt USING nvbtree_pm ((-q));
	CREATE UNIQUE INDEX tt_u ON tt USING nbtree_pm (u);
	CREATE INDEX tt_m ON tt USING nbtree_pm ((k % 97) DESC, u, q);
	CREATE INDEX tt_h ON tt USING hash_pm ((k % 1009));
	CREATE INDEX tt_kt ON tt USING nbtree_pm ((k * 2)) WITH (tiered = on);
	CREATE INDEX tt_pt ON tt USING fbrtree_pm (box(p, p)) WITH (tiered = on);
	INSERT INTO tt (k, p, q, u) SELECT r, point(random() * 1000, random() * 1000), r, md5(r::text || random())
	  FROM (SELECT (random() * 1e6)::int8 AS r FROM generate_series(1, 20000)) s;
	-- a second row for a value the table has: the unique index refuses it (unless the row
	-- holding it is being deleted or updated, when it waits, or dead)
	CREATE FUNCTION insert_duplicate(from_k int8) RETURNS void LANGUAGE plpgsql AS $$
	BEGIN
	  INSERT INTO tt (k, p, q, u) SELECT k, p, q, u FROM tt WHERE k >= from_k ORDER BY k LIMIT 1;
	EXCEPTION WHEN unique_violation THEN NULL;
	END $$;});

my $dir = $node->basedir;
my %scripts = (
	insert => q{\set k random(1, 1000000)
INSERT INTO tt (k, p, q, u) SELECT :k + g, point(random() * 1000, random() * 1000), :k + g, md5(:k + g || random()::text) FROM generate_series(1, 20) g;},
	update => q{\set k random(1, 1000000)
UPDATE tt SET k = k + 1, q = q + 1, p = point(p[0], (p[1] + 1)::numeric % 1000), u = u || 'x' WHERE id IN (SELECT id FROM tt WHERE k >= :k ORDER BY k LIMIT 5);},
	duplicate => q{\set k random(1, 1000000)
SELECT insert_duplicate(:k);},
	delete => q{\set k random(1, 1000000)
DELETE FROM tt WHERE id IN (SELECT id FROM tt WHERE k >= :k ORDER BY k LIMIT 10);},
	vacuum => 'VACUUM tt;');
my %weight = (insert => 10, update => 5, delete => 4, vacuum => 1, duplicate => 2);
my @pgbench_scripts;
for my $name (sort keys %scripts)
{
	append_to_file("$dir/$name.sql", $scripts{$name} . "\n");
	push @pgbench_scripts, '-f', "$dir/$name.sql\@$weight{$name}";
}

# SIGKILL of the postmaster (and of $pid with it), pg_ctl stop -m immediate, or SIGKILL of the
# backend $pid alone (a pgbench one if none is given), after which the postmaster restarts all.
sub kill_server
{
	my ($how, $pid) = @_;
	if ($how eq 'backend')
	{
		my $log_offset = -s $node->logfile;
		$pid //= $node->safe_psql('postgres',
			"SELECT pid FROM pg_stat_activity WHERE application_name = 'pgbench' ORDER BY state = 'active' DESC LIMIT 1");
		if ($pid ne '')
		{
			kill 'KILL', $pid;
			$node->wait_for_log(qr/all server processes terminated; reinitializing/, $log_offset);
			$node->poll_query_until('postgres', 'SELECT 1', '1');
			return;
		}
		$how = 'SIGKILL';		# no pgbench backend left to kill: the whole server then
	}
	if ($how eq 'SIGKILL')
	{
		$node->kill9;
		kill 'KILL', $pid if $pid;
	}
	else
	{
		$node->stop('immediate');
	}
	start_after_kill($node);
	return;
}

# 300 predicates, 50 each on k (nbtree_pm), on q (phast_pm; the same values), on -q
# (nvbtree_pm) and on p (fbrtree_pm windows), 20 on u (a unique text index), 20 on k % 97 and u or q (the
# multicolumn index), 20 on k % 1009 (hash_pm: = and = ANY), 20 each on k * 2 and box(p, p)
# (the tiered indexes), each with count and sum(id): what the indexes answer must be what the
# heap answers.
my @predicates;
for my $i (1 .. 50)
{
	my $a = int(rand(1_000_000));
	for my $c ('k', 'q')
	{
		push @predicates,
		  $i % 3 == 0 ? "$c = $a" : "$c BETWEEN $a AND " . ($a + int(rand(50_000)));
	}
	push @predicates, $i % 3 == 0 ? "-q = -$a" : "-q BETWEEN -" . ($a + int(rand(50_000))) . " AND -$a";
	my ($x, $y, $w) = (rand(1000), rand(1000), 1 + rand(200));
	push @predicates,
	  sprintf("p <@ box '((%.3f,%.3f),(%.3f,%.3f))'", $x, $y, $x + $w, $y + $w);
	push @predicates, sprintf("u >= '%x' AND u < '%x'", $i * 300, $i * 300 + 7) if $i <= 20;
	push @predicates,
	  $i % 2 ? sprintf("k %% 97 = %d AND u < '%x'", $i, $i * 700)
	  : sprintf("k %% 97 BETWEEN %d AND %d AND q > %d", $i, $i + 3, $a)
	  if $i <= 20;
	push @predicates,
	  $i % 2 ? sprintf("k %% 1009 = %d", $a % 1009)
	  : sprintf("k %% 1009 = ANY (ARRAY[%d, %d, %d])", $a % 1009, ($a + 337) % 1009, -1)
	  if $i <= 20;
	next if $i > 20;
	push @predicates, sprintf('k * 2 BETWEEN %d AND %d', 2 * $a, 2 * $a + int(rand(100_000)));
	push @predicates, sprintf("box(p, p) && box '((%.3f,%.3f),(%.3f,%.3f))'", $y, $x, $y + $w, $x + $w);
}
my $probe = join("\n",
	map { "SELECT count(*), coalesce(sum(id), 0) FROM tt WHERE $_;" } @predicates);

# The checks after a restart; returns the problems found (diag'ed).
sub verify
{
	my ($what) = @_;
	my @problems;
	my ($rc, $stdout, $stderr) = $node->psql('postgres',
		"SELECT nbtree_pm_check('tt_k', true); SELECT fbrtree_pm_check('tt_p', true); SELECT phast_pm_check('tt_q', true);"
		  . " SELECT nvbtree_pm_check('tt_nq', true); SELECT nbtree_pm_check('tt_u', true); SELECT nbtree_pm_check('tt_m', true);"
		  . " SELECT hash_pm_check('tt_h', true); SELECT nbtree_pm_check('tt_kt', true);"
		  . " SELECT fbrtree_pm_check('tt_pt', true);");
	push @problems, "check: $stderr" if $rc != 0;
	my $by_index = $node->safe_psql('postgres', "$BY_INDEX\n$probe");
	my $by_heap = $node->safe_psql('postgres', "$BY_HEAP\n$probe");
	if ($by_index ne $by_heap)
	{
		my @i = split /\n/, $by_index;
		my @h = split /\n/, $by_heap;
		for my $n (0 .. $#predicates)
		{
			push @problems, "$predicates[$n]: by index $i[$n], by heap $h[$n]"
			  if ($i[$n] // '') ne ($h[$n] // '');
		}
	}
	my $twice = $node->safe_psql(
		'postgres', $BY_INDEX . q{
		SELECT count(*) - count(DISTINCT ctid) FROM tt WHERE k >= 0;
		SELECT count(*) - count(DISTINCT ctid) FROM tt WHERE p <@ box '((0,0),(1000,1000))';
		SELECT count(*) - count(DISTINCT ctid) FROM tt WHERE k % 1009 = ANY (ARRAY(SELECT generate_series(0, 1008)));});
	push @problems, "TIDs returned twice: $twice" if $twice ne "0\n0\n0";
	# the unique index kept the values unique through the kills (its check is all that does)
	my $dups = $node->safe_psql('postgres', "$BY_HEAP\nSELECT count(*) - count(DISTINCT u) FROM tt");
	push @problems, "values of the unique index twice: $dups" if $dups ne '0';
	diag("$what: $_") for @problems;
	return scalar(@problems);
}

# ---- random kills under load ----
my ($violations, $acknowledged) = (0, 0);
for my $cycle (1 .. $cycles)
{
	my $async = $cycle % 2 == 0;
	my $how = ('SIGKILL', 'immediate', 'backend')[ $cycle % 3 ];
	$node->safe_psql('postgres',
		"ALTER SYSTEM SET synchronous_commit = " . ($async ? "'off'" : "'on'") . "; SELECT pg_reload_conf();");
	my ($out, $err) = ('', '');
	my $pgbench = IPC::Run::start(
		[
			'pgbench', '-n', '-c', '2', '-j', '2', '-T', '60', @pgbench_scripts,
			'-h', $node->host, '-p', $node->port, 'postgres'
		],
		'>', \$out, '2>', \$err);
	usleep(500_000 + int(rand(2_000_000)));
	kill_server($how);
	$pgbench->finish;
	$acknowledged += $1 if $out =~ /number of transactions actually processed: (\d+)/;
	$violations += verify("cycle $cycle ($how, synchronous_commit " . ($async ? 'off' : 'on') . ')');
}
$node->safe_psql('postgres', 'ALTER SYSTEM RESET synchronous_commit; SELECT pg_reload_conf();');
is($violations, 0,
	"$cycles kills under insert/update/delete/VACUUM load: every restart verifies, index scans answer 250 predicates as the heap does, no TID twice, no value of the unique index twice"
);
cmp_ok($acknowledged, '>', 0, "the load ran ($acknowledged transactions acknowledged)");

# ---- targeted kills ----

# Run the statements (one psql -c each) in the background, wait until $ready_sql returns 't'
# (at most 60 s), kill the server with $how; returns whether they were caught in the act.
sub kill_during
{
	my ($statements, $ready_sql, $how) = @_;
	my ($out, $err) = ('', '');
	my $h = psql_start($node, \$out, \$err, @$statements);
	my $caught = 0;
	for (1 .. 3000)
	{
		last if !$h->pumpable;
		if ($node->safe_psql('postgres', $ready_sql) eq 't')
		{
			$caught = 1;
			last;
		}
		usleep(20_000);
	}
	kill_server($how);
	$h->finish;
	return $caught;
}

# An expression index whose function sleeps now and then makes the build last a few seconds,
# long enough to be killed in the middle of it.
$node->safe_psql(
	'postgres', q{
	CREATE FUNCTION slow_id(int8) RETURNS int8 IMMUTABLE LANGUAGE plpgsql AS
	  $$ BEGIN IF $1 % 500 = 0 THEN PERFORM pg_sleep(0.001); END IF; RETURN $1; END $$;
	CREATE TABLE big (k int8);
	INSERT INTO big SELECT g FROM generate_series(1, 500000) g;});
my $pools_before = $node->safe_psql('postgres', 'SELECT count(*) FROM pm_index_pools()');
my $building = "SELECT EXISTS (SELECT 1 FROM pg_stat_progress_create_index WHERE blocks_done > 100)";
ok( kill_during(
		['CREATE INDEX big_k ON big USING nbtree_pm (slow_id(k))'], $building, 'SIGKILL'),
	'killed during CREATE INDEX');
is($node->safe_psql('postgres', "SELECT count(*) FROM pg_class WHERE relname = 'big_k'"),
	'0', 'the CREATE INDEX was rolled back');
ok( $node->poll_query_until(
		'postgres', 'SELECT count(*) FROM pm_index_pools()', $pools_before),
	'and its pool was swept at startup');
is(verify('after CREATE INDEX'), 0, 'the other indexes verify');

my $count_by_index = $BY_INDEX . 'SELECT count(*) FROM big WHERE slow_id(k) >= 0';
my $count_by_heap = $BY_HEAP . 'SELECT count(*) FROM big WHERE slow_id(k) >= 0';
$node->safe_psql('postgres', 'CREATE INDEX big_k ON big USING nbtree_pm (slow_id(k))');
ok(kill_during(['REINDEX INDEX CONCURRENTLY big_k'], $building, 'immediate'),
	'killed during REINDEX CONCURRENTLY');
# PostgreSQL leaves the unfinished copy as an invalid index; dropping it is the DBA's cleanup.
my $leftover = $node->safe_psql('postgres',
	"SELECT string_agg(c.relname, ',') FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE NOT i.indisvalid");
$node->safe_psql('postgres', "DROP INDEX $_") for grep { $_ ne '' } split /,/, $leftover;
$node->safe_psql('postgres', "SELECT nbtree_pm_check('big_k', true)");
is($node->safe_psql('postgres', $count_by_index),
	'500000', 'after it the index verifies and counts every row');

# The cost delay stretches VACUUM's heap passes; the kill lands after the index pass or in it.
$node->safe_psql('postgres', 'DELETE FROM big WHERE k % 2 = 0');
ok( kill_during(
		[ "SET vacuum_cost_delay = '20ms'", 'SET vacuum_cost_limit = 10', 'VACUUM big' ],
		"SELECT EXISTS (SELECT 1 FROM pg_stat_progress_vacuum WHERE phase IN ('vacuuming indexes', 'vacuuming heap'))",
		'SIGKILL'),
	'killed during VACUUM');
$node->safe_psql('postgres', "SELECT nbtree_pm_check('big_k', true)");
is($node->safe_psql('postgres', $count_by_index),
	$node->safe_psql('postgres', $count_by_heap),
	'after it the index verifies and counts what the heap counts');
$node->safe_psql('postgres', 'VACUUM big');
$node->safe_psql('postgres', "SELECT nbtree_pm_check('big_k', true)");
is($node->safe_psql('postgres', $count_by_index), '250000', 'and a VACUUM after it too');

# Inside a structure modification: the backend that splits an nbtree_pm leaf (or an fbrtree_pm
# node, or merges nvbtree_pm leaves) sleeps where a crash leaves the most to repair; then the
# postmaster and that backend are killed together, or the backend alone (the postmaster then
# restarts the rest).
$node->safe_psql(
	'postgres', q{
	CREATE TABLE smo_n (k int8); CREATE INDEX smo_n_k ON smo_n USING nbtree_pm (k);
	CREATE TABLE smo_f (p point); CREATE INDEX smo_f_p ON smo_f USING fbrtree_pm (p);
	CREATE TABLE smo_q (q int8); CREATE INDEX smo_q_q ON smo_q USING phast_pm (q);
	CREATE TABLE smo_v (v int8); CREATE INDEX smo_v_v ON smo_v USING nvbtree_pm (v);
	INSERT INTO smo_v SELECT g FROM generate_series(1, 5000) g;
	INSERT INTO smo_n SELECT g FROM generate_series(1, 5000) g;
	INSERT INTO smo_q SELECT g FROM generate_series(1, 5000) g;
	INSERT INTO smo_f SELECT point(g % 71, g % 73) FROM generate_series(1, 5000) g;});
my %smo = (
	'nbtree_pm leaf SMO' => {
		insert => 'INSERT INTO smo_n SELECT 2500 FROM generate_series(1, 200)',
		check => "SELECT nbtree_pm_check('smo_n_k', true)",
		count => 'SELECT count(*) FROM smo_n WHERE k >= 0'
	},
	'phast_pm LNode split' => {
		insert => 'INSERT INTO smo_q SELECT 2500 FROM generate_series(1, 200)',
		check => "SELECT phast_pm_check('smo_q_q', true)",
		count => 'SELECT count(*) FROM smo_q WHERE q >= 0'
	},
	# VACUUM's tidy of an emptied nvbtree_pm leaf merges it into its left neighbour (before it,
	# the rows come back and go again, so that each run has leaves to empty); the split's
	# inserts after it land in merged leaves, half empty: more of them
	'nvbtree_pm merge' => {
		before => 'INSERT INTO smo_v SELECT g FROM generate_series(1000, 3999) g; '
		  . 'DELETE FROM smo_v WHERE v BETWEEN 1000 AND 3999',
		insert => 'VACUUM smo_v',
		check => "SELECT nvbtree_pm_check('smo_v_v', true)",
		count => 'SELECT count(*) FROM smo_v WHERE v >= 0'
	},
	'nvbtree_pm split' => {
		insert => 'INSERT INTO smo_v SELECT 2500 FROM generate_series(1, 500)',
		check => "SELECT nvbtree_pm_check('smo_v_v', true)",
		count => 'SELECT count(*) FROM smo_v WHERE v >= 0'
	},
	'fbrtree_pm split' => {
		insert => 'INSERT INTO smo_f SELECT point(random() * 70, random() * 72) FROM generate_series(1, 500)',
		check => "SELECT fbrtree_pm_check('smo_f_p', true)",
		count => q{SELECT count(*) FROM smo_f WHERE p <@ box '((0,0),(100,100))'}
	});
for my $where (sort keys %smo)
{
	for my $victim ('postmaster', 'backend')
	{
		my $what = "$victim killed inside an $where";
		my $log_offset = -s $node->logfile;
		my ($out, $err) = ('', '');
		$node->safe_psql('postgres', $smo{$where}{before}) if $smo{$where}{before};
		# two -c: VACUUM runs outside a transaction block
		my $h = psql_start($node, \$out, \$err, 'SET pm_index.debug_smo_pause = 60000',
			$smo{$where}{insert});
		ok($node->wait_for_log(qr/pausing 60000 ms inside an \Q$where\E/, $log_offset),
			"$what: a backend is there");
		my ($pid) = substr(slurp_file($node->logfile), $log_offset) =~
		  /\[(\d+)\][^\n]*pausing 60000 ms inside an \Q$where\E/;
		# the postmaster with it, as a power failure would, or the backend alone
		kill_server($victim eq 'postmaster' ? 'SIGKILL' : 'backend', $pid);
		$h->finish;
		my ($rc, $stdout, $stderr) = $node->psql('postgres', $smo{$where}{check});
		is($rc, 0, "$what: the index verifies against the heap") or diag($stderr);
		is( $node->safe_psql('postgres', $BY_INDEX . $smo{$where}{count}),
			$node->safe_psql('postgres', $BY_HEAP . $smo{$where}{count}),
			"$what: it counts what the heap counts");
		$node->safe_psql('postgres', $smo{$where}{insert});
		$node->safe_psql('postgres', $smo{$where}{check});
		is(verify($what), 0, "$what: the torture table's indexes verify too, and it takes more inserts");
	}
}

diag("torture: $cycles cycles, $acknowledged transactions acknowledged, $violations violations");
$node->stop;
done_testing();
