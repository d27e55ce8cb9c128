-- pm_index platform basics: the extension loads, its functions and settings work.
-- Needs a server with shared_preload_libraries = 'pm_index'.
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

DROP EXTENSION pm_index;
