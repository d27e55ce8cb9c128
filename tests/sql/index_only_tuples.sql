-- Index-only scans return the values of each entry as an index tuple.  For an index whose columns
-- are all fixed-width and passed by value, one tuple is kept and each entry's values are stored
-- into it; an entry with a NULL is formed on its own.  Here rows with and without NULLs alternate
-- in one scan, through every ordered access method, one and two columns, both directions, and
-- each answer must be btree's on an identical table.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pm_index;
RESET client_min_messages;

CREATE TABLE iot (a int4, b float8, c bool, d int2);
INSERT INTO iot SELECT CASE WHEN g % 3 = 0 THEN NULL ELSE g % 50 END,
       CASE WHEN g % 5 = 0 THEN NULL WHEN g % 7 = 0 THEN '-0' ELSE g / 7.0 END,
       CASE WHEN g % 11 = 0 THEN NULL ELSE g % 2 = 0 END,
       CASE WHEN g % 13 = 0 THEN NULL ELSE (g * 7919) % 32767 - 16000 END
FROM generate_series(1, 3000) g;
INSERT INTO iot VALUES (-2147483648, '-Infinity', false, -32768), (2147483647, 'NaN', true, 32767);
VACUUM (FREEZE, ANALYZE) iot;

CREATE FUNCTION iot_same(am text, cols text, q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  got text;
  want text;
  plan text;
BEGIN
  EXECUTE format('CREATE INDEX iot_idx ON iot USING %s (%s)', am, cols);
  SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off; SET LOCAL enable_indexscan = off;
  EXECUTE 'EXPLAIN (COSTS OFF) ' || q INTO plan;
  IF plan NOT LIKE '%Index Only Scan%' THEN
    EXECUTE 'DROP INDEX iot_idx';
    RETURN 'no index-only scan: ' || plan;
  END IF;
  EXECUTE format('SELECT string_agg(r::text, %L) FROM (%s) s(r)', ',', q) INTO got;
  EXECUTE 'DROP INDEX iot_idx';
  EXECUTE format('CREATE INDEX iot_idx ON iot USING btree (%s)', cols);
  EXECUTE format('SELECT string_agg(r::text, %L) FROM (%s) s(r)', ',', q) INTO want;
  EXECUTE 'DROP INDEX iot_idx';
  RETURN CASE WHEN got IS NOT DISTINCT FROM want THEN 'same' ELSE format('differs: %s / %s', got, want) END;
END $$;

SELECT am, cols, dir, iot_same(am, cols, format('SELECT row(%s) FROM iot WHERE %s ORDER BY %s%s', cols, w, cols, dir))
FROM unnest(ARRAY['nbtree_pm', 'phast_pm', 'nvbtree_pm']) am,
     (VALUES ('a', 'a > -5 OR a IS NULL'), ('a, d', 'a < 40 OR a IS NULL'),
             ('d, a, c', 'd IS NOT NULL OR a IS NULL'), ('b, c', 'b > 3 OR b IS NULL OR b = 0')) v(cols, w),
     unnest(ARRAY['', ' DESC']) dir
WHERE (dir = '' OR cols = 'a') AND (am <> 'phast_pm' OR cols NOT LIKE '%,%') -- phast_pm: one column
ORDER BY am, cols, dir;
DROP TABLE iot;
DROP FUNCTION iot_same(text, text, text);
