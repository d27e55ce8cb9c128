-- Tiered writes: an index WITH (tiered = on) answers as btree (fbrtree_pm: GiST) does while
-- its inserts wait in its operation log and after the replay workers applied them (the
-- differential suite, tests/t/090_differential.pl, reads tiered indexes with every row waiting).
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pm_index;
RESET client_min_messages;

CREATE TABLE ti (k int8, t text, u uuid);
CREATE TABLE ti_bt (k int8, t text, u uuid);
CREATE INDEX ti_k ON ti USING nbtree_pm (k) WITH (tiered = on);
CREATE INDEX ti_t ON ti USING nbtree_pm (t DESC) WITH (tiered = true);
CREATE INDEX ti_u ON ti USING nbtree_pm (u) WITH (tiered = on);
CREATE UNIQUE INDEX ti_k_uq ON ti USING phast_pm (k) WITH (tiered = on) WHERE k > 0;
CREATE INDEX ti_bt_k ON ti_bt (k);
CREATE INDEX ti_bt_t ON ti_bt (t DESC);
CREATE INDEX ti_bt_u ON ti_bt (u);
SELECT c.relname, c.reloptions FROM pg_class c WHERE c.relname LIKE 'ti\__%' ESCAPE '\' ORDER BY 1;

-- a bad value, and hash_pm, whose inserts always go through its log
CREATE INDEX ON ti USING nbtree_pm (k) WITH (tiered = maybe);
CREATE INDEX ON ti USING hash_pm (k) WITH (tiered = on);

-- rows inserted one statement at a time and in bulk, short and long strings
DO $$
BEGIN
  FOR i IN 1..500 LOOP
    INSERT INTO ti VALUES (i, md5(i::text) || repeat('x', i % 40), md5(i::text)::uuid);
  END LOOP;
END $$;
INSERT INTO ti SELECT g, md5(g::text) || repeat('y', g % 300), md5((g * 7)::text)::uuid
  FROM generate_series(501, 20000) g;
INSERT INTO ti VALUES (NULL, NULL, NULL), (-1, '', NULL);
INSERT INTO ti_bt SELECT * FROM ti;

CREATE FUNCTION ti_same(q text, tested text DEFAULT 'ti', oracle text DEFAULT 'ti_bt') RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE a text; b text;
BEGIN
  EXECUTE format('SELECT string_agg(x::text, '','') FROM (%s) s(x)', format(q, tested)) INTO a;
  EXECUTE format('SELECT string_agg(x::text, '','') FROM (%s) s(x)', format(q, oracle)) INTO b;
  RETURN a IS NOT DISTINCT FROM b;
END $$;

SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT k FROM ti WHERE k BETWEEN 10 AND 20 ORDER BY k DESC;
SELECT ti_same('SELECT k FROM %s WHERE k BETWEEN 10 AND 5000 ORDER BY k') AS range_asc,
       ti_same('SELECT k FROM %s WHERE k < 300 ORDER BY k DESC LIMIT 50') AS desc_limit,
       ti_same('SELECT k FROM %s WHERE k = ANY(''{1,2,3,500,19999}'') ORDER BY k') AS any_array,
       ti_same('SELECT count(*) FROM %s WHERE k IS NULL') AS is_null,
       ti_same('SELECT t FROM %s WHERE t > ''8'' ORDER BY t DESC LIMIT 200') AS wide_desc,
       ti_same('SELECT t FROM %s WHERE t BETWEEN ''a'' AND ''b'' ORDER BY t') AS wide_asc,
       ti_same('SELECT u FROM %s WHERE u < ''30000000-0000-0000-0000-000000000000'' ORDER BY u') AS uuid_range;
RESET enable_bitmapscan;
SET enable_indexscan = off;
SELECT ti_same('SELECT k FROM %s WHERE k BETWEEN 100 AND 900 ORDER BY k') AS bitmap;
RESET enable_indexscan;

-- a unique tiered index refuses the second insert of a value, waiting in the log or not
INSERT INTO ti (k) VALUES (7);
INSERT INTO ti (k) VALUES (20001);
INSERT INTO ti (k) VALUES (20001);
INSERT INTO ti_bt (k) VALUES (20001);

-- VACUUM applies what waits before it deletes; the verifier sees every entry
DELETE FROM ti WHERE k % 3 = 0;
DELETE FROM ti_bt WHERE k % 3 = 0;
VACUUM ti;
VACUUM ti_bt;
SELECT waiting_entries, waiting_bytes, oldest_wait FROM pm_index_tier_lag('ti_k');
SELECT nbtree_pm_check('ti_k', true), nbtree_pm_check('ti_t', true),
       nbtree_pm_check('ti_u', true), phast_pm_check('ti_k_uq', true);
