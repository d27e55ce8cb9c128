/*
 * test_nvbtree_concurrent.c
 *	  The NVB-tree under concurrent writers, readers and leaf rewrites,
 *	  threads and processes at once, checked entry by entry; then splits
 *	  held at their pause point while readers and writers run, in a fixed
 *	  order.
 *
 * The free-running part, ROUNDS times on a fresh pool: NW_THREADS writer
 * threads, READERS reader threads and a thread calling nvb_tidy_leaf in
 * this process, and NW_PROCS forked processes, each with a writer thread
 * and a reader thread, each of which opens the pool file itself (a mapping
 * at its own address).  (A round on a fresh pool because leaves never
 * merge: a key space whose leaves have all split to its full density
 * splits no more.)  Entries are (key, rest) over NKEYS keys: rest 1 of
 * every key is stable (inserted before, never deleted); each writer owns
 * OWN_RESTS rests of its own (the writers' entries are disjoint, their
 * keys the same); the last rests are shared by all writers, each operation
 * on a shared entry under a per-entry lock in shared memory, so that an
 * entry's history is a sequence while the leaves see every writer at once.
 * Most operations go to a window of keys that moves, and phases of growth
 * and shrinking alternate, so leaves split (the inner nodes too), fill
 * with dead slots and are rewritten; odd rounds crowd more writers onto
 * fewer leaves (a narrower window, more shared entries).
 *
 * Every entry has a word in shared memory that its writer steps through
 * absent, inserting, present, deleting (a count: transitions only add).
 * After an insert or a delete returns, its writer reads the entry back (it
 * is there, or not).  A delete must find exactly what the word says.  A
 * reader snapshots the words of its range before a scan and after it: an
 * entry present before and with no transition since must be in the scan
 * (inserted before the scan began, deleted by no one), one absent before
 * and with no transition since must not.  Scans run forward and backward,
 * over everything or over a range of keys, batch by batch (nvb_read_range):
 * each batch sorted, inside its fences and the scan's bounds, its fences
 * continuing the scan, the entries strictly ordered across batches.  At the
 * end the tree checks, holds exactly the entries whose words say present,
 * maps no node that no level reaches, and its allocator holds exactly what
 * the mapping table names; again after a reopening.
 *
 * The paused splits (pm_smo_pause_hook, "nvbtree_pm split": the right
 * half persisted and mapped, the left half's commit not yet made): a
 * splitter thread is held there while this process reads everything
 * exactly (the old node still serves the whole range), writes in other
 * leaves, checks the tree, and a forked process reads exactly and writes
 * too; threads that write in the paused node's range are seen to wait for
 * its lock; then the splitter is released and every effect is checked.
 * Four such splits: a leaf in the middle of the tree, the root while it is
 * a leaf, an inner root (the second split of its splitter's insert, the
 * first being a leaf's), and a leaf split by a two-child delete that found
 * it full.  Then a merge held the same way ("nvbtree_pm merge": the
 * parent's separator for the right leaf removed, nothing remapped), the
 * right leaf reached from the left one only.
 *
 * Operations are seeded (PM_TEST_SEED=n runs other ones); the interleaving
 * of the free-running part is the scheduler's.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "nvb_harness.h"
#include "nvb_internal.h"

#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/wait.h>

#define NKEYS			2560
#define NRESTS			16
#define NE				(NKEYS * NRESTS)
#define KEY_BASE		(UINT64_C(1) << 40)
#define KEY_STEP		UINT64_C(7919)
#define NW_THREADS		2
#define NW_PROCS		2
#define NW				(NW_THREADS + NW_PROCS)
#define OWN_RESTS		2
#define SHARED_REST0	(2 + NW * OWN_RESTS)	/* rests from here on are shared */
#define NSHARED			(NRESTS + 1 - SHARED_REST0)
#define READERS			2			/* reader threads in this process (one more per process) */
#define OPS_PER_WRITER	300000
#define ROUNDS			6			/* of the free-running part, each on a fresh pool */
#define HOT_PCT			85
#define HOT_KEYS		48			/* the window's keys (odd rounds: a third of them) */
#define HOT_MOVE		2000		/* operations of all writers before the window moves */
#define PHASE_OPS		40000		/* operations of all writers per growth or shrink phase */
#define SHARED_PCT		40			/* operations on shared entries (odd rounds: twice as many) */

/* entry word: transitions so far; modulo 4 */
#define ABSENT			0
#define INSERTING		1
#define PRESENT			2
#define DELETING		3

/* the paused splits' entries: index i is (KEY_BASE + i, 1); loaded ones are multiples of 4 */
#define PS_MAX			(4 * 40222 + 4)

typedef struct shared
{
	uint32_t	state[NE];
	uint8_t		lock[NE];
	uint64_t	ops;			/* operations of all writers: the window's and the phases' clock */
	int			hot_keys;		/* this round's window */
	int			shared_pct;
	uint32_t	go;
	uint32_t	writers_done;
	uint32_t	failures;
	char		first_failure[300];
	uint64_t	scans;
	uint64_t	backward_scans;
	uint64_t	batches;
	uint64_t	must_see;		/* entries a scan had to return, and did */
	uint64_t	point_reads;
	uint64_t	inserts;
	uint64_t	deletes;
	uint64_t	tidy_calls;
	uint64_t	tidied;
	/* the paused splits: what the tree holds, and a forked process's report */
	uint8_t		expect[PS_MAX];
} shared;

typedef struct worker
{
	int			id;
	pm_pool    *pool;
	pm_alloc	dram;
	pm_epoch_handle epoch;
	nvb_tree	tree;
	uint64_t	seed;
} worker;

static shared *S;
static harness H;				/* this process's pool, arena and domain */
static uint64_t dram_root;
static char pool_path[600];
static uint64_t test_seed;

static void fail(const char *fmt,...) __attribute__((format(printf, 1, 2)));

/* Count a failure; keep the first one's words. */
static void
fail(const char *fmt,...)
{
	va_list		ap;

	if (__atomic_fetch_add(&S->failures, 1, __ATOMIC_ACQ_REL) != 0)
		return;
	va_start(ap, fmt);
	vsnprintf(S->first_failure, sizeof(S->first_failure), fmt, ap);
	va_end(ap);
}

static bool
failing(void)
{
	return __atomic_load_n(&S->failures, __ATOMIC_RELAXED) != 0;
}

static void
bump(uint64_t *counter, uint64_t n)
{
	__atomic_fetch_add(counter, n, __ATOMIC_RELAXED);
}

static nvb_key
key_of(int e)
{
	return (nvb_key) {KEY_BASE + (uint64_t) (e / NRESTS) * KEY_STEP, (uint64_t) (e % NRESTS) + 1};
}

/* The entry index of k, or -1 if no writer makes it. */
static int
entry_of(const nvb_key *k)
{
	uint64_t	d;

	if (k->key < KEY_BASE || (d = k->key - KEY_BASE) % KEY_STEP != 0 || d / KEY_STEP >= NKEYS ||
		k->rest < 1 || k->rest > NRESTS)
		return -1;
	return (int) (d / KEY_STEP) * NRESTS + (int) k->rest - 1;
}

static uint32_t
word(int e)
{
	return __atomic_load_n(&S->state[e], __ATOMIC_ACQUIRE);
}

