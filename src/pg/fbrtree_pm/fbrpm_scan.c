/*
 * fbrpm_scan.c
 *	  Index scans.  A plain or bitmap scan collects every match at its first
 *	  call (fbr_search: lock-free, each entry once) and returns them in no
 *	  particular order.  An ordered scan (ORDER BY value <-> point) walks
 *	  the tree best-first (fbr_knn_*) one entry per call, and returns the
 *	  operator's exact distance, so no reordering is needed; NULLs follow
 *	  the rest, as in GiST.  A tiered index's entries that wait in its
 *	  operation log are copied before the trees are read and merged in: the
 *	  qualifying ones added to the matches, or returned among the walk's at
 *	  their distances; an entry applied in between is read twice and
 *	  returned once (an entry is its own identity).  The core's result
 *	  arrays and KNN iterator live outside PostgreSQL's memory contexts: a
 *	  reset callback on the scan's context releases them (and the KNN
 *	  iterator's epoch) if the query ends in an error.
 */
#include "fbrpm.h"

#include "access/relscan.h"
#include "catalog/pg_type_d.h"
#include "miscadmin.h"
#include "nodes/tidbitmap.h"
#include "pgstat.h"
#include "utils/memutils.h"
#include "utils/rel.h"

typedef struct FbrpmScanOpaqueData
{
	PmiIndex   *h;
	FbrpmOpclass oc;
	FbrpmKey   *keys;
	int			nkeys;
	bool		spatial;		/* entries with a box may qualify */
	uint64		side_flags;		/* which side tree entries may qualify
								 * (FBRPM_PAYLOAD_*) */
	bool		started;
	bool		counted;		/* this scan is in pg_stat_*_indexes.idx_scan */

	/*
	 * matches, collected by fbr_search (plain scans; the side entries of
	 * ordered ones)
	 */
	fbr_results results;
	size_t		next;
	/* ordered scans */
	FbrpmOrderBy ob;
	fbr_knn    *knn;
	bool		knn_done;
	double		last_bound;		/* bounded kinds: the last distance bound
								 * returned */
	bool		empties_inline; /* the EMPTYs (in results) go among the boxes,
								 * at: */
	double		empty_distance;
	bool		peeked;			/* the best-first walk's next entry, taken
								 * early: */
	fbr_item	peek;
	double		peek_distance;
	/* the walk's tree is done; entries may still wait (below) */
	bool		knn_tree_done;

	/*
	 * ordered scans of a tiered index: the qualifying entries that waited in
	 * its log when the walk began, by entry (to drop the walk's copies) and
	 * by distance (to merge them into the walk)
	 */
	fbr_item   *knn_waiting;
	struct WaitingByDistance *knn_order;
	int			knn_nwaiting;
	int			knn_next_waiting;
	MemoryContext waitcxt;		/* the copies of waiting entries, reset by
								 * rescan (made on first use) */
	PmiIndexOnlyTuples itups;
	MemoryContext distctx;		/* ordered scans: values rebuilt for
								 * distances, reset per tuple */
	MemoryContextCallback cleanup;

	/*
	 * index-only and non-MVCC scans: VACUUM waits until they end
	 * (pmi_interlock.c)
	 */
	bool		interlock;
	PmiScanHold hold;
} FbrpmScanOpaqueData;

typedef FbrpmScanOpaqueData *FbrpmScanOpaque;

typedef struct WaitingByDistance
{
	double		distance;
	int			item;			/* in knn_waiting */
} WaitingByDistance;

/* The entries waiting in an index's operation log, as a scan copied them. */
typedef struct Waiting
{
	IndexScanDesc scan;
	fbr_item   *items;
	int			n;
	int			cap;
} Waiting;

/* One finished scan's result buffer, kept for the next scan of this backend. */
static fbr_results spare_results;

#define SPARE_RESULTS_MAX	(1024 * 1024 / sizeof(fbr_item))

static void
release_core_state(void *arg)
{
	FbrpmScanOpaque so = arg;

	if (so->knn != NULL)
		fbr_knn_end(so->knn);
	so->knn = NULL;
	pmi_scan_release(&so->hold);
	if (spare_results.items == NULL && so->results.cap <= SPARE_RESULTS_MAX)
		spare_results = so->results;
	else
		fbr_results_free(&so->results);
	memset(&so->results, 0, sizeof(so->results));
}

