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
	return fbr_format(pool, FBR_TEST_ROOT, err);
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

/*
 * A random box: a third points, a sixth degenerate segments, the rest
 * boxes up to MAX_EXTENT wide; clustered puts most of them around 20
 * centres.
 */
static inline fbr_box
random_box(uint64_t *s, bool clustered)
{
	double		x,
				y,
				w = 0,
				h = 0;
	int			kind = (int) (xorshift(s) % 6);
	fbr_box		b;

	if (clustered && xorshift(s) % 10 != 0)
	{
		uint64_t	c = xorshift(s) % 20;
		double		cx = 50 + (double) (c * 7919 % 900),
					cy = 50 + (double) (c * 104729 % 900);

		x = grid(s, cx - 20, 40);
		y = grid(s, cy - 20, 40);
	}
	else
	{
		x = grid(s, 0, 1000 - MAX_EXTENT);
		y = grid(s, 0, 1000 - MAX_EXTENT);
	}
	if (kind >= 2)
	{
		w = kind == 2 ? 0 : grid(s, 0, MAX_EXTENT);
		h = kind == 3 ? 0 : grid(s, 0, MAX_EXTENT);
	}
	b.xmin = x;
	b.ymin = y;
	b.xmax = x + w;
	b.ymax = y + h;
	return b;
}

static inline bool
item_same(const fbr_item *a, const fbr_item *b)
{
	return a->payload == b->payload && fbr_box_equal(&a->box, &b->box);
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
	double		x,
				y;
} point;

/* KNN distance from a point (arg) to a box: exact for entries, a lower bound for inner boxes. */
static inline double
point_box_distance(void *arg, const fbr_box *b, bool is_leaf)
{
	const point *p = arg;
	double		dx = p->x < b->xmin ? b->xmin - p->x : p->x > b->xmax ? p->x - b->xmax : 0;
	double		dy = p->y < b->ymin ? b->ymin - p->y : p->y > b->ymax ? p->y - b->ymax : 0;

	(void) is_leaf;
	return sqrt(dx * dx + dy * dy);
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
} query;

static inline bool
query_leaf(const query *qu, const fbr_box *k)
{
	switch (qu->op)
	{
		case Q_OVERLAP:
			return fbr_box_overlaps(k, &qu->q);
		case Q_CONTAINS:
			return fbr_box_contains(k, &qu->q);
		case Q_CONTAINED:
			return fbr_box_contains(&qu->q, k);
		default:
			return fbr_box_equal(k, &qu->q);
	}
}

static inline bool
query_consistent(void *arg, const fbr_box *k, bool is_leaf)
{
	const query *qu = arg;

	if (is_leaf)
		return query_leaf(qu, k);
	switch (qu->op)
	{
		case Q_OVERLAP:
		case Q_CONTAINED:
			return fbr_box_overlaps(k, &qu->q);
		default:
			return fbr_box_contains(k, &qu->q);
	}
}

#endif							/* PM_FBR_HARNESS_H */
