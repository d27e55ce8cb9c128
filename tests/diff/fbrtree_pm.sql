-- The differential oracle for fbrtree_pm (after tests/diff/common.sql).
--
-- For every operator class of fbrtree_pm (box, point, circle, polygon, and with
-- pm_index_postgis geometry), pm_diff.fbr_<type> holds the type's boundary values (EMPTY
-- geometries, huge and tiny coordinates, infinities, degenerate boxes), NULLs, a run of one
-- duplicate and random values under an fbrtree_pm index, pm_diff.gist_<type> the same rows
-- under GiST.  Every search operator of the class (from the catalogs) is applied to boundary
-- and random values of its right-hand type through index and bitmap scans (and index-only
-- scans of points); every ordering operator orders the whole table and a LIMIT from boundary
-- and random points; for geometry every PostGIS predicate that the index serves (ST_Intersects
-- and the rest, both argument orders, the distance predicates, and ORs of them).  Answers must
-- equal a sequential scan's; GiST's are compared too, and where GiST differs from the
-- sequential scan that is recorded as 'builtin differs' (not a failure of fbrtree_pm).

-- Boundary values of a type that both fbrtree_pm and GiST can hold, as literals.
CREATE FUNCTION pm_diff.fbr_edges(t regtype) RETURNS text[]
LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE pm_diff.tname(t)
    WHEN 'box' THEN
      '{"(0,0),(0,0)","(1,1),(0,0)","(5,1),(5,0)","(5,5),(0,5)","(-1,-1),(-2,-2)",'
      '"(1e-40,1e-40),(0,0)","(3.4e38,3.4e38),(-3.4e38,-3.4e38)","(100,100),(50,50)"}'::text[]
    WHEN 'point' THEN
      '{"(0,0)","(-0,-0)","(1,1)","(5,5)","(1e-320,0)","(3.4e38,3.4e38)","(-3.4e38,3.4e38)",'
      '"(50,50)"}'::text[]
    WHEN 'circle' THEN
      '{"<(0,0),0>","<(0,0),1>","<(5,5),5>","<(-1,-1),0.5>","<(1e-40,1e-40),1e-40>",'
      '"<(3.4e38,0),1>","<(0,0),1e30>","<(50,50),10>"}'::text[]
    WHEN 'polygon' THEN
      '{"((0,0))","((0,0),(1,1))","((0,0),(10,0),(10,10),(0,10))","((0,0),(10,0),(0,10))",'
      '"((1e-40,0),(0,1e-40),(0,0))","((-1e30,-1e30),(1e30,-1e30),(1e30,1e30))",'
      '"((3.4e38,3.4e38),(-3.4e38,3.4e38),(0,-3.4e38))","((50,50),(60,50),(60,60))"}'::text[]
    WHEN 'geometry' THEN
      '{"POINT EMPTY","POLYGON EMPTY","LINESTRING EMPTY","GEOMETRYCOLLECTION EMPTY","POINT(0 0)",'
      '"POINT(1 1)","POINT(3.4e38 3.4e38)","POINT(-3.4e38 -3.4e38)","POINT(1e300 1e300)",'
      '"POINT(1e-40 1e-40)","LINESTRING(0 0,0 10)","LINESTRING(0 0,10 0)",'
      '"POLYGON((0 0,10 0,10 10,0 10,0 0))","POLYGON((-1e30 -1e30,1e30 -1e30,1e30 1e30,-1e30 1e30,-1e30 -1e30))",'
      '"MULTIPOINT((1 1),(5 5))","POLYGON((50 50,60 50,60 60,50 60,50 50))"}'::text[]
  END
$$;

-- Query values: the edges, and values an index cannot hold: infinite ones, and ones whose box
-- areas overflow GiST's insertion penalty (an error on the next INSERT into the GiST table).
CREATE FUNCTION pm_diff.fbr_query_edges(t regtype) RETURNS text[]
LANGUAGE sql IMMUTABLE AS $$
  SELECT pm_diff.fbr_edges(t) || CASE pm_diff.tname(t)
    WHEN 'box' THEN
      '{"(1e300,1e300),(1e299,1e299)","(Infinity,Infinity),(-Infinity,-Infinity)","(Infinity,5),(5,5)"}'::text[]
    WHEN 'point' THEN
      '{"(1e300,-1e300)","(Infinity,0)","(0,-Infinity)"}'::text[]
    ELSE '{}'::text[]
  END
$$;

