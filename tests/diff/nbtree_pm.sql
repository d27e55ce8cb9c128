-- The differential oracle for the ordered access methods, nbtree_pm and the others (after
-- tests/diff/common.sql).
--
-- For every operator class of nbtree_pm (the others have the same or fewer), a table per access method and
-- index ordering (ASC, DESC, NULLS FIRST, DESC NULLS LAST) holds the type's boundary values,
-- NULLs, a long run of one duplicate and random values; pm_diff.bt_<type> holds the same rows
-- under a btree index.  A UNIQUE index ("uq") holds the distinct values and all the NULLs,
-- against pm_diff.bt_<type>_uq under a unique btree index.  Every operator of
-- the class's operator family (from the catalogs, cross-type members included) is applied to
-- boundary and random values of its right-hand type, through index, index-only and bitmap scans
-- and parallel index and index-only scans,
-- = ANY arrays, two-sided ranges, IS [NOT] NULL, ORDER BY in four orderings with and without
-- LIMIT, min/max, merge joins and parameterized nested loops; each answer is compared with the
-- btree index's and with a sequential scan's, in the caller's snapshot.  Each plan is checked to
-- use the table's index (an index that the planner never picks tests nothing).  Scroll cursors
-- on the tables of a type of each kind of key move at random, move by move against a cursor on
-- the btree table.

-- The btree table that answers for the table of type t and ordering ord.
CREATE FUNCTION pm_diff.oracle(t regtype, ord text) RETURNS text
LANGUAGE sql STABLE AS $$
  SELECT format('pm_diff.bt_%s', pm_diff.tname(t)) || CASE WHEN ord LIKE '%uq' THEN '_uq' ELSE '' END
$$;

-- check for the table of type t and index ordering ord, against bt_<t>.
CREATE FUNCTION pm_diff.check_nbt(q text, t regtype, ord text, shapes text[], ordered boolean DEFAULT false)
RETURNS void
LANGUAGE sql AS $$
  SELECT pm_diff.check(q, t, format('pm_diff.pm_%s_%s', pm_diff.tname(t), ord),
                       format('pm_%s_%s_v', pm_diff.tname(t), ord), pm_diff.oracle(t, ord), shapes, ordered)
$$;

-- Text in other collations than "C": domains over text and bpchar with a collation, which
-- their columns and so their indexes take; ICU's root locale, glibc's en_US (deterministic:
-- equal strings order by their bytes) and a case-insensitive ICU collation (nondeterministic:
-- 'a' = 'A').  Each is a type of its own below, its operators, edges and values those of the
-- type it is over.  A server built without ICU has en_US alone (pm_diff.collated names the
-- types there are).
CREATE COLLATION pm_diff.en_us (provider = libc, locale = 'en_US.utf8');
CREATE DOMAIN pm_diff.text_en_us AS text COLLATE pm_diff.en_us;
DO $$
BEGIN
  IF EXISTS (SELECT FROM pg_collation WHERE collname = 'und-x-icu') THEN
    CREATE COLLATION pm_diff.ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
    CREATE DOMAIN pm_diff.text_icu AS text COLLATE "und-x-icu";
    CREATE DOMAIN pm_diff.text_ci AS text COLLATE pm_diff.ci;
    CREATE DOMAIN pm_diff.bpchar_ci AS bpchar COLLATE pm_diff.ci;
  END IF;
END $$;

-- Those of the collation domains above that exist.
CREATE FUNCTION pm_diff.collated() RETURNS regtype[]
LANGUAGE sql STABLE AS $$
  SELECT array_remove(ARRAY[to_regtype('pm_diff.text_icu'), 'pm_diff.text_en_us'::regtype,
                            to_regtype('pm_diff.text_ci'), to_regtype('pm_diff.bpchar_ci')], NULL)
$$;

-- Text in a collation's sort keys: ICU's root locale, else en_US.
CREATE FUNCTION pm_diff.sort_key_text() RETURNS regtype
LANGUAGE sql STABLE AS $$
  SELECT coalesce(to_regtype('pm_diff.text_icu'), 'pm_diff.text_en_us'::regtype)
$$;

-- The type a domain is over (t itself for another type).
CREATE FUNCTION pm_diff.base(t regtype) RETURNS regtype
LANGUAGE sql STABLE AS $$
  SELECT CASE WHEN typtype = 'd' THEN typbasetype ELSE oid END::regtype FROM pg_type WHERE oid = t
$$;

-- A type of each kind of key, where the checks that do not depend on the type but cost most
-- run (see orderings and parallel_too): 8-byte keys of both signs and of a datetime type, wide
-- keys of fixed length, of short and long strings, in "C" and in a collation's sort keys, and
-- with host bytes.
CREATE FUNCTION pm_diff.key_kinds() RETURNS regtype[]
LANGUAGE sql STABLE AS $$
  SELECT '{int8,float8,timestamptz,uuid,text,numeric}'::regtype[] || pm_diff.sort_key_text()
$$;

