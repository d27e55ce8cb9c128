/*
 * bench_common.h
 *	  Helpers shared by the core micro-benchmarks (bench_common.c): keys,
 *	  errors, and the set-up of an NBTree under test (pool, DRAM arena, epoch
 *	  domain, per-thread handles).
 */
#ifndef PM_BENCH_COMMON_H
#define PM_BENCH_COMMON_H

#include "bench_args.h"
#include "mono_clock.h"
#include "nbtree.h"

#define BENCH_MAX_THREADS	64

/* Print a message to stderr and exit 1 (set-up failures, failed checks). */
extern void bench_die(const char *fmt,...) __attribute__((format(printf, 1, 2), noreturn));

/*
 * The i-th key of a run: a bijective mix of i, so keys are distinct,
 * spread uniformly over 64 bits, and computable from i without a table.
 */
extern uint64_t bench_key(uint64_t seed, uint64_t i);

/* A pool, DRAM arena and epoch domain holding one NBTree. */
typedef struct bench_nbt_env
{
	pm_pool    *pool;
	void	   *arena;			/* the DRAM tier */
	size_t		arena_size;
	pm_epoch_domain *dom;
	uint64_t	dram_root;		/* changes with bench_nbt_rebuild_dram */
	char		path[512];
} bench_nbt_env;

/* One thread's handle on the tree of an env. */
typedef struct bench_nbt_thread
{
	pm_alloc	dram;
	pm_epoch_handle epoch;
	nbt_tree	tree;
} bench_nbt_thread;

/* Create the pool file DIR/pm_index_<name>_<pid>.pm and an empty tree; exits on failure. */
extern void bench_nbt_create(bench_nbt_env *env, const char *dir, const char *name, pm_mode mode);

/* Close and remove the pool, free the arena and the domain. */
extern void bench_nbt_destroy(bench_nbt_env *env);

/* Register thread_id (0..BENCH_MAX_THREADS-1) with the epoch domain and attach. */
extern void bench_nbt_thread_attach(bench_nbt_env *env, bench_nbt_thread *th, int thread_id);

/* Wait until this thread's retired blocks are freed, then leave the domain. */
extern void bench_nbt_thread_detach(bench_nbt_thread *th);

/*
 * Recovery of the DRAM tier: throw it away and rebuild it (and the pool's
 * allocator) from the pool.  No thread may be attached.  Returns the
 * seconds the rebuild took; adds its flushes and fences to *counters.
 */
extern double bench_nbt_rebuild_dram(bench_nbt_env *env, pm_counters *counters);

/*
 * Number of entries of key, read as a PostgreSQL index scan reads them: from
 * the leaf covering (key, 1), then on through following leaves while the
 * leaf's high fence is still within the key.
 */
extern long bench_nbt_count_key(nbt_tree *t, uint64_t key);

/* Flushes and fences this thread issued since before. */
extern pm_counters bench_counters_since(const pm_counters *before);

#endif							/* PM_BENCH_COMMON_H */
