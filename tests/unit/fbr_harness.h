/*
 * fbr_harness.h
 *	  Shared set-up for the fbrtree unit tests: a pool, a tree handle whose
 *	  epoch participant frees to the tree's allocator, data generators,
 *	  brute-force predicates and distances (what every tree's tests share
 *	  is in harness_common.h).
 */
#ifndef PM_FBR_HARNESS_H
#define PM_FBR_HARNESS_H

#include "fbrtree.h"
#include "harness_common.h"

#include <math.h>

/* ASan runs the same checks on smaller data. */
#if defined(__SANITIZE_ADDRESS__)
#define FBR_SCALE_DOWN	4
#else
#define FBR_SCALE_DOWN	1
#endif

typedef struct fbr_harness
{
	pm_epoch_handle epoch;
	fbr_tree	tree;
} fbr_harness;

/* The epoch free callback: every retired block is a node of the tree's pool. */
static inline void
fbr_harness_free(void *ctx, uint32_t space, uint32_t tag, uint64_t off)
{
	fbr_harness *h = ctx;
	pm_error	err;

	(void) space;
	(void) tag;
	pm_free_block(&h->tree.pm, off, &err);
}

/* The tests' trees: one per pool, its meta block at pool root 0. */
#define FBR_TEST_ROOT	0

/* The dims fbr_harness_format formats with (the N-D variants of the tests set it). */
static int	fbr_test_dims = 2;

/* Attach a process or thread (token distinguishes threads of one process). */
static inline void
fbr_harness_attach(fbr_harness *h, pm_pool *pool, pm_epoch_domain *dom, uint64_t token)
{
	fbr_attach(&h->tree, pool, FBR_TEST_ROOT, &h->epoch, SPACE_PM, 0);
	if (!harness_register(dom, token, fbr_harness_free, h, &h->epoch))
		exit(2);
}

static inline pm_errcode
fbr_harness_format(pm_pool *pool, pm_error *err)
{
	return fbr_format(pool, FBR_TEST_ROOT, fbr_test_dims, err);
}

static inline pm_pool *
fbr_harness_pool(const char *path, pm_mode mode, uint64_t max_size)
{
	return harness_pool(path, mode, max_size, PM_KIND_FBRTREE, fbr_harness_format);
}

/* A coordinate on a grid of 1/256 in [0, 1000): equal edges are common. */
static inline double
grid(uint64_t *s, double lo, double span)
{
	return lo + (double) (xorshift(s) % (uint64_t) (span * 256)) / 256.0;
}

#define MAX_EXTENT	8.0			/* the widest box the generators make */

/* A 2-D box. */
static inline fbr_box
box2(double xmin, double ymin, double xmax, double ymax)
{
	fbr_box		b = {{xmin, ymin}, {xmax, ymax}};

	return b;
}

/*
 * A random box in dims dimensions: a third points, a sixth flat on axis 0, a
 * sixth on axis 1, the rest boxes up to MAX_EXTENT wide on each axis;
 * clustered puts most of them around 20 centres.  In 2-D it draws the
 * random numbers in the order random_box always has, so 2-D data sets stay
 * the same.
 */
static inline fbr_box
random_box_nd(uint64_t *s, bool clustered, int dims)
{
	static const uint64_t prime[FBR_MAX_DIMS] = {7919, 104729, 1299709, 15485863};
	int			kind = (int) (xorshift(s) % 6);
	fbr_box		b = {{0}, {0}};

	if (clustered && xorshift(s) % 10 != 0)
	{
		uint64_t	c = xorshift(s) % 20;

		for (int d = 0; d < dims; d++)
			b.min[d] = grid(s, 50 + (double) (c * prime[d] % 900) - 20, 40);
	}
	else
		for (int d = 0; d < dims; d++)
			b.min[d] = grid(s, 0, 1000 - MAX_EXTENT);
	for (int d = 0; d < dims; d++)
		b.max[d] = b.min[d] + (kind < 2 || (d < 2 && kind == 2 + d) ? 0 : grid(s, 0, MAX_EXTENT));
	return b;
}

static inline fbr_box
random_box(uint64_t *s, bool clustered)
{
	return random_box_nd(s, clustered, 2);
}

static inline bool
item_same(const fbr_item *a, const fbr_item *b, int dims)
{
	return a->payload == b->payload && fbr_box_equal(&a->box, &b->box, dims);
}

/* qsort order of items by payload. */
static inline int
payload_cmp(const void *a, const void *b)
{
	uint64_t	x = ((const fbr_item *) a)->payload,
				y = ((const fbr_item *) b)->payload;

	return x < y ? -1 : x > y;
}

