/*
 * hashpm_build.c
 *	  ambuild and aminsert of hash_pm.  The build inserts each row's entry
 *	  into the fresh table as applier 0 and checkpoints at the end (and
 *	  whenever the applier's logs fill up); an insert appends its entry to
 *	  the index's operation log (pmi_tier_insert), durable on return, or,
 *	  when it cannot wait for the replay workers, goes straight into the
 *	  table and is checkpointed before it returns (pmi_tier_insert_direct).
 */
#include "hashpm.h"

#include "access/tableam.h"
#include "utils/memutils.h"

typedef struct BuildState
{
	HashpmState *st;
	void	   *context;
	double		entries;
	MemoryContext per_tuple;	/* what hashing a value allocates (a detoasted
								 * copy) */
	pm_error	err;
	bool		failed;
} BuildState;

static void
build_callback(Relation index, ItemPointer tid, Datum *values, bool *isnull, bool tupleIsAlive,
			   void *state)
{
	BuildState *bs = state;
	MemoryContext old = MemoryContextSwitchTo(bs->per_tuple);
	HashpmEntry e;
	bool		added;

	hashpm_make_entry(bs->context, values, isnull, tid, &e);
	MemoryContextSwitchTo(old);
	MemoryContextReset(bs->per_tuple);
	if (hashpm_change_direct(bs->st, true, &e, &added, &bs->err) != PM_OK)
		pmi_report(&bs->err, index);
	bs->entries++;
}

/* PmiAmOps.build: the pool is made; insert every row, then make it durable */
uint64
hashpm_build(Relation heap, Relation index, IndexInfo *ii, PmiBuild *b)
{
	BuildState	bs = {0};

	bs.st = pmi_build_attach(b);
	bs.context = hashpm_entry_context(index);
	bs.per_tuple = AllocSetContextCreate(CurrentMemoryContext, "hash_pm build entry",
										 ALLOCSET_SMALL_SIZES);
	b->heap_tuples = table_index_build_scan(heap, index, ii, true, true, build_callback, &bs,
											NULL);
	MemoryContextDelete(bs.per_tuple);
	b->index_tuples = bs.entries;
	if (pmi_tier_checkpoint_held(b->slotno, b->pool, &hashpm_am_ops, bs.st, &bs.err) != PM_OK)
		pmi_report(&bs.err, index);
	return 0;
}

/* PmiEntryChangeFn: an insert straight into the table (pmi_tier_insert_direct) */
static pm_errcode
insert_direct(PmiIndex *h, const void *entry, pm_error *err)
{
	bool		added;

	return hashpm_change_direct(h->am_state, true, entry, &added, err);
}

bool
hashpm_insert(Relation index, Datum *values, bool *isnull, ItemPointer ht_ctid,
			  Relation heapRel, IndexUniqueCheck checkUnique, bool indexUnchanged,
			  IndexInfo *indexInfo)
{
	PmiIndex   *h = pmi_index_open(index, &hashpm_am_ops);
	pm_counters before = pm_tls_counters;
	HashpmEntry e;
	PmiNote		note;

	if (indexInfo->ii_AmCache == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(indexInfo->ii_Context);

		indexInfo->ii_AmCache = hashpm_entry_context(index);
		MemoryContextSwitchTo(old);
	}
	hashpm_make_entry(indexInfo->ii_AmCache, values, isnull, ht_ctid, &e);
	note.key = e.hash;
	note.rest = e.rest;
	if (!pmi_tier_insert(index, h, heapRel, &note, &e))
	{
		/* durable before the transaction commits; noted in case its WAL is lost */
		pmi_note_insert(h, heapRel, note.key, note.rest);
		pmi_tier_insert_direct(index, h, &e, insert_direct);
	}
	pmi_count_writes(h, &before, 1, true);
	return false;
}
