/*
 * test_fbrtree_model.c
 *	  Single-thread model check of the fbrtree against brute force: a million
 *	  random boxes (uniform, then clustered; points, degenerate segments,
 *	  edges on a grid so that touching is common) inserted one by one, window
 *	  queries with each predicate (overlap, contains, contained-by, same),
 *	  a third of the entries deleted (nodes shrink and merge), more queries,
 *	  KNN against a brute-force order, structure checks along the way; then
 *	  the same data bulk-loaded with STR.  (What the split heuristics and
 *	  fan-outs cost is measured by bench/bin/bench_fbrtree.)
 *
 * Built with FBR_TEST_ND (test_fbrtree_model_nd.c), the same phases run on
 * boxes of 3 and then 4 dimensions, on less data.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "fbr_harness.h"

#include <sys/resource.h>
#include <sys/wait.h>

#ifdef FBR_TEST_ND
#define N_UNIFORM	(200000 / FBR_SCALE_DOWN)
#define N_CLUSTERED	(100000 / FBR_SCALE_DOWN)
#else
#define N_UNIFORM	(1000000 / FBR_SCALE_DOWN)
#define N_CLUSTERED	(300000 / FBR_SCALE_DOWN)
#endif
#define QUERIES		(5000 / FBR_SCALE_DOWN)	/* per phase: before and after deletes */
#define KNN_QUERIES	(200 / FBR_SCALE_DOWN)
#define KNN_K		20

typedef struct ref_item
{
	fbr_item	it;
	bool		live;
} ref_item;

static ref_item *ref;			/* sorted by box.min[0] */
static size_t nref;
static fbr_item *items;			/* by payload */
static bool *live;				/* by payload */

static int
ref_cmp(const void *a, const void *b)
{
	double		x = ((const ref_item *) a)->it.box.min[0],
				y = ((const ref_item *) b)->it.box.min[0];

	return x < y ? -1 : x > y;
}

static void
build_reference(size_t n)
{
	nref = n;
	for (size_t i = 0; i < n; i++)
	{
		ref[i].it = items[i];
		ref[i].live = live[i];
	}
	qsort(ref, n, sizeof(ref_item), ref_cmp);
}

