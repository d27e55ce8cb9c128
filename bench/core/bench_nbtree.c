/*
 * bench_nbtree.c
 *	  Core NBTree micro-benchmark, no server: insert N random 8-byte keys
 *	  (with distinct TID-like rests), look each up, and rebuild the DRAM
 *	  layer from the pool, with 1..T threads.
 *
 *	  bench/bin/bench_nbtree [--keys N] [--threads T] [--dir DIR] [--mode eadr|adr]
 *
 * Prints CSV: phase,threads,keys,seconds,mops_per_s,flushes_per_op,fences_per_op
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "nbtree.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bench_common.h"

typedef struct shared
{
	pm_pool    *pool;
	pm_alloc	dram;
	void	   *arena;
	pm_epoch_domain *dom;
	uint64_t	dram_root;
	uint64_t   *keys;
	long		nkeys;
} shared;

typedef struct worker
{
	shared	   *sh;
	int			id;
	int			nthreads;
	int			phase;			/* 0 insert, 1 search */
	long		found;
	pm_counters counters;
} worker;

static void
free_cb(void *ctx, uint32_t space, uint32_t tag, uint64_t off)
{
	shared	   *sh = ctx;
	pm_error	err;
	pm_alloc	a;

	(void) tag;
	if (space == 1)
	{
		pm_alloc_attach_pool(&a, sh->pool);
		pm_free_block(&a, off, &err);
	}
	else
		pm_free_block(&sh->dram, off, &err);
}

static bool
thread_alive(uint64_t owner)
{
	(void) owner;
	return true;
}

static void *
run(void *arg)
{
	worker	   *w = arg;
	shared	   *sh = w->sh;
	pm_epoch_handle h;
	pm_alloc	dram;
	nbt_tree	t;
	pm_error	err;
	pm_counters before = pm_tls_counters;
	nbt_batch	b;

	pm_alloc_attach_arena(&dram, sh->arena, "bench arena");
	pm_epoch_register(sh->dom, ((uint64_t) getpid()) | ((uint64_t) (w->id + 1) << 32), -1, free_cb, sh,
					  thread_alive, &h, &err);
	nbt_attach(&t, sh->pool, &dram, &h, 1, 0, 2, sh->dram_root);
	for (long i = w->id; i < sh->nkeys; i += w->nthreads)
	{
		nbt_skey	sk = {sh->keys[i], (uint64_t) i + 1};

		if (w->phase == 0)
		{
			if (nbt_insert(&t, &sk, &err) != PM_OK)
			{
				fprintf(stderr, "insert: %s\n", err.msg);
				exit(1);
			}
		}
		else
		{
			nbt_skey	lo = {sh->keys[i], 1};
			nbt_skey	hi = {sh->keys[i], NBT_REST_MAX};

			long		n = 0;

			/* as a scan does: a key's entries may start in the next leaf */
			nbt_read_range(&t, &lo, false, &lo, &hi, &b);
			n += b.n;
			while (n == 0 && nbt_skey_cmp(&b.high, &hi) <= 0)
			{
				nbt_skey	from = b.high;

				nbt_read_range(&t, &from, false, &lo, &hi, &b);
				n += b.n;
			}
			w->found += n > 0;
		}
	}
	pm_epoch_drain(&h);
	pm_epoch_unregister(&h);
	w->counters.flushes = pm_tls_counters.flushes - before.flushes;
	w->counters.fences = pm_tls_counters.fences - before.fences;
	return NULL;
}

static void
phase(shared *sh, int phase_no, int threads, const char *name)
{
	pthread_t	tid[64];
	worker		w[64];
	double		t0 = bench_now();
	double		secs;
	long		found = 0;
	uint64_t	flushes = 0,
				fences = 0;

	for (int i = 0; i < threads; i++)
	{
		memset(&w[i], 0, sizeof(w[i]));
		w[i].sh = sh;
		w[i].id = i;
		w[i].nthreads = threads;
		w[i].phase = phase_no;
		pthread_create(&tid[i], NULL, run, &w[i]);
	}
	for (int i = 0; i < threads; i++)
	{
		pthread_join(tid[i], NULL);
		found += w[i].found;
		flushes += w[i].counters.flushes;
		fences += w[i].counters.fences;
	}
	secs = bench_now() - t0;
	printf("%s,%d,%ld,%.3f,%.3f,%.3f,%.3f\n", name, threads, sh->nkeys, secs, sh->nkeys / secs / 1e6,
		   (double) flushes / sh->nkeys, (double) fences / sh->nkeys);
	if (phase_no == 1 && found != sh->nkeys)
	{
		fprintf(stderr, "search found %ld of %ld keys\n", found, sh->nkeys);
		exit(1);
	}
	fflush(stdout);
}

