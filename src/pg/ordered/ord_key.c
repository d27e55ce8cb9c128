/*
 * ord_key.c
 *	  Order-preserving 8-byte keys for the indexed types.
 *
 * Every integer-like type (int2, int4, int8, oid, date, time, timestamp,
 * timestamptz) maps to its int64 value with the sign bit flipped, so one
 * key space serves all integer widths and cross-type comparisons need no
 * conversion.  float4 and float8 map through the double value (float4 ->
 * float8 is exact) with the usual sign-magnitude flip, every NaN folded into
 * one NaN above +Infinity, as PostgreSQL orders them; -0 keeps its own key
 * just below +0's, so that index-only scans return it, and bounds treat the
 * two keys as one value.  bool maps to 0 and 1.  NULL is the key UINT64_MAX
 * with the NULL flag in the rest word, so NULLs sort after every value, also
 * after a value whose key is UINT64_MAX (int8's maximum, +infinity of the
 * timestamps); a scan presents them first or last as the index's options say.
 *
 * uuid, bytea and text (in the "C" collation) become byte strings whose
 * memcmp order is the type's: a 0x01 mark (so that no value's key reaches
 * the NULL key), then uuid's 16 bytes, or the bytes of a bytea or text with
 * each 0x00 written 0x00 0xFF and 0x00 0x00 at the end, which makes every
 * string self-delimiting (no value's string is a prefix of another's).  The
 * first 8 bytes are the key; a longer string's remainder goes to a record
 * (pm_key.h), the rest of a shorter one is zero.  Values decode from their
 * string, so index-only scans need nothing more.
 */
#include "ord.h"

#include <math.h>

#include "access/stratnum.h"
#include "catalog/pg_type_d.h"
#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/float.h"
#include "catalog/pg_collation_d.h"
#include "lib/stringinfo.h"
#include "utils/lsyscache.h"
#include "utils/pg_locale.h"
#include "utils/rel.h"
#include "utils/timestamp.h"
#include "utils/uuid.h"

#define SIGN_FLIP	(UINT64_C(1) << 63)

typedef enum key_class
{
	KEY_NONE,
	KEY_INT,
	KEY_FLOAT,
	KEY_BOOL,
	KEY_BYTES					/* a byte string: a key and a record */
} key_class;

#define BYTES_VALUE_MARK	0x01

static key_class
class_of(Oid typid)
{
	switch (typid)
	{
		case INT2OID:
		case INT4OID:
		case INT8OID:
		case OIDOID:
		case DATEOID:
		case TIMEOID:
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
			return KEY_INT;
		case FLOAT4OID:
		case FLOAT8OID:
			return KEY_FLOAT;
		case BOOLOID:
			return KEY_BOOL;
		case UUIDOID:
		case BYTEAOID:
		case TEXTOID:
			return KEY_BYTES;
		default:
			return KEY_NONE;
	}
}

bool
ord_type_supported(Oid typid)
{
	return class_of(typid) != KEY_NONE;
}

bool
ord_type_wide(Oid typid)
{
	return class_of(typid) == KEY_BYTES;
}

/* The order-preserving, self-delimiting string of a value (see the top). */
static void
value_bytes(Oid typid, Datum value, StringInfo buf)
{
	appendStringInfoCharMacro(buf, BYTES_VALUE_MARK);
	if (typid == UUIDOID)
		appendBinaryStringInfo(buf, (const char *) DatumGetUUIDP(value)->data, UUID_LEN);
	else
	{
		struct varlena *v = PG_DETOAST_DATUM_PACKED(value);
		const char *p = VARDATA_ANY(v);
		Size		len = VARSIZE_ANY_EXHDR(v);

		for (Size i = 0; i < len; i++)
		{
			appendStringInfoCharMacro(buf, p[i]);
			if (p[i] == '\0')
				appendStringInfoCharMacro(buf, (char) 0xFF);
		}
		appendStringInfoCharMacro(buf, '\0');
		appendStringInfoCharMacro(buf, '\0');
		if ((Pointer) v != DatumGetPointer(value))
			pfree(v);
	}
}

/*
 * The key of a string (its first 8 bytes) and rest; a longer string's
 * remainder in a record, palloc'd (rest: the record's own).  An entry's
 * record must fit one in the pool.
 */
