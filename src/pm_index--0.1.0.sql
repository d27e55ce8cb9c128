/* pm_index--0.1.0.sql: the install script of pm_index */

\echo Use "CREATE EXTENSION pm_index" to load this file. \quit

CREATE FUNCTION pm_index_version() RETURNS text
AS 'MODULE_PATHNAME', 'pm_index_version'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION pm_index_version() IS 'version of the pm_index library';

CREATE FUNCTION pm_index_pools(
    OUT path text,
    OUT index regclass,
    OUT database oid,
    OUT relfilenode oid,
    OUT bytes bigint,
    OUT mode text,
    OUT is_pmem boolean,
    OUT state text,
    OUT detail text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pm_index_pools'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION pm_index_pools() IS 'one row per pool file in pm_index.pool_dir';

-- It names server files: keep it to superusers and monitoring roles.
REVOKE ALL ON FUNCTION pm_index_pools() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION pm_index_pools() TO pg_monitor;
