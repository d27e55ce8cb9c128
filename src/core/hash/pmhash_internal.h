/*
 * pmhash_internal.h
 *	  The hash table's layout and the helpers its files share (README.md:
 *	  Layout).
 */
#ifndef PM_PMHASH_INTERNAL_H
#define PM_PMHASH_INTERNAL_H

#include "pmhash.h"

#include <string.h>

#define PMHASH_MAGIC		UINT64_C(0x3148534148504d50)	/* "PMPHASH1" */
#define PMHASH_VERSION		1
#define PMHASH_BLOCK		1024
#define PMHASH_SEG_SLOTS	8192	/* buckets per segment: a 64 KiB block of offsets */
#define PMHASH_MAX_SEGS		1024
#define PMHASH_MAX_BUCKETS	((uint64_t) PMHASH_SEG_SLOTS * PMHASH_MAX_SEGS)

/*
 * A bucket's word, in its first block: the run tag (which run of the
 * structure took the lock; a lock of an earlier run is free), a version,
 * and two bits: LOCKED (a writer holds the bucket) and MODIFYING (it is
 * storing; the version moves when it unlocks).
 */
#define WORD_LOCKED			UINT64_C(1)
#define WORD_MODIFYING		UINT64_C(2)
#define WORD_VERSION_MASK	UINT64_C(0xfffffffc)

/*
 * A block of a bucket's chain, 1 KiB: the header line, then the entries'
 * hash codes and rests in two arrays (a lookup scans the codes, 16 a line).
 * Blocks but the last are full; the last holds at least one entry unless it
 * is the bucket's first.
 */
typedef struct pmhash_block
{
	uint64_t	word;			/* the first block's: lock and version */
	uint64_t	next;			/* the chain's next block; 0: last */
	uint64_t	bucket;			/* the bucket's number */
	uint32_t	depth;			/* the first block's: the hash bits that address the bucket */
	uint32_t	n;				/* entries in this block */
	uint64_t	pad[4];
	uint32_t	hash[PMHASH_BLOCK_CAP];
	uint64_t	rest[PMHASH_BLOCK_CAP];
} pmhash_block;

_Static_assert(sizeof(pmhash_block) == PMHASH_BLOCK, "a block is 1 KiB");

/* An applier's count of the entries it added less those it removed, on a line of its own. */
typedef struct pmhash_count
{
	uint64_t	n;
	uint64_t	pad[7];
} pmhash_count;

/* Pool root 0. */
typedef struct pmhash_meta
{
	uint64_t	magic;
	uint32_t	version;
	uint32_t	min_depth;		/* the table began with 2^min_depth buckets */
	uint64_t	pad0[6];
	uint64_t	run_tag;		/* moved by every recovery */
	uint64_t	nbuckets;		/* linear hashing: 2^level + the next bucket to split */
	uint64_t	pad1[6];
	uint64_t	split_lock;		/* run tag << 32 | 1 while held */
	uint64_t	pad2[7];
	pmhash_count count[PM_UNO_MAX_APPLIERS];
	uint64_t	seg[PMHASH_MAX_SEGS];	/* 64 KiB blocks of bucket offsets */
} pmhash_meta;

static inline pmhash_meta *
pmhash_meta_of(const pm_pool *pool)
{
	return pm_pool_addr(pool, pm_pool_root(pool, 0));
}

/* floor(log2(n)), n > 0 */
static inline int
pmhash_level(uint64_t n)
{
	return 63 - __builtin_clzll(n);
}

/* Linear hashing: the bucket of hash code h in a table of n buckets. */
static inline uint64_t
pmhash_bucket_for(uint32_t h, uint64_t n)
{
	int			level = pmhash_level(n);
	uint64_t	b = h & ((UINT64_C(2) << level) - 1);

	return b < n ? b : h & ((UINT64_C(1) << level) - 1);
}

/*
 * Bucket b, reached for hash code h, is addressed by depth bits (at most
 * 32): the bucket that holds h, b itself or the one a split of b moved h to
 * (which was published before b's depth grew).  Each step moves to a bucket
 * created by a later split, so a reader with an old bucket count catches up.
 */
static inline uint64_t
pmhash_redirect(uint32_t h, uint64_t b, uint32_t depth)
{
	uint64_t	x = (h & ((UINT64_C(1) << depth) - 1)) ^ b;

	return x == 0 ? b : b | (x & -x);
}

/* More blocks than a chain can have in pool: a loop. */
static inline uint64_t
pmhash_max_chain(const pm_pool *pool)
{
	return pm_pool_size(pool) / PMHASH_BLOCK;
}

/* Could off name a chain block? */
static inline bool
pmhash_block_ok(const pm_pool *pool, uint64_t off)
{
	return off % PMHASH_BLOCK == 0 && pm_alloc_block_in_pool(pool, off, PMHASH_BLOCK);
}

/* Bucket b's slot in its segment, or NULL if the meta block names no segment there. */
static inline uint64_t *
pmhash_slot(const pm_pool *pool, const pmhash_meta *m, uint64_t b)
{
	uint64_t	seg;

	if (b >= PMHASH_MAX_BUCKETS)
		return NULL;
	seg = pm_load(&m->seg[b / PMHASH_SEG_SLOTS]);
	if (!pm_alloc_block_in_pool(pool, seg, PMHASH_SEG_SLOTS * sizeof(uint64_t)))
		return NULL;
	return (uint64_t *) pm_pool_addr(pool, seg) + b % PMHASH_SEG_SLOTS;
}

/*
 * The offset of bucket b's first block, or 0 if the pool does not name one
 * (damage: never a read outside the pool).
 */
static inline uint64_t
pmhash_bucket_off(const pm_pool *pool, const pmhash_meta *m, uint64_t b)
{
	uint64_t   *slot = pmhash_slot(pool, m, b);
	uint64_t	off = slot != NULL ? pm_load(slot) : 0;

	return pmhash_block_ok(pool, off) ? off : 0;
}

static inline pmhash_block *
pmhash_block_at(const pm_pool *pool, uint64_t off)
{
	return pm_pool_addr(pool, off);
}

/* The header of a block no one else can see yet: empty, the last of its chain. */
static inline void
pmhash_block_init(pmhash_block *b, uint64_t word, uint64_t bucket, uint32_t depth)
{
	memset(b, 0, offsetof(pmhash_block, hash));
	b->word = word;
	b->bucket = bucket;
	b->depth = depth;
}

#endif							/* PM_PMHASH_INTERNAL_H */
