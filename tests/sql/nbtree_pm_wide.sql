-- nbtree_pm on uuid, bytea, text, numeric, interval, inet, char(n) and name: keys longer than the 8 bytes an entry holds (wide keys).
-- Every answer is compared with a sequential scan's on the same table.
CREATE EXTENSION IF NOT EXISTS pm_index;
SET client_min_messages = warning;

CREATE TABLE w (id serial, u uuid, b bytea, t text COLLATE "C");
INSERT INTO w (u, b, t)
SELECT md5(g::text)::uuid,
       decode(repeat(lpad(to_hex(g % 256), 2, '0'), g % 20), 'hex'),
       'prefix_common_' || (g * 7919 % 1000)::text
  FROM generate_series(1, 3000) g;
INSERT INTO w (u, b, t) VALUES (NULL, NULL, NULL), (NULL, '\x', ''), ('00000000-0000-0000-0000-000000000000', '\x00', 'a');
CREATE INDEX w_u ON w USING nbtree_pm (u);
CREATE INDEX w_b ON w USING nbtree_pm (b);
CREATE INDEX w_t ON w USING nbtree_pm (t);
SELECT nbtree_pm_check('w_u', true), nbtree_pm_check('w_b', true), nbtree_pm_check('w_t', true);

-- the same answers through the index (index, index-only, bitmap) as by a sequential scan
\getenv abs_srcdir PG_ABS_SRCDIR
\set answers_sql :abs_srcdir '/sql/include/answers.sql'
\i :answers_sql
SELECT answers($$SELECT t FROM w WHERE t = 'prefix_common_17' ORDER BY t$$);
SELECT answers($$SELECT t FROM w WHERE t >= 'prefix_common_5' AND t < 'prefix_common_51' ORDER BY t$$);
SELECT answers($$SELECT t FROM w WHERE t < 'prefix_common_1' ORDER BY t DESC$$);
SELECT answers($$SELECT t FROM w WHERE t > 'prefix_common_998' ORDER BY t$$);
SELECT answers($$SELECT t FROM w WHERE t IN ('a', '', 'prefix_common_0', 'zzz') ORDER BY t$$);
SELECT answers($$SELECT id FROM w WHERE t = 'prefix_common_42' ORDER BY id$$);
SELECT answers($$SELECT b FROM w WHERE b > '\x0505' AND b <= '\x06060606' ORDER BY b$$);
SELECT answers($$SELECT b FROM w WHERE b = '\x' OR b = '\x00' ORDER BY b$$);
SELECT answers($$SELECT u FROM w WHERE u < '10000000-0000-0000-0000-000000000000' ORDER BY u$$);
SELECT answers($$SELECT u FROM w WHERE u = 'c4ca4238-a0b9-2382-0dcc-509a6f75849b'$$);
SELECT answers($$SELECT u FROM w ORDER BY u DESC NULLS LAST LIMIT 5$$);
SELECT answers($$SELECT t FROM w WHERE t IS NULL$$);
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT t FROM w WHERE t >= 'prefix_common_5' AND t < 'prefix_common_51' ORDER BY t;
RESET enable_bitmapscan;

-- changes and VACUUM: the index still holds exactly the table
DELETE FROM w WHERE id % 3 = 0;
UPDATE w SET t = t || '_updated' WHERE id % 5 = 0;
VACUUM w;
SELECT nbtree_pm_check('w_u', true), nbtree_pm_check('w_b', true), nbtree_pm_check('w_t', true);
SELECT answers($$SELECT t FROM w WHERE t >= 'prefix_common_5' ORDER BY t$$);

-- builds that sort on disk (maintenance_work_mem of 1 MB): the entry made when the sort spills
-- keeps its record
CREATE TABLE ws AS SELECT md5(g::text)::uuid AS u, md5(g::text) COLLATE "C" AS t FROM generate_series(1, 60000) g;
SET maintenance_work_mem = '1MB';
CREATE UNIQUE INDEX ws_u ON ws USING nbtree_pm (u);
CREATE INDEX ws_t ON ws USING nbtree_pm (t);
RESET maintenance_work_mem;
SELECT nbtree_pm_check('ws_u', true), nbtree_pm_check('ws_t', true);
SELECT answers($$SELECT t FROM ws WHERE t >= 'ab' AND t < 'ac' ORDER BY t$$);
DROP TABLE ws;

