# The table the replication and backup tests share: one column and one index per access method
# (nbtree_pm unique and on text, phast_pm, nvbtree_pm on an expression of v, fbrtree_pm on boxes and on 3-D PostGIS points, whose
# pool holds 4-D boxes, hash_pm on an expression of v, tiered nbtree_pm and fbrtree_pm indexes on
# expressions, whose inserts wait in their operation logs), a condition only each index serves, the
# answers through every index and through the heap, and a pgbench write load over it (inserts,
# updates that move rows, deletes, VACUUM).
package PmTable;

use strict;
use warnings;
use Exporter 'import';
use IPC::Run;
use PostgreSQL::Test::Utils;
use PmNode;

our @EXPORT =
  qw(create_table %QUERIES %AM $INDEXES verify_sql verified answers_differ at_one_replay_point start_write_load
  planned building_sql);

# Each index, a condition only it serves.
our %QUERIES = (
	t_id => 'id BETWEEN 100 AND 3000',
	t_s => q{s >= 'name 2' AND s < 'name 3'},
	t_k => 'k BETWEEN -1 AND 900',
	t_v => 'v BETWEEN -7 AND 70000',
	t_nv => '(-v) BETWEEN -90000 AND -20000',
	t_h => '(v % 1000) = ANY (ARRAY[7, 14, 21, 700, 999])',
	t_bx => q{bx && box '((100,100),(400,600))'},
	t_pz => q{pz &&& ST_3DMakeBox(ST_MakePoint(100, 100, 0), ST_MakePoint(400, 600, 500))},
	t_kt => 'k * 2 BETWEEN 10 AND 1800',
	t_ct => q{center(bx) <@ box '((100,100),(400,600))'});

# Each index's access method.
our %AM = (
	t_id => 'nbtree_pm',
	t_s => 'nbtree_pm',
	t_k => 'nbtree_pm',
	t_v => 'phast_pm',
	t_nv => 'nvbtree_pm',
	t_h => 'hash_pm',
	t_bx => 'fbrtree_pm',
	t_pz => 'fbrtree_pm',
	t_kt => 'nbtree_pm',
	t_ct => 'fbrtree_pm');

# The indexes' names, sorted, comma-separated.
our $INDEXES = join(',', sort keys %AM);

# A query of the verifiers (heapallindexed) of the indexes named, every index by default; what
# it returns when they pass is verified(the same names).
sub verify_sql
{
	my @indexes = @_ ? @_ : sort keys %AM;
	return 'SELECT ' . join(', ', map { "$AM{$_}_check('$_', true)" } @indexes);
}

sub verified
{
	return '|' x ((@_ ? scalar @_ : scalar keys %AM) - 1);
}

# Table t with 20,000 rows and its indexes, in database postgres of the node.  Without PostGIS
# (Debian packages it for PostgreSQL 15 only) the table has no pz column and no t_pz index, and
# %QUERIES, %AM and $INDEXES say so.
sub create_table
{
	my ($node) = @_;
	my $postgis = $node->safe_psql('postgres',
		q{SELECT count(*) FROM pg_available_extensions WHERE name IN ('postgis', 'pm_index_postgis')}) == 2;
	if (!$postgis)
	{
		delete $QUERIES{t_pz};
		delete $AM{t_pz};
		$INDEXES = join(',', sort keys %AM);
	}
	my ($ext, $pz_column, $pz_value, $pz_index) =
	  $postgis
	  ? ('CREATE EXTENSION IF NOT EXISTS postgis; CREATE EXTENSION IF NOT EXISTS pm_index_postgis;',
		', pz geometry(PointZ)', ', ST_MakePoint(g % 1000, g / 20, g % 700)',
		'CREATE INDEX t_pz ON t USING fbrtree_pm (pz geometry_ops_nd);')
	  : ('', '', '', '');
	my $pz_name = $postgis ? ', pz' : '';
	$node->safe_psql(
		'postgres', qq{
		$ext
		CREATE TABLE t (id serial, k int4, s text, v int8, bx box$pz_column);
		CREATE UNIQUE INDEX t_id ON t USING nbtree_pm (id);
		CREATE INDEX t_s ON t USING nbtree_pm (s);
		CREATE INDEX t_kt ON t USING nbtree_pm ((k * 2)) WITH (tiered = on);
		CREATE INDEX t_ct ON t USING fbrtree_pm (center(bx)) WITH (tiered = on);
		INSERT INTO t (k, s, v, bx$pz_name)
		  SELECT g % 5000, 'name ' || g || repeat('x', g % 40), g * 7,
		         box(point(g % 1000, g / 20), point(g % 1000 + 1, g / 20 + 1))$pz_value
		  FROM generate_series(1, 20000) g;
		CREATE INDEX t_k ON t USING nbtree_pm (k);
		CREATE INDEX t_v ON t USING phast_pm (v);
		CREATE INDEX t_nv ON t USING nvbtree_pm ((-v));
		CREATE INDEX t_bx ON t USING fbrtree_pm (bx);
		$pz_index
		CREATE INDEX t_h ON t USING hash_pm ((v % 1000));
		ANALYZE t;
	});
	return;
}

