/*
 * test_phast_concurrent.c
 *	  PhaST under concurrent writers and readers: 2 threads, 2 processes and
 *	  4 threads on this machine's cores, each inserting, deleting, reading,
 *	  compacting and scanning over one hot key window that moves (so LNode
 *	  and INode splits and compactions run under everyone's feet).  Each
 *	  worker owns the rests it uses, so its own entries change only by its
 *	  own hand, and every read checks them exactly: an entry it inserted is
 *	  found by the next read of its key, one it deleted is not, and a scan
 *	  (in LNode batches, lock-free) sees every entry of its own, in order,
 *	  with contiguous fences.  One entry per key that nobody deletes (the
 *	  splits keep moving it) must be in every scan exactly once and in every
 *	  read of its key.  At the end the structure checks and holds exactly
 *	  the union of the workers' entries and those; then its DRAM part is
 *	  rebuilt from PM with a thread per worker taking partitions in turn
 *	  (parallel recovery), and it checks and holds them again.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "phast_harness.h"

#include <pthread.h>
#include <sys/wait.h>

#define MAXW		4
#define KEYS		4096		/* the hot window's width */
#define RESTS		16			/* rests per worker per key */
#define OPS			400000L
#define STABLE_REST	(MAXW * RESTS + 1)	/* the rest of the entries nobody deletes */

typedef struct worker
{
	int			id;
	harness    *shared;			/* pool, arena, domain */
	pm_alloc	dram;
	pm_epoch_handle epoch;
	phast_tree	tree;
	uint64_t	seed;
	uint8_t	   *live;			/* KEYS * RESTS: this worker's entries (in shared memory) */
	long		failures;
	char		first_failure[200];
} worker;

static uint64_t dram_root;

static phast_key
entry_of(const worker *w, uint64_t base, int k, int r)
{
	return (phast_key) {base + (uint64_t) k * 7919, (uint64_t) (w->id * RESTS + r + 1)};
}

static void
fail(worker *w, const char *what, long op)
{
	if (w->failures++ == 0)
		snprintf(w->first_failure, sizeof(w->first_failure), "worker %d, op %ld: %s", w->id, op, what);
}

static void
wfree(void *ctx, uint32_t space, uint32_t tag, uint64_t off)
{
	worker	   *w = ctx;
	pm_error	err;

	(void) space;
	(void) tag;
	pm_free_block(&w->dram, off, &err);
}

/* Is (key, rest) in the batch? */
static bool
in_batch(const phast_batch *b, const phast_key *k)
{
	for (int i = 0; i < b->n; i++)
		if (pm_key_cmp(&b->e[i], k) == 0)
			return true;
	return false;
}

/* A full forward scan: order, contiguous fences, and every own live entry seen. */
static void
scan_all(worker *w, uint64_t base, long op)
{
	phast_batch b;
	phast_key	from = PM_KEY_MIN;
	phast_key	prev = PM_KEY_MIN;
	long		own = 0,
				want = 0,
				stable = 0;

	for (int i = 0; i < KEYS * RESTS; i++)
		want += w->live[i];
	for (;;)
	{
		phast_read_leaf(&w->tree, &from, false, &b);
		if (pm_key_cmp(&b.low, &from) != 0)
			fail(w, "a scan's batch does not start where the previous ended", op);
		for (int i = 0; i < b.n; i++)
		{
			if (pm_key_cmp(&b.e[i], &prev) <= 0 && !(pm_key_is_min(&prev) && i == 0))
				fail(w, "a scan returned entries out of order", op);
			prev = b.e[i];
			stable += b.e[i].rest == STABLE_REST;
			if ((int) ((b.e[i].rest - 1) / RESTS) == w->id)
			{
				uint64_t	k = (b.e[i].key - base) / 7919;
				int			r = (int) ((b.e[i].rest - 1) % RESTS);

				if (b.e[i].key < base || k >= KEYS || !w->live[k * RESTS + r])
					fail(w, "a scan returned an entry of mine that I deleted or never made", op);
				else
					own++;
			}
		}
		if (pm_key_is_max(&b.high))
			break;
		from = b.high;
	}
	if (own != want)
		fail(w, "a scan missed entries of mine", op);
	if (stable != KEYS)
		fail(w, "a scan did not see every stable entry exactly once", op);
}

