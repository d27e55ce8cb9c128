-- nvbtree_pm: the ordered access method over the NVB-tree answers as btree does on an identical
-- table (the differential suite, tests/t/090_differential.pl, compares every operator and plan
-- shape).  A leaf holds 224 entries and a read returns at most 64: scans cross batches inside
-- leaves as well as between them.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pm_index;
RESET client_min_messages;

CREATE TABLE nv (k int8, v int4);
INSERT INTO nv SELECT g, (g * 7919) % 100003 FROM generate_series(1, 100000) g;
INSERT INTO nv VALUES (NULL, NULL), (0, -2147483648), (1, 2147483647);
INSERT INTO nv SELECT 5, 42 FROM generate_series(1, 1000);
CREATE TABLE nv_bt AS SELECT * FROM nv;
CREATE INDEX nv_v ON nv USING nvbtree_pm (v);
CREATE INDEX nv_bt_v ON nv_bt USING btree (v);
SELECT nvbtree_pm_check('nv_v', true);

SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT v FROM nv WHERE v BETWEEN 10 AND 20 ORDER BY v DESC;
CREATE FUNCTION nv_same(q text) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE a text; b text;
BEGIN
  EXECUTE format('SELECT string_agg(x::text, '','') FROM (%s) s(x)', format(q, 'nv')) INTO a;
  EXECUTE format('SELECT string_agg(x::text, '','') FROM (%s) s(x)', format(q, 'nv_bt')) INTO b;
  RETURN a IS NOT DISTINCT FROM b;
END $$;
SELECT nv_same('SELECT v FROM %s WHERE v BETWEEN 10 AND 5000 ORDER BY v') AS range_asc,
       nv_same('SELECT v FROM %s WHERE v < 300 ORDER BY v DESC LIMIT 50') AS desc_limit,
       nv_same('SELECT v FROM %s WHERE v BETWEEN -5 AND 90000 ORDER BY v DESC') AS desc_long,
       nv_same('SELECT v FROM %s WHERE v = ANY(''{1,2,3,42,500,99999}'') ORDER BY v') AS any_array,
       nv_same('SELECT count(*) FROM %s WHERE v = 42') AS duplicates,
       nv_same('SELECT count(*) FROM %s WHERE v IS NULL') AS is_null,
       nv_same('SELECT min(v) FROM %s') AS min,
       nv_same('SELECT max(v) FROM %s') AS max,
       nv_same('SELECT v FROM %s WHERE v > 2147483600 OR v < -2147483000 ORDER BY v') AS extremes;

-- a scroll cursor turns back and forth inside leaves and across them
BEGIN;
DECLARE c SCROLL CURSOR FOR SELECT v FROM nv WHERE v BETWEEN 40 AND 400 ORDER BY v;
MOVE FORWARD 1100 IN c;
FETCH BACKWARD 3 FROM c;
FETCH FORWARD 2 FROM c;
MOVE BACKWARD ALL IN c;
FETCH NEXT FROM c;
COMMIT;

-- index-only and bitmap scans
VACUUM nv;
EXPLAIN (COSTS OFF) SELECT count(*) FROM nv WHERE v BETWEEN 100 AND 200;
SELECT nv_same('SELECT count(*) FROM %s WHERE v BETWEEN 100 AND 20000') AS index_only;
RESET enable_bitmapscan;
SET enable_indexscan = off;
SET enable_indexonlyscan = off;
SELECT nv_same('SELECT k FROM %s WHERE v BETWEEN 100 AND 200 OR v = 42 ORDER BY k') AS bitmap;
RESET enable_indexscan;
RESET enable_indexonlyscan;
SET enable_bitmapscan = off;

-- inserts that split leaves and inner nodes, deletes with their two-child cases, VACUUM's rewrites
INSERT INTO nv SELECT g, (g * 31) % 100003 FROM generate_series(1, 100000) g;
INSERT INTO nv_bt SELECT g, (g * 31) % 100003 FROM generate_series(1, 100000) g;
INSERT INTO nv SELECT g, g FROM generate_series(200000, 260000) g;
INSERT INTO nv_bt SELECT g, g FROM generate_series(200000, 260000) g;
DELETE FROM nv WHERE k % 3 = 0;
DELETE FROM nv_bt WHERE k % 3 = 0;
VACUUM nv;
VACUUM nv_bt;
SELECT nvbtree_pm_check('nv_v', true);
SELECT nv_same('SELECT v FROM %s WHERE v BETWEEN 10 AND 5000 ORDER BY v') AS range_after,
       nv_same('SELECT v FROM %s WHERE v > 99000 ORDER BY v DESC') AS desc_after;
SELECT entries = (SELECT count(*) FROM nv) AS entries_counted, leaves > 0 AS has_leaves,
       height >= 2 AS has_levels, smo_splits > 0 AS split, smo_merges IS NULL AS no_merge_counter,
       dram_bytes > 0 AS lock_table
  FROM pm_index_stats('nv_v');

-- unique
CREATE TABLE nv_u (id int8);
CREATE UNIQUE INDEX nv_u_id ON nv_u USING nvbtree_pm (id);
INSERT INTO nv_u SELECT generate_series(1, 1000);
INSERT INTO nv_u VALUES (500);
INSERT INTO nv_u VALUES (NULL), (NULL);
SELECT count(*) FROM nv_u;

-- tiered writes: inserts wait in the operation log; scans see them, the verifier applies them
CREATE TABLE nv_t (k int8);
CREATE INDEX nv_t_k ON nv_t USING nvbtree_pm (k) WITH (tiered = on);
INSERT INTO nv_t SELECT generate_series(1, 5000);
DELETE FROM nv_t WHERE k % 7 = 0;
SELECT count(*), sum(k) FROM nv_t WHERE k BETWEEN 100 AND 1999;
VACUUM nv_t;
SELECT nvbtree_pm_check('nv_t_k', true);
SELECT count(*), sum(k) FROM nv_t WHERE k BETWEEN 100 AND 1999;

-- reloptions and errors
CREATE INDEX nv_ff ON nv USING nvbtree_pm (v) WITH (fillfactor = 50);
SELECT nvbtree_pm_check('nv_ff', true);
CREATE INDEX nv_bad ON nv USING nvbtree_pm (v) WITH (fillfactor = 5);
SELECT nvbtree_pm_check('nv_bt_v');
CREATE TABLE nv_text (t text);
CREATE INDEX ON nv_text USING nvbtree_pm (t);

DROP TABLE nv, nv_bt, nv_text, nv_u, nv_t;
DROP FUNCTION nv_same(text);
