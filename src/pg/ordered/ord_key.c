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
 * The other types (uuid, bytea, text, varchar, name, char(n), numeric,
 * interval, inet and cidr) become byte strings whose memcmp order is
 * btree's, and of which none is a prefix of another: uuid, a 0x01 mark and
 * its 16 bytes; bytea and the string types in the "C" collation, the mark,
 * their bytes with each 0x00 written 0x00 0xFF, and 0x00 0x00 at the end
 * (text and name share this space, as their cross-type operators need);
 * strings in ICU collations lead with their sort key, strings in libc
 * collations other than "C" order by the collation's comparison function
 * (append_string);
 * numeric, interval and inet as their functions below say.  No string starts with 0xFF, so no
 * value's key reaches the NULL key.  The first 8 bytes are the key; a longer
 * string's remainder goes to a record (pm_key.h), the rest of a shorter one
 * is zero.  Values equal to btree but not identical (numeric's 1.0 and
 * 1.00, interval's '1 mon' and '30 days', char(n)'s trailing spaces) have
 * one string; what tells them apart is host bytes in the record, left out
 * when the value has its column's usual form.  Values decode from their
 * string and host bytes, so index-only scans need nothing more.  An index
 * with INCLUDE columns keeps their values as host bytes too, after the key
 * column's (included_key).  An index of several key columns has one string
 * of per-column segments in the index's order (composite_key).
 */
#include "ord.h"

#include <locale.h>
#include <math.h>
#include <sys/socket.h>

#include "access/detoast.h"
#include "access/stratnum.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_index.h"
#include "catalog/pg_type_d.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "mb/pg_wchar.h"
#include "port/pg_bswap.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/datum.h"
#include "utils/float.h"
#include "utils/fmgroids.h"
#include "utils/inet.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/pg_locale.h"
#include "utils/rel.h"
#include "utils/ruleutils.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"
#include "utils/uuid.h"

static Datum ord_decode(Oid typid, uint64 key);

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
	return class_of(typid) != KEY_NONE;
}

