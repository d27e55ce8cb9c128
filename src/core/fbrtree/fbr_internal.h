/*
 * fbr_internal.h
 *	  Node layout and helpers shared by the files of src/core/fbrtree.
 *
 * Offsets are relative to the pool.  Words that other processes read
 * concurrently (metadata, lock, entry fields) go through atomics: readers
 * copy entries with relaxed loads and validate with the metadata word.
 */
#ifndef PM_FBR_INTERNAL_H
#define PM_FBR_INTERNAL_H

#include "fbrtree.h"

#include <string.h>

#define FBR_META_MAGIC	UINT64_C(0x3145455254524246)	/* "FBRTREE1" */
#define FBR_FORMAT		1

/*
 * The metadata word: leaf flag, 13-bit version, 50-bit validity bitmap.
 * Version 0 marks a node in the middle of a split or merge (its aux word
 * names the other node); versions otherwise run 1..8191 and wrap.
 */
#define FBR_LEAF_BIT	(UINT64_C(1) << 63)
#define FBR_VER_SHIFT	50
#define FBR_VER_MAX		8191
#define FBR_VER_MASK	((uint64_t) FBR_VER_MAX << FBR_VER_SHIFT)
#define FBR_BITS_MASK	((UINT64_C(1) << FBR_CAP) - 1)

_Static_assert(FBR_CAP <= FBR_VER_SHIFT, "bitmap and version overlap");

/* lock word (volatile state, reset by recovery) */
#define FBR_UNLOCKED	UINT64_C(0)
#define FBR_LOCKED		UINT64_C(1)
#define FBR_DEAD		UINT64_C(2)	/* unlinked by a merge or root collapse: never lockable */

/* aux word tag: a merge victim rather than a split sibling */
#define FBR_AUX_MERGE	UINT64_C(1)

typedef struct fbr_node
{
	uint64_t	meta;
	uint64_t	lock;
	uint64_t	aux;			/* while version 0: split sibling, or merge victim | AUX_MERGE */
	fbr_item	e[FBR_CAP];
} fbr_node;

/* the allocator block of a node: the smallest power of two that holds it */
#define FBR_NODE_BYTES	(3 * sizeof(uint64_t) + FBR_CAP * sizeof(fbr_item))
#define FBR_NODE_SIZE	(FBR_NODE_BYTES <= 512 ? 512 : FBR_NODE_BYTES <= 1024 ? 1024 : 2048)
_Static_assert(sizeof(fbr_node) <= FBR_NODE_SIZE, "node must fit its block");

typedef struct fbr_meta
{
	uint64_t	magic;
	uint64_t	format;
	uint64_t	root;			/* the commit point of root splits and collapses */
	uint64_t	splits;
	uint64_t	root_splits;
	uint64_t	merges;
	uint64_t	root_collapses;
	uint64_t	pad;
} fbr_meta;

/* Split and merge thresholds (README: "Fan-out and fill"). */
#define FBR_MIN_GROUP	(FBR_CAP * 2 / 5)	/* a split leaves each side >= 40% */
#define FBR_UNDERFULL	(FBR_CAP / 5)		/* a node below this merges ... */
#define FBR_MERGE_MAX	(FBR_CAP * 3 / 4)	/* ... if the result stays below this */

/* ---------- metadata word ---------- */

static inline bool
fbr_is_leaf(uint64_t m)
{
	return (m & FBR_LEAF_BIT) != 0;
}

static inline uint64_t
fbr_version(uint64_t m)
{
	return (m & FBR_VER_MASK) >> FBR_VER_SHIFT;
}

static inline uint64_t
fbr_bits(uint64_t m)
{
	return m & FBR_BITS_MASK;
}

static inline int
fbr_count(uint64_t m)
{
	return __builtin_popcountll(fbr_bits(m));
}

static inline uint64_t
fbr_next_version(uint64_t v)
{
	return v % FBR_VER_MAX + 1;
}

static inline uint64_t
fbr_make_meta(bool leaf, uint64_t version, uint64_t bits)
{
	return (leaf ? FBR_LEAF_BIT : 0) | version << FBR_VER_SHIFT | bits;
}

/* The same node with new bits and version. */
static inline uint64_t
fbr_meta_with(uint64_t m, uint64_t version, uint64_t bits)
{
	return fbr_make_meta(fbr_is_leaf(m), version, bits);
}

/* ---------- access ---------- */

static inline fbr_node *
fbr_node_at(const fbr_tree *t, uint64_t off)
{
	return (fbr_node *) pm_pool_addr(t->pool, off);
}

static inline fbr_meta *
fbr_meta_block(const fbr_tree *t)
{
	return (fbr_meta *) pm_pool_addr(t->pool, pm_pool_root(t->pool, t->meta_root));
}

static inline uint64_t
fbr_root(const fbr_tree *t)
{
	return pm_load(&fbr_meta_block(t)->root);
}

