-- Scroll cursors over ordered index scans that run off an end and turn: each FETCH returns
-- what btree's returns (in the comment above it).
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pm_index;
CREATE TABLE sc (k int);
INSERT INTO sc SELECT generate_series(1, 10);
CREATE INDEX sc_nbt ON sc USING nbtree_pm (k);
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT k FROM sc ORDER BY k DESC;
BEGIN;
DECLARE cc SCROLL CURSOR FOR SELECT k FROM sc ORDER BY k DESC;
-- btree: 1
FETCH LAST FROM cc;
-- btree: no rows
FETCH 20 FROM cc;
-- btree: 2
FETCH RELATIVE -2 FROM cc;
-- btree: 10
FETCH FIRST FROM cc;
-- btree: no rows
FETCH BACKWARD 3 FROM cc;
-- btree: 10, 9
FETCH 2 FROM cc;
COMMIT;
-- through a plain index scan, on phast_pm
DROP INDEX sc_nbt;
CREATE INDEX sc_ph ON sc USING phast_pm (k);
SET enable_indexonlyscan = off;
EXPLAIN (COSTS OFF) SELECT k FROM sc ORDER BY k DESC;
BEGIN;
DECLARE cc SCROLL CURSOR FOR SELECT k FROM sc ORDER BY k DESC;
-- btree: 1
FETCH LAST FROM cc;
-- btree: no rows
FETCH 20 FROM cc;
-- btree: 2
FETCH RELATIVE -2 FROM cc;
-- btree: 8
FETCH ABSOLUTE 3 FROM cc;
-- btree: 9, 10
FETCH BACKWARD 5 FROM cc;
-- btree: 10
FETCH NEXT FROM cc;
COMMIT;
RESET enable_indexonlyscan;
DROP TABLE sc;
