/*
 * recon.h
 *	  The reconciliation ring of a pool: which entries may name a host record
 *	  that a crash can lose.
 *
 * A PM index entry is durable when its insert returns; the record it names
 * (PostgreSQL: a heap tuple) is durable only when the host's log is flushed
 * past it.  Before inserting, the host notes (key, rest, log position) here;
 * a note may be overwritten once the log is flushed past its position, and
 * the host is asked to flush it when a note about to be overwritten is still
 * needed.  After a crash only the noted entries need checking against the
 * host, unless a stripe overflowed (a needed note was overwritten because the
 * host could not flush): then all.
 *
 * Checking an entry that was never inserted, or that is current, is
 * harmless, so notes need no commit protocol: a note is persisted before the
 * insert it covers, and a torn or stale note only costs one check.  The ring
 * is striped so that concurrent writers (one stripe per participant modulo
 * PM_RECON_STRIPES) rarely share a cache line.  It is one allocator block, as
 * large as a block may be: the more notes a stripe holds, the rarer a forced
 * flush (PostgreSQL's WAL writer flushes every 200 ms or 1 MB of WAL).
 */
#ifndef PM_RECON_H
#define PM_RECON_H

#include "alloc.h"

#define PM_RECON_STRIPES	8
#define PM_RECON_PER_STRIPE 336

typedef struct pm_recon_entry
{
	uint64_t	key;
	uint64_t	rest;
	uint64_t	pos;			/* host log position; 0: empty */
} pm_recon_entry;

typedef struct pm_recon_stripe
{
	uint64_t	head;			/* next note (monotonic) */
	uint64_t	overflow;		/* a needed note was overwritten */
	uint64_t	pad[6];
	pm_recon_entry e[PM_RECON_PER_STRIPE];
} pm_recon_stripe;

typedef struct pm_recon
{
	pm_recon_stripe stripe[PM_RECON_STRIPES];
} pm_recon;

/* Allocate and zero a ring in the pool; returns its offset (0 on error). */
extern uint64_t pm_recon_create(pm_pool *pool, pm_alloc *a, pm_error *err);

/*
 * Note (key, rest) at log position pos in stripe (any int; taken modulo).
 * *flushed is the caller's cached flushed position.  When a note about to be
 * overwritten looks still needed, flush_fn(upto) is called: it makes the host
 * log durable up to upto if it can, and returns the position now durable.
 */
extern void pm_recon_note(pm_pool *pool, pm_recon *r, int stripe, uint64_t key, uint64_t rest,
						  uint64_t pos, uint64_t *flushed, uint64_t (*flush_fn) (uint64_t upto));

/* After a crash: did any stripe overflow? */
extern bool pm_recon_overflowed(const pm_recon *r);

/* Call fn for every note. */
extern void pm_recon_foreach(const pm_recon *r, void (*fn) (void *ctx, uint64_t key, uint64_t rest),
							 void *ctx);

/* Forget every note (after reconciliation). */
extern void pm_recon_clear(pm_pool *pool, pm_recon *r);

#endif							/* PM_RECON_H */
