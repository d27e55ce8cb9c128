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
--
-- Geometry variants (pm_diff.fbr_variants) run the same queries on values of SRIDs 4326 and
-- 3857 (every kind of value: points, lines, polygons, multi*, collections, EMPTY, Z, M, ZM) in
-- untyped and typed columns (geometry(Geometry, 3857), geometry(Point, 4326), geometry(Point)
-- of any SRID) and through an expression index (ST_Centroid(v)), and on n-D values clustered in
-- X Y Z whose M values lie far from each other and from the probes'.  Answers compared are
-- counted per class of tables (pm_diff.class_counts: the tag).
--
-- Each class and variant has a tiered twin, pm_diff.fbt_<tag>: the same rows inserted after its
-- index was made WITH (tiered = on), read while they wait in its operation log (090 pauses the
-- replay workers), by the same queries.

-- Boundary values of a type that both fbrtree_pm and GiST can hold, as literals.
-- PostGIS's geometry type, NULL without PostGIS: the functions of its variants name it so that
-- they can be made (and are never called) on a server without it.
CREATE FUNCTION pm_diff.geometry() RETURNS regtype
LANGUAGE sql STABLE AS $$ SELECT to_regtype('geometry') $$;

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
      '"POINT Z (50 50 -3.4e38)","POINT Z EMPTY","MULTIPOLYGON EMPTY",'
      '"MULTILINESTRING((0 0,1 1),(5 5,6 6))","MULTIPOLYGON(((0 0,2 0,2 2,0 2,0 0)),((5 5,7 5,7 7,5 7,5 5)))",'
      '"GEOMETRYCOLLECTION(POINT(1 1),LINESTRING(2 2,3 3))","MULTIPOINT ZM ((0 0 1 0),(4 4 1 10))",'
      '"MULTIPOINT M ((1 1 -1000000),(5 5 1000000))"}'::text[]
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
             WHEN random() < 0.3 THEN format('POINT Z (%s %s %s)', x, y, w * 10)
             WHEN random() < 0.3 THEN format('POINT ZM (%s %s %s %s)', x, y, w * 10, h)
             WHEN random() < 0.3 THEN format('LINESTRING(%s %s,%s %s)', x, y, x + w + 0.25, y + h)
             WHEN random() < 0.3 THEN format('MULTIPOINT((%s %s),(%s %s))', x, y, x + w, y + h)
             WHEN random() < 0.2 THEN format('GEOMETRYCOLLECTION(POINT(%s %s),LINESTRING(%s %s,%s %s))',
                                             x, y, x, y + 0.5, x + w + 0.25, y + h)
             ELSE format('POLYGON((%1$s %2$s,%3$s %2$s,%3$s %4$s,%1$s %4$s,%1$s %2$s))', x, y,
                         x + w + 0.25, y + h + 0.25) END;
  END CASE;
END $$;

-- The geometry variants: tag (of their tables), the column's type, the SRID of every value
-- (and of the probes), the kind of values (fbr_variant_edges), the operator class (NULL: the
-- default) and the expression the indexes and the queries are on.
CREATE FUNCTION pm_diff.fbr_variants()
RETURNS TABLE (tag text, coltype text, srid int, kind text, class text, expr text)
LANGUAGE sql IMMUTABLE AS $$
  VALUES ('geometry_4326', 'geometry', 4326, 'any', NULL, 'v'),
         ('geometry_3857_typed', 'geometry(Geometry, 3857)', 3857, 'xy', NULL, 'v'),
         ('geometry_4326_centroid', 'geometry', 4326, 'any', NULL, 'ST_Centroid(v)'),
         ('geometry_point_4326', 'geometry(Point, 4326)', 4326, 'points', NULL, 'v'),
         ('geometry_point_any', 'geometry(Point)', 3857, 'points', NULL, 'v'),
         ('geometry_nd_4326', 'geometry', 4326, 'nd_m', 'geometry_ops_nd', 'v')
$$;

