/*
 * test_fbrtree_concurrent.c
 *	  Concurrent stress of the fbrtree: 2 threads, 2 processes, then 4
 *	  threads on 2 cores (preemption inside splits and merges), each
 *	  inserting its own entries into one small area (so both work in the
 *	  same nodes and splits and merges are constant), deleting 31 of every 32
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
 * deleted before the scan began, and miss no entry inserted before the scan
 * began, never deleted and closer than the last result.  First, three
 * deterministic interleavings put a chosen change between two calls of a
 * KNN scan (README "KNN", rules 1-3), and four put one in the middle of a
 * window search or of a delete's leaf lookup (README "Readers": a merged-away
 * node, a sibling searched before).  At the end the structure must check,
 * a full scan must equal exactly the entries inserted and not deleted, and
 * the allocator must hold exactly the nodes the tree reaches.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "fbr_harness.h"
#include "fbr_internal.h"

#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

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
	uint64_t	knn_missing;
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

	xorshift(&s);
	x = band_at(payload / (uint64_t) nw) + grid(&s, 0, BAND);
	y = grid(&s, 0, AREA);
	w = xorshift(&s) % 3 == 0 ? 0 : grid(&s, 0, MAX_W);
	h = xorshift(&s) % 3 == 0 ? 0 : grid(&s, 0, MAX_W);
	it.box = box2(x, y, x + w, y + h);
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
	query		qu = {Q_OVERLAP, box2(0, 0, 0, 0), 2};
	pm_error	err;
	uint64_t	must = 0,
				found_must = 0;

	qu.q.min[0] = band_at(j) + grid(s, 0, 2 * BAND) - 1.5 * BAND;
	qu.q.min[1] = grid(s, 0, AREA);
	qu.q.max[0] = qu.q.min[0] + grid(s, 0, 20);
	qu.q.max[1] = qu.q.min[1] + grid(s, 0, 20);
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
		fbr_item	want = p < TOTAL ? universe[p] : (fbr_item) {box2(0, 0, 0, 0), 0};

		if (i > 0 && got->items[i - 1].payload == p)
			__atomic_fetch_add(&S->duplicates, 1, __ATOMIC_RELAXED);
		if (p / (uint64_t) nw > ins1[p % (uint64_t) nw] || !item_same(&got->items[i], &want, 2) ||
			!fbr_box_overlaps(&want.box, &qu.q, 2) || deleted_before(p, del0))
		{
			__atomic_fetch_add(&S->phantoms, 1, __ATOMIC_RELAXED);
			fail_once("phantom: payload %llu returned (inserted %llu of its worker)", p, ins1[p % (uint64_t) nw]);
		}
		else if (!ever_deleted(p / (uint64_t) nw) && p / (uint64_t) nw < ins0[p % (uint64_t) nw])
			found_must++;
	}
	/* brute force over the entries whose band reaches the window */
	{
		double		lo = (qu.q.min[0] - BAND - MAX_W) * per_worker / (AREA - BAND);
		uint64_t	first = lo < 0 ? 0 : (uint64_t) lo / KEEP_EVERY * KEEP_EVERY;

		for (int w = 0; w < nw; w++)
			for (uint64_t j = first + KEEP_EVERY - 1; j < ins0[w] && band_at(j) <= qu.q.max[0]; j += KEEP_EVERY)
				must += fbr_box_overlaps(&universe[j * (uint64_t) nw + w].box, &qu.q, 2);
	}
	if (found_must != must)
	{
		__atomic_fetch_add(&S->missing, must - found_must, __ATOMIC_RELAXED);
		fail_once("false negatives: %llu of %llu required entries returned", found_must, must);
	}
	__atomic_fetch_add(&S->matches, got->n, __ATOMIC_RELAXED);
	__atomic_fetch_add(&S->queries, 1, __ATOMIC_RELAXED);
}

/*
 * KNN_N results (or all there are), then: distinct, non-decreasing, each at
 * its true distance, none deleted before the scan began, and no false
 * negative: every entry inserted before the scan began and never deleted
 * that is strictly closer than the last result was returned (closer ones
 * cannot be cut off by the limit; ties at the last distance can).
 */
