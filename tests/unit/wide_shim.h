/*
 * wide_shim.h
 *	  The wide variants of the ordered structures' tests (nbt_wide_shim.h,
 *	  nvb_wide_shim.h): every (key, rest) a test passes becomes the wide
 *	  entry (key >> 12, record of the key's 8 bytes big-endian, rest, and
 *	  payload bytes made from both: 0-40 of them for most entries, 72-100 for
 *	  one in five, and with WIDE_PAYLOAD_LONG set, up to that many for one in
 *	  64), whose order is the same, and every key the structure returns is
 *	  turned back (its payload checked; a fence made of a key alone,
 *	  (prefix, WIDE_SEP_REST), and the first position of the prefix,
 *	  (prefix << 12, 0), are one another's image), so the test's own checks
 *	  judge the wide
 *	  paths: prefix ties on every comparison, records stored, copied out,
 *	  retired and recovered.  WIDE_ARENA is the bytes one read copies at most.
 *
 *	  With WIDE_TEST_HOST_ORDER, a record holds the key's bytes
 *	  little-endian, which memcmp misorders, every entry has the same key,
 *	  and the pool orders records with a host order (pm_key_order) that reads
 *	  them back: the structure is right only where every comparison of
 *	  records goes through the pool's order.
 */
#ifndef WIDE_SHIM_H
#define WIDE_SHIM_H

#include "pm_key.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WIDE_PREFIX_SHIFT	12
#ifndef WIDE_PAYLOAD_LONG
#define WIDE_PAYLOAD_LONG	0
#endif
#define WIDE_PAYLOAD_MAX	(WIDE_PAYLOAD_LONG > 100 ? WIDE_PAYLOAD_LONG : 100)
/* the rest of the fence a structure makes of a key alone */
#ifndef WIDE_SEP_REST
#define WIDE_SEP_REST		0
#endif

/* room for one record: header, the key's 8 bytes, payload */
typedef struct wide_buf
{
	uint64_t	words[(sizeof(pm_key_rec) + 8 + WIDE_PAYLOAD_MAX) / 8 + 1];
} wide_buf;

static int
wide_payload_len(uint64_t key, uint64_t rest)
{
	uint64_t	h = key * 31 + rest * 7;

#if WIDE_PAYLOAD_LONG > 0
	if (h % 64 == 1)
		return (int) (WIDE_PAYLOAD_LONG / 3 + h / 64 % (WIDE_PAYLOAD_LONG * 2 / 3));
#endif
	return (int) (h % 5 == 0 ? 72 + h / 5 % 29 : h % 41);
}

static uint8_t
wide_payload_byte(uint64_t key, uint64_t rest, int j)
{
	return (uint8_t) (key + rest * 3 + (uint64_t) j);
}

static bool
wide_rest_is_entry(uint64_t rest)
{
	return rest != 0 && rest != UINT64_MAX;
}

/* Byte i of a record's key bytes: big-endian, or little-endian under a host order. */
static int
wide_shift(int i)
{
#ifdef WIDE_TEST_HOST_ORDER
	return 8 * i;
#else
	return 56 - 8 * i;
#endif
}

#ifdef WIDE_TEST_HOST_ORDER
static uint64_t
wide_le(const uint8_t *b)
{
	uint64_t	v = 0;

	for (int i = 0; i < 8; i++)
		v |= (uint64_t) b[i] << (8 * i);
	return v;
}

/* records' 8 key bytes, little-endian: their order as numbers */
static int
wide_host_cmp(const pm_key_order *order, const uint8_t *a, uint32_t alen, const uint8_t *b,
			  uint32_t blen)
{
	uint64_t	x = alen >= 8 ? wide_le(a) : 0;
	uint64_t	y = blen >= 8 ? wide_le(b) : 0;

	(void) order;
	if (alen < 8 || blen < 8)
		return (alen > blen) - (alen < blen);
	return (x > y) - (x < y);
}

static const pm_key_order wide_host_order = {wide_host_cmp};

