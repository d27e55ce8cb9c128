/*
 * nvbtree.h
 *	  NVB-tree: a B+-tree whose every node lives in the pool, each node's
 *	  entries an append-only array linked as a binary search tree, nodes
 *	  reached through a persistent node-ID mapping table, so that nothing is
 *	  rebuilt in DRAM after a restart.
 *
 * Entries are (key, rest) pairs (pm_key.h), as in the other ordered
 * structures: key the host's order-preserving 64-bit encoding, rest a
 * tie-breaker that is never 0 (PostgreSQL: a NULL flag and the heap TID);
 * the pair is an entry's identity and its order.  A wide tree (formatted so)
 * also takes wide entries, whose records it keeps in the node beside their
 * slots (at most NVB_WIDE_DATA_MAX bytes of data).  Any number of processes
 * and threads operate on one tree at once: readers take no lock, writers
 * lock the one node they change (a stripe of a lock table in the shared
 * DRAM tier, the structure's only DRAM).  See README.md for the layout,
 * invariants, the concurrency and crash protocol, and the deviations from
 * the thesis.
 */
#ifndef PM_NVBTREE_H
#define PM_NVBTREE_H

#include "alloc.h"
#include "epoch.h"
#include "pm_key.h"
#include "pool.h"

#define NVB_LEAF_CAP		224		/* entries of a narrow tree's leaf (4 KiB) */
#define NVB_INNER_CAP		183		/* separators of a narrow tree's inner node */
#define NVB_CAP_MAX			254		/* slots of any node (a link is a byte) */
#define NVB_BATCH_MAX		64		/* entries one read returns at most */
#define NVB_REST_MAX		((UINT64_C(1) << 49) - 1)
#define NVB_WIDE_DATA_MAX	960		/* data bytes of a wide entry's record */

typedef pm_key nvb_key;

/*
 * A process's handle on one tree: the pool (its meta block at pool root 0)
 * and its allocator, the shared DRAM tier that holds the lock table
 * (dram_root, an offset the host shares between processes), and retirement
 * of replaced nodes through epoch, tagged space_pm and tag_pm so that the
 * host's free callback finds the pool.
 */
typedef struct nvb_tree
{
	pm_pool    *pool;
	bool		wide;			/* the pool's tree takes wide entries */
	uint32_t	node_size;		/* bytes of its nodes */
	pm_alloc	pm;
	pm_alloc   *dram;
	pm_epoch_handle *epoch;
	uint32_t	space_pm;
	uint32_t	tag_pm;
	uint64_t	dram_root;
} nvb_tree;

/*
 * At most NVB_BATCH_MAX entries of one leaf, sorted, and the key range the
 * batch accounts for: the leaf's range, cut where the read started and,
 * when the leaf holds more than one batch, where it stopped.  Scans continue
 * from high (forward) or low (backward).  Wide entries and fences name
 * copies of their records (PM_REST_LOCAL) that the read's copy function
 * made.
 */
typedef struct nvb_batch
{
	int			n;
	nvb_key		low;			/* inclusive */
	nvb_key		high;			/* exclusive; PM_KEY_MAX: the end */
	nvb_key		e[NVB_BATCH_MAX];
} nvb_batch;

typedef struct nvb_stats
{
	uint64_t	leaves;
	uint64_t	inner_nodes;
	uint64_t	height;			/* levels, the leaves' included */
	uint64_t	entries;		/* live entries */
	uint64_t	node_ids;		/* ids handed out (mapping table entries) */
	uint64_t	splits;			/* since the lock table was made (the last start) */
	uint64_t	compactions;
	uint64_t	merges;
	uint64_t	pm_bytes;
	uint64_t	dram_bytes;
} nvb_stats;

/* ---- life cycle ---- */

/*
 * Format an empty tree (meta block, mapping table, one empty leaf) in a
 * fresh pool, wide (taking wide entries: 8 KiB nodes whose slots and records
 * share the block) or narrow (4 KiB nodes of 8-byte keys); the meta block
 * keeps host_len bytes of the host's (at most NVB_META_HOST_MAX), such as
 * what orders its records (pm_key_order).  An empty tree the pool holds
 * already is replaced.
 */
#define NVB_META_HOST_MAX	256
extern pm_errcode nvb_format(pm_pool *pool, bool wide, const void *host, uint32_t host_len,
							 pm_error *err);

