/*
 * ord_scan.c
 *	  Index scans of the ordered access methods.  The scan keys become a list of disjoint ranges of (key,
 *	  rest): one per span of keys equal to an = ANY element, else one for
 *	  the operator bounds, plus the NULL range when NULLs qualify, in the
 *	  order the index presents (ASC or DESC, NULLS FIRST or LAST); the
 *	  entries are stored in one order, and a DESC index reads each range
 *	  downwards.  A multicolumn index's entries are stored in its order;
 *	  its ranges lie within the prefix its leading equalities make, narrowed
 *	  by the keys on the next column, and its other keys are filters.
 *	  Entries are read one node at a time (a sorted snapshot of that node,
 *	  copied out: OrdOps.read_range), and the scan moves to the
 *	  next node by its fence, so it neither repeats nor misses an entry
 *	  across concurrent splits.  The participants of a parallel scan take
 *	  nodes in turn from one shared position instead.
 */
#include "ord.h"

#include "access/relscan.h"
#include "access/stratnum.h"
#include "catalog/pg_index.h"
#include "catalog/pg_type_d.h"
#include "miscadmin.h"
#include "nodes/tidbitmap.h"
#include "pgstat.h"
#include "utils/array.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"

typedef struct OrdRange
{
	OrdKey	lo;				/* inclusive */
	OrdKey	hi;				/* inclusive */
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
	OrdKey		next;			/* a wide one's rest: PM_REST_WIDE and the flags */
	uint64		next_record[FLEXIBLE_ARRAY_MEMBER];	/* its record */
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
	PmiIndex   *h;
	OrdParallelScan *shared;	/* a parallel scan's, or NULL */
	const OrdOps *ops;
	OrdColumn	col;
	bool		desc;			/* the index is DESC: values are read from the top */
	bool		nulls_first;	/* the index is NULLS FIRST */

	/*
	 * A multicolumn index: the entries' string starts with prefix (the
	 * segments of leading columns' equalities); the ranges come from the
	 * keys on column bound_col; filters test the other keys.
	 */
	StringInfoData prefix;
	int			bound_col;
	OrdFilter  *filters;
	int			nfilters;
	int			filter_upto;	/* the key columns filters need decoded */
	MemoryContext filter_values;	/* an entry's decoded values, reset per entry */
	OrdRange *ranges;			/* in the index's order */
	MemoryContext bounds;		/* a wide index's: ranges and their keys' records */
	int			nranges;
	int			cur;			/* current range */
	bool		counted;		/* this scan is in pg_stat_*_indexes.idx_scan */
	bool		positioned;		/* batch/pos are meaningful */
	int			pos;			/* index into batch of the last entry returned */
	OrdBatch	batch;
	/* index-only and non-MVCC scans: VACUUM waits until they move on (pmi_interlock.c) */
	bool		interlock;
	PmiScanHold hold;
	MemoryContext tupctx;		/* index-only tuples, reset per tuple; NULL until one */
	/* ammarkpos: the position to go back to (the batch is a snapshot) */
	bool		marked_positioned;
	int			marked_cur;
	int			marked_pos;
	OrdBatch  *marked_batch;	/* allocated by the first mark: merge joins only */
#ifdef PM_ASSERT_CHECKING
	/*
	 * the last entry returned, its range and direction (0: none since the
	 * scan was positioned or ran off an end)
	 */
	OrdKey	last_returned;
	MemoryContext last_records;	/* last_returned's record */
	int			last_range;
	int			last_dir;
#endif
} OrdScanOpaqueData;

typedef OrdScanOpaqueData *OrdScanOpaque;

