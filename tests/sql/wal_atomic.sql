-- A change to a WAL-logged index and its WAL record are one unit: when the record cannot be
-- formed (pm_index.debug_wal_error fails it as running out of memory would), the pool is left
-- as it was, so no change a standby would never see stays in the primary's pool.  One table
-- per index, so that each access method's VACUUM and insert meet the failure.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pm_index;
CREATE TABLE wa_nbt (k int8);
CREATE TABLE wa_wide (t text COLLATE "C");
CREATE TABLE wa_phast (k int8);
CREATE TABLE wa_fbr (p point);
INSERT INTO wa_nbt SELECT generate_series(1, 2000);
INSERT INTO wa_wide SELECT repeat('w', 20) || g FROM generate_series(1, 2000) g;
INSERT INTO wa_phast SELECT generate_series(1, 2000);
INSERT INTO wa_fbr SELECT point(g, g) FROM generate_series(1, 2000) g;
CREATE INDEX wa_nbt_k ON wa_nbt USING nbtree_pm (k);
CREATE INDEX wa_wide_t ON wa_wide USING nbtree_pm (t);
CREATE INDEX wa_phast_k ON wa_phast USING phast_pm (k);
CREATE INDEX wa_fbr_p ON wa_fbr USING fbrtree_pm (p);
DELETE FROM wa_nbt WHERE k % 2 = 0;
DELETE FROM wa_wide WHERE right(t, 1) IN ('0', '2', '4', '6', '8');
DELETE FROM wa_phast WHERE k % 2 = 0;
DELETE FROM wa_fbr WHERE p[0]::int % 2 = 0;
CREATE VIEW wa_entries AS
  SELECT i AS index, (pm_index_stats(i)).entries
  FROM unnest('{wa_nbt_k,wa_wide_t,wa_phast_k,wa_fbr_p}'::regclass[]) i;
SELECT * FROM wa_entries;
SET pm_index.debug_wal_error = on;
-- VACUUM deletes no entry whose delete it cannot log
VACUUM wa_nbt;
VACUUM wa_wide;
VACUUM wa_phast;
VACUUM wa_fbr;
SELECT * FROM wa_entries;
-- an insert leaves no entry it cannot log
INSERT INTO wa_nbt VALUES (5000);
INSERT INTO wa_wide VALUES ('inserted');
INSERT INTO wa_phast VALUES (5000);
INSERT INTO wa_fbr VALUES (point(5000, 5000));
SELECT * FROM wa_entries;
RESET pm_index.debug_wal_error;
-- once records can be formed again, the same statements change the indexes
VACUUM wa_nbt, wa_wide, wa_phast, wa_fbr;
INSERT INTO wa_nbt VALUES (5000);
INSERT INTO wa_wide VALUES ('inserted');
INSERT INTO wa_phast VALUES (5000);
INSERT INTO wa_fbr VALUES (point(5000, 5000));
SELECT * FROM wa_entries;
SET enable_seqscan = off;
SELECT count(*) FROM wa_nbt WHERE k > 1500;
SELECT count(*) FROM wa_wide WHERE t >= 'i' AND t < 'w';
SELECT count(*) FROM wa_phast WHERE k > 1500;
SELECT count(*) FROM wa_fbr WHERE p <@ box(point(1500, 1500), point(10000, 10000));
SELECT nbtree_pm_check('wa_nbt_k', true), nbtree_pm_check('wa_wide_t', true),
       phast_pm_check('wa_phast_k', true), fbrtree_pm_check('wa_fbr_p', true);
DROP TABLE wa_nbt, wa_wide, wa_phast, wa_fbr CASCADE;
