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
#define FBR_FORMAT_2D	1		/* 2-D: the meta block's dims field is 0 */
#define FBR_FORMAT_ND	2		/* 3..FBR_MAX_DIMS dimensions, in the dims field */

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

/*
 * A node: three words, then the slots, each 2 * dims + 1 words: min[0..dims),
 * max[0..dims), payload.  A 2-D slot is (xmin, ymin, xmax, ymax, payload),
 * 40 bytes: the format-1 layout.  Slots are only reached through the
 * accessors below.
 */
typedef struct fbr_node
{
	uint64_t	meta;
	uint64_t	lock;
	uint64_t	aux;			/* while version 0: split sibling, or merge victim | AUX_MERGE */
	uint64_t	w[];
} fbr_node;

/* words of a slot */
#define FBR_SLOT_WORDS(dims)	(2 * (dims) + 1)

/* the allocator block of a node: the smallest power of two that holds FBR_CAP 2-D slots */
#define FBR_NODE_BYTES	(sizeof(fbr_node) + FBR_CAP * FBR_SLOT_WORDS(2) * sizeof(uint64_t))
#define FBR_NODE_SIZE	(FBR_NODE_BYTES <= 512 ? 512 : FBR_NODE_BYTES <= 1024 ? 1024 : 2048)
_Static_assert(FBR_NODE_BYTES <= FBR_NODE_SIZE, "node must fit its block");

/* Entries per node in dims dimensions: as many slots as the block holds, at most FBR_CAP. */
static inline int
fbr_cap_for(int dims)
{
	size_t		fit = (FBR_NODE_SIZE - sizeof(fbr_node)) / (FBR_SLOT_WORDS(dims) * sizeof(uint64_t));

	return fit < FBR_CAP ? (int) fit : FBR_CAP;
}

typedef struct fbr_meta
{
	uint64_t	magic;
	uint64_t	format;
	uint64_t	root;			/* the commit point of root splits and collapses */
	uint64_t	splits;
	uint64_t	root_splits;
	uint64_t	merges;
	uint64_t	root_collapses;
	uint64_t	dims;			/* format 2: the dims; format 1 (2-D): 0 */
} fbr_meta;

/* The dims a meta block declares, or 0 if its format and dims field do not validate. */
static inline int
fbr_meta_dims(const fbr_meta *meta)
{
	if (meta->format == FBR_FORMAT_2D)
		return meta->dims == 0 ? 2 : 0;
	if (meta->format == FBR_FORMAT_ND && meta->dims >= 3 && meta->dims <= FBR_MAX_DIMS)
		return (int) meta->dims;
	return 0;
}

/* Split and merge thresholds (README: "Fan-out and fill"). */
static inline int
fbr_min_group(const fbr_tree *t)
{
	return t->cap * 2 / 5;		/* a split leaves each side >= 40% */
}

static inline int
fbr_underfull(const fbr_tree *t)
{
	return t->cap / 5;			/* a node below this merges ... */
}

static inline int
fbr_merge_max(const fbr_tree *t)
{
	return t->cap * 3 / 4;		/* ... if the result stays below this */
}

/* The bits of the slots a node of this tree has. */
static inline uint64_t
fbr_slots_mask(const fbr_tree *t)
{
	return (UINT64_C(1) << t->cap) - 1;
}

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

/*
 * Validation of what is read from a pool before it is followed (README:
 * "Recovery"): a damaged pool is an error for the host, never an address
 * outside the pool.  Recovery, which the host runs on every first use,
 * and the checker walk the tree through these; operations after recovery
 * follow only offsets it validated or wrote.
 */

/* Deeper than any tree a pool can hold: a fan-out of at least 2 would need 2^63 leaves. */
#define FBR_MAX_DEPTH	64

/* Can the root word or a child entry's payload name a node: a node-aligned block in the pool? */
static inline bool
fbr_node_offset_ok(const fbr_tree *t, uint64_t off)
{
	return off != 0 && off % FBR_NODE_SIZE == 0 && pm_pool_has_range(t->pool, off, FBR_NODE_SIZE);
}

/* Does the tree's pool root name a meta block inside the pool? */
static inline bool
fbr_meta_block_ok(const fbr_tree *t)
{
	uint64_t	off = pm_pool_root(t->pool, t->meta_root);

	return off != 0 && pm_pool_has_range(t->pool, off, sizeof(fbr_meta));
}

/*
 * More nodes reached than this is a cycle: each node is reached once, or
 * twice while a split or merge is unfinished.
 */
