/*
 * nbtpm_key.c
 *	  Order-preserving 8-byte keys for the indexed types.
 *
 * Every integer-like type (int2, int4, int8, oid, date, time, timestamp,
 * timestamptz) maps to its int64 value with the sign bit flipped, so one
 * key space serves all integer widths and cross-type comparisons need no
 * conversion.  float4 and float8 map through the double value (float4 ->
 * float8 is exact) with the usual sign-magnitude flip, -0 folded into +0
 * and every NaN into one NaN above +Infinity, as PostgreSQL orders them.
 * bool maps to 0 and 1.  NULL is the key UINT64_MAX with the NULL flag in
 * the rest word, so NULLs sort after every value (btree's NULLS LAST).
 */
#include "nbtpm.h"

#include <math.h>

#include "access/stratnum.h"
#include "catalog/pg_type_d.h"
#include "fmgr.h"
#include "utils/date.h"
#include "utils/float.h"
#include "utils/lsyscache.h"
#include "utils/timestamp.h"

#define SIGN_FLIP	(UINT64_C(1) << 63)

typedef enum key_class
{
	KEY_NONE,
	KEY_INT,
	KEY_FLOAT,
	KEY_BOOL
} key_class;

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
		default:
			return KEY_NONE;
	}
}

bool
nbtpm_type_supported(Oid typid)
{
	return class_of(typid) != KEY_NONE;
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
		return UINT64_MAX - 1;	/* above +Infinity; UINT64_MAX is NULL's */
	if (v == 0)
		v = 0;					/* -0 sorts equal to +0 */
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
nbtpm_encode(Oid typid, Datum value)
{
	switch (class_of(typid))
	{
		case KEY_INT:
			return (uint64) int_value(typid, value) ^ SIGN_FLIP;
		case KEY_FLOAT:
			return encode_double(float_value(typid, value));
		case KEY_BOOL:
			return DatumGetBool(value) ? 1 : 0;
		case KEY_NONE:
			break;
	}
	elog(ERROR, "nbtree_pm: unsupported key type %u", typid);
	return 0;
}

Datum
nbtpm_decode(Oid typid, uint64 key)
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
	elog(ERROR, "nbtree_pm: unsupported key type %u", typid);
	return (Datum) 0;
}

/*
 * Narrow [*lo, *hi] (inclusive keys) by "column <strategy> arg".  Returns
 * false when no key can satisfy it.  arg's type is one the operator family
 * pairs with the column's type, so both encode into the same key space.
 */
bool
nbtpm_encode_bound(Oid coltype, Oid argtype, Datum arg, int strategy, uint64 *lo, uint64 *hi)
{
	uint64		k = nbtpm_encode(OidIsValid(argtype) ? argtype : coltype, arg);

	switch (strategy)
	{
		case BTLessStrategyNumber:
			if (k == 0)
				return false;
			k--;
			/* fall through */
		case BTLessEqualStrategyNumber:
			if (k < *hi)
				*hi = k;
			break;
		case BTEqualStrategyNumber:
			if (k > *lo)
				*lo = k;
			if (k < *hi)
				*hi = k;
			break;
		case BTGreaterStrategyNumber:
			if (k == UINT64_MAX)
				return false;
			k++;
			/* fall through */
		case BTGreaterEqualStrategyNumber:
			if (k > *lo)
				*lo = k;
			break;
		default:
			elog(ERROR, "nbtree_pm: unexpected strategy %d", strategy);
	}
	return *lo <= *hi;
}

/* Do values of both types encode into one key space (no conversion needed)? */
bool
nbtpm_same_key_space(Oid coltype, Oid argtype)
{
	if (!OidIsValid(argtype) || argtype == coltype)
		return true;
	if (class_of(coltype) == KEY_FLOAT && class_of(argtype) == KEY_FLOAT)
		return true;
	return (coltype == INT2OID || coltype == INT4OID || coltype == INT8OID) &&
		(argtype == INT2OID || argtype == INT4OID || argtype == INT8OID);
}

