-- nbtree_pm on text in ICU collations, wide keys: ICU's order, then the bytes of strings it
-- finds equal; a nondeterministic collation's equal strings are one value; the key size limit
-- counts the collation's sort key.  Every answer is compared with a sequential scan's.
CREATE EXTENSION IF NOT EXISTS pm_index;
SET client_min_messages = warning;
\getenv abs_srcdir PG_ABS_SRCDIR
\set answers_sql :abs_srcdir '/sql/include/answers.sql'
\i :answers_sql

CREATE COLLATION pm_icu_en (provider = icu, locale = 'en');
CREATE COLLATION pm_icu_ci (provider = icu, locale = 'en-u-ks-level2', deterministic = false);
CREATE TABLE wc (id serial, c text COLLATE pm_icu_en, ci text COLLATE pm_icu_ci, ch char(5) COLLATE pm_icu_ci);
INSERT INTO wc (c, ci, ch) SELECT x, x, x
  FROM unnest('{a,A,b,B,á,Á,ab,aB,Ab,a-b,"a b",co-op,coop,Coop,ß,ss,SS,æ,ae,"",z,Z,1,10,2}'::text[]) x;
CREATE INDEX wc_c ON wc USING nbtree_pm (c);
CREATE INDEX wc_ci ON wc USING nbtree_pm (ci);
CREATE INDEX wc_ch ON wc USING nbtree_pm (ch);
SELECT answers($$SELECT c FROM wc ORDER BY c$$);
SELECT answers($$SELECT c FROM wc WHERE c >= 'B' AND c < 'ss' ORDER BY c DESC$$);
SELECT answers($$SELECT row(ci) FROM wc WHERE ci = 'AB' ORDER BY id$$);
SELECT answers($$SELECT row(ch) FROM wc WHERE ch = 'SS ' ORDER BY id$$);
SELECT string_agg(c, ' ' ORDER BY c) FROM wc;
SELECT nbtree_pm_check(i, true) FROM unnest('{wc_c,wc_ci,wc_ch}'::regclass[]) i;
CREATE UNIQUE INDEX ON wc USING nbtree_pm (c);
CREATE UNIQUE INDEX ON wc USING nbtree_pm (ci);

-- the key size limit counts the collation's sort key
CREATE TABLE wl (c text COLLATE pm_icu_en);
CREATE INDEX wl_c ON wl USING nbtree_pm (c);
INSERT INTO wl (c) VALUES (repeat('x', 32000));
INSERT INTO wl (c) VALUES (repeat('x', 48000));
SELECT count(*) FROM wl;
DROP TABLE wc, wl;
DROP COLLATION pm_icu_en, pm_icu_ci;
DROP FUNCTION answers(text);