static bool
ord_type_wide(Oid typid)
{
	return class_of(typid) == KEY_BYTES;
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

/* The mark, the bytes of s with each 0x00 as 0x00 0xFF, and the end 0x00 0x00. */
static void
append_escaped(StringInfo buf, const char *s, Size len)
{
	appendStringInfoCharMacro(buf, BYTES_VALUE_MARK);
	for (Size i = 0; i < len; i++)
	{
		appendStringInfoCharMacro(buf, s[i]);
		if (s[i] == '\0')
			appendStringInfoCharMacro(buf, (char) 0xFF);
	}
	appendStringInfoCharMacro(buf, '\0');
	appendStringInfoCharMacro(buf, '\0');
}

/*
 * The bytes append_escaped wrote at s, into out (NULL: only their length);
 * returns how many it read.
 */
static int
read_escaped(const char *s, int len, StringInfo out)
{
	Assert(len > 0 && s[0] == BYTES_VALUE_MARK);
	for (int i = 1; i + 1 < len; i++)
	{
		if (s[i] != '\0')
		{
			if (out)
				appendStringInfoCharMacro(out, s[i]);
		}
		else if (s[i + 1] == '\0')
			return i + 2;
		else
		{
			if (out)
				appendStringInfoCharMacro(out, '\0');	/* 0x00 0xFF */
			i++;
		}
	}
	elog(ERROR, "pm_index: a key's bytes lack their end");
	return 0;
}

static void
append_uint32(StringInfo buf, uint32 v)
{
	uint32		be = pg_hton32(v);

	appendBinaryStringInfo(buf, (const char *) &be, sizeof(be));
}

static void
append_uint64(StringInfo buf, uint64 v)
{
	uint64		be = pg_hton64(v);

	appendBinaryStringInfo(buf, (const char *) &be, sizeof(be));
}

static uint32
read_uint32(const char *s)
{
	uint32		be;

	memcpy(&be, s, sizeof(be));
	return pg_ntoh32(be);
}

/*
 * numeric: a class byte, then for a number other than zero its exponent
 * and mantissa in base 100 (0.M x 100^E, M's first digit not zero, no
 * trailing zero digit).  The class byte orders -Infinity, negative numbers
 * by exponent, zero, positive numbers by exponent, +Infinity and NaN; it
 * holds an exponent within NUMERIC_SMALL_E, others follow it in 4 bytes.
 * Each mantissa digit d is the byte 2d+1, the last 2d, so that a mantissa
 * is never a prefix of another.  A negative number's exponent bytes and
 * mantissa are inverted.  Equal numbers have one string: the display scale
 * (1.0 and 1.00) is host bytes, kept when it differs from the column's
 * usual one.
 */
#define NUMERIC_NEG_INF		0x02
#define NUMERIC_NEG_LARGE	0x03	/* exponent above NUMERIC_SMALL_E */
#define NUMERIC_NEG_SMALL	0x2C	/* minus the exponent */
#define NUMERIC_NEG_TINY	0x55	/* exponent below -NUMERIC_SMALL_E */
#define NUMERIC_ZERO		0x56
#define NUMERIC_POS_TINY	0x57
#define NUMERIC_POS_SMALL	0x80	/* plus the exponent */
#define NUMERIC_POS_LARGE	0xA9
#define NUMERIC_POS_INF		0xAA
#define NUMERIC_NAN			0xAB
#define NUMERIC_SMALL_E		40

/*
 * The display scale an entry of a numeric need not keep: the column's
 * scale, or without one the number of fraction digits up to the last
 * nonzero one (significant).
 */
static int
numeric_usual_dscale(int32 typmod, int significant)
{
	if (typmod >= (int32) VARHDRSZ)
	{
		/* numeric(p, s), s of 11 bits with its sign (numeric.c) */
		int			scale = ((((typmod - VARHDRSZ) & 0x7ff) ^ 1024) - 1024);

		return Max(scale, 0);
	}
	return significant;
}

static void
numeric_string(Datum value, int32 typmod, StringInfo buf, int *keylen)
{
	char	   *text = DatumGetCString(DirectFunctionCall1(numeric_out, value));
	const char *p = text;
	bool		negative = false;
	char	   *digits = palloc(strlen(text) + 2);
	int			ndigits = 0;
	int			point;
	int			dscale = 0;
	int			first;
	int			end;
	int			significant;

	if (strcmp(text, "NaN") == 0 || strcmp(text, "Infinity") == 0 || strcmp(text, "-Infinity") == 0)
	{
		appendStringInfoCharMacro(buf, text[0] == 'N' ? NUMERIC_NAN :
								  text[0] == 'I' ? NUMERIC_POS_INF : NUMERIC_NEG_INF);
		*keylen = buf->len;
		return;
	}
	if (*p == '-')
	{
		negative = true;
		p++;
	}
	/* a zero first, for an odd exponent of ten (see below) */
	digits[ndigits++] = 0;
	for (; *p && *p != '.'; p++)
		digits[ndigits++] = *p - '0';
	point = ndigits;
	if (*p == '.')
		for (p++; *p; p++, dscale++)
			digits[ndigits++] = *p - '0';
	for (first = 1; first < ndigits && digits[first] == 0; first++);
	for (end = ndigits; end > first && digits[end - 1] == 0; end--);
	significant = first == end ? 0 : Max(end - point, 0);
	if (first == end)
		appendStringInfoCharMacro(buf, NUMERIC_ZERO);
	else
	{
		uint8		inv = negative ? 0xFF : 0;
		int			exponent;

		/* 0.digits[first..] x 10^(point - first), started at an even power of ten */
		if ((point - first) % 2 != 0)
			first--;
		exponent = (point - first) / 2;
		if (exponent > NUMERIC_SMALL_E || exponent < -NUMERIC_SMALL_E)
		{
			bool		large = exponent > 0;

			appendStringInfoCharMacro(buf, negative ? (large ? NUMERIC_NEG_LARGE : NUMERIC_NEG_TINY) :
									  (large ? NUMERIC_POS_LARGE : NUMERIC_POS_TINY));
			append_uint32(buf, ((uint32) exponent + UINT32_C(0x80000000)) ^ (negative ? UINT32_MAX : 0));
		}
		else
			appendStringInfoCharMacro(buf, negative ? NUMERIC_NEG_SMALL - exponent :
									  NUMERIC_POS_SMALL + exponent);
		for (int i = first; i < end; i += 2)
		{
			int			d = digits[i] * 10 + (i + 1 < end ? digits[i + 1] : 0);

			appendStringInfoCharMacro(buf, (char) ((2 * d + (i + 2 < end ? 1 : 0)) ^ inv));
		}
	}
	*keylen = buf->len;
	if (dscale != numeric_usual_dscale(typmod, significant))
		append_uint32(buf, (uint32) dscale);
	pfree(digits);
	pfree(text);
}

static Datum
numeric_value(const char *s, int keylen, int len, int32 typmod)
{
	uint8		class = (uint8) s[0];
	StringInfoData digits;
	StringInfoData text;
	int			exponent = 0;
	int			point;
	int			significant;
	int			dscale;
	int			i = 1;
	uint8		inv;
	Datum		result;

	if (class == NUMERIC_NAN || class == NUMERIC_POS_INF || class == NUMERIC_NEG_INF)
		return DirectFunctionCall3(numeric_in, CStringGetDatum(class == NUMERIC_NAN ? "NaN" :
															   class == NUMERIC_POS_INF ? "Infinity" :
															   "-Infinity"),
								   ObjectIdGetDatum(InvalidOid), Int32GetDatum(-1));
	initStringInfo(&digits);
	inv = class < NUMERIC_ZERO ? 0xFF : 0;
	if (class == NUMERIC_NEG_LARGE || class == NUMERIC_NEG_TINY ||
		class == NUMERIC_POS_LARGE || class == NUMERIC_POS_TINY)
	{
		exponent = (int32) ((read_uint32(s + 1) ^ (inv ? UINT32_MAX : 0)) - UINT32_C(0x80000000));
		i += 4;
	}
	else if (class != NUMERIC_ZERO)
		exponent = inv ? NUMERIC_NEG_SMALL - class : class - NUMERIC_POS_SMALL;
	/* the mantissa ends at an even byte (short strings' keys are padded) */
	for (bool last = class == NUMERIC_ZERO; !last; i++)
	{
		int			b = (uint8) s[i] ^ inv;

		appendStringInfoCharMacro(&digits, '0' + b / 2 / 10);
		appendStringInfoCharMacro(&digits, '0' + b / 2 % 10);
		last = b % 2 == 0;
	}
	point = 2 * exponent;
	for (significant = digits.len; significant > 0 && digits.data[significant - 1] == '0'; significant--);
	dscale = keylen < len ? (int) read_uint32(s + keylen) :
		numeric_usual_dscale(typmod, Max(significant - point, 0));

	/* the digits with the point at point, dscale digits after it */
	initStringInfo(&text);
	if (inv)
		appendStringInfoCharMacro(&text, '-');
	if (point <= 0)
		appendStringInfoCharMacro(&text, '0');
	for (int d = 0; d < point; d++)
		appendStringInfoCharMacro(&text, d < digits.len ? digits.data[d] : '0');
	if (dscale > 0)
		appendStringInfoCharMacro(&text, '.');
	for (int d = 0; d < dscale; d++)
	{
		int			at = point + d;

		appendStringInfoCharMacro(&text, at >= 0 && at < digits.len ? digits.data[at] : '0');
	}
	result = DirectFunctionCall3(numeric_in, CStringGetDatum(text.data),
								 ObjectIdGetDatum(InvalidOid), Int32GetDatum(-1));
	pfree(digits.data);
	pfree(text.data);
	return result;
}

/*
 * interval: btree orders intervals by their span in microseconds, a month
 * counting 30 days; the span is 80 bits (it stays below 2^75), sign bit
 * flipped.  Intervals of one span ('1 mon' and '30 days') have one string;
 * the fields are host bytes (months and days), kept unless days and the
 * time within a day are the span's split.
 */
#define INTERVAL_SPAN_BYTES	10

static int128
interval_span(const Interval *iv)
{
	return ((int128) iv->month * 30 + iv->day) * USECS_PER_DAY + iv->time;
}

static void
interval_string(Datum value, StringInfo buf, int *keylen)
{
	Interval   *iv = DatumGetIntervalP(value);
	int128		span = interval_span(iv);
	uint128		biased = (uint128) span + ((uint128) 1 << (8 * INTERVAL_SPAN_BYTES - 1));

	for (int i = INTERVAL_SPAN_BYTES - 1; i >= 0; i--)
		appendStringInfoCharMacro(buf, (char) (biased >> (8 * i)));
	*keylen = buf->len;
	if (iv->month != 0 || iv->day != span / USECS_PER_DAY || iv->time != span % USECS_PER_DAY)
	{
		append_uint32(buf, (uint32) iv->month);
		append_uint32(buf, (uint32) iv->day);
	}
}

static Datum
interval_value(const char *s, int keylen, int len)
{
	Interval   *iv = palloc(sizeof(Interval));
	uint128		biased = 0;
	int128		span;

	for (int i = 0; i < INTERVAL_SPAN_BYTES; i++)
		biased = biased << 8 | (uint8) s[i];
	span = (int128) (biased - ((uint128) 1 << (8 * INTERVAL_SPAN_BYTES - 1)));
	if (keylen < len)
	{
		iv->month = (int32) read_uint32(s + keylen);
		iv->day = (int32) read_uint32(s + keylen + 4);
	}
	else
	{
		iv->month = 0;
		iv->day = (int32) (span / USECS_PER_DAY);
	}
	iv->time = (int64) (span - ((int128) iv->month * 30 + iv->day) * USECS_PER_DAY);
	return IntervalPGetDatum(iv);
}

/*
 * inet and cidr, in btree's order (network_cmp): the family, the address
 * with the bits past the netmask cleared, the netmask length, then the
 * address's bytes from the one the netmask ends in (equal network bits in
 * that byte, so these order as the whole addresses).
 */
static void
inet_string(Datum value, StringInfo buf)
{
	inet	   *ip = DatumGetInetPP(value);
	int			bits = ip_bits(ip);
	int			size = ip_addrsize(ip);
	const unsigned char *addr = ip_addr(ip);

	appendStringInfoCharMacro(buf, (char) ip_family(ip));
	for (int i = 0; i < size; i++)
	{
		int			keep = Min(Max(bits - 8 * i, 0), 8);

		appendStringInfoCharMacro(buf, (char) (keep == 0 ? 0 : addr[i] & (0xFF << (8 - keep))));
	}
	appendStringInfoCharMacro(buf, (char) bits);
	appendBinaryStringInfo(buf, (const char *) addr + bits / 8, size - bits / 8);
}

static Datum
inet_value(const char *s)
{
	inet	   *ip = palloc0(sizeof(inet));
	int			size;
	int			bits;

	ip_family(ip) = (unsigned char) s[0];
	size = ip_addrsize(ip);
	bits = (uint8) s[1 + size];
	ip_bits(ip) = bits;
	memcpy(ip_addr(ip), s + 1, size);
	memcpy(ip_addr(ip) + bits / 8, s + 2 + size, size - bits / 8);
	SET_INET_VARSIZE(ip);
	return InetPGetDatum(ip);
}

/*
 * Strings in a libc collation other than "C".  glibc's strxfrm() disagrees
 * with its strcoll() for some strings (combining accents beside
 * punctuation, ß, ...), and PostgreSQL compares with strcoll(), so no sort
 * key can stand in for the collation: such a string's key is the same 8
 * bytes for every string (LIBC_STRING_HEAD: the mark, zeros, and the mark
 * of the escaped bytes that follow), and its record orders by the
 * collation's comparison itself, as varstr_cmp() does: strcoll_l(), then
 * the bytes (libc collations are deterministic).  The pool names the
 * locale (ord_format_param), so every process that opens it, the startup
 * process replaying WAL too, orders its records alike (ord_order_of_format).
 */
#define LIBC_STRING_HEAD	7	/* bytes before the escaped string: the mark and zeros */
#define ORD_FORMAT_LIBC		'L' /* a format parameter: 'L', the locale's name, 0x00 */

typedef struct LibcOrder
{
	pm_key_order order;			/* first: the structures see this */
	locale_t	locale;
	char		name[NAMEDATALEN];
} LibcOrder;

/*
 * The ordering bytes of two strings of a libc collation: each its bytes and
 * the end 0x00 0x00 (append_escaped's; a string of a libc collation holds no
 * 0x00).  A record whose bytes lack their end is compared by its bytes: it
 * is damaged, which the verifier reports, and strcoll_l must not read past
 * it.
 */
static int
libc_cmp(const pm_key_order *order, const uint8_t *a, uint32_t alen, const uint8_t *b,
		 uint32_t blen)
{
	int			c;

	if (alen == blen && memcmp(a, b, alen) == 0)
		return 0;
	if (alen == 0 || blen == 0 || a[alen - 1] != '\0' || b[blen - 1] != '\0')
	{
		c = memcmp(a, b, Min(alen, blen));
		return c != 0 ? c : (alen > blen) - (alen < blen);
	}
	c = strcoll_l((const char *) a, (const char *) b, ((const LibcOrder *) order)->locale);
	return c != 0 ? c : strcmp((const char *) a, (const char *) b);
}

/* The order of libc locale name, made once per process (ERROR if this system lacks the locale). */
static const pm_key_order *
libc_order(const char *name)
{
	static LibcOrder *orders = NULL;
	static int	norders = 0;
	LibcOrder  *o;

	for (int i = 0; i < norders; i++)
		if (strcmp(orders[i].name, name) == 0)
			return &orders[i].order;
	if (strlen(name) >= NAMEDATALEN)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("pm_index does not support the locale name \"%s\": it is longer than %d bytes",
						name, NAMEDATALEN - 1)));
	orders = orders == NULL ? MemoryContextAlloc(TopMemoryContext, sizeof(LibcOrder)) :
		repalloc(orders, sizeof(LibcOrder) * (norders + 1));
	o = &orders[norders];
	o->locale = newlocale(LC_COLLATE_MASK, name, (locale_t) 0);
	if (o->locale == (locale_t) 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("could not create locale \"%s\": %m", name),
				 errdetail("An index of pm_index orders strings in this locale."),
				 errhint("Install the locale on this system (on Debian: localedef or locales-all).")));
	o->order.cmp = libc_cmp;
	strlcpy(o->name, name, NAMEDATALEN);
	norders++;
	return &o->order;
}

