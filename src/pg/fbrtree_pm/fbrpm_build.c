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
	bool		side = fbrpm_entry(&bs->oc, values[0], isnull[0], tid, &item);

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

IndexBuildResult *
fbrpm_build(Relation heap, Relation index, IndexInfo *indexInfo)
{
	IndexBuildResult *result;
	FbrpmOptions *opts = (FbrpmOptions *) index->rd_options;
	int			fillfactor = opts ? opts->fillfactor : FBRPM_DEFAULT_FILLFACTOR;
	BuildState	bs;
	pm_pool    *pool;
	double		reltuples;
	uint32		generation;
	int			slotno;
	fbr_tree	spatial;
	fbr_tree	side;

	/* pool first, then the metapage naming it: a pool never outlives its relfilenode */
	pool = pmi_create_pool(index, &fbrpm_am_ops);
	pmi_write_metapage(index, MAIN_FORKNUM, &fbrpm_am_ops, pool->hdr->uuid);

	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, FBRPM_PHASE_TABLESCAN);
	memset(&bs, 0, sizeof(bs));
	fbrpm_opclass(index, &bs.oc);
	reltuples = table_index_build_scan(heap, index, indexInfo, true, true, build_callback, &bs,
									   NULL);

	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, FBRPM_PHASE_LOAD);
	result = (IndexBuildResult *) palloc(sizeof(IndexBuildResult));
	result->heap_tuples = reltuples;
	result->index_tuples = bs.spatial.n + bs.side.n;

	/* the slot only names the epoch space of nodes freed later; the build itself frees none */
	slotno = pmi_registry_attach(pmi_index_rnode(index), &fbrpm_am_ops, &generation);
	fbrpm_attach_trees(pool, slotno, generation, &spatial, &side);
	load(index, &spatial, &bs.spatial, fillfactor);
	load(index, &side, &bs.side, fillfactor);
	pm_pool_close(pool);
	pmi_publish_ready(slotno, 0);
	return result;
}

/* Unlogged index: the init fork's metapage names no pool; first use makes one. */
void
fbrpm_buildempty(Relation index)
{
	static const uint8 no_pool[16];

	pmi_write_metapage(index, INIT_FORKNUM, &fbrpm_am_ops, no_pool);
}
