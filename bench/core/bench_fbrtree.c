/*
 * bench_fbrtree.c
 *	  The FBR-tree's design choices measured on the structure alone, no
 *	  server: fan-out (node size) and split heuristic, by what the access
 *	  method does with them (one-by-one inserts, STR bulk load, window
 *	  queries of three sizes, 10 nearest neighbours).
 *
 *	  bench/bin/bench_fbrtree [--boxes N] [--queries Q] [--dir DIR]
 *	      [--dist uniform,clustered] [--split rstar,quadratic] [--seed S]
 *	      [--dims D]
 *
 * The fan-out is the compile-time FBR_CAP: `make bench/bin/bench_fbrtree_capC`
 * builds the structure with C entries per node (the node block is the
 * smallest power of two that holds them); bench/bin/bench_fbrtree is the
 * shipped fan-out.  Data: the unit tests' generator (tests/unit/fbr_harness.h)
 * in a 1000 x 1000 square (--dims 3 or 4: cube, hypercube; default 2): a
 * third points, a sixth degenerate on each of the first two axes, the rest
 * boxes up to 8 wide; "clustered" puts 90% of them around 20 centres.
 * Every box is inserted one by one into one tree, and bulk-loaded (STR, 90%
 * fill as CREATE INDEX does) into another; both trees answer the same
 * queries: square (cube) windows of 0.01%, 0.1% and 1% of the square
 * centred on data, and the 10 entries nearest to a data point.  The
 * benchmark checks that both trees return the same number of results for
 * every window and the same distances for every KNN query, and exits 1 if
 * not.
 *
 * CSV on stdout: cap,node_bytes,dist,split,tree,boxes,insert_us,build_s,
 * height,leaves,fill_pct,query,queries,us_per_query,nodes_per_query,
 * results_per_query,dims (cap: entries per node of the tree, FBR_CAP in 2-D)
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "fbr_harness.h"
#include "fbr_internal.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_args.h"

#define STR_FILL_PCT	90		/* CREATE INDEX's default fillfactor */
#define KNN_K			10

typedef enum bench_query
{
	WIN_001,
	WIN_01,
	WIN_1,
	KNN10,
	NQUERIES
} bench_query;

static const char *const query_name[NQUERIES] = {"window_0.01pct", "window_0.1pct", "window_1pct", "knn10"};

/* Half the side of a square (cube) window covering pct percent of the data square (cube). */
static double
window_half_side(bench_query q, int dims)
{
	static const double pct[] = {0.01, 0.1, 1.0};
	double		volume = pow(1000.0, dims) * pct[q] / 100.0;

	return (dims == 2 ? sqrt(volume) : pow(volume, 1.0 / dims)) / 2;
}

typedef struct bench_tree
{
	const char *name;			/* "insert" or "str" */
	pm_pool    *pool;
	fbr_harness h;
	double		insert_us;		/* per insert (insert tree) */
	double		build_s;		/* bulk load (str tree) */
	double		checksum[NQUERIES]; /* results (windows) or distances (KNN) summed, to compare trees */
} bench_tree;

static void
die(const char *what, const pm_error *err)
{
	fprintf(stderr, "bench_fbrtree: %s: %s\n", what, err ? err->msg : "failed");
	exit(1);
}

static void
make_boxes(fbr_item *items, size_t n, bool clustered, uint64_t seed, int dims)
{
	uint64_t	s = seed;

	for (size_t i = 0; i < n; i++)
	{
		items[i].box = random_box_nd(&s, clustered, dims);
		items[i].payload = i + 1;
	}
}

static void
tree_open(bench_tree *bt, const char *dir, const char *name, pm_epoch_domain *dom,
		  fbr_split_method split, uint64_t token)
{
	char		path[600];

	snprintf(path, sizeof(path), "%s/bench_fbrtree_%s_%d.pool", dir, name, (int) getpid());
	bt->name = name;
	bt->pool = fbr_harness_pool(path, PM_MODE_EADR, 0);
	fbr_harness_attach(&bt->h, bt->pool, dom, token);
	bt->h.tree.split = split;
	memset(bt->checksum, 0, sizeof(bt->checksum));
}