/* Whether col's strings order by a libc collation's comparison (see above). */
static bool
by_libc(const OrdColumn *col)
{
	return !col->by_bytes && (col->locale == NULL || col->locale->provider == COLLPROVIDER_LIBC);
}

/* The locale name of a libc collation: the database's for the default collation. */
static char *
libc_locale_name(Oid collation)
{
	HeapTuple	tp;
	Datum		datum;
	bool		isnull;
	char	   *name;

	if (collation == DEFAULT_COLLATION_OID)
		return pstrdup(setlocale(LC_COLLATE, NULL));
	tp = SearchSysCache1(COLLOID, ObjectIdGetDatum(collation));
	if (!HeapTupleIsValid(tp))
		elog(ERROR, "cache lookup failed for collation %u", collation);
	datum = SysCacheGetAttr(COLLOID, tp, Anum_pg_collation_collcollate, &isnull);
	if (isnull)
		elog(ERROR, "collation %u has no collcollate", collation);
	name = TextDatumGetCString(datum);
	ReleaseSysCache(tp);
	return name;
}

/*
 * The order of a libc collation's strings, looked up once per process and
 * collation.
 */
static const pm_key_order *
libc_order_of_collation(Oid collation)
{
	static Oid *collations = NULL;
	static const pm_key_order **orders = NULL;
	static int	n = 0;
	const pm_key_order *order;
	char	   *name;

	for (int i = 0; i < n; i++)
		if (collations[i] == collation)
			return orders[i];
	name = libc_locale_name(collation);
	order = libc_order(name);
	pfree(name);
	collations = collations == NULL ? MemoryContextAlloc(TopMemoryContext, sizeof(Oid)) :
		repalloc(collations, sizeof(Oid) * (n + 1));
	orders = orders == NULL ? MemoryContextAlloc(TopMemoryContext, sizeof(*orders)) :
		repalloc(orders, sizeof(*orders) * (n + 1));
	collations[n] = collation;
	orders[n] = order;
	n++;
	return order;
}

