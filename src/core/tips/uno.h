/*
 * uno.h
 *	  TIPS's plug-in side (UNO logging): what makes a volatile structure,
 *	  changed by a few appliers, failure-atomic in a pool without changing
 *	  its logic.
 *
 * The structure calls three functions where its volatile version stores,
 * allocates and frees:
 *
 *	 pm_uno_log	  before a store to pool memory: the before-image of the
 *				  range's cache lines goes to the applier's undo log (ULog),
 *				  unless the range lies in a block allocated since the last
 *				  checkpoint or its lines were logged since then;
 *	 pm_uno_alloc instead of malloc: a pool block, recorded in the applier's
 *				  allocation log (MLog);
 *	 pm_uno_free  instead of free: recorded in the MLog, performed at the next
 *				  checkpoint (undo may make the block reachable again).
 *
 * The structure flushes nothing.  Its durability comes from the host: each
 * operation is durable in the host's operation log (olog.h) before the
 * structure applies it, and a checkpoint (pm_uno_checkpoint, with no applier
 * active) flushes every logged range and every fresh block, moves the
 * host's applied position, and empties the logs.  After a crash,
 * pm_uno_recover brings the structure back to its last checkpoint (undo,
 * newest record first) and the host applies its operation log again from
 * its applied position.  See README.md.
 *
 * An applier slot has one writer at a time, chosen by the host, so its logs
 * need no lock.  A call that would need more log than the applier's limit
 * returns PM_ERR_LIMIT (a full pool: the allocator's error) before it
 * changes anything: the applier stops and the host checkpoints.  An
 * operation that fails after some pm_uno_alloc or pm_uno_free calls, and
 * before its first store, undoes them with pm_uno_rollback to a
 * pm_uno_savepoint taken at its start.
 */
#ifndef PM_UNO_H
#define PM_UNO_H

#include "alloc.h"

#define PM_UNO_ROOT			4	/* the pool root that names the logs' directory */
#define PM_UNO_MAX_APPLIERS	64
#define PM_UNO_MAX_RANGE	16384	/* bytes of lines one pm_uno_log call may cover */
#define PM_UNO_LOG_BLOCK	PM_ALLOC_MAX_BLOCK	/* a log is a chain of such blocks */
#define PM_UNO_DEFAULT_LOG_BLOCKS 256	/* 16 MiB per log, as the paper's 32 MB ULog for all */

/* One log of an applier, a cache line of the directory. */
typedef struct pm_uno_log_head
{
	uint64_t	head;			/* generation (low 32 bits) << 32 | bytes of records */
	uint64_t	first;			/* the chain's first block; 0: none yet */
	uint64_t	tail;			/* the block the last append wrote (a hint) */
	uint64_t	tail_index;		/* its place in the chain, from 0 */
	uint64_t	pad[4];
} pm_uno_log_head;

/* The directory, the block PM_UNO_ROOT names. */
typedef struct pm_uno_dir
{
	uint64_t	magic;
	uint32_t	version;
	uint32_t	nappliers;
	uint32_t	max_log_blocks; /* per log */
	uint32_t	nhost_pos;		/* positions the current checkpoint gives the host */
	uint64_t	pad0[5];
	uint64_t	state;			/* generation << 1 | flush done */
	uint64_t	pad1[7];
	uint64_t	seq;			/* order of undo records among appliers (not persisted) */
	uint64_t	pad2[7];
	uint64_t	host_pos[PM_UNO_MAX_APPLIERS];
	pm_uno_log_head ulog[PM_UNO_MAX_APPLIERS];
	pm_uno_log_head mlog[PM_UNO_MAX_APPLIERS];
} pm_uno_dir;

/* A log block: the link, then records that never cross into the next block. */
#define PM_UNO_PAYLOAD		(PM_UNO_LOG_BLOCK - PM_CACHELINE)
typedef struct pm_uno_block
{
	uint64_t	next;
	uint64_t	pad[7];
	char		data[PM_UNO_PAYLOAD];
} pm_uno_block;

/* A record's kind */
#define PM_UNO_REC_UNDO		1	/* the before-image of whole lines: len bytes follow */
#define PM_UNO_REC_ALLOC	2	/* a block allocated since the checkpoint */
#define PM_UNO_REC_FREE		3	/* a block to free at the checkpoint */
#define PM_UNO_REC_PAD		4	/* the rest of the block is unused */

typedef struct pm_uno_rec
{
	uint64_t	seq;			/* undo: order among all appliers' records */
	uint64_t	off;			/* the lines (undo) or the block (alloc, free) */
	uint32_t	len;			/* bytes of the lines, or of the block */
	uint32_t	kind;
} pm_uno_rec;

/* What the host does at a checkpoint, and at recovery from one a crash interrupted. */
typedef struct pm_uno_host
{
	/*
	 * The structure is durable with every operation the host's positions
	 * say: move the operation log's applied positions there.  May be called
	 * again with the same positions (recovery finishing the checkpoint).
	 */
	void		(*advance) (void *ctx, const uint64_t *host_pos, uint32_t npos);

	/*
	 * A deferred free is due: free the block, or retire it if lock-free
	 * readers may still read it (NULL: pm_free_block at once).
	 */
	void		(*release) (void *ctx, uint64_t off);
	void	   *ctx;

	/*
	 * An allocation found the pool full: free what release retired that no
	 * reader holds any more, and return how many blocks that freed (the
	 * allocation is tried again when any).  NULL: nothing is held back.
	 */
	int			(*reclaim) (void *ctx);
} pm_uno_host;

