/*
 * nbt_wide_shim.h
 *	  With NBT_TEST_WIDE defined, a test of the nbtree runs on wide entries
 *	  (wide_shim.h): payloads on both sides of NBT_PACKED_MAX (8 + 72 bytes
 *	  still pack), and with NBT_TEST_HOST_ORDER, records in a host order.
 *	  Without it this header does nothing.
 */
#ifndef NBT_WIDE_SHIM_H
#define NBT_WIDE_SHIM_H
#ifdef NBT_TEST_WIDE

#ifdef NBT_TEST_HOST_ORDER
#define WIDE_TEST_HOST_ORDER
#endif
#define WIDE_ARENA			(3 * NBT_LEAF_CAP * 128)
#include "wide_shim.h"

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
