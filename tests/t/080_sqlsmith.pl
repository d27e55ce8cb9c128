# SQLsmith (random queries built from the catalog) against tables with a pm_index index of every
# operator class that needs no PostGIS, of every access method, and per access method a table of
# the values real data has: a bool column, text in a libc and in an ICU collation (accents
# precomposed and combining, ß, punctuation) and, with PostGIS, geometries of SRID 4326 (points,
# polygons, EMPTY, with Z): no server crash, no PANIC, and the indexes still verify.
# PM_SQLSMITH_SECONDS sets the time (30 here; tests/torture runs 600).  tests/run installs the
# Debian package; without it the test skips and says why.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use FindBin;
use lib "$FindBin::Bin/../lib";
use PmNode;

plan skip_all => 'sqlsmith is not installed (Debian package sqlsmith)'
  unless grep { -x "$_/sqlsmith" } split /:/, $ENV{PATH};

my $seconds = $ENV{PM_SQLSMITH_SECONDS} || 30;
my $seed = test_seed();
my $node = pm_node('sqlsmith', "statement_timeout = '2s'", 'log_min_messages = error');

my %types = (
	int2 => '(g % 30000)::int2', int4 => 'g * 7', int8 => 'g::int8 * 1000003',
	oid => 'g::oid', date => "'2000-01-01'::date + g", time => "'00:00'::time + g * interval '1 s'",
	timestamp => "'2000-01-01'::timestamp + g * interval '1 min'",
	timestamptz => "'2000-01-01'::timestamptz + g * interval '1 h'",
	float4 => '(g / 7.0)::float4', float8 => 'g / 3.0', bool => 'g % 2 = 0');
# s_<access method>_<type>: a table per ordered access method and type
my @ordered = ordered_ams($node);
my @tables = map { my $am = $_; map { [ $am, "s_${am}_$_" ] } sort keys %types } @ordered;
my $sql = '';
for my $am (@ordered)
{
	for my $t (sort keys %types)
	{
		$sql .= "CREATE TABLE s_${am}_$t (id int, v $t);
		INSERT INTO s_${am}_$t SELECT g, CASE WHEN g % 50 = 0 THEN NULL ELSE $types{$t} END
		  FROM generate_series(1, 2000) g;
		CREATE INDEX s_${am}_${t}_v ON s_${am}_$t USING $am (v);\n";
	}
}
$sql .= q{
	CREATE TABLE s_geo (id int, b box, p point);
	INSERT INTO s_geo SELECT g, box(point(g % 100, g / 100), point(g % 100 + 1, g / 100 + 2)),
	  CASE WHEN g % 50 = 0 THEN NULL ELSE point(g % 97, g % 89) END FROM generate_series(1, 2000) g;
	CREATE INDEX s_geo_b ON s_geo USING fbrtree_pm (b);
	CREATE INDEX s_geo_p ON s_geo USING fbrtree_pm (p);};
my $postgis = $node->safe_psql('postgres',
	q{SELECT count(*) FROM pg_available_extensions WHERE name IN ('postgis', 'pm_index_postgis')}) == 2;
$sql .= 'CREATE EXTENSION postgis; CREATE EXTENSION pm_index_postgis;' if $postgis;
# m_<access method>: what each access method indexes of bool, libc and ICU text ("C" where the
# server has no ICU), geometry
my $ti_collation =
  $node->safe_psql('postgres', q{SELECT count(*) FROM pg_collation WHERE collname = 'und-x-icu'}) == 1
  ? 'und-x-icu'
  : 'C';
my @mixed;
for my $am (@ordered, 'fbrtree_pm')
{
	$sql .= "CREATE TABLE m_$am (id int, b bool, tl text COLLATE \"en_US.utf8\",
		  ti text COLLATE \"$ti_collation\"" . ($postgis ? ', g geometry' : '') . ");
		INSERT INTO m_$am SELECT g, CASE WHEN g % 40 = 0 THEN NULL ELSE g % 3 = 0 END,
		  (ARRAY[E'E\\u0301-', E'\\u00e9', E'\\u00c9', 'e', '-', E'\\u00df', 'ss', ''])[1 + g % 8] || (g % 13),
		  (ARRAY[E'e\\u0301', E'\\u00e9', 'E', 'ss', E'\\u00df', ' a'])[1 + g % 6] || (g % 11)"
	  . ($postgis ? ",
		  CASE g % 5 WHEN 0 THEN 'SRID=4326;POINT EMPTY'::geometry
		    WHEN 1 THEN ST_SetSRID(ST_MakePoint(g % 360 - 180, g % 180 - 90), 4326)
		    WHEN 2 THEN ST_SetSRID(ST_Buffer(ST_MakePoint(g % 90, g % 45), 1.5), 4326)
		    WHEN 3 THEN ST_SetSRID(ST_MakePoint(g % 100, g % 50, g % 7), 4326)
		    ELSE NULL END" : '') . "
		  FROM generate_series(1, 2000) g;\n";
	if ($am eq 'fbrtree_pm')
	{
		next unless $postgis;
		$sql .= "CREATE INDEX m_${am}_g ON m_$am USING fbrtree_pm (g);\n";
		push @mixed, [ $am, "m_${am}_g" ];
		next;
	}
	# phast_pm takes 8-byte keys only: no text
	for my $c ($am eq 'nbtree_pm' ? qw(b tl ti) : qw(b))
	{
		$sql .= "CREATE INDEX m_${am}_$c ON m_$am USING $am ($c);\n";
		push @mixed, [ $am, "m_${am}_$c" ];
	}
}
$sql .= 'ANALYZE;';
$node->safe_psql('postgres', $sql);

# stderr into a file: --verbose writes a character per query, and a pipe nobody drains would
# stop SQLsmith once it filled
my $progress = $node->basedir . '/sqlsmith.err';
my $connstr = 'host=' . $node->host . ' port=' . $node->port . ' dbname=postgres';
my $smith = IPC::Run::start(
	[ 'sqlsmith', "--target=$connstr", '--exclude-catalog', "--seed=$seed", '--verbose' ],
	'>', '/dev/null', '2>', $progress, IPC::Run::timeout($seconds + 60));
sleep($seconds);
$smith->signal('INT');
eval { $smith->finish; };
# --verbose reports "queries: N, ..." lines as it goes; the last one counts them all
my @reports = slurp_file($progress) =~ /^(queries: .*)$/mg;
diag("sqlsmith, $seconds s: " . ($reports[-1] // 'no report'));
my $log = slurp_file($node->logfile);
unlike($log, qr/terminated by signal|PANIC|TRAP:/, "$seconds s of sqlsmith: no server crash, no PANIC");
ok($node->safe_psql('postgres', 'SELECT 1') eq '1', 'the server answers');

my $checks = join(";\n",
	(map { "SELECT $_->[0]_check('$_->[1]_v', true)" } @tables),
	(map { "SELECT $_->[0]_check('$_->[1]', true)" } @mixed),
	"SELECT fbrtree_pm_check('s_geo_b', true)", "SELECT fbrtree_pm_check('s_geo_p', true)");
my ($rc, $stdout, $stderr) = $node->psql('postgres', $checks);
is($rc, 0, 'every index verifies against its heap') or diag($stderr);

$node->stop;
done_testing();
