-- The differential oracle's common part: plan shapes, answers, comparisons and the record of
-- failures, loaded before tests/diff/nbtree_pm.sql and tests/diff/fbrtree_pm.sql by
-- tests/t/090_differential.pl.  A check runs one query (a format string, %1$s the table) on the
-- table with the tested index under each plan shape, and on an identical table with the
-- built-in index and by a sequential scan, in the caller's snapshot; mismatches go to
-- pm_diff.failures with the query, so a failure replays by hand against the same seed's data.
SET client_min_messages = warning;
CREATE SCHEMA pm_diff;

CREATE TABLE pm_diff.failures (kind text, query text, got text, want text);
CREATE TABLE pm_diff.counts (shape text PRIMARY KEY, n bigint NOT NULL);
-- answers compared per class of tables (the setting pm_diff.class names the class running)
CREATE TABLE pm_diff.class_counts (class text PRIMARY KEY, n bigint NOT NULL);

-- The type's name as it appears in table names (pm_diff.bt_timestamptz).
-- The ordered access methods of the extension (as tests/lib/ordered_ams.sql lists them): every
-- ordered pass runs on each.
CREATE FUNCTION pm_diff.ordered_ams() RETURNS text[]
LANGUAGE sql STABLE AS $$
  SELECT array_agg(a.amname::text ORDER BY a.amname)
    FROM pg_am a
    JOIN pg_depend d ON d.classid = 'pg_am'::regclass AND d.objid = a.oid AND d.deptype = 'e'
    JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'pm_index'
   WHERE pg_indexam_has_property(a.oid, 'can_order')
$$;

CREATE FUNCTION pm_diff.tname(t regtype) RETURNS text
LANGUAGE sql STABLE AS $$ SELECT typname::text FROM pg_type WHERE oid = t $$;

-- The name of type t in a query: format_type's with typmod -1, which is "bpchar" where t's
-- own output, "character", would mean char(1).
CREATE FUNCTION pm_diff.typ(t regtype) RETURNS text
LANGUAGE sql STABLE AS $$ SELECT format_type(t, -1) $$;

-- Literal of value v (text) of type t, for a query.
CREATE FUNCTION pm_diff.lit(v text, t regtype) RETURNS text
LANGUAGE sql STABLE AS $$ SELECT format('%L::%s', v, pm_diff.typ(t)) $$;