-- a merge join reads a wide index in order with mark and restore
SET enable_hashjoin = off; SET enable_nestloop = off; SET enable_sort = off; SET enable_seqscan = off;
SELECT count(*) FROM w x JOIN w y ON x.t = y.t;
EXPLAIN (COSTS OFF) SELECT count(*) FROM w x JOIN w y ON x.t = y.t;
RESET ALL;
SET client_min_messages = warning;

-- numeric, interval, inet, char(n), varchar and name: values that btree finds equal but that
-- are stored apart (1.0 and 1.00, '1 mon' and '30 days', trailing spaces) come back from an
-- index-only scan as stored
CREATE TABLE o (id serial, n numeric, n2 numeric(10, 2), i interval, a inet, c cidr, ch char(6),
                bp bpchar, vc varchar(20), nm name);
INSERT INTO o (n, n2, i, a, c, ch, bp, vc, nm)
SELECT (g % 50 - 25)::numeric / 4, (g % 50 - 25)::numeric / 4,
       make_interval(months => g % 3, days => g % 45, hours => g % 30),
       format('10.%s.%s.%s/%s', g % 3, g % 7, g % 256, 8 + g % 25)::inet,
       set_masklen(format('10.%s.%s.0', g % 3, g % 7)::inet, 8 + g % 17)::cidr,
       'k' || (g % 40), 'k' || (g % 40) || repeat(' ', g % 3), 'k' || (g % 40) || repeat(' ', g % 2),
       'k' || (g % 40)
  FROM generate_series(1, 2000) g;