/*
 * An ICU collation's sort key of the len bytes at s, whose memcmp order is
 * the collation's (ICU promises that of ucol_getSortKey and ucol_strcoll),
 * and its terminating 0x00 (the key holds none).
 */
static void
append_sort_key(pg_locale_t locale, const char *s, int len, StringInfo buf)
{
#ifdef USE_ICU
	UChar	   *uchar;
	int32_t		ulen = icu_to_uchar(&uchar, s, len);
	int32_t		need = ucol_getSortKey(locale->info.icu.ucol, uchar, ulen, NULL, 0);

	enlargeStringInfo(buf, need);
	ucol_getSortKey(locale->info.icu.ucol, uchar, ulen, (uint8_t *) buf->data + buf->len, need);
	buf->len += need;			/* the key and its 0x00 */
	buf->data[buf->len] = '\0';
	pfree(uchar);
#else
	elog(ERROR, "pm_index: ICU collation in a build without ICU");
#endif
}

/* Whether col's collation finds strings equal that differ (their bytes are then host bytes). */
static bool
equal_strings_differ(const OrdColumn *col)
{
	return !col->by_bytes && col->locale != NULL && !col->locale->deterministic;
}

/*
 * A string of column col: in "C", the escaped bytes; in a libc collation,
 * LIBC_STRING_HEAD and the escaped bytes, which the collation's order
 * compares (see above); in an ICU collation, the mark, the sort key and its
 * 0x00, which order as the collation does, then the escaped bytes.  A
 * deterministic collation orders strings it finds equal by their bytes, as
 * varstr_cmp does: the escaped bytes order too; a nondeterministic one
 * keeps them equal: they are host bytes.  *keylen: the bytes that order.
 */
static void
append_string(const OrdColumn *col, const char *s, int len, StringInfo buf, int *keylen)
{
	if (by_libc(col))
	{
		appendStringInfoCharMacro(buf, BYTES_VALUE_MARK);
		for (int i = 1; i < LIBC_STRING_HEAD; i++)
			appendStringInfoCharMacro(buf, '\0');
	}
	else if (!col->by_bytes)
	{
		appendStringInfoCharMacro(buf, BYTES_VALUE_MARK);
		append_sort_key(col->locale, s, len, buf);
	}
	if (equal_strings_differ(col))
		*keylen = buf->len;
	append_escaped(buf, s, len);
	if (!equal_strings_differ(col))
		*keylen = buf->len;
}

/* Where the escaped bytes of a string append_string wrote at s start. */
static int
escaped_start(const OrdColumn *col, const char *s)
{
	if (col->by_bytes)
		return 0;
	if (by_libc(col))
		return LIBC_STRING_HEAD;
	return strlen(s + 1) + 2;	/* past the mark, the sort key and its 0x00 */
}

/*
 * The string's own bytes, of a string append_string wrote at s (keylen
 * bytes that order, len in all, as bytes_value gives them), into out;
 * returns where the host bytes that follow them start.
 */
static int
read_string(const OrdColumn *col, const char *s, int keylen, int len, StringInfo out)
{
	int			at;

	if (equal_strings_differ(col))
		return keylen + read_escaped(s + keylen, len - keylen, out);
	at = escaped_start(col, s);
	read_escaped(s + at, keylen - at, out);
	return keylen;
}

/*
 * char(n): btree compares values without their trailing spaces, so the
 * string is the value's without them; their count is host bytes unless
 * the value has the column's length.
 */
static int
bpchar_usual_spaces(int32 typmod, const char *s, int len)
{
	return typmod >= (int32) VARHDRSZ ? typmod - VARHDRSZ - pg_mbstrlen_with_len(s, len) : 0;
}

static void
bpchar_string(const OrdColumn *col, Datum value, StringInfo buf, int *keylen)
{
	BpChar	   *v = DatumGetBpCharPP(value);
	int			len = VARSIZE_ANY_EXHDR(v);
	int			kept = bpchartruelen(VARDATA_ANY(v), len);

	append_string(col, VARDATA_ANY(v), kept, buf, keylen);
	if (len - kept != bpchar_usual_spaces(col->typmod, VARDATA_ANY(v), kept))
		append_uint32(buf, (uint32) (len - kept));
	if ((Pointer) v != DatumGetPointer(value))
		pfree(v);
}

/*
 * The string of a value of a byte-string type (see the top): the bytes
 * that order it, *keylen of them, then host bytes if its entry keeps any.
 */
static void
value_string(const OrdColumn *col, Oid typid, Datum value, StringInfo buf, int *keylen)
{
	switch (typid)
	{
		case UUIDOID:
			appendStringInfoCharMacro(buf, BYTES_VALUE_MARK);
			appendBinaryStringInfo(buf, (const char *) DatumGetUUIDP(value)->data, UUID_LEN);
			break;
		case NAMEOID:
			append_string(col, NameStr(*DatumGetName(value)), strlen(NameStr(*DatumGetName(value))),
						  buf, keylen);
			return;
		case NUMERICOID:
			numeric_string(value, col->typmod, buf, keylen);
			return;
		case INTERVALOID:
			interval_string(value, buf, keylen);
			return;
		case INETOID:
			inet_string(value, buf);
			break;
		case BPCHAROID:
			bpchar_string(col, value, buf, keylen);
			return;
		default:				/* bytea, text */
			{
				struct varlena *v = PG_DETOAST_DATUM_PACKED(value);

				append_string(col, VARDATA_ANY(v), VARSIZE_ANY_EXHDR(v), buf, keylen);
				if ((Pointer) v != DatumGetPointer(value))
					pfree(v);
			}
			return;
	}
	*keylen = buf->len;
}

