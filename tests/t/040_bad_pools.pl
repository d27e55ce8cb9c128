# Bad pool files and pool directories: every damage gives a clear ERROR that names the file and
# carries a HINT, the server stays up, the other indexes keep working, and REINDEX repairs it.
#
# Files are damaged while the server is stopped, as a bad restore or a failing disk would leave
# them: a running server keeps pools mapped, and changing a mapped file under it is outside what
# pm_index (like PostgreSQL with its relation files) promises to survive; see README Reliability.
# A pool file of another user is refused even when the server could open it: tests/run, as root,
# leaves files of user nobody, writable by all, that the test fills and renames into place.
use strict;
use warnings;
use File::Copy;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/../lib";
use PmNode;

my $node = pm_node('bad_pools');
# The victims: an index of every ordered access method and of hash_pm, each on its own copy of k
# (a scan must reach the index whose pool is named), and an fbrtree_pm index.
my @ordered = ordered_ams($node);
my @keyed = (@ordered, 'hash_pm');
my @victims = ((map { "victim_$_" } @keyed), 'victim_b');
$node->safe_psql(
	'postgres', join(
		"\n", q{
	CREATE TABLE healthy (k int);
	INSERT INTO healthy SELECT generate_series(1, 1000);
	CREATE INDEX healthy_k ON healthy USING nbtree_pm (k);
	CREATE TABLE victim (k int, b box);},
		(map { "ALTER TABLE victim ADD COLUMN k_$_ int GENERATED ALWAYS AS (k) STORED;" } @keyed),
		q{INSERT INTO victim SELECT i, box(point(i, i), point(i + 1, i + 1)) FROM generate_series(1, 1000) i;},
		(map { "CREATE INDEX victim_$_ ON victim USING $_ (k_$_);" } @keyed),
		q{CREATE INDEX victim_b ON victim USING fbrtree_pm (b);}));

my $pool_dir = $node->data_dir . '/pm_index';
my $db = $node->safe_psql('postgres', "SELECT oid FROM pg_database WHERE datname = 'postgres'");
sub pool_of
{
	my ($index) = @_;
	my $filenode = $node->safe_psql('postgres', "SELECT pg_relation_filenode('$index')");
	return "$pool_dir/1663_${db}_$filenode.pmpool";
}

# One query per index that must use it, and its right answer.
my %probe = (
	(map { ("victim_$_" => [ "SELECT count(*) FROM victim WHERE k_$_ <= 500", '500' ]) } @ordered),
	victim_b => [ q{SELECT count(*) FROM victim WHERE b && box '((0,0),(100.5,100.5))'}, '100' ],
	victim_hash_pm => [ 'SELECT count(*) FROM victim WHERE k_hash_pm = ANY (ARRAY[1, 2, 3, 500, 1000, 1001])', '5' ],
	healthy_k => [ 'SELECT count(*) FROM healthy WHERE k <= 10', '10' ]);
my %check = (
	(map { ("victim_$_" => "SELECT ${_}_check('victim_$_', true)") } @keyed),
	victim_b => "SELECT fbrtree_pm_check('victim_b', true)");

# The offset of the n-th mutable header word (size, mode, clean_shutdown, flags), after the
# static part whose last field is its checksum; the layout is pm_pool_header's in pool.h.
sub header_word_offset
{
	my ($n) = @_;
	# magic 8, format_version 4, header_size 4, uuid 16, owner 24, created_mode 4, chunk_size 4,
	# data_offset 8, max_size 8, created_at 8, static_checksum 8
	return 96 + 8 * $n;
}

sub expect_error
{
	my ($what, $stmt, $paths, $error, $hint) = @_;
	my ($ret, $stdout, $stderr) = $node->psql('postgres', $stmt);
	isnt($ret, 0, "$what fails");
	like($stderr, qr/ERROR:  .*(?:$paths)/, "$what: the error names the pool file");
	like($stderr, $error, "$what: the error says what is wrong");
	like($stderr, $hint, "$what: with a HINT");
	return;
}

