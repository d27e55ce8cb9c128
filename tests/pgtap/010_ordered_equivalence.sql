-- An ordered access method of pm_index returns exactly btree's rows: every type, operator,
-- cross-type pair, NULLs, IN-lists, ORDER BY both ways with LIMIT, index-only and bitmap scans,
-- mark/restore, duplicates, builds, VACUUM, empty tables.  Two identical tables, one indexed
-- with the access method and one with btree.
-- The access method is the psql variable am (tests/run runs the file once per ordered access
-- method: pg_prove --set am=phast_pm); nbtree_pm without it.
-- Runs outside a transaction block (VACUUM), in a scratch schema dropped at the end.
\set schema pm_equiv
\ir ../lib/ordered_pgtap.sql

SELECT * FROM no_plan();
SELECT setseed(0.4242);
CREATE TABLE pm (id int, i2 int2, i4 int4, i8 int8, o oid, d date, tm time, ts timestamp,
                 tz timestamptz, f4 float4, f8 float8, b bool);
INSERT INTO pm
SELECT g,
       CASE WHEN random() < 0.05 THEN NULL ELSE (random() * 2000 - 1000)::int2 END,
       CASE WHEN random() < 0.05 THEN NULL ELSE (random() * 4000 - 2000)::int4 END,
       CASE WHEN random() < 0.05 THEN NULL ELSE (random() * 1e12 - 5e11)::int8 END,
       CASE WHEN random() < 0.05 THEN NULL ELSE (random() * 5000)::int8::oid END,
       CASE WHEN random() < 0.05 THEN NULL ELSE date '2000-01-01' + (random() * 3000)::int END,
       CASE WHEN random() < 0.05 THEN NULL ELSE time '00:00' + random() * interval '24 hours' END,
       CASE WHEN random() < 0.05 THEN NULL ELSE timestamp '2000-01-01' + random() * interval '3000 days' END,
       CASE WHEN random() < 0.05 THEN NULL ELSE timestamptz '2000-01-01 UTC' + random() * interval '3000 days' END,
       CASE WHEN random() < 0.05 THEN NULL ELSE (random() * 200 - 100)::float4 END,
       CASE WHEN random() < 0.05 THEN NULL ELSE random() * 2e6 - 1e6 END,
       CASE WHEN random() < 0.05 THEN NULL ELSE random() < 0.5 END
  FROM generate_series(1, 20000) g;
-- duplicates and edge values: extremes, signed zeros, NaN, infinities
INSERT INTO pm VALUES
  (20001, -32768, -2147483648, -9223372036854775808, 0, '-infinity', '00:00', '-infinity', '-infinity', '-Infinity', '-Infinity', false),
  (20002, 32767, 2147483647, 9223372036854775807, 4294967295, 'infinity', '24:00', 'infinity', 'infinity', 'Infinity', 'Infinity', true),
  (20003, 0, 0, 0, 1, '2000-01-01', '12:00', '2000-01-01', '2000-01-01 UTC', '-0', '-0', true),
  (20004, 0, 0, 0, 1, '2000-01-01', '12:00', '2000-01-01', '2000-01-01 UTC', '0', '0', false),
  (20005, 1, 1, 1, 2, '2000-01-02', '12:01', '2000-01-02', '2000-01-02 UTC', 'NaN', 'NaN', NULL),
  (20006, 1, 1, 1, 2, '2000-01-02', '12:01', '2000-01-02', '2000-01-02 UTC', 'NaN', 'NaN', NULL);
CREATE TABLE bt AS SELECT * FROM pm;

CREATE FUNCTION pm_cols() RETURNS SETOF text LANGUAGE sql AS
$$ SELECT unnest(ARRAY['i2','i4','i8','o','d','tm','ts','tz','f4','f8','b']) $$;

DO $$
DECLARE c text;
BEGIN
  FOR c IN SELECT pm_cols() LOOP
    EXECUTE format('CREATE INDEX pm_%s ON pm USING %s (%I)', c, current_setting('pm_equiv.am'), c);
    EXECUTE format('CREATE INDEX bt_%s ON bt (%I)', c, c);
  END LOOP;
END $$;
VACUUM ANALYZE pm;
VACUUM ANALYZE bt;
SET enable_seqscan = off;

