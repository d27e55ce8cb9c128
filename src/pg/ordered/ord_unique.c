/*
 * ord_unique.c
 *	  Unique indexes of the ordered access methods: the check an insert
 *	  makes, with btree's semantics (_bt_check_unique), and the check of a
 *	  build's sorted entries.
 *
 * btree makes its check and its insert atomic by holding the leaf page's
 * buffer lock across both.  The structures here have no page lock, so an
 * insert into a unique index holds one of a fixed set of LWLocks, chosen
 * by the index and the value (pmi_unique_lock), from before it looks for
 * an equal entry until its own entry is in: of two sessions inserting
 * equal values, the second sees the first's entry.  Whether an equal entry
 * conflicts is the heap's answer under a dirty snapshot, as in btree: a
 * committed live row is a violation, a row an in-progress transaction
 * inserted or deleted makes the insert release the lock, wait for that
 * transaction and look again, and a dead row (an aborted insert, also one
 * whose entry a crash left in the pool) is no conflict.
 */
#include "ord.h"

#include "access/relscan.h"
#include "access/stratnum.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/index.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"


typedef enum OrdConflict
{
	ORD_NO_CONFLICT,
	ORD_CONFLICT_LIVE,			/* a committed live row has an equal value */
	ORD_CONFLICT_IN_PROGRESS	/* an in-progress transaction's row may have */
} OrdConflict;

/*
 * The entries that are equal to entry k (of values, isnull) of index col:
 * [*lo, *hi].  False when none can be (a value equal to no key cannot be in
 * the index, so it conflicts with nothing).
 */
static bool
equal_entries(Relation index, const OrdColumn *col, const OrdKey *k, Datum value, bool isnull,
			  OrdKey *lo, OrdKey *hi)
{
	OrdCut		cut;

	if (col->nkeys > 1)
	{
		ord_equal_range(k, lo, hi);
		return true;
	}
	if (isnull)
	{
		*lo = ord_key_make(ORD_NULL_KEY, ORD_REST_NULL);
		*hi = ord_key_make(ORD_NULL_KEY, ORD_REST_MAX);
		return true;
	}
	ord_cut(index->rd_opfamily[0], col, col->type, value, &cut);
	*lo = ORD_VALUES_LO;
	*hi = ORD_VALUES_HI;
	return ord_narrow(col->order, &cut, BTEqualStrategyNumber, lo, hi);
}

/*
 * Look at every entry in [lo, hi] but those naming self, the row being
 * inserted (with UNIQUE_CHECK_EXISTING, its entry is in already), and ask
 * the heap about its row.  *xwait: the transaction to wait for, with
 * ORD_CONFLICT_IN_PROGRESS (*token: its speculative insertion's, or 0).  A
 * live row decides; in-progress ones are reported only when no live one is
 * found.
 */
static OrdConflict
find_conflict(Relation index, PmiIndex *h, const pm_key_order *order,
			  Relation heapRel, const OrdKey *lo, const OrdKey *hi, ItemPointer self,
			  TransactionId *xwait, uint32 *token)
{
	OrdConflict result = ORD_NO_CONFLICT;
	OrdBatch   *b = palloc(sizeof(OrdBatch));
	OrdKey		from = *lo;
	SnapshotData dirty;
	PmiScanHold hold = {0};

	ord_batch_init(b, index);
	InitDirtySnapshot(dirty);
	for (;;)
	{
		/* the heap items of the batch's entries stay theirs (pmi_interlock.c) */
		pmi_scan_hold(h, &hold);
		ord_read_batch(index, h, order, &from, false, lo, hi, b);
		for (int i = 0; i < b->n; i++)
		{
			ItemPointerData tid;
			bool		all_dead;

			if (pm_key_cmp_by(order, &b->e[i], lo) < 0 || pm_key_cmp_by(order, &b->e[i], hi) > 0)
				continue;
			pmi_tid_unpack(ord_entry_rest(&b->e[i]), &tid);
			if (ItemPointerEquals(&tid, self))
				continue;
			if (!table_index_fetch_tuple_check(heapRel, &tid, &dirty, &all_dead))
				continue;
			if (TransactionIdIsValid(dirty.xmin) || TransactionIdIsValid(dirty.xmax))
			{
				*xwait = TransactionIdIsValid(dirty.xmin) ? dirty.xmin : dirty.xmax;
				*token = dirty.speculativeToken;
				result = ORD_CONFLICT_IN_PROGRESS;
				continue;
			}
			result = ORD_CONFLICT_LIVE;
			break;
		}
		if (result == ORD_CONFLICT_LIVE || !ord_batch_continues(order, b, lo, hi, 1, &from))
			break;
	}
	pmi_scan_release(&hold);
	ord_batch_free(b);
	pfree(b);
	return result;
}

static void
report_duplicate(Relation index, Relation heapRel, Datum *values, bool *isnull)
{
	char	   *key_desc = BuildIndexValueDescription(index, values, isnull);

	ereport(ERROR,
			(errcode(ERRCODE_UNIQUE_VIOLATION),
			 errmsg("duplicate key value violates unique constraint \"%s\"",
					RelationGetRelationName(index)),
			 key_desc ? errdetail("Key %s already exists.", key_desc) : 0,
			 errtableconstraint(heapRel, RelationGetRelationName(index))));
}

/*
 * aminsert into a unique index (checkUnique is not UNIQUE_CHECK_NO): entry
 * k of index col for values (and its row tid), unless checkUnique is UNIQUE_CHECK_EXISTING,
 * which only checks an entry already in.  Returns what aminsert returns:
 * with UNIQUE_CHECK_PARTIAL, whether the value is known unique.
 */
bool
ord_insert_unique(Relation index, PmiIndex *h, const OrdColumn *col, const OrdKey *k,
				  Datum *values, bool *isnull, ItemPointer tid, Relation heapRel,
				  IndexUniqueCheck checkUnique)
{
	OrdKey		lo,
				hi;
	bool		checks = equal_entries(index, col, k, values[0], isnull[0], &lo, &hi);
	LWLock	   *lock = pmi_unique_lock(RelationGetRelid(index), lo.key);
	OrdConflict conflict = ORD_NO_CONFLICT;

	for (;;)
	{
		TransactionId xwait = InvalidTransactionId;
		uint32		token = 0;

		LWLockAcquire(lock, LW_EXCLUSIVE);
		if (checks)
			conflict = find_conflict(index, h, col->order, heapRel, &lo, &hi, tid, &xwait,
									 &token);
		if (conflict != ORD_CONFLICT_IN_PROGRESS || checkUnique == UNIQUE_CHECK_PARTIAL)
			break;
		LWLockRelease(lock);
		if (token != 0)
			SpeculativeInsertionWait(xwait, token);
		else
			XactLockTableWait(xwait, index, tid, XLTW_InsertIndex);
	}

	/*
	 * A live equal row, unless this row itself is dead by now: CREATE INDEX
	 * CONCURRENTLY inserts rows that may have been deleted since (btree makes
	 * the same exception).
	 */
	if (conflict == ORD_CONFLICT_LIVE && checkUnique != UNIQUE_CHECK_PARTIAL &&
		table_index_fetch_tuple_check(heapRel, tid, SnapshotSelf, NULL))
		report_duplicate(index, heapRel, values, isnull);
	pmi_debug_unique_pause();
	if (checkUnique != UNIQUE_CHECK_EXISTING)
		ord_aminsert_entry(index, h, heapRel, k);
	LWLockRelease(lock);
	return conflict == ORD_NO_CONFLICT;
}
