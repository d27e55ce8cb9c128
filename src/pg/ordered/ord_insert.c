/*
 * ord_insert.c
 *	  aminsert of the ordered access methods: one insert into the pool, no
 *	  buffer lock, durable on return, after a note in the pool's
 *	  reconciliation ring (pmi_note_insert), one unit with its WAL record
 *	  (pmi_insert_logged), or a record in a tiered index's operation log
 *	  (pmi_tier_insert); into a unique index, with the check of
 *	  ord_unique.c.
 */
#include "ord.h"

#include "utils/memutils.h"

/*
 * What the inserts of one statement share (IndexInfo.ii_AmCache): the
 * index's key columns, and memory for each insert's keys, reset after it
 * (aminsert runs in the statement's context).
 */
typedef struct OrdInsertState
{
	OrdColumn	col;
	MemoryContext per_insert;
} OrdInsertState;

static OrdInsertState *
insert_state(Relation index, IndexInfo *indexInfo)
{
	OrdInsertState *s = indexInfo->ii_AmCache;

	if (s == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(indexInfo->ii_Context);

		s = palloc(sizeof(OrdInsertState));
		s->col = ord_column(index);
		s->per_insert = AllocSetContextCreate(indexInfo->ii_Context, "pm_index insert",
											  ALLOCSET_SMALL_SIZES);
		MemoryContextSwitchTo(old);
		indexInfo->ii_AmCache = s;
	}
	return s;
}

/* PmiEntryChangeFn: the structure's insert of an OrdKey */
pm_errcode
ord_pool_insert(PmiIndex *h, const void *entry, pm_error *err)
{
	return ord_am(h->ops)->ord.insert(h->am_state, entry, err);
}

/*
 * The entry of an aminsert, durable on return: appended to a tiered index's
 * operation log, whose record is its reconciliation note (pmi_tier.c), or
 * noted in the reconciliation ring and inserted into the structure.
 */
void
ord_aminsert_entry(Relation index, PmiIndex *h, Relation heap, const OrdKey *k)
{
	PmiNote		note = {k->key, ord_entry_rest(k)};

	if (pmi_tier_insert(index, h, heap, &note, k))
		return;
	pmi_note_insert(h, heap, note.key, note.rest);
	pmi_insert_logged(index, h, k, ord_pool_insert);
}

bool
ord_insert(Relation index, Datum *values, bool *isnull, ItemPointer ht_ctid,
		   Relation heapRel, IndexUniqueCheck checkUnique, bool indexUnchanged,
		   IndexInfo *indexInfo)
{
	PmiIndex   *h = pmi_index_open(index, pmi_index_am(index));
	OrdInsertState *s = insert_state(index, indexInfo);
	MemoryContext old = MemoryContextSwitchTo(s->per_insert);
	const OrdColumn *col = &s->col;
	OrdKey		k = ord_key_of(col, values, isnull, ht_ctid);
	pm_counters before = pm_tls_counters;
	bool		result = false;
	bool		any_null = false;

	for (int c = 0; c < col->nkeys; c++)
		any_null |= isnull[c];
	if (checkUnique == UNIQUE_CHECK_NO || (any_null && !indexInfo->ii_NullsNotDistinct))
		ord_aminsert_entry(index, h, heapRel, &k);
	else
	{
		/*
		 * a key is checked against every entry: a pool being built has not
		 * all yet
		 */
		pmi_wait_until_built(h);
		result = ord_insert_unique(index, h, col, &k, values, isnull, ht_ctid, heapRel,
								   checkUnique);
	}
	pmi_count_writes(h, &before, 1, true);
	MemoryContextSwitchTo(old);
	MemoryContextReset(s->per_insert);
	return result;
}