/*
 * The buffer a scan collects into: the spare if there is one.  A window of
 * 1% of a million points collects 400 kB, which malloc mapped and unmapped
 * per scan: 100 more page faults per query than GiST (perf stat), now none.
 */
static void
take_spare_results(FbrpmScanOpaque so)
{
	if (so->results.items == NULL && spare_results.items != NULL)
	{
		so->results = spare_results;
		so->results.n = 0;
		memset(&spare_results, 0, sizeof(spare_results));
	}
}

IndexScanDesc
fbrpm_beginscan(Relation r, int nkeys, int norderbys)
{
	IndexScanDesc scan = RelationGetIndexScan(r, nkeys, norderbys);
	FbrpmScanOpaque so = palloc0(sizeof(FbrpmScanOpaqueData));

	if (norderbys > 1)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("fbrtree_pm index \"%s\" orders by one distance at a time",
						RelationGetRelationName(r)),
				 errhint("Order by the first distance in the query and sort the rest, or use a GiST index.")));
	fbrpm_opclass(r, &so->oc);
	so->h = pmi_index_open(r, &fbrpm_am_ops);
	pmi_scan_check_built(so->h, r);
	so->keys = palloc(sizeof(FbrpmKey) * Max(nkeys, 1));
	if (norderbys > 0)
		so->distctx = AllocSetContextCreate(CurrentMemoryContext, "fbrtree_pm distances",
											ALLOCSET_SMALL_SIZES);
	so->cleanup.func = release_core_state;
	so->cleanup.arg = so;
	MemoryContextRegisterResetCallback(CurrentMemoryContext, &so->cleanup);
	if (norderbys > 0)
	{
		scan->xs_orderbyvals = palloc0(sizeof(Datum) * norderbys);
		scan->xs_orderbynulls = palloc(sizeof(bool) * norderbys);
	}
	scan->opaque = so;
	return scan;
}

void
fbrpm_rescan(IndexScanDesc scan, ScanKey scankey, int nscankeys, ScanKey orderbys,
			 int norderbys)
{
	FbrpmScanOpaque so = (FbrpmScanOpaque) scan->opaque;
	bool		empties_match;

	release_core_state(so);
	so->interlock = pmi_scan_needs_hold(scan);
	so->started = false;
	so->counted = false;
	so->knn_done = false;
	so->next = 0;
	so->last_bound = 0;
	so->empties_inline = false;
	so->peeked = false;
	so->knn_tree_done = false;
	so->knn_waiting = NULL;
	so->knn_order = NULL;
	so->knn_nwaiting = 0;
	so->knn_next_waiting = 0;
	if (so->waitcxt)
		MemoryContextReset(so->waitcxt);
	if (scankey && scan->numberOfKeys > 0)
		memmove(scan->keyData, scankey, scan->numberOfKeys * sizeof(ScanKeyData));
	if (orderbys && scan->numberOfOrderBys > 0)
		memmove(scan->orderByData, orderbys, scan->numberOfOrderBys * sizeof(ScanKeyData));

	so->spatial = true;
	/* only PostGIS's kinds have values with no box */
	so->side_flags = so->oc.kind == FBRPM_BOUNDED || so->oc.kind == FBRPM_GIDX ?
		FBRPM_PAYLOAD_SIDE : FBRPM_PAYLOAD_NULL;
	so->nkeys = 0;
	empties_match = true;
	for (int i = 0; i < scan->numberOfKeys; i++)
	{
		ScanKey		sk = &scan->keyData[i];

		if (sk->sk_flags & SK_SEARCHNULL)
		{
			so->spatial = false;
			so->side_flags &= FBRPM_PAYLOAD_NULL;
		}
		else if (sk->sk_flags & SK_SEARCHNOTNULL)
			so->side_flags &= FBRPM_PAYLOAD_EMPTY;
		else if (sk->sk_flags & SK_ISNULL)
		{
			so->spatial = false;	/* strict operators: nothing matches */
			so->side_flags = 0;
		}
		else
		{
			if (!fbrpm_prepare_key(&so->oc, sk, &so->keys[so->nkeys]))
				elog(ERROR, "fbrtree_pm: unsupported strategy %d", sk->sk_strategy);
			if (fbrpm_key_matches_nothing(&so->keys[so->nkeys]))
				so->spatial = false;
			empties_match = empties_match && fbrpm_key_accepts_empty(&so->oc, &so->keys[so->nkeys]);
			so->nkeys++;
		}
	}
	/* NULLs match no operator; EMPTYs those that accept them */
	if (so->nkeys > 0)
		so->side_flags &= empties_match ? FBRPM_PAYLOAD_EMPTY : 0;
	if (scan->numberOfOrderBys > 0)
		fbrpm_prepare_orderby(&so->oc, &scan->orderByData[0], &so->ob);
}

