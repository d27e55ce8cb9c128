-- The differential oracle for fbrtree_pm (after tests/diff/common.sql).
--
-- For every operator class of fbrtree_pm (box, point, circle, polygon, and with
-- pm_index_postgis geometry 2-D and n-D and geography), pm_diff.fbr_<tag> holds the type's
-- boundary values (EMPTY geometries, huge and tiny coordinates, infinities, degenerate boxes,
-- 3-D and 4-D values, the antimeridian and the poles), NULLs, a run of one duplicate and random
-- values under an fbrtree_pm index of the class, pm_diff.gist_<tag> the same rows under GiST's
-- class of the same operators (<tag>: the type, and for a class that is not its default the
-- class's suffix: geometry_nd).  Every search operator of the class (from the catalogs) is applied to boundary
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
      '"MULTIPOINT((1 1),(5 5))","POLYGON((50 50,60 50,60 60,50 60,50 50))","POINT Z (1 1 1)",'
      '"POINT ZM (1 2 3 4)","POINT M (1 1 5)","LINESTRING Z (0 0 0,10 10 10)",'
      '"POINT Z (50 50 -3.4e38)","POINT Z EMPTY"}'::text[]
    WHEN 'geography' THEN
      '{"POINT EMPTY","POLYGON EMPTY","POINT(0 0)","POINT(180 0)","POINT(-180 0)","POINT(0 90)",'
      '"POINT(0 -90)","POINT(179.9999 -16.5)","LINESTRING(179 10,-179 10)","POINT(45 45)",'
      '"POLYGON((0 0,10 0,10 10,0 10,0 0))","MULTIPOINT((1 1),(5 5))","LINESTRING(-10 89,170 89)",'
      '"POINT Z (10 10 100)"}'::text[]
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
    WHEN 'geography' THEN
      -- on a grid over longitudes 20..110 and latitudes -45..45: PostGIS's geography predicates
      -- can answer wrongly for a point near the antipode of a polygon once that polygon is
      -- cached (which depends on the order of the calls, so no two scans could be compared);
      -- these values' antipodes hold none of them (nor does the polygon among the edges)
      RETURN CASE WHEN random() < 0.7 THEN format('POINT(%s %s)', 20 + x * 0.9, y * 0.9 - 45)
             ELSE format('POLYGON((%1$s %2$s,%3$s %2$s,%3$s %4$s,%1$s %4$s,%1$s %2$s))', 20 + x * 0.9,
                         y * 0.9 - 45, 20 + x * 0.9 + w + 0.25, y * 0.9 - 45 + h + 0.25) END;
    ELSE
      RETURN CASE WHEN random() < 0.3 THEN format('POINT(%s %s)', x, y)
             WHEN random() < 0.4 THEN format('POINT Z (%s %s %s)', x, y, w * 10)
             WHEN random() < 0.5 THEN format('POINT ZM (%s %s %s %s)', x, y, w * 10, h)
             ELSE format('POLYGON((%1$s %2$s,%3$s %2$s,%3$s %4$s,%1$s %4$s,%1$s %2$s))', x, y,
                         x + w + 0.25, y + h + 0.25) END;
  END CASE;
END $$;

-- The tag of an operator class's tables: the type's name, and for a class that is not the
-- type's default (class names one) the rest of its name after "_ops_" (geometry_ops_nd:
-- geometry_nd).  GiST's twin class is "gist_" and the class's name.
CREATE FUNCTION pm_diff.fbr_tag(t regtype, class text) RETURNS text
LANGUAGE sql STABLE AS $$
  SELECT pm_diff.tname(t) || coalesce('_' || substring(class FROM '_ops_(.*)$'), '')
$$;

-- The tables of one operator class: the same rows in fbr_<tag> (fbrtree_pm) and gist_<tag>
-- (GiST), nrandom random rows besides the edges, NULLs and a run of 80 duplicates (longer
-- than a node).
CREATE FUNCTION pm_diff.fbr_setup_type(t regtype, nrandom int, class text DEFAULT NULL) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  n text := pm_diff.fbr_tag(t, class);
BEGIN
  PERFORM pm_diff.oracle_table(format('pm_diff.gist_%s', n), t, 'gist', pm_diff.fbr_edges(t),
                               'pm_diff.fbr_random_value', 80, nrandom);
  IF class IS NOT NULL THEN
    EXECUTE format('DROP INDEX pm_diff.gist_%s_v_idx', n);
    EXECUTE format('CREATE INDEX ON pm_diff.gist_%s USING gist (v gist_%s)', n, class);
  END IF;
  EXECUTE format('CREATE TABLE pm_diff.fbr_%s AS SELECT * FROM pm_diff.gist_%s', n, n);
  EXECUTE format('CREATE INDEX fbr_%s_v ON pm_diff.fbr_%s USING fbrtree_pm (v %s)', n, n,
                 coalesce(class, ''));
