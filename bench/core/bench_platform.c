/*
 * bench_platform.c
 *	  Micro-benchmark of the platform primitives, no server: allocator
 *	  alloc/free pairs on a pool, epoch enter/exit and retire on a DRAM arena
 *	  (1, 2, 4 ... N threads), and persist of one cache line in each
 *	  persistence mode (1 thread).
 *
 *	  bench/bin/bench_platform [--threads N] [--ops N] [--dir DIR]
 *
 * Prints CSV: benchmark,threads,ops,seconds,mops_per_s,flushes_per_op,fences_per_op
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "alloc.h"
#include "epoch.h"
#include "pool.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bench_common.h"

/* retired blocks an epoch participant may hold before it must wait */
#define EPOCH_LIMBO 1024

/* msync persists a page per call: its mode runs this many times fewer operations */
#define PERSIST_MSYNC_DIVISOR 100

/* The pool file, removed at any exit (bench_die exits from worker threads too) */
static char pool_path[512];

static void
remove_pool(void)
{
	unlink(pool_path);
}

typedef struct job
{
	const char *name;
	pm_alloc   *alloc;			/* shared allocator, or NULL */
	pm_pool    *pool;
	pm_epoch_domain *dom;
	long		ops;
	int			id;
	pm_counters counters;		/* this thread's flushes/fences */
} job;

static void
free_or_die(pm_alloc *a, uint64_t off)
{
	pm_error	err;

	if (pm_free_block(a, off, &err) != PM_OK)
		bench_die("free of block %llu: %s", (unsigned long long) off, err.msg);
}

/* The epoch domain's callback for a retired block: give it back to the arena. */
static void
free_retired(void *ctx, uint32_t space, uint32_t tag, uint64_t off)
{
	(void) space;
	(void) tag;
	free_or_die(ctx, off);
}

static uint64_t
alloc_or_die(pm_alloc *a, size_t size)
{
	pm_error	err;
	uint64_t	off = pm_alloc_block(a, size, &err);

	if (off == 0)
		bench_die("allocation of %zu bytes: %s", size, err.msg);
	return off;
}

static void *
run_job(void *arg)
{
	job		   *j = arg;
	pm_counters before = pm_tls_counters;
	pm_error	err;

	if (strcmp(j->name, "alloc_free") == 0)
	{
		uint64_t	ring[64] = {0};

		for (long i = 0; i < j->ops; i++)
		{
			int			k = (int) (i & 63);

			if (ring[k])
				free_or_die(j->alloc, ring[k]);
			ring[k] = alloc_or_die(j->alloc, 1024);
		}
		for (int k = 0; k < 64; k++)
			if (ring[k])
				free_or_die(j->alloc, ring[k]);
	}
	else if (strcmp(j->name, "epoch_enter_exit") == 0 || strcmp(j->name, "epoch_retire") == 0)
	{
		pm_epoch_handle h;
		bool		retire = strcmp(j->name, "epoch_retire") == 0;

		if (pm_epoch_register(j->dom, (uint64_t) getpid() | ((uint64_t) (j->id + 1) << 32), j->id,
							  free_retired, j->alloc, NULL, &h, &err) != PM_OK)
			bench_die("epoch registration: %s", err.msg);
		for (long i = 0; i < j->ops; i++)
		{
			pm_epoch_enter(&h);
			if (retire)
				pm_epoch_retire(&h, 0, 0, alloc_or_die(j->alloc, 64));
			pm_epoch_exit(&h);
		}
		pm_epoch_drain(&h);
		pm_epoch_unregister(&h);
	}
	else
	{
		/* persist one line per op: a store, then flush + drain */
		uint64_t   *line = (uint64_t *) pm_pool_addr(j->pool, PM_POOL_HEADER_SIZE + PM_CHUNK_HEADER_SIZE +
													 (uint64_t) j->id * 4096);

		for (long i = 0; i < j->ops; i++)
		{
			pm_store_relaxed(line, (uint64_t) i);
			pm_persist(&j->pool->persist, line, 8);
		}
	}
	j->counters.flushes = pm_tls_counters.flushes - before.flushes;
	j->counters.fences = pm_tls_counters.fences - before.fences;
	return NULL;
}

