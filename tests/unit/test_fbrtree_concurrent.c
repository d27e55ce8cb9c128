/*
 * test_fbrtree_concurrent.c
 *	  Concurrent stress of the fbrtree: 2 threads, 2 processes, then 4
 *	  threads on 2 cores (preemption inside splits and merges), each
 *	  inserting its own entries into one small area (so both work in the
 *	  same nodes and splits and merges are constant), deleting every fourth
 *	  of its entries a little later, and running window queries and KNN
 *	  scans in between.
 *
 * Worker w's entry number j has payload j * workers + w and a box derived from the
 * payload.  Each worker publishes how many inserts and deletes it has
 * completed; a worker deletes its entries 0..30, 32..62, ... (all but one
 * in KEEP_EVERY) in order, LAG entries behind its inserts.  Boxes lie in a band
 * that moves across the area as j grows, so both workers insert into the
 * same nodes at the band's front while the nodes behind it empty and
 * merge.  A query snapshots both workers' counters
 * before it starts and after it ends, and then must satisfy:
 *   - no false negative: every entry in the window inserted before the
 *     start and never deleted (j % KEEP_EVERY == KEEP_EVERY - 1) is returned;
 *   - no phantom: every returned entry was at least in flight by the end,
 *     is in the window, and was not deleted before the start;
 *   - no duplicate.
 * KNN scans must return distinct entries in non-decreasing distance, none
 * deleted before the scan began.  At the end the structure must check,
 * a full scan must equal exactly the entries inserted and not deleted, and
 * the allocator must hold exactly the nodes the tree reaches.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "fbr_harness.h"

#include <math.h>
#include <pthread.h>
#include <sys/wait.h>
#include <time.h>

#define MAXW		4
#define TOTAL		(1600000 / FBR_SCALE_DOWN)	/* inserts over all workers */
#define LAG			500
#define KEEP_EVERY	32			/* one entry in KEEP_EVERY is never deleted */
#define QUERY_EVERY	8			/* inserts between queries */
#define KNN_EVERY	16			/* queries between KNN scans */
#define AREA		300.0
#define BAND		20.0		/* width of the band where inserts land */
#define MAX_W		4.0			/* widest box */

typedef struct shared_state
{
	uint64_t	inserted[MAXW];
	uint64_t	deleted[MAXW];	/* deletes done, in the order of delete_rank */
	uint64_t	queries;
	uint64_t	knn_scans;
	uint64_t	matches;
	uint64_t	missing;
	uint64_t	phantoms;
	uint64_t	duplicates;
	uint64_t	knn_bad;
	uint64_t	errors;
	char		msg[300];
} shared_state;

static shared_state *S;
static pm_pool *pool;
static pm_epoch_domain *dom;
static int	nw;					/* workers of the current variant */
static uint64_t per_worker;		/* TOTAL / nw */

/* The band's left edge for entry number j. */
static double
band_at(uint64_t j)
{
	return (double) j * (AREA - BAND) / per_worker;
}

static fbr_item *universe;		/* item_of every payload, computed once */

static fbr_item
item_of(uint64_t payload)
{
	uint64_t	s = payload * UINT64_C(0x9e3779b97f4a7c15) + 1;
	fbr_item	it;
	double		x,
				y,
				w,
				h;

	fbr_rand(&s);
	x = band_at(payload / (uint64_t) nw) + grid(&s, 0, BAND);
	y = grid(&s, 0, AREA);
	w = fbr_rand(&s) % 3 == 0 ? 0 : grid(&s, 0, MAX_W);
	h = fbr_rand(&s) % 3 == 0 ? 0 : grid(&s, 0, MAX_W);
	it.box = (fbr_box) {x, y, x + w, y + h};
	it.payload = payload;
	return it;
}

static void
fail_once(const char *fmt, uint64_t a, uint64_t b)
{
	if (__atomic_fetch_add(&S->errors, 1, __ATOMIC_ACQ_REL) == 0)
		snprintf(S->msg, sizeof(S->msg), fmt, (unsigned long long) a, (unsigned long long) b);
}

static void
snapshot(uint64_t *ins, uint64_t *del)
{
	for (int w = 0; w < nw; w++)
	{
		ins[w] = __atomic_load_n(&S->inserted[w], __ATOMIC_ACQUIRE);
		del[w] = __atomic_load_n(&S->deleted[w], __ATOMIC_ACQUIRE);
	}
}

