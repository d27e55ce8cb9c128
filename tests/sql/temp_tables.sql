-- Indexes on temporary tables answer as a sequential scan does.  A temporary index's pool is
-- named after its backend ("t<backend>_...") and removed with the index: at the end of the
-- session's next transaction after a DROP, TRUNCATE, REINDEX or rolled-back CREATE (the
-- relation's file goes only after the transaction's end), and when the session ends.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pm_index;
CREATE VIEW temp_pool_count AS
  SELECT count(*) AS temp_pools FROM pm_index_pools()
  WHERE path ~ '/t[0-9]+_[0-9]+_[0-9]+_[0-9]+\.pmpool$';

CREATE TEMP TABLE tt (k int8, p point, b bool);
INSERT INTO tt SELECT g, point(g % 100, g / 100), g % 3 = 0 FROM generate_series(1, 5000) g;
INSERT INTO tt VALUES (NULL, NULL, NULL), (-0, point(0, 0), false);
CREATE INDEX tt_k ON tt USING nbtree_pm (k DESC);
CREATE INDEX tt_p ON tt USING fbrtree_pm (p);
CREATE INDEX tt_b ON tt USING nbtree_pm (b);
ANALYZE tt;
SELECT * FROM temp_pool_count;
SELECT relpersistence, amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam
  WHERE c.oid IN ('tt_k'::regclass, 'tt_p'::regclass) ORDER BY amname;
-- monitoring names a temporary index's pool and calls it temporary
SELECT index, state FROM pm_index_pools() WHERE path ~ '/t[0-9]+_' ORDER BY index::text;

-- the same queries through the indexes, then by a sequential scan
CREATE TEMP TABLE answers (how text, q int, answer text);
CREATE FUNCTION pg_temp.ask(how text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO answers SELECT how, 1, count(*) || '/' || sum(k) FROM tt WHERE k BETWEEN 100 AND 200;
  INSERT INTO answers SELECT how, 2, string_agg(coalesce(k::text, 'NULL'), ',')
    FROM (SELECT k FROM tt ORDER BY k DESC NULLS FIRST LIMIT 3) s;
  INSERT INTO answers SELECT how, 3, count(*) FROM tt WHERE p <@ box '((10,10),(20,20))';
  INSERT INTO answers SELECT how, 4, string_agg(p::text, ',')
    FROM (SELECT p FROM tt ORDER BY p <-> point '(50.2, 20.7)', k LIMIT 3) s;
  INSERT INTO answers SELECT how, 5, count(*) FROM tt WHERE b;
  INSERT INTO answers SELECT how, 6, min(k) || '/' || max(k) FROM tt;
END $$;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM tt WHERE k BETWEEN 100 AND 200;
EXPLAIN (COSTS OFF) SELECT count(*) FROM tt WHERE p <@ box '((10,10),(20,20))';
EXPLAIN (COSTS OFF) SELECT count(*) FROM tt WHERE b;
SELECT pg_temp.ask('index');
RESET enable_seqscan;
RESET enable_bitmapscan;
SET enable_indexscan = off;
SET enable_indexonlyscan = off;
SET enable_bitmapscan = off;
SELECT pg_temp.ask('seqscan');
RESET enable_indexscan;
RESET enable_indexonlyscan;
RESET enable_bitmapscan;
SELECT q, i.answer, i.answer = s.answer AS same FROM answers i JOIN answers s USING (q)
  WHERE i.how = 'index' AND s.how = 'seqscan' ORDER BY q;

-- writes, a rolled-back insert, VACUUM, REINDEX and TRUNCATE keep it right
BEGIN;
INSERT INTO tt SELECT g, point(0, 0), true FROM generate_series(10001, 11000) g;
ROLLBACK;
DELETE FROM tt WHERE k % 2 = 0;
VACUUM tt;
SELECT nbtree_pm_check('tt_k', true), fbrtree_pm_check('tt_p', true), nbtree_pm_check('tt_b', true);
REINDEX TABLE tt;
TRUNCATE tt;
INSERT INTO tt SELECT g, point(g, g), true FROM generate_series(1, 100) g;
SELECT * FROM temp_pool_count;
SET enable_seqscan = off;
SELECT count(*) FROM tt WHERE k > 90;
RESET enable_seqscan;
SELECT nbtree_pm_check('tt_k', true), fbrtree_pm_check('tt_p', true);

-- ON COMMIT DELETE ROWS empties the index at each commit; ON COMMIT DROP and a rolled-back
-- CREATE leave no pool behind
CREATE TEMP TABLE od (k int8) ON COMMIT DELETE ROWS;
CREATE INDEX od_k ON od USING nbtree_pm (k);
BEGIN;
INSERT INTO od SELECT generate_series(1, 1000);
SET LOCAL enable_seqscan = off;
SELECT count(*) FROM od WHERE k > 500;
COMMIT;
SET enable_seqscan = off;
SELECT count(*) FROM od WHERE k > 500;
RESET enable_seqscan;
BEGIN;
CREATE TEMP TABLE oc (k int8) ON COMMIT DROP;
CREATE INDEX ON oc USING nbtree_pm (k);
INSERT INTO oc SELECT generate_series(1, 100);
COMMIT;
BEGIN;
CREATE TEMP TABLE ab (p point);
CREATE INDEX ON ab USING fbrtree_pm (p);
ROLLBACK;
SELECT 1 AS next_transaction;
SELECT * FROM temp_pool_count;

DROP TABLE tt, od;
SELECT 1 AS next_transaction;
SELECT * FROM temp_pool_count;
DROP VIEW temp_pool_count;