# Damage every victim index's pool with the server stopped, then show what each statement says.
sub scenario
{
	my (%s) = @_;
	my %pool = map { $_ => pool_of($_) } @victims;
	$node->stop;
	$s{damage}->($pool{$_}) for sort keys %pool;
	$node->start;
	if (defined $s{state})
	{
		is( $node->safe_psql(
				'postgres', "SELECT string_agg(DISTINCT state, ',') FROM pm_index_pools()
				WHERE index::text IN ('" . join("', '", @victims) . "')"),
			$s{state},
			"$s{name}: pm_index_pools() says $s{state}");
	}

	for my $index (@victims)
	{
		my $path = quotemeta($pool{$index});
		expect_error("$s{name}: $index: scan", $BY_INDEX . $probe{$index}[0],
			$path, $s{error}, $s{hint});
		expect_error("$s{name}: $index: check", $check{$index}, $path, $s{error}, $s{hint});
	}
	expect_error("$s{name}: insert", "INSERT INTO victim VALUES (1, box '((1,1),(2,2))')",
		join('|', map { quotemeta } values %pool), $s{error}, $s{hint});
	is($node->safe_psql('postgres', 'SELECT count(*) FROM victim'), '1000',
		"$s{name}: the failed insert was rolled back");
	is($node->safe_psql('postgres', $BY_INDEX . $probe{healthy_k}[0]),
		$probe{healthy_k}[1], "$s{name}: another index keeps working");
	for my $index (@victims)
	{
		$node->safe_psql('postgres', "REINDEX INDEX $index");
		is($node->safe_psql('postgres', $BY_INDEX . $probe{$index}[0]),
			$probe{$index}[1], "$s{name}: after REINDEX $index answers");
		$node->safe_psql('postgres', $check{$index});
		ok(!-e $pool{$index}, "$s{name}: REINDEX removed the damaged pool file of $index");
	}
	unlike(slurp_file($node->logfile), qr/terminated by signal/, "$s{name}: no backend crashed");
	return;
}

sub overwrite_at
{
	my ($path, $offset, $bytes) = @_;
	open(my $fh, '+<', $path) or die "open $path: $!";
	binmode $fh;
	seek($fh, $offset, 0) or die "seek $path: $!";
	print $fh $bytes or die "write $path: $!";
	close($fh) or die "close $path: $!";
	return;
}

my $reindex_hint = qr/HINT:  REINDEX the index/;

scenario(
	name => 'pool file deleted',
	state => 'missing',
	damage => sub { unlink($_[0]) or die "unlink $_[0]: $!" },
	error => qr/ERROR:  pool file ".*" does not exist/,
	hint => qr/HINT:  If the pool file was removed, REINDEX the index to build it again\./);

scenario(
	name => 'pool file truncated inside its header',
	state => 'corrupt',
	damage => sub { truncate($_[0], 100) or die "truncate $_[0]: $!" },
	error => qr/is truncated \(100 bytes, header needs 4096\)/,
	hint => $reindex_hint);

scenario(
	name => 'pool file truncated after its header',
	damage => sub { truncate($_[0], 4096 + 65536) or die "truncate $_[0]: $!" },
	error => qr/is truncated \(69632 bytes, header says \d+\)/,
	hint => $reindex_hint);

scenario(
	name => 'header magic overwritten',
	state => 'corrupt',
	damage => sub { overwrite_at($_[0], 0, 'GARBAGE!') },
	error => qr/has no pm_index pool header/,
	hint => $reindex_hint);

scenario(
	name => 'header static part corrupted',
	state => 'corrupt',
	damage => sub { overwrite_at($_[0], 20, "\xff\xfe\xfd\xfc") },
	error => qr/has a header checksum mismatch/,
	hint => $reindex_hint);

# A pool of another format version (as an older or newer pm_index wrote it): refused, with what
# to do, and listed as needing a REINDEX. The version word precedes the checksum it would break.
scenario(
	name => 'pool of another format version',
	state => 'needs reindex',
	damage => sub { overwrite_at($_[0], 8, pack('V', 1)) },
	error => qr/has format version 1, this build reads version \d+/,
	hint => qr/HINT:  The pool was written by another version of pm_index.*REINDEX the index/);

# The mutable words follow the static part: size, mode, clean_shutdown, flags.
scenario(
	name => 'header shutdown marker corrupted',
	state => 'corrupt',
	damage => sub { overwrite_at($_[0], header_word_offset(2), "\x5a" x 8) },
	error => qr/has an invalid shutdown marker/,
	hint => $reindex_hint);

scenario(
	name => 'pool file without permissions',
	state => 'inaccessible',
	damage => sub { chmod(0000, $_[0]) or die "chmod $_[0]: $!" },
	error => qr/Permission denied/,
	hint => qr/HINT:  Check that pm_index\.pool_dir and its files are writable/);

my $ownership_hint =
  qr/HINT:  Pool files must belong to the server's operating system user and be writable by it alone/;
scenario(
	name => 'pool file writable by others',
	state => 'inaccessible',
	damage => sub { chmod(0666, $_[0]) or die "chmod $_[0]: $!" },
	error => qr/is writable by group or others \(mode 0666\)/,
	hint => $ownership_hint);

SKIP:
{
	my @foreign = split(' ', $ENV{PM_FOREIGN_FILES} // '');
	skip 'not enough files of another user (tests/run makes them when it runs as root)', 1
	  if @foreign < @victims;
	scenario(
		name => 'pool file of another user',
		state => 'inaccessible',
		damage => sub {
			my $file = shift @foreign;
			copy($_[0], $file) or die "copy to $file: $!";
			rename($file, $_[0]) or die "rename $file: $!";
		},
		error => qr/is owned by user ID \d+, not by the server's user ID \d+/,
		hint => $ownership_hint);
}

# Indexes pointed at one file: every victim's path holds healthy_k's pool.
my $healthy_pool = pool_of('healthy_k');
scenario(
	name => 'another index\'s pool file',
	damage => sub { copy($healthy_pool, $_[0]) or die "copy to $_[0]: $!" },
	error => qr/does not belong to index "victim_\w+"/,
	hint => $reindex_hint);

# The pool directory made read-only: existing indexes keep working, creating one fails with
# the directory named and a HINT, and works again once the directory is writable.
chmod(0500, $pool_dir) or die "chmod $pool_dir: $!";
is($node->safe_psql('postgres', $BY_INDEX . $probe{$victims[0]}[0]),
	$probe{$victims[0]}[1], 'read-only pool_dir: existing indexes answer');
$node->safe_psql('postgres', 'INSERT INTO victim VALUES (2000, NULL)');
for my $am (@keyed)
{
	is($node->safe_psql('postgres', $BY_INDEX . "SELECT count(*) FROM victim WHERE k_$am = 2000"),
		'1', "read-only pool_dir: existing indexes take inserts ($am)");
}
my ($ret, $stdout, $stderr) =
  $node->psql('postgres', 'CREATE INDEX healthy_k2 ON healthy USING nbtree_pm (k)');
isnt($ret, 0, 'read-only pool_dir: CREATE INDEX fails');
like($stderr, qr/ERROR:  .*\Q$pool_dir\E.*Permission denied/, 'read-only pool_dir: the error names the file');
like($stderr, qr/HINT:  Check that pm_index\.pool_dir and its files are writable/,
	'read-only pool_dir: with a HINT');
chmod(0700, $pool_dir) or die "chmod $pool_dir: $!";
$node->safe_psql('postgres', 'CREATE INDEX healthy_k2 ON healthy USING nbtree_pm (k)');
is($node->safe_psql('postgres', $BY_INDEX . 'SELECT count(*) FROM healthy WHERE k <= 10'),
	'10', 'writable again: CREATE INDEX works');

# The pool directory moved away while the server runs: a new session cannot map the pools and
# names the directory, and, as it is the default one under the data directory, says to restore
# it or REINDEX; REINDEX makes the default directory again and rebuilds into it.
$node->safe_psql('postgres', 'DROP INDEX healthy_k2');
my $k_pool = pool_of($victims[0]);
rename($pool_dir, "$pool_dir.moved") or die "rename $pool_dir: $!";
($ret, $stdout, $stderr) = $node->psql('postgres', $BY_INDEX . $probe{$victims[0]}[0]);
isnt($ret, 0, 'pool_dir gone: a scan in a new session fails');
like($stderr, qr/ERROR:  pool directory "\Q$pool_dir\E" does not exist/, 'pool_dir gone: the error names the directory');
like($stderr, qr/DETAIL:  The index's pool file is "\Q$k_pool\E"/, 'pool_dir gone: its detail the missing pool');
like($stderr, qr/HINT:  The pool directory under the data directory was removed: restore it, or REINDEX/,
	'pool_dir gone: the HINT says to restore it or REINDEX');
$node->safe_psql('postgres', 'REINDEX TABLE victim; REINDEX TABLE healthy');
ok(-d $pool_dir, 'pool_dir gone: REINDEX made the default directory again');
for my $index (sort keys %probe)
{
	is($node->safe_psql('postgres', $BY_INDEX . $probe{$index}[0]),
		$probe{$index}[1], "pool_dir gone: after REINDEX $index answers");
}
unlike(slurp_file($node->logfile), qr/terminated by signal/, 'no backend crashed');


# Damaged content behind a valid header: random bytes, zeroes and a flipped offset written into
# an index's pool while the server is down, for every access method. Whatever a pool holds, no
# statement may crash the server or PANIC it: each works or fails with an index_corrupted ERROR
# that names the index and says to REINDEX; REINDEX then makes it answer as the heap does.
# Each access method's index is alone on its table, so an insert and a VACUUM reach it.
my @ams = (@ordered, 'fbrtree_pm', 'hash_pm');
my (%table, %index, %queries, %write);
for my $am (@ordered)
{
	($table{$am}, $index{$am}) = ("rnd_$am", "rnd_${am}_k");
	$node->safe_psql('postgres', "CREATE TABLE rnd_$am (k int);
		INSERT INTO rnd_$am SELECT generate_series(1, 3000);
		CREATE INDEX rnd_${am}_k ON rnd_$am USING $am (k)");
	$queries{$am} = [
		[ 'scan', "SELECT count(*), sum(k) FROM rnd_$am WHERE k <= 1500" ],
		[ 'backward scan', "SELECT string_agg(k::text, ',') FROM (SELECT k FROM rnd_$am WHERE k > 2000 ORDER BY k DESC LIMIT 20) s" ]];
	$write{$am} = "INSERT INTO rnd_$am SELECT generate_series(3001, 3400)";
}
($table{fbrtree_pm}, $index{fbrtree_pm}) = ('rnd_fbrtree_pm', 'rnd_fbrtree_pm_b');
$node->safe_psql('postgres', q{CREATE TABLE rnd_fbrtree_pm (k int, b box);
	INSERT INTO rnd_fbrtree_pm
	SELECT i, box(point(i % 60, i / 60), point(i % 60 + 0.5, i / 60 + 0.5)) FROM generate_series(1, 3000) i;
	CREATE INDEX rnd_fbrtree_pm_b ON rnd_fbrtree_pm USING fbrtree_pm (b)});
$queries{fbrtree_pm} = [
	[ 'window', q{SELECT count(*), sum(k) FROM rnd_fbrtree_pm WHERE b && box '((10,10),(30,30))'} ],
	[ 'KNN', q{SELECT round(sum(d)::numeric, 6) FROM (SELECT b <-> point '(20.3,20.1)' AS d FROM rnd_fbrtree_pm ORDER BY b <-> point '(20.3,20.1)' LIMIT 10) s} ]];
$write{fbrtree_pm} = q{INSERT INTO rnd_fbrtree_pm
	SELECT i, box(point(i % 7, i % 11), point(i % 7 + 1, i % 11 + 1)) FROM generate_series(3001, 3400) i};
# hash_pm: built over part of the rows, the rest inserted through its operation log (which the
# pool holds from the first insert on)
($table{hash_pm}, $index{hash_pm}) = ('rnd_hash_pm', 'rnd_hash_pm_k');
$node->safe_psql('postgres', q{CREATE TABLE rnd_hash_pm (k int);
	INSERT INTO rnd_hash_pm SELECT generate_series(1, 2500);
	CREATE INDEX rnd_hash_pm_k ON rnd_hash_pm USING hash_pm (k);
	INSERT INTO rnd_hash_pm SELECT generate_series(2501, 3000)});
$queries{hash_pm} = [
	[ 'lookup', 'SELECT count(*), sum(k) FROM rnd_hash_pm WHERE k = ANY (ARRAY[1, 77, 1500, 2600, 2999, 3000, 3001, 3399])' ],
	[ 'IS NOT NULL walk', 'SELECT count(*), sum(k) FROM rnd_hash_pm WHERE k IS NOT NULL' ]];
$write{hash_pm} = 'INSERT INTO rnd_hash_pm SELECT generate_series(3001, 3400)';

sub postmaster_pid
{
	my @lines = split(/\n/, slurp_file($node->data_dir . '/postmaster.pid'));
	return $lines[0];
}

# The statement either works or fails with an index_corrupted ERROR naming the index and a
# HINT to REINDEX; the postmaster is the one started and the log since then shows no crash.
my %outcomes;
my ($pid, $log_from);
sub survives
{
	my ($what, $index, $stmt) = @_;
	my ($ret, $stdout, $stderr) = $node->psql('postgres', $stmt, extra_params => [ '-v', 'VERBOSITY=verbose' ]);
	my $log = slurp_file($node->logfile, $log_from);
	my $alive = kill(0, $pid) && postmaster_pid() eq $pid;
	my $crashed = $log =~ /PANIC|terminated by signal|TRAP:|server process .* was terminated/;
	my $reported = $ret == 0
	  || ($stderr =~ /ERROR:  XX002:/ && $stderr =~ /"\Q$index\E"/ && $stderr =~ /HINT:  REINDEX the index/);
	$outcomes{ $ret == 0 ? 'worked' : 'index_corrupted' }++ if $reported;
	ok($alive && !$crashed && $reported,
		"$what: no crash, and no error or an index_corrupted ERROR naming the index with a HINT to REINDEX")
	  or diag("stderr: $stderr\nlog: $log");
	if ($crashed || !$alive)
	{
		# go on from a running server for the next checks
		$node->stop('immediate', fail_ok => 1);
		$node->{_pid} = undef;
		$log_from = -s $node->logfile;
		start_after_kill($node);
		$pid = postmaster_pid();
	}
	return;
}

sub file_size
{
	my ($path) = @_;
	my $size = -s $path;
	die "no pool file $path" unless defined $size;
	return $size;
}

sub random_bytes
{
	my ($len) = @_;
	return pack('C*', map { int(rand(256)) } 1 .. $len);
}

# Offsets in the pool's data (after its 4 KiB header), aligned to $align.
sub data_offset
{
	my ($size, $len, $align) = @_;
	return 4096 + $align * int(rand(($size - 4096 - $len) / $align));
}

my %damage = (
	'64 kB of random bytes in the middle' => sub {
		my $size = file_size($_[0]);
		overwrite_at($_[0], 8 * int(($size - 65536) / 16), random_bytes(65536));
	},
	'4 kB of random bytes at a random place' => sub {
		overwrite_at($_[0], data_offset(file_size($_[0]), 4096, 8), random_bytes(4096));
	},
	# node headers are at the start of allocator blocks, 512-aligned in every class of a node
	'a few random bytes at 16 block starts' => sub {
		my $size = file_size($_[0]);
		overwrite_at($_[0], data_offset($size, 512, 512), random_bytes(1 + int(rand(24)))) for 1 .. 16;
	},
	'16 kB of zeroes' => sub {
		overwrite_at($_[0], data_offset(file_size($_[0]), 16384, 4096), "\0" x 16384);
	},
	# a word that looks like an offset of a block inside the pool, its top byte changed
	'one flipped offset' => sub {
		my $size = file_size($_[0]);
		open(my $fh, '<', $_[0]) or die "open $_[0]: $!";
		binmode $fh;
		local $/;
		my $content = <$fh>;
		close($fh);
		my @offsets;
		for (my $at = 4096; $at + 8 <= $size; $at += 8)
		{
			my $word = unpack('Q<', substr($content, $at, 8));
			push @offsets, $at if $word > 4096 && $word < $size && $word % 64 == 0;
		}
		die "no offset in $_[0]" unless @offsets;
		my $at = $offsets[ int(rand(@offsets)) ];
		my $word = unpack('Q<', substr($content, $at, 8)) ^ ((1 + int(rand(255))) << 56);
		overwrite_at($_[0], $at, pack('Q<', $word));
	});
my @cases = (
	[ '64 kB of random bytes in the middle', 1 .. 3 ],
	[ '4 kB of random bytes at a random place', 4, 5 ],
	[ 'a few random bytes at 16 block starts', 6, 7 ],
	[ '16 kB of zeroes', 8, 9 ],
	[ 'one flipped offset', 10 .. 12 ]);

# The first scans, an insert, VACUUM and the verifier of the access method's damaged index each
# survive; then REINDEX makes it answer as the heap does.
sub exercise
{
	my ($name, $am) = @_;
	my ($t, $i) = ($table{$am}, $index{$am});
	survives("$name: $i: first $_->[0]", $i, $BY_INDEX . $_->[1]) for @{ $queries{$am} };
	survives("$name: $i: insert", $i, $write{$am});
	$node->safe_psql('postgres', "DELETE FROM $t WHERE k % 7 = 0");
	survives("$name: $i: VACUUM", $i, "VACUUM $t");
	survives("$name: $i: verifier", $i, "SELECT ${am}_check('$i', true)");

	$node->safe_psql('postgres', "REINDEX INDEX $i");
	for my $q (@{ $queries{$am} })
	{
		is($node->safe_psql('postgres', $BY_INDEX . $q->[1]),
			$node->safe_psql('postgres', $BY_HEAP . $q->[1]),
			"$name: $i: after REINDEX the $q->[0] answers as the heap does");
	}
	$node->safe_psql('postgres', "SELECT ${am}_check('$i', true)");
	# back to the rows the next case starts from
	$node->safe_psql('postgres', "DELETE FROM $t WHERE k > 3000");
	return;
}

for my $case (@cases)
{
	my ($kind, @seeds) = @$case;
	for my $seed (@seeds)
	{
		my $name = "$kind (seed $seed)";
		my %pool = map { $_ => pool_of($index{$_}) } @ams;
		$node->stop;
		for my $i (0 .. $#ams)
		{
			srand(1000 * $seed + $i);
			$damage{$kind}->($pool{ $ams[$i] });
		}
		$log_from = -s $node->logfile;
		$node->start;
		$pid = postmaster_pid();
		exercise($name, $_) for @ams;
	}
}

# hash_pm's own structures, each damaged where it lies (the pool's roots name them; the layouts
# are pmhash_meta and pmhash_block in src/core/hash/pmhash_internal.h, pm_uno_dir in
# src/core/tips/uno.h, pm_olog and pm_olog_lane in src/core/tips/olog.h): its meta block, the
# segment table in it, a segment of bucket offsets, chain blocks, the UNO logs' directory, and
# the operation log's directory, lanes and segments.  The server is stopped right after an
# insert (immediate: no checkpoint, no shutdown), so the first use also recovers from the
# damaged logs.
sub word_at
{
	my ($path, $at) = @_;
	open(my $fh, '<', $path) or die "open $path: $!";
	binmode $fh;
	seek($fh, $at, 0) or die "seek $path: $!";
	read($fh, my $bytes, 8) == 8 or die "read $path at $at";
	close($fh);
	return unpack('Q<', $bytes);
}
sub word_to { overwrite_at($_[0], $_[1], pack('Q<', $_[2])) }
# pool root i: pm_pool_header.roots, after the 96 bytes of the static part and 4 mutable words
sub root_of { return word_at($_[0], 128 + 8 * $_[1]) }
sub hash_meta { return root_of($_[0], 0) }
sub hash_segment { return word_at($_[0], hash_meta($_[0]) + 4288) }    # pmhash_meta.seg[0]
sub hash_bucket { return word_at($_[0], hash_segment($_[0]) + 8 * $_[1]) }
sub uno_dir { return root_of($_[0], 4) }
sub olog_dir
{
	my $at = root_of($_[0], 3);
	die "no operation log in $_[0]" unless $at;
	return $at;
}
# the operation log's lanes (pm_olog.lane[], after 64 bytes), those in use
sub olog_lanes
{
	my ($path) = @_;
	my $dir = olog_dir($path);
	my $n = unpack('V', pack('Q<', word_at($path, $dir)));
	return grep { $_ } map { word_at($path, $dir + 64 + 8 * $_) } 0 .. ($n > 64 ? 63 : $n - 1);
}
my @hash_cases = (
	[ 'meta block: magic' => sub { overwrite_at($_[0], hash_meta($_[0]), 'GARBAGE!') } ],
	[ 'meta block: version and minimum depth' => sub { overwrite_at($_[0], hash_meta($_[0]) + 8, random_bytes(8)) } ],
	[ 'meta block: bucket count' => sub { word_to($_[0], hash_meta($_[0]) + 72, 1 << 40) } ],
	[ 'meta block: 512 random bytes' => sub { overwrite_at($_[0], hash_meta($_[0]) + 64, random_bytes(512)) } ],
	[ 'segment table: an offset past the pool' => sub { word_to($_[0], hash_meta($_[0]) + 4288, 1 << 50) } ],
	[ 'segment table: an offset into the segment' => sub {
		word_to($_[0], hash_meta($_[0]) + 4288, hash_segment($_[0]) + 8) } ],
	[ 'segment table: random words' => sub { overwrite_at($_[0], hash_meta($_[0]) + 4288, random_bytes(64)) } ],
	[ 'segment: random bucket offsets' => sub { overwrite_at($_[0], hash_segment($_[0]), random_bytes(128)) } ],
	[ 'segment: a bucket pointing at another\'s block' => sub {
		word_to($_[0], hash_segment($_[0]) + 8 * 3, hash_bucket($_[0], 5)) } ],
	[ 'chain block: random header' => sub { overwrite_at($_[0], hash_bucket($_[0], 0), random_bytes(32)) } ],
	[ 'chain block: entry count past its capacity' => sub {
		overwrite_at($_[0], hash_bucket($_[0], 1) + 28, pack('V', 1000)) } ],
	[ 'chain block: linked to itself' => sub { word_to($_[0], hash_bucket($_[0], 2) + 8, hash_bucket($_[0], 2)) } ],
	[ 'chain block: linked past the pool' => sub { word_to($_[0], hash_bucket($_[0], 4) + 8, 1 << 45) } ],
	[ 'chain block: random entries' => sub { overwrite_at($_[0], hash_bucket($_[0], 6) + 64, random_bytes(960)) } ],
	[ 'UNO directory: magic' => sub { overwrite_at($_[0], uno_dir($_[0]), 'GARBAGE!') } ],
	[ 'UNO directory: appliers and log sizes' => sub { overwrite_at($_[0], uno_dir($_[0]) + 8, random_bytes(16)) } ],
	# host_pos[] at 192, ulog[] at 704, mlog[] at 4800: heads claiming records, chains anywhere
	[ 'UNO directory: host positions' => sub { overwrite_at($_[0], uno_dir($_[0]) + 192, random_bytes(512)) } ],
	[ 'UNO directory: log heads' => sub { overwrite_at($_[0], uno_dir($_[0]) + 704, random_bytes(8192)) } ],
	[ 'operation log: directory' => sub { overwrite_at($_[0], olog_dir($_[0]), random_bytes(8)) } ],
	[ 'operation log: lane offsets' => sub { overwrite_at($_[0], olog_dir($_[0]) + 64, random_bytes(64)) } ],
	[ 'operation log: lane positions' => sub {
		overwrite_at($_[0], $_, random_bytes(8)) for olog_lanes($_[0]);
		word_to($_[0], $_ + 64, word_at($_[0], $_ + 64) + 24) for olog_lanes($_[0]);
	} ],
	[ 'operation log: segment heads' => sub {
		for my $lane (olog_lanes($_[0]))
		{
			my $head = word_at($_[0], $lane + 136);
			overwrite_at($_[0], $head, random_bytes(16)) if $head;
		}
	} ],
	[ 'operation log: records' => sub {
		for my $lane (olog_lanes($_[0]))
		{
			my $head = word_at($_[0], $lane + 136);
			overwrite_at($_[0], $head + 16, random_bytes(256)) if $head;
		}
	} ]);
for my $n (0 .. $#hash_cases)
{
	my ($kind, $damage) = @{ $hash_cases[$n] };
	my $path = pool_of($index{hash_pm});
	$node->safe_psql('postgres', $write{hash_pm});
	$node->stop('immediate');
	srand(7000 + $n);
	$damage->($path);
	$log_from = -s $node->logfile;
	$node->start;
	$pid = postmaster_pid();
	exercise($kind, 'hash_pm');
}
note(join(', ', map { "$_: $outcomes{$_}" } sort keys %outcomes) . ' statements after damage');

$node->stop;
done_testing();
