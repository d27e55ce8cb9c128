/*
 * recon.h
 *	  The reconciliation ring of a pool: which entries may name a host record
 *	  that a crash can lose.
 *
 * A PM index entry is durable when its insert returns; the record it names
 * (PostgreSQL: a heap tuple) is durable only when the host's log is flushed
 * past it.  Before inserting, the host notes (key, rest, log position) here;
 * a note may be overwritten once the log is flushed past its position.
 * After a crash only the noted entries need checking against the host,
 * unless a stripe overflowed (a needed note was overwritten because the host
 * could not flush): then all.
 *
 * Checking an entry that was never inserted, or that is current, is
 * harmless, so notes need no commit protocol: a note is persisted before the
 * insert it covers, and a torn or stale note only costs one check.  The ring
 * is striped, one allocator block per stripe.  A writer claims a run of
 * PM_RECON_RUN consecutive slots of a stripe at a time (whole cache lines, so
 * concurrent writers rarely share one) and fills it in order; it stays on
 * its stripe until it meets a note that is still needed, then leaves that
 * note in place and moves on to the next stripe, so one busy writer uses the
 * whole ring.  A slot is taken by a CAS of its position from the value that
 * showed it free to PM_RECON_WRITING, and given its own position once its
 * key and rest are written: so two writers never overwrite each other's
 * note, even when a stripe has come round to a run that an idle writer
 * still holds, or to a slot whose writer is still filling it with a note
 * that was already not needed when it took the slot.
 * When a writer has met needed notes in as many stripes as there are, the
 * ring grows by a stripe, up to PM_RECON_MAX_STRIPES; only a ring that large
 * asks the host to flush.  The host log is flushed in the background
 * (PostgreSQL's WAL writer), so with asynchronous commit a ring grows to what
 * the insert rate between two background flushes needs and then never forces
 * a flush; a little-used index keeps the two stripes it started with.
 */
#ifndef PM_RECON_H
#define PM_RECON_H

#include "alloc.h"

#define PM_RECON_ROOT		1	/* the pool root that names the ring */
#define PM_RECON_MIN_STRIPES 2
#define PM_RECON_MAX_STRIPES 16
#define PM_RECON_RUN		8	/* slots a writer claims at once: 3 cache lines */

typedef struct pm_recon_entry
{
	uint64_t	key;
	uint64_t	rest;
	uint64_t	pos;			/* host log position; 0: empty */
} pm_recon_entry;

/* pos of a slot being written: needed (a crash leaves it a note to check) */
#define PM_RECON_WRITING	UINT64_MAX

#define PM_RECON_PER_STRIPE \
	((PM_ALLOC_MAX_BLOCK - 8 * sizeof(uint64_t)) / sizeof(pm_recon_entry))

_Static_assert(PM_RECON_PER_STRIPE % PM_RECON_RUN == 0, "runs must not wrap round a stripe");
_Static_assert(PM_RECON_RUN * sizeof(pm_recon_entry) % 64 == 0, "a run must fill whole cache lines");

typedef struct pm_recon_stripe
{
	uint64_t	head;			/* next run's first slot (monotonic, modulo the stripe) */
	uint64_t	overflow;		/* a needed note was overwritten */
	uint64_t	pad[6];
	pm_recon_entry e[PM_RECON_PER_STRIPE];
} pm_recon_stripe;

/* The ring's directory, the block PM_RECON_ROOT names. */
typedef struct pm_recon
{
	uint64_t	nstripes;		/* stripes writers use: stripe[0 .. nstripes-1] */
	uint64_t	pad[7];
	uint64_t	stripe[PM_RECON_MAX_STRIPES];	/* offsets; 0: none yet */
} pm_recon;

/* The pool's ring (at PM_RECON_ROOT), or NULL if it has none. */
static inline pm_recon *
pm_recon_of(const pm_pool *pool)
{
	uint64_t	off = pm_pool_root(pool, PM_RECON_ROOT);

	return off != 0 ? (pm_recon *) pm_pool_addr(pool, off) : NULL;
}

/* Allocate and zero a ring in the pool; returns its offset (0 on error). */
extern uint64_t pm_recon_create(pm_pool *pool, pm_alloc *a, pm_error *err);

/*
 * How far the host log is durable.  With force false, return the position
 * known durable now (cheap); with force true, first make the log durable up
 * to upto if the host can.
 */
typedef uint64_t (*pm_recon_durable_fn) (uint64_t upto, bool force);

/* One writer's place in a ring: the run it claimed last. */
typedef struct pm_recon_cursor
{
	uint64_t	durable;		/* host log position known durable (cached) */
	uint32_t	stripe;
	uint32_t	slot;			/* the run's next slot */
	uint32_t	left;			/* slots left in the run */
} pm_recon_cursor;

/* A writer's first note goes to stripe home (any int; taken modulo). */
extern void pm_recon_cursor_init(pm_recon_cursor *c, int home);

/*
 * Note (key, rest) at log position pos with the writer's cursor c.
 * durable_fn refreshes c->durable when a slot's old note looks still needed.
 */
extern void pm_recon_note(pm_pool *pool, pm_recon *r, pm_recon_cursor *c, uint64_t key,
						  uint64_t rest, uint64_t pos, pm_recon_durable_fn durable_fn);

/* After a crash: did any stripe overflow? */
extern bool pm_recon_overflowed(const pm_pool *pool, const pm_recon *r);

/* Call fn for every note. */
extern void pm_recon_foreach(const pm_pool *pool, const pm_recon *r,
							 void (*fn) (void *ctx, uint64_t key, uint64_t rest), void *ctx);

/* How many notes the ring holds now (its stripes times PM_RECON_PER_STRIPE). */
extern uint64_t pm_recon_capacity(const pm_recon *r);

/*
 * Allocator recovery: mark every block the pool's roots name, the stripes
 * of the ring at PM_RECON_ROOT and the operation log's lanes and segments
 * (tips/olog.h), so the platform's blocks survive recovery.
 */
extern pm_errcode pm_recon_mark_roots(pm_alloc *a, pm_pool *pool, pm_error *err);

/* Forget every note (after reconciliation). */
extern void pm_recon_clear(pm_pool *pool, pm_recon *r);

#endif							/* PM_RECON_H */
