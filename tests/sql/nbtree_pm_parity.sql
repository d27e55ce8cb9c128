-- nbtree_pm answers as btree: cross-type datetime bounds before 2000 and at infinity, DESC and
-- NULLS FIRST orderings, -0 in index-only scans, boolean conditions, domains, CLUSTER.  Each
-- query runs through the nbtree_pm index (sequential scans off); the btree answer is in the
-- comment above it.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pm_index;
SET enable_seqscan = off;
SET TimeZone = 'UTC';

-- date column, timestamp and timestamptz bounds before 2000
CREATE TABLE par_d (d date);
INSERT INTO par_d VALUES ('1999-12-30'), ('1999-12-31'), ('2000-01-02'), ('infinity');
CREATE INDEX ON par_d USING nbtree_pm (d);
VACUUM par_d;
-- btree: 1999-12-31
SELECT d FROM par_d WHERE d = timestamp '1999-12-31' ORDER BY d;
-- btree: 1999-12-30, 1999-12-31
SELECT d FROM par_d WHERE d < timestamptz '1999-12-31 12:00+00' ORDER BY d;
-- btree: 1999-12-31, 2000-01-02, infinity
SELECT d FROM par_d WHERE d >= timestamp '1999-12-30 12:00' ORDER BY d;
-- a nested loop with the bound as a join parameter; btree: 1999-12-31, infinity
CREATE TABLE par_ts (ts timestamp, tz timestamptz);
INSERT INTO par_ts VALUES ('1999-12-31', '1999-12-31 00:00+00'), ('1999-12-30 12:00', '-infinity'),
  ('infinity', 'infinity'), ('2000-01-01', '2000-01-01 00:00+00');
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SELECT b.d FROM par_ts a JOIN par_d b ON b.d = a.ts ORDER BY 1;
RESET enable_hashjoin;
RESET enable_mergejoin;

-- timestamp column against timestamptz before 2000, infinities against other types
CREATE INDEX par_ts_ts ON par_ts USING nbtree_pm (ts);
CREATE INDEX par_ts_tz ON par_ts USING nbtree_pm (tz);
VACUUM par_ts;
-- btree: 1999-12-31 00:00, 2000-01-01 00:00, infinity
SELECT ts FROM par_ts WHERE ts >= timestamptz '1999-12-31 00:00+00' ORDER BY ts;
-- btree: infinity
SELECT ts FROM par_ts WHERE ts = date 'infinity';
-- btree: 4 rows
SELECT count(*) FROM par_ts WHERE tz <= timestamp 'infinity';
-- btree: infinity
SELECT ts FROM par_ts WHERE ts >= date '5874897-12-31';
-- btree: -infinity, infinity
SELECT tz FROM par_ts WHERE tz = ANY (ARRAY[date 'infinity', date '-infinity']) ORDER BY tz;

-- DESC and NULLS FIRST
CREATE TABLE par_s (a int);
INSERT INTO par_s VALUES (1), (2), (3), (NULL);
CREATE INDEX par_s_desc ON par_s USING nbtree_pm (a DESC);
VACUUM par_s;
EXPLAIN (COSTS OFF) SELECT a FROM par_s ORDER BY a DESC;
-- btree: NULL, 3, 2, 1
SELECT a FROM par_s ORDER BY a DESC;
-- btree: 1, 2, 3, NULL
SELECT a FROM par_s ORDER BY a;
-- btree: 3
SELECT max(a) FROM par_s;
-- btree: 1
SELECT min(a) FROM par_s;
-- a merge join of two DESC indexes; btree: 1, 2, 3
CREATE TABLE par_s2 AS SELECT * FROM par_s;
CREATE INDEX par_s2_desc ON par_s2 USING nbtree_pm (a DESC);
VACUUM par_s2;
SET enable_hashjoin = off;
SET enable_nestloop = off;
SET enable_sort = off;
EXPLAIN (COSTS OFF) SELECT x.a FROM par_s x JOIN par_s2 y ON x.a = y.a;
SELECT x.a FROM par_s x JOIN par_s2 y ON x.a = y.a ORDER BY 1;
RESET enable_hashjoin;
RESET enable_nestloop;
RESET enable_sort;
DROP INDEX par_s_desc;
CREATE INDEX par_s_nf ON par_s USING nbtree_pm (a NULLS FIRST);
-- btree: NULL, 1, 2, 3
SELECT a FROM par_s ORDER BY a NULLS FIRST;
-- btree: 3, 2, 1, NULL
SELECT a FROM par_s ORDER BY a DESC NULLS LAST;

