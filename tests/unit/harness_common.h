/*
 * harness_common.h
 *	  What the unit tests of every tree share: a fresh pool of a given kind,
 *	  an epoch domain, registration of a participant with the liveness
 *	  callbacks, a seeded random generator, a clock and file copies.  Each
 *	  tree's harness (nbt_harness.h, fbr_harness.h) adds its own handle on
 *	  top: which allocator frees a retired block, how a tree is attached.
 */
#ifndef PM_HARNESS_COMMON_H
#define PM_HARNESS_COMMON_H

#include "alloc.h"
#include "epoch.h"
#include "mono_clock.h"
#include "pool.h"
#include "tap.h"

#include <sys/mman.h>

#define HARNESS_SLOTS	16		/* epoch participants */
#define HARNESS_LIMBO	4096	/* retired blocks waiting per participant */
#define SPACE_PM		1		/* the (space) of blocks retired from the pool */

/*
 * An epoch domain of slots participants with limbo entries each: shared
 * (across fork: map it once, before any fork) or private to this process
 * (crash tests, which init it again at each simulated restart).
 */
static inline pm_epoch_domain *
harness_domain_sized(bool shared, int slots, int limbo)
{
	void	   *dom = mmap(NULL, pm_epoch_domain_size(slots, limbo), PROT_READ | PROT_WRITE,
						   (shared ? MAP_SHARED : MAP_PRIVATE) | MAP_ANONYMOUS, -1, 0);

	if (dom == MAP_FAILED)
	{
		perror("mmap");
		exit(2);
	}
	pm_epoch_domain_init(dom, slots, limbo);
	return dom;
}

/* A DRAM arena of bytes in shared memory (across fork: map it once, before any fork), formatted. */
static inline void *
harness_arena(size_t bytes)
{
	void	   *arena = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE,
							 -1, 0);

	if (arena == MAP_FAILED)
	{
		perror("mmap");
		exit(2);
	}
	pm_arena_format(arena, bytes);
	return arena;
}

/* The tests' usual domain: HARNESS_SLOTS x HARNESS_LIMBO, shared across fork. */
static inline pm_epoch_domain *
harness_domain(void)
{
	return harness_domain_sized(true, HARNESS_SLOTS, HARNESS_LIMBO);
}

static inline void
harness_domain_unmap(pm_epoch_domain *dom)
{
	munmap(dom, pm_epoch_domain_size(HARNESS_SLOTS, HARNESS_LIMBO));
}

/* A participant's token is its process id in the low 32 bits (threads: a number above). */
static inline bool
harness_token_alive(uint64_t owner)
{
	return pm_epoch_pid_alive(owner & 0xffffffff);
}

/* Crash tests: the one process of a simulated run is alive until the restart. */
static inline bool
harness_always_alive(uint64_t owner)
{
	(void) owner;
	return true;
}

/*
 * Register a process or thread (token: harness_token_alive's form) whose
 * retired blocks free_fn(ctx, ...) frees; false (and a message) on failure.
 */
static inline bool
harness_register(pm_epoch_domain *dom, uint64_t token, pm_epoch_free_fn free_fn, void *ctx,
				 pm_epoch_handle *h)
{
	pm_error	err;

	if (pm_epoch_register(dom, token, -1, free_fn, ctx, harness_token_alive, h, &err) != PM_OK)
	{
		fprintf(stderr, "epoch register: %s\n", err.msg);
		return false;
	}
	return true;
}

/* A fresh pool (replacing any file at path) owned by kind and formatted by format (if not NULL); exits on failure. */
static inline pm_pool *
harness_pool(const char *path, pm_mode mode, uint64_t max_size, uint32_t kind,
			 pm_errcode (*format) (pm_pool *pool, pm_error *err))
{
	pm_pool_create_opts o = {0};
	pm_pool    *pool;
	pm_error	err;

	o.mode = mode;
	o.max_size = max_size;
	o.replace = true;
	o.owner.kind = kind;
	if (pm_pool_create(path, &o, &pool, &err) != PM_OK || (format != NULL && format(pool, &err) != PM_OK))
	{
		fprintf(stderr, "pool: %s\n", err.msg);
		exit(2);
	}
	return pool;
}

/* xorshift64: a seeded, reproducible random sequence (seed != 0). */
static inline uint64_t
xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Copy a (pool) file, keeping it sparse; true on success. */
static inline bool
copy_file(const char *from, const char *to)
{
	char		cmd[1300];

	snprintf(cmd, sizeof(cmd), "cp --sparse=always '%s' '%s'", from, to);
	return system(cmd) == 0;
}

/*
 * How many records of len data bytes each a lane of an operation log holds
 * below position pos (tips/olog.h): records of one size fill each segment
 * alike, and a record that no longer fits starts the next segment.
 */
static inline uint64_t
olog_records_below(uint64_t pos, uint32_t len)
{
	uint64_t	stride = 16 + (len + 7) / 8 * 8;
	uint64_t	seg_data = PM_ALLOC_MAX_BLOCK - 16;

	return pos / seg_data * (seg_data / stride) + pos % seg_data / stride;
}

#endif							/* PM_HARNESS_COMMON_H */
