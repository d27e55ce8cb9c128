/*
 * ord_key.h
 *	  The key encodings of the ordered access methods, shared by the files
 *	  that make them: ord_scalar.c (8-byte keys), ord_string.c (byte
 *	  strings), ord_bounds.c (scan bounds), ord_include.c (INCLUDE columns),
 *	  ord_multicolumn.c (several key columns) and ord_column.c (a column's
 *	  description).  Not for the rest of the family: ord.h is its interface.
 */
#ifndef ORD_KEY_H
#define ORD_KEY_H

#include "ord.h"

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
 * interval: btree orders intervals by their span in microseconds, a month
 * counting 30 days; the span is 80 bits (it stays below 2^75), sign bit
 * flipped.  Intervals of one span ('1 mon' and '30 days') have one string;
 * the fields are host bytes (months and days), kept unless days and the
 * time within a day are the span's split.
 */
#define INTERVAL_SPAN_BYTES	10

#define ORD_FORMAT_LIBC		'L' /* a format parameter: 'L', the locale's name,
								 * 0x00 */

/* ord_scalar.c */
extern key_class ord_class_of(Oid typid);
extern double ord_float_value(Oid typid, Datum d);
extern uint64 ord_encode_double(double v);
extern uint64 ord_encode(Oid typid, Datum value);
extern Datum ord_decode(Oid typid, uint64 key);
extern uint64 ord_rest(ItemPointer tid, bool isnull);
extern bool ord_type_wide(Oid typid);

/* ord_string.c */
extern int	ord_read_escaped(const char *s, int len, StringInfo out);
extern void ord_append_uint32(StringInfo buf, uint32 v);
extern void ord_append_uint64(StringInfo buf, uint64 v);
extern uint32 ord_read_uint32(const char *s);
extern const pm_key_order *ord_libc_order(const char *name);
extern bool ord_by_libc(const OrdColumn *col);
extern char *ord_libc_locale_name(Oid collation);
extern const pm_key_order *ord_libc_order_of_collation(Oid collation);
extern bool ord_equal_strings_differ(const OrdColumn *col);
extern int	ord_escaped_start(const OrdColumn *col, const char *s);
extern void ord_value_string(const OrdColumn *col, Oid typid, Datum value, StringInfo buf,
							 int *keylen);
extern Datum ord_string_value(const OrdColumn *col, const char *s, int keylen, int len);
extern OrdKey ord_key_of_string(const uint8 *b, int keylen, int len, uint64 rest, bool entry);
extern void ord_key_too_long(uint32 len, int max, const char *what);
extern OrdKey ord_bytes_key(const OrdColumn *col, Oid typid, Datum value, uint64 rest, bool entry);
extern void ord_append_ordering(StringInfo buf, const OrdKey *k);

/* ord_include.c */
extern void ord_append_included(const OrdColumn *col, const Datum *values, const bool *isnull,
								StringInfo buf);
extern void ord_read_included(const OrdColumn *col, const char *included, Datum *values,
							  bool *isnull);
extern OrdKey ord_included_key(const OrdColumn *col, const Datum *values, const bool *isnull,
							   uint64 rest);

/* ord_multicolumn.c */
extern void ord_composite_values(const OrdColumn *col, const OrdKey *k, int upto, Datum *values,
								 bool *isnull, const char **included);

#endif							/* ORD_KEY_H */
