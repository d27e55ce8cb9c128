/*
 * fbrpm_check.c
 *	  fbrtree_pm_check(index, heapallindexed): verify both trees (meta block,
 *	  versions, bitmaps, locks, equal leaf depth, every child's entries inside
 *	  its parent's box, no node reached twice) and optionally that every heap
 *	  tuple the index should hold is in it with the right box; and the trees'
 *	  shape for pm_index_stats(index).
 */
#include "fbrpm.h"

#include "access/table.h"
#include "access/tableam.h"
#include "catalog/index.h"
#include "miscadmin.h"
#include "utils/rel.h"

PG_FUNCTION_INFO_V1(fbrtree_pm_check);

typedef struct HeapCheckState
{
	FbrpmOpclass oc;
	fbr_item   *entries;		/* every index entry, sorted by payload */
	int64		nentries;
	int64		missing;
	ItemPointerData first_missing;
} HeapCheckState;

static int
cmp_payload(const void *a, const void *b)
{
	uint64		x = ((const fbr_item *) a)->payload;
	uint64		y = ((const fbr_item *) b)->payload;

	return x < y ? -1 : x > y;
}

/* Every entry of both trees, sorted by payload, in palloc'd memory. */
static fbr_item *
all_entries(Relation index, PmiIndex *h, int64 *n)
{
	fbr_results *r = palloc0(sizeof(fbr_results));	/* survives a longjmp */
	fbr_item   *copy = NULL;

	PG_TRY();
	{
		fbrpm_list_entries(index, &fbrpm_trees(h)->spatial, &fbrpm_trees(h)->side, r);
		copy = palloc_extended(sizeof(fbr_item) * Max(r->n, 1), MCXT_ALLOC_HUGE);
		memcpy(copy, r->items, sizeof(fbr_item) * r->n);
		*n = r->n;
	}
	PG_FINALLY();
	{
		fbr_results_free(r);
	}
	PG_END_TRY();
	qsort(copy, *n, sizeof(fbr_item), cmp_payload);
	return copy;
}

static void
heap_check_callback(Relation index, ItemPointer tid, Datum *values, bool *isnull,
					bool tupleIsAlive, void *state)
{
	HeapCheckState *hs = state;
	fbr_item	want;
	int64		lo = 0,
				hi = hs->nentries - 1;

	fbrpm_entry(&hs->oc, values[0], isnull[0], tid, &want);
	while (lo <= hi)
	{
		int64		mid = (lo + hi) / 2;
		int			c = cmp_payload(&hs->entries[mid], &want);

		if (c == 0)
		{
			/* a TID is indexed once: its entry must carry the tuple's box */
			if (fbr_box_equal(&hs->entries[mid].box, &want.box))
				return;
			break;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	if (hs->missing++ == 0)
		hs->first_missing = *tid;
}

static void
check_tree(Relation index, fbr_tree *t, const char *which, fbr_stats *st)
{
	const char *problem = fbr_check(t, st);

	if (problem != NULL)
		pmi_report_corrupt(index, psprintf("In the %s tree: %s.", which, problem));
}

Datum
fbrtree_pm_check(PG_FUNCTION_ARGS)
{
	Oid			indexoid = PG_GETARG_OID(0);
	bool		heapallindexed = PG_GETARG_BOOL(1);
	Relation	heap;
	Relation	index = pmi_check_open(indexoid, &fbrpm_am_ops, &heap);
	PmiIndex   *h = fbrpm_open(index);
	fbr_stats	spatial;
	fbr_stats	side;

	check_tree(index, &fbrpm_trees(h)->spatial, "spatial", &spatial);
	check_tree(index, &fbrpm_trees(h)->side, "NULL", &side);
	if (heapallindexed)
	{
		HeapCheckState hs;
		IndexInfo  *ii = BuildIndexInfo(index);

		fbrpm_opclass(index, &hs.oc);
		hs.entries = all_entries(index, h, &hs.nentries);
		hs.missing = 0;
		if (hs.nentries != (int64) (spatial.entries + side.entries))
			pmi_report_corrupt(index,
							   psprintf("A search finds %lld entries, the structure holds %llu.",
										(long long) hs.nentries,
										(unsigned long long) (spatial.entries + side.entries)));
		table_index_build_scan(heap, index, ii, true, false, heap_check_callback, &hs, NULL);
		if (hs.missing > 0)
			pmi_report_missing(index, heap, hs.missing, &hs.first_missing);
		pfree(hs.entries);
	}
	index_close(index, ShareLock);
	table_close(heap, ShareLock);
	PG_RETURN_VOID();
}

/* pm_index_stats: both trees together */
void
fbrpm_shape(PmiIndex *h, PmiShape *shape)
{
	fbr_stats	spatial;
	fbr_stats	side;

	fbr_get_stats(&fbrpm_trees(h)->spatial, &spatial);
	fbr_get_stats(&fbrpm_trees(h)->side, &side);
	shape->entries = spatial.entries + side.entries;
	shape->leaves = spatial.leaves + side.leaves;
	shape->height = spatial.height;
	shape->pm_bytes = spatial.pm_bytes + side.pm_bytes;
	shape->dram_bytes = 0;
	shape->splits = spatial.splits + side.splits;
	shape->compactions = -1;
	shape->merges = spatial.merges + side.merges;
}
