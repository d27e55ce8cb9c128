/*
 * ord_multicolumn.c
 *	  Multicolumn keys: one string of per-column segments in the index's
 *	  order; and the entry a row makes, whatever its columns (ord_key_of).
 */
#include "ord_key.h"

#include <sys/socket.h>

#include "utils/inet.h"
#include "utils/uuid.h"

/*
 * Multicolumn keys.  An entry's string is one segment per key column, in
 * the index's order: a NULL is the byte SEGMENT_NULL_FIRST or
 * SEGMENT_NULL_LAST as the column's NULLS FIRST/LAST says, a value
 * SEGMENT_VALUE and its string (segment_of_value), every byte inverted for
 * a DESC column.  Strings of a type are never a prefix of one another, so neither
 * are segments, and memcmp of two entries' strings is the index's order
 * column by column; a value segment starts 0x02 (ASC) or 0xFD (DESC), so no
 * segment starts 0x00 or 0xFF and NULLs go first or last in either.  A
 * float zero has one segment (-0 is host bytes), so that one equality is
 * one segment.  The host bytes, when any column has some or the index has
 * INCLUDE columns: per key column a 4-byte length and its host bytes, then
 * the INCLUDE columns' values.  The rest's NULL flag says that a key
 * column is NULL.
 */
#define SEGMENT_NULL_FIRST	0x01
#define SEGMENT_VALUE		0x02
#define SEGMENT_VALUES_END	0x03	/* above every ASC value segment */
#define SEGMENT_NULL_LAST	0xFE
#define SEGMENT_AFTER		0xFF	/* above every segment that a string
									 * starts */

static void
invert_bytes(char *s, int len)
{
	for (int i = 0; i < len; i++)
		s[i] = (char) ~s[i];
}

/*
 * The bytes of an 8-byte type's value in a segment: as many as the type's
 * values need, so that a key's first 8 bytes hold more of the columns.
 */
static int
segment_width(Oid type)
{
	switch (type)
	{
		case BOOLOID:
			return 1;
		case INT2OID:
			return 2;
		case INT4OID:
		case DATEOID:
		case OIDOID:
			return 4;
		default:
			return 8;
	}
}

/*
 * Where key (ord_encode's, of a type narrower than 8 bytes) falls among the
 * segment numbers of segment_width bytes: -1 below the numbers, 1 above
 * them (a cross-type bound past the type's values), else 0 and the number
 * in *number, in the key's order.
 */
static int
segment_number(Oid type, uint64 key, uint64 *number)
{
	int			bits = 8 * segment_width(type);
	int64		v = type == BOOLOID ? (int64) key : (int64) (key ^ SIGN_FLIP);
	int64		bias = (type == BOOLOID || type == OIDOID) ? 0 : INT64CONST(1) << (bits - 1);

	if (v < -bias)
		return -1;
	if (v - ((INT64CONST(1) << bits) - 1) > -bias)
		return 1;
	*number = (uint64) (v + bias);
	return 0;
}

/* The key (ord_encode's) of segment number number of type. */
static uint64
segment_key(Oid type, uint64 number)
{
	int			bits = 8 * segment_width(type);

	if (type == BOOLOID)
		return number;
	if (type == OIDOID)
		return number ^ SIGN_FLIP;
	return (uint64) ((int64) number - (INT64CONST(1) << (bits - 1))) ^ SIGN_FLIP;
}

/* An 8-byte type's key as its (ascending) segment; in range of the type's values. */
static void
append_key_segment(Oid type, uint64 key, StringInfo buf)
{
	int			width = segment_width(type);
	uint64		number = key;

	appendStringInfoCharMacro(buf, SEGMENT_VALUE);
	if (width < 8 && segment_number(type, key, &number) != 0)
		elog(ERROR, "pm_index: key " UINT64_FORMAT " is not a value of type %u", key, type);
	for (int i = width - 1; i >= 0; i--)
		appendStringInfoCharMacro(buf, (char) (number >> (8 * i)));
}

/*
 * Whether a byte-string type's strings start with BYTES_VALUE_MARK, which
 * their segment's SEGMENT_VALUE then takes the place of.
 */
static bool
string_marked(Oid type)
{
	return type == UUIDOID || type == BYTEAOID || type == TEXTOID || type == NAMEOID ||
		type == BPCHAROID;
}

