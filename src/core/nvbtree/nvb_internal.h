/*
 * nvb_internal.h
 *	  NVB-tree layouts and the helpers its files share (README.md: Layout).
 */
#ifndef PM_NVB_INTERNAL_H
#define PM_NVB_INTERNAL_H

#include "nvbtree.h"

#include <stddef.h>
#include <string.h>

#define NVB_META_MAGIC		UINT64_C(0x4e56425452454531)	/* "NVBTREE1" */
#define NVB_VERSION			1		/* narrow trees */
#define NVB_VERSION_WIDE	2		/* wide trees: records in their nodes */
#define NVB_NODE_MAGIC		UINT32_C(0x4e56424e)	/* "NVBN" */
#define NVB_NODE_SIZE		4096	/* a narrow tree's node */
#define NVB_WIDE_NODE_SIZE	8192	/* a wide tree's node */
#define NVB_NONE			0xFF	/* no slot: an empty link */
#define NVB_NO_ID			0		/* no node */
#define NVB_MAX_LEVEL		32

#define NVB_META_SIZE		65536
#define NVB_META_HEADER		4096
#define NVB_SEG_IDS			8192	/* ids per mapping-table segment (one 64 KiB block) */
#define NVB_SEGS			((NVB_META_SIZE - NVB_META_HEADER) / 8)
#define NVB_MAX_ID			((uint64_t) NVB_SEGS * NVB_SEG_IDS - 1)

#define NVB_STRIPES			2048	/* node locks in the lock table */
#define NVB_LOCKS_MAGIC		UINT64_C(0x4e56424c4f434b53)	/* "NVBLOCKS" */

/* ---- PM ---- */

/*
 * Pool root 0: the meta block.  version says narrow or wide; root is the
 * root node's id (8-byte store: a root split's commit); next_id the next id
 * to hand out; spare a node block set aside for the rewrites deletes need
 * (nvb_keep_spare); dir the mapping table's segments, each a block of
 * NVB_SEG_IDS node offsets.
 */
typedef struct nvb_meta
{
	uint64_t	magic;
	uint32_t	version;
	uint32_t	host_len;
	uint64_t	root;
	uint64_t	next_id;
	uint64_t	spare;			/* a free node block kept for deletes on a full filesystem */
	uint8_t		host[NVB_META_HOST_MAX];
	uint8_t		pad[NVB_META_HEADER - 40 - NVB_META_HOST_MAX];
	uint64_t	dir[NVB_SEGS];
} nvb_meta;

_Static_assert(sizeof(nvb_meta) == NVB_META_SIZE, "the meta block is one 64 KiB block");

/*
 * A node, one block (4 KiB narrow, 8 KiB wide).  The header's line holds
 * its identity, its number of slots and fences (immutable for the block's
 * life: a node changes range only by being replaced) and the search tree's
 * root slot and append cursor.  Then every slot's left and right links side
 * by side (one byte each: a slot or NVB_NONE), then (inner nodes) the child
 * id of every separator, then the slots' keys.  A slot is in the node when
 * a link or root reaches it; a slot whose key's rest is 0 was never handed
 * out.  In a wide tree the rest of the block holds records (pm_key_rec):
 * the wide fences' (their ordering bytes), at the block's end, then the
 * wide slots' in slot order, downwards; a wide key's rest is PM_REST_WIDE |
 * its record's pool offset, always inside the key's own block.
 */
typedef struct nvb_node
{
	uint32_t	magic;
	uint32_t	id;
	uint8_t		level;			/* 0: a leaf */
	uint8_t		root;			/* the search tree's root slot, or NVB_NONE */
	uint8_t		count;			/* slots handed out (a hint after a crash) */
	uint8_t		cap;			/* slots: the level's in a narrow tree, chosen per block in a wide one */
	uint32_t	sibling;		/* right neighbour at the same level, or NVB_NO_ID */
	uint32_t	leftmost;		/* inner: the child of keys below the first separator */
	uint32_t	pad[3];
	nvb_key		low;			/* inclusive */
	nvb_key		high;			/* exclusive; PM_KEY_MAX: the rightmost node */
	uint8_t		body[];
} nvb_node;

_Static_assert(sizeof(nvb_node) == 64, "a node's header is one line");

/* Where a node of cap slots at level keeps its children and its keys; where its slots end. */
static inline uint32_t
nvb_children_at(int cap)
{
	return (64 + 2 * cap + 15) & ~15u;
}

static inline uint32_t
nvb_keys_at(int level, int cap)
{
	uint32_t	c = nvb_children_at(cap);

	return level == 0 ? c : (c + 4 * cap + 15) & ~15u;
}

static inline uint32_t
nvb_slots_end(int level, int cap)
{
	return nvb_keys_at(level, cap) + 16 * cap;
}

_Static_assert((64 + 2 * NVB_LEAF_CAP) % PM_CACHELINE == 0, "a narrow leaf's slots start on a line");
_Static_assert(64 + 2 * NVB_LEAF_CAP + 16 * NVB_LEAF_CAP == NVB_NODE_SIZE,
			   "a narrow leaf fills its block");
