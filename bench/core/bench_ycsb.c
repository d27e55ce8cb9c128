/*
 * bench_ycsb.c
 *	  The YCSB core workloads on the index structures of src/core, no server:
 *	  NBTree (persistent leaves in a pool, DRAM inner tier), PhaST (persistent
 *	  LNodes in a pool, DRAM skiplists over them) and, as a reference point, a
 *	  DRAM-only B+-tree under one global lock (baseline_btree.c).
 *
 *	  bench/bin/bench_ycsb [--keys N] [--ops N] [--threads T]
 *	      [--workload load,a,b,c,d,e,f] [--dist uniform|zipf] [--mode eadr|adr]
 *	      [--dir DIR] [--structure nbtree,phast,baseline] [--seed S]
 *
 * YCSB is a key-value benchmark; here it runs on an index whose entries are
 * (key, rest) pairs, rest being the TID-like tie-breaker of a PostgreSQL
 * index entry.  Keys are 8-byte, distinct, and spread over 64 bits (YCSB
 * hashes its key numbers too).  The operations map as follows:
 *
 *	  read    all entries of one key, read as PostgreSQL's index scan reads
 *	          them (bench_count_key);
 *	  update  insert (key, new rest), then delete (key, old rest): what a
 *	          non-HOT UPDATE does to a secondary index, whose entry must
 *	          point at the new heap tuple.  The insert comes first so a
 *	          concurrent reader never finds the key absent for good.
 *	          Updates of one key are serialized by a striped lock, as
 *	          PostgreSQL serializes them by the row lock;
 *	  insert  a new key with a new rest;
 *	  scan    entries from (key, 1) on, of a length uniform in 1..100; one op;
 *	  read-modify-write  a read and an update of one key, under its lock.
 *
 * Workloads: load inserts the N keys (always run first; printed if listed);
 * A 50% read / 50% update; B 95/5; C 100% read; D 95% read of the latest
 * keys / 5% insert; E 95% scan / 5% insert; F 50% read / 50%
 * read-modify-write.  They run in the order given, on the same data.
 * Reads, updates and scan starts choose among the N loaded keys, uniformly
 * or by zipf 0.99 (Gray et al.'s generator, as YCSB's ZipfianGenerator,
 * with ranks scrambled by FNV-1a as YCSB's ScrambledZipfianGenerator does,
 * so hot keys are spread over the tree).  D reads the latest keys: zipf
 * over recency whatever --dist says (its rows say dist "latest"); with T
 * threads "latest" is per thread (the thread's own inserts after the load
 * keys), which is YCSB's definition for one thread.
 *
 * The run is repeated for 1, 2, 4, .. T threads on a fresh structure each
 * time; the ops of a workload are split evenly between the threads.  After
 * the load, the DRAM tier of NBTree or PhaST is thrown away and rebuilt
 * from the pool (row "recovery"), and the other workloads run on the
 * rebuilt structure.
 *
 * Every op's latency is taken (the TSC, calibrated against the wall clock
 * over the workload, or clock_gettime where there is no TSC) into a
 * log-linear histogram accurate to 1/64.  Flushes and fences are the
 * pool's per-thread persistence counters; the baseline persists nothing.
 *
 * The benchmark checks its own results and exits 1 on the first problem:
 * every read finds its key (exactly once with one thread), every update
 * finds the old entry, every scan starts at its key, and after each
 * workload a full scan is in order and holds N + inserts entries.
 *
 * CSV on stdout: structure,workload,dist,mode,threads,keys,ops,seconds,mops,
 * p50_ns,p99_ns,p999_ns,flushes_per_op,fences_per_op
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include "baseline_btree.h"
#include "bench_common.h"

#define ZIPF_THETA			0.99
#define SCAN_MAX_LENGTH		100
#define UPDATE_LOCK_STRIPES 4096
/* a lookup is no snapshot: it may fall between a concurrent update's insert and delete */
#define READ_ATTEMPTS		3
#define VERIFY_CHUNK		256
#define NSTRUCTURES			3	/* nbtree, phast, baseline */

/* ---------- workloads ---------- */

typedef enum op_kind
{
	OP_READ,
	OP_UPDATE,
	OP_INSERT,
	OP_SCAN,
	OP_READ_MODIFY_WRITE
} op_kind;

