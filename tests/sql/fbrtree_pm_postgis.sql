-- fbrtree_pm on PostGIS geometry answers as a sequential scan does: values with an SRID in
-- every kind of column (KNN, index-only points, EMPTY), and the n-D predicates, whose M and
-- EMPTY values their derived conditions must not exclude.  by_index() plans without sequential
-- scans (an error is its answer), by_seq() without indexes.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS postgis;
CREATE EXTENSION IF NOT EXISTS pm_index;
CREATE EXTENSION IF NOT EXISTS pm_index_postgis;
CREATE FUNCTION by_index(q text) RETURNS text LANGUAGE plpgsql
SET enable_seqscan = off SET enable_indexscan = on SET enable_bitmapscan = on AS $$
DECLARE r text;
BEGIN
  EXECUTE format('SELECT string_agg(coalesce(a::text, %L), %L) FROM (%s) s(a)', 'NULL', ' ', q) INTO r;
  RETURN r;
EXCEPTION WHEN OTHERS THEN
  RETURN 'ERROR: ' || SQLERRM;
END $$;
CREATE FUNCTION by_seq(q text) RETURNS text LANGUAGE plpgsql
SET enable_seqscan = on SET enable_indexscan = off SET enable_bitmapscan = off AS $$
DECLARE r text;
BEGIN
  EXECUTE format('SELECT string_agg(coalesce(a::text, %L), %L) FROM (%s) s(a)', 'NULL', ' ', q) INTO r;
  RETURN r;
END $$;
-- the scan node of q's plan without sequential scans
CREATE FUNCTION index_node(q text) RETURNS text LANGUAGE plpgsql
SET enable_seqscan = off AS $$
DECLARE r record;
BEGIN
  FOR r IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    IF r."QUERY PLAN" ~ 'Scan' THEN
      RETURN regexp_replace(r."QUERY PLAN", '^[ ->]*', '');
    END IF;
  END LOOP;
  RETURN NULL;
END $$;

-- KNN over an untyped column of SRID 4326
CREATE TABLE f1 (id int, geom geometry);
INSERT INTO f1 VALUES (1, 'SRID=4326;POINT(1 1)'), (2, 'SRID=4326;POINT(2 2)');
CREATE INDEX ON f1 USING fbrtree_pm (geom);
SET enable_seqscan = off;
SELECT id FROM f1 ORDER BY geom <-> 'SRID=4326;POINT(0 0)'::geometry LIMIT 5;
RESET enable_seqscan;

-- every kind of column, SRIDs 4326 and 3857, EMPTY and NULL among the rows
CREATE TABLE fs (id int, u geometry, poly geometry(Polygon, 4326), line geometry(LineString, 3857),
                 pz geometry(PointZ, 4326), pt geometry(Point, 4326), pany geometry(Point));
INSERT INTO fs
SELECT g, ST_SetSRID(CASE g % 3 WHEN 0 THEN ST_MakePoint(x, y) WHEN 1 THEN ST_MakeEnvelope(x, y, x + 1, y + 2)
                          ELSE ST_MakeLine(ST_MakePoint(x, y), ST_MakePoint(x + 2, y + 1)) END, 4326),
       ST_MakeEnvelope(x, y, x + 1, y + 2, 4326),
       ST_SetSRID(ST_MakeLine(ST_MakePoint(x, y), ST_MakePoint(x + 2, y + 1)), 3857),
       ST_SetSRID(ST_MakePoint(x, y, g), 4326),
       ST_SetSRID(ST_MakePoint(x, y), 4326),
       ST_SetSRID(ST_MakePoint(x, y), 4326)
  FROM (SELECT g, g % 17 AS x, g / 17 AS y FROM generate_series(1, 300) g) s;
INSERT INTO fs VALUES (301, 'SRID=4326;POINT EMPTY', 'SRID=4326;POLYGON EMPTY', 'SRID=3857;LINESTRING EMPTY',
                       'SRID=4326;POINT Z EMPTY', 'SRID=4326;POINT EMPTY', 'SRID=4326;POINT EMPTY'),
                      (302, NULL, NULL, NULL, NULL, NULL, NULL);
