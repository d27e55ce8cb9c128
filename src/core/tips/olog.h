/*
 * olog.h
 *	  The operation log of a pool (TIPS's OLog): entries inserted into a
 *	  structure that its applier has not applied yet, durable when the
 *	  insert returns.
 *
 * The log is a set of lanes.  A lane is a queue of variable-length records
 * in a chain of segments (allocator blocks of PM_OLOG_SEGMENT bytes),
 * written by one writer at a time (the host gives each writer a lane) and
 * applied by one applier at a time.  Three byte positions, counted since the
 * lane was made, order a lane:
 *
 *	 reclaimed <= applied <= tail
 *
 * Records [applied, tail) are durable and not applied: after a crash they
 * are applied again, so applying a record twice must leave the structure as
 * applying it once.  Records [reclaimed, applied) are applied and may still
 * be being read by a reader that took the positions before (the host's
 * epoch says when none is); segments wholly below reclaimed are freed,
 * but for a lane's last (the next is linked to it).  Positions the host
 * passes are where records end.
 *
 * Position p lies in the segment of sequence number p / PM_OLOG_SEGMENT_DATA
 * at byte p % PM_OLOG_SEGMENT_DATA of its data.  A record never crosses a
 * segment: a writer whose record does not fit in what is left of a segment
 * continues at the next segment's start, and readers skip the rest (a
 * segment's data ends where fewer than a record header's bytes are left,
 * or at a header whose len is PM_OLOG_SKIP).
 *
 * An append writes its record and persists it, then stores the new tail and
 * persists that: two persists, the second the durability point.  The tail
 * passes a record only once the record is durable, so no crash shows a torn
 * record.  Room is reserved first (pm_olog_reserve, which may link a new
 * segment and can fail); the append itself cannot fail, so a host can run
 * it in a critical section.  Each position has a cache line of its own: the
 * writer, the applier and the reclaimer store to different lines.
 */
#ifndef PM_OLOG_H
#define PM_OLOG_H

#include "alloc.h"

#define PM_OLOG_ROOT		3	/* the pool root that names the log */
#define PM_OLOG_MAX_LANES	64
#define PM_OLOG_SEGMENT		PM_ALLOC_MAX_BLOCK
#define PM_OLOG_SEGMENT_DATA (PM_OLOG_SEGMENT - sizeof(pm_olog_segment))
#define PM_OLOG_MAX_RECORD	2048	/* bytes of a record's data */
#define PM_OLOG_SKIP		UINT32_MAX	/* a header's len: the segment's data ends here */
/* the least max_segments: a lane keeps its last segment however far it is reclaimed */
#define PM_OLOG_MIN_SEGMENTS 2

/* A segment: its sequence number and the next one's offset (0: none yet), then data. */
typedef struct pm_olog_segment
{
	uint64_t	seq;
	uint64_t	next;
	uint64_t	data[];
} pm_olog_segment;

/* A record's header; len bytes of data follow, then padding to 8 bytes. */
typedef struct pm_olog_header
{
	uint32_t	len;
	uint32_t	pad;
	uint64_t	host_pos;		/* the host's log position of what the record names */
} pm_olog_header;

/*
 * A lane: its positions, a cache line each, then its segments.  The
 * writer's line also holds its hint: the offset of the tail's segment
 * (sequence number tail / PM_OLOG_SEGMENT_DATA), so that a reserve or
 * append need not walk the chain.  Stored, not persisted, and checked
 * before use (olog.c says why a hint that checks out is sound); a crash or
 * damage may leave anything there, and nothing else reads it.
 */
typedef struct pm_olog_lane
{
	uint64_t	tail;			/* bytes appended (durable) */
	uint64_t	tail_segment;	/* the writer's hint: the tail's segment, or anything */
	uint64_t	tail_check;		/* tail_segment ^ the lane's offset: the hint is this lane's */
	uint64_t	pad1[5];
	uint64_t	applied;		/* bytes applied to the structure */
	uint64_t	pad2[7];
	uint64_t	reclaimed;		/* bytes whose segments may be freed */
	uint64_t	head;			/* offset of the first segment: reclaimed's, or one before it */
	uint64_t	pad3[6];
} pm_olog_lane;

/* The log's directory, the block PM_OLOG_ROOT names. */
typedef struct pm_olog
{
	uint32_t	nlanes;
	uint32_t	max_segments;	/* per lane: a lane of that many is full */
	uint64_t	pad[7];
	uint64_t	lane[PM_OLOG_MAX_LANES];	/* offsets of pm_olog_lane blocks */
} pm_olog;

/*
 * A reader's place in a lane: the position it reads next, and the offset
 * of the segment holding it (0: not known yet, found from the lane's head
 * at the next read).
 */
typedef struct pm_olog_cursor
{
	uint64_t	pos;
	uint64_t	segment;
} pm_olog_cursor;

