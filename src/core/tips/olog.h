/*
 * olog.h
 *	  The operation log of a pool (TIPS's OLog): entries inserted into a
 *	  structure that its applier has not applied yet, durable when the
 *	  insert returns.
 *
 * The log is a set of lanes.  A lane is a ring of fixed-size records in one
 * allocator block, written by one writer at a time (the host gives each
 * writer a lane) and applied by one applier at a time.  Three positions,
 * counts of records since the lane was made, order a lane:
 *
 *	 reclaimed <= applied <= tail <= reclaimed + capacity
 *
 * Records [applied, tail) are durable and not applied: after a crash they
 * are applied again, so applying a record twice must leave the structure as
 * applying it once.  Records [reclaimed, applied) are applied and may still
 * be being read by a reader that took the positions before (the host's
 * epoch says when none is); the writer overwrites only records below
 * reclaimed.
 *
 * An append writes its record and persists it, then stores tail + 1 and
 * persists that: two persists, the second the durability point.  The tail
 * passes a record only once the record is durable, so no crash shows a torn
 * record.  The applier persists applied after the structure holds what it
 * applied; reclaimed is persisted before the writer may reuse a slot.  Each
 * position has a cache line of its own: the writer, the applier and the
 * reclaimer store to different lines.
 */
#ifndef PM_OLOG_H
#define PM_OLOG_H

#include "alloc.h"

#define PM_OLOG_ROOT		3	/* the pool root that names the log */
#define PM_OLOG_MAX_LANES	64
#define PM_OLOG_MAX_ENTRY	128 /* bytes of a record's entry */

/* A lane's header: its positions, a cache line each, then the records. */
typedef struct pm_olog_lane
{
	uint64_t	tail;			/* records appended (durable) */
	uint64_t	pad1[7];
	uint64_t	applied;		/* records applied to the structure */
	uint64_t	pad2[7];
	uint64_t	reclaimed;		/* records the writer may overwrite */
	uint64_t	pad3[7];
	uint64_t	records[];		/* capacity records of record_size bytes */
} pm_olog_lane;

/* The log's directory, the block PM_OLOG_ROOT names. */
typedef struct pm_olog
{
	uint32_t	nlanes;
	uint32_t	entry_size;		/* bytes of an entry, at most PM_OLOG_MAX_ENTRY */
	uint32_t	record_size;	/* 8 (the host position) + entry_size, rounded up to 8 */
	uint32_t	capacity;		/* records per lane */
	uint64_t	pad[6];
	uint64_t	lane[PM_OLOG_MAX_LANES];	/* offsets */
} pm_olog;

/* A record as an applier or reader sees it. */
typedef struct pm_olog_record
{
	uint64_t	host_pos;		/* the host's log position of what the entry names */
	const void *entry;			/* entry_size bytes, in the pool */
} pm_olog_record;

/* The pool's log (at PM_OLOG_ROOT), or NULL if it has none. */
static inline pm_olog *
pm_olog_of(const pm_pool *pool)
{
	uint64_t	off = pm_pool_root(pool, PM_OLOG_ROOT);

	return off != 0 ? (pm_olog *) pm_pool_addr(pool, off) : NULL;
}

static inline pm_olog_lane *
pm_olog_lane_at(const pm_pool *pool, const pm_olog *o, uint32_t lane)
{
	return (pm_olog_lane *) pm_pool_addr(pool, pm_load(&o->lane[lane]));
}

/*
 * Make a log of nlanes empty lanes for entries of entry_size bytes and name
 * it at PM_OLOG_ROOT.  PM_ERR_INVALID for sizes out of range.
 */
extern pm_errcode pm_olog_create(pm_pool *pool, pm_alloc *a, uint32_t nlanes, uint32_t entry_size,
								 pm_error *err);

/*
 * Append an entry to a lane, durable on return.  False (nothing written)
 * when the lane is full: the writer waits for the applier and reclaimer.
 */
extern bool pm_olog_append(const pm_pool *pool, const pm_olog *o, uint32_t lane, const void *entry,
						   uint64_t host_pos);

/*
 * Record number pos of a lane (reclaimed <= pos < tail).  Its contents are
 * stable until pos is reclaimed.
 */
extern pm_olog_record pm_olog_record_at(const pm_pool *pool, const pm_olog *o, uint32_t lane,
										uint64_t pos);

/* Records [applied, upto) are in the structure: advance applied (persisted). */
extern void pm_olog_set_applied(const pm_pool *pool, const pm_olog *o, uint32_t lane, uint64_t upto);

/* Records below upto (<= applied) may be overwritten: advance reclaimed (persisted). */
extern void pm_olog_reclaim(const pm_pool *pool, const pm_olog *o, uint32_t lane, uint64_t upto);

/*
 * Check the directory and every lane's positions against the pool, as a
 * pool the host did not write may hold anything: PM_ERR_CORRUPT if they do
 * not hold the order above or name no block of the right size.
 */
extern pm_errcode pm_olog_validate(const pm_pool *pool, pm_error *err);

/* Allocator recovery: mark the directory and the lanes. */
extern pm_errcode pm_olog_mark(pm_alloc *a, const pm_pool *pool, pm_error *err);

#endif							/* PM_OLOG_H */
