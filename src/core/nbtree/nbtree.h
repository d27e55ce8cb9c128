/*
 * nbtree.h
 *	  NBTree: a lock-free B+-tree with a persistent key-value layer and a
 *	  volatile (shared DRAM) metadata and inner-node layer.
 *
 * Entries are (key, rest) pairs: key is an order-preserving 64-bit encoding
 * of the indexed value, rest is the host's 49-bit tie-breaker (PostgreSQL:
 * a NULL flag and the heap TID), never 0.  (key, rest) is an entry's
 * identity and its sort order, so any number of duplicates of one key work
 * and separators can split a run of one key.  An entry may also be wide
 * (pm_key.h): its record orders it by bytes past its key and carries bytes
 * of the host's; the tree keeps the record in the pool.  See README.md for layout,
 * invariants, the concurrency and crash protocol, and deviations from the
 * paper.
 */
#ifndef PM_NBTREE_H
#define PM_NBTREE_H

#include "alloc.h"
#include "epoch.h"
#include "pm_key.h"
#include "pool.h"

#define NBT_LEAF_CAP		62		/* slots per 1 KiB PM block */
#define NBT_REST_MAX		((UINT64_C(1) << 49) - 1)
#define NBT_DRAM_TIER_MAX	(UINT64_C(1) << 36)	/* the largest DRAM tier: 64 GiB */
#define NBT_REC_DATA_MAX	(65536 - 16)	/* data bytes of a wide entry's record */

/* Sort key of an entry; also the form of fences and separators. */
typedef pm_key nbt_skey;

/* Shape and SMO counters from the shared DRAM descriptor (since the last rebuild). */
typedef struct nbt_stats
{
	uint64_t	smo_splits;
	uint64_t	smo_compactions;
	uint64_t	smo_merges;		/* two leaves into one (or, rarely, two) */
	uint64_t	leaves;
	uint64_t	inner_nodes;
	uint64_t	height;			/* inner levels above the leaves */
	uint64_t	dram_bytes;
	uint64_t	pm_bytes;
} nbt_stats;

/*
 * A process's handle on one tree.  The PM layer lives in pool (its meta
 * block at pool root 0); the DRAM layer lives in a shared arena whose
 * allocator is dram, rooted at the descriptor dram_root (an arena offset
 * the host shares between processes).  Retired blocks go through epoch,
 * tagged with space_pm / space_dram so the host's free callback finds the
 * allocator.
 */
typedef struct nbt_tree
{
	pm_pool    *pool;
	pm_alloc	pm;				/* PM blocks of this pool */
	pm_alloc   *dram;			/* shared DRAM tier */
	pm_epoch_handle *epoch;
	uint32_t	space_pm;
	uint32_t	tag_pm;			/* passed with PM retirements (host: generation) */
	uint32_t	space_dram;
	uint64_t	dram_root;		/* arena offset of the DRAM descriptor */
	bool		packed;			/* the pool's format packs short records (nbt_attach) */
} nbt_tree;

/* One entry as returned by a leaf read. */
typedef struct nbt_entry
{
	nbt_skey	sk;
} nbt_entry;

/* A leaf's worth of entries, sorted, and the key range the leaf covers. */
typedef struct nbt_batch
{
	int			n;
	nbt_skey	low;			/* inclusive */
	nbt_skey	high;			/* exclusive; PM_KEY_MAX: last leaf */
	nbt_entry	e[NBT_LEAF_CAP];
} nbt_batch;

/* ---- life cycle ---- */

/* Format an empty tree in a fresh pool (meta block, one empty leaf block). */
extern pm_errcode nbt_format(pm_pool *pool, pm_error *err);

/*
 * The same, the meta block keeping host_len bytes of the host's (at most
 * NBT_META_HOST_MAX), such as what orders its records (pm_key_order), for
 * any process that opens the pool later to read with nbt_meta_host.
 */
#define NBT_META_HOST_MAX	180
extern pm_errcode nbt_format_host(pm_pool *pool, const void *host, uint32_t host_len,
								  pm_error *err);

/* Whether a formatted pool's tree packs short records (README: "Packed records"). */
extern bool nbt_pool_packs(pm_pool *pool);

/* The host's bytes of a formatted pool (*host_len 0: none). */
extern pm_errcode nbt_meta_host(pm_pool *pool, const uint8_t **host, uint32_t *host_len,
								pm_error *err);

/*
 * Bulk load: entries must come sorted from next(ctx, &sk), which returns
 * false at the end; a wide entry's record is local and need only last until
 * the next call.  Fills leaf blocks to fill_pct percent.  The pool must be
 * freshly formatted.
 */
extern pm_errcode nbt_bulk_load(pm_pool *pool, int fill_pct,
								bool (*next) (void *ctx, nbt_skey *sk), void *ctx,
								pm_error *err);

/*
 * Build the DRAM layer from the PM layer (recovery and first use); also
 * recovers the pool's allocator if recover_alloc, which requires that no
 * block of this pool is still waiting in an epoch limbo (true after a
 * restart, which starts a fresh epoch domain; otherwise drain first).
 * Pool roots 1 and up are the host's blocks and are kept.
 * Caller is exclusive.  Sets t->dram_root.
 */
