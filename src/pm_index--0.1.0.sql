/* pm_index--0.1.0.sql: the install script of pm_index */

\echo Use "CREATE EXTENSION pm_index" to load this file. \quit

CREATE FUNCTION pm_index_version() RETURNS text
AS 'MODULE_PATHNAME', 'pm_index_version'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION pm_index_version() IS 'version of the pm_index library';

CREATE FUNCTION pm_index_pools(
    OUT path text,
    OUT index regclass,
    OUT database oid,
    OUT relfilenode oid,
    OUT bytes bigint,
    OUT mode text,
    OUT is_pmem boolean,
    OUT state text,
    OUT detail text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pm_index_pools'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION pm_index_pools() IS 'one row per pool file in pm_index.pool_dir';

-- It names server files: keep it to superusers and monitoring roles.
REVOKE ALL ON FUNCTION pm_index_pools() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION pm_index_pools() TO pg_monitor;

-- ---------------------------------------------------------------------------
-- nbtree_pm: the NBTree lock-free PM B+-tree as an ordered index
-- ---------------------------------------------------------------------------

CREATE FUNCTION nbtree_pm_handler(internal) RETURNS index_am_handler
AS 'MODULE_PATHNAME', 'nbtree_pm_handler'
LANGUAGE C;

CREATE ACCESS METHOD nbtree_pm TYPE INDEX HANDLER nbtree_pm_handler;
COMMENT ON ACCESS METHOD nbtree_pm IS 'ordered index whose nodes live in a persistent-memory pool (NBTree)';

CREATE FUNCTION nbtree_pm_check(index regclass, heapallindexed boolean DEFAULT false)
RETURNS void
AS 'MODULE_PATHNAME', 'nbtree_pm_check'
LANGUAGE C STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION nbtree_pm_check(regclass, boolean) IS
  'verify an nbtree_pm index; with heapallindexed, also that every heap tuple is indexed';
REVOKE ALL ON FUNCTION nbtree_pm_check(regclass, boolean) FROM PUBLIC;

CREATE FUNCTION pm_index_stats(index regclass,
    OUT entries bigint, OUT leaves bigint, OUT height integer,
    OUT pm_bytes bigint, OUT dram_bytes bigint,
    OUT smo_splits bigint, OUT smo_compactions bigint, OUT smo_merges bigint,
    OUT inserts bigint, OUT deletes bigint,
    OUT flushes_per_write double precision, OUT fences_per_write double precision)
AS 'MODULE_PATHNAME', 'pm_index_stats'
LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;
COMMENT ON FUNCTION pm_index_stats(regclass) IS
  'size, shape and persistence cost of a pm_index index (counters since startup)';

-- ---------------------------------------------------------------------------
-- phast_pm: the PhaST partitioned skiplist as an ordered index
-- ---------------------------------------------------------------------------

CREATE FUNCTION phast_pm_handler(internal) RETURNS index_am_handler
AS 'MODULE_PATHNAME', 'phast_pm_handler'
LANGUAGE C;

CREATE ACCESS METHOD phast_pm TYPE INDEX HANDLER phast_pm_handler;
COMMENT ON ACCESS METHOD phast_pm IS 'ordered index whose leaves live in a persistent-memory pool (PhaST skiplist)';

CREATE FUNCTION phast_pm_check(index regclass, heapallindexed boolean DEFAULT false)
RETURNS void
AS 'MODULE_PATHNAME', 'phast_pm_check'
LANGUAGE C STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION phast_pm_check(regclass, boolean) IS
  'verify a phast_pm index; with heapallindexed, also that every heap tuple is indexed';
REVOKE ALL ON FUNCTION phast_pm_check(regclass, boolean) FROM PUBLIC;

-- The operator classes of the ordered access methods, the same for each: btree's, on the types
-- whose values map to order-preserving 8-byte keys (src/pg/ordered/ord_scalar.c).
DO $ordered$
DECLARE
  am text;
BEGIN
  FOREACH am IN ARRAY ARRAY['nbtree_pm', 'phast_pm'] LOOP
    EXECUTE replace($ddl$
-- integers: one key space for int2, int4 and int8, so cross-type comparisons are exact
CREATE OPERATOR FAMILY integer_ops USING @am@;
CREATE OPERATOR CLASS int2_ops DEFAULT FOR TYPE int2 USING @am@ FAMILY integer_ops AS
    OPERATOR 1 <,
    OPERATOR 2 <=,
    OPERATOR 3 =,
    OPERATOR 4 >=,
    OPERATOR 5 >,
    FUNCTION 1 btint2cmp(int2, int2);

CREATE OPERATOR CLASS int4_ops DEFAULT FOR TYPE int4 USING @am@ FAMILY integer_ops AS
    OPERATOR 1 <,
    OPERATOR 2 <=,
    OPERATOR 3 =,
    OPERATOR 4 >=,
    OPERATOR 5 >,
    FUNCTION 1 btint4cmp(int4, int4);

CREATE OPERATOR CLASS int8_ops DEFAULT FOR TYPE int8 USING @am@ FAMILY integer_ops AS
    OPERATOR 1 <,
    OPERATOR 2 <=,
    OPERATOR 3 =,
    OPERATOR 4 >=,
    OPERATOR 5 >,
    FUNCTION 1 btint8cmp(int8, int8);

ALTER OPERATOR FAMILY integer_ops USING @am@ ADD
    OPERATOR 1 < (int2, int4),
    OPERATOR 2 <= (int2, int4),
    OPERATOR 3 = (int2, int4),
    OPERATOR 4 >= (int2, int4),
    OPERATOR 5 > (int2, int4),
    FUNCTION 1 (int2, int4) btint24cmp(int2, int4),
    OPERATOR 1 < (int2, int8),
    OPERATOR 2 <= (int2, int8),
    OPERATOR 3 = (int2, int8),
    OPERATOR 4 >= (int2, int8),
    OPERATOR 5 > (int2, int8),
    FUNCTION 1 (int2, int8) btint28cmp(int2, int8),
    OPERATOR 1 < (int4, int2),
    OPERATOR 2 <= (int4, int2),
    OPERATOR 3 = (int4, int2),
    OPERATOR 4 >= (int4, int2),
    OPERATOR 5 > (int4, int2),
    FUNCTION 1 (int4, int2) btint42cmp(int4, int2),
    OPERATOR 1 < (int4, int8),
    OPERATOR 2 <= (int4, int8),
    OPERATOR 3 = (int4, int8),
    OPERATOR 4 >= (int4, int8),
    OPERATOR 5 > (int4, int8),
    FUNCTION 1 (int4, int8) btint48cmp(int4, int8),
    OPERATOR 1 < (int8, int2),
    OPERATOR 2 <= (int8, int2),
    OPERATOR 3 = (int8, int2),
    OPERATOR 4 >= (int8, int2),
    OPERATOR 5 > (int8, int2),
    FUNCTION 1 (int8, int2) btint82cmp(int8, int2),
    OPERATOR 1 < (int8, int4),
    OPERATOR 2 <= (int8, int4),
    OPERATOR 3 = (int8, int4),
    OPERATOR 4 >= (int8, int4),
    OPERATOR 5 > (int8, int4),
    FUNCTION 1 (int8, int4) btint84cmp(int8, int4);

-- float4 and float8: float4 keys are stored as their exact float8 value
CREATE OPERATOR FAMILY float_ops USING @am@;
CREATE OPERATOR CLASS float4_ops DEFAULT FOR TYPE float4 USING @am@ FAMILY float_ops AS
    OPERATOR 1 <,
    OPERATOR 2 <=,
    OPERATOR 3 =,
    OPERATOR 4 >=,
    OPERATOR 5 >,
    FUNCTION 1 btfloat4cmp(float4, float4);

CREATE OPERATOR CLASS float8_ops DEFAULT FOR TYPE float8 USING @am@ FAMILY float_ops AS
    OPERATOR 1 <,
    OPERATOR 2 <=,
    OPERATOR 3 =,
    OPERATOR 4 >=,
    OPERATOR 5 >,
    FUNCTION 1 btfloat8cmp(float8, float8);

ALTER OPERATOR FAMILY float_ops USING @am@ ADD
    OPERATOR 1 < (float4, float8),
    OPERATOR 2 <= (float4, float8),
    OPERATOR 3 = (float4, float8),
    OPERATOR 4 >= (float4, float8),
    OPERATOR 5 > (float4, float8),
    FUNCTION 1 (float4, float8) btfloat48cmp(float4, float8),
    OPERATOR 1 < (float8, float4),
    OPERATOR 2 <= (float8, float4),
    OPERATOR 3 = (float8, float4),
    OPERATOR 4 >= (float8, float4),
    OPERATOR 5 > (float8, float4),
    FUNCTION 1 (float8, float4) btfloat84cmp(float8, float4);

CREATE OPERATOR FAMILY oid_ops USING @am@;
CREATE OPERATOR CLASS oid_ops DEFAULT FOR TYPE oid USING @am@ FAMILY oid_ops AS
    OPERATOR 1 <,
    OPERATOR 2 <=,
    OPERATOR 3 =,
    OPERATOR 4 >=,
    OPERATOR 5 >,
    FUNCTION 1 btoidcmp(oid, oid);

-- date, timestamp, timestamptz: cross-type comparisons as btree's datetime_ops (the scan
-- converts bounds with the family's comparison functions, so time zones are respected)
CREATE OPERATOR FAMILY datetime_ops USING @am@;
CREATE OPERATOR CLASS date_ops DEFAULT FOR TYPE date USING @am@ FAMILY datetime_ops AS
    OPERATOR 1 <,
    OPERATOR 2 <=,
    OPERATOR 3 =,
    OPERATOR 4 >=,
    OPERATOR 5 >,
    FUNCTION 1 date_cmp(date, date);

CREATE OPERATOR FAMILY time_ops USING @am@;
CREATE OPERATOR CLASS time_ops DEFAULT FOR TYPE time USING @am@ FAMILY time_ops AS
    OPERATOR 1 <,
    OPERATOR 2 <=,
    OPERATOR 3 =,
    OPERATOR 4 >=,
    OPERATOR 5 >,
    FUNCTION 1 time_cmp(time, time);

CREATE OPERATOR CLASS timestamp_ops DEFAULT FOR TYPE timestamp USING @am@ FAMILY datetime_ops AS
    OPERATOR 1 <,
    OPERATOR 2 <=,
    OPERATOR 3 =,
    OPERATOR 4 >=,
    OPERATOR 5 >,
    FUNCTION 1 timestamp_cmp(timestamp, timestamp);

CREATE OPERATOR CLASS timestamptz_ops DEFAULT FOR TYPE timestamptz USING @am@ FAMILY datetime_ops AS
    OPERATOR 1 <,
    OPERATOR 2 <=,
    OPERATOR 3 =,
    OPERATOR 4 >=,
    OPERATOR 5 >,
    FUNCTION 1 timestamptz_cmp(timestamptz, timestamptz);

ALTER OPERATOR FAMILY datetime_ops USING @am@ ADD
    OPERATOR 1 < (date, timestamp),
    OPERATOR 2 <= (date, timestamp),
    OPERATOR 3 = (date, timestamp),
    OPERATOR 4 >= (date, timestamp),
    OPERATOR 5 > (date, timestamp),
    FUNCTION 1 (date, timestamp) date_cmp_timestamp(date, timestamp),
    OPERATOR 1 < (date, timestamptz),
    OPERATOR 2 <= (date, timestamptz),
    OPERATOR 3 = (date, timestamptz),
    OPERATOR 4 >= (date, timestamptz),
    OPERATOR 5 > (date, timestamptz),
    FUNCTION 1 (date, timestamptz) date_cmp_timestamptz(date, timestamptz),
    OPERATOR 1 < (timestamp, date),
    OPERATOR 2 <= (timestamp, date),
    OPERATOR 3 = (timestamp, date),
    OPERATOR 4 >= (timestamp, date),
    OPERATOR 5 > (timestamp, date),
    FUNCTION 1 (timestamp, date) timestamp_cmp_date(timestamp, date),
    OPERATOR 1 < (timestamp, timestamptz),
    OPERATOR 2 <= (timestamp, timestamptz),
    OPERATOR 3 = (timestamp, timestamptz),
    OPERATOR 4 >= (timestamp, timestamptz),
    OPERATOR 5 > (timestamp, timestamptz),
    FUNCTION 1 (timestamp, timestamptz) timestamp_cmp_timestamptz(timestamp, timestamptz),
    OPERATOR 1 < (timestamptz, date),
    OPERATOR 2 <= (timestamptz, date),
    OPERATOR 3 = (timestamptz, date),
    OPERATOR 4 >= (timestamptz, date),
    OPERATOR 5 > (timestamptz, date),
    FUNCTION 1 (timestamptz, date) timestamptz_cmp_date(timestamptz, date),
    OPERATOR 1 < (timestamptz, timestamp),
    OPERATOR 2 <= (timestamptz, timestamp),
    OPERATOR 3 = (timestamptz, timestamp),
    OPERATOR 4 >= (timestamptz, timestamp),
    OPERATOR 5 > (timestamptz, timestamp),
    FUNCTION 1 (timestamptz, timestamp) timestamptz_cmp_timestamp(timestamptz, timestamp);

CREATE OPERATOR FAMILY bool_ops USING @am@;
CREATE OPERATOR CLASS bool_ops DEFAULT FOR TYPE bool USING @am@ FAMILY bool_ops AS
    OPERATOR 1 <,
    OPERATOR 2 <=,
    OPERATOR 3 =,
    OPERATOR 4 >=,
    OPERATOR 5 >,
    FUNCTION 1 btboolcmp(bool, bool);
$ddl$, '@am@', quote_ident(am));
  END LOOP;
END
$ordered$;

-- ---------------------------------------------------------------------------
-- fbrtree_pm: the FBR-tree failure-atomic PM R-tree
-- ---------------------------------------------------------------------------

CREATE FUNCTION fbrtree_pm_handler(internal) RETURNS index_am_handler
AS 'MODULE_PATHNAME', 'fbrtree_pm_handler'
LANGUAGE C;

CREATE ACCESS METHOD fbrtree_pm TYPE INDEX HANDLER fbrtree_pm_handler;
COMMENT ON ACCESS METHOD fbrtree_pm IS 'R-tree whose nodes live in a persistent-memory pool (FBR-tree)';

CREATE FUNCTION fbrtree_pm_check(index regclass, heapallindexed boolean DEFAULT false)
RETURNS void
AS 'MODULE_PATHNAME', 'fbrtree_pm_check'
LANGUAGE C STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION fbrtree_pm_check(regclass, boolean) IS
  'verify an fbrtree_pm index; with heapallindexed, also that every heap tuple is indexed';
REVOKE ALL ON FUNCTION fbrtree_pm_check(regclass, boolean) FROM PUBLIC;

-- GiST's strategy numbers, so that these read like GiST's box_ops and point_ops
CREATE OPERATOR CLASS box_ops DEFAULT FOR TYPE box USING fbrtree_pm AS
    OPERATOR 1 << (box, box),
    OPERATOR 2 &< (box, box),
    OPERATOR 3 && (box, box),
    OPERATOR 4 &> (box, box),
    OPERATOR 5 >> (box, box),
    OPERATOR 6 ~= (box, box),
    OPERATOR 7 @> (box, box),
    OPERATOR 8 <@ (box, box),
    OPERATOR 9 &<| (box, box),
    OPERATOR 10 <<| (box, box),
    OPERATOR 11 |>> (box, box),
    OPERATOR 12 |&> (box, box),
    OPERATOR 15 <-> (box, point) FOR ORDER BY pg_catalog.float_ops;

CREATE OPERATOR CLASS point_ops DEFAULT FOR TYPE point USING fbrtree_pm AS
    OPERATOR 1 << (point, point),
    OPERATOR 5 >> (point, point),
    OPERATOR 6 ~= (point, point),
    OPERATOR 10 <<| (point, point),
    OPERATOR 11 |>> (point, point),
    OPERATOR 15 <-> (point, point) FOR ORDER BY pg_catalog.float_ops,
    OPERATOR 28 <@ (point, box),
    OPERATOR 29 <^ (point, point),
    OPERATOR 30 >^ (point, point);