IndexScanDesc
ord_beginscan(Relation r, int nkeys, int norderbys)
{
	IndexScanDesc scan = RelationGetIndexScan(r, nkeys, norderbys);
	OrdScanOpaque so = palloc0(sizeof(OrdScanOpaqueData));

	so->ops = ord_ops(r);
	so->col = ord_column(r);
	/* a multicolumn index's entries are stored in the index's order */
	so->desc = so->col.nkeys == 1 && (r->rd_indoption[0] & INDOPTION_DESC) != 0;
	so->nulls_first = (r->rd_indoption[0] & INDOPTION_NULLS_FIRST) != 0;
	if (so->col.nkeys > 1)
	{
		initStringInfo(&so->prefix);
		so->filter_values = AllocSetContextCreate(CurrentMemoryContext, "pm_index filter values",
												  ALLOCSET_SMALL_SIZES);
	}
	ord_batch_init(&so->batch, r);
	if (so->batch.records != NULL)
		so->bounds = AllocSetContextCreate(CurrentMemoryContext, "pm_index scan bounds",
										   ALLOCSET_SMALL_SIZES);
#ifdef PM_ASSERT_CHECKING
	so->last_records = AllocSetContextCreate(CurrentMemoryContext, "pm_index last entry",
											 ALLOCSET_SMALL_SIZES);
#endif
	scan->opaque = so;
	return scan;
}

static int
cmp_range_lo(const void *a, const void *b, void *order)
{
	return pm_key_cmp_by(order, &((const OrdRange *) a)->lo, &((const OrdRange *) b)->lo);
}

/*
 * Where arg cuts the entries: of the column, or of a multicolumn index's
 * column bound_col after the prefix.
 */
static void
cut_of(IndexScanDesc scan, Oid argtype, Datum arg, OrdCut *cut)
{
	OrdScanOpaque so = (OrdScanOpaque) scan->opaque;
	StringInfoData single;

	if (so->col.nkeys == 1)
	{
		ord_cut(scan->indexRelation->rd_opfamily[0], &so->col, argtype, arg, cut);
		return;
	}
	initStringInfo(&single);
	ord_column_cut(&so->col, so->bound_col, &so->prefix, argtype, arg, cut, &single);
	pfree(single.data);
}

/*
 * A key's strategy in the order entries are stored: commuted on a DESC
 * column of a multicolumn index, whose bytes are inverted.
 */
static int
strategy_of(OrdScanOpaque so, ScanKey key)
{
	/* < and >, <= and >= swap: btree's numbering is symmetric around = */
	if (so->col.nkeys > 1 && so->col.keys[key->sk_attno - 1].descending)
		return BTMaxStrategyNumber + 1 - key->sk_strategy;
	return key->sk_strategy;
}

/* The entries a key's column can hold: its values (of the column, or after the prefix). */
static void
values_range(OrdScanOpaque so, OrdKey *lo, OrdKey *hi)
{
	if (so->col.nkeys == 1)
	{
		*lo = ORD_VALUES_LO;
		*hi = ORD_VALUES_HI;
	}
	else
		ord_column_values(&so->col, so->bound_col, &so->prefix, lo, hi);
}

static ArrayType *
array_elements(ScanKey key, Datum **elems, bool **nulls, int *nelems)
{
	ArrayType  *arr = DatumGetArrayTypeP(key->sk_argument);
	int16		typlen;
	bool		typbyval;
	char		typalign;

	get_typlenbyvalalign(ARR_ELEMTYPE(arr), &typlen, &typbyval, &typalign);
	deconstruct_array(arr, ARR_ELEMTYPE(arr), typlen, typbyval, typalign, elems, nulls, nelems);
	return arr;
}

/*
 * "column = ANY (array)": the entries equal to some non-NULL element, as
 * sorted, disjoint ranges (an element equals one key, none, or for a float
 * zero two: -0 and +0).
 */
static OrdRange *
array_equal_ranges(IndexScanDesc scan, ScanKey key, int *n)
{
	Datum	   *elems;
	bool	   *nulls;
	int			nelems;
	ArrayType  *arr = array_elements(key, &elems, &nulls, &nelems);
	OrdRange   *spans = palloc(sizeof(OrdRange) * Max(nelems, 1));
	const pm_key_order *order = ((OrdScanOpaque) scan->opaque)->col.order;
	int			m = 0;

	for (int i = 0; i < nelems; i++)
	{
		OrdCut	cut;

		if (nulls[i])
			continue;
		cut_of(scan, ARR_ELEMTYPE(arr), elems[i], &cut);
		values_range((OrdScanOpaque) scan->opaque, &spans[m].lo, &spans[m].hi);
		if (ord_narrow(order, &cut, BTEqualStrategyNumber, &spans[m].lo, &spans[m].hi))
			m++;
	}
	qsort_arg(spans, m, sizeof(OrdRange), cmp_range_lo, unconstify(pm_key_order *, order));
	*n = 0;
	for (int i = 0; i < m; i++)
	{
		if (*n > 0 && pm_key_cmp_by(order, &spans[i].lo, &spans[*n - 1].hi) <= 0)
			ord_key_raise(order, &spans[*n - 1].hi, &spans[i].hi);
		else
			spans[(*n)++] = spans[i];
	}
	return spans;
}

