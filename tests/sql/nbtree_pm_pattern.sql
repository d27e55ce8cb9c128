-- nbtree_pm's pattern operator classes (text_pattern_ops, varchar_pattern_ops, bpchar_pattern_ops):
-- strings ordered by their bytes in any collation, so that LIKE 'abc%', ~ '^abc' and ^@ get a range
-- of the index.  Every answer is compared with a sequential scan's and a btree pattern index's.
CREATE EXTENSION IF NOT EXISTS pm_index;
SET client_min_messages = warning;
-- plans with scans turned off cost enough to be compiled
SET jit = off;
CREATE COLLATION pm_pat_en (provider = icu, locale = 'en');

-- the same rows twice: nbtree_pm indexes on p, btree's on b
CREATE TABLE p (id int, s text COLLATE pm_pat_en, v varchar(40) COLLATE pm_pat_en, c char(12) COLLATE pm_pat_en,
                k text COLLATE "C");
INSERT INTO p SELECT g, x, x, left(x, 10), x
  FROM (SELECT g, md5(g::text) AS x FROM generate_series(1, 3000) g) s;
INSERT INTO p VALUES (3001, 'ä€x', 'ä€x', 'ä€x', 'ä€x'), (3002, 'ä€', 'ä€', 'ä€', 'ä€'),
  (3003, 'ä', 'ä', 'ä', 'ä'), (3004, 'a_b', 'a_b', 'a_b', 'a_b'), (3005, 'a%b', 'a%b', 'a%b', 'a%b'),
  (3006, 'aXb', 'aXb', 'aXb', 'aXb'), (3007, '', '', '', ''), (3008, NULL, NULL, NULL, NULL),
  (3009, 'ab' || chr(1114111), 'ab' || chr(1114111), 'ab' || chr(1114111), 'ab' || chr(1114111)),
  (3010, 'abc', 'abc', 'abc  ', 'abc'), (3011, 'Abc', 'Abc', 'Abc', 'Abc'), (3012, 'a\b', 'a\b', 'a\b', 'a\b');
CREATE TABLE b AS SELECT * FROM p;
CREATE INDEX p_s ON p USING nbtree_pm (s text_pattern_ops);
CREATE INDEX p_v ON p USING nbtree_pm (v varchar_pattern_ops);
CREATE INDEX p_c ON p USING nbtree_pm (c bpchar_pattern_ops);
CREATE INDEX p_k ON p USING nbtree_pm (k);
CREATE INDEX b_s ON b (s text_pattern_ops);
CREATE INDEX b_v ON b (v varchar_pattern_ops);
CREATE INDEX b_c ON b (c bpchar_pattern_ops);
CREATE INDEX b_k ON b (k);
ANALYZE p, b;
SELECT nbtree_pm_check('p_s', true), nbtree_pm_check('p_v', true), nbtree_pm_check('p_c', true);

-- the index orders by bytes, not by the column's collation: 'Abc' before 'a%b', 'ä' last
SET enable_seqscan = off; SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT s FROM p WHERE id > 3000 ORDER BY s USING ~<~;
SELECT string_agg(s, ' ' ORDER BY s USING ~<~) AS bytes, string_agg(s, ' ' ORDER BY s) AS collation
  FROM p WHERE id > 3000;
SELECT s FROM p WHERE id > 3000 ORDER BY s USING ~>~;
RESET enable_seqscan; RESET enable_bitmapscan;

-- cond on table p through its nbtree_pm index (the plan must have an index condition), by a
-- sequential scan of p, and on b through its btree index: the ids in order
CREATE FUNCTION pattern_answers(cond text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  line text;
  plan text;
  idx text;
  seq text;
  bt text;
BEGIN
  SET LOCAL enable_seqscan = off;
  FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) SELECT id FROM p WHERE ' || cond LOOP
    plan := concat_ws(' ', plan, ltrim(line));
  END LOOP;
  EXECUTE 'SELECT string_agg(id::text, '','' ORDER BY id) FROM p WHERE ' || cond INTO idx;
  EXECUTE 'SELECT string_agg(id::text, '','' ORDER BY id) FROM b WHERE ' || cond INTO bt;
  SET LOCAL enable_seqscan = on; SET LOCAL enable_indexscan = off; SET LOCAL enable_bitmapscan = off;
  EXECUTE 'SELECT string_agg(id::text, '','' ORDER BY id) FROM p WHERE ' || cond INTO seq;
  RETURN CASE WHEN plan NOT LIKE '%Index Cond%' THEN 'no index condition: ' || plan
              WHEN idx IS DISTINCT FROM seq THEN format('differs from the sequential scan: %s / %s', idx, seq)
              WHEN idx IS DISTINCT FROM bt THEN format('differs from btree: %s / %s', idx, bt)
              ELSE format('same, %s rows', coalesce(array_length(string_to_array(idx, ','), 1), 0)) END;
