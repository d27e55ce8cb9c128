/*
 * phast.h
 *	  PhaST: a partitioned hierarchical skiplist with a persistent leaf layer
 *	  (LNodes in a pool) and a volatile shared DRAM layer (per-partition
 *	  skiplists of fat INodes and a sorted index cache per partition).
 *
 * Entries are (key, rest) pairs, as in the NBTree (nbtree.h): key is the
 * host's order-preserving 64-bit encoding, rest a 49-bit tie-breaker that is
 * never 0 (PostgreSQL: a NULL flag and the heap TID); the pair is an entry's
 * identity and its sort order.  See README.md for the layout, invariants,
 * the concurrency and crash protocol, and the deviations from the paper.
 */
#ifndef PM_PHAST_H
#define PM_PHAST_H

#include "alloc.h"
#include "epoch.h"
#include "pm_key.h"
#include "pool.h"

#define PHAST_LNODE_CAP		56		/* slots per LNode: bitmap + fingerprints fill one line */
#define PHAST_INODE_CAP		120		/* LNodes per INode: one 4 KiB DRAM block */
#define PHAST_MAX_PARTS		128
#define PHAST_REST_MAX		((UINT64_C(1) << 49) - 1)

typedef pm_key phast_key;

/*
 * A process's handle on one structure: the PM layer in pool (meta block at
 * pool root 0), the DRAM layer in a shared arena (allocator dram) under the
 * descriptor dram_root, retirements through epoch tagged with space_dram.
 */
typedef struct phast_tree
{
	pm_pool    *pool;
	pm_alloc	pm;
	pm_alloc   *dram;
	pm_epoch_handle *epoch;
	uint32_t	space_dram;
	uint64_t	dram_root;
} phast_tree;

typedef struct phast_stats
{
	uint64_t	partitions;
	uint64_t	lnodes;
	uint64_t	inodes;
	uint64_t	height;			/* skiplist levels in use, the INodes' bottom level included */
	uint64_t	entries;		/* live entries */
	uint64_t	splits;			/* LNode splits since the DRAM layer was built */
	uint64_t	inode_splits;
	uint64_t	compactions;
	uint64_t	repaired;		/* interrupted splits the last rebuild finished */
	uint64_t	dram_bytes;
	uint64_t	pm_bytes;
} phast_stats;

/* An LNode's worth of entries, sorted, and the key range the LNode covers. */
typedef struct phast_batch
{
	int			n;
	phast_key	low;			/* inclusive */
	phast_key	high;			/* exclusive; PM_KEY_MAX: the last LNode */
	phast_key	e[PHAST_LNODE_CAP];
} phast_batch;

/* ---- life cycle ---- */

/*
 * Format an empty structure in a fresh pool with nparts partitions (a power
 * of two, 1..PHAST_MAX_PARTS) over the key range [lo, hi] (keys outside it go
 * to the first or last partition): the partitions are cut on the key bits
 * below the prefix lo and hi share.  An empty structure the pool holds
 * already is replaced (a host formats before it knows the data's range).
 */
extern pm_errcode phast_format(pm_pool *pool, int nparts, uint64_t lo, uint64_t hi,
							   pm_error *err);

/*
 * The partitions for about nentries entries: one per PHAST_ENTRIES_PER_PART
 * (partitions are the units of parallel recovery), a power of two up to
 * PHAST_MAX_PARTS.
 */
#define PHAST_ENTRIES_PER_PART	50000
extern int	phast_parts_for(double nentries);

/*
 * Bulk load into a freshly formatted pool: entries sorted by (key, rest)
 * from next(ctx, &k) until it returns false, LNodes filled to fill_pct.
 */
extern pm_errcode phast_bulk_load(pm_pool *pool, int fill_pct,
								  bool (*next) (void *ctx, phast_key *k), void *ctx,
								  pm_error *err);

extern void phast_attach(phast_tree *t, pm_pool *pool, pm_alloc *dram, pm_epoch_handle *epoch,
						 uint32_t space_dram, uint64_t dram_root);

/*
 * Build the DRAM layer from the pool: begin, then every partition (any
 * number of processes or threads at once, each with its own handle on the
 * same pool and dram_root), then end, which links the partitions and, if
 * recover_alloc, rebuilds the pool's allocator from the LNodes reached
 * (no block of the pool may be waiting in an epoch limbo).  A partition's
 * rebuild also finishes any LNode split a crash interrupted.  begin sets
 * t->dram_root; the caller is exclusive otherwise.
 */
extern pm_errcode phast_rebuild_begin(phast_tree *t, pm_error *err);
extern int	phast_partitions(phast_tree *t);
extern pm_errcode phast_rebuild_partition(phast_tree *t, int part, pm_error *err);
extern pm_errcode phast_rebuild_end(phast_tree *t, bool recover_alloc, pm_error *err);

/* All three steps in this process. */
extern pm_errcode phast_rebuild(phast_tree *t, bool recover_alloc, pm_error *err);

/* Free the whole DRAM layer.  Caller is exclusive. */
extern void phast_release_dram(phast_tree *t);

/* ---- operations (any number of processes and threads at once) ---- */

/* Insert (key, rest); a no-op if that live entry is already there. */
extern pm_errcode phast_insert(phast_tree *t, const phast_key *k, pm_error *err);

/* Delete the entry (key, rest); *found says whether it was there. */
extern pm_errcode phast_delete(phast_tree *t, const phast_key *k, bool *found, pm_error *err);

/*
 * Read the LNode covering k from k on (forward), or the one covering the
 * keys just below k (backward: pass the current batch's low); entries
 * sorted, the batch's fences cut at k.  Lock-free: validated against the
 * INode's version.  Scans continue from high (forward) or low (backward).
 */
extern void phast_read_leaf(phast_tree *t, const phast_key *k, bool backward, phast_batch *b);

/* The same, keeping only the entries in [lo, hi] (the fences stay the LNode's). */
extern void phast_read_range(phast_tree *t, const phast_key *k, bool backward, const phast_key *lo,
							 const phast_key *hi, phast_batch *b);

/*
 * Drop the deleted slots of the LNode covering k (in place: its bitmap), if
 * it has any: later inserts reuse them.
 */
extern pm_errcode phast_compact_leaf(phast_tree *t, const phast_key *k, bool *compacted,
									 pm_error *err);

extern void phast_get_stats(phast_tree *t, phast_stats *st);

/*
 * Bytes of the DRAM tier the DRAM layer holds; needs only t->dram,
 * t->dram_root and t->epoch (the caches it reads are retired through it).
 * Any process may call it while the layer is published.
 */
extern uint64_t phast_dram_bytes(phast_tree *t);

/*
 * Verify the PM chain (order, fences, slots inside them, partition heads)
 * and the DRAM layer against it.  Returns NULL or the first problem (static
 * buffer); *entries the live entries.  Caller is exclusive.
 */
extern const char *phast_check(phast_tree *t, uint64_t *entries);


#endif							/* PM_PHAST_H */