/* The value of a string of value_string's for col. */
static Datum
string_value(const OrdColumn *col, const char *s, int keylen, int len)
{
	StringInfoData val;

	switch (col->type)
	{
		case UUIDOID:
			{
				pg_uuid_t  *u = palloc(sizeof(pg_uuid_t));

				memcpy(u->data, s + 1, UUID_LEN);
				return UUIDPGetDatum(u);
			}
		case NAMEOID:
			{
				Name		n = palloc0(NAMEDATALEN);

				initStringInfo(&val);
				read_string(col, s, keylen, len, &val);
				memcpy(NameStr(*n), val.data, Min(val.len, NAMEDATALEN - 1));
				pfree(val.data);
				return NameGetDatum(n);
			}
		case NUMERICOID:
			return numeric_value(s, keylen, len, col->typmod);
		case INTERVALOID:
			return interval_value(s, keylen, len);
		case INETOID:
			return inet_value(s);
		default:				/* bytea, text, char(n) */
			{
				int			host;

				initStringInfo(&val);
				appendStringInfoSpaces(&val, VARHDRSZ);
				host = read_string(col, s, keylen, len, &val);
				if (col->type == BPCHAROID)
					appendStringInfoSpaces(&val, host < len ? (int) read_uint32(s + host) :
										   bpchar_usual_spaces(col->typmod, val.data + VARHDRSZ,
															   val.len - VARHDRSZ));
			}
			SET_VARSIZE(val.data, val.len);
			return PointerGetDatum(val.data);
	}
}

/*
 * The key of a string whose first keylen bytes order it (its first 8) and
 * rest; the record of the ordering bytes past 8 and the host bytes, if
 * any, palloc'd (rest: the record's own).  An entry's record must fit one
 * in the pool.
 */
static OrdKey
key_of_string(const uint8 *b, int keylen, int len, uint64 rest, bool entry)
{
	OrdKey		k = {0, rest};
	int			ordering = Max(keylen - 8, 0);
	pm_key_rec *r;

	for (int i = 0; i < 8; i++)
		k.key = k.key << 8 | (i < keylen ? b[i] : 0);
	if (ordering == 0 && len == keylen)
		return k;
	if (entry && ordering + (len - keylen) > ORD_WIDE_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("index key of %d bytes exceeds the maximum %d of a pm_index key",
						len, ORD_WIDE_MAX + 8),
				 errdetail("A key holds the uncompressed bytes of the indexed values (key and INCLUDE "
						   "columns) and, for a string in an ICU collation, the collation's sort "
						   "key too."),
				 errhint("Consider an index of an MD5 hash of the value, or use btree, which "
						 "compresses values and takes up to 2704 bytes after compression.")));
	r = palloc(sizeof(pm_key_rec) + ordering + (len - keylen));
	r->rest = rest;
	r->keylen = (uint32) ordering;
	r->len = (uint32) (ordering + len - keylen);
	memcpy(r->data, b + 8, ordering);
	memcpy(r->data + ordering, b + keylen, len - keylen);
	k.rest = PM_REST_WIDE | PM_REST_LOCAL | (uintptr_t) r;
	return k;
}

/*
 * The key of a value of type typid (col's, or a type its operator family
 * compares with col's) with rest: an entry's (entry) with its host bytes,
 * or a bound's, which only orders.
 */
static OrdKey
bytes_key(const OrdColumn *col, Oid typid, Datum value, uint64 rest, bool entry)
{
	StringInfoData buf;
	int			keylen;
	OrdKey		k;

	initStringInfo(&buf);
	value_string(col, typid, value, &buf, &keylen);
	k = key_of_string((const uint8 *) buf.data, keylen, entry ? buf.len : keylen, rest, entry);
	pfree(buf.data);
	return k;
}

uint64
ord_entry_rest(const OrdKey *k)
{
	return pm_rest_is_wide(k->rest) ? pm_key_rec_of(NULL, k->rest)->rest : k->rest;
}

/*
 * The host bytes of an entry's record (none: NULL): the key column's
 * (*keyhost, *keyhostlen) and, in an index with INCLUDE columns, theirs
 * (*included), which follow the key column's and their length.
 */
static void
record_host(const OrdColumn *col, const OrdKey *k, const char **keyhost, int *keyhostlen,
			const char **included)
{
	const pm_key_rec *r = pm_rest_is_wide(k->rest) ? pm_key_rec_of(NULL, k->rest) : NULL;
	const char *host = r ? (const char *) r->data + r->keylen : NULL;

	*keyhost = host;
	*keyhostlen = r ? r->len - r->keylen : 0;
	*included = NULL;
	if (r != NULL && col->natts > 1)
	{
		*keyhostlen = (int) read_uint32(host);
		*keyhost = host + 4;
		*included = *keyhost + *keyhostlen;
	}
}

/* An entry's ordering bytes, appended to buf: its key's 8 bytes, then its record's. */
static void
append_ordering(StringInfo buf, const OrdKey *k)
{
	append_uint64(buf, k->key);
	if (pm_rest_is_wide(k->rest))
	{
		const pm_key_rec *r = pm_key_rec_of(NULL, k->rest);

		appendBinaryStringInfo(buf, (const char *) r->data, r->keylen);
	}
}

/*
 * The value of an entry of a byte-string type: its ordering bytes, then
 * the key column's host bytes.
 */
static Datum
bytes_value(const OrdColumn *col, const OrdKey *k)
{
	StringInfoData buf;
	int			keylen;
	const char *keyhost;
	int			keyhostlen;
	const char *included;
	Datum		result;

	initStringInfo(&buf);
	append_ordering(&buf, k);
	keylen = buf.len;
	record_host(col, k, &keyhost, &keyhostlen, &included);
	if (keyhostlen > 0)
		appendBinaryStringInfo(&buf, keyhost, keyhostlen);
	result = string_value(col, buf.data, keylen, buf.len);
	pfree(buf.data);
	return result;
}

static Datum
ord_entry_value(const OrdColumn *col, const OrdKey *k)
{
	if (class_of(col->type) == KEY_BYTES)
		return bytes_value(col, k);
	return ord_decode(col->type, k->key);
}

static void composite_values(const OrdColumn *col, const OrdKey *k, int upto, Datum *values,
							 bool *isnull, const char **included);
static void read_included(const OrdColumn *col, const char *included, Datum *values, bool *isnull);