END $$;
SELECT col, pat, pattern_answers(format('%s LIKE %L', col, pat)) AS "LIKE"
  FROM unnest('{s,v,c,k}'::text[]) col,
       unnest(ARRAY['abc%', 'a%', 'ä€%', 'ä%', 'a\_%', 'a\%%', 'a_b', 'a\\%', 'ab' || chr(1114111) || '%', 'abc', 'ä€']) pat
 ORDER BY col COLLATE "C", pat COLLATE "C";
-- patterns without a fixed prefix (an empty one; a leading wildcard) take no index condition
SELECT pattern_answers($$s LIKE '%'$$), pattern_answers($$s LIKE '_bc%'$$);
SELECT pattern_answers($$s LIKE ''$$), pattern_answers($$c LIKE ''$$);
SELECT pattern_answers($$s ~ '^ä€'$$), pattern_answers($$s ~ '^a.b$'$$), pattern_answers($$s ^@ 'abc'$$),
       pattern_answers($$starts_with(v, 'ä')$$), pattern_answers($$s ILIKE '4A%'$$);
SELECT pattern_answers($$s LIKE 'abc%' OR s LIKE 'ä%'$$);
SELECT pattern_answers($$s ~<~ 'abd' AND s ~>=~ 'abc'$$), pattern_answers($$s = 'ä€x'$$);

-- the range conditions are the index's, once; the LIKE is rechecked
SET enable_seqscan = off; SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM p WHERE s LIKE 'abc%';
EXPLAIN (COSTS OFF) SELECT id FROM p WHERE v LIKE 'ä€%';
EXPLAIN (COSTS OFF) SELECT id FROM p WHERE c LIKE 'a\_%';
EXPLAIN (COSTS OFF) SELECT id FROM p WHERE s LIKE 'abc';
-- in "C" the default operator class gets the conditions from PostgreSQL itself
EXPLAIN (COSTS OFF) SELECT id FROM p WHERE k LIKE 'abc%';
RESET enable_seqscan; RESET enable_bitmapscan;

-- after changes and VACUUM
DELETE FROM p WHERE id % 3 = 0;
DELETE FROM b WHERE id % 3 = 0;
UPDATE p SET s = 'ä€' || s, v = 'ä€' || v WHERE id % 5 = 0;
UPDATE b SET s = 'ä€' || s, v = 'ä€' || v WHERE id % 5 = 0;
VACUUM p;
SELECT nbtree_pm_check('p_s', true), nbtree_pm_check('p_v', true);
SELECT pattern_answers($$s LIKE 'ä€%'$$), pattern_answers($$v LIKE 'ä€a%'$$), pattern_answers($$s LIKE 'a%'$$);

-- unique: a second 'abc' refused, as by btree's pattern class
CREATE UNIQUE INDEX p_u ON p USING nbtree_pm (k text_pattern_ops);
INSERT INTO p (id, k) VALUES (4000, 'abc');

-- refused: a nondeterministic collation, as btree's pattern classes; phast_pm has no pattern class
CREATE COLLATION pm_pat_ci (provider = icu, locale = 'en-u-ks-level2', deterministic = false);
CREATE TABLE pn (s text COLLATE pm_pat_ci);
CREATE INDEX ON pn (s text_pattern_ops);
CREATE INDEX ON pn USING nbtree_pm (s text_pattern_ops);
CREATE INDEX ON p USING phast_pm (s text_pattern_ops);

DROP TABLE p, b, pn;
DROP FUNCTION pattern_answers(text);
DROP COLLATION pm_pat_en, pm_pat_ci;