/* The host's bytes of a formatted pool (*host_len 0: none), and whether it is wide. */
extern pm_errcode nvb_meta_host(pm_pool *pool, bool *wide, const uint8_t **host,
								uint32_t *host_len, pm_error *err);

/*
 * Bulk load into a freshly formatted pool: entries sorted by (key, rest),
 * in the pool's order, from next(ctx, &k) until it returns false (a wide
 * entry's record is local and need only last until the next call), leaves
 * filled to fill_pct percent with balanced search trees, inner levels built
 * over them.
 */
extern pm_errcode nvb_bulk_load(pm_pool *pool, int fill_pct,
								bool (*next) (void *ctx, nvb_key *k), void *ctx,
								pm_error *err);

/* Set up a handle (no allocation); reads whether the pool's tree is wide. */
extern void nvb_attach(nvb_tree *t, pm_pool *pool, pm_alloc *dram, pm_epoch_handle *epoch,
					   uint32_t space_pm, uint32_t tag_pm, uint64_t dram_root);

/*
 * First use of a pool after a start: check the meta block and the root,
 * rebuild the pool's allocator from the mapping table (a pass over its
 * words, no node read: README.md, "Crash protocol"), set a spare block
 * aside and make the lock table in the DRAM tier (sets t->dram_root).
 * Nothing of the tree is rebuilt: an interrupted split or delete is
 * completed or stepped over by the operations that meet it.  Caller is
 * exclusive, and no block of the pool may wait in an epoch limbo.
 */
extern pm_errcode nvb_open(nvb_tree *t, pm_error *err);

/*
 * Set a free block aside for the rewrites deletes need, if none is and one
 * can be had (this process's retired blocks reclaimed first: call it outside
 * any epoch section).  nvb_open does; VACUUM after its pass.
 */
extern void nvb_keep_spare(nvb_tree *t);

/* Free the lock table (the index is gone or closed).  Caller is exclusive. */
extern void nvb_release_dram(nvb_tree *t);

/* Bytes of the DRAM tier the tree holds (its lock table); needs t->dram, t->dram_root. */
extern uint64_t nvb_dram_bytes(const nvb_tree *t);

/* ---- operations (any number of processes and threads at once) ---- */

/*
 * Insert (key, rest); a no-op if that entry is already there.  A wide
 * entry's record is local (PM_REST_LOCAL); the tree stores a copy.  A record
 * of more than NVB_WIDE_DATA_MAX bytes is PM_ERR_LIMIT.
 */
extern pm_errcode nvb_insert(nvb_tree *t, const nvb_key *k, pm_error *err);

/* Delete the entry (key, rest); *found says whether it was there. */
extern pm_errcode nvb_delete(nvb_tree *t, const nvb_key *k, bool *found, pm_error *err);

/*
 * Copy a record out of the pool (its header and len bytes of data); returns
 * the copy, which the caller keeps as long as it uses the batch.
 */
typedef const pm_key_rec *(*nvb_copy_fn) (void *ctx, const pm_key_rec *rec);

/*
 * Read the leaf covering k from k on (forward), or the one covering the
 * keys just below k (backward: pass the current batch's low), keeping the
 * entries in [lo, hi]; sorted, at most NVB_BATCH_MAX of them.  Lock-free.
 * In a wide tree, copy (with ctx) copies every record the batch names,
 * fences included (NULL only for a narrow tree).  A damaged pool is
 * PM_ERR_CORRUPT.
 */
extern pm_errcode nvb_read_range(nvb_tree *t, const nvb_key *k, bool backward,
								 const nvb_key *lo, const nvb_key *hi, nvb_batch *b,
								 nvb_copy_fn copy, void *ctx, pm_error *err);

/*
 * Maintenance of the leaf covering k after deletes: merge it into its left
 * neighbour if the two hold at most half a leaf, else rewrite it without
 * the slots deletes left if they are at least half of those it handed out
 * (*tidied: it was merged or rewritten).
 */
extern pm_errcode nvb_tidy_leaf(nvb_tree *t, const nvb_key *k, bool *tidied, pm_error *err);

extern void nvb_get_stats(nvb_tree *t, nvb_stats *st);

/*
 * Verify the structure: every level's chain of siblings (fences meet, each
 * node's entries inside its fences, its search tree in order), separators
 * against the children they name, the mapping table against the nodes.
 * Returns NULL or the first problem (static buffer); *entries the live
 * entries.  Caller is exclusive (no concurrent writers).
 */
extern const char *nvb_check(nvb_tree *t, uint64_t *entries);

#endif							/* PM_NVBTREE_H */