-- A random value: on a coarse grid (values touch and repeat) of 0..100.  Boxes may be
-- degenerate; polygons have an area: PostGIS leaves its predicates on invalid (collapsed)
-- polygons undefined, and their answers then depend on the order of the calls (after the first
-- call with an argument, GEOS prepares it), so no scan could be compared with another.
CREATE FUNCTION pm_diff.fbr_random_value(t regtype) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  x float8 := floor(random() * 400) / 4;
  y float8 := floor(random() * 400) / 4;
  w float8 := floor(random() * 40) / 4;
  h float8 := floor(random() * 40) / 4;
BEGIN
  CASE pm_diff.tname(t)
    WHEN 'box' THEN
      RETURN format('(%s,%s),(%s,%s)', x + w, y + h, x, y);
    WHEN 'point' THEN
      RETURN format('(%s,%s)', x, y);
    WHEN 'circle' THEN
      RETURN format('<(%s,%s),%s>', x, y, w);
    WHEN 'polygon' THEN
      RETURN CASE WHEN random() < 0.5 THEN format('((%s,%s),(%s,%s),(%s,%s))', x, y, x + w, y, x, y + h)
             ELSE format('((%1$s,%2$s),(%3$s,%2$s),(%3$s,%4$s),(%1$s,%4$s))', x, y, x + w, y + h) END;
    ELSE
      RETURN CASE WHEN random() < 0.5 THEN format('POINT(%s %s)', x, y)
             ELSE format('POLYGON((%1$s %2$s,%3$s %2$s,%3$s %4$s,%1$s %4$s,%1$s %2$s))', x, y,
                         x + w + 0.25, y + h + 0.25) END;
  END CASE;
END $$;

-- The tables of one type: the same rows in fbr_<type> (fbrtree_pm) and gist_<type> (GiST),
-- nrandom random rows besides the edges, NULLs and a run of 80 duplicates (longer than a node).
CREATE FUNCTION pm_diff.fbr_setup_type(t regtype, nrandom int) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  n text := pm_diff.tname(t);
BEGIN
  PERFORM pm_diff.oracle_table(format('pm_diff.gist_%s', n), t, 'gist', pm_diff.fbr_edges(t),
                               'pm_diff.fbr_random_value', 80, nrandom);
  EXECUTE format('CREATE TABLE pm_diff.fbr_%s AS SELECT * FROM pm_diff.gist_%s', n, n);
  EXECUTE format('CREATE INDEX fbr_%s_v ON pm_diff.fbr_%s USING fbrtree_pm (v)', n, n);
END $$;

-- The tables the concurrent pass writes for type t.
CREATE FUNCTION pm_diff.fbr_tables(t regtype) RETURNS text[]
LANGUAGE sql STABLE AS $$
  SELECT ARRAY[format('pm_diff.fbr_%s', pm_diff.tname(t)), format('pm_diff.gist_%s', pm_diff.tname(t))]
$$;

CREATE FUNCTION pm_diff.fbr_check(q text, t regtype, answer_type regtype, shapes text[],
                                  ordered boolean DEFAULT false)
RETURNS void
LANGUAGE sql AS $$
  SELECT pm_diff.check(q, answer_type, format('pm_diff.fbr_%s', pm_diff.tname(t)),
                       format('fbr_%s_v', pm_diff.tname(t)), format('pm_diff.gist_%s', pm_diff.tname(t)),
                       shapes, ordered)
$$;

-- The operators of t's default fbrtree_pm operator class: purpose 's' (search) or 'o' (order).
CREATE FUNCTION pm_diff.fbr_operators(t regtype, purpose "char")
RETURNS TABLE (oprname name, righttype regtype)
LANGUAGE sql STABLE AS $$
  SELECT o.oprname, ao.amoprighttype::regtype
    FROM pg_opclass oc
    JOIN pg_am am ON am.oid = oc.opcmethod AND am.amname = 'fbrtree_pm'
    JOIN pg_amop ao ON ao.amopfamily = oc.opcfamily AND ao.amoplefttype = oc.opcintype
    JOIN pg_operator o ON o.oid = ao.amopopr
   WHERE oc.opcintype = t AND oc.opcdefault AND ao.amoppurpose = purpose
   ORDER BY ao.amopstrategy
$$;

CREATE FUNCTION pm_diff.fbr_types() RETURNS SETOF regtype
LANGUAGE sql STABLE AS $$
  SELECT oc.opcintype::regtype
    FROM pg_opclass oc JOIN pg_am am ON am.oid = oc.opcmethod AND am.amname = 'fbrtree_pm'
   WHERE oc.opcdefault
   ORDER BY 1
$$;