static bool
scan_consistent(void *arg, const fbr_box *box, bool is_leaf)
{
	FbrpmScanOpaque so = arg;

	return fbrpm_consistent(&so->oc, so->keys, so->nkeys, box, is_leaf);
}

static double
scan_distance(void *arg, const fbr_box *box, bool is_leaf)
{
	FbrpmScanOpaque so = arg;
	MemoryContext old = MemoryContextSwitchTo(so->distctx);
	double		d = fbrpm_distance(&so->oc, &so->ob, box, is_leaf);

	MemoryContextSwitchTo(old);
	return d;
}

/* The dimensions of an item's tree: NULLs and EMPTYs are in the 2-D side tree. */
static int
item_dims(FbrpmScanOpaque so, const fbr_item *item)
{
	return (item->payload & FBRPM_PAYLOAD_SIDE) ? 2 : fbrpm_trees(so->h)->spatial.dims;
}

static int
cmp_items(const void *a, const void *b, void *arg)
{
	return fbrpm_item_cmp(a, b, item_dims(arg, a));
}

static int
cmp_distances(const void *a, const void *b)
{
	double		x = ((const WaitingByDistance *) a)->distance;
	double		y = ((const WaitingByDistance *) b)->distance;

	return x < y ? -1 : x > y;
}

/* PmiTierRecordFn: decode a waiting entry into so->waitcxt (made on first use) */
static void
copy_waiting(void *arg, const PmiNote *note, const char *entry, Size len)
{
	Waiting    *w = arg;
	FbrpmScanOpaque so = (FbrpmScanOpaque) w->scan->opaque;
	pm_error	err;

	if (w->n == w->cap)
	{
		w->cap = Max(w->cap * 2, 64);
		if (so->waitcxt == NULL)
			so->waitcxt = AllocSetContextCreate(GetMemoryChunkContext(so),
												"fbrtree_pm waiting entries",
												ALLOCSET_SMALL_SIZES);
		w->items = w->items == NULL ?
			MemoryContextAllocExtended(so->waitcxt, sizeof(fbr_item) * w->cap, MCXT_ALLOC_HUGE) :
			repalloc_huge(w->items, sizeof(fbr_item) * w->cap);
	}
	if (fbrpm_logged_item(entry, len, &w->items[w->n], &err) == 0)
		pmi_report(&err, w->scan->indexRelation);
	w->n++;
}

/*
 * The entries waiting in the index's operation log, sorted by cmp_items, in
 * so->waitcxt; none (and no allocation) if the index has none waiting.
 */
static void
copy_waiting_entries(IndexScanDesc scan, Waiting *w)
{
	FbrpmScanOpaque so = (FbrpmScanOpaque) scan->opaque;

	memset(w, 0, sizeof(*w));
	w->scan = scan;
	pmi_tier_foreach_pending(so->h, copy_waiting, w);
	if (w->n > 1)
		qsort_arg(w->items, w->n, sizeof(fbr_item), cmp_items, so);
}

/* Whether a waiting entry answers the scan. */
static bool
waiting_qualifies(FbrpmScanOpaque so, const fbr_item *item, bool spatial, uint64 side_flags)
{
	if (item->payload & FBRPM_PAYLOAD_SIDE)
		return (item->payload & side_flags) != 0;
	return spatial && scan_consistent(so, &item->box, true);
}

/*
 * Append to so->results the waiting entries of one tree (the side tree or
 * the spatial one) that answer the scan and are not among that tree's
 * matches, results[from..] (which hold those applied since the copy).
 */
