/* pm_index--0.5.0--0.6.0.sql: update from 0.5.0 (a health check; inspection privileges; nbtree_pm pattern operator classes) */

\echo Use "ALTER EXTENSION pm_index UPDATE TO '0.6.0'" to load this file. \quit

-- pm_index_pools() lists the indexes of this database whose pool file is missing as well as
-- the files: the view gains what is wrong with each.
CREATE OR REPLACE VIEW pm_index_indexes AS
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
       p.path,
       p.detail
FROM pm_index_pools() p
LEFT JOIN pg_database d ON d.oid = p.database
LEFT JOIN pm_index_loaded() l ON l.database = p.database AND l.relfilenode = p.relfilenode
LEFT JOIN pg_class c ON c.oid = p.index
LEFT JOIN pg_am am ON am.oid = c.relam;
COMMENT ON VIEW pm_index_indexes IS
  'every pm_index pool of the cluster and every pm_index index of this database: database, index (when in this database), PM and DRAM-tier bytes, entries (reltuples), states, what is wrong';

-- One row per pm_index index of this database, for monitoring systems to poll: problem is NULL
-- when the index serves queries, else what is wrong and what to do.
CREATE FUNCTION pm_index_health(
    OUT index regclass,
    OUT access_method name,
    OUT state text,
    OUT problem text)
RETURNS SETOF record
LANGUAGE sql VOLATILE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
SELECT p.index,
       am.amname,
       p.state,
       CASE
         WHEN p.state NOT IN ('clean', 'in use', 'temporary') THEN p.detail
         WHEN NOT i.indisvalid THEN
           'the index is invalid (a CREATE INDEX CONCURRENTLY or REINDEX CONCURRENTLY failed or is running); REINDEX or drop it'
       END
FROM @extschema@.pm_index_pools() p
JOIN pg_class c ON c.oid = p.index
JOIN pg_am am ON am.oid = c.relam
JOIN pg_index i ON i.indexrelid = p.index
ORDER BY p.index::oid
$$;
COMMENT ON FUNCTION pm_index_health() IS
  'every pm_index index of this database, its pool''s state and what is wrong with it (NULL: nothing)';

-- Privileges, the way PostgreSQL grants its own: what lists server files and shared memory
-- (pm_index_pools, pm_index_loaded, pm_index_dram_tier, the view, this health check) is for
-- pg_monitor, as pg_ls_waldir(); what reads every entry of an index is for
-- pg_stat_scan_tables, as pgstattuple's pgstatindex(); an index's size is for everyone, as
-- pg_relation_size(); the verifiers are for superusers, as amcheck's.
REVOKE ALL ON FUNCTION pm_index_health() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION pm_index_health() TO pg_monitor;
REVOKE ALL ON FUNCTION pm_index_stats(regclass) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION pm_index_stats(regclass) TO pg_stat_scan_tables;

-- nbtree_pm pattern operator classes, as btree's text_pattern_ops, varchar_pattern_ops and
-- bpchar_pattern_ops: the strings ordered by
-- their bytes whatever the column's collation (src/pg/ordered/ord_column.c family_orders_bytes), so
-- that LIKE 'abc%' and ~ '^abc' get an index range in any collation
-- (src/pg/ordered/ord_planner.c).  As btree's, varchar_pattern_ops is a class for text of the
-- same family.
CREATE OPERATOR FAMILY text_pattern_ops USING nbtree_pm;
CREATE OPERATOR CLASS text_pattern_ops FOR TYPE text USING nbtree_pm FAMILY text_pattern_ops AS
  OPERATOR 1 ~<~, OPERATOR 2 ~<=~, OPERATOR 3 =, OPERATOR 4 ~>=~, OPERATOR 5 ~>~,
  FUNCTION 1 bttext_pattern_cmp(text, text);
CREATE OPERATOR CLASS varchar_pattern_ops FOR TYPE text USING nbtree_pm FAMILY text_pattern_ops AS
  STORAGE text;
CREATE OPERATOR FAMILY bpchar_pattern_ops USING nbtree_pm;
CREATE OPERATOR CLASS bpchar_pattern_ops FOR TYPE bpchar USING nbtree_pm FAMILY bpchar_pattern_ops AS
  OPERATOR 1 ~<~, OPERATOR 2 ~<=~, OPERATOR 3 =, OPERATOR 4 ~>=~, OPERATOR 5 ~>~,
  FUNCTION 1 btbpchar_pattern_cmp(bpchar, bpchar);
