/*
 * pmi_reconcile.c
 *	  Crash reconciliation with the heap (docs/design.md section 7), for every
 *	  access method: is the heap item an index entry names still the tuple
 *	  the entry was made for?  And the note every insert makes first, which
 *	  bounds what reconciliation checks.
 *
 * An insert into a pool is durable when aminsert returns; the heap tuple it
 * names is durable only when its WAL is flushed.  After a crash an entry can
 * therefore name a heap item that redo never recreated, and that a later row
 * may reuse: a wrong row, or one row twice.  So after an unclean shutdown,
 * before an index serves its first scan or insert, the entries that may be
 * affected (those noted in the pool's reconciliation ring, or all of them if
 * it overflowed) are checked against the heap items they name and removed if
 * the item is missing or unused, holds a heap-only tuple (an index never
 * points at one), a tuple inserted since the crash, or a tuple whose index
 * value differs or that fails the index predicate (a TID reused since).
 * Items that are redirected or dead are left to VACUUM, as are tuples of
 * aborted transactions that did survive.
 *
 * Only entries whose heap WAL may not have been flushed need checking:
 * every insert notes (key, rest, WAL end) in the pool's reconciliation ring
 * first (src/core/recon.h, pmi_note_insert), and the access method finds the
 * entries a note stands for (PmiAmOps.note_entries).  If a ring stripe
 * overflowed, or the pool has no ring, every entry is checked: one heap item
 * visit per entry.
 */
#include "pm_index.h"

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/subtrans.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/index.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/procarray.h"
#include "utils/rel.h"

/* The heap side of reconciliation: the table, and what evaluates the index's expressions. */
typedef struct HeapCheck
{
	Relation	heap;
	Relation	index;
	IndexInfo  *ii;
	EState	   *estate;
	ExprState  *predicate;
	TupleTableSlot *slot;
	BlockNumber nblocks;
} HeapCheck;

typedef struct Reconcile
{
	HeapCheck	heap;
	const PmiAmOps *ops;
	pm_pool    *pool;
	void	   *state;			/* the structure's handles */
	void	   *context;		/* ops->entry_context */
	void	   *now;			/* an entry made from the heap tuple */
	int64		checked;
	int64		removed;
} Reconcile;

static void
heap_check_begin(HeapCheck *c, Relation index)
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

static void
heap_check_end(HeapCheck *c)
{
	ExecDropSingleTupleTableSlot(c->slot);
	FreeExecutorState(c->estate);
	table_close(c->heap, AccessShareLock);
}

/* Would the heap tuple's index value make this very entry? */
static bool
value_matches(Reconcile *r, const void *entry, const Datum *values, const bool *isnull,
			  ItemPointer tid)
{
	r->ops->make_entry(r->context, values, isnull, tid, r->now);
	return r->ops->entry_cmp(r->now, entry) == 0;
}

/*
 * Was the tuple inserted after the crash?  Its inserting transaction runs
 * in a session now (a prepared one may predate the crash).  An index is
 * reconciled before its first insert since the crash, so the tuple took the
 * item of a lost one, and its own insert (running now, or waiting for this
 * reconciliation) makes its entry: keeping the old entry as that one would
 * leave two in a structure that does not merge equal entries.
 */
static bool
inserted_since_crash(HeapTupleHeader tuple)
{
	TransactionId xmin = HeapTupleHeaderGetXmin(tuple);

	if (!TransactionIdIsNormal(xmin))
		return false;
	if (TransactionIdIsCurrentTransactionId(xmin))
		return true;
	return TransactionIdIsInProgress(xmin) &&
		BackendXidGetPid(SubTransGetTopmostTransaction(xmin)) != 0;
}

/*
 * Does the heap item at tid still hold the tuple the entry was made for?
 * The tuple's index value is compared while the heap buffer is locked.
 */
static bool
heap_item_current(Reconcile *r, ItemPointer tid, const void *entry)
{
	HeapCheck  *c = &r->heap;
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
			if (HeapTupleHeaderIsHeapOnly(tup.t_data) || inserted_since_crash(tup.t_data))
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
					current = value_matches(r, entry, values, isnull, tid);
				}
				ExecClearTuple(c->slot);
				ResetExprContext(econtext);
			}
		}
	}
	UnlockReleaseBuffer(buf);
	return current;
}