static void
add_waiting(FbrpmScanOpaque so, const Waiting *w, size_t from, bool side, bool spatial,
			uint64 side_flags)
{
	bool	   *found;

	if (w->n == 0)
		return;
	found = palloc0(sizeof(bool) * w->n);
	for (size_t i = from; i < so->results.n; i++)
	{
		fbr_item   *hit = bsearch_arg(&so->results.items[i], w->items, w->n, sizeof(fbr_item),
									  cmp_items, so);

		if (hit != NULL)
			found[hit - w->items] = true;
	}
	for (int j = 0; j < w->n; j++)
	{
		const fbr_item *item = &w->items[j];

		if (found[j] || ((item->payload & FBRPM_PAYLOAD_SIDE) != 0) != side ||
			!waiting_qualifies(so, item, spatial, side_flags))
			continue;
		if (!fbr_results_add(&so->results, item, item_dims(so, item)))
			ereport(ERROR,
					(errcode(ERRCODE_OUT_OF_MEMORY),
					 errmsg("out of memory")));
	}
	pfree(found);
}

/*
 * Append the qualifying entries of the spatial tree and of the side tree to
 * so->results, with those waiting in the operation log.
 */
static void
collect(IndexScanDesc scan, bool spatial, uint64 side_flags)
{
	FbrpmScanOpaque so = (FbrpmScanOpaque) scan->opaque;
	size_t		from;
	Waiting		w;
	pm_error	err;

	take_spare_results(so);
	if (so->interlock)
		pmi_scan_hold(so->h, &so->hold);
	copy_waiting_entries(scan, &w);
	from = so->results.n;
	if (spatial && fbr_search(&fbrpm_trees(so->h)->spatial, scan_consistent, so, &so->results,
							  &err) != PM_OK)
		pmi_report(&err, scan->indexRelation);
	add_waiting(so, &w, from, false, spatial, side_flags);
	if (side_flags == 0)
		return;
	from = so->results.n;
	if (fbr_search(&fbrpm_trees(so->h)->side, fbrpm_accept_all, NULL, &so->results, &err) != PM_OK)
		pmi_report(&err, scan->indexRelation);
	add_waiting(so, &w, from, true, spatial, side_flags);

	/*
	 * keep the qualifying ones, EMPTY before NULL (the order of their
	 * distances)
	 */
	for (uint64 flag = FBRPM_PAYLOAD_EMPTY;; flag = FBRPM_PAYLOAD_NULL)
	{
		for (size_t i = from; i < so->results.n; i++)
		{
			fbr_item	e = so->results.items[i];

			if ((e.payload & side_flags & flag) != 0)
			{
				so->results.items[i] = so->results.items[from];
				so->results.items[from++] = e;
			}
		}
		if (flag == FBRPM_PAYLOAD_NULL)
			break;
	}
	so->results.n = from;
}

/*
 * An ordered scan's EMPTY entries: when the operator gives an empty value a
 * distance ("<#>" gives FLT_MAX), they are returned at that distance among
 * the boxes, collected now into results; else (NULL, as "<->" gives) after
 * every box, with the NULLs.  The GIDX kind's side entries (no box, or a
 * non-finite one) come first at bound 0: the executor's recheck computes
 * their distances and orders them.
 */
static void
place_empties(IndexScanDesc scan)
{
	FbrpmScanOpaque so = (FbrpmScanOpaque) scan->opaque;
	bool		isnull = false;
	MemoryContext old;

	if ((so->side_flags & FBRPM_PAYLOAD_EMPTY) == 0 || so->ob.null_arg)
		return;
	so->empty_distance = 0;
	if (so->oc.kind != FBRPM_GIDX)
	{
		old = MemoryContextSwitchTo(so->distctx);
		so->empty_distance = fbrpm_value_distance(&so->ob, fbrpm_empty_value(&so->oc, so->ob.arg),
												  &isnull);
		MemoryContextSwitchTo(old);
	}
	if (isnull)
		return;
	collect(scan, false, FBRPM_PAYLOAD_EMPTY);
	so->next = 0;
	so->empties_inline = true;
	so->side_flags &= ~FBRPM_PAYLOAD_EMPTY;
}

/*
 * An ordered scan's waiting entries: those that answer it, with their
 * distances, copied before the walk begins.
 */
