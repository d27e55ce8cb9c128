-- The differential oracle for WHERE shapes (after tests/diff/common.sql): conditions nested in
-- AND, OR and NOT to a depth of 3 over a boolean column (b, NOT b, b IS [NOT] TRUE/FALSE/NULL,
-- b = true, b <> false), an int column (equalities, ranges, IN-lists, = ANY with a NULL,
-- IS [NOT] NULL, a scalar subquery), a point column (<@ a box) and with PostGIS a geometry
-- column (ST_Intersects, ST_DWithin).  pm_diff.wh_nbtree_pm has nbtree_pm indexes on the
-- boolean and the int column, pm_diff.wh_<am> those of each other ordered access method, each an fbrtree_pm index on
-- each spatial column; pm_diff.wh_btree holds the same rows under btree and GiST indexes.
-- Every query is planned and run on each table as the planner likes, with index scans only
-- and with bitmap scans only: planning must not fail, and every answer must equal btree's and
-- a sequential scan's.  What each answer's plan used of the tested indexes is counted.

CREATE FUNCTION pm_diff.wh_postgis() RETURNS boolean
LANGUAGE sql STABLE AS $$ SELECT to_regtype('geometry') IS NOT NULL $$;

CREATE FUNCTION pm_diff.wh_setup(nrows int) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  am text;
  spatial text := CASE WHEN pm_diff.wh_postgis() THEN ', g geometry' ELSE '' END;
BEGIN
  EXECUTE format('CREATE TABLE pm_diff.wh_btree (id serial, a int4, b bool, p point%s)', spatial);
  -- a in a narrow range (values repeat), a NULL in one row of eight; b NULL in one of six
  INSERT INTO pm_diff.wh_btree (a, b, p)
    SELECT CASE WHEN random() < 0.125 THEN NULL ELSE floor(random() * 41 - 20) END,
           CASE WHEN random() < 0.17 THEN NULL ELSE random() < 0.5 END,
           CASE WHEN random() < 0.1 THEN NULL ELSE point(floor(random() * 100), floor(random() * 100)) END
      FROM generate_series(1, nrows);
  IF pm_diff.wh_postgis() THEN
    EXECUTE 'UPDATE pm_diff.wh_btree SET g = ST_MakePoint(p[0], p[1])';
  END IF;
  FOREACH am IN ARRAY pm_diff.ordered_ams() LOOP
    EXECUTE format('CREATE TABLE pm_diff.wh_%s AS SELECT * FROM pm_diff.wh_btree', am);
  END LOOP;
  FOREACH am IN ARRAY ARRAY['btree'] || pm_diff.ordered_ams() LOOP
    EXECUTE format('CREATE INDEX wh_%1$s_a ON pm_diff.wh_%1$s USING %1$s (a)', am);
    EXECUTE format('CREATE INDEX wh_%1$s_b ON pm_diff.wh_%1$s USING %1$s (b)', am);
    EXECUTE format('CREATE INDEX wh_%s_p ON pm_diff.wh_%1$s USING %s (p)', am,
                   CASE am WHEN 'btree' THEN 'gist' ELSE 'fbrtree_pm' END);
    IF pm_diff.wh_postgis() THEN
      EXECUTE format('CREATE INDEX wh_%s_g ON pm_diff.wh_%1$s USING %s (g)', am,
                     CASE am WHEN 'btree' THEN 'gist' ELSE 'fbrtree_pm' END);
    END IF;
  END LOOP;
END $$;

-- A random condition on one column (%1$s: the table, for the scalar subqueries).
CREATE FUNCTION pm_diff.wh_leaf() RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  r float8 := random();
  c1 int := floor(random() * 45 - 22);
  c2 int := floor(random() * 45 - 22);
  x int := floor(random() * 90);
  y int := floor(random() * 90);
  w int := 1 + floor(random() * 20);
BEGIN
  IF r < 0.4 THEN
    RETURN (ARRAY['b', 'NOT b', 'b IS TRUE', 'b IS NOT TRUE', 'b IS FALSE', 'b IS NOT FALSE', 'b IS NULL',
                  'b IS NOT NULL', 'b IS UNKNOWN', 'b = true', 'b = false', 'b <> false', 'b <> true',
                  'b = (a > 0)'])[1 + floor(random() * 14)::int];
  ELSIF r < 0.8 THEN
    RETURN (ARRAY[format('a = %s', c1), format('a < %s', c1), format('a <= %s', c1), format('a > %s', c1),
                  format('a >= %s', c1), format('a <> %s', c1), format('a BETWEEN %s AND %s', least(c1, c2), greatest(c1, c2)),
                  format('a IN (%s, %s, %s)', c1, c2, c1 + 3), format('a = ANY (ARRAY[%s, %s, NULL])', c1, c2),
                  'a IS NULL', 'a IS NOT NULL',
                  format('a > (SELECT min(a) + %s FROM %%1$s)', abs(c1)),
                  'a = (SELECT max(a) FROM %1$s WHERE b)',
                  format('a < (SELECT %s)', c1)])[1 + floor(random() * 14)::int];
  ELSIF r < 0.9 OR NOT pm_diff.wh_postgis() THEN
    RETURN format('p <@ box ''(%s,%s),(%s,%s)''', x, y, x + w, y + w);
  ELSIF random() < 0.5 THEN
    RETURN format('ST_Intersects(g, ST_MakeEnvelope(%s, %s, %s, %s))', x, y, x + w, y + w);
  ELSE
    RETURN format('ST_DWithin(g, ST_MakePoint(%s, %s), %s)', x, y, w);
  END IF;
