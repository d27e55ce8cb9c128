-- Every access method's reloptions reach its build: an index built WITH (fillfactor = 50) has
-- about twice the leaves of one built WITH (fillfactor = 100) on the same rows; the stored
-- options, and the range and unknown-option errors.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pm_index;

CREATE TABLE ro (k int8, p point);
INSERT INTO ro SELECT g, point(g % 100, g / 100) FROM generate_series(1, 20000) g;
CREATE INDEX ro_nbt_full ON ro USING nbtree_pm (k) WITH (fillfactor = 100);
CREATE INDEX ro_nbt_half ON ro USING nbtree_pm (k) WITH (fillfactor = 50);
CREATE INDEX ro_ph_full ON ro USING phast_pm (k) WITH (fillfactor = 100);
CREATE INDEX ro_ph_half ON ro USING phast_pm (k) WITH (fillfactor = 50);
CREATE INDEX ro_fbr_full ON ro USING fbrtree_pm (p) WITH (fillfactor = 100);
CREATE INDEX ro_fbr_half ON ro USING fbrtree_pm (p) WITH (fillfactor = 50);
SELECT am, (SELECT leaves FROM pm_index_stats(format('ro_%s_half', am)::regclass))::float8
         / (SELECT leaves FROM pm_index_stats(format('ro_%s_full', am)::regclass)) BETWEEN 1.6 AND 2.4
         AS twice_the_leaves
  FROM unnest(ARRAY['nbt', 'ph', 'fbr']) am;
SELECT relname, reloptions FROM pg_class WHERE relname LIKE 'ro\_%\_half' ORDER BY relname;

-- out of range, unknown
CREATE INDEX ON ro USING fbrtree_pm (p) WITH (fillfactor = 101);
CREATE INDEX ON ro USING phast_pm (k) WITH (fillfactor = 9);
CREATE INDEX ON ro USING nbtree_pm (k) WITH (buffering = on);
ALTER INDEX ro_nbt_full SET (fillfactor = 70);
SELECT reloptions FROM pg_class WHERE relname = 'ro_nbt_full';

DROP TABLE ro;
