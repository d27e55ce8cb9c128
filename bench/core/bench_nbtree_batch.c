/*
 * bench_nbtree_batch.c
 *	  Core micro-benchmark of NBTree's batch insert (nbt_insert_sorted), no
 *	  server, one thread: into a tree of M random entries, insert N more
 *	  random keys (a) one at a time in their random order (nbt_insert), (b)
 *	  in batches of B sorted keys, still one nbt_insert each (the order's
 *	  cache locality alone), and (c) in the same sorted batches through
 *	  nbt_insert_sorted (leaf and level-1 node reused).  The same N keys
 *	  every time, each variant on a tree of its own built alike.
 *
 *	  bench/bin/bench_nbtree_batch [--sizes M[,M...]] [--keys N] [--batch B]
 *	      [--dir DIR] [--mode eadr|adr]
 *
 * The M entries are loaded in sorted batches of B random keys
 * (nbt_insert_sorted, which spreads them over the tree as random inserts
 * do, only faster).  Defaults: M = 1000000,10000000, N = M / 10, B = 8192,
 * pool in /dev/shm, eadr.  The batches are sorted before the clock starts
 * (a batch's caller has them sorted).  Prints a table: ns per inserted
 * entry per variant, by the clock and by the thread's CPU time (which other
 * load on the machine does not inflate), and the speed-ups of (c) over (a)
 * and (b).  No timing is checked.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_common.h"

#define LOAD_SEED	UINT64_C(0x6a09e667f3bcc908)
#define NEW_SEED	UINT64_C(0xbb67ae8584caa73b)
#define MAX_SIZES	8

typedef enum variant
{
	ONE_BY_ONE,					/* random order, nbt_insert */
	SORTED_SINGLE,				/* sorted batches, nbt_insert per entry */
	SORTED_BATCH				/* sorted batches, nbt_insert_sorted */
} variant;

#define NVARIANTS	3

static const char *const variant_names[NVARIANTS] = {
	"one at a time", "sorted, nbt_insert", "nbt_insert_sorted"
};

static int
key_cmp(const void *a, const void *b)
{
	const pm_key *x = a;
	const pm_key *y = b;

	return pm_key_cmp(x, y);
}

/* keys i in [from, from + n) of a seeded stream, rest i + 1 (distinct entries) */
static void
make_keys(pm_key *out, uint64_t seed, long from, long n)
{
	for (long i = 0; i < n; i++)
		out[i] = (pm_key) {bench_key(seed, (uint64_t) (from + i)), (uint64_t) (from + i) + 1};
}

static void
insert_batch(bench_thread *th, const pm_key *k, int n)
{
	pm_error	err;
	int			done;

	if (nbt_insert_sorted(&th->tree.nbt, k, n, &done, &err) != PM_OK)
		bench_die("nbt_insert_sorted: entry %d of %d: %s", done, n, err.msg);
}

/* Load m random entries in sorted batches of b. */
static void
load(bench_thread *th, long m, int b, pm_key *buf)
{
	for (long i = 0; i < m; i += b)
	{
		int			n = (int) (m - i < b ? m - i : b);

		make_keys(buf, LOAD_SEED, i, n);
		qsort(buf, (size_t) n, sizeof(pm_key), key_cmp);
		insert_batch(th, buf, n);
	}
}

/* This thread's CPU time: what other load on the machine takes from it does not count. */
static double
cpu_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double) ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Insert the n keys as variant v: keys in their random order, or sorted, the
 * batches of b of them each sorted beforehand (the caller of a batch insert
 * has them sorted already).  *wall and *cpu get the seconds taken.
 */
static void
run_variant(bench_thread *th, variant v, const pm_key *keys, const pm_key *sorted, long n,
			int b, double *wall, double *cpu)
{
	double		t0 = now_sec();
	double		c0 = cpu_sec();

	for (long i = 0; i < n; i += b)
	{
		int			m = (int) (n - i < b ? n - i : b);

		if (v == ONE_BY_ONE)
			for (int j = 0; j < m; j++)
				bench_insert(th, &keys[i + j]);
		else if (v == SORTED_SINGLE)
			for (int j = 0; j < m; j++)
				bench_insert(th, &sorted[i + j]);
		else
			insert_batch(th, &sorted[i], m);
	}
	*cpu = cpu_sec() - c0;
	*wall = now_sec() - t0;
}