-- Every query of one type.
CREATE FUNCTION pm_diff.fbr_run_type(t regtype, nrandom int) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  op record;
  v text;
  f text;
  rows_shapes text[] := ARRAY['index', 'bitmap'];
  value_text text := CASE WHEN pm_diff.tname(t) = 'geometry' THEN 'ST_AsEWKT(v)' ELSE 'v::text' END;
BEGIN
  FOR op IN SELECT * FROM pm_diff.fbr_operators(t, 's') LOOP
    FOR v IN SELECT unnest(pm_diff.fbr_query_edges(op.righttype))
             UNION ALL SELECT pm_diff.fbr_random_value(op.righttype) FROM generate_series(1, nrandom) LOOP
      PERFORM pm_diff.fbr_check(format('SELECT id || %L || coalesce(%s, %L) FROM %%1$s WHERE v %s %s',
                                       ':', value_text, 'NULL', op.oprname, pm_diff.lit(v, op.righttype)),
                                t, 'text', rows_shapes);
      IF pm_diff.tname(t) = 'point' THEN
        PERFORM pm_diff.fbr_check(format('SELECT v::text AS r FROM %%1$s WHERE v %s %s',
                                         op.oprname, pm_diff.lit(v, op.righttype)),
                                  t, 'text', ARRAY['indexonly']);
      END IF;
    END LOOP;
  END LOOP;
  FOR op IN SELECT * FROM pm_diff.fbr_operators(t, 'o') LOOP
    FOR v IN SELECT unnest(pm_diff.fbr_query_edges(op.righttype))
             UNION ALL SELECT pm_diff.fbr_random_value(op.righttype) FROM generate_series(1, nrandom) LOOP
      PERFORM pm_diff.fbr_check(format('SELECT (v %1$s %2$s)::text AS r FROM %%1$s ORDER BY v %1$s %2$s',
                                       op.oprname, pm_diff.lit(v, op.righttype)),
                                t, 'float8', ARRAY['index'], true);
      PERFORM pm_diff.fbr_check(format('SELECT (v %1$s %2$s)::text AS r FROM %%1$s ORDER BY v %1$s %2$s LIMIT 10',
                                       op.oprname, pm_diff.lit(v, op.righttype)),
                                t, 'float8', ARRAY['index'], true);
    END LOOP;
  END LOOP;
  IF pm_diff.tname(t) = 'geometry' THEN
    FOREACH f IN ARRAY ARRAY['ST_Intersects', 'ST_Touches', 'ST_Crosses', 'ST_Overlaps', 'ST_Contains',
                             'ST_ContainsProperly', 'ST_Covers', 'ST_Within', 'ST_CoveredBy', 'ST_Equals',
                             'ST_OrderingEquals', 'ST_3DIntersects'] LOOP
      FOR v IN SELECT unnest(pm_diff.fbr_query_edges(t))
               UNION ALL SELECT pm_diff.fbr_random_value(t) FROM generate_series(1, nrandom) LOOP
        PERFORM pm_diff.fbr_check(format('SELECT id::text FROM %%1$s WHERE %s(v, %s)', f, pm_diff.lit(v, t)),
                                  t, 'text', rows_shapes);
        PERFORM pm_diff.fbr_check(format('SELECT id::text FROM %%1$s WHERE %s(%s, v)', f, pm_diff.lit(v, t)),
                                  t, 'text', rows_shapes);
      END LOOP;
    END LOOP;
    FOR v IN SELECT unnest(pm_diff.fbr_edges(t)) LOOP
      FOREACH f IN ARRAY ARRAY['ST_DWithin', 'ST_DFullyWithin', 'ST_3DDWithin', 'ST_3DDFullyWithin'] LOOP
        PERFORM pm_diff.fbr_check(format('SELECT id::text FROM %%1$s WHERE %s(v, %s, 5)', f, pm_diff.lit(v, t)),
                                  t, 'text', rows_shapes);
      END LOOP;
    END LOOP;
    -- an OR of predicates: a BitmapOr over the index, as over GiST
    FOR i IN 1 .. nrandom LOOP
      PERFORM pm_diff.fbr_check(format('SELECT id::text FROM %%1$s WHERE ST_Intersects(v, %s) OR ST_DWithin(v, %s, 3)',
                                       pm_diff.lit(pm_diff.fbr_random_value(t), t),
                                       pm_diff.lit(pm_diff.fbr_random_value(t), t)),
                                t, 'text', ARRAY['bitmap']);
    END LOOP;
  END IF;
  PERFORM pm_diff.fbr_check('SELECT id::text FROM %1$s WHERE v IS NULL', t, 'text', rows_shapes);
  PERFORM pm_diff.fbr_check('SELECT id::text FROM %1$s WHERE v IS NOT NULL', t, 'text', rows_shapes);
END $$;
