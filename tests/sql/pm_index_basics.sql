-- pm_index platform basics: the extension loads, its functions and settings work.
-- Needs a server with shared_preload_libraries = 'pm_index'.
-- in a database of its own: the extension's whole life, and no other test's indexes
SELECT current_database() AS origdb \gset
CREATE DATABASE pm_index_basics;
\c pm_index_basics
CREATE EXTENSION pm_index;

SELECT pm_index_version() ~ '^[0-9]+\.[0-9]+\.[0-9]+$' AS version_is_semver;
SELECT pm_index_version() = extversion AS library_matches_extension
  FROM pg_extension WHERE extname = 'pm_index';

-- One row per pool file; the columns are what the documentation promises.
SELECT count(*) >= 0 AS pools_listed FROM pm_index_pools();
SELECT pg_get_function_arguments('pm_index_pools'::regproc);

-- Settings exist, most are postmaster-level, and their prefix is reserved.
SELECT name, context, vartype, enumvals
  FROM pg_settings WHERE name LIKE 'pm_index.%' ORDER BY name;
SET pm_index.persistence = 'adr';
SET pm_index.no_such_setting = 1;

-- pm_index_pools() names server files: not for ordinary roles.
CREATE ROLE pm_index_regress_user;
SET ROLE pm_index_regress_user;
SELECT * FROM pm_index_pools();
RESET ROLE;
DROP ROLE pm_index_regress_user;

-- Who may run each inspection function, as PostgreSQL grants its own: what names server files
-- or shared memory is pg_monitor's (as pg_ls_waldir), what reads every entry of an index is
-- pg_stat_scan_tables' (as pgstattuple's), an index's size everyone's (as pg_relation_size),
-- the verifiers superusers' (as amcheck's).
SELECT p.oid::regprocedure AS function,
       has_function_privilege('public', p.oid, 'EXECUTE') AS public,
       has_function_privilege('pg_monitor', p.oid, 'EXECUTE') AS pg_monitor,
       has_function_privilege('pg_stat_scan_tables', p.oid, 'EXECUTE') AS pg_stat_scan_tables
  FROM pg_proc p
  WHERE p.proname ~ '^(pm_index_|nbtree_pm_check|phast_pm_check|fbrtree_pm_check)'
  ORDER BY p.proname;
SELECT has_table_privilege('public', 'pm_index_indexes', 'SELECT') AS public_view,
       has_table_privilege('pg_monitor', 'pm_index_indexes', 'SELECT') AS pg_monitor_view;

-- An OID that names no index, or a relation that is no pm_index index: errors with SQLSTATEs
-- of their own, as PostgreSQL's functions give them.
CREATE TABLE pm_index_not_an_index (k int);
CREATE INDEX pm_index_btree ON pm_index_not_an_index (k);
SELECT pm_index_stats(0);
SELECT pm_index_size(0);
SELECT pm_index_stats('pm_index_not_an_index');
SELECT pm_index_stats('pm_index_btree');
\set VERBOSITY sqlstate
SELECT pm_index_stats(0);
SELECT pm_index_stats('pm_index_not_an_index');
\set VERBOSITY default
DROP TABLE pm_index_not_an_index;
SELECT * FROM pm_index_health();

DROP EXTENSION pm_index;
\c :origdb
DROP DATABASE pm_index_basics;