static void
work(worker *w)
{
	pm_error	err;
	uint64_t	base = UINT64_C(1) << 62;

	for (long op = 0; op < OPS && w->failures == 0; op++)
	{
		uint64_t	r = xorshift(&w->seed);
		int			k = (int) ((r >> 8) % KEYS);
		int			rr = (int) ((r >> 24) % RESTS);
		phast_key	e = entry_of(w, base, k, rr);
		int			what = (int) (r % 1000);
		phast_batch b;

		if (what < 510)
		{
			if (phast_insert(&w->tree, &e, &err) != PM_OK)
				fail(w, err.msg, op);
			w->live[k * RESTS + rr] = 1;
			phast_read_leaf(&w->tree, &e, false, &b);
			if (!in_batch(&b, &e))
				fail(w, "a read after my insert does not find the entry", op);
		}
		else if (what < 900)
		{
			bool		found;

			phast_delete(&w->tree, &e, &found, &err);
			if (found != (w->live[k * RESTS + rr] != 0))
				fail(w, "a delete found what I had not inserted, or missed what I had", op);
			w->live[k * RESTS + rr] = 0;
			phast_read_leaf(&w->tree, &e, false, &b);
			if (in_batch(&b, &e))
				fail(w, "a read after my delete still finds the entry", op);
		}
		else if (what < 990)
		{
			bool		compacted;

			if (phast_compact_leaf(&w->tree, &e, &compacted, &err) != PM_OK)
				fail(w, err.msg, op);
		}
		else if (what < 992)
			scan_all(w, base, op);
		else
		{
			phast_key	s = {e.key, STABLE_REST};

			phast_read_leaf(&w->tree, &s, false, &b);
			if (!in_batch(&b, &s))
				fail(w, "a read of a stable entry does not find it", op);
			phast_read_leaf(&w->tree, &e, true, &b);
			for (int i = 1; i < b.n; i++)
				if (pm_key_cmp(&b.e[i - 1], &b.e[i]) >= 0)
					fail(w, "a backward read is out of order", op);
		}
	}
}

static void
wattach(worker *w, uint64_t token)
{
	pm_alloc_attach_arena(&w->dram, w->shared->arena, "test DRAM arena");
	if (!harness_register(w->shared->dom, token, wfree, w, &w->epoch))
		exit(2);
	phast_attach(&w->tree, w->shared->pool, &w->dram, &w->epoch, SPACE_DRAM, dram_root);
}

static void *
thread_main(void *arg)
{
	worker	   *w = arg;

	wattach(w, (uint64_t) getpid() | ((uint64_t) (w->id + 1) << 32));
	work(w);
	pm_epoch_unregister(&w->epoch);
	return NULL;
}

typedef struct rebuilder
{
	harness    *shared;
	int			first;			/* partitions first, first + step, ... */
	int			step;
	pm_errcode	rc;
	pm_error	err;
} rebuilder;

static void *
rebuild_main(void *arg)
{
	rebuilder  *r = arg;
	pm_alloc	dram;
	phast_tree	t;

	pm_alloc_attach_arena(&dram, r->shared->arena, "test DRAM arena");
	phast_attach(&t, r->shared->pool, &dram, NULL, SPACE_DRAM, dram_root);
	r->rc = PM_OK;
	for (int p = r->first; r->rc == PM_OK && p < phast_partitions(&t); p += r->step)
		r->rc = phast_rebuild_partition(&t, p, &r->err);
	return NULL;
}

/* The DRAM part released and rebuilt from PM by nw threads at once. */
static bool
parallel_rebuild(harness *h, const char *name, int nw)
{
	rebuilder	r[MAXW];
	pthread_t	th[MAXW];
	pm_error	err;
	bool		ok = true;

	phast_release_dram(&h->tree);
	if (phast_rebuild_begin(&h->tree, &err) != PM_OK)
		return tap_ok(false, "%s: parallel rebuild: %s", name, err.msg);
	dram_root = h->tree.dram_root;
	for (int i = 0; i < nw; i++)
	{
		r[i] = (rebuilder) {.shared = h, .first = i, .step = nw};
		pthread_create(&th[i], NULL, rebuild_main, &r[i]);
	}
	for (int i = 0; i < nw; i++)
	{
		pthread_join(th[i], NULL);
		if (r[i].rc != PM_OK)
			ok = tap_ok(false, "%s: parallel rebuild, thread %d: %s", name, i, r[i].err.msg);
	}
	if (ok && phast_rebuild_end(&h->tree, false, &err) != PM_OK)
		ok = tap_ok(false, "%s: parallel rebuild: %s", name, err.msg);
	return ok;
}