/*
 * The ascending segment of a value (not NULL) of type typid (column c's, or
 * one its operator family compares with it) into buf, its host bytes into
 * host: SEGMENT_VALUE, then an 8-byte type's key in segment_width bytes, a
 * byte-string type's ordering bytes (their leading mark dropped).
 */
static void
segment_of_value(const OrdColumn *c, Oid typid, Datum value, StringInfo buf, StringInfo host)
{
	if (ord_class_of(c->type) == KEY_BYTES)
	{
		StringInfoData str;
		int			keylen;
		int			skip = string_marked(c->type) ? 1 : 0;

		initStringInfo(&str);
		ord_value_string(c, typid, value, &str, &keylen);
		Assert(skip == 0 || str.data[0] == BYTES_VALUE_MARK);
		appendStringInfoCharMacro(buf, SEGMENT_VALUE);
		appendBinaryStringInfo(buf, str.data + skip, keylen - skip);
		appendBinaryStringInfo(host, str.data + keylen, str.len - keylen);
		pfree(str.data);
	}
	else
	{
		uint64		key = ord_encode(typid, value);

		if (ord_class_of(c->type) == KEY_FLOAT && key == ord_encode_double(-0.0))
		{
			key = ord_encode_double(0.0);
			appendStringInfoCharMacro(host, 1);
		}
		append_key_segment(c->type, key, buf);
	}
}

/* Key column c's segment of value (not NULL) into buf, its host bytes into host. */
static void
append_segment(const OrdColumn *c, Datum value, StringInfo buf, StringInfo host)
{
	int			start = buf->len;

	segment_of_value(c, c->type, value, buf, host);
	if (c->descending)
		invert_bytes(buf->data + start, buf->len - start);
}

static OrdKey
composite_key(const OrdColumn *col, const Datum *values, const bool *isnull, ItemPointer tid)
{
	StringInfoData buf;
	StringInfoData hosts;
	StringInfoData host;
	bool		any_null = false;
	bool		any_host = false;
	int			keylen;
	OrdKey		k;

	initStringInfo(&buf);
	initStringInfo(&hosts);
	initStringInfo(&host);
	for (int c = 0; c < col->nkeys; c++)
	{
		const OrdColumn *kc = &col->keys[c];

		resetStringInfo(&host);
		if (isnull[c])
		{
			appendStringInfoCharMacro(&buf, kc->nulls_first ? SEGMENT_NULL_FIRST : SEGMENT_NULL_LAST);
			any_null = true;
		}
		else
			append_segment(kc, values[c], &buf, &host);
		ord_append_uint32(&hosts, (uint32) host.len);
		appendBinaryStringInfo(&hosts, host.data, host.len);
		any_host |= host.len > 0;
	}
	keylen = buf.len;
	if (any_host || col->natts > col->nkeys)
	{
		appendBinaryStringInfo(&buf, hosts.data, hosts.len);
		ord_append_included(col, values, isnull, &buf);
	}
	k = ord_key_of_string((const uint8 *) buf.data, keylen, buf.len, ord_rest(tid, any_null), true);
	pfree(buf.data);
	pfree(hosts.data);
	pfree(host.data);
	return k;
}

/* The length of the string of a value of column c at s (its ordering bytes). */
static int
value_length(const OrdColumn *c, const char *s)
{
	if (ord_class_of(c->type) != KEY_BYTES)
		return segment_width(c->type);
	switch (c->type)
	{
		case UUIDOID:
			return 1 + UUID_LEN;
		case INTERVALOID:
			return INTERVAL_SPAN_BYTES;
		case INETOID:
			{
				int			size = (uint8) s[0] == PGSQL_AF_INET ? 4 : 16;

				return 2 + size + size - (uint8) s[1 + size] / 8;
			}
		case NUMERICOID:
			{
				uint8		class = (uint8) s[0];
				uint8		inv = class < NUMERIC_ZERO ? 0xFF : 0;
				int			i = 1;

				if (class == NUMERIC_NAN || class == NUMERIC_POS_INF ||
					class == NUMERIC_NEG_INF || class == NUMERIC_ZERO)
					return 1;
				if (class == NUMERIC_NEG_LARGE || class == NUMERIC_NEG_TINY ||
					class == NUMERIC_POS_LARGE || class == NUMERIC_POS_TINY)
					i += 4;
				while ((((uint8) s[i] ^ inv) & 1) != 0)
					i++;
				return i + 1;
			}
		default:				/* the string types and bytea */
			{
				int			at = ord_escaped_start(c, s);

				return ord_equal_strings_differ(c) ? at : at + ord_read_escaped(s + at, INT_MAX, NULL);
			}
	}
}