-- One results_eq per (column, operator, constant): constants are values from the data
-- (so = hits), the extremes, and a value between two stored ones.
CREATE FUNCTION pm_compare(q text, descr text) RETURNS text LANGUAGE sql AS
$$ SELECT results_eq(format(q, 'pm'), format(q, 'bt'), descr) $$;

CREATE FUNCTION pm_operator_tests() RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
  c text; op text; v text;
BEGIN
  FOR c IN SELECT pm_cols() LOOP
    FOR v IN EXECUTE format(
      'SELECT quote_literal(%1$I) FROM bt WHERE id IN (7, 20001, 20002, 20003, 20005) AND %1$I IS NOT NULL', c)
    LOOP
      FOREACH op IN ARRAY ARRAY['<','<=','=','>=','>'] LOOP
        RETURN NEXT pm_compare(format('SELECT id FROM %%I WHERE %I %s %s ORDER BY id', c, op, v),
                               format('%s %s %s', c, op, v));
      END LOOP;
    END LOOP;
    RETURN NEXT pm_compare(format('SELECT id FROM %%I WHERE %I IS NULL ORDER BY id', c), c || ' IS NULL');
    RETURN NEXT pm_compare(format('SELECT id FROM %%I WHERE %I IS NOT NULL ORDER BY id', c), c || ' IS NOT NULL');
    RETURN NEXT pm_compare(format(
      'SELECT id FROM %%I WHERE %1$I = ANY (ARRAY(SELECT %1$I FROM bt WHERE id %%%% 997 = 3) || NULL) ORDER BY id', c),
      c || ' = ANY (array with NULL)');
    RETURN NEXT pm_compare(format('SELECT %1$I FROM %%I WHERE %1$I IS NOT NULL ORDER BY %1$I LIMIT 50', c),
                           c || ' ORDER BY ASC LIMIT');
    RETURN NEXT pm_compare(format('SELECT %1$I FROM %%I ORDER BY %1$I DESC LIMIT 50', c),
                           c || ' ORDER BY DESC LIMIT (NULLs first)');
    RETURN NEXT pm_compare(format('SELECT %1$I FROM %%I ORDER BY %1$I NULLS LAST', c),
                           c || ' full ordered scan with NULLs last');
  END LOOP;
END $$;

SELECT * FROM pm_operator_tests();

-- <am>_check of an index, with heapallindexed
CREATE FUNCTION pm_verifies(idx text, descr text) RETURNS text LANGUAGE sql AS
$$ SELECT lives_ok(format('SELECT %s_check(%L, true)', current_setting('pm_equiv.am'), idx),
                   current_setting('pm_equiv.am') || '_check ' || descr) $$;

