/*
 * nvb_harness.h
 *	  Shared set-up for the NVB-tree unit tests: a pool, a DRAM arena (the
 *	  lock table) and an epoch domain in shared memory, and a handle over
 *	  them (what every structure's tests share is in harness_common.h).
 */
#ifndef PM_NVB_HARNESS_H
#define PM_NVB_HARNESS_H

#include "harness_common.h"
#include "nvbtree.h"
#include "nvb_wide_shim.h"

#define HARNESS_ARENA	(16u << 20)

typedef struct harness
{
	pm_pool    *pool;
	pm_alloc	dram;
	pm_epoch_handle epoch;
	nvb_tree	tree;
	void	   *arena;			/* shared across fork */
	pm_epoch_domain *dom;		/* shared across fork */
} harness;

/* The NVB-tree retires pool blocks only (replaced nodes). */
static void
harness_free(void *ctx, uint32_t space, uint32_t tag, uint64_t off)
{
	harness    *h = ctx;
	pm_error	err;

	(void) space;
	(void) tag;
	pm_free_block(&h->tree.pm, off, &err);
}

/* Map the shared memory once (before any fork). */
static inline void
harness_shared(harness *h)
{
	h->arena = harness_arena(HARNESS_ARENA);
	h->dom = harness_domain();
}

/* Attach this process (or thread: token distinguishes) to pool and the shared state. */
static inline void
harness_attach(harness *h, pm_pool *pool, uint64_t token, uint64_t dram_root)
{
	h->pool = pool;
	pm_alloc_attach_arena(&h->dram, h->arena, "test DRAM arena");
	if (!harness_register(h->dom, token, harness_free, h, &h->epoch))
		exit(2);
	nvb_attach(&h->tree, pool, &h->dram, &h->epoch, SPACE_PM, 0, dram_root);
}

/* Open the tree's pool for use (the allocator recovered, the lock table made); exits on failure. */
static inline void
harness_open(harness *h)
{
	pm_error	err;

	if (nvb_open(&h->tree, &err) != PM_OK)
	{
		fprintf(stderr, "nvb_open: %s\n", err.msg);
		exit(2);
	}
}

/*
 * Close the tree and its pool: its retired blocks freed first (the epoch's
 * free callback frees into the pool attached now).
 */
static inline void
harness_close(harness *h)
{
	pm_epoch_drain(&h->epoch);
	nvb_release_dram(&h->tree);
	pm_pool_close(h->pool);
	h->pool = NULL;
}

static pm_errcode
harness_format(pm_pool *pool, pm_error *err)
{
	return nvb_format(pool, NVB_TEST_KIND, NULL, 0, err);
}

/* A fresh pool with an empty tree. */
static inline pm_pool *
harness_new_nvb(const char *path, pm_mode mode, uint64_t max_size)
{
	return harness_pool(path, mode, max_size, PM_KIND_NVBTREE, harness_format);
}

#endif							/* PM_NVB_HARNESS_H */