/* The values of all of an entry's attributes, the key columns' and the INCLUDE columns'. */
void
ord_entry_values(const OrdColumn *col, const OrdKey *k, Datum *values, bool *isnull)
{
	const char *keyhost;
	int			keyhostlen;
	const char *included;

	if (col->nkeys > 1)
		composite_values(col, k, col->nkeys, values, isnull, &included);
	else
	{
		isnull[0] = (ord_entry_rest(k) & ORD_REST_NULL) != 0;
		values[0] = isnull[0] ? (Datum) 0 : ord_entry_value(col, k);
		if (col->natts == 1)
			return;
		record_host(col, k, &keyhost, &keyhostlen, &included);
	}
	if (col->natts > col->nkeys)
	{
		Assert(included != NULL);
		read_included(col, included, values, isnull);
	}
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

static uint64
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

static Datum
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
ord_cut(Oid opfamily, const OrdColumn *col, Oid argtype, Datum arg, OrdCut *cut)
{
	Oid			coltype = col->type;
	Oid			cmpproc;
	FmgrInfo	cmp;
	uint64		ge = 0;
	uint64		gt = 0;

	if (!OidIsValid(argtype))
		argtype = coltype;
	if (class_of(coltype) == KEY_BYTES)
	{
		/* text and name are the one cross-type pair, in one byte space */
		Assert(argtype == col->type || (class_of(argtype) == KEY_BYTES &&
										(col->type == TEXTOID || col->type == NAMEOID)));
		cut->has_ge = cut->has_gt = true;
		cut->ge = bytes_key(col, argtype, arg, 0, false);
		cut->gt = bytes_key(col, argtype, arg, UINT64_MAX, false);
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
ord_key_raise(const pm_key_order *order, OrdKey *lo, const OrdKey *k)
{
	if (pm_key_cmp_by(order, k, lo) > 0)
		*lo = *k;
}

/* hi becomes k if k is below it. */
void
ord_key_lower(const pm_key_order *order, OrdKey *hi, const OrdKey *k)
{
	if (pm_key_cmp_by(order, k, hi) < 0)
		*hi = *k;
}

/*
 * Lower hi to just below the cut point k; false when no entry is below k.
 * Below the NULL key, a value's rest is below the NULL flag, which keeps a
 * range's end clear of the NULLs; below any other key, all of its entries
 * count (wide ones too).
 */
static bool
lower_below(const pm_key_order *order, OrdKey *hi, const OrdKey *k)
{
	OrdKey		last;

	if (pm_key_is_min(k))
		return false;
	last = pm_key_pred(k);
	if (last.key == ORD_NULL_KEY && !pm_rest_is_wide(last.rest) && last.rest > ORD_REST_NONNULL_MAX)
		last.rest = ORD_REST_NONNULL_MAX;
	ord_key_lower(order, hi, &last);
	return true;
}

/*
 * Narrow the inclusive range of entries [*lo, *hi] by "column <strategy>
 * arg", where cut places arg.  Returns false when no entry can satisfy both.
 */
bool
ord_narrow(const pm_key_order *order, const OrdCut *cut, int strategy, OrdKey *lo, OrdKey *hi)
{
	switch (strategy)
	{
		case BTLessStrategyNumber:
			if (cut->has_ge && !lower_below(order, hi, &cut->ge))
				return false;
			break;
		case BTLessEqualStrategyNumber:
			if (cut->has_gt && !lower_below(order, hi, &cut->gt))
				return false;
			break;
		case BTEqualStrategyNumber:
			if (!cut->has_ge || (cut->has_gt && pm_key_cmp_by(order, &cut->gt, &cut->ge) == 0))
				return false;
			ord_key_raise(order, lo, &cut->ge);
			if (cut->has_gt && !lower_below(order, hi, &cut->gt))
				return false;
			break;
		case BTGreaterEqualStrategyNumber:
			if (!cut->has_ge)
				return false;
			ord_key_raise(order, lo, &cut->ge);
			break;
		case BTGreaterStrategyNumber:
			if (!cut->has_gt)
				return false;
			ord_key_raise(order, lo, &cut->gt);
			break;
		default:
			elog(ERROR, "pm_index: unexpected btree strategy %d", strategy);
	}
	return pm_key_cmp_by(order, lo, hi) <= 0;
}

static uint64
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

/* The values of an index's INCLUDE columns, appended to buf (datumSerialize). */
static void
append_included(const OrdColumn *col, const Datum *values, const bool *isnull, StringInfo buf)
{
	Datum	   *own = palloc(sizeof(Datum) * col->natts);
	Size		size = 0;
	char	   *at;

	for (int i = col->nkeys; i < col->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(col->desc, i);

		/* a value stored in TOAST comes along whole, as in an index tuple */
		own[i] = values[i];
		if (!isnull[i] && att->attlen == -1 && VARATT_IS_EXTERNAL(DatumGetPointer(values[i])))
			own[i] = PointerGetDatum(detoast_external_attr((struct varlena *) DatumGetPointer(values[i])));
		size += datumEstimateSpace(own[i], isnull[i], att->attbyval, att->attlen);
	}
	enlargeStringInfo(buf, size);
	at = buf->data + buf->len;
	for (int i = col->nkeys; i < col->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(col->desc, i);

		datumSerialize(own[i], isnull[i], att->attbyval, att->attlen, &at);
	}
	buf->len += size;
	buf->data[buf->len] = '\0';
	pfree(own);
}

/* The INCLUDE columns' values append_included wrote at included. */
static void
read_included(const OrdColumn *col, const char *included, Datum *values, bool *isnull)
{
	for (int i = col->nkeys; i < col->natts; i++)
	{
		char	   *at = (char *) included;

		values[i] = datumRestore(&at, &isnull[i]);	/* a copy in palloc'd memory */
		included = at;
	}
}

/*
 * The entry of a one-column index with INCLUDE columns: its key column's
 * string (a narrow key's 8 bytes), then host bytes: the length of the key
 * column's and its own, then the INCLUDE columns' values.
 */
static OrdKey
included_key(const OrdColumn *col, const Datum *values, const bool *isnull, uint64 rest)
{
	StringInfoData buf;
	StringInfoData key;
	int			keylen = 8;
	OrdKey		k;

	initStringInfo(&key);
	if (!isnull[0] && class_of(col->type) == KEY_BYTES)
		value_string(col, col->type, values[0], &key, &keylen);
	else
		append_uint64(&key, isnull[0] ? ORD_NULL_KEY : ord_encode(col->type, values[0]));
	initStringInfo(&buf);
	appendBinaryStringInfo(&buf, key.data, keylen);
	append_uint32(&buf, (uint32) (key.len - keylen));
	appendBinaryStringInfo(&buf, key.data + keylen, key.len - keylen);
	append_included(col, values, isnull, &buf);
	k = key_of_string((const uint8 *) buf.data, keylen, buf.len, rest, true);
	pfree(key.data);
	pfree(buf.data);
	return k;
}

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
#define SEGMENT_AFTER		0xFF	/* above every segment that a string starts */

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
	if (class_of(c->type) == KEY_BYTES)
	{
		StringInfoData str;
		int			keylen;
		int			skip = string_marked(c->type) ? 1 : 0;

		initStringInfo(&str);
		value_string(c, typid, value, &str, &keylen);
		Assert(skip == 0 || str.data[0] == BYTES_VALUE_MARK);
		appendStringInfoCharMacro(buf, SEGMENT_VALUE);
		appendBinaryStringInfo(buf, str.data + skip, keylen - skip);
		appendBinaryStringInfo(host, str.data + keylen, str.len - keylen);
		pfree(str.data);
	}
	else
	{
		uint64		key = ord_encode(typid, value);

		if (class_of(c->type) == KEY_FLOAT && key == encode_double(-0.0))
		{
			key = encode_double(0.0);
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
		append_uint32(&hosts, (uint32) host.len);
		appendBinaryStringInfo(&hosts, host.data, host.len);
		any_host |= host.len > 0;
	}
	keylen = buf.len;
	if (any_host || col->natts > col->nkeys)
	{
		appendBinaryStringInfo(&buf, hosts.data, hosts.len);
		append_included(col, values, isnull, &buf);
	}
	k = key_of_string((const uint8 *) buf.data, keylen, buf.len, ord_rest(tid, any_null), true);
	pfree(buf.data);
	pfree(hosts.data);
	pfree(host.data);
	return k;
}

/* The length of the string of a value of column c at s (its ordering bytes). */
static int
value_length(const OrdColumn *c, const char *s)
{
	if (class_of(c->type) != KEY_BYTES)
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
				int			at = escaped_start(c, s);

				return equal_strings_differ(c) ? at : at + read_escaped(s + at, INT_MAX, NULL);
			}
	}
}

/* The value of column c of the ordering bytes s (keylen) and host bytes */
static Datum
segment_value(const OrdColumn *c, const char *s, int keylen, const char *host, int hostlen)
{
	StringInfoData buf;
	Datum		result;

	if (class_of(c->type) != KEY_BYTES)
	{
		uint64		number = 0;

		for (int i = 0; i < keylen; i++)
			number = number << 8 | (uint8) s[i];
		if (hostlen > 0)
			return ord_decode(c->type, encode_double(-0.0));
		return ord_decode(c->type, keylen < 8 ? segment_key(c->type, number) : number);
	}
	initStringInfo(&buf);
	appendBinaryStringInfo(&buf, s, keylen);
	appendBinaryStringInfo(&buf, host, hostlen);
	result = string_value(c, buf.data, keylen, buf.len);
	pfree(buf.data);
	return result;
}

/*
 * The values of the first upto key columns of an entry of a multicolumn
 * index; *included: where the INCLUDE columns' values are (NULL: none).
 */
static void
composite_values(const OrdColumn *col, const OrdKey *k, int upto, Datum *values, bool *isnull,
				 const char **included)
{
	const pm_key_rec *r = pm_rest_is_wide(k->rest) ? pm_key_rec_of(NULL, k->rest) : NULL;
	const char *host = r && r->len > r->keylen ? (const char *) r->data + r->keylen : NULL;
	StringInfoData ord;
	char	   *plain = NULL;
	int			pos = 0;

	initStringInfo(&ord);
	append_ordering(&ord, k);
	for (int c = 0; c < upto; c++)
	{
		const OrdColumn *kc = &col->keys[c];
		uint8		first = (uint8) ord.data[pos];
		int			hostlen = host ? (int) read_uint32(host) : 0;

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

	composite_values(col, k, upto, values, isnull, &included);
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
	k = key_of_string((const uint8 *) b.data, b.len, b.len, 0, false);
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

	*lo = key_of_string((const uint8 *) prefix->data, prefix->len, prefix->len, 0, false);
	appendStringInfoCharMacro(prefix, (char) SEGMENT_AFTER);
	end = key_of_string((const uint8 *) prefix->data, prefix->len, prefix->len, 0, false);
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
	if (class_of(kc->type) == KEY_BYTES)
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
		if (class_of(kc->type) == KEY_FLOAT && one.ge.key == encode_double(-0.0))
			one.ge.key = encode_double(0.0);	/* -0 has +0's segment */
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
	append_ordering(&ord, k);
	*lo = key_of_string((const uint8 *) ord.data, ord.len, ord.len, 0, false);
	*hi = key_of_string((const uint8 *) ord.data, ord.len, ord.len, UINT64_MAX, false);
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
		return composite_key(col, values, isnull, tid);
	if (col->natts > 1)
		return included_key(col, values, isnull, ord_rest(tid, isnull[0]));
	if (!isnull[0] && class_of(col->type) == KEY_BYTES)
		return bytes_key(col, col->type, values[0], ord_rest(tid, false), true);
	k.key = isnull[0] ? ORD_NULL_KEY : ord_encode(col->type, values[0]);
	k.rest = ord_rest(tid, isnull[0]);
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

	/* a multicolumn entry with a NULL: equal NULLs, and the other columns' values */
	if (anull || bnull)
	{
		if (!(anull && bnull && nulls_equal))
			return false;
		if (col->nkeys == 1)
			return true;
	}
	if (class_of(col->type) == KEY_BYTES || col->nkeys > 1)
	{
		/* a narrow entry, or a record's host bytes, add no ordering bytes */
		const pm_key_rec *ra = pm_rest_is_wide(a->rest) ? pm_key_rec_of(NULL, a->rest) : NULL;
		const pm_key_rec *rb = pm_rest_is_wide(b->rest) ? pm_key_rec_of(NULL, b->rest) : NULL;
		uint32		alen = ra ? ra->keylen : 0;
		uint32		blen = rb ? rb->keylen : 0;

		return a->key == b->key && alen == blen && (alen == 0 || memcmp(ra->data, rb->data, alen) == 0);
	}
	return a->key == b->key ||
		(class_of(col->type) == KEY_FLOAT && Min(a->key, b->key) == encode_double(-0.0) &&
		 Max(a->key, b->key) == encode_double(0.0));
}

/*
 * A multicolumn index orders its entries by the bytes of their segments,
 * and a libc collation's strings have no bytes that order them (see
 * by_libc): refused.
 */
static void
check_libc_columns(const OrdColumn *col, const char *amname)
{
	for (int c = 0; c < col->nkeys && col->nkeys > 1; c++)
		if (by_libc(&col->keys[c]))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("%s does not support multicolumn indexes with a column in collation \"%s\"",
							amname, get_collation_name(col->keys[c].collation)),
					 errdetail("Strings in a libc collation other than \"C\" are ordered by the "
							   "collation's comparison function, which only single-column indexes do."),
					 errhint("Give the column COLLATE \"C\" or an ICU collation, index it alone, or use btree.")));
}