-- the access method's side really uses its index (and index-only scans where it can)
CREATE FUNCTION pm_plan(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE r record; out text := '';
BEGIN
  FOR r IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP out := out || r."QUERY PLAN" || E'\n'; END LOOP;
  RETURN out;
END $$;
SELECT matches(pm_plan('SELECT i4 FROM pm WHERE i4 < 10'), 'Index Only Scan using pm_i4',
               'index-only scan on ' || :'am');
SELECT matches(pm_plan('SELECT id FROM pm WHERE i8 = 5'), 'Index Scan using pm_i8', 'index scan on ' || :'am');
SELECT matches(pm_plan('SELECT i4 FROM pm ORDER BY i4 DESC LIMIT 3'), 'Backward using pm_i4',
               'ORDER BY DESC is a backward ' || :'am' || ' scan, no sort');

-- cross-type comparisons: integer and float families share one key space
SELECT pm_compare('SELECT id FROM %I WHERE i2 < 300::int4 ORDER BY id', 'int2 < int4');
SELECT pm_compare('SELECT id FROM %I WHERE i2 >= -40000::int4 ORDER BY id', 'int2 >= int4 below int2 range');
SELECT pm_compare('SELECT id FROM %I WHERE i2 <= 5000000000::int8 ORDER BY id', 'int2 <= int8 above int2 range');
SELECT pm_compare('SELECT id FROM %I WHERE i4 = 17::int2 ORDER BY id', 'int4 = int2');
SELECT pm_compare('SELECT id FROM %I WHERE i4 > -3000000000::int8 ORDER BY id', 'int4 > int8');
SELECT pm_compare('SELECT id FROM %I WHERE i8 < 12::int4 ORDER BY id', 'int8 < int4');
SELECT pm_compare('SELECT id FROM %I WHERE i8 <> 0 AND i8 >= 3::int2 ORDER BY id', 'int8 >= int2');
SELECT pm_compare('SELECT id FROM %I WHERE f4 < 0.1::float8 ORDER BY id', 'float4 < float8 (not representable in float4)');
SELECT pm_compare('SELECT id FROM %I WHERE f4 = ''NaN''::float8 ORDER BY id', 'float4 = float8 NaN');
SELECT pm_compare('SELECT id FROM %I WHERE f8 > 3.5::float4 ORDER BY id', 'float8 > float4');
SELECT pm_compare('SELECT id FROM %I WHERE i4 IN (1, 2, 3, 0, -5, 2147483647) ORDER BY id', 'int4 IN list');
-- date / timestamp / timestamptz cross-type comparisons (session time zone matters for timestamptz)
SET TimeZone = 'America/New_York';
SELECT pm_compare('SELECT id FROM %I WHERE d < ''2003-05-01 12:00''::timestamp ORDER BY id', 'date < timestamp (not midnight)');
SELECT pm_compare('SELECT id FROM %I WHERE d <= ''2003-05-01 00:00''::timestamp ORDER BY id', 'date <= timestamp (midnight)');
SELECT pm_compare('SELECT id FROM %I WHERE d = ''2003-05-01 00:00''::timestamp ORDER BY id', 'date = timestamp (midnight)');
SELECT pm_compare('SELECT id FROM %I WHERE d = ''2003-05-01 00:01''::timestamp ORDER BY id', 'date = timestamp (never)');
SELECT pm_compare('SELECT id FROM %I WHERE d > ''2003-05-01 03:00+00''::timestamptz ORDER BY id', 'date > timestamptz in another zone');
SELECT pm_compare('SELECT id FROM %I WHERE d >= ''infinity''::timestamp ORDER BY id', 'date >= infinite timestamp');
SELECT pm_compare('SELECT id FROM %I WHERE ts < ''2004-01-01''::date ORDER BY id', 'timestamp < date');
SELECT pm_compare('SELECT id FROM %I WHERE ts >= ''2004-01-01 05:00+00''::timestamptz ORDER BY id', 'timestamp >= timestamptz');
SELECT pm_compare('SELECT id FROM %I WHERE tz < ''2004-01-01''::date ORDER BY id', 'timestamptz < date');
SELECT pm_compare('SELECT id FROM %I WHERE tz <= ''2004-01-01 00:00''::timestamp ORDER BY id', 'timestamptz <= timestamp');
SELECT pm_compare('SELECT id FROM %I WHERE d = ANY (ARRAY[''2003-05-01'', ''2003-05-02 10:00'', ''2001-01-01'']::timestamp[]) ORDER BY id', 'date = ANY timestamp[]');
SELECT pm_compare('SELECT id FROM %I WHERE d < ANY (ARRAY[''2002-05-01 10:00'', ''2001-01-01'']::timestamp[]) ORDER BY id', 'date < ANY timestamp[]');
SELECT matches(pm_plan('SELECT id FROM pm WHERE d < ''2003-05-01 12:00''::timestamp'), 'Index.*pm_d', 'date < timestamp uses the ' || :'am' || ' index');
RESET TimeZone;
SELECT pm_compare('SELECT id FROM %I WHERE i8 = ANY (ARRAY[1, 0, 9223372036854775807]::int8[]) ORDER BY id', 'int8 = ANY int8[]');
SELECT pm_compare('SELECT id FROM %I WHERE i4 = ANY (ARRAY[5, 6]::int8[]) AND i4 < 6 ORDER BY id', 'int4 = ANY int8[] with a bound');
SELECT pm_compare('SELECT id FROM %I WHERE i4 < ANY (ARRAY[-1500, -1800]) ORDER BY id', 'int4 < ANY');
SELECT pm_compare('SELECT id FROM %I WHERE i4 = ANY (ARRAY[]::int4[]) ORDER BY id', 'empty array');
SELECT pm_compare('SELECT id FROM %I WHERE i4 > 100 AND i4 < 50 ORDER BY id', 'contradictory bounds');
SELECT pm_compare('SELECT id FROM %I WHERE i4 = NULL::int4 ORDER BY id', '= NULL finds nothing');

-- bitmap AND / OR of the access method with btree on one table (big enough that combining pays)
CREATE TABLE ba (a int4, b float8, pad text);
INSERT INTO ba SELECT (random() * 100000)::int, random(), repeat('x', 40) FROM generate_series(1, 200000);
CREATE INDEX ba_a ON ba USING :am (a);
CREATE INDEX ba_b ON ba (b);
VACUUM ANALYZE ba;
SET enable_indexscan = off;
SET enable_seqscan = on;
SELECT matches(pm_plan('SELECT count(*) FROM ba WHERE a < 5000 AND b < 0.05'), 'BitmapAnd.*ba_a.*ba_b',
               'bitmap AND of ' || :'am' || ' and btree');
SELECT matches(pm_plan('SELECT count(*) FROM ba WHERE a < 1000 OR b < 0.01'), 'BitmapOr.*ba_a.*ba_b',
               'bitmap OR of ' || :'am' || ' and btree');
CREATE TEMP TABLE ba_counts AS
  SELECT (SELECT count(*) FROM ba WHERE a < 5000 AND b < 0.05) AS and_count,
         (SELECT count(*) FROM ba WHERE a < 1000 OR b < 0.01) AS or_count;
SET enable_bitmapscan = off;
SET enable_indexscan = off;
SELECT is((SELECT and_count FROM ba_counts), (SELECT count(*) FROM ba WHERE a < 5000 AND b < 0.05),
          'bitmap AND equals a sequential scan');
SELECT is((SELECT or_count FROM ba_counts), (SELECT count(*) FROM ba WHERE a < 1000 OR b < 0.01),
          'bitmap OR equals a sequential scan');
RESET enable_bitmapscan;
RESET enable_indexscan;
SET enable_seqscan = off;

-- writes after the build: inserts split leaves, deletes + VACUUM compact them
INSERT INTO pm SELECT g, (g % 50)::int2, g % 1000, g, g, date '2020-01-01' + g % 100, '01:00', now()::timestamp, now(), g, g, g % 2 = 0
  FROM generate_series(30000, 60000) g;
INSERT INTO bt SELECT * FROM pm WHERE id >= 30000;
DELETE FROM pm WHERE id % 7 = 0;
DELETE FROM bt WHERE id % 7 = 0;
VACUUM pm;
SELECT pm_verifies('pm_i4', 'after inserts, deletes and VACUUM');
SELECT pm_compare('SELECT id FROM %I WHERE i4 BETWEEN 100 AND 700 ORDER BY id', 'range after writes');
SELECT pm_compare('SELECT i2, id FROM %I WHERE i2 < 20 ORDER BY i2, id', 'duplicates after writes');
SELECT cmp_ok((SELECT smo_splits FROM pm_index_stats('pm_i4')), '>', 0::bigint, 'inserts split leaves');

-- An access method that merges nodes (smo_merges is not NULL) merges the leaves VACUUM leaves
-- small even when it removed under half of each: a first pass deletes 75% (leaves rewritten,
-- ~16 entries each), a second 40% of the rest (too few for a rewrite; two neighbours then hold
-- under a third of a leaf).
CREATE TABLE vm (k int4);
INSERT INTO vm SELECT g FROM generate_series(1, 20000) g;
CREATE INDEX vm_k ON vm USING :am (k) WITH (fillfactor = 100);
DELETE FROM vm WHERE k % 20 >= 5;
VACUUM vm;
CREATE TEMP TABLE vm_before AS SELECT leaves, smo_merges FROM pm_index_stats('vm_k');
DELETE FROM vm WHERE k % 20 >= 3;
VACUUM vm;
SELECT CASE WHEN (SELECT smo_merges FROM vm_before) IS NULL
  THEN skip(:'am' || ' does not merge nodes', 2)
  ELSE collect_tap(
    cmp_ok((SELECT smo_merges FROM pm_index_stats('vm_k')), '>', (SELECT smo_merges FROM vm_before),
           'a VACUUM that removed under half of each leaf still merges the small leaves'),
    cmp_ok((SELECT leaves FROM pm_index_stats('vm_k')), '<', (SELECT leaves FROM vm_before), 'fewer leaves after the merges'))
  END;
SELECT pm_verifies('vm_k', 'after VACUUM deletes most entries');
SELECT is((SELECT array_agg(k ORDER BY k) FROM vm WHERE k BETWEEN 1 AND 40), ARRAY[1, 2, 20, 21, 22, 40], 'rows after VACUUM');

-- merge join on two indexes of the access method with duplicates on both sides: mark/restore, no sort
CREATE TABLE mj1 AS SELECT g % 300 AS k, g FROM generate_series(1, 3000) g;
CREATE TABLE mj2 AS SELECT g % 500 AS k, g FROM generate_series(1, 2000) g;
CREATE INDEX mj1_k ON mj1 USING :am (k);
CREATE INDEX mj2_k ON mj2 USING :am (k);
ANALYZE mj1; ANALYZE mj2;
SET enable_hashjoin = off; SET enable_nestloop = off; SET enable_sort = off; SET enable_material = off;
SELECT matches(pm_plan('SELECT count(*) FROM mj1 JOIN mj2 USING (k)'), 'Merge Join.*mj1_k.*mj2_k|Merge Join.*mj2_k.*mj1_k',
               'merge join over two ' || :'am' || ' indexes, no sort');
SELECT unalike(pm_plan('SELECT count(*) FROM mj1 JOIN mj2 USING (k)'), '%Materialize%', 'no Materialize node: mark/restore works');
CREATE TEMP TABLE mj_count AS SELECT count(*) AS n, sum(mj1.g + mj2.g) AS s FROM mj1 JOIN mj2 USING (k);
RESET enable_hashjoin; RESET enable_nestloop; RESET enable_sort; RESET enable_material;
SET enable_mergejoin = off;
SELECT results_eq('SELECT n, s FROM mj_count', 'SELECT count(*), sum(mj1.g + mj2.g) FROM mj1 JOIN mj2 USING (k)',
                  'merge join with mark/restore returns what a hash join returns');
RESET enable_mergejoin;

-- one key x 100,000 rows
CREATE TABLE dup (k int4);
CREATE INDEX dup_k ON dup USING :am (k);
INSERT INTO dup SELECT 42 FROM generate_series(1, 100000);
INSERT INTO dup VALUES (41), (43);
ANALYZE dup;
SELECT is((SELECT count(*) FROM dup WHERE k = 42), 100000::bigint, 'one key x 100,000 rows');
SELECT is((SELECT array_agg(k) FROM (SELECT k FROM dup WHERE k >= 42 ORDER BY k DESC LIMIT 2) s), ARRAY[43, 42], 'past a run of one key');
SELECT is((SELECT count(*) FROM dup WHERE k < 42), 1::bigint, 'before a run of one key');
DELETE FROM dup WHERE ctid IN (SELECT ctid FROM dup WHERE k = 42 LIMIT 50000);
VACUUM dup;
SELECT is((SELECT count(*) FROM dup WHERE k = 42), 50000::bigint, 'half the run deleted');
SELECT pm_verifies('dup_k', 'of the duplicates');

-- CREATE INDEX both in memory (radix sort) and past maintenance_work_mem (tuplesort spill)
CREATE TABLE built AS SELECT (g % 5000) AS k, g FROM generate_series(1, 200000) g;
INSERT INTO built SELECT NULL, g FROM generate_series(1, 100) g;
CREATE INDEX built_mem ON built USING :am (k);
SET maintenance_work_mem = '1MB';
CREATE INDEX built_spill ON built USING :am (k);
RESET maintenance_work_mem;
SELECT pm_verifies('built_mem', 'of the in-memory build');
SELECT pm_verifies('built_spill', 'of the spilled build');
SELECT is((SELECT entries FROM pm_index_stats('built_mem')), 200100::bigint, 'in-memory build has every entry');
SELECT is((SELECT entries FROM pm_index_stats('built_spill')), 200100::bigint, 'spilled build has every entry');

-- fillfactor packs the bulk-loaded leaves; pm_index_stats and VACUUM's counts describe the index.
-- Leaves for 62,000 keys at fillfactor 100 and 50: nbtree_pm's hold 62 entries; phast_pm's
-- LNodes 56, and each key-prefix partition starts an LNode of its own; nvbtree_pm's 224.
CREATE TABLE ff_leaves (am text, full_ff bigint, half_ff bigint);
INSERT INTO ff_leaves VALUES ('nbtree_pm', 1000, 2000), ('phast_pm', 1109, 2216), ('nvbtree_pm', 277, 554);
CREATE TABLE ff (k int4);
INSERT INTO ff SELECT g FROM generate_series(1, 62000) g;
CREATE INDEX ff_full ON ff USING :am (k) WITH (fillfactor = 100);
CREATE INDEX ff_half ON ff USING :am (k) WITH (fillfactor = 50);
SELECT is((SELECT leaves FROM pm_index_stats('ff_full')), (SELECT full_ff FROM ff_leaves WHERE am = :'am'),
          'fillfactor 100: full leaves');
SELECT is((SELECT leaves FROM pm_index_stats('ff_half')), (SELECT half_ff FROM ff_leaves WHERE am = :'am'),
          'fillfactor 50: half-full leaves');
SELECT ok((SELECT height >= 2 AND pm_bytes >= leaves * 1024 AND dram_bytes > 0 FROM pm_index_stats('ff_full')),
          'height, PM bytes (a 1 KiB block per leaf) and DRAM bytes');
INSERT INTO ff SELECT g FROM generate_series(62001, 63000) g;
SELECT is((SELECT inserts FROM pm_index_stats('ff_full')), 1000::bigint, 'inserts counted');
SELECT cmp_ok((SELECT fences_per_write FROM pm_index_stats('ff_full')), '>=', 1::float8, 'every insert fences');
DELETE FROM ff WHERE k % 10 = 0;
VACUUM ff;
SELECT is((SELECT deletes FROM pm_index_stats('ff_full')), 6300::bigint, 'VACUUM removed an entry per dead row');
SELECT is((SELECT reltuples FROM pg_class WHERE oid = 'ff_full'::regclass), 56700::real,
          'VACUUM reports the entries left');
SELECT results_eq($$SELECT pg_indexam_progress_phasename((SELECT oid FROM pg_am WHERE amname = current_setting('pm_equiv.am')), n)
                    FROM generate_series(1, 4) n$$,
                  ARRAY['initializing', 'scanning table', 'sorting entries', 'loading leaves into the pool'],
                  'CREATE INDEX progress phases');

-- a boolean expression index serves the expression as a condition, as btree's does
CREATE INDEX pm_i4_positive ON pm USING :am ((i4 > 0));
CREATE INDEX bt_i4_positive ON bt ((i4 > 0));
SELECT pm_compare('SELECT id FROM %I WHERE i4 > 0 ORDER BY id', 'boolean expression index: expr');
SELECT pm_compare('SELECT id FROM %I WHERE NOT (i4 > 0) ORDER BY id', 'boolean expression index: NOT expr');
SELECT pm_compare('SELECT id FROM %I WHERE (i4 > 0) IS FALSE ORDER BY id', 'boolean expression index: IS FALSE');
DROP INDEX pm_i4; DROP INDEX bt_i4;
SELECT matches(pm_plan('SELECT id FROM pm WHERE i4 > 0'), 'pm_i4_positive',
               'the boolean expression index serves the expression');
SELECT matches(pm_plan('SELECT id FROM pm WHERE (i4 > 0) IS FALSE'), 'pm_i4_positive',
               'and IS FALSE of it');
SELECT matches(pm_plan('SELECT id FROM bt WHERE (i4 > 0) IS FALSE'), 'bt_i4_positive', 'as btree''s does');

-- empty table, then rows
CREATE TABLE empty_t (k int8);
CREATE INDEX empty_k ON empty_t USING :am (k);
SELECT is_empty('SELECT * FROM empty_t WHERE k > 0', 'empty index returns nothing');
SELECT is_empty('SELECT * FROM empty_t ORDER BY k DESC', 'empty index, backward');
INSERT INTO empty_t VALUES (1), (NULL), (3);
SELECT results_eq('SELECT k FROM empty_t ORDER BY k', ARRAY[1, 3, NULL]::int8[], 'first rows of an empty index');

SELECT * FROM finish();
RESET search_path;
DROP SCHEMA pm_equiv CASCADE;