typedef struct workload
{
	const char *name;
	bool		is_load;
	bool		reads_latest;	/* D */
	int			percent[5];		/* by op_kind; sums to 100 */
} workload;

static const workload workloads[] = {
	{"load", true, false, {0, 0, 100, 0, 0}},
	{"a", false, false, {50, 50, 0, 0, 0}},
	{"b", false, false, {95, 5, 0, 0, 0}},
	{"c", false, false, {100, 0, 0, 0, 0}},
	{"d", false, true, {95, 0, 5, 0, 0}},
	{"e", false, false, {0, 0, 5, 95, 0}},
	{"f", false, false, {50, 0, 0, 0, 50}},
};
#define NWORKLOADS	((int) (sizeof(workloads) / sizeof(workloads[0])))

/* ---------- random numbers and the zipf generator ---------- */

/* SplitMix64: a counter through the mixer bench_key already is. */
static inline uint64_t
rng_next(uint64_t *state)
{
	*state += UINT64_C(0x9e3779b97f4a7c15);
	return bench_key(0, *state);
}

/* Uniform in [0, n), by multiply-shift (no division, bias below 2^-64 * n). */
static inline uint64_t
rng_below(uint64_t *state, uint64_t n)
{
	return (uint64_t) (((unsigned __int128) rng_next(state) * n) >> 64);
}

static inline double
rng_unit(uint64_t *state)
{
	return (rng_next(state) >> 11) * 0x1.0p-53;
}

/*
 * Zipf ranks 0..n-1 (rank 0 the most popular) by the method of Gray et al.,
 * "Quickly Generating Billion-Record Synthetic Databases" (SIGMOD 1994), as
 * in YCSB's ZipfianGenerator.
 */
typedef struct zipf_gen
{
	uint64_t	n;
	double		theta;
	double		alpha;
	double		zetan;
	double		eta;
	double		half_pow_theta;
} zipf_gen;

static void
zipf_init(zipf_gen *z, uint64_t n, double theta)
{
	double		zeta2 = 1.0 + pow(0.5, theta);

	z->n = n;
	z->theta = theta;
	z->zetan = 0;
	for (uint64_t i = 1; i <= n; i++)
		z->zetan += 1.0 / pow((double) i, theta);
	z->alpha = 1.0 / (1.0 - theta);
	z->eta = (1.0 - pow(2.0 / n, 1.0 - theta)) / (1.0 - zeta2 / z->zetan);
	z->half_pow_theta = pow(0.5, theta);
}

static uint64_t
zipf_rank(const zipf_gen *z, uint64_t *rng)
{
	double		u = rng_unit(rng);
	double		uz = u * z->zetan;
	uint64_t	rank;

	if (uz < 1.0)
		return 0;
	if (uz < 1.0 + z->half_pow_theta)
		return 1;
	rank = (uint64_t) (z->n * pow(z->eta * u - z->eta + 1.0, z->alpha));
	return rank < z->n ? rank : z->n - 1;
}

/* ---------- latency: a clock and a log-linear histogram ---------- */

static inline uint64_t
ticks_now(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return __rdtsc();
#else
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
#endif
}

/* 2^HIST_SUB_BITS buckets per power of two: a bucket is within 1/64 of its values. */
#define HIST_SUB_BITS	6
#define HIST_BUCKETS	((64 - HIST_SUB_BITS + 1) << HIST_SUB_BITS)

typedef struct latency_hist
{
	uint64_t	total;
	uint64_t	count[HIST_BUCKETS];
} latency_hist;

static inline int
hist_bucket(uint64_t ticks)
{
	int			exponent;

	if (ticks < (1u << HIST_SUB_BITS))
		return (int) ticks;
	exponent = 63 - __builtin_clzll(ticks);
	return ((exponent - HIST_SUB_BITS + 1) << HIST_SUB_BITS) +
		(int) ((ticks >> (exponent - HIST_SUB_BITS)) & ((1u << HIST_SUB_BITS) - 1));
}

/* The middle of the values a bucket holds. */
static double
hist_bucket_value(int bucket)
{
	int			shift;
	uint64_t	sub;

	if (bucket < (1 << HIST_SUB_BITS))
		return bucket;
	shift = (bucket >> HIST_SUB_BITS) - 1;
	sub = bucket & ((1u << HIST_SUB_BITS) - 1);
	return (double) (((1u << HIST_SUB_BITS) + sub) << shift) + ((UINT64_C(1) << shift) - 1) / 2.0;
}