/* The value of column c of the ordering bytes s (keylen) and host bytes */
static Datum
segment_value(const OrdColumn *c, const char *s, int keylen, const char *host, int hostlen)
{
	StringInfoData buf;
	Datum		result;

	if (ord_class_of(c->type) != KEY_BYTES)
	{
		uint64		number = 0;

		for (int i = 0; i < keylen; i++)
			number = number << 8 | (uint8) s[i];
		if (hostlen > 0)
			return ord_decode(c->type, ord_encode_double(-0.0));
		return ord_decode(c->type, keylen < 8 ? segment_key(c->type, number) : number);
	}
	initStringInfo(&buf);
	appendBinaryStringInfo(&buf, s, keylen);
	appendBinaryStringInfo(&buf, host, hostlen);
	result = ord_string_value(c, buf.data, keylen, buf.len);
	pfree(buf.data);
	return result;
}

/*
 * The values of the first upto key columns of an entry of a multicolumn
 * index; *included: where the INCLUDE columns' values are (NULL: none).
 */
void
ord_composite_values(const OrdColumn *col, const OrdKey *k, int upto, Datum *values, bool *isnull,
					 const char **included)
{
	const pm_key_rec *r = pm_rest_is_wide(k->rest) ? pm_key_rec_of(NULL, k->rest) : NULL;
	const char *host = r && r->len > r->keylen ? (const char *) r->data + r->keylen : NULL;
	StringInfoData ord;
	char	   *plain = NULL;
	int			pos = 0;

	initStringInfo(&ord);
	ord_append_ordering(&ord, k);
	for (int c = 0; c < upto; c++)
	{
		const OrdColumn *kc = &col->keys[c];
		uint8		first = (uint8) ord.data[pos];
		int			hostlen = host ? (int) ord_read_uint32(host) : 0;

		isnull[c] = first == SEGMENT_NULL_FIRST || first == SEGMENT_NULL_LAST;
		if (isnull[c])
		{
			values[c] = (Datum) 0;
			pos++;
		}
		else
		{
			const char *s;
			int			len;

			/* the rest of the string as segment_of_value wrote it */
			plain = plain ? repalloc(plain, ord.len) : palloc(ord.len);
			memcpy(plain, ord.data + pos, ord.len - pos);
			if (kc->descending)
				invert_bytes(plain, ord.len - pos);
			if (string_marked(kc->type))
			{
				/* the string's mark in place of SEGMENT_VALUE */
				plain[0] = BYTES_VALUE_MARK;
				s = plain;
			}
			else
				s = plain + 1;
			len = value_length(kc, s);
			values[c] = segment_value(kc, s, len, host ? host + 4 : NULL, hostlen);
			pos += len + (s == plain ? 0 : 1);
		}
		if (host)
			host += 4 + hostlen;
	}
	*included = host;
	if (plain)
		pfree(plain);
	pfree(ord.data);
}

void
ord_entry_key_values(const OrdColumn *col, const OrdKey *k, int upto, Datum *values, bool *isnull)
{
	const char *included;

	ord_composite_values(col, k, upto, values, isnull, &included);
}

/*
 * Where arg cuts the values of key column c: a bound in the column's
 * ascending order, to be placed after an entry prefix (bound_bytes).
 */
typedef enum BoundKind
{
	BOUND_AT,					/* at the segment seg */
	BOUND_AFTER,				/* after seg and every string it starts */
	BOUND_VALUES_START,
	BOUND_VALUES_END
} BoundKind;

/* prefix, then the bytes of a bound of column c (seg: its value segment, ascending) */
static OrdKey
bound_key(const OrdColumn *c, StringInfo prefix, BoundKind kind, StringInfo seg)
{
	StringInfoData b;
	OrdKey		k;

	initStringInfo(&b);
	appendBinaryStringInfo(&b, prefix->data, prefix->len);
	if (kind == BOUND_AT || kind == BOUND_AFTER)
	{
		int			start = b.len;

		appendBinaryStringInfo(&b, seg->data, seg->len);
		if (c->descending)
			invert_bytes(b.data + start, seg->len);
		/* inverted, the strings seg starts sort before it: at and after swap */
		if ((kind == BOUND_AFTER) != c->descending)
			appendStringInfoCharMacro(&b, (char) SEGMENT_AFTER);
	}
	else if (kind == BOUND_VALUES_START)
		appendStringInfoCharMacro(&b, c->descending ? (char) SEGMENT_NULL_LAST : SEGMENT_VALUE);
	else
		appendStringInfoCharMacro(&b, c->descending ? (char) ~SEGMENT_VALUE : SEGMENT_VALUES_END);
	k = ord_key_of_string((const uint8 *) b.data, b.len, b.len, 0, false);
	pfree(b.data);
	return k;
}