static size_t
first_min0_at_least(double x)
{
	size_t		lo = 0,
				hi = nref;

	while (lo < hi)
	{
		size_t		mid = (lo + hi) / 2;

		if (ref[mid].it.box.min[0] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Brute force over the entries whose min[0] can qualify (boxes are at most MAX_EXTENT wide). */
static size_t
reference_query(const query *qu, fbr_item *out)
{
	double		lo,
				hi;
	size_t		n = 0;

	switch (qu->op)
	{
		case Q_OVERLAP:
			lo = qu->q.min[0] - MAX_EXTENT, hi = qu->q.max[0];
			break;
		case Q_CONTAINED:
			lo = qu->q.min[0], hi = qu->q.max[0];
			break;
		case Q_CONTAINS:
			lo = qu->q.max[0] - MAX_EXTENT, hi = qu->q.min[0];
			break;
		default:
			lo = hi = qu->q.min[0];
	}
	for (size_t i = first_min0_at_least(lo); i < nref && ref[i].it.box.min[0] <= hi; i++)
		if (ref[i].live && query_leaf(qu, &ref[i].it.box))
			out[n++] = ref[i].it;
	qsort(out, n, sizeof(fbr_item), payload_cmp);
	return n;
}

/*
 * The widest window side: 30 in 2-D, wider in more dims so that windows
 * still hold entries (about as many as a 2-D window of the same side in 2-D
 * would at a tenth of the data).
 */
static double
window_span(int dims)
{
	return dims == 2 ? 30 : dims == 3 ? 100 : 180;
}

static query
random_query(uint64_t *s, size_t n)
{
	query		qu;
	size_t		pick = xorshift(s) % n;
	int			dims = fbr_test_dims;

	qu.op = (query_op) (xorshift(s) % Q_NOPS);
	qu.dims = dims;
	switch (qu.op)
	{
		case Q_OVERLAP:
		case Q_CONTAINED:
			for (int d = 0; d < dims; d++)
				qu.q.min[d] = grid(s, 0, 990);
			for (int d = 0; d < dims; d++)
				qu.q.max[d] = qu.q.min[d] + grid(s, 0, window_span(dims));
			break;
		case Q_CONTAINS:
			/* a point or a piece of an entry's box, often its corner */
			qu.q = items[pick].box;
			if (xorshift(s) % 2)
				for (int d = 0; d < dims; d++)
					qu.q.max[d] = qu.q.min[d];
			break;
		default:
			qu.q = items[pick].box;
	}
	return qu;
}

/* Run queries against the tree and the reference; returns the number that differ. */
static int
compare_queries(fbr_tree *t, uint64_t *s, size_t n, int nq, uint64_t *matches, int *first_bad)
{
	fbr_item   *want = malloc(sizeof(fbr_item) * n);
	fbr_results got = {0};
	int			bad = 0;
	pm_error	err;

	*first_bad = -1;
	for (int i = 0; i < nq; i++)
	{
		query		qu = random_query(s, n);
		size_t		nw = reference_query(&qu, want);
		bool		same;

		got.n = 0;
		if (fbr_search(t, query_consistent, &qu, &got, &err) != PM_OK)
		{
			bad++;
			continue;
		}
		if (got.n > 1)
			qsort(got.items, got.n, sizeof(fbr_item), payload_cmp);
		same = got.n == nw;
		for (size_t k = 0; same && k < nw; k++)
			same = item_same(&got.items[k], &want[k], fbr_test_dims);
		*matches += nw;
		if (!same && bad++ == 0)
		{
			char		text[200];

			*first_bad = i;
			tap_diag("query %d (%s %s): tree %zu results, brute force %zu", i, query_op_name[qu.op],
					 fbr_box_text(text, sizeof(text), &qu.q, fbr_test_dims), got.n, nw);
		}
	}
	fbr_results_free(&got);
	free(want);
	return bad;
}

/* ---------- KNN ---------- */

/* The k smallest distances of the live entries, ascending, in best[]; returns how many. */
static int
smallest_distances(point *p, size_t n, double *best, int k)
{
	int			nb = 0;

	for (size_t i = 0; i < n; i++)
	{
		double		d;
		int			j;

		if (!live[i])
			continue;
		d = point_box_distance(p, &items[i].box, true);
		if (nb == k && d >= best[k - 1])
			continue;
		j = nb < k ? nb++ : k - 1;
		for (; j > 0 && best[j - 1] > d; j--)
			best[j] = best[j - 1];
		best[j] = d;
	}
	return nb;
}

/*
 * The iterator's first KNN_K distances must be the KNN_K smallest of the
 * live entries (ties in any order), non-decreasing, each for a live entry
 * at that distance, no entry twice.
 */
static int
compare_knn(fbr_tree *t, uint64_t *s, size_t n, int nq)
{
	int			bad = 0;
	double		all[KNN_K];
	pm_error	err;

	for (int qi = 0; qi < nq; qi++)
	{
		point		p = {fbr_test_dims, {0}};
		int			nl;
		fbr_knn    *k;
		uint64_t	seen[KNN_K];
		double		prev = 0;
		bool		ok;

		for (int d = 0; d < p.dims; d++)
			p.c[d] = grid(s, 0, 1000);
		nl = smallest_distances(&p, n, all, KNN_K);
		k = fbr_knn_begin(t, NULL, NULL, point_box_distance, &p, &err);
		ok = k != NULL;
		err.code = PM_OK;

		for (int j = 0; ok && j < nl; j++)
		{
			fbr_item	it;
			double		d;

			ok = fbr_knn_next(k, &it, &d, &err) && it.payload < n && live[it.payload] &&
				item_same(&it, &items[it.payload], p.dims) && d == all[j] && d >= prev &&
				d == point_box_distance(&p, &it.box, true);
			for (int x = 0; ok && x < j; x++)
				ok = seen[x] != it.payload;
			seen[j] = it.payload;
			prev = d;
		}
		if (k != NULL)
			fbr_knn_end(k);
		if (!ok && bad++ == 0)
			tap_diag("knn query %d at (%g, %g, ...) differs from brute force%s%s", qi, p.c[0], p.c[1],
					 err.code != PM_OK ? ": " : "", err.code != PM_OK ? err.msg : "");
	}
	return bad;
}

/* ---------- phases ---------- */

static void
make_items(uint64_t *s, size_t n, bool clustered)
{
	for (size_t i = 0; i < n; i++)
	{
		items[i].box = random_box_nd(s, clustered, fbr_test_dims);
		items[i].payload = i;
		live[i] = true;
	}
}

static void
check_tree(fbr_tree *t, uint64_t want_entries, const char *when)
{
	fbr_stats	st;
	const char *why = fbr_check(t, &st);

	tap_ok(why == NULL && st.entries == want_entries,
		   "%s: structure checks, %llu entries (want %llu), height %llu, %llu leaves, %llu inner, "
		   "%llu splits, %llu merges%s%s", when, (unsigned long long) st.entries,
		   (unsigned long long) want_entries, (unsigned long long) st.height,
		   (unsigned long long) st.leaves, (unsigned long long) st.inner_nodes,
		   (unsigned long long) st.splits, (unsigned long long) st.merges,
		   why ? ": " : "", why ? why : "");
}

static void
run_dataset(const char *dir, pm_epoch_domain *dom, size_t n, bool clustered, uint64_t seed,
			fbr_split_method split)
{
	char		name[64];
	char		path[600];
	fbr_harness h;
	pm_pool    *pool;
	uint64_t	s = seed;
	uint64_t	matches = 0;
	uint64_t	nlive = n;
	int			bad,
				first_bad;
	double		t0;
	pm_error	err;
	bool		ok = true;

	snprintf(name, sizeof(name), "%s%s%s", fbr_test_dims == 2 ? "" : fbr_test_dims == 3 ? "3-D " : "4-D ",
			 clustered ? "clustered" : "uniform", split == FBR_SPLIT_QUADRATIC ? ", quadratic split" : "");
	snprintf(path, sizeof(path), "%s/%s.pool", dir, name);
	pool = fbr_harness_pool(path, PM_MODE_EADR, 0);
	fbr_harness_attach(&h, pool, dom, 1);
	h.tree.split = split;
	make_items(&s, n, clustered);

	t0 = now_sec();
	for (size_t i = 0; i < n && ok; i++)
		ok = fbr_insert(&h.tree, &items[i], &err) == PM_OK;
	tap_ok(ok, "%s: %zu inserts in %.1f s", name, n, now_sec() - t0);
	check_tree(&h.tree, n, name);

	build_reference(n);
	t0 = now_sec();
	bad = compare_queries(&h.tree, &s, n, QUERIES, &matches, &first_bad);
	tap_ok(bad == 0, "%s: %d window queries (4 predicates) equal brute force (%llu matches, "
		   "%.1f s, %d differ)", name, QUERIES, (unsigned long long) matches, now_sec() - t0, bad);
	bad = compare_knn(&h.tree, &s, n, KNN_QUERIES);
	tap_ok(bad == 0, "%s: %d KNN queries (k=%d) equal brute-force order (%d differ)", name,
		   KNN_QUERIES, KNN_K, bad);

	/* delete a third: most in one corner so that nodes empty and merge */
	t0 = now_sec();
	ok = true;
	for (size_t i = 0; i < n && ok; i++)
	{
		bool		corner = items[i].box.min[0] < 400 && items[i].box.min[1] < 400;
		bool		found;

		if (xorshift(&s) % 100 < (corner ? 80 : 15))
		{
			ok = fbr_delete(&h.tree, &items[i], &found, &err) == PM_OK && found;
			live[i] = false;
			nlive--;
		}
	}
	{
		fbr_item	absent = items[0];
		bool		found = true;

		absent.payload = n + 1;
		ok = ok && fbr_delete(&h.tree, &absent, &found, &err) == PM_OK && !found;
	}
	tap_ok(ok, "%s: %llu deletes each found their entry, a delete of an absent one did not "
		   "(%.1f s)", name, (unsigned long long) (n - nlive), now_sec() - t0);
	check_tree(&h.tree, nlive, "after deletes");
	build_reference(n);
	matches = 0;
	bad = compare_queries(&h.tree, &s, n, QUERIES, &matches, &first_bad);
	tap_ok(bad == 0, "%s after deletes: %d window queries equal brute force (%llu matches, %d differ)",
		   name, QUERIES, (unsigned long long) matches, bad);
	bad = compare_knn(&h.tree, &s, n, KNN_QUERIES);
	tap_ok(bad == 0, "%s after deletes: %d KNN queries equal brute-force order (%d differ)", name,
		   KNN_QUERIES, bad);
	pm_epoch_drain(&h.epoch);
	pm_epoch_unregister(&h.epoch);
	pm_pool_close(pool);
}

/* STR bulk load of the live entries; queries and KNN against the reference. */
static void
run_str(const char *dir, pm_epoch_domain *dom, size_t n)
{
	char		path[600];
	fbr_harness h;
	pm_pool    *pool;
	fbr_item   *copy = malloc(sizeof(fbr_item) * n);
	size_t		nl = 0;
	uint64_t	s = 99;
	uint64_t	matches = 0;
	int			bad,
				first_bad;
	double		t0;
	pm_error	err;
	pm_errcode	rc;
	fbr_stats	st;

	snprintf(path, sizeof(path), "%s/str.pool", dir);
	pool = fbr_harness_pool(path, PM_MODE_EADR, 0);
	fbr_harness_attach(&h, pool, dom, 1);
	for (size_t i = 0; i < n; i++)
		if (live[i])
			copy[nl++] = items[i];
	/* the empty tree answers nothing, and a tree that is not empty refuses a bulk load */
	{
		fbr_results none = {0};
		point		p = {fbr_test_dims, {1, 1, 1, 1}};
		fbr_knn    *k = fbr_knn_begin(&h.tree, NULL, NULL, point_box_distance, &p, &err);
		fbr_item	it;
		double		d;
		pm_error	kerr;
		bool		knn_empty = k != NULL && !fbr_knn_next(k, &it, &d, &kerr) && kerr.code == PM_OK;
		pm_errcode	refused;

		if (k != NULL)
			fbr_knn_end(k);
		rc = fbr_search(&h.tree, accept_all, NULL, &none, &err);
		fbr_insert(&h.tree, &items[0], &err);
		refused = fbr_bulk_load(&h.tree, copy, nl, 90, &err);
		fbr_delete(&h.tree, &items[0], &(bool) {false}, &err);
		tap_ok(rc == PM_OK && none.n == 0 && knn_empty && refused == PM_ERR_INVALID,
			   "empty tree: search and KNN return nothing; a bulk load into a non-empty tree is "
			   "refused (%s)", err.msg);
		fbr_results_free(&none);
	}
	t0 = now_sec();
	rc = fbr_bulk_load(&h.tree, copy, nl, 90, &err);
	t0 = now_sec() - t0;
	fbr_get_stats(&h.tree, &st);
	{
		/* leaves of 90% of this dims' entries per node */
		size_t		per = (size_t) h.tree.cap * 90 / 100;

		tap_ok(rc == PM_OK && st.leaves == (nl + per - 1) / per,
			   "STR bulk load of %zu entries at 90%% fill (%d per node) in %.2f s: %llu leaves",
			   nl, h.tree.cap, t0, (unsigned long long) st.leaves);
	}
	check_tree(&h.tree, nl, "after STR");
	bad = compare_queries(&h.tree, &s, n, QUERIES, &matches, &first_bad);
	bad += compare_knn(&h.tree, &s, n, KNN_QUERIES);
	tap_ok(bad == 0, "STR tree: %d window and %d KNN queries equal brute force (%d differ)",
		   QUERIES, KNN_QUERIES, bad);
	/* the loaded tree takes inserts and deletes */
	{
		bool		ok = true,
					found;

		for (size_t i = 0; i < n && ok; i += 3)
		{
			if (live[i])
				ok = fbr_delete(&h.tree, &items[i], &found, &err) == PM_OK && found;
			else
				ok = fbr_insert(&h.tree, &items[i], &err) == PM_OK;
			live[i] = !live[i];
		}
		build_reference(n);
		matches = 0;
		nl = 0;
		for (size_t i = 0; i < n; i++)
			nl += live[i];
		check_tree(&h.tree, nl, "STR tree after inserts and deletes");
		bad = ok ? compare_queries(&h.tree, &s, n, QUERIES, &matches, &first_bad) : -1;
		bad += ok ? compare_knn(&h.tree, &s, n, KNN_QUERIES) : 0;
		tap_ok(bad == 0, "STR tree after inserts and deletes: window and KNN queries equal brute force");
	}
	free(copy);
	pm_epoch_drain(&h.epoch);
	pm_epoch_unregister(&h.epoch);
	pm_pool_close(pool);
}

#ifndef FBR_TEST_ND				/* the 2-D run covers it */
#if !defined(__SANITIZE_ADDRESS__)
/* Inner boxes at 0, entries at 1: every node is read before the first result. */
static double
nodes_first_distance(void *arg, const fbr_box *b, bool is_leaf)
{
	(void) arg;
	(void) b;
	return is_leaf ? 1 : 0;
}
#endif

#define OOM_N		300000		/* entries the queue must hold at once: 17 MB */
#define OOM_MARGIN	(4 << 20)	/* address space the child may add */

/*
 * Out of memory in fbr_knn_next is an error, not an end: a child process
 * caps its address space OOM_MARGIN above what it maps, then runs a scan
 * whose queue must hold all OOM_N entries before its first result.  The
 * call must fail with PM_ERR_NOMEM, and so must the next one.  Not under
 * ASan, whose shadow memory does not live with an address-space limit.
 */
static void
knn_out_of_memory(const char *dir, pm_epoch_domain *dom)
{
#if defined(__SANITIZE_ADDRESS__)
	(void) dir;
	(void) dom;
	tap_ok(true, "# SKIP KNN out of memory: needs an address-space limit, not under ASan");
#else
	static const char *const outcome[] = {
		"fails with PM_ERR_NOMEM, and again on the next call", "returned an entry",
		"ended as if the scan were complete", "failed with another code",
		"the second call did not fail the same way", "set-up failed"};
	char		path[600];
	fbr_harness h;
	pm_pool    *pool;
	fbr_item   *all = malloc(sizeof(fbr_item) * OOM_N);
	pm_error	err;
	char	   *msg = mmap(NULL, sizeof(err.msg), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pid_t		pid;
	int			status = 0,
				code;

	snprintf(path, sizeof(path), "%s/oom.pool", dir);
	pool = fbr_harness_pool(path, PM_MODE_EADR, 0);
	fbr_harness_attach(&h, pool, dom, 1);
	for (uint64_t i = 0; i < OOM_N; i++)
	{
		double		x = (double) (i % 1000),
					y = (double) (i / 1000);

		all[i] = (fbr_item) {box2(x, y, x, y), i};
	}
	if (fbr_bulk_load(&h.tree, all, OOM_N, 90, &err) != PM_OK)
	{
		fprintf(stderr, "bulk load: %s\n", err.msg);
		exit(2);
	}
	free(all);
	pm_epoch_unregister(&h.epoch);
	fflush(stdout);
	pid = fork();
	if (pid == 0)
	{
		fbr_harness c;
		struct rlimit lim;
		unsigned long pages = 0;
		FILE	   *f = fopen("/proc/self/statm", "r");
		fbr_knn    *k;
		fbr_item	it;
		double		d;
		pm_error	err2;
		bool		ended;
		int			rc;

		if (f == NULL || fscanf(f, "%lu", &pages) != 1)
			_exit(5);
		fclose(f);
		fbr_harness_attach(&c, pool, dom, (uint64_t) getpid());
		lim.rlim_cur = lim.rlim_max = pages * (rlim_t) sysconf(_SC_PAGESIZE) + OOM_MARGIN;
		if (setrlimit(RLIMIT_AS, &lim) != 0)
			_exit(5);
		k = fbr_knn_begin(&c.tree, NULL, NULL, nodes_first_distance, NULL, &err);
		if (k == NULL)
			_exit(5);
		err.msg[0] = '\0';
		ended = !fbr_knn_next(k, &it, &d, &err);
		if (msg != MAP_FAILED)
			memcpy(msg, err.msg, sizeof(err.msg));
		if (!ended)
			rc = 1;
		else if (err.code == PM_OK)
			rc = 2;
		else if (err.code != PM_ERR_NOMEM || strstr(err.msg, "out of memory") == NULL)
			rc = 3;
		else if (fbr_knn_next(k, &it, &d, &err2) || err2.code != err.code ||
				 strcmp(err2.msg, err.msg) != 0)
			rc = 4;
		else
			rc = 0;
		fbr_knn_end(k);
		pm_epoch_unregister(&c.epoch);
		_exit(rc);
	}
	waitpid(pid, &status, 0);
	code = WIFEXITED(status) && WEXITSTATUS(status) <= 5 ? WEXITSTATUS(status) : 5;
	tap_ok(code == 0, "KNN out of memory (%d entries queued, address space capped): %s (%s)", OOM_N,
		   outcome[code], msg != MAP_FAILED ? msg : "");
	if (msg != MAP_FAILED)
		munmap(msg, sizeof(err.msg));
	pm_pool_close(pool);
#endif
}
#endif							/* FBR_TEST_ND */

int
main(void)
{
	char	   *dir = tap_tmpdir("fbr_model");
	pm_epoch_domain *dom = harness_domain();
	size_t		nmax = N_UNIFORM > N_CLUSTERED ? N_UNIFORM : N_CLUSTERED;

	ref = malloc(sizeof(ref_item) * nmax);
	items = malloc(sizeof(fbr_item) * nmax);
	live = malloc(sizeof(bool) * nmax);
#ifdef FBR_TEST_ND
	tap_plan(2 * 30);
	for (fbr_test_dims = 3; fbr_test_dims <= FBR_MAX_DIMS; fbr_test_dims++)
	{
		run_dataset(dir, dom, N_UNIFORM, false, 10 + fbr_test_dims, FBR_SPLIT_RSTAR);
		run_str(dir, dom, N_UNIFORM);
		run_dataset(dir, dom, N_CLUSTERED, true, 20 + fbr_test_dims, FBR_SPLIT_RSTAR);
		run_dataset(dir, dom, N_CLUSTERED / 3, true, 30 + fbr_test_dims, FBR_SPLIT_QUADRATIC);
	}
#else
	tap_plan(31);
	run_dataset(dir, dom, N_UNIFORM, false, 1, FBR_SPLIT_RSTAR);
	run_str(dir, dom, N_UNIFORM);
	knn_out_of_memory(dir, dom);
	run_dataset(dir, dom, N_CLUSTERED, true, 2, FBR_SPLIT_RSTAR);
	/* the alternative heuristic bench_fbrtree measures: correct too */
	run_dataset(dir, dom, N_CLUSTERED / 3, true, 3, FBR_SPLIT_QUADRATIC);
#endif
	free(ref);
	free(items);
	free(live);
	tap_rmdir(dir);
	return tap_done();
}