SELECT ti_same('SELECT k FROM %s ORDER BY k') AS after_vacuum,
       ti_same('SELECT t FROM %s WHERE t < ''5'' ORDER BY t DESC') AS wide_after_vacuum;

-- tiering turned off: inserts go straight into the index
ALTER INDEX ti_k SET (tiered = off);
INSERT INTO ti SELECT g, NULL, NULL FROM generate_series(30000, 30100) g;
INSERT INTO ti_bt SELECT g, NULL, NULL FROM generate_series(30000, 30100) g;
SELECT ti_same('SELECT k FROM %s WHERE k >= 29990 ORDER BY k') AS untiered;

-- fbrtree_pm: windows, KNN (with a LIMIT, from inside and outside the data, with a window),
-- index-only scans of points, NULLs, bitmap scans, against GiST
CREATE TABLE tp (id int, p point, b box);
CREATE TABLE tp_gist (id int, p point, b box);
CREATE INDEX tp_p ON tp USING fbrtree_pm (p) WITH (tiered = on);
CREATE INDEX tp_b ON tp USING fbrtree_pm (b) WITH (tiered = on);
CREATE INDEX tp_gist_p ON tp_gist USING gist (p);
CREATE INDEX tp_gist_b ON tp_gist USING gist (b);
DO $$
BEGIN
  FOR i IN 1..300 LOOP
    INSERT INTO tp VALUES (i, point(i % 17, i / 17), box(point(i % 13, i % 7), point(i % 13 + 2, i % 7 + 1)));
  END LOOP;
END $$;
INSERT INTO tp SELECT g, point(g % 101 * 0.5, g % 97 * 0.5), box(point(g % 89, g % 83), point(g % 89 + g % 5, g % 83 + 1))
  FROM generate_series(301, 8000) g;
INSERT INTO tp VALUES (8001, NULL, NULL), (8002, point(3, 3), box(point(3, 3), point(3, 3))),
  (8003, point(3, 3), NULL);
INSERT INTO tp_gist SELECT * FROM tp;

SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT p <-> point '(3,4)' FROM tp ORDER BY p <-> point '(3,4)' LIMIT 5;
SELECT ti_same('SELECT id FROM %s WHERE p <@ box ''((2,2),(9,9))'' ORDER BY id', 'tp', 'tp_gist') AS window,
       ti_same('SELECT id FROM %s WHERE b && box ''((10,10),(12,12))'' ORDER BY id', 'tp', 'tp_gist') AS overlaps,
       ti_same('SELECT p <-> point ''(3,4)'' FROM %s ORDER BY p <-> point ''(3,4)'' LIMIT 40', 'tp', 'tp_gist') AS knn_limit,
       ti_same('SELECT p <-> point ''(-50,-50)'' FROM %s ORDER BY p <-> point ''(-50,-50)''', 'tp', 'tp_gist') AS knn_all,
       ti_same('SELECT b <-> point ''(20,20)'' FROM %s WHERE b && box ''((0,0),(30,30))'' ORDER BY b <-> point ''(20,20)''', 'tp', 'tp_gist') AS knn_window,
       ti_same('SELECT p FROM %s WHERE p <@ box ''((0,0),(4,4))'' ORDER BY p[0], p[1]', 'tp', 'tp_gist') AS index_only,
       ti_same('SELECT id FROM %s WHERE p IS NULL ORDER BY id', 'tp', 'tp_gist') AS is_null,
       ti_same('SELECT count(*) FROM %s WHERE b IS NOT NULL', 'tp', 'tp_gist') AS not_null;
RESET enable_bitmapscan;
SET enable_indexscan = off;
SELECT ti_same('SELECT id FROM %s WHERE p <@ box ''((10,10),(30,30))'' ORDER BY id', 'tp', 'tp_gist') AS bitmap;
RESET enable_indexscan;
DELETE FROM tp WHERE id % 4 = 0;
DELETE FROM tp_gist WHERE id % 4 = 0;
VACUUM tp;
SELECT fbrtree_pm_check('tp_p', true), fbrtree_pm_check('tp_b', true);
SELECT ti_same('SELECT p <-> point ''(3,4)'' FROM %s ORDER BY p <-> point ''(3,4)''', 'tp', 'tp_gist') AS knn_after_vacuum;
RESET enable_seqscan;

DROP TABLE ti, ti_bt, tp, tp_gist;
DROP FUNCTION ti_same(text, text, text);