static void
tree_close(bench_tree *bt)
{
	char	   *path = strdup(bt->pool->path);

	pm_epoch_drain(&bt->h.epoch);
	pm_epoch_unregister(&bt->h.epoch);
	pm_pool_close(bt->pool);
	unlink(path);
	free(path);
}

/* Run nq queries of one kind, centred on data points drawn with seed; print a row. */
static void
run_queries(bench_tree *bt, bench_query kind, const fbr_item *items, size_t n, int nq,
			uint64_t seed, const char *prefix)
{
	uint64_t	s = seed;
	fbr_results got = {0};
	uint64_t	nodes = 0,
				results = 0;
	double		checksum = 0;
	double		t0 = now_sec();
	pm_error	err;
	int			dims = bt->h.tree.dims;

	for (int i = 0; i < nq; i++)
	{
		fbr_box		c = items[xorshift(&s) % n].box;

		if (kind == KNN10)
		{
			point		p = {dims, {c.min[0], c.min[1], c.min[2], c.min[3]}};
			fbr_knn    *k = fbr_knn_begin(&bt->h.tree, NULL, NULL,
										  dims == 2 ? point_box_distance_2d : point_box_distance, &p, &err);
			fbr_item	it;
			double		d;
			int			found = 0;

			if (k == NULL)
				die("knn", &err);
			while (found < KNN_K)
			{
				if (!fbr_knn_next(k, &it, &d, &err))
					die("knn ended early", err.code != PM_OK ? &err : NULL);
				checksum += d;
				found++;
			}
			fbr_knn_end(k);
			results += found;
		}
		else
		{
			double		half = window_half_side(kind, dims);
			query		qu = {Q_OVERLAP, c, dims};

			for (int d = 0; d < dims; d++)
			{
				qu.q.min[d] = c.min[d] - half;
				qu.q.max[d] = c.min[d] + half;
			}
			got.n = 0;
			if (fbr_search(&bt->h.tree, dims == 2 ? query_consistent_2d : query_consistent, &qu, &got,
						   &err) != PM_OK)
				die("search", &err);
			nodes += got.nodes_visited;
			results += got.n;
			checksum += got.n;
		}
	}
	bt->checksum[kind] = checksum;
	printf("%s,%s,%d,%.4f,%.2f,%.1f,%d\n", prefix, query_name[kind], nq, (now_sec() - t0) * 1e6 / nq,
		   kind == KNN10 ? 0.0 : (double) nodes / nq, (double) results / nq, dims);
	fbr_results_free(&got);
}

static void
usage(const char *argv0)
{
	fprintf(stderr, "usage: %s [--boxes N] [--queries Q] [--dir DIR] [--dist uniform,clustered]\n"
			"       [--split rstar,quadratic] [--seed S] [--dims 2|3|4]\n", argv0);
	exit(2);
}