#define KNN_N		30

static void
knn_scan(fbr_tree *t, uint64_t *s, uint64_t j)
{
	uint64_t	ins0[MAXW],
				del0[MAXW];
	point		p = point2(band_at(j) + grid(s, 0, BAND), grid(s, 0, AREA));
	uint64_t	seen[KNN_N];
	double		prev = 0;
	fbr_item	it;
	double		d;
	int			n = 0;
	pm_error	err;
	fbr_knn    *k;
	bool		more = true;

	snapshot(ins0, del0);
	k = fbr_knn_begin(t, NULL, NULL, point_box_distance, &p, &err);
	if (k == NULL)
	{
		fail_once("knn begin failed (%llu %llu)", 0, 0);
		return;
	}
	while (n < KNN_N && (more = fbr_knn_next(k, &it, &d, &err)))
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
	fbr_knn_end(k);
	if (!more && err.code != PM_OK)
	{
		fail_once("knn next failed after %llu results (error code %llu)", (uint64_t) n,
				  (uint64_t) err.code);
		return;
	}
	/* brute force over the kept entries whose band reaches the disc of radius r */
	{
		double		r = more ? prev : 2 * AREA;
		double		lo = (p.c[0] - r - BAND - MAX_W) * per_worker / (AREA - BAND);
		uint64_t	first = lo < 0 ? 0 : (uint64_t) lo / KEEP_EVERY * KEEP_EVERY;

		for (int w = 0; w < nw; w++)
			for (uint64_t jj = first + KEEP_EVERY - 1; jj < ins0[w] && band_at(jj) <= p.c[0] + r;
				 jj += KEEP_EVERY)
			{
				const fbr_item *want = &universe[jj * (uint64_t) nw + (uint64_t) w];
				bool		found = false;

				if (more && point_box_distance(&p, &want->box, true) >= prev)
					continue;
				for (int i = 0; !found && i < n; i++)
					found = seen[i] == want->payload;
				if (!found)
				{
					__atomic_fetch_add(&S->knn_missing, 1, __ATOMIC_RELAXED);
					fail_once("knn: entry %llu closer than the last result was not returned (%llu results)",
							  want->payload, (uint64_t) n);
				}
			}
	}
	__atomic_fetch_add(&S->knn_scans, 1, __ATOMIC_RELAXED);
}

/* ---------- deterministic interleavings: changes between two fbr_knn_next calls ---------- */

/*
 * Points (i, i), payload i, bulk-loaded at 60% fill: leaf j holds points
 * 30j..30j+29, inner node X leaves 0..29, inner node V leaves 30..59, and
 * a root above the two.  A KNN iterator opened by one handle sees the
 * changes another handle makes between two of its calls exactly as it
 * would see concurrent ones, at chosen points of the scan.
 */
#define DIAG_N		1800
#define DIAG_MAX	2700		/* points of the largest diagonal tree */
#define DIAG_LEAF	30
#define DIAG_NEW	5000		/* payloads of entries inserted during a scan */

/* One interleaving: the tree, a reader and a writer, the reader's scan and its results. */
typedef struct diag
{
	pm_pool    *pool;
	fbr_harness r;
	fbr_harness w;
	uint64_t	n;				/* points (i, i), i < n */
	bool		must[DIAG_MAX];	/* the scan must return these */
	bool		gone[DIAG_MAX];	/* deleted before the scan began */
	fbr_stats	before;			/* the writer's counters before the changes */
	fbr_knn    *k;
	point		q;
	bool		got[DIAG_NEW + 100];
	double		prev;
	uint64_t	last;
	bool		ok;
	char		why[300];
} diag;

static fbr_item
diag_item(uint64_t i)
{
	double		c = (double) i;

	return (fbr_item) {box2(c, c, c, c), i};
}