/*
 * "column < ANY (array)" is "column < the largest element", "column > ANY
 * (array)" is "column > the smallest": narrow [*lo, *hi] by the loosest
 * bound any non-NULL element gives.  False when none gives one.
 */
static bool
narrow_by_any(IndexScanDesc scan, ScanKey key, OrdKey *lo, OrdKey *hi)
{
	Datum	   *elems;
	bool	   *nulls;
	int			nelems;
	ArrayType  *arr = array_elements(key, &elems, &nulls, &nelems);
	int			strategy = strategy_of((OrdScanOpaque) scan->opaque, key);
	const pm_key_order *order = ((OrdScanOpaque) scan->opaque)->col.order;
	bool		upper = strategy < BTEqualStrategyNumber;
	bool		any = false;
	OrdKey		vlo,
				vhi;
	OrdKey		loosest;

	values_range((OrdScanOpaque) scan->opaque, &vlo, &vhi);
	loosest = upper ? vlo : vhi;
	for (int i = 0; i < nelems; i++)
	{
		OrdCut	cut;
		OrdKey		elo = vlo,
					ehi = vhi;

		if (nulls[i])
			continue;
		cut_of(scan, ARR_ELEMTYPE(arr), elems[i], &cut);
		if (!ord_narrow(order, &cut, strategy, &elo, &ehi))
			continue;
		any = true;
		if (upper)
			ord_key_raise(order, &loosest, &ehi);
		else
			ord_key_lower(order, &loosest, &elo);
	}
	if (!any)
		return false;
	if (upper)
		ord_key_lower(order, hi, &loosest);
	else
		ord_key_raise(order, lo, &loosest);
	return pm_key_cmp_by(order, lo, hi) <= 0;
}

/* Keep of set (sorted, disjoint ranges) only the entries that are in other (the same). */
static int
intersect(const pm_key_order *order, OrdRange *set, int n, const OrdRange *other, int m)
{
	int			out = 0;

	for (int i = 0, j = 0; i < n && j < m;)
	{
		OrdRange	both = set[i];
		bool		set_ends_first = pm_key_cmp_by(order, &set[i].hi, &other[j].hi) < 0;

		ord_key_raise(order, &both.lo, &other[j].lo);
		ord_key_lower(order, &both.hi, &other[j].hi);
		if (pm_key_cmp_by(order, &both.lo, &both.hi) <= 0)
			set[out++] = both;
		/* out <= i: the span just written is never one still to be read */
		if (set_ends_first)
			i++;
		else
			j++;
	}
	return out;
}

/*
 * A multicolumn index's scan keys: the prefix of segments the entries start
 * with, one per leading column that has an equality to a single segment
 * (or IS NULL); bound_col, the next column, whose keys the ranges narrow;
 * the other keys as filters.  *bound_keys: bound_col has keys.  False when
 * no entry can qualify (a strict operator against NULL).
 */
