# Pools copied by a base backup or pg_rewind changed while they were copied.  A server that starts
# from one replaces each with an empty pool that replay and inserts keep current, and once it
# accepts connections (a hot standby too) a background worker builds the pool from its table.
# Until then queries do not use the index and pm_index_pools() shows it building; writes never
# fail, and a unique index's inserts wait for its build.  Covered, for every access method: a base
# backup taken under pgbench load and restored, with a prepared transaction open across it (the
# builds wait for it); PITR to a named restore point; a standby made from the backup, which builds
# while it replays, then promoted; the old primary rewound with pg_rewind, rejoining as a standby,
# then promoted.  pg_dump and pg_restore recreate working indexes.
use strict;
use warnings;
use FindBin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use lib "$FindBin::Bin/../lib";
use PmNode;
use PmTable;

my $conf = "shared_preload_libraries = 'pm_index'\nmax_prepared_transactions = 5\nwal_log_hints = on\n"
  . "wal_keep_size = '256MB'\n";
my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1, has_archiving => 1);
$primary->append_conf('postgresql.conf', $conf);
$primary->start;
$primary->safe_psql('postgres', 'CREATE EXTENSION pm_index');
create_table($primary);
$primary->safe_psql('postgres', 'CREATE TABLE plain (k int4); CREATE INDEX plain_k ON plain USING nbtree_pm (k)');
my $building = building_sql();

# The node's answers through each index (or what the planner uses instead) and through the heap.
sub compare
{
	my ($node, $what) = @_;
	my $differ;
	at_one_replay_point($node, sub { $differ = answers_differ($node) });
	is($differ, '', "$what: every index answers as the heap does");
}

# Wait for the background builds, then every index is planned, answers and verifies.
sub built
{
	my ($node, $what) = @_;
	ok($node->poll_query_until('postgres', "SELECT ($building) IS NULL"),
		"$what: the background builds end");
	is(planned($node), $INDEXES, "$what: every index is planned again");
	compare($node, $what);
	my $checks;
	at_one_replay_point(
		$node,
		sub {
			$checks = $node->safe_psql(
				'postgres', verify_sql());
		});
	is($checks, verified(), "$what: every verifier passes, every heap tuple indexed");
}

# A prepared transaction's rows, inserted before the backup, committed after the restore: the build
# must wait for it, or the restored indexes would miss them.
$primary->safe_psql('postgres',
	q{BEGIN; INSERT INTO t (k, s, v, bx) VALUES (-1, 'prepared', -7, box(point(150,150), point(151,151)));
	  PREPARE TRANSACTION 'across'});

# A base backup under load: inserts, updates that move rows, deletes, VACUUM.
my $load_out = '';
my $load = start_write_load($primary, 8, \$load_out);
sleep(2);
$primary->backup('base');
$load->finish;
like($load_out, qr/number of transactions actually processed: [1-9]/, 'the load ran during the backup');

# PITR's target: rows before and after a named restore point, archived.
$primary->safe_psql('postgres',
	q{INSERT INTO t (k, s, v, bx) SELECT -42, 'before point', g, box(point(200,200), point(201,201))
	    FROM generate_series(1, 50) g});
$primary->safe_psql('postgres', q{SELECT pg_create_restore_point('p1')});
$primary->safe_psql('postgres',
	q{INSERT INTO t (k, s, v, bx) SELECT -43, 'after point', g, box(point(200,200), point(201,201))
	    FROM generate_series(1, 50) g});
my $segment = $primary->safe_psql('postgres', 'SELECT pg_walfile_name(pg_current_wal_lsn())');
$primary->safe_psql('postgres', 'SELECT pg_switch_wal()');
$primary->poll_query_until('postgres',
	"SELECT last_archived_wal >= '$segment' FROM pg_stat_archiver") or die 'WAL not archived';

# 1. The backup restored as a new primary (recovery from its backup_label to the end of its WAL).
my $restored = PostgreSQL::Test::Cluster->new('restored');
$restored->init_from_backup($primary, 'base');
# (a copy must not archive into the primary's archive, which PITR below restores from)
$restored->append_conf('postgresql.conf', 'archive_mode = off');
$restored->start;
is($restored->safe_psql('postgres', $building), $INDEXES,
	'restored: every pool is being built (a prepared transaction older than the start is open)');
is(planned($restored), '', 'restored: the planner uses none of them meanwhile');
compare($restored, 'restored, pools being built');
$restored->safe_psql('postgres', 'INSERT INTO plain VALUES (1)');
pass('restored: a non-unique index takes inserts while it is built');
my ($ins_out, $ins_err) = ('', '');
my $unique_insert = psql_start($restored, \$ins_out, \$ins_err,
	q{INSERT INTO t (k, s, v, bx) VALUES (-1, 'waited', -7, box(point(150,150), point(151,151)))});
ok( $restored->poll_query_until(
		'postgres', q{SELECT count(*) = 1 FROM pg_stat_activity
		  WHERE query LIKE 'INSERT INTO t%' AND wait_event_type = 'Extension'}),
	'restored: an insert into the unique index waits for its build');
$restored->safe_psql('postgres', q{COMMIT PREPARED 'across'});
$unique_insert->finish;
is($ins_err, '', 'restored: and succeeds once the build is done');
built($restored, 'restored');
is($restored->safe_psql('postgres', "${BY_INDEX}SELECT string_agg(s, ',' ORDER BY s) FROM t WHERE k = -1"),
	'prepared,waited', 'restored: the prepared transaction\'s row and the waiting insert are in the index');
