/*
 * bench_nbtree.c
 *	  Core micro-benchmark of the ordered structures, no server: insert N
 *	  random 8-byte keys (with distinct TID-like rests), look each up, and
 *	  rebuild the DRAM layer from the pool, with 1..T threads; NBTree, and
 *	  PhaST on request.
 *
 *	  bench/bin/bench_nbtree [--keys N] [--threads T] [--dir DIR] [--mode eadr|adr]
 *	      [--structure nbtree,phast]
 *
 * Prints CSV: phase,structure,threads,keys,seconds,mops_per_s,flushes_per_op,fences_per_op
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"

#define KEY_SEED	UINT64_C(88172645463325252)

typedef struct worker
{
	bench_env  *env;
	long		nkeys;
	int			id;
	int			nthreads;
	int			phase;			/* 0 insert, 1 search */
	long		found;
	pm_counters counters;
} worker;

static void *
run(void *arg)
{
	worker	   *w = arg;
	bench_thread th;
	pm_counters before = pm_tls_counters;

	bench_thread_attach(w->env, &th, w->id);
	for (long i = w->id; i < w->nkeys; i += w->nthreads)
	{
		uint64_t	key = bench_key(KEY_SEED, (uint64_t) i);

		if (w->phase == 0)
		{
			pm_key		k = {key, (uint64_t) i + 1};

			bench_insert(&th, &k);
		}
		else
			w->found += bench_count_key(&th, key) > 0;
	}
	bench_thread_detach(&th);
	w->counters = bench_counters_since(&before);
	return NULL;
}

static void
phase(bench_env *env, long nkeys, int phase_no, int threads, const char *name)
{
	pthread_t	tid[BENCH_MAX_THREADS];
	worker		w[BENCH_MAX_THREADS];
	double		t0 = now_sec();
	double		secs;
	long		found = 0;
	uint64_t	flushes = 0,
				fences = 0;

	for (int i = 0; i < threads; i++)
	{
		memset(&w[i], 0, sizeof(w[i]));
		w[i].env = env;
		w[i].nkeys = nkeys;
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
	secs = now_sec() - t0;
	printf("%s,%s,%d,%ld,%.3f,%.3f,%.3f,%.3f\n", name, bench_structure_names[env->structure],
		   threads, nkeys, secs, nkeys / secs / 1e6, (double) flushes / nkeys,
		   (double) fences / nkeys);
	if (phase_no == 1 && found != nkeys)
		bench_die("search found %ld of %ld keys", found, nkeys);
	fflush(stdout);
}

int
main(int argc, char **argv)
{
	long		nkeys = 16000000;
	long		max_threads = 1;
	const char *dir = "/dev/shm";
	pm_mode		mode = PM_MODE_EADR;
	bool		selected[BENCH_NSTRUCTURES] = {true, false};	/* phast on request */

	for (int i = 1; i < argc; i++)
	{
		if (strcmp(argv[i], "--keys") == 0 && i + 1 < argc &&
			bench_parse_count(argv[i + 1], 1, BENCH_MAX_COUNT, &nkeys))
			i++;
		else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc &&
				 bench_parse_count(argv[i + 1], 1, BENCH_MAX_THREADS, &max_threads))
			i++;
		else if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc)
			dir = argv[++i];
		else if (strcmp(argv[i], "--mode") == 0 && i + 1 < argc && pm_mode_parse(argv[i + 1], &mode))
			i++;
		else if (strcmp(argv[i], "--structure") == 0 && i + 1 < argc &&
				 bench_parse_list(argv[i + 1], bench_structure_names, BENCH_NSTRUCTURES, selected))
			i++;
		else
		{
			fprintf(stderr, "usage: %s [--keys N] [--threads 1-%d] [--dir DIR] [--mode eadr|adr]\n"
					"       [--structure nbtree,phast]\n", argv[0], BENCH_MAX_THREADS);
			return 2;
		}
	}
	printf("phase,structure,threads,keys,seconds,mops_per_s,flushes_per_op,fences_per_op\n");
	for (int s = 0; s < BENCH_NSTRUCTURES; s++)
	{
		if (!selected[s])
			continue;
		for (int threads = 1; threads <= max_threads; threads *= 2)
		{
			bench_env	env;
			pm_counters unused = {0};
			double		secs;

			bench_env_create(&env, (bench_structure) s, dir, "bench_nbtree", mode, (uint64_t) nkeys);
			phase(&env, nkeys, 0, threads, "insert");
			phase(&env, nkeys, 1, threads, "search");
			secs = bench_rebuild_dram(&env, &unused);
			printf("rebuild,%s,1,%ld,%.3f,%.3f,0,0\n", bench_structure_names[s], nkeys, secs,
				   nkeys / secs / 1e6);
			fflush(stdout);
			bench_env_destroy(&env);
		}
	}
	return 0;
}