int
main(int argc, char **argv)
{
	long		sizes[MAX_SIZES] = {1000000, 10000000};
	int			nsizes = 2;
	long		nkeys = 0;		/* 0: M / 10 */
	long		batch = 8192;
	const char *dir = "/dev/shm";
	pm_mode		mode = PM_MODE_EADR;

	for (int i = 1; i < argc; i++)
	{
		if (strcmp(argv[i], "--sizes") == 0 && i + 1 < argc)
		{
			char	   *copy = strdup(argv[++i]);
			char	   *save = NULL;

			nsizes = 0;
			for (char *s = strtok_r(copy, ",", &save); s != NULL; s = strtok_r(NULL, ",", &save))
				if (nsizes == MAX_SIZES || !bench_parse_count(s, 0, BENCH_MAX_COUNT, &sizes[nsizes++]))
					goto usage;
			free(copy);
			if (nsizes == 0)
				goto usage;
		}
		else if (strcmp(argv[i], "--keys") == 0 && i + 1 < argc &&
				 bench_parse_count(argv[i + 1], 1, BENCH_MAX_COUNT, &nkeys))
			i++;
		else if (strcmp(argv[i], "--batch") == 0 && i + 1 < argc &&
				 bench_parse_count(argv[i + 1], 1, 1 << 20, &batch))
			i++;
		else if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc)
			dir = argv[++i];
		else if (strcmp(argv[i], "--mode") == 0 && i + 1 < argc && pm_mode_parse(argv[i + 1], &mode))
			i++;
		else
			goto usage;
	}
	printf("%12s %10s %6s  %-20s %9s %9s %9s\n", "tree entries", "inserted", "batch", "variant",
		   "seconds", "ns/entry", "cpu ns");
	for (int s = 0; s < nsizes; s++)
	{
		long		m = sizes[s];
		long		n = nkeys > 0 ? nkeys : (m / 10 > 0 ? m / 10 : 1);
		pm_key	   *keys = malloc((size_t) n * sizeof(pm_key));
		pm_key	   *sorted = malloc((size_t) n * sizeof(pm_key));
		pm_key	   *buf = malloc((size_t) batch * sizeof(pm_key));
		double		ns[NVARIANTS];
		double		cpu_ns[NVARIANTS];

		if (keys == NULL || sorted == NULL || buf == NULL)
			bench_die("out of memory");
		make_keys(keys, NEW_SEED, 0, n);
		memcpy(sorted, keys, (size_t) n * sizeof(pm_key));
		for (long i = 0; i < n; i += batch)
			qsort(&sorted[i], (size_t) (n - i < batch ? n - i : batch), sizeof(pm_key), key_cmp);
		for (int v = 0; v < NVARIANTS; v++)
		{
			bench_env	env;
			bench_thread th;
			double		secs;
			double		cpu;

			bench_env_create(&env, BENCH_NBTREE, dir, "bench_nbtree_batch", mode,
							 (uint64_t) (m + n));
			bench_thread_attach(&env, &th, 0);
			load(&th, m, (int) batch, buf);
			run_variant(&th, (variant) v, keys, sorted, n, (int) batch, &secs, &cpu);
			ns[v] = secs * 1e9 / n;
			cpu_ns[v] = cpu * 1e9 / n;
			printf("%12ld %10ld %6ld  %-20s %9.3f %9.1f %9.1f\n", m, n, batch, variant_names[v],
				   secs, ns[v], cpu_ns[v]);
			fflush(stdout);
			bench_thread_detach(&th);
			bench_env_destroy(&env);
		}
		printf("%12ld %10ld %6ld  %-20s %9s %8.2fx %8.2fx\n", m, n, batch, "speed-up (a)/(c)", "",
			   ns[ONE_BY_ONE] / ns[SORTED_BATCH], cpu_ns[ONE_BY_ONE] / cpu_ns[SORTED_BATCH]);
		printf("%12ld %10ld %6ld  %-20s %9s %8.2fx %8.2fx\n", m, n, batch, "speed-up (b)/(c)", "",
			   ns[SORTED_SINGLE] / ns[SORTED_BATCH], cpu_ns[SORTED_SINGLE] / cpu_ns[SORTED_BATCH]);
		fflush(stdout);
		free(keys);
		free(sorted);
		free(buf);
	}
	return 0;

usage:
	fprintf(stderr, "usage: %s [--sizes M[,M...]] [--keys N] [--batch B] [--dir DIR] "
			"[--mode eadr|adr]\n", argv[0]);
	return 2;
}
