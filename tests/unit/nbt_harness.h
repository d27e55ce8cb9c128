/*
 * nbt_harness.h
 *	  Shared set-up for the nbtree unit tests: a pool, a DRAM arena, an epoch
 *	  domain in shared memory, and a tree handle over them (what every tree's
 *	  tests share is in harness_common.h).
 */
#ifndef PM_NBT_HARNESS_H
#define PM_NBT_HARNESS_H

#include "harness_common.h"
#include "nbt_internal.h"

#define HARNESS_ARENA	(256u << 20)
#define SPACE_DRAM		2

typedef struct harness
{
	pm_pool    *pool;
	pm_alloc	dram;
	pm_epoch_handle epoch;
	nbt_tree	tree;
	void	   *arena;			/* shared across fork */
	pm_epoch_domain *dom;		/* shared across fork */
} harness;

/* Free a retired block: space says which allocator (the tests' epoch callbacks). */
static inline void
harness_free_to(pm_alloc *pm, pm_alloc *dram, uint32_t space, uint64_t off)
{
	pm_error	err;

	pm_free_block(space == SPACE_PM ? pm : dram, off, &err);
}

static void
harness_free(void *ctx, uint32_t space, uint32_t tag, uint64_t off)
{
	harness    *h = ctx;

	(void) tag;
	harness_free_to(&h->tree.pm, &h->dram, space, off);
}

/* Map the shared memory once (before any fork). */
static inline void
harness_shared(harness *h)
{
	h->arena = harness_arena(HARNESS_ARENA);
	h->dom = harness_domain();
}

/* Attach this process (or thread: token distinguishes) to pool and shared state. */
static inline void
harness_attach(harness *h, pm_pool *pool, uint64_t token, uint64_t dram_root)
{
	h->pool = pool;
	pm_alloc_attach_arena(&h->dram, h->arena, "test DRAM arena");
	if (!harness_register(h->dom, token, harness_free, h, &h->epoch))
		exit(2);
	nbt_attach(&h->tree, pool, &h->dram, &h->epoch, SPACE_PM, 0, SPACE_DRAM, dram_root);
}

/*
 * The wide entries' records of their own a KV block names (at most
 * NBT_LEAF_CAP + 1): each slot's, and the low fence's if no slot names it
 * (packed records are part of the block).  The tests' own
 * count of what the tree reaches, independent of its recovery code.
 */
static inline int
harness_kv_records(const nbt_kv *kv, uint64_t *out)
{
	int			n = 0;
	bool		low_named = false;

	for (int pos = 0; pos < (int) nbt_kv_slots(kv); pos++)
	{
		uint64_t	rest = kv->slot[pos].val & NBT_VAL_REST;

		if (kv->slot[pos].val != 0 && pm_rest_is_wide(rest))
		{
			out[n++] = rest & PM_REST_ADDR;
			low_named |= rest == kv->low.rest;
		}
	}
	if (pm_rest_is_wide(kv->low.rest) && !low_named)
		out[n++] = kv->low.rest & PM_REST_ADDR;
	return n;
}

static inline pm_pool *
harness_new_pool(const char *path, pm_mode mode, uint64_t max_size)
{
	return harness_pool(path, mode, max_size, PM_KIND_NBTREE, nbt_format);
}

#endif							/* PM_NBT_HARNESS_H */