static inline uint64_t
fbr_reach_limit(const fbr_tree *t)
{
	return 2 * (pm_pool_size(t->pool) / FBR_NODE_SIZE) + 2;
}

static inline uint64_t
fbr_root(const fbr_tree *t)
{
	return pm_load(&fbr_meta_block(t)->root);
}

/*
 * Slots.  Readers take no lock, so every word a writer stores, and every
 * word a reader (fbr_read_node) loads, goes through a relaxed atomic
 * access: no torn double.  Only the holder of a node's lock writes the
 * node's slots, so the lock holder (and recovery and fbr_check, which are
 * exclusive) loads them with plain loads, which go straight to a floating
 * point register.  dims is a parameter rather than t->dims so that callers
 * can make it a constant (fbr_read_node, choose_subtree).  Here and in the
 * box arithmetic below, axes 0 and 1, which every tree has, are spelled
 * out and a loop covers the rest: 2-D trees pay for no loop.
 */
static inline uint64_t *
fbr_slot(const fbr_node *n, int s, int dims)
{
	/* unsigned: no sign extension in the address arithmetic */
	return (uint64_t *) &n->w[(unsigned) s * (unsigned) FBR_SLOT_WORDS(dims)];
}

/* bytes of a slot, and of its box part (its first words) */
static inline size_t
fbr_slot_size(int dims)
{
	return FBR_SLOT_WORDS(dims) * sizeof(uint64_t);
}

static inline size_t
fbr_box_size(int dims)
{
	return 2 * dims * sizeof(uint64_t);
}

static inline double
fbr_word_double(const uint64_t *w, bool atomic)
{
	uint64_t	v;
	double		d;

	if (!atomic)
	{
		memcpy(&d, w, sizeof(d));
		return d;
	}
	v = pm_load_relaxed(w);
	memcpy(&d, &v, sizeof(d));
	return d;
}

static inline void
fbr_word_store_double(uint64_t *w, double d)
{
	uint64_t	v;

	memcpy(&v, &d, sizeof(v));
	pm_store_relaxed(w, v);
}

static inline void
fbr_slot_box_get(const fbr_node *n, int s, int dims, fbr_box *dst, bool atomic)
{
	const uint64_t *w = fbr_slot(n, s, dims);

	dst->min[0] = fbr_word_double(&w[0], atomic);
	dst->min[1] = fbr_word_double(&w[1], atomic);
	dst->max[0] = fbr_word_double(&w[dims], atomic);
	dst->max[1] = fbr_word_double(&w[dims + 1], atomic);
	for (int d = 2; d < dims; d++)
	{
		dst->min[d] = fbr_word_double(&w[d], atomic);
		dst->max[d] = fbr_word_double(&w[dims + d], atomic);
	}
}

static inline uint64_t
fbr_slot_payload(const fbr_node *n, int s, int dims)
{
	return pm_load_relaxed(&fbr_slot(n, s, dims)[2 * dims]);
}

/* A slot's box or entry, for the holder of the node's lock (or an exclusive caller). */
static inline void
fbr_slot_box_load(const fbr_node *n, int s, int dims, fbr_box *dst)
{
	fbr_slot_box_get(n, s, dims, dst, false);
}

static inline void
fbr_slot_load(const fbr_node *n, int s, int dims, fbr_item *dst)
{
	fbr_slot_box_get(n, s, dims, &dst->box, false);
	dst->payload = fbr_slot_payload(n, s, dims);
}

/* A slot's entry, for a reader without the lock (validated by the metadata word). */
static inline void
fbr_slot_read(const fbr_node *n, int s, int dims, fbr_item *dst)
{
	fbr_slot_box_get(n, s, dims, &dst->box, true);
	dst->payload = fbr_slot_payload(n, s, dims);
}

static inline void
fbr_slot_box_store(fbr_node *n, int s, int dims, const fbr_box *src)
{
	uint64_t   *w = fbr_slot(n, s, dims);

	fbr_word_store_double(&w[0], src->min[0]);
	fbr_word_store_double(&w[1], src->min[1]);
	fbr_word_store_double(&w[dims], src->max[0]);
	fbr_word_store_double(&w[dims + 1], src->max[1]);
	for (int d = 2; d < dims; d++)
	{
		fbr_word_store_double(&w[d], src->min[d]);
		fbr_word_store_double(&w[dims + d], src->max[d]);
	}
}

