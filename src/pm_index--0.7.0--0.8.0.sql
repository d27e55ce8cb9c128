-- pm_index 0.8.0: tiered writes (WITH (tiered = on)) and what waits in their logs

\echo Use "ALTER EXTENSION pm_index UPDATE TO '0.8.0'" to load this file. \quit

CREATE FUNCTION pm_index_tier_lag(index regclass,
    OUT waiting_entries bigint, OUT waiting_bytes bigint, OUT oldest_wait interval)
AS 'MODULE_PATHNAME', 'pm_index_tier_lag'
LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;
COMMENT ON FUNCTION pm_index_tier_lag(regclass) IS
  'what waits in a tiered pm_index index''s operation log for the replay workers: entries, bytes, how long the oldest has waited (0 and NULL when nothing waits or the index is not loaded)';
REVOKE ALL ON FUNCTION pm_index_tier_lag(regclass) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION pm_index_tier_lag(regclass) TO pg_stat_scan_tables;

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
       p.detail,
       t.waiting_entries,
       t.waiting_bytes,
       t.oldest_wait
FROM pm_index_pools() p
LEFT JOIN pg_database d ON d.oid = p.database
LEFT JOIN pm_index_loaded() l ON l.database = p.database AND l.relfilenode = p.relfilenode
LEFT JOIN pg_class c ON c.oid = p.index
LEFT JOIN pg_am am ON am.oid = c.relam
LEFT JOIN LATERAL pm_index_tier_lag(p.index) t ON l.state IS NOT NULL;
COMMENT ON VIEW pm_index_indexes IS
  'every pm_index pool of the cluster and every pm_index index of this database: database, index (when in this database), PM and DRAM-tier bytes, entries (reltuples), states, what is wrong, what waits in a tiered index''s log';