/* The keys that values of the type can have, inclusive. */
static void
key_domain(Oid typid, uint64 *lo, uint64 *hi)
{
	switch (typid)
	{
		case INT2OID:
			*lo = nbtpm_encode(INT8OID, Int64GetDatum(PG_INT16_MIN));
			*hi = nbtpm_encode(INT8OID, Int64GetDatum(PG_INT16_MAX));
			break;
		case INT4OID:
		case DATEOID:
			*lo = nbtpm_encode(INT8OID, Int64GetDatum(PG_INT32_MIN));
			*hi = nbtpm_encode(INT8OID, Int64GetDatum(PG_INT32_MAX));
			break;
		case OIDOID:
			*lo = nbtpm_encode(INT8OID, Int64GetDatum(0));
			*hi = nbtpm_encode(INT8OID, Int64GetDatum(PG_UINT32_MAX));
			break;
		case TIMEOID:
			*lo = nbtpm_encode(INT8OID, Int64GetDatum(0));
			*hi = nbtpm_encode(INT8OID, Int64GetDatum(USECS_PER_DAY));
			break;
		case BOOLOID:
			*lo = 0;
			*hi = 1;
			break;
		default:
			*lo = 0;
			*hi = UINT64_MAX - 1;
			break;
	}
}

/* The first key k in [lo, hi + 1) for which cmp(decode(k), arg) > limit. */
static uint64
first_key_above(FmgrInfo *cmp, Oid coltype, Datum arg, int limit, uint64 lo, uint64 hi)
{
	uint64		end = hi + 1;	/* hi < UINT64_MAX: NULL's key is never a value */

	while (lo < end)
	{
		uint64		mid = lo + (end - lo) / 2;
		int32		c = DatumGetInt32(FunctionCall2(cmp, nbtpm_decode(coltype, mid), arg));

		if (c > limit)
			end = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/*
 * Narrow [*lo, *hi] by "column <strategy> arg" when arg's type has another
 * key space (date against timestamp, timestamp against timestamptz): search
 * the column's key space with the operator family's cross-type comparison,
 * which is monotone because the family orders both types consistently.
 */
bool
nbtpm_search_bound(Oid opfamily, Oid coltype, Oid argtype, Datum arg, int strategy,
				   uint64 *lo, uint64 *hi)
{
	Oid			cmpproc = get_opfamily_proc(opfamily, coltype, argtype, 1);
	FmgrInfo	cmp;
	uint64		dlo,
				dhi,
				ge,
				gt;

	if (!OidIsValid(cmpproc))
		elog(ERROR, "nbtree_pm: no comparison function for types %u and %u", coltype, argtype);
	fmgr_info(cmpproc, &cmp);
	key_domain(coltype, &dlo, &dhi);
	ge = first_key_above(&cmp, coltype, arg, -1, dlo, dhi);	/* first with cmp >= 0 */
	gt = first_key_above(&cmp, coltype, arg, 0, dlo, dhi); /* first with cmp > 0 */
	switch (strategy)
	{
		case BTLessStrategyNumber:
			if (ge == dlo)
				return false;
			*hi = Min(*hi, ge - 1);
			break;
		case BTLessEqualStrategyNumber:
			if (gt == dlo)
				return false;
			*hi = Min(*hi, gt - 1);
			break;
		case BTEqualStrategyNumber:
			if (ge == gt)
				return false;
			*lo = Max(*lo, ge);
			*hi = Min(*hi, gt - 1);
			break;
		case BTGreaterEqualStrategyNumber:
			*lo = Max(*lo, ge);
			break;
		case BTGreaterStrategyNumber:
			*lo = Max(*lo, gt);
			break;
		default:
			elog(ERROR, "nbtree_pm: unexpected strategy %d", strategy);
	}
	return *lo <= *hi && *lo <= dhi;
}

uint64
nbtpm_rest(ItemPointer tid, bool isnull)
{
	return (isnull ? NBTPM_REST_NULL : 0) |
		((uint64) ItemPointerGetBlockNumberNoCheck(tid) << 16) |
		ItemPointerGetOffsetNumberNoCheck(tid);
}

void
nbtpm_rest_tid(uint64 rest, ItemPointer tid)
{
	ItemPointerSet(tid, (BlockNumber) ((rest >> 16) & 0xffffffff), (OffsetNumber) (rest & 0xffff));
}

nbt_skey
nbtpm_skey(Oid typid, Datum value, bool isnull, ItemPointer tid)
{
	nbt_skey	sk;

	sk.key = isnull ? NBTPM_NULL_KEY : nbtpm_encode(typid, value);
	sk.rest = nbtpm_rest(tid, isnull);
	return sk;
}
