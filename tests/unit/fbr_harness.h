/*
 * fbr_harness.h
 *	  Shared set-up for the fbrtree unit tests: a pool, an epoch domain in
 *	  shared memory, a tree handle, data generators and brute-force
 *	  predicates.
 */
#ifndef PM_FBR_HARNESS_H
#define PM_FBR_HARNESS_H

#include "fbrtree.h"
#include "tap.h"

#include <sys/mman.h>

#define FBR_SLOTS		16
#define FBR_LIMBO		4096
#define SPACE_PM		1

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

static inline void
fbr_harness_free(void *ctx, uint32_t space, uint32_t tag, uint64_t off)
{
	fbr_harness *h = ctx;
	pm_error	err;

	(void) space;
	(void) tag;
	pm_free_block(&h->tree.pm, off, &err);
}

static inline bool
fbr_harness_alive(uint64_t owner)
{
	return pm_epoch_pid_alive(owner & 0xffffffff);
}

/* The epoch domain, shared across fork (map once, before any fork). */
static inline pm_epoch_domain *
fbr_harness_domain(void)
{
	size_t		dsize = pm_epoch_domain_size(FBR_SLOTS, FBR_LIMBO);
	void	   *dom = mmap(NULL, dsize, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (dom == MAP_FAILED)
	{
		perror("mmap");
		exit(2);
	}
	pm_epoch_domain_init(dom, FBR_SLOTS, FBR_LIMBO);
	return dom;
}

/* Attach a process or thread (token distinguishes threads of one process). */
static inline void
fbr_harness_attach(fbr_harness *h, pm_pool *pool, pm_epoch_domain *dom, uint64_t token)
{
	pm_error	err;

	fbr_attach(&h->tree, pool, 0, &h->epoch, SPACE_PM, 0);
	if (pm_epoch_register(dom, token, -1, fbr_harness_free, h, fbr_harness_alive, &h->epoch, &err) != PM_OK)
	{
		fprintf(stderr, "epoch register: %s\n", err.msg);
		exit(2);
	}
}

static inline pm_pool *
fbr_harness_pool(const char *path, pm_mode mode, uint64_t max_size)
{
	pm_pool_create_opts o = {0};
	pm_pool    *pool;
	pm_error	err;

	o.mode = mode;
	o.max_size = max_size;
	o.replace = true;
	o.owner.kind = PM_KIND_FBRTREE;
	if (pm_pool_create(path, &o, &pool, &err) != PM_OK || fbr_format(pool, 0, &err) != PM_OK)
	{
		fprintf(stderr, "pool: %s\n", err.msg);
		exit(2);
	}
	return pool;
}

static inline uint64_t
fbr_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* A coordinate on a grid of 1/256 in [0, 1000): equal edges are common. */
static inline double
grid(uint64_t *s, double lo, double span)
{
	return lo + (double) (fbr_rand(s) % (uint64_t) (span * 256)) / 256.0;
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
	int			kind = (int) (fbr_rand(s) % 6);
	fbr_box		b;

	if (clustered && fbr_rand(s) % 10 != 0)
	{
		uint64_t	c = fbr_rand(s) % 20;
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