/*
 * The entries whose string starts with prefix and then a value of key column
 * c: [*lo, *hi].
 */
void
ord_column_values(const OrdColumn *col, int c, StringInfo prefix, OrdKey *lo, OrdKey *hi)
{
	const OrdColumn *kc = &col->keys[c];
	OrdKey		end;

	*lo = bound_key(kc, prefix, kc->descending ? BOUND_VALUES_END : BOUND_VALUES_START, NULL);
	end = bound_key(kc, prefix, kc->descending ? BOUND_VALUES_START : BOUND_VALUES_END, NULL);
	*hi = pm_key_pred(&end);
}

/* Append key column c's NULL segment to prefix. */
void
ord_column_null(const OrdColumn *col, int c, StringInfo prefix)
{
	appendStringInfoCharMacro(prefix, col->keys[c].nulls_first ? SEGMENT_NULL_FIRST :
							  (char) SEGMENT_NULL_LAST);
}

/* The entries whose string starts with prefix: [*lo, *hi]. */
void
ord_prefix_range(StringInfo prefix, OrdKey *lo, OrdKey *hi)
{
	OrdKey		end;

	*lo = ord_key_of_string((const uint8 *) prefix->data, prefix->len, prefix->len, 0, false);
	appendStringInfoCharMacro(prefix, (char) SEGMENT_AFTER);
	end = ord_key_of_string((const uint8 *) prefix->data, prefix->len, prefix->len, 0, false);
	prefix->data[--prefix->len] = '\0';
	*hi = pm_key_pred(&end);
}

/*
 * A cut point of ord_cut's (has, key) in column c's ascending segments: at
 * the segment of key, or where the type's values start or end when key is
 * past them (or there is none: every value is below the argument).
 */
static BoundKind
key_bound(Oid type, bool has, uint64 key, StringInfo seg)
{
	uint64		number;

	if (!has)
		return BOUND_VALUES_END;
	if (segment_width(type) < 8)
	{
		int			where = segment_number(type, key, &number);

		if (where != 0)
			return where < 0 ? BOUND_VALUES_START : BOUND_VALUES_END;
	}
	append_key_segment(type, key, seg);
	return BOUND_AT;
}

/*
 * Where arg (of argtype, which column c's operator family compares with its
 * type) cuts the entries that start with prefix and then a value of column
 * c, as ord_cut says for one column, in the entries' order: for a DESC
 * column, values below ge are > arg and below gt >= arg (the caller
 * commutes its strategy).  *single: the segment of the values equal to arg
 * when they have one (else empty).
 */
void
ord_column_cut(const OrdColumn *col, int c, StringInfo prefix, Oid argtype, Datum arg,
			   OrdCut *cut, StringInfo single)
{
	const OrdColumn *kc = &col->keys[c];
	StringInfoData ge;
	StringInfoData gt;
	BoundKind	gekind;
	BoundKind	gtkind;

	initStringInfo(&ge);
	initStringInfo(&gt);
	resetStringInfo(single);
	if (ord_class_of(kc->type) == KEY_BYTES)
	{
		StringInfoData host;

		initStringInfo(&host);
		segment_of_value(kc, OidIsValid(argtype) ? argtype : kc->type, arg, &ge, &host);
		pfree(host.data);
		gekind = BOUND_AT;
		gtkind = BOUND_AFTER;
		appendBinaryStringInfo(&gt, ge.data, ge.len);
		appendBinaryStringInfo(single, ge.data, ge.len);
	}
	else
	{
		OrdCut		one;

		ord_cut(kc->opfamily, kc, argtype, arg, &one);
		if (ord_class_of(kc->type) == KEY_FLOAT && one.ge.key == ord_encode_double(-0.0))
			one.ge.key = ord_encode_double(0.0);	/* -0 has +0's segment */
		gekind = key_bound(kc->type, one.has_ge, one.ge.key, &ge);
		gtkind = key_bound(kc->type, one.has_gt, one.gt.key, &gt);
		if (gekind == BOUND_AT &&
			(one.has_gt ? one.gt.key == one.ge.key + 1 : one.ge.key == UINT64_MAX))
			appendBinaryStringInfo(single, ge.data, ge.len);
	}
	if (single->len > 0 && kc->descending)
		invert_bytes(single->data, single->len);
	cut->has_ge = cut->has_gt = true;
	cut->ge = bound_key(kc, prefix, kc->descending ? gtkind : gekind, kc->descending ? &gt : &ge);
	cut->gt = bound_key(kc, prefix, kc->descending ? gekind : gtkind, kc->descending ? &ge : &gt);
	pfree(ge.data);
	pfree(gt.data);
}