# The indexes the node plans for their conditions (with sequential and bitmap scans off), sorted,
# comma-separated: $INDEXES when it plans every one.
sub planned
{
	my ($node) = @_;
	return join(',',
		grep { $node->safe_psql('postgres', "${BY_INDEX}EXPLAIN (COSTS OFF) SELECT count(*), sum(id) FROM t WHERE $QUERIES{$_}")
			  =~ /Index (Only )?Scan using $_/ } sort keys %QUERIES);
}

# A query of the indexes whose pools are being built (after a base backup or pg_rewind), sorted,
# comma-separated; NULL when none is.
sub building_sql
{
	return qq{SELECT string_agg(i::text, ',' ORDER BY i::text) FROM pm_index_pools() p
		JOIN unnest('\{$INDEXES\}'::regclass[]) i ON p.index = i WHERE p.state = 'building'};
}

# The queries whose answer through their index differs from the heap's, as "index: a vs b".
sub answers_differ
{
	my ($node) = @_;
	return index_heap_differ($node, 'count(*), sum(id), sum(k), sum(length(s))', %QUERIES);
}

# Run code with replay paused if the node is a standby: one replay point for a comparison (and the
# verifiers need it there).
sub at_one_replay_point
{
	my ($node, $code) = @_;
	my $standby = $node->safe_psql('postgres', 'SELECT pg_is_in_recovery()') eq 't';
	if ($standby)
	{
		$node->safe_psql('postgres', 'SELECT pg_wal_replay_pause()');
		$node->poll_query_until('postgres', "SELECT pg_get_wal_replay_pause_state() = 'paused'")
		  or die 'replay did not pause';
	}
	$code->();
	$node->safe_psql('postgres', 'SELECT pg_wal_replay_resume()') if $standby;
	return;
}

# pgbench writing to t on node for seconds, 2 clients; its output goes to $$out.  Returns the
# IPC::Run harness.
sub start_write_load
{
	my ($node, $seconds, $out) = @_;
	my $dir = PostgreSQL::Test::Utils::tempdir;
	my ($pz_name, $pz_value) =
	  exists $AM{t_pz} ? (', pz', ', ST_MakePoint(:a % 1000, :a / 20, :a % 500)') : ('', '');
	PostgreSQL::Test::Utils::append_to_file("$dir/write.sql", qq{
\\set a random(1, 40000)
INSERT INTO t (k, s, v, bx$pz_name) VALUES (:a % 5000, 'name ' || :a || repeat('y', :a % 60), :a * 7,
  box(point(:a % 1000, :a / 20), point(:a % 1000 + 2, :a / 20 + 2))$pz_value);
UPDATE t SET k = (k + 1) % 5000, v = v + 1 WHERE id = :a;
DELETE FROM t WHERE id = (:a * 7) % 40000;
});
	PostgreSQL::Test::Utils::append_to_file("$dir/vacuum.sql", "VACUUM t;\n");
	return IPC::Run::start(
		[
			'pgbench', '-n', '-c', '2', '-j', '2', '-T', $seconds,
			'-f', "$dir/write.sql\@20", '-f', "$dir/vacuum.sql\@1",
			'-h', $node->host, '-p', $node->port, 'postgres'
		],
		'>', $out, '2>', $out);
}

1;