static int
payload_cmp(const void *a, const void *b)
{
	uint64_t	x = ((const fbr_item *) a)->payload,
				y = ((const fbr_item *) b)->payload;

	return x < y ? -1 : x > y;
}

/* Entries j % KEEP_EVERY == KEEP_EVERY - 1 stay; the others are deleted in order of j. */
static bool
ever_deleted(uint64_t j)
{
	return j % KEEP_EVERY != KEEP_EVERY - 1;
}

static uint64_t
delete_rank(uint64_t j)
{
	return j / KEEP_EVERY * (KEEP_EVERY - 1) + j % KEEP_EVERY;
}

static bool
deleted_before(uint64_t payload, const uint64_t *del)
{
	uint64_t	j = payload / (uint64_t) nw;

	return ever_deleted(j) && delete_rank(j) < del[payload % (uint64_t) nw];
}

/* Windows near the band's front (where nodes split), sometimes behind it (merges). */
static void
window_query(fbr_tree *t, uint64_t *s, fbr_results *got, uint64_t j)
{
	uint64_t	ins0[MAXW],
				del0[MAXW],
				ins1[MAXW],
				del1[MAXW];
	query		qu = {Q_OVERLAP, {0, 0, 0, 0}};
	pm_error	err;
	uint64_t	must = 0,
				found_must = 0;

	qu.q.xmin = band_at(j) + grid(s, 0, 2 * BAND) - 1.5 * BAND;
	qu.q.ymin = grid(s, 0, AREA);
	qu.q.xmax = qu.q.xmin + grid(s, 0, 20);
	qu.q.ymax = qu.q.ymin + grid(s, 0, 20);
	got->n = 0;
	snapshot(ins0, del0);
	if (fbr_search(t, query_consistent, &qu, got, &err) != PM_OK)
	{
		fail_once("search failed (%llu %llu)", 0, 0);
		return;
	}
	snapshot(ins1, del1);
	if (got->n > 1)
		qsort(got->items, got->n, sizeof(fbr_item), payload_cmp);
	for (size_t i = 0; i < got->n; i++)
	{
		uint64_t	p = got->items[i].payload;
		fbr_item	want = p < TOTAL ? universe[p] : (fbr_item) {{0, 0, 0, 0}, 0};

		if (i > 0 && got->items[i - 1].payload == p)
			__atomic_fetch_add(&S->duplicates, 1, __ATOMIC_RELAXED);
		if (p / (uint64_t) nw > ins1[p % (uint64_t) nw] || !item_same(&got->items[i], &want) ||
			!fbr_box_overlaps(&want.box, &qu.q) || deleted_before(p, del0))
		{
			__atomic_fetch_add(&S->phantoms, 1, __ATOMIC_RELAXED);
			fail_once("phantom: payload %llu returned (inserted %llu of its worker)", p, ins1[p % (uint64_t) nw]);
		}
		else if (!ever_deleted(p / (uint64_t) nw) && p / (uint64_t) nw < ins0[p % (uint64_t) nw])
			found_must++;
	}
	/* brute force over the entries whose band reaches the window */
	{
		double		lo = (qu.q.xmin - BAND - MAX_W) * per_worker / (AREA - BAND);
		uint64_t	first = lo < 0 ? 0 : (uint64_t) lo / KEEP_EVERY * KEEP_EVERY;

		for (int w = 0; w < nw; w++)
			for (uint64_t j = first + KEEP_EVERY - 1; j < ins0[w] && band_at(j) <= qu.q.xmax; j += KEEP_EVERY)
				must += fbr_box_overlaps(&universe[j * (uint64_t) nw + w].box, &qu.q);
	}
	if (found_must != must)
	{
		__atomic_fetch_add(&S->missing, must - found_must, __ATOMIC_RELAXED);
		fail_once("false negatives: %llu of %llu required entries returned", found_must, must);
	}
	__atomic_fetch_add(&S->matches, got->n, __ATOMIC_RELAXED);
	__atomic_fetch_add(&S->queries, 1, __ATOMIC_RELAXED);
}

typedef struct point
{
	double		x,
				y;
} point;