static bool
composite_plan(IndexScanDesc scan, bool *bound_keys)
{
	OrdScanOpaque so = (OrdScanOpaque) scan->opaque;
	bool	   *in_prefix = palloc0(sizeof(bool) * Max(scan->numberOfKeys, 1));
	StringInfoData single;
	int			c;

	initStringInfo(&single);
	resetStringInfo(&so->prefix);
	so->nfilters = 0;
	for (c = 0; c < so->col.nkeys; c++)
	{
		int			chosen = -1;

		for (int i = 0; i < scan->numberOfKeys && chosen < 0; i++)
		{
			ScanKey		key = &scan->keyData[i];

			if (key->sk_attno - 1 != c)
				continue;
			if (key->sk_flags & SK_ISNULL)
			{
				if (key->sk_flags & SK_SEARCHNULL)
				{
					ord_column_null(&so->col, c, &so->prefix);
					chosen = i;
				}
				else if (!(key->sk_flags & SK_SEARCHNOTNULL))
					return false;	/* a strict operator against NULL */
			}
			else if (!(key->sk_flags & SK_SEARCHARRAY) &&
					 key->sk_strategy == BTEqualStrategyNumber)
			{
				OrdCut		cut;

				ord_column_cut(&so->col, c, &so->prefix, key->sk_subtype, key->sk_argument, &cut,
							   &single);
				if (single.len > 0)
				{
					appendBinaryStringInfo(&so->prefix, single.data, single.len);
					chosen = i;
				}
			}
		}
		if (chosen < 0)
			break;
		in_prefix[chosen] = true;
	}
	so->bound_col = c;
	*bound_keys = false;
	so->filter_upto = 0;
	so->filters = palloc(sizeof(OrdFilter) * Max(scan->numberOfKeys, 1));
	for (int i = 0; i < scan->numberOfKeys; i++)
	{
		ScanKey		key = &scan->keyData[i];
		OrdFilter  *f;

		if (key->sk_attno - 1 == so->bound_col)
		{
			*bound_keys = true;
			continue;
		}
		if (in_prefix[i])
			continue;
		if ((key->sk_flags & SK_ISNULL) && !(key->sk_flags & (SK_SEARCHNULL | SK_SEARCHNOTNULL)))
			return false;
		f = &so->filters[so->nfilters++];
		f->key = key;
		f->nelems = 0;
		if (key->sk_flags & SK_SEARCHARRAY)
			(void) array_elements(key, &f->elems, &f->nulls, &f->nelems);
		so->filter_upto = Max(so->filter_upto, key->sk_attno);
	}
	pfree(in_prefix);
	pfree(single.data);
	return true;
}

/* Whether a multicolumn index's entry passes the scan's filters. */
static bool
filters_pass(OrdScanOpaque so, const OrdKey *e)
{
	Datum		values[INDEX_MAX_KEYS];
	bool		isnull[INDEX_MAX_KEYS];
	bool		pass = true;
	MemoryContext old;

	if (so->nfilters == 0)
		return true;
	old = MemoryContextSwitchTo(so->filter_values);
	ord_entry_key_values(&so->col, e, so->filter_upto, values, isnull);
	for (int i = 0; i < so->nfilters && pass; i++)
	{
		OrdFilter  *f = &so->filters[i];
		ScanKey		key = f->key;
		int			c = key->sk_attno - 1;

		if (key->sk_flags & SK_ISNULL)
			pass = (key->sk_flags & SK_SEARCHNULL) ? isnull[c] : !isnull[c];
		else if (isnull[c])
			pass = false;
		else if (key->sk_flags & SK_SEARCHARRAY)
		{
			pass = false;
			for (int j = 0; j < f->nelems && !pass; j++)
				pass = !f->nulls[j] &&
					DatumGetBool(FunctionCall2Coll(&key->sk_func, key->sk_collation, values[c],
												   f->elems[j]));
		}
		else
			pass = DatumGetBool(FunctionCall2Coll(&key->sk_func, key->sk_collation, values[c],
												  key->sk_argument));
	}
	MemoryContextSwitchTo(old);
	MemoryContextReset(so->filter_values);
	return pass;
}

/*
 * The scan keys as a list of disjoint ranges in the order the index presents
 * its entries.  Entries are stored in ascending (key, rest) order with NULLs
 * last; a DESC index reads its value ranges from the top (so->desc flips
 * every read), and NULLS FIRST puts the NULL range at the front.
 */
