-- Tiered writes: an index WITH (tiered = on) answers as btree does while its inserts wait in
-- its operation log and after the replay workers applied them (the differential suite,
-- tests/t/090_differential.pl, reads tiered indexes with every row waiting).
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

-- a bad value, and the access method without a log
CREATE INDEX ON ti USING nbtree_pm (k) WITH (tiered = maybe);
CREATE TABLE ti_box (b box);
CREATE INDEX ON ti_box USING fbrtree_pm (b) WITH (tiered = on);

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

CREATE FUNCTION ti_same(q text) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE a text; b text;
BEGIN
  EXECUTE format('SELECT string_agg(x::text, '','') FROM (%s) s(x)', format(q, 'ti')) INTO a;
  EXECUTE format('SELECT string_agg(x::text, '','') FROM (%s) s(x)', format(q, 'ti_bt')) INTO b;
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

DROP TABLE ti, ti_bt, ti_box;
DROP FUNCTION ti_same(text);
