-- fbrtree_pm against GiST on two identical tables. psql variables (set by bench/demo):
--   srows, stype ('box' or 'point': a type with a default fbrtree_pm opclass), is_box (true/false).
\set ON_ERROR_STOP 1
\set QUIET 1
\pset pager off
SET client_min_messages = warning;
\echo
\echo '=== fbrtree_pm vs GiST:' :srows 'rows of' :stype 'in a 1000 x 1000 square'
DROP TABLE IF EXISTS demo_gist, demo_fbr;
-- The same data on every run.
SELECT setseed(0.42) AS seed \gset
\if :is_box
CREATE TABLE demo_gist AS
  SELECT box(point(x, y), point(x + random(), y + random())) AS g
    FROM (SELECT random() * 1000 AS x, random() * 1000 AS y FROM generate_series(1, :srows)) s;
\else
CREATE TABLE demo_gist AS
  SELECT point(random() * 1000, random() * 1000) AS g FROM generate_series(1, :srows);
\endif
CREATE TABLE demo_fbr AS SELECT * FROM demo_gist;  -- identical copy

\echo '--- index build'
\timing on
\echo '[GiST]'
CREATE INDEX demo_gist_g ON demo_gist USING gist (g);
\echo '[fbrtree_pm]'
CREATE INDEX demo_fbr_g ON demo_fbr USING fbrtree_pm (g);
\timing off
VACUUM ANALYZE demo_gist;
VACUUM ANALYZE demo_fbr;

-- The queries: a point query (boxes containing a point / an exact point), a window query, and a
-- 10-nearest-neighbour query. The point is taken from the data so that the point query finds a row.
\if :is_box
SELECT center(g)::text AS some_point FROM demo_gist ORDER BY ctid OFFSET :srows / 2 LIMIT 1 \gset
\set qpoint 'g @> box(point ' :'some_point' ', point ' :'some_point' ')'
\set qrange 'g && box ''(400,400),(410,410)'''
\else
SELECT g::text AS some_point FROM demo_gist ORDER BY ctid OFFSET :srows / 2 LIMIT 1 \gset
\set qpoint 'g ~= point ' :'some_point'
\set qrange 'g <@ box ''(400,400),(410,410)'''
\endif
\set qknn 'g <-> point ''(500,500)'''

\echo '--- point query plans (GiST, then fbrtree_pm)'
EXPLAIN (ANALYZE, BUFFERS) SELECT * FROM demo_gist WHERE :qpoint;
EXPLAIN (ANALYZE, BUFFERS) SELECT * FROM demo_fbr WHERE :qpoint;
\echo '--- window query plans (GiST, then fbrtree_pm)'
EXPLAIN (ANALYZE, BUFFERS) SELECT count(*) FROM demo_gist WHERE :qrange;
EXPLAIN (ANALYZE, BUFFERS) SELECT count(*) FROM demo_fbr WHERE :qrange;
\echo '--- nearest-neighbour plans (GiST, then fbrtree_pm)'
EXPLAIN (ANALYZE, BUFFERS) SELECT * FROM demo_gist ORDER BY :qknn LIMIT 10;
EXPLAIN (ANALYZE, BUFFERS) SELECT * FROM demo_fbr ORDER BY :qknn LIMIT 10;

\echo '--- timed, side by side (caches are warm)'
\timing on
\echo '[GiST] point query'
SELECT count(*) FROM demo_gist WHERE :qpoint;
\echo '[fbrtree_pm] point query'
SELECT count(*) FROM demo_fbr WHERE :qpoint;
\echo '[GiST] window query'
SELECT count(*) FROM demo_gist WHERE :qrange;
\echo '[fbrtree_pm] window query'
SELECT count(*) FROM demo_fbr WHERE :qrange;
\echo '[GiST] 10 nearest neighbours'
SELECT count(*) FROM (SELECT * FROM demo_gist ORDER BY :qknn LIMIT 10) s;
\echo '[fbrtree_pm] 10 nearest neighbours'
SELECT count(*) FROM (SELECT * FROM demo_fbr ORDER BY :qknn LIMIT 10) s;
\timing off