static void
compute_ranges(IndexScanDesc scan)
{
	OrdScanOpaque so = (OrdScanOpaque) scan->opaque;
	OrdKey		lo = ORD_VALUES_LO,
				hi = ORD_VALUES_HI;
	bool		want_values = true;
	bool		want_nulls = true;
	bool		possible = true;
	OrdRange   *set = NULL;
	int			nset = 0;
	int			nvalues = 0;
	int			first_value;

	if (so->col.nkeys > 1)
	{
		bool		bound_keys;

		possible = composite_plan(scan, &bound_keys);
		if (possible && bound_keys)
			values_range(so, &lo, &hi);
		else if (possible)
			ord_prefix_range(&so->prefix, &lo, &hi);
	}
	for (int i = 0; i < scan->numberOfKeys && possible; i++)
	{
		ScanKey		key = &scan->keyData[i];

		if (so->col.nkeys > 1 && key->sk_attno - 1 != so->bound_col)
			continue;
		if (key->sk_flags & SK_ISNULL)
		{
			if (key->sk_flags & SK_SEARCHNULL)
				want_values = false;
			else if (key->sk_flags & SK_SEARCHNOTNULL)
				want_nulls = false;
			else
				possible = false;	/* a strict operator against NULL */
			continue;
		}
		want_nulls = false;
		if ((key->sk_flags & SK_SEARCHARRAY) && key->sk_strategy == BTEqualStrategyNumber)
		{
			int			m;
			OrdRange   *spans = array_equal_ranges(scan, key, &m);

			if (set == NULL)
			{
				set = spans;
				nset = m;
			}
			else
			{
				nset = intersect(so->col.order, set, nset, spans, m);
				pfree(spans);
			}
			possible = nset > 0;
		}
		else if (key->sk_flags & SK_SEARCHARRAY)
			possible = narrow_by_any(scan, key, &lo, &hi);
		else
		{
			OrdCut	cut;

			cut_of(scan, key->sk_subtype, key->sk_argument, &cut);
			possible = ord_narrow(so->col.order, &cut, strategy_of(so, key), &lo, &hi);
		}
	}
	/* a multicolumn index's NULLs are in its ranges */
	if (so->col.nkeys > 1)
		want_nulls = false;

	if (so->ranges)
		pfree(so->ranges);
	so->ranges = palloc(sizeof(OrdRange) * (Max(nset, 1) + 1));
	so->nranges = 0;
	if (!possible)
		return;
	/* the NULL range first or last, the value ranges in key order between */
	first_value = (want_nulls && so->nulls_first) ? 1 : 0;
	if (want_values && set != NULL)
	{
		for (int i = 0; i < nset; i++)
		{
			OrdRange   *r = &so->ranges[first_value + nvalues];

			*r = set[i];
			ord_key_raise(so->col.order, &r->lo, &lo);
			ord_key_lower(so->col.order, &r->hi, &hi);
			if (pm_key_cmp_by(so->col.order, &r->lo, &r->hi) <= 0)
				nvalues++;
		}
	}
	else if (want_values)
	{
		so->ranges[first_value] = (OrdRange) {lo, hi};
		nvalues = 1;
	}
	if (set)
		pfree(set);
	if (so->desc)
	{
		for (int i = 0, j = nvalues - 1; i < j; i++, j--)
		{
			OrdRange	tmp = so->ranges[first_value + i];

			so->ranges[first_value + i] = so->ranges[first_value + j];
			so->ranges[first_value + j] = tmp;
		}
	}
	so->nranges = nvalues;
	if (want_nulls)
	{
		OrdRange *nulls = &so->ranges[so->nulls_first ? 0 : nvalues];

		nulls->lo = (OrdKey) {ORD_NULL_KEY, ORD_REST_NULL};
		nulls->hi = (OrdKey) {ORD_NULL_KEY, ORD_REST_MAX};
		so->nranges++;
	}
}

void
ord_rescan(IndexScanDesc scan, ScanKey scankey, int nscankeys, ScanKey orderbys,
		   int norderbys)
{
	OrdScanOpaque so = (OrdScanOpaque) scan->opaque;

	if (scankey && scan->numberOfKeys > 0)
		memmove(scan->keyData, scankey, scan->numberOfKeys * sizeof(ScanKeyData));
	so->h = pmi_index_open(scan->indexRelation, pmi_index_am(scan->indexRelation));
	pmi_scan_check_built(so->h, scan->indexRelation);
	so->shared = scan->parallel_scan == NULL ? NULL :
		(OrdParallelScan *) OffsetToPointer(scan->parallel_scan, scan->parallel_scan->ps_offset);
	if (so->bounds != NULL)
	{
		/* a rescan per outer row of a nested loop must not pile up records */
		MemoryContext old;

		so->ranges = NULL;
		MemoryContextReset(so->bounds);
		old = MemoryContextSwitchTo(so->bounds);
		compute_ranges(scan);
		MemoryContextSwitchTo(old);
	}
	else
		compute_ranges(scan);
	so->cur = -1;
	so->counted = false;
	so->positioned = false;
	so->marked_positioned = false;
	so->interlock = pmi_scan_needs_hold(scan);
	pmi_scan_release(&so->hold);
#ifdef PM_ASSERT_CHECKING
	so->last_dir = 0;
#endif
}