static diag *
diag_open(const char *dir, const char *name, uint64_t n)
{
	diag	   *t = calloc(1, sizeof(diag));
	char		path[600];
	fbr_item   *all = malloc(sizeof(fbr_item) * n);
	fbr_stats	st;
	pm_error	err;

	snprintf(path, sizeof(path), "%s/%s.pool", dir, name);
	t->pool = fbr_harness_pool(path, PM_MODE_EADR, 0);
	fbr_harness_attach(&t->r, t->pool, dom, (uint64_t) 97 << 32 | (uint64_t) getpid());
	fbr_harness_attach(&t->w, t->pool, dom, (uint64_t) 98 << 32 | (uint64_t) getpid());
	for (uint64_t i = 0; i < n; i++)
		all[i] = diag_item(i);
	t->n = n;
	if (fbr_bulk_load(&t->w.tree, all, n, 60, &err) != PM_OK)
	{
		fprintf(stderr, "bulk load: %s\n", err.msg);
		exit(2);
	}
	free(all);
	fbr_get_stats(&t->w.tree, &st);
	if (st.leaves != n / DIAG_LEAF || st.inner_nodes != n / (DIAG_LEAF * DIAG_LEAF) + 1 ||
		st.height != 3)
	{
		fprintf(stderr, "diagonal tree: unexpected shape\n");
		exit(2);
	}
	t->ok = true;
	snprintf(t->why, sizeof(t->why), "ok");
	return t;
}

static void
diag_close(diag *t)
{
	if (t->k != NULL)
		fbr_knn_end(t->k);
	pm_epoch_drain(&t->w.epoch);
	pm_epoch_unregister(&t->r.epoch);
	pm_epoch_unregister(&t->w.epoch);
	pm_pool_close(t->pool);
	free(t);
}

static void
diag_fail(diag *t, const char *why)
{
	if (t->ok)
		snprintf(t->why, sizeof(t->why), "%s", why);
	t->ok = false;
}

/* The reader's scan from (x, x); the writer's counters as it begins. */
static void
diag_begin(diag *t, double x)
{
	pm_error	err;

	t->q = point2(x, x);
	fbr_get_stats(&t->w.tree, &t->before);
	t->k = fbr_knn_begin(&t->r.tree, NULL, NULL, point_box_distance, &t->q, &err);
	if (t->k == NULL)
		diag_fail(t, err.msg);
}

/* Delete points first..last. */
static void
diag_delete_points(diag *t, uint64_t first, uint64_t last)
{
	pm_error	err;
	bool		found = true;

	for (uint64_t i = first; found && i <= last; i++)
	{
		fbr_item	it = diag_item(i);

		if (fbr_delete(&t->w.tree, &it, &found, &err) != PM_OK)
			found = false;
	}
	if (!found)
		diag_fail(t, "a delete failed");
}

/* Delete every entry of leaves first..last (in order of x: what is left of each merges right). */
static void
diag_delete_leaves(diag *t, uint64_t first, uint64_t last)
{
	diag_delete_points(t, first * DIAG_LEAF, (last + 1) * DIAG_LEAF - 1);
}

/* Insert n new points (x, x) for x = from, from + step, ..., payloads from DIAG_NEW + first */
static void
diag_insert(diag *t, double from, double step, int n, uint64_t first)
{
	pm_error	err;

	for (int i = 0; i < n; i++)
	{
		double		c = from + i * step;
		fbr_item	it = {box2(c, c, c, c), DIAG_NEW + first + (uint64_t) i};

		if (fbr_insert(&t->w.tree, &it, &err) != PM_OK)
			diag_fail(t, err.msg);
	}
}

/*
 * Take up to limit results (-1: until the iterator ends): non-decreasing,
 * each at its distance, no repeat, none gone.
 */
static void
diag_take(diag *t, int limit)
{
	fbr_item	it;
	double		d;
	pm_error	err;
	int			i;

	for (i = 0; t->ok && i != limit && fbr_knn_next(t->k, &it, &d, &err); i++)
	{
		if (it.payload >= DIAG_NEW + 100 || t->got[it.payload] || d < t->prev ||
			d != point_box_distance(&t->q, &it.box, true) ||
			(it.payload < t->n && t->gone[it.payload]))
		{
			snprintf(t->why, sizeof(t->why), "entry %llu at %g after %g: out of order, repeated or deleted",
					 (unsigned long long) it.payload, d, t->prev);
			t->ok = false;
		}
		t->got[it.payload] = true;
		t->prev = d;
		t->last = it.payload;
	}
	if (t->ok && i != limit && err.code != PM_OK)
		diag_fail(t, err.msg);
}