CREATE INDEX fs_u ON fs USING fbrtree_pm (u);
CREATE INDEX fs_poly ON fs USING fbrtree_pm (poly);
CREATE INDEX fs_line ON fs USING fbrtree_pm (line);
CREATE INDEX fs_pz ON fs USING fbrtree_pm (pz);
CREATE INDEX fs_pt ON fs USING fbrtree_pm (pt);
CREATE INDEX fs_pany ON fs USING fbrtree_pm (pany);
CREATE INDEX fs_centroid ON fs USING fbrtree_pm (ST_Centroid(u));
VACUUM ANALYZE fs;
-- KNN distances (ties may come in any order) through each index
SELECT q, index_node(q), by_index(q) IS NOT DISTINCT FROM by_seq(q) AS same, by_seq(q)
  FROM (VALUES ('u', '<->', 'SRID=4326;POINT(3.2 4.1)'), ('u', '<#>', 'SRID=4326;POINT(3.2 4.1)'),
               ('poly', '<->', 'SRID=4326;POINT(3.2 4.1)'), ('line', '<->', 'SRID=3857;POINT(3.2 4.1)'),
               ('pz', '<->', 'SRID=4326;POINT(3.2 4.1)'), ('pt', '<->', 'SRID=4326;POINT(3.2 4.1)'),
               ('pany', '<->', 'SRID=4326;POINT(3.2 4.1)'), ('ST_Centroid(u)', '<->', 'SRID=4326;POINT(3.2 4.1)'),
               ('u', '<->', 'SRID=4326;POINT EMPTY')) v(col, op, arg),
       LATERAL (SELECT format('SELECT round((%1$s %2$s %3$L::geometry)::numeric, 6) FROM fs ORDER BY %1$s %2$s %3$L::geometry LIMIT 6',
                              col, op, arg) AS q) s;
-- whole KNN scans, index-only points, EMPTY
SELECT q, index_node(q), by_index(q) IS NOT DISTINCT FROM by_seq(q) AS same, by_seq(q)
  FROM unnest(ARRAY[
    'SELECT count(*) FROM (SELECT id FROM fs ORDER BY u <-> ''SRID=4326;POINT(0 0)''::geometry) s',
    'SELECT count(*) FROM (SELECT id FROM fs ORDER BY pt <-> ''SRID=4326;POINT(0 0)''::geometry) s',
    'SELECT id FROM fs WHERE ST_DWithin(u, ''SRID=4326;POINT(3 4)''::geometry, 1) ORDER BY id',
    'SELECT ST_AsEWKT(pt) FROM fs WHERE pt && ST_MakeEnvelope(2, 3, 3, 3, 4326) ORDER BY 1',
    'SELECT ST_AsEWKT(pany) FROM fs WHERE pany && ST_MakeEnvelope(2, 3, 3, 3, 4326) ORDER BY 1',
    'SELECT ST_AsEWKT(pany) FROM fs WHERE pany ~= ''SRID=4326;POINT EMPTY''::geometry',
    'SELECT ST_AsEWKT(pt) FROM fs WHERE pt ~= ''SRID=4326;POINT EMPTY''::geometry']) q;

-- n-D: ST_3DIntersects, ST_3DDWithin and ST_3DDFullyWithin ignore M; from a distance of
-- FLT_MAX on, ST_3DDWithin accepts EMPTY, and it and ST_DWithin accept values farther apart
CREATE TABLE fm (id int, geom geometry);
INSERT INTO fm VALUES (1, 'POINT EMPTY'), (2, 'POINT Z (1 1 1)'), (3, 'POINT ZM (1 1 1 100)'),
                      (4, 'POINT M (1 1 100)'), (5, 'POINT(1 1)'), (6, 'LINESTRING EMPTY'),
                      (7, 'POINT ZM (1 1 1 -3e38)'), (8, NULL);
CREATE TABLE fm2 AS SELECT * FROM fm;
CREATE INDEX fm_nd ON fm USING fbrtree_pm (geom geometry_ops_nd);
CREATE INDEX fm2_2d ON fm2 USING fbrtree_pm (geom);
SELECT q, index_node(q), by_index(q) IS NOT DISTINCT FROM by_seq(q) AS same, by_seq(q)
  FROM unnest(ARRAY['ST_3DIntersects(geom, ''POINT ZM (1 1 1 0)'')',
                    'ST_3DIntersects(''POINT M (1 1 7)'', geom)',
                    'ST_3DDWithin(geom, ''POINT ZM (1 1 1 0)'', 1)',
                    'ST_3DDFullyWithin(''POINT ZM (1 1 1 0)'', geom, 1)',
                    'ST_3DDWithin(geom, ''POINT ZM (1 1 1 0)'', 1e39)',
                    'ST_3DDWithin(geom, ''POINT(1 1)'', 3.4028234663852886e38)',
                    'ST_3DDWithin(geom, ''POINT(1 1)'', ''Infinity'')',
                    'ST_3DDWithin(geom, ''POINT(1 1)'', 3.4e38)',
                    'ST_DWithin(geom, ''POINT(1e300 1e300)'', 3.4028234663852886e38)',
                    'ST_3DDFullyWithin(geom, ''POINT(1e300 1e300 1e300)'', ''Infinity'')']) p,
       unnest(ARRAY['fm', 'fm2']) t,
       LATERAL (SELECT format('SELECT id FROM %s WHERE %s ORDER BY id', t, p) AS q) s;