/* Count a scan once per rescan, at its first read, as btree and GiST do. */
static void
count_scan(IndexScanDesc scan)
{
	OrdScanOpaque so = (OrdScanOpaque) scan->opaque;

	if (!so->counted)
	{
		pgstat_count_index_scan(scan->indexRelation);
		so->counted = true;
	}
}

/*
 * Load the node of range r where a read in key direction kd (1 upwards, -1
 * downwards) goes on from, positioned before its first entry that way.
 */
static void
read_batch(OrdScanOpaque so, int r, int kd, const OrdKey *from)
{
	/* a marked batch may be returned again: keep the hold taken before it */
	if (so->interlock && !so->marked_positioned)
		pmi_scan_hold(so->h, &so->hold);
	so->cur = r;
	so->ops->read_range(so->h->am_state, from, kd < 0, &so->ranges[r].lo, &so->ranges[r].hi,
						&so->batch);
	so->pos = kd > 0 ? -1 : so->batch.n;
}

/*
 * Where a read of a range in key direction kd starts.  A backward read takes
 * an exclusive bound: start just above hi (ord_key_above), which reads hi's
 * node once rather than hi alone and then its node again.
 */
static OrdKey
range_start(const OrdRange *range, int kd)
{
	return kd > 0 ? range->lo : ord_key_above(&range->hi);
}

/* Load the node to start range r, reading keys in direction kd. */
static void
position_at(OrdScanOpaque so, int r, int kd)
{
	OrdKey		from = range_start(&so->ranges[r], kd);

	read_batch(so, r, kd, &from);
	so->positioned = true;
}

/* The shared position, its record (if wide) as this process maps it. */
static OrdKey
shared_next(OrdParallelScan *ps)
{
	OrdKey		k = ps->next;

	if (pm_rest_is_wide(k.rest))
		k.rest = (k.rest & ~PM_REST_ADDR) | (uintptr_t) ps->next_record;
	return k;
}

static void
set_shared_next(OrdParallelScan *ps, const OrdKey *k)
{
	ps->next = *k;
	if (pm_rest_is_wide(k->rest))
	{
		const pm_key_rec *r = pm_key_rec_of(NULL, k->rest);

		memcpy(ps->next_record, r, pm_key_rec_size(r));
		ps->next.rest &= ~PM_REST_ADDR;
	}
}

/*
 * A parallel scan's next batch into so->batch (its range in so->cur): the
 * node where the shared position is, which moves past it.  False when every
 * range has been taken.
 */
static bool
take_batch(OrdScanOpaque so, int d, int kd)
{
	OrdParallelScan *ps = so->shared;
	bool		got = false;

	LWLockAcquire(&ps->lock, LW_EXCLUSIVE);
	while (!got && ps->taken < so->nranges)
	{
		int			r = d > 0 ? ps->taken : so->nranges - 1 - ps->taken;
		OrdRange   *range = &so->ranges[r];
		OrdKey		from = ps->started ? shared_next(ps) : range_start(range, kd);
		OrdKey		next;

		read_batch(so, r, kd, &from);
		ps->started = ord_batch_continues(so->col.order, &so->batch, &range->lo, &range->hi, kd,
										  &next);
		if (ps->started)
			set_shared_next(ps, &next);
		else
			ps->taken++;
		got = so->batch.n > 0;
	}
	LWLockRelease(&ps->lock);
	return got;
}