static void
run(const char *name, const char *variant, long threads, long ops, pm_alloc *a, pm_pool *pool,
	pm_epoch_domain *dom)
{
	pthread_t	t[BENCH_MAX_THREADS];
	job			jobs[BENCH_MAX_THREADS];
	double		t0,
				secs;
	uint64_t	flushes = 0,
				fences = 0;

	for (int i = 0; i < threads; i++)
	{
		jobs[i] = (job) {name, a, pool, dom, ops, i, {0, 0}};
	}
	t0 = now_sec();
	for (int i = 0; i < threads; i++)
		pthread_create(&t[i], NULL, run_job, &jobs[i]);
	for (int i = 0; i < threads; i++)
	{
		pthread_join(t[i], NULL);
		flushes += jobs[i].counters.flushes;
		fences += jobs[i].counters.fences;
	}
	secs = now_sec() - t0;
	printf("%s%s,%ld,%ld,%.3f,%.2f,%.2f,%.2f\n", name, variant, threads, ops * threads, secs,
		   ops * threads / secs / 1e6, (double) flushes / (ops * threads),
		   (double) fences / (ops * threads));
	fflush(stdout);
}

int
main(int argc, char **argv)
{
	long		threads = 2;
	long		ops = 2000000;
	const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
	pm_pool_create_opts o = {0};
	pm_pool    *pool;
	pm_alloc	a;
	pm_error	err;
	size_t		arena_size = 64u << 20;
	void	   *arena = mmap(NULL, arena_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	size_t		dsize;
	pm_epoch_domain *dom;

	for (int i = 1; i < argc; i++)
	{
		if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc &&
			bench_parse_count(argv[i + 1], 1, BENCH_MAX_THREADS, &threads))
			i++;
		else if (strcmp(argv[i], "--ops") == 0 && i + 1 < argc &&
				 bench_parse_count(argv[i + 1], PERSIST_MSYNC_DIVISOR, BENCH_MAX_COUNT, &ops))
			i++;
		else if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc)
			dir = argv[++i];
		else
		{
			fprintf(stderr, "usage: %s [--threads 1-%d] [--ops N >= %d] [--dir DIR]\n", argv[0],
					BENCH_MAX_THREADS, PERSIST_MSYNC_DIVISOR);
			return 2;
		}
	}
	if (arena == MAP_FAILED)
		bench_die("mmap of the arena failed");
	dsize = pm_epoch_domain_size(BENCH_MAX_THREADS, EPOCH_LIMBO);
	dom = malloc(dsize);
	if (dom == NULL)
		bench_die("out of memory");
	snprintf(pool_path, sizeof(pool_path), "%s/pm_index_bench_%d.pm", dir, (int) getpid());
	atexit(remove_pool);
	o.mode = PM_MODE_EADR;
	o.initial_size = 64u << 20;
	o.replace = true;
	if (pm_pool_create(pool_path, &o, &pool, &err) != PM_OK)
		bench_die("%s", err.msg);
	printf("benchmark,threads,ops,seconds,mops_per_s,flushes_per_op,fences_per_op\n");
	pm_alloc_attach_pool(&a, pool);
	for (int t = 1; t <= threads; t *= 2)
		run("alloc_free", "_pool", t, ops, &a, pool, NULL);
	pm_arena_format(arena, arena_size);
	pm_alloc_attach_arena(&a, arena, "bench arena");
	for (int t = 1; t <= threads; t *= 2)
	{
		pm_epoch_domain_init(dom, BENCH_MAX_THREADS, EPOCH_LIMBO);
		run("epoch_enter_exit", "", t, ops, &a, pool, dom);
		pm_epoch_domain_init(dom, BENCH_MAX_THREADS, EPOCH_LIMBO);
		run("epoch_retire", "", t, ops / 4, &a, pool, dom);
	}
	pm_pool_close(pool);
	for (pm_mode m = PM_MODE_EADR; m <= PM_MODE_MSYNC; m++)
	{
		char		variant[32];

		if (pm_pool_open(pool_path, m, &pool, &err) != PM_OK)
			bench_die("%s", err.msg);
		snprintf(variant, sizeof(variant), "_%s", pm_mode_name(m));
		run("persist_line", variant, 1, m == PM_MODE_MSYNC ? ops / PERSIST_MSYNC_DIVISOR : ops, &a, pool, NULL);
		pm_pool_close(pool);
	}
	return 0;
}
