-- Unique indexes of the ordered access methods: what btree reports, and what PostgreSQL
-- reserves for btree.
CREATE EXTENSION IF NOT EXISTS pm_index;
SET client_min_messages = warning;

CREATE TABLE u (id serial, k int4, f float8);
INSERT INTO u (k, f) SELECT g, g FROM generate_series(1, 100) g;
INSERT INTO u (k, f) VALUES (7, '-0'), (NULL, NULL), (NULL, NULL);

-- a build finds a duplicate, names it, and leaves no index behind
CREATE UNIQUE INDEX u_k ON u USING nbtree_pm (k);
SELECT count(*) FROM pg_class WHERE relname = 'u_k';
DELETE FROM u WHERE k = 7 AND f::text = '-0';
CREATE UNIQUE INDEX u_k ON u USING nbtree_pm (k);
-- -0 and 0 are one value
INSERT INTO u (k, f) VALUES (1000, '0'), (1001, '-0');
CREATE UNIQUE INDEX u_f ON u USING phast_pm (f);
DELETE FROM u WHERE k = 1000;
CREATE UNIQUE INDEX u_f ON u USING phast_pm (f);

-- inserts and updates: duplicates refused as btree refuses them; NULLs are distinct
INSERT INTO u (k) VALUES (5);
INSERT INTO u (f) VALUES (0.0);
UPDATE u SET k = 6 WHERE k = 5;
UPDATE u SET k = k + 1000 WHERE k <= 3;
INSERT INTO u (k) VALUES (1), (NULL), (NULL);
SELECT count(*) FILTER (WHERE k IS NULL) AS nulls, count(DISTINCT k) = count(k) AS distinct_keys FROM u;
-- a row deleted and its value inserted again, in one transaction and across two
BEGIN;
DELETE FROM u WHERE k = 50;
INSERT INTO u (k) VALUES (50);
COMMIT;
DELETE FROM u WHERE k = 51;
INSERT INTO u (k) VALUES (51);
-- a failed insert leaves nothing the next insert conflicts with
INSERT INTO u (k) VALUES (52), (52);
SELECT count(*) FROM u WHERE k = 52;
SET enable_seqscan = off;
SELECT k FROM u WHERE k BETWEEN 49 AND 53 ORDER BY k;
RESET enable_seqscan;

-- CREATE UNIQUE INDEX CONCURRENTLY: a duplicate leaves an invalid index, as with btree
CREATE TABLE c (k int4);
INSERT INTO c VALUES (1), (2), (2);
CREATE UNIQUE INDEX CONCURRENTLY c_k ON c USING nbtree_pm (k);
SELECT indisvalid FROM pg_index WHERE indexrelid = 'c_k'::regclass;
DROP INDEX c_k;
DELETE FROM c WHERE ctid = (SELECT max(ctid) FROM c WHERE k = 2);
CREATE UNIQUE INDEX CONCURRENTLY c_k ON c USING nbtree_pm (k);
INSERT INTO c VALUES (2);
REINDEX INDEX CONCURRENTLY c_k;
INSERT INTO c VALUES (1);
DROP TABLE c;

-- NULLS NOT DISTINCT
CREATE TABLE n (k int8);
INSERT INTO n VALUES (1), (NULL), (NULL);
CREATE UNIQUE INDEX n_k ON n USING nbtree_pm (k) NULLS NOT DISTINCT;
DELETE FROM n WHERE k IS NULL;
CREATE UNIQUE INDEX n_k ON n USING nbtree_pm (k) NULLS NOT DISTINCT;
INSERT INTO n VALUES (NULL);
INSERT INTO n VALUES (NULL);
-- int8's largest value and NULL share a key, and are still different values
INSERT INTO n VALUES (9223372036854775807);
INSERT INTO n VALUES (9223372036854775807);
SELECT k FROM n ORDER BY k;

-- what PostgreSQL runs only with btree: ON CONFLICT, constraints made from an index, and
-- before 18 foreign keys
CREATE TABLE child (k int4 REFERENCES u (k));
INSERT INTO child VALUES (-1);
DROP TABLE IF EXISTS child;
INSERT INTO u (k) VALUES (5) ON CONFLICT DO NOTHING;
INSERT INTO u (k) VALUES (5) ON CONFLICT (k) DO UPDATE SET f = 1;
WITH w AS (INSERT INTO u (k) VALUES (5) ON CONFLICT DO NOTHING RETURNING 1) SELECT * FROM w;
EXPLAIN (COSTS OFF) INSERT INTO u (k) VALUES (5) ON CONFLICT DO NOTHING;
ALTER TABLE u ADD CONSTRAINT u_k_unique UNIQUE USING INDEX u_k;
-- the alternative for ON CONFLICT DO NOTHING: an exclusion constraint
CREATE TABLE x (k int4, EXCLUDE USING nbtree_pm (k WITH =));
INSERT INTO x VALUES (1), (2);
INSERT INTO x VALUES (1);
INSERT INTO x VALUES (1), (3) ON CONFLICT DO NOTHING;
SELECT k FROM x ORDER BY k;

-- by name too, for DO NOTHING; DO UPDATE takes no exclusion constraint (PostgreSQL)
INSERT INTO x VALUES (2), (4) ON CONFLICT ON CONSTRAINT x_k_excl DO NOTHING;
INSERT INTO x VALUES (4) ON CONFLICT ON CONSTRAINT x_k_excl DO UPDATE SET k = 5;
SELECT k FROM x ORDER BY k;

-- a unique nbtree_pm index beside a btree primary key: ON CONFLICT on the primary key is refused
-- too, as PostgreSQL checks every unique index of the table; MERGE is the upsert that works (two
-- sessions inserting one new key at once: one fails with 23505 and retries)
CREATE TABLE acc (id int8 PRIMARY KEY, email text COLLATE "C", n int);
CREATE UNIQUE INDEX acc_email ON acc USING nbtree_pm (email);
INSERT INTO acc VALUES (1, 'a@x', 0);
INSERT INTO acc VALUES (1, 'a@x', 0) ON CONFLICT (id) DO UPDATE SET n = acc.n + 1;
MERGE INTO acc a USING (VALUES (1::int8, 'a@x'), (2, 'b@x')) v(id, email) ON a.id = v.id
  WHEN MATCHED THEN UPDATE SET n = a.n + 1
  WHEN NOT MATCHED THEN INSERT VALUES (v.id, v.email, 0);
MERGE INTO acc a USING (VALUES (3::int8, 'a@x')) v(id, email) ON a.id = v.id
  WHEN MATCHED THEN UPDATE SET n = a.n + 1
  WHEN NOT MATCHED THEN INSERT VALUES (v.id, v.email, 0);
MERGE INTO acc a USING (VALUES ('a@x')) v(email) ON a.email = v.email
  WHEN MATCHED THEN UPDATE SET n = a.n + 1
  WHEN NOT MATCHED THEN DO NOTHING;
SELECT * FROM acc ORDER BY id;

-- a partitioned table: PostgreSQL takes only btree for a unique index on the partitioned table;
-- one on each partition is taken, and refuses ON CONFLICT too
CREATE TABLE p (k int4) PARTITION BY RANGE (k);
CREATE UNIQUE INDEX ON p USING nbtree_pm (k);
CREATE TABLE p1 PARTITION OF p FOR VALUES FROM (0) TO (100);
CREATE UNIQUE INDEX p1_k ON p1 USING nbtree_pm (k);
INSERT INTO p VALUES (1);
INSERT INTO p VALUES (1);
INSERT INTO p VALUES (1) ON CONFLICT DO NOTHING;

DROP TABLE u, n, x, acc, p;
