/*
 * pmhash.h
 *	  A concurrent hash table of (hash code, rest) entries: a volatile design
 *	  (linear hashing over chains of blocks, per-bucket locks for writers,
 *	  version-validated lock-free readers) made persistent by UNO logging
 *	  (tips/uno.h) alone.
 *
 * It is the structure behind hash_pm, equality over PostgreSQL's hash
 * operator classes.  An entry is a 32-bit hash code and a 64-bit rest (the
 * heap TID, packed, never 0); like PostgreSQL's hash access method the table
 * keeps hash codes only and the host rechecks.  The pair is an entry's
 * identity: equal hash codes are distinct entries.
 *
 * Writers ("appliers", uno.h) insert and delete under the lock of one bucket
 * at a time, and give their applier slot, whose UNO logs take their
 * before-images; any number of threads and processes read without a lock.
 * Durability is the host's: it logs each operation in its operation log
 * first, checkpoints (pm_uno_checkpoint) with no applier active, and after a
 * crash calls pm_uno_recover, then pmhash_recover, then applies its
 * operation log again.  See README.md.
 */
#ifndef PM_PMHASH_H
#define PM_PMHASH_H

#include "epoch.h"
#include "uno.h"

#define PMHASH_BLOCK_CAP	80	/* entries of a 1 KiB block */
#define PMHASH_MAX_MIN_DEPTH 13 /* the first buckets fill one segment at most */
#define PMHASH_SCAN_END		UINT64_MAX

typedef struct pmhash_entry
{
	uint32_t	hash;
	uint64_t	rest;			/* never 0 */
} pmhash_entry;

/* Entries of one bucket (pmhash_scan); e is malloc'd and grown. */
typedef struct pmhash_batch
{
	uint32_t	n;
	uint32_t	cap;
	pmhash_entry *e;
} pmhash_batch;

/*
 * A thread's handle: the pool (the table at root 0), the process's UNO
 * handle, the thread's epoch participant (lock-free reads hold it; the
 * host's release retires through the epoch the blocks a checkpoint frees).
 */
typedef struct pmhash_table
{
	pm_pool    *pool;
	pm_uno	   *uno;
	pm_epoch_handle *epoch;
	pmhash_batch found;			/* a lookup's entries before they are validated */
} pmhash_table;

typedef struct pmhash_stats
{
	uint64_t	buckets;
	uint64_t	blocks;			/* of bucket chains */
	uint64_t	entries;		/* in the chains */
	uint64_t	counted;		/* the appliers' counts' sum: entries, at rest */
	uint64_t	chains[4];		/* buckets of 1, 2, 3, 4 or more blocks */
	uint64_t	longest;		/* blocks of the longest chain */
	uint64_t	bytes;			/* of the pool the table holds */
} pmhash_stats;

/* ---- life cycle ---- */

/*
 * Make an empty table of 2^min_depth buckets (at most
 * PMHASH_MAX_MIN_DEPTH) in pool and name it at root 0.
 */
extern pm_errcode pmhash_create(pm_pool *pool, pm_alloc *a, uint32_t min_depth, pm_error *err);

/*
 * A handle on the table of pool, after checking its meta block: damage is
 * PM_ERR_CORRUPT.  uno is the process's handle on the pool's logs, epoch
 * the thread's participant.
 */
extern pm_errcode pmhash_attach(pmhash_table *t, pm_pool *pool, pm_uno *uno, pm_epoch_handle *epoch,
								pm_error *err);
extern void pmhash_detach(pmhash_table *t);

/*
 * After pm_uno_recover, before any operation: the bucket locks a crash left
 * held are free (a new run tag).
 */
extern void pmhash_recover(pmhash_table *t);

/*
 * Allocator recovery: mark the segments and every block of every bucket
 * (the meta block is pool root 0, which pm_recon_mark_roots marks).  After
 * pm_uno_recover.
 */
extern pm_errcode pmhash_mark(pm_alloc *a, pm_pool *pool, pm_error *err);

/* ---- operations ---- */

/*
 * Insert e; *existed if it was there already (nothing changes).  An insert
 * that adds a block to its bucket's chain splits the next bucket; a split
 * that finds no room in the logs or the pool is left to a later insert and
 * the insert succeeds.  Errors (PM_ERR_LIMIT: checkpoint and run it again)
 * leave the table unchanged.
 */
extern pm_errcode pmhash_insert(pmhash_table *t, uint32_t applier, pmhash_entry e, bool *existed,
								pm_error *err);

/* Delete e; *found says whether it was there.  Errors as for insert. */
extern pm_errcode pmhash_delete(pmhash_table *t, uint32_t applier, pmhash_entry e, bool *found,
								pm_error *err);

/*
 * fn(ctx, rest) for every entry of hash code hash, as of one moment during
 * the call (lock-free).
 */
extern pm_errcode pmhash_lookup(pmhash_table *t, uint32_t hash,
								void (*fn) (void *ctx, uint64_t rest), void *ctx, pm_error *err);

/*
 * The entries of bucket *cursor (0 to start), as of one moment (lock-free),
 * and *cursor moved to the next bucket; PMHASH_SCAN_END (b->n 0) past the
 * last.  Every entry present from the scan's start to its end is returned;
 * one that a split moves meanwhile may be returned twice.
 */
extern pm_errcode pmhash_scan(pmhash_table *t, uint64_t *cursor, pmhash_batch *b, pm_error *err);
extern void pmhash_batch_free(pmhash_batch *b);

/* Shape and size; exact with no applier active. */
extern pm_errcode pmhash_get_stats(pmhash_table *t, pmhash_stats *st, pm_error *err);

/*
 * The structure's invariants (README.md): NULL, or the first one broken (a
 * static buffer); *entries the entries.  No applier may be active.
 */
extern const char *pmhash_check(pmhash_table *t, uint64_t *entries);

#endif							/* PM_PMHASH_H */
