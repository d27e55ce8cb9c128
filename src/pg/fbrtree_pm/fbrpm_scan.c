/*
 * fbrpm_scan.c
 *	  Index scans.  A plain or bitmap scan collects every match at its first
 *	  call (fbr_search: lock-free, each entry once) and returns them in no
 *	  particular order.  An ordered scan (ORDER BY value <-> point) walks
 *	  the tree best-first (fbr_knn_*) one entry per call, and returns the
 *	  operator's exact distance, so no reordering is needed; NULLs follow
 *	  the rest, as in GiST.  The core's result arrays and KNN iterator live
 *	  outside PostgreSQL's memory contexts: a reset callback on the scan's
 *	  context releases them (and the KNN iterator's epoch) if the query ends
 *	  in an error.
 */
#include "fbrpm.h"

#include "access/relscan.h"
#include "catalog/pg_type_d.h"
#include "miscadmin.h"
#include "nodes/tidbitmap.h"
#include "utils/memutils.h"
#include "utils/rel.h"

typedef struct FbrpmScanOpaqueData
{
	PmiIndex   *h;
	Oid			coltype;
	FbrpmKey   *keys;
	int			nkeys;
	bool		spatial;		/* entries with a box may qualify */
	bool		nulls;			/* NULL entries may qualify */
	bool		started;
	/* matches, collected by fbr_search (plain scans; the NULLs of ordered ones) */
	fbr_results results;
	size_t		next;
	/* ordered scans */
	fbr_knn    *knn;
	bool		knn_done;
	FmgrInfo   *orderby_op;
	Datum		orderby_arg;
	bool		orderby_null;
	MemoryContext tupctx;		/* index-only tuples, reset per tuple */
	MemoryContextCallback cleanup;
} FbrpmScanOpaqueData;

typedef FbrpmScanOpaqueData *FbrpmScanOpaque;