static inline void
fbr_slot_store(fbr_node *n, int s, int dims, const fbr_item *src)
{
	fbr_slot_box_store(n, s, dims, &src->box);
	pm_store_relaxed(&fbr_slot(n, s, dims)[2 * dims], src->payload);
}

/* Copy the first dims coordinates of a box (a 2-D box is 32 of its 64 bytes). */
static inline void
fbr_box_copy(fbr_box *dst, const fbr_box *src, int dims)
{
	memcpy(dst->min, src->min, 2 * sizeof(double));
	memcpy(dst->max, src->max, 2 * sizeof(double));
	for (int d = 2; d < dims; d++)
	{
		dst->min[d] = src->min[d];
		dst->max[d] = src->max[d];
	}
}

/*
 * Copy the first dims coordinates and the payload of an item; the rest of
 * dst is left alone (callers keep it 0 where bytes are compared).  Every
 * search result is copied through here.
 */
static inline void
fbr_item_copy(fbr_item *dst, const fbr_item *src, int dims)
{
	fbr_box_copy(&dst->box, &src->box, dims);
	dst->payload = src->payload;
}

/* Zero the coordinates past dims. */
static inline void
fbr_box_clear_tail(fbr_box *b, int dims)
{
	for (int d = dims; d < FBR_MAX_DIMS; d++)
		b->min[d] = b->max[d] = 0;
}

/* ---------- box arithmetic on the first dims coordinates ---------- */

static inline void
fbr_axis_union(fbr_box *a, const fbr_box *b, int d)
{
	if (b->min[d] < a->min[d])
		a->min[d] = b->min[d];
	if (b->max[d] > a->max[d])
		a->max[d] = b->max[d];
}

static inline void
fbr_box_union(fbr_box *a, const fbr_box *b, int dims)
{
	fbr_axis_union(a, b, 0);
	fbr_axis_union(a, b, 1);
	for (int d = 2; d < dims; d++)
		fbr_axis_union(a, b, d);
}

/* volume (area in 2-D) */
static inline double
fbr_box_volume(const fbr_box *b, int dims)
{
	double		v = (b->max[0] - b->min[0]) * (b->max[1] - b->min[1]);

	for (int d = 2; d < dims; d++)
		v *= b->max[d] - b->min[d];
	return v;
}

/* the sum of the edge lengths, one per axis (R*'s margin, up to a constant factor) */
static inline double
fbr_box_margin(const fbr_box *b, int dims)
{
	double		m = (b->max[0] - b->min[0]) + (b->max[1] - b->min[1]);

	for (int d = 2; d < dims; d++)
		m += b->max[d] - b->min[d];
	return m;
}

static inline bool
fbr_item_equal(const fbr_item *a, const fbr_item *b, int dims)
{
	return a->payload == b->payload && fbr_box_equal(&a->box, &b->box, dims);
}

/* ---------- fbr_node.c ---------- */

/*
 * A consistent copy of a node's valid entries (items[i] from slot slots[i];
 * coordinates past t->dims untouched); returns the metadata word they belong
 * to.
 */
extern uint64_t fbr_read_node(const fbr_tree *t, const fbr_node *n, fbr_item *items, int *slots,
							  int *count);

extern bool fbr_lock(fbr_node *n);		/* false: the node is dead */
extern void fbr_unlock(fbr_node *n);
extern void fbr_mark_dead(fbr_node *n);	/* caller holds the lock */

/* Store a new metadata word (caller holds the node's lock) and persist it. */
extern void fbr_commit(fbr_tree *t, fbr_node *n, uint64_t meta);

/* Bounding box of the valid entries of a locked node (or of items[]). */
extern fbr_box fbr_node_box(const fbr_tree *t, const fbr_node *n, uint64_t meta);
extern fbr_box fbr_items_box(const fbr_tree *t, const fbr_item *items, int n);

/* A fresh node: entries, metadata, lock held or not; persisted. */
extern uint64_t fbr_new_node(fbr_tree *t, bool leaf, const fbr_item *items, int n, bool locked,
							 pm_error *err);

/* Retire an unlinked node through epochs. */
extern void fbr_retire(fbr_tree *t, uint64_t off);

/* The slot of a locked node that holds child, or -1. */
extern int	fbr_find_child(const fbr_tree *t, const fbr_node *n, uint64_t child);

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
 * Divide n items into two groups by t->split; in_a[i] says which.  Each
 * group gets at least fbr_min_group(t) items.
 */

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
