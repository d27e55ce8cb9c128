/* pm_index--0.1.0--0.2.0.sql: update from 0.1.0 (monitoring of sizes and of the DRAM tier) */

\echo Use "ALTER EXTENSION pm_index UPDATE TO '0.2.0'" to load this file. \quit

CREATE FUNCTION pm_index_size(index regclass) RETURNS bigint
AS 'MODULE_PATHNAME', 'pm_index_size'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;
COMMENT ON FUNCTION pm_index_size(regclass) IS
  'bytes of the pool file of a pm_index index (pg_relation_size shows only its metapage)';

CREATE FUNCTION pm_index_loaded(
    OUT database oid,
    OUT tablespace oid,
    OUT relfilenode oid,
    OUT access_method text,
    OUT state text,
    OUT inserts bigint,
    OUT deletes bigint,
    OUT dram_bytes bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pm_index_loaded'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;
COMMENT ON FUNCTION pm_index_loaded() IS
  'the indexes used since startup, in every database, the state of their DRAM layer and its bytes';

CREATE FUNCTION pm_index_dram_tier(OUT bytes bigint, OUT used_bytes bigint, OUT max_bytes bigint)
AS 'MODULE_PATHNAME', 'pm_index_dram_tier'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;
COMMENT ON FUNCTION pm_index_dram_tier() IS
  'the DRAM tier shared by every pm_index index: its size, the bytes in use, the most it may grow to';

-- Every pool of the cluster with its index's state: what a DBA looks at for sizes.
CREATE VIEW pm_index_indexes AS
SELECT d.datname AS database,
       p.index,
       p.relfilenode,
       coalesce(l.access_method, am.amname::text) AS access_method,
       p.bytes AS pm_bytes,
       l.dram_bytes,
       CASE WHEN c.reltuples >= 0 THEN c.reltuples::bigint END AS entries,
       p.state AS pool_state,
       coalesce(l.state, 'not loaded') AS dram_state,
       l.inserts,
       l.deletes,
       p.path
FROM pm_index_pools() p
LEFT JOIN pg_database d ON d.oid = p.database
LEFT JOIN pm_index_loaded() l ON l.database = p.database AND l.relfilenode = p.relfilenode
LEFT JOIN pg_class c ON c.oid = p.index
LEFT JOIN pg_am am ON am.oid = c.relam;
COMMENT ON VIEW pm_index_indexes IS
  'every pm_index pool of the cluster: database, index (when in this database), PM and DRAM-tier bytes, entries (reltuples), states';

REVOKE ALL ON FUNCTION pm_index_loaded() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION pm_index_loaded() TO pg_monitor;
REVOKE ALL ON FUNCTION pm_index_dram_tier() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION pm_index_dram_tier() TO pg_monitor;
REVOKE ALL ON pm_index_indexes FROM PUBLIC;
GRANT SELECT ON pm_index_indexes TO pg_monitor;
