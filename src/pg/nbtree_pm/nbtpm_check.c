/*
 * nbtpm_check.c
 *	  nbtree_pm_check(index, heapallindexed): verify the structure (PM list,
 *	  DRAM leaves, fences, inner levels) and optionally that every heap tuple
 *	  the index should hold is in it, as amcheck's bt_index_check does; and
 *	  the tree's shape for pm_index_stats(index).
 *
 * The check locks the index in ShareLock: the structural check needs no
 * concurrent writer, and every writer holds RowExclusiveLock on the index.
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
		nbt_read_leaf(nbtpm_tree(h), &from, false, &b);
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
	Relation	heap;
	Relation	index = pmi_check_open(indexoid, &nbtpm_am_ops, &heap);
	PmiIndex   *h = nbtpm_open(index);
	const char *problem;
	uint64		entries;

	problem = nbt_check(nbtpm_tree(h), &entries);
	if (problem != NULL)
		pmi_report_corrupt(index, psprintf("%s.", problem));
	if (nbt_count_pm(h->pool) != entries)
		pmi_report_corrupt(index,
						   psprintf("The pool holds %llu entries, the DRAM layer commits %llu.",
									(unsigned long long) nbt_count_pm(h->pool),
									(unsigned long long) entries));

	if (heapallindexed)
	{
		HeapCheckState hs;
		IndexInfo  *ii = BuildIndexInfo(index);

		hs.coltype = nbtpm_column_type(index);
		hs.entries = all_entries(h, &hs.nentries);
		hs.missing = 0;
		table_index_build_scan(heap, index, ii, true, false, heap_check_callback, &hs, NULL);
		if (hs.missing > 0)
			pmi_report_missing(index, heap, hs.missing, &hs.first_missing);
		pfree(hs.entries);
	}
	index_close(index, ShareLock);
	table_close(heap, ShareLock);
	PG_RETURN_VOID();
}

/* pm_index_stats: the shape of the tree */
void
nbtpm_shape(PmiIndex *h, PmiShape *shape)
{
	nbt_stats	st;
	int64		nentries;
	nbt_skey   *entries;

	nbt_get_stats(nbtpm_tree(h), &st);
	entries = all_entries(h, &nentries);
	pfree(entries);
	shape->entries = nentries;
	shape->leaves = st.leaves;
	shape->height = st.height + 1;	/* inner levels + the leaves */
	shape->pm_bytes = st.pm_bytes;
	shape->dram_bytes = st.dram_bytes;
	shape->splits = st.smo_splits;
	shape->compactions = st.smo_compactions;
	shape->merges = st.smo_merges;
}
