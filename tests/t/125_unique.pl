# Unique indexes of the ordered access methods across sessions and crashes, as btree behaves:
# an insert of a value another transaction has inserted (or deleted) and not yet ended waits
# for it, then fails if it committed and goes ahead if it rolled back; two sessions inserting
# and deleting over a few hundred values, or racing to insert each of 20,000 values, never
# leave a value twice; and an uncommitted insert
# that a crash left in the pool neither blocks the value afterwards nor lets a committed one
# be inserted again.
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
my $node = pm_node('unique', 'max_prepared_transactions = 2');
my @ams = ordered_ams($node);

# Session $a runs $first in a transaction it keeps open; session $b's $second must then wait
# for that transaction's lock (the unique check's wait: checked as $what) until $a runs $end.
# Returns whether $b's statement failed, and what it printed to stderr.
sub second_waits_for_first
{
	my ($a, $b, $first, $second, $end, $what) = @_;
	$a->query_safe("BEGIN; $first");
	$b->query_until(qr/waiting/, "\\echo waiting\n$second;\n");
	ok( $node->poll_query_until(
			'postgres',
			"SELECT count(*) > 0 FROM pg_locks WHERE locktype = 'transactionid' AND NOT granted"),
		$what);
	$a->query_safe($end);
	my (undef, $failed) = $b->query('SELECT 1');
	my $stderr = $b->{stderr};
	$b->{stderr} = '';
	return ($failed, $stderr);
}

for my $am (@ams)
{
	$node->safe_psql(
		'postgres', qq{
		DROP TABLE IF EXISTS t;
		CREATE TABLE t (k int4, s text);
		CREATE UNIQUE INDEX t_k ON t USING $am (k);
		INSERT INTO t VALUES (10, 'committed');});

	my $a = $node->background_psql('postgres', on_error_stop => 0);
	my $b = $node->background_psql('postgres', on_error_stop => 0);

	# two inserts at once, the first pausing between its check and its entry: the second comes
	# in there, and waits for the first to enter and commit
	my $slow = $node->background_psql('postgres', on_error_stop => 0);
	$slow->query_safe('SET pm_index.debug_unique_pause = 2000');
	$slow->query_until(qr/pausing/, "\\echo pausing\nINSERT INTO t VALUES (3, 'slow');\n");
	usleep(500_000);
	my ($out, $failed) = $b->query("INSERT INTO t VALUES (3, 'b')");
	ok($failed && $b->{stderr} =~ /Key \(k\)=\(3\) already exists/,
		"$am: an insert that comes in while another of the value is between check and entry fails")
	  or diag($b->{stderr});
	$b->{stderr} = '';
	($out, $failed) = $slow->query('SELECT 1');
	ok(!$failed, "$am: ... and the paused one succeeds") or diag($slow->{stderr});
	$slow->quit;
	$node->safe_psql('postgres', 'DELETE FROM t WHERE k = 3');

	# the first inserter commits: the second fails once it has
	my $stderr;
	($failed, $stderr) = second_waits_for_first($a, $b, "INSERT INTO t VALUES (1, 'a')",
		"INSERT INTO t VALUES (1, 'b')", 'COMMIT',
		"$am: an insert of a value an open transaction inserted waits");
	ok($failed && $stderr =~ /duplicate key value violates unique constraint "t_k".*Key \(k\)=\(1\) already exists/s,
		"$am: ... and fails with btree's error once that transaction commits")
	  or diag($stderr);

	# the first inserter rolls back: the second goes ahead
	($failed, $stderr) = second_waits_for_first($a, $b, "INSERT INTO t VALUES (2, 'a')",
		"INSERT INTO t VALUES (2, 'b')", 'ROLLBACK', "$am: a second insert waits again");
	ok(!$failed, "$am: ... and succeeds once that transaction rolls back") or diag($stderr);

	# a delete not yet committed: the insert waits, then goes ahead
	($failed, $stderr) = second_waits_for_first($a, $b, 'DELETE FROM t WHERE k = 10',
		"INSERT INTO t VALUES (10, 'b')", 'COMMIT',
		"$am: an insert of a value an open transaction deleted waits");
	ok(!$failed, "$am: ... and succeeds once the delete commits") or diag($stderr);
	$a->quit;
	$b->quit;
	is( $node->safe_psql(
			'postgres', $BY_INDEX . 'SELECT string_agg(k || s, \',\' ORDER BY k) FROM t'),
		'1a,2b,10b',
		"$am: the index holds the rows the heap does");
}

# Two sessions insert, delete and move random values of a small domain; every unique violation
# is expected, anything else is recorded.
$node->safe_psql(
	'postgres', q{
	CREATE TABLE errors (msg text);
	CREATE PROCEDURE churn(tab text, rounds int) LANGUAGE plpgsql AS $$
	BEGIN
	  FOR i IN 1 .. rounds LOOP
	    BEGIN
	      IF random() < 0.6 THEN
	        EXECUTE format('INSERT INTO %I VALUES ($1)', tab) USING (random() * 300)::int;
	      ELSIF random() < 0.5 THEN
	        EXECUTE format('UPDATE %I SET k = $1 WHERE k = $2', tab) USING (random() * 300)::int, (random() * 300)::int;
	      ELSE
	        EXECUTE format('DELETE FROM %I WHERE k = $1', tab) USING (random() * 300)::int;
	      END IF;
	    EXCEPTION WHEN unique_violation OR deadlock_detected THEN NULL;
	      WHEN OTHERS THEN INSERT INTO errors VALUES (SQLSTATE || ': ' || SQLERRM);
	    END;
	    COMMIT;
	  END LOOP;
	END $$;
	-- values 1 to n in order, one transaction each: two sessions race for every value
	CREATE PROCEDURE race(tab text, n int) LANGUAGE plpgsql AS $$
	BEGIN
	  FOR v IN 1 .. n LOOP
	    BEGIN
	      EXECUTE format('INSERT INTO %I VALUES ($1)', tab) USING v;
	    EXCEPTION WHEN unique_violation THEN NULL;
	      WHEN OTHERS THEN INSERT INTO errors VALUES (SQLSTATE || ': ' || SQLERRM);
	    END;
	    COMMIT;
	  END LOOP;
	END $$;});