-- The access methods and index orderings type t is indexed in (another's than nbtree_pm's
-- prefixed by its name's first two letters: ph_, nv_): the
-- ordered access methods with an operator class for it; whether the index is unique; whether
-- it is tiered (its rows then are inserted after the index is made, so that they wait in its
-- operation log while the replay workers are paused: tiered_desc and tiered_uq).
-- NULLS FIRST, DESC NULLS LAST and the tiered ones, where only the scan's placing of the NULLs
-- or the entries' source differs from ASC and DESC, for the types of pm_diff.key_kinds().  The
-- other ordered access methods share nbtree_pm's operator classes and key encodings
-- (src/pg/ordered): what a type changes is its encoding, which nbtree_pm's ASC, DESC and
-- unique indexes test for every type, so theirs are ASC only but for the key kinds, whose
-- encodings (8-byte and wide, memcmp and collation orders) take every ordering in every access
-- method.
CREATE FUNCTION pm_diff.orderings(t regtype)
RETURNS TABLE (name text, clause text, am text, uniq boolean, tiered boolean)
LANGUAGE sql STABLE AS $$
  SELECT CASE a.am WHEN 'nbtree_pm' THEN o.name ELSE left(a.am, 2) || '_' || o.name END, o.clause, a.am,
         o.name LIKE '%uq', o.name LIKE 'tiered%'
    FROM (VALUES ('asc', ''), ('desc', 'DESC'), ('nf', 'NULLS FIRST'), ('dnl', 'DESC NULLS LAST'),
                 ('uq', ''), ('tiered_desc', 'DESC'), ('tiered_uq', '')) o(name, clause),
         (SELECT amname::text FROM pg_am am
           WHERE amname = ANY (pm_diff.ordered_ams())
             AND EXISTS (SELECT FROM pg_opclass oc
                          WHERE oc.opcmethod = am.oid AND oc.opcintype = pm_diff.base(t))) a(am)
   WHERE t = ANY (pm_diff.key_kinds())
      OR (a.am = 'nbtree_pm' AND o.name IN ('asc', 'desc', 'uq'))
      OR o.name = 'asc'
   ORDER BY a.am, o.name
$$;


-- Boundary values of a type, as literals: extremes, infinities, NaN, signed zeros, the
-- neighbours of the epochs (1970 and PostgreSQL's 2000) and of the other types' limits.
CREATE FUNCTION pm_diff.edges(t regtype) RETURNS text[]
LANGUAGE sql STABLE AS $$
  SELECT CASE pm_diff.base(t)
    WHEN 'int2'::regtype THEN
      '{-32768,-32767,-129,-1,0,1,127,32766,32767}'::text[]
    WHEN 'int4'::regtype THEN
      '{-2147483648,-2147483647,-32769,-32768,-1,0,1,32767,32768,2147483646,2147483647}'::text[]
    WHEN 'int8'::regtype THEN
      '{-9223372036854775808,-9223372036854775807,-2147483649,-2147483648,-32768,-1,0,1,32767,'
      '2147483647,2147483648,9223372036854775806,9223372036854775807}'::text[]
    WHEN 'oid'::regtype THEN
      '{0,1,2,2147483647,2147483648,4294967294,4294967295}'::text[]
    WHEN 'float4'::regtype THEN
      '{-Infinity,-3.4028235e38,-1e10,-1.1754944e-38,-1e-45,-0,0,1e-45,1.1754944e-38,0.1,1,'
      '16777217,3.4028235e38,Infinity,NaN}'::text[]
    WHEN 'float8'::regtype THEN
      '{-Infinity,-1.7976931348623157e308,-3.4028235677973366e38,-1e10,-2.2250738585072014e-308,'
      '-5e-324,-0,0,5e-324,1.401298464324817e-45,0.1,0.10000000149011612,1,16777217,'
      '3.4028234663852886e38,1.7976931348623157e308,Infinity,NaN}'::text[]
    WHEN 'bool'::regtype THEN
      '{false,true}'::text[]
    WHEN 'date'::regtype THEN
      '{-infinity,4714-11-24 BC,4714-11-25 BC,0001-01-01 BC,1899-12-31,1969-12-31,1970-01-01,'
      '1999-12-30,1999-12-31,2000-01-01,2000-01-02,294276-12-31,294277-01-01,5874897-12-30,'
      '5874897-12-31,infinity}'::text[]
    WHEN 'time'::regtype THEN
      '{00:00,00:00:00.000001,11:59:59.999999,12:00,23:59:59.999999,24:00}'::text[]
    WHEN 'timestamp'::regtype THEN
      '{-infinity,4714-11-24 00:00 BC,4714-11-24 00:00:00.000001 BC,1899-12-31 23:59:59.999999,'
      '1969-12-31 23:59:59.999999,1970-01-01,1999-12-30 12:00,1999-12-31,1999-12-31 12:00,'
      '2000-01-01,2000-01-01 00:00:00.000001,294276-12-31 23:59:59.999999,infinity}'::text[]
    WHEN 'timestamptz'::regtype THEN
      '{-infinity,4714-11-24 00:00+00 BC,4714-11-25 00:00+00 BC,1899-12-31 23:59:59.999999+00,'
      '1969-12-31 23:59:59.999999+00,1970-01-01 00:00+00,1999-12-31 00:00+00,1999-12-31 12:00+00,'
      '1999-12-31 23:00-05,2000-01-01 00:00+00,2000-01-01 00:00:00.000001+14,'
      '294276-12-30 23:59:59.999999+00,infinity}'::text[]
    WHEN 'uuid'::regtype THEN
      '{00000000-0000-0000-0000-000000000000,00000000-0000-0000-0000-000000000001,'
      '00000000-0000-00ff-0000-000000000000,00000000-0000-0100-0000-000000000000,'
      '7fffffff-ffff-ffff-ffff-ffffffffffff,80000000-0000-0000-0000-000000000000,'
      'ffffffff-ffff-fffe-ffff-ffffffffffff,ffffffff-ffff-ffff-0000-000000000000,'
      'ffffffff-ffff-ffff-ffff-fffffffffffe,ffffffff-ffff-ffff-ffff-ffffffffffff}'::text[]
    -- the empty value, zero and 0xff bytes, and lengths around the 8 bytes of a key
    WHEN 'bytea'::regtype THEN
      ARRAY['\x', '\x00', '\x0000', '\x000000000000', '\x00000000000000', '\x0000000000000000',
            '\x000000000000000000', '\x00ff', '\x01', '\x0100', '\x7f', '\xfe', '\xff', '\xff00',
            '\xffff', '\xffffffffffff', '\xffffffffffffff', '\xffffffffffffffff',
            '\xffffffffffffffffff', '\x6162636465666768696a6b6c6d6e6f70']
    -- (the longest, 400 bytes, is as long as every ordered access method's key takes in every
    -- collation: nvbtree_pm's 968 bytes hold it with an ICU sort key)
    WHEN 'text'::regtype THEN
      ARRAY['', ' ', '!', 'a', 'a ', 'ab', 'abc', 'abcd', 'abcde', 'abcdef', 'abcdefg', 'abcdefgh',
            'abcdefghi', 'abcdefghijklmnopqrstuvwxyz', 'abcdefghijklmnopqrstuvwxz', 'b', 'z', '~',
            'prefix_common_', 'prefix_common_a', 'prefix_common_b', 'é', 'éé', repeat('x', 400),
            -- what collations order apart from bytes: case, accents, ligatures, punctuation
            'A', 'B', 'Z', 'É', 'ß', 'ss', 'SS', 'æ', 'ae', 'co-op', 'coop', 'Coop', 'a-b', 'a b',
            -- precomposed and decomposed accents beside punctuation and ß (where glibc's strxfrm
            -- and strcoll disagree), an ignorable soft hyphen, a ligature, three forms of Å
            E'E\u0301-\u00df', E'\u00e9\u00df', E'\u00c9\u00df', E'e\u0301', E'E\u0301', E'e\u0301-',
            E'\u00ad', E'co\u00adop', E'\ufb01', 'fi', E'\u00c5', E'A\u030a', E'\u212b', E'\u01c4',
            E'\u01c6']
    -- trailing spaces, which compare as none and which index-only scans return
    WHEN 'bpchar'::regtype THEN
      ARRAY['', ' ', '  ', 'a', 'a ', 'a   ', ' a', 'ab', 'abcdefg', 'abcdefg ', 'abcdefgh', 'abcdefghi',
            'é', 'é ', 'z', repeat('x', 400) || ' ']
    WHEN 'name'::regtype THEN
      ARRAY['', ' ', 'a', 'a ', 'ab', 'abcdefg', 'abcdefgh', 'abcdefghi', 'pg_catalog', 'é',
            repeat('x', 62), repeat('x', 63), 'z']
    -- equal values of other scales, the exponents past the one-byte ones (1e80, 1e-80), 8-byte
    -- integers' limits
    WHEN 'numeric'::regtype THEN
      '{-Infinity,-1e1000,-1e81,-1e80,-1e79,-123456789012345678901234567890.5,-9223372036854775809,'
      '-9223372036854775808,-100,-99.99,-1.5,-1,-1.0,-0.5,-0.0001,-1e-79,-1e-80,-1e-81,-1e-1000,0,'
      '0.0,0.000,1e-1000,1e-81,1e-80,1e-79,0.0001,0.01,0.1,0.5,1,1.0,1.00,1.5,9.99,10,99.99,100,'
      '100.00,10000,9223372036854775807,9223372036854775808,1e79,1e80,1e81,1e1000,Infinity,NaN}'::text[]
    -- equal spans of other fields (1 mon, 30 days, 720 hours), the extremes of each field
    WHEN 'interval'::regtype THEN
      '{-178000000 years,-2147483648 days -2147483648 hours,-1 mon,-30 days,-720:00,-1 day,-24:00,'
      '-00:00:00.000001,00:00,00:00:00.000001,23:59:59.999999,24:00,1 day,1 day -1 hour,'
      '1 mon -1 day,30 days,720:00,1 mon,12 mons,1 year,360 days,2147483647 days 2147483647 hours,'
      '178000000 years}'::text[]
    -- host bits, netmask lengths around byte edges, both families
    WHEN 'inet'::regtype THEN
      '{0.0.0.0/0,0.0.0.0,10.0.0.0/7,10.0.0.0/8,10.1.0.0/8,10.0.0.0/16,10.1.2.3/24,10.1.2.0/25,'
      '10.1.2.128/25,10.1.2.3,10.1.2.3/31,127.0.0.1,192.168.1.5/24,255.255.255.255/1,'
      '255.255.255.255,::/0,::,::1,::ffff:10.1.2.3,2001:db8::/32,2001:db8::1/64,2001:db8::1,'
      'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff}'::text[]
  END
$$;

-- A random value of a type (from the session's random(), seeded by the caller): half from a
-- narrow range, so that values repeat, half from the type's whole range.
CREATE FUNCTION pm_diff.random_value(t regtype) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  narrow boolean := random() < 0.5;
  r float8 := random();
  days bigint;
BEGIN
  CASE pm_diff.base(t)
    WHEN 'int2'::regtype THEN
      RETURN CASE WHEN narrow THEN floor(r * 41 - 20) ELSE floor(r * 65536 - 32768) END::int2::text;
    WHEN 'int4'::regtype THEN
      RETURN CASE WHEN narrow THEN floor(r * 41 - 20) ELSE floor(r * 4294967296 - 2147483648) END::int4::text;
    WHEN 'int8'::regtype THEN
      RETURN CASE WHEN narrow THEN floor(r * 41 - 20)::int8
             ELSE (floor(r * 4294967296 - 2147483648)::int8 * 2147483648
                   + floor(random() * 2147483648)::int8) END::text;
    WHEN 'oid'::regtype THEN
      RETURN CASE WHEN narrow THEN floor(r * 40) ELSE floor(r * 4294967296) END::int8::oid::text;
    WHEN 'float4'::regtype THEN
      RETURN CASE WHEN narrow THEN (floor(r * 21 - 10) / 4)::float4
             ELSE (sign(random() - 0.5) * power(10::float8, r * 76 - 38))::float4 END::text;
    WHEN 'float8'::regtype THEN
      RETURN CASE WHEN narrow THEN floor(r * 21 - 10) / 4
             ELSE sign(random() - 0.5) * power(10::float8, r * 600 - 300) END::text;
    WHEN 'bool'::regtype THEN
      RETURN (r < 0.5)::text;
    WHEN 'time'::regtype THEN
      RETURN CASE WHEN narrow THEN time '00:00' + floor(r * 20) * interval '1 hour'
             ELSE time '00:00' + floor(r * 86400e6) * interval '1 microsecond' END::text;
    WHEN 'uuid'::regtype THEN
      -- narrow ones share their first 8 bytes
      RETURN CASE WHEN narrow THEN '01234567-89ab-cdef-0000-0000000000' || lpad(to_hex(floor(r * 40)::int), 2, '0')
             ELSE gen_random_uuid()::text END;
    WHEN 'bytea'::regtype THEN
      RETURN '\x' || CASE WHEN narrow THEN 'fefefefefefefefe' ELSE '' END
             || coalesce((SELECT string_agg(CASE WHEN random() < 0.2 THEN '00' WHEN random() < 0.2 THEN 'ff'
                                                 ELSE lpad(to_hex(floor(random() * 256)::int), 2, '0') END, '')
                            FROM generate_series(1, floor(r * 12)::int)), '');
    WHEN 'text'::regtype THEN
      -- narrow ones share a long prefix; some characters take two bytes; accents precomposed and
      -- combining, case, ß and its spelling, a ligature, punctuation and an ignorable soft hyphen
      RETURN CASE WHEN narrow THEN 'prefix_common_' ELSE '' END
             || coalesce((SELECT string_agg((ARRAY['a', 'b', ' ', 'z', 'é', '~', 'A', 'É', '-', E'e\u0301',
                                                   E'E\u0301', 'ß', 'ss', E'\ufb01', E'\u00ad', ''''])
                                            [floor(random() * 16)::int + 1], '')
                            FROM generate_series(1, floor(r * 12)::int)), '');
    WHEN 'bpchar'::regtype THEN
      RETURN pm_diff.random_value('text') || repeat(' ', floor(random() * 3)::int);
    WHEN 'name'::regtype THEN
      RETURN pm_diff.random_value('text');
    WHEN 'numeric'::regtype THEN
      -- narrow ones in quarters, some at scales 2 and 3; wide ones of 1 to 30 digits
      RETURN CASE WHEN narrow THEN round((floor(r * 41 - 20) / 4)::numeric, floor(random() * 4)::int)
             ELSE trunc((random() - 0.5)::numeric * 10::numeric ^ floor(random() * 30)::int,
                        floor(r * 20 - 5)::int) END::text;
    WHEN 'interval'::regtype THEN
      -- narrow ones of a few spans in different fields
      RETURN CASE WHEN narrow THEN make_interval(months => floor(r * 3)::int,
                                                 days => floor(random() * 3)::int * 15,
                                                 hours => floor(random() * 3)::int * 360)
             ELSE make_interval(months => floor(r * 2e6 - 1e6)::int, days => floor(random() * 2e6 - 1e6)::int,
                                secs => floor(random() * 2e11 - 1e11) / 1e3) END::text;
    WHEN 'inet'::regtype THEN
      RETURN CASE WHEN narrow THEN format('10.0.%s.%s/%s', floor(r * 3), floor(random() * 3), 23 + floor(random() * 10))
             WHEN r < 0.75 THEN format('%s.%s.%s.%s/%s', floor(random() * 256), floor(random() * 256),
                                       floor(random() * 256), floor(random() * 256), floor(random() * 33))
             ELSE format('%s::%s/%s', to_hex(floor(random() * 65536)::int), to_hex(floor(random() * 65536)::int),
                         floor(random() * 129)) END;
    ELSE
      -- date, timestamp, timestamptz: days from 4713 BC, narrow ones around 1970 and 2000
      IF narrow THEN
        days := floor(r * 40 - 20) + CASE WHEN random() < 0.5 THEN 0 ELSE -10957 END;
      ELSIF t = 'date'::regtype THEN
        days := floor(r * 2147483494) - 2451545;
      ELSE
        days := floor(r * 109203489) - 2451545;	-- to the end of the timestamp range
      END IF;
      IF t = 'date'::regtype THEN
        RETURN (date '2000-01-01' + days::int)::text;
      END IF;
      RETURN ((date '2000-01-01' + days::int)::timestamp
              + CASE WHEN narrow THEN floor(random() * 4) * interval '6 hours'
                ELSE floor(random() * 86400e6) * interval '1 microsecond' END)::text
             || CASE WHEN t = 'timestamptz'::regtype THEN '+00' ELSE '' END;
  END CASE;
END $$;

-- The tables of one type: the same rows in pm_<type>_<ordering> (one ordered index each) and
-- bt_<type> (btree).  nrandom random rows besides the edges, NULLs and a run of 150 duplicates
-- (longer than a leaf of 62 entries).
CREATE FUNCTION pm_diff.setup_type(t regtype, nrandom int) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  n text := pm_diff.tname(t);
  o record;
BEGIN
  PERFORM pm_diff.oracle_table(format('pm_diff.bt_%s', n), t, 'btree', pm_diff.edges(t),
                               'pm_diff.random_value', 150, nrandom);
  -- each value once (-0 and 0 are one), every NULL
  EXECUTE format('CREATE TABLE pm_diff.bt_%1$s_uq AS SELECT * FROM pm_diff.bt_%1$s WHERE v IS NULL
                  UNION ALL SELECT DISTINCT ON (v) * FROM pm_diff.bt_%1$s WHERE v IS NOT NULL', n);
  EXECUTE format('CREATE UNIQUE INDEX ON pm_diff.bt_%s_uq USING btree (v)', n);
  FOR o IN SELECT * FROM pm_diff.orderings(t) LOOP
    EXECUTE format('CREATE TABLE pm_diff.pm_%s_%s AS SELECT * FROM %s %s', n, o.name,
                   pm_diff.oracle(t, o.name), CASE WHEN o.tiered THEN 'WITH NO DATA' ELSE '' END);
    EXECUTE format('CREATE %s INDEX pm_%s_%s_v ON pm_diff.pm_%s_%s USING %s (v %s) %s',
                   CASE WHEN o.uniq THEN 'UNIQUE' ELSE '' END, n, o.name, n, o.name, o.am, o.clause,
                   CASE WHEN o.tiered THEN 'WITH (tiered = on)' ELSE '' END);
    IF o.tiered THEN
      EXECUTE format('INSERT INTO pm_diff.pm_%s_%s SELECT * FROM %s', n, o.name, pm_diff.oracle(t, o.name));
    END IF;
  END LOOP;
END $$;

-- The right-hand types of t's operators in its operator family of access method am, t first.
CREATE FUNCTION pm_diff.arg_types(t regtype, am text DEFAULT 'nbtree_pm') RETURNS SETOF regtype
LANGUAGE sql STABLE AS $$
  SELECT r FROM (
    SELECT DISTINCT ao.amoprighttype::regtype AS r
      FROM pg_opclass oc
      JOIN pg_am ON pg_am.oid = oc.opcmethod AND pg_am.amname = am
      JOIN pg_amop ao ON ao.amopfamily = oc.opcfamily AND ao.amoplefttype = oc.opcintype
     WHERE oc.opcintype = pm_diff.base(t) AND oc.opcdefault AND ao.amoppurpose = 's'
       -- a name compared with a column in a collation not name's ("C") has two collations
       AND (t = pm_diff.base(t) OR ao.amoprighttype = oc.opcintype)) s
   ORDER BY r <> pm_diff.base(t), r
$$;

-- The search operators of t's operator family of access method am whose right-hand type is a,
-- by strategy.
CREATE FUNCTION pm_diff.operators(t regtype, am text, a regtype) RETURNS TABLE (oprname name)
LANGUAGE sql STABLE AS $$
  SELECT o.oprname
    FROM pg_opclass oc
    JOIN pg_am ON pg_am.oid = oc.opcmethod AND pg_am.amname = am
    JOIN pg_amop ao ON ao.amopfamily = oc.opcfamily AND ao.amoplefttype = oc.opcintype AND ao.amoprighttype = a
    JOIN pg_operator o ON o.oid = ao.amopopr
   WHERE oc.opcintype = pm_diff.base(t) AND oc.opcdefault AND ao.amoppurpose = 's'
   ORDER BY ao.amopstrategy
$$;

-- Values of type a to compare with a column of type t: a's edges, random values, and (when
-- a = t) values drawn from the table.
CREATE FUNCTION pm_diff.args(t regtype, a regtype, nrandom int) RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
  v text;
BEGIN
  RETURN QUERY SELECT unnest(pm_diff.edges(a));
  FOR i IN 1 .. nrandom LOOP
    RETURN NEXT pm_diff.random_value(a);
  END LOOP;
  IF a = pm_diff.base(t) THEN
    FOR v IN EXECUTE format('SELECT v::text FROM pm_diff.bt_%s WHERE v IS NOT NULL ORDER BY random() LIMIT %s',
                            pm_diff.tname(t), nrandom) LOOP
      RETURN NEXT v;
    END LOOP;
  END IF;
END $$;

-- Whether the tables of type t and ordering ord are read by parallel scans too: nbtree_pm's
-- ASC and tiered DESC ones of pm_diff.key_kinds() (a parallel query starts its workers, which costs more than
-- the rest of a check; the scan code is the ordered access methods' for every type, the
-- direction is the scan's, and what differs by type is whether keys are wide: records in the
-- shared scan state).
CREATE FUNCTION pm_diff.parallel_too(t regtype, ord text) RETURNS boolean
LANGUAGE sql STABLE AS $$
  SELECT ord IN ('asc', 'tiered_desc') AND t = ANY (pm_diff.key_kinds())
$$;

-- A condition on v, through index and bitmap scans (rows) and an index-only scan (values).
CREATE FUNCTION pm_diff.check_where(cond text, t regtype, ord text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  par text[] := CASE WHEN pm_diff.parallel_too(t, ord) THEN ARRAY['parallel'] ELSE '{}' END;
  paronly text[] := CASE WHEN pm_diff.parallel_too(t, ord) THEN ARRAY['parallelonly'] ELSE '{}' END;
BEGIN
  PERFORM pm_diff.check_nbt(format('SELECT id || %L || coalesce(v::text, %L) FROM %%1$s WHERE %s',
                               ':', 'NULL', replace(cond, '%', '%%')),
                        t, ord, ARRAY['index', 'bitmap'] || par);
  -- the values exactly as stored (the output function's text: bpchar's cast to text drops its
  -- trailing spaces)
  PERFORM pm_diff.check_nbt(format('SELECT row(v)::text AS r FROM %%1$s WHERE %s', replace(cond, '%', '%%')),
                        t, ord, ARRAY['indexonly'] || paronly);
END $$;

-- Scroll cursors.  A random move of a cursor over an answer of n rows: FETCH or MOVE in every
-- direction, steps of either sign, to and past the ends and runs that end past them (where the
-- scan runs off an end and the next move turns it back).
CREATE FUNCTION pm_diff.cursor_move(n int) RETURNS text
LANGUAGE sql AS $$
  SELECT (ARRAY['FETCH', 'FETCH', 'FETCH', 'MOVE'])[1 + floor(random() * 4)::int] || ' ' ||
    CASE floor(random() * 14)::int
      WHEN 0 THEN 'FIRST' WHEN 1 THEN 'LAST' WHEN 2 THEN 'NEXT' WHEN 3 THEN 'PRIOR'
      WHEN 4 THEN format('ABSOLUTE %s', floor(random() * (2 * n + 7))::int - n - 3)
      WHEN 5 THEN format('RELATIVE %s', floor(random() * 9)::int - 4)
      WHEN 6 THEN format('RELATIVE %s', floor(random() * (2 * n + 7))::int - n - 3)
      WHEN 7 THEN format('FORWARD %s', floor(random() * 6)::int)
      WHEN 8 THEN format('BACKWARD %s', floor(random() * 6)::int)
      WHEN 9 THEN format('FORWARD %s', floor(random() * (n + 5))::int)
      WHEN 10 THEN format('BACKWARD %s', floor(random() * (n + 5))::int)
      WHEN 11 THEN 'FORWARD ALL'
      WHEN 12 THEN 'BACKWARD ALL'
      ELSE 'ABSOLUTE -1'
    END
$$;

-- The rows a move of cursor cur returns (the query's one column r): a FETCH's; for a MOVE, whose
-- count dynamic SQL does not report, the row it moved to (FETCH RELATIVE 0, itself a step back
-- and forth).
CREATE FUNCTION pm_diff.cursor_step(move text, cur refcursor) RETURNS text[]
LANGUAGE plpgsql AS $$
DECLARE
  row record;
  a text[] := '{}';
BEGIN
  IF move LIKE 'MOVE %' THEN
    EXECUTE format('%s FROM %I', move, cur);
    move := 'FETCH RELATIVE 0';
  END IF;
  FOR row IN EXECUTE format('%s FROM %I', move, cur) LOOP
    a := a || row.r;
  END LOOP;
  RETURN a;
END $$;

-- Open SCROLL cursors tc on the table of type t and index ordering ord, through an index or an
-- index-only scan (shape), and oc on the btree table, over one random query: the whole table
-- (NULLs, duplicates), a range, an IN-list or the NULLs, in the index's order or its reverse.
-- Returns the query (%1$s the table), or NULL when its plan does not use the index (a failure).
CREATE FUNCTION pm_diff.cursor_open(t regtype, ord text, shape text, tc refcursor, oc refcursor) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  tested text := format('pm_diff.pm_%s_%s', pm_diff.tname(t), ord);
  index_name text := format('pm_%s_%s_v', pm_diff.tname(t), ord);
  oracle text := pm_diff.oracle(t, ord);
  orders text[] := CASE WHEN regexp_replace(ord, '^([a-z]+_)+', '') IN ('asc', 'desc', 'uq')
                        THEN ARRAY['v', 'v DESC'] ELSE ARRAY['v NULLS FIRST', 'v DESC NULLS LAST'] END;
  r float8 := random();
  v1 text;
  v2 text;
  cond text;
  q text;
  plan text;
BEGIN
  -- two values of the table, v1 <= v2
  EXECUTE format('SELECT pm_diff.lit(v::text, %1$L), pm_diff.lit(lead(v::text) OVER (ORDER BY v), %1$L)
                    FROM (SELECT v FROM %2$s WHERE v IS NOT NULL ORDER BY random() LIMIT 2) s
                   ORDER BY v LIMIT 1', t, oracle) INTO v1, v2;
  cond := CASE
    WHEN r < 0.35 OR v1 IS NULL THEN 'true'
    WHEN r < 0.55 THEN format('v >= %s', v1)
    WHEN r < 0.7 THEN 'v IS NOT NULL'
    WHEN r < 0.8 THEN format('v = ANY (ARRAY[%s, %s, NULL])', v1, coalesce(v2, v1))
    WHEN r < 0.85 THEN 'v IS NULL'
    ELSE format('v >= %s AND v <= %s', v1, coalesce(v2, v1))
  END;
  q := format('SELECT v::text AS r FROM %%1$s WHERE %s ORDER BY %s', replace(cond, '%', '%%'),
              orders[1 + floor(random() * 2)::int]);
  plan := pm_diff.plan(format(q, tested), shape);
  IF plan NOT LIKE format('%%%s Scan%% using %s %%', CASE shape WHEN 'index' THEN 'Index' ELSE 'Index Only' END,
                          index_name) THEN
    PERFORM pm_diff.fail('plan cursor ' || shape, format(q, tested), plan, index_name);
    RETURN NULL;
  END IF;
  PERFORM pm_diff.set_shape(shape);
  OPEN tc SCROLL FOR EXECUTE format(q, tested);
  PERFORM pm_diff.set_shape('builtin');
  OPEN oc SCROLL FOR EXECUTE format(q, oracle);
  RETURN q;
END $$;

-- nmoves random moves of the cursors pm_diff.cursor_open opened over query q: each move's rows
-- must be equal (equal values may come in either order: a numeric's scale orders them in the
-- index).  A failure's query ends with the moves made (after before, those of earlier calls),
-- the last one the first whose rows differ.  Returns the moves made, after before; NULL after a
-- failure.  The moves compared are counted as class, by default 'cursor' and the shape.
CREATE FUNCTION pm_diff.cursor_moves(t regtype, ord text, shape text, q text, tc refcursor, oc refcursor,
                                     nmoves int, before text DEFAULT '', class text DEFAULT NULL) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  n int;
  mv text;
  moves text := before;
  got text[];
  want text[];
BEGIN
  EXECUTE format('SELECT count(*) FROM (%s) s', format(q, pm_diff.oracle(t, ord))) INTO n;
  FOR m IN 1 .. nmoves LOOP
    mv := pm_diff.cursor_move(n);
    moves := moves || mv || '; ';
    got := pm_diff.cursor_step(mv, tc);
    want := pm_diff.cursor_step(mv, oc);
    IF cardinality(got) <> cardinality(want) OR
       NOT pm_diff.same_order(array_to_string(got, E'\n', 'NULL'), array_to_string(want, E'\n', 'NULL'), t) THEN
      PERFORM pm_diff.fail('cursor ' || shape,
                           format('%s -- %s rows; moves: %s', format(q, format('pm_diff.pm_%s_%s', pm_diff.tname(t), ord)),
                                  n, moves),
                           array_to_string(got, E'\n', 'NULL'), array_to_string(want, E'\n', 'NULL'));
      PERFORM pm_diff.count(coalesce(class, 'cursor ' || shape), m - 1);
      RETURN NULL;
    END IF;
  END LOOP;
  PERFORM pm_diff.count(coalesce(class, 'cursor ' || shape), nmoves);
  RETURN moves;
END $$;

-- nrounds rounds of 2 * nmoves moves of scroll cursors on the table of type t and index
-- ordering ord and on the btree table (cursor_open, cursor_moves).  With writes, in every
-- other round, halfway, both tables lose a quarter of their rows and gain 200 random ones,
-- which the cursors' snapshot does not see (nodes split and merge under them), undone after
-- the round (with what it recorded, which is recorded again); without, the round pauses there
-- (the concurrent pass: writers and VACUUM go on).
CREATE FUNCTION pm_diff.cursor_run(t regtype, ord text, nrounds int, nmoves int, writes boolean) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  tested text := format('pm_diff.pm_%s_%s', pm_diff.tname(t), ord);
  oracle text := pm_diff.oracle(t, ord);
  shape text;
  q text;
  moves text;
  vals text[];
  tab text;
  failures pm_diff.failures[];
  counts pm_diff.counts[];
BEGIN
  FOR round IN 1 .. nrounds LOOP
    shape := (ARRAY['index', 'indexonly'])[1 + floor(random() * 2)::int];
    BEGIN
      DECLARE
        tc refcursor := 'pm_diff_tested';
        oc refcursor := 'pm_diff_oracle';
      BEGIN
        q := pm_diff.cursor_open(t, ord, shape, tc, oc);
        moves := CASE WHEN q IS NOT NULL THEN pm_diff.cursor_moves(t, ord, shape, q, tc, oc, nmoves) END;
        IF moves IS NOT NULL THEN
          IF writes AND round % 2 = 1 THEN
            FOREACH tab IN ARRAY ARRAY[tested, oracle] LOOP
              EXECUTE format('DELETE FROM %s WHERE id %% 4 = %s', tab, round % 4);
            END LOOP;
            vals := ARRAY(SELECT pm_diff.random_value(pm_diff.base(t)) FROM generate_series(1, 200));
            IF ord LIKE '%uq' THEN
              -- values the unique indexes take
              EXECUTE format('SELECT array_agg(y::text) FROM (SELECT DISTINCT ON (x::%1$s) x::%1$s AS y FROM unnest($1) x) s
                               WHERE NOT EXISTS (SELECT FROM %2$s WHERE v = y)', pm_diff.typ(t), oracle)
                INTO vals USING vals;
            END IF;
            FOREACH tab IN ARRAY ARRAY[tested, oracle] LOOP
              EXECUTE format('INSERT INTO %s (v) SELECT x::%s FROM unnest($1) x', tab, pm_diff.typ(t)) USING vals;
            END LOOP;
          ELSIF NOT writes THEN
            PERFORM pg_sleep(0.05);
          END IF;
          PERFORM pm_diff.cursor_moves(t, ord, shape, q, tc, oc, nmoves, moves || '(halfway) ');
        END IF;
        -- undo the writes and close the cursors; keep what was recorded
        SELECT array_agg(f) INTO failures FROM pm_diff.failures f;
        SELECT array_agg(c) INTO counts FROM pm_diff.counts c;
        RAISE EXCEPTION USING ERRCODE = 'PMD01';
      END;
    EXCEPTION WHEN SQLSTATE 'PMD01' THEN
      DELETE FROM pm_diff.failures;
      INSERT INTO pm_diff.failures SELECT * FROM unnest(failures);
      DELETE FROM pm_diff.counts;
      INSERT INTO pm_diff.counts SELECT * FROM unnest(counts);
    END;
  END LOOP;
END $$;

-- Every query of one type and one index ordering; writes: whether the scroll cursors' rounds
-- may write (not in a REPEATABLE READ snapshot while writers change the same rows).
CREATE FUNCTION pm_diff.run_type(t regtype, ord text, nrandom int, writes boolean DEFAULT true) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  n text := pm_diff.tname(t);
  a regtype;
  op record;
  v text;
  v2 text;
  arr text;
  o text;
  ordered_shapes text[] := ARRAY['index', 'indexonly']
                            || CASE WHEN pm_diff.parallel_too(t, ord) THEN ARRAY['parallelonly'] ELSE '{}' END;
BEGIN
  CREATE TEMP TABLE IF NOT EXISTS diff_args (x text);
  FOR a IN SELECT pm_diff.arg_types(t) LOOP
    TRUNCATE diff_args;
    INSERT INTO diff_args SELECT pm_diff.args(t, a, nrandom);
    FOR op IN SELECT * FROM pm_diff.operators(t, 'nbtree_pm', a) LOOP
      FOR v IN SELECT x FROM diff_args LOOP
        PERFORM pm_diff.check_where(format('v %s %s', op.oprname, pm_diff.lit(v, a)), t, ord);
      END LOOP;
      -- op ANY (array of edges and random values, with a NULL)
      SELECT format('ARRAY[%s, NULL]::%s[]', string_agg(pm_diff.lit(x, a), ', '), pm_diff.typ(a)) INTO arr
        FROM (SELECT x FROM diff_args ORDER BY random() LIMIT 6) s;
      PERFORM pm_diff.check_where(format('v %s ANY (%s)', op.oprname, arr), t, ord);
      -- a parameterized nested loop with the arguments as the outer relation
      PERFORM pm_diff.check_nbt(format(
        'SELECT x || %L || v FROM (SELECT x::%s AS y, x FROM diff_args) d JOIN %%1$s ON v %s y',
        ':', pm_diff.typ(a), op.oprname), t, ord, ARRAY['index']);
    END LOOP;
    -- two-sided ranges between arguments of this type
    FOR v, v2 IN SELECT x, lead(x) OVER (ORDER BY random()) FROM diff_args LOOP
      CONTINUE WHEN v2 IS NULL;
      PERFORM pm_diff.check_where(format('v >= %s AND v < %s', pm_diff.lit(v, a), pm_diff.lit(v2, a)), t, ord);
      PERFORM pm_diff.check_nbt(format('SELECT v::text AS r FROM %%1$s WHERE v > %s AND v <= %s ORDER BY v DESC',
                                   pm_diff.lit(v, a), pm_diff.lit(v2, a)), t, ord, ordered_shapes, true);
    END LOOP;
  END LOOP;
  PERFORM pm_diff.check_where('v IS NULL', t, ord);
  PERFORM pm_diff.check_where('v IS NOT NULL', t, ord);
  -- orderings, whole, limited, and from a bound
  FOREACH o IN ARRAY ARRAY['v', 'v DESC', 'v NULLS FIRST', 'v DESC NULLS LAST'] LOOP
    -- a whole scan in an order the index does not have (nor its reverse) is a sort of the heap
    -- the index's order (its ordering's name without the access method's prefix) or its reverse
    IF (regexp_replace(ord, '^([a-z]+_)+', '') IN ('asc', 'desc', 'uq')) = (o IN ('v', 'v DESC')) THEN
      PERFORM pm_diff.check_nbt(format('SELECT v::text AS r FROM %%1$s ORDER BY %s', o), t, ord, ordered_shapes, true);
      PERFORM pm_diff.check_nbt(format('SELECT v::text AS r FROM %%1$s ORDER BY %s LIMIT 7', o), t, ord, ordered_shapes, true);
    END IF;
    EXECUTE format('SELECT v::text FROM %s WHERE v IS NOT NULL ORDER BY random() LIMIT 1', pm_diff.oracle(t, ord)) INTO v;
    PERFORM pm_diff.check_nbt(format('SELECT v::text AS r FROM %%1$s WHERE v >= %s ORDER BY %s LIMIT 20',
                                 pm_diff.lit(v, t), o), t, ord, ordered_shapes, true);
  END LOOP;
  IF to_regprocedure(format('min(%s)', pm_diff.typ(pm_diff.base(t)))) IS NOT NULL THEN
    -- by the type's equality: in a nondeterministic collation min picks one of equal values
    PERFORM pm_diff.check_nbt('SELECT min(v)::text FROM %1$s', t, ord, ordered_shapes, true);
    PERFORM pm_diff.check_nbt('SELECT max(v)::text FROM %1$s', t, ord, ordered_shapes, true);
  END IF;
  -- a merge join of the table with itself (mark and restore over duplicates)
  PERFORM pm_diff.check_nbt('SELECT x.v::text FROM %1$s x JOIN %1$s y ON x.v = y.v', t, ord, ARRAY['merge']);
  -- scroll cursors, on a type of each kind of key
  IF t = ANY (pm_diff.key_kinds()) THEN
    PERFORM pm_diff.cursor_run(t, ord, greatest(nrandom / 2, 1), 12, writes);
  END IF;
END $$;

-- The default operator classes of nbtree_pm, by input type, and the collation domains.
CREATE FUNCTION pm_diff.types() RETURNS SETOF regtype
LANGUAGE sql STABLE AS $$
  SELECT t FROM (
    SELECT oc.opcintype::regtype
      FROM pg_opclass oc JOIN pg_am am ON am.oid = oc.opcmethod AND am.amname = 'nbtree_pm'
     WHERE oc.opcdefault
    UNION ALL
    SELECT unnest(pm_diff.collated())) s(t)
   ORDER BY 1
$$;

-- The tables the concurrent pass writes for type t: every pm_<type>_<ordering> of a plain
-- index, then bt_<type>; of a unique one, then bt_<type>_uq.
CREATE FUNCTION pm_diff.tables(t regtype) RETURNS text[]
LANGUAGE sql STABLE AS $$
  SELECT array_agg(format('pm_diff.pm_%s_%s', pm_diff.tname(t), name)) || pm_diff.oracle(t, '')
    FROM pm_diff.orderings(t) WHERE NOT uniq
$$;

CREATE FUNCTION pm_diff.unique_tables(t regtype) RETURNS text[]
LANGUAGE sql STABLE AS $$
  SELECT array_agg(format('pm_diff.pm_%s_%s', pm_diff.tname(t), name)) || pm_diff.oracle(t, 'uq')
    FROM pm_diff.orderings(t) WHERE uniq
$$;

-- The concurrent pass's writer of the unique tables: as pm_diff.write, but half the inserted
-- and updated values are taken from the table, and each table's statements run in a block of
-- their own, which a unique violation undoes; every table must have the outcome that the
-- btree table (the last) has, else the writer fails.
CREATE SEQUENCE pm_diff.unique_ids START 1000000;
CREATE PROCEDURE pm_diff.write_unique(tables text[], t regtype, random_fn regproc, rounds int)
LANGUAGE plpgsql AS $$
DECLARE
  oracle text := tables[cardinality(tables)];
  one_random text := format('SELECT pm_diff.lit(%s(%L::regtype), %L::regtype)', random_fn, t, t);
  one_taken text := format('SELECT pm_diff.lit(v::text, %L::regtype) FROM %s WHERE v IS NOT NULL ORDER BY random() LIMIT 1',
                           t, oracle);
  tab text;
  id int;
  upd_id int;
  del_id int;
  v text;
  v2 text;
  outcomes text[];
BEGIN
  FOR i IN 1 .. rounds LOOP
    EXIT WHEN EXISTS (SELECT FROM pm_diff.stop);
    id := nextval('pm_diff.unique_ids');
    EXECUTE CASE WHEN random() < 0.5 THEN one_random ELSE one_taken END INTO v;
    EXECUTE CASE WHEN random() < 0.5 THEN one_random ELSE one_taken END INTO v2;
    EXECUTE format('SELECT id FROM %s ORDER BY random() LIMIT 1', oracle) INTO upd_id;
    EXECUTE format('SELECT id FROM %s ORDER BY random() LIMIT 1', oracle) INTO del_id;
    outcomes := '{}';
    FOREACH tab IN ARRAY tables LOOP
      BEGIN
        EXECUTE format('INSERT INTO %s VALUES (%s, %s)', tab, id, v);
        EXECUTE format('UPDATE %s SET v = %s WHERE id = %s', tab, v2, upd_id);
        EXECUTE format('DELETE FROM %s WHERE id = %s', tab, del_id);
        outcomes := outcomes || 'done'::text;
      EXCEPTION WHEN unique_violation THEN
        outcomes := outcomes || 'unique violation'::text;
      END;
    END LOOP;
    IF EXISTS (SELECT FROM unnest(outcomes) o WHERE o <> outcomes[cardinality(outcomes)]) THEN
      RAISE EXCEPTION 'unique indexes disagree: % for %', outcomes, tables;
    END IF;
    COMMIT;
    PERFORM pg_sleep(0.01);
  END LOOP;
END $$;

-- Multicolumn indexes: tables of two and three columns of mixed types (8-byte keys and those
-- narrower in a segment, wide keys, strings in "C" and in ICU (where the server has it: a
-- multicolumn nbtree_pm index takes no libc collation), host bytes), each column's values drawn from a small pool (so that
-- leading equalities leave many rows) and NULL in one row of six.  Each index ordering has
-- nbtree_pm's table pm_diff.mc<shape>_<ordering> and btree's pm_diff.mcbt<shape>_<ordering>
-- (the same rows, a btree index with the same column options); the unique ones hold the
-- distinct rows (NULLs distinct, or NULLS NOT DISTINCT: uqnnd).
CREATE TABLE pm_diff.mc_shapes (shape int PRIMARY KEY, types regtype[]);
INSERT INTO pm_diff.mc_shapes VALUES
  (1, '{int4,text,float8}'), (2, ARRAY[coalesce(to_regtype('pm_diff.text_icu'), 'text'), 'numeric', 'timestamptz']), (3, '{uuid,int8}'),
  (4, '{int2,bytea,interval}'), (5, '{date,bool,oid}');
CREATE TABLE pm_diff.mc_orderings (name text PRIMARY KEY, clauses text[], uniq text);
INSERT INTO pm_diff.mc_orderings VALUES
  ('asc', '{"","",""}', ''),
  ('mixed', '{DESC,NULLS FIRST,DESC NULLS LAST}', ''),
  ('desc', '{DESC NULLS LAST,DESC,""}', ''),
  ('uq', '{"",DESC,""}', 'UNIQUE'),
  ('uqnnd', '{NULLS FIRST,"",DESC}', 'UNIQUE');

CREATE FUNCTION pm_diff.mc_cols(shape int) RETURNS text[]
LANGUAGE sql STABLE AS $$
  SELECT array_agg(chr(ascii('a') + i - 1) ORDER BY i)
    FROM pm_diff.mc_shapes, generate_subscripts(types, 1) i WHERE mc_shapes.shape = mc_cols.shape
$$;

-- The index's column list (ord's options), reversed: each option the other way.
CREATE FUNCTION pm_diff.mc_order(shape int, ord text, reversed boolean) RETURNS text
LANGUAGE sql STABLE AS $$
  SELECT string_agg(c || ' ' || CASE WHEN NOT reversed THEN o
                                     ELSE CASE WHEN o LIKE 'DESC%' THEN 'ASC' ELSE 'DESC' END
                                          || CASE WHEN o LIKE '%NULLS FIRST' THEN ' NULLS LAST'
                                                  WHEN o LIKE '%NULLS LAST' THEN ' NULLS FIRST' ELSE '' END END,
                    ', ' ORDER BY i)
    FROM unnest(pm_diff.mc_cols(shape)) WITH ORDINALITY a(c, i)
    JOIN unnest((SELECT clauses FROM pm_diff.mc_orderings WHERE name = ord)) WITH ORDINALITY b(o, j) ON i = j
$$;

CREATE FUNCTION pm_diff.mc_setup(nrows int) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  s record;
  o record;
  pools text[];
  cols text[];
  vals text[];
  am text;
  n text;
BEGIN
  FOR s IN SELECT * FROM pm_diff.mc_shapes ORDER BY shape LOOP
    cols := pm_diff.mc_cols(s.shape);
    -- a row type of the columns: ordered answers compare by its equality
    EXECUTE format('CREATE TYPE pm_diff.mc%s_row AS (%s)', s.shape,
                   (SELECT string_agg(format('%s %s', cols[i], pm_diff.typ(s.types[i])), ', ')
                      FROM generate_subscripts(s.types, 1) i));
    EXECUTE format('CREATE TABLE pm_diff.mc%s (id serial, %s)', s.shape,
                   (SELECT string_agg(format('%s %s %s', cols[i], pm_diff.typ(s.types[i]),
                                             CASE WHEN s.types[i] = 'text'::regtype THEN 'COLLATE "C"' ELSE '' END), ', ')
                      FROM generate_subscripts(s.types, 1) i));
    pools := '{}';
    FOR i IN 1 .. cardinality(s.types) LOOP
      -- pools of 3, 5, 40 values: edges and random values
      pools := pools || (SELECT array_agg(v) FROM (
                           SELECT v FROM (SELECT unnest(pm_diff.edges(s.types[i])) v
                                          UNION ALL SELECT pm_diff.random_value(s.types[i])
                                            FROM generate_series(1, 20)) p
                            ORDER BY random() LIMIT (ARRAY[3, 5, 40])[i]) q)::text;
    END LOOP;
    FOR r IN 1 .. nrows LOOP
      vals := '{}';
      FOR i IN 1 .. cardinality(s.types) LOOP
        vals := vals || CASE WHEN random() < 0.16 THEN 'NULL'
                             ELSE pm_diff.lit((pools[i]::text[])[1 + floor(random() * cardinality(pools[i]::text[]))::int],
                                              s.types[i]) END;
      END LOOP;
      EXECUTE format('INSERT INTO pm_diff.mc%s (%s) VALUES (%s)', s.shape, array_to_string(cols, ', '),
                     array_to_string(vals, ', '));
    END LOOP;
    FOR o IN SELECT * FROM pm_diff.mc_orderings LOOP
      n := format('%s_%s', s.shape, o.name);
      EXECUTE format('CREATE TABLE pm_diff.mcbt%s AS SELECT * FROM pm_diff.mc%s %s', n, s.shape,
                     CASE o.uniq WHEN '' THEN ''
                       WHEN 'UNIQUE' THEN CASE WHEN o.name = 'uq' THEN format('WHERE num_nulls(%1$s) > 0 UNION ALL SELECT DISTINCT ON (%1$s) * FROM pm_diff.mc%2$s WHERE num_nulls(%1$s) = 0',
                                                 array_to_string(cols, ', '), s.shape)
                       ELSE format('WHERE id IN (SELECT DISTINCT ON (%s) id FROM pm_diff.mc%s)',
                                   array_to_string(cols, ', '), s.shape) END END);
      EXECUTE format('CREATE TABLE pm_diff.mc%s AS SELECT * FROM pm_diff.mcbt%s', n, n);
      FOREACH am IN ARRAY ARRAY['btree', 'nbtree_pm'] LOOP
        EXECUTE format('CREATE %s INDEX mc%s%s_i ON pm_diff.mc%2$s%3$s USING %s (%s) %s', o.uniq,
                       CASE am WHEN 'btree' THEN 'bt' ELSE '' END, n, am,
                       pm_diff.mc_order(s.shape, o.name, false),
                       CASE WHEN o.name = 'uqnnd' THEN 'NULLS NOT DISTINCT' ELSE '' END);
      END LOOP;
    END LOOP;
  END LOOP;
END $$;

-- A condition on column c of type t, of a random kind, with values from the table (vals) or
-- of the column's operator family's argument types.
CREATE FUNCTION pm_diff.mc_condition(c text, t regtype, vals text[]) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  r float8 := random();
  a regtype := (SELECT x FROM pm_diff.arg_types(t) x ORDER BY random() LIMIT 1);
  v1 text := pm_diff.lit(CASE WHEN random() < 0.7 AND cardinality(vals) > 0
                              THEN vals[1 + floor(random() * cardinality(vals))::int]
                              ELSE pm_diff.random_value(pm_diff.base(t)) END, t);
  v2 text := pm_diff.lit(CASE WHEN random() < 0.7 AND cardinality(vals) > 0
                              THEN vals[1 + floor(random() * cardinality(vals))::int]
                              ELSE pm_diff.random_value(pm_diff.base(t)) END, t);
  va text := pm_diff.lit(pm_diff.random_value(pm_diff.base(a)), a);
BEGIN
  RETURN CASE
    WHEN r < 0.35 THEN format('%s = %s', c, v1)
    WHEN r < 0.45 THEN format('%s %s %s', c, (ARRAY['<', '<=', '>', '>='])[1 + floor(random() * 4)::int], v1)
    WHEN r < 0.5 THEN format('%s %s %s', c, (ARRAY['<', '<=', '=', '>', '>='])[1 + floor(random() * 5)::int], va)
    WHEN r < 0.6 THEN format('%s IS NULL', c)
    WHEN r < 0.7 THEN format('%s IS NOT NULL', c)
    WHEN r < 0.8 THEN format('%s = ANY (ARRAY[%s, %s, NULL])', c, v1, v2)
    WHEN r < 0.85 THEN format('%s > ANY (ARRAY[%s, %s])', c, v1, v2)
    ELSE format('%s >= %s AND %s <= %s', c, v1, c, v2)
  END;
END $$;

-- nq random queries on the tables of one shape and ordering: conditions on any of the columns
-- (at least one), through index, bitmap and index-only scans; and in the index's order and its
-- reverse, with a limit.
CREATE FUNCTION pm_diff.mc_run(shape int, ord text, nq int) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  n text := format('%s_%s', shape, ord);
  types regtype[] := (SELECT s.types FROM pm_diff.mc_shapes s WHERE s.shape = mc_run.shape);
  cols text[] := pm_diff.mc_cols(shape);
  allcols text := array_to_string(cols, ', ');
  vals text[];
  conds text[];
  cond text;
  par text[] := CASE WHEN ord = 'asc' THEN ARRAY['parallel'] ELSE '{}' END;
BEGIN
  FOR q IN 1 .. nq LOOP
    conds := '{}';
    FOR i IN 1 .. cardinality(cols) LOOP
      IF random() < 0.55 OR (i = cardinality(cols) AND cardinality(conds) = 0) THEN
        EXECUTE format('SELECT coalesce(array_agg(%s::text), %L) FROM pm_diff.mc%s WHERE %s IS NOT NULL',
                       cols[i], '{}', n, cols[i]) INTO vals;
        conds := conds || pm_diff.mc_condition(cols[i], types[i], vals);
      END IF;
    END LOOP;
    cond := replace(array_to_string(conds, ' AND '), '%', '%%');
    PERFORM pm_diff.check(format('SELECT id || %L || row(%s)::text FROM %%1$s WHERE %s', ':', allcols, cond),
                          'text', format('pm_diff.mc%s', n), format('mc%s_i', n), format('pm_diff.mcbt%s', n),
                          ARRAY['index', 'bitmap'] || par);
    PERFORM pm_diff.check(format('SELECT row(%s)::text FROM %%1$s WHERE %s', allcols, cond),
                          'text', format('pm_diff.mc%s', n), format('mc%s_i', n), format('pm_diff.mcbt%s', n),
                          ARRAY['indexonly']);
    PERFORM pm_diff.check(format('SELECT row(%s)::pm_diff.mc%s_row::text FROM %%1$s WHERE %s ORDER BY %s LIMIT 15',
                                 allcols, shape, cond, pm_diff.mc_order(shape, ord, random() < 0.5)),
                          format('pm_diff.mc%s_row', shape)::regtype, format('pm_diff.mc%s', n), format('mc%s_i', n),
                          format('pm_diff.mcbt%s', n), ARRAY['index', 'indexonly'], true);
  END LOOP;
  -- whole scans in the index's order and its reverse
  FOR rev IN 0 .. 1 LOOP
    PERFORM pm_diff.check(format('SELECT row(%s)::pm_diff.mc%s_row::text FROM %%1$s ORDER BY %s',
                                 allcols, shape, pm_diff.mc_order(shape, ord, rev = 1)),
                          format('pm_diff.mc%s_row', shape)::regtype, format('pm_diff.mc%s', n), format('mc%s_i', n),
                          format('pm_diff.mcbt%s', n), ARRAY['index', 'indexonly'], true);
  END LOOP;
END $$;

-- The concurrent pass's writer of the multicolumn tables of one shape: rows of random values
-- (half of them taken from the table) inserted, updated and deleted alike in each ordering's
-- nbtree_pm and btree tables, each table's statements in a block of their own, which a unique
-- violation undoes; both tables of an ordering must have the same outcome, else the writer
-- fails.
CREATE PROCEDURE pm_diff.mc_write(shape int, rounds int)
LANGUAGE plpgsql AS $$
DECLARE
  types regtype[] := (SELECT s.types FROM pm_diff.mc_shapes s WHERE s.shape = mc_write.shape);
  cols text[] := pm_diff.mc_cols(shape);
  ord text;
  tab text;
  id int;
  vals text[];
  sets text[];
  outcomes text[];
  v text;
BEGIN
  FOR r IN 1 .. rounds LOOP
    EXIT WHEN EXISTS (SELECT FROM pm_diff.stop);
    id := nextval(pg_get_serial_sequence(format('pm_diff.mc%s', shape), 'id'));
    vals := '{}';
    sets := '{}';
    FOR i IN 1 .. cardinality(types) LOOP
      FOR k IN 1 .. 2 LOOP
        EXECUTE format('SELECT %s::text FROM pm_diff.mc%s ORDER BY random() LIMIT 1', cols[i], shape) INTO v;
        v := CASE WHEN random() < 0.15 THEN 'NULL'
                  WHEN random() < 0.5 AND v IS NOT NULL THEN pm_diff.lit(v, types[i])
                  ELSE pm_diff.lit(pm_diff.random_value(pm_diff.base(types[i])), types[i]) END;
        IF k = 1 THEN
          vals := vals || v;
        ELSE
          sets := sets || format('%s = %s', cols[i], v);
        END IF;
      END LOOP;
    END LOOP;
    FOR ord IN SELECT name FROM pm_diff.mc_orderings ORDER BY name LOOP
      outcomes := '{}';
      FOREACH tab IN ARRAY ARRAY[format('pm_diff.mc%s_%s', shape, ord), format('pm_diff.mcbt%s_%s', shape, ord)] LOOP
        BEGIN
          EXECUTE format('INSERT INTO %s (id, %s) VALUES (%s, %s)', tab, array_to_string(cols, ', '), id,
                         array_to_string(vals, ', '));
          EXECUTE format('UPDATE %s SET %s WHERE id = %s', tab, array_to_string(sets, ', '), id / 2);
          EXECUTE format('DELETE FROM %s WHERE id = %s', tab, id / 3);
          outcomes := outcomes || 'done'::text;
        EXCEPTION WHEN unique_violation THEN
          outcomes := outcomes || 'unique violation'::text;
        END;
      END LOOP;
      IF outcomes[1] <> outcomes[2] THEN
        RAISE EXCEPTION 'nbtree_pm and btree disagree: % in ordering % of shape %', outcomes, ord, shape;
      END IF;
    END LOOP;
    COMMIT;
    PERFORM pg_sleep(0.01);
  END LOOP;
END $$;