static void
order_waiting(IndexScanDesc scan)
{
	FbrpmScanOpaque so = (FbrpmScanOpaque) scan->opaque;
	Waiting		w;
	int			n = 0;

	copy_waiting_entries(scan, &w);
	for (int j = 0; j < w.n; j++)
		if (waiting_qualifies(so, &w.items[j], true, 0))
			w.items[n++] = w.items[j];
	if (n == 0)
		return;
	so->knn_waiting = w.items;
	so->knn_nwaiting = n;
	so->knn_order = MemoryContextAlloc(so->waitcxt, sizeof(WaitingByDistance) * n);
	for (int j = 0; j < n; j++)
	{
		so->knn_order[j].item = j;
		so->knn_order[j].distance = scan_distance(so, &w.items[j].box, true);
	}
	qsort(so->knn_order, n, sizeof(WaitingByDistance), cmp_distances);
}

/*
 * The best-first walk's next entry into so->peek, unless it has one there:
 * false at its end.  An entry copied from the log is skipped: it is
 * returned from the copy.
 */
static bool
peek_tree(IndexScanDesc scan)
{
	FbrpmScanOpaque so = (FbrpmScanOpaque) scan->opaque;
	pm_error	err;

	while (!so->peeked && !so->knn_tree_done)
	{
		so->peeked = fbr_knn_next(so->knn, &so->peek, &so->peek_distance, &err);
		if (!so->peeked)
		{
			if (err.code != PM_OK)
				pmi_report(&err, scan->indexRelation);
			so->knn_tree_done = true;
		}
		else if (so->knn_nwaiting > 0 &&
				 bsearch_arg(&so->peek, so->knn_waiting, so->knn_nwaiting, sizeof(fbr_item),
							 cmp_items, so) != NULL)
			so->peeked = false;
	}
	return so->peeked;
}

static void
return_entry(IndexScanDesc scan, const fbr_item *item)
{
	FbrpmScanOpaque so = (FbrpmScanOpaque) scan->opaque;
	bool		isnull = (item->payload & FBRPM_PAYLOAD_NULL) != 0;

	pmi_tid_unpack(item->payload, &scan->xs_heaptid);
	scan->xs_recheck = !fbrpm_exact_entries(&so->oc);
	if (scan->xs_want_itup)
	{
		Datum		value = (Datum) 0;
		MemoryContext old;

		/*
		 * A value the entry cannot give back is NULL, as GiST's is: only a
		 * plan that reads no column (count(*)) scans such an index only.
		 */
		isnull = isnull || !fbrpm_can_return(&so->oc);
		old = MemoryContextSwitchTo(pmi_index_only_context(&so->itups, so));
		if (!isnull)
			value = fbrpm_entry_value(&so->oc, item);
		scan->xs_itupdesc = RelationGetDescr(scan->indexRelation);
		scan->xs_itup = pmi_index_only_tuple(&so->itups, scan->indexRelation, &value, &isnull);
		MemoryContextSwitchTo(old);
	}
}

/*
 * The ORDER BY value of an entry the best-first walk did not give (a side
 * tree entry, or any entry when the argument has no box).  Exact kinds: the
 * operator's value (NULL for a NULL).  Otherwise the executor rechecks with
 * the operator, so the value must be a lower bound that keeps the order:
 * the last bound returned.
 */
static void
set_unknown_distance(IndexScanDesc scan, const fbr_item *item)
{
	FbrpmScanOpaque so = (FbrpmScanOpaque) scan->opaque;
	bool		isnull = true;
	double		d = 0;

	scan->xs_recheckorderby = !fbrpm_exact_distances(&so->oc);
	if (scan->xs_recheckorderby)
	{
		isnull = false;
		d = so->last_bound;
	}
	else if ((item->payload & FBRPM_PAYLOAD_NULL) == 0 && !so->ob.null_arg)
	{
		MemoryContext old = MemoryContextSwitchTo(so->distctx);

		d = fbrpm_value_distance(&so->ob, fbrpm_entry_value(&so->oc, item), &isnull);
		MemoryContextSwitchTo(old);
	}
	scan->xs_orderbynulls[0] = isnull;
	scan->xs_orderbyvals[0] = isnull ? (Datum) 0 : Float8GetDatum(d);
}