int
main(int argc, char **argv)
{
	long		nkeys = 16000000;
	int			max_threads = 1;
	const char *dir = "/dev/shm";
	pm_mode		mode = PM_MODE_EADR;
	char		path[512];
	size_t		arena_size = (size_t) 2 << 30;
	uint64_t	seed = 88172645463325252ULL;

	for (int i = 1; i < argc; i++)
	{
		if (strcmp(argv[i], "--keys") == 0 && i + 1 < argc)
			nkeys = atol(argv[++i]);
		else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
			max_threads = atoi(argv[++i]);
		else if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc)
			dir = argv[++i];
		else if (strcmp(argv[i], "--mode") == 0 && i + 1 < argc && pm_mode_parse(argv[i + 1], &mode))
			i++;
		else
		{
			fprintf(stderr, "usage: %s [--keys N] [--threads T] [--dir DIR] [--mode eadr|adr]\n", argv[0]);
			return 2;
		}
	}
	if (max_threads < 1 || max_threads > 64)
		max_threads = 1;
	printf("phase,threads,keys,seconds,mops_per_s,flushes_per_op,fences_per_op\n");
	for (int threads = 1; threads <= max_threads; threads *= 2)
	{
		shared		sh;
		pm_pool_create_opts o = {0};
		pm_error	err;
		nbt_tree	t;
		double		t0;

		memset(&sh, 0, sizeof(sh));
		sh.nkeys = nkeys;
		sh.keys = malloc(sizeof(uint64_t) * nkeys);
		for (long i = 0; i < nkeys; i++)
		{
			seed ^= seed << 13;
			seed ^= seed >> 7;
			seed ^= seed << 17;
			sh.keys[i] = seed;
		}
		snprintf(path, sizeof(path), "%s/pm_index_bench_nbtree_%d.pm", dir, (int) getpid());
		o.mode = mode;
		o.replace = true;
		o.owner.kind = PM_KIND_NBTREE;
		if (pm_pool_create(path, &o, &sh.pool, &err) != PM_OK || nbt_format(sh.pool, &err) != PM_OK)
		{
			fprintf(stderr, "%s\n", err.msg);
			return 1;
		}
		sh.arena = mmap(NULL, arena_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		pm_arena_format(sh.arena, arena_size);
		pm_alloc_attach_arena(&sh.dram, sh.arena, "bench arena");
		sh.dom = malloc(pm_epoch_domain_size(64, 4096));
		pm_epoch_domain_init(sh.dom, 64, 4096);
		nbt_attach(&t, sh.pool, &sh.dram, NULL, 1, 0, 2, 0);
		nbt_rebuild(&t, false, &err);
		sh.dram_root = t.dram_root;

		phase(&sh, 0, threads, "insert");
		phase(&sh, 1, threads, "search");

		/* recovery: throw the DRAM layer away and rebuild it from the pool */
		nbt_attach(&t, sh.pool, &sh.dram, NULL, 1, 0, 2, sh.dram_root);
		nbt_release_dram(&t);
		t0 = bench_now();
		if (nbt_rebuild(&t, true, &err) != PM_OK)
		{
			fprintf(stderr, "rebuild: %s\n", err.msg);
			return 1;
		}
		t0 = bench_now() - t0;
		printf("rebuild,1,%ld,%.3f,%.3f,0,0\n", nkeys, t0, nkeys / t0 / 1e6);
		pm_pool_close(sh.pool);
		unlink(path);
		munmap(sh.arena, arena_size);
		free(sh.keys);
		free(sh.dom);
	}
	return 0;
}