/* A consistent function that takes everything (full scans). */
static inline bool
accept_all(void *arg, const fbr_box *b, bool is_leaf)
{
	(void) arg;
	(void) b;
	(void) is_leaf;
	return true;
}

/* pm_alloc_foreach callback: counts the allocated blocks into *(uint64_t *) ctx. */
static inline void
count_block(void *ctx, uint64_t off, size_t size)
{
	(void) off;
	(void) size;
	(*(uint64_t *) ctx)++;
}

typedef struct point
{
	int			dims;
	double		c[FBR_MAX_DIMS];
} point;

static inline point
point2(double x, double y)
{
	point		p = {2, {x, y}};

	return p;
}

/* The gap between a point and a box on axis d (0 if the point is within it). */
static inline double
point_box_gap(const point *p, const fbr_box *b, int d)
{
	return p->c[d] < b->min[d] ? b->min[d] - p->c[d] : p->c[d] > b->max[d] ? p->c[d] - b->max[d] : 0;
}

/* The Euclidean length of the gaps on the first dims axes. */
static inline __attribute__((always_inline)) double
point_box_distance_dims(const point *p, const fbr_box *b, int dims)
{
	double		g0 = point_box_gap(p, b, 0),
				g1 = point_box_gap(p, b, 1);
	double		sum = g0 * g0 + g1 * g1;

	for (int d = 2; d < dims; d++)
	{
		double		g = point_box_gap(p, b, d);

		sum += g * g;
	}
	return sqrt(sum);
}

/* KNN distance from a point (arg) to a box: exact for entries, a lower bound for inner boxes. */
static inline double
point_box_distance(void *arg, const fbr_box *b, bool is_leaf)
{
	const point *p = arg;

	(void) is_leaf;
	return point_box_distance_dims(p, b, p->dims);
}

/*
 * The same for 2-D points, dims a constant: the callbacks run for every
 * entry a search reads, so a host gives its common case a function of its
 * own (bench_fbrtree does).
 */
static inline double
point_box_distance_2d(void *arg, const fbr_box *b, bool is_leaf)
{
	(void) is_leaf;
	return point_box_distance_dims(arg, b, 2);
}

/* ---------- predicates (window queries and their inner-node tests) ---------- */

typedef enum query_op
{
	Q_OVERLAP,					/* key && query */
	Q_CONTAINS,					/* key @> query */
	Q_CONTAINED,				/* key <@ query */
	Q_SAME,						/* key ~= query */
	Q_NOPS
} query_op;

static const char *const query_op_name[Q_NOPS] = {"overlap", "contains", "contained-by", "same"};

typedef struct query
{
	query_op	op;
	fbr_box		q;
	int			dims;
} query;

/* The leaf test of a query (is the entry a match?) on dims dimensions. */
static inline __attribute__((always_inline)) bool
query_leaf_dims(const query *qu, const fbr_box *k, int dims)
{
	switch (qu->op)
	{
		case Q_OVERLAP:
			return fbr_box_overlaps(k, &qu->q, dims);
		case Q_CONTAINS:
			return fbr_box_contains(k, &qu->q, dims);
		case Q_CONTAINED:
			return fbr_box_contains(&qu->q, k, dims);
		default:
			return fbr_box_equal(k, &qu->q, dims);
	}
}

static inline bool
query_leaf(const query *qu, const fbr_box *k)
{
	return query_leaf_dims(qu, k, qu->dims);
}

/* A query's consistent function on dims dimensions. */
static inline __attribute__((always_inline)) bool
query_consistent_dims(const query *qu, const fbr_box *k, bool is_leaf, int dims)
{
	if (is_leaf)
		return query_leaf_dims(qu, k, dims);
	switch (qu->op)
	{
		case Q_OVERLAP:
		case Q_CONTAINED:
			return fbr_box_overlaps(k, &qu->q, dims);
		default:
			return fbr_box_contains(k, &qu->q, dims);
	}
}

static inline bool
query_consistent(void *arg, const fbr_box *k, bool is_leaf)
{
	const query *qu = arg;

	return query_consistent_dims(qu, k, is_leaf, qu->dims);
}

/* The same for 2-D queries, dims a constant (see point_box_distance_2d). */
static inline bool
query_consistent_2d(void *arg, const fbr_box *k, bool is_leaf)
{
	return query_consistent_dims(arg, k, is_leaf, 2);
}

#endif							/* PM_FBR_HARNESS_H */