-- -0 through an index-only scan
CREATE TABLE par_f (f4 float4, f8 float8);
INSERT INTO par_f VALUES ('-0', '-0'), ('0', '0'), ('1', '1'), ('-1', '-1');
CREATE INDEX par_f_f4 ON par_f USING nbtree_pm (f4);
CREATE INDEX par_f_f8 ON par_f USING nbtree_pm (f8);
VACUUM par_f;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT f8 FROM par_f WHERE f8 < 0.5;
-- btree: -1, -0, 0 (-0 and 0 in either order)
SELECT f8::text FROM par_f WHERE f8 < 0.5 ORDER BY f8::text COLLATE "C";
SELECT f4::text FROM par_f WHERE f4 < 0.5 ORDER BY f4::text COLLATE "C";
-- btree: -0 = 0: both
SELECT f8::text FROM par_f WHERE f8 = 0 ORDER BY 1;
SELECT f8::text FROM par_f WHERE f8 = ANY (ARRAY[0, 1]) ORDER BY 1;
RESET enable_bitmapscan;

-- boolean conditions
CREATE TABLE par_b (id int, b bool);
INSERT INTO par_b SELECT g, g % 50 = 0 FROM generate_series(1, 1000) g;
INSERT INTO par_b VALUES (0, NULL);
CREATE INDEX par_b_b ON par_b USING nbtree_pm (b);
VACUUM ANALYZE par_b;
EXPLAIN (COSTS OFF) SELECT id FROM par_b WHERE b;
SELECT count(*) FROM par_b WHERE b;
EXPLAIN (COSTS OFF) SELECT id FROM par_b WHERE NOT b;
SELECT count(*) FROM par_b WHERE NOT b;
SELECT count(*) FROM par_b WHERE b IS TRUE;
SELECT count(*) FROM par_b WHERE b IS FALSE;
SELECT count(*) FROM par_b WHERE b IS NOT TRUE;
-- still planned with the index for a plain comparison
SELECT count(*) FROM par_b WHERE b = false;

-- a domain over a supported type
CREATE DOMAIN par_posint AS int CHECK (VALUE > 0);
CREATE TABLE par_dom (v par_posint);
INSERT INTO par_dom SELECT g FROM generate_series(1, 100) g;
CREATE INDEX par_dom_v ON par_dom USING nbtree_pm (v);
VACUUM par_dom;
EXPLAIN (COSTS OFF) SELECT v FROM par_dom WHERE v BETWEEN 10 AND 12;
SELECT v FROM par_dom WHERE v BETWEEN 10 AND 12;
SELECT nbtree_pm_check('par_dom_v', true);

-- CLUSTER through an nbtree_pm index: the heap in the index's order, the index rebuilt
CREATE TABLE par_cl (k int, pad text);
INSERT INTO par_cl SELECT (g * 7919) % 1000, 'x' FROM generate_series(1, 1000) g;
CREATE INDEX par_cl_k ON par_cl USING nbtree_pm (k DESC);
CLUSTER par_cl USING par_cl_k;
SELECT bool_and(k >= next_k) AS heap_in_index_order
  FROM (SELECT k, lead(k) OVER (ORDER BY ctid) AS next_k FROM par_cl) s WHERE next_k IS NOT NULL;
SELECT indisclustered FROM pg_index WHERE indexrelid = 'par_cl_k'::regclass;
SELECT count(*) FROM par_cl WHERE k < 10;
SELECT nbtree_pm_check('par_cl_k', true);
CLUSTER par_cl;
SELECT count(*) FROM par_cl WHERE k < 10;

DROP TABLE par_d, par_ts, par_s, par_s2, par_f, par_b, par_dom, par_cl;
DROP DOMAIN par_posint;
