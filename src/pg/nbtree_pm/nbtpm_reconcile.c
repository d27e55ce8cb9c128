/*
 * nbtpm_reconcile.c
 *	  Crash reconciliation with the heap (DESIGN.md section 7).
 *
 * An insert into the pool is durable when aminsert returns; the heap tuple
 * it names is durable only when its WAL is flushed.  After a crash an entry
 * can therefore name a heap item that redo never recreated, and that a later
 * row may reuse: a wrong row, or one row twice.  So after an unclean
 * shutdown, before an index serves its first scan or insert, every entry is
 * checked against the heap item it names and removed if that item is
 * missing or unused, holds a heap-only tuple (an index never points at one),
 * or holds a tuple whose key differs or that fails the index predicate (a
 * TID reused since).  Items that are redirected or dead are left to VACUUM,
 * as are tuples of aborted transactions that did survive.
 *
 * Only entries whose heap WAL may not have been flushed need checking: every
 * insert notes (key, TID, WAL end) in the pool's reconciliation ring first
 * (src/core/recon.h), so the check visits at most the ring's 2,688 notes;
 * an insert that finds no note it may overwrite (all name unflushed WAL)
 * flushes WAL first (nbtpm_insert.c).  If a ring stripe overflowed anyway, or the pool
 * has no ring, every entry is checked: one heap item visit per entry.
 */
#include "nbtpm.h"

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/index.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "utils/rel.h"

typedef struct Reconciler
{
	Relation	heap;
	Relation	index;
	IndexInfo  *ii;
	EState	   *estate;
	ExprState  *predicate;
	TupleTableSlot *slot;
	BlockNumber nblocks;
	Oid			coltype;
} Reconciler;

/* Does the heap item named by the entry still hold the tuple the entry was made for? */
static bool
entry_is_current(Reconciler *r, const nbt_skey *e)
{
	ItemPointerData tid;
	BlockNumber blk;
	OffsetNumber off;
	Buffer		buf;
	Page		page;
	ItemId		lp;
	bool		current = true;

	nbtpm_rest_tid(e->rest, &tid);
	blk = ItemPointerGetBlockNumber(&tid);
	off = ItemPointerGetOffsetNumber(&tid);
	if (blk >= r->nblocks)
		return false;
	buf = ReadBuffer(r->heap, blk);
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
			tup.t_self = tid;
			tup.t_tableOid = RelationGetRelid(r->heap);
			if (HeapTupleHeaderIsHeapOnly(tup.t_data))
				current = false;
			else
			{
				ExprContext *econtext = GetPerTupleExprContext(r->estate);
				Datum		values[INDEX_MAX_KEYS];
				bool		isnull[INDEX_MAX_KEYS];

				ExecStoreBufferHeapTuple(&tup, r->slot, buf);
				if (r->predicate != NULL && !ExecQual(r->predicate, econtext))
					current = false;
				else
				{
					nbt_skey	now;

					FormIndexDatum(r->ii, r->slot, r->estate, values, isnull);
					now = nbtpm_skey(r->coltype, values[0], isnull[0], &tid);
					current = now.key == e->key && now.rest == e->rest;
				}
				ExecClearTuple(r->slot);
				ResetExprContext(econtext);
			}
		}
	}
	UnlockReleaseBuffer(buf);
	return current;
}

typedef struct NoteList
{
	nbt_skey   *e;
	int			n;
} NoteList;

static void
collect_note(void *ctx, uint64_t key, uint64_t rest)
{
	NoteList   *l = ctx;

	l->e[l->n].key = key;
	l->e[l->n].rest = rest;
	l->n++;
}

/* Remove the entry if it is no longer current; returns whether it was removed. */
static bool
reconcile_entry(Reconciler *r, nbt_tree *t, const nbt_skey *sk)
{
	bool		found;
	pm_error	err;

	if (sk->rest == 0 || sk->rest > NBT_REST_MAX || entry_is_current(r, sk))
		return false;
	if (nbt_delete(t, sk, &found, &err) != PM_OK)
		pmi_report(&err, r->index);
	return found;
}

void
nbtpm_reconcile(Relation index, nbt_tree *t)
{
	Reconciler	r;
	nbt_batch	b;
	nbt_skey	from = NBT_SKEY_MIN;
	int64		removed = 0;
	int64		checked = 0;
	uint64		ring_off = pm_pool_root(t->pool, 1);
	pm_recon   *ring = ring_off ? pm_pool_addr(t->pool, ring_off) : NULL;
	bool		full = ring == NULL || pm_recon_overflowed(ring);

	r.index = index;
	r.heap = table_open(index->rd_index->indrelid, AccessShareLock);
	r.ii = BuildIndexInfo(index);
	r.estate = CreateExecutorState();
	r.slot = table_slot_create(r.heap, NULL);
	GetPerTupleExprContext(r.estate)->ecxt_scantuple = r.slot;
	r.predicate = r.ii->ii_Predicate ? ExecPrepareQual(r.ii->ii_Predicate, r.estate) : NULL;
	r.nblocks = RelationGetNumberOfBlocks(r.heap);
	r.coltype = nbtpm_column_type(index);

	if (!full)
	{
		NoteList	notes;

		notes.e = palloc(sizeof(nbt_skey) * PM_RECON_STRIPES * PM_RECON_PER_STRIPE);
		notes.n = 0;
		pm_recon_foreach(ring, collect_note, &notes);
		for (int i = 0; i < notes.n; i++)
		{
			CHECK_FOR_INTERRUPTS();
			removed += reconcile_entry(&r, t, &notes.e[i]);
		}
		checked = notes.n;
		pfree(notes.e);
	}
	else
	{
		for (;;)
		{
			CHECK_FOR_INTERRUPTS();
			nbt_read_leaf(t, &from, false, &b);
			for (int i = 0; i < b.n; i++)
				removed += reconcile_entry(&r, t, &b.e[i].sk);
			checked += b.n;
			if (nbt_skey_is_max(&b.high))
				break;
			from = b.high;
		}
	}
	if (ring != NULL)
		pm_recon_clear(t->pool, ring);
	ExecDropSingleTupleTableSlot(r.slot);
	FreeExecutorState(r.estate);
	table_close(r.heap, AccessShareLock);
	ereport(LOG,
			(errmsg("pm_index: reconciled index \"%s\" with its table after a crash: %lld entries checked, %lld removed",
					RelationGetRelationName(index), (long long) checked, (long long) removed),
			 errdetail("%s", full ? "Every entry was checked (no reconciliation ring, or it overflowed)." :
					   "Only the entries noted in the pool's reconciliation ring were checked.")));
}