/* The first entry the read had to return and did not, or -1. */
static int64_t
diag_first_missing(const diag *t)
{
	for (uint64_t i = 0; i < t->n; i++)
		if (t->must[i] && !t->got[i])
			return (int64_t) i;
	return -1;
}

/* How far the writer's counters moved since diag_begin (or dead_open). */
static fbr_stats
diag_moved(diag *t)
{
	fbr_stats	after;

	fbr_get_stats(&t->w.tree, &after);
	after.splits -= t->before.splits;
	after.merges -= t->before.merges;
	after.root_collapses -= t->before.root_collapses;
	return after;
}

/*
 * The scan to its end, then: every entry it must return was returned, and
 * the writer's counters moved by splits, merges and root collapses.
 */
static void
diag_finish(diag *t, const char *what, uint64_t splits, uint64_t merges, uint64_t collapses)
{
	fbr_stats	moved;
	int64_t		missing;

	diag_take(t, -1);
	if (t->ok && (missing = diag_first_missing(t)) >= 0)
	{
		fbr_item	missed = diag_item((uint64_t) missing);

		snprintf(t->why, sizeof(t->why), "entry %lld (at %g) never returned", (long long) missing,
				 point_box_distance(&t->q, &missed.box, true));
		t->ok = false;
	}
	moved = diag_moved(t);
	tap_ok(t->ok && moved.splits == splits && moved.merges == merges &&
		   moved.root_collapses == collapses,
		   "KNN: %s (%llu splits, %llu merges, %llu root collapses between two calls): %s", what,
		   (unsigned long long) moved.splits, (unsigned long long) moved.merges,
		   (unsigned long long) moved.root_collapses, t->why);
	diag_close(t);
}

/*
 * A split while the scan is past the split node: the new sibling, found
 * when the parent is re-validated, lies closer than the last result, and
 * holds an entry inserted after the scan began that is closer still.
 */
static void
knn_split_behind_frontier(const char *dir)
{
	diag	   *t = diag_open(dir, "split_behind", DIAG_N);

	for (int i = 0; i < DIAG_N; i++)
		t->must[i] = true;
	diag_begin(t, 1595);
	/* points 1575..1615: leaves 52 and 53 read, the frontier at 20 sqrt(2) */
	diag_take(t, 41);
	/*
	 * Leaf 52 (points 1560..1589) fills up with 20 points at its far end,
	 * then splits on (1588.5, 1588.5), 9.2 from q: the 20 points stay, the
	 * new sibling takes 1571..1589 and 1588.5, and its parent V changes.
	 */
	diag_insert(t, 1560 + 1 / 16.0, 1 / 16.0, 20, 0);
	diag_insert(t, 1588.5, 0, 1, 20);
	diag_finish(t, "a leaf behind the frontier splits", 1, 0, 0);
}

/*
 * An inner node V is read by the scan; then it is merged into its sibling X
 * as the victim, unchanged (its word is frozen from then on), the root
 * collapses to X, and a leaf L the scan found in V but has not read yet
 * splits, its new sibling going into X.  The scan reaches L through V.
 *
 * receiver_read false: q = (1560, 1560), the scan has not read X yet.
 * receiver_read true: before the scan, X loses leaves 20..29 (its box in
 * the root stays [0, 899]), and q = (1229, 1229): the scan reads X early
 * (key 330 sqrt(2)) but none of X's own children comes due before the
 * sibling's entries (630 sqrt(2) against 451 sqrt(2)), so only a second
 * read of X, whose word changed, finds the sibling in time.
 */