#define WIDE_ORDER(pool)	((pool)->key_order = &wide_host_order)
/* every entry one key, as PostgreSQL's strings in a libc collation: records decide all */
#define WIDE_PREFIX(key)	((void) (key), UINT64_C(1))
#else
#define WIDE_ORDER(pool)	((void) (pool))
#define WIDE_PREFIX(key)	((key) >> WIDE_PREFIX_SHIFT)
#endif

static pm_key
wide_of(pm_key n, wide_buf *buf)
{
	pm_key_rec *r = (pm_key_rec *) buf->words;
	int			plen = wide_rest_is_entry(n.rest) ? wide_payload_len(n.key, n.rest) : 0;

	if (pm_key_is_min(&n) || pm_key_is_max(&n))
		return n;
#ifndef WIDE_TEST_HOST_ORDER
	/* the first position of a prefix is the fence the tree makes of its key alone */
	if (n.rest == 0 && n.key % (UINT64_C(1) << WIDE_PREFIX_SHIFT) == 0)
		return (pm_key) {WIDE_PREFIX(n.key), WIDE_SEP_REST};
#endif
	r->rest = n.rest;
	r->keylen = 8;
	r->len = 8 + (uint32_t) plen;
	for (int i = 0; i < 8; i++)
		r->data[i] = (uint8_t) (n.key >> wide_shift(i));
	for (int j = 0; j < plen; j++)
		r->data[8 + j] = wide_payload_byte(n.key, n.rest, j);
	return (pm_key) {WIDE_PREFIX(n.key), PM_REST_WIDE | PM_REST_LOCAL | (uintptr_t) r};
}

static void
wide_fail(const char *what, pm_key w)
{
	fprintf(stderr, "wide_shim: %s (key %llx rest %llx)\n", what,
			(unsigned long long) w.key, (unsigned long long) w.rest);
	abort();
}

/*
 * The test's key a returned one stands for; a fence's record may hold its
 * ordering bytes only (a structure whose fences drop the payload).
 */
static pm_key
narrow_of_any(pm_key w, bool fence)
{
	const pm_key_rec *r;
	uint64_t	key = 0;

	if (pm_key_is_min(&w) || pm_key_is_max(&w))
		return w;
#ifndef WIDE_TEST_HOST_ORDER
	/* a fence that the key alone makes: below every entry of its prefix */
	if (w.rest == WIDE_SEP_REST)
		return (pm_key) {w.key << WIDE_PREFIX_SHIFT, 0};
#endif
	if (!pm_rest_is_wide(w.rest) || !(w.rest & PM_REST_LOCAL) || (w.rest & PM_REST_BELOW))
		wide_fail("the tree returned a key that is not a copied wide one", w);
	r = pm_key_rec_of(NULL, w.rest);
	if (r->keylen != 8)
		wide_fail("a returned record has the wrong key length", w);
	for (int i = 0; i < 8; i++)
		key |= (uint64_t) r->data[i] << wide_shift(i);
	if (WIDE_PREFIX(key) != w.key)
		wide_fail("a returned record does not belong to its key", w);
	if (wide_rest_is_entry(r->rest) && !(fence && r->len == r->keylen))
	{
		int			plen = wide_payload_len(key, r->rest);

		if (r->len != 8 + (uint32_t) plen)
			wide_fail("a returned record has the wrong payload length", w);
		for (int j = 0; j < plen; j++)
			if (r->data[8 + j] != wide_payload_byte(key, r->rest, j))
				wide_fail("a returned record's payload differs", w);
	}
	return (pm_key) {key, r->rest};
}

static pm_key
narrow_of(pm_key w)
{
	return narrow_of_any(w, false);
}

typedef struct wide_arena
{
	size_t		used;
	uint64_t	words[WIDE_ARENA / 8];
} wide_arena;

static inline const pm_key_rec *
wide_copy(void *ctx, const pm_key_rec *rec)
{
	wide_arena *a = ctx;
	size_t		size = (sizeof(*rec) + rec->len + 7) & ~(size_t) 7;
	void	   *dst = (char *) a->words + a->used;

	if (a->used + size > sizeof(a->words))
		wide_fail("copy arena exhausted", PM_KEY_MIN);
	memcpy(dst, rec, sizeof(*rec) + rec->len);
	a->used += size;
	return dst;
}

#endif							/* WIDE_SHIM_H */