static double
point_box_distance(void *arg, const fbr_box *b, bool is_leaf)
{
	const point *p = arg;
	double		dx = p->x < b->xmin ? b->xmin - p->x : p->x > b->xmax ? p->x - b->xmax : 0;
	double		dy = p->y < b->ymin ? b->ymin - p->y : p->y > b->ymax ? p->y - b->ymax : 0;

	(void) is_leaf;
	return sqrt(dx * dx + dy * dy);
}

static void
knn_scan(fbr_tree *t, uint64_t *s, uint64_t j)
{
	uint64_t	ins0[MAXW],
				del0[MAXW];
	point		p = {band_at(j) + grid(s, 0, BAND), grid(s, 0, AREA)};
	uint64_t	seen[30];
	double		prev = 0;
	fbr_item	it;
	double		d;
	int			n = 0;
	pm_error	err;
	fbr_knn    *k;

	snapshot(ins0, del0);
	k = fbr_knn_begin(t, NULL, NULL, point_box_distance, &p, &err);
	while (k != NULL && n < 30 && fbr_knn_next(k, &it, &d, &err))
	{
		bool		ok = d >= prev && !deleted_before(it.payload, del0) &&
			d == point_box_distance(&p, &it.box, true);

		for (int i = 0; ok && i < n; i++)
			ok = seen[i] != it.payload;
		if (!ok)
		{
			__atomic_fetch_add(&S->knn_bad, 1, __ATOMIC_RELAXED);
			fail_once("knn: entry %llu out of order, repeated or deleted (%llu)", it.payload, (uint64_t) n);
		}
		seen[n++] = it.payload;
		prev = d;
	}
	if (k != NULL)
		fbr_knn_end(k);
	__atomic_fetch_add(&S->knn_scans, 1, __ATOMIC_RELAXED);
}

static void
worker(int w, uint64_t token)
{
	fbr_harness h;
	fbr_results got = {0};
	uint64_t	s = 1234567 + (uint64_t) w;
	pm_error	err;
	uint64_t	nq = 0;

	fbr_harness_attach(&h, pool, dom, token);
	for (uint64_t j = 0; j < per_worker && S->errors == 0; j++)
	{
		fbr_item	it = universe[j * (uint64_t) nw + (uint64_t) w];

		if (fbr_insert(&h.tree, &it, &err) != PM_OK)
			fail_once("insert %llu failed", it.payload, 0);
		__atomic_store_n(&S->inserted[w], j + 1, __ATOMIC_RELEASE);
		if (j >= LAG && ever_deleted(j - LAG))
		{
			fbr_item	old = universe[(j - LAG) * (uint64_t) nw + (uint64_t) w];
			bool		found;

			if (fbr_delete(&h.tree, &old, &found, &err) != PM_OK || !found)
				fail_once("delete of %llu did not find it", old.payload, 0);
			__atomic_store_n(&S->deleted[w], delete_rank(j - LAG) + 1, __ATOMIC_RELEASE);
		}
		if (j % QUERY_EVERY == 0)
		{
			if (++nq % KNN_EVERY == 0)
				knn_scan(&h.tree, &s, j);
			else
				window_query(&h.tree, &s, &got, j);
		}
	}
	fbr_results_free(&got);
	pm_epoch_drain(&h.epoch);
	pm_epoch_unregister(&h.epoch);
}

static void *
thread_main(void *arg)
{
	int			w = (int) (intptr_t) arg;

	worker(w, (uint64_t) (w + 1) << 32 | (uint64_t) getpid());
	return NULL;
}

static void
count_block(void *ctx, uint64_t off, size_t size)
{
	(void) off;
	(void) size;
	(*(uint64_t *) ctx)++;
}

static bool
accept_all(void *arg, const fbr_box *b, bool is_leaf)
{
	(void) arg;
	(void) b;
	(void) is_leaf;
	return true;
}

