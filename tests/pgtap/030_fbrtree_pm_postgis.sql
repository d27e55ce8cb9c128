-- fbrtree_pm on PostGIS geometry returns exactly GiST's rows: the 12 search operators of
-- gist_geometry_ops_2d, KNN with <-> and <#> in GiST's order, points, polygons, lines,
-- EMPTY and NULL geometries, index-only scans of geometry(Point, srid), SRID mismatches; the
-- ST_* predicates, their ORs, joins and partial indexes get fbrtree_pm index conditions.
-- Two identical tables, one indexed with fbrtree_pm and one with GiST.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS postgis;
CREATE EXTENSION IF NOT EXISTS pm_index;
CREATE EXTENSION IF NOT EXISTS pm_index_postgis;
DROP SCHEMA IF EXISTS fbr_gis CASCADE;
CREATE SCHEMA fbr_gis;
SET search_path = fbr_gis, public;

SELECT * FROM no_plan();
SELECT setseed(0.1414);
-- coordinates on a 1/8 grid, so that boxes touch and points sit on edges
CREATE TABLE fg (id int, geom geometry);
INSERT INTO fg
SELECT g,
       CASE WHEN g % 53 = 0 THEN NULL
            WHEN g % 47 = 0 THEN 'POINT EMPTY'::geometry
            WHEN g % 41 = 0 THEN 'POLYGON EMPTY'::geometry
            WHEN g % 4 = 0 THEN ST_MakeEnvelope(x, y, x + w, y + h)
            WHEN g % 4 = 1 THEN ST_MakeLine(ST_MakePoint(x, y), ST_MakePoint(x + w, y - h))
            WHEN g % 4 = 2 THEN ST_Buffer(ST_MakePoint(x, y), w / 3 + 0.1, 4)
            ELSE ST_MakePoint(x, y) END
  FROM (SELECT g, floor(random() * 800) / 8 AS x, floor(random() * 800) / 8 AS y,
               floor(random() * 40) / 8 AS w, floor(random() * 40) / 8 AS h
          FROM generate_series(1, 12000) g) s;
CREATE TABLE gg AS SELECT * FROM fg;
CREATE INDEX fg_geom ON fg USING fbrtree_pm (geom);
CREATE INDEX gg_geom ON gg USING gist (geom);
VACUUM ANALYZE fg;
VACUUM ANALYZE gg;
SET enable_seqscan = off;

CREATE FUNCTION gis_compare(q text, descr text, fbr text DEFAULT 'fg', gist text DEFAULT 'gg')
RETURNS text LANGUAGE sql AS
$$ SELECT results_eq(format(q, fbr), format(q, gist), descr) $$;

-- Every search operator against every query, on the fbrtree_pm table fbr and its GiST twin.
-- "@": PostGIS 3.3's GiST also returns an EMPTY whenever its leaf page's box reaches the
-- query (the operator says false; fbrtree_pm answers as the operator): compare the rest.
-- "~= EMPTY": the operator says true for every EMPTY, GiST returns none; fbrtree_pm answers as
-- the operator (a sequential scan), so that is compared with the EMPTY rows.
CREATE FUNCTION gis_operator_matrix(queries text[], label text, fbr text, gist text)
RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
  op text;
  q text;
BEGIN
  FOREACH op IN ARRAY ARRAY['<<','&<','&&','&>','>>','~=','~','@','&<|','<<|','|>>','|&>'] LOOP
    FOREACH q IN ARRAY queries LOOP
      IF op = '~=' AND q LIKE '%EMPTY%' THEN
        RETURN NEXT results_eq(format('SELECT id FROM %I WHERE geom ~= %s ORDER BY id', fbr, q),
                               format('SELECT id FROM %I WHERE ST_IsEmpty(geom) ORDER BY id', gist),
                               format('%sgeometry ~= %s: every EMPTY', label, q));
        CONTINUE;
      END IF;
      RETURN NEXT gis_compare(format('SELECT id FROM %%I WHERE geom %s %s %s ORDER BY id', op, q,
                                     CASE WHEN op = '@' THEN 'AND NOT ST_IsEmpty(geom)' ELSE '' END),
                              format('%sgeometry %s %s', label, op, q), fbr, gist);
    END LOOP;
  END LOOP;
END $$;