static void
variant(harness *h, const char *name, int nw, bool processes, uint64_t seed)
{
	char		path[256];
	worker	   *w = mmap(NULL, sizeof(worker) * MAXW, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	uint8_t    *live = mmap(NULL, (size_t) MAXW * KEYS * RESTS, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pm_error	err;
	uint64_t	entries;
	long		want = 0;
	const char *problem;
	phast_stats st;
	bool		ok = true;

	snprintf(path, sizeof(path), "%s/phast_conc.pool", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	h->pool = harness_new_phast(path, PM_MODE_EADR, UINT64_C(1) << 30, 4, UINT64_C(1) << 62,
								(UINT64_C(1) << 62) + (uint64_t) KEYS * 7919);
	phast_attach(&h->tree, h->pool, &h->dram, &h->epoch, SPACE_DRAM, 0);
	if (phast_rebuild(&h->tree, false, &err) != PM_OK)
	{
		tap_ok(false, "%s: build: %s", name, err.msg);
		return;
	}
	dram_root = h->tree.dram_root;
	for (int k = 0; k < KEYS; k++)
	{
		phast_key	s = {(UINT64_C(1) << 62) + (uint64_t) k * 7919, STABLE_REST};

		phast_insert(&h->tree, &s, &err);
	}
	want = KEYS;
	for (int i = 0; i < nw; i++)
	{
		memset(&w[i], 0, sizeof(worker));
		w[i].id = i;
		w[i].shared = h;
		w[i].seed = seed * 7 + (uint64_t) i + 1;
		w[i].live = live + (size_t) i * KEYS * RESTS;
	}
	if (processes)
	{
		pid_t		pids[MAXW];

		for (int i = 0; i < nw; i++)
		{
			pids[i] = fork();
			if (pids[i] == 0)
			{
				wattach(&w[i], (uint64_t) getpid());
				work(&w[i]);
				pm_epoch_unregister(&w[i].epoch);
				_exit(0);
			}
		}
		for (int i = 0; i < nw; i++)
		{
			int			status;

			waitpid(pids[i], &status, 0);
			if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
				ok = tap_ok(false, "%s: worker %d exited abnormally (status %d)", name, i, status);
		}
	}
	else
	{
		pthread_t	th[MAXW];

		for (int i = 0; i < nw; i++)
			pthread_create(&th[i], NULL, thread_main, &w[i]);
		for (int i = 0; i < nw; i++)
			pthread_join(th[i], NULL);
	}
	for (int i = 0; i < nw; i++)
	{
		if (w[i].failures > 0)
			ok = tap_ok(false, "%s: %ld failures; first: %s", name, w[i].failures, w[i].first_failure);
		for (int j = 0; j < KEYS * RESTS; j++)
			want += w[i].live[j];
	}
	if (ok)
		tap_ok(true, "%s: every read saw each worker's own entries exactly", name);
	problem = phast_check(&h->tree, &entries);
	tap_ok(problem == NULL && entries == (uint64_t) want, "%s: structure sound, %llu entries, the workers hold %ld (%s)",
		   name, (unsigned long long) entries, want, problem ? problem : "ok");
	phast_get_stats(&h->tree, &st);
	tap_diag("%s: %llu LNode splits, %llu INode splits, %llu compactions", name,
			 (unsigned long long) st.splits, (unsigned long long) st.inode_splits,
			 (unsigned long long) st.compactions);
	tap_ok(st.splits > 100 && st.inode_splits > 0 && st.compactions > 0,
		   "%s: splits of both kinds and compactions ran concurrently", name);
	if (parallel_rebuild(h, name, nw))
	{
		problem = phast_check(&h->tree, &entries);
		tap_ok(problem == NULL && entries == (uint64_t) want,
			   "%s: rebuilt from PM by %d threads over %d partitions: sound, %llu entries (%s)",
			   name, nw, phast_partitions(&h->tree), (unsigned long long) entries, problem ? problem : "ok");
	}
	phast_release_dram(&h->tree);
	pm_pool_close(h->pool);
	unlink(path);
	munmap(w, sizeof(worker) * MAXW);
	munmap(live, (size_t) MAXW * KEYS * RESTS);
}

int
main(void)
{
	harness		h;
	uint64_t	seed = getenv("PM_TEST_SEED") ? strtoull(getenv("PM_TEST_SEED"), NULL, 10) : 20261125;

	tap_diag("seed %llu (PM_TEST_SEED)", (unsigned long long) seed);
	harness_shared(&h);
	pm_alloc_attach_arena(&h.dram, h.arena, "test DRAM arena");
	if (!harness_register(h.dom, (uint64_t) getpid(), harness_free, &h, &h.epoch))
		return 2;
	variant(&h, "2 threads", 2, false, seed);
	variant(&h, "2 processes", 2, true, seed + 1);
	variant(&h, "4 threads", 4, false, seed + 2);
	tap_plan(tap_count);
	return tap_failed ? 1 : 0;
}
