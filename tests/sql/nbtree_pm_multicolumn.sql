-- nbtree_pm multicolumn indexes: per-column ASC/DESC and NULLS FIRST/LAST, scans bounded by the
-- leading columns with the rest tested in the index, INDEX_MAX_KEYS columns, INCLUDE, and
-- unique indexes with btree's semantics (answers(), tests/sql/include/answers.sql; the random
-- differential comparison with btree is tests/diff/nbtree_pm.sql).  Text columns are in "C",
-- whatever the cluster's locale (a multicolumn index takes "C" and ICU strings, not libc ones:
-- tests/sql/nbtree_pm_libc.sql).
CREATE EXTENSION IF NOT EXISTS pm_index;
\getenv abs_srcdir PG_ABS_SRCDIR
\set answers_sql :abs_srcdir '/sql/include/answers.sql'
\i :answers_sql
SET client_min_messages = warning;

CREATE TABLE mc (id int, a int4, b text COLLATE "C", c float8, d numeric);
INSERT INTO mc
SELECT g, CASE WHEN g % 17 <> 0 THEN g % 10 END, CASE WHEN g % 13 <> 0 THEN 'k' || (g % 7) END,
       CASE WHEN g % 11 <> 0 THEN (g % 5) - 2 END, g / 4.0
  FROM generate_series(1, 5000) g;
INSERT INTO mc VALUES (0, 1, 'k1', '-0', 1.0), (-1, 1, 'k1', '0', 1.00);
CREATE INDEX mc_abc ON mc USING nbtree_pm (a, b DESC, c NULLS FIRST);
CREATE INDEX mc_cba ON mc USING nbtree_pm (c DESC NULLS LAST, b, a DESC) INCLUDE (d);
SELECT nbtree_pm_check(i, true) FROM unnest('{mc_abc,mc_cba}'::regclass[]) i;
SET enable_seqscan = off; SET enable_bitmapscan = off;
-- the leading equalities and the next column's bounds make the range; the rest is tested in the index
EXPLAIN (COSTS OFF) SELECT a, b, c FROM mc WHERE a = 3 AND b >= 'k2' AND c = 1;
EXPLAIN (COSTS OFF) SELECT * FROM mc WHERE c = 1 AND b = 'k2' ORDER BY c DESC NULLS LAST, b, a DESC;
EXPLAIN (COSTS OFF) SELECT a, b, c FROM mc ORDER BY a DESC, b, c DESC NULLS LAST LIMIT 3;
RESET enable_seqscan; RESET enable_bitmapscan;
SELECT answers($$SELECT row(a, b, c) FROM mc WHERE a = 3 AND b >= 'k2' AND c = 1 ORDER BY a, b DESC, c$$);
SELECT answers($$SELECT row(id, a, b, c) FROM mc WHERE a = 3 AND b >= 'k2' AND c = 1 ORDER BY id$$);
SELECT answers($$SELECT row(a, b, c) FROM mc ORDER BY a, b DESC, c NULLS FIRST$$);
SELECT answers($$SELECT row(a, b, c) FROM mc ORDER BY a DESC NULLS FIRST, b, c DESC NULLS LAST LIMIT 40$$);
SELECT answers($$SELECT row(a, b, c) FROM mc WHERE a IS NULL AND b IS NULL ORDER BY a, b DESC, c NULLS FIRST$$);
SELECT answers($$SELECT row(a, b, c) FROM mc WHERE a = 1 AND b = 'k1' AND c = 0 ORDER BY a, b DESC, c NULLS FIRST$$);
SELECT answers($$SELECT row(a, b, c) FROM mc WHERE a > 7 AND c IS NULL ORDER BY a, b DESC, c NULLS FIRST$$);
SELECT answers($$SELECT row(a, b, c) FROM mc WHERE a = ANY ('{2,4,NULL}') AND b < 'k3' ORDER BY a, b DESC, c NULLS FIRST$$);
SELECT answers($$SELECT row(a, b, c) FROM mc WHERE b = ANY ('{k0,k6}') AND c >= -1 AND c < 1.5 ORDER BY a, b DESC, c NULLS FIRST$$);
SELECT answers($$SELECT row(a, b, c) FROM mc WHERE a = 5::int8 AND b > 'k1' AND b <= 'k4' ORDER BY a DESC, b, c DESC NULLS LAST$$);
SELECT answers($$SELECT row(c, b, a, d) FROM mc WHERE c = 1 AND b = 'k2' ORDER BY c DESC NULLS LAST, b, a DESC, d$$);
SELECT answers($$SELECT row(c, b, a, d) FROM mc WHERE c < 0 AND a = 3 ORDER BY c DESC NULLS LAST, b, a DESC, d$$);
SELECT answers($$SELECT row(c, b, a, d) FROM mc WHERE c IS NULL AND b IS NOT NULL ORDER BY c DESC NULLS LAST, b, a DESC, d$$);
-- -0 and 0 are one value in a column but come back as each row has them; so 1.0 and 1.00
SELECT id, c, d FROM mc WHERE a = 1 AND b = 'k1' AND c = 0 AND d = 1 ORDER BY id;

