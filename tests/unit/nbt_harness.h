/*
 * nbt_harness.h
 *	  Shared set-up for the nbtree unit tests: a pool, a DRAM arena, an epoch
 *	  domain in shared memory, and a tree handle over them.
 */
#ifndef PM_NBT_HARNESS_H
#define PM_NBT_HARNESS_H

#include "nbtree.h"
#include "tap.h"

#include <sys/mman.h>

#define HARNESS_ARENA	(256u << 20)
#define HARNESS_SLOTS	16
#define SPACE_PM		1
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

static inline bool
harness_token_alive(uint64_t owner)
{
	return pm_epoch_pid_alive(owner & 0xffffffff);
}

/* Map the shared memory once (before any fork). */
static inline void
harness_shared(harness *h)
{
	size_t		dsize = pm_epoch_domain_size(HARNESS_SLOTS, 4096);

	h->arena = mmap(NULL, HARNESS_ARENA, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	h->dom = mmap(NULL, dsize, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (h->arena == MAP_FAILED || h->dom == MAP_FAILED)
	{
		perror("mmap");
		exit(2);
	}
	pm_arena_format(h->arena, HARNESS_ARENA);
	pm_epoch_domain_init(h->dom, HARNESS_SLOTS, 4096);
}

/* Attach this process (or thread: token distinguishes) to pool and shared state. */
static inline void
harness_attach(harness *h, pm_pool *pool, uint64_t token, uint64_t dram_root)
{
	pm_error	err;

	h->pool = pool;
	pm_alloc_attach_arena(&h->dram, h->arena, "test DRAM arena");
	if (pm_epoch_register(h->dom, token, -1, harness_free, h, harness_token_alive, &h->epoch, &err) != PM_OK)
	{
		fprintf(stderr, "epoch register: %s\n", err.msg);
		exit(2);
	}
	nbt_attach(&h->tree, pool, &h->dram, &h->epoch, SPACE_PM, 0, SPACE_DRAM, dram_root);
}

static inline pm_pool *
harness_new_pool(const char *path, pm_mode mode, uint64_t max_size)
{
	pm_pool_create_opts o = {0};
	pm_pool    *pool;
	pm_error	err;

	o.mode = mode;
	o.max_size = max_size;
	o.replace = true;
	o.owner.kind = PM_KIND_NBTREE;
	if (pm_pool_create(path, &o, &pool, &err) != PM_OK || nbt_format(pool, &err) != PM_OK)
	{
		fprintf(stderr, "pool: %s\n", err.msg);
		exit(2);
	}
	return pool;
}

static inline uint64_t
xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

#endif							/* PM_NBT_HARNESS_H */
