-- fbrtree_pm on PostGIS geography (geography_ops) and on n-D geometry (geometry_ops_nd) returns
-- GiST's rows: every operator of PostGIS's gist_geography_ops and gist_geometry_ops_nd, the
-- ST_* predicates PostGIS indexes on them (as index conditions, in EXPLAIN), KNN with rechecked
-- distances, points across the antimeridian and at the poles, 2-D, 3-D, 4-D and XYM values in
-- one n-D index, EMPTY and NULL, inserts after the build, deletes and VACUUM.
-- Identical tables, one indexed with fbrtree_pm and one with GiST; the n-D answers are compared
-- with a sequential scan's, which GiST's n-D class does not always give on mixed dimensions.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS postgis;
CREATE EXTENSION IF NOT EXISTS pm_index;
CREATE EXTENSION IF NOT EXISTS pm_index_postgis;
DROP SCHEMA IF EXISTS fbr_nd CASCADE;
CREATE SCHEMA fbr_nd;
SET search_path = fbr_nd, public;

SELECT * FROM no_plan();
SELECT setseed(0.5772);

CREATE FUNCTION nd_plan(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE r record; out text := '';
BEGIN
  FOR r IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP out := out || r."QUERY PLAN" || E'\n'; END LOOP;
  RETURN out;
END $$;

-- ---- geography: clustered points around "cities", lines and polygons, the antimeridian, poles
CREATE TABLE geo_f (id int, g geography);
INSERT INTO geo_f
SELECT i,
       CASE WHEN i % 97 = 0 THEN NULL
            WHEN i % 89 = 0 THEN 'POINT EMPTY'::geography
            WHEN i % 11 = 0 THEN ST_MakeLine(ST_MakePoint(lon, lat), ST_MakePoint(lon + 0.5, lat - 0.3))::geography
            WHEN i % 13 = 0 THEN ST_Buffer(ST_MakePoint(lon, lat)::geography, 2000)
            ELSE ST_MakePoint(lon, lat)::geography END
  FROM (SELECT i, greatest(-180, least(180, c.lon + (random() - 0.5) * 2)) AS lon,
               greatest(-90, least(90, c.lat + (random() - 0.5) * 2)) AS lat
          FROM generate_series(1, 12000) i,
               LATERAL (SELECT (ARRAY[2.35, -74.0, 139.7, 179.8, -179.9, 0, 151.2, -58.4, 37.6, 0])[1 + i % 10] AS lon,
                               (ARRAY[48.85, 40.7, 35.7, -16.5, 65.0, 89.5, -33.9, -34.6, 55.8, -89.5])[1 + i % 10] AS lat) c) s;
INSERT INTO geo_f VALUES (20001, 'POINT(180 0)'), (20002, 'POINT(-180 0)'), (20003, 'POINT(0 90)'),
                         (20004, 'POINT(0 -90)'), (20005, 'LINESTRING(179 10, -179 10)');
CREATE TABLE geo_g AS SELECT * FROM geo_f;
CREATE INDEX geo_fi ON geo_f USING fbrtree_pm (g);
CREATE INDEX geo_gi ON geo_g USING gist (g);
-- inserts into the built indexes, then deletes and VACUUM
INSERT INTO geo_f SELECT id + 30000, ST_Project(g, 1000, radians(45)) FROM geo_f
 WHERE id % 5 = 0 AND ST_GeometryType(g::geometry) = 'ST_Point' AND NOT ST_IsEmpty(g::geometry);
INSERT INTO geo_g SELECT id + 30000, ST_Project(g, 1000, radians(45)) FROM geo_g
 WHERE id % 5 = 0 AND ST_GeometryType(g::geometry) = 'ST_Point' AND NOT ST_IsEmpty(g::geometry);
DELETE FROM geo_f WHERE id % 7 = 0;
DELETE FROM geo_g WHERE id % 7 = 0;
VACUUM ANALYZE geo_f;
VACUUM ANALYZE geo_g;
SET enable_seqscan = off;

CREATE FUNCTION geo_tests() RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
  pred text;
BEGIN
  FOREACH pred IN ARRAY ARRAY[
      'g && ST_MakeEnvelope(2, 48, 3, 49, 4326)::geography',
      'g && ''POINT(180 0)''::geography',
      'ST_Intersects(g, ST_MakeEnvelope(139, 35, 140.5, 36, 4326)::geography)',
      'ST_Intersects(ST_Buffer(''POINT(-74 40.7)''::geography, 30000), g)',
      'ST_DWithin(g, ''POINT(2.35 48.85)''::geography, 25000)',
      'ST_DWithin(g, ''POINT(2.35 48.85)''::geography, 25000, false)',
      'ST_DWithin(''POINT(179.95 -16.5)''::geography, g, 60000)',
      'ST_DWithin(g, ''POINT(0 90)''::geography, 100000)',
      'ST_Covers(ST_Buffer(''POINT(37.6 55.8)''::geography, 40000), g)',
      'ST_CoveredBy(g, ST_Buffer(''POINT(151.2 -33.9)''::geography, 40000))',
      'g && ''POINT EMPTY''::geography'] LOOP
    RETURN NEXT results_eq(format('SELECT id FROM geo_f WHERE %s ORDER BY id', pred),
                           format('SELECT id FROM geo_g WHERE %s ORDER BY id', pred),
                           format('geography: %s', pred));
    IF pred NOT LIKE '%EMPTY%' THEN
      RETURN NEXT matches(nd_plan(format('SELECT id FROM geo_f WHERE %s', pred)), 'geo_fi',
                          format('geography: %s uses fbrtree_pm', pred));
    END IF;
  END LOOP;
END $$;
SELECT * FROM geo_tests();
SELECT matches(nd_plan('SELECT id FROM geo_f WHERE ST_DWithin(g, ''POINT(2.35 48.85)''::geography, 25000)'),
               'Index Cond: \(g && _st_expand', 'ST_DWithin on geography: && with _ST_Expand, as GiST gets');
SELECT results_eq('SELECT g <-> ''POINT(2.3 48.9)''::geography FROM geo_f ORDER BY g <-> ''POINT(2.3 48.9)''::geography LIMIT 50',
                  'SELECT g <-> ''POINT(2.3 48.9)''::geography FROM geo_g ORDER BY g <-> ''POINT(2.3 48.9)''::geography LIMIT 50',
                  'geography KNN: GiST''s distances');
SELECT results_eq('SELECT g <-> ''POINT(-179.9 65)''::geography FROM geo_f ORDER BY g <-> ''POINT(-179.9 65)''::geography LIMIT 200',
                  'SELECT g <-> ''POINT(-179.9 65)''::geography FROM geo_g ORDER BY g <-> ''POINT(-179.9 65)''::geography LIMIT 200',
                  'geography KNN across the antimeridian');
SELECT matches(nd_plan('SELECT id FROM geo_f ORDER BY g <-> ''POINT(2.3 48.9)''::geography LIMIT 5'),
               'Index Scan using geo_fi', 'geography KNN is an fbrtree_pm scan');
SELECT is((SELECT count(*) FROM (SELECT id FROM geo_f ORDER BY g <-> 'POINT(0 0)'::geography) s),
          (SELECT count(*) FROM geo_f), 'geography KNN returns every row, EMPTY and NULL included');
SELECT lives_ok('SELECT fbrtree_pm_check(''geo_fi'', true)', 'fbrtree_pm_check of geographies');
-- count(*) may scan an index only, which gives back no geography: the rows are counted
SELECT is((SELECT count(*) FROM geo_f), (SELECT count(*) FROM geo_g), 'count(*) over the index');
SELECT is((SELECT count(*) FROM geo_f WHERE g && ST_MakeEnvelope(-10, 40, 10, 60, 4326)::geography),
          (SELECT count(*) FROM geo_g WHERE g && ST_MakeEnvelope(-10, 40, 10, 60, 4326)::geography),
          'count(*) of a window');

-- ---- n-D geometry: 2-D, 3-D, 4-D and XYM values in one index
CREATE TABLE nd_f (id int, geom geometry);
INSERT INTO nd_f
SELECT i,
       CASE WHEN i % 101 = 0 THEN NULL
            WHEN i % 83 = 0 THEN 'POINT EMPTY'::geometry
            WHEN i % 5 = 0 THEN ST_MakePoint(x, y)
            WHEN i % 5 = 1 THEN ST_MakePoint(x, y, z, m)
            WHEN i % 5 = 2 THEN ST_MakePointM(x, y, m)
            WHEN i % 7 = 3 THEN ST_MakeLine(ST_MakePoint(x, y, z), ST_MakePoint(x + 2, y + 1, z + 3))
            ELSE ST_MakePoint(x, y, z) END
  FROM (SELECT i, floor(random() * 400) / 4 AS x, floor(random() * 400) / 4 AS y,
               floor(random() * 400) / 4 AS z, floor(random() * 100) AS m
          FROM generate_series(1, 12000) i) s;
CREATE TABLE nd_g AS SELECT * FROM nd_f;
CREATE INDEX nd_fi ON nd_f USING fbrtree_pm (geom geometry_ops_nd);
CREATE INDEX nd_gi ON nd_g USING gist (geom gist_geometry_ops_nd);
INSERT INTO nd_f SELECT id + 30000, ST_Translate(geom, 0.25, 0.25, 0.25) FROM nd_f WHERE id % 3 = 0;
INSERT INTO nd_g SELECT id + 30000, ST_Translate(geom, 0.25, 0.25, 0.25) FROM nd_g WHERE id % 3 = 0;
DELETE FROM nd_f WHERE id % 11 = 0;
DELETE FROM nd_g WHERE id % 11 = 0;
VACUUM ANALYZE nd_f;
VACUUM ANALYZE nd_g;

-- The ids a query gives by a sequential scan.
CREATE FUNCTION by_seq(q text) RETURNS SETOF int LANGUAGE plpgsql
SET enable_seqscan = on SET enable_indexscan = off SET enable_bitmapscan = off AS $$
BEGIN
  RETURN QUERY EXECUTE q;
END $$;

CREATE FUNCTION nd_tests() RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
  op text;
  q text;
  pred text;
BEGIN
  FOREACH op IN ARRAY ARRAY['&&&', '~~', '@@', '~~='] LOOP
    FOREACH q IN ARRAY ARRAY['ST_3DMakeBox(ST_MakePoint(10, 10, 10), ST_MakePoint(30, 30, 30))::geometry',
                             'ST_MakeEnvelope(40, 40, 60, 60)', 'ST_MakePoint(50, 50, 50)',
                             'ST_MakePoint(25, 25, 25, 50)', 'ST_MakePointM(20, 20, 40)',
                             'ST_MakeLine(ST_MakePoint(0, 0, 0), ST_MakePoint(100, 100, 100))',
                             '''POINT EMPTY''::geometry'] LOOP
      RETURN NEXT results_eq(format('SELECT id FROM nd_f WHERE geom %s %s ORDER BY id', op, q),
                             format('SELECT * FROM by_seq(%L)',
                                    format('SELECT id FROM nd_g WHERE geom %s %s ORDER BY id', op, q)),
                             format('n-D: geom %s %s', op, q));
    END LOOP;
  END LOOP;
  RETURN NEXT results_eq('SELECT id FROM nd_f WHERE geom ~~= (SELECT geom FROM nd_f WHERE id = 1) ORDER BY id',
                         'SELECT * FROM by_seq(''SELECT id FROM nd_g WHERE geom ~~= (SELECT geom FROM nd_g WHERE id = 1) ORDER BY id'')',
                         'n-D: ~~= a stored value');
  FOREACH pred IN ARRAY ARRAY[
      'ST_3DIntersects(geom, ST_MakeLine(ST_MakePoint(0, 0, 0), ST_MakePoint(100, 100, 100)))',
      'ST_3DDWithin(geom, ST_MakePoint(50, 50, 50), 5)',
      'ST_3DDFullyWithin(geom, ST_MakePoint(50, 50, 50), 8)'] LOOP
    -- GiST's n-D class loses rows here when 2-D, 3-D and XYM values share its pages: a
    -- sequential scan is the oracle
    RETURN NEXT results_eq(format('SELECT id FROM nd_f WHERE %s ORDER BY id', pred),
                           format('SELECT * FROM by_seq(%L)', format('SELECT id FROM nd_g WHERE %s ORDER BY id', pred)),
                           format('n-D: %s', pred));
    RETURN NEXT matches(nd_plan(format('SELECT id FROM nd_g WHERE %s', pred)), 'nd_gi',
                        format('n-D: %s uses GiST''s index', pred));
    RETURN NEXT matches(nd_plan(format('SELECT id FROM nd_f WHERE %s', pred)), 'nd_fi',
                        format('n-D: %s uses fbrtree_pm', pred));
  END LOOP;
END $$;
SELECT * FROM nd_tests();
-- The 2-D predicates get no condition on an n-D index, as PostGIS gives GiST's n-D class none:
-- a point meets a point of other Z in 2-D, which an n-D box condition would lose.  fbrtree_pm
-- answers as a sequential scan.
CREATE FUNCTION nd_2d_tests() RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
  pred text;
BEGIN
  FOREACH pred IN ARRAY ARRAY[
      'ST_Intersects(geom, (SELECT ST_Force3D(geom, 999) FROM nd_f WHERE id = 4))',
      'ST_DWithin(geom, ST_MakePoint(70, 30, 999), 3)'] LOOP
    RETURN NEXT results_eq(format('SELECT id FROM nd_f WHERE %s ORDER BY id', pred),
                           format('SELECT * FROM by_seq(%L)', format('SELECT id FROM nd_g WHERE %s ORDER BY id', pred)),
                           format('n-D index, %s: a sequential scan''s rows', pred));
    RETURN NEXT doesnt_match(nd_plan(format('SELECT id FROM nd_f WHERE %s', pred)), 'Index Cond',
                             format('n-D index, %s: no n-D condition', pred));
  END LOOP;
END $$;
SELECT * FROM nd_2d_tests();
SELECT matches(nd_plan('SELECT id FROM nd_f WHERE ST_3DDWithin(geom, ST_MakePoint(50, 50, 50), 5)'),
               'Index Cond: \(geom &&& st_expand', 'ST_3DDWithin: &&& with ST_Expand, as GiST gets');
-- EMPTY is at distance 0 from everything (PostGIS): a sequential scan's order puts every EMPTY
-- first; GiST's n-D class returns some of them later (its node boxes leave out their entries)
CREATE FUNCTION nd_knn_by_seq() RETURNS SETOF float8 LANGUAGE plpgsql
SET enable_seqscan = on SET enable_indexscan = off SET enable_bitmapscan = off AS $$
BEGIN
  RETURN QUERY SELECT geom <<->> ST_MakePoint(50, 50, 50) FROM nd_g ORDER BY geom <<->> ST_MakePoint(50, 50, 50) LIMIT 400;
END $$;
SELECT results_eq('SELECT geom <<->> ST_MakePoint(50, 50, 50) FROM nd_f ORDER BY geom <<->> ST_MakePoint(50, 50, 50) LIMIT 400',
                  'SELECT * FROM nd_knn_by_seq()', 'n-D KNN <<->>: a sequential scan''s distances');
SELECT matches(nd_plan('SELECT id FROM nd_f ORDER BY geom <<->> ST_MakePoint(50, 50, 50) LIMIT 5'),
               'Index Scan using nd_fi', 'n-D KNN is an fbrtree_pm scan');
SELECT is((SELECT count(*) FROM (SELECT id FROM nd_f ORDER BY geom <<->> ST_MakePoint(1, 2, 3)) s),
          (SELECT count(*) FROM nd_f), 'n-D KNN returns every row, EMPTY and NULL included');
SELECT lives_ok('SELECT fbrtree_pm_check(''nd_fi'', true)', 'fbrtree_pm_check of n-D geometries');
SELECT is((SELECT entries FROM pm_index_stats('nd_fi')), (SELECT count(*) FROM nd_f), 'pm_index_stats counts every row');

-- a geometry with a non-finite coordinate has no box: GiST's n-D class and fbrtree_pm keep it
-- aside, and the operators' answers for it are a sequential scan's
CREATE TABLE odd (id int, geom geometry);
INSERT INTO odd VALUES (1, 'POINT(1 1 1)'), (2, 'POINT(NaN 1 1)'), (3, 'POINT EMPTY'), (4, NULL);
CREATE INDEX ON odd USING fbrtree_pm (geom geometry_ops_nd);
SET enable_seqscan = off;
SELECT results_eq('SELECT id FROM odd WHERE geom &&& ST_MakePoint(1, 1, 1) ORDER BY id',
                  ARRAY[1, 2], 'NaN coordinates: the operator''s answer (a sequential scan''s)');

SELECT * FROM finish();
RESET search_path;
DROP SCHEMA fbr_nd CASCADE;