static OrdKey
key_of_bytes(const uint8 *b, int len, uint64 rest, bool entry)
{
	OrdKey		k = {0, rest};
	pm_key_rec *r;

	for (int i = 0; i < 8; i++)
		k.key = k.key << 8 | (i < len ? b[i] : 0);
	if (len <= 8)
		return k;
	if (entry && len - 8 > ORD_WIDE_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("index row size %d exceeds the maximum %d of a pm_index key",
						len, ORD_WIDE_MAX + 8),
				 errhint("Values larger than about 64 kB cannot be indexed.  Consider an index "
						 "of an MD5 hash of the value, or use btree.")));
	r = palloc(sizeof(pm_key_rec) + len - 8);
	r->rest = rest;
	r->keylen = r->len = (uint32) (len - 8);
	memcpy(r->data, b + 8, len - 8);
	k.rest = PM_REST_WIDE | PM_REST_LOCAL | (uintptr_t) r;
	return k;
}

/* The key of a value of a byte-string type, with rest (an entry's if entry). */
static OrdKey
bytes_key(Oid typid, Datum value, uint64 rest, bool entry)
{
	StringInfoData buf;
	OrdKey		k;

	initStringInfo(&buf);
	value_bytes(typid, value, &buf);
	k = key_of_bytes((const uint8 *) buf.data, buf.len, rest, entry);
	pfree(buf.data);
	return k;
}

uint64
ord_entry_rest(const OrdKey *k)
{
	return pm_rest_is_wide(k->rest) ? pm_key_rec_of(NULL, k->rest)->rest : k->rest;
}

/* The string of an entry of a byte-string type: its key's 8 bytes, then its record's. */
static void
entry_bytes(const OrdKey *k, StringInfo buf)
{
	for (int i = 0; i < 8; i++)
		appendStringInfoCharMacro(buf, (char) (k->key >> (56 - 8 * i)));
	if (pm_rest_is_wide(k->rest))
	{
		const pm_key_rec *r = pm_key_rec_of(NULL, k->rest);

		appendBinaryStringInfo(buf, (const char *) r->data, r->keylen);
	}
}

/* The value of an entry of a byte-string type. */
static Datum
bytes_value(Oid typid, const OrdKey *k)
{
	StringInfoData buf;
	StringInfoData val;
	Datum		result;

	initStringInfo(&buf);
	entry_bytes(k, &buf);
	Assert(buf.len > 0 && buf.data[0] == BYTES_VALUE_MARK);
	if (typid == UUIDOID)
	{
		pg_uuid_t  *u = palloc(sizeof(pg_uuid_t));

		memcpy(u->data, buf.data + 1, UUID_LEN);
		pfree(buf.data);
		return UUIDPGetDatum(u);
	}
	initStringInfo(&val);
	appendStringInfoSpaces(&val, VARHDRSZ);
	for (int i = 1; i + 1 < buf.len; i++)
	{
		if (buf.data[i] == '\0')
		{
			if (buf.data[i + 1] == '\0')
				break;
			i++;			/* 0x00 0xFF: a zero byte */
			appendStringInfoCharMacro(&val, '\0');
		}
		else
			appendStringInfoCharMacro(&val, buf.data[i]);
	}
	SET_VARSIZE(val.data, val.len);
	result = PointerGetDatum(val.data);
	pfree(buf.data);
	return result;
}

Datum
ord_entry_value(Oid typid, const OrdKey *k)
{
	if (class_of(typid) == KEY_BYTES)
		return bytes_value(typid, k);
	return ord_decode(typid, k->key);
}

static int64
int_value(Oid typid, Datum d)
{
	switch (typid)
	{
		case INT2OID:
			return DatumGetInt16(d);
		case INT4OID:
			return DatumGetInt32(d);
		case OIDOID:
			return (int64) DatumGetObjectId(d);
		case DATEOID:
			return DatumGetDateADT(d);
		case TIMEOID:
			return DatumGetTimeADT(d);
		case TIMESTAMPOID:
			return DatumGetTimestamp(d);
		case TIMESTAMPTZOID:
			return DatumGetTimestampTz(d);
		default:
			return DatumGetInt64(d);
	}
}

static double
float_value(Oid typid, Datum d)
{
	return typid == FLOAT4OID ? (double) DatumGetFloat4(d) : DatumGetFloat8(d);
}

static uint64
encode_double(double v)
{
	uint64		bits;

	if (isnan(v))
		return UINT64_MAX - 1;	/* above +Infinity */
	memcpy(&bits, &v, sizeof(bits));
	return (bits & SIGN_FLIP) ? ~bits : bits | SIGN_FLIP;
}

static double
decode_double(uint64 key)
{
	uint64		bits;
	double		v;

	if (key == UINT64_MAX - 1)
		return get_float8_nan();
	bits = (key & SIGN_FLIP) ? key & ~SIGN_FLIP : ~key;
	memcpy(&v, &bits, sizeof(v));
	return v;
}

