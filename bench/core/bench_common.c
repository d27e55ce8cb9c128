/*
 * bench_common.c
 *	  Helpers shared by the core micro-benchmarks; see bench_common.h.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "bench_common.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Which allocator a retired block goes back to (the attach calls' space_pm / space_dram). */
#define BENCH_SPACE_PM		1
#define BENCH_SPACE_DRAM	2

/* Virtual size of the DRAM arena (threads only); MAP_NORESERVE: only what is used is backed. */
#define BENCH_ARENA_SIZE	((size_t) 2 << 30)
#define BENCH_LIMBO			4096

/* Entries a leaf holds at most, in either structure. */
#define BENCH_LEAF_CAP		(NBT_LEAF_CAP > PHAST_LNODE_CAP ? NBT_LEAF_CAP : PHAST_LNODE_CAP)

void
bench_die(const char *fmt,...)
{
	va_list		ap;

	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

uint64_t
bench_key(uint64_t seed, uint64_t i)
{
	/* SplitMix64's finalizer: a bijection on 64-bit words */
	uint64_t	z = i + seed;

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

const char *const bench_structure_names[BENCH_NSTRUCTURES] = {"nbtree", "phast"};

/* An empty structure in a fresh pool. */
static pm_errcode
format_structure(bench_env *env, uint64_t nkeys, pm_error *err)
{
	if (env->structure == BENCH_NBTREE)
		return nbt_format(env->pool, err);
	/* partitions as phast_pm's CREATE INDEX chooses them; bench_key spreads keys over 64 bits */
	return phast_format(env->pool, phast_parts_for((double) nkeys), 0, UINT64_MAX, err);
}

/* Set up th->tree on env's pool (no allocation); epoch NULL for a caller that is exclusive. */
static void
attach_tree(bench_env *env, bench_thread *th, pm_epoch_handle *epoch)
{
	th->structure = env->structure;
	if (env->structure == BENCH_NBTREE)
		nbt_attach(&th->tree.nbt, env->pool, &th->dram, epoch, BENCH_SPACE_PM, 0,
				   BENCH_SPACE_DRAM, env->dram_root);
	else
		phast_attach(&th->tree.phast, env->pool, &th->dram, epoch, BENCH_SPACE_DRAM,
					 env->dram_root);
}

/* Build the DRAM tier from the pool; sets env->dram_root. */
static void
rebuild_tree(bench_env *env, bench_thread *th, bool recover_alloc)
{
	pm_error	err;

	if ((th->structure == BENCH_NBTREE ? nbt_rebuild(&th->tree.nbt, recover_alloc, &err) :
		 phast_rebuild(&th->tree.phast, recover_alloc, &err)) != PM_OK)
		bench_die("%s rebuild: %s", bench_structure_names[th->structure], err.msg);
	env->dram_root = th->structure == BENCH_NBTREE ? th->tree.nbt.dram_root :
		th->tree.phast.dram_root;
}

void
bench_env_create(bench_env *env, bench_structure structure, const char *dir, const char *name,
				 pm_mode mode, uint64_t nkeys)
{
	pm_pool_create_opts opts = {0};
	pm_error	err;
	bench_thread th;

	memset(env, 0, sizeof(*env));
	env->structure = structure;
	snprintf(env->path, sizeof(env->path), "%s/pm_index_%s_%d.pm", dir, name, (int) getpid());
	opts.mode = mode;
	opts.replace = true;
	opts.owner.kind = structure == BENCH_NBTREE ? PM_KIND_NBTREE : PM_KIND_PHAST;
	if (pm_pool_create(env->path, &opts, &env->pool, &err) != PM_OK ||
		format_structure(env, nkeys, &err) != PM_OK)
		bench_die("%s", err.msg);
	env->arena_size = BENCH_ARENA_SIZE;
	env->arena = mmap(NULL, env->arena_size, PROT_READ | PROT_WRITE,
					  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (env->arena == MAP_FAILED)
		bench_die("mmap of the DRAM arena failed");
	/* 2 MiB pages where the kernel allows, as PostgreSQL's shared memory with huge_pages */
	(void) madvise(env->arena, env->arena_size, MADV_HUGEPAGE);
	pm_arena_format(env->arena, env->arena_size);
	env->dom = malloc(pm_epoch_domain_size(BENCH_MAX_THREADS, BENCH_LIMBO));
	if (env->dom == NULL)
		bench_die("out of memory");
	pm_epoch_domain_init(env->dom, BENCH_MAX_THREADS, BENCH_LIMBO);

	/* the first DRAM tier of an empty structure */
	pm_alloc_attach_arena(&th.dram, env->arena, "bench arena");
	attach_tree(env, &th, NULL);
	rebuild_tree(env, &th, false);
}

void
bench_env_destroy(bench_env *env)
{
	pm_pool_close(env->pool);
	unlink(env->path);
	munmap(env->arena, env->arena_size);
	free(env->dom);
}

/* Epoch callback: free a retired block to this thread's allocator of its space. */
static void
free_retired(void *ctx, uint32_t space, uint32_t tag, uint64_t off)
{
	bench_thread *th = ctx;
	pm_error	err;

	(void) tag;
	/* only NBTree retires PM blocks */
	pm_free_block(space == BENCH_SPACE_PM ? &th->tree.nbt.pm : &th->dram, off, &err);
}

/* Every participant is a thread of this process, alive until it detaches. */
static bool
thread_alive(uint64_t owner)
{
	(void) owner;
	return true;
}

void
bench_thread_attach(bench_env *env, bench_thread *th, int thread_id)
{
	pm_error	err;
	uint64_t	token = (uint64_t) getpid() | ((uint64_t) (thread_id + 1) << 32);

	pm_alloc_attach_arena(&th->dram, env->arena, "bench arena");
	if (pm_epoch_register(env->dom, token, -1, free_retired, th, thread_alive,
						  &th->epoch, &err) != PM_OK)
		bench_die("epoch register: %s", err.msg);
	attach_tree(env, th, &th->epoch);
}

void
bench_thread_detach(bench_thread *th)
{
	pm_epoch_drain(&th->epoch);
	pm_epoch_unregister(&th->epoch);
}

double
bench_rebuild_dram(bench_env *env, pm_counters *counters)
{
	bench_thread th;
	pm_counters before;
	pm_counters used;
	double		start;
	double		seconds;

	pm_alloc_attach_arena(&th.dram, env->arena, "bench arena");
	attach_tree(env, &th, NULL);
	if (env->structure == BENCH_NBTREE)
		nbt_release_dram(&th.tree.nbt);
	else
		phast_release_dram(&th.tree.phast);
	before = pm_tls_counters;
	start = now_sec();
	rebuild_tree(env, &th, true);
	seconds = now_sec() - start;
	used = bench_counters_since(&before);
	counters->flushes += used.flushes;
	counters->fences += used.fences;
	return seconds;
}

void
bench_insert(bench_thread *th, const pm_key *k)
{
	pm_error	err;

	if ((th->structure == BENCH_NBTREE ? nbt_insert(&th->tree.nbt, k, &err) :
		 phast_insert(&th->tree.phast, k, &err)) != PM_OK)
		bench_die("%s insert: %s", bench_structure_names[th->structure], err.msg);
}

bool
bench_delete(bench_thread *th, const pm_key *k)
{
	pm_error	err;
	bool		found;

	if ((th->structure == BENCH_NBTREE ? nbt_delete(&th->tree.nbt, k, &found, &err) :
		 phast_delete(&th->tree.phast, k, &found, &err)) != PM_OK)
		bench_die("%s delete: %s", bench_structure_names[th->structure], err.msg);
	return found;
}

/*
 * The entries in [lo, hi] of the leaf covering from, from it on, sorted,
 * into out (room for BENCH_LEAF_CAP); *high is the leaf's high fence.
 */
static int
read_leaf(bench_thread *th, const pm_key *from, const pm_key *lo, const pm_key *hi,
		  pm_key *out, pm_key *high)
{
	int			n = 0;

	if (th->structure == BENCH_NBTREE)
	{
		nbt_batch	b;

		nbt_read_range(&th->tree.nbt, from, false, lo, hi, &b);
		for (; n < b.n; n++)
			out[n] = b.e[n].sk;
		*high = b.high;
	}
	else
	{
		phast_batch b;

		phast_read_range(&th->tree.phast, from, false, lo, hi, &b);
		for (; n < b.n; n++)
			out[n] = b.e[n];
		*high = b.high;
	}
	return n;
}

long
bench_count_key(bench_thread *th, uint64_t key)
{
	pm_key		lo = {key, 1};
	pm_key		hi = {key, NBT_REST_MAX};	/* PHAST_REST_MAX alike */
	pm_key		entries[BENCH_LEAF_CAP];
	pm_key		high;
	long		n;

	n = read_leaf(th, &lo, &lo, &hi, entries, &high);
	while (!pm_key_is_max(&high) && pm_key_cmp(&high, &hi) <= 0)
	{
		pm_key		from = high;

		n += read_leaf(th, &from, &lo, &hi, entries, &high);
	}
	return n;
}

int
bench_scan(bench_thread *th, const pm_key *from, int limit, pm_key *out)
{
	pm_key		position = *from;
	pm_key		entries[BENCH_LEAF_CAP];
	pm_key		high;
	int			n = 0;

	for (;;)
	{
		int			got = read_leaf(th, &position, from, &PM_KEY_MAX, entries, &high);

		for (int i = 0; i < got && n < limit; i++)
			out[n++] = entries[i];
		if (n == limit || pm_key_is_max(&high))
			return n;
		position = high;
	}
}

pm_counters
bench_counters_since(const pm_counters *before)
{
	pm_counters d;

	d.flushes = pm_tls_counters.flushes - before->flushes;
	d.fences = pm_tls_counters.fences - before->fences;
	return d;
}