-- every key column PostgreSQL allows, and keys too long for an entry
CREATE TABLE many AS SELECT g AS id, g % 3 AS c1, g % 5 AS c2, ('x' || g % 7) COLLATE "C" AS c3 FROM generate_series(1, 300) g;
SELECT format('CREATE INDEX many_32 ON many USING nbtree_pm (%s)',
              'c1, c2, c3, ' || string_agg(format('(c1 + %s)', i), ', ')) FROM generate_series(1, 29) i \gexec
SELECT nbtree_pm_check('many_32', true);
SET enable_seqscan = off;
SELECT count(*) FROM many WHERE c1 = 1 AND c2 = 2 AND c3 > 'x3';
RESET enable_seqscan;
-- the size limit; in "C" a key is the strings' bytes, whatever the database's collation
CREATE TABLE wide2 (a text COLLATE "C", b text COLLATE "C");
CREATE INDEX wide2_ab ON wide2 USING nbtree_pm (a, b);
INSERT INTO wide2 VALUES (repeat('x', 40000), repeat('y', 40000));

-- unique: the whole key decides; NULLs are distinct unless NULLS NOT DISTINCT
CREATE TABLE mu (id serial, a int, b text COLLATE "C", c float8);
CREATE UNIQUE INDEX mu_ab ON mu USING nbtree_pm (a, b DESC);
INSERT INTO mu (a, b) VALUES (1, 'x'), (1, 'y'), (2, 'x'), (1, NULL), (1, NULL), (NULL, 'x'), (NULL, 'x');
INSERT INTO mu (a, b) VALUES (1, 'y');
UPDATE mu SET b = 'x' WHERE a = 1 AND b = 'y';
INSERT INTO mu (a, b) VALUES (1, 'y') ON CONFLICT (a, b) DO NOTHING;
INSERT INTO mu (a, b) VALUES (1, 'y') ON CONFLICT (a, b) DO UPDATE SET c = 7;
SELECT a, b, c FROM mu ORDER BY a, b DESC, id;
CREATE UNIQUE INDEX mu_nnd ON mu USING nbtree_pm (a, b) NULLS NOT DISTINCT;
DELETE FROM mu WHERE id IN (SELECT max(id) FROM mu GROUP BY a, b HAVING count(*) > 1);
CREATE UNIQUE INDEX mu_nnd ON mu USING nbtree_pm (a, b) NULLS NOT DISTINCT;
INSERT INTO mu (a, b) VALUES (NULL, 'x');
INSERT INTO mu (a, b) VALUES (3, NULL), (3, NULL);
-- -0 and 0 are one value in a unique key
CREATE TABLE mz (a int, c float8);
CREATE UNIQUE INDEX mz_ac ON mz USING nbtree_pm (a, c DESC);
INSERT INTO mz VALUES (9, '-0'), (9, 0);
-- ON CONFLICT DO NOTHING through an exclusion constraint of several columns
CREATE TABLE mx (a int, b text COLLATE "C", EXCLUDE USING nbtree_pm (a WITH =, b WITH =));
INSERT INTO mx VALUES (1, 'p'), (1, 'q'), (NULL, 'p'), (NULL, 'p');
INSERT INTO mx VALUES (1, 'p');
INSERT INTO mx VALUES (1, 'p'), (2, 'p') ON CONFLICT DO NOTHING;
SELECT a, b FROM mx ORDER BY a, b;
-- foreign keys: PostgreSQL 18 takes a unique index of any access method whose equality agrees with
-- btree's (amconsistentequality) on the referenced columns; earlier majors need a btree one
CREATE TABLE parent (a int, b text COLLATE "C");
CREATE UNIQUE INDEX parent_ab ON parent USING nbtree_pm (a, b);
CREATE TABLE child (a int, b text COLLATE "C", FOREIGN KEY (a, b) REFERENCES parent (a, b));
INSERT INTO child VALUES (3, 'r');
DROP TABLE IF EXISTS child;
INSERT INTO parent VALUES (1, 'p'), (2, 'q');
INSERT INTO parent VALUES (1, 'p');
SELECT nbtree_pm_check(i, true) FROM unnest('{mc_abc,mc_cba,many_32,mu_ab,mu_nnd,mx_a_b_excl,parent_ab}'::regclass[]) i;
DROP TABLE mc, many, wide2, mu, mz, mx, parent;
DROP FUNCTION answers(text);
