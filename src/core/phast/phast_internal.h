/*
 * phast_internal.h
 *	  PhaST layouts and the helpers its files share (README.md: Layout).
 */
#ifndef PM_PHAST_INTERNAL_H
#define PM_PHAST_INTERNAL_H

#include "phast.h"

#define PHAST_META_MAGIC	UINT64_C(0x5048415354504d31)	/* "PHASTPM1" */
#define PHAST_VERSION		1
#define PHAST_MAX_LEVEL		12		/* skiplist levels; a partition's first INode has all */
#define PHAST_DEAD			(UINT64_C(1) << 62)	/* in a slot's rest: deleted */
#define PHAST_FULL_BITMAP	((UINT64_C(1) << PHAST_LNODE_CAP) - 1)
#define PHAST_WRITER		(UINT64_C(1) << 63)	/* in an INode's lock word */
#define PHAST_BUILD_FILL	90		/* LNodes per INode when the DRAM layer is built */

/* ---- PM ---- */

/* Pool root 0: the partitioning and the Master array (each partition's first LNode). */
typedef struct phast_meta
{
	uint64_t	magic;
	uint32_t	version;
	uint32_t	nparts;
	uint32_t	prefix_bits;	/* leading key bits every partition shares (below: first, above: last) */
	uint32_t	part_bits;		/* the key bits after them that name a partition */
	uint64_t	prefix;
	uint64_t	master[PHAST_MAX_PARTS];
} phast_meta;

/*
 * An LNode, one 1 KiB block: the committed-slot bitmap and the slots'
 * fingerprints share the first cache line, so an insert's commit is one
 * 8-byte CAS and one line's flush.  Slots are unsorted.  A slot is live when
 * its bit is set and its rest has no DEAD bit.  low is immutable; the LNode
 * covers [low, next LNode's low).
 */
typedef struct phast_lnode
{
	uint64_t	bitmap;
	uint8_t		fp[PHAST_LNODE_CAP];
	uint64_t	next;			/* pool offset of the next LNode in key order; 0: last */
	phast_key	low;
	uint64_t	pad[5];
	phast_key	slot[PHAST_LNODE_CAP];
} phast_lnode;

_Static_assert(sizeof(phast_lnode) == 1024, "an LNode is one 1 KiB block");
_Static_assert(offsetof(phast_lnode, slot) % PM_CACHELINE == 0, "slots start on a line");

/* ---- DRAM ---- */

/*
 * An INode, one 4 KiB block of the DRAM arena, for up to PHAST_INODE_CAP
 * consecutive LNodes.  lock: inserts, deletes and compaction decisions hold
 * it shared (reader count), splits exclusive (PHAST_WRITER, once the
 * readers have drained); version is odd while the holder of the exclusive
 * lock changes the INode, so lock-free readers validate against it.  low is
 * immutable; high, the arrays and nleaves change only under the exclusive
 * lock.  next[l] links the INodes of one partition at level l (level 0: of
 * every partition, in key order).
 */
typedef struct phast_inode
{
	uint64_t	lock;
	uint64_t	version;
	uint32_t	nlevels;
	uint32_t	nleaves;
	uint32_t	part;
	uint32_t	pad0;
	phast_key	low;
	phast_key	high;			/* exclusive; PM_KEY_MAX for the last INode */
	uint64_t	next[PHAST_MAX_LEVEL];
	uint64_t	pad1[12];
	phast_key	lhigh[PHAST_INODE_CAP];	/* LNode j covers [lhigh[j-1] (or low), lhigh[j]) */
	uint64_t	shadow[PHAST_INODE_CAP];	/* claimed slots of LNode j */
	uint64_t	leaf[PHAST_INODE_CAP];	/* pool offset of LNode j */
} phast_inode;

_Static_assert(sizeof(phast_inode) == 4096, "an INode is one 4 KiB block");

/* A partition's index cache: the INodes of one skiplist level, by low fence. */
typedef struct phast_cache_entry
{
	phast_key	low;
	uint64_t	inode;
} phast_cache_entry;

typedef struct phast_cache
{
	uint32_t	n;
	uint32_t	level;
	phast_cache_entry e[];
} phast_cache;

#define PHAST_CACHE_MAX ((PM_ALLOC_MAX_BLOCK - sizeof(phast_cache)) / sizeof(phast_cache_entry))

typedef struct phast_part
{
	uint64_t	lock;			/* spinlock: skiplist links above level 0, the cache */
	uint64_t	first;			/* its first INode (all levels); never changes */
	uint64_t	cache;			/* arena offset of its phast_cache */
	uint64_t	inodes;
} phast_part;

/* The DRAM descriptor (dram_root). */
typedef struct phast_desc
{
	uint32_t	nparts;
	uint32_t	prefix_bits;
	uint32_t	part_bits;
	uint32_t	pad;
	uint64_t	prefix;
	uint64_t	splits;
	uint64_t	inode_splits;
	uint64_t	compactions;
	uint64_t	repaired;
	phast_part	parts[PHAST_MAX_PARTS];
} phast_desc;