bool
fbrpm_gettuple(IndexScanDesc scan, ScanDirection dir)
{
	FbrpmScanOpaque so = (FbrpmScanOpaque) scan->opaque;
	pm_error	err;

	CHECK_FOR_INTERRUPTS();
	if (!so->counted)
	{
		/* once per rescan, as GiST counts */
		pgstat_count_index_scan(scan->indexRelation);
		so->counted = true;
	}
	if (so->distctx)
		MemoryContextReset(so->distctx);
	if (scan->numberOfOrderBys > 0 && !so->knn_done)
	{
		fbr_item	item;
		double		distance;
		bool		peeked;
		const WaitingByDistance *waiting;

		if (!so->started)
		{
			so->started = true;
			if (!so->spatial || so->ob.no_distance)
			{
				/* no distance to order by: any order is the right one */
				collect(scan, so->spatial, so->side_flags);
				so->knn_done = true;
				return fbrpm_gettuple(scan, dir);
			}
			if (so->interlock)
				pmi_scan_hold(so->h, &so->hold);
			order_waiting(scan);
			so->knn = fbr_knn_begin(&fbrpm_trees(so->h)->spatial, scan_consistent, so,
									scan_distance, so, &err);
			if (so->knn == NULL)
				pmi_report(&err, scan->indexRelation);
			place_empties(scan);
		}
		peeked = peek_tree(scan);
		waiting = so->knn_next_waiting < so->knn_nwaiting ?
			&so->knn_order[so->knn_next_waiting] : NULL;
		/* the nearer of the walk's next entry and the log's */
		if (waiting != NULL && (!peeked || waiting->distance < so->peek_distance))
			peeked = false;
		else
			waiting = NULL;
		/* an EMPTY whose distance the next box's bound passes comes first */
		if (so->empties_inline && so->next < so->results.n &&
			((!peeked && waiting == NULL) ||
			 (peeked ? so->peek_distance : waiting->distance) > so->empty_distance))
		{
			item = so->results.items[so->next++];
			distance = so->empty_distance;
		}
		else if (waiting != NULL)
		{
			item = so->knn_waiting[waiting->item];
			distance = waiting->distance;
			so->knn_next_waiting++;
		}
		else if (peeked)
		{
			item = so->peek;
			distance = so->peek_distance;
			so->peeked = false;
		}
		else
		{
			fbr_knn_end(so->knn);
			so->knn = NULL;
			so->knn_done = true;
			so->started = false;	/* the side tree's other entries come next */
			so->results.n = 0;
			so->next = 0;
			return fbrpm_gettuple(scan, dir);
		}
		return_entry(scan, &item);
		so->last_bound = distance;
		scan->xs_orderbyvals[0] = Float8GetDatum(distance);
		scan->xs_orderbynulls[0] = false;
		scan->xs_recheckorderby = !fbrpm_exact_distances(&so->oc);
		return true;
	}
	if (!so->started)
	{
		so->started = true;
		collect(scan, scan->numberOfOrderBys > 0 ? false : so->spatial, so->side_flags);
	}
	if (so->next >= so->results.n)
		return false;
	return_entry(scan, &so->results.items[so->next]);
	if (scan->numberOfOrderBys > 0)
		set_unknown_distance(scan, &so->results.items[so->next]);
	so->next++;
	return true;
}

int64
fbrpm_getbitmap(IndexScanDesc scan, TIDBitmap *tbm)
{
	FbrpmScanOpaque so = (FbrpmScanOpaque) scan->opaque;
	int64		n;

	pgstat_count_index_scan(scan->indexRelation);
	collect(scan, so->spatial, so->side_flags);
	for (size_t i = 0; i < so->results.n; i++)
	{
		ItemPointerData tid;

		pmi_tid_unpack(so->results.items[i].payload, &tid);
		tbm_add_tuples(tbm, &tid, 1, !fbrpm_exact_entries(&so->oc));
	}
	n = so->results.n;
	release_core_state(so);
	return n;
}

void
fbrpm_endscan(IndexScanDesc scan)
{
	FbrpmScanOpaque so = (FbrpmScanOpaque) scan->opaque;

	/*
	 * so itself stays: the reset callback registered on its context still
	 * names it
	 */
	release_core_state(so);
	pmi_index_only_end(&so->itups);
	if (so->distctx)
		MemoryContextDelete(so->distctx);
}
