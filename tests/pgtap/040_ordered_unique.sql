-- A unique index of an ordered access method accepts and refuses exactly what a btree unique
-- index does: random inserts, multi-row inserts, updates, deletes and a delete with a re-insert
-- in one statement, over a small set of values per type (so that conflicts are frequent),
-- including NULLs, -0 and 0, NaN and infinities, with NULLS DISTINCT and NOT DISTINCT.  Each
-- statement runs on two identical tables, one with the access method's unique index and one
-- with btree's; their outcomes (SQLSTATE and detail) and the tables' contents must be equal.
-- Then builds: CREATE UNIQUE INDEX over data with and without duplicates, as btree decides.
-- The access method is the psql variable am (tests/run runs the file once per ordered access
-- method); nbtree_pm without it.
\set schema pm_unique
\ir ../lib/ordered_pgtap.sql

-- the statements are many and small: compiling them would take longer than running them
SET jit = off;
SELECT * FROM no_plan();
SELECT setseed(0.2121);

CREATE TABLE domains (typ text, vals text[]);
INSERT INTO domains VALUES
  ('int2', ARRAY['-32768', '-1', '0', '1', '2', '3', '32767']),
  ('int4', (SELECT array_agg(g::text) FROM generate_series(-12, 12) g) || ARRAY['2147483647', '-2147483648']),
  ('int8', ARRAY['-9223372036854775808', '-1', '0', '1', '5', '9223372036854775806', '9223372036854775807']),
  ('float8', ARRAY['-Infinity', '-1.5', '-0', '0', '1e-300', '1.5', 'Infinity', 'NaN']),
  ('float4', ARRAY['-Infinity', '-0', '0', '3.25', 'Infinity', 'NaN']),
  ('timestamptz', ARRAY['-infinity', '2000-01-01 00:00 UTC', '2000-01-01 01:00 UTC', '2020-02-29 12:00 UTC', 'infinity']),
  ('bool', ARRAY['false', 'true']);

