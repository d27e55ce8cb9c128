/*
 * test_nbtree_concurrent.c
 *	  Concurrent stress of the nbtree: 2 threads, 2 processes, then 4
 *	  threads on 2 cores (preemption in the middle of operations and SMOs),
 *	  each worker inserting, deleting, compacting and range-reading over a
 *	  small key space (300 keys, most operations in a 4-key window that all
 *	  workers share and that moves), so leaves split and compact all the
 *	  time; checked against the serial order of completed operations.
 *	  One insert in BATCH_ONE_IN is a sorted batch (nbt_insert_sorted) of
 *	  1..BATCH_CAP new entries over a few keys, with some of the worker's
 *	  live entries again among them, so batches reuse leaves that other
 *	  workers split, compact and merge meanwhile.
 *
 * Every entry has one lifetime: worker w inserts (key, rest) with rest
 * = (seq + 1) << 2 | w at most once and deletes it at most once (the rests
 * of the workers interleave, so they insert into the same leaves).  A
 * shared record per entry holds its key and four logical timestamps (a
 * global atomic counter taken at insert start and end, delete start and
 * end).  Each range read records its own start and end timestamps and the
 * entries it returned.  Because leaf reads are per-leaf snapshots, the
 * whole scan is checked per entry against the scan's interval [S, E]:
 *   (a) no false negative: an entry in range whose insert ended before S
 *       and whose delete (if any) started after E is returned;
 *   (b) no phantom: a returned entry was inserted (insert started before E)
 *       and no delete of it ended before S;
 *   (c) online, while scanning: each batch sorted strictly, entries inside
 *       [low, high), the first batch covers the start, batches contiguous
 *       (the next low is the previous high; backward: mirrored), results
 *       strictly ordered across batches.
 * A batch's entries all take the batch's start and end as their insert's.
 * Deletes of a live entry must find it; deletes of an absent one must not.
 * (a) is checked by counting: a sweep over the timestamps gives, per scan,
 * how many entries had to be returned; the returned ones that had to be
 * there are counted per entry; since results are unique (c) the two counts
 * are equal exactly when nothing is missing.  A brute-force check of a
 * sample of scans confirms the counting checker, and a negative control
 * feeds it fabricated scans with a missing and a phantom entry.
 * At the end the structure must check, the full forward read must equal
 * exactly the inserted-and-not-deleted entries, and neither PM nor the
 * DRAM arena may hold a block the tree does not reach.
 *
 * Workloads are seeded; PM_TEST_SEED=n runs other ones.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "nbt_harness.h"
#include "nbt_internal.h"
#include "nbt_wide_shim.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>

#define MAXW			4			/* workers at most */
#define NKEYS			300
#define KEY_STEP		UINT64_C(1000003)
#define TOTAL_OPS		2000000		/* per variant, over all workers */
#define MAX_SEQ			1000000		/* inserts per worker at most */
/*
 * Phases alternate: growth (a large live target, deletes mostly of the
 * oldest entry, so the live window moves through the rests and leaves
 * split) and shrinking (a small target, random deletes: leaves compact).
 */
#define PHASE_OPS		250000		/* over all workers */
#define GROW_TARGET		24000		/* live entries, over all workers */
#define GROW_FIFO_PCT	90			/* deletes that take the oldest live entry */
#define SHRINK_TARGET	3000
#define SHRINK_FIFO_PCT	10
#define MAX_SCANS		(MAX_SEQ / 10)
#define RES_CAP			(UINT64_C(24) << 20)	/* recorded results per worker */
#define MAX_WIDTH		12			/* keys per range read */
#define HOT_PCT			80			/* operations in the shared hot window */
#define HOT_KEYS		4
#define HOT_OPS			4000		/* the window moves every HOT_OPS operations (all workers) */
#define BRUTE_SAMPLE	300
#define BATCH_ONE_IN	32			/* inserts that are a sorted batch */
#define BATCH_CAP		48			/* new entries of a batch at most */
#define BATCH_AGAIN		4			/* live entries inserted again at most */
#define BATCH_KEYS		8			/* keys a batch spans */
#define NO_KIDX			0xffffu
/* a recorded result: kidx << 22 | worker << 20 | seq */
#define SEQ_BITS		20
#define PACK(k, w, seq)	((uint32_t) (k) << (SEQ_BITS + 2) | (uint32_t) (w) << SEQ_BITS | (uint32_t) (seq))
#define PACK_KIDX(p)	((p) >> (SEQ_BITS + 2))
#define PACK_W(p)		(((p) >> SEQ_BITS) & 3)
#define PACK_SEQ(p)		((p) & ((UINT32_C(1) << SEQ_BITS) - 1))
#define PACK_ID(p)		((p) & ((UINT32_C(1) << (SEQ_BITS + 2)) - 1))

_Static_assert(MAXW <= 4 && MAX_SEQ <= (1 << SEQ_BITS) && NKEYS < 512, "result packing");

/* one entry's life; timestamps 0 = did not happen */
typedef struct rec
{
	uint64_t	kidx;
	uint64_t	ins_start;
	uint64_t	ins_end;
	uint64_t	del_start;
	uint64_t	del_end;
} rec;

/* one recorded range read */
typedef struct scan_rec
{
	uint64_t	start;
	uint64_t	end;
	uint32_t	klo;			/* key indexes [klo, khi); khi == NKEYS: to the end */
	uint32_t	khi;
	uint32_t	backward;
	uint32_t	nres;
	uint64_t	res_off;		/* into this worker's result buffer */
} scan_rec;

typedef struct shared_state
{
	uint64_t	clock;
	uint64_t	ninserted[MAXW];
	uint64_t	nscans[MAXW];
	uint64_t	nres[MAXW];
	uint64_t	ready;			/* workers attached (start barrier) */
	uint64_t	unrecorded;		/* scans checked online only (buffer full) */
	uint64_t	reads;
	uint64_t	batches;
	uint64_t	sorted_batches;	/* nbt_insert_sorted calls */
	uint64_t	sorted_entries;
	uint64_t	sorted_again;	/* entries of them already live */
	uint64_t	backward_reads;
	uint64_t	compact_calls;
	uint64_t	compacted;
	uint64_t	sweeps;
	uint64_t	neg_deletes;
	uint64_t	bad_online;		/* (c) and delete-found violations */
	uint64_t	errors;			/* an operation returned an error */
	uint64_t	msg_claimed;
	char		msg[512];
} shared_state;

/* A worker's handle: its own DRAM allocator, epoch participant and tree copy. */
typedef struct wctx
{
	pm_alloc	dram;
	pm_epoch_handle ep;
	nbt_tree	tree;
	int			id;
	uint64_t	seed;
} wctx;

