/*
 * pmi_reconcile.c
 *	  Crash reconciliation with the heap (DESIGN.md section 7), the part
 *	  every access method shares: is the heap item an index entry names
 *	  still the tuple the entry was made for?
 *
 * An insert into a pool is durable when aminsert returns; the heap tuple it
 * names is durable only when its WAL is flushed.  After a crash an entry can
 * therefore name a heap item that redo never recreated, and that a later row
 * may reuse: a wrong row, or one row twice.  So after an unclean shutdown,
 * before an index serves its first scan or insert, the entries that may be
 * affected (those noted in the pool's reconciliation ring, or all of them if
 * it overflowed) are checked against the heap items they name and removed if
 * the item is missing or unused, holds a heap-only tuple (an index never
 * points at one), or holds a tuple whose index value differs or that fails
 * the index predicate (a TID reused since).  Items that are redirected or
 * dead are left to VACUUM, as are tuples of aborted transactions that did
 * survive.
 */
#include "pm_index.h"

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/index.h"
#include "executor/executor.h"
#include "storage/bufmgr.h"
#include "utils/rel.h"

void
pmi_heap_check_begin(PmiHeapCheck *c, Relation index)
{
	c->index = index;
	c->heap = table_open(index->rd_index->indrelid, AccessShareLock);
	c->ii = BuildIndexInfo(index);
	c->estate = CreateExecutorState();
	c->slot = table_slot_create(c->heap, NULL);
	GetPerTupleExprContext(c->estate)->ecxt_scantuple = c->slot;
	c->predicate = c->ii->ii_Predicate ? ExecPrepareQual(c->ii->ii_Predicate, c->estate) : NULL;
	c->nblocks = RelationGetNumberOfBlocks(c->heap);
}

void
pmi_heap_check_end(PmiHeapCheck *c)
{
	ExecDropSingleTupleTableSlot(c->slot);
	FreeExecutorState(c->estate);
	table_close(c->heap, AccessShareLock);
}

/*
 * Does the heap item at tid still hold the tuple an entry was made for?
 * matches(arg, value, isnull) compares the tuple's index value with the
 * entry, while the heap buffer is still locked.
 */
bool
pmi_heap_item_current(PmiHeapCheck *c, ItemPointer tid, PmiValueMatchFn matches, void *arg)
{
	BlockNumber blk = ItemPointerGetBlockNumber(tid);
	OffsetNumber off = ItemPointerGetOffsetNumber(tid);
	Buffer		buf;
	Page		page;
	ItemId		lp;
	bool		current = true;

	if (blk >= c->nblocks)
		return false;
	buf = ReadBuffer(c->heap, blk);
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buf);
	if (off < FirstOffsetNumber || off > PageGetMaxOffsetNumber(page))
		current = false;
	else
	{
		lp = PageGetItemId(page, off);
		if (!ItemIdIsUsed(lp))
			current = false;
		else if (ItemIdIsNormal(lp))
		{
			HeapTupleData tup;

			tup.t_data = (HeapTupleHeader) PageGetItem(page, lp);
			tup.t_len = ItemIdGetLength(lp);
			tup.t_self = *tid;
			tup.t_tableOid = RelationGetRelid(c->heap);
			if (HeapTupleHeaderIsHeapOnly(tup.t_data))
				current = false;
			else
			{
				ExprContext *econtext = GetPerTupleExprContext(c->estate);
				Datum		values[INDEX_MAX_KEYS];
				bool		isnull[INDEX_MAX_KEYS];

				ExecStoreBufferHeapTuple(&tup, c->slot, buf);
				if (c->predicate != NULL && !ExecQual(c->predicate, econtext))
					current = false;
				else
				{
					FormIndexDatum(c->ii, c->slot, c->estate, values, isnull);
					current = matches(arg, values[0], isnull[0]);
				}
				ExecClearTuple(c->slot);
				ResetExprContext(econtext);
			}
		}
	}
	UnlockReleaseBuffer(buf);
	return current;
}

/* The ring's notes, or NULL if every entry must be checked (no ring, or it overflowed). */
pm_recon *
pmi_recon_ring(pm_pool *pool)
{
	pm_recon   *ring = pm_recon_of(pool);

	return ring != NULL && !pm_recon_overflowed(pool, ring) ? ring : NULL;
}

/* After reconciliation: forget the notes, and say what was done. */
void
pmi_reconcile_done(Relation index, pm_pool *pool, bool full, int64 checked, int64 removed)
{
	pm_recon   *ring = pm_recon_of(pool);

	if (ring != NULL)
		pm_recon_clear(pool, ring);
	ereport(LOG,
			(errmsg("pm_index: reconciled index \"%s\" with its table after a crash: %lld entries checked, %lld removed",
					RelationGetRelationName(index), (long long) checked, (long long) removed),
			 errdetail("%s", full ? "Every entry was checked (no reconciliation ring, or it overflowed)." :
					   "Only the entries noted in the pool's reconciliation ring were checked.")));
}
