-- The start of a pgTAP file that runs once per ordered access method: the access method is the
-- psql variable am (tests/run sets it: pg_prove --set am=phast_pm), nbtree_pm without it, and
-- the setting <schema>.am for functions; the file works in a fresh schema, the psql variable
-- schema, which it drops at the end.
\if :{?am}
\else
\set am nbtree_pm
\endif
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS pm_index;
DROP SCHEMA IF EXISTS :schema CASCADE;
CREATE SCHEMA :schema;
SET search_path = :schema, public;
SELECT set_config(:'schema' || '.am', :'am', false) \gset
