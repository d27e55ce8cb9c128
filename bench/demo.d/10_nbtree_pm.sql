-- nbtree_pm against btree on two identical tables. psql variables (set by bench/demo):
--   rows, keytype (a type with a default nbtree_pm opclass), pk (a key present), lo/hi (a range),
--   lookups (number of point lookups in the batched query).
\set ON_ERROR_STOP 1
\set QUIET 1
\pset pager off
SET client_min_messages = warning;
\echo
\echo '=== nbtree_pm vs btree:' :rows 'rows, key type' :keytype
DROP TABLE IF EXISTS demo_bt, demo_pm;
CREATE TABLE demo_bt AS
  SELECT CAST(g AS :keytype) AS k, md5(g::text) AS v FROM generate_series(1, :rows) g;
CREATE TABLE demo_pm AS SELECT * FROM demo_bt;   -- identical copy

\echo '--- index build'
\timing on
\echo '[btree]'
CREATE INDEX demo_bt_k ON demo_bt USING btree (k);
\echo '[nbtree_pm]'
CREATE INDEX demo_pm_k ON demo_pm USING nbtree_pm (k);
\timing off
VACUUM ANALYZE demo_bt;
VACUUM ANALYZE demo_pm;
SELECT c.relname AS index, pg_size_pretty(pg_relation_size(c.oid)) AS "size in PostgreSQL's files"
  FROM pg_class c WHERE c.relname IN ('demo_bt_k', 'demo_pm_k') ORDER BY 1;

\echo '--- point query plans (btree, then nbtree_pm)'
EXPLAIN (ANALYZE, BUFFERS) SELECT * FROM demo_bt WHERE k = :pk;
EXPLAIN (ANALYZE, BUFFERS) SELECT * FROM demo_pm WHERE k = :pk;
\echo '--- range query plans (btree, then nbtree_pm)'
EXPLAIN (ANALYZE, BUFFERS) SELECT count(*), max(v) FROM demo_bt WHERE k BETWEEN :lo AND :hi;
EXPLAIN (ANALYZE, BUFFERS) SELECT count(*), max(v) FROM demo_pm WHERE k BETWEEN :lo AND :hi;
\echo '--- batched point lookups: one parameterised index probe per row of generate_series'
EXPLAIN (COSTS OFF) SELECT count(s.v) FROM generate_series(1, :lookups) i,
  LATERAL (SELECT v FROM demo_pm WHERE k = CAST((i::bigint * 7919) % :rows + 1 AS :keytype) OFFSET 0) s;

\echo '--- timed, side by side (caches are warm)'
\timing on
\echo '[btree] point query'
SELECT * FROM demo_bt WHERE k = :pk;
\echo '[nbtree_pm] point query'
SELECT * FROM demo_pm WHERE k = :pk;
\echo '[btree] range query'
SELECT count(*), max(v) FROM demo_bt WHERE k BETWEEN :lo AND :hi;
\echo '[nbtree_pm] range query'
SELECT count(*), max(v) FROM demo_pm WHERE k BETWEEN :lo AND :hi;
-- OFFSET 0 keeps the subquery from being flattened into a hash join: one index probe per i.
\echo '[btree]' :lookups 'point lookups in one query'
SELECT count(s.v) AS found FROM generate_series(1, :lookups) i,
  LATERAL (SELECT v FROM demo_bt WHERE k = CAST((i::bigint * 7919) % :rows + 1 AS :keytype) OFFSET 0) s;
\echo '[nbtree_pm]' :lookups 'point lookups in one query'
SELECT count(s.v) AS found FROM generate_series(1, :lookups) i,
  LATERAL (SELECT v FROM demo_pm WHERE k = CAST((i::bigint * 7919) % :rows + 1 AS :keytype) OFFSET 0) s;
\timing off
