-- fbrtree_pm returns exactly GiST's rows: every box and point operator, NULLs, degenerate
-- boxes, points on node edges (a coarse grid makes touching common), KNN in GiST's order,
-- index-only and bitmap scans, inserts after the build, VACUUM, an empty table, bad input.
-- Two identical tables, one indexed with fbrtree_pm and one with GiST.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS pm_index;
DROP SCHEMA IF EXISTS fbr_equiv CASCADE;
CREATE SCHEMA fbr_equiv;
SET search_path = fbr_equiv, public;

SELECT * FROM no_plan();
SELECT setseed(0.2718);
CREATE TABLE fb (id int, b box, p point);
-- half the build's rows, the other half inserted into the built index below
CREATE FUNCTION fbr_rows(lo int, hi int) RETURNS TABLE (id int, b box, p point)
LANGUAGE sql AS $$
  SELECT g,
         CASE WHEN random() < 0.03 THEN NULL
              WHEN random() < 0.1 THEN box(point(x, y))                      -- degenerate: a point
              WHEN random() < 0.15 THEN box(point(x, y), point(x + w, y))    -- degenerate: a segment
              ELSE box(point(x, y), point(x + w, y + h)) END,
         CASE WHEN random() < 0.03 THEN NULL ELSE point(px, py) END
    FROM (SELECT g, floor(random() * 1000) / 4 AS x, floor(random() * 1000) / 4 AS y,
                 floor(random() * 40) / 4 AS w, floor(random() * 40) / 4 AS h,
                 floor(random() * 400) / 2 AS px, floor(random() * 400) / 2 AS py
            FROM generate_series(lo, hi) g) s
$$;
INSERT INTO fb SELECT * FROM fbr_rows(1, 15000);
CREATE TABLE gi AS SELECT * FROM fb;
CREATE INDEX fb_b ON fb USING fbrtree_pm (b);
CREATE INDEX fb_p ON fb USING fbrtree_pm (p);
CREATE INDEX gi_b ON gi USING gist (b);
CREATE INDEX gi_p ON gi USING gist (p);
CREATE TEMP TABLE more AS SELECT * FROM fbr_rows(15001, 30000);
INSERT INTO fb SELECT * FROM more;
INSERT INTO gi SELECT * FROM more;
DELETE FROM fb WHERE id % 7 = 0;
DELETE FROM gi WHERE id % 7 = 0;
VACUUM ANALYZE fb;
VACUUM ANALYZE gi;
SET enable_seqscan = off;

CREATE FUNCTION fbr_compare(q text, descr text) RETURNS text LANGUAGE sql AS
$$ SELECT results_eq(format(q, 'fb'), format(q, 'gi'), descr) $$;

-- every operator against query boxes of several shapes: a window, a point, a segment, a
-- box on grid lines (edges touch stored edges), a huge box, a box outside the data
CREATE FUNCTION fbr_operator_tests() RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
  op text;
  q text;
  boxes text[] := ARRAY['((100,100),(120,130))', '((50,60),(50,60))', '((10,20),(40,20))',
                        '((100.25,100.5),(110.75,104))', '((-1e9,-1e9),(1e9,1e9))',
                        '((5000,5000),(6000,6000))'];
  points text[] := ARRAY['(100,100)', '(57.5,122)', '(0,0)', '(199.5,3)', '(-5,300)'];