static inline void
hist_record(latency_hist *h, uint64_t ticks)
{
	h->count[hist_bucket(ticks)]++;
	h->total++;
}

static void
hist_merge(latency_hist *into, const latency_hist *from)
{
	into->total += from->total;
	for (int i = 0; i < HIST_BUCKETS; i++)
		into->count[i] += from->count[i];
}

static double
hist_quantile(const latency_hist *h, double q)
{
	uint64_t	rank = (uint64_t) ceil(q * h->total);
	uint64_t	seen = 0;

	for (int i = 0; i < HIST_BUCKETS; i++)
	{
		seen += h->count[i];
		if (seen >= rank && seen > 0)
			return hist_bucket_value(i);
	}
	return 0;
}

/* ---------- the structures under test, behind one interface ---------- */

typedef struct bench_run bench_run;

typedef struct index_ops
{
	const char *name;
	int			pool_structure; /* a bench_structure; -1: the baseline, in DRAM only */
	/* a thread's handle; end gives it back (and drains the pool structure's retired blocks) */
	void	   *(*thread_begin) (bench_run *run, int thread_id);
	void		(*thread_end) (void *handle);
	void		(*insert) (void *handle, const pm_key *sk);
	bool		(*remove) (void *handle, const pm_key *sk);
	long		(*count_key) (void *handle, uint64_t key);
	/* up to limit entries >= from, in order */
	int			(*scan) (void *handle, const pm_key *from, int limit, pm_key *out);
} index_ops;

/* Everything one run (a structure, a thread count) shares between its threads. */
struct bench_run
{
	const index_ops *index;
	bench_env	env;			/* NBTree and PhaST */
	baseline_btree *baseline;	/* baseline only */
	const char *mode_name;
	int			threads;
	uint64_t	nkeys;
	uint64_t	seed;
	bool		zipf_dist;
	const zipf_gen *zipf;		/* over nkeys ranks; NULL when no workload needs it */
	uint64_t   *current_rest;	/* rest of the live entry of each loaded key */
	pthread_mutex_t *update_locks;	/* UPDATE_LOCK_STRIPES; guard current_rest */
	uint64_t	inserted[BENCH_MAX_THREADS];	/* keys each thread inserted after the load */
	uint64_t	rests_taken[BENCH_MAX_THREADS]; /* fresh rests each thread took */
};

static void *
pool_thread_begin(bench_run *run, int thread_id)
{
	bench_thread *th = malloc(sizeof(bench_thread));

	if (th == NULL)
		bench_die("out of memory");
	bench_thread_attach(&run->env, th, thread_id);
	return th;
}

static void
pool_thread_end(void *handle)
{
	bench_thread_detach(handle);
	free(handle);
}

static void
pool_insert(void *handle, const pm_key *k)
{
	bench_insert(handle, k);
}

static bool
pool_remove(void *handle, const pm_key *k)
{
	return bench_delete(handle, k);
}

static long
pool_count_key(void *handle, uint64_t key)
{
	return bench_count_key(handle, key);
}

static int
pool_scan(void *handle, const pm_key *from, int limit, pm_key *out)
{
	return bench_scan(handle, from, limit, out);
}

/* NBTree and PhaST: the same calls, bench_common.c's, on the run's env. */
static const index_ops nbtree_index = {
	"nbtree", BENCH_NBTREE, pool_thread_begin, pool_thread_end, pool_insert, pool_remove,
	pool_count_key, pool_scan
};

static const index_ops phast_index = {
	"phast", BENCH_PHAST, pool_thread_begin, pool_thread_end, pool_insert, pool_remove,
	pool_count_key, pool_scan
};

static void *
baseline_thread_begin(bench_run *run, int thread_id)
{
	(void) thread_id;
	return run->baseline;
}

static void
baseline_thread_end(void *handle)
{
	(void) handle;
}

static void
baseline_insert_entry(void *handle, const pm_key *sk)
{
	baseline_entry e = {sk->key, sk->rest};

	(void) baseline_insert(handle, &e);
}