-- outcome of one statement: '' or SQLSTATE and detail
CREATE FUNCTION outcome(stmt text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  detail text;
BEGIN
  EXECUTE stmt;
  RETURN '';
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS detail = PG_EXCEPTION_DETAIL;
  RETURN SQLSTATE || ' ' || coalesce(detail, '');
END $$;

-- a random value of the domain as a literal, NULL one time in ten
CREATE FUNCTION val(typ text, vals text[]) RETURNS text LANGUAGE sql AS $$
  SELECT CASE WHEN random() < 0.1 THEN 'NULL::' || typ
              ELSE quote_literal(vals[1 + floor(random() * array_length(vals, 1))::int]) || '::' || typ END
$$;

-- nops random statements on pm_t and bt_t: the statements whose outcomes differ
CREATE FUNCTION workload(typ text, vals text[], nops int) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
  next_id int := 1;
  r float8;
  stmt text;
  a text;
  b text;
  victim int;
BEGIN
  FOR i IN 1 .. nops LOOP
    r := random();
    SELECT id INTO victim FROM bt_t ORDER BY random() LIMIT 1;
    victim := coalesce(victim, 0);
    IF r < 0.4 THEN
      stmt := format('INSERT INTO %%s VALUES (%s, %s)', next_id, val(typ, vals));
      next_id := next_id + 1;
    ELSIF r < 0.55 THEN
      stmt := format('INSERT INTO %%s VALUES (%s, %s), (%s, %s)', next_id, val(typ, vals),
                     next_id + 1, val(typ, vals));
      next_id := next_id + 2;
    ELSIF r < 0.75 THEN
      stmt := format('UPDATE %%s SET v = %s WHERE id = %s', val(typ, vals), victim);
    ELSIF r < 0.9 THEN
      stmt := format('DELETE FROM %%s WHERE v = %s', val(typ, vals));
    ELSE
      stmt := format('WITH d AS (DELETE FROM %%1$s WHERE id = %s RETURNING v) '
                     'INSERT INTO %%1$s SELECT %s, v FROM d', victim, next_id);
      next_id := next_id + 1;
    END IF;
    a := outcome(format(stmt, 'pm_t'));
    b := outcome(format(stmt, 'bt_t'));
    IF a IS DISTINCT FROM b THEN
      RETURN NEXT format('%s: %s gives [%s], btree [%s]', typ, format(stmt, 't'), a, b);
    END IF;
  END LOOP;
END $$;

CREATE FUNCTION check_type(typ text, vals text[], nnd bool) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
  clause text := CASE WHEN nnd THEN ' NULLS NOT DISTINCT' ELSE '' END;
  diffs text[];
  n_ok int;
BEGIN
  DROP TABLE IF EXISTS pm_t, bt_t;
  EXECUTE format('CREATE TABLE pm_t (id int, v %s)', typ);
  EXECUTE format('CREATE TABLE bt_t (id int, v %s)', typ);
  EXECUTE format('CREATE UNIQUE INDEX pm_t_v ON pm_t USING %s (v)%s', current_setting('pm_unique.am'), clause);
  EXECUTE format('CREATE UNIQUE INDEX bt_t_v ON bt_t USING btree (v)%s', clause);
  SELECT array_agg(d) INTO diffs FROM workload(typ, vals, 600) d;
  RETURN NEXT is(diffs, NULL, format('%s%s: 600 statements end as they do with btree', typ, clause));
  PERFORM set_config('enable_seqscan', 'off', true), set_config('enable_bitmapscan', 'off', true);
  RETURN NEXT set_eq('SELECT id, v::text FROM pm_t WHERE v IS NOT NULL OR v IS NULL',
                     'SELECT id, v::text FROM bt_t',
                     format('%s%s: the rows are btree''s, read through the index', typ, clause));
  PERFORM set_config('enable_seqscan', 'on', true), set_config('enable_bitmapscan', 'on', true);
  SELECT count(*) INTO n_ok FROM (SELECT v FROM pm_t GROUP BY v HAVING count(*) > 1 AND (v IS NOT NULL OR nnd)) s;
  RETURN NEXT is(n_ok, 0, format('%s%s: no value twice', typ, clause));
  -- builds over the same rows, then with a duplicate added to both
  DROP INDEX pm_t_v, bt_t_v;
  RETURN NEXT is(outcome(format('CREATE UNIQUE INDEX pm_t_v ON pm_t USING %s (v)%s', current_setting('pm_unique.am'), clause)),
                 outcome(format('CREATE UNIQUE INDEX bt_t_v ON bt_t USING btree (v)%s', clause)),
                 format('%s%s: a build over unique values as btree''s', typ, clause));
  DROP INDEX IF EXISTS pm_t_v, bt_t_v;
  EXECUTE 'INSERT INTO pm_t SELECT -id, v FROM pm_t WHERE id = (SELECT min(id) FROM pm_t)';
  EXECUTE 'INSERT INTO bt_t SELECT -id, v FROM bt_t WHERE id = (SELECT min(id) FROM bt_t)';
  RETURN NEXT is(outcome(format('CREATE UNIQUE INDEX pm_t_v ON pm_t USING %s (v)%s', current_setting('pm_unique.am'), clause)),
                 outcome(format('CREATE UNIQUE INDEX bt_t_v ON bt_t USING btree (v)%s', clause)),
                 format('%s%s: a build over a duplicated value as btree''s', typ, clause));
END $$;

SELECT check_type(typ, vals, nnd) FROM domains, (VALUES (false), (true)) n(nnd) ORDER BY typ, nnd;

-- -0 and 0, NaN and NaN: one value each, at build and at insert
CREATE TABLE z (f float8);
INSERT INTO z VALUES ('-0'), ('0');
SELECT throws_ok(format('CREATE UNIQUE INDEX ON z USING %s (f)', :'am'), '23505', NULL,
                 '-0 and 0 are a duplicate at build');
DELETE FROM z WHERE f::text = '0';
SELECT format('CREATE UNIQUE INDEX z_f ON z USING %s (f)', :'am') AS create_z \gset
SELECT lives_ok(:'create_z', 'a build over -0 alone');
SELECT throws_ok('INSERT INTO z VALUES (0)', '23505', NULL, '0 is a duplicate of -0 at insert');
SELECT lives_ok($$INSERT INTO z VALUES ('NaN')$$, 'NaN');
SELECT throws_ok($$INSERT INTO z VALUES ('NaN')$$, '23505', NULL, 'NaN twice is a duplicate');

SELECT * FROM finish();
DROP SCHEMA pm_unique CASCADE;