END $$;

-- A random condition nested to depth at most: a leaf, or an AND or OR of two or three, or a NOT
-- of one.  One in three at the top is an OR of an AND and a boolean column's condition.
CREATE FUNCTION pm_diff.wh_expr(depth int) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  r float8 := random();
  n int := 2 + floor(random() * 2)::int;
  parts text[] := '{}';
BEGIN
  IF depth = 3 AND r < 0.33 THEN
    RETURN format('((%s) AND (%s)) OR %s', pm_diff.wh_expr(1), pm_diff.wh_expr(1),
                  (ARRAY['b', 'NOT b', 'b IS TRUE', 'b IS FALSE', 'b IS NOT TRUE', 'b = true'])[1 + floor(random() * 6)::int]);
  END IF;
  IF depth = 0 OR r < 0.25 THEN
    RETURN pm_diff.wh_leaf();
  END IF;
  IF r < 0.85 THEN
    FOR i IN 1 .. n LOOP
      parts := parts || format('(%s)', pm_diff.wh_expr(depth - 1));
    END LOOP;
    RETURN array_to_string(parts, CASE WHEN r < 0.55 THEN ' OR ' ELSE ' AND ' END);
  END IF;
  RETURN format('NOT (%s)', pm_diff.wh_expr(depth - 1));
END $$;

-- What a plan used of a tested table's indexes: a BitmapOr over them, their bitmap scans, an
-- index or index-only scan of them, or none of them.
CREATE FUNCTION pm_diff.wh_class(plan text, am text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
  SELECT 'where ' || CASE
    WHEN plan LIKE '%BitmapOr%' AND plan LIKE format('%%Bitmap Index Scan on wh_%s_%%', am) THEN 'bitmapor'
    WHEN plan LIKE format('%%Bitmap Index Scan on wh_%s_%%', am) THEN 'bitmap'
    WHEN plan LIKE format('%%Index%% Scan%% using wh_%s_%%', am) THEN 'index'
    ELSE 'no index' END
$$;

-- nq random WHERE shapes, each on both tested tables under three shapes, against btree's table
-- (as the planner likes) and a sequential scan.
CREATE FUNCTION pm_diff.wh_run(nq int) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  q text;
  by_seq text;
  by_btree text;
  am text;
  shape text;
  plan text;
  got text;
BEGIN
  FOR i IN 1 .. nq LOOP
    q := 'SELECT id::text FROM %1$s WHERE ' || pm_diff.wh_expr(3);
    by_seq := pm_diff.answer(format(q, 'pm_diff.wh_btree'), 'seq', false);
    by_btree := pm_diff.answer(format(q, 'pm_diff.wh_btree'), 'planner', false);
    IF by_btree <> by_seq OR by_seq LIKE 'ERROR %' THEN
      PERFORM pm_diff.fail('where btree', format(q, 'pm_diff.wh_btree'), by_btree, by_seq);
    END IF;
    FOREACH am IN ARRAY pm_diff.ordered_ams() LOOP
      FOREACH shape IN ARRAY ARRAY['planner', 'index', 'bitmap'] LOOP
        BEGIN
          plan := pm_diff.plan(format(q, 'pm_diff.wh_' || am), shape);
        EXCEPTION WHEN OTHERS THEN
          PERFORM pm_diff.fail('where plan', format(q, 'pm_diff.wh_' || am) || ' -- ' || shape,
                               'ERROR ' || SQLSTATE || ': ' || SQLERRM, '(a plan)');
          CONTINUE;
        END;
        PERFORM pm_diff.count(pm_diff.wh_class(plan, am));
        got := pm_diff.answer(format(q, 'pm_diff.wh_' || am), shape, false);
        IF got <> by_seq THEN
          PERFORM pm_diff.fail('where ' || shape, format(q, 'pm_diff.wh_' || am), got, by_seq);
        END IF;
      END LOOP;
    END LOOP;
  END LOOP;
END $$;