BEGIN
  FOREACH op IN ARRAY ARRAY['<<','&<','&&','&>','>>','~=','@>','<@','&<|','<<|','|>>','|&>'] LOOP
    FOREACH q IN ARRAY boxes LOOP
      RETURN NEXT fbr_compare(format('SELECT id FROM %%I WHERE b %s %L::box ORDER BY id', op, q),
                              format('box %s %s', op, q));
    END LOOP;
  END LOOP;
  FOREACH op IN ARRAY ARRAY['<<','>>','~=','<<|','|>>','<^','>^'] LOOP
    FOREACH q IN ARRAY points LOOP
      RETURN NEXT fbr_compare(format('SELECT id FROM %%I WHERE p %s %L::point ORDER BY id', op, q),
                              format('point %s %s', op, q));
    END LOOP;
  END LOOP;
  FOREACH q IN ARRAY boxes LOOP
    RETURN NEXT fbr_compare(format('SELECT id FROM %%I WHERE p <@ %L::box ORDER BY id', q),
                            format('point <@ %s', q));
  END LOOP;
  -- KNN: the distances in order, and the rows up to the last distance (ties may come in
  -- any order in both)
  FOREACH q IN ARRAY points LOOP
    RETURN NEXT fbr_compare(format('SELECT p <-> %L::point FROM %%I ORDER BY p <-> %L::point LIMIT 60', q, q),
                            format('point KNN distances from %s', q));
    RETURN NEXT fbr_compare(format('SELECT id FROM (SELECT id, p <-> %L::point AS d FROM %%I ORDER BY p <-> %L::point LIMIT 60) s
                                    WHERE d < (SELECT max(d) FROM (SELECT p <-> %L::point AS d FROM %%1$I ORDER BY 1 LIMIT 60) t) ORDER BY id', q, q, q),
                            format('point KNN rows from %s', q));
    RETURN NEXT fbr_compare(format('SELECT b <-> %L::point FROM %%I ORDER BY b <-> %L::point LIMIT 60', q, q),
                            format('box KNN distances from %s', q));
    RETURN NEXT fbr_compare(format('SELECT p <-> %L::point FROM %%I WHERE p <@ box ''((0,0),(100,100))'' ORDER BY p <-> %L::point LIMIT 30', q, q),
                            format('point KNN with a window from %s', q));
  END LOOP;
END $$;

SELECT * FROM fbr_operator_tests();

-- NULLs: IS NULL, IS NOT NULL, and KNN past the last non-NULL row (NULLs last, as GiST)
SELECT fbr_compare('SELECT id FROM %I WHERE b IS NULL ORDER BY id', 'box IS NULL');
SELECT fbr_compare('SELECT count(*) FROM %I WHERE p IS NOT NULL', 'point IS NOT NULL');
SELECT fbr_compare('SELECT (p <-> ''(3,3)'') IS NULL FROM %I ORDER BY p <-> ''(3,3)'' OFFSET 25000', 'KNN reaches the NULLs last');
SELECT fbr_compare('SELECT count(*) FROM (SELECT id FROM %I ORDER BY p <-> ''(3,3)'') s', 'KNN returns every row');

-- the fbrtree_pm side really uses fbrtree_pm
CREATE FUNCTION fbr_plan(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE r record; out text := '';
BEGIN
  FOR r IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP out := out || r."QUERY PLAN" || E'\n'; END LOOP;
  RETURN out;
END $$;
SELECT matches(fbr_plan('SELECT id FROM fb WHERE b && ''((1,1),(2,2))'''), 'Index Scan using fb_b|Bitmap Index Scan on fb_b',
               'window query on fbrtree_pm');
SELECT matches(fbr_plan('SELECT p FROM fb WHERE p <@ box ''((1,1),(20,20))'''), 'Index Only Scan using fb_p',
               'index-only scan of points');
SELECT matches(fbr_plan('SELECT id FROM fb ORDER BY p <-> ''(1,1)'' LIMIT 5'), 'Index Scan using fb_p',
               'KNN is an fbrtree_pm scan, no sort');
SELECT fbr_compare('SELECT p[0], p[1] FROM %I WHERE p <@ box ''((1,1),(20,20))'' ORDER BY 1, 2', 'index-only points are exact');
SET enable_indexscan = off;
SELECT matches(fbr_plan('SELECT id FROM fb WHERE b && ''((1,1),(2,2))'''), 'Bitmap Index Scan on fb_b', 'bitmap scan');
SELECT fbr_compare('SELECT id FROM %I WHERE b && ''((30,30),(60,70))'' ORDER BY id', 'bitmap scan rows');
SELECT fbr_compare('SELECT id FROM %I WHERE b && ''((30,30),(60,70))'' OR p <@ box ''((0,0),(9,9))'' ORDER BY id', 'bitmap OR');
RESET enable_indexscan;

SELECT lives_ok('SELECT fbrtree_pm_check(''fb_b'', true)', 'fbrtree_pm_check of the boxes');
SELECT lives_ok('SELECT fbrtree_pm_check(''fb_p'', true)', 'fbrtree_pm_check of the points');
SELECT is((SELECT entries FROM pm_index_stats('fb_p')), (SELECT count(*) FROM fb), 'pm_index_stats counts every row');

-- circles and polygons (GiST's circle_ops and poly_ops): entries are bounding boxes, each
-- rechecked; inserts after the build, deletes and VACUUM; KNN with rechecked distances; points
-- inside a polygon or a circle (point_ops)
CREATE TABLE shapes_f (id int, c circle, pg polygon);
INSERT INTO shapes_f
SELECT g, CASE WHEN g % 31 = 0 THEN NULL ELSE circle(point(x, y), w) END,
       CASE WHEN g % 37 = 0 THEN NULL WHEN g % 2 = 0 THEN polygon(box(point(x, y), point(x + w, y + h)))
            ELSE format('((%s,%s),(%s,%s),(%s,%s))', x, y, x + w, y, x, y + h)::polygon END
  FROM (SELECT g, floor(random() * 400) / 4 AS x, floor(random() * 400) / 4 AS y,
               floor(random() * 20) / 4 AS w, floor(random() * 20) / 4 + 0.25 AS h
          FROM generate_series(1, 8000) g) s;
CREATE TABLE shapes_g AS SELECT * FROM shapes_f;
CREATE INDEX shapes_fc ON shapes_f USING fbrtree_pm (c);
CREATE INDEX shapes_fp ON shapes_f USING fbrtree_pm (pg);
CREATE INDEX shapes_gc ON shapes_g USING gist (c);
CREATE INDEX shapes_gp ON shapes_g USING gist (pg);
INSERT INTO shapes_f SELECT id + 8000, circle(center(c), radius(c) + 1), pg FROM shapes_f WHERE id <= 2000;
INSERT INTO shapes_g SELECT id + 8000, circle(center(c), radius(c) + 1), pg FROM shapes_g WHERE id <= 2000;
DELETE FROM shapes_f WHERE id % 5 = 0;
DELETE FROM shapes_g WHERE id % 5 = 0;
VACUUM ANALYZE shapes_f;
VACUUM ANALYZE shapes_g;
CREATE FUNCTION fbr_shape_tests() RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
  op text;
  q text;
BEGIN
  FOREACH op IN ARRAY ARRAY['<<','&<','&&','&>','>>','~=','@>','<@','&<|','<<|','|>>','|&>'] LOOP
    FOREACH q IN ARRAY ARRAY['<(50,50),5>', '<(10.25,20),0>', '<(0,0),1000>', '<(-50,-50),1>'] LOOP
      RETURN NEXT results_eq(format('SELECT id FROM shapes_f WHERE c %s %L::circle ORDER BY id', op, q),
                             format('SELECT id FROM shapes_g WHERE c %s %L::circle ORDER BY id', op, q),
                             format('circle %s %s', op, q));
    END LOOP;
    FOREACH q IN ARRAY ARRAY['((50,50),(60,50),(50,65))', '((10,10),(10,10))', '((0,0),(100,0),(100,100),(0,100))'] LOOP
      RETURN NEXT results_eq(format('SELECT id FROM shapes_f WHERE pg %s %L::polygon ORDER BY id', op, q),
                             format('SELECT id FROM shapes_g WHERE pg %s %L::polygon ORDER BY id', op, q),
                             format('polygon %s %s', op, q));
    END LOOP;
  END LOOP;
END $$;
SELECT * FROM fbr_shape_tests();
SELECT matches(fbr_plan('SELECT id FROM shapes_f WHERE c && ''<(50,50),5>'''), 'shapes_fc',
               'circle && uses fbrtree_pm');
SELECT matches(fbr_plan('SELECT id FROM shapes_f WHERE pg @> ''((50,50),(51,50),(50,51))'''), 'shapes_fp',
               'polygon @> uses fbrtree_pm');
SELECT matches(fbr_plan('SELECT id FROM shapes_f ORDER BY c <-> ''(50,50)''::point LIMIT 5'),
               'Index Scan using shapes_fc', 'circle KNN is an fbrtree_pm scan');
SELECT results_eq('SELECT c <-> ''(50,50)''::point FROM shapes_f WHERE c IS NOT NULL ORDER BY c <-> ''(50,50)''::point',
                  'SELECT c <-> ''(50,50)''::point FROM shapes_g WHERE c IS NOT NULL ORDER BY c <-> ''(50,50)''::point',
                  'circle KNN: GiST''s distances in GiST''s order');
SELECT results_eq('SELECT pg <-> ''(33,77)''::point FROM shapes_f ORDER BY pg <-> ''(33,77)''::point LIMIT 50',
                  'SELECT pg <-> ''(33,77)''::point FROM shapes_g ORDER BY pg <-> ''(33,77)''::point LIMIT 50',
                  'polygon KNN: GiST''s distances');
SELECT results_eq('SELECT id FROM fb WHERE p <@ ''((50,50),(90,50),(50,120))''::polygon ORDER BY id',
                  'SELECT id FROM gi WHERE p <@ ''((50,50),(90,50),(50,120))''::polygon ORDER BY id',
                  'point <@ polygon');
SELECT results_eq('SELECT id FROM fb WHERE p <@ ''<(100,100),20>''::circle ORDER BY id',
                  'SELECT id FROM gi WHERE p <@ ''<(100,100),20>''::circle ORDER BY id',
                  'point <@ circle');
SELECT matches(fbr_plan('SELECT id FROM fb WHERE p <@ ''<(100,100),20>''::circle'), 'fb_p',
               'point <@ circle uses fbrtree_pm');
-- count(*) may scan an index only, which gives back no circle: the rows are counted
SELECT matches(fbr_plan('SELECT count(*) FROM shapes_f'), 'Index Only Scan', 'count(*) scans the index only');
SELECT is((SELECT count(*) FROM shapes_f), (SELECT count(*) FROM shapes_g), 'count(*) over the index');
SELECT is((SELECT count(*) FROM shapes_f WHERE pg && '((0,0),(30,30))'::polygon),
          (SELECT count(*) FROM shapes_g WHERE pg && '((0,0),(30,30))'::polygon), 'count(*) of a window');
SELECT lives_ok('SELECT fbrtree_pm_check(''shapes_fc'', true)', 'fbrtree_pm_check of circles');
SELECT lives_ok('SELECT fbrtree_pm_check(''shapes_fp'', true)', 'fbrtree_pm_check of polygons');

-- an empty index, then rows
CREATE TABLE empty_t (p point);
CREATE INDEX empty_p ON empty_t USING fbrtree_pm (p);
SELECT is_empty('SELECT * FROM empty_t WHERE p <@ box ''((0,0),(1,1))''', 'empty index returns nothing');
SELECT is_empty('SELECT * FROM empty_t ORDER BY p <-> ''(0,0)''', 'empty index, KNN');
INSERT INTO empty_t VALUES ('(1,1)'), (NULL), ('(0.5,0.5)');
SELECT results_eq('SELECT p::text FROM empty_t ORDER BY p <-> ''(0,0)''',
                  ARRAY['(0.5,0.5)', '(1,1)', NULL], 'first rows of an empty index, NULL last');

-- bad input
SELECT throws_ok('INSERT INTO empty_t VALUES (''(NaN,1)'')', '0A000', NULL, 'NaN coordinates are refused');
SELECT throws_ok('CREATE INDEX ON fb USING fbrtree_pm (id)', '42704', NULL, 'no operator class for int');
SELECT throws_ok('CREATE INDEX ON fb USING fbrtree_pm (b, p)', '0A000', NULL, 'no multi-column indexes');
SELECT throws_ok('CREATE UNIQUE INDEX ON fb USING fbrtree_pm (p)', '0A000', NULL, 'no unique indexes');
SELECT throws_ok('CREATE INDEX ON fb USING fbrtree_pm (p) WITH (pages = 3)', '22023', NULL, 'unknown option');
CREATE TEMP TABLE tmp_p (p point);
SELECT lives_ok('CREATE INDEX ON tmp_p USING fbrtree_pm (p)', 'temporary tables take it');
SELECT throws_ok('SELECT fbrtree_pm_check(''gi_p'')', '42809', NULL, 'fbrtree_pm_check of a GiST index');

SELECT * FROM finish();
RESET search_path;
DROP SCHEMA fbr_equiv CASCADE;
