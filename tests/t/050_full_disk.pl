# A full pool filesystem: the pool directory on a 32 MB tmpfs that tests/run mounts (root only;
# PM_SMALL_FS names it).  Filling it during inserts and during CREATE INDEX gives a disk-full
# ERROR with a HINT, the transaction rolls back, the index still verifies, and space freed by
# VACUUM or DROP INDEX lets the work continue.  Every access method, and a tiered nbtree_pm
# index; hash_pm's and the tiered index's inserts go through their operation logs, which the
# replay workers apply.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use FindBin;
use lib "$FindBin::Bin/../lib";
use PmNode;

plan skip_all => 'PM_SMALL_FS is not set (tests/run mounts a small filesystem when run as root)'
  unless $ENV{PM_SMALL_FS};

my $pool_dir = "$ENV{PM_SMALL_FS}/pools";
mkdir($pool_dir) or die "mkdir $pool_dir: $!";

my $node = pm_node('full_disk', "pm_index.pool_dir = '$pool_dir'");

my $disk_full = qr/ERROR:  .*\Q$pool_dir\E.*No space left on device/;
my $disk_full_hint = qr/HINT:  Free space in the filesystem of pm_index\.pool_dir\./;

# The pool files in the directory, leftovers of failed creations included.
sub pool_files
{
	opendir(my $dh, $pool_dir) or die "opendir $pool_dir: $!";
	my @files = sort grep { !/^\./ } readdir($dh);
	closedir($dh);
	return join(' ', @files);
}

sub live_pools
{
	my $names = $node->safe_psql(
		'postgres', q{
		SELECT string_agg(format('%s_%s_%s.pmpool', 1663, d.oid, pg_relation_filenode(c.oid)), ' '
		                  ORDER BY 1)
		  FROM pg_class c JOIN pg_am a ON a.oid = c.relam, pg_database d
		 WHERE a.amname LIKE '%_pm' AND d.datname = current_database()});
	return join(' ', sort split(/ /, $names));
}

$node->safe_psql('postgres',
	'CREATE TABLE ballast (k int8); INSERT INTO ballast SELECT generate_series(1, 300000)');

# Each access method: insert 100,000-row batches until the filesystem is full.
my @ordered = ordered_ams($node);
my %am = (
	(
		map {
			(
				$_ => {
					column => 'k int8',
					rows => 'SELECT (random() * 1e15)::int8 FROM generate_series(1, N)',
					check => "SELECT ${_}_check('fill_${_}_idx', true)",
					probe => "SELECT count(*) FROM fill_$_ WHERE k >= 0"
				})
		} @ordered
	),
	fbrtree_pm => {
		column => 'k point',
		rows => 'SELECT point(random() * 1000, random() * 1000) FROM generate_series(1, N)',
		check => "SELECT fbrtree_pm_check('fill_fbrtree_pm_idx', true)",
		probe => q{SELECT count(*) FROM fill_fbrtree_pm WHERE k <@ box '((0,0),(1000,1000))'}
	},
	# every insert through its operation log, applied by the replay workers
	hash_pm => {
		column => 'k int8',
		rows => 'SELECT (random() * 1e15)::int8 FROM generate_series(1, N)',
		check => "SELECT hash_pm_check('fill_hash_pm_idx', true)",
		probe => 'SELECT count(*) FROM fill_hash_pm WHERE k IS NOT NULL',
		logged => 1
	},
	nbtree_pm_tiered => {
		using => 'nbtree_pm (k) WITH (tiered = on)',
		column => 'k int8',
		rows => 'SELECT (random() * 1e15)::int8 FROM generate_series(1, N)',
		check => "SELECT nbtree_pm_check('fill_nbtree_pm_tiered_idx', true)",
		probe => 'SELECT count(*) FROM fill_nbtree_pm_tiered WHERE k >= 0',
		logged => 1
	});

# The access method's verifier passes (a test, so that a failure does not stop the others').
sub verifies
{
	my ($am, $what) = @_;
	my ($ret, $stdout, $stderr) = $node->psql('postgres', $am{$am}{check});
	is($ret, 0, "$am: $what: the index verifies") or diag($stderr);
	return;
}