static void
knn_read_through_dead_node(const char *dir, bool receiver_read)
{
	diag	   *t = diag_open(dir, "dead_node", DIAG_N);
	int			x_first = receiver_read ? 20 : 30;	/* X keeps leaves 0..x_first-1 at first */

	/* V keeps leaves 52..59 (8 children: underfull, but too many for X's 30) */
	diag_delete_leaves(t, 30, 51);
	if (x_first < 30)
		diag_delete_leaves(t, x_first, 29);
	for (int i = 0; i < DIAG_N; i++)
	{
		t->gone[i] = i >= x_first * DIAG_LEAF && i < 52 * DIAG_LEAF;
		/* X keeps its last 9 leaves through the scan */
		t->must[i] = !t->gone[i] && i >= (x_first - 9) * DIAG_LEAF;
	}
	diag_begin(t, receiver_read ? 1229 : 1560);
	/* the root, V, (X,) and leaf 52 read, 1560 returned; leaf 56 queued */
	diag_take(t, 1);
	if (t->last != 1560)
		diag_fail(t, "the first result is not 1560");
	/* X down to 9 children: X merges with V (8), X receives; the root collapses to X */
	diag_delete_leaves(t, 0, x_first - 10);
	/* leaf 56 (points 1680..1709, now under X) splits: the new sibling goes into X */
	diag_insert(t, 1680.5, 1, 21, 0);
	diag_finish(t, receiver_read ? "read through a merged-away inner node, the receiver read before" :
				"read through a merged-away inner node, the receiver not read yet",
				1, x_first - 9 + 1, 1);
}

/* ---------- deterministic interleavings: a window search or a delete, changed under it ---------- */

/*
 * A read (a window search over everything, or a delete's lookup) is
 * changed under it by another handle at a chosen point: just before it
 * reads the leaf `at` holding point `del` (the search: at its consistent
 * call for at's entry; the delete, of del: at its first touch of at's
 * page, see delete_interleaved).  The change makes 1 split, `merges`
 * merges and no root collapse, and moves del: into a new leaf under the
 * inner node that holds point `home` (home_level 1), or into home's leaf
 * (home_level 2).
 */
typedef struct interleave_case
{
	const char *what;
	uint64_t	n;				/* points (i, i), i < n */
	void		(*prepare) (diag *t);	/* before the read */
	void		(*change) (diag *t);	/* while the read is about to read at */
	uint64_t	gone[2];		/* points prepare deletes: [first, end) */
	uint64_t	taken[2];		/* points change deletes */
	fbr_box		at_box;			/* at's entry in its parent, as the read finds it */
	uint64_t	del;
	uint64_t	home;
	int			home_level;
	bool		victim;			/* del's inner node is merged away */
	uint64_t	merges;
} interleave_case;

/* One run of a case: the tree, the nodes the premises name, how the change went. */
typedef struct interleave
{
	const interleave_case *k;
	diag	   *t;
	uint64_t	root,			/* del's path before the change */
				parent,
				at;
	uint64_t	home_node;
	bool		changed;
	const char *premise;		/* NULL, or what the change failed to bring about */
} interleave;

/* The lookup path of point i through the writer's handle: [root, inner node, leaf]. */
static bool
diag_path(diag *t, uint64_t i, uint64_t *path)
{
	fbr_item	it = diag_item(i);
	int			depth = -1;
	bool		found;

	pm_epoch_enter(&t->w.epoch);
	found = fbr_find_leaf(&t->w.tree, &it, path, &depth);
	pm_epoch_exit(&t->w.epoch);
	return found && depth == 2;
}

/* Insert an entry of the writer's (payloads DIAG_NEW.. are free). */
static void
diag_insert_box(diag *t, fbr_box box, uint64_t payload)
{
	fbr_item	it = {box, payload};
	pm_error	err;

	if (fbr_insert(&t->w.tree, &it, &err) != PM_OK)
		diag_fail(t, err.msg);
}

