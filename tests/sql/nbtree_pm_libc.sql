-- nbtree_pm on strings in a libc collation other than "C": the order is the collation's
-- comparison function's (strcoll), as btree's and a sequential scan's, also for strings where
-- glibc's strxfrm disagrees with strcoll (decomposed accents beside punctuation, ß).
CREATE EXTENSION IF NOT EXISTS pm_index;
SET client_min_messages = warning;

CREATE TABLE lx (t text COLLATE "en_US.utf8", v varchar(10) COLLATE "en_US.utf8",
                 c char(4) COLLATE "en_US.utf8");
INSERT INTO lx SELECT s, s, s FROM unnest(ARRAY[E'E\u0301-\u00df', E'\u00e9\u00df', E'\u00c9\u00df',
                                               'a', 'z']) s;
CREATE INDEX lx_t ON lx USING nbtree_pm (t);
CREATE INDEX lx_v ON lx USING nbtree_pm (v);
CREATE INDEX lx_c ON lx USING nbtree_pm (c);
SET enable_seqscan = off;
SET enable_bitmapscan = off;
-- btree and a sequential scan: 3 of each
SELECT count(*) FROM lx WHERE t >= E'\u00e9\u00df';
SELECT count(*) FROM lx WHERE v >= E'\u00e9\u00df';
SELECT count(*) FROM lx WHERE c >= E'\u00e9\u00df';
EXPLAIN (COSTS OFF) SELECT count(*) FROM lx WHERE t >= E'\u00e9\u00df';
SELECT string_agg(t, ' ') FROM (SELECT t FROM lx ORDER BY t) s;
SELECT string_agg(t, ' ') FROM (SELECT t FROM lx ORDER BY t DESC) s;
SELECT min(t) = E'a', max(c) FROM lx;

-- the same strings in many combinations, against a sequential scan: ranges, order both ways,
-- min and max, a merge join, after deletes, inserts and VACUUM, and built sorted on disk
CREATE TABLE lw (id int, t text COLLATE "en_US.utf8");
INSERT INTO lw SELECT g, (ARRAY[E'E\u0301-', E'\u00e9', E'\u00c9', 'e', 'E', '-', ' ', E'\u00df', 'ss',
                                E'\u00e6', 'ae', E'\ufb01', 'fi', E'\u00ad'])[1 + g % 14]
                         || (ARRAY[E'\u00df', 'a', '-b', E'e\u0301', 'E', ''])[1 + g / 14 % 6]
                         || (g % 7)::text
  FROM generate_series(1, 20000) g;
SET maintenance_work_mem = '1MB';
CREATE INDEX lw_t ON lw USING nbtree_pm (t);
RESET maintenance_work_mem;
\getenv abs_srcdir PG_ABS_SRCDIR
\set answers_sql :abs_srcdir '/sql/include/answers.sql'
\i :answers_sql
SELECT q, answers(q) FROM unnest(ARRAY[
  'SELECT t FROM lw ORDER BY t, id',
  'SELECT t FROM lw ORDER BY t DESC, id',
  E'SELECT count(*) FROM lw WHERE t >= E''\\u00e9\\u00dfa'' AND t < ''f''',
  E'SELECT count(*) FROM lw WHERE t > E''E\\u0301-'' AND t <= E''\\u00e6E''',
  E'SELECT count(*) FROM lw WHERE t = E''\\u00e9\\u00df3''',
  'SELECT min(t) || max(t) FROM lw',
  'SELECT count(*) FROM lw a JOIN lw b ON a.t = b.t WHERE a.id % 50 = 0']) q;
SET enable_hashjoin = off;
SET enable_nestloop = off;
SET enable_sort = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM lw a JOIN lw b ON a.t = b.t;
SELECT count(*) FROM lw a JOIN lw b ON a.t = b.t;
RESET enable_hashjoin;
RESET enable_nestloop;
RESET enable_sort;
DELETE FROM lw WHERE id % 3 = 0;
VACUUM lw;
INSERT INTO lw SELECT g, (ARRAY[E'\u00e9-', E'e\u0301\u00df', 'Ss', E'\u00c6'])[1 + g % 4] || g FROM generate_series(1, 2000) g;
SELECT q, answers(q) FROM unnest(ARRAY[
  'SELECT t FROM lw ORDER BY t, id',
  E'SELECT count(*) FROM lw WHERE t BETWEEN ''e'' AND ''ss''']) q;
SELECT nbtree_pm_check('lw_t', true), nbtree_pm_check('lx_t', true), nbtree_pm_check('lx_c', true);

-- a multicolumn index cannot order by a collation's comparison function: refused, with what to do
CREATE INDEX lw_two ON lw USING nbtree_pm (id, t);
CREATE INDEX lw_two_c ON lw USING nbtree_pm (id, (t COLLATE "C"));
DROP TABLE lx, lw;
DROP FUNCTION answers(text);