CREATE FUNCTION gis_operator_tests() RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
  op text;
  q text;
  queries text[] := ARRAY['ST_MakeEnvelope(20, 20, 35, 30)', 'ST_MakePoint(50, 50)',
                          'ST_MakeEnvelope(12.5, 40, 12.5, 60)', 'ST_Buffer(ST_MakePoint(70, 30), 6)',
                          '''POINT EMPTY''::geometry', 'ST_MakeEnvelope(-1e6, -1e6, 1e6, 1e6)',
                          'ST_MakeLine(ST_MakePoint(0, 0), ST_MakePoint(100, 100))'];
  points text[] := ARRAY['ST_MakePoint(50, 50)', 'ST_MakePoint(12.5, 99.875)', 'ST_MakePoint(-20, 130)',
                         'ST_MakeEnvelope(40, 40, 45, 47)'];
BEGIN
  RETURN QUERY SELECT * FROM gis_operator_matrix(queries, '', 'fg', 'gg');
  FOREACH q IN ARRAY queries LOOP
    RETURN NEXT is_empty(format('SELECT id FROM fg WHERE geom @ %s AND ST_IsEmpty(geom)', q),
                         format('no EMPTY is within %s (the operator''s answer)', q));
  END LOOP;
  FOREACH op IN ARRAY ARRAY['<->', '<#>'] LOOP
    FOREACH q IN ARRAY points LOOP
      RETURN NEXT gis_compare(format('SELECT geom %s %s FROM %%I ORDER BY geom %s %s LIMIT 80', op, q, op, q),
                              format('KNN %s distances from %s', op, q));
      RETURN NEXT gis_compare(format('SELECT id FROM (SELECT id, geom %1$s %2$s AS d FROM %%1$I ORDER BY geom %1$s %2$s LIMIT 80) s
                                      WHERE d < (SELECT max(d) FROM (SELECT geom %1$s %2$s AS d FROM %%1$I ORDER BY 1 LIMIT 80) t) ORDER BY id', op, q),
                              format('KNN %s rows from %s', op, q));
    END LOOP;
  END LOOP;
END $$;

SELECT * FROM gis_operator_tests();

-- Within one float4 step of a window's edges: both indexes compare boxes rounded outward to
-- float4, so a coordinate a hair beyond an edge can still touch it.  Edges that float4 holds
-- exactly (20, 30, 35) and edges it does not (0.1, 1/3), points and small boxes around them.
CREATE TABLE fe (id int, geom geometry);
INSERT INTO fe
SELECT g, CASE WHEN g % 3 = 0 THEN ST_MakeEnvelope(x, y, x + d, y + d) ELSE ST_MakePoint(x, y) END
  FROM (SELECT g, (ARRAY[20, 30, 35, 0.1, 1/3.0])[1 + g % 5] + (random() - 0.5) * 8e-6 AS x,
               (ARRAY[30, 20, 0.1, 1/3.0, 35])[1 + g / 5 % 5] + (random() - 0.5) * 8e-6 AS y,
               random() * 4e-6 AS d
          FROM generate_series(1, 4000) g) s;
CREATE TABLE ge (LIKE fe);
INSERT INTO ge SELECT * FROM fe;
CREATE INDEX ON fe USING fbrtree_pm (geom);
CREATE INDEX ON ge USING gist (geom);
VACUUM ANALYZE fe, ge;

SELECT * FROM gis_operator_matrix(ARRAY['ST_MakeEnvelope(20, 20, 30, 35)', 'ST_MakeEnvelope(0.1, 1/3.0, 20, 30)',
                                         'ST_MakeEnvelope(1/3.0, 0.1, 35, 35)', 'ST_MakePoint(20, 30)',
                                         'ST_MakePoint(0.1, 1/3.0)'],
                                   'within a float4 step of the edges: ', 'fe', 'ge');
-- the data does reach across the edges: some rows match && only through the rounding
SELECT cmp_ok((SELECT count(*) FROM fe WHERE geom && ST_MakeEnvelope(20, 20, 30, 35)
                 AND NOT ST_Intersects(geom, ST_MakeEnvelope(20, 20, 30, 35)))::int, '>', 0,
              'some entries touch the window only after rounding to float4');

-- every row in a full KNN scan, EMPTY and NULL last, in both orderings
SELECT gis_compare('SELECT count(*), count(geom) FROM (SELECT geom FROM %I ORDER BY geom <-> ST_MakePoint(1, 1)) s', 'KNN <-> returns every row');
SELECT gis_compare('SELECT (geom <#> ST_MakePoint(1, 1)) FROM %I ORDER BY geom <#> ST_MakePoint(1, 1) OFFSET 11500', 'KNN <#> tail: EMPTY and NULL');
SELECT gis_compare('SELECT id FROM %I WHERE geom IS NULL ORDER BY id', 'IS NULL');
SELECT gis_compare('SELECT count(*) FROM %I WHERE geom IS NOT NULL', 'IS NOT NULL counts EMPTY too');

-- SRID mismatches are PostGIS's errors, raised before the index is asked
CREATE TABLE srid_t (id int, geom geometry(Point, 4326));
INSERT INTO srid_t SELECT g, ST_SetSRID(ST_MakePoint(g % 100, g / 100), 4326) FROM generate_series(1, 5000) g;
INSERT INTO srid_t VALUES (0, NULL), (-1, 'SRID=4326;POINT EMPTY');
CREATE INDEX srid_f ON srid_t USING fbrtree_pm (geom);
VACUUM ANALYZE srid_t;
SELECT throws_ok('SELECT id FROM srid_t ORDER BY geom <-> ST_MakePoint(1, 1) LIMIT 3', 'XX000', NULL,
                 'operands of different SRIDs: PostGIS''s error');

-- geometry(Point, 4326): index-only scans rebuild exact points with their SRID
CREATE FUNCTION gis_plan(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE r record; out text := '';
BEGIN
  FOR r IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP out := out || r."QUERY PLAN" || E'\n'; END LOOP;
  RETURN out;
END $$;
SELECT matches(gis_plan('SELECT count(*) FROM srid_t WHERE geom && ST_MakeEnvelope(0, 0, 5, 5, 4326)'),
               'Index Only Scan using srid_f', 'index-only scan of geometry(Point, 4326)');
SELECT is((SELECT count(*) FROM srid_t WHERE geom && ST_MakeEnvelope(0, 0, 5, 5, 4326)),
          (SELECT count(*) FROM srid_t WHERE ST_X(geom) BETWEEN 0 AND 5 AND ST_Y(geom) BETWEEN 0 AND 5),
          'index-only count');
SELECT is((SELECT string_agg(ST_AsEWKT(geom), ',' ORDER BY ST_X(geom), ST_Y(geom)) FROM srid_t WHERE geom && ST_MakeEnvelope(2, 3, 3, 3, 4326)),
          'SRID=4326;POINT(2 3),SRID=4326;POINT(3 3)', 'index-only points keep their coordinates and SRID');
SELECT is((SELECT count(*) FROM (SELECT geom FROM srid_t ORDER BY geom <-> 'SRID=4326;POINT(7 7)'::geometry) s), 5002::bigint,
          'KNN over points returns every row, EMPTY and NULL included');
SELECT matches(gis_plan('SELECT id FROM fg WHERE geom && ST_MakeEnvelope(1, 1, 2, 2)'), 'fg_geom',
               'window query on fbrtree_pm');
SELECT matches(gis_plan('SELECT id FROM fg ORDER BY geom <-> ST_MakePoint(1, 1) LIMIT 5'), 'Index Scan using fg_geom',
               'KNN is an fbrtree_pm scan, no sort');
-- ST_* predicates written the PostGIS way get fbrtree_pm index conditions (constants and
-- joins), the same rows as GiST, and PostGIS's own row estimates (nothing counted twice)
CREATE TABLE roads AS
SELECT g AS id, ST_MakeLine(ST_MakePoint(x, y), ST_MakePoint(x + 4, y + 3)) AS geom
  FROM (SELECT g, random() * 100 AS x, random() * 100 AS y FROM generate_series(1, 60) g) s;
ANALYZE roads;
CREATE FUNCTION gis_rows(q text) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE plan json;
BEGIN
  EXECUTE 'EXPLAIN (FORMAT JSON) ' || q INTO plan;
  RETURN (plan->0->'Plan'->>'Plan Rows')::float8;
END $$;
CREATE FUNCTION gis_st_tests() RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
  pred text;
  est_index float8;
  est_seq float8;
BEGIN
  FOREACH pred IN ARRAY ARRAY[
      'ST_Intersects(geom, ST_MakeEnvelope(20, 20, 30, 28))', 'ST_Intersects(ST_MakeEnvelope(20, 20, 30, 28), geom)',
      'ST_DWithin(geom, ST_MakePoint(50, 50), 4)', 'ST_Contains(ST_MakeEnvelope(10, 10, 40, 40), geom)',
      'ST_Contains(geom, ST_MakePoint(55, 55))', 'ST_Within(geom, ST_MakeEnvelope(10, 10, 40, 40))',
      'ST_Covers(ST_MakeEnvelope(10, 10, 40, 40), geom)', 'ST_CoveredBy(geom, ST_MakeEnvelope(10, 10, 40, 40))',
      'ST_Touches(geom, ST_MakeEnvelope(10, 10, 40, 40))', 'ST_Crosses(geom, ST_MakeLine(ST_MakePoint(0, 0), ST_MakePoint(99, 80)))',
      'ST_Overlaps(geom, ST_Buffer(ST_MakePoint(60, 30), 5))', 'ST_Equals(geom, ST_MakeEnvelope(10, 10, 12, 12))',
      'ST_ContainsProperly(ST_MakeEnvelope(10, 10, 40, 40), geom)',
      'ST_DFullyWithin(geom, ST_MakePoint(50, 50), 6)', 'ST_OrderingEquals(geom, ST_MakeEnvelope(10, 10, 12, 12))',
      'ST_3DIntersects(geom, ST_MakeEnvelope(20, 20, 30, 28))', 'ST_3DDWithin(geom, ST_MakePoint(50, 50), 4)',
      'ST_3DDFullyWithin(ST_MakePoint(50, 50), geom, 6)',
      'ST_Intersects(geom, ST_MakeEnvelope(20, 20, 30, 28)) OR ST_DWithin(geom, ST_MakePoint(70, 70), 3)'] LOOP
    RETURN NEXT matches(gis_plan(format('SELECT id FROM fg WHERE %s', pred)), 'fg_geom',
                        format('%s uses fbrtree_pm', pred));
    RETURN NEXT gis_compare(format('SELECT id FROM %%I WHERE %s ORDER BY id', pred), format('%s rows', pred));
    est_index := gis_rows(format('SELECT id FROM fg WHERE %s', pred));
    SET LOCAL enable_indexscan = off; SET LOCAL enable_bitmapscan = off;
    est_seq := gis_rows(format('SELECT id FROM fg WHERE %s', pred));
    RESET enable_indexscan; RESET enable_bitmapscan;
    RETURN NEXT is(est_index, est_seq, format('%s: PostGIS''s row estimate', pred));
  END LOOP;
END $$;
SELECT * FROM gis_st_tests();
SELECT matches(gis_plan('SELECT id FROM fg WHERE ST_Intersects(geom, ST_MakeEnvelope(20, 20, 30, 28)) OR ST_DWithin(geom, ST_MakePoint(70, 70), 3)'),
               'BitmapOr.*Bitmap Index Scan on fg_geom.*Bitmap Index Scan on fg_geom',
               'an OR of ST_* predicates is a BitmapOr of fbrtree_pm scans');
-- a partial index: the derived condition on the rows its predicate admits, as GiST's gets
CREATE TABLE half_f AS SELECT * FROM fg;
CREATE TABLE half_g AS SELECT * FROM fg;
CREATE INDEX half_fi ON half_f USING fbrtree_pm (geom) WHERE id % 2 = 0;
CREATE INDEX half_gi ON half_g USING gist (geom) WHERE id % 2 = 0;
ANALYZE half_f;
ANALYZE half_g;
SELECT matches(gis_plan('SELECT id FROM half_g WHERE ST_Intersects(geom, ST_MakeEnvelope(20, 20, 30, 28)) AND id % 2 = 0'),
               'half_gi.*Index Cond: \(geom && ', 'partial index: GiST''s gets an index condition');
SELECT matches(gis_plan('SELECT id FROM half_f WHERE ST_Intersects(geom, ST_MakeEnvelope(20, 20, 30, 28)) AND id % 2 = 0'),
               'half_fi.*Index Cond: \(geom && ', 'partial index: fbrtree_pm''s gets one too');
SELECT gis_compare('SELECT id FROM %I WHERE ST_Intersects(geom, ST_MakeEnvelope(20, 20, 30, 28)) AND id %% 2 = 0 ORDER BY id',
                   'partial index rows', 'half_f', 'half_g');
SELECT matches(gis_plan('SELECT r.id, f.id FROM roads r JOIN fg f ON ST_Intersects(r.geom, f.geom)'),
               'Nested Loop.*Index Scan using fg_geom on fg f.*Index Cond: \(geom && r\.geom\)',
               'a join on ST_Intersects is a parameterized fbrtree_pm scan');
SELECT gis_compare('SELECT r.id, f.id FROM roads r JOIN %I f ON ST_Intersects(r.geom, f.geom) ORDER BY 1, 2', 'join rows');
SELECT gis_compare('SELECT r.id, f.id FROM roads r JOIN %I f ON ST_DWithin(r.geom, f.geom, 1.5) ORDER BY 1, 2', 'ST_DWithin join rows');
-- two fbrtree_pm indexes on one column: the derived condition once
CREATE INDEX fg_geom2 ON fg USING fbrtree_pm (geom);
SELECT matches(gis_plan('SELECT id FROM fg WHERE ST_Intersects(geom, ST_MakeEnvelope(20, 20, 30, 28))'),
               'Index Cond: \(geom && ''[0-9A-F]+''::geometry\)\n',
               'with two fbrtree_pm indexes on the column, ST_Intersects gives one index condition');
SELECT gis_compare('SELECT id FROM %I WHERE ST_Intersects(geom, ST_MakeEnvelope(20, 20, 30, 28)) ORDER BY id',
                   'ST_Intersects rows with two indexes on the column');
DROP INDEX fg_geom2;
-- an expression index: ST_* predicates on the expression get its index conditions, as GiST's do
CREATE INDEX fg_centroid ON fg USING fbrtree_pm (ST_Centroid(geom));
CREATE INDEX gg_centroid ON gg USING gist (ST_Centroid(geom));
CREATE FUNCTION gis_expression_tests() RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
  pred text;
BEGIN
  FOREACH pred IN ARRAY ARRAY[
      'ST_Intersects(ST_Centroid(geom), ST_MakeEnvelope(20, 20, 30, 28))',
      'ST_DWithin(ST_Centroid(geom), ST_MakePoint(50, 50), 4)',
      'ST_Within(ST_Centroid(geom), ST_MakeEnvelope(10, 10, 40, 40))'] LOOP
    RETURN NEXT matches(gis_plan(format('SELECT id FROM gg WHERE %s', pred)), 'gg_centroid',
                        format('%s uses the GiST expression index', pred));
    RETURN NEXT matches(gis_plan(format('SELECT id FROM fg WHERE %s', pred)), 'fg_centroid',
                        format('%s uses the fbrtree_pm expression index', pred));
    RETURN NEXT gis_compare(format('SELECT id FROM %%I WHERE %s ORDER BY id', pred), format('%s rows', pred));
  END LOOP;
END $$;
SELECT * FROM gis_expression_tests();
DROP INDEX fg_centroid;
DROP INDEX gg_centroid;
-- partitions: each partition's fbrtree_pm index serves the ST_* predicate
CREATE TABLE fg_parts (id int, geom geometry) PARTITION BY RANGE (id);
CREATE TABLE fg_p1 PARTITION OF fg_parts FOR VALUES FROM (0) TO (6000);
CREATE TABLE fg_p2 PARTITION OF fg_parts FOR VALUES FROM (6000) TO (20000);
INSERT INTO fg_parts SELECT * FROM fg;
CREATE INDEX ON fg_parts USING fbrtree_pm (geom);
ANALYZE fg_parts;
SELECT matches(gis_plan('SELECT id FROM fg_parts WHERE ST_Intersects(geom, ST_MakeEnvelope(20, 20, 30, 28))'),
               'fg_p1_geom_idx.*fg_p2_geom_idx', 'ST_Intersects on a partitioned table uses each partition''s fbrtree_pm index');
SELECT results_eq('SELECT id FROM fg_parts WHERE ST_Intersects(geom, ST_MakeEnvelope(20, 20, 30, 28)) ORDER BY id',
                  'SELECT id FROM gg WHERE ST_Intersects(geom, ST_MakeEnvelope(20, 20, 30, 28)) ORDER BY id',
                  'and returns GiST''s rows');

-- Where PostGIS estimates no rows (clustered points, a window over an area empty at ANALYZE),
-- the default plan uses the fbrtree_pm index as it uses GiST's: the scan is costed from that
-- estimate, not as a scan of every entry
CREATE TABLE clu (id int, geom geometry);
INSERT INTO clu SELECT g, ST_MakePoint(random() * 10, random() * 10) FROM generate_series(1, 30000) g;
CREATE TABLE clu_g AS SELECT * FROM clu;
CREATE INDEX clu_f ON clu USING fbrtree_pm (geom);
CREATE INDEX clu_gi ON clu_g USING gist (geom);
ANALYZE clu;
ANALYZE clu_g;
RESET enable_seqscan;
CREATE FUNCTION gis_empty_area_tests() RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
  pred text;
BEGIN
  FOREACH pred IN ARRAY ARRAY[
      'ST_Intersects(geom, ST_MakeEnvelope(50, 50, 51, 51))', 'ST_DWithin(geom, ST_MakePoint(50, 50), 1)',
      'geom && ST_MakeEnvelope(50, 50, 51, 51)', 'ST_Contains(ST_MakeEnvelope(50, 50, 51, 51), geom)'] LOOP
    RETURN NEXT matches(gis_plan(format('SELECT id FROM clu_g WHERE %s', pred)), 'clu_gi',
                        format('%s, no rows estimated: GiST is used', pred));
    RETURN NEXT matches(gis_plan(format('SELECT id FROM clu WHERE %s', pred)), 'clu_f',
                        format('%s, no rows estimated: fbrtree_pm is used', pred));
  END LOOP;
END $$;
SELECT * FROM gis_empty_area_tests();
SET enable_seqscan = off;

-- An EMPTY's "<#>" distance is FLT_MAX: it comes at that distance, before a point farther away
CREATE TABLE far (id int, g geometry);
INSERT INTO far VALUES (1, 'POINT(3.4e38 3.4e38)'), (2, 'POINT EMPTY'), (3, 'POINT(0 0)'), (4, NULL);
CREATE INDEX ON far USING fbrtree_pm (g);
SELECT results_eq('SELECT id FROM far ORDER BY g <#> ''POINT(1 1)''', ARRAY[3, 2, 1, 4],
                  'KNN <#>: EMPTY at its distance FLT_MAX, before a farther point');