/*
 * Through a merged-away inner node.  Points (i, i), i < 2700: inner nodes X
 * (leaves 0..29), V (30..59) and W (60..89) under the root.  Before the
 * read, V keeps leaves 52..59 (8 children), X keeps leaves 0..19 and takes
 * a wide entry [0, 1750] (so X's box covers V's: a delete's lookup of a
 * point of V searches X, in vain, before V).  The read searches X, then
 * reads V; before it reads V's child L (leaf 56, points 1680..1709), X goes
 * down to 9 children and merges with V (X receives; V is dead, its word
 * frozen; the root keeps X and W, so the root pointer stays), then L, now
 * under X, splits and 1680..1699 move to a new leaf in X.  The read finds V
 * unchanged and the root changed, and X, searched before the merge, is the
 * only way to the moved points.
 */
static void
dead_prepare(diag *t)
{
	diag_delete_leaves(t, 30, 51);
	diag_delete_leaves(t, 20, 29);
	diag_insert_box(t, box2(0, 0, 1750, 1750), DIAG_NEW + 99);
}

static void
dead_change(diag *t)
{
	diag_delete_leaves(t, 0, 10);
	diag_insert(t, 1708 + 1 / 32.0, 1 / 32.0, 21, 0);
}

static const interleave_case dead_case = {
	"through a merged-away inner node, the receiver searched before", 2700,
	dead_prepare, dead_change, {20 * DIAG_LEAF, 52 * DIAG_LEAF}, {0, 11 * DIAG_LEAF},
	{{1680, 1680}, {1709, 1709}}, 1690, 11 * DIAG_LEAF, 1, true,
	12							/* 11 of X's leaves, then X with V */
};

/*
 * A split's new leaf merged into a leaf searched before.  Points (i, i), i <
 * 1800; leaf K (points 180..209) is down to 28 entries and takes a wide
 * entry [180, 230] (so a delete's lookup of 225 searches it, in vain, before
 * leaf L, points 210..239, which its page does not share).  The read
 * searches K; before it reads L, L splits (210..229 move to a new leaf N),
 * N loses 210..220 and merges into K (K receives, 9 + 28 entries).  The
 * read finds L without 221..229 and its parent changed, and K, searched
 * before the merge, is the only way to them.  No inner node dies: a sibling
 * searched before is not done with if its word changed since.
 */
static void
sibling_prepare(diag *t)
{
	diag_delete_points(t, 180, 182);
	diag_insert_box(t, box2(180, 180, 230, 230), DIAG_NEW + 99);
}

static void
sibling_change(diag *t)
{
	diag_insert(t, 238 + 1 / 32.0, 1 / 32.0, 21, 0);
	diag_delete_points(t, 210, 220);
}

static const interleave_case sibling_case = {
	"a split's new leaf merged into a leaf searched before", DIAG_N,
	sibling_prepare, sibling_change, {180, 183}, {210, 221},
	{{210, 210}, {239, 239}}, 225, 190, 2, false, 1
};

/* The case's tree, prepared; the nodes the premises name. */
static void
interleave_open(interleave *c, const interleave_case *k, const char *dir, const char *name)
{
	uint64_t	path[64];

	memset(c, 0, sizeof(*c));
	c->k = k;
	c->t = diag_open(dir, name, k->n);
	k->prepare(c->t);
	for (uint64_t i = 0; i < k->n; i++)
	{
		c->t->gone[i] = i >= k->gone[0] && i < k->gone[1];
		c->t->must[i] = !c->t->gone[i] && !(i >= k->taken[0] && i < k->taken[1]);
	}
	if (!diag_path(c->t, k->home, path))
		diag_fail(c->t, "home not found");
	c->home_node = path[k->home_level];
	if (!diag_path(c->t, k->del, path))
		diag_fail(c->t, "the point not found");
	c->root = path[0];
	c->parent = path[1];
	c->at = path[2];
	fbr_get_stats(&c->t->w.tree, &c->t->before);
}

/* The change, made while the read is about to read at; then its premises. */
static void
interleave_change(interleave *c)
{
	uint64_t	path[64];

	c->changed = true;
	c->k->change(c->t);
	if (c->k->victim && pm_load(&fbr_node_at(&c->t->w.tree, c->parent)->lock) != FBR_DEAD)
		c->premise = "the inner node was not merged away";
	else if (!diag_path(c->t, c->k->del, path) || path[0] != c->root ||
			 path[c->k->home_level] != c->home_node || path[2] == c->at)
		c->premise = "the point did not move where the case needs it";
}

