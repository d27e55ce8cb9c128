#!/usr/bin/perl
# The source layout's rules, checked (TAP output; tests/run runs it with the unit tests):
#   - src/core includes no PostgreSQL header;
#   - the generic files of src/pg (pm_index.h, pmi_*.c, and the code an access method family
#     shares, such as ordered/) name no access method and include no structure's header (a
#     structure is a folder of src/core named by a pool kind; others, such as tips/, are
#     platform), except pmi_am.c, the table of access methods;
#   - the calls between generic files have no cycle;
#   - the Makefile's build of the extension names no structure and no access method: their
#     folders are found, not listed;
#   - the structures' pool kinds are one enum, in src/core/pool.h;
#   - every access method is declared in the extension's SQL with its check function, and the
#     update scripts from 0.7.0 on give an ordered access method its operator classes with
#     pm_index_copy_operator_classes, not written out again.
use strict;
use warnings;
use File::Basename;
use FindBin;
use Test::More;

my $root = "$FindBin::Bin/..";
chdir $root or die "cannot enter $root: $!";

sub slurp
{
	my ($path) = @_;
	open(my $fh, '<', $path) or die "cannot read $path: $!";
	local $/;
	return <$fh>;
}

# src/core: plain C
my @core = (glob('src/core/*.[ch]'), glob('src/core/*/*.[ch]'));
my @pg_includes =
  grep { slurp($_) =~ /^#include\s+[<"](postgres|postgres_fe|fmgr|c)\.h[>"]|^#include\s+[<"](access|catalog|utils|storage|nodes)\//m } @core;
is_deeply(\@pg_includes, [], 'src/core includes no PostgreSQL header');

# the access methods: a directory of src/pg each that defines a PmiAmOps (an amname), its files
# named with one prefix (a directory of code shared by a family of them, such as ordered/, is not
# one)
my %am_prefix;
for my $dir (grep { -d } glob('src/pg/*'))
{
	my @files = glob("$dir/*.c");
	next unless grep { slurp($_) =~ /^\s*\.amname = "/m } @files;
	my ($prefix) = basename($files[0]) =~ /^([a-z]+)_/;
	$am_prefix{ basename($dir) } = $prefix;
}
ok(keys(%am_prefix) >= 2, 'found the access methods: ' . join(', ', sort keys %am_prefix));
# the structures: the folders of src/core named by a pool kind (pm_kind in pool.h); the others
# (tips/) are platform that generic code may use
my %kinds = map { lc($_) => 1 } slurp('src/core/pool.h') =~ /\bPM_KIND_(\w+)\s*=/g;
my @structure_dirs = grep { $kinds{$_} } map { basename($_) } grep { -d } glob('src/core/*');
ok(@structure_dirs >= 3, 'found the structures: ' . join(', ', @structure_dirs));
my @structure_headers = map { basename($_) } map { glob("src/core/$_/*.h") } @structure_dirs;

my @family = grep { my $d = basename(dirname($_)); !exists $am_prefix{$d} } glob('src/pg/*/*.[ch]');
my @generic = ('src/pg/pm_index.h', glob('src/pg/pmi_*.h'), (grep { basename($_) ne 'pmi_am.c' } glob('src/pg/pmi_*.c')), @family);
for my $file (@generic)
{
	my $text = slurp($file);
	my @names = grep { $text =~ /\b\Q$_\E\b/ } (keys %am_prefix, values %am_prefix);
	my @headers = grep { $text =~ /^#include\s+"(?:[^"]*\/)?\Q$_\E"/m } @structure_headers;
	is(join(' ', @names, @headers), '', "$file names no access method and includes no structure");
}

# the Makefile up to its test and benchmark rules, which name the structures their variants test
my ($makefile_build) = slurp('Makefile') =~ /\A(.*?)^# ---- C unit tests/ms;
my @in_makefile =
  grep { $makefile_build =~ /\b\Q$_\E\b/ } (keys %am_prefix, values %am_prefix, @structure_dirs);
ok(defined $makefile_build, 'the Makefile has its build part');
is(join(' ', @in_makefile), '', 'the Makefile lists no structure or access method');

# pool kinds: values of pm_kind, defined nowhere else
my @kind_elsewhere = grep { $_ ne 'src/core/pool.h' && slurp($_) =~ /^\s*#\s*define\s+PM_KIND_|\bPM_KIND_\w+\s*=/m }
  (@core, glob('src/pg/*.h'), glob('src/pg/*/*.h'));
is_deeply(\@kind_elsewhere, [], 'pool kinds are defined in src/core/pool.h only');

# calls between generic files (pmi_*.c): the file that defines each extern function
my (%defined_in, %calls);
my @sources = glob('src/pg/pmi_*.c');
for my $file (@sources)
{
	my $text = slurp($file);
	$defined_in{$1} = $file while $text =~ /^(?!static)[A-Za-z][^\n;]*\n(pmi_\w+)\(/mg;
}
for my $file (@sources)
{
	my $text = slurp($file);
	for my $fn (keys %defined_in)
	{
		my $target = $defined_in{$fn};
		$calls{$file}{$target} = 1 if $target ne $file && $text =~ /\b$fn\(/;
	}
}
my @cycles;
for my $from (sort keys %calls)
{
	my %seen;
	my @todo = keys %{ $calls{$from} };
	while (my $f = shift @todo)
	{
		next if $seen{$f}++;
		push @todo, keys %{ $calls{$f} || {} };
	}
	push @cycles, $from if $seen{$from};
}
is_deeply(\@cycles, [], 'no generic file reaches itself through the calls of others');

# SQL: the scripts of the extension pm_index, by version
sub version_key { my ($v) = @_; return sprintf('%05d%05d%05d', split(/\./, $v)); }
my %scripts;
for my $file (glob('src/pm_index--*.sql'))
{
	my ($version) = basename($file) =~ /--([0-9.]+)\.sql$/;
	$scripts{$file} = $version;
}
my $all_sql = join("\n", map { slurp($_) } sort keys %scripts);
for my $am (sort keys %am_prefix)
{
	ok($all_sql =~ /CREATE ACCESS METHOD \Q$am\E TYPE INDEX/ && $all_sql =~ /CREATE FUNCTION \Q$am\E_check\(/,
		"$am is declared in the extension's SQL, with ${am}_check");
}
my @ordered = grep { my $d = $_; grep { slurp($_) =~ /\bORD_AM_SHARED_OPS\b/ } glob("src/pg/$d/*.c") } sort keys %am_prefix;
ok(@ordered >= 2, 'found the ordered access methods: ' . join(', ', @ordered));
my @written_out;
for my $file (sort keys %scripts)
{
	next if version_key($scripts{$file}) lt version_key('0.7.0');
	my $text = slurp($file);
	push @written_out, map { "$file: $_" }
	  grep { my $am = $_; $text =~ /(CREATE|ALTER) OPERATOR (CLASS|FAMILY)[^;]*USING\s+\Q$am\E\b/s } @ordered;
}
is_deeply(\@written_out, [],
	'update scripts from 0.7.0 give ordered access methods their classes by pm_index_copy_operator_classes');

done_testing();