-- Text with the SRID srid (0: as it is).
CREATE FUNCTION pm_diff.fbr_srid(v text, srid int) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN srid = 0 THEN v ELSE format('SRID=%s;%s', srid, v) END
$$;

-- Boundary values of a kind of geometry variant: 'any' every geometry edge, 'xy' the 2-D ones,
-- 'points' the 2-D points and POINT EMPTY, 'nd_m' the edges and values that differ from each
-- other in M only, or lie at M's extremes.
CREATE FUNCTION pm_diff.fbr_variant_edges(kind text) RETURNS text[]
LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE kind
    WHEN 'xy' THEN ARRAY(SELECT e FROM unnest(pm_diff.fbr_edges(pm_diff.geometry())) e WHERE e !~ '^[A-Z]+ (Z|M|ZM) ')
    WHEN 'points' THEN ARRAY(SELECT e FROM unnest(pm_diff.fbr_edges(pm_diff.geometry())) e
                              WHERE e ~ '^POINT( EMPTY$|\()')
    WHEN 'nd_m' THEN pm_diff.fbr_edges(pm_diff.geometry()) ||
      '{"POINT ZM (1 1 1 -1000000)","POINT ZM (1 1 1 1000000)","POINT M (1 1 3e38)","POINT ZM (2 2 2 -3e38)",'
      '"LINESTRING M (0 0 100,2 2 -100)","POINT ZM (2 2 2 0)","POINT M (2 2 7)"}'::text[]
    ELSE pm_diff.fbr_edges(pm_diff.geometry())
  END
$$;

-- A random value of a kind of geometry variant: 'points' 2-D points on the grid of
-- fbr_random_value; 'nd_m' values on a 4x4x4 grid (so that X Y Z often coincide) with M values
-- far apart; 'any' fbr_random_value's, 'xy' its 2-D ones.  No line has both Z and M and no
-- polygon has Z: PostGIS 3.3's <<->> crashes the server on two such lines (and on an M line and
-- POINT M EMPTY, which no list holds), and its 3-D distance to a polygon with Z is not the same
-- from one call to the next.
CREATE FUNCTION pm_diff.fbr_variant_value(kind text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  x int := floor(random() * 4);
  y int := floor(random() * 4);
  z int := floor(random() * 4);
  m text := (ARRAY['-1000000', '-7', '0', '7', '1000000', '-3e38', '3e38'])[1 + floor(random() * 7)];
  g text;
BEGIN
  CASE kind
    WHEN 'points' THEN
      RETURN format('POINT(%s %s)', floor(random() * 400) / 4, floor(random() * 400) / 4);
    WHEN 'nd_m' THEN
      RETURN CASE WHEN random() < 0.5 THEN format('POINT ZM (%s %s %s %s)', x, y, z, m)
             WHEN random() < 0.4 THEN format('POINT M (%s %s %s)', x, y, m)
             WHEN random() < 0.4 THEN format('LINESTRING M (%s %s %s,%s %s %s)', x, y, m, x + 1, y + 1, m)
             ELSE format('POINT Z (%s %s %s)', x, y, z) END;
    WHEN 'xy' THEN
      LOOP
        g := pm_diff.fbr_random_value(pm_diff.geometry());
        EXIT WHEN g !~ '^[A-Z]+ (Z|M|ZM) ';
      END LOOP;
      RETURN g;
    ELSE
      RETURN pm_diff.fbr_random_value(pm_diff.geometry());
  END CASE;
END $$;

-- The tag of an operator class's tables: the type's name, and for a class that is not the
-- type's default (class names one) the rest of its name after "_ops_" (geometry_ops_nd:
-- geometry_nd).  GiST's twin class is "gist_" and the class's name.
CREATE FUNCTION pm_diff.fbr_tag(t regtype, class text) RETURNS text
LANGUAGE sql STABLE AS $$
  SELECT pm_diff.tname(t) || coalesce('_' || substring(class FROM '_ops_(.*)$'), '')
$$;