/* Every entry the read had to return was returned; the change was made as planned; close. */
static void
interleave_verdict(interleave *c, const char *reader)
{
	diag	   *t = c->t;
	fbr_stats	moved = diag_moved(t);
	int64_t		missing = diag_first_missing(t);
	char		why[300];

	if (!c->changed)
		diag_fail(t, "the read never reached the node to change the tree at");
	else if (c->premise != NULL)
		diag_fail(t, c->premise);
	else if (missing >= 0)
	{
		snprintf(why, sizeof(why), "entry %lld never returned", (long long) missing);
		diag_fail(t, why);
	}
	tap_ok(t->ok && moved.splits == 1 && moved.merges == c->k->merges && moved.root_collapses == 0,
		   "%s: %s (%llu splits, %llu merges, %llu root collapses meanwhile): %s", reader, c->k->what,
		   (unsigned long long) moved.splits, (unsigned long long) moved.merges,
		   (unsigned long long) moved.root_collapses, t->why);
	diag_close(t);
}

/* Records the entries of a full search in t->got; false if one repeats or was gone before. */
static bool
diag_got(diag *t, const fbr_results *res)
{
	for (size_t i = 0; i < res->n; i++)
	{
		uint64_t	p = res->items[i].payload;

		if (p >= DIAG_NEW + 100 || t->got[p] || (p < t->n && t->gone[p]))
			return false;
		t->got[p] = true;
	}
	return true;
}

/* The search's consistent function: everything; at's entry is where the tree is changed. */
static bool
accept_all_change_at(void *arg, const fbr_box *box, bool is_leaf)
{
	interleave *c = arg;

	if (!is_leaf && !c->changed && fbr_box_equal(box, &c->k->at_box, 2))
		interleave_change(c);
	return true;
}

static void
search_interleaved(const interleave_case *k, const char *dir)
{
	interleave	c;
	fbr_results res = {0};
	pm_error	err;

	interleave_open(&c, k, dir, "search");
	if (fbr_search(&c.t->r.tree, accept_all_change_at, &c, &res, &err) != PM_OK)
		diag_fail(c.t, err.msg);
	else if (!diag_got(c.t, &res))
		diag_fail(c.t, "a result repeated or deleted before the search");
	fbr_results_free(&res);
	interleave_verdict(&c, "window search");
}

/*
 * The delete runs in a child whose own mapping of at's page is made
 * inaccessible: its first touch of the page (the lookup reading at) faults,
 * and the handler tells the parent ('P'; 'E' if the fault is not in at),
 * waits for the parent's changes, makes the page accessible again and
 * returns: the lookup goes on as if the changes had been concurrent.
 */
static struct
{
	char	   *page;
	size_t		page_size;
	const char *node;
	int			up;				/* child -> parent */
	int			down;			/* parent -> child */
} fault_pause;

static void
pause_on_fault(int sig, siginfo_t *si, void *uc)
{
	const char *addr = si->si_addr;
	char		c = addr >= fault_pause.node && addr < fault_pause.node + FBR_NODE_BYTES ? 'P' : 'E';

	(void) sig;
	(void) uc;
	if (write(fault_pause.up, &c, 1) != 1 || read(fault_pause.down, &c, 1) != 1 ||
		mprotect(fault_pause.page, fault_pause.page_size, PROT_READ | PROT_WRITE) != 0)
		_exit(3);
}

