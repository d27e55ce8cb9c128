-- DROP DATABASE removes the pools of that database's indexes when it commits.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pm_index;
SELECT current_database() AS origdb \gset
CREATE DATABASE pm_dropdb;
\c pm_dropdb
SET client_min_messages = warning;
CREATE EXTENSION pm_index;
CREATE TABLE t (k int, p point);
INSERT INTO t SELECT g, point(g, g) FROM generate_series(1, 1000) g;
CREATE INDEX ON t USING nbtree_pm (k);
CREATE INDEX ON t USING fbrtree_pm (p);
SET enable_seqscan = off;
SELECT count(*) FROM t WHERE k < 10;
\c :origdb
SELECT oid AS dropped FROM pg_database WHERE datname = 'pm_dropdb' \gset
SELECT count(*) AS pools_before FROM pm_index_pools() WHERE database = :dropped;
DROP DATABASE pm_dropdb;
SELECT count(*) AS pools_after FROM pm_index_pools() WHERE database = :dropped;
