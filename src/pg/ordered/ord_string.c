/*
 * ord_string.c
 *	  Byte-string keys: uuid, bytea, the string types, numeric, interval,
 *	  inet.
 *
 * These types become byte strings whose memcmp order is btree's, and of
 * which none is a prefix of another: uuid, a 0x01 mark and its 16 bytes;
 * bytea and the string types in the "C" collation, the mark, their bytes
 * with each 0x00 written 0x00 0xFF, and 0x00 0x00 at the end (text and name
 * share this space, as their cross-type operators need); strings in ICU
 * collations lead with their sort key, strings in libc collations other
 * than "C" order by the collation's comparison function (append_string);
 * numeric, interval and inet as their functions below say.  No string
 * starts with 0xFF, so no value's key reaches the NULL key.  The first 8
 * bytes are the key; a longer string's remainder goes to a record
 * (pm_key.h), the rest of a shorter one is zero.  Values equal to btree but
 * not identical (numeric's 1.0 and 1.00, interval's '1 mon' and '30 days',
 * char(n)'s trailing spaces) have one string; what tells them apart is host
 * bytes in the record, left out when the value has its column's usual form.
 * Values decode from their string and host bytes, so index-only scans need
 * nothing more.
 */
#include "ord_key.h"

#include <sys/socket.h>

#include "catalog/pg_collation.h"
#include "mb/pg_wchar.h"
#include "port/pg_bswap.h"
#include "utils/builtins.h"
#include "utils/inet.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"
#include "utils/uuid.h"

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
int
ord_read_escaped(const char *s, int len, StringInfo out)
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

void
ord_append_uint32(StringInfo buf, uint32 v)
{
	uint32		be = pg_hton32(v);

	appendBinaryStringInfo(buf, (const char *) &be, sizeof(be));
}

void
ord_append_uint64(StringInfo buf, uint64 v)
{
	uint64		be = pg_hton64(v);

	appendBinaryStringInfo(buf, (const char *) &be, sizeof(be));
}

uint32
ord_read_uint32(const char *s)
{
	uint32		be;

	memcpy(&be, s, sizeof(be));
	return pg_ntoh32(be);
}

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

		/*
		 * 0.digits[first..] x 10^(point - first), started at an even power of
		 * ten
		 */
		if ((point - first) % 2 != 0)
			first--;
		exponent = (point - first) / 2;
		if (exponent > NUMERIC_SMALL_E || exponent < -NUMERIC_SMALL_E)
		{
			bool		large = exponent > 0;

			appendStringInfoCharMacro(buf, negative ? (large ? NUMERIC_NEG_LARGE : NUMERIC_NEG_TINY) :
									  (large ? NUMERIC_POS_LARGE : NUMERIC_POS_TINY));
			ord_append_uint32(buf, ((uint32) exponent + UINT32_C(0x80000000)) ^ (negative ? UINT32_MAX : 0));
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
		ord_append_uint32(buf, (uint32) dscale);
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
		exponent = (int32) ((ord_read_uint32(s + 1) ^ (inv ? UINT32_MAX : 0)) - UINT32_C(0x80000000));
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
	dscale = keylen < len ? (int) ord_read_uint32(s + keylen) :
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
		ord_append_uint32(buf, (uint32) iv->month);
		ord_append_uint32(buf, (uint32) iv->day);
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
		iv->month = (int32) ord_read_uint32(s + keylen);
		iv->day = (int32) ord_read_uint32(s + keylen + 4);
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
#define LIBC_STRING_HEAD	7	/* bytes before the escaped string: the mark
								 * and zeros */

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
const pm_key_order *
ord_libc_order(const char *name)
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
bool
ord_by_libc(const OrdColumn *col)
{
	return !col->by_bytes && (col->locale == NULL || col->locale->provider == COLLPROVIDER_LIBC);
}

/* The locale name of a libc collation: the database's for the default collation. */
char *
ord_libc_locale_name(Oid collation)
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
const pm_key_order *
ord_libc_order_of_collation(Oid collation)
{
	static Oid *collations = NULL;
	static const pm_key_order **orders = NULL;
	static int	n = 0;
	const pm_key_order *order;
	char	   *name;

	for (int i = 0; i < n; i++)
		if (collations[i] == collation)
			return orders[i];
	name = ord_libc_locale_name(collation);
	order = ord_libc_order(name);
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
bool
ord_equal_strings_differ(const OrdColumn *col)
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
	if (ord_by_libc(col))
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
	if (ord_equal_strings_differ(col))
		*keylen = buf->len;
	append_escaped(buf, s, len);
	if (!ord_equal_strings_differ(col))
		*keylen = buf->len;
}

/* Where the escaped bytes of a string append_string wrote at s start. */
int
ord_escaped_start(const OrdColumn *col, const char *s)
{
	if (col->by_bytes)
		return 0;
	if (ord_by_libc(col))
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

	if (ord_equal_strings_differ(col))
		return keylen + ord_read_escaped(s + keylen, len - keylen, out);
	at = ord_escaped_start(col, s);
	ord_read_escaped(s + at, keylen - at, out);
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
		ord_append_uint32(buf, (uint32) (len - kept));
	if ((Pointer) v != DatumGetPointer(value))
		pfree(v);
}

/*
 * The string of a value of a byte-string type (see the top): the bytes
 * that order it, *keylen of them, then host bytes if its entry keeps any.
 */
void
ord_value_string(const OrdColumn *col, Oid typid, Datum value, StringInfo buf, int *keylen)
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

/* The value of a string of ord_value_string's for col. */
Datum
ord_string_value(const OrdColumn *col, const char *s, int keylen, int len)
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
					appendStringInfoSpaces(&val, host < len ? (int) ord_read_uint32(s + host) :
										   bpchar_usual_spaces(col->typmod, val.data + VARHDRSZ,
															   val.len - VARHDRSZ));
			}
			SET_VARSIZE(val.data, val.len);
			return PointerGetDatum(val.data);
	}
}