static void
set_word(int e, uint32_t v)
{
	__atomic_store_n(&S->state[e], v, __ATOMIC_SEQ_CST);
}

static void
wfree(void *ctx, uint32_t space, uint32_t tag, uint64_t off)
{
	worker	   *w = ctx;
	pm_error	err;

	(void) space;
	(void) tag;
	pm_free_block(&w->tree.pm, off, &err);
}

/* A handle on pool for this thread (token: its process, and a number above). */
static void
wattach(worker *w, pm_pool *pool, int thread_no)
{
	w->pool = pool;
	pm_alloc_attach_arena(&w->dram, H.arena, "test DRAM arena");
	if (!harness_register(H.dom, (uint64_t) getpid() | ((uint64_t) (thread_no + 1) << 32), wfree, w,
						  &w->epoch))
		exit(2);
	nvb_attach(&w->tree, pool, &w->dram, &w->epoch, SPACE_PM, 0, dram_root);
}

/* Is k in a batch read from k with bounds [k, k]? */
static bool
point_read(worker *w, const nvb_key *k, bool *there)
{
	nvb_batch	b;
	pm_error	err;

	if (nvb_read_range(&w->tree, k, false, k, k, &b, NULL, NULL, &err) != PM_OK)
	{
		fail("point read: %s", err.msg);
		return false;
	}
	if (b.n > 1 || (b.n == 1 && pm_key_cmp(&b.e[0], k) != 0))
	{
		fail("a point read returned %d entries, or another entry", b.n);
		return false;
	}
	*there = b.n == 1;
	bump(&S->point_reads, 1);
	return true;
}

/* ---------- the free-running part ---------- */

static void
lock_entry(int e)
{
	unsigned	attempt = 0;

	for (;;)
	{
		uint8_t		expected = 0;

		if (__atomic_compare_exchange_n(&S->lock[e], &expected, 1, false, __ATOMIC_ACQUIRE,
										__ATOMIC_RELAXED))
			return;
		pm_spin_delay(attempt++);
	}
}

static void
unlock_entry(int e)
{
	__atomic_store_n(&S->lock[e], 0, __ATOMIC_RELEASE);
}

/*
 * A writer: in the window (or anywhere), an entry of its own or a shared
 * one (locked); absent, inserted (growth: mostly; shrink: seldom); present,
 * deleted (the other way round); else read.  Each change is read back.
 */
static void
writer(worker *w)
{
	pm_error	err;

	for (long op = 0; op < OPS_PER_WRITER && !failing(); op++)
	{
		uint64_t	r = xorshift(&w->seed);
		uint64_t	g = __atomic_fetch_add(&S->ops, 1, __ATOMIC_RELAXED);
		int			start = (int) (g / HOT_MOVE * 97 % (NKEYS - S->hot_keys));
		int			k = (int) (r % 100) < HOT_PCT ? start + (int) ((r >> 8) % S->hot_keys) :
			(int) ((r >> 8) % NKEYS);
		bool		shared_e = (int) ((r >> 24) % 100) < S->shared_pct;
		int			rest = shared_e ? SHARED_REST0 + (int) ((r >> 32) % NSHARED) :
			2 + w->id * OWN_RESTS + (int) ((r >> 32) % OWN_RESTS);
		int			e = k * NRESTS + rest - 1;
		nvb_key		key = key_of(e);
		bool		growing = g / PHASE_OPS % 2 == 0;
		int			p = (int) ((r >> 40) % 100);
		uint32_t	s;
		bool		there;

		if (shared_e)
			lock_entry(e);
		s = word(e);
		if (s % 4 == ABSENT && p < (growing ? 90 : 35))
		{
			set_word(e, s + 1);
			if (nvb_insert(&w->tree, &key, &err) != PM_OK)
				fail("writer %d: insert: %s", w->id, err.msg);
			set_word(e, s + 2);
			bump(&S->inserts, 1);
			if (point_read(w, &key, &there) && !there)
				fail("writer %d, op %ld: a read after my insert does not find the entry", w->id, op);
		}
		else if (s % 4 == PRESENT && p < (growing ? 25 : 85))
		{
			bool		found;

			set_word(e, s + 1);
			if (nvb_delete(&w->tree, &key, &found, &err) != PM_OK)
				fail("writer %d: delete: %s", w->id, err.msg);
			else if (!found)
				fail("writer %d, op %ld: a delete did not find a present entry", w->id, op);
			set_word(e, s + 2);
			bump(&S->deletes, 1);
			if (point_read(w, &key, &there) && there)
				fail("writer %d, op %ld: a read after my delete still finds the entry", w->id, op);
		}
		else if (point_read(w, &key, &there) && there != (s % 4 == PRESENT))
			fail("writer %d, op %ld: a read of an entry nobody is changing finds it %s", w->id,
				 op, there ? "present" : "absent");
		if (shared_e)
			unlock_entry(e);
	}
	__atomic_fetch_add(&S->writers_done, 1, __ATOMIC_ACQ_REL);
}

static bool
writing(void)
{
	return __atomic_load_n(&S->writers_done, __ATOMIC_ACQUIRE) < NW && !failing();
}

/* The words of entries [e0, e1) now. */
static void
snapshot(uint32_t *to, int e0, int e1)
{
	for (int e = e0; e < e1; e++)
		to[e] = word(e);
}

/*
 * One scan from at within [lo, hi] (forward or backward), checking each
 * batch as it comes; seen[] gets the entries.  The words of [e0, e1) are
 * taken before and after.
 */