_Static_assert(((((64 + 2 * NVB_INNER_CAP + 15) & ~15) + 4 * NVB_INNER_CAP + 15) & ~15) +
			   16 * NVB_INNER_CAP <= NVB_NODE_SIZE, "a narrow inner node fits its block");
_Static_assert(64 + 22 * NVB_CAP_MAX + 32 <= NVB_WIDE_NODE_SIZE, "a wide node's slots fit its block");

static inline int
nvb_cap(const nvb_node *n)
{
	return n->cap;
}

/* A slot's left (dir 0) and right (dir 1) links share a line: a new slot's are one flush. */
static inline uint8_t *
nvb_link(nvb_node *n, int slot, int dir)
{
	return (uint8_t *) n + 64 + 2 * slot + dir;
}

static inline nvb_key *
nvb_keys(nvb_node *n)
{
	return (nvb_key *) ((char *) n + nvb_keys_at(n->level, n->cap));
}

static inline uint32_t *
nvb_children(nvb_node *n)
{
	return (uint32_t *) ((char *) n + nvb_children_at(n->cap));
}

/* Bytes a record of len data bytes takes in a node. */
static inline uint32_t
nvb_rec_bytes(uint32_t len)
{
	return (uint32_t) ((sizeof(pm_key_rec) + len + 7) & ~(size_t) 7);
}

/* ---- DRAM: the lock table ---- */

/*
 * One stripe: a spin lock writers hold while they change a node whose id
 * maps here, and a version that is odd while a change that lock-free
 * readers cannot step over (a delete that moves a slot) is under way.
 */
typedef struct nvb_stripe
{
	uint32_t	lock;
	uint32_t	version;
} nvb_stripe;

typedef struct nvb_locks
{
	uint64_t	magic;
	uint64_t	splits;
	uint64_t	compactions;
	uint64_t	merges;
	uint32_t	merging;		/* 1 while a leaf merge is under way: one at a time */
	uint32_t	pad0;
	uint64_t	pad[3];
	nvb_stripe	stripe[NVB_STRIPES];
} nvb_locks;

/* ---- helpers shared by the files ---- */

static inline nvb_meta *
nvb_meta_of(const nvb_tree *t)
{
	return (nvb_meta *) pm_pool_addr(t->pool, pm_pool_root(t->pool, 0));
}

static inline nvb_locks *
nvb_locks_of(const nvb_tree *t)
{
	return (nvb_locks *) pm_alloc_addr(t->dram, t->dram_root);
}

static inline nvb_stripe *
nvb_stripe_of(const nvb_tree *t, uint32_t id)
{
	return &nvb_locks_of(t)->stripe[(id * UINT32_C(2654435761)) % NVB_STRIPES];
}

/*
 * The order of two entries or fences.  A narrow tree's by key, then rest,
 * as words: none of its rests names a record, and one read from a damaged
 * pool must not be followed as one.  A wide tree's in the pool's order
 * (pm_key_cmp_in); the keys a wide tree compares are the caller's or were
 * checked where they were read (nvb_key_ok).
 */
static inline int
nvb_cmp(const nvb_tree *t, const nvb_key *a, const nvb_key *b)
{
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	if (t->wide)
		return pm_key_cmp_in(t->pool, a, b);
	return (a->rest > b->rest) - (a->rest < b->rest);
}

/*
 * The greatest key below k (k is not PM_KEY_MIN).  A narrow tree's as words
 * (pm_key_pred would make a key above a damaged rest with PM_REST_WIDE
 * set, and a backward scan from it would not move).
 */
static inline nvb_key
nvb_pred(const nvb_tree *t, const nvb_key *k)
{
	if (t->wide && pm_rest_is_wide(k->rest))
		return pm_key_pred(k);
	if (k->rest > 0)
		return (nvb_key) {k->key, k->rest - 1};
	return (nvb_key) {k->key - 1, UINT64_MAX};
}

/*
 * Whether a key read from node n may be compared: in a wide tree, a wide
 * rest must name a record inside n's block, past its slots, whose lengths
 * stay inside the block (nvb_rec_ok).
 */
extern bool nvb_rec_ok(const nvb_tree *t, const nvb_node *n, uint64_t rest);

static inline bool
nvb_key_ok(const nvb_tree *t, const nvb_node *n, const nvb_key *k)
{
	return !t->wide || !pm_rest_is_wide(k->rest) || nvb_rec_ok(t, n, k->rest);
}

/*
 * An operation's epoch section, which keeps the blocks it reads from being
 * freed (a tree handle without epochs: bulk load and its tests).
 */
static inline void
nvb_section_enter(nvb_tree *t)
{
	if (t->epoch != NULL)
		pm_epoch_enter(t->epoch);
}

static inline void
nvb_section_exit(nvb_tree *t)
{
	if (t->epoch != NULL)
		pm_epoch_exit(t->epoch);
}

