-- fbrtree_pm against GiST on PostGIS geometry: two identical tables of points and the ST_*
-- predicates PostGIS users write. psql variable (set by bench/demo): srows.
\set ON_ERROR_STOP 1
\set QUIET 1
\pset pager off
SET client_min_messages = warning;
\echo
\echo '=== PostGIS: fbrtree_pm vs GiST on' :srows 'geometry(Point) rows in a 1000 x 1000 square'
CREATE EXTENSION IF NOT EXISTS pm_index_postgis CASCADE;
DROP TABLE IF EXISTS demo_geo_gist, demo_geo_fbr;
SELECT setseed(0.42) AS seed \gset
CREATE TABLE demo_geo_gist AS
  SELECT i AS id, ST_MakePoint(random() * 1000, random() * 1000)::geometry(Point) AS geom
    FROM generate_series(1, :srows) i;
CREATE TABLE demo_geo_fbr AS SELECT * FROM demo_geo_gist;  -- identical copy

\echo '--- index build'
\timing on
\echo '[GiST]'
CREATE INDEX demo_geo_gist_geom ON demo_geo_gist USING gist (geom);
\echo '[fbrtree_pm]'
CREATE INDEX demo_geo_fbr_geom ON demo_geo_fbr USING fbrtree_pm (geom);
\timing off
VACUUM ANALYZE demo_geo_gist;
VACUUM ANALYZE demo_geo_fbr;

\set qwin 'ST_Intersects(geom, ST_MakeEnvelope(400, 400, 410, 410))'
\set qnear 'ST_DWithin(geom, ST_MakePoint(500, 500), 5)'
\set qknn 'geom <-> ST_MakePoint(500, 500)'

\echo '--- ST_Intersects uses the index as it uses GiST (GiST, then fbrtree_pm)'
EXPLAIN (COSTS OFF) SELECT id FROM demo_geo_gist WHERE :qwin;
EXPLAIN (COSTS OFF) SELECT id FROM demo_geo_fbr WHERE :qwin;
\echo '--- nearest-neighbour plans (GiST, then fbrtree_pm)'
EXPLAIN (COSTS OFF) SELECT id FROM demo_geo_gist ORDER BY :qknn LIMIT 10;
EXPLAIN (COSTS OFF) SELECT id FROM demo_geo_fbr ORDER BY :qknn LIMIT 10;

\echo '--- the same answers, timed (caches are warm)'
\timing on
\echo '[GiST] ST_Intersects with a 10 x 10 envelope'
SELECT count(*), sum(id) FROM demo_geo_gist WHERE :qwin;
\echo '[fbrtree_pm] ST_Intersects with a 10 x 10 envelope'
SELECT count(*), sum(id) FROM demo_geo_fbr WHERE :qwin;
\echo '[GiST] ST_DWithin 5 of a point'
SELECT count(*), sum(id) FROM demo_geo_gist WHERE :qnear;
\echo '[fbrtree_pm] ST_DWithin 5 of a point'
SELECT count(*), sum(id) FROM demo_geo_fbr WHERE :qnear;
\echo '[GiST] 10 nearest points'
SELECT string_agg(id::text, ',') FROM (SELECT id FROM demo_geo_gist ORDER BY :qknn LIMIT 10) s;
\echo '[fbrtree_pm] 10 nearest points'
SELECT string_agg(id::text, ',') FROM (SELECT id FROM demo_geo_fbr ORDER BY :qknn LIMIT 10) s;
\timing off