static bool
checked_scan(worker *w, bool backward, nvb_key lo, nvb_key hi, int e0, int e1, uint32_t *s0,
			 uint32_t *s1, uint8_t *seen)
{
	nvb_key		at = backward ? (pm_key_is_max(&hi) ? hi : (nvb_key) {hi.key, hi.rest + 1}) : lo;
	nvb_key		last = backward ? PM_KEY_MAX : PM_KEY_MIN;
	bool		any = false;
	nvb_batch	b;
	pm_error	err;
	long		must = 0;

	memset(seen + e0, 0, (size_t) (e1 - e0));
	snapshot(s0, e0, e1);
	for (;;)
	{
		if (nvb_read_range(&w->tree, &at, backward, &lo, &hi, &b, NULL, NULL, &err) != PM_OK)
		{
			fail("scan: %s", err.msg);
			return false;
		}
		bump(&S->batches, 1);
		if (b.n < 0 || b.n > NVB_BATCH_MAX ||
			pm_key_cmp(backward ? &b.high : &b.low, &at) != 0 ||
			pm_key_cmp(&b.low, &b.high) >= 0)
		{
			fail("%s scan: a batch's fences do not continue the scan", backward ? "backward" : "forward");
			return false;
		}
		for (int i = 0; i < b.n; i++)
		{
			const nvb_key *k = &b.e[backward ? b.n - 1 - i : i];
			int			e = entry_of(k);

			if (i > 0 && pm_key_cmp(&b.e[i - 1], &b.e[i]) >= 0)
			{
				fail("a batch is not sorted");
				return false;
			}
			if (pm_key_cmp(k, &b.low) < 0 || pm_key_cmp(k, &b.high) >= 0 ||
				pm_key_cmp(k, &lo) < 0 || pm_key_cmp(k, &hi) > 0)
			{
				fail("an entry outside its batch's fences or the scan's bounds");
				return false;
			}
			if (any && (backward ? pm_key_cmp(k, &last) >= 0 : pm_key_cmp(k, &last) <= 0))
			{
				fail("%s scan: entries out of order across batches", backward ? "backward" : "forward");
				return false;
			}
			if (e < e0 || e >= e1)
			{
				fail("a scan returned (%llu,%llu), which no writer makes or is out of range",
					 (unsigned long long) k->key, (unsigned long long) k->rest);
				return false;
			}
			last = *k;
			any = true;
			seen[e] = 1;
		}
		if (backward ? pm_key_is_min(&b.low) || pm_key_cmp(&b.low, &lo) <= 0 :
			pm_key_is_max(&b.high) || pm_key_cmp(&b.high, &hi) > 0)
			break;
		at = backward ? b.low : b.high;
	}
	snapshot(s1, e0, e1);
	for (int e = e0; e < e1; e++)
	{
		bool		quiet = s1[e] == s0[e];

		if (quiet && s0[e] % 4 == PRESENT && !seen[e])
		{
			fail("%s scan missed entry %d (key %d, rest %d), present throughout",
				 backward ? "backward" : "forward", e, e / NRESTS, e % NRESTS + 1);
			return false;
		}
		if (quiet && s0[e] % 4 == ABSENT && seen[e])
		{
			fail("%s scan returned entry %d (key %d, rest %d), absent throughout",
				 backward ? "backward" : "forward", e, e / NRESTS, e % NRESTS + 1);
			return false;
		}
		must += quiet && s0[e] % 4 == PRESENT;
	}
	bump(&S->must_see, (uint64_t) must);
	bump(&S->scans, 1);
	bump(&S->backward_scans, backward);
	return true;
}

/* A reader: whole scans and scans of a range of keys, forward and backward in turn. */
static void
reader(worker *w)
{
	uint32_t   *s0 = malloc(sizeof(uint32_t) * NE);
	uint32_t   *s1 = malloc(sizeof(uint32_t) * NE);
	uint8_t    *seen = malloc(NE);

	while (!__atomic_load_n(&S->go, __ATOMIC_ACQUIRE))
		sched_yield();
	for (int n = 0; writing(); n++)
	{
		uint64_t	r = xorshift(&w->seed);
		bool		backward = n % 2 == 1;

		if (n % 4 < 2)
			checked_scan(w, backward, PM_KEY_MIN, PM_KEY_MAX, 0, NE, s0, s1, seen);
		else
		{
			int			k0 = (int) (r % NKEYS);
			int			k1 = k0 + (int) ((r >> 16) % 300);

			if (k1 >= NKEYS)
				k1 = NKEYS - 1;
			checked_scan(w, backward, (nvb_key) {key_of(k0 * NRESTS).key, 0},
						 (nvb_key) {key_of(k1 * NRESTS).key, NVB_REST_MAX}, k0 * NRESTS,
						 (k1 + 1) * NRESTS, s0, s1, seen);
		}
	}
	free(s0);
	free(s1);
	free(seen);
}

/* The rewrites VACUUM asks for, in the window, while writers run. */
static void
tidier(worker *w)
{
	pm_error	err;

	while (!__atomic_load_n(&S->go, __ATOMIC_ACQUIRE))
		sched_yield();
	while (writing())
	{
		uint64_t	r = xorshift(&w->seed);
		int			start = (int) (__atomic_load_n(&S->ops, __ATOMIC_RELAXED) / HOT_MOVE * 97 %
								   (NKEYS - S->hot_keys));
		nvb_key		k = key_of((start + (int) (r % S->hot_keys)) * NRESTS);
		bool		tidied;
		struct timespec ts = {0, 20000};

		if (nvb_tidy_leaf(&w->tree, &k, &tidied, &err) != PM_OK)
			fail("tidy: %s", err.msg);
		bump(&S->tidy_calls, 1);
		bump(&S->tidied, tidied);
		nanosleep(&ts, NULL);
	}
}

typedef struct role
{
	worker		w;
	void		(*fn) (worker *w);
} role;

static void *
role_main(void *arg)
{
	role	   *r = arg;

	if (r->fn == writer)
		while (!__atomic_load_n(&S->go, __ATOMIC_ACQUIRE))
			sched_yield();
	r->fn(&r->w);
	return NULL;
}

/* A forked writer process: the pool opened anew (its own mapping), a writer and a reader. */
static void
process_main(int wid, uint64_t seed)
{
	pm_pool    *pool;
	pm_error	err;
	role		r[2];
	pthread_t	th[2];

	if (pm_pool_open(pool_path, PM_MODE_EADR, &pool, &err) != PM_OK)
	{
		fail("process %d: pool open: %s", wid, err.msg);
		_exit(2);
	}
	memset(r, 0, sizeof(r));
	r[0].fn = writer;
	r[0].w.id = wid;
	r[0].w.seed = seed;
	r[1].fn = reader;
	r[1].w.id = 100 + wid;
	r[1].w.seed = seed ^ UINT64_C(0x5555555555555555);
	for (int i = 0; i < 2; i++)
	{
		wattach(&r[i].w, pool, i);
		pthread_create(&th[i], NULL, role_main, &r[i]);
	}
	for (int i = 0; i < 2; i++)
	{
		pthread_join(th[i], NULL);
		pm_epoch_unregister(&r[i].w.epoch);
	}
	pm_pool_close(pool);
	_exit(0);
}

/*
 * Free what every participant retired (those that left included): before
 * the pool closes, since a later reclaim would free into the next pool.
 */
static void
drain_all(void)
{
	for (unsigned attempt = 0; pm_epoch_pending(H.dom) > 0; attempt++)
	{
		(void) pm_epoch_reclaim(&H.epoch);
		pm_spin_delay(attempt);
	}
	pm_epoch_drain(&H.epoch);
}

static int
u64_cmp(const void *a, const void *b)
{
	uint64_t	x = *(const uint64_t *) a,
				y = *(const uint64_t *) b;

	return x < y ? -1 : x > y;
}

static void
collect_block(void *ctx, uint64_t off, size_t size)
{
	uint64_t  **p = ctx;

	(void) size;
	*(*p)++ = off;
}

/*
 * Exclusive: the tree checks and holds exactly the entries whose words say
 * present; every node the table maps is reached by a level (no split was
 * cut short) and the allocator holds exactly the meta block, the spare,
 * the table's segments and those nodes.
 */