/* Remove the entries of a batch that are no longer current. */
static int
reconcile_batch(void *arg, const void *entries, int n)
{
	Reconcile  *r = arg;
	int			nstale = 0;
	int			removed;
	char	   *stale = palloc(r->ops->entry_size * n);

	CHECK_FOR_INTERRUPTS();
	for (int i = 0; i < n; i++)
	{
		const void *entry = (const char *) entries + i * r->ops->entry_size;
		ItemPointerData tid;

		if (!r->ops->entry_tid(entry, &tid))
			continue;
		r->checked++;
		if (!heap_item_current(r, &tid, entry))
			memcpy(stale + nstale++ * r->ops->entry_size, entry, r->ops->entry_size);
	}
	removed = pmi_delete_logged(r->heap.index, r->ops, r->pool, r->state, stale, nstale);
	pfree(stale);
	r->removed += removed;
	return removed;
}

typedef struct NoteList
{
	PmiNote    *notes;
	int			n;
	int			size;
} NoteList;

static void
collect_note(void *ctx, uint64_t key, uint64_t rest)
{
	NoteList   *l = ctx;

	if (l->n == l->size)
	{
		l->size *= 2;
		l->notes = repalloc_huge(l->notes, sizeof(PmiNote) * l->size);
	}
	l->notes[l->n].key = key;
	l->notes[l->n].rest = rest;
	l->n++;
}

static int
cmp_note(const void *a, const void *b)
{
	const PmiNote *x = a;
	const PmiNote *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->rest < y->rest ? -1 : x->rest > y->rest;
}

/*
 * Reconcile an index with its table after a crash, or a start from a base
 * backup (a copy of a running server's data directory), before it serves:
 * the entries its ring notes, or all of them.  state is the access method's
 * handles on the structure in pool, recovered (ops->recover).
 */
void
pmi_reconcile(Relation index, pm_pool *pool, const PmiAmOps *ops, void *state)
{
	Reconcile	r = {0};
	pm_recon   *ring = pm_recon_of(pool);
	bool		full = ring == NULL || pm_recon_overflowed(pool, ring);
	pm_error	err;

	r.ops = ops;
	r.pool = pool;
	r.state = state;
	r.context = ops->entry_context(index);
	r.now = palloc(ops->entry_size);
	heap_check_begin(&r.heap, index);
	if (full)
		(void) ops->foreach_batch(index, state, reconcile_batch, &r, &err);
	else
	{
		NoteList	l;

		/*
		 * collected first: a note is not read while entries are deleted; a
		 * tiered index's operation log holds the notes of its inserts
		 */
		l.size = PM_RECON_MAX_STRIPES * PM_RECON_PER_STRIPE;
		l.notes = palloc(sizeof(PmiNote) * l.size);
		l.n = 0;
		pm_recon_foreach(pool, ring, collect_note, &l);
		pmi_tier_notes(pool, collect_note, &l);
		qsort(l.notes, l.n, sizeof(PmiNote), cmp_note);
		ops->note_entries(index, state, l.notes, l.n, reconcile_batch, &r);
		pfree(l.notes);
	}
	heap_check_end(&r.heap);
	if (ring != NULL)
		pm_recon_clear(pool, ring);
	ereport(LOG,
			(errmsg("pm_index: reconciled index \"%s\" with its table after %s: %lld entries checked, %lld removed",
					RelationGetRelationName(index),
					pmi_shared->from_backup ? "a start from a base backup" : "a crash",
					(long long) r.checked, (long long) r.removed),
			 errdetail("%s", full ? "Every entry was checked (no reconciliation ring, or it overflowed)." :
					   "Only the entries noted in the pool's reconciliation ring were checked.")));
}

/*
 * How far WAL is flushed, for the reconciliation ring.  When every stripe's
 * next note still names unflushed heap WAL and the ring is as large as it
 * grows (asynchronous commit outran the WAL writer), force flushes up to it,
 * as a synchronous commit would, so that no note is lost and reconciliation
 * after a crash stays bounded by the ring.
 */
static uint64
wal_durable_upto(uint64 upto, bool force)
{
	if (force)
		XLogFlush((XLogRecPtr) upto);
	return GetFlushRecPtr(NULL);
}

/*
 * Before an entry naming a heap tuple is inserted: the tuple's WAL ends at
 * XactLastRecEnd and may not be flushed yet, so note (key, rest) in the
 * pool's ring for reconciliation after a crash (docs/design.md section 7).
 */
void
pmi_note_insert(PmiIndex *h, Relation heap, uint64 key, uint64 rest)
{
	pm_recon   *recon = pm_recon_of(h->pool);

	if (recon != NULL && RelationNeedsWAL(heap) && XactLastRecEnd != InvalidXLogRecPtr)
		pm_recon_note(h->pool, recon, &h->recon_cursor, key, rest, XactLastRecEnd,
					  wal_durable_upto);
}