uint64
ord_encode(Oid typid, Datum value)
{
	switch (class_of(typid))
	{
		case KEY_INT:
			return (uint64) int_value(typid, value) ^ SIGN_FLIP;
		case KEY_FLOAT:
			return encode_double(float_value(typid, value));
		case KEY_BOOL:
			return DatumGetBool(value) ? 1 : 0;
		case KEY_BYTES:			/* not 8 bytes: ord_key_of */
		case KEY_NONE:
			break;
	}
	elog(ERROR, "pm_index: unsupported key type %u", typid);
	return 0;
}

Datum
ord_decode(Oid typid, uint64 key)
{
	int64		i = (int64) (key ^ SIGN_FLIP);

	switch (typid)
	{
		case INT2OID:
			return Int16GetDatum((int16) i);
		case INT4OID:
			return Int32GetDatum((int32) i);
		case INT8OID:
			return Int64GetDatum(i);
		case OIDOID:
			return ObjectIdGetDatum((Oid) i);
		case DATEOID:
			return DateADTGetDatum((DateADT) i);
		case TIMEOID:
			return TimeADTGetDatum((TimeADT) i);
		case TIMESTAMPOID:
			return TimestampGetDatum((Timestamp) i);
		case TIMESTAMPTZOID:
			return TimestampTzGetDatum((TimestampTz) i);
		case FLOAT4OID:
			return Float4GetDatum((float4) decode_double(key));
		case FLOAT8OID:
			return Float8GetDatum(decode_double(key));
		case BOOLOID:
			return BoolGetDatum(key != 0);
	}
	elog(ERROR, "pm_index: unsupported key type %u", typid);
	return (Datum) 0;
}

/*
 * The keys a column of the type can hold, as inclusive runs in key order:
 * the type's finite range and, for the datetime types, its infinities.  A
 * search for a bound probes only these: the cross-type comparison functions
 * are monotone over valid values, not over arbitrary bit patterns (a "date"
 * before 4713 BC overflows when converted to a timestamp).
 */
typedef struct KeyRun
{
	uint64		first;
	uint64		last;
} KeyRun;

static uint64
int_key(int64 v)
{
	return (uint64) v ^ SIGN_FLIP;
}

static int
key_runs(Oid typid, KeyRun *runs)
{
	switch (typid)
	{
		case INT2OID:
			runs[0] = (KeyRun) {int_key(PG_INT16_MIN), int_key(PG_INT16_MAX)};
			return 1;
		case INT4OID:
			runs[0] = (KeyRun) {int_key(PG_INT32_MIN), int_key(PG_INT32_MAX)};
			return 1;
		case OIDOID:
			runs[0] = (KeyRun) {int_key(0), int_key(PG_UINT32_MAX)};
			return 1;
		case TIMEOID:
			runs[0] = (KeyRun) {int_key(0), int_key(USECS_PER_DAY)};
			return 1;
		case DATEOID:
			runs[0] = (KeyRun) {int_key(DATEVAL_NOBEGIN), int_key(DATEVAL_NOBEGIN)};
			runs[1] = (KeyRun) {int_key(DATETIME_MIN_JULIAN - POSTGRES_EPOCH_JDATE),
			int_key(DATE_END_JULIAN - POSTGRES_EPOCH_JDATE - 1)};
			runs[2] = (KeyRun) {int_key(DATEVAL_NOEND), int_key(DATEVAL_NOEND)};
			return 3;
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
			runs[0] = (KeyRun) {int_key(DT_NOBEGIN), int_key(DT_NOBEGIN)};
			runs[1] = (KeyRun) {int_key(MIN_TIMESTAMP), int_key(END_TIMESTAMP - 1)};
			runs[2] = (KeyRun) {int_key(DT_NOEND), int_key(DT_NOEND)};
			return 3;
		case BOOLOID:
			runs[0] = (KeyRun) {0, 1};
			return 1;
		default:
			runs[0] = (KeyRun) {0, UINT64_MAX};
			return 1;
	}
}

/*
 * The first key of the column's type whose value compares above limit with
 * arg (cmp(value, arg) > limit), or the key just above the type's last key
 * when none does; false when that would be beyond UINT64_MAX.  The family's
 * comparison orders both types consistently, so within the valid keys the
 * answer is a single cut point: skip whole runs, then bisect one.
 */