static const char *
final_check(nvb_tree *t, long *want_out)
{
	static char why[300];
	uint8_t    *seen = calloc(NE, 1);
	nvb_meta   *m = nvb_meta_of(t);
	uint64_t	next = pm_load(&m->next_id);
	uint64_t	entries,
				mapped = 0,
				expect;
	nvb_key		at = PM_KEY_MIN;
	nvb_batch	b;
	pm_error	err;
	pm_alloc_stats as;
	nvb_stats	st;
	uint64_t   *blocks,
			   *fill;
	const char *p;
	long		want = 0,
				got = 0;

	if ((p = nvb_check(t, &entries)) != NULL)
	{
		snprintf(why, sizeof(why), "nvb_check: %s", p);
		free(seen);
		return why;
	}
	for (;;)
	{
		if (nvb_read_range(t, &at, false, &PM_KEY_MIN, &PM_KEY_MAX, &b, NULL, NULL, &err) != PM_OK)
		{
			free(seen);
			return "a read fails";
		}
		for (int i = 0; i < b.n; i++)
		{
			int			e = entry_of(&b.e[i]);

			if (e < 0 || seen[e])
			{
				free(seen);
				return "the final scan returns an entry twice or one no writer makes";
			}
			seen[e] = 1;
			got++;
		}
		if (pm_key_is_max(&b.high))
			break;
		at = b.high;
	}
	for (int e = 0; e < NE; e++)
	{
		uint32_t	s = word(e);

		want += s % 4 == PRESENT;
		if ((s % 4 == PRESENT) != seen[e] || s % 2 == 1)
		{
			snprintf(why, sizeof(why), "entry %d (key %d, rest %d) is %s, its word says %u",
					 e, e / NRESTS, e % NRESTS + 1, seen[e] ? "present" : "absent", s % 4);
			free(seen);
			return why;
		}
	}
	free(seen);
	*want_out = want;
	if (entries != (uint64_t) got)
		return "nvb_check counts other entries than the scan returns";
	for (uint64_t s = 0; s * NVB_SEG_IDS < next; s++)
		for (uint64_t i = 0; m->dir[s] != 0 && i < NVB_SEG_IDS && s * NVB_SEG_IDS + i < next; i++)
			mapped += ((uint64_t *) pm_pool_addr(t->pool, m->dir[s]))[i] != 0;
	nvb_get_stats(t, &st);
	if (mapped != st.leaves + st.inner_nodes)
	{
		snprintf(why, sizeof(why), "the table maps %llu nodes, the levels reach %llu",
				 (unsigned long long) mapped, (unsigned long long) (st.leaves + st.inner_nodes));
		return why;
	}
	expect = 1 + (pm_load(&m->spare) != 0) + mapped;
	for (uint64_t s = 0; s * NVB_SEG_IDS < next; s++)
		expect += m->dir[s] != 0;
	pm_alloc_get_stats(&t->pm, &as);
	blocks = malloc(sizeof(uint64_t) * (as.blocks + 1));
	fill = blocks;
	pm_alloc_foreach(&t->pm, collect_block, &fill);
	qsort(blocks, as.blocks, sizeof(uint64_t), u64_cmp);
	p = NULL;
	if (as.blocks != expect || (uint64_t) (fill - blocks) != as.blocks ||
		bsearch(&(uint64_t) {pm_pool_root(t->pool, 0)}, blocks, as.blocks, sizeof(uint64_t),
				u64_cmp) == NULL)
	{
		snprintf(why, sizeof(why), "the allocator holds %llu blocks (%llu in its bitmaps); the "
				 "meta block, the spare, the segments and %llu nodes are %llu",
				 (unsigned long long) as.blocks, (unsigned long long) (fill - blocks),
				 (unsigned long long) mapped, (unsigned long long) expect);
		p = why;
	}
	for (uint64_t s = 0; p == NULL && s * NVB_SEG_IDS < next; s++)
		for (uint64_t i = 0; p == NULL && m->dir[s] != 0 && i < NVB_SEG_IDS && s * NVB_SEG_IDS + i < next; i++)
		{
			uint64_t	w = ((uint64_t *) pm_pool_addr(t->pool, m->dir[s]))[i];

			if (w != 0 && bsearch(&w, blocks, as.blocks, sizeof(uint64_t), u64_cmp) == NULL)
				p = "a node the table maps is not allocated";
		}
	free(blocks);
	return p;
}

static void
free_running(int round)
{
	pm_error	err;
	pid_t		pids[NW_PROCS];
	role		r[NW_THREADS + READERS + 1];
	pthread_t	th[NW_THREADS + READERS + 1];
	int			nroles = 0;
	double		t0 = now_sec();
	nvb_stats	st;
	long		want = 0;
	const char *why;
	bool		exits_ok = true;
	uint64_t	seed = test_seed * 7919 + (uint64_t) round * 1000003;

	/* what the previous round left in shared memory, but for the paused splits' part */
	memset(S, 0, offsetof(shared, expect));
	S->hot_keys = round % 2 ? HOT_KEYS / 3 : HOT_KEYS;
	S->shared_pct = round % 2 ? 2 * SHARED_PCT : SHARED_PCT;
	H.pool = harness_new_nvb(pool_path, PM_MODE_EADR, UINT64_C(1) << 30);
	nvb_attach(&H.tree, H.pool, &H.dram, &H.epoch, SPACE_PM, 0, 0);
	harness_open(&H);
	dram_root = H.tree.dram_root;
	/* the stable entries */
	for (int k = 0; k < NKEYS; k++)
	{
		nvb_key		key = key_of(k * NRESTS);

		if (nvb_insert(&H.tree, &key, &err) != PM_OK)
		{
			tap_ok(false, "stable entries: %s", err.msg);
			return;
		}
		S->state[k * NRESTS] = PRESENT;
	}

	/* the processes first (no thread of ours runs at the fork), then the threads */
	for (int i = 0; i < NW_PROCS; i++)
	{
		pids[i] = fork();
		if (pids[i] == 0)
			process_main(NW_THREADS + i, seed + 101 + (uint64_t) i);
	}
	memset(r, 0, sizeof(r));
	for (int i = 0; i < NW_THREADS; i++, nroles++)
	{
		r[nroles].fn = writer;
		r[nroles].w.id = i;
		r[nroles].w.seed = seed + 1 + (uint64_t) i;
	}
	for (int i = 0; i < READERS; i++, nroles++)
	{
		r[nroles].fn = reader;
		r[nroles].w.id = 200 + i;
		r[nroles].w.seed = seed + 51 + (uint64_t) i;
	}
	r[nroles].fn = tidier;
	r[nroles].w.id = 300;
	r[nroles].w.seed = seed + 77;
	nroles++;
	for (int i = 0; i < nroles; i++)
	{
		wattach(&r[i].w, H.pool, i);
		pthread_create(&th[i], NULL, role_main, &r[i]);
	}
	__atomic_store_n(&S->go, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < nroles; i++)
	{
		pthread_join(th[i], NULL);
		pm_epoch_unregister(&r[i].w.epoch);
	}
	for (int i = 0; i < NW_PROCS; i++)
	{
		int			status;

		waitpid(pids[i], &status, 0);
		exits_ok &= WIFEXITED(status) && WEXITSTATUS(status) == 0;
	}
	drain_all();

	nvb_get_stats(&H.tree, &st);
	tap_diag("round %d (a window of %d keys, %d%% shared): %.1f s; %llu inserts, %llu deletes, "
			 "%llu point reads; %llu scans (%llu backward) of %llu batches, %llu entries they had "
			 "to return; %llu tidy calls, %llu leaves merged or rewritten by them", round, S->hot_keys,
			 S->shared_pct, now_sec() - t0,
			 (unsigned long long) S->inserts, (unsigned long long) S->deletes,
			 (unsigned long long) S->point_reads, (unsigned long long) S->scans,
			 (unsigned long long) S->backward_scans, (unsigned long long) S->batches,
			 (unsigned long long) S->must_see, (unsigned long long) S->tidy_calls,
			 (unsigned long long) S->tidied);
	tap_diag("round %d: %llu splits, %llu rewrites, %llu merges; %llu leaves, %llu inner nodes, "
			 "height %llu", round, (unsigned long long) st.splits,
			 (unsigned long long) st.compactions, (unsigned long long) st.merges,
			 (unsigned long long) st.leaves, (unsigned long long) st.inner_nodes,
			 (unsigned long long) st.height);
	tap_ok(exits_ok && S->failures == 0,
		   "round %d: %d writer threads, %d writer processes (each with a reader), %d reader "
		   "threads and a tidy thread: every read-back, delete and scan as the entries' "
		   "histories say (%u failures%s%s)", round, NW_THREADS, NW_PROCS, READERS, S->failures,
		   S->failures ? "; first: " : "", S->failures ? S->first_failure : "");
	tap_ok(st.splits >= 100 && st.compactions >= 10 && S->tidied > 0 && st.height >= 3 &&
		   S->scans >= 50 && S->backward_scans >= 25,
		   "round %d: leaves and inner nodes split, leaves were rewritten (by full leaves and "
		   "tidy calls), scans ran both ways, while the others worked", round);
	why = final_check(&H.tree, &want);
	tap_ok(why == NULL, "round %d: at the end the tree checks and holds exactly the %ld entries "
		   "present; nothing leaked (%s)", round, want, why ? why : "ok");
	/* a restart: the allocator rebuilt from the table, the same tree */
	nvb_release_dram(&H.tree);
	pm_pool_close(H.pool);
	{
		pm_pool    *pool;

		if (pm_pool_open(pool_path, PM_MODE_EADR, &pool, &err) != PM_OK)
		{
			tap_ok(false, "reopen: %s", err.msg);
			return;
		}
		H.pool = pool;
		nvb_attach(&H.tree, pool, &H.dram, &H.epoch, SPACE_PM, 0, 0);
		harness_open(&H);
		why = final_check(&H.tree, &want);
		tap_ok(why == NULL, "round %d: reopened, the same (%s)", round, why ? why : "ok");
		harness_close(&H);
	}
	unlink(pool_path);
}

