-- phast_pm: the ordered access method over PhaST answers as btree does on an identical table
-- (the differential suite, tests/t/090_differential.pl, compares every operator and plan shape).
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pm_index;
RESET client_min_messages;

CREATE TABLE ph (k int8, v int4);
INSERT INTO ph SELECT g, (g * 7919) % 100003 FROM generate_series(1, 100000) g;
INSERT INTO ph VALUES (NULL, NULL), (0, -2147483648), (1, 2147483647);
CREATE TABLE ph_bt AS SELECT * FROM ph;
CREATE INDEX ph_v ON ph USING phast_pm (v);
CREATE INDEX ph_bt_v ON ph_bt USING btree (v);
SELECT phast_pm_check('ph_v', true);

SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT v FROM ph WHERE v BETWEEN 10 AND 20 ORDER BY v DESC;
CREATE FUNCTION ph_same(q text) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE a text; b text;
BEGIN
  EXECUTE format('SELECT string_agg(x::text, '','') FROM (%s) s(x)', format(q, 'ph')) INTO a;
  EXECUTE format('SELECT string_agg(x::text, '','') FROM (%s) s(x)', format(q, 'ph_bt')) INTO b;
  RETURN a IS NOT DISTINCT FROM b;
END $$;
SELECT ph_same('SELECT v FROM %s WHERE v BETWEEN 10 AND 5000 ORDER BY v') AS range_asc,
       ph_same('SELECT v FROM %s WHERE v < 300 ORDER BY v DESC LIMIT 50') AS desc_limit,
       ph_same('SELECT v FROM %s WHERE v = ANY(''{1,2,3,500,99999}'') ORDER BY v') AS any_array,
       ph_same('SELECT count(*) FROM %s WHERE v IS NULL') AS is_null,
       ph_same('SELECT min(v) FROM %s') AS min,
       ph_same('SELECT max(v) FROM %s') AS max,
       ph_same('SELECT v FROM %s WHERE v > 2147483600 OR v < -2147483000 ORDER BY v') AS extremes;

-- inserts that split LNodes and INodes, deletes, VACUUM
INSERT INTO ph SELECT g, (g * 31) % 100003 FROM generate_series(1, 100000) g;
INSERT INTO ph_bt SELECT g, (g * 31) % 100003 FROM generate_series(1, 100000) g;
DELETE FROM ph WHERE k % 3 = 0;
DELETE FROM ph_bt WHERE k % 3 = 0;
VACUUM ph;
VACUUM ph_bt;
SELECT phast_pm_check('ph_v', true);
SELECT ph_same('SELECT v FROM %s WHERE v BETWEEN 10 AND 5000 ORDER BY v') AS range_after,
       ph_same('SELECT v FROM %s WHERE v > 99000 ORDER BY v DESC') AS desc_after;
SELECT entries = (SELECT count(*) FROM ph) AS entries_counted, leaves > 0 AS has_leaves,
       smo_merges IS NULL AS no_merge_counter
  FROM pm_index_stats('ph_v');

-- reloptions and errors
CREATE INDEX ph_ff ON ph USING phast_pm (v) WITH (fillfactor = 50);
CREATE INDEX ph_bad ON ph USING phast_pm (v) WITH (fillfactor = 5);
SELECT phast_pm_check('ph_bt_v');
CREATE TABLE ph_text (t text);
CREATE INDEX ON ph_text USING phast_pm (t);

DROP TABLE ph, ph_bt, ph_text;
DROP FUNCTION ph_same(text);