END $$;

-- The tables the concurrent pass writes for type t.
CREATE FUNCTION pm_diff.fbr_tables(t regtype) RETURNS text[]
LANGUAGE sql STABLE AS $$
  SELECT ARRAY[format('pm_diff.fbr_%s', pm_diff.tname(t)), format('pm_diff.gist_%s', pm_diff.tname(t))]
$$;

CREATE FUNCTION pm_diff.fbr_check(q text, t regtype, answer_type regtype, shapes text[],
                                  ordered boolean DEFAULT false, class text DEFAULT NULL)
RETURNS void
LANGUAGE sql AS $$
  SELECT pm_diff.check(q, answer_type, format('pm_diff.fbr_%s', pm_diff.fbr_tag(t, class)),
                       format('fbr_%s_v', pm_diff.fbr_tag(t, class)),
                       format('pm_diff.gist_%s', pm_diff.fbr_tag(t, class)), shapes, ordered)
$$;

-- The operators of an fbrtree_pm operator class of t (class NULL: the default one): purpose
-- 's' (search) or 'o' (order).
CREATE FUNCTION pm_diff.fbr_operators(t regtype, purpose "char", class text DEFAULT NULL)
RETURNS TABLE (oprname name, righttype regtype)
LANGUAGE sql STABLE AS $$
  SELECT o.oprname, ao.amoprighttype::regtype
    FROM pg_opclass oc
    JOIN pg_am am ON am.oid = oc.opcmethod AND am.amname = 'fbrtree_pm'
    JOIN pg_amop ao ON ao.amopfamily = oc.opcfamily AND ao.amoplefttype = oc.opcintype
    JOIN pg_operator o ON o.oid = ao.amopopr
   WHERE oc.opcintype = t AND ao.amoppurpose = purpose
     AND (oc.opcname = class OR (class IS NULL AND oc.opcdefault))
   ORDER BY ao.amopstrategy
$$;

-- Every operator class of fbrtree_pm: its type, and its name unless it is the type's default.
CREATE FUNCTION pm_diff.fbr_classes() RETURNS TABLE (t regtype, class text)
LANGUAGE sql STABLE AS $$
  SELECT oc.opcintype::regtype, CASE WHEN NOT oc.opcdefault THEN oc.opcname::text END
    FROM pg_opclass oc JOIN pg_am am ON am.oid = oc.opcmethod AND am.amname = 'fbrtree_pm'
   ORDER BY 1, 2
$$;