/* A process's handle (any number of its threads); uno.c's. */
typedef struct pm_uno pm_uno;

/*
 * Make an empty directory for nappliers appliers whose logs may grow to
 * max_log_blocks blocks each (0: PM_UNO_DEFAULT_LOG_BLOCKS) and name it at
 * PM_UNO_ROOT.  PM_ERR_INVALID for counts out of range.
 */
extern pm_errcode pm_uno_create(pm_pool *pool, pm_alloc *a, uint32_t nappliers,
								uint32_t max_log_blocks, pm_error *err);

/*
 * A handle on the pool's logs, after a check of the directory's own words
 * (the logs themselves may be written meanwhile by other processes'
 * appliers: pm_uno_recover validates them): blocks come from a, the host's
 * callbacks from host (copied).  PM_ERR_INVALID if the pool has no
 * directory, PM_ERR_CORRUPT, PM_ERR_NOMEM.
 */
extern pm_errcode pm_uno_attach(pm_pool *pool, pm_alloc *a, const pm_uno_host *host,
								pm_uno **out, pm_error *err);
extern void pm_uno_detach(pm_uno *u);

extern uint32_t pm_uno_appliers(const pm_uno *u);

/* ---- the plug-in calls (applier: 0 .. nappliers - 1, its caller's alone) ---- */

/* Before a store to [addr, addr + size) in the pool. */
extern pm_errcode pm_uno_log(pm_uno *u, uint32_t applier, const void *addr, size_t size,
							 pm_error *err);

/* A block of at least size bytes; 0 (and *err) on failure. */
extern uint64_t pm_uno_alloc(pm_uno *u, uint32_t applier, size_t size, pm_error *err);

/* Free the block at off at the next checkpoint. */
extern pm_errcode pm_uno_free(pm_uno *u, uint32_t applier, uint64_t off, pm_error *err);

/*
 * The applier's allocation log as it is now; pm_uno_rollback to it forgets
 * the frees since and frees the blocks allocated since at once (the
 * operation that made them has stored nothing, so nothing names them).
 */
extern uint64_t pm_uno_savepoint(pm_uno *u, uint32_t applier);
extern void pm_uno_rollback(pm_uno *u, uint32_t applier, uint64_t savepoint);

/* ---- the host's calls (no applier active) ---- */

/*
 * Make the structure durable as it is and empty the logs: flush every
 * logged range and fresh block, note host_pos (npos of them) and mark the
 * flush done, call host->advance, perform the deferred frees (through
 * host->release), start a new generation.  A crash at any step leaves the
 * last checkpoint with all the undo data, or this one.
 */
extern pm_errcode pm_uno_checkpoint(pm_uno *u, const uint64_t *host_pos, uint32_t npos,
									pm_error *err);

/*
 * After a crash, before the host applies its operation log again (a crash
 * here: call it again), with no applier active: the logs validated
 * (pm_uno_validate), then.  If the last checkpoint's flush was done, finish
 * that checkpoint (host->advance again, its frees); else undo every undo
 * record, newest first.  Then start a new generation.
 *
 * free_blocks: whether the allocator's words survived the crash (a process
 * crash in eadr mode), so the blocks to free (allocated since the
 * checkpoint; or the finished checkpoint's deferred frees) are freed
 * here.  After a power failure in adr mode they are not durable: pass
 * false, and rebuild the allocator from what is reachable (pm_uno_mark and
 * the structure's marks) after this call and before anything allocates;
 * the blocks to free are unreachable by then.
 */
extern pm_errcode pm_uno_recover(pm_uno *u, bool free_blocks, pm_error *err);

/*
 * Check the directory, every log's chain and every record of the current
 * generation against the pool, as a pool the host did not write may hold
 * anything: PM_ERR_CORRUPT if they are not what pm_uno writes.
 */
extern pm_errcode pm_uno_validate(pm_pool *pool, pm_error *err);

/*
 * Allocator recovery: mark every log block (the directory is a pool root,
 * which pm_recon_mark_roots marks).  PM_ERR_INVALID while the logs hold
 * records: recover first, or the blocks undo would free are kept and
 * those it would bring back are lost.
 */
extern pm_errcode pm_uno_mark(pm_alloc *a, pm_pool *pool, pm_error *err);

typedef struct pm_uno_stats
{
	uint64_t	generation;
	uint64_t	undo_records;
	uint64_t	undo_bytes;		/* of before-images */
	uint64_t	allocs;			/* blocks allocated since the checkpoint */
	uint64_t	frees;			/* frees deferred to the next checkpoint */
	uint64_t	log_blocks;		/* blocks the logs hold */
	uint32_t	fullest_pct;	/* the fullest log, in percent of its limit */
} pm_uno_stats;

/* How full the fuller of an applier's two logs is, in percent of its limit (by that applier). */
extern uint32_t pm_uno_fill_pct(pm_uno *u, uint32_t applier);

/* A snapshot; exact only with no applier active. */
extern void pm_uno_get_stats(pm_uno *u, pm_uno_stats *st);

#endif							/* PM_UNO_H */
