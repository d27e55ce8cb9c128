-- fbrtree_pm on domains over point and box, and CLUSTER through an fbrtree_pm index: answers
-- equal to a sequential scan's (sequential scans off for the index's answer).
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pm_index;
CREATE DOMAIN fpar_pt AS point;
CREATE DOMAIN fpar_bx AS box CHECK (VALUE IS NOT NULL);
CREATE TABLE fpar (id int, p fpar_pt, b fpar_bx);
INSERT INTO fpar SELECT g, point(g % 50, g / 50), box(point(g % 50, g / 50), point(g % 50 + 2, g / 50 + 1))
  FROM generate_series(1, 2500) g;
CREATE INDEX fpar_p ON fpar USING fbrtree_pm (p);
CREATE INDEX fpar_b ON fpar USING fbrtree_pm (b);
VACUUM ANALYZE fpar;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM fpar WHERE p <@ box(point(10, 10), point(12, 12));
SELECT array_agg(id ORDER BY id) FROM fpar WHERE p <@ box(point(10, 10), point(12, 12));
SELECT p FROM fpar ORDER BY p <-> point(20.2, 20.3) LIMIT 3;
EXPLAIN (COSTS OFF) SELECT id FROM fpar WHERE b && box(point(10, 10), point(11, 11));
SELECT count(*) FROM fpar WHERE b && box(point(10, 10), point(11, 11));
SELECT fbrtree_pm_check('fpar_p', true), fbrtree_pm_check('fpar_b', true);
RESET enable_seqscan;
RESET enable_bitmapscan;
SET enable_indexscan = off;
SET enable_indexonlyscan = off;
SET enable_bitmapscan = off;
SELECT array_agg(id ORDER BY id) FROM fpar WHERE p <@ box(point(10, 10), point(12, 12));
SELECT count(*) FROM fpar WHERE b && box(point(10, 10), point(11, 11));
RESET enable_indexscan;
RESET enable_indexonlyscan;
RESET enable_bitmapscan;
-- CLUSTER through fbrtree_pm: the heap follows the tree's leaves; the indexes are rebuilt
CLUSTER fpar USING fpar_p;
SELECT indisclustered FROM pg_index WHERE indexrelid = 'fpar_p'::regclass;
SET enable_seqscan = off;
SELECT count(*) FROM fpar WHERE p <@ box(point(10, 10), point(12, 12));
SELECT fbrtree_pm_check('fpar_p', true), fbrtree_pm_check('fpar_b', true);
RESET enable_seqscan;
-- ORDER BY two distances: a scan orders by one, so the plan sorts (GiST orders by both)
EXPLAIN (COSTS OFF) SELECT id FROM fpar ORDER BY p <-> point(1, 1), p <-> point(30, 30) LIMIT 3;
SELECT id FROM fpar ORDER BY p <-> point(1, 1), p <-> point(30, 30), id LIMIT 3;
DROP TABLE fpar;
DROP DOMAIN fpar_pt, fpar_bx;
