/*
 * fbrtree.h
 *	  FBR-tree: a failure-atomic R-tree on boxes of 2 to 4 dimensions whose
 *	  nodes live in a persistent-memory pool.
 *
 * Entries are (box, payload): a box of float8 coordinates (exact, so a point
 * or box datum can be rebuilt from it), in the number of dimensions the tree
 * was formatted with, and an opaque 64-bit payload (the
 * PostgreSQL glue stores the heap TID and flags there).  (box, payload) is an
 * entry's identity: delete names both.  Readers take no locks; writers lock
 * one node at a time top-down.  Every change commits with one aligned 8-byte
 * store of a node's metadata word.  See README.md for the layout,
 * invariants, protocols and deviations from the paper.
 */
#ifndef PM_FBRTREE_H
#define PM_FBRTREE_H

#include "alloc.h"
#include "epoch.h"
#include "pool.h"

/*
 * Entries per node of a 2-D tree: 50 fill a 2 KiB allocator block (README:
 * "Fan-out and fill"); trees of more dimensions fit fewer into the same
 * block (fbr_tree.cap).  Other values build only for bench_fbrtree's fan-out
 * study.
 */
#ifndef FBR_CAP
#define FBR_CAP			50
#endif

#define FBR_MAX_DIMS	4

/*
 * A box: [min[d], max[d]] on each axis d < the tree's dims.  Coordinates at
 * index dims and above are ignored: never read, compared or stored.
 */
typedef struct fbr_box
{
	double		min[FBR_MAX_DIMS];
	double		max[FBR_MAX_DIMS];
} fbr_box;

/* An entry: in a leaf the host's payload, in an inner node a child offset. */
typedef struct fbr_item
{
	fbr_box		box;
	uint64_t	payload;
} fbr_item;

/* How a full node is divided (README: "Split heuristic"). */
typedef enum fbr_split_method
{
	FBR_SPLIT_RSTAR = 0,		/* R*-tree axis sort: min margin, then min overlap */
	FBR_SPLIT_QUADRATIC = 1		/* Guttman's quadratic split */
} fbr_split_method;

/*
 * A process's (or thread's) handle on one tree: the pool (its meta block at
 * pool root meta_root; a pool may hold several trees), an allocator over it, and an epoch participant through which
 * nodes unlinked by merges are retired with (space, tag), so the host's
 * epoch free callback can find this allocator.
 */
typedef struct fbr_tree
{
	pm_pool    *pool;
	int			meta_root;
	pm_alloc	pm;
	pm_epoch_handle *epoch;
	uint32_t	space;
	uint32_t	tag;
	fbr_split_method split;
	int			dims;			/* from the meta block: 2..FBR_MAX_DIMS */
	int			cap;			/* entries per node for these dims */
} fbr_tree;

typedef struct fbr_stats
{
	uint64_t	entries;
	uint64_t	leaves;
	uint64_t	inner_nodes;
	uint64_t	height;			/* levels, leaves included */
	uint64_t	pm_bytes;		/* node blocks + meta block */
	uint64_t	splits;			/* counters since format (not crash-exact) */
	uint64_t	root_splits;
	uint64_t	merges;
	uint64_t	root_collapses;
} fbr_stats;

/* ---- life cycle ---- */

/*
 * Format an empty tree of boxes in dims dimensions (2..FBR_MAX_DIMS; else
 * PM_ERR_INVALID) in a pool: a meta block, named by pool root meta_root,
 * and an empty root leaf.
 */
extern pm_errcode fbr_format(pm_pool *pool, int meta_root, int dims, pm_error *err);

/*
 * Set up a handle on the tree at meta_root (no allocation): dims and cap
 * come from its meta block (fbr_check and fbr_recover validate that block);
 * split heuristic defaults to R*.
 */
extern void fbr_attach(fbr_tree *t, pm_pool *pool, int meta_root, pm_epoch_handle *epoch,
					   uint32_t space, uint32_t tag);

/*
 * STR (sort-tile-recursive) bulk load into a freshly formatted, empty tree.
 * May reorder items[].  Nodes are filled to fill_pct percent of the tree's
 * cap.  Caller is exclusive.
 */
extern pm_errcode fbr_bulk_load(fbr_tree *t, fbr_item *items, size_t n, int fill_pct,
								pm_error *err);

/*
 * After an unclean shutdown, before any other operation: finish or undo the
 * split or merge a crash interrupted (version-0 nodes), clear lock words,
 * and, if recover_alloc, rebuild the allocator as fbr_recover_alloc does
 * for this one tree.  *repaired counts the nodes fixed.  Caller is
 * exclusive.
 */
extern pm_errcode fbr_recover(fbr_tree *t, bool recover_alloc, uint64_t *repaired,
							  pm_error *err);

/*
 * Rebuild the pool's allocator from the blocks in use: every block a pool
 * root names (the host's, such as its reconciliation ring), and every node
 * of the trees whose meta blocks are at meta_roots[0..ntrees-1], each
 * already recovered.  Whatever a crash leaked is free again.  Requires that
 * no block of the pool waits in an epoch limbo (true after a restart).
 */
extern pm_errcode fbr_recover_alloc(pm_pool *pool, const int *meta_roots, int ntrees,
									pm_error *err);

/* ---- writes (any number of processes and threads at once) ---- */