/* Entries are copied field by field with relaxed atomics: no torn double. */
static inline void
fbr_item_load(const fbr_item *src, fbr_item *dst)
{
	__atomic_load(&src->box.xmin, &dst->box.xmin, __ATOMIC_RELAXED);
	__atomic_load(&src->box.ymin, &dst->box.ymin, __ATOMIC_RELAXED);
	__atomic_load(&src->box.xmax, &dst->box.xmax, __ATOMIC_RELAXED);
	__atomic_load(&src->box.ymax, &dst->box.ymax, __ATOMIC_RELAXED);
	dst->payload = pm_load_relaxed(&src->payload);
}

static inline void
fbr_box_store(fbr_box *dst, const fbr_box *src)
{
	__atomic_store(&dst->xmin, (double *) &src->xmin, __ATOMIC_RELAXED);
	__atomic_store(&dst->ymin, (double *) &src->ymin, __ATOMIC_RELAXED);
	__atomic_store(&dst->xmax, (double *) &src->xmax, __ATOMIC_RELAXED);
	__atomic_store(&dst->ymax, (double *) &src->ymax, __ATOMIC_RELAXED);
}

static inline void
fbr_item_store(fbr_item *dst, const fbr_item *src)
{
	fbr_box_store(&dst->box, &src->box);
	pm_store_relaxed(&dst->payload, src->payload);
}

static inline void
fbr_box_union(fbr_box *a, const fbr_box *b)
{
	if (b->xmin < a->xmin)
		a->xmin = b->xmin;
	if (b->ymin < a->ymin)
		a->ymin = b->ymin;
	if (b->xmax > a->xmax)
		a->xmax = b->xmax;
	if (b->ymax > a->ymax)
		a->ymax = b->ymax;
}

static inline double
fbr_box_area(const fbr_box *b)
{
	return (b->xmax - b->xmin) * (b->ymax - b->ymin);
}

static inline double
fbr_box_margin(const fbr_box *b)
{
	return (b->xmax - b->xmin) + (b->ymax - b->ymin);
}

static inline bool
fbr_item_equal(const fbr_item *a, const fbr_item *b)
{
	return a->payload == b->payload && fbr_box_equal(&a->box, &b->box);
}

/* ---------- fbr_node.c ---------- */

/*
 * A consistent copy of a node's valid entries (items[i] from slot slots[i]);
 * returns the metadata word they belong to.
 */
extern uint64_t fbr_read_node(const fbr_node *n, fbr_item *items, int *slots, int *count);

extern bool fbr_lock(fbr_node *n);		/* false: the node is dead */
extern void fbr_unlock(fbr_node *n);
extern void fbr_mark_dead(fbr_node *n);	/* caller holds the lock */

/* Store a new metadata word (caller holds the node's lock) and persist it. */
extern void fbr_commit(fbr_tree *t, fbr_node *n, uint64_t meta);

/* Bounding box of the valid entries of a locked node (or of items[]). */
extern fbr_box fbr_node_box(const fbr_node *n, uint64_t meta);
extern fbr_box fbr_items_box(const fbr_item *items, int n);

/* A fresh node: entries, metadata, lock held or not; persisted. */
extern uint64_t fbr_new_node(fbr_tree *t, bool leaf, const fbr_item *items, int n, bool locked,
							 pm_error *err);

/* Retire an unlinked node through epochs. */
extern void fbr_retire(fbr_tree *t, uint64_t off);

/* The slot of a locked node that holds child, or -1. */
extern int	fbr_find_child(const fbr_node *n, uint64_t child);

/* Set of locks one writer holds, released together. */
typedef struct fbr_held
{
	int			n;
	fbr_node   *node[64];
} fbr_held;

extern void fbr_hold(fbr_held *h, fbr_node *n);
extern void fbr_release(fbr_held *h);

/* ---------- fbr_split.c ---------- */

/*
 * Divide n items into two groups; in_a[i] says which.  Each group gets at
 * least FBR_MIN_GROUP items.
 */
extern void fbr_partition(fbr_split_method method, const fbr_item *items, int n, bool *in_a);

/*
 * Insert item into path[level] (locked, as are the full ancestors it may
 * split into), splitting in place as needed up to the root.  track names
 * a child of path[level] whose entry the caller wants to find afterwards:
 * *holder receives the node (locked) now holding it.
 */
extern pm_errcode fbr_insert_at(fbr_tree *t, uint64_t *path, int level, const fbr_item *item,
								uint64_t track, uint64_t *holder, fbr_held *held, pm_error *err);

/* ---------- fbr_search.c ---------- */

/* Lock-free search for the leaf holding *item; fills path[0..*depth]. */
extern bool fbr_find_leaf(fbr_tree *t, const fbr_item *item, uint64_t *path, int *depth);

#endif							/* PM_FBR_INTERNAL_H */
