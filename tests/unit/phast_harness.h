/*
 * phast_harness.h
 *	  Shared set-up for the PhaST unit tests: a pool, a DRAM arena and an
 *	  epoch domain in shared memory, and a handle over them (what every
 *	  structure's tests share is in harness_common.h).
 */
#ifndef PM_PHAST_HARNESS_H
#define PM_PHAST_HARNESS_H

#include "harness_common.h"
#include "phast.h"

#define HARNESS_ARENA	(256u << 20)
#define SPACE_DRAM		2

typedef struct harness
{
	pm_pool    *pool;
	pm_alloc	dram;
	pm_epoch_handle epoch;
	phast_tree	tree;
	void	   *arena;			/* shared across fork */
	pm_epoch_domain *dom;		/* shared across fork */
} harness;

/* PhaST retires only DRAM blocks (index caches). */
static void
harness_free(void *ctx, uint32_t space, uint32_t tag, uint64_t off)
{
	harness    *h = ctx;
	pm_error	err;

	(void) space;
	(void) tag;
	pm_free_block(&h->dram, off, &err);
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
	phast_attach(&h->tree, pool, &h->dram, &h->epoch, SPACE_DRAM, dram_root);
}

/* A fresh pool with a formatted structure of nparts partitions over [lo, hi]. */
static inline pm_pool *
harness_new_phast(const char *path, pm_mode mode, uint64_t max_size, int nparts, uint64_t lo,
				  uint64_t hi)
{
	pm_pool    *pool = harness_pool(path, mode, max_size, PM_KIND_PHAST, NULL);
	pm_error	err;

	if (phast_format(pool, nparts, lo, hi, &err) != PM_OK)
	{
		fprintf(stderr, "pool: %s\n", err.msg);
		exit(2);
	}
	return pool;
}

#endif							/* PM_PHAST_HARNESS_H */
