/*
 * pmi_fill.c
 *	  The background build: a pool that takes every change made since it was
 *	  created but lacks the entries from before (PM_POOL_FLAG_BUILDING) is
 *	  filled from its table while writes go on into it.  Such a pool replaces
 *	  a copy a backup made, and on a primary one an operating-system crash
 *	  may have torn (pmi_first_use.c: its first user replaces it; the fill
 *	  worker is that user if no query came first).
 *
 * A server that starts from a backup_label (a base backup, pg_rewind) finds
 * pools copied while they changed.  Before replay applies anything, each is
 * replaced by an empty pool of the same UUID that is being built; replay
 * applies every record after that point to it, and once the server is a
 * primary its inserts go into it too.  Queries do not use it
 * (pmi_index_plannable) until one worker per database has filled it, on a
 * hot standby as on a primary (docs/replication.md section 8):
 *
 * 1. Wait until every transaction older than the replacement has ended:
 *	  its xid is below pmi_fill_xid_bound, the next xid of the checkpoint the
 *	  server started from, or, on a primary, it is a prepared transaction
 *	  (wait_for_older_transactions).  Rows of later transactions reached the
 *	  pool by replay or by an insert.
 * 2. Scan the table with an MVCC snapshot S, as CREATE INDEX CONCURRENTLY's
 *	  build does (a heap-only tuple under its chain's root), inserting the
 *	  entry of every tuple S sees unless the pool has it.
 * 3. Record S's xmax as the index's ready horizon, then clear the flag: a
 *	  snapshot older than S may see a row S saw deleted, whose entry the
 *	  build did not make, so it does not use the index.
 *
 * No entry names a freed TID.  On a primary the worker holds S and
 * ShareUpdateExclusiveLock, which keeps VACUUM off the table, so no tuple
 * it inserts an entry for is removed before the entry is in the pool, where
 * VACUUM finds it.  On a standby, replay of the prune that removes a tuple
 * S sees first cancels the build (a snapshot conflict), and the primary's
 * logged delete of its entry comes after that prune; a cancelled build is
 * tried again, over the same pool, every FILL_RETRY_MS while recovery lasts.
 *
 * A unique index cannot check a new key against an incomplete pool: its
 * inserts wait until the build is done (pmi_wait_until_built).  They never
 * hold back the build, whose wait is for transactions older than the
 * server's start.
 */
#include "pm_index.h"

#include "access/relation.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "access/xlogrecovery.h"
#include "catalog/index.h"
#include "commands/progress.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lmgr.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/wait_event.h"

/* set in the postmaster from pg_control: see step 1 above */
FullTransactionId pmi_fill_xid_bound = {0};

/* How often a build waiting for older transactions, or an insert waiting for a build, looks again. */
#define FILL_POLL_MS	100
/* How often a hot standby's worker tries again the builds replay cancelled. */
#define FILL_RETRY_MS	10000

/*
 * Does the pool of rlocator need a build: is it being built, or, on a primary,
 * torn by an OS crash (its first user replaces it: pmi_first_use.c)?  False if
 * its header cannot be read.
 */
static bool
pool_needs_build(RelFileLocatorBackend rlocator)
{
	char	   *path = pmi_pool_path(rlocator);
	pm_pool_header hdr;
	pm_error	err;
	bool		needs;

	needs = !RelFileLocatorBackendIsTemp(rlocator) &&
		pm_pool_read_header(path, &hdr, NULL, &err) == PM_OK &&
		((hdr.flags & PM_POOL_FLAG_BUILDING) != 0 ||
		 (!RecoveryInProgress() && pm_header_torn(&hdr, pm_current_boot())));
	pfree(path);
	return needs;
}

/*
 * The structure format parameter of a copied pool (empty if it cannot be
 * read: the structure's default).  The part of a pool that holds it is
 * written when the pool is made and never again, so a copy taken while
 * the pool changed holds it whole.
 */
static void
copied_format_param(const char *path, const PmiAmOps *ops, PmiFormatParam *param)
{
	pm_pool    *pool;
	pm_error	err;

	param->len = 0;
	if (ops->pool_format_param != NULL &&
		pm_pool_open(path, (pm_mode) pmi_persistence_guc, &pool, &err) == PM_OK)
	{
		ops->pool_format_param(pool, param);
		pm_pool_close(pool);
	}
}