for my $am (@ams)
{
	$node->safe_psql(
		'postgres', qq{
		DROP TABLE IF EXISTS c_$am;
		CREATE TABLE c_$am (k int4);
		CREATE UNIQUE INDEX ON c_$am USING $am (k);});
	for my $call ("churn('c_$am', 4000)", "race('c_$am', 20000)")
	{
		my @workers;
		for my $session (1 .. 2)
		{
			my ($out, $err) = ('', '');
			push @workers, [ psql_start($node, \$out, \$err, setseed($session), "CALL $call"), \$err ];
		}
		for my $w (@workers)
		{
			$w->[0]->finish;
			is(${ $w->[1] }, '', "$am: CALL $call ends without an error");
		}
		is( $node->safe_psql(
				'postgres', "SELECT count(*) FROM (SELECT k FROM c_$am GROUP BY k HAVING count(*) > 1) d"),
			'0',
			"$am: after two sessions' CALL $call no value is there twice");
		is( $node->safe_psql('postgres', $BY_INDEX . "SELECT count(*), sum(k) FROM c_$am WHERE k >= 0"),
			$node->safe_psql('postgres', $BY_HEAP . "SELECT count(*), sum(k) FROM c_$am WHERE k >= 0"),
			"$am: ... and the index answers as the heap");
	}
}
is($node->safe_psql('postgres', 'SELECT string_agg(msg, E\'\n\') FROM errors'), '', 'no unexpected error');

# A crash with an uncommitted insert in the pool (kill -9 keeps what was written to it): with
# the insert's WAL flushed before the crash (redo recreates its heap tuple, which is dead) or
# not (no heap tuple: the next row into the table takes the heap item the entry names), and
# with the indexes loaded by workers at startup or by their first insert, after its heap tuple
for my $case ([ 'flushed', 2 ], [ 'not flushed', 2 ], [ 'not flushed', 0 ])
{
	my ($wal, $workers) = @$case;
	$node->append_conf(
		'postgresql.conf', 'wal_writer_delay = ' . ($wal eq 'flushed' ? '200ms' : '10s') . "
		pm_index.startup_load_workers = $workers");
	$node->reload;
	for my $am (@ams)
	{
		$node->safe_psql(
			'postgres', qq{
			DROP TABLE IF EXISTS k_$am;
			CREATE TABLE k_$am (k int4);
			CREATE UNIQUE INDEX k_${am}_k ON k_$am USING $am (k);
			INSERT INTO k_$am VALUES (1);});
	}
	# and a transaction prepared before the kill, whose rows keep their entries
	$node->safe_psql('postgres',
		'BEGIN; ' . join('; ', map { "INSERT INTO k_$_ VALUES (3)" } @ams) . "; PREPARE TRANSACTION 'p'");
	my $open = $node->background_psql('postgres', on_error_stop => 0);
	$open->query_safe('BEGIN; ' . join('; ', map { "INSERT INTO k_$_ VALUES (2)" } @ams));
	# a commit flushes the WAL before it, the open transaction's inserts too
	$node->safe_psql('postgres', 'SELECT txid_current()') if $wal eq 'flushed';
	$node->kill9;
	$open->quit;
	start_after_kill($node);
	# the first inserts reconcile the indexes while the prepared transaction is open
	my %first_insert;
	for my $am (@ams)
	{
		my ($rc, $out, $err) = $node->psql('postgres', "INSERT INTO k_$am VALUES (2)");
		$first_insert{$am} = [ $rc, $err ];
	}
	$node->safe_psql('postgres', "COMMIT PREPARED 'p'");
	for my $am (@ams)
	{
		my $what = "$am, WAL $wal, $workers workers";
		is($first_insert{$am}[0], 0, "$what: after a crash, the value an uncommitted insert had is free")
		  or diag($first_insert{$am}[1]);
		my ($rc, $out, $err) = $node->psql('postgres', "INSERT INTO k_$am VALUES (1)");
		like($err, qr/duplicate key value violates unique constraint "k_${am}_k"/,
			"$what: ... and a committed value is still taken");
		my $rows = "SELECT string_agg(k::text || '\@' || ctid::text, ',' ORDER BY k) FROM k_$am WHERE k > 0";
		is($node->safe_psql('postgres', $BY_INDEX . $rows),
			$node->safe_psql('postgres', $BY_HEAP . $rows),
			"$what: the index holds the committed rows, each once, the prepared one too");
		is($node->safe_psql('postgres', "SELECT count(*) FROM k_$am"), '3', "$what: three rows");
	}
}

done_testing();
