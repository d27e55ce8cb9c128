-- nbtree_pm INCLUDE columns: their values come back from index-only scans as the row has them,
-- every answer equal to a sequential scan's on the same table (answers(),
-- tests/sql/include/answers.sql).
CREATE EXTENSION IF NOT EXISTS pm_index;
\getenv abs_srcdir PG_ABS_SRCDIR
\set answers_sql :abs_srcdir '/sql/include/answers.sql'
\i :answers_sql
SET client_min_messages = warning;

-- values of every kind: by value, varlena, numeric, jsonb, NULLs, long ones kept in TOAST
CREATE TABLE inc (id int, k int8, t text COLLATE "C", n numeric, j jsonb, b bytea, d date);
ALTER TABLE inc ALTER COLUMN b SET STORAGE EXTERNAL;
INSERT INTO inc
SELECT g, g % 500, 'v' || g, g / 7.0, jsonb_build_object('g', g, 'a', array[g, -g]),
       CASE WHEN g % 97 = 0 THEN decode(repeat(md5(g::text), 200), 'hex') END,
       CASE WHEN g % 5 <> 0 THEN date '2000-01-01' + g END
  FROM generate_series(1, 6000) g;
INSERT INTO inc VALUES (0, NULL, NULL, NULL, NULL, NULL, NULL), (-1, NULL, 'null key', 1.50, '[]', '\x00', 'infinity');
CREATE INDEX inc_k ON inc USING nbtree_pm (k) INCLUDE (t, n, j, b, d);
CREATE INDEX inc_t ON inc USING nbtree_pm (t) INCLUDE (k, d);
CREATE UNIQUE INDEX inc_id ON inc USING nbtree_pm (id) INCLUDE (n);
SELECT nbtree_pm_check(i, true) FROM unnest('{inc_k,inc_t,inc_id}'::regclass[]) i;
SET enable_seqscan = off; SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT k, t, n, j, b, d FROM inc WHERE k = 5;
EXPLAIN (COSTS OFF) SELECT t, k, d FROM inc WHERE t >= 'v5' AND t < 'v6' ORDER BY t;
RESET enable_seqscan; RESET enable_bitmapscan;
SELECT answers($$SELECT row(k, t, n, j, b, d) FROM inc WHERE k = 5 ORDER BY k, t$$);
SELECT answers($$SELECT row(k, t, n, j, md5(b), d) FROM inc WHERE k >= 0 ORDER BY k, t$$);
SELECT answers($$SELECT row(k, t, n, j, b, d) FROM inc WHERE k IS NULL ORDER BY t$$);
SELECT answers($$SELECT row(t, k, d) FROM inc WHERE t >= 'v5' AND t < 'v6' ORDER BY t$$);
SELECT answers($$SELECT row(id, n) FROM inc WHERE id BETWEEN 100 AND 300 ORDER BY id$$);
SELECT count(*) FILTER (WHERE b IS NOT NULL), sum(length(b)) FROM inc WHERE k >= 0;

-- a unique index decides by its key column alone, and names only it
INSERT INTO inc (id, k, n) VALUES (1, 1, 99);
INSERT INTO inc (id, k, n) VALUES (6001, 1, 99);

-- changes, VACUUM, and a build that sorts on disk
UPDATE inc SET t = t || 'u', j = j || '{"u": true}' WHERE id % 10 = 0;
DELETE FROM inc WHERE id % 3 = 0;
VACUUM inc;
SELECT answers($$SELECT row(k, t, n, j, md5(b), d) FROM inc WHERE k >= 0 ORDER BY k, t$$);
SET maintenance_work_mem = '1MB';
REINDEX INDEX inc_k;
RESET maintenance_work_mem;
SELECT nbtree_pm_check(i, true) FROM unnest('{inc_k,inc_t,inc_id}'::regclass[]) i;
SELECT answers($$SELECT row(k, t, n, j, md5(b), d) FROM inc WHERE k >= 0 ORDER BY k, t$$);

-- phast_pm keeps 16 bytes an entry
CREATE INDEX ON inc USING phast_pm (k) INCLUDE (t);
DROP TABLE inc;
-- answers() serves nbtree_pm_multicolumn next
DROP FUNCTION answers(text);
