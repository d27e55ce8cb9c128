-- What a DBA sees of the indexes the demo built: where they live, their sizes (which
-- pg_relation_size cannot see), the shared DRAM tier, each index's shape and scans.
\set ON_ERROR_STOP 1
\set QUIET 1
\pset pager off
SET client_min_messages = warning;
SELECT to_regclass('pm_index_indexes') IS NOT NULL AS has_view,
       to_regprocedure('pm_index_stats(regclass)') IS NOT NULL AS has_stats \gset
\echo
\echo '=== monitoring'
\if :has_view
\echo '--- every pool of the cluster (pm_index_indexes)'
SELECT database, index, access_method, pg_size_pretty(pm_bytes) AS pm_size,
       pg_size_pretty(dram_bytes) AS dram_size, entries, pool_state, dram_state
  FROM pm_index_indexes ORDER BY index::text;
\echo '--- sizes: pg_relation_size sees the metapage, pm_index_size the pool'
SELECT c.oid::regclass AS index, am.amname AS access_method,
       pg_size_pretty(pg_relation_size(c.oid)) AS relation_size,
       CASE WHEN am.amname IN ('nbtree_pm', 'phast_pm', 'fbrtree_pm')
            THEN pg_size_pretty(pm_index_size(c.oid)) END AS pool_size
  FROM pg_class c JOIN pg_am am ON am.oid = c.relam
 WHERE c.relkind = 'i' AND c.relname LIKE 'demo\_%'
 ORDER BY 1;
\echo '--- the DRAM tier shared by every index (pm_index_dram_tier)'
SELECT pg_size_pretty(bytes) AS size, pg_size_pretty(used_bytes) AS used,
       pg_size_pretty(max_bytes) AS may_grow_to
  FROM pm_index_dram_tier();
\else
\echo '(no pm_index_indexes yet)'
\endif
\if :has_stats
\echo '--- each pm_index index: shape and persistence cost (pm_index_stats)'
SELECT c.oid::regclass AS index, s.entries, s.height, pg_size_pretty(s.pm_bytes) AS pm,
       pg_size_pretty(s.dram_bytes) AS dram, s.inserts,
       round(s.flushes_per_write::numeric, 2) AS flushes_per_write
  FROM pg_class c JOIN pg_am am ON am.oid = c.relam,
       LATERAL pm_index_stats(c.oid) s
 WHERE c.relkind = 'i' AND c.relname LIKE 'demo\_%'
   AND am.amname IN ('nbtree_pm', 'phast_pm', 'fbrtree_pm')
 ORDER BY 1;
\endif
\echo '--- scans counted as for btree and GiST (pg_stat_user_indexes; flushed at session end)'
SELECT indexrelname AS index, idx_scan, idx_tup_read
  FROM pg_stat_user_indexes WHERE indexrelname LIKE 'demo\_%' ORDER BY 1;
