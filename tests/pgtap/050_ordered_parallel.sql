-- Parallel index scans of an ordered access method return btree's rows: counts and sums over
-- ranges and the whole index (Parallel Index Only Scan), rows in order under Gather Merge both
-- ways, = ANY lists, NULLs first and last, a DESC index, without the leader's participation,
-- and under a Gather that a nested loop rescans once per outer row.  Two identical tables, one indexed with the access
-- method and one with btree; each plan is checked to be a parallel scan of the index.
-- The access method is the psql variable am (tests/run runs the file once per ordered access
-- method); nbtree_pm without it.
\set schema pm_parallel
\ir ../lib/ordered_pgtap.sql

SET jit = off;
SELECT * FROM no_plan();
SELECT setseed(0.3131);
CREATE TABLE pm (id int, k int8, pad text);
INSERT INTO pm SELECT g, CASE WHEN g % 97 = 0 THEN NULL ELSE (random() * 50000)::int8 END, 'x'
  FROM generate_series(1, 200000) g;
CREATE TABLE bt AS SELECT * FROM pm;
SELECT format('CREATE INDEX pm_k ON pm USING %s (k)', :'am') AS create_pm \gset
:create_pm;
SELECT format('CREATE INDEX pm_k_desc ON pm USING %s (k DESC NULLS LAST)', :'am') AS create_pm_desc \gset
CREATE INDEX bt_k ON bt (k);
VACUUM ANALYZE pm;
VACUUM ANALYZE bt;

SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_index_scan_size = 0;
SET min_parallel_table_scan_size = 0;
SET enable_seqscan = off;
SET enable_bitmapscan = off;

CREATE FUNCTION plan_lines(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
  l text;
BEGIN
  FOR l IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    RETURN NEXT l;
  END LOOP;
END $$;

-- q: a query with %s for the table; on pm its plan must scan pm_k in parallel
CREATE FUNCTION same_as_btree(q text, what text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
  plan text := (SELECT string_agg(l, E'\n') FROM plan_lines(format(q, 'pm')) l);
BEGIN
  RETURN NEXT ok(plan ~ 'Parallel Index (Only )?Scan (Backward )?using pm_k', what || ': a parallel scan of the index');
  IF plan !~ 'Parallel Index' THEN
    RETURN NEXT diag(plan);
  END IF;
  RETURN NEXT results_eq(format(q, 'pm'), format(q, 'bt'), what || ': btree''s rows');
END $$;

SELECT same_as_btree('SELECT count(*), sum(k) FROM %s WHERE k BETWEEN 1000 AND 40000', 'a range counted');
SELECT same_as_btree('SELECT count(*) FROM %s WHERE k IS NULL', 'NULLs counted');
SELECT same_as_btree('SELECT count(*), sum(k) FROM %s WHERE k = ANY (ARRAY[5, 17, 17, 4000, 49999, -1])', '= ANY counted');
SELECT same_as_btree('SELECT k, id FROM %s WHERE k > 45000 ORDER BY k, id', 'rows in order');
SELECT same_as_btree('SELECT k FROM %s WHERE k < 3000 OR k IS NULL ORDER BY k DESC NULLS FIRST', 'rows backward, NULLs first');
SELECT same_as_btree('SELECT count(k), count(*), sum(k) FROM %s', 'the whole index');
SET parallel_leader_participation = off;
SELECT same_as_btree('SELECT count(*), sum(k) FROM %s WHERE k >= 100', 'without the leader');
RESET parallel_leader_participation;
-- the inner side of a nested loop (its outer side cannot run in a worker: random() is
-- parallel restricted): Gather and the parallel scan under it are rescanned per outer row
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_material = off;
SELECT same_as_btree('SELECT s.x, count(*), sum(k) FROM (SELECT g AS x, random() AS r FROM generate_series(1, 4) g) s, %s '
                     'WHERE k BETWEEN 1000 AND 9000 GROUP BY s.x ORDER BY s.x', 'rescanned per outer row');
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET enable_material;

-- a DESC NULLS LAST index read in its own order
DROP INDEX pm_k;
:create_pm_desc;
SELECT results_eq('SELECT k FROM pm WHERE k > 30000 OR k IS NULL ORDER BY k DESC NULLS LAST',
                  'SELECT k FROM bt WHERE k > 30000 OR k IS NULL ORDER BY k DESC NULLS LAST',
                  'a DESC index in parallel: btree''s rows');
SELECT ok(string_agg(l, ' ') ~ 'Parallel Index Only Scan using pm_k_desc', 'a DESC index: a parallel scan')
  FROM plan_lines('SELECT k FROM pm WHERE k > 30000 OR k IS NULL ORDER BY k DESC NULLS LAST') l;

SELECT * FROM finish();
DROP SCHEMA pm_parallel CASCADE;