-- Every query of one type.
-- Every query of one operator class (class NULL: the type's default).  The ST_* predicates are
-- those the class serves: on geometry_ops_2d all of them, on geometry_ops_nd the 3-D ones, on
-- geography the four PostGIS indexes there.
CREATE FUNCTION pm_diff.fbr_run_type(t regtype, nrandom int, class text DEFAULT NULL) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  op record;
  v text;
  f text;
  rows_shapes text[] := ARRAY['index', 'bitmap'];
  value_text text := CASE WHEN pm_diff.tname(t) IN ('geometry', 'geography') THEN 'ST_AsEWKT(v)'
                          ELSE 'v::text' END;
  tag text := pm_diff.fbr_tag(t, class);
  predicates text[] := CASE tag
    WHEN 'geometry' THEN ARRAY['ST_Intersects', 'ST_Touches', 'ST_Crosses', 'ST_Overlaps', 'ST_Contains',
                               'ST_ContainsProperly', 'ST_Covers', 'ST_Within', 'ST_CoveredBy', 'ST_Equals',
                               'ST_OrderingEquals', 'ST_3DIntersects']
    WHEN 'geometry_nd' THEN ARRAY['ST_3DIntersects']
    WHEN 'geography' THEN ARRAY['ST_Intersects', 'ST_Covers', 'ST_CoveredBy']
    ELSE '{}'::text[] END;
  distance_predicates text[] := CASE tag
    WHEN 'geometry' THEN ARRAY['ST_DWithin(v, %s, 5)', 'ST_DFullyWithin(v, %s, 5)', 'ST_3DDWithin(v, %s, 5)',
                               'ST_3DDFullyWithin(v, %s, 5)']
    WHEN 'geometry_nd' THEN ARRAY['ST_3DDWithin(v, %s, 5)', 'ST_3DDFullyWithin(v, %s, 5)']
    WHEN 'geography' THEN ARRAY['ST_DWithin(v, %s, 300000)', 'ST_DWithin(v, %s, 300000, false)',
                                'ST_DWithin(%s, v, 1000)']
    ELSE '{}'::text[] END;
BEGIN
  FOR op IN SELECT * FROM pm_diff.fbr_operators(t, 's', class) LOOP
    FOR v IN SELECT unnest(pm_diff.fbr_query_edges(op.righttype))
             UNION ALL SELECT pm_diff.fbr_random_value(op.righttype) FROM generate_series(1, nrandom) LOOP
      PERFORM pm_diff.fbr_check(format('SELECT id || %L || coalesce(%s, %L) FROM %%1$s WHERE v %s %s',
                                       ':', value_text, 'NULL', op.oprname, pm_diff.lit(v, op.righttype)),
                                t, 'text', rows_shapes, false, class);
      IF pm_diff.tname(t) = 'point' THEN
        PERFORM pm_diff.fbr_check(format('SELECT v::text AS r FROM %%1$s WHERE v %s %s',
                                         op.oprname, pm_diff.lit(v, op.righttype)),
                                  t, 'text', ARRAY['indexonly']);
      END IF;
    END LOOP;
  END LOOP;
  FOR op IN SELECT * FROM pm_diff.fbr_operators(t, 'o', class) LOOP
    FOR v IN SELECT unnest(pm_diff.fbr_query_edges(op.righttype))
             UNION ALL SELECT pm_diff.fbr_random_value(op.righttype) FROM generate_series(1, nrandom) LOOP
      PERFORM pm_diff.fbr_check(format('SELECT (v %1$s %2$s)::text AS r FROM %%1$s ORDER BY v %1$s %2$s',
                                       op.oprname, pm_diff.lit(v, op.righttype)),
                                t, 'float8', ARRAY['index'], true, class);
      PERFORM pm_diff.fbr_check(format('SELECT (v %1$s %2$s)::text AS r FROM %%1$s ORDER BY v %1$s %2$s LIMIT 10',
                                       op.oprname, pm_diff.lit(v, op.righttype)),
                                t, 'float8', ARRAY['index'], true, class);
    END LOOP;
  END LOOP;
  FOREACH f IN ARRAY predicates LOOP
    FOR v IN SELECT unnest(pm_diff.fbr_query_edges(t))
             UNION ALL SELECT pm_diff.fbr_random_value(t) FROM generate_series(1, nrandom) LOOP
      PERFORM pm_diff.fbr_check(format('SELECT id::text FROM %%1$s WHERE %s(v, %s)', f, pm_diff.lit(v, t)),
                                t, 'text', rows_shapes, false, class);
      PERFORM pm_diff.fbr_check(format('SELECT id::text FROM %%1$s WHERE %s(%s, v)', f, pm_diff.lit(v, t)),
                                t, 'text', rows_shapes, false, class);
    END LOOP;
  END LOOP;
  FOREACH f IN ARRAY distance_predicates LOOP
    FOR v IN SELECT unnest(pm_diff.fbr_edges(t)) LOOP
      PERFORM pm_diff.fbr_check(format('SELECT id::text FROM %%1$s WHERE ' || f, pm_diff.lit(v, t)),
                                t, 'text', rows_shapes, false, class);
    END LOOP;
  END LOOP;
  -- an OR of predicates: a BitmapOr over the index, as over GiST
  IF tag IN ('geometry', 'geography') THEN
    FOR i IN 1 .. nrandom LOOP
      PERFORM pm_diff.fbr_check(format('SELECT id::text FROM %%1$s WHERE ST_Intersects(v, %s) OR ' ||
                                       distance_predicates[1],
                                       pm_diff.lit(pm_diff.fbr_random_value(t), t),
                                       pm_diff.lit(pm_diff.fbr_random_value(t), t)),
                                t, 'text', ARRAY['bitmap'], false, class);
    END LOOP;
  END IF;
  PERFORM pm_diff.fbr_check('SELECT id::text FROM %1$s WHERE v IS NULL', t, 'text', rows_shapes, false, class);
  PERFORM pm_diff.fbr_check('SELECT id::text FROM %1$s WHERE v IS NOT NULL', t, 'text', rows_shapes, false,
                            class);
END $$;