static bool
baseline_remove(void *handle, const pm_key *sk)
{
	baseline_entry e = {sk->key, sk->rest};

	return baseline_delete(handle, &e);
}

static long
baseline_count(void *handle, uint64_t key)
{
	return baseline_count_key(handle, key);
}

static int
baseline_scan_entries(void *handle, const pm_key *from, int limit, pm_key *out)
{
	baseline_entry start = {from->key, from->rest};
	baseline_entry found[VERIFY_CHUNK];	/* limit is at most VERIFY_CHUNK here */
	int			n = baseline_scan(handle, &start, limit < VERIFY_CHUNK ? limit : VERIFY_CHUNK, found);

	for (int i = 0; i < n; i++)
	{
		out[i].key = found[i].key;
		out[i].rest = found[i].rest;
	}
	return n;
}

static const index_ops baseline_index = {
	"baseline", -1, baseline_thread_begin, baseline_thread_end, baseline_insert_entry,
	baseline_remove, baseline_count, baseline_scan_entries
};

/* ---------- the workers ---------- */

typedef struct worker
{
	bench_run  *run;
	const workload *wl;
	int			id;
	long		ops;
	void	   *handle;
	uint64_t	rng;
	pm_counters counters;
	latency_hist hist;
} worker;

/* A failed check: the benchmark's numbers cannot be trusted, so stop. */
static void
check_failed(worker *w, const char *what, uint64_t key, long n)
{
	bench_die("%s %s: %s: key %016llx, %ld entries", w->run->index->name, w->wl->name, what,
			  (unsigned long long) key, n);
}

static inline uint64_t
key_of(const bench_run *run, uint64_t index)
{
	return bench_key(run->seed, index);
}

/* A loaded key's index, uniform or scrambled zipf. */
static uint64_t
choose_loaded(worker *w)
{
	bench_run  *run = w->run;
	uint64_t	rank;

	if (!run->zipf_dist)
		return rng_below(&w->rng, run->nkeys);
	rank = zipf_rank(run->zipf, &w->rng);
	return pm_fnv1a64(&rank, sizeof(rank)) % run->nkeys;
}

/*
 * Key indexes past the load are numbered per thread: thread t's j-th
 * insert is key index nkeys + j * threads + t, so threads never collide.
 */
static uint64_t
inserted_index(const worker *w, uint64_t j)
{
	return w->run->nkeys + j * w->run->threads + w->id;
}

/* D: zipf over recency, among the loaded keys and this thread's inserts. */
static uint64_t
choose_latest(worker *w)
{
	bench_run  *run = w->run;
	uint64_t	known = run->nkeys + run->inserted[w->id];
	uint64_t	position = known - 1 - zipf_rank(run->zipf, &w->rng);

	return position < run->nkeys ? position : inserted_index(w, position - run->nkeys);
}

/* A rest no entry of this run has had: the TID of a new heap tuple. */
static uint64_t
fresh_rest(worker *w)
{
	bench_run  *run = w->run;

	return run->nkeys + 1 + run->rests_taken[w->id]++ * run->threads + w->id;
}

static void
do_read(worker *w, uint64_t key)
{
	long		most = w->run->threads > 1 ? 2 : 1;	/* 2: mid-update */
	long		n = 0;

	for (int attempt = 0; attempt < READ_ATTEMPTS && n == 0; attempt++)
		n = w->run->index->count_key(w->handle, key);
	if (n < 1 || n > most)
		check_failed(w, "read", key, n);
}

static void
do_update(worker *w, uint64_t index, bool read_first)
{
	bench_run  *run = w->run;
	pthread_mutex_t *lock = &run->update_locks[index % UPDATE_LOCK_STRIPES];
	pm_key		old_entry;
	pm_key		new_entry;
	long		n;

	old_entry.key = new_entry.key = key_of(run, index);
	pthread_mutex_lock(lock);
	if (read_first && (n = run->index->count_key(w->handle, old_entry.key)) != 1)
		check_failed(w, "read of read-modify-write", old_entry.key, n);
	old_entry.rest = run->current_rest[index];
	new_entry.rest = fresh_rest(w);
	run->index->insert(w->handle, &new_entry);
	if (!run->index->remove(w->handle, &old_entry))
		check_failed(w, "update found no old entry", old_entry.key, 0);
	run->current_rest[index] = new_entry.rest;
	pthread_mutex_unlock(lock);
}