/*
 * At the start of replay from a backup_label: replace every pool, a copy
 * made while it changed, with an empty one of the same UUID (the metapage
 * names it) that is being built.  Runs in the startup process and raises no
 * error: a pool that cannot be replaced is marked untrusted and asks for
 * REINDEX.
 */
void
pmi_replace_copied_pools(void)
{
	List	   *pools = pmi_list_pools(InvalidOid, WARNING);
	ListCell   *lc;
	int			replaced = 0;

	foreach(lc, pools)
	{
		RelFileLocatorBackend rlocator = *(RelFileLocatorBackend *) lfirst(lc);
		char	   *path = pmi_pool_path(rlocator);
		char	   *name = psprintf("with relfilenode %u/%u/%u", rlocator.locator.spcOid,
									rlocator.locator.dbOid, rlocator.locator.relNumber);
		pm_pool_header hdr;
		const PmiAmOps *ops;
		pm_error	err;

		/*
		 * a temporary index's pool went with its backend: the sweep removes
		 * it
		 */
		if (RelFileLocatorBackendIsTemp(rlocator) ||
			pm_pool_read_header(path, &hdr, NULL, &err) != PM_OK ||
			(ops = pmi_am_of_kind(hdr.owner.kind)) == NULL)
			continue;
		PG_TRY();
		{
			PmiFormatParam param;

			copied_format_param(path, ops, &param);
			pm_pool_close(pmi_create_pool_for(rlocator, ops, hdr.uuid, PM_POOL_FLAG_BUILDING, &param,
											  name));
			replaced++;
		}
		PG_CATCH();
		{
			ErrorData  *edata;
			pm_pool    *pool;

			edata = CopyErrorData();
			FlushErrorState();
			if (pm_pool_open(path, (pm_mode) pmi_persistence_guc, &pool, &err) == PM_OK)
			{
				pm_pool_set_flag(pool, PM_POOL_FLAG_UNTRUSTED);
				pm_pool_close(pool);
			}
			ereport(WARNING,
					(errcode(edata->sqlerrcode),
					 errmsg("pm_index: could not replace the copied pool of the index %s: %s",
							name, edata->message),
					 errhint("After recovery, REINDEX the index.")));
			FreeErrorData(edata);
		}
		PG_END_TRY();
		pfree(path);
		pfree(name);
	}
	list_free_deep(pools);
	if (replaced > 0)
		ereport(LOG,
				(errmsg("pm_index: replaced %d pools copied by a backup with empty ones", replaced),
				 errdetail("Replay keeps them current, and a background worker builds each from its "
						   "table once the server accepts connections; queries use its index from then on.")));
}

/*
 * Start one build worker for each database with a pool being built (the
 * sweeper calls this; a standby's, to run while it replays).
 */
void
pmi_launch_fills(void)
{
	List	   *databases = NIL;
	ListCell   *lc;

	foreach(lc, pmi_list_pools(InvalidOid, ERROR))
	{
		RelFileLocatorBackend rlocator = *(RelFileLocatorBackend *) lfirst(lc);

		if (pool_needs_build(rlocator))
			databases = list_append_unique_oid(databases, rlocator.locator.dbOid);
	}
	foreach(lc, databases)
	{
		Oid			dbid = lfirst_oid(lc);
		char		name[BGW_MAXLEN];

		snprintf(name, sizeof(name), "pm_index build of database %u", dbid);
		if (!pmi_start_database_worker(dbid, "pmi_fill_main", name, "pm_index build",
									   NULL, 0, NULL))
			ereport(WARNING,
					(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
					 errmsg("pm_index: could not start a worker to build the indexes of database %u",
							dbid),
					 errdetail("Their pools are copies made by a backup or were torn by an operating "
							   "system crash; queries do not use them until they are built."),
					 errhint("Raise max_worker_processes, or REINDEX the indexes pm_index_indexes "
							 "shows as building.")));
	}
}

/*
 * Are there prepared transactions older than xid?  A pool a standby could
 * not keep (torn) is replaced after its promotion, and a transaction it
 * replayed the PREPARE of may have rows that pool missed.
 */