/* ---------- paused splits ---------- */

static nvb_key
ps_key(int i)
{
	return (nvb_key) {KEY_BASE + (uint64_t) i, 1};
}

typedef struct load_src
{
	int			i;
	int			n;
} load_src;

static bool
ps_next(void *ctx, nvb_key *k)
{
	load_src   *s = ctx;

	if (s->i >= s->n)
		return false;
	*k = ps_key(4 * s->i++);
	return true;
}

/* The splitter's pause: held while the test looks, in the thread that asked for it. */
static __thread int pause_at;	/* pause at this thread's pause_at-th pause_where (0: never) */
static __thread const char *pause_where;
static __thread int pause_count;
static uint32_t paused;
static uint32_t released;

static void
pause_hook(const char *where)
{
	if (pause_at == 0 || strcmp(where, pause_where) != 0 || ++pause_count != pause_at)
		return;
	__atomic_store_n(&paused, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&released, __ATOMIC_ACQUIRE))
	{
		struct timespec ts = {0, 100000};

		nanosleep(&ts, NULL);
	}
}

/* A thread that runs inserts or deletes of entries in order, pausing at one split. */
typedef struct op_thread
{
	worker		w;
	bool		del;
	int			idx[8];
	int			n;
	int			pause_at;
	uint32_t	done;			/* how many returned */
	bool		found;			/* the deletes' */
	pthread_t	th;
} op_thread;