sub fill
{
	my ($am) = @_;
	my $t = "fill_$am";
	my $insert = sub {
		my ($n) = @_;
		(my $rows = $am{$am}{rows}) =~ s/N/$n/;
		return $node->psql('postgres', "INSERT INTO $t $rows");
	};
	# a ballast index whose space DROP INDEX gives back below
	$node->safe_psql('postgres', "CREATE INDEX ballast_k ON ballast USING nbtree_pm (k)");
	$node->safe_psql('postgres',
		"CREATE TABLE $t ($am{$am}{column}); CREATE INDEX ${t}_idx ON $t USING " . ($am{$am}{using} // "$am (k)"));

	my ($ret, $stdout, $stderr, $batches) = (0, '', '', 0);
	while ($ret == 0 && $batches < 60)
	{
		($ret, $stdout, $stderr) = $insert->(100_000);
		$batches++;
	}
	isnt($ret, 0, "$am: inserts stop once the pool filesystem is full ($batches batches)");
	like($stderr, $disk_full, "$am: the error names the pool file and says the disk is full");
	like($stderr, $disk_full_hint, "$am: with a HINT");
	my $rows = $node->safe_psql('postgres', "SELECT count(*) FROM $t");
	is($rows, 100_000 * ($batches - 1), "$am: the failed batch was rolled back");
	return fill_logged_after($am, $t, $insert) if $am{$am}{logged};
	verifies($am, 'after the filesystem filled');
	is($node->safe_psql('postgres', $BY_INDEX . $am{$am}{probe}),
		$rows, "$am: the index verifies and answers like the heap");

	# VACUUM frees the index entries of deleted rows; new rows reuse their space.
	($ret, $stdout, $stderr) = $node->psql('postgres', "DELETE FROM $t WHERE random() < 0.5; VACUUM $t");
	is($ret, 0, "$am: DELETE and VACUUM work on the full filesystem") or diag($stderr);
	($ret, $stdout, $stderr) = $insert->(50_000);
	is($ret, 0, "$am: after DELETE and VACUUM, inserts fit again") or diag($stderr);
	verifies($am, 'after DELETE, VACUUM and inserts');
	is( $node->safe_psql('postgres', $BY_INDEX . $am{$am}{probe}),
		$node->safe_psql('postgres', "SELECT count(*) FROM $t"),
		"$am: the index answers like the heap after VACUUM and more inserts");

	# DROP INDEX gives the ballast's space back.
	$node->safe_psql('postgres', 'DROP INDEX ballast_k');
	($ret, $stdout, $stderr) = $insert->(20_000);
	is($ret, 0, "$am: after DROP INDEX, inserts fit again") or diag($stderr);
	verifies($am, 'after DROP INDEX and inserts');
	$node->safe_psql('postgres', "DROP TABLE $t");
	is(pool_files(), '', "$am: no pool file is left after DROP TABLE");
	return;
}
# An index whose inserts go through its operation log, after they filled the filesystem: the
# records its workers could not apply wait in its log, and applying them (which VACUUM and the
# verifier do first) needs room in the pool, so it comes back once space is freed elsewhere (DROP
# INDEX), not through its own VACUUM
sub fill_logged_after
{
	my ($am, $t, $insert) = @_;
	$node->safe_psql('postgres', 'DROP INDEX ballast_k');
	ok( $node->poll_query_until(
			'postgres', "SELECT waiting_entries = 0 FROM pm_index_tier_lag('${t}_idx')"),
		"$am: once space is freed, the workers apply what waited");
	verifies($am, 'after the filesystem filled and space was freed');
	is( $node->safe_psql('postgres', $BY_INDEX . $am{$am}{probe}),
		$node->safe_psql('postgres', "SELECT count(*) FROM $t"),
		"$am: the index answers like the heap");
	my ($ret, $stdout, $stderr) = $node->psql('postgres', "DELETE FROM $t WHERE random() < 0.5; VACUUM $t");
	is($ret, 0, "$am: DELETE and VACUUM work") or diag($stderr);
	($ret, $stdout, $stderr) = $insert->(50_000);
	is($ret, 0, "$am: after DELETE and VACUUM, inserts fit again") or diag($stderr);
	verifies($am, 'after DELETE, VACUUM and inserts');
	is( $node->safe_psql('postgres', $BY_INDEX . $am{$am}{probe}),
		$node->safe_psql('postgres', "SELECT count(*) FROM $t"),
		"$am: the index answers like the heap after VACUUM and more inserts");
	$node->safe_psql('postgres', "DROP TABLE $t");
	is(pool_files(), '', "$am: no pool file is left after DROP TABLE");
	# a dropped pool's space comes back when the last process mapping it lets it go: the
	# replay workers let it go between rounds
	my $free = sub { (split /\s+/, `df -k --output=avail $pool_dir | tail -n 1`)[-1] };
	my $waited = 0;
	while ($free->() < 28_000 && $waited < 50)
	{
		usleep(100_000);
		$waited++;
	}
	ok($waited < 50, "$am: the dropped pool's space is free again within 5 s");
	diag(sprintf('%s: the space came back %.1f s after DROP TABLE', $am, $waited / 10));
	return;
}

# (the logged ones after the CREATE INDEX cases below: their replay workers apply in the
# background, and a failure of their own must not take the filesystem from the others' cases)
fill($_) for grep { !$am{$_}{logged} } sort keys %am;

# CREATE INDEX of each ordered access method and of hash_pm on more rows than the filesystem
# holds: ERROR, nothing left behind; with fewer rows it works.
for my $am (@ordered, 'hash_pm')
{
	$node->safe_psql('postgres',
		'CREATE TABLE big (k int8); INSERT INTO big SELECT generate_series(1, 3000000)');
	my ($ret, $stdout, $stderr) =
	  $node->psql('postgres', "CREATE INDEX big_k ON big USING $am (k)");
	isnt($ret, 0, "$am: CREATE INDEX fails when the pool filesystem fills");
	like($stderr, $disk_full, "$am: CREATE INDEX: the error names the pool file and says the disk is full");
	like($stderr, $disk_full_hint, "$am: CREATE INDEX: with a HINT");
	is(pool_files(), live_pools(), "$am: the failed CREATE INDEX left no pool file behind");
	is($node->safe_psql('postgres', "SELECT count(*) FROM pg_class WHERE relname = 'big_k'"),
		'0', "$am: the failed CREATE INDEX rolled back");

	$node->safe_psql('postgres', 'DELETE FROM big WHERE k > 500000; VACUUM big');
	$node->safe_psql('postgres', "CREATE INDEX big_k ON big USING $am (k)");
	my $all = $am eq 'hash_pm' ? 'k IS NOT NULL' : 'k > 0';
	is($node->safe_psql('postgres', $BY_INDEX . "SELECT count(*) FROM big WHERE $all"),
		'500000', "$am: CREATE INDEX works once the rows fit");
	is(pool_files(), live_pools(), "$am: only the live indexes have pool files");
	$node->safe_psql('postgres', 'DROP TABLE big');
}
fill($_) for grep { $am{$_}{logged} } sort keys %am;
unlike(slurp_file($node->logfile), qr/terminated by signal|PANIC/, 'no backend crashed');

$node->stop;
done_testing();