/* ---- helpers ---- */

static inline phast_meta *
phast_meta_of(pm_pool *pool)
{
	return pm_pool_addr(pool, pm_pool_root(pool, 0));
}

static inline phast_lnode *
phast_lnode_at(const phast_tree *t, uint64_t off)
{
	return pm_pool_addr(t->pool, off);
}

/*
 * Can off, read from the pool (a partition head of the meta block, an
 * LNode's next), name an LNode: a block of an LNode's size inside the pool?
 * The rebuild, the allocator's recovery and the checker test every such
 * offset before they read the LNode (a damaged pool is an error, never an
 * address outside the pool); operations after the rebuild reach LNodes
 * through the DRAM layer it built from validated offsets.
 */
static inline bool
phast_lnode_offset_ok(const pm_pool *pool, uint64_t off)
{
	return off != 0 && off % sizeof(phast_lnode) == 0 && pm_pool_has_range(pool, off, sizeof(phast_lnode));
}

/*
 * Are the keys an LNode holds (its low, its committed slots' without the
 * DEAD bit) PhaST keys: rests of the host's 49 bits?  Any other bit (a wide
 * key's, which PhaST never stores) is damage, checked by the rebuild before
 * a key is compared.
 */
static inline bool
phast_lnode_keys_ok(const phast_lnode *l)
{
	if (l->low.rest > PHAST_REST_MAX)
		return false;
	for (int i = 0; i < PHAST_LNODE_CAP; i++)
		if ((l->bitmap & (UINT64_C(1) << i)) && (l->slot[i].rest & ~PHAST_DEAD) > PHAST_REST_MAX)
			return false;
	return true;
}

static inline phast_inode *
phast_inode_at(const phast_tree *t, uint64_t off)
{
	return pm_alloc_addr(t->dram, off);
}

static inline phast_desc *
phast_desc_of(const phast_tree *t)
{
	return pm_alloc_addr(t->dram, t->dram_root);
}

/* The partition of a key: monotone in the key (README.md: Partitions). */
static inline int
phast_part_of(uint32_t nparts, uint32_t prefix_bits, uint32_t part_bits, uint64_t prefix,
			  uint64_t key)
{
	if (nparts == 1)
		return 0;
	if (prefix_bits > 0)
	{
		uint64_t	top = key >> (64 - prefix_bits);

		if (top < prefix)
			return 0;
		if (top > prefix)
			return (int) nparts - 1;
	}
	return (int) ((key << prefix_bits) >> (64 - part_bits));
}

/* The smallest key of partition p. */
static inline uint64_t
phast_part_low(uint32_t prefix_bits, uint32_t part_bits, uint64_t prefix, int p)
{
	uint64_t	high_part = prefix_bits > 0 ? prefix << (64 - prefix_bits) : 0;

	if (p == 0)
		return 0;
	return high_part | ((uint64_t) p << (64 - prefix_bits - part_bits));
}

static inline uint8_t
phast_fingerprint(const phast_key *k)
{
	uint64_t	h = (k->key ^ (k->rest * UINT64_C(0x9e3779b97f4a7c15))) * UINT64_C(0xff51afd7ed558ccd);

	return (uint8_t) (h >> 56);
}

static inline bool
phast_slot_live(const phast_lnode *l, uint64_t bitmap, int i, phast_key *out)
{
	uint64_t	rest;

	if (!(bitmap & (UINT64_C(1) << i)))
		return false;
	rest = pm_load(&l->slot[i].rest);
	if (rest & PHAST_DEAD)
		return false;
	out->key = pm_load_relaxed(&l->slot[i].key);
	out->rest = rest;
	return true;
}

/* phast_inode.c */
extern void phast_lock_shared(phast_inode *in);
extern void phast_unlock_shared(phast_inode *in);
extern bool phast_lock_exclusive(phast_inode *in);
extern void phast_unlock_exclusive(phast_inode *in);
extern uint64_t phast_find_inode(phast_tree *t, const phast_key *k);
extern int	phast_inode_slot(const phast_inode *in, const phast_key *k);
extern uint32_t phast_random_level(void);
extern uint64_t phast_new_inode(phast_tree *t, uint32_t part, uint32_t nlevels,
								const phast_key *low, pm_error *err);
extern pm_errcode phast_build_cache(phast_tree *t, int part, pm_error *err);
extern pm_errcode phast_split_inode(phast_tree *t, uint64_t ioff, pm_error *err);

/* phast_lnode.c */
extern pm_errcode phast_split_lnode(phast_tree *t, uint64_t ioff, int j, pm_error *err);
extern void phast_drop_dead(phast_tree *t, phast_inode *in, int j);
extern bool phast_repair_lnode(phast_tree *t, phast_lnode *l, const phast_key *high);

#endif							/* PM_PHAST_INTERNAL_H */