static void *
op_thread_main(void *arg)
{
	op_thread  *o = arg;
	pm_error	err;

	pause_at = o->pause_at;
	pause_where = "nvbtree_pm split";
	pause_count = 0;
	o->found = true;
	for (int i = 0; i < o->n; i++)
	{
		nvb_key		k = ps_key(o->idx[i]);
		bool		found;

		if (o->del ? nvb_delete(&o->w.tree, &k, &found, &err) != PM_OK :
			nvb_insert(&o->w.tree, &k, &err) != PM_OK)
			fail("an operation of a paused split's scenario: %s", err.msg);
		if (o->del)
			o->found &= found;
		__atomic_store_n(&o->done, i + 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

static void
op_start(op_thread *o, bool del, const int *idx, int n, int pause_split, int thread_no)
{
	memset(o, 0, sizeof(*o));
	o->del = del;
	memcpy(o->idx, idx, sizeof(int) * n);
	o->n = n;
	o->pause_at = pause_split;
	wattach(&o->w, H.pool, thread_no);
	pthread_create(&o->th, NULL, op_thread_main, o);
}

static void
op_join(op_thread *o)
{
	pthread_join(o->th, NULL);
	pm_epoch_unregister(&o->w.epoch);
}

/* Apply inserts or deletes in this thread, and to the expected contents. */
static void
ps_apply(worker *w, bool del, const int *idx, int n)
{
	pm_error	err;

	for (int i = 0; i < n; i++)
	{
		nvb_key		k = ps_key(idx[i]);
		bool		found;

		if (del ? nvb_delete(&w->tree, &k, &found, &err) != PM_OK :
			nvb_insert(&w->tree, &k, &err) != PM_OK)
			fail("a scenario's own operation: %s", err.msg);
		else if (del && !found)
			fail("a scenario's delete did not find its entry");
		S->expect[idx[i]] = !del;
	}
}

/* Scans both ways, whole and of [lo_i, hi_i]: exactly the expected entries. */
static bool
ps_exact(worker *w, int lo_i, int hi_i)
{
	for (int pass = 0; pass < 4; pass++)
	{
		bool		backward = pass % 2 == 1;
		bool		whole = pass < 2;
		nvb_key		lo = whole ? PM_KEY_MIN : ps_key(lo_i);
		nvb_key		hi = whole ? PM_KEY_MAX : ps_key(hi_i);
		nvb_key		at = backward ? (whole ? PM_KEY_MAX : ps_key(hi_i + 1)) : lo;
		int			i = backward ? (whole ? PS_MAX - 1 : hi_i) : (whole ? 0 : lo_i);
		nvb_batch	b;
		pm_error	err;

		for (;;)
		{
			if (nvb_read_range(&w->tree, &at, backward, &lo, &hi, &b, NULL, NULL, &err) != PM_OK)
			{
				fail("a scenario's scan: %s", err.msg);
				return false;
			}
			if (pm_key_cmp(backward ? &b.high : &b.low, &at) != 0 || pm_key_cmp(&b.low, &b.high) >= 0)
			{
				fail("a scenario's scan: fences do not continue");
				return false;
			}
			for (int j = 0; j < b.n; j++)
			{
				const nvb_key *k = &b.e[backward ? b.n - 1 - j : j];

				while (i >= 0 && i < PS_MAX && !S->expect[i])
					i += backward ? -1 : 1;
				if (i < 0 || i >= PS_MAX || pm_key_cmp(k, &(nvb_key) {KEY_BASE + (uint64_t) i, 1}) != 0)
				{
					fail("a scenario's %s %s scan returned (%llu,%llu) where entry %d was expected",
						 whole ? "whole" : "range", backward ? "backward" : "forward",
						 (unsigned long long) k->key, (unsigned long long) k->rest, i);
					return false;
				}
				i += backward ? -1 : 1;
			}
			if (backward ? pm_key_is_min(&b.low) || pm_key_cmp(&b.low, &lo) <= 0 :
				pm_key_is_max(&b.high) || pm_key_cmp(&b.high, &hi) > 0)
				break;
			at = backward ? b.low : b.high;
		}
		while (i >= 0 && i < PS_MAX && (whole || (i >= lo_i && i <= hi_i)) && !S->expect[i])
			i += backward ? -1 : 1;
		if (i >= 0 && i < PS_MAX && (whole || (i >= lo_i && i <= hi_i)))
		{
			fail("a scenario's %s %s scan missed entry %d", whole ? "whole" : "range",
				 backward ? "backward" : "forward", i);
			return false;
		}
	}
	return true;
}

/* A forked process during the pause: the pool opened anew, exact scans, its own inserts. */
static bool
ps_child(int lo_i, int hi_i, const int *ins, int nins)
{
	pid_t		pid = fork();
	int			status;

	if (pid == 0)
	{
		pm_pool    *pool;
		pm_error	err;
		worker		w;

		memset(&w, 0, sizeof(w));
		if (pm_pool_open(pool_path, PM_MODE_EADR, &pool, &err) != PM_OK)
			_exit(2);
		wattach(&w, pool, 0);
		if (!ps_exact(&w, lo_i, hi_i))
			_exit(3);
		ps_apply(&w, false, ins, nins);
		if (!ps_exact(&w, lo_i, hi_i))
			_exit(3);
		pm_epoch_unregister(&w.epoch);
		pm_pool_close(pool);
		_exit(0);
	}
	waitpid(pid, &status, 0);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* The ids of the leaves covering the entries idx (their stripes must differ from the paused one's). */
static uint32_t
leaf_id(worker *w, int idx)
{
	wide_buf	buf;
	nvb_key		k = nvb_test_key(&w->tree, ps_key(idx), &buf);
	uint32_t	id;
	nvb_node   *n;
	uint64_t	off;
	pm_error	err;

	if (nvb_lock_covering(&w->tree, &k, 0, &id, &n, &off, NULL, &err) != PM_OK)
		return NVB_NO_ID;
	nvb_unlock(&w->tree, id);
	return id;
}

/* A fresh pool of nload entries 0, 4, 8, ... bulk loaded at fill and opened, me attached to it. */
static bool
ps_pool(const char *name, int nload, int fill, worker *me)
{
	load_src	src = {0, nload};
	pm_error	err;

	memset(S->expect, 0, sizeof(S->expect));
	for (int i = 0; i < nload; i++)
		S->expect[4 * i] = 1;
	H.pool = harness_new_nvb(pool_path, PM_MODE_EADR, UINT64_C(1) << 30);
	if (nvb_bulk_load(H.pool, fill, ps_next, &src, &err) != PM_OK)
		return tap_ok(false, "%s: bulk load: %s", name, err.msg);
	nvb_attach(&H.tree, H.pool, &H.dram, &H.epoch, SPACE_PM, 0, 0);
	harness_open(&H);
	dram_root = H.tree.dram_root;
	memset(me, 0, sizeof(*me));
	wattach(me, H.pool, 9);
	return true;
}

typedef struct scenario
{
	const char *name;
	int			nload;			/* bulk-loaded entries 0, 4, 8, ... */
	int			fill;
	int			pre[8];			/* inserted before the pause (filling the root, say) */
	int			npre;
	bool		split_del;		/* the splitter deletes (else inserts) */
	int			split[4];		/* its operations; it pauses at its pause_at-th split */
	int			nsplit;
	int			pause_at;
	int			mine[4];		/* inserted by this thread during the pause (other leaves) */
	int			nmine;
	int			mine_del[4];	/* deleted by this thread during the pause */
	int			nmine_del;
	int			child[4];		/* inserted by the forked process during the pause */
	int			nchild;
	bool		blocked_del;	/* the thread that waits for a lock deletes (else inserts) */
	int			blocked[4];		/* its operations: the last one waits for the paused split */
	int			nblocked;
	int			range_lo;		/* the range scans' bounds (around the paused node) */
	int			range_hi;
	int			height_after;
	int			splits_during;	/* splits committed by the others while the splitter waits */
} scenario;

static void
run_scenario(const scenario *sc)
{
	worker		me;
	op_thread	splitter,
				blocked;
	bool		blocked_started = false;
	nvb_stats	st0,
				st;
	uint64_t	entries;
	const char *p;
	bool		ok = true;
	uint32_t	failures0 = S->failures;
	struct timespec wait = {0, 100 * 1000000};

	if (!ps_pool(sc->name, sc->nload, sc->fill, &me))
		return;
	ps_apply(&me, false, sc->pre, sc->npre);
	nvb_get_stats(&H.tree, &st0);

	/*
	 * The paused node's stripe is not that of any node the others lock: the
	 * leaves they write in and (for their splits' separators) the root.
	 */
	{
		uint32_t	target = leaf_id(&me, sc->split[sc->nsplit - 1]);
		uint32_t	root = (uint32_t) pm_load(&nvb_meta_of(&H.tree)->root);
		nvb_stripe *ts = nvb_stripe_of(&H.tree, sc->pause_at > 1 ? root : target);

		if (sc->pause_at == 1 && root != target)
			ok &= nvb_stripe_of(&H.tree, root) != ts;
		for (int i = 0; i < sc->nmine; i++)
			ok &= nvb_stripe_of(&H.tree, leaf_id(&me, sc->mine[i])) != ts;
		for (int i = 0; i < sc->nchild; i++)
			ok &= nvb_stripe_of(&H.tree, leaf_id(&me, sc->child[i])) != ts;
		if (!ok)
		{
			tap_ok(false, "%s: the scenario's leaves share a lock stripe with the paused node", sc->name);
			harness_close(&H);
			return;
		}
	}

	pm_smo_pause_hook = pause_hook;
	__atomic_store_n(&paused, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&released, 0, __ATOMIC_RELEASE);
	op_start(&splitter, sc->split_del, sc->split, sc->nsplit, sc->pause_at, 10);
	while (!__atomic_load_n(&paused, __ATOMIC_ACQUIRE) &&
		   __atomic_load_n(&splitter.done, __ATOMIC_ACQUIRE) < (uint32_t) sc->nsplit)
		sched_yield();
	ok = tap_ok(__atomic_load_n(&paused, __ATOMIC_ACQUIRE) == 1,
				"%s: the splitter stops between the right half's table store and the commit",
				sc->name);
	if (ok)
	{
		/* its operations before the split's have returned; the splitting one has not */
		for (int i = 0; i < sc->nsplit - 1; i++)
			S->expect[sc->split[i]] = !sc->split_del;
		ok = tap_ok(ps_exact(&me, sc->range_lo, sc->range_hi),
					"%s, paused: scans both ways, whole and of the node's range, return exactly "
					"the entries (the old node serves its whole range)", sc->name);
		ps_apply(&me, false, sc->mine, sc->nmine);
		ps_apply(&me, true, sc->mine_del, sc->nmine_del);
		ok &= tap_ok(ps_exact(&me, sc->range_lo, sc->range_hi),
					 "%s, paused: %d inserts and %d deletes elsewhere return, and the scans see them",
					 sc->name, sc->nmine, sc->nmine_del);
		ok &= tap_ok(ps_child(sc->range_lo, sc->range_hi, sc->child, sc->nchild),
					 "%s, paused: a forked process (its own mapping) scans exactly, inserts %d "
					 "entries elsewhere and sees them", sc->name, sc->nchild);
		op_start(&blocked, sc->blocked_del, sc->blocked, sc->nblocked, 0, 11);
		blocked_started = true;
		nanosleep(&wait, NULL);
		ok &= tap_ok(__atomic_load_n(&blocked.done, __ATOMIC_ACQUIRE) == (uint32_t) sc->nblocked - 1,
					 "%s, paused: a %s in the paused node's range waits for its lock (%u of %d "
					 "returned)", sc->name, sc->blocked_del ? "delete" : "insert",
					 __atomic_load_n(&blocked.done, __ATOMIC_ACQUIRE), sc->nblocked);
		for (int i = 0; i < sc->nblocked - 1; i++)
			S->expect[sc->blocked[i]] = !sc->blocked_del;
		ok &= tap_ok(ps_exact(&me, sc->range_lo, sc->range_hi),
					 "%s, paused: the waiting operation has no effect yet", sc->name);
		p = nvb_check(&H.tree, &entries);
		ok &= tap_ok(p == NULL, "%s, paused: the tree checks, the right half mapped and unreached "
					 "(%s)", sc->name, p ? p : "ok");
	}
	__atomic_store_n(&released, 1, __ATOMIC_RELEASE);
	op_join(&splitter);
	if (blocked_started)
		op_join(&blocked);
	pm_smo_pause_hook = NULL;
	for (int i = 0; i < sc->nsplit; i++)
		S->expect[sc->split[i]] = !sc->split_del;
	for (int i = 0; blocked_started && i < sc->nblocked; i++)
		S->expect[sc->blocked[i]] = !sc->blocked_del;
	nvb_get_stats(&H.tree, &st);
	p = nvb_check(&H.tree, &entries);
	tap_ok(ok && p == NULL && ps_exact(&me, sc->range_lo, sc->range_hi) &&
		   (!sc->split_del || splitter.found) && (!sc->blocked_del || !blocked_started || blocked.found) &&
		   st.height == (uint64_t) sc->height_after &&
		   st.splits == st0.splits + (uint64_t) sc->splits_during + (uint64_t) sc->pause_at &&
		   S->failures == failures0,
		   "%s, released: the split commits, the waiting operation follows; the tree checks (%s), "
		   "holds exactly the entries, height %llu, %llu splits%s%s", sc->name, p ? p : "ok",
		   (unsigned long long) st.height, (unsigned long long) (st.splits - st0.splits),
		   S->failures != failures0 ? "; " : "", S->failures != failures0 ? S->first_failure : "");
	pm_epoch_unregister(&me.epoch);
	drain_all();
	harness_close(&H);
	unlink(pool_path);
}

/*
 * The four paused splits.  Loaded entries are 4 * i; a leaf loaded full
 * (fill 100) holds loaded entries [224 j, 224 (j + 1)), entries 896 j ..
 * 896 (j + 1) - 4; at fill 99 a leaf holds 221 of 224 slots and an inner
 * node 182 children.
 */
static void
paused_splits(void)
{
	const scenario sc[] = {
		{
			.name = "a leaf in the middle", .nload = 224 * 20, .fill = 100,
			.split = {896 * 10 + 401}, .nsplit = 1, .pause_at = 1,
			.mine = {896 * 15 + 5, 896 * 15 + 9}, .nmine = 2,
			.mine_del = {896 * 15 + 40, 896 * 15 + 444}, .nmine_del = 2,
			.child = {896 * 17 + 1, 896 * 17 + 2}, .nchild = 2,
			.blocked = {896 * 10 + 801}, .nblocked = 1,
			.range_lo = 896 * 9, .range_hi = 896 * 12, .height_after = 2, .splits_during = 2,
		},
		{
			.name = "the root leaf", .nload = 224, .fill = 100,
			.split = {601}, .nsplit = 1, .pause_at = 1,
			.blocked_del = true, .blocked = {452}, .nblocked = 1,
			.range_lo = 100, .range_hi = 700, .height_after = 2, .splits_during = 0,
		},
		{
			/*
			 * 182 leaves under a root of 181 separators: two leaf splits fill
			 * it, the splitter's leaf split (its first pause, passed) makes it
			 * split (its second pause, held).  The thread that waits splits a
			 * leaf too and waits to add its separator to the paused root.
			 */
			.name = "an inner root", .nload = 182 * 221, .fill = 99,
			.pre = {884 * 5 + 1, 884 * 5 + 2, 884 * 5 + 3, 884 * 5 + 5,
			884 * 50 + 1, 884 * 50 + 2, 884 * 50 + 3, 884 * 50 + 5}, .npre = 8,
			.split = {884 * 100 + 1, 884 * 100 + 2, 884 * 100 + 3, 884 * 100 + 5}, .nsplit = 4,
			.pause_at = 2,
			.mine = {884 * 150 + 1, 884 * 150 + 2, 884 * 150 + 3}, .nmine = 3,
			.child = {884 * 170 + 1, 884 * 170 + 2}, .nchild = 2,
			.blocked = {884 * 160 + 1, 884 * 160 + 2, 884 * 160 + 3, 884 * 160 + 5}, .nblocked = 4,
			.range_lo = 884 * 90, .range_hi = 884 * 110, .height_after = 3, .splits_during = 1,
		},
		{
			/* the balanced leaf's root slot (its 113th entry) has two children */
			.name = "a leaf split by a two-child delete", .nload = 224 * 5, .fill = 100,
			.split_del = true, .split = {896 * 2 + 4 * 112}, .nsplit = 1, .pause_at = 1,
			.mine = {896 * 4 + 1}, .nmine = 1,
			.child = {3}, .nchild = 1,
			.blocked = {896 * 2 + 7}, .nblocked = 1,
			.range_lo = 896 * 1, .range_hi = 896 * 3, .height_after = 2, .splits_during = 2,
		},
	};

	for (size_t i = 0; i < sizeof(sc) / sizeof(sc[0]); i++)
		run_scenario(&sc[i]);
}

/* The merging thread of the paused merge: a tidy of the leaf covering entry idx, held at its pause. */
typedef struct merge_thread
{
	worker		w;
	int			idx;
	bool		merged;
	uint32_t	done;
	pthread_t	th;
} merge_thread;

static void *
merge_thread_main(void *arg)
{
	merge_thread *m = arg;
	nvb_key		k = ps_key(m->idx);
	pm_error	err;

	pause_at = 1;
	pause_where = "nvbtree_pm merge";
	pause_count = 0;
	if (nvb_tidy_leaf(&m->w.tree, &k, &m->merged, &err) != PM_OK)
		fail("the paused merge's tidy: %s", err.msg);
	__atomic_store_n(&m->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * A merge held at its pause point (the parent's separator for the right
 * leaf removed, nothing remapped: the right leaf reached from the left one
 * only), while this process reads everything exactly and writes in other
 * leaves, a forked process reads and writes too, the tree checks, and an
 * insert into the right leaf's range waits for its lock; then released.
 * Leaves of 112 loaded entries (fill 50) under one root: leaf j holds
 * entries 448 j .. 448 (j + 1) - 4; leaves 10 and 11 are thinned to every
 * eighth entry first, so that the two hold at most half a leaf.
 */
static void
paused_merge(void)
{
	enum
	{
		LEAF = 448, NLOAD = 112 * 20, L0 = LEAF * 10
	};
	int			mine[] = {LEAF * 15 + 1, LEAF * 15 + 2, LEAF * 3 + 5};
	int			mine_del[] = {LEAF * 16 + 40, LEAF * 2 + 8};
	int			child[] = {LEAF * 17 + 1, LEAF * 17 + 3};
	int			blocked_idx[] = {LEAF * 11 + 9};
	int			thin[2 * 112];
	int			nthin = 0;
	worker		me;
	merge_thread m;
	op_thread	blocked;
	nvb_stats	st0,
				st;
	uint64_t	entries;
	const char *p;
	bool		ok = true;
	uint32_t	failures0 = S->failures;
	struct timespec wait = {0, 100 * 1000000};

	if (!ps_pool("paused merge", NLOAD, 50, &me))
		return;
	for (int i = L0; i < L0 + 2 * LEAF; i += 4)
		if ((i - L0) % 32 != 0)
			thin[nthin++] = i;
	ps_apply(&me, true, thin, nthin);
	nvb_get_stats(&H.tree, &st0);

	/* the leaves the others write in share no lock stripe with the root, the left or the right leaf */
	{
		uint32_t	root = (uint32_t) pm_load(&nvb_meta_of(&H.tree)->root);
		nvb_stripe *held[3] = {nvb_stripe_of(&H.tree, root),
			nvb_stripe_of(&H.tree, leaf_id(&me, L0)),
		nvb_stripe_of(&H.tree, leaf_id(&me, L0 + LEAF))};
		int			others[] = {mine[0], mine[1], mine[2], mine_del[0], mine_del[1], child[0], child[1]};

		for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++)
			for (int j = 0; j < 3; j++)
				ok &= nvb_stripe_of(&H.tree, leaf_id(&me, others[i])) != held[j];
		if (!tap_ok(ok && st0.height == 2 && leaf_id(&me, L0) != leaf_id(&me, L0 + LEAF),
					"paused merge: two leaves under an inner root, on lock stripes of their own"))
		{
			pm_epoch_unregister(&me.epoch);
			harness_close(&H);
			return;
		}
	}

	pm_smo_pause_hook = pause_hook;
	__atomic_store_n(&paused, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&released, 0, __ATOMIC_RELEASE);
	memset(&m, 0, sizeof(m));
	m.idx = L0 + LEAF + 100;	/* the right leaf's tidy merges it into the left */
	wattach(&m.w, H.pool, 10);
	pthread_create(&m.th, NULL, merge_thread_main, &m);
	while (!__atomic_load_n(&paused, __ATOMIC_ACQUIRE) && !__atomic_load_n(&m.done, __ATOMIC_ACQUIRE))
		sched_yield();
	ok = tap_ok(__atomic_load_n(&paused, __ATOMIC_ACQUIRE) == 1,
				"paused merge: the tidy stops after the parent's separator is removed, before the "
				"commit");
	if (ok)
	{
		ok = tap_ok(ps_exact(&me, L0 - LEAF, L0 + 3 * LEAF),
					"paused merge: scans both ways, whole and of the two leaves' range, return "
					"exactly the entries (the right leaf reached from the left)");
		ps_apply(&me, false, mine, 3);
		ps_apply(&me, true, mine_del, 2);
		ok &= tap_ok(ps_exact(&me, L0 - LEAF, L0 + 3 * LEAF),
					 "paused merge: inserts and deletes elsewhere return, and the scans see them");
		ok &= tap_ok(ps_child(L0 - LEAF, L0 + 3 * LEAF, child, 2),
					 "paused merge: a forked process (its own mapping) scans exactly, inserts "
					 "elsewhere and sees its entries");
		op_start(&blocked, false, blocked_idx, 1, 0, 11);
		nanosleep(&wait, NULL);
		ok &= tap_ok(__atomic_load_n(&blocked.done, __ATOMIC_ACQUIRE) == 0,
					 "paused merge: an insert into the right leaf's range waits for its lock");
		ok &= tap_ok(ps_exact(&me, L0 - LEAF, L0 + 3 * LEAF),
					 "paused merge: the waiting insert has no effect yet");
		p = nvb_check(&H.tree, &entries);
		ok &= tap_ok(p == NULL, "paused merge: the tree checks, the right leaf without its "
					 "separator (%s)", p ? p : "ok");
	}
	__atomic_store_n(&released, 1, __ATOMIC_RELEASE);
	pthread_join(m.th, NULL);
	pm_epoch_unregister(&m.w.epoch);
	if (ok)
		op_join(&blocked);
	pm_smo_pause_hook = NULL;
	S->expect[blocked_idx[0]] = ok;
	nvb_get_stats(&H.tree, &st);
	p = nvb_check(&H.tree, &entries);
	tap_ok(ok && m.merged && p == NULL && ps_exact(&me, L0 - LEAF, L0 + 3 * LEAF) &&
		   st.merges == st0.merges + 1 && st.leaves == st0.leaves - 1 && S->failures == failures0,
		   "paused merge, released: the merge commits, the waiting insert lands in the merged "
		   "leaf; the tree checks (%s), holds exactly the entries, %llu leaves of %llu%s%s",
		   p ? p : "ok", (unsigned long long) st.leaves, (unsigned long long) st0.leaves,
		   S->failures != failures0 ? "; " : "", S->failures != failures0 ? S->first_failure : "");
	pm_epoch_unregister(&me.epoch);
	drain_all();
	harness_close(&H);
	unlink(pool_path);
}

int
main(void)
{
	char	   *dir = tap_tmpdir("nvb_conc");

	test_seed = getenv("PM_TEST_SEED") ? strtoull(getenv("PM_TEST_SEED"), NULL, 10) : 20261202;
	if (test_seed == 0)
		test_seed = 1;
	tap_diag("seed %llu (PM_TEST_SEED)", (unsigned long long) test_seed);
	alarm(600);
	snprintf(pool_path, sizeof(pool_path), "%s/conc.pool", dir);
	S = mmap(NULL, sizeof(shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (S == MAP_FAILED)
	{
		perror("mmap");
		return 2;
	}
	harness_shared(&H);
	pm_alloc_attach_arena(&H.dram, H.arena, "test DRAM arena");
	if (!harness_register(H.dom, (uint64_t) getpid(), harness_free, &H, &H.epoch))
		return 2;
	for (int round = 0; round < ROUNDS; round++)
		free_running(round);
	/* the paused scenarios are set for a narrow tree's leaves and inner nodes */
	if (!NVB_TEST_KIND)
	{
		paused_splits();
		paused_merge();
	}
	pm_epoch_unregister(&H.epoch);
	tap_rmdir(dir);
	tap_plan(tap_count);
	return tap_done();
}