/* scan as seen by the offline checker */
typedef struct scan_view
{
	uint64_t	start;
	uint64_t	end;
	uint32_t	klo;
	uint32_t	khi;
	const uint32_t *res;		/* PACK() */
	uint32_t	nres;
} scan_view;

typedef struct check_result
{
	uint64_t	missing;		/* (a) */
	uint64_t	phantom;		/* (b) */
	uint64_t	must_total;		/* entries that had to be returned */
	uint64_t	returned;
	long		first_bad;		/* index of the first failing scan, -1 */
	char		why[300];
} check_result;

static shared_state *S;
static rec *recs;				/* MAXW * MAX_SEQ */
static scan_rec *scans;			/* MAXW * MAX_SCANS */
static uint32_t *results;		/* MAXW * RES_CAP */
static int	nw;					/* workers of the current variant */
static uint64_t test_seed;		/* PM_TEST_SEED: other workloads */
static long ops_per_worker;

static void report(const char *fmt,...) __attribute__((format(printf, 1, 2)));

static void
report(const char *fmt,...)
{
	uint64_t	expected = 0;
	va_list		ap;

	if (!__atomic_compare_exchange_n(&S->msg_claimed, &expected, 1, false,
									 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return;
	va_start(ap, fmt);
	vsnprintf(S->msg, sizeof(S->msg), fmt, ap);
	va_end(ap);
}

static uint64_t
tick(void)
{
	return __atomic_add_fetch(&S->clock, 1, __ATOMIC_SEQ_CST);
}

static uint64_t
key_of(uint32_t k)
{
	return k == NKEYS - 1 ? UINT64_MAX : (uint64_t) k * KEY_STEP;
}

static uint32_t
kidx_of(uint64_t key)
{
	if (key == UINT64_MAX)
		return NKEYS - 1;
	if (key % KEY_STEP != 0 || key / KEY_STEP >= NKEYS - 1)
		return NO_KIDX;
	return (uint32_t) (key / KEY_STEP);
}

static uint64_t
rest_of(int w, uint64_t seq)
{
	return ((seq + 1) << 2) | (uint64_t) w;
}

static rec *
rec_of(int w, uint64_t seq)
{
	return &recs[(size_t) w * MAX_SEQ + seq];
}

static void
set_ts(uint64_t *p, uint64_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

/* ---------- the workers ---------- */

static void
wfree(void *ctx, uint32_t space, uint32_t tag, uint64_t off)
{
	wctx	   *w = ctx;

	(void) tag;
	harness_free_to(&w->tree.pm, &w->dram, space, off);
}

static bool
wattach(wctx *w, harness *h, pm_pool *pool, uint64_t token)
{
	pm_alloc_attach_arena(&w->dram, h->arena, "test DRAM arena");
	if (!harness_register(h->dom, token, wfree, w, &w->ep))
		return false;
	nbt_attach(&w->tree, pool, &w->dram, &w->ep, SPACE_PM, 0, SPACE_DRAM, h->tree.dram_root);
	return true;
}

/* Check one batch: sorted strictly, inside its fences, fences in order. */
static bool
batch_ok(const nbt_batch *b, int w, uint64_t scan_no)
{
	if (b->n < 0 || b->n > NBT_LEAF_CAP || pm_key_cmp(&b->low, &b->high) >= 0)
	{
		report("worker %d scan %llu: batch with n=%d or low >= high", w,
			   (unsigned long long) scan_no, b->n);
		return false;
	}
	for (int i = 0; i < b->n; i++)
	{
		if (pm_key_cmp(&b->e[i].sk, &b->low) < 0 || pm_key_cmp(&b->e[i].sk, &b->high) >= 0)
		{
			report("worker %d scan %llu: entry (%llu,%llu) outside its batch's fences", w,
				   (unsigned long long) scan_no, (unsigned long long) b->e[i].sk.key,
				   (unsigned long long) b->e[i].sk.rest);
			return false;
		}
		if (i > 0 && pm_key_cmp(&b->e[i - 1].sk, &b->e[i].sk) >= 0)
		{
			report("worker %d scan %llu: batch not strictly sorted at %d", w,
				   (unsigned long long) scan_no, i);
			return false;
		}
	}
	return true;
}

/*
 * One range read over key indexes [klo, khi), forward or backward.  Checks
 * (c) online; records start/end timestamps and results if there is room.
 */
static void
range_read(wctx *w, uint32_t klo, uint32_t khi, bool backward)
{
	int			id = w->id;
	nbt_skey	lo = {key_of(klo), 0};
	nbt_skey	hi = khi >= NKEYS ? PM_KEY_MAX : (nbt_skey) {key_of(khi), 0};
	uint64_t	scan_no = S->nscans[id];
	bool		record = scan_no < MAX_SCANS;
	uint64_t	res_base = S->nres[id];
	uint64_t	nres = 0;
	uint32_t   *out = results + (size_t) id * RES_CAP;
	nbt_batch	b;
	nbt_skey	from = backward ? hi : lo;
	nbt_skey	last = backward ? PM_KEY_MAX : PM_KEY_MIN;
	bool		first = true;
	bool		ok = true;
	uint64_t	t_start;
	uint64_t	t_end;

	t_start = tick();
	for (;;)
	{
		nbt_read_leaf(&w->tree, &from, backward, &b);
		__atomic_fetch_add(&S->batches, 1, __ATOMIC_RELAXED);
		if (!batch_ok(&b, id, scan_no))
		{
			ok = false;
			break;
		}
		/* coverage and contiguity */
		if (!backward)
		{
			if (first ? (pm_key_cmp(&b.low, &from) > 0 || pm_key_cmp(&from, &b.high) >= 0)
				: pm_key_cmp(&b.low, &from) != 0)
			{
				report("worker %d scan %llu: forward batch [%llu/%llu, %llu/%llu) does not %s %llu/%llu",
					   id, (unsigned long long) scan_no,
					   (unsigned long long) b.low.key, (unsigned long long) b.low.rest,
					   (unsigned long long) b.high.key, (unsigned long long) b.high.rest,
					   first ? "cover" : "continue from",
					   (unsigned long long) from.key, (unsigned long long) from.rest);
				ok = false;
				break;
			}
		}
		else
		{
			if (first ? (pm_key_cmp(&b.low, &from) >= 0 || pm_key_cmp(&from, &b.high) > 0)
				: pm_key_cmp(&b.high, &from) != 0)
			{
				report("worker %d scan %llu: backward batch [%llu/%llu, %llu/%llu) does not %s %llu/%llu",
					   id, (unsigned long long) scan_no,
					   (unsigned long long) b.low.key, (unsigned long long) b.low.rest,
					   (unsigned long long) b.high.key, (unsigned long long) b.high.rest,
					   first ? "cover the predecessor of" : "end at",
					   (unsigned long long) from.key, (unsigned long long) from.rest);
				ok = false;
				break;
			}
		}
		first = false;
		for (int j = 0; j < b.n; j++)
		{
			int			i = backward ? b.n - 1 - j : j;
			const nbt_skey *sk = &b.e[i].sk;
			uint32_t	k;
			uint64_t	rw;
			uint64_t	rseq;

			if (pm_key_cmp(sk, &lo) < 0 || pm_key_cmp(sk, &hi) >= 0)
				continue;
			if (backward ? pm_key_cmp(sk, &last) >= 0 : pm_key_cmp(sk, &last) <= 0)
			{
				report("worker %d scan %llu: results not strictly %s across batches", id,
					   (unsigned long long) scan_no, backward ? "descending" : "ascending");
				ok = false;
				break;
			}
			last = *sk;
			k = kidx_of(sk->key);
			rw = sk->rest & 3;
			rseq = (sk->rest >> 2) - 1;
			if (k == NO_KIDX || sk->rest < 4 || rw >= (uint64_t) nw || rseq >= MAX_SEQ)
			{
				report("worker %d scan %llu: returned entry (%llu,%llu) was never inserted",
					   id, (unsigned long long) scan_no, (unsigned long long) sk->key,
					   (unsigned long long) sk->rest);
				ok = false;
				break;
			}
			if (record)
			{
				if (res_base + nres >= RES_CAP)
					record = false;
				else
					out[res_base + nres++] = PACK(k, rw, rseq);
			}
		}
		if (!ok)
			break;
		if (!backward)
		{
			if (pm_key_is_max(&b.high) || pm_key_cmp(&b.high, &hi) >= 0)
				break;
			from = b.high;
		}
		else
		{
			if (pm_key_is_min(&b.low) || pm_key_cmp(&b.low, &lo) <= 0)
				break;
			from = b.low;
		}
	}
	t_end = tick();
	__atomic_fetch_add(&S->reads, 1, __ATOMIC_RELAXED);
	if (backward)
		__atomic_fetch_add(&S->backward_reads, 1, __ATOMIC_RELAXED);
	if (!ok)
	{
		__atomic_fetch_add(&S->bad_online, 1, __ATOMIC_RELAXED);
		return;
	}
	if (!record)
	{
		__atomic_fetch_add(&S->unrecorded, 1, __ATOMIC_RELAXED);
		return;
	}
	{
		scan_rec   *sr = &scans[(size_t) id * MAX_SCANS + scan_no];

		sr->start = t_start;
		sr->end = t_end;
		sr->klo = klo;
		sr->khi = khi;
		sr->backward = backward;
		sr->nres = (uint32_t) nres;
		sr->res_off = res_base;
		S->nres[id] = res_base + nres;
		__atomic_store_n(&S->nscans[id], scan_no + 1, __ATOMIC_RELEASE);
	}
}

static void
compact(wctx *w, const nbt_skey *sk)
{
	pm_error	err;
	bool		compacted;

	__atomic_fetch_add(&S->compact_calls, 1, __ATOMIC_RELAXED);
	if (nbt_compact_leaf(&w->tree, sk, &compacted, &err) != PM_OK)
	{
		report("worker %d: compact: %s", w->id, err.msg);
		__atomic_fetch_add(&S->errors, 1, __ATOMIC_RELAXED);
	}
	else if (compacted)
		__atomic_fetch_add(&S->compacted, 1, __ATOMIC_RELAXED);
}

static int
skey_qsort_cmp(const void *a, const void *b)
{
	return pm_key_cmp(a, b);
}

/*
 * A sorted batch of 1..BATCH_CAP new entries over keys [k, k + BATCH_KEYS)
 * and up to BATCH_AGAIN of the worker's live entries again (no-ops), through
 * nbt_insert_sorted.  Every new entry's insert spans the whole call.
 * Returns the number of new entries made live (all of them, or none after
 * an error).
 */
static uint32_t
batch_insert(wctx *w, uint64_t *seed, uint32_t k, uint64_t *nins, const uint32_t *live,
			 uint32_t nlive, uint32_t *added)
{
	int			id = w->id;
	uint64_t	x = xorshift(seed);
	uint32_t	m = 1 + (uint32_t) (x % BATCH_CAP);
	uint32_t	again = nlive == 0 ? 0 : (uint32_t) ((x >> 8) % (BATCH_AGAIN + 1));
	nbt_skey	sks[BATCH_CAP + BATCH_AGAIN];
	uint32_t	kidx[BATCH_CAP];
	uint64_t	first = *nins;
	uint64_t	t_start;
	uint64_t	t_end;
	int			done = -1;
	pm_errcode	rc;
	pm_error	err;

	if (*nins + m > MAX_SEQ)
		return 0;
	/* new entries: keys ascending, seqs (so rests) ascending within a key */
	for (uint32_t i = 0; i < m; i++)
	{
		uint32_t	kk = k + (uint32_t) (xorshift(seed) % BATCH_KEYS);

		kidx[i] = kk >= NKEYS ? NKEYS - 1 : kk;
	}
	for (uint32_t i = 1; i < m; i++)
		for (uint32_t j = i; j > 0 && kidx[j] < kidx[j - 1]; j--)
		{
			uint32_t	t = kidx[j];

			kidx[j] = kidx[j - 1], kidx[j - 1] = t;
		}
	for (uint32_t i = 0; i < m; i++)
	{
		rec		   *e = rec_of(id, first + i);

		sks[i] = (nbt_skey) {key_of(kidx[i]), rest_of(id, first + i)};
		set_ts(&e->kidx, kidx[i]);
	}
	for (uint32_t i = 0; i < again; i++)
	{
		uint64_t	seq = live[xorshift(seed) % nlive];

		sks[m + i] = (nbt_skey) {key_of((uint32_t) rec_of(id, seq)->kidx), rest_of(id, seq)};
	}
	qsort(sks, m + again, sizeof(nbt_skey), skey_qsort_cmp);
	*nins = first + m;
	t_start = tick();
	for (uint32_t i = 0; i < m; i++)
		set_ts(&rec_of(id, first + i)->ins_start, t_start);
	__atomic_store_n(&S->ninserted[id], *nins, __ATOMIC_RELEASE);
	rc = nbt_insert_sorted(&w->tree, sks, (int) (m + again), &done, &err);
	t_end = tick();
	for (uint32_t i = 0; i < m; i++)
		set_ts(&rec_of(id, first + i)->ins_end, t_end);
	__atomic_fetch_add(&S->sorted_batches, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&S->sorted_entries, m + again, __ATOMIC_RELAXED);
	__atomic_fetch_add(&S->sorted_again, again, __ATOMIC_RELAXED);
	if (rc != PM_OK || done != (int) (m + again))
	{
		report("worker %d: batch insert: %s (%d of %u done)", id,
			   rc != PM_OK ? err.msg : "no error", done, m + again);
		__atomic_fetch_add(&S->errors, 1, __ATOMIC_RELAXED);
		return 0;
	}
	for (uint32_t i = 0; i < m; i++)
		added[i] = (uint32_t) (first + i);
	return m;
}

static void
run_worker(wctx *w)
{
	int			id = w->id;
	uint64_t	seed = w->seed;
	uint32_t   *live = malloc(sizeof(uint32_t) * MAX_SEQ);
	uint32_t   *pos = calloc(MAX_SEQ, sizeof(uint32_t));	/* seq -> index in live */
	uint32_t	nlive = 0;
	uint64_t	oldest = 0;		/* no live entry has a smaller seq */
	uint64_t	nins = 0;
	pm_error	err;

	if (live == NULL || pos == NULL)
	{
		report("worker %d: out of memory", id);
		__atomic_fetch_add(&S->errors, 1, __ATOMIC_RELAXED);
		return;
	}
	/*
	 * Start together: every worker is attached before any works (and no
	 * worker grows the pool while another opens it).  Bounded, in case a
	 * worker never gets there.
	 */
	__atomic_fetch_add(&S->ready, 1, __ATOMIC_ACQ_REL);
	for (long spin = 0; __atomic_load_n(&S->ready, __ATOMIC_ACQUIRE) < (uint64_t) nw &&
		 spin < 10000000; spin++)
		sched_yield();
	for (long op = 0; op < ops_per_worker; op++)
	{
		uint64_t	x = xorshift(&seed);
		uint32_t	r = (uint32_t) (x % 1000);
		/* most operations aim at a small window of keys that both workers share */
		uint32_t	k = (x >> 57) % 100 >= HOT_PCT ? (uint32_t) ((x >> 12) % NKEYS) :
			(uint32_t) (((uint64_t) (op / (HOT_OPS / nw)) * 37 + (x >> 12) % HOT_KEYS) % NKEYS);
		bool		grow = (op / (PHASE_OPS / nw)) % 2 == 0;
		uint32_t	target = (grow ? GROW_TARGET : SHRINK_TARGET) / (uint32_t) nw;

		if (r < 30)
		{
			/* a range read of 1..MAX_WIDTH keys; a quarter of them backward */
			uint32_t	width = 1 + (uint32_t) ((x >> 24) % MAX_WIDTH);
			uint32_t	khi = k + width > NKEYS ? NKEYS : k + width;

			range_read(w, k, khi, ((x >> 40) & 3) == 0);
		}
		else if (r < 38)
		{
			nbt_skey	sk = {key_of(k), 1 + ((x >> 24) % NBT_REST_MAX)};

			compact(w, &sk);
		}
		else if (r < 40)
		{
			/* a sweep over keys [k, k + width), as VACUUM does: emptied leaves merge */
			uint32_t	width = 1 + (uint32_t) ((x >> 24) % MAX_WIDTH);
			nbt_skey	from = {key_of(k), 0};
			nbt_skey	to = k + width >= NKEYS ? PM_KEY_MAX : (nbt_skey) {key_of(k + width), 0};
			nbt_batch	b;

			__atomic_fetch_add(&S->sweeps, 1, __ATOMIC_RELAXED);
			do
			{
				nbt_read_leaf(&w->tree, &from, false, &b);
				compact(w, &b.low);
				from = b.high;
			} while (!pm_key_is_max(&from) && pm_key_cmp(&from, &to) < 0);
		}
		else if (r < 50)
		{
			/* delete an entry that is not there: deleted before, or never inserted */
			uint64_t	seq;
			nbt_skey	sk;
			bool		found;

			if (nins > 0 && (x & 0x100000))
			{
				seq = (x >> 24) % nins;
				if (rec_of(id, seq)->del_end == 0)
					continue;	/* still live */
				sk = (nbt_skey) {key_of((uint32_t) rec_of(id, seq)->kidx), rest_of(id, seq)};
			}
			else
				sk = (nbt_skey) {key_of(k), rest_of(id, MAX_SEQ + ((x >> 24) & 0xffff))};
			__atomic_fetch_add(&S->neg_deletes, 1, __ATOMIC_RELAXED);
			if (nbt_delete(&w->tree, &sk, &found, &err) != PM_OK)
			{
				report("worker %d: delete: %s", id, err.msg);
				__atomic_fetch_add(&S->errors, 1, __ATOMIC_RELAXED);
			}
			else if (found)
			{
				report("worker %d: delete of absent (%llu,%llu) found it", id,
					   (unsigned long long) sk.key, (unsigned long long) sk.rest);
				__atomic_fetch_add(&S->bad_online, 1, __ATOMIC_RELAXED);
			}
		}
		else if (nins < MAX_SEQ && (nlive == 0 || r < (nlive < target ? 600u : 380u)) &&
				 (x >> 30) % BATCH_ONE_IN == 0)
		{
			uint32_t	added[BATCH_CAP];
			uint32_t	m = batch_insert(w, &seed, k, &nins, live, nlive, added);

			for (uint32_t i = 0; i < m; i++)
			{
				pos[added[i]] = nlive;
				live[nlive++] = added[i];
			}
		}
		else if (nins < MAX_SEQ && (nlive == 0 || r < (nlive < target ? 600u : 380u)))
		{
			uint64_t	seq = nins++;
			rec		   *e = rec_of(id, seq);
			nbt_skey	sk = {key_of(k), rest_of(id, seq)};
			pm_errcode	rc;

			set_ts(&e->kidx, k);
			set_ts(&e->ins_start, tick());
			rc = nbt_insert(&w->tree, &sk, &err);
			set_ts(&e->ins_end, tick());
			__atomic_store_n(&S->ninserted[id], nins, __ATOMIC_RELEASE);
			if (rc != PM_OK)
			{
				report("worker %d: insert: %s", id, err.msg);
				__atomic_fetch_add(&S->errors, 1, __ATOMIC_RELAXED);
				continue;
			}
			pos[seq] = nlive;
			live[nlive++] = (uint32_t) seq;
		}
		else if (nlive > 0)
		{
			uint32_t	li = (uint32_t) ((x >> 24) % nlive);
			uint64_t	seq;
			rec		   *e;
			nbt_skey	sk;
			bool		found;
			pm_errcode	rc;

			if ((x >> 50) % 100 < (grow ? GROW_FIFO_PCT : SHRINK_FIFO_PCT))
			{
				/* the oldest live entry: the live window moves through the rests */
				while (pos[oldest] >= nlive || live[pos[oldest]] != oldest)
					oldest++;
				li = pos[oldest];
			}
			seq = live[li];
			e = rec_of(id, seq);
			sk = (nbt_skey) {key_of((uint32_t) e->kidx), rest_of(id, seq)};
			live[li] = live[--nlive];
			pos[live[li]] = li;
			set_ts(&e->del_start, tick());
			rc = nbt_delete(&w->tree, &sk, &found, &err);
			set_ts(&e->del_end, tick());
			if (rc != PM_OK)
			{
				report("worker %d: delete: %s", id, err.msg);
				__atomic_fetch_add(&S->errors, 1, __ATOMIC_RELAXED);
			}
			else if (!found)
			{
				report("worker %d: delete of live (%llu,%llu) did not find it", id,
					   (unsigned long long) sk.key, (unsigned long long) sk.rest);
				__atomic_fetch_add(&S->bad_online, 1, __ATOMIC_RELAXED);
			}
		}
	}
	free(live);
	free(pos);
}

static void *
thread_main(void *arg)
{
	run_worker(arg);
	return NULL;
}

/* ---------- the offline checker ---------- */

typedef struct tev
{
	uint64_t	t;
	int32_t		delta;
	uint32_t	kidx;
} tev;

typedef struct dev
{
	uint64_t	del_start;
	uint64_t	ins_end;
	uint32_t	kidx;
} dev;

static int
tev_cmp(const void *a, const void *b)
{
	uint64_t	x = ((const tev *) a)->t,
				y = ((const tev *) b)->t;

	return x < y ? -1 : x > y;
}

static int
dev_cmp(const void *a, const void *b)
{
	uint64_t	x = ((const dev *) a)->del_start,
				y = ((const dev *) b)->del_start;

	return x < y ? -1 : x > y;
}

static const scan_view *sort_views;

static int
view_idx_cmp(const void *a, const void *b)
{
	uint64_t	x = sort_views[*(const uint32_t *) a].start,
				y = sort_views[*(const uint32_t *) b].start;

	return x < y ? -1 : x > y;
}

static int
u32_cmp(const void *a, const void *b)
{
	uint32_t	x = *(const uint32_t *) a,
				y = *(const uint32_t *) b;

	return x < y ? -1 : x > y;
}

/* The record a returned (packed) entry names, or NULL if none was inserted. */
static const rec *
rec_of_result(uint32_t packed, const uint64_t *ninserted)
{
	uint32_t	w = PACK_W(packed);
	uint32_t	seq = PACK_SEQ(packed);

	if (w >= (uint32_t) nw || seq >= ninserted[w])
		return NULL;
	return rec_of((int) w, seq);
}

static bool
must_be_seen(const rec *e, const scan_view *v)
{
	return e->ins_end != 0 && e->ins_end < v->start &&
		(e->del_start == 0 || e->del_start > v->end) &&
		e->kidx >= v->klo && e->kidx < v->khi;
}

static void
note_bad(check_result *cr, long i, const char *fmt,...) __attribute__((format(printf, 3, 4)));

static void
note_bad(check_result *cr, long i, const char *fmt,...)
{
	va_list		ap;

	if (cr->first_bad >= 0)
		return;
	cr->first_bad = i;
	va_start(ap, fmt);
	vsnprintf(cr->why, sizeof(cr->why), fmt, ap);
	va_end(ap);
}

/*
 * Check scans v[0..n) against the records: (b) per returned entry, (a) by
 * counting (a sweep over insert-end and delete-start timestamps gives the
 * entries live at S; those whose delete started in (S, E] are taken off).
 */
static void
check_scans(const scan_view *v, size_t n, const uint64_t *ninserted, check_result *cr,
			uint64_t *missing_per_scan)
{
	size_t		nrec = 0,
				ntev = 0,
				ndev = 0,
				ti = 0;
	tev		   *tevs;
	dev		   *devs;
	uint32_t   *order;
	int64_t		cnt[NKEYS] = {0};

	memset(cr, 0, sizeof(*cr));
	cr->first_bad = -1;
	for (int w = 0; w < nw; w++)
		nrec += ninserted[w];
	tevs = malloc(sizeof(tev) * (2 * nrec + 1));
	devs = malloc(sizeof(dev) * (nrec + 1));
	order = malloc(sizeof(uint32_t) * (n + 1));
	if (!tevs || !devs || !order)
	{
		cr->missing = 1;
		snprintf(cr->why, sizeof(cr->why), "checker out of memory");
		free(tevs);
		free(devs);
		free(order);
		return;
	}
	for (int w = 0; w < nw; w++)
	{
		for (uint64_t s = 0; s < ninserted[w]; s++)
		{
			const rec  *e = rec_of(w, s);

			if (e->ins_end == 0)
				continue;
			tevs[ntev++] = (tev) {e->ins_end, +1, (uint32_t) e->kidx};
			if (e->del_start != 0)
			{
				tevs[ntev++] = (tev) {e->del_start, -1, (uint32_t) e->kidx};
				devs[ndev++] = (dev) {e->del_start, e->ins_end, (uint32_t) e->kidx};
			}
		}
	}
	qsort(tevs, ntev, sizeof(tev), tev_cmp);
	qsort(devs, ndev, sizeof(dev), dev_cmp);
	for (size_t i = 0; i < n; i++)
		order[i] = (uint32_t) i;
	sort_views = v;
	qsort(order, n, sizeof(uint32_t), view_idx_cmp);

	for (size_t oi = 0; oi < n; oi++)
	{
		const scan_view *s = &v[order[oi]];
		int64_t		must = 0;
		uint64_t	seen_must = 0;
		size_t		lo = 0,
					hi = ndev;

		while (ti < ntev && tevs[ti].t < s->start)
		{
			cnt[tevs[ti].kidx] += tevs[ti].delta;
			ti++;
		}
		for (uint32_t k = s->klo; k < s->khi; k++)
			must += cnt[k];
		/* deletes that started inside the scan: not required */
		while (lo < hi)
		{
			size_t		mid = (lo + hi) / 2;

			if (devs[mid].del_start <= s->start)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (size_t d = lo; d < ndev && devs[d].del_start <= s->end; d++)
		{
			if (devs[d].ins_end < s->start && devs[d].kidx >= s->klo && devs[d].kidx < s->khi)
				must--;
		}

		for (uint32_t i = 0; i < s->nres; i++)
		{
			uint32_t	packed = s->res[i];
			const rec  *e = rec_of_result(packed, ninserted);

			cr->returned++;
			if (e == NULL || e->ins_start == 0 || e->kidx != PACK_KIDX(packed) ||
				e->ins_start > s->end || (e->del_end != 0 && e->del_end < s->start))
			{
				cr->phantom++;
				note_bad(cr, (long) order[oi],
						 "scan [%llu, %llu] keys [%u, %u): phantom rest %llu (%s)",
						 (unsigned long long) s->start, (unsigned long long) s->end,
						 s->klo, s->khi, (unsigned long long) rest_of((int) PACK_W(packed), PACK_SEQ(packed)),
						 e == NULL || e->ins_start == 0 ? "never inserted" :
						 e->kidx != PACK_KIDX(packed) ? "wrong key" :
						 e->ins_start > s->end ? "inserted after the scan" :
						 "deleted before the scan");
				continue;
			}
			if (must_be_seen(e, s))
				seen_must++;
		}
		cr->must_total += (uint64_t) must;
		if (missing_per_scan)
			missing_per_scan[order[oi]] = must > (int64_t) seen_must ? (uint64_t) must - seen_must : 0;
		if (must < 0 || (uint64_t) must != seen_must)
		{
			if (must > (int64_t) seen_must)
				cr->missing += (uint64_t) must - seen_must;
			note_bad(cr, (long) order[oi],
					 "scan [%llu, %llu] keys [%u, %u): %lld entries had to be returned, %llu were",
					 (unsigned long long) s->start, (unsigned long long) s->end, s->klo, s->khi,
					 (long long) must, (unsigned long long) seen_must);
			if (must <= (int64_t) seen_must)
				cr->missing++;	/* the count itself is inconsistent */
		}
	}
	free(tevs);
	free(devs);
	free(order);
}

/* The definition, entry by entry: missing entries of one scan. */
static uint64_t
brute_missing(const scan_view *s, const uint64_t *ninserted)
{
	uint32_t   *sorted = malloc(sizeof(uint32_t) * (s->nres + 1));
	uint64_t	missing = 0;

	for (uint32_t i = 0; i < s->nres; i++)
		sorted[i] = PACK_ID(s->res[i]);
	qsort(sorted, s->nres, sizeof(uint32_t), u32_cmp);
	for (int w = 0; w < nw; w++)
	{
		for (uint64_t seq = 0; seq < ninserted[w]; seq++)
		{
			const rec  *e = rec_of(w, seq);
			uint32_t	id = PACK_ID(PACK(0, w, seq));

			if (must_be_seen(e, s) &&
				bsearch(&id, sorted, s->nres, sizeof(uint32_t), u32_cmp) == NULL)
				missing++;
		}
	}
	free(sorted);
	return missing;
}

/* ---------- one variant ---------- */

typedef struct variant_result
{
	bool		ran_ok;
	check_result cr;
	uint64_t	brute_mismatch;
	uint64_t	nscans;
	const char *final_why;
	const char *leak_why;
	nbt_stats	st;
	double		run_sec;
	double		check_sec;
	/* for the negative control */
	scan_view  *views;
	size_t		nviews;
} variant_result;

static scan_view *
collect_views(size_t *n_out)
{
	size_t		n = 0;
	scan_view  *v;

	for (int w = 0; w < nw; w++)
		n += S->nscans[w];
	v = malloc(sizeof(scan_view) * (n + 1));
	n = 0;
	for (int w = 0; w < nw; w++)
	{
		for (uint64_t i = 0; i < S->nscans[w]; i++)
		{
			const scan_rec *sr = &scans[(size_t) w * MAX_SCANS + i];

			v[n].start = sr->start;
			v[n].end = sr->end;
			v[n].klo = sr->klo;
			v[n].khi = sr->khi;
			v[n].res = results + (size_t) w * RES_CAP + sr->res_off;
			v[n].nres = sr->nres;
			n++;
		}
	}
	*n_out = n;
	return v;
}

/* Full forward read equals the inserted-and-not-deleted entries. */
static const char *
final_content(nbt_tree *t)
{
	static char why[300];
	size_t		cap = 0,
				n = 0,
				got = 0;
	nbt_skey   *expect;
	nbt_skey	from = PM_KEY_MIN;
	nbt_batch	b;
	uint64_t	entries = 0;
	const char *cw;

	for (int w = 0; w < nw; w++)
		cap += S->ninserted[w];
	expect = malloc(sizeof(nbt_skey) * (cap + 1));
	for (int w = 0; w < nw; w++)
	{
		for (uint64_t seq = 0; seq < S->ninserted[w]; seq++)
		{
			const rec  *e = rec_of(w, seq);

			if (e->ins_end != 0 && e->del_start == 0)
				expect[n++] = (nbt_skey) {key_of((uint32_t) e->kidx), rest_of(w, seq)};
		}
	}
	qsort(expect, n, sizeof(nbt_skey), skey_qsort_cmp);

	cw = nbt_check(t, &entries);
	if (cw != NULL)
	{
		snprintf(why, sizeof(why), "nbt_check: %s", cw);
		free(expect);
		return why;
	}
	if (entries != n)
	{
		snprintf(why, sizeof(why), "nbt_check counts %llu entries, %zu expected",
				 (unsigned long long) entries, n);
		free(expect);
		return why;
	}
	for (;;)
	{
		nbt_read_leaf(t, &from, false, &b);
		for (int i = 0; i < b.n; i++, got++)
		{
			if (got >= n || pm_key_cmp(&b.e[i].sk, &expect[got]) != 0)
			{
				snprintf(why, sizeof(why), "full read: entry %zu is (%llu,%llu), expected %s", got,
						 (unsigned long long) b.e[i].sk.key, (unsigned long long) b.e[i].sk.rest,
						 got >= n ? "the end" : "another");
				free(expect);
				return why;
			}
		}
		if (pm_key_is_max(&b.high))
			break;
		from = b.high;
	}
	free(expect);
	if (got != n)
	{
		snprintf(why, sizeof(why), "full read returned %zu entries, %zu expected", got, n);
		return why;
	}
	if (nbt_count_pm(t->pool) != n)
	{
		snprintf(why, sizeof(why), "the PM layer holds %llu live entries, %zu expected",
				 (unsigned long long) nbt_count_pm(t->pool), n);
		return why;
	}
	return NULL;
}

/* Every PM and DRAM block is reachable from the tree or kept as its spare (after draining epochs). */
static const char *
leak_check(harness *h)
{
	static char why[300];
	nbt_tree   *t = &h->tree;
	nbt_droot  *dr = nbt_droot_at(t);
	pm_alloc_stats pst,
				dst;
	uint64_t	pm_leaves = 0,
				dram_leaves = 0,
				inners = 0;

	for (int i = 0; i < 1000 && pm_epoch_pending(h->dom) > 0; i++)
	{
		(void) pm_epoch_reclaim(&h->epoch);
		usleep(1000);
	}
	if (pm_epoch_pending(h->dom) != 0)
		return "retired blocks still pending in epoch limbo";
	for (uint64_t off = nbt_meta(t)->head; off != 0; off = nbt_kv_at(t, off)->next)
	{
		uint64_t	records[NBT_LEAF_CAP + 1];

		pm_leaves += 1 + (uint64_t) harness_kv_records(nbt_kv_at(t, off), records);
	}
	for (uint64_t off = dr->first; off != 0; off = nbt_leaf_at(t, off)->next & ~NBT_FROZEN)
		dram_leaves++;
	for (uint64_t lvl = dr->root; lvl != 0;)
	{
		nbt_inner  *n = nbt_inner_at(t, lvl);

		for (uint64_t off = lvl; off != 0; off = nbt_inner_at(t, off)->sibling)
			inners++;
		lvl = n->level > 1 ? n->child0 : 0;
	}
	pm_alloc_get_stats(&t->pm, &pst);
	pm_alloc_get_stats(&h->dram, &dst);
	/* the meta block, the leaves, and the spare the DRAM layer may keep for a full pool */
	pm_leaves += 1 + (dr->spare_kv != 0);
	if (pst.blocks != pm_leaves)
	{
		snprintf(why, sizeof(why), "PM: %llu blocks allocated, %llu reachable (meta + leaves + records + spare)",
				 (unsigned long long) pst.blocks, (unsigned long long) pm_leaves);
		return why;
	}
	if (dst.blocks != 1 + dram_leaves + inners)
	{
		snprintf(why, sizeof(why),
				 "DRAM: %llu blocks allocated, %llu reachable (descriptor + %llu leaves + %llu inner)",
				 (unsigned long long) dst.blocks, (unsigned long long) (1 + dram_leaves + inners),
				 (unsigned long long) dram_leaves, (unsigned long long) inners);
		return why;
	}
	return NULL;
}

static void
reset_shared(void)
{
	for (int w = 0; w < MAXW; w++)
		memset(rec_of(w, 0), 0, sizeof(rec) * S->ninserted[w]);
	memset(S, 0, sizeof(*S));
}

static void
run_variant(const char *dir, bool processes, int nworkers, variant_result *vr)
{
	char		path[600];
	harness		h;
	pm_error	err;
	wctx		w[MAXW];
	double		t0;
	uint64_t   *missing;

	memset(vr, 0, sizeof(*vr));
	reset_shared();
	nw = nworkers;
	ops_per_worker = TOTAL_OPS / nworkers;
	snprintf(path, sizeof(path), "%s/%s%d.pm", dir, processes ? "procs" : "threads", nworkers);
	harness_shared(&h);
	harness_attach(&h, harness_new_pool(path, PM_MODE_EADR, UINT64_C(1) << 30), (uint64_t) getpid(), 0);
	if (nbt_rebuild(&h.tree, false, &err) != PM_OK)
	{
		tap_diag("rebuild: %s", err.msg);
		return;
	}

	t0 = now_sec();
	if (!processes)
	{
		pthread_t	th[MAXW];

		for (int i = 0; i < nw; i++)
		{
			w[i].id = i;
			w[i].seed = 0x1234567ULL * (uint64_t) (i + 1) + 99 + test_seed * 7919;
			if (!wattach(&w[i], &h, h.pool, (uint64_t) getpid() | ((uint64_t) (i + 1) << 32)))
				return;
		}
		for (int i = 0; i < nw; i++)
			pthread_create(&th[i], NULL, thread_main, &w[i]);
		for (int i = 0; i < nw; i++)
			pthread_join(th[i], NULL);
		for (int i = 0; i < nw; i++)
			pm_epoch_unregister(&w[i].ep);
		vr->ran_ok = true;
	}
	else
	{
		pid_t		pids[MAXW];
		int			ok_exit = 0;

		for (int i = 0; i < nw; i++)
		{
			pids[i] = fork();
			if (pids[i] == 0)
			{
				pm_pool    *p;

				if (pm_pool_open(path, PM_MODE_EADR, &p, &err) != PM_OK)
				{
					fprintf(stderr, "child open: %s\n", err.msg);
					__atomic_fetch_add(&S->ready, 1, __ATOMIC_ACQ_REL);
					_exit(2);
				}
				w[i].id = i;
				w[i].seed = 0x7654321ULL * (uint64_t) (i + 1) + 7 + test_seed * 7919;
				if (!wattach(&w[i], &h, p, (uint64_t) getpid()))
				{
					__atomic_fetch_add(&S->ready, 1, __ATOMIC_ACQ_REL);
					_exit(3);
				}
				run_worker(&w[i]);
				pm_epoch_unregister(&w[i].ep);
				pm_pool_close(p);
				_exit(0);
			}
		}
		for (int i = 0; i < nw; i++)
		{
			int			status;

			waitpid(pids[i], &status, 0);
			ok_exit += WIFEXITED(status) && WEXITSTATUS(status) == 0;
		}
		vr->ran_ok = ok_exit == nw;
	}

	vr->run_sec = now_sec() - t0;
	t0 = now_sec();
	/* offline check of every recorded scan */
	vr->views = collect_views(&vr->nviews);
	vr->nscans = vr->nviews;
	missing = calloc(vr->nviews + 1, sizeof(uint64_t));
	check_scans(vr->views, vr->nviews, S->ninserted, &vr->cr, missing);
	/* the definition, entry by entry, on a sample: must agree with the counting checker */
	for (size_t i = 0; i < vr->nviews && i < BRUTE_SAMPLE; i++)
	{
		size_t		j = (i * 7919) % vr->nviews;

		if (brute_missing(&vr->views[j], S->ninserted) != missing[j])
			vr->brute_mismatch++;
	}
	free(missing);

	nbt_get_stats(&h.tree, &vr->st);
	vr->final_why = final_content(&h.tree);
	vr->leak_why = leak_check(&h);
	vr->check_sec = now_sec() - t0;
	/* the recorded data stays mapped for the negative control; the tree is done */
	pm_pool_close(h.pool);
	munmap(h.arena, HARNESS_ARENA);
	harness_domain_unmap(h.dom);
}

static void
report_variant(const char *name, variant_result *vr)
{
	tap_diag("%s: %llu absent deletes, %llu range reads "
			 "(%llu backward, %llu leaf reads), %llu compaction calls (%llu compacted), "
			 "%llu sweeps over key ranges",
			 name, (unsigned long long) S->neg_deletes, (unsigned long long) S->reads,
			 (unsigned long long) S->backward_reads, (unsigned long long) S->batches,
			 (unsigned long long) S->compact_calls, (unsigned long long) S->compacted,
			 (unsigned long long) S->sweeps);
	tap_diag("%s: %llu sorted batches of %llu entries (%llu of them live already)", name,
			 (unsigned long long) S->sorted_batches, (unsigned long long) S->sorted_entries,
			 (unsigned long long) S->sorted_again);
	tap_diag("%s: workers ran %.1f s, checks took %.1f s; %llu splits, %llu compactions, "
			 "%llu merges, %llu leaves, height %llu",
			 name, vr->run_sec, vr->check_sec, (unsigned long long) vr->st.smo_splits,
			 (unsigned long long) vr->st.smo_compactions, (unsigned long long) vr->st.smo_merges,
			 (unsigned long long) vr->st.leaves, (unsigned long long) vr->st.height);
	if (S->msg_claimed)
		tap_diag("%s: first online failure: %s", name, S->msg);
	if (vr->cr.first_bad >= 0)
		tap_diag("%s: first offline failure: %s", name, vr->cr.why);
	if (vr->final_why)
		tap_diag("%s: final: %s", name, vr->final_why);
	if (vr->leak_why)
		tap_diag("%s: leak: %s", name, vr->leak_why);

	tap_ok(vr->ran_ok && S->errors == 0 && S->bad_online == 0,
		   "%s: %d workers x %ld ops without an error; delete results, batch order, fences "
		   "and contiguity held (%llu errors, %llu violations)",
		   name, nw, ops_per_worker, (unsigned long long) S->errors,
		   (unsigned long long) S->bad_online);
	tap_ok(vr->cr.missing == 0 && vr->cr.phantom == 0 && vr->nscans > 1000 && vr->brute_mismatch == 0,
		   "%s: %llu range reads consistent with the serial order (%llu entries required, "
		   "%llu returned): %llu missing, %llu phantoms; brute force agreed on a sample "
		   "(%llu disagreements); %llu reads not recorded",
		   name, (unsigned long long) vr->nscans, (unsigned long long) vr->cr.must_total,
		   (unsigned long long) vr->cr.returned, (unsigned long long) vr->cr.missing,
		   (unsigned long long) vr->cr.phantom, (unsigned long long) vr->brute_mismatch,
		   (unsigned long long) S->unrecorded);
	tap_ok(vr->final_why == NULL,
		   "%s: afterwards nbt_check passes and a full read is exactly the live entries", name);
	tap_ok(vr->leak_why == NULL,
		   "%s: no PM or DRAM block is allocated that the tree does not reach", name);
	tap_ok(vr->st.smo_splits + vr->st.smo_compactions >= 2000 && vr->st.smo_merges >= 1000 &&
		   vr->st.height >= 1,
		   "%s: heavy SMO traffic (%llu SMOs, %llu of them merges)", name,
		   (unsigned long long) (vr->st.smo_splits + vr->st.smo_compactions + vr->st.smo_merges),
		   (unsigned long long) vr->st.smo_merges);
}

/*
 * Negative control: fabricate scans from real ones, one with an entry that
 * had to be there removed, one with an entry deleted before it added; the
 * checker must report exactly those.
 */
static bool
negative_control(variant_result *vr, char *why, size_t whylen)
{
	long		victim = -1;
	long		host = -1;
	uint32_t	dead_packed = 0;
	scan_view	fake[2];
	uint32_t   *res0 = NULL;
	uint32_t   *res1 = NULL;
	check_result cr,
				clean;
	bool		ok;

	for (size_t i = 0; i < vr->nviews && (victim < 0 || host < 0); i++)
	{
		const scan_view *v = &vr->views[i];

		if (victim < 0)
		{
			for (uint32_t j = 0; j < v->nres; j++)
			{
				const rec  *e = rec_of_result(v->res[j], S->ninserted);

				if (e && must_be_seen(e, v))
				{
					victim = (long) i;
					res0 = malloc(sizeof(uint32_t) * v->nres);
					memcpy(res0, v->res, sizeof(uint32_t) * j);
					memcpy(res0 + j, v->res + j + 1, sizeof(uint32_t) * (v->nres - j - 1));
					break;
				}
			}
		}
		if (host < 0 && (long) i != victim)
		{
			/* an entry of this scan's range deleted before the scan started */
			for (int w = 0; w < nw && host < 0; w++)
			{
				for (uint64_t seq = 0; seq < S->ninserted[w]; seq++)
				{
					const rec  *e = rec_of(w, seq);

					if (e->del_end != 0 && e->del_end < v->start &&
						e->kidx >= v->klo && e->kidx < v->khi)
					{
						host = (long) i;
						dead_packed = PACK(e->kidx, w, seq);
						res1 = malloc(sizeof(uint32_t) * (v->nres + 1));
						memcpy(res1, v->res, sizeof(uint32_t) * v->nres);
						res1[v->nres] = dead_packed;
						break;
					}
				}
			}
		}
	}
	if (victim < 0 || host < 0)
	{
		snprintf(why, whylen, "no suitable scans to fabricate from");
		free(res0);
		free(res1);
		return false;
	}
	fake[0] = vr->views[victim];
	fake[0].res = res0;
	fake[0].nres--;
	fake[1] = vr->views[host];
	fake[1].res = res1;
	fake[1].nres++;

	check_scans(fake, 2, S->ninserted, &cr, NULL);
	check_scans(&vr->views[victim], 1, S->ninserted, &clean, NULL);
	ok = cr.missing == 1 && cr.phantom == 1 && clean.missing == 0 && clean.phantom == 0 &&
		brute_missing(&fake[0], S->ninserted) == 1;
	snprintf(why, whylen, "checker reported %llu missing and %llu phantoms (first: %s)",
			 (unsigned long long) cr.missing, (unsigned long long) cr.phantom, cr.why);
	free(res0);
	free(res1);
	return ok;
}

int
main(void)
{
	char	   *dir = tap_tmpdir("nbt_concurrent");
	variant_result vr;
	char		why[400];
	bool		neg;

	if (getenv("PM_TEST_SEED"))
		test_seed = strtoull(getenv("PM_TEST_SEED"), NULL, 10);
	tap_plan(16);
	if (test_seed)
		tap_diag("PM_TEST_SEED=%llu", (unsigned long long) test_seed);
	alarm(600);					/* a hang is a failure, not a stuck run */
	S = mmap(NULL, sizeof(shared_state), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	recs = mmap(NULL, sizeof(rec) * MAXW * MAX_SEQ, PROT_READ | PROT_WRITE,
				MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	scans = mmap(NULL, sizeof(scan_rec) * MAXW * MAX_SCANS, PROT_READ | PROT_WRITE,
				 MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	results = mmap(NULL, sizeof(uint32_t) * MAXW * RES_CAP, PROT_READ | PROT_WRITE,
				   MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (S == MAP_FAILED || recs == MAP_FAILED || scans == MAP_FAILED || results == MAP_FAILED)
	{
		perror("mmap");
		return 2;
	}

	run_variant(dir, false, 2, &vr);
	report_variant("2 threads", &vr);
	neg = negative_control(&vr, why, sizeof(why));
	tap_ok(neg, "negative control: fabricated scans with a missing and a phantom entry are caught: %s",
		   why);
	free(vr.views);

	run_variant(dir, true, 2, &vr);
	report_variant("2 processes", &vr);
	free(vr.views);

	/* more workers than cores: preemption lands in the middle of operations and SMOs */
	run_variant(dir, false, 4, &vr);
	report_variant("4 threads on 2 cores", &vr);
	free(vr.views);

	tap_rmdir(dir);
	return tap_done();
}
