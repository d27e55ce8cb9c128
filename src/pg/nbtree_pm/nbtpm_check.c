/*
 * nbtpm_check.c
 *	  nbtree_pm_check(index, heapallindexed): verify the structure (PM list,
 *	  DRAM leaves, fences, inner levels) and optionally that every heap tuple
 *	  the index should hold is in it, as amcheck's bt_index_check does; and
 *	  pm_index_stats(index).
 *
 * Both lock the index in ShareLock (the check) or AccessShareLock (stats):
 * the structural check needs no concurrent writer, and every writer holds
 * RowExclusiveLock on the index.
 */
#include "nbtpm.h"

#include "access/table.h"
#include "access/tableam.h"
#include "catalog/index.h"
#include "commands/defrem.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

PG_FUNCTION_INFO_V1(nbtree_pm_check);
PG_FUNCTION_INFO_V1(pm_index_stats);

typedef struct HeapCheckState
{
	Oid			coltype;
	nbt_skey   *entries;		/* every index entry, sorted */
	int64		nentries;
	int64		missing;
	ItemPointerData first_missing;
} HeapCheckState;

/* Every live entry, in order; entries grows in palloc'd chunks. */
static nbt_skey *
all_entries(PmiIndex *h, int64 *n)
{
	int64		cap = 1024;
	nbt_skey   *e = palloc(sizeof(nbt_skey) * cap);
	nbt_batch	b;
	nbt_skey	from = NBT_SKEY_MIN;

	*n = 0;
	for (;;)
	{
		CHECK_FOR_INTERRUPTS();
		nbt_read_leaf(&h->tree.nbt, &from, false, &b);
		if (*n + b.n > cap)
		{
			while (*n + b.n > cap)
				cap *= 2;
			e = repalloc_huge(e, sizeof(nbt_skey) * cap);
		}
		for (int i = 0; i < b.n; i++)
			e[(*n)++] = b.e[i].sk;
		if (nbt_skey_is_max(&b.high))
			break;
		from = b.high;
	}
	return e;
}

static void
heap_check_callback(Relation index, ItemPointer tid, Datum *values, bool *isnull,
					bool tupleIsAlive, void *state)
{
	HeapCheckState *hs = state;
	nbt_skey	sk = nbtpm_skey(hs->coltype, values[0], isnull[0], tid);
	int64		lo = 0,
				hi = hs->nentries - 1;

	while (lo <= hi)
	{
		int64		mid = (lo + hi) / 2;
		int			c = nbt_skey_cmp(&hs->entries[mid], &sk);

		if (c == 0)
			return;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	if (hs->missing++ == 0)
		hs->first_missing = *tid;
}

Datum
nbtree_pm_check(PG_FUNCTION_ARGS)
{
	Oid			indexoid = PG_GETARG_OID(0);
	bool		heapallindexed = PG_GETARG_BOOL(1);
	Oid			heapoid = IndexGetRelation(indexoid, true);
	Relation	heap;
	Relation	index;
	PmiIndex *h;
	const char *problem;
	uint64		entries;

	if (!OidIsValid(heapoid))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not an index", get_rel_name(indexoid) ? get_rel_name(indexoid) : "?")));
	heap = table_open(heapoid, ShareLock);
	index = pmi_open_index_of_am(indexoid, ShareLock, "nbtree_pm");
	h = nbtpm_open(index);

	problem = nbt_check(&h->tree.nbt, &entries);
	if (problem != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" is corrupt", RelationGetRelationName(index)),
				 errdetail("%s.", problem),
				 errhint("REINDEX the index.")));
	if (nbt_count_pm(h->pool) != entries)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" is corrupt", RelationGetRelationName(index)),
				 errdetail("The pool holds %llu entries, the DRAM layer commits %llu.",
						   (unsigned long long) nbt_count_pm(h->pool),
						   (unsigned long long) entries),
				 errhint("REINDEX the index.")));

	if (heapallindexed)
	{
		HeapCheckState hs;
		IndexInfo  *ii = BuildIndexInfo(index);

		hs.coltype = nbtpm_column_type(index);
		hs.entries = all_entries(h, &hs.nentries);
		hs.missing = 0;
		table_index_build_scan(heap, index, ii, true, false, heap_check_callback, &hs, NULL);
		if (hs.missing > 0)
			ereport(ERROR,
					(errcode(ERRCODE_INDEX_CORRUPTED),
					 errmsg("index \"%s\" lacks %lld entries for heap tuples of \"%s\"",
							RelationGetRelationName(index), (long long) hs.missing,
							RelationGetRelationName(heap)),
					 errdetail("The first is heap tuple (%u,%u).",
							   ItemPointerGetBlockNumber(&hs.first_missing),
							   ItemPointerGetOffsetNumber(&hs.first_missing)),
					 errhint("REINDEX the index.")));
		pfree(hs.entries);
	}
	index_close(index, ShareLock);
	table_close(heap, ShareLock);
	PG_RETURN_VOID();
}

#define STATS_COLS 12

Datum
pm_index_stats(PG_FUNCTION_ARGS)
{
	Oid			indexoid = PG_GETARG_OID(0);
	Relation	index = pmi_open_index_of_am(indexoid, AccessShareLock, "nbtree_pm");
	PmiIndex *h = nbtpm_open(index);
	PmiSlot    *s = pmi_slot(h->slotno);
	TupleDesc	tupdesc;
	Datum		values[STATS_COLS];
	bool		nulls[STATS_COLS] = {0};
	nbt_stats	st;
	int64		nentries;
	nbt_skey   *entries;
	uint64		writes;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	pmi_publish_counters(h);	/* other backends' last partial batch is not in yet */
	writes = pg_atomic_read_u64(&s->inserts) + pg_atomic_read_u64(&s->deletes);
	nbt_get_stats(&h->tree.nbt, &st);
	entries = all_entries(h, &nentries);
	pfree(entries);

	values[0] = Int64GetDatum(nentries);
	values[1] = Int64GetDatum((int64) st.leaves);
	values[2] = Int32GetDatum((int32) st.height + 1);	/* inner levels + the leaves */
	values[3] = Int64GetDatum((int64) st.pm_bytes);
	values[4] = Int64GetDatum((int64) st.dram_bytes);
	values[5] = Int64GetDatum((int64) st.smo_splits);
	values[6] = Int64GetDatum((int64) st.smo_compactions);
	values[7] = Int64GetDatum((int64) st.smo_merges);
	values[8] = Int64GetDatum((int64) pg_atomic_read_u64(&s->inserts));
	values[9] = Int64GetDatum((int64) pg_atomic_read_u64(&s->deletes));
	if (writes > 0)
	{
		values[10] = Float8GetDatum((double) pg_atomic_read_u64(&s->flushes) / writes);
		values[11] = Float8GetDatum((double) pg_atomic_read_u64(&s->fences) / writes);
	}
	else
		nulls[10] = nulls[11] = true;
	index_close(index, AccessShareLock);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
