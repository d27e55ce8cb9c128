-- hash_pm answers as hash and a sequential scan do: a differential test over every type with a
-- hash operator class.  For each type, two tables of the same rows (boundary values, equal
-- values of different forms, duplicates, NULLs, pseudo-random values; half inserted before
-- CREATE INDEX, half after, through the operation log, where a section below holds them for
-- the scans to find): hpm_p_<t> with a hash_pm index, hpm_h_<t> with a hash index.  Every
-- probe (a query on {tab}) runs on the first as a sequential scan and as a forced hash_pm plain
-- index scan and bitmap scan, and on the second through the hash index; the answers are
-- compared as sorted multisets (row ids, or pairs of them for joins).  Only counts are
-- printed: probes, rows the sequential scan found, mismatches (each one also raises a NOTICE
-- with the probe and both answers), and the probes whose forced plan did not use the index:
-- hash has no IS NULL / IS NOT NULL searches (3 probes a type, one an OR); a composite's
-- IS [NOT] NULL tests its fields (record: 5 for hash_pm); bool: see below.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pm_index;
RESET client_min_messages;
SET TimeZone = 'UTC';
SET DateStyle = 'ISO, YMD';
SET IntervalStyle = 'postgres';
SET extra_float_digits = 0;
-- the forced plans cost more than the JIT thresholds: no compiling each probe
SET jit = off;

-- hash_pm's operator families, classes, operators and functions are those of hash's built-in
-- families, one for one
SELECT count(*) AS classes, count(*) FILTER (WHERE opcdefault) AS default_classes,
       bool_and(amvalidate(opc.oid)) AS all_valid
  FROM pg_opclass opc JOIN pg_am am ON am.oid = opc.opcmethod WHERE am.amname = 'hash_pm';
CREATE FUNCTION hpm_members(am text) RETURNS TABLE (m text) LANGUAGE sql AS $$
  SELECT format('class %s %s %s %s', c.opcname, c.opcintype::regtype, f.opfname, c.opcdefault)
    FROM pg_opclass c JOIN pg_opfamily f ON f.oid = c.opcfamily JOIN pg_am a ON a.oid = c.opcmethod
   WHERE a.amname = am AND (am = 'hash_pm' OR f.opfnamespace = 'pg_catalog'::regnamespace)
  UNION ALL
  SELECT format('operator %s %s %s', f.opfname, o.amopstrategy, o.amopopr::regoperator)
    FROM pg_amop o JOIN pg_opfamily f ON f.oid = o.amopfamily JOIN pg_am a ON a.oid = f.opfmethod
   WHERE a.amname = am AND (am = 'hash_pm' OR f.opfnamespace = 'pg_catalog'::regnamespace)
  UNION ALL
  SELECT format('function %s %s %s %s %s', f.opfname, p.amprocnum, p.amproclefttype::regtype,
                p.amprocrighttype::regtype, p.amproc::regprocedure)
    FROM pg_amproc p JOIN pg_opfamily f ON f.oid = p.amprocfamily JOIN pg_am a ON a.oid = f.opfmethod
   WHERE a.amname = am AND (am = 'hash_pm' OR f.opfnamespace = 'pg_catalog'::regnamespace)
     AND p.amprocnum = 1 $$;
SELECT (SELECT count(*) FROM (SELECT * FROM hpm_members('hash') EXCEPT ALL
                              SELECT * FROM hpm_members('hash_pm')) s) AS only_hash,
       (SELECT count(*) FROM (SELECT * FROM hpm_members('hash_pm') EXCEPT ALL
                              SELECT * FROM hpm_members('hash')) s) AS only_hash_pm;

-- hpm_run(query, mode, index): the query's rows (sorted, as text) and count with sequential
-- scans only (seq), a plain index scan (index), a bitmap scan (bitmap) or either (any), and
-- whether the plan reads the index named.
CREATE FUNCTION hpm_run(q text, mode text, idx text, OUT res text, OUT n bigint, OUT used boolean)
LANGUAGE plpgsql AS $$
DECLARE
  l text;
  p text := '';
BEGIN
  PERFORM set_config('enable_seqscan', CASE WHEN mode = 'seq' THEN 'on' ELSE 'off' END, true);
  PERFORM set_config('enable_indexscan', CASE WHEN mode IN ('index', 'any') THEN 'on' ELSE 'off' END, true);
  PERFORM set_config('enable_bitmapscan', CASE WHEN mode IN ('bitmap', 'any') THEN 'on' ELSE 'off' END, true);
  PERFORM set_config('enable_indexonlyscan', 'off', true);
  -- joins: a nested loop that looks each outer row up in the index (a rescan per row)
  PERFORM set_config('enable_hashjoin', CASE WHEN mode = 'seq' THEN 'on' ELSE 'off' END, true);
  PERFORM set_config('enable_mergejoin', CASE WHEN mode = 'seq' THEN 'on' ELSE 'off' END, true);
  PERFORM set_config('enable_material', CASE WHEN mode = 'seq' THEN 'on' ELSE 'off' END, true);
  PERFORM set_config('enable_memoize', CASE WHEN mode = 'seq' THEN 'on' ELSE 'off' END, true);
  IF mode <> 'seq' THEN
    FOR l IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
      p := p || l || E'\n';
    END LOOP;
  END IF;
  used := CASE mode
            WHEN 'seq' THEN true
            WHEN 'index' THEN p LIKE '%Index Scan using ' || idx || ' %'
            WHEN 'bitmap' THEN p LIKE '%Bitmap Index Scan on ' || idx || E'\n%'
            ELSE p LIKE '% ' || idx || E'\n%' OR p LIKE '% ' || idx || ' %' END;
  EXECUTE format('SELECT coalesce(string_agg(s::text, %L ORDER BY s::text), %L), count(*) FROM (%s) s',
                 ';', '', q) INTO res, n;
END $$;

-- the types: name, column type, collation, operator class
CREATE TABLE hpm_types (ord serial, t text PRIMARY KEY, typ text, coll text, opclass text);
-- the probes of each type: queries on {tab}; modes i (index scan) and b (bitmap scan)
CREATE TABLE hpm_probe (ord serial, t text, probe text, modes text DEFAULT 'ib');