static void
do_insert(worker *w)
{
	bench_run  *run = w->run;
	pm_key		sk;

	sk.key = key_of(run, inserted_index(w, run->inserted[w->id]));
	sk.rest = fresh_rest(w);
	run->index->insert(w->handle, &sk);
	run->inserted[w->id]++;
}

static void
do_scan(worker *w)
{
	pm_key		from = {key_of(w->run, choose_loaded(w)), 1};
	int			length = 1 + (int) rng_below(&w->rng, SCAN_MAX_LENGTH);
	pm_key		out[SCAN_MAX_LENGTH];
	int			n = w->run->index->scan(w->handle, &from, length, out);

	/* the start key is loaded and E deletes nothing */
	if (n < 1 || out[0].key != from.key)
		check_failed(w, "scan did not start at its key", from.key, n);
}

static op_kind
choose_op(worker *w)
{
	int			dice = (int) rng_below(&w->rng, 100);
	int			kind = 0;

	while (dice >= w->wl->percent[kind])
		dice -= w->wl->percent[kind++];
	return (op_kind) kind;
}

static void
do_op(worker *w)
{
	switch (choose_op(w))
	{
		case OP_READ:
			do_read(w, key_of(w->run, w->wl->reads_latest ? choose_latest(w) : choose_loaded(w)));
			break;
		case OP_UPDATE:
			do_update(w, choose_loaded(w), false);
			break;
		case OP_INSERT:
			do_insert(w);
			break;
		case OP_SCAN:
			do_scan(w);
			break;
		case OP_READ_MODIFY_WRITE:
			do_update(w, choose_loaded(w), true);
			break;
	}
}

static void *
run_worker(void *arg)
{
	worker	   *w = arg;
	bench_run  *run = w->run;
	pm_counters before;
	uint64_t	last;

	w->handle = run->index->thread_begin(run, w->id);
	before = pm_tls_counters;
	last = ticks_now();
	for (long i = 0; i < w->ops; i++)
	{
		uint64_t	now;

		if (w->wl->is_load)
		{
			/* thread t loads keys t, t + T, ...; key i's first rest is i + 1 */
			uint64_t	index = (uint64_t) i * run->threads + w->id;
			pm_key		sk = {key_of(run, index), index + 1};

			run->index->insert(w->handle, &sk);
		}
		else
			do_op(w);
		now = ticks_now();
		hist_record(&w->hist, now - last);
		last = now;
	}
	w->counters = bench_counters_since(&before);
	run->index->thread_end(w->handle);
	return NULL;
}

/* ---------- runs and output ---------- */

/* A full scan must be in order and hold every loaded and inserted key once. */
static void
verify_contents(bench_run *run, const char *after)
{
	void	   *handle = run->index->thread_begin(run, 0);
	uint64_t	expected = run->nkeys;
	uint64_t	seen = 0;
	pm_key		from = PM_KEY_MIN;
	pm_key		out[VERIFY_CHUNK];
	pm_key		previous = PM_KEY_MIN;
	int			n;

	for (int t = 0; t < run->threads; t++)
		expected += run->inserted[t];
	while ((n = run->index->scan(handle, &from, VERIFY_CHUNK, out)) > 0)
	{
		for (int i = 0; i < n; i++)
		{
			if (pm_key_cmp(&out[i], &previous) <= 0)
				bench_die("%s after %s: scan out of order at key %016llx", run->index->name,
						  after, (unsigned long long) out[i].key);
			previous = out[i];
		}
		seen += n;
		from = previous;
		from.rest++;			/* the next identity; rests are below 2^49 */
	}
	run->index->thread_end(handle);
	if (seen != expected)
		bench_die("%s after %s: %llu entries, expected %llu", run->index->name, after,
				  (unsigned long long) seen, (unsigned long long) expected);
}

