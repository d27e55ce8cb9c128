-- An OR with an AND arm and an arm that is a boolean column as a condition, on a table with a
-- pm_index index on that column: planned and answered as btree answers (the count each query
-- returns with a btree index is in the comment above it), by whatever plan the planner takes
-- and through the index.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pm_index;
CREATE TABLE bor (a int, b bool);
INSERT INTO bor VALUES (1, true), (2, false), (3, NULL);
CREATE INDEX bor_nbt ON bor USING nbtree_pm (b);
-- btree: 2
SELECT count(*) FROM bor WHERE (a > 0 AND a < 2) OR NOT b;
-- btree: 2
SELECT count(*) FROM bor WHERE (a > 1 AND a < 3) OR b;
-- btree: 3
SELECT count(*) FROM bor WHERE (a > 2 AND b IS NULL) OR b IS FALSE OR (a < 2 AND (a = 0 OR b));
DROP INDEX bor_nbt;
CREATE INDEX bor_ph ON bor USING phast_pm (b);
-- btree: 2
SELECT count(*) FROM bor WHERE (a > 0 AND a < 2) OR NOT b;
-- through the index: an OR of the two arms' index conditions (BitmapOr)
CREATE TABLE bor2 (a int, b bool);
INSERT INTO bor2 SELECT g, CASE g % 3 WHEN 0 THEN true WHEN 1 THEN false END FROM generate_series(1, 3000) g;
CREATE INDEX bor2_a ON bor2 USING nbtree_pm (a);
CREATE INDEX bor2_b ON bor2 USING nbtree_pm (b);
VACUUM ANALYZE bor2;
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM bor2 WHERE (a > 10 AND a < 20) OR b IS FALSE;
-- btree: 1006
SELECT count(*) FROM bor2 WHERE (a > 10 AND a < 20) OR b IS FALSE;
RESET enable_seqscan;
DROP TABLE bor, bor2;