-- The tiered twin of pm_diff.fbr_<tag>: its rows, inserted after its index (indexed as the
-- column definition gives) was made.
CREATE FUNCTION pm_diff.fbr_tiered_twin(tag text, column_def text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format('CREATE TABLE pm_diff.fbt_%s AS SELECT * FROM pm_diff.gist_%s WITH NO DATA', tag, tag);
  EXECUTE format('CREATE INDEX fbt_%s_v ON pm_diff.fbt_%s USING fbrtree_pm (%s) WITH (tiered = on)',
                 tag, tag, column_def);
  EXECUTE format('INSERT INTO pm_diff.fbt_%s SELECT * FROM pm_diff.gist_%s', tag, tag);
END $$;

-- The tables of one operator class: the same rows in fbr_<tag> (fbrtree_pm), its tiered twin
-- and gist_<tag> (GiST), nrandom random rows besides the edges, NULLs and a run of 80
-- duplicates (longer than a node).
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
  PERFORM pm_diff.fbr_tiered_twin(n, format('v %s', coalesce(class, '')));
END $$;

-- The tables of a geometry variant, as fbr_setup_type makes a class's, indexed on its
-- expression.
CREATE FUNCTION pm_diff.fbr_setup_variant(variant text, nrandom int) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  var record;
BEGIN
  SELECT * INTO STRICT var FROM pm_diff.fbr_variants() WHERE tag = variant;
  PERFORM pm_diff.oracle_table(format('pm_diff.gist_%s', var.tag), pm_diff.geometry(), 'gist',
                               ARRAY(SELECT pm_diff.fbr_srid(e, var.srid)
                                       FROM unnest(pm_diff.fbr_variant_edges(var.kind)) e),
                               NULL, 80, nrandom, var.coltype,
                               format('pm_diff.fbr_srid(pm_diff.fbr_variant_value(%L), %s)', var.kind, var.srid));
  EXECUTE format('DROP INDEX pm_diff.gist_%s_v_idx', var.tag);
  EXECUTE format('CREATE INDEX ON pm_diff.gist_%s USING gist ((%s) %s)', var.tag, var.expr,
                 coalesce('gist_' || var.class, ''));
  EXECUTE format('CREATE TABLE pm_diff.fbr_%s AS SELECT * FROM pm_diff.gist_%s', var.tag, var.tag);
  EXECUTE format('CREATE INDEX fbr_%s_v ON pm_diff.fbr_%s USING fbrtree_pm ((%s) %s)', var.tag, var.tag,
                 var.expr, coalesce(var.class, ''));
  PERFORM pm_diff.fbr_tiered_twin(var.tag, format('(%s) %s', var.expr, coalesce(var.class, '')));
END $$;

-- The tables the concurrent pass writes for type t.
CREATE FUNCTION pm_diff.fbr_tables(t regtype) RETURNS text[]
LANGUAGE sql STABLE AS $$
  SELECT ARRAY[format('pm_diff.fbr_%s', pm_diff.tname(t)), format('pm_diff.fbt_%s', pm_diff.tname(t)),
               format('pm_diff.gist_%s', pm_diff.tname(t))]
$$;

-- Check q on the tables tagged tag (and the tiered twin where there is one).
CREATE FUNCTION pm_diff.fbr_check(q text, tag text, answer_type regtype, shapes text[],
                                  ordered boolean DEFAULT false)
RETURNS void
LANGUAGE sql AS $$
  SELECT pm_diff.check_tables(q, answer_type,
                              ARRAY(SELECT format('pm_diff.%s_%s', p, tag) FROM unnest('{fbr,fbt}'::text[]) p
                                     WHERE to_regclass(format('pm_diff.%s_%s', p, tag)) IS NOT NULL ORDER BY p),
                              ARRAY(SELECT format('%s_%s_v', p, tag) FROM unnest('{fbr,fbt}'::text[]) p
                                     WHERE to_regclass(format('pm_diff.%s_%s', p, tag)) IS NOT NULL ORDER BY p),
                              format('pm_diff.gist_%s', tag), shapes, ordered)
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

-- A random value of type t, or of a geometry variant's kind.
CREATE FUNCTION pm_diff.fbr_random(t regtype, kind text) RETURNS text
LANGUAGE sql AS $$
  SELECT CASE WHEN kind IS NULL THEN pm_diff.fbr_random_value(t) ELSE pm_diff.fbr_variant_value(kind) END
$$;

-- The boundary query values of type t, or of a geometry variant's kind: one of each kind of
-- geometry (for a variant of points too), and for 'nd_m' the values that differ in M.
CREATE FUNCTION pm_diff.fbr_probe_edges(t regtype, kind text) RETURNS text[]
LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN kind IS NULL THEN pm_diff.fbr_query_edges(t)
              ELSE '{"POINT EMPTY","POINT(1 1)","POINT(50 50)","LINESTRING(0 0,10 0)",'
                   '"POLYGON((0 0,10 0,10 10,0 10,0 0))","MULTIPOINT((1 1),(5 5))",'
                   '"MULTILINESTRING((0 0,1 1),(5 5,6 6))","MULTIPOLYGON(((0 0,2 0,2 2,0 2,0 0)),((5 5,7 5,7 7,5 7,5 5)))",'
                   '"GEOMETRYCOLLECTION(POINT(1 1),LINESTRING(2 2,3 3))","POINT Z (1 1 1)","POINT ZM (1 2 3 4)",'
                   '"POINT M (1 1 5)","POINT(3.4e38 3.4e38)"}'::text[] ||
                   CASE WHEN kind = 'nd_m' THEN (pm_diff.fbr_variant_edges(kind))[cardinality(pm_diff.fbr_edges(pm_diff.geometry())) + 1:]
                        ELSE '{}' END END
$$;

-- The query values of type t: its boundary values and nrandom random ones, with the SRID srid.
CREATE FUNCTION pm_diff.fbr_probes(t regtype, nrandom int, srid int, kind text) RETURNS SETOF text
LANGUAGE sql AS $$
  SELECT pm_diff.fbr_srid(e, srid) FROM unnest(pm_diff.fbr_probe_edges(t, kind)) e
  UNION ALL
  SELECT pm_diff.fbr_srid(pm_diff.fbr_random(t, kind), srid) FROM generate_series(1, nrandom)
$$;

-- Every query of an operator class (class NULL: the type's default) on the tables tagged tag,
-- on the expression expr of their column v.  Query values are the boundary and random values of
-- the operator's right-hand type, or of a geometry variant's kind (kind not NULL), with the SRID
-- srid (and for the search operators two of SRID 0 besides: they compare no SRIDs).  The ST_*
-- predicates are those the class serves: on geometry_ops_2d all of them, on geometry_ops_nd the
-- 3-D ones, on geography the four PostGIS indexes there; the distance predicates at large
-- distances too, and at FLT_MAX and more, where PostGIS's distances accept values farther apart
-- than any box admits (ST_3DDWithin EMPTY ones too) and no index condition may be derived
-- ("anyplan").  Index-only scans of points: of the point type, and of a geometry variant of
-- points of one declared SRID.  The variants leave out |=|, which errs for anything but lines
-- with M, with a message that depends on the row met first.
CREATE FUNCTION pm_diff.fbr_run(t regtype, nrandom int, class text, tag text, expr text DEFAULT 'v',
                                srid int DEFAULT 0, kind text DEFAULT NULL) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  op record;
  v text;
  f text;
  d text[];
  rows_shapes text[] := ARRAY['index', 'bitmap'];
  value_text text := CASE WHEN pm_diff.tname(t) IN ('geometry', 'geography') THEN 'ST_AsEWKT(v)'
                          ELSE 'v::text' END;
  base text := pm_diff.fbr_tag(t, class);
  index_only boolean := pm_diff.tname(t) = 'point' OR
    EXISTS (SELECT FROM pm_diff.fbr_variants() var WHERE var.tag = fbr_run.tag AND var.coltype ~ '\(Point, [1-9]');
  other_srid text[] := CASE WHEN srid <> 0 THEN ARRAY['POINT(1 1)', 'POLYGON((0 0,10 0,10 10,0 10,0 0))']
                            ELSE '{}' END;
  predicates text[] := CASE base
    WHEN 'geometry' THEN ARRAY['ST_Intersects', 'ST_Touches', 'ST_Crosses', 'ST_Overlaps', 'ST_Contains',
                               'ST_ContainsProperly', 'ST_Covers', 'ST_Within', 'ST_CoveredBy', 'ST_Equals',
                               'ST_OrderingEquals', 'ST_3DIntersects']
    WHEN 'geometry_nd' THEN ARRAY['ST_3DIntersects']
    WHEN 'geography' THEN ARRAY['ST_Intersects', 'ST_Covers', 'ST_CoveredBy']
    ELSE '{}'::text[] END;
  -- each a format of (expression, query value), and the shapes it is checked in
  distance_predicates text[] := CASE base
    WHEN 'geometry' THEN ARRAY[['ST_DWithin(%s, %s, 5)', 'index,bitmap'], ['ST_DFullyWithin(%s, %s, 5)', 'index,bitmap'],
                               ['ST_3DDWithin(%s, %s, 5)', 'index,bitmap'], ['ST_3DDFullyWithin(%s, %s, 5)', 'index,bitmap'],
                               ['ST_DWithin(%s, %s, 1e30)', 'index'], ['ST_3DDWithin(%s, %s, 1e30)', 'index'],
                               ['ST_DWithin(%s, %s, 3.4028234663852886e38)', 'anyplan'],
                               ['ST_3DDWithin(%s, %s, 1e39)', 'anyplan'], ['ST_DFullyWithin(%s, %s, ''Infinity'')', 'anyplan']]
    WHEN 'geometry_nd' THEN ARRAY[['ST_3DDWithin(%s, %s, 5)', 'index,bitmap'], ['ST_3DDFullyWithin(%s, %s, 5)', 'index,bitmap'],
                                  ['ST_3DDWithin(%s, %s, 1e30)', 'index'], ['ST_3DDWithin(%s, %s, 1e39)', 'anyplan'],
                                  ['ST_3DDFullyWithin(%s, %s, ''Infinity'')', 'anyplan']]
    WHEN 'geography' THEN ARRAY[['ST_DWithin(%s, %s, 300000)', 'index,bitmap'],
                                ['ST_DWithin(%s, %s, 300000, false)', 'index,bitmap'],
                                ['ST_DWithin(%2$s, %1$s, 1000)', 'index,bitmap'], ['ST_DWithin(%s, %s, 1e39)', 'anyplan']]
    ELSE '{}'::text[] END;
BEGIN
  PERFORM set_config('pm_diff.class', tag, false);
  FOR op IN SELECT * FROM pm_diff.fbr_operators(t, 's', class) LOOP
    FOR v IN SELECT pm_diff.fbr_probes(op.righttype, nrandom, srid, kind) UNION ALL SELECT unnest(other_srid) LOOP
      PERFORM pm_diff.fbr_check(format('SELECT id || %L || coalesce(%s, %L) FROM %%1$s WHERE %s %s %s',
                                       ':', value_text, 'NULL', expr, op.oprname, pm_diff.lit(v, op.righttype)),
                                tag, 'text', rows_shapes);
      IF index_only THEN
        PERFORM pm_diff.fbr_check(format('SELECT %s AS r FROM %%1$s WHERE v %s %s',
                                         value_text, op.oprname, pm_diff.lit(v, op.righttype)),
                                  tag, 'text', ARRAY['indexonly']);
      END IF;
    END LOOP;
  END LOOP;
  FOR op IN SELECT * FROM pm_diff.fbr_operators(t, 'o', class) o WHERE kind IS NULL OR o.oprname <> '|=|' LOOP
    FOR v IN SELECT pm_diff.fbr_probes(op.righttype, nrandom, srid, kind) LOOP
      PERFORM pm_diff.fbr_check(format('SELECT (%1$s %2$s %3$s)::text AS r FROM %%1$s ORDER BY %1$s %2$s %3$s',
                                       expr, op.oprname, pm_diff.lit(v, op.righttype)),
                                tag, 'float8', ARRAY['index'], true);
      PERFORM pm_diff.fbr_check(format('SELECT (%1$s %2$s %3$s)::text AS r FROM %%1$s ORDER BY %1$s %2$s %3$s LIMIT 10',
                                       expr, op.oprname, pm_diff.lit(v, op.righttype)),
                                tag, 'float8', ARRAY['index'], true);
    END LOOP;
  END LOOP;
  FOREACH f IN ARRAY predicates LOOP
    FOR v IN SELECT pm_diff.fbr_probes(t, nrandom, srid, kind) LOOP
      PERFORM pm_diff.fbr_check(format('SELECT id::text FROM %%1$s WHERE %s(%s, %s)', f, expr, pm_diff.lit(v, t)),
                                tag, 'text', rows_shapes);
      PERFORM pm_diff.fbr_check(format('SELECT id::text FROM %%1$s WHERE %s(%s, %s)', f, pm_diff.lit(v, t), expr),
                                tag, 'text', rows_shapes);
    END LOOP;
  END LOOP;
  IF cardinality(distance_predicates) > 0 THEN
    FOREACH d SLICE 1 IN ARRAY distance_predicates LOOP
      FOR v IN SELECT pm_diff.fbr_srid(e, srid) FROM unnest(pm_diff.fbr_probe_edges(t, kind)) e LOOP
        PERFORM pm_diff.fbr_check(format('SELECT id::text FROM %%1$s WHERE %s', format(d[1], expr, pm_diff.lit(v, t))),
                                  tag, 'text', string_to_array(d[2], ','));
      END LOOP;
    END LOOP;
  END IF;
  -- an OR of predicates: a BitmapOr over the index, as over GiST
  IF base IN ('geometry', 'geography') THEN
    FOR i IN 1 .. nrandom LOOP
      PERFORM pm_diff.fbr_check(format('SELECT id::text FROM %%1$s WHERE ST_Intersects(%s, %s) OR %s', expr,
                                       pm_diff.lit(pm_diff.fbr_srid(pm_diff.fbr_random(t, kind), srid), t),
                                       format(distance_predicates[1][1], expr,
                                              pm_diff.lit(pm_diff.fbr_srid(pm_diff.fbr_random(t, kind), srid), t))),
                                tag, 'text', ARRAY['bitmap']);
    END LOOP;
  END IF;
  PERFORM pm_diff.fbr_check(format('SELECT id::text FROM %%1$s WHERE %s IS NULL', expr), tag, 'text', rows_shapes);
  PERFORM pm_diff.fbr_check(format('SELECT id::text FROM %%1$s WHERE %s IS NOT NULL', expr), tag, 'text',
                            rows_shapes);
  PERFORM set_config('pm_diff.class', '', false);
END $$;

-- Every query of one operator class (class NULL: the type's default), on its own tables.
CREATE FUNCTION pm_diff.fbr_run_type(t regtype, nrandom int, class text DEFAULT NULL) RETURNS void
LANGUAGE sql AS $$
  SELECT pm_diff.fbr_run(t, nrandom, class, pm_diff.fbr_tag(t, class))
$$;

-- Every query of a geometry variant, on its tables.
CREATE FUNCTION pm_diff.fbr_run_variant(variant text, nrandom int) RETURNS void
LANGUAGE sql AS $$
  SELECT pm_diff.fbr_run(pm_diff.geometry(), nrandom, class, tag, expr, srid, kind)
    FROM pm_diff.fbr_variants() WHERE tag = variant
$$;