static void
print_row(const bench_run *run, const char *workload_name, const char *dist, long ops,
		  double seconds, const latency_hist *hist, double ns_per_tick, const pm_counters *c)
{
	printf("%s,%s,%s,%s,%d,%llu,%ld,%.3f,%.3f,", run->index->name, workload_name, dist,
		   run->mode_name, run->threads, (unsigned long long) run->nkeys, ops, seconds,
		   ops / seconds / 1e6);
	if (hist != NULL)
		printf("%.0f,%.0f,%.0f,", hist_quantile(hist, 0.50) * ns_per_tick,
			   hist_quantile(hist, 0.99) * ns_per_tick, hist_quantile(hist, 0.999) * ns_per_tick);
	else
		printf(",,,");
	printf("%.3f,%.3f\n", (double) c->flushes / ops, (double) c->fences / ops);
	fflush(stdout);
}

static void
run_workload(bench_run *run, const workload *wl, long ops, bool print)
{
	pthread_t	tid[BENCH_MAX_THREADS];
	worker	   *workers = calloc(run->threads, sizeof(worker));
	latency_hist *hist = calloc(1, sizeof(latency_hist));
	pm_counters total = {0};
	double		start;
	double		seconds;
	uint64_t	start_ticks;
	double		ns_per_tick;

	if (workers == NULL || hist == NULL)
		bench_die("out of memory");
	start = now_sec();
	start_ticks = ticks_now();
	for (int t = 0; t < run->threads; t++)
	{
		worker	   *w = &workers[t];

		w->run = run;
		w->wl = wl;
		w->id = t;
		w->ops = ops / run->threads + (t < ops % run->threads);
		w->rng = run->seed ^ bench_key(UINT64_C(0x5eed), (uint64_t) (wl - workloads) * BENCH_MAX_THREADS + t);
		pthread_create(&tid[t], NULL, run_worker, w);
	}
	for (int t = 0; t < run->threads; t++)
	{
		pthread_join(tid[t], NULL);
		hist_merge(hist, &workers[t].hist);
		total.flushes += workers[t].counters.flushes;
		total.fences += workers[t].counters.fences;
	}
	seconds = now_sec() - start;
	ns_per_tick = seconds * 1e9 / (double) (ticks_now() - start_ticks);
	verify_contents(run, wl->name);
	if (print)
		print_row(run, wl->name, wl->is_load ? "-" : wl->reads_latest ? "latest" :
				  run->zipf_dist ? "zipf" : "uniform",
				  ops, seconds, hist, ns_per_tick, &total);
	free(workers);
	free(hist);
}

static void
run_structure(bench_run *run, const bool *selected, long ops, const char *dir, pm_mode mode)
{
	bool		in_pool = run->index->pool_structure >= 0;

	if (in_pool)
		bench_env_create(&run->env, run->index->pool_structure, dir, "bench_ycsb", mode,
						 run->nkeys);
	else
		run->baseline = baseline_create();
	for (uint64_t i = 0; i < run->nkeys; i++)
		run->current_rest[i] = i + 1;
	memset(run->inserted, 0, sizeof(run->inserted));
	memset(run->rests_taken, 0, sizeof(run->rests_taken));

	run_workload(run, &workloads[0], (long) run->nkeys, selected[0]);
	if (selected[0] && in_pool)
	{
		pm_counters c = {0};
		double		seconds = bench_rebuild_dram(&run->env, &c);

		verify_contents(run, "recovery");
		print_row(run, "recovery", "-", (long) run->nkeys, seconds, NULL, 0, &c);
	}
	for (int i = 1; i < NWORKLOADS; i++)
		if (selected[i])
			run_workload(run, &workloads[i], ops, true);

	if (in_pool)
		bench_env_destroy(&run->env);
	else
		baseline_destroy(run->baseline);
}

static void
usage(const char *argv0)
{
	fprintf(stderr,
			"usage: %s [--keys N >= 2] [--ops N] [--threads 1-%d] [--workload load,a,b,c,d,e,f]\n"
			"       [--dist uniform|zipf] [--mode eadr|adr] [--dir DIR]\n"
			"       [--structure nbtree,phast,baseline] [--seed S]\n", argv0, BENCH_MAX_THREADS);
	exit(2);
}

