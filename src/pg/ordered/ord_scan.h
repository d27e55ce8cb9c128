/*
 * ord_scan.h
 *	  The state of an ordered access method's index scan, shared by the scan
 *	  driver (ord_scan.c) and the preprocessing of its keys into ranges and
 *	  filters (ord_preprocess.c).
 */
#ifndef ORD_SCAN_H
#define ORD_SCAN_H

#include "ord.h"

#include "access/relscan.h"

typedef struct OrdRange
{
	OrdKey		lo;				/* inclusive */
	OrdKey		hi;				/* inclusive */
} OrdRange;

/*
 * A parallel scan's shared position: participants take one node's batch at
 * a time under the lock, in the scan's order, so each returns its entries
 * in order and together they return each entry once.
 */
typedef struct OrdParallelScan
{
	LWLock		lock;
	int			taken;			/* ranges finished, in the scan's order */
	bool		started;		/* next is where the current range goes on */
	OrdKey		next;			/* a wide one's rest: PM_REST_WIDE and the
								 * flags */
	uint64		next_record[FLEXIBLE_ARRAY_MEMBER]; /* its record */
} OrdParallelScan;

#define ORD_PARALLEL_SCAN_SIZE \
	(offsetof(OrdParallelScan, next_record) + sizeof(pm_key_rec) + ORD_WIDE_MAX)

/*
 * A scan key the ranges do not decide (multicolumn indexes), tested on
 * each entry's decoded value; an array's elements deconstructed once.
 */
typedef struct OrdFilter
{
	ScanKey		key;
	Datum	   *elems;
	bool	   *nulls;
	int			nelems;
} OrdFilter;

typedef struct OrdScanOpaqueData
{
	Relation	index;
	PmiIndex   *h;
	OrdParallelScan *shared;	/* a parallel scan's, or NULL */
	const OrdOps *ops;
	OrdColumn	col;
	bool		desc;			/* the index is DESC: values are read from the
								 * top */
	bool		nulls_first;	/* the index is NULLS FIRST */

	/*
	 * A multicolumn index: the entries' string starts with prefix (the
	 * segments of leading columns' equalities); the ranges come from the keys
	 * on column bound_col; filters test the other keys.
	 */
	StringInfoData prefix;
	int			bound_col;
	OrdFilter  *filters;
	int			nfilters;
	int			filter_upto;	/* the key columns filters need decoded */
	MemoryContext filter_values;	/* an entry's decoded values, reset per
									 * entry */
	OrdRange   *ranges;			/* in the index's order */
	MemoryContext bounds;		/* a wide index's: ranges and their keys'
								 * records */
	int			nranges;
	int			cur;			/* current range */
	bool		counted;		/* this scan is in pg_stat_*_indexes.idx_scan */
	bool		positioned;		/* batch/pos are meaningful */
	int			pos;			/* index into batch of the last entry returned */
	OrdBatch	batch;

	/*
	 * index-only and non-MVCC scans: VACUUM waits until they move on
	 * (pmi_interlock.c)
	 */
	bool		interlock;
	PmiScanHold hold;
	PmiIndexOnlyTuples itups;
	/* ammarkpos: the position to go back to (the batch is a snapshot) */
	bool		marked_positioned;
	int			marked_cur;
	int			marked_pos;
	OrdBatch   *marked_batch;	/* allocated by the first mark: merge joins
								 * only */
#ifdef PM_ASSERT_CHECKING

	/*
	 * the last entry returned, its range and direction (0: none since the
	 * scan was positioned or ran off an end)
	 */
	OrdKey		last_returned;
	MemoryContext last_records; /* last_returned's record */
	int			last_range;
	int			last_dir;
#endif
} OrdScanOpaqueData;

typedef OrdScanOpaqueData *OrdScanOpaque;

/* ord_preprocess.c: the scan keys of a rescan as so->ranges, prefix and filters */
extern void ord_compute_ranges(IndexScanDesc scan);

#endif							/* ORD_SCAN_H */