static bool
prepared_before(TransactionId xid)
{
	char	   *query = psprintf("SELECT 1 FROM pg_catalog.pg_prepared_xacts "
								 "WHERE age(transaction) > age('%u'::xid) LIMIT 1", xid);
	bool		found;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute(query, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not list prepared transactions");
	found = SPI_processed > 0;
	SPI_finish();
	pfree(query);
	return found;
}

/*
 * Step 1: wait until no transaction older than the server's start runs, nor,
 * on a primary, a prepared transaction older than this wait.  Transactions
 * waiting for the build (unique inserts) are newer than both.
 */
static void
wait_for_older_transactions(void)
{
	TransactionId bound = XidFromFullTransactionId(pmi_fill_xid_bound);
	TransactionId now = XidFromFullTransactionId(ReadNextFullTransactionId());

	for (;;)
	{
		Snapshot	snap = GetLatestSnapshot();

		if ((!TransactionIdIsNormal(bound) || TransactionIdFollowsOrEquals(snap->xmin, bound)) &&
			(RecoveryInProgress() || !prepared_before(now)))
			return;
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, FILL_POLL_MS,
						 PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
}

typedef struct FillState
{
	const PmiAmOps *ops;
	PmiIndex   *h;
	void	   *context;		/* ops->entry_context's */
	MemoryContext per_tuple;
} FillState;

static void
fill_callback(Relation index, ItemPointer tid, Datum *values, bool *isnull, bool tupleIsAlive,
			  void *arg)
{
	FillState  *st = arg;
	MemoryContext old = MemoryContextSwitchTo(st->per_tuple);

	st->ops->insert_entry(index, st->context, st->h->am_state, values, isnull, tid);
	MemoryContextSwitchTo(old);
	MemoryContextReset(st->per_tuple);
}

/* Steps 2 and 3 for an index whose pool is being built; returns the rows scanned. */
static double
fill(Relation heap, Relation index, PmiIndex *h)
{
	const PmiAmOps *ops = h->ops;
	IndexInfo  *ii = BuildIndexInfo(index);
	FillState	st = {ops, h, ops->entry_context(index),
	AllocSetContextCreate(CurrentMemoryContext, "pm_index build tuple", ALLOCSET_SMALL_SIZES)};
	Snapshot	snapshot;
	TableScanDesc scan;
	double		rows;
	XLogRecPtr	position;
	const int	progress_index[] = {PROGRESS_CREATEIDX_COMMAND, PROGRESS_CREATEIDX_INDEX_OID,
	PROGRESS_CREATEIDX_PHASE};
	const int64 progress_value[] = {PROGRESS_CREATEIDX_COMMAND_REINDEX_CONCURRENTLY,
	RelationGetRelid(index), PROGRESS_CREATEIDX_PHASE_BUILD};

	pgstat_progress_start_command(PROGRESS_COMMAND_CREATE_INDEX, RelationGetRelid(heap));
	pgstat_progress_update_multi_param(3, progress_index, progress_value);

	/* an MVCC scan: live tuples only, a heap-only one under its chain's root */
	ii->ii_Concurrent = true;
	snapshot = RegisterSnapshot(GetLatestSnapshot());
	scan = table_beginscan_strat(heap, snapshot, 0, NULL, true, true);
	rows = table_index_build_scan(heap, index, ii, true, true, fill_callback, &st, scan);

	/*
	 * The pool holds every change logged up to here (and replayed, on a
	 * standby): a position trusted after a restart in recovery (pmi_trust.c).
	 */
	position = RecoveryInProgress() ? GetXLogReplayRecPtr(NULL) : GetXLogInsertRecPtr();
	/* a structure durable at its checkpoints: the entries inserted here */
	if (ops->checkpoint != NULL)
		pmi_tier_checkpoint(h->slotno, h->pool, ops, h->am_state, RelationGetRelationName(index));
	if (position > pm_load(&h->pool->hdr->host_position))
		pm_pool_set_host_position(h->pool, position);
	pmi_registry_set_ready_xmin(h->slotno, snapshot->xmax);
	pm_pool_clear_flag(h->pool, PM_POOL_FLAG_BUILDING);
	UnregisterSnapshot(snapshot);
	pgstat_progress_end_command();
	return rows;
}

/* Build the index of rlocator if its pool is still being built (a database worker's step). */
static bool
fill_index(RelFileLocatorBackend rlocator, void *arg)
{
	Oid			indexid;
	Oid			heapid;
	Relation	index;
	Relation	heap;
	PmiIndex   *h;
	double		rows;
	LOCKMODE	lockmode;

	indexid = RelidByRelfilenumber(rlocator.locator.spcOid == MyDatabaseTableSpace ? InvalidOid :
								 rlocator.locator.spcOid, rlocator.locator.relNumber);
	if (!OidIsValid(indexid) || !OidIsValid(heapid = IndexGetRelation(indexid, true)))
		return false;

	/*
	 * CREATE INDEX CONCURRENTLY's locks: writes go on, VACUUM and DDL wait. A
	 * hot standby takes no stronger lock than a reader's; replay, its one
	 * writer, takes none.
	 */
	lockmode = RecoveryInProgress() ? AccessShareLock : ShareUpdateExclusiveLock;
	LockRelationOid(heapid, lockmode);
	LockRelationOid(indexid, lockmode);
	index = try_relation_open(indexid, NoLock);
	if (index == NULL)
		return false;
	heap = table_open(heapid, NoLock);
	if (!RelFileLocatorBackendEquals(pmi_index_rnode(index), rlocator) || pmi_index_am(index) == NULL)
	{
		relation_close(index, NoLock);
		table_close(heap, NoLock);
		return false;
	}
	/* a torn pool is replaced by one being built here */
	h = pmi_index_open(index, pmi_index_am(index));

	/*
	 * an unlogged index's reset gave it a fresh pool on its first use;
	 * another worker builds it
	 */
	if (!pmi_pool_building(h->pool) || !pmi_registry_claim_fill(h->slotno))
	{
		relation_close(index, NoLock);
		table_close(heap, NoLock);
		return false;
	}
	wait_for_older_transactions();
	rows = fill(heap, index, h);

	/*
	 * plans made without the index are made again (on a standby, when their
	 * snapshot is newer)
	 */
	if (!RecoveryInProgress())
		CacheInvalidateRelcache(heap);
	ereport(LOG,
			(errmsg("pm_index: built index \"%s\" from its table (%.0f rows)",
					RelationGetRelationName(index), rows)));
	relation_close(index, NoLock);
	table_close(heap, NoLock);
	return true;
}

/* Build every pool of the database that is being built; returns how many are left. */
static int
fill_database(Oid dbid, MemoryContext errcxt)
{
	List	   *pools = pmi_list_pools(dbid, ERROR);
	ListCell   *lc;
	int			left = 0;

	foreach(lc, pools)
	{
		RelFileLocatorBackend rlocator = *(RelFileLocatorBackend *) lfirst(lc);

		CHECK_FOR_INTERRUPTS();
		if (!pool_needs_build(rlocator))
			continue;
		(void) pmi_worker_index_transaction(rlocator, fill_index, NULL, "building", errcxt);
		left += pool_needs_build(rlocator);
	}
	list_free_deep(pools);
	return left;
}

void
pmi_fill_main(Datum arg)
{
	Oid			dbid = DatumGetObjectId(arg);
	MemoryContext errcxt;

	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnectionByOid(dbid, InvalidOid, BGWORKER_BYPASS_ALLOWCONN);
	errcxt = AllocSetContextCreate(TopMemoryContext, "pm_index build errors", ALLOCSET_SMALL_SIZES);
	pgstat_report_appname("pm_index build");

	/*
	 * in recovery, until nothing is left or the server is a primary: then
	 * once more
	 */
	for (;;)
	{
		bool		in_recovery = RecoveryInProgress();

		if (fill_database(dbid, errcxt) == 0 || !in_recovery)
			break;
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, FILL_RETRY_MS,
						 PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
	proc_exit(0);
}

/*
 * Before a unique index checks a new key: wait until its pool holds every
 * entry.  The build waits only for transactions older than the server's
 * start, so this waiter never holds it back.
 */
void
pmi_wait_until_built(PmiIndex *h)
{
	while (pmi_pool_building(h->pool))
	{
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, FILL_POLL_MS,
						 PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
}
