/*
 * pmi_check.c
 *	  The verifier of every access method (its SQL function <am>_check):
 *	  the structure's own invariants (PmiAmOps.check), and with
 *	  heapallindexed, as amcheck's bt_index_check does, that every heap tuple
 *	  the index should hold is in it: every entry is listed and sorted, then
 *	  the entry each heap tuple makes is looked up.
 *
 * The check locks the table and the index in ShareLock: the structural
 * check needs no concurrent writer, and every writer holds RowExclusiveLock
 * on the index.
 */
#include "pm_index.h"

#include "access/genam.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xlog.h"
#include "access/xlogrecovery.h"
#include "catalog/index.h"
#include "commands/defrem.h"
#include "miscadmin.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

typedef struct EntryList
{
	const PmiAmOps *ops;
	char	   *entries;		/* sorted by ops->entry_cmp after listing */
	int64		n;
	int64		cap;
	void	   *context;		/* ops->entry_context */
	void	   *want;			/* the entry a heap tuple makes */
	int64		missing;
	ItemPointerData first_missing;
} EntryList;

/* Open an index, checking that it belongs to the access method a function is for. */
static Relation
open_index_of_am(Oid indexoid, LOCKMODE lockmode, const PmiAmOps *ops)
{
	Relation	index = index_open(indexoid, lockmode);

	if (pmi_am_ops(index->rd_rel->relam) != ops)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not an index of access method %s", RelationGetRelationName(index), ops->amname)));
	return index;
}

/*
 * Lock the index's table and the index against writers (ShareLock; every
 * writer holds RowExclusiveLock) and open both.  In recovery the one writer
 * is WAL replay, which takes no lock: it must be paused.
 */
static Relation
check_open(Oid indexoid, const PmiAmOps *ops, Relation *heap, LOCKMODE *lockmode)
{
	Oid			heapoid = IndexGetRelation(indexoid, true);

	if (!OidIsValid(heapoid))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not an index",
						get_rel_name(indexoid) ? get_rel_name(indexoid) : "?")));
	*lockmode = ShareLock;
	if (RecoveryInProgress())
	{
		if (GetRecoveryPauseState() != RECOVERY_PAUSED)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("%s_check needs WAL replay paused on a server in recovery",
							ops->amname),
					 errdetail("Replay changes the index while it is checked."),
					 errhint("Run SELECT pg_wal_replay_pause(), wait until "
							 "pg_get_wal_replay_pause_state() is 'paused', then check, then "
							 "SELECT pg_wal_replay_resume().")));
		*lockmode = AccessShareLock;
	}
	*heap = table_open(heapoid, *lockmode);
	return open_index_of_am(indexoid, *lockmode, ops);
}

void
pmi_report_corrupt(Relation index, const char *detail)
{
	ereport(ERROR,
			(errcode(ERRCODE_INDEX_CORRUPTED),
			 errmsg("index \"%s\" is corrupt", RelationGetRelationName(index)),
			 errdetail("%s", detail),
			 errhint("REINDEX the index.")));
}

static void
report_missing(Relation index, Relation heap, int64 missing, ItemPointer first)
{
	ereport(ERROR,
			(errcode(ERRCODE_INDEX_CORRUPTED),
			 errmsg("index \"%s\" lacks %lld entries for heap tuples of \"%s\"",
					RelationGetRelationName(index), (long long) missing,
					RelationGetRelationName(heap)),
			 errdetail("The first is heap tuple (%u,%u).",
					   ItemPointerGetBlockNumber(first), ItemPointerGetOffsetNumber(first)),
			 errhint("REINDEX the index.")));
}

static int
list_batch(void *arg, const void *entries, int n)
{
	EntryList  *l = arg;
	Size		size = l->ops->entry_size;

	CHECK_FOR_INTERRUPTS();
	if (l->n + n > l->cap)
	{
		while (l->n + n > l->cap)
			l->cap *= 2;
		l->entries = repalloc_huge(l->entries, size * l->cap);
	}
	memcpy(l->entries + l->n * size, entries, size * n);
	if (l->ops->keep_entry != NULL)
		for (int i = 0; i < n; i++)
			l->ops->keep_entry(l->entries + (l->n + i) * size);
	l->n += n;
	return 0;
}

static void
heap_check_callback(Relation index, ItemPointer tid, Datum *values, bool *isnull,
					bool tupleIsAlive, void *state)
{
	EntryList  *l = state;
	Size		size = l->ops->entry_size;

	l->ops->make_entry(l->context, values, isnull, tid, l->want);
	if (bsearch(l->want, l->entries, l->n, size, l->ops->entry_cmp) == NULL &&
		l->missing++ == 0)
		l->first_missing = *tid;
}

/* Does every heap tuple the index should hold have its entry? */
static void
check_heap_all_indexed(Relation heap, Relation index, PmiIndex *h, int64 held)
{
	EntryList	l = {0};
	pm_error	err;

	l.ops = h->ops;
	l.cap = 1024;
	l.entries = palloc_extended(l.ops->entry_size * l.cap, MCXT_ALLOC_HUGE);
	(void) l.ops->foreach_batch(index, h->am_state, list_batch, &l, &err);
	if (l.n != held)
		pmi_report_corrupt(index,
						   psprintf("A walk of the index finds %lld entries, the structure holds %lld.",
									(long long) l.n, (long long) held));
	qsort(l.entries, l.n, l.ops->entry_size, l.ops->entry_cmp);
	l.context = l.ops->entry_context(index);
	l.want = palloc(l.ops->entry_size);
	table_index_build_scan(heap, index, BuildIndexInfo(index), true, false, heap_check_callback,
						   &l, NULL);
	if (l.missing > 0)
		report_missing(index, heap, l.missing, &l.first_missing);
	pfree(l.entries);
}

/* The body of an access method's check function. */
void
pmi_check(Oid indexoid, bool heapallindexed, const PmiAmOps *ops)
{
	Relation	heap;
	LOCKMODE	lockmode;
	Relation	index = check_open(indexoid, ops, &heap, &lockmode);
	PmiIndex   *h;
	int64		held;
	bool		transient = false;

	if (!pmi_index_plannable(index, &transient) && (RecoveryInProgress() || transient))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("index \"%s\" is not current on this server",
						RelationGetRelationName(index)),
				 transient ?
				 errdetail("A background worker is building it from its table, or built it for newer snapshots than this transaction's.") :
				 errdetail("WAL replay does not keep its pool, or has not yet reached what the pool holds."),
				 errhint("Queries here do not use it until it is current.")));
	h = pmi_index_open(index, ops);
	/* the structure alone then holds every entry */
	pmi_tier_drain(h, RelationGetRelationName(index));
	held = ops->check(index, h->am_state);
	if (heapallindexed)
		check_heap_all_indexed(heap, index, h, held);
	index_close(index, lockmode);
	table_close(heap, lockmode);
}