SELECT results_eq('SELECT id FROM far ORDER BY g <-> ''POINT(1 1)'', id', ARRAY[3, 1, 2, 4],
                  'KNN <->: EMPTY (no distance) after every point');
-- ST_Equals with an EMPTY constant: the EMPTY rows, as a sequential scan gives
SELECT results_eq('SELECT id FROM fg WHERE ST_Equals(''POLYGON EMPTY''::geometry, geom) ORDER BY id',
                  'SELECT id FROM gg WHERE ST_IsEmpty(geom) ORDER BY id',
                  'ST_Equals(EMPTY, geom) returns the EMPTY rows');
SELECT results_eq('SELECT id FROM fg WHERE ST_Equals(geom, ''POINT EMPTY''::geometry) ORDER BY id',
                  'SELECT id FROM gg WHERE ST_IsEmpty(geom) ORDER BY id',
                  'ST_Equals(geom, EMPTY) returns the EMPTY rows');

-- count(*) may scan an index only, which gives back no polygon: the rows are counted
SELECT is((SELECT count(*) FROM fg), (SELECT count(*) FROM gg), 'count(*) over the index');
SELECT is((SELECT count(*) FROM fg WHERE geom && ST_MakeEnvelope(10, 10, 40, 40)),
          (SELECT count(*) FROM gg WHERE geom && ST_MakeEnvelope(10, 10, 40, 40)), 'count(*) of a window');
SELECT lives_ok('SELECT fbrtree_pm_check(''fg_geom'', true)', 'fbrtree_pm_check of geometries');
SELECT lives_ok('SELECT fbrtree_pm_check(''srid_f'', true)', 'fbrtree_pm_check of points');

SELECT * FROM finish();
RESET search_path;
DROP SCHEMA fbr_gis CASCADE;