int
main(int argc, char **argv)
{
	size_t		n = 1000000;
	int			nq = 2000;
	long		count;
	const char *dir = "/dev/shm";
	bool		dists[2] = {true, true};
	bool		splits[2] = {true, false};
	uint64_t	seed = 4242;
	pm_epoch_domain *dom = harness_domain();
	fbr_item   *items,
			   *sorted;

	for (int i = 1; i < argc; i += 2)
	{
		const char *value = i + 1 < argc ? argv[i + 1] : NULL;

		if (value == NULL)
			usage(argv[0]);
		if (strcmp(argv[i], "--boxes") == 0 && bench_parse_count(value, 1, BENCH_MAX_COUNT, &count))
			n = (size_t) count;
		else if (strcmp(argv[i], "--queries") == 0 && bench_parse_count(value, 1, INT_MAX, &count))
			nq = (int) count;
		else if (strcmp(argv[i], "--dir") == 0)
			dir = value;
		else if (strcmp(argv[i], "--dist") == 0)
		{
			dists[0] = strstr(value, "uniform") != NULL;
			dists[1] = strstr(value, "clustered") != NULL;
		}
		else if (strcmp(argv[i], "--split") == 0)
		{
			splits[FBR_SPLIT_RSTAR] = strstr(value, "rstar") != NULL;
			splits[FBR_SPLIT_QUADRATIC] = strstr(value, "quadratic") != NULL;
		}
		else if (strcmp(argv[i], "--seed") == 0 && strtoull(value, NULL, 10) != 0)
			seed = strtoull(value, NULL, 10);
		else if (strcmp(argv[i], "--dims") == 0 && bench_parse_count(value, 2, FBR_MAX_DIMS, &count))
			fbr_test_dims = (int) count;
		else
			usage(argv[0]);
	}
	items = malloc(sizeof(fbr_item) * n);
	sorted = malloc(sizeof(fbr_item) * n);
	if (items == NULL || sorted == NULL)
		die("out of memory", NULL);

	printf("cap,node_bytes,dist,split,tree,boxes,insert_us,build_s,height,leaves,fill_pct,"
		   "query,queries,us_per_query,nodes_per_query,results_per_query,dims\n");
	for (int clustered = 0; clustered < 2; clustered++)
		for (int split = 0; split < 2; split++)
		{
			const char *dist = clustered ? "clustered" : "uniform";
			const char *split_name = split == FBR_SPLIT_RSTAR ? "rstar" : "quadratic";
			bench_tree	trees[2];
			/* the split heuristic plays no part in a bulk load: one STR tree per data set */
			int			ntrees = split == FBR_SPLIT_RSTAR || !splits[FBR_SPLIT_RSTAR] ? 2 : 1;
			pm_error	err;
			double		t0;

			if (!dists[clustered] || !splits[split])
				continue;
			make_boxes(items, n, clustered, seed + clustered, fbr_test_dims);

			tree_open(&trees[0], dir, "insert", dom, (fbr_split_method) split, 1);
			t0 = now_sec();
			for (size_t i = 0; i < n; i++)
				if (fbr_insert(&trees[0].h.tree, &items[i], &err) != PM_OK)
					die("insert", &err);
			trees[0].insert_us = (now_sec() - t0) * 1e6 / n;
			trees[0].build_s = 0;
			if (ntrees == 2)
			{
				tree_open(&trees[1], dir, "str", dom, (fbr_split_method) split, 2);
				memcpy(sorted, items, sizeof(fbr_item) * n);
				t0 = now_sec();
				if (fbr_bulk_load(&trees[1].h.tree, sorted, n, STR_FILL_PCT, &err) != PM_OK)
					die("bulk load", &err);
				trees[1].build_s = now_sec() - t0;
				trees[1].insert_us = 0;
			}

			for (int t = 0; t < ntrees; t++)
			{
				bench_tree *bt = &trees[t];
				fbr_stats	st;
				char		prefix[400];

				fbr_get_stats(&bt->h.tree, &st);
				snprintf(prefix, sizeof(prefix), "%d,%d,%s,%s,%s,%zu,%.3f,%.3f,%llu,%llu,%.0f",
						 bt->h.tree.cap, FBR_NODE_SIZE, dist, t == 1 ? "-" : split_name, bt->name, n,
						 bt->insert_us, bt->build_s, (unsigned long long) st.height,
						 (unsigned long long) st.leaves,
						 100.0 * st.entries / ((double) st.leaves * bt->h.tree.cap));
				for (int q = 0; q < NQUERIES; q++)
					run_queries(bt, (bench_query) q, items, n, nq, seed * 31 + q, prefix);
				fflush(stdout);
			}
			for (int q = 0; q < NQUERIES && ntrees == 2; q++)
				if (trees[0].checksum[q] != trees[1].checksum[q])
				{
					fprintf(stderr, "bench_fbrtree: %s %s: the inserted and the bulk-loaded tree "
							"disagree (results or distances summed: %.17g and %.17g)\n", dist,
							query_name[q], trees[0].checksum[q], trees[1].checksum[q]);
					return 1;
				}
			for (int t = 0; t < ntrees; t++)
				tree_close(&trees[t]);
		}
	free(items);
	free(sorted);
	return 0;
}
