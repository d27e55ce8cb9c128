/*
 * ord_scan.c
 *	  Index scans of the ordered access methods: the driver over the ranges
 *	  and filters ord_preprocess.c makes of the scan keys.  The entries are
 *	  stored in one order, and a DESC index reads each range downwards.
 *	  Entries are read one node at a time (a sorted snapshot of that node,
 *	  copied out: OrdOps.read_range), and the scan moves to the
 *	  next node by its fence, so it neither repeats nor misses an entry
 *	  across concurrent splits.  The participants of a parallel scan take
 *	  nodes in turn from one shared position instead.
 */
#include "ord_scan.h"

#include "miscadmin.h"
#include "nodes/tidbitmap.h"
#include "pgstat.h"
#include "utils/memutils.h"
#include "utils/rel.h"

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

void
ord_rescan(IndexScanDesc scan, ScanKey scankey, int nscankeys, ScanKey orderbys,
		   int norderbys)
{
	OrdScanOpaque so = (OrdScanOpaque) scan->opaque;

	if (scankey && scan->numberOfKeys > 0)
		memmove(scan->keyData, scankey, scan->numberOfKeys * sizeof(ScanKeyData));
	so->index = scan->indexRelation;
	so->h = pmi_index_open(scan->indexRelation, pmi_index_am(scan->indexRelation));
	pmi_scan_check_built(so->h, scan->indexRelation);
	so->shared = scan->parallel_scan == NULL ? NULL :
		(OrdParallelScan *) OffsetToPointer(scan->parallel_scan, scan->parallel_scan->ps_offset_am);
	if (so->bounds != NULL)
	{
		/* a rescan per outer row of a nested loop must not pile up records */
		MemoryContext old;

		so->ranges = NULL;
		MemoryContextReset(so->bounds);
		old = MemoryContextSwitchTo(so->bounds);
		ord_compute_ranges(scan);
		MemoryContextSwitchTo(old);
	}
	else
		ord_compute_ranges(scan);
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
	ord_read_batch(so->index, so->h, so->col.order, from, kd < 0, &so->ranges[r].lo,
				   &so->ranges[r].hi, &so->batch);
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
		OrdRange   *range = &so->ranges[so->cur];
		OrdKey		from;

		so->pos += kd;
		if (so->pos >= 0 && so->pos < so->batch.n)
		{
			OrdKey	   *e = &so->batch.e[so->pos];

			if (pm_key_cmp_by(so->col.order, e, &range->lo) >= 0 &&
				pm_key_cmp_by(so->col.order, e, &range->hi) <= 0)
			{
#ifdef PM_ASSERT_CHECKING
				/*
				 * strictly ordered within a range, so never repeated across
				 * SMOs
				 */
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

			/*
			 * before the range's start in this direction: skip; past its end:
			 * next range
			 */
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

			/*
			 * a step back from past the end returns the last entry again, as
			 * btree's does
			 */
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
	OrdKey		e;
	uint64		rest;

	count_scan(scan);
	if (!step(so, dir, &e))
		return false;
	rest = ord_entry_rest(&e);
	pmi_tid_unpack(rest, &scan->xs_heaptid);
	scan->xs_recheck = false;
	if (scan->xs_want_itup)
	{
		Datum		values[INDEX_MAX_KEYS];
		bool		isnull[INDEX_MAX_KEYS];
		MemoryContext old;

		old = MemoryContextSwitchTo(pmi_index_only_context(&so->itups, so));
		ord_entry_values(&so->col, &e, values, isnull);
		scan->xs_itup = pmi_index_only_tuple(&so->itups, scan->indexRelation, values, isnull);
		scan->xs_itupdesc = RelationGetDescr(scan->indexRelation);
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
	OrdKey		e;

	count_scan(scan);
	while (step(so, ForwardScanDirection, &e))
	{
		pmi_tid_unpack(ord_entry_rest(&e), &tids[n++]);
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
ord_estimateparallelscan(PMI_ESTIMATEPARALLELSCAN_PARAMS)
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
		OffsetToPointer(scan->parallel_scan, scan->parallel_scan->ps_offset_am);

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

	pmi_index_only_end(&so->itups);
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
