-- pm_index platform objects and inspection functions (pgTAP; run by tests/run through pg_prove).
SET client_min_messages = warning;
BEGIN;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS pm_index;

SELECT plan(12);

SELECT has_function('pm_index_version', 'pm_index_version() exists');
SELECT function_returns('pm_index_version', 'text', 'pm_index_version() returns text');
SELECT is(pm_index_version(), (SELECT extversion FROM pg_extension WHERE extname = 'pm_index'),
          'library version equals the installed extension version');
SELECT volatility_is('pm_index_version', 'immutable', 'pm_index_version() is immutable');

SELECT has_function('pm_index_pools', 'pm_index_pools() exists');
SELECT function_returns('pm_index_pools', 'setof record', 'pm_index_pools() returns a set');
SELECT lives_ok('SELECT * FROM pm_index_pools()', 'pm_index_pools() runs');
SELECT ok(NOT has_function_privilege('public', 'pm_index_pools()', 'EXECUTE'),
          'PUBLIC cannot execute pm_index_pools()');
SELECT ok(has_function_privilege('pg_monitor', 'pm_index_pools()', 'EXECUTE'),
          'pg_monitor can execute pm_index_pools()');

SELECT is((SELECT setting FROM pg_settings WHERE name = 'shared_preload_libraries') ~ 'pm_index',
          true, 'the server preloads pm_index');
SELECT throws_ok('SET pm_index.pool_dir = ''/tmp''', '55P02', NULL,
                 'pm_index.pool_dir cannot change at run time');
SELECT throws_ok('SET pm_index.max_dram_tier_size = ''1GB''', '55P02', NULL,
                 'pm_index.max_dram_tier_size cannot change at run time');

SELECT * FROM finish();
ROLLBACK;