/*
 * Refuse an index the access method (amname; wide_keys: it takes wide keys)
 * cannot order as btree would: a type without an encoding, a byte-string
 * type, several key columns or INCLUDE columns without wide keys; a pattern
 * operator class in a nondeterministic collation, as btree's.
 */
void
ord_check_column(Relation index, const char *amname, bool wide_keys)
{
	OrdColumn	col = ord_column(index);

	for (int c = 0; c < col.nkeys; c++)
	{
		const OrdColumn *k = col.nkeys > 1 ? &col.keys[c] : &col;
		Oid			type = k->type;

		/* as index_create refuses btree's pattern operator classes */
		if (k->by_bytes && OidIsValid(k->collation) && !get_collation_isdeterministic(k->collation))
		{
			bool		isnull;
			oidvector  *indclass = (oidvector *) DatumGetPointer(SysCacheGetAttr(INDEXRELID,
																			 index->rd_indextuple,
																			 Anum_pg_index_indclass,
																			 &isnull));

			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("nondeterministic collations are not supported for operator class \"%s\"",
							generate_opclass_name(indclass->values[c]))));
		}

		if (!ord_type_supported(type) || (ord_type_wide(type) && !wide_keys))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("%s does not support type %s", amname, format_type_be(type)),
					 ord_type_wide(type) ?
					 errdetail("Its keys are longer than the 8 bytes %s takes.", amname) : 0));
	}
	check_libc_columns(&col, amname);
	if (col.nkeys > 1 && !wide_keys)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s does not support multicolumn indexes", amname),
				 errdetail("Its keys are the 8 bytes of one column."),
				 errhint("Index one column, or use an access method that takes several.")));
	if (col.natts > col.nkeys && !wide_keys)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s does not support INCLUDE columns", amname),
				 errdetail("Its entries are 16 bytes and keep nothing more."),
				 errhint("Index the columns without INCLUDE, or use an access method that keeps them.")));
}

