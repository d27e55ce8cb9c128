-- nvbtree_pm: the ordered access method over the NVB-tree answers as btree does on an identical
-- table (the differential suite, tests/t/090_differential.pl, compares every operator and plan
-- shape).  A leaf holds 224 entries and a read returns at most 64: scans cross batches inside
-- leaves as well as between them.  Strings, several columns and INCLUDE make a wide tree, whose
-- records live beside their slots.
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
       height >= 2 AS has_levels, smo_splits > 0 AS split, dram_bytes > 0 AS lock_table
  FROM pm_index_stats('nv_v');

-- a table that shrinks: VACUUM merges sparse leaves into their left neighbours
SELECT leaves AS leaves_before, smo_merges AS merges_before FROM pm_index_stats('nv_v') \gset
DELETE FROM nv WHERE k % 10 <> 1;
DELETE FROM nv_bt WHERE k % 10 <> 1;
VACUUM nv;
VACUUM nv_bt;
SELECT nvbtree_pm_check('nv_v', true);
SELECT nv_same('SELECT v FROM %s WHERE v BETWEEN 10 AND 50000 ORDER BY v') AS range_merged,
       nv_same('SELECT v FROM %s WHERE v > 9000 ORDER BY v DESC') AS desc_merged;
SELECT smo_merges > :merges_before AS merged, leaves * 3 < :leaves_before AS fewer_leaves,
       entries = (SELECT count(*) FROM nv) AS entries_counted
  FROM pm_index_stats('nv_v');
INSERT INTO nv SELECT g, (g * 13) % 100003 FROM generate_series(1, 20000) g;
INSERT INTO nv_bt SELECT g, (g * 13) % 100003 FROM generate_series(1, 20000) g;
SELECT nvbtree_pm_check('nv_v', true);
SELECT nv_same('SELECT v FROM %s WHERE v BETWEEN 10 AND 50000 ORDER BY v') AS range_regrown;

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

-- wide trees: strings in the database's collation, in "C" and in a libc collation (whose order
-- is strcoll's), numeric, two columns with INCLUDE; built, then inserted into (records
-- moved by splits and rewrites), deleted from, vacuumed
CREATE TABLE nv_w (s text, c text COLLATE "C", l text COLLATE "en_US.utf8", n numeric, i int4, p text);
INSERT INTO nv_w SELECT md5(g::text) || repeat(E'\u00e9', g % 7), 'k' || (g % 300),
                        (ARRAY[E'E\u0301-', E'\u00e9', 'e', E'\u00df', 'ss', 'ae'])[1 + g % 6] || (g % 500),
                        g / 7.0, g % 1000, repeat('x', g % 200)
  FROM generate_series(1, 20000) g;
CREATE TABLE nv_bt_w AS SELECT * FROM nv_w;
CREATE INDEX nv_w_s ON nv_w USING nvbtree_pm (s);
CREATE INDEX nv_w_l ON nv_w USING nvbtree_pm (l);
CREATE INDEX nv_w_n ON nv_w USING nvbtree_pm (n);
CREATE INDEX nv_w_ci ON nv_w USING nvbtree_pm (c, i) INCLUDE (p);
CREATE INDEX nv_bt_w_s ON nv_bt_w USING btree (s);
CREATE INDEX nv_bt_w_l ON nv_bt_w USING btree (l);
CREATE INDEX nv_bt_w_n ON nv_bt_w USING btree (n);
CREATE INDEX nv_bt_w_ci ON nv_bt_w USING btree (c, i) INCLUDE (p);
INSERT INTO nv_w SELECT md5(g::text), 'k' || (g % 7), E'\u00e6' || g, -g, g % 10, repeat('y', g % 300)
  FROM generate_series(20001, 40000) g;
INSERT INTO nv_bt_w SELECT md5(g::text), 'k' || (g % 7), E'\u00e6' || g, -g, g % 10, repeat('y', g % 300)
  FROM generate_series(20001, 40000) g;
DELETE FROM nv_w WHERE i % 3 = 1;
DELETE FROM nv_bt_w WHERE i % 3 = 1;
VACUUM nv_w;
VACUUM nv_bt_w;
SELECT nvbtree_pm_check(i, true) FROM unnest('{nv_w_s,nv_w_l,nv_w_n,nv_w_ci}'::regclass[]) i;
EXPLAIN (COSTS OFF) SELECT c, i, p FROM nv_w WHERE c BETWEEN 'k1' AND 'k2' ORDER BY c, i;
SELECT nv_same('SELECT s FROM %s_w WHERE s BETWEEN ''3'' AND ''8'' ORDER BY s') AS text_range,
       nv_same('SELECT s FROM %s_w WHERE s > ''f'' ORDER BY s DESC LIMIT 300') AS text_desc,
       nv_same('SELECT l FROM %s_w WHERE l >= E''\u00e9'' ORDER BY l') AS libc_range,
       nv_same('SELECT l FROM %s_w ORDER BY l DESC') AS libc_desc,
       nv_same('SELECT n FROM %s_w WHERE n BETWEEN -500.5 AND 100.25 ORDER BY n') AS numeric,
       nv_same('SELECT c || i || p FROM %s_w WHERE c BETWEEN ''k1'' AND ''k2'' ORDER BY c, i, p') AS include,
       nv_same('SELECT count(*) FROM %s_w WHERE c = ''k5'' AND i < 400') AS two_columns;
SELECT leaves > 0 AS has_leaves, height >= 2 AS has_levels, entries = (SELECT count(*) FROM nv_w)
  FROM pm_index_stats('nv_w_ci');
-- a key past the tree's record limit
INSERT INTO nv_w (s) VALUES (repeat('z', 1000));
CREATE UNIQUE INDEX nv_w_u ON nv_w USING nvbtree_pm (s, i);
INSERT INTO nv_w (s, i) SELECT s, i FROM nv_w WHERE s IS NOT NULL LIMIT 1;

DROP TABLE nv, nv_bt, nv_w, nv_bt_w, nv_u, nv_t;
DROP FUNCTION nv_same(text);
