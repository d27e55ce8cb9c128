-- answers(query): 'same' when the query returns the same rows through the indexes (index,
-- index-only and bitmap scans) as by a sequential scan, else both answers.
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