/*
 * Whether an operator family orders strings by their bytes whatever their
 * collation: the pattern operator classes (text_pattern_ops,
 * varchar_pattern_ops, bpchar_pattern_ops), whose comparison function is
 * btree's bytewise one.
 */
static bool
family_orders_bytes(Oid opfamily, Oid type)
{
	RegProcedure cmp;

	if (type != TEXTOID && type != BPCHAROID)
		return false;
	cmp = get_opfamily_proc(opfamily, type, type, 1);	/* btree's ORDER proc */
	return cmp == F_BTTEXT_PATTERN_CMP || cmp == F_BTBPCHAR_PATTERN_CMP;
}

/*
 * Key column c: keys encode from the operator class's input type, which is
 * the column's type or one it is binary-coercible to (varchar's text, a
 * domain's base type).
 */
static OrdColumn
key_column(Relation index, int c)
{
	OrdColumn	col;

	col.type = index->rd_opcintype[c];
	col.opfamily = index->rd_opfamily[c];
	col.typmod = TupleDescAttr(RelationGetDescr(index), c)->atttypmod;
	col.collation = index->rd_indcollation[c];
	col.by_bytes = !OidIsValid(col.collation) || lc_collate_is_c(col.collation) ||
		family_orders_bytes(col.opfamily, col.type);
	col.locale = col.by_bytes ? NULL : pg_newlocale_from_collation(col.collation);
	col.order = by_libc(&col) ? libc_order_of_collation(col.collation) : NULL;
	col.descending = (index->rd_indoption[c] & INDOPTION_DESC) != 0;
	col.nulls_first = (index->rd_indoption[c] & INDOPTION_NULLS_FIRST) != 0;
	col.natts = 1;
	col.nkeys = 1;
	col.keys = NULL;
	col.desc = NULL;
	return col;
}

OrdColumn
ord_column(Relation index)
{
	OrdColumn	col = key_column(index, 0);

	col.natts = IndexRelationGetNumberOfAttributes(index);
	col.nkeys = IndexRelationGetNumberOfKeyAttributes(index);
	col.desc = RelationGetDescr(index);
	if (col.nkeys > 1)
	{
		col.order = NULL;		/* segments order by their bytes */
		col.keys = palloc(sizeof(OrdColumn) * col.nkeys);
		for (int c = 0; c < col.nkeys; c++)
			col.keys[c] = key_column(index, c);
	}
	return col;
}

/*
 * The format parameter of an ordered index (PmiAmOps.format_param): empty,
 * or for a column of strings in a libc collation, ORD_FORMAT_LIBC and the
 * locale's name with its 0x00.
 */
void
ord_format_param(Relation index, PmiFormatParam *param)
{
	OrdColumn	col = key_column(index, 0);
	char	   *name;

	param->len = 0;
	if (IndexRelationGetNumberOfKeyAttributes(index) > 1)
	{
		OrdColumn	all = ord_column(index);

		check_libc_columns(&all, pmi_index_am(index)->amname);
		return;
	}
	if (!by_libc(&col))
		return;
	name = libc_locale_name(col.collation);
	if (strlen(name) + 2 > PMI_FORMAT_PARAM_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("pm_index does not support the locale name \"%s\": it is longer than %d bytes",
						name, PMI_FORMAT_PARAM_MAX - 2)));
	param->data[0] = ORD_FORMAT_LIBC;
	strcpy((char *) param->data + 1, name);
	param->len = strlen(name) + 2;
	pfree(name);
}

/*
 * The order of the records of a pool formatted with param (NULL: memcmp);
 * ERROR if this system lacks its locale or param is not one of
 * ord_format_param's.
 */
const pm_key_order *
ord_order_of_format(const uint8 *param, uint32 len)
{
	if (len == 0)
		return NULL;
	if (param[0] != ORD_FORMAT_LIBC || len < 2 || param[len - 1] != '\0' ||
		strlen((const char *) param + 1) != len - 2)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("pm_index pool holds an unknown key format of %u bytes", len),
				 errhint("REINDEX the index.")));
	return libc_order((const char *) param + 1);
}
