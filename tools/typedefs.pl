#!/usr/bin/perl
# The type names this project defines with typedef, one per line, for pgindent's
# --list-of-typedefs or appended to PostgreSQL's typedefs.list: those of src/pg (every file)
# and of src/core's headers (a core .c file's own typedefs name local structs whose names its
# variables use too, and src/pg never sees them).
use strict;
use warnings;
use File::Find;
use FindBin;

my %names;
my @files;
find(sub { push @files, $File::Find::name if /\.[ch]$/ }, "$FindBin::Bin/../src");
for my $file (@files)
{
	next if $file =~ m{/src/core/.*\.c$};
	open(my $fh, '<', $file) or die "cannot read $file: $!";
	my $text = do { local $/; <$fh> };
	$text =~ s{/\*.*?\*/}{}gs;
	while ($text =~ /\btypedef\b/g)
	{
		my ($start, $depth, $end) = (pos($text), 0, pos($text));
		for (; $end < length($text); $end++)
		{
			my $c = substr($text, $end, 1);
			$depth++ if $c eq '{' || $c eq '(';
			$depth-- if $c eq '}' || $c eq ')';
			last if $c eq ';' && $depth == 0;
		}
		my $decl = substr($text, $start, $end - $start);
		if ($decl !~ /\{/ && $decl =~ /\(\s*\*\s*(\w+)\s*\)\s*\(/)
		{
			$names{$1} = 1;    # a function pointer type
			next;
		}
		$decl =~ s/\{.*\}/{}/s;
		$decl =~ s/\[[^\]]*\]//g;
		my @ids = $decl =~ /(\w+)/g;
		$names{ $ids[-1] } = 1 if @ids;
	}
}
print "$_\n" for sort keys %names;