/* step() of a parallel scan: each batch is the one at the shared position */
static bool
step_parallel(OrdScanOpaque so, ScanDirection dir, OrdKey *out)
{
	int			d = ScanDirectionIsForward(dir) ? 1 : -1;
	int			kd = so->desc ? -d : d;

	for (;;)
	{
		if (so->positioned)
		{
			so->pos += kd;
			if (so->pos >= 0 && so->pos < so->batch.n)
			{
				*out = so->batch.e[so->pos];
				return true;
			}
		}
		CHECK_FOR_INTERRUPTS();
		so->positioned = take_batch(so, d, kd);
		if (!so->positioned)
			return false;
	}
}

/*
 * Step to the next qualifying entry in direction dir of the index's order.
 * Returns false at the end, leaving the state so that a step the other way
 * starts over from the end just left.  The ranges are in the index's order
 * (d steps through them); keys are read upwards or, for a DESC index,
 * downwards (kd).
 */
static bool
step_range(OrdScanOpaque so, ScanDirection dir, OrdKey *out)
{
	int			d = ScanDirectionIsForward(dir) ? 1 : -1;
	int			kd = so->desc ? -d : d;

	if (so->shared)
		return step_parallel(so, dir, out);
	if (so->nranges == 0)
		return false;
	if (!so->positioned)
		position_at(so, d > 0 ? 0 : so->nranges - 1, kd);
	else if (so->cur < 0 || so->cur >= so->nranges)
	{
		/* past one end: only a step back from that end finds anything */
		if ((d > 0 && so->cur >= so->nranges) || (d < 0 && so->cur < 0))
			return false;
		position_at(so, d > 0 ? 0 : so->nranges - 1, kd);
	}
	for (;;)
	{
		OrdRange *range = &so->ranges[so->cur];
		OrdKey		from;

		so->pos += kd;
		if (so->pos >= 0 && so->pos < so->batch.n)
		{
			OrdKey   *e = &so->batch.e[so->pos];

			if (pm_key_cmp_by(so->col.order, e, &range->lo) >= 0 &&
				pm_key_cmp_by(so->col.order, e, &range->hi) <= 0)
			{
#ifdef PM_ASSERT_CHECKING
				/* strictly ordered within a range, so never repeated across SMOs */
				pm_assert(so->last_dir != d || so->last_range != so->cur ||
						  pm_key_cmp_by(so->col.order, e, &so->last_returned) * kd > 0);
				so->last_returned = *e;
				MemoryContextReset(so->last_records);
				ord_key_copy(&so->last_returned, so->last_records);
				so->last_range = so->cur;
				so->last_dir = d;
#endif
				*out = *e;
				return true;
			}
			/* before the range's start in this direction: skip; past its end: next range */
			if ((kd > 0 && pm_key_cmp_by(so->col.order, e, &range->hi) <= 0) ||
				(kd < 0 && pm_key_cmp_by(so->col.order, e, &range->lo) >= 0))
				continue;
		}
		else if (ord_batch_continues(so->col.order, &so->batch, &range->lo, &range->hi, kd, &from))
		{
			CHECK_FOR_INTERRUPTS();
			read_batch(so, so->cur, kd, &from);
			continue;
		}
		/* this range is done */
		if (so->cur + d < 0 || so->cur + d >= so->nranges)
		{
			so->cur += d;
#ifdef PM_ASSERT_CHECKING
			/* a step back from past the end returns the last entry again, as btree's does */
			so->last_dir = 0;
#endif
			return false;
		}
		position_at(so, so->cur + d, kd);
	}
}

/* Step to the next entry in the ranges that passes the filters. */
static bool
step(OrdScanOpaque so, ScanDirection dir, OrdKey *out)
{
	while (step_range(so, dir, out))
	{
		if (filters_pass(so, out))
			return true;
		CHECK_FOR_INTERRUPTS();
	}
	return false;
}

