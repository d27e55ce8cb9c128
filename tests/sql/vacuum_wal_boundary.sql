-- VACUUM flushes WAL before it removes index entries (a PM delete is durable at once, the
-- deleting transaction's commit only once flushed).  Right after a WAL segment switch the
-- insert position lies past the new page's header, where nothing has been written: the flush
-- must stop at the page boundary instead of failing.  The heaps are pruned beforehand (all
-- their pages are full, so a scan prunes each), so VACUUM writes no WAL before the index.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pm_index;
CREATE TABLE vw_nbt (k int, p point);
CREATE TABLE vw_fbr (k int, p point);
INSERT INTO vw_nbt SELECT g, point(g, g) FROM generate_series(1, 157 * 32) g;
INSERT INTO vw_fbr SELECT * FROM vw_nbt;
SELECT pg_relation_size('vw_nbt') / current_setting('block_size')::int AS full_pages;
CREATE INDEX vw_nbt_k ON vw_nbt USING nbtree_pm (k);
CREATE INDEX vw_fbr_p ON vw_fbr USING fbrtree_pm (p);
DELETE FROM vw_nbt WHERE k % 4 = 0;
DELETE FROM vw_fbr WHERE k % 4 = 0;
SELECT count(*) FROM vw_nbt;
SELECT count(*) FROM vw_fbr;
CHECKPOINT;
SELECT pg_switch_wal() IS NOT NULL AS switched;
VACUUM vw_nbt;
CHECKPOINT;
SELECT pg_switch_wal() IS NOT NULL AS switched;
VACUUM vw_fbr;
SET enable_seqscan = off;
SELECT count(*) FROM vw_nbt WHERE k <= 100;
SELECT count(*) FROM vw_fbr WHERE p <@ box(point(0, 0), point(100, 100));
DROP TABLE vw_nbt, vw_fbr;
