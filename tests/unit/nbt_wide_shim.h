/*
 * nbt_wide_shim.h
 *	  With NBT_TEST_WIDE defined, a test of the nbtree runs on wide entries:
 *	  every (key, rest) it passes becomes the wide entry (key >> 12, record
 *	  of the key's 8 bytes big-endian, rest, and payload bytes made from both:
 *	  0-40 of them for most entries, whose records the tree packs, 72-100 for
 *	  one in five, on both sides of NBT_PACKED_MAX: 8 + 72 bytes still pack),
 *	  whose order is the same, and every key the tree returns is
 *	  turned back (its payload checked; a fence (prefix, 0), the tree's
 *	  separator made of a key alone, and the first position of the prefix,
 *	  (prefix << 12, 0), are one another's image), so the test's own checks judge the
 *	  wide paths: prefix ties on every comparison, records stored, copied
 *	  out, retired and recovered.  Without it this header does nothing.
 *
 *	  With NBT_TEST_HOST_ORDER too, a record holds the key's bytes
 *	  little-endian, which memcmp misorders, every entry has the same key,
 *	  and the tree's pool orders records with a host order (pm_key_order)
 *	  that reads them back: the tree is right only where every comparison
 *	  of records goes through the pool's order.
 */
#ifndef NBT_WIDE_SHIM_H
#define NBT_WIDE_SHIM_H
#ifdef NBT_TEST_WIDE

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WIDE_PREFIX_SHIFT	12
#define WIDE_PAYLOAD_MAX	100
#define WIDE_ARENA			(3 * NBT_LEAF_CAP * 128)

/* room for one record: header, the key's 8 bytes, payload */
typedef struct wide_buf
{
	uint64_t	words[(sizeof(pm_key_rec) + 8 + WIDE_PAYLOAD_MAX) / 8 + 1];
} wide_buf;

static int
wide_payload_len(uint64_t key, uint64_t rest)
{
	uint64_t	h = key * 31 + rest * 7;

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
#ifdef NBT_TEST_HOST_ORDER
	return 8 * i;
#else
	return 56 - 8 * i;
#endif
}

#ifdef NBT_TEST_HOST_ORDER
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

static nbt_skey
wide_of(nbt_skey n, wide_buf *buf)
{
	pm_key_rec *r = (pm_key_rec *) buf->words;
	int			plen = wide_rest_is_entry(n.rest) ? wide_payload_len(n.key, n.rest) : 0;

	if (pm_key_is_min(&n) || pm_key_is_max(&n))
		return n;
#ifndef NBT_TEST_HOST_ORDER
	/* the first position of a prefix is the fence the tree makes of its key alone */
	if (n.rest == 0 && n.key % (UINT64_C(1) << WIDE_PREFIX_SHIFT) == 0)
		return (nbt_skey) {WIDE_PREFIX(n.key), 0};
#endif
	r->rest = n.rest;
	r->keylen = 8;
	r->len = 8 + (uint32_t) plen;
	for (int i = 0; i < 8; i++)
		r->data[i] = (uint8_t) (n.key >> wide_shift(i));
	for (int j = 0; j < plen; j++)
		r->data[8 + j] = wide_payload_byte(n.key, n.rest, j);
	return (nbt_skey) {WIDE_PREFIX(n.key), PM_REST_WIDE | PM_REST_LOCAL | (uintptr_t) r};
}

static void
wide_fail(const char *what, nbt_skey w)
{
	fprintf(stderr, "nbt_wide_shim: %s (key %llx rest %llx)\n", what,
			(unsigned long long) w.key, (unsigned long long) w.rest);
	abort();
}

