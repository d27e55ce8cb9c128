/*
 * nbtpm_build.c
 *	  CREATE INDEX: scan the table, sort (key, rest) pairs with a tuplesort
 *	  (spilling past maintenance_work_mem), bulk-load sorted leaves into a new
 *	  pool at the fill factor, and build the DRAM layer bottom up.
 */
#include "nbtpm.h"

#include "access/tableam.h"
#include "catalog/index.h"
#include "catalog/pg_operator_d.h"
#include "catalog/pg_type_d.h"
#include "commands/progress.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "utils/builtins.h"
#include "utils/rel.h"
#include "utils/tuplesort.h"

#define SIGN_FLIP (UINT64_C(1) << 63)

typedef struct BuildState
{
	Oid			coltype;
	Tuplesortstate *sort;
	TupleTableSlot *slot;
	double		indtuples;
} BuildState;

static void
build_callback(Relation index, ItemPointer tid, Datum *values, bool *isnull,
			   bool tupleIsAlive, void *state)
{
	BuildState *bs = state;
	nbt_skey	sk = nbtpm_skey(bs->coltype, values[0], isnull[0], tid);

	/* int8 sorts signed: flip the sign bit so it sorts as the unsigned key */
	ExecClearTuple(bs->slot);
	bs->slot->tts_values[0] = Int64GetDatum((int64) (sk.key ^ SIGN_FLIP));
	bs->slot->tts_values[1] = Int64GetDatum((int64) sk.rest);
	bs->slot->tts_isnull[0] = bs->slot->tts_isnull[1] = false;
	ExecStoreVirtualTuple(bs->slot);
	tuplesort_puttupleslot(bs->sort, bs->slot);
	bs->indtuples++;
}

typedef struct LoadState
{
	BuildState *bs;
	int64		loaded;
} LoadState;

static bool
next_sorted(void *ctx, nbt_skey *sk)
{
	LoadState  *ls = ctx;
	bool		isnull;

	if ((ls->loaded & 1023) == 0)
		CHECK_FOR_INTERRUPTS();
	if (!tuplesort_gettupleslot(ls->bs->sort, true, false, ls->bs->slot, NULL))
		return false;
	sk->key = (uint64) DatumGetInt64(slot_getattr(ls->bs->slot, 1, &isnull)) ^ SIGN_FLIP;
	sk->rest = (uint64) DatumGetInt64(slot_getattr(ls->bs->slot, 2, &isnull));
	ls->loaded++;
	return true;
}

IndexBuildResult *
nbtpm_build(Relation heap, Relation index, IndexInfo *indexInfo)
{
	IndexBuildResult *result;
	BuildState	bs;
	LoadState	ls;
	TupleDesc	sortdesc;
	AttrNumber	attnums[2] = {1, 2};
	Oid			sortops[2] = {Int8LessOperator, Int8LessOperator};
	Oid			collations[2] = {InvalidOid, InvalidOid};
	bool		nullsfirst[2] = {false, false};
	double		reltuples;
	pm_pool    *pool;
	NbtpmOptions *opts = (NbtpmOptions *) index->rd_options;
	int			fillfactor = opts ? opts->fillfactor : NBTPM_DEFAULT_FILLFACTOR;
	pm_error	err;
	uint32		generation;
	int			slotno;
	PmiSlot    *s;
	nbt_tree	t;

	if (index->rd_rel->relpersistence == RELPERSISTENCE_TEMP)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("nbtree_pm indexes on temporary tables are not supported"),
				 errhint("Use a btree index on temporary tables.")));
	if (!nbtpm_type_supported(nbtpm_column_type(index)))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("nbtree_pm does not support type %s",
						format_type_be(nbtpm_column_type(index)))));

	/* pool first, then the metapage naming it: a pool never outlives its relfilenode */
	pool = nbtpm_create_pool(index);
	nbtpm_write_metapage(index, MAIN_FORKNUM, pool->hdr->uuid);

	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, NBTPM_PHASE_TABLESCAN);
	sortdesc = CreateTemplateTupleDesc(2);
	TupleDescInitEntry(sortdesc, 1, "key", INT8OID, -1, 0);
	TupleDescInitEntry(sortdesc, 2, "rest", INT8OID, -1, 0);
	bs.coltype = nbtpm_column_type(index);
	bs.slot = MakeSingleTupleTableSlot(sortdesc, &TTSOpsMinimalTuple);
	bs.sort = tuplesort_begin_heap(sortdesc, 2, attnums, sortops, collations, nullsfirst,
								   maintenance_work_mem, NULL, TUPLESORT_NONE);
	bs.indtuples = 0;
	reltuples = table_index_build_scan(heap, index, indexInfo, true, true,
									   build_callback, &bs, NULL);

	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, NBTPM_PHASE_SORT);
	tuplesort_performsort(bs.sort);

	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, NBTPM_PHASE_LOAD);
	ls.bs = &bs;
	ls.loaded = 0;
	if (nbt_bulk_load(pool, fillfactor, next_sorted, &ls, &err) != PM_OK)
		nbtpm_report(&err, index);
	tuplesort_end(bs.sort);
	ExecDropSingleTupleTableSlot(bs.slot);

	/* the DRAM layer, published through the registry slot */
	slotno = pmi_registry_attach(index->rd_node, &generation);
	s = pmi_slot(slotno);
	nbt_attach(&t, pool, pmi_dram(), pmi_epoch(), slotno + 1, generation, 0, 0);
	if (nbt_rebuild(&t, false, &err) != PM_OK)
	{
		pm_pool_close(pool);
		nbtpm_report(&err, index);
	}
	pm_pool_close(pool);
	LWLockAcquire(&s->lock, LW_EXCLUSIVE);
	s->dram_root = t.dram_root;
	pg_write_barrier();
	s->state = PMI_SLOT_READY;
	LWLockRelease(&s->lock);

	result = (IndexBuildResult *) palloc(sizeof(IndexBuildResult));
	result->heap_tuples = reltuples;
	result->index_tuples = bs.indtuples;
	return result;
}

/* Unlogged index: the init fork's metapage names no pool; first use makes one. */
void
nbtpm_buildempty(Relation index)
{
	static const uint8 no_pool[16];

	nbtpm_write_metapage(index, INIT_FORKNUM, no_pool);
}
