-- nbtree_pm on uuid, bytea and text: keys longer than the 8 bytes an entry holds (wide keys).
-- Every answer is compared with a sequential scan's on the same table.
CREATE EXTENSION IF NOT EXISTS pm_index;
SET client_min_messages = warning;

CREATE TABLE w (id serial, u uuid, b bytea, t text COLLATE "C");
INSERT INTO w (u, b, t)
SELECT md5(g::text)::uuid,
       decode(repeat(lpad(to_hex(g % 256), 2, '0'), g % 20), 'hex'),
       'prefix_common_' || (g * 7919 % 1000)::text
  FROM generate_series(1, 3000) g;
INSERT INTO w (u, b, t) VALUES (NULL, NULL, NULL), (NULL, '\x', ''), ('00000000-0000-0000-0000-000000000000', '\x00', 'a');
CREATE INDEX w_u ON w USING nbtree_pm (u);
CREATE INDEX w_b ON w USING nbtree_pm (b);
CREATE INDEX w_t ON w USING nbtree_pm (t);
SELECT nbtree_pm_check('w_u', true), nbtree_pm_check('w_b', true), nbtree_pm_check('w_t', true);

-- the same answers through the index (index, index-only, bitmap) as by a sequential scan
CREATE FUNCTION answers(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  seq text;
  idx text;
BEGIN
  SET LOCAL enable_seqscan = on; SET LOCAL enable_indexscan = off; SET LOCAL enable_bitmapscan = off;
  SET LOCAL enable_indexonlyscan = off;
  EXECUTE format('SELECT string_agg(r::text, %L) FROM (%s) s(r)', ',', q) INTO seq;
  SET LOCAL enable_seqscan = off; SET LOCAL enable_indexscan = on; SET LOCAL enable_bitmapscan = on;
  SET LOCAL enable_indexonlyscan = on;
  EXECUTE format('SELECT string_agg(r::text, %L) FROM (%s) s(r)', ',', q) INTO idx;
  RETURN CASE WHEN seq IS NOT DISTINCT FROM idx THEN 'same' ELSE format('differs: %s / %s', idx, seq) END;
END $$;
SELECT answers($$SELECT t FROM w WHERE t = 'prefix_common_17' ORDER BY t$$);
SELECT answers($$SELECT t FROM w WHERE t >= 'prefix_common_5' AND t < 'prefix_common_51' ORDER BY t$$);
SELECT answers($$SELECT t FROM w WHERE t < 'prefix_common_1' ORDER BY t DESC$$);
SELECT answers($$SELECT t FROM w WHERE t > 'prefix_common_998' ORDER BY t$$);
SELECT answers($$SELECT t FROM w WHERE t IN ('a', '', 'prefix_common_0', 'zzz') ORDER BY t$$);
SELECT answers($$SELECT id FROM w WHERE t = 'prefix_common_42' ORDER BY id$$);
SELECT answers($$SELECT b FROM w WHERE b > '\x0505' AND b <= '\x06060606' ORDER BY b$$);
SELECT answers($$SELECT b FROM w WHERE b = '\x' OR b = '\x00' ORDER BY b$$);
SELECT answers($$SELECT u FROM w WHERE u < '10000000-0000-0000-0000-000000000000' ORDER BY u$$);
SELECT answers($$SELECT u FROM w WHERE u = 'c4ca4238-a0b9-2382-0dcc-509a6f75849b'$$);
SELECT answers($$SELECT u FROM w ORDER BY u DESC NULLS LAST LIMIT 5$$);
SELECT answers($$SELECT t FROM w WHERE t IS NULL$$);
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT t FROM w WHERE t >= 'prefix_common_5' AND t < 'prefix_common_51' ORDER BY t;
RESET enable_bitmapscan;

-- changes and VACUUM: the index still holds exactly the table
DELETE FROM w WHERE id % 3 = 0;
UPDATE w SET t = t || '_updated' WHERE id % 5 = 0;
VACUUM w;
SELECT nbtree_pm_check('w_u', true), nbtree_pm_check('w_b', true), nbtree_pm_check('w_t', true);
SELECT answers($$SELECT t FROM w WHERE t >= 'prefix_common_5' ORDER BY t$$);

-- a merge join reads a wide index in order with mark and restore
SET enable_hashjoin = off; SET enable_nestloop = off; SET enable_sort = off; SET enable_seqscan = off;
SELECT count(*) FROM w x JOIN w y ON x.t = y.t;
EXPLAIN (COSTS OFF) SELECT count(*) FROM w x JOIN w y ON x.t = y.t;
RESET ALL;
SET client_min_messages = warning;

-- unique: a duplicate names its value
CREATE UNIQUE INDEX w_t_unique ON w USING nbtree_pm (t);
CREATE TABLE wu (t text COLLATE "C", v bytea);
CREATE UNIQUE INDEX wu_t ON wu USING nbtree_pm (t);
INSERT INTO wu VALUES ('prefix_common_unique_value', '\x01');
INSERT INTO wu VALUES ('prefix_common_unique_value', '\x02');
INSERT INTO wu VALUES ('prefix_common_unique_valuf', '\x03');

-- what stays unsupported says so
CREATE TABLE wn (t text COLLATE "POSIX", c text);
CREATE INDEX ON wn USING nbtree_pm (t);
CREATE COLLATION pm_icu_en (provider = icu, locale = 'en');
CREATE INDEX ON wn USING nbtree_pm ((c COLLATE pm_icu_en));
CREATE INDEX ON wn USING phast_pm (t);
INSERT INTO wu VALUES (repeat('x', 70000), NULL);
SELECT count(*) FROM wu;
DROP TABLE w, wu, wn;
DROP FUNCTION answers(text);
DROP COLLATION pm_icu_en;