-- hpm_make(t, typ, coll, opclass, vals): hpm_s_<t> holds vals' rows (id, v), the source
-- (the rows, NULLs and distinct values, by the type's equality, are returned);
-- hpm_p_<t> and hpm_h_<t> get its even ids, their indexes, then its odd ids.  Probes added
-- for every type: samples of its values (one at a time and in = ANY arrays with NULLs and
-- duplicates), = a NULL parameter, = ANY of no value and of a NULL, IS [NOT] NULL, and a
-- self join (an index lookup per source row).
CREATE FUNCTION hpm_make(tname text, typ text, coll text, opclass text, vals text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  col text := typ || CASE WHEN coll IS NULL THEN '' ELSE ' COLLATE ' || coll END;
  s text := 'hpm_s_' || tname;
  lits text[];
  summary text;
BEGIN
  INSERT INTO hpm_types (t, typ, coll, opclass) VALUES (tname, typ, coll, opclass);
  EXECUTE format('CREATE TABLE %I (id int, v %s)', s, col);
  EXECUTE format('INSERT INTO %I SELECT row_number() OVER (), x::%s FROM (%s) q(x)', s, typ, vals);
  EXECUTE format('CREATE TABLE %I (id int, v %s)', 'hpm_p_' || tname, col);
  EXECUTE format('CREATE TABLE %I (id int, v %s)', 'hpm_h_' || tname, col);
  EXECUTE format('INSERT INTO %I SELECT * FROM %I WHERE id %% 2 = 0', 'hpm_p_' || tname, s);
  EXECUTE format('INSERT INTO %I SELECT * FROM %I WHERE id %% 2 = 0', 'hpm_h_' || tname, s);
  EXECUTE format('CREATE INDEX %I ON %I USING hash_pm (v %s)', 'hpm_p_' || tname || '_v',
                 'hpm_p_' || tname, coalesce(opclass, ''));
  EXECUTE format('CREATE INDEX %I ON %I USING hash (v %s)', 'hpm_h_' || tname || '_v',
                 'hpm_h_' || tname, coalesce(opclass, ''));
  EXECUTE format('INSERT INTO %I SELECT * FROM %I WHERE id %% 2 = 1', 'hpm_p_' || tname, s);
  EXECUTE format('INSERT INTO %I SELECT * FROM %I WHERE id %% 2 = 1', 'hpm_h_' || tname, s);
  -- as literals: the values of every 29th source row among the first 800 (NULLs left out),
  -- and the last row's
  EXECUTE format('SELECT array_agg(quote_literal(v::text) || %L ORDER BY id) FROM %I
                   WHERE v IS NOT NULL AND ((id %% 29 = 3 AND id < 800) OR id = (SELECT max(id) FROM %I))',
                 '::' || typ, s, s) INTO lits;
  INSERT INTO hpm_probe (t, probe)
    SELECT tname, format('SELECT id FROM {tab} WHERE v = %s', l) FROM unnest(lits) l;
  IF typ LIKE '%[]' THEN
    -- no arrays of arrays: an IN list of arrays is ORed = conditions
    INSERT INTO hpm_probe (t, probe, modes) VALUES
      (tname, format('SELECT id FROM {tab} WHERE v IN (%s, NULL, %s, %s)', lits[1], lits[2], lits[1]), 'b');
  ELSE
    INSERT INTO hpm_probe (t, probe) VALUES
      (tname, format('SELECT id FROM {tab} WHERE v = ANY (ARRAY[%s, NULL, %s, %s])',
                     lits[1], lits[2], lits[1])),
      (tname, format('SELECT id FROM {tab} WHERE v = ANY (ARRAY(SELECT v FROM %I WHERE id %% 5 = 1))', s)),
      (tname, format('SELECT id FROM {tab} WHERE v = ANY (%L::%s[])', '{}', typ)),
      (tname, format('SELECT id FROM {tab} WHERE v = ANY (ARRAY[NULL::%s])', typ));
  END IF;
  INSERT INTO hpm_probe (t, probe) VALUES
    (tname, format('SELECT id FROM {tab} WHERE v = (SELECT NULL::%s)', typ)),
    (tname, format('SELECT id FROM {tab} WHERE v = %s AND v = %s', lits[1], lits[2])),
    (tname, format('SELECT id FROM {tab} WHERE v = %s AND v IS NOT NULL', lits[2])),
    (tname, 'SELECT id FROM {tab} WHERE v IS NULL'),
    (tname, 'SELECT id FROM {tab} WHERE v IS NOT NULL'),
    (tname, format('SELECT o.id, x.id FROM %I o JOIN {tab} x ON x.v = o.v', s));
  INSERT INTO hpm_probe (t, probe, modes) VALUES
    (tname, format('SELECT id FROM {tab} WHERE v = %s OR v = %s OR v IS NULL', lits[2], lits[3]), 'b');
  EXECUTE format('SELECT format(%L, count(*), count(*) - count(v), (SELECT count(*) FROM (SELECT DISTINCT v FROM %I) d))
                    FROM %I', '%s rows, %s NULL, %s distinct', s, s) INTO summary;
  RETURN summary;
END $$;

-- hpm_diff(t): its probes' counts.  A mismatch raises a NOTICE naming the probe, the mode and
-- both answers.
CREATE FUNCTION hpm_diff(tname text, OUT probes int, OUT hits bigint, OUT mismatches int,
                         OUT pm_unused int, OUT hash_unused int)
LANGUAGE plpgsql AS $$
DECLARE
  pr record;
  qp text;
  qh text;
  s record;
  r record;
  m text;
BEGIN
  probes := 0; hits := 0; mismatches := 0; pm_unused := 0; hash_unused := 0;
  FOR pr IN SELECT probe, modes FROM hpm_probe WHERE t = tname ORDER BY ord LOOP
    probes := probes + 1;
    qp := replace(pr.probe, '{tab}', 'hpm_p_' || tname);
    qh := replace(pr.probe, '{tab}', 'hpm_h_' || tname);
    s := hpm_run(qp, 'seq', NULL);
    hits := hits + s.n;
    FOREACH m IN ARRAY ARRAY['index', 'bitmap', 'hash'] LOOP
      CONTINUE WHEN m = 'index' AND pr.modes NOT LIKE '%i%';
      CONTINUE WHEN m = 'bitmap' AND pr.modes NOT LIKE '%b%';
      r := CASE m WHEN 'hash' THEN hpm_run(qh, 'any', 'hpm_h_' || tname || '_v')
                  ELSE hpm_run(qp, m, 'hpm_p_' || tname || '_v') END;
      IF NOT r.used THEN
        IF m = 'hash' THEN hash_unused := hash_unused + 1; ELSE pm_unused := pm_unused + 1; END IF;
      END IF;
      IF r.res IS DISTINCT FROM s.res THEN
        mismatches := mismatches + 1;
        RAISE NOTICE 'mismatch: % %: % (%) / seq % (%)', m, CASE m WHEN 'hash' THEN qh ELSE qp END,
          r.res, r.n, s.res, s.n;
      END IF;
    END LOOP;
  END LOOP;
END $$;

-- the values: boundaries, equal values of other forms, duplicates, NULLs, pseudo-random values
SELECT setseed(0.25);
SELECT hpm_make('int2', 'int2', NULL, NULL, $$
  SELECT x FROM unnest('{-32768,32767,0,-1,1,1,2,NULL,NULL,256,-256,100}'::int2[]) x
  UNION ALL SELECT (floor(random() * 65536) - 32768)::int2 FROM generate_series(1, 300)
  UNION ALL SELECT (g % 40)::int2 FROM generate_series(1, 160) g $$);
SELECT hpm_make('int4', 'int4', NULL, NULL, $$
  SELECT x FROM unnest('{-2147483648,2147483647,0,-1,1,1,2,NULL,NULL,65536,65537,70000}'::int4[]) x
  UNION ALL SELECT (floor(random() * 4294967296) - 2147483648)::int4 FROM generate_series(1, 300)
  UNION ALL SELECT g % 40 FROM generate_series(1, 160) g $$);
-- 1, 4294967296 and -4294967295 have the same hash code, as do 0, 4294967297 and -4294967296
SELECT hpm_make('int8', 'int8', NULL, NULL, $$
  SELECT x FROM unnest('{-9223372036854775808,9223372036854775807,0,-1,1,1,2,NULL,NULL,
                         4294967296,4294967297,4294967295,-4294967295,-4294967296,-4294967297,8589934594,
                         70000}'::int8[]) x
  UNION ALL SELECT floor((random() - 0.5) * 1.8e19)::int8 FROM generate_series(1, 300)
  UNION ALL SELECT g % 40 FROM generate_series(1, 160) g $$);
SELECT hpm_make('float4', 'float4', NULL, NULL, $$
  SELECT x FROM unnest('{-0,0,0,NaN,NaN,Infinity,-Infinity,1.5,0.1,3.4028235e38,-3.4028235e38,
                         1.4e-45,1e-40,-1.4e-45,NULL,NULL}'::float4[]) x
  UNION ALL SELECT ((random() - 0.5) * 1000)::float4 FROM generate_series(1, 300)
  UNION ALL SELECT (g % 40 / 4.0 - 5)::float4 FROM generate_series(1, 160) g $$);
SELECT hpm_make('float8', 'float8', NULL, NULL, $$
  SELECT x FROM unnest(ARRAY['-0','0','0','NaN','NaN','Infinity','-Infinity','1.5','0.1',
                             0.1::float4::float8::text,'1.7976931348623157e308','-1.7976931348623157e308',
                             '4.9e-324','2.2250738585072014e-308',NULL,NULL]::float8[]) x
  UNION ALL SELECT (random() - 0.5) * 1e6 FROM generate_series(1, 300)
  UNION ALL SELECT g % 40 / 4.0 - 5 FROM generate_series(1, 160) g $$);
SELECT hpm_make('numeric', 'numeric', NULL, NULL, $$
  SELECT x FROM unnest('{1,1.0,1.00,1.000,0,0.0,-0,-0.00,NaN,NaN,Infinity,-Infinity,1e-100,1e100,
                         123456789012345678901234567890.123456789,-1.5,1.5000,2.5,NULL,NULL}'::numeric[]) x
  UNION ALL SELECT round(((random() - 0.5) * 1000)::numeric, 3) FROM generate_series(1, 200)
  UNION ALL SELECT round((g % 40 / 8.0)::numeric, g % 5) FROM generate_series(1, 200) g $$);
-- strings: case, trailing and leading spaces, precomposed and decomposed accents, ß, empty,
-- long ones (compressed, and toasted out of line)
CREATE TABLE hpm_strings (s text);
INSERT INTO hpm_strings SELECT x FROM unnest(ARRAY['', 'a', 'A', 'a ', ' a', 'abc', 'ABC', 'Abc',
  'abc ', U&'\00DF', 'ss', 'SS', 'Ss', U&'\00E9', U&'e\0301', U&'\00C9', U&'E\0301', 'e', 'E',
  repeat('x', 3000), repeat('X', 3000), (SELECT string_agg(md5(g::text), '') FROM generate_series(1, 200) g),
  (SELECT upper(string_agg(md5(g::text), '')) FROM generate_series(1, 200) g), NULL, NULL]) x;
INSERT INTO hpm_strings SELECT CASE WHEN g % 3 = 0 THEN upper(s) ELSE s END
  FROM (SELECT g, substr(md5((g % 150)::text), 1, 1 + g % 8) s FROM generate_series(1, 400) g) q;
CREATE COLLATION hpm_ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
SELECT hpm_make('text_c', 'text', '"C"', NULL, 'SELECT s FROM hpm_strings');
SELECT hpm_make('text_icu', 'text', '"und-x-icu"', NULL, 'SELECT s FROM hpm_strings');
SELECT hpm_make('text_ci', 'text', 'hpm_ci', NULL, 'SELECT s FROM hpm_strings');
SELECT hpm_make('varchar', 'varchar(40)', NULL, NULL, 'SELECT left(s, 40) FROM hpm_strings');
SELECT hpm_make('bpchar', 'char(6)', NULL, NULL, 'SELECT left(s, 6) FROM hpm_strings');
SELECT hpm_make('bpchar_ci', 'char(6)', 'hpm_ci', NULL, 'SELECT left(s, 6) FROM hpm_strings');
SELECT hpm_make('name', 'name', NULL, NULL, 'SELECT s FROM hpm_strings');
SELECT hpm_make('bytea', 'bytea', NULL, NULL, $$
  SELECT x FROM unnest(ARRAY['\x', '\x00', '\x0000', '\x00000000', '\xdeadbeef', '\xDEADBEEF',
                             NULL, NULL]::bytea[]) x
  UNION ALL SELECT convert_to(s, 'UTF8') FROM hpm_strings WHERE s IS NOT NULL
  UNION ALL SELECT decode(md5((g % 60)::text), 'hex') FROM generate_series(1, 200) g $$);
SELECT hpm_make('uuid', 'uuid', NULL, NULL, $$
  SELECT x FROM unnest('{00000000-0000-0000-0000-000000000000,ffffffff-ffff-ffff-ffff-ffffffffffff,
                         00000000-0000-0000-0000-000000000001,NULL,NULL}'::uuid[]) x
  UNION ALL SELECT md5((g % 150)::text)::uuid FROM generate_series(1, 400) g $$);
SELECT hpm_make('date', 'date', NULL, NULL, $$
  SELECT x FROM unnest('{-infinity,infinity,4713-01-01 BC,5874897-12-31,2000-01-01,2000-01-01,
                         1999-12-31,1970-01-01,NULL,NULL}'::date[]) x
  UNION ALL SELECT date '2000-01-01' + floor((random() - 0.5) * 40000)::int FROM generate_series(1, 300)
  UNION ALL SELECT date '2020-02-28' + g % 40 FROM generate_series(1, 160) g $$);
SELECT hpm_make('time', 'time', NULL, NULL, $$
  SELECT x FROM unnest('{00:00,24:00,23:59:59.999999,12:00,12:00:00.000001,NULL,NULL}'::time[]) x
  UNION ALL SELECT time '00:00' + random() * interval '24 hours' FROM generate_series(1, 300)
  UNION ALL SELECT time '08:00' + (g % 40) * interval '15 minutes' FROM generate_series(1, 160) g $$);
SELECT hpm_make('timetz', 'timetz', NULL, NULL, $$
  SELECT x FROM unnest('{12:00+00,13:00+01,12:00-00,12:00+01,11:00-01,00:00+15:59,24:00-15:59,
                         23:59:59.999999+00,NULL,NULL}'::timetz[]) x
  UNION ALL SELECT ((time '00:00' + random() * interval '24 hours')::time
                    || to_char(floor((random() - 0.5) * 24)::int, 'S00'))::timetz FROM generate_series(1, 300)
  UNION ALL SELECT ((time '08:00' + (g % 20) * interval '15 minutes')::time
                    || to_char(g % 3 - 1, 'S00'))::timetz FROM generate_series(1, 160) g $$);
SELECT hpm_make('timestamp', 'timestamp', NULL, NULL, $$
  SELECT x FROM unnest('{-infinity,infinity,4713-01-01 00:00 BC,294276-12-31 23:59:59.999999,
                         2000-01-01,2000-01-01 00:00:00,1999-12-31 23:59:59.999999,1970-01-01,
                         NULL,NULL}'::timestamp[]) x
  UNION ALL SELECT timestamp '2000-01-01' + (random() - 0.5) * interval '100 years' FROM generate_series(1, 300)
  UNION ALL SELECT timestamp '2020-02-28' + (g % 40) * interval '1 hour' FROM generate_series(1, 160) g $$);
-- the same instants in other zones are equal
SELECT hpm_make('timestamptz', 'timestamptz', NULL, NULL, $$
  SELECT x FROM unnest('{-infinity,infinity,2020-01-01 00:00+00,2020-01-01 01:00+01,
                         2019-12-31 19:00-05,4713-01-01 00:00+00 BC,294276-12-31 23:59:59.999999+00,
                         NULL,NULL}'::timestamptz[]) x
  UNION ALL SELECT timestamptz '2000-01-01 00:00+00' + (random() - 0.5) * interval '100 years'
              FROM generate_series(1, 300)
  UNION ALL SELECT timestamptz '2020-02-28 00:00+00' + (g % 40) * interval '1 hour'
              FROM generate_series(1, 160) g $$);
-- equal intervals of other forms: 1 day = 24 hours, 1 mon = 30 days, 1 year = 360 days
SELECT hpm_make('interval', 'interval', NULL, NULL, $$
  SELECT x FROM unnest('{1 day,24 hours,1440 minutes,86400 seconds,1 mon,30 days,720 hours,
                         1 year,12 mons,360 days,0,1 day -24 hours,-1 mon 30 days,
                         178000000 years,-178000000 years,NULL,NULL}'::interval[]) x
  UNION ALL SELECT make_interval(months => g % 3, days => g % 45, hours => g % 50)
              FROM generate_series(1, 300) g
  UNION ALL SELECT random() * interval '1000 days' FROM generate_series(1, 100) $$);
SELECT hpm_make('bool', 'bool', NULL, NULL, $$
  SELECT x FROM unnest('{t,f,t,f,NULL}'::bool[]) x
  UNION ALL SELECT g % 3 = 0 FROM generate_series(1, 40) g $$);
SELECT hpm_make('char', '"char"', NULL, NULL, $$
  SELECT x FROM unnest(ARRAY['', 'a', 'A', ' ', E'\\377', E'\\200', E'\\001', NULL, NULL]::"char"[]) x
  UNION ALL SELECT chr(1 + g % 127)::"char" FROM generate_series(1, 300) g $$);
SELECT hpm_make('oid', 'oid', NULL, NULL, $$
  SELECT x FROM unnest('{0,1,4294967295,2147483648,2147483647,NULL,NULL}'::oid[]) x
  UNION ALL SELECT floor(random() * 4294967296)::int8::oid FROM generate_series(1, 300)
  UNION ALL SELECT (g % 40)::oid FROM generate_series(1, 160) g $$);
-- inet equality takes the netmask: 10.0.0.1 = 10.0.0.1/32, not 10.0.0.1/24
SELECT hpm_make('inet', 'inet', NULL, NULL, $$
  SELECT x FROM unnest('{10.0.0.1,10.0.0.1/32,10.0.0.1/24,10.0.0.0/24,0.0.0.0/0,::1,::1/128,
                         ::ffff:10.0.0.1,::/0,255.255.255.255,NULL,NULL}'::inet[]) x
  UNION ALL SELECT ('10.' || g % 5 || '.' || g % 7 || '.' || g % 11 || '/' || (24 + g % 9))::inet
              FROM generate_series(1, 300) g
  UNION ALL SELECT ('2001:db8::' || to_hex(g % 30))::inet FROM generate_series(1, 100) g $$);
SELECT hpm_make('macaddr', 'macaddr', NULL, NULL, $$
  SELECT x FROM unnest('{08:00:2b:01:02:03,08-00-2b-01-02-03,0800.2b01.0203,00:00:00:00:00:00,
                         ff:ff:ff:ff:ff:ff,NULL,NULL}'::macaddr[]) x
  UNION ALL SELECT substr(md5((g % 100)::text), 1, 12)::macaddr FROM generate_series(1, 300) g $$);
-- a 6-byte address reads as the 8-byte one with ff:fe in its middle
SELECT hpm_make('macaddr8', 'macaddr8', NULL, NULL, $$
  SELECT x FROM unnest('{08:00:2b:01:02:03:04:05,08:00:2b:01:02:03,08:00:2b:ff:fe:01:02:03,
                         00:00:00:00:00:00:00:00,ff:ff:ff:ff:ff:ff:ff:ff,NULL,NULL}'::macaddr8[]) x
  UNION ALL SELECT substr(md5((g % 100)::text), 1, 16)::macaddr8 FROM generate_series(1, 300) g $$);
-- jsonb: 1 = 1.0 = 1.00, keys in any order
SELECT hpm_make('jsonb', 'jsonb', NULL, NULL, $$
  SELECT x FROM unnest(ARRAY['1', '1.0', '1.00', '{"a": 1, "b": [1, 2]}', '{"b": [1, 2.0], "a": 1.0}',
                             '[]', '{}', 'null', '"x"', '"X"', 'true', 'false', '[1, 2]', '[2, 1]',
                             '{"a": {"b": null}}', '""', '[null]', NULL, NULL]::jsonb[]) x
  UNION ALL SELECT jsonb_build_object('k', g % 30, 'v', round((g % 7)::numeric / 2, g % 3))
              FROM generate_series(1, 300) g $$);
-- arrays: dimensions and lower bounds count, hash codes do not see them
SELECT hpm_make('int4_array', 'int4[]', NULL, NULL, $$
  SELECT x::int4[] FROM unnest(ARRAY['{}', '{1}', '{1,2}', '{2,1}', '{NULL}', '{1,NULL}', '{NULL,1}',
                                    '{{1,2},{3,4}}', '{1,2,3,4}', '[0:1]={1,2}', '{{1},{2}}', NULL, NULL]) x
  UNION ALL SELECT ARRAY[g % 5, g % 3] FROM generate_series(1, 200) g
  UNION ALL SELECT ARRAY[g % 4] FROM generate_series(1, 100) g $$);
SELECT hpm_make('numeric_array', 'numeric[]', NULL, NULL, $$
  SELECT x::numeric[] FROM unnest(ARRAY['{1.0}', '{1.00}', '{1}', '{1.0,2}', '{1,2.00}', '{NaN}', '{}',
                                       '{NULL}', NULL]) x
  UNION ALL SELECT ARRAY[round((g % 6)::numeric / 2, g % 3)] FROM generate_series(1, 200) g $$);
SELECT hpm_make('text_array', 'text[]', NULL, NULL, $$
  SELECT x::text[] FROM unnest(ARRAY['{}', '{a}', '{A}', '{"a "}', '{a,b}', '{b,a}', '{NULL}', '{""}', NULL]) x
  UNION ALL SELECT ARRAY[s, upper(s)] FROM hpm_strings $$);
CREATE TYPE hpm_mood AS ENUM ('sad', 'ok', 'happy');
ALTER TYPE hpm_mood ADD VALUE 'meh' BEFORE 'ok';
SELECT hpm_make('enum', 'hpm_mood', NULL, NULL, $$
  SELECT x FROM unnest('{sad,ok,happy,meh,NULL,NULL}'::hpm_mood[]) x
  UNION ALL SELECT (enum_range(NULL::hpm_mood))[1 + g % 4] FROM generate_series(1, 200) g $$);
-- ranges: [1,3) = [1,2] = (0,2], empty = [1,1); numeric bounds 1.0 = 1.00
SELECT hpm_make('int4range', 'int4range', NULL, NULL, $$
  SELECT x::int4range FROM unnest(ARRAY['empty', '[1,3)', '[1,2]', '(0,2]', '[1,1)', '(,)', '[1,)', '(,5)',
                                        '[-2147483648,2147483647)', NULL, NULL]) x
  UNION ALL SELECT int4range(g % 20, g % 20 + g % 5) FROM generate_series(1, 300) g $$);
SELECT hpm_make('numrange', 'numrange', NULL, NULL, $$
  SELECT x::numrange FROM unnest(ARRAY['[1.0,2.0)', '[1.00,2.000)', '[1,2)', '[1,2]', 'empty', '[1,1)', '(,)',
                                       '[NaN,NaN]', NULL]) x
  UNION ALL SELECT numrange(round((g % 10)::numeric / 2, g % 3), round((g % 10 + 3)::numeric / 2, g % 2))
              FROM generate_series(1, 200) g $$);
SELECT hpm_make('tstzrange', 'tstzrange', NULL, NULL, $$
  SELECT x::tstzrange FROM unnest(ARRAY['[2020-01-01 00:00+00,2020-01-02 00:00+00)',
                                        '[2020-01-01 01:00+01,2020-01-02 01:00+01)', 'empty', '(,infinity)',
                                        '[-infinity,)', NULL]) x
  UNION ALL SELECT tstzrange(timestamptz '2020-01-01 00:00+00' + (g % 20) * interval '1 hour',
                             timestamptz '2020-01-01 00:00+00' + (g % 20 + g % 3) * interval '1 hour')
              FROM generate_series(1, 200) g $$);
SELECT hpm_make('int4multirange', 'int4multirange', NULL, NULL, $$
  SELECT x::int4multirange FROM unnest(ARRAY['{}', '{[1,3),[3,5)}', '{[1,5)}', '{[1,2],[5,6]}', '{[1,3),[5,7)}',
                                             '{(,)}', '{empty}', NULL, NULL]) x
  UNION ALL SELECT int4multirange(int4range(g % 10, g % 10 + 2), int4range(g % 7 + 12, g % 7 + 14))
              FROM generate_series(1, 200) g $$);
-- composites: their fields' equality (numeric 1.0 = 1.00; NULL fields equal)
CREATE TYPE hpm_pair AS (a numeric, b text);
SELECT hpm_make('record', 'hpm_pair', NULL, NULL, $$
  SELECT x::hpm_pair FROM unnest(ARRAY['(1.0,x)', '(1.00,x)', '(1,X)', '(,x)', '(1,)', '(,)', '(NaN,"")',
                                      NULL, NULL]) x
  UNION ALL SELECT ROW(round((g % 6)::numeric / 2, g % 3), chr(97 + g % 3))::hpm_pair
              FROM generate_series(1, 200) g $$);
SELECT hpm_make('pg_lsn', 'pg_lsn', NULL, NULL, $$
  SELECT x FROM unnest('{0/0,FFFFFFFF/FFFFFFFF,1/0,0/1,1/1,NULL,NULL}'::pg_lsn[]) x
  UNION ALL SELECT ('0/0'::pg_lsn + floor(random() * 1e12)::numeric) FROM generate_series(1, 300)
  UNION ALL SELECT ('0/0'::pg_lsn + (g % 40)) FROM generate_series(1, 100) g $$);
SELECT hpm_make('xid', 'xid', NULL, NULL, $$
  SELECT x FROM unnest('{0,1,2,3,4294967295,NULL}'::xid[]) x
  UNION ALL SELECT (g % 60)::text::xid FROM generate_series(1, 200) g $$);
SELECT hpm_make('xid8', 'xid8', NULL, NULL, $$
  SELECT x FROM unnest('{0,1,4294967295,4294967296,18446744073709551615,NULL}'::xid8[]) x
  UNION ALL SELECT (g % 60 * 4294967296::numeric + g % 2)::text::xid8 FROM generate_series(1, 200) g $$);
SELECT hpm_make('cid', 'cid', NULL, NULL, $$
  SELECT x FROM unnest('{0,1,4294967295,NULL}'::cid[]) x
  UNION ALL SELECT (g % 60)::text::cid FROM generate_series(1, 200) g $$);
SELECT hpm_make('tid', 'tid', NULL, NULL, $$
  SELECT x FROM unnest('{"(0,0)","(0,1)","(1,0)","(4294967295,65535)",NULL}'::tid[]) x
  UNION ALL SELECT format('(%s,%s)', g % 7, g % 5)::tid FROM generate_series(1, 200) g $$);
SELECT hpm_make('oidvector', 'oidvector', NULL, NULL, $$
  SELECT x FROM unnest(ARRAY['', '1', '1 2 3', '3 2 1', '4294967295', NULL]::oidvector[]) x
  UNION ALL SELECT (g % 5 || ' ' || g % 3)::oidvector FROM generate_series(1, 200) g $$);
SELECT hpm_make('aclitem', 'aclitem', NULL, NULL, format($$
  SELECT x FROM unnest(ARRAY['=r/%1$s', '=r/%1$s', '=rw/%1$s', '%1$s=arwdDxt/%1$s', '=/%1$s',
                             NULL]::aclitem[]) x
  UNION ALL SELECT ('=' || substr('rwadDxt', 1 + g %% 7, 1 + g %% 3) || '/%1$s')::aclitem
              FROM generate_series(1, 200) g $$, quote_ident(current_user)));
-- the other classes: pattern classes, varchar_ops, cidr_ops
SELECT hpm_make('text_pattern', 'text', '"C"', 'text_pattern_ops', 'SELECT s FROM hpm_strings');
SELECT hpm_make('varchar_pattern', 'varchar(40)', NULL, 'varchar_pattern_ops', 'SELECT left(s, 40) FROM hpm_strings');
SELECT hpm_make('varchar_ops', 'varchar(40)', NULL, 'varchar_ops', 'SELECT left(s, 40) FROM hpm_strings');
SELECT hpm_make('bpchar_pattern', 'char(6)', NULL, 'bpchar_pattern_ops', 'SELECT left(s, 6) FROM hpm_strings');
SELECT hpm_make('cidr', 'cidr', NULL, 'cidr_ops', $$
  SELECT x FROM unnest('{10.0.0.1,10.0.0.1/32,10.0.0.0/24,10.0.0.0/8,0.0.0.0/0,::1,::/0,NULL}'::cidr[]) x
  UNION ALL SELECT set_masklen(('10.' || g % 5 || '.' || g % 7 || '.0')::cidr, 16 + g % 9)::cidr
              FROM generate_series(1, 200) g $$);
-- a larger table whose buckets split, built by CREATE INDEX and grown through the log
SELECT hpm_make('int8_big', 'int8', NULL, NULL, $$
  SELECT CASE WHEN g % 500 = 0 THEN NULL ELSE floor(random() * 4e9)::int8 % 12000 END
    FROM generate_series(1, 12000) g $$);
UPDATE hpm_probe SET probe = probe || ' WHERE o.id % 50 = 0'
 WHERE t = 'int8_big' AND probe LIKE '% JOIN %';

-- the probes of each type: values present and absent, equal values of other forms, other
-- types of the operator family (int8 column = int2 value, ...), arrays
INSERT INTO hpm_probe (t, probe)
SELECT t, 'SELECT id FROM {tab} WHERE ' || w FROM (VALUES
  ('int2', 'v = 0'), ('int2', 'v = 32767::int2'), ('int2', 'v = -32768'), ('int2', 'v = 1::int4'),
  ('int2', 'v = 1::int8'), ('int2', 'v = -1::int8'), ('int2', 'v = 70000'), ('int2', 'v = 65537::int4'),
  ('int2', 'v = 4294967297::int8'), ('int2', 'v = ANY (''{1,2,NULL,2,70000}''::int8[])'),
  ('int2', 'v = ANY (''{100,-256}''::int4[])'),
  ('int4', 'v = 1::int2'), ('int4', 'v = -1::int2'), ('int4', 'v = 4294967296::int8'),
  ('int4', 'v = 4294967297::int8'), ('int4', 'v = -1::int8'), ('int4', 'v = 2147483647'),
  ('int4', 'v = -2147483648'), ('int4', 'v = 9223372036854775807'),
  ('int4', 'v = ANY (''{1,4294967296,-1,NULL}''::int8[])'), ('int4', 'v = ANY (''{1,2,2}''::int2[])'),
  ('int4', 'v = ANY (''{1,2,3}'') AND v = ANY (''{2,5,NULL}''::int8[])'), ('int4', 'v = 1 AND v IS NULL'),
  ('int4', 'v = ANY (''{1,2,3}'') AND v = 4'), ('int4', 'v IS NULL AND v IS NOT NULL'),
  ('int8', 'v = 1::int2'), ('int8', 'v = -1::int4'), ('int8', 'v = 4294967296'), ('int8', 'v = 1'),
  ('int8', 'v = 0'), ('int8', 'v = 4294967297'), ('int8', 'v = -4294967297'),
  ('int8', 'v = -4294967295'), ('int8', 'v = -4294967296::int8'), ('int8', 'v = -2::int4'),
  ('int8', 'v = -9223372036854775808'), ('int8', 'v = 9223372036854775807'), ('int8', 'v = 3'),
  ('int8', 'v = ANY (ARRAY[1, 2, NULL]::int4[])'), ('int8', 'v = ANY (''{-1,0,1}''::int2[])'),
  ('float4', 'v = ''-0'''), ('float4', 'v = 0'), ('float4', 'v = 0::float8'), ('float4', 'v = ''-0''::float8'),
  ('float4', 'v = ''NaN'''), ('float4', 'v = ''NaN''::float8'), ('float4', 'v = ''Infinity'''),
  ('float4', 'v = ''-Infinity''::float8'), ('float4', 'v = 0.1::float8'), ('float4', 'v = 0.1::float4'),
  ('float4', 'v = 1.5::float8'), ('float4', 'v = 1e-40::float4'), ('float4', 'v = 3.4028235e38::float8'),
  ('float4', 'v = ANY (''{0,NaN,1.5,NULL,-0}''::float8[])'),
  ('float8', 'v = ''-0'''), ('float8', 'v = 0::float4'), ('float8', 'v = ''-0''::float4'),
  ('float8', 'v = ''NaN'''), ('float8', 'v = ''NaN''::float4'), ('float8', 'v = ''-Infinity''::float4'),
  ('float8', 'v = 0.1'), ('float8', 'v = 0.1::float4'), ('float8', 'v = 1.5::float4'),
  ('float8', 'v = 4.9e-324'), ('float8', 'v = 1.7976931348623157e308'), ('float8', 'v = 0.2'),
  ('float8', 'v = ANY (''{0,NaN,1.5,NULL}''::float4[])'),
  ('numeric', 'v = 1.000'), ('numeric', 'v = 1'), ('numeric', 'v = 1::int8'), ('numeric', 'v = 0'),
  ('numeric', 'v = -0.0'), ('numeric', 'v = ''NaN'''), ('numeric', 'v = ''Infinity'''),
  ('numeric', 'v = ''-Infinity'''), ('numeric', 'v = 1.5'), ('numeric', 'v = 2.50000'),
  ('numeric', 'v = 1e-100'), ('numeric', 'v = 1e-99'), ('numeric', 'v = 1e100'),
  ('numeric', 'v = 123456789012345678901234567890.1234567890'), ('numeric', 'v = 0.0000000001'),
  ('numeric', 'v = ANY (''{1.0,NaN,NULL,2.5,2.50}''::numeric[])'),
  ('text_c', 'v = ''abc'''), ('text_c', 'v = ''ABC'''), ('text_c', 'v = '''''), ('text_c', 'v = ''a '''),
  ('text_c', 'v = ''ss'''), ('text_c', 'v = U&''\00DF'''), ('text_c', 'v = U&''e\0301'''),
  ('text_c', 'v = repeat(''x'', 3000)'), ('text_c', 'v = repeat(''x'', 2999)'), ('text_c', 'v = ''absent'''),
  ('text_c', 'v = ''abc''::name'), ('text_c', 'v = ANY (''{abc,NULL,ABC,abc}'')'),
  ('text_c', 'v = ANY (''{abc,Ss,e}''::name[])'),
  ('text_icu', 'v = ''abc'''), ('text_icu', 'v = ''ABC'''), ('text_icu', 'v = '''''),
  ('text_icu', 'v = ''ss'''), ('text_icu', 'v = U&''\00E9'''), ('text_icu', 'v = U&''e\0301'''),
  ('text_icu', 'v = repeat(''X'', 3000)'), ('text_icu', 'v = ''absent'''),
  ('text_icu', 'v = ANY (''{abc,NULL,ABC,abc}'')'),
  ('text_ci', 'v = ''abc'''), ('text_ci', 'v = ''aBc'''), ('text_ci', 'v = '''''), ('text_ci', 'v = ''a '''),
  ('text_ci', 'v = ''SS'''), ('text_ci', 'v = U&''\00DF'''), ('text_ci', 'v = U&''\00E9'''),
  ('text_ci', 'v = U&''E\0301'''), ('text_ci', 'v = ''E'''), ('text_ci', 'v = repeat(''x'', 3000)'),
  ('text_ci', 'v = ''absent'''), ('text_ci', 'v = ANY (''{ABC,NULL,e,abc}'')'),
  ('varchar', 'v = ''abc'''), ('varchar', 'v = ''abc ''::varchar'), ('varchar', 'v = ''abc''::text'),
  ('varchar', 'v = '''''), ('varchar', 'v = ANY (''{a,A,NULL}''::varchar[])'),
  ('bpchar', 'v = ''abc'''), ('bpchar', 'v = ''abc   '''), ('bpchar', 'v = ''abc''::bpchar'),
  ('bpchar', 'v = ''abc ''::char(4)'), ('bpchar', 'v = '''''), ('bpchar', 'v = '' '''),
  ('bpchar', 'v = ''xxxxxx'''), ('bpchar', 'v = ANY (''{a,"a ",A,NULL}''::bpchar[])'),
  ('bpchar_ci', 'v = ''abc'''), ('bpchar_ci', 'v = ''ABC  '''), ('bpchar_ci', 'v = U&''\00DF'''),
  ('bpchar_ci', 'v = U&''E\0301'''), ('bpchar_ci', 'v = '''''),
  ('name', 'v = ''abc'''), ('name', 'v = ''abc''::text'), ('name', 'v = ''ABC''::text'),
  ('name', 'v = '''''), ('name', 'v = repeat(''x'', 63)'), ('name', 'v = repeat(''x'', 64)::text'),
  ('name', 'v = ANY (''{abc,ABC,NULL}''::name[])'), ('name', 'v = ANY (''{abc,Ss,NULL}''::text[])'),
  ('bytea', 'v = ''\x'''), ('bytea', 'v = ''\x00'''), ('bytea', 'v = ''\xdeadbeef'''),
  ('bytea', 'v = ''abc''::bytea'), ('bytea', 'v = ''\x0102'''),
  ('uuid', 'v = ''00000000-0000-0000-0000-000000000000'''), ('uuid', 'v = ''FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF'''),
  ('uuid', 'v = md5(''7'')::uuid'), ('uuid', 'v = md5(''absent'')::uuid'),
  ('date', 'v = ''2000-01-01'''), ('date', 'v = ''infinity'''), ('date', 'v = ''-infinity'''),
  ('date', 'v = ''4713-01-01 BC'''), ('date', 'v = ''5874897-12-31'''), ('date', 'v = ''2020-03-01'''),
  ('date', 'v = ''1900-01-01'''),
  ('time', 'v = ''24:00'''), ('time', 'v = ''00:00'''), ('time', 'v = ''12:00'''), ('time', 'v = ''12:00:00.000002'''),
  ('time', 'v = ''08:15'''),
  ('timetz', 'v = ''12:00+00'''), ('timetz', 'v = ''13:00+01'''), ('timetz', 'v = ''12:00+01'''),
  ('timetz', 'v = ''08:15-01'''), ('timetz', 'v = ''08:15+00'''), ('timetz', 'v = ''00:00+15:59'''),
  ('timestamp', 'v = ''2000-01-01'''), ('timestamp', 'v = ''2000-01-01''::date::timestamp'),
  ('timestamp', 'v = ''infinity'''), ('timestamp', 'v = ''-infinity'''),
  ('timestamp', 'v = ''294276-12-31 23:59:59.999999'''), ('timestamp', 'v = ''2020-02-28 03:00'''),
  ('timestamptz', 'v = ''2020-01-01 00:00+00'''), ('timestamptz', 'v = ''2020-01-01 09:00+09'''),
  ('timestamptz', 'v = ''infinity'''), ('timestamptz', 'v = ''2020-02-28 03:00+00'''),
  ('timestamptz', 'v = ''2020-02-28 03:00''::timestamp::timestamptz'),
  ('interval', 'v = ''1 day'''), ('interval', 'v = ''24 hours'''), ('interval', 'v = ''30 days'''),
  ('interval', 'v = ''1 year'''), ('interval', 'v = ''0'''), ('interval', 'v = ''1 mon -30 days'''),
  ('interval', 'v = ''1 day 1 hour'''), ('interval', 'v = ''25 hours'''), ('interval', 'v = ''2 mons 4 days'''),
  ('interval', 'v = ''178000000 years'''), ('interval', 'v = ANY (''{1 day,720 hours,NULL}''::interval[])'),
  ('bool', 'v = true'), ('bool', 'v = false'), ('bool', 'v'), ('bool', 'NOT v'),
  ('bool', 'v = ANY (''{t,NULL}''::bool[])'),
  ('char', 'v = ''a'''), ('char', 'v = '''''), ('char', 'v = ''\377'''), ('char', 'v = ''z'''),
  ('oid', 'v = 0'), ('oid', 'v = 4294967295'), ('oid', 'v = 1'), ('oid', 'v = 2147483648'),
  ('oid', 'v = ANY (''{0,1,NULL,7}''::oid[])'),
  ('inet', 'v = ''10.0.0.1'''), ('inet', 'v = ''10.0.0.1/24'''), ('inet', 'v = ''10.0.0.0/24''::cidr'),
  ('inet', 'v = ''::1'''), ('inet', 'v = ''::ffff:10.0.0.1'''), ('inet', 'v = ''10.1.1.1/25'''),
  ('macaddr', 'v = ''08:00:2b:01:02:03'''), ('macaddr', 'v = ''ff:ff:ff:ff:ff:ff'''),
  ('macaddr', 'v = ''00:00:00:00:00:01'''),
  ('macaddr8', 'v = ''08:00:2b:01:02:03'''), ('macaddr8', 'v = ''08:00:2b:ff:fe:01:02:03'''),
  ('macaddr8', 'v = ''08:00:2b:01:02:03:04:05'''), ('macaddr8', 'v = ''08:00:2b:01:02:03:04:06'''),
  ('jsonb', 'v = ''1'''), ('jsonb', 'v = ''1.000'''), ('jsonb', 'v = ''{"a": 1.0, "b": [1.00, 2]}'''),
  ('jsonb', 'v = ''null'''), ('jsonb', 'v = ''[1, 2]'''), ('jsonb', 'v = ''{"k": 3, "v": 1.50}'''),
  ('jsonb', 'v = ''{"k": 3, "v": 1.5, "w": 0}'''), ('jsonb', 'v = ''"x"'''),
  ('int4_array', 'v = ''{1,2}'''), ('int4_array', 'v = ''{}'''), ('int4_array', 'v = ''{NULL}'''),
  ('int4_array', 'v = ''{1,2,3,4}'''), ('int4_array', 'v = ''{{1,2},{3,4}}'''), ('int4_array', 'v = ''[0:1]={1,2}'''),
  ('int4_array', 'v = ARRAY[3, 0]'), 
  ('numeric_array', 'v = ''{1.000}'''), ('numeric_array', 'v = ''{1.0,2.0}'''), ('numeric_array', 'v = ''{NaN}'''),
  ('numeric_array', 'v = ''{0.50}'''),
  ('text_array', 'v = ''{a,A}'''), ('text_array', 'v = ''{a}'''), ('text_array', 'v = ''{NULL}'''),
  ('text_array', 'v = ''{abc,ABC}'''),
  ('enum', 'v = ''ok'''), ('enum', 'v = ''meh'''), ('enum', 'v = ANY (''{sad,happy,NULL}'')'),
  ('int4range', 'v = ''[1,3)'''), ('int4range', 'v = ''(0,2]'''), ('int4range', 'v = ''empty'''),
  ('int4range', 'v = ''(,)'''), ('int4range', 'v = ''[5,9)'''), ('int4range', 'v = ''[5,10)'''),
  ('numrange', 'v = ''[1,2)'''), ('numrange', 'v = ''[1.000,2.0000)'''), ('numrange', 'v = ''empty'''),
  ('numrange', 'v = ''[0.5,2.00)'''),
  ('tstzrange', 'v = ''[2020-01-01 02:00+02,2020-01-02 00:00+00)'''), ('tstzrange', 'v = ''empty'''),
  ('int4multirange', 'v = ''{[1,5)}'''), ('int4multirange', 'v = ''{}'''), ('int4multirange', 'v = ''{[1,4),[3,5)}'''),
  ('int4multirange', 'v = ''{[3,5),[12,14)}'''),
  ('record', 'v = ''(1,x)''::hpm_pair'), ('record', 'v = ROW(1.000, ''x'')::hpm_pair'),
  ('record', 'v = ''(,)''::hpm_pair'), ('record', 'v = ''(,x)''::hpm_pair'), ('record', 'v = ROW(0.5, ''b'')::hpm_pair'),
  ('pg_lsn', 'v = ''0/0'''), ('pg_lsn', 'v = ''FFFFFFFF/FFFFFFFF'''), ('pg_lsn', 'v = ''0/5'''),
  ('xid', 'v = ''4294967295'''), ('xid', 'v = ''7'''), ('xid8', 'v = ''18446744073709551615'''),
  ('xid8', 'v = ''4294967296'''), ('cid', 'v = ''7'''), ('tid', 'v = ''(4294967295,65535)'''),
  ('tid', 'v = ''(3,4)'''), ('oidvector', 'v = ''1 2 3'''), ('oidvector', 'v = '''''),
  ('oidvector', 'v = ''2 1'''),
  ('text_pattern', 'v = ''abc'''), ('text_pattern', 'v = ''absent'''),
  ('varchar_pattern', 'v = ''abc'''), ('varchar_ops', 'v = ''abc'''),
  ('bpchar_pattern', 'v = ''abc'''), ('bpchar_pattern', 'v = ''abc   '''),
  ('cidr', 'v = ''10.0.0.0/24'''), ('cidr', 'v = ''10.0.0.1'''), ('cidr', 'v = ''10.0.0.1/32''::inet'),
  ('int8_big', 'v = 42'), ('int8_big', 'v = 42::int2'), ('int8_big', 'v = ANY (ARRAY(SELECT g FROM generate_series(1, 300) g))')
) p(t, w);
-- joins on the other types of a family: a lookup per outer row, by its value's hash function
INSERT INTO hpm_probe (t, probe) VALUES
  ('int2', 'SELECT o.id, x.id FROM hpm_s_int4 o JOIN {tab} x ON x.v = o.v'),
  ('int2', 'SELECT o.id, x.id FROM hpm_s_int8 o JOIN {tab} x ON x.v = o.v'),
  ('int4', 'SELECT o.id, x.id FROM hpm_s_int2 o JOIN {tab} x ON x.v = o.v'),
  ('int4', 'SELECT o.id, x.id FROM hpm_s_int8 o JOIN {tab} x ON x.v = o.v'),
  ('int8', 'SELECT o.id, x.id FROM hpm_s_int2 o JOIN {tab} x ON x.v = o.v'),
  ('int8', 'SELECT o.id, x.id FROM hpm_s_int4 o JOIN {tab} x ON x.v = o.v'),
  ('float4', 'SELECT o.id, x.id FROM hpm_s_float8 o JOIN {tab} x ON x.v = o.v'),
  ('float8', 'SELECT o.id, x.id FROM hpm_s_float4 o JOIN {tab} x ON x.v = o.v'),
  ('text_c', 'SELECT o.id, x.id FROM hpm_s_name o JOIN {tab} x ON x.v = o.v'),
  ('name', 'SELECT o.id, x.id FROM hpm_s_text_c o JOIN {tab} x ON x.v = o.v'),
  -- an array parameter per outer row: = ANY rescanned with new arrays
  ('int4', 'SELECT o.id, x.id FROM (SELECT id, ARRAY[v, v / 2, NULL, v] a FROM hpm_s_int4 WHERE id % 4 = 0) o
              JOIN {tab} x ON x.v = ANY (o.a)'),
  ('text_ci', 'SELECT o.id, x.id FROM (SELECT id, ARRAY[v, upper(v), NULL] a FROM hpm_s_text_ci WHERE id % 3 = 0) o
                 JOIN {tab} x ON x.v = ANY (o.a)');

-- every hash_pm operator class has an index below: none left out
SELECT opc.opcname AS untested_class
  FROM pg_opclass opc JOIN pg_am am ON am.oid = opc.opcmethod
 WHERE am.amname = 'hash_pm'
   AND NOT EXISTS (SELECT 1 FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
                    WHERE c.relname LIKE 'hpm\_p\_%' AND i.indclass[0] = opc.oid);

SELECT t, d.* FROM hpm_types, LATERAL hpm_diff(t) d ORDER BY ord;
-- some of the probes above, each one's rows counted by a sequential scan, the hash_pm index
-- (plain and bitmap scans) and the hash index: equal values of other forms, hash codes shared
-- by unequal values, values of other types of the family (v = NULL: no scan, the planner
-- folds it to false)
CREATE FUNCTION hpm_counts(tname text, cond text, OUT seq bigint, OUT hash_pm bigint,
                           OUT hash_pm_bitmap bigint, OUT hash bigint) LANGUAGE plpgsql AS $$
BEGIN
  seq := (hpm_run(format('SELECT id FROM %I WHERE %s', 'hpm_p_' || tname, cond), 'seq', NULL)).n;
  hash_pm := (hpm_run(format('SELECT id FROM %I WHERE %s', 'hpm_p_' || tname, cond), 'index', NULL)).n;
  hash_pm_bitmap := (hpm_run(format('SELECT id FROM %I WHERE %s', 'hpm_p_' || tname, cond), 'bitmap', NULL)).n;
  hash := (hpm_run(format('SELECT id FROM %I WHERE %s', 'hpm_h_' || tname, cond), 'any', NULL)).n;
END $$;
SELECT t, cond, c.* FROM (VALUES
  ('int8', 'v = 1'), ('int8', 'v = 4294967296'), ('int8', 'v = 1::int2'), ('int4', 'v = 4294967296::int8'),
  ('float4', 'v = 0.1::float8'), ('float4', 'v = 0.1::float4'), ('float8', 'v = ''-0'''),
  ('float8', 'v = ''NaN''::float4'), ('numeric', 'v = 1.000'), ('numeric', 'v = -0.0'),
  ('numeric', 'v = ''NaN'''), ('text_c', 'v = ''abc'''), ('text_ci', 'v = ''abc'''),
  ('text_ci', 'v = U&''\00E9'''), ('bpchar', 'v = ''abc   '''), ('name', 'v = ''abc''::text'),
  ('timetz', 'v = ''12:00+00'''), ('timestamptz', 'v = ''2020-01-01 09:00+09'''),
  ('interval', 'v = ''24 hours'''), ('interval', 'v = ''30 days'''), ('interval', 'v = ''360 days'''),
  ('inet', 'v = ''10.0.0.1'''), ('macaddr8', 'v = ''08:00:2b:01:02:03'''), ('jsonb', 'v = ''1.000'''),
  ('jsonb', 'v = ''{"a": 1.0, "b": [1.00, 2]}'''), ('int4_array', 'v = ''{1,2}'''),
  ('numeric_array', 'v = ''{1.000}'''), ('int4range', 'v = ''[1,3)'''), ('int4range', 'v = ''empty'''),
  ('int4multirange', 'v = ''{[1,5)}'''), ('record', 'v = ''(1,x)''::hpm_pair'),
  ('record', 'v = ''(,)''::hpm_pair'), ('int8', 'v = NULL'), ('int8', 'v IS NULL')) p(t, cond),
  LATERAL hpm_counts(t, cond) c;

-- each index verified, with every heap tuple in it, while rows may still wait in its log
SELECT count(*) AS indexes, count(hash_pm_check(c.oid, true)) AS verified
  FROM pg_class c JOIN pg_am am ON am.oid = c.relam
 WHERE am.amname = 'hash_pm' AND c.relname LIKE 'hpm\_p\_%';

-- what the plans look like when hash_pm is forced
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM hpm_p_int8 WHERE v = 1::int2;
EXPLAIN (COSTS OFF) SELECT id FROM hpm_p_int8 WHERE v = ANY ('{1,2,NULL}'::int4[]);
EXPLAIN (COSTS OFF) SELECT id FROM hpm_p_int8 WHERE v IS NULL;
EXPLAIN (COSTS OFF) SELECT id FROM hpm_p_int8 WHERE v IS NOT NULL;
EXPLAIN (COSTS OFF) SELECT id FROM hpm_p_text_ci WHERE v = 'ABC';
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_material = off;
SET enable_memoize = off;
EXPLAIN (COSTS OFF) SELECT o.id, x.id FROM hpm_s_int2 o JOIN hpm_p_int8 x ON x.v = o.v;
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET enable_material;
RESET enable_memoize;
-- no order: ORDER BY sorts what the index returns
EXPLAIN (COSTS OFF) SELECT id FROM hpm_p_int8 WHERE v = ANY ('{1,2}') ORDER BY v;
-- no index-only scans: the index keeps hash codes
EXPLAIN (COSTS OFF) SELECT v FROM hpm_p_int8 WHERE v = 1;
-- ranges and pattern matches are not hash searches
EXPLAIN (COSTS OFF) SELECT id FROM hpm_p_int8 WHERE v < 1;
EXPLAIN (COSTS OFF) SELECT id FROM hpm_p_text_pattern WHERE v LIKE 'ab%';
-- a boolean column as a condition (WHERE v, v = true, NOT v): the core planner matches it
-- only to hash's and btree's boolean families; pm_index's planner hook derives v = true or
-- v = false for hash_pm, which keeps the original clause as a filter
EXPLAIN (COSTS OFF) SELECT id FROM hpm_p_bool WHERE v = true;
EXPLAIN (COSTS OFF) SELECT id FROM hpm_h_bool WHERE v = true;
EXPLAIN (COSTS OFF) SELECT id FROM hpm_p_bool WHERE NOT v;
EXPLAIN (COSTS OFF) SELECT id FROM hpm_p_bool WHERE v = ANY ('{t}');
RESET enable_bitmapscan;
SET enable_indexscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM hpm_p_int8 WHERE v = 1::int2;
EXPLAIN (COSTS OFF) SELECT id FROM hpm_p_int8 WHERE v = 1 OR v IS NULL;
RESET enable_indexscan;
RESET enable_seqscan;

-- DELETE and VACUUM: a third of each table's rows go, then come back under new ids (the same
-- values in new places: inserts through the log beside what VACUUM removed); each index
-- verified with every heap tuple in it
DO $$
DECLARE
  r record;
BEGIN
  FOR r IN SELECT 'hpm_' || k || '_' || t AS tab FROM hpm_types, unnest('{p,h}'::text[]) k ORDER BY ord, k LOOP
    EXECUTE format('DELETE FROM %I WHERE id %% 3 = 0', r.tab);
  END LOOP;
END $$;
SELECT 'VACUUM ' || string_agg(format('%I', 'hpm_' || k || '_' || t), ', ' ORDER BY ord, k)
  FROM hpm_types, unnest('{p,h}'::text[]) k
\gexec
DO $$
DECLARE
  r record;
BEGIN
  FOR r IN SELECT 'hpm_' || k || '_' || t AS tab, 'hpm_s_' || t AS src
             FROM hpm_types, unnest('{p,h}'::text[]) k ORDER BY ord, k LOOP
    EXECUTE format('INSERT INTO %I SELECT id + 1000000, v FROM %I WHERE id %% 3 = 0', r.tab, r.src);
  END LOOP;
END $$;
SELECT t, d.* FROM hpm_types, LATERAL hpm_diff(t) d ORDER BY ord;
SELECT count(*) AS indexes, count(hash_pm_check(c.oid, true)) AS verified
  FROM pg_class c JOIN pg_am am ON am.oid = c.relam
 WHERE am.amname = 'hash_pm' AND c.relname LIKE 'hpm\_p\_%';

-- The operation log: with the replay workers held (pm_index.debug_tier_pause), every row
-- inserted after CREATE INDEX waits in its index's log, and scans find it there only.  Held
-- once a row inserted waits a tenth of a second unapplied.
CREATE TABLE hpm_sentinel (k int);
CREATE INDEX hpm_sentinel_k ON hpm_sentinel USING hash_pm (k);
ALTER SYSTEM SET pm_index.debug_tier_pause = on;
SELECT pg_reload_conf();
DO $$
BEGIN
  FOR i IN 1..300 LOOP
    INSERT INTO hpm_sentinel VALUES (i);
    PERFORM pg_sleep(0.1);
    EXIT WHEN (SELECT waiting_entries FROM pm_index_tier_lag('hpm_sentinel_k')) > 0;
  END LOOP;
  PERFORM pg_sleep(0.2);
END $$;
SELECT waiting_entries > 0 AS held FROM pm_index_tier_lag('hpm_sentinel_k');
-- the same rows and probes as the types', the odd ids waiting
CREATE FUNCTION hpm_waiting(tname text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  PERFORM hpm_make('w_' || tname, typ, coll, opclass, format('SELECT v FROM %I ORDER BY id', 'hpm_s_' || tname))
     FROM hpm_types WHERE t = tname;
  DELETE FROM hpm_probe WHERE t = 'w_' || tname;
  INSERT INTO hpm_probe (t, probe, modes) SELECT 'w_' || tname, probe, modes FROM hpm_probe
   WHERE t = tname ORDER BY ord;
END $$;
SELECT hpm_waiting(t) FROM unnest('{int8,float8,numeric,text_ci,bpchar,interval,jsonb,record,
                                    int4range}'::text[]) t;
SELECT t, w.waiting_entries = (SELECT count(*) FROM hpm_s_int8 WHERE id % 2 = 1) AS all_waiting
  FROM hpm_types, pm_index_tier_lag('hpm_p_' || t || '_v') w WHERE t = 'w_int8';
SELECT t, w.waiting_entries > 0 AS waiting, d.*
  FROM hpm_types, pm_index_tier_lag('hpm_p_' || t || '_v') w, LATERAL hpm_diff(t) d
 WHERE t LIKE 'w\_%' ORDER BY ord;
-- VACUUM applies what waits before it removes the deleted rows' entries; then more wait
DELETE FROM hpm_p_w_int8 WHERE id % 3 = 0;
DELETE FROM hpm_h_w_int8 WHERE id % 3 = 0;
VACUUM hpm_p_w_int8;
VACUUM hpm_h_w_int8;
SELECT waiting_entries FROM pm_index_tier_lag('hpm_p_w_int8_v');
INSERT INTO hpm_p_w_int8 SELECT id + 1000000, v FROM hpm_s_int8 WHERE id % 3 = 0;
INSERT INTO hpm_h_w_int8 SELECT id + 1000000, v FROM hpm_s_int8 WHERE id % 3 = 0;
SELECT waiting_entries > 0 AS waiting FROM pm_index_tier_lag('hpm_p_w_int8_v');
SELECT hpm_diff('w_int8');
-- an exclusion constraint by =: a second row of a value is refused while the first one's
-- entry waits in the log (the hash code of 1 is that of 4294967296: both are allowed)
CREATE TABLE hpm_ex (k int8, EXCLUDE USING hash_pm (k WITH =));
INSERT INTO hpm_ex SELECT g FROM generate_series(1, 500) g;
SELECT waiting_entries AS waiting FROM pm_index_tier_lag('hpm_ex_k_excl');
INSERT INTO hpm_ex VALUES (7);
INSERT INTO hpm_ex VALUES (4294967296), (NULL), (NULL);
INSERT INTO hpm_ex VALUES (4294967296);
INSERT INTO hpm_ex VALUES (1::int2);
INSERT INTO hpm_ex VALUES (501), (502), (501);
DELETE FROM hpm_ex WHERE k = 7;
INSERT INTO hpm_ex VALUES (7);
SELECT count(*), count(k), count(DISTINCT k) FROM hpm_ex;
ALTER SYSTEM RESET pm_index.debug_tier_pause;
SELECT pg_reload_conf();
-- the verifier applies what waits, then finds every heap tuple in the index
SELECT count(*) AS indexes, count(hash_pm_check(c.oid, true)) AS verified
  FROM pg_class c JOIN pg_am am ON am.oid = c.relam
 WHERE am.amname = 'hash_pm' AND c.relname LIKE 'hpm\_p\_w\_%';
SELECT t, w.waiting_entries FROM hpm_types, pm_index_tier_lag('hpm_p_' || t || '_v') w
 WHERE t LIKE 'w\_%' ORDER BY ord;
SELECT hash_pm_check('hpm_ex_k_excl', true);
DROP TABLE hpm_sentinel, hpm_ex;

-- every row deleted, VACUUM, the table filled again
DELETE FROM hpm_p_int4;
DELETE FROM hpm_h_int4;
VACUUM hpm_p_int4;
VACUUM hpm_h_int4;
SELECT hpm_diff('int4');
INSERT INTO hpm_p_int4 SELECT * FROM hpm_s_int4;
INSERT INTO hpm_h_int4 SELECT * FROM hpm_s_int4;
SELECT hpm_diff('int4');
-- rows updated: the new versions' entries beside the old ones' until VACUUM
UPDATE hpm_p_text_ci SET v = upper(v) WHERE id % 4 = 1;
UPDATE hpm_h_text_ci SET v = upper(v) WHERE id % 4 = 1;
SELECT hpm_diff('text_ci');
VACUUM hpm_p_text_ci;
VACUUM hpm_h_text_ci;
SELECT hpm_diff('text_ci');
SELECT hash_pm_check('hpm_p_int4_v', true), hash_pm_check('hpm_p_text_ci_v', true);
-- a transaction's own rows, before it commits, and none after it rolls back
BEGIN;
INSERT INTO hpm_p_int2 VALUES (-1, 12345), (-2, 12345), (-3, NULL);
SET LOCAL enable_seqscan = off;
SET LOCAL enable_bitmapscan = off;
SELECT id FROM hpm_p_int2 WHERE v = 12345 ORDER BY id;
SELECT id FROM hpm_p_int2 WHERE v IS NULL AND id < 0;
ROLLBACK;
SET enable_seqscan = off;
SELECT count(*) FROM hpm_p_int2 WHERE v = 12345 OR id < 0;
RESET enable_seqscan;
SELECT hash_pm_check('hpm_p_int2_v', true);
-- REINDEX builds again from the table; the answers stay
REINDEX INDEX hpm_p_text_c_v;
SELECT hpm_diff('text_c');
SELECT hash_pm_check('hpm_p_text_c_v', true);
-- an expression index and a partial one, beside the column's, as hash's: the same rows, and
-- used
CREATE INDEX hpm_p_text_c_x ON hpm_p_text_c USING hash_pm (lower(v)) WHERE id % 3 <> 1;
CREATE INDEX hpm_h_text_c_x ON hpm_h_text_c USING hash (lower(v)) WHERE id % 3 <> 1;
INSERT INTO hpm_p_text_c SELECT id + 2000000, upper(v) FROM hpm_s_text_c WHERE id % 2 = 0;
INSERT INTO hpm_h_text_c SELECT id + 2000000, upper(v) FROM hpm_s_text_c WHERE id % 2 = 0;
SELECT cond, s.n AS seq, i.res = s.res AS hash_pm_same, i.used AS hash_pm_used,
       b.res = s.res AS bitmap_same, b.used AS bitmap_used, h.res = s.res AS hash_same, h.used AS hash_used
  FROM (VALUES ('lower(v) = ''abc'' AND id % 3 <> 1'), ('lower(v) = ''ss'' AND id % 3 <> 1'),
               ('lower(v) = ANY (''{a,e,NULL}'') AND id % 3 <> 1'), ('lower(v) = repeat(''x'', 3000) AND id % 3 <> 1'),
               ('lower(v) = ''absent'' AND id % 3 <> 1'), ('lower(v) IS NULL AND id % 3 <> 1')) p(cond),
       LATERAL hpm_run('SELECT id FROM hpm_p_text_c WHERE ' || cond, 'seq', NULL) s,
       LATERAL hpm_run('SELECT id FROM hpm_p_text_c WHERE ' || cond, 'index', 'hpm_p_text_c_x') i,
       LATERAL hpm_run('SELECT id FROM hpm_p_text_c WHERE ' || cond, 'bitmap', 'hpm_p_text_c_x') b,
       LATERAL hpm_run('SELECT id FROM hpm_h_text_c WHERE ' || cond, 'any', 'hpm_h_text_c_x') h;
SELECT hpm_diff('text_c');
SELECT hash_pm_check('hpm_p_text_c_x', true), hash_pm_check('hpm_p_text_c_v', true);

-- what hash_pm refuses, with the SQLSTATEs of hash's refusals
\set VERBOSITY sqlstate
CREATE UNIQUE INDEX ON hpm_p_int4 USING hash_pm (v);
CREATE INDEX ON hpm_p_int4 USING hash_pm (id, v);
CREATE INDEX ON hpm_p_int4 USING hash_pm (v) WITH (pages_per_range = 4);
CREATE INDEX ON hpm_p_int4 USING hash_pm ((point(id, id)));
SELECT hash_pm_check('hpm_h_int4_v');
SELECT hash_pm_check('hpm_p_int4');
\set VERBOSITY default
-- each statement with hash_pm ({am}, on hpm_p_*) and with hash (on hpm_h_*): the same
-- SQLSTATE, or ok (what succeeds is rolled back)
CREATE FUNCTION hpm_sqlstate(stmt text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE stmt;
  RAISE EXCEPTION 'hpm_ok';
EXCEPTION WHEN OTHERS THEN
  RETURN CASE WHEN SQLERRM = 'hpm_ok' THEN 'ok' ELSE SQLSTATE END;
END $$;
CREATE TABLE hpm_p_money (m money);
CREATE TABLE hpm_h_money (m money);
SELECT s AS statement, hpm_sqlstate(replace(replace(s, '{am}', 'hash_pm'), '{t}', 'p')) AS hash_pm,
       hpm_sqlstate(replace(replace(s, '{am}', 'hash'), '{t}', 'h')) AS hash
  FROM unnest(ARRAY[
    'CREATE UNIQUE INDEX ON hpm_{t}_int4 USING {am} (v)',
    'CREATE INDEX ON hpm_{t}_int4 USING {am} (id, v)',
    'CREATE INDEX ON hpm_{t}_int4 USING {am} (v) INCLUDE (id)',
    'CREATE INDEX ON hpm_{t}_int4 USING {am} (v DESC)',
    'CREATE INDEX ON hpm_{t}_int4 USING {am} (v NULLS FIRST)',
    'CREATE INDEX ON hpm_{t}_int4 USING {am} (v) WITH (pages_per_range = 4)',
    'CREATE INDEX ON hpm_{t}_int4 USING {am} (v) WITH (fillfactor = 5)',
    'CREATE INDEX ON hpm_{t}_int4 USING {am} (v) WITH (fillfactor = 100)',
    'CREATE INDEX ON hpm_{t}_int4 USING {am} (v) WITH (tiered = off)',
    'CREATE INDEX ON hpm_{t}_int4 USING {am} (v float8_ops)',
    'CREATE INDEX ON hpm_{t}_int4 USING {am} (v int8_ops)',
    'CREATE INDEX ON hpm_{t}_int4 USING {am} ((point(id, id)))',
    'CREATE INDEX ON hpm_{t}_int4 USING {am} ((id::text::json))',
    'CREATE INDEX ON hpm_{t}_money USING {am} (m)',
    'CREATE INDEX ON hpm_{t}_int4 USING {am} ((v / 2)) WHERE v > 0',
    'ALTER TABLE hpm_{t}_int4 ADD EXCLUDE USING {am} (v WITH =)',
    'ALTER TABLE hpm_{t}_int4 ADD EXCLUDE USING {am} (v WITH <>)',
    'ALTER TABLE hpm_{t}_int4 ADD EXCLUDE USING {am} (id WITH =)',
    'CLUSTER hpm_{t}_int4 USING hpm_{t}_int4_v',
    'ALTER TABLE hpm_{t}_int4 ADD PRIMARY KEY USING INDEX hpm_{t}_int4_v']) s;
DROP TABLE hpm_p_money, hpm_h_money;
-- fillfactor is accepted, as by hash
CREATE INDEX hpm_ff ON hpm_p_int4 USING hash_pm (v) WITH (fillfactor = 60);
SELECT reloptions FROM pg_class WHERE relname = 'hpm_ff';
DROP INDEX hpm_ff;
-- what the access method says it can do, as hash
SELECT p.name, pg_indexam_has_property(a.oid, p.name) AS hash_pm,
       pg_indexam_has_property((SELECT oid FROM pg_am WHERE amname = 'hash'), p.name) AS hash
  FROM pg_am a, unnest(ARRAY['can_order', 'can_unique', 'can_multi_col', 'can_exclude', 'can_include']) p(name)
 WHERE a.amname = 'hash_pm';
SELECT p.name, pg_index_column_has_property('hpm_p_int4_v'::regclass, 1, p.name) AS hash_pm,
       pg_index_column_has_property('hpm_h_int4_v'::regclass, 1, p.name) AS hash
  FROM unnest(ARRAY['orderable', 'search_array', 'search_nulls', 'returnable']) p(name);

DO $$
BEGIN
  EXECUTE (SELECT 'DROP TABLE ' || string_agg(format('%I, %I, %I', 'hpm_s_' || t, 'hpm_p_' || t, 'hpm_h_' || t),
                                              ', ' ORDER BY ord) FROM hpm_types);
END $$;
DROP TABLE hpm_types, hpm_probe, hpm_strings;
DROP FUNCTION hpm_make(text, text, text, text, text), hpm_diff(text), hpm_run(text, text, text),
              hpm_members(text), hpm_waiting(text), hpm_sqlstate(text), hpm_counts(text, text);
DROP TYPE hpm_mood, hpm_pair;
DROP COLLATION hpm_ci;