/*
 * The entries of a multicolumn index equal to entry k in every key column
 * (its ordering bytes): [*lo, *hi].
 */
void
ord_equal_range(const OrdKey *k, OrdKey *lo, OrdKey *hi)
{
	StringInfoData ord;

	initStringInfo(&ord);
	ord_append_ordering(&ord, k);
	*lo = ord_key_of_string((const uint8 *) ord.data, ord.len, ord.len, 0, false);
	*hi = ord_key_of_string((const uint8 *) ord.data, ord.len, ord.len, UINT64_MAX, false);
	pfree(ord.data);
}

/*
 * The entry of a row (tid) whose index attributes are values, isnull: the
 * key columns', then the INCLUDE columns'.
 */
OrdKey
ord_key_of(const OrdColumn *col, const Datum *values, const bool *isnull, ItemPointer tid)
{
	OrdKey		k;

	if (col->nkeys > 1)
		k = composite_key(col, values, isnull, tid);
	else if (col->natts > 1)
		k = ord_included_key(col, values, isnull, ord_rest(tid, isnull[0]));
	else if (!isnull[0] && ord_class_of(col->type) == KEY_BYTES)
		k = ord_bytes_key(col, col->type, values[0], ord_rest(tid, false), true);
	else
	{
		k.key = isnull[0] ? ORD_NULL_KEY : ord_encode(col->type, values[0]);
		k.rest = ord_rest(tid, isnull[0]);
	}
	/* a structure whose records are shorter than ord_key_of_string's limit */
	if (pm_rest_is_wide(k.rest) && (int) pm_key_rec_of(NULL, k.rest)->len > col->record_max)
		ord_key_too_long(pm_key_rec_of(NULL, k.rest)->len + 8, col->record_max + 8,
						 psprintf("an %s", col->amname));
	return k;
}

/*
 * Whether two entries of index col hold equal values for a unique index:
 * equal keys and ordering bytes, or -0 and +0; NULLs equal only when
 * nulls_equal.
 */
bool
ord_entries_equal(const OrdColumn *col, const OrdKey *a, const OrdKey *b, bool nulls_equal)
{
	bool		anull = (ord_entry_rest(a) & ORD_REST_NULL) != 0;
	bool		bnull = (ord_entry_rest(b) & ORD_REST_NULL) != 0;

	/*
	 * a multicolumn entry with a NULL: equal NULLs, and the other columns'
	 * values
	 */
	if (anull || bnull)
	{
		if (!(anull && bnull && nulls_equal))
			return false;
		if (col->nkeys == 1)
			return true;
	}
	if (ord_class_of(col->type) == KEY_BYTES || col->nkeys > 1)
	{
		/* a narrow entry, or a record's host bytes, add no ordering bytes */
		const pm_key_rec *ra = pm_rest_is_wide(a->rest) ? pm_key_rec_of(NULL, a->rest) : NULL;
		const pm_key_rec *rb = pm_rest_is_wide(b->rest) ? pm_key_rec_of(NULL, b->rest) : NULL;
		uint32		alen = ra ? ra->keylen : 0;
		uint32		blen = rb ? rb->keylen : 0;

		return a->key == b->key && alen == blen && (alen == 0 || memcmp(ra->data, rb->data, alen) == 0);
	}
	return a->key == b->key ||
		(ord_class_of(col->type) == KEY_FLOAT && Min(a->key, b->key) == ord_encode_double(-0.0) &&
		 Max(a->key, b->key) == ord_encode_double(0.0));
}
