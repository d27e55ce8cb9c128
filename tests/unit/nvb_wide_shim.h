/*
 * nvb_wide_shim.h
 *	  With NVB_TEST_WIDE defined, a test of the NVB-tree runs on a wide tree
 *	  and wide entries (wide_shim.h), one in 64 with a payload of up to 900
 *	  bytes, so that nodes fill by their records' bytes as often as by their
 *	  slots; with NVB_TEST_HOST_ORDER, records in a host order.  Without it
 *	  this header only names what the tests' expectations need of either
 *	  kind: the bytes an entry takes in a leaf, and a leaf's room.
 */
#ifndef NVB_WIDE_SHIM_H
#define NVB_WIDE_SHIM_H

#include "nvbtree.h"

#ifdef NVB_TEST_WIDE

#ifdef NVB_TEST_HOST_ORDER
#define WIDE_TEST_HOST_ORDER
#endif
#define WIDE_PAYLOAD_LONG	900
#define WIDE_SEP_REST		1
#define WIDE_ARENA			((NVB_BATCH_MAX + 2) * 1024)
#include "wide_shim.h"

#define NVB_TEST_KIND		true
#define NVB_TEST_LEAF_ROOM	(8192 - 64 - 32)

/* A leaf's bytes for the entry k stands for: slot, links, record. */
static inline uint64_t
nvb_test_entry_bytes(const nvb_key *k)
{
	return 18 + ((sizeof(pm_key_rec) + 8 + wide_payload_len(k->key, k->rest) + 7) & ~(size_t) 7);
}

static inline pm_errcode
wide_nvb_format(pm_pool *pool, bool wide, const void *host, uint32_t host_len, pm_error *err)
{
	WIDE_ORDER(pool);
	return nvb_format(pool, wide, host, host_len, err);
}

static inline pm_errcode
wide_nvb_insert(nvb_tree *t, const nvb_key *k, pm_error *err)
{
	wide_buf	buf;
	nvb_key		w = wide_of(*k, &buf);

	WIDE_ORDER(t->pool);
	return nvb_insert(t, &w, err);
}

static inline pm_errcode
wide_nvb_delete(nvb_tree *t, const nvb_key *k, bool *found, pm_error *err)
{
	wide_buf	buf;
	nvb_key		w = wide_of(*k, &buf);

	WIDE_ORDER(t->pool);
	return nvb_delete(t, &w, found, err);
}

static inline pm_errcode
wide_nvb_tidy_leaf(nvb_tree *t, const nvb_key *k, bool *tidied, pm_error *err)
{
	wide_buf	buf;
	nvb_key		w = wide_of(*k, &buf);

	WIDE_ORDER(t->pool);
	return nvb_tidy_leaf(t, &w, tidied, err);
}

/* A read whose records are copied into an arena of this thread's, then turned back. */
static inline pm_errcode
wide_nvb_read_range(nvb_tree *t, const nvb_key *k, bool backward, const nvb_key *lo,
					const nvb_key *hi, nvb_batch *b, nvb_copy_fn copy, void *ctx, pm_error *err)
{
	static __thread wide_arena arena;
	wide_buf	bs,
				bl,
				bh;
	nvb_key		s = wide_of(*k, &bs);
	nvb_key		l = wide_of(*lo, &bl);
	nvb_key		h = wide_of(*hi, &bh);
	pm_errcode	rc;

	(void) copy;
	(void) ctx;
	arena.used = 0;
	WIDE_ORDER(t->pool);
	rc = nvb_read_range(t, &s, backward, &l, &h, b, wide_copy, &arena, err);
	if (rc != PM_OK)
		return rc;
	for (int i = 0; i < b->n; i++)
		b->e[i] = narrow_of(b->e[i]);
	b->low = narrow_of_any(b->low, true);
	b->high = narrow_of_any(b->high, true);
	return PM_OK;
}

typedef struct wide_nvb_load
{
	bool		(*next) (void *ctx, nvb_key *k);
	void	   *ctx;
	wide_buf	buf;
} wide_nvb_load;

static inline bool
wide_nvb_next(void *ctx, nvb_key *k)
{
	wide_nvb_load *w = ctx;
	nvb_key		n;

	if (!w->next(w->ctx, &n))
		return false;
	*k = wide_of(n, &w->buf);
	return true;
}

static inline pm_errcode
wide_nvb_bulk_load(pm_pool *pool, int fill_pct, bool (*next) (void *ctx, nvb_key *k), void *ctx,
				   pm_error *err)
{
	wide_nvb_load w = {next, ctx, {{0}}};

	WIDE_ORDER(pool);
	return nvb_bulk_load(pool, fill_pct, wide_nvb_next, &w, err);
}

static inline const char *
wide_nvb_check(nvb_tree *t, uint64_t *entries)
{
	WIDE_ORDER(t->pool);
	return nvb_check(t, entries);
}

/*
 * Insert or delete (key, record): rest and len data bytes, of which keylen
 * order it, made from seed (the first 8 ordering bytes seed's, big-endian).
 */
static inline pm_errcode
nvb_test_record_op(nvb_tree *t, bool insert, uint64_t key, uint64_t rest, uint32_t keylen,
				   uint32_t len, uint64_t seed, pm_error *err)
{
	pm_key_rec *r = malloc(sizeof(pm_key_rec) + len);
	nvb_key		k = {key, PM_REST_WIDE | PM_REST_LOCAL | (uintptr_t) r};
	bool		found;
	pm_errcode	rc;

	if (r == NULL)
		wide_fail("out of memory for a record", PM_KEY_MIN);
	r->rest = rest;
	r->keylen = keylen;
	r->len = len;
	for (uint32_t i = 0; i < len; i++)
		r->data[i] = i < 8 ? (uint8_t) (seed >> (56 - 8 * i)) : (uint8_t) (seed + i);
	WIDE_ORDER(t->pool);
	rc = insert ? nvb_insert(t, &k, err) : nvb_delete(t, &k, &found, err);
	free(r);
	return rc;
}

/* The key a test's k stands for, for the tree's own functions (its record in buf). */
static inline nvb_key
nvb_test_key(const nvb_tree *t, nvb_key k, wide_buf *buf)
{
	WIDE_ORDER(t->pool);
	return wide_of(k, buf);
}

#define nvb_format(pool, wide, host, len, err)	wide_nvb_format(pool, true, host, len, err)
#define nvb_insert			wide_nvb_insert
#define nvb_delete			wide_nvb_delete
#define nvb_tidy_leaf		wide_nvb_tidy_leaf
#define nvb_read_range		wide_nvb_read_range
#define nvb_bulk_load		wide_nvb_bulk_load
#define nvb_check			wide_nvb_check

#else							/* !NVB_TEST_WIDE */

#define NVB_TEST_KIND		false
#define NVB_TEST_LEAF_ROOM	(NVB_LEAF_CAP * 18)

typedef struct wide_buf
{
	char		unused;
} wide_buf;

static inline nvb_key
nvb_test_key(const nvb_tree *t, nvb_key k, wide_buf *buf)
{
	(void) t;
	(void) buf;
	return k;
}

static inline uint64_t
nvb_test_entry_bytes(const nvb_key *k)
{
	(void) k;
	return 18;
}

#endif							/* NVB_TEST_WIDE */
#endif							/* NVB_WIDE_SHIM_H */
