-- The verifiers (nbtree_pm_check, fbrtree_pm_check): with heapallindexed they
-- find heap tuples the index lacks, as amcheck's bt_index_check does.  Rows
-- inserted while the index is not ready (pg_index.indisready) get no entry.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pm_index;

CREATE TABLE v (k int8, p point);
INSERT INTO v SELECT g, point(g, -g) FROM generate_series(1, 500) g;
INSERT INTO v VALUES (NULL, NULL);
CREATE INDEX v_k ON v USING nbtree_pm (k);
CREATE INDEX v_p ON v USING fbrtree_pm (p);
SELECT nbtree_pm_check('v_k', true), fbrtree_pm_check('v_p', true);

-- the wrong access method, and not an index
SELECT fbrtree_pm_check('v_k');
SELECT nbtree_pm_check('v');

-- rows that bypass both indexes: a NULL, a value and a duplicate
UPDATE pg_index SET indisready = false WHERE indexrelid IN ('v_k'::regclass, 'v_p'::regclass);
INSERT INTO v VALUES (NULL, NULL), (7, point(7, -7)), (1000, point(1000, 0));
UPDATE pg_index SET indisready = true WHERE indexrelid IN ('v_k'::regclass, 'v_p'::regclass);

-- the structures are sound; the heap check finds the three tuples
SELECT nbtree_pm_check('v_k'), fbrtree_pm_check('v_p');
SELECT nbtree_pm_check('v_k', true);
SELECT fbrtree_pm_check('v_p', true);

-- REINDEX makes them whole again
REINDEX TABLE v;
SELECT nbtree_pm_check('v_k', true), fbrtree_pm_check('v_p', true);

DROP TABLE v;