/* The final state: structure, exact content, allocator. */
static void
verify_end(const char *variant)
{
	fbr_harness h;
	fbr_results all = {0};
	fbr_stats	st;
	const char *why;
	uint64_t	want = 0,
				blocks = 0;
	bool		exact;
	pm_error	err;

	fbr_harness_attach(&h, pool, dom, (uint64_t) 99 << 32 | (uint64_t) getpid());
	pm_epoch_drain(&h.epoch);
	why = fbr_check(&h.tree, &st);
	fbr_search(&h.tree, accept_all, NULL, &all, &err);
	if (all.n > 1)
		qsort(all.items, all.n, sizeof(fbr_item), payload_cmp);
	for (int w = 0; w < nw; w++)
		for (uint64_t j = 0; j < S->inserted[w]; j++)
			want += !deleted_before(j * (uint64_t) nw + (uint64_t) w, S->deleted);
	exact = all.n == want;
	for (size_t i = 0; exact && i < all.n; i++)
	{
		uint64_t	p = all.items[i].payload;

		exact = p / (uint64_t) nw < S->inserted[p % (uint64_t) nw] && !deleted_before(p, S->deleted) &&
			item_same(&all.items[i], &universe[p]) &&
			(i == 0 || all.items[i - 1].payload != p);
	}
	pm_alloc_foreach(&h.tree.pm, count_block, &blocks);
	tap_ok(why == NULL && exact && blocks == st.leaves + st.inner_nodes + 1,
		   "%s: the tree checks (%s), holds exactly the %llu live entries (%zu), the allocator "
		   "holds exactly its %llu nodes + meta (%llu blocks); %llu splits, %llu merges, height %llu",
		   variant, why ? why : "ok", (unsigned long long) want, all.n,
		   (unsigned long long) (st.leaves + st.inner_nodes), (unsigned long long) blocks,
		   (unsigned long long) st.splits, (unsigned long long) st.merges,
		   (unsigned long long) st.height);
	fbr_results_free(&all);
	pm_epoch_unregister(&h.epoch);
}

static void
report(const char *variant, double secs)
{
	tap_ok(S->errors == 0 && S->missing == 0 && S->phantoms == 0 && S->duplicates == 0 &&
		   S->knn_bad == 0,
		   "%s: %d x %llu inserts, %llu deletes, %llu window queries (%llu results), %llu KNN scans "
		   "in %.1f s: %llu missing, %llu phantoms, %llu duplicates, %llu bad KNN%s%s",
		   variant, nw, (unsigned long long) per_worker,
		   (unsigned long long) (S->deleted[0] + S->deleted[1] + S->deleted[2] + S->deleted[3]),
		   (unsigned long long) S->queries, (unsigned long long) S->matches,
		   (unsigned long long) S->knn_scans, secs, (unsigned long long) S->missing,
		   (unsigned long long) S->phantoms, (unsigned long long) S->duplicates,
		   (unsigned long long) S->knn_bad, S->errors ? ": " : "", S->errors ? S->msg : "");
}

static double
now_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int
main(void)
{
	char	   *dir = tap_tmpdir("fbr_concurrent");
	char		path[600];
	double		t0;

	tap_plan(6);
	S = mmap(NULL, sizeof(shared_state), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	dom = fbr_harness_domain();
	universe = malloc(sizeof(fbr_item) * TOTAL);
	for (int variant = 0; variant < 3; variant++)
	{
		static const char *const name[] = {"2 threads", "2 processes", "4 threads on 2 cores"};
		bool		processes = variant == 1;

		nw = variant == 2 ? 4 : 2;
		per_worker = TOTAL / (uint64_t) nw;
		for (uint64_t p = 0; p < TOTAL; p++)
			universe[p] = item_of(p);
		snprintf(path, sizeof(path), "%s/variant%d.pool", dir, variant);
		pool = fbr_harness_pool(path, PM_MODE_EADR, 0);
		memset(S, 0, sizeof(*S));
		t0 = now_sec();
		if (!processes)
		{
			pthread_t	th[MAXW];

			for (int w = 0; w < nw; w++)
				pthread_create(&th[w], NULL, thread_main, (void *) (intptr_t) w);
			for (int w = 0; w < nw; w++)
				pthread_join(th[w], NULL);
		}
		else
		{
			pid_t		pid[MAXW];

			for (int w = 0; w < nw; w++)
			{
				pid[w] = fork();
				if (pid[w] == 0)
				{
					worker(w, (uint64_t) getpid());
					_exit(0);
				}
			}
			for (int w = 0; w < nw; w++)
			{
				int			status;

				waitpid(pid[w], &status, 0);
				if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
					fail_once("worker process %llu exited abnormally (status %llu)", (uint64_t) w,
							  (uint64_t) status);
			}
		}
		report(name[variant], now_sec() - t0);
		verify_end(name[variant]);
		pm_pool_close(pool);
	}

	free(universe);
	tap_rmdir(dir);
	return tap_done();
}