-- Settings of a plan shape, local to the transaction ('planner': every kind of plan allowed, as
-- by default).
CREATE FUNCTION pm_diff.set_shape(shape text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM set_config('enable_seqscan', (shape IN ('seq', 'planner'))::text, true);
  PERFORM set_config('enable_indexscan', (shape IN ('index', 'indexonly', 'merge', 'nestloop', 'builtin',
                                                   'parallel', 'parallelonly', 'planner', 'anyplan'))::text, true);
  PERFORM set_config('enable_indexonlyscan', (shape IN ('indexonly', 'merge', 'parallelonly', 'planner'))::text, true);
  PERFORM set_config('enable_bitmapscan', (shape IN ('bitmap', 'planner', 'anyplan'))::text, true);
  PERFORM set_config('enable_sort', (shape NOT IN ('merge'))::text, true);
  PERFORM set_config('enable_mergejoin', (shape IN ('merge', 'planner'))::text, true);
  PERFORM set_config('enable_hashjoin', (shape IN ('seq', 'planner'))::text, true);
  PERFORM set_config('enable_nestloop', (shape <> 'merge')::text, true);
  PERFORM set_config('enable_material', (shape = 'planner')::text, true);
  -- a plan of a kind turned off costs past jit_above_cost, and compiling it would take longer
  -- than running it
  PERFORM set_config('jit', 'off', true);
  -- the parallel shapes: a Gather (Merge) over the index scan, however small the table
  PERFORM set_config('parallel_setup_cost', CASE WHEN shape LIKE 'parallel%' THEN '0' ELSE '1000' END, true);
  PERFORM set_config('parallel_tuple_cost', CASE WHEN shape LIKE 'parallel%' THEN '0' ELSE '0.1' END, true);
  PERFORM set_config('min_parallel_index_scan_size', CASE WHEN shape LIKE 'parallel%' THEN '0' ELSE '512kB' END, true);
  PERFORM set_config('min_parallel_table_scan_size', CASE WHEN shape LIKE 'parallel%' THEN '0' ELSE '8MB' END, true);
  PERFORM set_config('max_parallel_workers_per_gather', CASE WHEN shape LIKE 'parallel%' THEN '2' ELSE '0' END, true);
END $$;

-- The plan of q under a shape, one string.
CREATE FUNCTION pm_diff.plan(q text, shape text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  line text;
  plan text := '';
BEGIN
  PERFORM pm_diff.set_shape(shape);
  FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    plan := plan || line || E'\n';
  END LOOP;
  RETURN plan;
END $$;

-- q's rows (one text column r), a line each, under a shape: sorted when ordered is false, else in
-- q's order.  No rows is '(no rows)', which one row of '' is not.
CREATE FUNCTION pm_diff.answer(q text, shape text, ordered boolean) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  a text;
BEGIN
  PERFORM pm_diff.set_shape(shape);
  IF ordered THEN
    EXECUTE format('SELECT coalesce(string_agg(coalesce(r, %L), %L), %L) FROM (%s) s(r)',
                   'NULL', E'\n', '(no rows)', q) INTO a;
  ELSE
    EXECUTE format('SELECT coalesce(string_agg(coalesce(r, %L), %L ORDER BY r COLLATE "C"), %L) FROM (%s) s(r)',
                   'NULL', E'\n', '(no rows)', q) INTO a;
  END IF;
  RETURN a;
EXCEPTION WHEN OTHERS THEN
  RETURN 'ERROR ' || SQLSTATE || ': ' || SQLERRM;
END $$;

CREATE FUNCTION pm_diff.fail(kind text, q text, got text, want text) RETURNS void
LANGUAGE sql AS $$
  INSERT INTO pm_diff.failures VALUES (kind, q, left(got, 2000), left(want, 2000))
$$;

-- n more answers compared under a shape (or of a class: cursor moves, WHERE shapes)
CREATE FUNCTION pm_diff.count(shape text, n bigint DEFAULT 1) RETURNS void
LANGUAGE sql AS $$
  INSERT INTO pm_diff.counts VALUES (shape, n) ON CONFLICT (shape) DO UPDATE SET n = counts.n + excluded.n;
  INSERT INTO pm_diff.class_counts SELECT c, n FROM nullif(current_setting('pm_diff.class', true), '') c
   WHERE c IS NOT NULL ON CONFLICT (class) DO UPDATE SET n = class_counts.n + excluded.n;
$$;

-- Ordered answers compare by the type's equality (-0 equals 0 there, as ties may come in either
-- order); everything else compares exactly, as text.
CREATE FUNCTION pm_diff.same_order(a text, b text, t regtype) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
  eq boolean;
BEGIN
  IF a = b THEN
    RETURN true;
  END IF;
  IF a LIKE 'ERROR %' OR b LIKE 'ERROR %' OR '(no rows)' IN (a, b) THEN
    RETURN false;
  END IF;
  -- regexp_split_to_array: one row of '' is {''}, where string_to_array makes it {}
  EXECUTE format('SELECT array_replace(regexp_split_to_array($1, $3), $4, NULL)::%1$s[]
                   IS NOT DISTINCT FROM array_replace(regexp_split_to_array($2, $3), $4, NULL)::%1$s[]', pm_diff.typ(t))
    INTO eq USING a, b, E'\n', 'NULL';
  RETURN eq;
END $$;

-- Compare q (with %1$s for the table) on each tested table (its index in index_names) under
-- each shape with the oracle
-- table (same rows, a built-in index: the "builtin" shape) and a sequential scan.  The plan must
-- use the tested index as the shape says; "anyplan" (index and bitmap scans on, sequential scans
-- off) takes whatever plan comes, for queries that may use the index only where it cannot lose
-- a row.  The sequential scan is the truth: where the built-in
-- index differs from it, that is recorded as kind 'builtin differs' (GiST has known quirks).
-- Ordered answers are compared as arrays of answer_type.
CREATE FUNCTION pm_diff.check_tables(q text, answer_type regtype, tested_tables text[],
                                     index_names text[], oracle text, shapes text[],
                                     ordered boolean DEFAULT false)
RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  by_seq text := pm_diff.answer(format(q, oracle), 'seq', ordered);
  by_builtin text := pm_diff.answer(format(q, oracle), 'builtin', ordered);
  shape text;
  got text;
  plan text;
  want_node text;
  tested text;
  index_name text;
BEGIN
  IF NOT pm_diff.same_order(by_seq, by_builtin, answer_type) THEN
    PERFORM pm_diff.fail('builtin differs', format(q, oracle), by_builtin, by_seq);
  END IF;
  FOR i IN 1 .. cardinality(tested_tables) LOOP
    tested := tested_tables[i];
    index_name := index_names[i];
    FOREACH shape IN ARRAY shapes LOOP
      plan := pm_diff.plan(format(q, tested), shape);
      want_node := CASE shape
        WHEN 'index' THEN 'Index Scan% using ' || index_name
        WHEN 'indexonly' THEN 'Index Only Scan% using ' || index_name
        WHEN 'parallel' THEN 'Parallel Index Scan% using ' || index_name
        WHEN 'parallelonly' THEN 'Parallel Index Only Scan% using ' || index_name
        WHEN 'bitmap' THEN 'Bitmap Index Scan on ' || index_name
        WHEN 'merge' THEN 'Merge Join%' || index_name || '%' || index_name
        WHEN 'anyplan' THEN ''
        ELSE '% ' || index_name
      END;
      IF plan NOT LIKE '%' || want_node || '%' THEN
        -- costs cannot force a parallel plan for every query (a few rows gain nothing from one):
        -- those are checked where the planner takes them, and 090 requires that it did
        IF shape NOT LIKE 'parallel%' THEN
          PERFORM pm_diff.fail('plan ' || shape, format(q, tested), plan, want_node);
        END IF;
        CONTINUE;
      END IF;
      PERFORM pm_diff.count(shape);
      got := pm_diff.answer(format(q, tested), shape, ordered);
      IF (ordered AND NOT pm_diff.same_order(got, by_seq, answer_type)) OR (NOT ordered AND got <> by_seq) THEN
        PERFORM pm_diff.fail(shape, format(q, tested), got, by_seq);
      END IF;
    END LOOP;
  END LOOP;
END $$;

-- pm_diff.check_tables of one tested table.
CREATE FUNCTION pm_diff.check(q text, answer_type regtype, tested text, index_name text, oracle text,
                              shapes text[], ordered boolean DEFAULT false)
RETURNS void
LANGUAGE sql AS $$
  SELECT pm_diff.check_tables(q, answer_type, ARRAY[tested], ARRAY[index_name], oracle, shapes, ordered)
$$;


-- The oracle's table of type t, built-in index of method oracle_am: the edges twice, 8 NULLs,
-- a run of dups copies of one random value (longer than a leaf or node) and nrandom random
-- values, each random value from the function random_fn(t), or the expression random_sql
-- when given (text of a value of t).  The column is of type t, or coltype when given (a type
-- modifier).
CREATE FUNCTION pm_diff.oracle_table(tbl text, t regtype, oracle_am text, edges text[],
                                     random_fn regproc, dups int, nrandom int,
                                     coltype text DEFAULT NULL, random_sql text DEFAULT NULL) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  v text;
  one_random text := format('pm_diff.lit(%s, %L::regtype)',
                            coalesce(random_sql, format('%s(%L::regtype)', random_fn, t)), t);
BEGIN
  -- a collatable type in "C", unless it is a domain with a collation of its own
  EXECUTE format('CREATE TABLE %s (id serial, v %s %s)', tbl, coalesce(coltype, pm_diff.typ(t)),
                 CASE WHEN (SELECT typcollation <> 0 AND typtype <> 'd' FROM pg_type WHERE oid = t)
                      THEN 'COLLATE "C"' ELSE '' END);
  FOREACH v IN ARRAY edges || edges LOOP
    EXECUTE format('INSERT INTO %s (v) VALUES (%s)', tbl, pm_diff.lit(v, t));
  END LOOP;
  EXECUTE format('INSERT INTO %s (v) SELECT NULL FROM generate_series(1, 8)', tbl);
  EXECUTE format('SELECT %s', one_random) INTO v;
  EXECUTE format('INSERT INTO %s (v) SELECT %s FROM generate_series(1, %s)', tbl, v, dups);
  FOR i IN 1 .. nrandom LOOP
    EXECUTE format('SELECT %s', one_random) INTO v;
    EXECUTE format('INSERT INTO %s (v) VALUES (%s)', tbl, v);
  END LOOP;
  EXECUTE format('CREATE INDEX ON %s USING %s (v)', tbl, oracle_am);
END $$;

-- Is tbl one of the oracle's tables: are all its indexes of built-in access methods?
CREATE FUNCTION pm_diff.builtin_table(tbl text) RETURNS boolean
LANGUAGE sql STABLE AS $$
  SELECT NOT EXISTS (SELECT FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
                       JOIN pg_am a ON a.oid = c.relam
                      WHERE i.indrelid = tbl::regclass AND a.amname NOT IN ('btree', 'gist', 'hash'))
$$;

-- A writer for the concurrent pass: each round inserts, updates and deletes the same rows in
-- every table of the list (values of type t from random_fn; ids from the last table's
-- sequence) in one transaction, so that any snapshot sees identical tables, then pauses 10 ms,
-- until rounds are done or pm_diff.stop has a row.  A value out of range that a built-in
-- index's own arithmetic raises (GiST's picksplit divides the distance between tiny
-- coordinates by the width of a huge page box, an underflow) is the built-in index's, not the
-- tested one's: that round is rolled back in every table and recorded as 'builtin error'.  Any
-- other error, or one raised on a tested table, stops the writer.
CREATE TABLE pm_diff.stop (at timestamptz);
CREATE PROCEDURE pm_diff.write(tables text[], t regtype, random_fn regproc, rounds int)
LANGUAGE plpgsql AS $$
DECLARE
  one_random text := format('SELECT pm_diff.lit(%s(%L::regtype), %L::regtype)', random_fn, t, t);
  tab text;
  id int;
  v text;
  v2 text;
  stmt text;
BEGIN
  FOR i IN 1 .. rounds LOOP
    EXIT WHEN EXISTS (SELECT FROM pm_diff.stop);
    id := nextval(pg_get_serial_sequence(tables[cardinality(tables)], 'id'));
    EXECUTE one_random INTO v;
    EXECUTE one_random INTO v2;
    BEGIN
      FOREACH tab IN ARRAY tables LOOP
        stmt := format('INSERT INTO %s VALUES (%s, %s)', tab, id, v);
        EXECUTE stmt;
        stmt := format('UPDATE %s SET v = %s WHERE id = %s', tab, v2, id / 2);
        EXECUTE stmt;
        stmt := format('DELETE FROM %s WHERE id = %s', tab, id / 3);
        EXECUTE stmt;
      END LOOP;
    EXCEPTION WHEN numeric_value_out_of_range THEN
      IF NOT pm_diff.builtin_table(tab) THEN
        RAISE;
      END IF;
      PERFORM pm_diff.fail('builtin error', stmt, 'ERROR ' || SQLSTATE || ': ' || SQLERRM,
                           'the round rolled back in every table');
    END;
    COMMIT;
    PERFORM pg_sleep(0.01);
  END LOOP;
END $$;