/* A record as an applier or reader sees it. */
typedef struct pm_olog_record
{
	uint64_t	host_pos;
	uint32_t	len;
	const void *data;			/* len bytes, in the pool */
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

/* A cursor at pos (a position where a record ends), its segment not known yet. */
static inline void
pm_olog_cursor_init(pm_olog_cursor *c, uint64_t pos)
{
	c->pos = pos;
	c->segment = 0;
}

/*
 * Make a log of nlanes empty lanes, each at most max_segments segments
 * long, and name it at PM_OLOG_ROOT.  A lane's first segment is linked by
 * its first reserve.  PM_ERR_INVALID for counts out of range (nlanes 1 ..
 * PM_OLOG_MAX_LANES, max_segments at least PM_OLOG_MIN_SEGMENTS).
 */
extern pm_errcode pm_olog_create(pm_pool *pool, pm_alloc *a, uint32_t nlanes,
								 uint32_t max_segments, pm_error *err);

/*
 * By the lane's writer: make room for a record of len data bytes at the
 * tail, linking a segment (allocated from a) if the tail's is used up.
 * PM_ERR_LIMIT, nothing changed, when the lane has max_segments segments
 * from its head (the writer waits for the applier and reclaimer);
 * PM_ERR_INVALID for len above PM_OLOG_MAX_RECORD; an allocator failure as
 * the allocator reports it; PM_ERR_CORRUPT for a chain that does not reach
 * the tail (a lane that does not validate).
 */
extern pm_errcode pm_olog_reserve(const pm_pool *pool, pm_alloc *a, const pm_olog *o,
								  uint32_t lane, uint32_t len, pm_error *err);

/*
 * By the lane's writer, after a successful reserve of at least len bytes:
 * append the record, durable on return (two persists).  Returns the new
 * tail.
 */
extern uint64_t pm_olog_append(const pm_pool *pool, const pm_olog *o, uint32_t lane,
							   const void *data, uint32_t len, uint64_t host_pos);

/*
 * The record at c->pos (reclaimed <= c->pos < upto, upto at most the tail
 * read before): set *rec and advance the cursor past it (over a segment's
 * unused end too).  False, err->code PM_OK, when the cursor reaches upto.
 * Its data stay put until the record's segment is reclaimed.
 * PM_ERR_CORRUPT in *err (and false, the cursor unchanged) for a header,
 * segment chain or cursor segment a writer of this format cannot have
 * left.  A position is where a record ends: a tail, or what pm_olog_next
 * or pm_olog_append left.
 *
 * The cursor follows the chain from its segment, and walks from the lane's
 * head only when it has none.  Between calls the caller keeps the cursor's
 * segment from being freed: no reclaim passes c->pos while the cursor is in
 * use (the host reads inside its epoch section from a position at or above
 * reclaimed, or is the lane's applier and reclaimer).  A cursor is of one
 * lane; pm_olog_cursor_init starts it at a position.
 */
extern bool pm_olog_next(const pm_pool *pool, const pm_olog *o, uint32_t lane,
						 pm_olog_cursor *c, uint64_t upto, pm_olog_record *rec,
						 pm_error *err);

/*
 * Records [applied, upto) are in the structure: advance applied (persisted,
 * after the tail it may not pass).
 */
extern void pm_olog_set_applied(const pm_pool *pool, const pm_olog *o, uint32_t lane,
								uint64_t upto);

/*
 * Nothing reads below upto (<= applied) any more: advance reclaimed
 * (persisted, after the applied it may not pass) and free the segments
 * wholly below it to a, but the lane's last.  By one reclaimer per lane at
 * a time; concurrent with the lane's writer, and with readers above upto.
 */
extern void pm_olog_reclaim(const pm_pool *pool, pm_alloc *a, const pm_olog *o, uint32_t lane,
							uint64_t upto);

/*
 * Check the directory, every lane's positions, its segment chain and the
 * headers of its records from reclaimed to the tail against the pool, as a
 * pool the host did not write may hold anything: PM_ERR_CORRUPT if they do
 * not hold the order above or name no block of the right size.  On a log
 * no one is changing (at open, before recovery).
 */
extern pm_errcode pm_olog_validate(const pm_pool *pool, pm_error *err);

/*
 * Allocator recovery: validate the log (PM_ERR_CORRUPT as pm_olog_validate
 * says), then mark the directory, the lanes and the segments from each
 * lane's head (a segment being linked when the crash came is left
 * unmarked: the allocator frees it).
 */
extern pm_errcode pm_olog_mark(pm_alloc *a, const pm_pool *pool, pm_error *err);

/*
 * Test hook, NULL unless a test sets it: called when a walk of a lane's
 * segment chain has read the lane's head and before it reads a segment,
 * where a concurrent reclaim may free what the walk is about to read.
 */
extern void (*pm_olog_walk_hook) (const pm_olog_lane *l);

#endif							/* PM_OLOG_H */
