/*
 * fbrpm_build.c
 *	  ambuild: scan the table into an array of entries (boxed values for the
 *	  spatial tree, NULLs and empty values for the side tree), then STR bulk loads of both
 *	  trees into a fresh pool.  STR needs every entry at once, so the array
 *	  is held in memory (40 bytes an entry) whatever maintenance_work_mem is.
 */
#include "fbrpm.h"

#include "access/tableam.h"
#include "commands/progress.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "utils/memutils.h"
#include "utils/rel.h"

typedef struct ItemArray
{
	fbr_item   *items;
	int64		n;
	int64		cap;
} ItemArray;

typedef struct BuildState
{
	FbrpmOpclass oc;
	ItemArray	spatial;
	ItemArray	side;
	MemoryContext per_tuple;	/* what making an entry allocates (a box, a
								 * detoasted value) */
} BuildState;

static void
add_item(ItemArray *a, const fbr_item *item)
{
	if (a->n == a->cap)
	{
		a->cap = Max(a->cap * 2, 1024);
		a->items = a->items == NULL ?
			palloc_extended(sizeof(fbr_item) * a->cap, MCXT_ALLOC_HUGE) :
			repalloc_huge(a->items, sizeof(fbr_item) * a->cap);
	}
	a->items[a->n++] = *item;
}

static void
build_callback(Relation index, ItemPointer tid, Datum *values, bool *isnull, bool tupleIsAlive,
			   void *state)
{
	BuildState *bs = state;
	fbr_item	item;
	MemoryContext old = MemoryContextSwitchTo(bs->per_tuple);
	bool		side = fbrpm_entry(&bs->oc, values[0], isnull[0], tid, &item);

	MemoryContextSwitchTo(old);
	MemoryContextReset(bs->per_tuple);
	add_item(side ? &bs->side : &bs->spatial, &item);
}

static void
load(Relation index, fbr_tree *t, ItemArray *a, int fillfactor)
{
	pm_error	err;

	if (a->n > 0 && fbr_bulk_load(t, a->items, a->n, fillfactor, &err) != PM_OK)
		pmi_report(&err, index);
	if (a->items)
		pfree(a->items);
}

/* PmiAmOps.build: the pool is made; fill both trees by STR bulk loads */
uint64
fbrpm_build(Relation heap, Relation index, IndexInfo *indexInfo, PmiBuild *b)
{
	BuildState	bs;
	FbrpmTrees *trees;

	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, FBRPM_PHASE_TABLESCAN);
	memset(&bs, 0, sizeof(bs));
	fbrpm_opclass(index, &bs.oc);
	bs.per_tuple = AllocSetContextCreate(CurrentMemoryContext, "fbrtree_pm build entry",
										 ALLOCSET_SMALL_SIZES);
	b->heap_tuples = table_index_build_scan(heap, index, indexInfo, true, true, build_callback,
											&bs, NULL);
	MemoryContextDelete(bs.per_tuple);
	b->index_tuples = bs.spatial.n + bs.side.n;

	pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_TOTAL, b->index_tuples);
	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, FBRPM_PHASE_LOAD);
	trees = pmi_build_attach(b);
	/* the tuples of one tree are done when its bulk load returns */
	load(index, &trees->spatial, &bs.spatial, b->fillfactor);
	pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_DONE, bs.spatial.n);
	load(index, &trees->side, &bs.side, b->fillfactor);
	pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_DONE, b->index_tuples);
	return 0;
}