ok($restored->log_contains(qr/pm_index: built index "t_bx" from its table/),
	'restored: the server log says which index was built');
$restored->restart;
is(planned($restored), $INDEXES, 'restored: after a restart the built pools are used');

# 2. PITR to the named restore point, then promoted.
my $pitr = PostgreSQL::Test::Cluster->new('pitr');
$pitr->init_from_backup($primary, 'base', has_restoring => 1, standby => 0);
$pitr->append_conf('postgresql.conf',
	"recovery_target_name = 'p1'\nrecovery_target_action = 'promote'\narchive_mode = off");
$pitr->start;
$pitr->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()') or die 'PITR did not end';
$pitr->safe_psql('postgres', q{COMMIT PREPARED 'across'});
built($pitr, 'PITR');
is( $pitr->safe_psql(
		'postgres', "${BY_INDEX}SELECT count(*) FILTER (WHERE k = -42), count(*) FILTER (WHERE k = -43)
		  FROM t WHERE k BETWEEN -43 AND -42"),
	'50|0', 'PITR: the index holds the rows before the restore point, none after');

# 3. A standby made from the backup: it replays into its replaced pools and builds them itself,
# once the prepared transaction, older than its start, has ended.
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'base', has_streaming => 1);
$standby->append_conf('postgresql.conf', 'archive_mode = off');
$standby->start;
$primary->safe_psql('postgres', q{UPDATE t SET k = k + 1 WHERE id % 7 = 0; DELETE FROM t WHERE id % 11 = 0});
$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres', $building), $INDEXES,
	'standby: every pool is being built');
is(planned($standby), '', 'standby: the planner uses none of them meanwhile');
compare($standby, 'standby, pools being built');
$primary->safe_psql('postgres', q{COMMIT PREPARED 'across'});
$primary->safe_psql('postgres', q{UPDATE t SET v = v + 1 WHERE id % 13 = 0});
$primary->wait_for_catchup($standby);
built($standby, 'standby');
is($standby->safe_psql('postgres', "${BY_INDEX}SELECT string_agg(s, ',' ORDER BY s) FROM t WHERE k = -1"),
	'prepared', 'standby: the prepared transaction\'s row is in the index');
$standby->promote;
$standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()');
$standby->safe_psql('postgres',
	q{INSERT INTO t (k, s, v, bx) VALUES (-1, 'promoted', -7, box(point(150,150), point(151,151)))});
compare($standby, 'promoted standby, after a write');

# 4. The old primary, which went on alone, rewound onto the promoted standby and rejoined as its
# standby: its pools, copies again, are replaced and built there; then it is promoted.
$primary->safe_psql('postgres', q{INSERT INTO t (k, s, v) VALUES (-1, 'diverged', -7)});
$primary->stop;
# (pg_rewind copies the source's configuration, with its port: keep the target's)
my $conf_file = $primary->data_dir . '/postgresql.conf';
my $saved_conf = slurp_file($conf_file);
command_ok(
	[
		'pg_rewind', '--target-pgdata', $primary->data_dir,
		'--source-server', $standby->connstr('postgres'), '--no-sync'
	],
	'pg_rewind of the old primary');
open(my $fh, '>', $conf_file) or die "could not write $conf_file: $!";
print $fh $saved_conf;
close($fh);
$primary->enable_streaming($standby);
$primary->start;
$standby->safe_psql('postgres', q{UPDATE t SET v = v + 1 WHERE id % 5 = 0});
$standby->wait_for_catchup($primary);
ok($primary->log_contains(qr/pm_index: replaced \d+ pools copied by a backup/),
	'rewound: the pools pg_rewind left were replaced');
built($primary, 'rewound standby');
is($primary->safe_psql('postgres', "${BY_INDEX}SELECT string_agg(s, ',' ORDER BY s) FROM t WHERE k = -1"),
	'prepared,promoted', 'rewound: the diverged row is gone, the new primary\'s is there');
$primary->promote;
$primary->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()');
$primary->safe_psql('postgres', q{UPDATE t SET k = k + 1 WHERE id % 3 = 0});
compare($primary, 'rewound, then promoted, after a write');

# pg_dump and pg_restore: the indexes are recreated by CREATE INDEX and work, every kind.
my $dump = $primary->basedir . '/db.dump';
$primary->command_ok([ 'pg_dump', '-Fc', '-f', $dump, '-d', $primary->connstr('postgres') ],
	'pg_dump of a database with pm_index indexes');
$primary->safe_psql('postgres', 'CREATE DATABASE copy');
$primary->command_ok([ 'pg_restore', '-d', $primary->connstr('copy'), $dump ], 'pg_restore of it');
is( $primary->safe_psql(
		'copy', q{SELECT string_agg(c.relname || ':' || a.amname, ' ' ORDER BY c.relname)
		  FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE a.amname LIKE '%_pm'}),
	join(' ', 'plain_k:nbtree_pm', map { "$_:$AM{$_}" } sort keys %AM),
	'the restored database has every index');
my @secondary = grep { $_ ne 't_id' && $_ ne 't_s' } sort keys %AM;
is($primary->safe_psql('copy', verify_sql(@secondary)), verified(@secondary), 'and they verify');

$_->stop for ($primary, $restored, $pitr, $standby);
# No server started from the backup says it reconciled an index after a crash (a reconciliation
# there follows a start from a base backup, and says so).
for my $copy ($restored, $pitr, $standby)
{
	ok(!$copy->log_contains(qr/pm_index: reconciled index "[^"]*" with its table after a crash/),
		$copy->name . ': no reconciliation is logged as following a crash');
}

done_testing();