extern pm_errcode nbt_rebuild(nbt_tree *t, bool recover_alloc, pm_error *err);

/* Free the whole DRAM layer (index dropped or rebuilt).  Caller is exclusive. */
extern void nbt_release_dram(nbt_tree *t);

/* Set up a handle (no allocation). */
extern void nbt_attach(nbt_tree *t, pm_pool *pool, pm_alloc *dram, pm_epoch_handle *epoch,
					   uint32_t space_pm, uint32_t tag_pm, uint32_t space_dram,
					   uint64_t dram_root);

/* ---- operations (any number of processes and threads at once) ---- */

/*
 * Insert an entry; a no-op if that live entry is already in the tree.  A
 * wide entry's record is local (PM_REST_LOCAL); the tree stores a copy.
 */
extern pm_errcode nbt_insert(nbt_tree *t, const nbt_skey *sk, pm_error *err);

/*
 * Insert sks[0..n-1], each exactly as nbt_insert would (a no-op for a live
 * entry already there; a wide entry's record stored; durable when its slot
 * is persisted, entry by entry), but faster when they come in the tree's
 * order (nbt_cmp, ascending): an entry that falls within the leaf the
 * previous one went to is written there without a descent, and a descent
 * otherwise starts at the previous one's level-1 node when it covers the
 * entry (README: "Batch inserts").  Any order is correct; only ascending
 * order is fast.  sks (and wide entries' local records) must stay unchanged
 * during the call.  On an error, entries sks[0..*done-1] are in the tree,
 * sks[*done] failed and the rest were not tried: the caller may call again
 * from sks[*done].  *done is n on success; done may be NULL.  The call
 * enters and leaves the epoch section every few dozen entries, so it holds
 * back nobody's reclamation for long.
 */
extern pm_errcode nbt_insert_sorted(nbt_tree *t, const nbt_skey *sks, int n, int *done,
									pm_error *err);

/* Delete an entry (a wide one's record local or not); *found says whether it was there. */
extern pm_errcode nbt_delete(nbt_tree *t, const nbt_skey *sk, bool *found, pm_error *err);

/*
 * Read the leaf covering sk from sk on (forward), or the leaf covering the
 * keys just below sk up to sk (backward: pass the current batch's low);
 * entries sorted, the batch's fences cut at sk.  Forward scans continue
 * from batch.high, backward from batch.low, until high is MAX or low is
 * MIN: ranges are disjoint and contiguous, so a scan neither repeats nor
 * misses an entry across concurrent SMOs (merges included).
 */
extern void nbt_read_leaf(nbt_tree *t, const nbt_skey *sk, bool backward, nbt_batch *b);

/*
 * The same, keeping only entries in [lo, hi]: a point lookup sorts one
 * entry, not a leaf.  The batch's fences are still the leaf's (cut at sk).
 */
extern void nbt_read_range(nbt_tree *t, const nbt_skey *sk, bool backward,
						   const nbt_skey *lo, const nbt_skey *hi, nbt_batch *b);

/*
 * Copy a record out of the pool (its header and len bytes of data); returns
 * the copy, which the caller keeps as long as it uses the batch.
 */
typedef const pm_key_rec *(*nbt_copy_fn) (void *ctx, const pm_key_rec *rec);

/*
 * nbt_read_range for a tree with wide entries: every wide key of the batch,
 * fences included, names a copy made by copy (its records in the pool may be
 * retired as soon as the read is over).
 */
extern void nbt_read_range_copy(nbt_tree *t, const nbt_skey *sk, bool backward,
								const nbt_skey *lo, const nbt_skey *hi, nbt_batch *b,
								nbt_copy_fn copy, void *ctx);

/*
 * Maintenance of the leaf covering sk: merge it with its right sibling if
 * both together hold at most a third of a leaf (and share a parent), else
 * rewrite it without its deleted slots if at least half are dead.
 */
extern pm_errcode nbt_compact_leaf(nbt_tree *t, const nbt_skey *sk, bool *compacted,
								   pm_error *err);

/*
 * Keep one free PM block aside for nbt_compact_leaf (if none is kept and one
 * can be had), so that VACUUM can start rewriting leaves in a pool whose
 * filesystem is full.  Reclaims this process's retired blocks first (if the
 * tree has an epoch handle): call it outside any epoch section.  nbt_rebuild
 * calls it; VACUUM after its pass.
 */
extern void nbt_keep_spare(nbt_tree *t);

extern void nbt_get_stats(nbt_tree *t, nbt_stats *st);

/*
 * Bytes of the DRAM tier the DRAM layer holds; needs only t->dram and
 * t->dram_root.  Any process may call it while the layer is published.
 */
extern uint64_t nbt_dram_bytes(const nbt_tree *t);

/*
 * Verify the structure: PM list order and fences, DRAM leaves against PM,
 * inner separators.  Returns NULL or a description of the first problem
 * (static buffer).  Caller is exclusive (no concurrent writers).
 */
extern const char *nbt_check(nbt_tree *t, uint64_t *entries);

/* Entry count of the PM layer (tests, recovery stats). */
extern uint64_t nbt_count_pm(pm_pool *pool);

#endif							/* PM_NBTREE_H */