int
main(int argc, char **argv)
{
	static const index_ops *const structures[NSTRUCTURES] = {&nbtree_index, &phast_index,
	&baseline_index};
	const char *structure_names[NSTRUCTURES];
	const char *workload_names[NWORKLOADS];
	bool		selected[NWORKLOADS];
	bool		structure_selected[NSTRUCTURES] = {true, false, true};	/* phast on request */
	long		nkeys = 16000000;
	long		ops = 0;			/* 0: as many as keys */
	long		max_threads = 1;
	bool		zipf_dist = false;
	bool		needs_zipf;
	pm_mode		mode = PM_MODE_EADR;
	const char *dir = "/dev/shm";
	uint64_t	seed = UINT64_C(0x243f6a8885a308d3);
	zipf_gen	zipf;
	bench_run  *run;

	for (int i = 0; i < NWORKLOADS; i++)
	{
		workload_names[i] = workloads[i].name;
		selected[i] = true;
	}
	for (int s = 0; s < NSTRUCTURES; s++)
		structure_names[s] = structures[s]->name;
	for (int i = 1; i < argc; i++)
	{
		const char *value = i + 1 < argc ? argv[i + 1] : NULL;

		if (value == NULL)
			usage(argv[0]);
		if (strcmp(argv[i], "--keys") == 0)
		{
			if (!bench_parse_count(value, 2, BENCH_MAX_COUNT, &nkeys))
				usage(argv[0]);
		}
		else if (strcmp(argv[i], "--ops") == 0)
		{
			if (!bench_parse_count(value, 1, BENCH_MAX_COUNT, &ops))
				usage(argv[0]);
		}
		else if (strcmp(argv[i], "--threads") == 0)
		{
			if (!bench_parse_count(value, 1, BENCH_MAX_THREADS, &max_threads))
				usage(argv[0]);
		}
		else if (strcmp(argv[i], "--workload") == 0)
		{
			if (!bench_parse_list(value, workload_names, NWORKLOADS, selected))
				usage(argv[0]);
		}
		else if (strcmp(argv[i], "--dist") == 0 &&
				 (strcmp(value, "uniform") == 0 || strcmp(value, "zipf") == 0))
			zipf_dist = strcmp(value, "zipf") == 0;
		else if (strcmp(argv[i], "--mode") == 0 && pm_mode_parse(value, &mode) &&
				 (mode == PM_MODE_EADR || mode == PM_MODE_ADR))
			;
		else if (strcmp(argv[i], "--dir") == 0)
			dir = value;
		else if (strcmp(argv[i], "--structure") == 0)
		{
			if (!bench_parse_list(value, structure_names, NSTRUCTURES, structure_selected))
				usage(argv[0]);
		}
		else if (strcmp(argv[i], "--seed") == 0)
			seed = strtoull(value, NULL, 0);
		else
			usage(argv[0]);
		i++;
	}
	if (ops == 0)
		ops = nkeys;

	run = calloc(1, sizeof(bench_run));
	if (run == NULL)
		bench_die("out of memory");
	run->nkeys = (uint64_t) nkeys;
	run->seed = seed;
	run->zipf_dist = zipf_dist;
	needs_zipf = zipf_dist;
	for (int i = 0; i < NWORKLOADS; i++)
		needs_zipf |= selected[i] && workloads[i].reads_latest;
	if (needs_zipf)
	{
		zipf_init(&zipf, run->nkeys, ZIPF_THETA);
		run->zipf = &zipf;
	}
	run->current_rest = malloc(sizeof(uint64_t) * run->nkeys);
	run->update_locks = malloc(sizeof(pthread_mutex_t) * UPDATE_LOCK_STRIPES);
	if (run->current_rest == NULL || run->update_locks == NULL)
		bench_die("out of memory");
	for (int i = 0; i < UPDATE_LOCK_STRIPES; i++)
		pthread_mutex_init(&run->update_locks[i], NULL);

	printf("structure,workload,dist,mode,threads,keys,ops,seconds,mops,p50_ns,p99_ns,p999_ns,"
		   "flushes_per_op,fences_per_op\n");
	for (int s = 0; s < NSTRUCTURES; s++)
	{
		if (!structure_selected[s])
			continue;
		run->index = structures[s];
		run->mode_name = run->index->pool_structure >= 0 ? pm_mode_name(mode) : "dram";
		for (int threads = 1; threads <= max_threads; threads *= 2)
		{
			run->threads = threads;
			run_structure(run, selected, ops, dir, mode);
		}
	}
	free(run->current_rest);
	free(run->update_locks);
	free(run);
	return 0;
}