static bool
first_key_above(FmgrInfo *cmp, Oid coltype, Datum arg, int limit, uint64 *key)
{
	KeyRun		runs[3];
	int			nruns = key_runs(coltype, runs);

	for (int r = 0; r < nruns; r++)
	{
		uint64		lo = runs[r].first,
					hi = runs[r].last;

		if (DatumGetInt32(FunctionCall2(cmp, ord_decode(coltype, hi), arg)) <= limit)
			continue;
		/* the answer is in [lo, hi]: hi qualifies */
		while (lo < hi)
		{
			uint64		mid = lo + (hi - lo) / 2;

			if (DatumGetInt32(FunctionCall2(cmp, ord_decode(coltype, mid), arg)) > limit)
				hi = mid;
			else
				lo = mid + 1;
		}
		*key = lo;
		return true;
	}
	*key = runs[nruns - 1].last + 1;
	return runs[nruns - 1].last != UINT64_MAX;
}

/* Do values of both types encode into one key space (no search needed)? */
static bool
same_key_space(Oid coltype, Oid argtype)
{
	if (!OidIsValid(argtype) || argtype == coltype)
		return true;
	if (class_of(coltype) == KEY_FLOAT && class_of(argtype) == KEY_FLOAT)
		return true;
	return (coltype == INT2OID || coltype == INT4OID || coltype == INT8OID) &&
		(argtype == INT2OID || argtype == INT4OID || argtype == INT8OID);
}

/*
 * Where arg falls among the column's keys: values of keys below ge are < arg,
 * values of keys below gt are <= arg (has_ge, has_gt false: of all keys).
 * The keys from ge up to gt are the values equal to arg: one key, none (a
 * timestamp that is no date), or two for a float zero (-0 and +0 are equal
 * and keep keys of their own, so that an index-only scan returns the stored
 * sign).
 */
void
ord_cut(Oid opfamily, Oid coltype, Oid argtype, Datum arg, OrdCut *cut)
{
	Oid			cmpproc;
	FmgrInfo	cmp;
	uint64		ge = 0;
	uint64		gt = 0;

	if (!OidIsValid(argtype))
		argtype = coltype;
	if (class_of(coltype) == KEY_BYTES)
	{
		/* their families have no cross-type members */
		Assert(argtype == coltype);
		cut->has_ge = cut->has_gt = true;
		cut->ge = bytes_key(coltype, arg, 0, false);
		cut->gt = bytes_key(coltype, arg, UINT64_MAX, false);
		return;
	}
	if (same_key_space(coltype, argtype))
	{
		uint64		k = ord_encode(argtype, arg);

		cut->has_ge = true;
		ge = k;
		if (class_of(argtype) == KEY_FLOAT && float_value(argtype, arg) == 0)
		{
			ge = encode_double(-0.0);
			k = encode_double(0.0);
		}
		cut->has_gt = k != UINT64_MAX;
		gt = k + 1;
	}
	else
	{
		cmpproc = get_opfamily_proc(opfamily, coltype, argtype, 1);	/* btree's ORDER proc */
		if (!OidIsValid(cmpproc))
			elog(ERROR, "pm_index: no comparison function for types %u and %u", coltype, argtype);
		fmgr_info(cmpproc, &cmp);
		cut->has_ge = first_key_above(&cmp, coltype, arg, -1, &ge);
		cut->has_gt = first_key_above(&cmp, coltype, arg, 0, &gt);
	}
	cut->ge = (OrdKey) {ge, 0};
	cut->gt = (OrdKey) {gt, 0};
}

/* lo becomes k if k is above it. */
void
ord_key_raise(OrdKey *lo, const OrdKey *k)
{
	if (pm_key_cmp(k, lo) > 0)
		*lo = *k;
}

/* hi becomes k if k is below it. */
void
ord_key_lower(OrdKey *hi, const OrdKey *k)
{
	if (pm_key_cmp(k, hi) < 0)
		*hi = *k;
}

/*
 * Lower hi to just below the cut point k; false when no entry is below k.
 * Below the NULL key, a value's rest is below the NULL flag, which keeps a
 * range's end clear of the NULLs; below any other key, all of its entries
 * count (wide ones too).
 */
static bool
lower_below(OrdKey *hi, const OrdKey *k)
{
	OrdKey		last;

	if (pm_key_is_min(k))
		return false;
	last = pm_key_pred(k);
	if (last.key == ORD_NULL_KEY && !pm_rest_is_wide(last.rest) && last.rest > ORD_REST_NONNULL_MAX)
		last.rest = ORD_REST_NONNULL_MAX;
	ord_key_lower(hi, &last);
	return true;
}

/*
 * Narrow the inclusive range of entries [*lo, *hi] by "column <strategy>
 * arg", where cut places arg.  Returns false when no entry can satisfy both.
 */