/* In the child: the delete; 'F' (found) or 'N' to the parent. */
static void
delete_child(interleave *c)
{
	fbr_harness h;
	struct sigaction sa;
	fbr_item	it = diag_item(c->k->del);
	bool		found = false;
	pm_error	err;
	char		res;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = pause_on_fault;
	sa.sa_flags = SA_SIGINFO;
	fbr_harness_attach(&h, c->t->pool, dom, (uint64_t) getpid());
	if (sigaction(SIGSEGV, &sa, NULL) != 0 ||
		mprotect(fault_pause.page, fault_pause.page_size, PROT_NONE) != 0)
		_exit(3);
	if (fbr_delete(&h.tree, &it, &found, &err) != PM_OK)
		found = false;
	res = found ? 'F' : 'N';
	if (write(fault_pause.up, &res, 1) != 1)
		_exit(3);
	pm_epoch_drain(&h.epoch);
	pm_epoch_unregister(&h.epoch);
	_exit(0);
}

static void
delete_interleaved(const interleave_case *k, const char *dir)
{
	interleave	c;
	int			up[2],
				down[2];
	pid_t		pid;
	int			status;
	char		msg = 0;
	fbr_results res = {0};
	pm_error	err;

	interleave_open(&c, k, dir, "delete");
	fault_pause.page_size = (size_t) sysconf(_SC_PAGESIZE);
	fault_pause.node = (const char *) fbr_node_at(&c.t->w.tree, c.at);
	fault_pause.page = (char *) ((uintptr_t) fault_pause.node & ~(uintptr_t) (fault_pause.page_size - 1));
	if (pipe(up) != 0 || pipe(down) != 0)
	{
		perror("pipe");
		exit(2);
	}
	fault_pause.up = up[1];
	fault_pause.down = down[0];
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		delete_child(&c);
	close(up[1]);
	close(down[0]);
	if (read(up[0], &msg, 1) == 1 && (msg == 'P' || msg == 'E'))
	{
		if (msg == 'P')
			interleave_change(&c);
		else
			diag_fail(c.t, "the lookup touched the page of the node to change the tree at before the node");
		if (write(down[1], &msg, 1) != 1 || read(up[0], &msg, 1) != 1)
			msg = 0;
	}
	close(up[0]);
	close(down[1]);
	waitpid(pid, &status, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		diag_fail(c.t, "the deleting child failed");
	else if (msg != 'F')
		diag_fail(c.t, msg == 'N' ? "the delete found nothing" : "the delete did not report");
	/* afterwards: the point is gone, everything else the read had to leave is there */
	c.t->must[k->del] = false;
	if (fbr_search(&c.t->r.tree, accept_all, NULL, &res, &err) != PM_OK)
		diag_fail(c.t, err.msg);
	else if (!diag_got(c.t, &res) || c.t->got[k->del])
		diag_fail(c.t, "the point is still there, or an entry repeats");
	fbr_results_free(&res);
	interleave_verdict(&c, "delete");
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
			item_same(&all.items[i], &universe[p], 2) &&
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
		   S->knn_bad == 0 && S->knn_missing == 0,
		   "%s: %d x %llu inserts, %llu deletes, %llu window queries (%llu results), %llu KNN scans "
		   "in %.1f s: %llu missing, %llu phantoms, %llu duplicates, %llu bad KNN, %llu missing "
		   "from KNN%s%s",
		   variant, nw, (unsigned long long) per_worker,
		   (unsigned long long) (S->deleted[0] + S->deleted[1] + S->deleted[2] + S->deleted[3]),
		   (unsigned long long) S->queries, (unsigned long long) S->matches,
		   (unsigned long long) S->knn_scans, secs, (unsigned long long) S->missing,
		   (unsigned long long) S->phantoms, (unsigned long long) S->duplicates,
		   (unsigned long long) S->knn_bad, (unsigned long long) S->knn_missing,
		   S->errors ? ": " : "", S->errors ? S->msg : "");
}

int
main(void)
{
	char	   *dir = tap_tmpdir("fbr_concurrent");
	char		path[600];
	double		t0;

	tap_plan(13);
	S = mmap(NULL, sizeof(shared_state), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	dom = harness_domain();
	knn_split_behind_frontier(dir);
	knn_read_through_dead_node(dir, false);
	knn_read_through_dead_node(dir, true);
	search_interleaved(&dead_case, dir);
	delete_interleaved(&dead_case, dir);
	search_interleaved(&sibling_case, dir);
	delete_interleaved(&sibling_case, dir);
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