bool
ord_gettuple(IndexScanDesc scan, ScanDirection dir)
{
	OrdScanOpaque so = (OrdScanOpaque) scan->opaque;
	OrdKey	e;
	uint64		rest;

	count_scan(scan);
	if (!step(so, dir, &e))
		return false;
	rest = ord_entry_rest(&e);
	ord_rest_tid(rest, &scan->xs_heaptid);
	scan->xs_recheck = false;
	if (scan->xs_want_itup)
	{
		Relation	index = scan->indexRelation;
		Datum		values[INDEX_MAX_KEYS];
		bool		isnull[INDEX_MAX_KEYS];
		MemoryContext old;

		old = MemoryContextSwitchTo(pmi_tuple_context(&so->tupctx, so));
		ord_entry_values(&so->col, &e, values, isnull);
		scan->xs_itup = index_form_tuple(RelationGetDescr(index), values, isnull);
		scan->xs_itupdesc = RelationGetDescr(index);
		MemoryContextSwitchTo(old);
	}
	return true;
}

int64
ord_getbitmap(IndexScanDesc scan, TIDBitmap *tbm)
{
	OrdScanOpaque so = (OrdScanOpaque) scan->opaque;
	ItemPointerData tids[ORD_BATCH_MAX];
	int			n = 0;
	int64		total = 0;
	OrdKey	e;

	count_scan(scan);
	while (step(so, ForwardScanDirection, &e))
	{
		ord_rest_tid(ord_entry_rest(&e), &tids[n++]);
		if (n == ORD_BATCH_MAX)
		{
			tbm_add_tuples(tbm, tids, n, false);
			total += n;
			n = 0;
		}
	}
	if (n > 0)
		tbm_add_tuples(tbm, tids, n, false);
	return total + n;
}

/* Room for a wide position: amestimateparallelscan does not know the index. */
Size
ord_estimateparallelscan(void)
{
	return ORD_PARALLEL_SCAN_SIZE;
}

void
ord_initparallelscan(void *target)
{
	OrdParallelScan *ps = target;

	LWLockInitialize(&ps->lock, pmi_shared->lwlock_tranche);
	ps->taken = 0;
	ps->started = false;
}

/* The leader, before the workers rescan: start over (they compute the same ranges). */
void
ord_parallelrescan(IndexScanDesc scan)
{
	OrdParallelScan *ps = (OrdParallelScan *)
		OffsetToPointer(scan->parallel_scan, scan->parallel_scan->ps_offset);

	LWLockAcquire(&ps->lock, LW_EXCLUSIVE);
	ps->taken = 0;
	ps->started = false;
	LWLockRelease(&ps->lock);
}

/*
 * Mark and restore (merge joins): a batch is a private snapshot, so the
 * position is the batch, the index into it and the range.
 */
void
ord_markpos(IndexScanDesc scan)
{
	OrdScanOpaque so = (OrdScanOpaque) scan->opaque;

	so->marked_positioned = so->positioned;
	so->marked_cur = so->cur;
	so->marked_pos = so->pos;
	if (!so->positioned)
		return;
	if (so->marked_batch == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(GetMemoryChunkContext(so));

		so->marked_batch = palloc(sizeof(OrdBatch));
		ord_batch_init(so->marked_batch, scan->indexRelation);
		MemoryContextSwitchTo(old);
	}
	ord_batch_copy(so->marked_batch, &so->batch);
}

void
ord_restrpos(IndexScanDesc scan)
{
	OrdScanOpaque so = (OrdScanOpaque) scan->opaque;

	so->positioned = so->marked_positioned;
	so->cur = so->marked_cur;
	so->pos = so->marked_pos;
	if (so->positioned)
		ord_batch_copy(&so->batch, so->marked_batch);
#ifdef PM_ASSERT_CHECKING
	so->last_dir = 0;
#endif
}

void
ord_endscan(IndexScanDesc scan)
{
	OrdScanOpaque so = (OrdScanOpaque) scan->opaque;

	if (so->tupctx)
		MemoryContextDelete(so->tupctx);
	if (so->filter_values)
		MemoryContextDelete(so->filter_values);
	if (so->bounds)
		MemoryContextDelete(so->bounds);
	else if (so->ranges)
		pfree(so->ranges);
	if (so->marked_batch)
	{
		ord_batch_free(so->marked_batch);
		pfree(so->marked_batch);
	}
	ord_batch_free(&so->batch);
	pmi_scan_release(&so->hold);
#ifdef PM_ASSERT_CHECKING
	MemoryContextDelete(so->last_records);
#endif
	pfree(so);
}