static nbt_skey
narrow_of(nbt_skey w)
{
	const pm_key_rec *r;
	uint64_t	key = 0;

	if (pm_key_is_min(&w) || pm_key_is_max(&w))
		return w;
#ifndef NBT_TEST_HOST_ORDER
	/* a fence that the key alone makes: below every entry of its prefix */
	if (w.rest == 0)
		return (nbt_skey) {w.key << WIDE_PREFIX_SHIFT, 0};
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
	if (wide_rest_is_entry(r->rest))
	{
		int			plen = wide_payload_len(key, r->rest);

		if (r->len != 8 + (uint32_t) plen)
			wide_fail("a returned record has the wrong payload length", w);
		for (int j = 0; j < plen; j++)
			if (r->data[8 + j] != wide_payload_byte(key, r->rest, j))
				wide_fail("a returned record's payload differs", w);
	}
	return (nbt_skey) {key, r->rest};
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

static inline pm_errcode
wide_insert(nbt_tree *t, const nbt_skey *sk, pm_error *err)
{
	wide_buf	buf;
	nbt_skey	w = wide_of(*sk, &buf);

	WIDE_ORDER(t->pool);
	return nbt_insert(t, &w, err);
}

/* A batch: every entry made wide in memory of its own, which lasts the call. */
static inline pm_errcode
wide_insert_sorted(nbt_tree *t, const nbt_skey *sks, int n, int *done, pm_error *err)
{
	wide_buf   *bufs = malloc((size_t) (n > 0 ? n : 1) * sizeof(wide_buf));
	nbt_skey   *w = malloc((size_t) (n > 0 ? n : 1) * sizeof(nbt_skey));
	pm_errcode	rc;

	if (bufs == NULL || w == NULL)
		wide_fail("out of memory for a batch", PM_KEY_MIN);
	for (int i = 0; i < n; i++)
		w[i] = wide_of(sks[i], &bufs[i]);
	WIDE_ORDER(t->pool);
	rc = nbt_insert_sorted(t, w, n, done, err);
	free(w);
	free(bufs);
	return rc;
}

static inline pm_errcode
wide_delete(nbt_tree *t, const nbt_skey *sk, bool *found, pm_error *err)
{
	wide_buf	buf;
	nbt_skey	w = wide_of(*sk, &buf);

	WIDE_ORDER(t->pool);
	return nbt_delete(t, &w, found, err);
}

static inline pm_errcode
wide_compact_leaf(nbt_tree *t, const nbt_skey *sk, bool *compacted, pm_error *err)
{
	wide_buf	buf;
	nbt_skey	w = wide_of(*sk, &buf);

	WIDE_ORDER(t->pool);
	return nbt_compact_leaf(t, &w, compacted, err);
}

static inline void
wide_read_range(nbt_tree *t, const nbt_skey *sk, bool backward, const nbt_skey *lo,
				const nbt_skey *hi, nbt_batch *b)
{
	static __thread wide_arena arena;
	wide_buf	bs,
				bl,
				bh;
	nbt_skey	s = wide_of(*sk, &bs);
	nbt_skey	l = wide_of(*lo, &bl);
	nbt_skey	h = wide_of(*hi, &bh);

	arena.used = 0;
	WIDE_ORDER(t->pool);
	nbt_read_range_copy(t, &s, backward, &l, &h, b, wide_copy, &arena);
	for (int i = 0; i < b->n; i++)
		b->e[i].sk = narrow_of(b->e[i].sk);
	b->low = narrow_of(b->low);
	b->high = narrow_of(b->high);
}

static inline void
wide_read_leaf(nbt_tree *t, const nbt_skey *sk, bool backward, nbt_batch *b)
{
	wide_read_range(t, sk, backward, &PM_KEY_MIN, &PM_KEY_MAX, b);
}

typedef struct wide_load
{
	bool		(*next) (void *ctx, nbt_skey *sk);
	void	   *ctx;
	wide_buf	buf;
} wide_load;

static inline bool
wide_next(void *ctx, nbt_skey *sk)
{
	wide_load  *w = ctx;
	nbt_skey	n;

	if (!w->next(w->ctx, &n))
		return false;
	*sk = wide_of(n, &w->buf);
	return true;
}

static inline pm_errcode
wide_bulk_load(pm_pool *pool, int fill_pct, bool (*next) (void *ctx, nbt_skey *sk), void *ctx,
			   pm_error *err)
{
	wide_load	w = {next, ctx, {{0}}};

	WIDE_ORDER(pool);
	return nbt_bulk_load(pool, fill_pct, wide_next, &w, err);
}

static inline pm_errcode
wide_rebuild(nbt_tree *t, bool recover_alloc, pm_error *err)
{
	WIDE_ORDER(t->pool);
	return nbt_rebuild(t, recover_alloc, err);
}

static inline const char *
wide_check(nbt_tree *t, uint64_t *entries)
{
	WIDE_ORDER(t->pool);
	return nbt_check(t, entries);
}

#define nbt_rebuild			wide_rebuild
#define nbt_check			wide_check
#define nbt_insert			wide_insert
#define nbt_insert_sorted	wide_insert_sorted
#define nbt_delete			wide_delete
#define nbt_compact_leaf	wide_compact_leaf
#define nbt_read_range		wide_read_range
#define nbt_read_leaf		wide_read_leaf
#define nbt_bulk_load		wide_bulk_load

#endif							/* NBT_TEST_WIDE */
#endif							/* NBT_WIDE_SHIM_H */