bool
ord_narrow(const OrdCut *cut, int strategy, OrdKey *lo, OrdKey *hi)
{
	switch (strategy)
	{
		case BTLessStrategyNumber:
			if (cut->has_ge && !lower_below(hi, &cut->ge))
				return false;
			break;
		case BTLessEqualStrategyNumber:
			if (cut->has_gt && !lower_below(hi, &cut->gt))
				return false;
			break;
		case BTEqualStrategyNumber:
			if (!cut->has_ge || (cut->has_gt && pm_key_cmp(&cut->gt, &cut->ge) == 0))
				return false;
			ord_key_raise(lo, &cut->ge);
			if (cut->has_gt && !lower_below(hi, &cut->gt))
				return false;
			break;
		case BTGreaterEqualStrategyNumber:
			if (!cut->has_ge)
				return false;
			ord_key_raise(lo, &cut->ge);
			break;
		case BTGreaterStrategyNumber:
			if (!cut->has_gt)
				return false;
			ord_key_raise(lo, &cut->gt);
			break;
		default:
			elog(ERROR, "pm_index: unexpected btree strategy %d", strategy);
	}
	return pm_key_cmp(lo, hi) <= 0;
}

uint64
ord_rest(ItemPointer tid, bool isnull)
{
	return (isnull ? ORD_REST_NULL : 0) |
		((uint64) ItemPointerGetBlockNumberNoCheck(tid) << 16) |
		ItemPointerGetOffsetNumberNoCheck(tid);
}

void
ord_rest_tid(uint64 rest, ItemPointer tid)
{
	ItemPointerSet(tid, (BlockNumber) ((rest >> 16) & 0xffffffff), (OffsetNumber) (rest & 0xffff));
}

OrdKey
ord_key_of(Oid typid, Datum value, bool isnull, ItemPointer tid)
{
	OrdKey		k;

	if (!isnull && class_of(typid) == KEY_BYTES)
		return bytes_key(typid, value, ord_rest(tid, false), true);
	k.key = isnull ? ORD_NULL_KEY : ord_encode(typid, value);
	k.rest = ord_rest(tid, isnull);
	return k;
}

/*
 * Whether two entries of a column of type typid hold equal values for a
 * unique index: equal keys, or -0 and +0; NULLs equal only when nulls_equal.
 */
bool
ord_entries_equal(Oid typid, const OrdKey *a, const OrdKey *b, bool nulls_equal)
{
	bool		anull = (ord_entry_rest(a) & ORD_REST_NULL) != 0;
	bool		bnull = (ord_entry_rest(b) & ORD_REST_NULL) != 0;

	if (anull || bnull)
		return anull && bnull && nulls_equal;
	if (class_of(typid) == KEY_BYTES)
	{
		const pm_key_rec *ra;
		const pm_key_rec *rb;

		if (a->key != b->key || pm_rest_is_wide(a->rest) != pm_rest_is_wide(b->rest))
			return false;
		if (!pm_rest_is_wide(a->rest))
			return true;
		ra = pm_key_rec_of(NULL, a->rest);
		rb = pm_key_rec_of(NULL, b->rest);
		return ra->keylen == rb->keylen && memcmp(ra->data, rb->data, ra->keylen) == 0;
	}
	return a->key == b->key ||
		(class_of(typid) == KEY_FLOAT && Min(a->key, b->key) == encode_double(-0.0) &&
		 Max(a->key, b->key) == encode_double(0.0));
}

/*
 * Refuse an index the access method (amname; wide_keys: it takes wide keys)
 * cannot order as btree would: a type without an encoding, a byte-string
 * type without wide keys, text in a collation other than "C".
 */
void
ord_check_column(Relation index, const char *amname, bool wide_keys)
{
	Oid			coltype = ord_column_type(index);
	Oid			collation = index->rd_indcollation[0];

	if (!ord_type_supported(coltype) || (ord_type_wide(coltype) && !wide_keys))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s does not support type %s", amname, format_type_be(coltype)),
				 ord_type_wide(coltype) ?
				 errdetail("Its keys are longer than the 8 bytes %s takes.", amname) : 0));
	if (coltype == TEXTOID && !lc_collate_is_c(collation))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s supports text only in the \"C\" collation", amname),
				 errdetail("The index's collation is \"%s\".", get_collation_name(collation)),
				 errhint("Create the index on (column COLLATE \"C\"): queries that compare in that "
						 "collation use it.  Or use btree.")));
}

/*
 * The type keys are encoded from: the operator class's input type, which is
 * the column's type or, for a domain, the type the domain is over.
 */
Oid
ord_column_type(Relation index)
{
	return index->rd_opcintype[0];
}