extern pm_errcode fbr_insert(fbr_tree *t, const fbr_item *item, pm_error *err);

/* Delete one entry equal to *item (box and payload); *found says if there was one. */
extern pm_errcode fbr_delete(fbr_tree *t, const fbr_item *item, bool *found, pm_error *err);

/* ---- reads (lock-free) ---- */

/*
 * Decides, for the box of an inner entry (is_leaf false: may the subtree
 * hold a match?) or of a leaf entry (is_leaf true: is it a match?).  The
 * box's first dims coordinates are meaningful.
 */
typedef bool (*fbr_consistent_fn) (void *arg, const fbr_box *box, bool is_leaf);

/* Results of a search: grown with realloc; free with fbr_results_free. */
typedef struct fbr_results
{
	fbr_item   *items;
	size_t		n;
	size_t		cap;
	uint64_t	nodes_visited;	/* cost of the last search (node reads) */
} fbr_results;

/*
 * Every entry for which consistent says yes, each once, appended to *out
 * (in no particular order; of each box only the tree's dims coordinates are
 * written).  An entry committed before the call and not deleted before it
 * returns is always there.
 */
extern pm_errcode fbr_search(fbr_tree *t, fbr_consistent_fn consistent, void *arg,
							 fbr_results *out, pm_error *err);
extern void fbr_results_free(fbr_results *r);
/* append an item's first dims coordinates and payload; false if out of memory */
extern bool fbr_results_add(fbr_results *r, const fbr_item *it, int dims);

/*
 * Lower bound of the distance from the query to anything inside box
 * (is_leaf false), or the entry's distance (is_leaf true).
 */
typedef double (*fbr_distance_fn) (void *arg, const fbr_box *box, bool is_leaf);

typedef struct fbr_knn fbr_knn;

/*
 * Best-first nearest-neighbour iterator: leaf entries accepted by consistent
 * (NULL: all) in non-decreasing distance, each once.  An entry committed
 * before begin and not deleted while the scan runs comes before every
 * farther one.  The iterator stays in an epoch from begin to end: end it
 * promptly (README: "KNN").
 *
 * fbr_knn_next returns true with the next entry and its distance, or false:
 * at the end (err->code == PM_OK) or on failure (err set, e.g. out of memory
 * growing the queue; every later call fails the same way).  Either way the
 * caller still ends the iterator with fbr_knn_end.
 */
extern fbr_knn *fbr_knn_begin(fbr_tree *t, fbr_consistent_fn consistent, void *carg,
							  fbr_distance_fn distance, void *darg, pm_error *err);
extern bool fbr_knn_next(fbr_knn *k, fbr_item *item, double *distance, pm_error *err);
extern void fbr_knn_end(fbr_knn *k);

/* ---- inspection ---- */

/*
 * Verify the structure: meta block, versions, bitmaps, locks, equal leaf
 * depth, every child's entries inside its parent entry's box, no node
 * reached twice.  Returns NULL or a description of the first problem
 * (static buffer).  Caller is exclusive.  Fills *st if not NULL.
 */
extern const char *fbr_check(fbr_tree *t, fbr_stats *st);

/* "(min0 min1 ..., max0 max1 ...)" of a box's first dims coordinates, into buf; for messages. */
extern const char *fbr_box_text(char *buf, size_t len, const fbr_box *b, int dims);

/* Counters and a walk of the tree; exact only without concurrent writers. */
extern void fbr_get_stats(fbr_tree *t, fbr_stats *st);

/*
 * Box helpers for hosts and tests, on the first dims coordinates (dims >=
 * 2).  Axes 2 and up are tested first and axes 0 and 1 last, spelled out,
 * so that a 2-D test is four comparisons after one of dims.  Each is the
 * comparison that must hold, so a NaN coordinate fails it.
 */
static inline bool
fbr_axis_overlaps(const fbr_box *a, const fbr_box *b, int d)
{
	return a->min[d] <= b->max[d] && b->min[d] <= a->max[d];
}

static inline bool
fbr_box_overlaps(const fbr_box *a, const fbr_box *b, int dims)
{
	for (int d = 2; d < dims; d++)
		if (!fbr_axis_overlaps(a, b, d))
			return false;
	return fbr_axis_overlaps(a, b, 0) && fbr_axis_overlaps(a, b, 1);
}

/* a contains b on axis d */
static inline bool
fbr_axis_contains(const fbr_box *a, const fbr_box *b, int d)
{
	return a->min[d] <= b->min[d] && a->max[d] >= b->max[d];
}

/* a contains b */
static inline bool
fbr_box_contains(const fbr_box *a, const fbr_box *b, int dims)
{
	for (int d = 2; d < dims; d++)
		if (!fbr_axis_contains(a, b, d))
			return false;
	return fbr_axis_contains(a, b, 0) && fbr_axis_contains(a, b, 1);
}

static inline bool
fbr_axis_equal(const fbr_box *a, const fbr_box *b, int d)
{
	return a->min[d] == b->min[d] && a->max[d] == b->max[d];
}

static inline bool
fbr_box_equal(const fbr_box *a, const fbr_box *b, int dims)
{
	for (int d = 2; d < dims; d++)
		if (!fbr_axis_equal(a, b, d))
			return false;
	return fbr_axis_equal(a, b, 0) && fbr_axis_equal(a, b, 1);
}

#endif							/* PM_FBRTREE_H */