/* ERROR: an entry's key of len bytes is longer than max, the most what's keys hold. */
void
ord_key_too_long(uint32 len, int max, const char *what)
{
	ereport(ERROR,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 errmsg("index key of %u bytes exceeds the maximum %d of %s key", len, max, what),
			 errdetail("A key holds the uncompressed bytes of the indexed values (key and INCLUDE "
					   "columns) and, for a string in an ICU collation, the collation's sort "
					   "key too."),
			 errhint("Consider an index of an MD5 hash of the value, or use btree, which "
					 "compresses values and takes up to 2704 bytes after compression.")));
}

/*
 * The key of a string whose first keylen bytes order it (its first 8) and
 * rest; the record of the ordering bytes past 8 and the host bytes, if
 * any, palloc'd (rest: the record's own).  An entry's record must fit one
 * in the pool.
 */
OrdKey
ord_key_of_string(const uint8 *b, int keylen, int len, uint64 rest, bool entry)
{
	OrdKey		k = {0, rest};
	int			ordering = Max(keylen - 8, 0);
	pm_key_rec *r;

	for (int i = 0; i < 8; i++)
		k.key = k.key << 8 | (i < keylen ? b[i] : 0);
	if (ordering == 0 && len == keylen)
		return k;
	if (entry && ordering + (len - keylen) > ORD_WIDE_MAX)
		ord_key_too_long(len, ORD_WIDE_MAX + 8, "a pm_index");
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
OrdKey
ord_bytes_key(const OrdColumn *col, Oid typid, Datum value, uint64 rest, bool entry)
{
	StringInfoData buf;
	int			keylen;
	OrdKey		k;

	initStringInfo(&buf);
	ord_value_string(col, typid, value, &buf, &keylen);
	k = ord_key_of_string((const uint8 *) buf.data, keylen, entry ? buf.len : keylen, rest, entry);
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
		*keyhostlen = (int) ord_read_uint32(host);
		*keyhost = host + 4;
		*included = *keyhost + *keyhostlen;
	}
}

/* An entry's ordering bytes, appended to buf: its key's 8 bytes, then its record's. */
void
ord_append_ordering(StringInfo buf, const OrdKey *k)
{
	ord_append_uint64(buf, k->key);
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
	ord_append_ordering(&buf, k);
	keylen = buf.len;
	record_host(col, k, &keyhost, &keyhostlen, &included);
	if (keyhostlen > 0)
		appendBinaryStringInfo(&buf, keyhost, keyhostlen);
	result = ord_string_value(col, buf.data, keylen, buf.len);
	pfree(buf.data);
	return result;
}

static Datum
ord_entry_value(const OrdColumn *col, const OrdKey *k)
{
	if (ord_class_of(col->type) == KEY_BYTES)
		return bytes_value(col, k);
	return ord_decode(col->type, k->key);
}

/* The values of all of an entry's attributes, the key columns' and the INCLUDE columns'. */
void
ord_entry_values(const OrdColumn *col, const OrdKey *k, Datum *values, bool *isnull)
{
	const char *keyhost;
	int			keyhostlen;
	const char *included;

	if (col->nkeys > 1)
		ord_composite_values(col, k, col->nkeys, values, isnull, &included);
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
		ord_read_included(col, included, values, isnull);
	}
}