static void
release_core_state(void *arg)
{
	FbrpmScanOpaque so = arg;

	if (so->knn != NULL)
		fbr_knn_end(so->knn);
	so->knn = NULL;
	fbr_results_free(&so->results);
	memset(&so->results, 0, sizeof(so->results));
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
	so->h = fbrpm_open(r);
	so->coltype = fbrpm_column_type(r);
	so->keys = palloc(sizeof(FbrpmKey) * Max(nkeys, 1));
	so->tupctx = AllocSetContextCreate(CurrentMemoryContext, "fbrtree_pm index-only tuples",
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

	release_core_state(so);
	so->started = false;
	so->knn_done = false;
	so->next = 0;
	if (scankey && scan->numberOfKeys > 0)
		memmove(scan->keyData, scankey, scan->numberOfKeys * sizeof(ScanKeyData));
	if (orderbys && scan->numberOfOrderBys > 0)
		memmove(scan->orderByData, orderbys, scan->numberOfOrderBys * sizeof(ScanKeyData));

	so->spatial = so->nulls = true;
	so->nkeys = 0;
	for (int i = 0; i < scan->numberOfKeys; i++)
	{
		ScanKey		sk = &scan->keyData[i];

		if (sk->sk_flags & SK_SEARCHNULL)
			so->spatial = false;
		else if (sk->sk_flags & SK_SEARCHNOTNULL)
			so->nulls = false;
		else if (sk->sk_flags & SK_ISNULL)
			so->spatial = so->nulls = false;	/* strict operators: nothing matches */
		else
		{
			if (!fbrpm_prepare_key(so->coltype, sk, &so->keys[so->nkeys]))
				elog(ERROR, "fbrtree_pm: unsupported strategy %d", sk->sk_strategy);
			so->nkeys++;
			so->nulls = false;
		}
	}
	if (scan->numberOfOrderBys > 0)
	{
		ScanKey		ob = &scan->orderByData[0];

		so->orderby_op = &ob->sk_func;
		so->orderby_arg = ob->sk_argument;
		so->orderby_null = (ob->sk_flags & SK_ISNULL) != 0;
	}
}

static bool
scan_consistent(void *arg, const fbr_box *box, bool is_leaf)
{
	FbrpmScanOpaque so = arg;

	return fbrpm_consistent(so->coltype, so->keys, so->nkeys, box, is_leaf);
}

static bool
all_consistent(void *arg, const fbr_box *box, bool is_leaf)
{
	return true;
}

static double
scan_distance(void *arg, const fbr_box *box, bool is_leaf)
{
	FbrpmScanOpaque so = arg;

	return fbrpm_distance(so->coltype, so->orderby_op, so->orderby_arg, box, is_leaf);
}

/* Append every qualifying entry of the trees to so->results. */
static void
collect(IndexScanDesc scan, bool spatial, bool nulls)
{
	FbrpmScanOpaque so = (FbrpmScanOpaque) scan->opaque;
	pm_error	err;

	if (spatial && fbr_search(&so->h->tree.fbr.spatial, scan_consistent, so, &so->results,
							  &err) != PM_OK)
		pmi_report(&err, scan->indexRelation);
	if (nulls && fbr_search(&so->h->tree.fbr.side, all_consistent, NULL, &so->results,
							&err) != PM_OK)
		pmi_report(&err, scan->indexRelation);
}

static void
return_entry(IndexScanDesc scan, const fbr_item *item)
{
	FbrpmScanOpaque so = (FbrpmScanOpaque) scan->opaque;
	bool		isnull = (item->payload & FBRPM_PAYLOAD_NULL) != 0;

	fbrpm_payload_tid(item->payload, &scan->xs_heaptid);
	scan->xs_recheck = false;
	if (scan->xs_want_itup)
	{
		Datum		value = (Datum) 0;
		MemoryContext old;

		MemoryContextReset(so->tupctx);
		old = MemoryContextSwitchTo(so->tupctx);
		if (!isnull)
			value = fbrpm_box_value(so->coltype, &item->box);
		scan->xs_itupdesc = RelationGetDescr(scan->indexRelation);
		scan->xs_itup = index_form_tuple(scan->xs_itupdesc, &value, &isnull);
		MemoryContextSwitchTo(old);
	}
}

bool
fbrpm_gettuple(IndexScanDesc scan, ScanDirection dir)
{
	FbrpmScanOpaque so = (FbrpmScanOpaque) scan->opaque;
	pm_error	err;

	CHECK_FOR_INTERRUPTS();
	if (scan->numberOfOrderBys > 0 && !so->knn_done)
	{
		fbr_item	item;
		double		distance;

		if (!so->started)
		{
			so->started = true;
			if (!so->spatial || so->orderby_null)
			{
				/* no distance to order by: any order is the right one */
				collect(scan, so->spatial, so->nulls);
				so->knn_done = true;
				return fbrpm_gettuple(scan, dir);
			}
			so->knn = fbr_knn_begin(&so->h->tree.fbr.spatial, scan_consistent, so,
									scan_distance, so, &err);
			if (so->knn == NULL)
				pmi_report(&err, scan->indexRelation);
		}
		if (fbr_knn_next(so->knn, &item, &distance, &err))
		{
			return_entry(scan, &item);
			scan->xs_orderbyvals[0] = Float8GetDatum(distance);
			scan->xs_orderbynulls[0] = false;
			scan->xs_recheckorderby = false;
			return true;
		}
		if (err.code != PM_OK)
			pmi_report(&err, scan->indexRelation);
		fbr_knn_end(so->knn);
		so->knn = NULL;
		so->knn_done = true;
		so->started = false;	/* the NULLs come next */
	}
	if (!so->started)
	{
		so->started = true;
		collect(scan, scan->numberOfOrderBys > 0 ? false : so->spatial, so->nulls);
	}
	if (so->next >= so->results.n)
		return false;
	return_entry(scan, &so->results.items[so->next++]);
	if (scan->numberOfOrderBys > 0)
	{
		bool		isnull = (so->results.items[so->next - 1].payload & FBRPM_PAYLOAD_NULL) != 0;

		scan->xs_orderbynulls[0] = isnull || so->orderby_null;
		scan->xs_orderbyvals[0] = (Datum) 0;
		scan->xs_recheckorderby = false;
	}
	return true;
}

int64
fbrpm_getbitmap(IndexScanDesc scan, TIDBitmap *tbm)
{
	FbrpmScanOpaque so = (FbrpmScanOpaque) scan->opaque;
	int64		n;

	collect(scan, so->spatial, so->nulls);
	for (size_t i = 0; i < so->results.n; i++)
	{
		ItemPointerData tid;

		fbrpm_payload_tid(so->results.items[i].payload, &tid);
		tbm_add_tuples(tbm, &tid, 1, false);
	}
	n = so->results.n;
	release_core_state(so);
	return n;
}

void
fbrpm_endscan(IndexScanDesc scan)
{
	FbrpmScanOpaque so = (FbrpmScanOpaque) scan->opaque;

	/* so itself stays: the reset callback registered on its context still names it */
	release_core_state(so);
	MemoryContextDelete(so->tupctx);
}
