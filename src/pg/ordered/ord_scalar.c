/*
 * ord_scalar.c
 *	  8-byte keys of the scalar types, and the rest word of an entry.
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
 * The other types are byte strings (ord_string.c).
 */
#include "ord_key.h"

#include "utils/date.h"
#include "utils/float.h"
#include "utils/rel.h"
#include "utils/timestamp.h"

key_class
ord_class_of(Oid typid)
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
		case NAMEOID:
		case BPCHAROID:
		case NUMERICOID:
		case INTERVALOID:
		case INETOID:
			return KEY_BYTES;
		default:
			return KEY_NONE;
	}
}

bool
ord_type_supported(Oid typid)
{
	return ord_class_of(typid) != KEY_NONE;
}

bool
ord_type_wide(Oid typid)
{
	return ord_class_of(typid) == KEY_BYTES;
}

/*
 * Whether an index's entries can be wide: a byte-string type, or INCLUDE
 * columns to keep (ord_column's type and natts, without its collation's
 * lookups).
 */
bool
ord_index_wide(Relation index)
{
	return ord_type_wide(index->rd_opcintype[0]) || IndexRelationGetNumberOfAttributes(index) > 1;
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

double
ord_float_value(Oid typid, Datum d)
{
	return typid == FLOAT4OID ? (double) DatumGetFloat4(d) : DatumGetFloat8(d);
}

uint64
ord_encode_double(double v)
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
	switch (ord_class_of(typid))
	{
		case KEY_INT:
			return (uint64) int_value(typid, value) ^ SIGN_FLIP;
		case KEY_FLOAT:
			return ord_encode_double(ord_float_value(typid, value));
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

uint64
ord_rest(ItemPointer tid, bool isnull)
{
	return (isnull ? ORD_REST_NULL : 0) | pmi_tid_pack(tid);
}