static inline void
nvb_persist(const nvb_tree *t, const void *addr, size_t len)
{
	pm_persist(&t->pool->persist, addr, len);
}

/* nvb_table.c: the meta block, the mapping table, ids, locks */
extern pm_errcode nvb_meta_check(pm_pool *pool, nvb_meta **meta, pm_error *err);
extern nvb_node *nvb_node_get(const nvb_tree *t, uint32_t id, uint64_t *off);
extern void nvb_table_set(const nvb_tree *t, uint32_t id, uint64_t off);
extern pm_errcode nvb_id_new(nvb_tree *t, uint32_t *id, pm_error *err);
extern pm_errcode nvb_corrupt(const nvb_tree *t, pm_error *err, const char *what, uint32_t id);
extern void nvb_lock(const nvb_tree *t, uint32_t id);
extern void nvb_unlock(const nvb_tree *t, uint32_t id);
extern bool nvb_node_ok(const nvb_tree *t, const nvb_node *n, uint32_t id, int level);

/* nvb_node.c: one node's search tree */
typedef struct nvb_pos
{
	int			slot;			/* the slot found, or NVB_NONE */
	uint8_t    *link;			/* the link that reaches it (or would: an empty one) */
	int			depth;
} nvb_pos;

extern int	nvb_node_find(const nvb_tree *t, nvb_node *n, const nvb_key *k, nvb_pos *pos);
extern int	nvb_node_floor(const nvb_tree *t, nvb_node *n, const nvb_key *k);
extern int	nvb_node_free_slot(nvb_node *n);
extern int	nvb_node_place(const nvb_tree *t, nvb_node *n, int slot, const nvb_key *k,
						   nvb_key *stored);
extern void nvb_node_link_new(const nvb_tree *t, nvb_node *n, int slot, const nvb_key *k,
							  uint32_t child, uint8_t *link);
extern int	nvb_node_remove(const nvb_tree *t, nvb_node *n, const nvb_pos *pos);
extern int	nvb_node_sorted(const nvb_tree *t, nvb_node *n, int *slots);
extern int	nvb_node_collect(const nvb_tree *t, nvb_node *n, const nvb_key *from, bool backward,
							 const nvb_key *lo, const nvb_key *hi, nvb_key *out, int max,
							 bool *more, nvb_key *next);
extern uint32_t nvb_entry_bytes(const nvb_tree *t, int level, const nvb_key *k);
extern uint32_t nvb_fence_bytes(const nvb_tree *t, const nvb_key *k);
extern uint32_t nvb_node_room(const nvb_tree *t);
extern int	nvb_node_cap_for(const nvb_tree *t, int level, const nvb_key *low, const nvb_key *high,
							 const nvb_key *keys, int count, const nvb_key *incoming);
extern void nvb_node_write(const nvb_tree *t, nvb_node *n, uint32_t id, int level, int cap,
						   const nvb_key *low, const nvb_key *high, uint32_t sibling,
						   uint32_t leftmost, const nvb_key *keys, const uint32_t *children,
						   int count);
extern void nvb_node_persist(const nvb_tree *t, nvb_node *n);

/* nvb_smo.c: node replacement, splits, parents */
extern pm_errcode nvb_node_alloc(nvb_tree *t, nvb_node **n, uint64_t *off, bool spare_ok,
								 pm_error *err);
extern pm_errcode nvb_node_new(nvb_tree *t, uint32_t id, int level, const nvb_key *low,
							   const nvb_key *high, uint32_t sibling, uint32_t leftmost,
							   const nvb_key *keys, const uint32_t *children, int count,
							   const nvb_key *incoming, bool spare_ok, uint64_t *off,
							   pm_error *err);
extern void nvb_node_retire(nvb_tree *t, uint64_t off);
extern pm_errcode nvb_make_room(nvb_tree *t, uint32_t id, nvb_node *n, uint64_t off,
								const nvb_key *incoming, bool for_delete, bool *split,
								nvb_key *sep, uint32_t *right, pm_error *err);
extern pm_errcode nvb_add_parent(nvb_tree *t, int level, const nvb_key *sep, uint32_t child,
								 pm_error *err);

/* nvb_tree.c */

/* A node a descent reached by moving right, whose parent may lack its separator. */
typedef struct nvb_fix
{
	int			level;			/* -1: none */
	nvb_key		sep;
	uint32_t	id;
} nvb_fix;

extern pm_errcode nvb_lock_covering(nvb_tree *t, const nvb_key *k, int level, uint32_t *id,
									nvb_node **n, uint64_t *off, nvb_fix *fix, pm_error *err);
extern pm_errcode nvb_insert_at(nvb_tree *t, int level, const nvb_key *k, uint32_t child,
								pm_error *err);
extern pm_errcode nvb_entry_ok(const nvb_tree *t, const nvb_key *k, pm_error *err);

#endif							/* PM_NVB_INTERNAL_H */
