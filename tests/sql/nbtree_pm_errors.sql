-- nbtree_pm: clear errors for what it does not support, and the planner's choices.
-- in a database of its own: the extension's whole life, and no other test's indexes
SELECT current_database() AS origdb \gset
CREATE DATABASE pm_index_errors;
\c pm_index_errors
CREATE EXTENSION pm_index;
CREATE TABLE e (i int4, j int4, t text, u uuid);

-- unsupported type: no operator class
CREATE INDEX ON e USING nbtree_pm ((point(i, j)));
-- an operator class of the wrong type
CREATE INDEX ON e USING nbtree_pm (i float8_ops);
-- multicolumn: nbtree_pm's keys take several columns, phast_pm's one column's 8 bytes
CREATE INDEX ON e USING phast_pm (i, j);
-- unsupported and invalid options
CREATE INDEX ON e USING nbtree_pm (i) WITH (pages_per_range = 4);
CREATE INDEX ON e USING nbtree_pm (i) WITH (fillfactor = 5);
CREATE INDEX e_ff ON e USING nbtree_pm (i) WITH (fillfactor = 70);
SELECT reloptions FROM pg_class WHERE relname = 'e_ff';
-- the verifier and stats take only nbtree_pm indexes
CREATE INDEX e_btree ON e (j);
SELECT nbtree_pm_check('e_btree');
SELECT * FROM pm_index_stats('e_btree');
SELECT nbtree_pm_check('e');

-- operator classes validate
SELECT opcname, amvalidate(opc.oid) AS valid
  FROM pg_opclass opc JOIN pg_am am ON am.oid = opc.opcmethod
 WHERE amname = 'nbtree_pm' ORDER BY opcname;

-- the planner: nbtree_pm where btree would be used, a sequential scan where that is cheaper
INSERT INTO e SELECT g, g % 10, 'x', NULL FROM generate_series(1, 10000) g;
ANALYZE e;
EXPLAIN (COSTS OFF) SELECT * FROM e WHERE i = 42;
EXPLAIN (COSTS OFF) SELECT * FROM e WHERE i BETWEEN 10 AND 20;
EXPLAIN (COSTS OFF) SELECT count(*) FROM e WHERE i > 0;
EXPLAIN (COSTS OFF) SELECT i FROM e ORDER BY i LIMIT 3;
SELECT i FROM e WHERE i IN (3, 1, 2) ORDER BY i DESC;

-- a pool per index; DROP removes it at commit
SELECT count(*) AS pools, bool_and(state = 'in use') AS all_in_use
  FROM pm_index_pools() WHERE index = 'e_ff'::regclass;
BEGIN;
DROP INDEX e_ff;
SELECT count(*) AS pools_before_commit FROM pm_index_pools() WHERE state = 'orphan'
   AND database = (SELECT oid FROM pg_database WHERE datname = current_database());
ROLLBACK;
SELECT count(*) AS pools_after_rollback FROM pm_index_pools() WHERE index = 'e_ff'::regclass;
DROP TABLE e;
SELECT count(*) AS pools_left FROM pm_index_pools()
 WHERE database = (SELECT oid FROM pg_database WHERE datname = current_database());
DROP EXTENSION pm_index;
\c :origdb
DROP DATABASE pm_index_errors;
