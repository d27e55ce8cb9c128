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

/* Which allocator a retired block goes back to (nbt_attach's space_pm / space_dram). */
#define BENCH_SPACE_PM		1
#define BENCH_SPACE_DRAM	2

/* Virtual size of the DRAM arena (threads only); MAP_NORESERVE: only what is used is backed. */
#define BENCH_ARENA_SIZE	((size_t) 2 << 30)
#define BENCH_LIMBO			4096

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

void
bench_nbt_create(bench_nbt_env *env, const char *dir, const char *name, pm_mode mode)
{
	pm_pool_create_opts opts = {0};
	pm_error	err;
	pm_alloc	dram;
	nbt_tree	t;

	memset(env, 0, sizeof(*env));
	snprintf(env->path, sizeof(env->path), "%s/pm_index_%s_%d.pm", dir, name, (int) getpid());
	opts.mode = mode;
	opts.replace = true;
	opts.owner.kind = PM_KIND_NBTREE;
	if (pm_pool_create(env->path, &opts, &env->pool, &err) != PM_OK ||
		nbt_format(env->pool, &err) != PM_OK)
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

	/* the first DRAM tier of an empty tree */
	pm_alloc_attach_arena(&dram, env->arena, "bench arena");
	nbt_attach(&t, env->pool, &dram, NULL, BENCH_SPACE_PM, 0, BENCH_SPACE_DRAM, 0);
	if (nbt_rebuild(&t, false, &err) != PM_OK)
		bench_die("rebuild: %s", err.msg);
	env->dram_root = t.dram_root;
}

void
bench_nbt_destroy(bench_nbt_env *env)
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
	bench_nbt_thread *th = ctx;
	pm_error	err;

	(void) tag;
	pm_free_block(space == BENCH_SPACE_PM ? &th->tree.pm : &th->dram, off, &err);
}

/* Every participant is a thread of this process, alive until it detaches. */
static bool
thread_alive(uint64_t owner)
{
	(void) owner;
	return true;
}

void
bench_nbt_thread_attach(bench_nbt_env *env, bench_nbt_thread *th, int thread_id)
{
	pm_error	err;
	uint64_t	token = (uint64_t) getpid() | ((uint64_t) (thread_id + 1) << 32);

	pm_alloc_attach_arena(&th->dram, env->arena, "bench arena");
	if (pm_epoch_register(env->dom, token, -1, free_retired, th, thread_alive,
						  &th->epoch, &err) != PM_OK)
		bench_die("epoch register: %s", err.msg);
	nbt_attach(&th->tree, env->pool, &th->dram, &th->epoch, BENCH_SPACE_PM, 0,
			   BENCH_SPACE_DRAM, env->dram_root);
}

void
bench_nbt_thread_detach(bench_nbt_thread *th)
{
	pm_epoch_drain(&th->epoch);
	pm_epoch_unregister(&th->epoch);
}

double
bench_nbt_rebuild_dram(bench_nbt_env *env, pm_counters *counters)
{
	pm_alloc	dram;
	nbt_tree	t;
	pm_error	err;
	pm_counters before;
	pm_counters used;
	double		start;
	double		seconds;

	pm_alloc_attach_arena(&dram, env->arena, "bench arena");
	nbt_attach(&t, env->pool, &dram, NULL, BENCH_SPACE_PM, 0, BENCH_SPACE_DRAM, env->dram_root);
	nbt_release_dram(&t);
	before = pm_tls_counters;
	start = now_sec();
	if (nbt_rebuild(&t, true, &err) != PM_OK)
		bench_die("rebuild: %s", err.msg);
	seconds = now_sec() - start;
	used = bench_counters_since(&before);
	counters->flushes += used.flushes;
	counters->fences += used.fences;
	env->dram_root = t.dram_root;
	return seconds;
}

long
bench_nbt_count_key(nbt_tree *t, uint64_t key)
{
	nbt_skey	lo = {key, 1};
	nbt_skey	hi = {key, NBT_REST_MAX};
	nbt_batch	b;
	long		n;

	nbt_read_range(t, &lo, false, &lo, &hi, &b);
	n = b.n;
	while (!pm_key_is_max(&b.high) && pm_key_cmp(&b.high, &hi) <= 0)
	{
		nbt_skey	from = b.high;

		nbt_read_range(t, &from, false, &lo, &hi, &b);
		n += b.n;
	}
	return n;
}

pm_counters
bench_counters_since(const pm_counters *before)
{
	pm_counters d;

	d.flushes = pm_tls_counters.flushes - before->flushes;
	d.fences = pm_tls_counters.fences - before->fences;
	return d;
}