INSERT INTO o (n, n2, i, a, c, ch, bp, vc, nm)
VALUES (NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
       (1.0, 1.0, '1 mon', '::1', '2001:db8::/32', '', '', '', ''),
       (1.00, 1.00, '30 days', '::1/64', '::/0', 'a', 'a ', 'a ', 'a'),
       ('NaN', 99999999.99, '720 hours', '255.255.255.255', '0.0.0.0/0', 'abcdef', 'abcdefghijk', 'abcdefghijklmnopqrst', repeat('z', 63)),
       ('-Infinity', -99999999.99, '-178000000 years', '0.0.0.0/0', '10.0.0.0/8', ' ', '   ', ' ', ' '),
       (1e-300, 0, '1 day -1 hour', '10.1.2.3/24', '10.1.2.0/24', 'é', 'é', 'é', 'é');
CREATE INDEX o_n ON o USING nbtree_pm (n);
CREATE INDEX o_n2 ON o USING nbtree_pm (n2);
CREATE INDEX o_i ON o USING nbtree_pm (i);
CREATE INDEX o_a ON o USING nbtree_pm (a);
CREATE INDEX o_c ON o USING nbtree_pm (c);
CREATE INDEX o_ch ON o USING nbtree_pm (ch);
CREATE INDEX o_bp ON o USING nbtree_pm (bp);
CREATE INDEX o_vc ON o USING nbtree_pm (vc);
CREATE INDEX o_nm ON o USING nbtree_pm (nm);
SELECT answers($$SELECT row(n) FROM o WHERE n = 1 ORDER BY n, id$$);
SELECT answers($$SELECT row(n) FROM o WHERE n >= -2.5 AND n < 1.25 ORDER BY n DESC, id$$);
SELECT answers($$SELECT row(n) FROM o WHERE n > 6 ORDER BY n, id$$);
SELECT answers($$SELECT row(n2) FROM o WHERE n2 <= 0 ORDER BY n2, id$$);
SELECT answers($$SELECT row(i) FROM o WHERE i = '1 mon' ORDER BY i, id$$);
SELECT answers($$SELECT row(i) FROM o WHERE i > '2 mons' ORDER BY i, id$$);
SELECT answers($$SELECT row(a) FROM o WHERE a << '10.1.0.0/16' OR a >= '10.2.3.0/24' ORDER BY a, id$$);
SELECT answers($$SELECT row(a) FROM o WHERE a < '10.0.0.0/16' ORDER BY a, id$$);
SELECT answers($$SELECT row(c) FROM o WHERE c = '10.1.0.0/16' ORDER BY c, id$$);
SELECT answers($$SELECT row(ch) FROM o WHERE ch = 'k1' ORDER BY ch, id$$);
SELECT answers($$SELECT row(ch) FROM o WHERE ch < 'k1 ' ORDER BY ch, id$$);
SELECT answers($$SELECT row(bp) FROM o WHERE bp = 'k1' ORDER BY bp, id$$);
SELECT answers($$SELECT row(vc) FROM o WHERE vc >= 'k3' AND vc < 'k4' ORDER BY vc, id$$);
SELECT answers($$SELECT row(nm) FROM o WHERE nm = 'k17'::text ORDER BY nm, id$$);
SELECT answers($$SELECT row(nm) FROM o WHERE nm > 'k38'::text ORDER BY nm, id$$);
SELECT answers($$SELECT row(nm) FROM o WHERE nm < 'k1' ORDER BY nm, id$$);
SET enable_seqscan = off; SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT n FROM o WHERE n = 1;
EXPLAIN (COSTS OFF) SELECT nm FROM o WHERE nm > 'k38'::text;
EXPLAIN (COSTS OFF) SELECT c FROM o WHERE c = '10.1.0.0/16';
RESET enable_seqscan; RESET enable_bitmapscan;
SELECT nbtree_pm_check(i, true) FROM unnest('{o_n,o_n2,o_i,o_a,o_c,o_ch,o_bp,o_vc,o_nm}'::regclass[]) i;
-- the display scale, an interval's fields and the spaces are the rows' own; equal values, one
CREATE UNIQUE INDEX o_n_unique ON o USING nbtree_pm (n) WHERE id > 2000;
CREATE UNIQUE INDEX o_i_unique ON o USING nbtree_pm (i) WHERE id > 2000;
CREATE UNIQUE INDEX o_bp_unique ON o USING nbtree_pm (bp) WHERE id > 2000;

-- unique: a duplicate names its value
CREATE UNIQUE INDEX w_t_unique ON w USING nbtree_pm (t);
CREATE TABLE wu (t text COLLATE "C", v bytea);
CREATE UNIQUE INDEX wu_t ON wu USING nbtree_pm (t);
INSERT INTO wu VALUES ('prefix_common_unique_value', '\x01');
INSERT INTO wu VALUES ('prefix_common_unique_value', '\x02');
INSERT INTO wu VALUES ('prefix_common_unique_valuf', '\x03');

-- what stays unsupported says so
CREATE TABLE wn (t text);
CREATE INDEX ON wn USING phast_pm (t);
INSERT INTO wu VALUES (repeat('x', 70000), NULL);
SELECT count(*) FROM wu;
-- the key size limit counts the value's uncompressed bytes (btree's, 2704, counts them after
-- compression; in a collation's sort key: nbtree_pm_wide_icu)
CREATE TABLE wl (t text COLLATE "C");
CREATE INDEX wl_btree ON wl (t);
INSERT INTO wl (t) VALUES (repeat('x', 70000));
SELECT octet_length(t), pg_column_size(t) FROM wl;
CREATE INDEX wl_t ON wl USING nbtree_pm (t);
TRUNCATE wl;
CREATE INDEX wl_t ON wl USING nbtree_pm (t);
INSERT INTO wl (t) VALUES (repeat('x', 65525));
INSERT INTO wl (t) VALUES (repeat('x', 65526));
INSERT INTO wl (t) VALUES (repeat('€', 21841));
INSERT INTO wl (t) VALUES (repeat('€', 21842));
SELECT count(*) FROM wl;
DROP TABLE w, wu, wn, o, wl;
DROP FUNCTION answers(text);
