/*
 * bench_common.h
 *	  Helpers shared by the core micro-benchmarks (bench_common.c): keys,
 *	  errors, and the set-up of an ordered structure under test, NBTree or
 *	  PhaST (pool, DRAM arena, epoch domain, per-thread handles), with the
 *	  operations the benchmarks run on either.
 */
#ifndef PM_BENCH_COMMON_H
#define PM_BENCH_COMMON_H

#include "bench_args.h"
#include "mono_clock.h"
#include "nbtree.h"
#include "phast.h"

#define BENCH_MAX_THREADS	64

/* Print a message to stderr and exit 1 (set-up failures, failed checks). */
extern void bench_die(const char *fmt,...) __attribute__((format(printf, 1, 2), noreturn));

/*
 * The i-th key of a run: a bijective mix of i, so keys are distinct,
 * spread uniformly over 64 bits, and computable from i without a table.
 */
extern uint64_t bench_key(uint64_t seed, uint64_t i);

/* The ordered structures of src/core: persistent leaves in a pool, a DRAM tier over them. */
typedef enum bench_structure
{
	BENCH_NBTREE,
	BENCH_PHAST
} bench_structure;

#define BENCH_NSTRUCTURES	2

/* Their names on the command line and in the output, by bench_structure. */
extern const char *const bench_structure_names[BENCH_NSTRUCTURES];

/* A pool, DRAM arena and epoch domain holding one structure. */
typedef struct bench_env
{
	bench_structure structure;
	pm_pool    *pool;
	void	   *arena;			/* the DRAM tier */
	size_t		arena_size;
	pm_epoch_domain *dom;
	uint64_t	dram_root;		/* changes with bench_rebuild_dram */
	char		path[512];
} bench_env;

/* One thread's handle on the structure of an env. */
typedef struct bench_thread
{
	bench_structure structure;
	pm_alloc	dram;
	pm_epoch_handle epoch;
	union
	{
		nbt_tree	nbt;
		phast_tree	phast;
	}			tree;
} bench_thread;

/*
 * Create the pool file DIR/pm_index_<name>_<pid>.pm and an empty structure
 * for about nkeys keys spread over 64 bits (PhaST: its partitions, as
 * phast_pm's CREATE INDEX picks them for that many entries); exits on
 * failure.
 */
extern void bench_env_create(bench_env *env, bench_structure structure, const char *dir,
							 const char *name, pm_mode mode, uint64_t nkeys);

/* Close and remove the pool, free the arena and the domain. */
extern void bench_env_destroy(bench_env *env);

/* Register thread_id (0..BENCH_MAX_THREADS-1) with the epoch domain and attach. */
extern void bench_thread_attach(bench_env *env, bench_thread *th, int thread_id);

/* Wait until this thread's retired blocks are freed, then leave the domain. */
extern void bench_thread_detach(bench_thread *th);

/*
 * Recovery of the DRAM tier: throw it away and rebuild it (and the pool's
 * allocator) from the pool.  No thread may be attached.  Returns the
 * seconds the rebuild took; adds its flushes and fences to *counters.
 */
extern double bench_rebuild_dram(bench_env *env, pm_counters *counters);

/* Insert the entry (key, rest); exits on failure. */
extern void bench_insert(bench_thread *th, const pm_key *k);

/* Delete the entry (key, rest); whether it was there.  Exits on failure. */
extern bool bench_delete(bench_thread *th, const pm_key *k);

/*
 * Number of entries of key, read as a PostgreSQL index scan reads them: from
 * the leaf covering (key, 1), then on through following leaves while the
 * leaf's high fence is still within the key.
 */
extern long bench_count_key(bench_thread *th, uint64_t key);

/*
 * Up to limit entries from `from` on, in order, read as a forward index scan
 * reads them: leaf by leaf, each continuing from the last one's high fence.
 */
extern int	bench_scan(bench_thread *th, const pm_key *from, int limit, pm_key *out);

/* Flushes and fences this thread issued since before. */
extern pm_counters bench_counters_since(const pm_counters *before);

#endif							/* PM_BENCH_COMMON_H */
