/*
 * pmi_load.c
 *	  Checking and loading at startup.  Once the sweeper has run, a worker
 *	  in every database that accepts connections reads its catalog and logs
 *	  a WARNING for each pm_index index whose pool is missing, unreadable,
 *	  damaged or needs REINDEX: the sweeper sees files, not indexes, and
 *	  cannot tell that an index has no pool (a removed file, pm_index.pool_dir
 *	  pointing elsewhere).
 *
 *	  After a restart every index's DRAM layer is gone, and the first user of
 *	  an index would rebuild it while its query waits.  Background workers
 *	  open every index of each database in turn (pm_index.startup_load_workers
 *	  at once per database; the first of them also checks), which builds the
 *	  layer through the same first-use path a query takes: a query that gets
 *	  to an index first builds it itself, and one that comes while a worker
 *	  builds waits for it rather than building twice.
 */
#include "pm_index.h"

#include "access/heapam.h"
#include "access/relation.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/pg_database.h"
#include "commands/dbcommands.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lmgr.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

int			pmi_startup_load_workers = 2;

/* What a load worker is told: its database, and which share of the pools is its own. */
typedef struct LoadShare
{
	int			worker;
	int			nworkers;
} LoadShare;

/* The database's pools of permanent relations, in the listing's order, which every worker shares. */
static List *
pools_to_load(Oid dbid)
{
	List	   *pools = pmi_list_pools(dbid, LOG);
	ListCell   *lc;

	foreach(lc, pools)
	{
		if (RelFileLocatorBackendIsTemp(*(RelFileLocatorBackend *) lfirst(lc)))
			pools = foreach_delete_current(pools, lc);
	}
	return pools;
}

/*
 * Wait until a worker has stopped.  The sweeper has no database connection,
 * so the postmaster cannot notify it (bgw_notify_pid needs a backend): poll.
 */
static void
wait_for_worker(BackgroundWorkerHandle *handle)
{
	pid_t		pid;

	while (GetBackgroundWorkerPid(handle, &pid) != BGWH_STOPPED)
	{
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, 20,
						 PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
}

/*
 * The databases that accept connections (the sweeper is connected to none,
 * and reads the shared catalog), in CurrentMemoryContext.
 */
static List *
connectable_databases(void)
{
	MemoryContext cxt = CurrentMemoryContext;
	List	   *databases = NIL;
	Relation	rel;
	TableScanDesc scan;
	HeapTuple	tup;

	StartTransactionCommand();
	(void) GetTransactionSnapshot();
	rel = table_open(DatabaseRelationId, AccessShareLock);
	scan = table_beginscan_catalog(rel, 0, NULL);
	while ((tup = heap_getnext(scan, ForwardScanDirection)) != NULL)
	{
		Form_pg_database db = (Form_pg_database) GETSTRUCT(tup);

		if (db->datallowconn && db->datconnlimit != DATCONNLIMIT_INVALID_DB)
		{
			MemoryContext old = MemoryContextSwitchTo(cxt);

			databases = lappend_oid(databases, db->oid);
			MemoryContextSwitchTo(old);
		}
	}
	table_endscan(scan);
	table_close(rel, AccessShareLock);
	CommitTransactionCommand();
	return databases;
}

/*
 * The sweeper's last step: in every database that accepts connections or
 * has pools, start the workers that check and load its indexes, and wait
 * for them, so that at most pm_index.startup_load_workers run at once (one,
 * to check, in a database without pools or when loading is off).  Without a
 * free worker slot an index loads on first use.
 */
void
pmi_launch_loads(void)
{
	List	   *databases = connectable_databases();
	List	   *with_pools = NIL;
	ListCell   *lc;

	foreach(lc, pmi_list_pools(InvalidOid, LOG))
	{
		RelFileLocatorBackend rlocator = *(RelFileLocatorBackend *) lfirst(lc);

		if (!RelFileLocatorBackendIsTemp(rlocator))
		{
			databases = list_append_unique_oid(databases, rlocator.locator.dbOid);
			with_pools = list_append_unique_oid(with_pools, rlocator.locator.dbOid);
		}
	}
	foreach(lc, databases)
	{
		BackgroundWorkerHandle *handles[64];
		int			nworkers = list_member_oid(with_pools, lfirst_oid(lc)) ?
			Max(Min(pmi_startup_load_workers, lengthof(handles)), 1) : 1;
		int			started = 0;

		for (int k = 0; k < nworkers; k++)
		{
			LoadShare	share = {k, nworkers};
			char		name[BGW_MAXLEN];

			snprintf(name, sizeof(name), "pm_index load %d of database %u", k + 1, lfirst_oid(lc));
			if (!pmi_start_database_worker(lfirst_oid(lc), "pmi_load_main", name, "pm_index load",
										   &share, sizeof(share), &handles[started]))
			{
				ereport(LOG,
						(errmsg("pm_index: no background worker slot to load indexes at startup"),
						 errhint("Raise max_worker_processes; meanwhile each index loads on first use.")));
				break;
			}
			started++;
		}
		for (int k = 0; k < started; k++)
			wait_for_worker(handles[k]);
	}
}

/*
 * A WARNING for each index of this database whose pool cannot be used until
 * someone acts (pmi_pool_condition): the start names them, where their
 * queries would fail one by one.
 */
static void
warn_unusable_pools(void)
{
	List	   *indexes;
	ListCell   *lc;

	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
	indexes = pmi_list_index_pools(false);
	foreach(lc, indexes)
	{
		PmiIndexPool *ip = lfirst(lc);
		PmiPoolCondition c;

		if (RelFileLocatorBackendIsTemp(ip->rlocator))
			continue;
		pmi_pool_condition(pmi_pool_path(ip->rlocator), false, &c);
		if (c.unusable)
			ereport(WARNING,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("pm_index: index \"%s\" of database \"%s\" cannot be used: %s",
							get_rel_name(ip->relid), get_database_name(MyDatabaseId), c.detail),
					 c.hint ? errhint("%s", c.hint) : 0));
	}
	PopActiveSnapshot();
	CommitTransactionCommand();
}

/*
 * Open the index of rlocator, which builds its DRAM layer; false if it is not
 * one of ours.  An index that cannot load now (its pool needs a rebuild, the
 * DRAM tier's cap is too low) is left for its first use, which reports why.
 */
static bool
load_index(RelFileLocatorBackend rlocator, void *arg)
{
	Oid			indexid;
	Relation	index;
	const PmiAmOps *ops;

	indexid = RelidByRelfilenumber(rlocator.locator.spcOid == MyDatabaseTableSpace ? InvalidOid :
								 rlocator.locator.spcOid, rlocator.locator.relNumber);
	if (!OidIsValid(indexid) || (index = try_relation_open(indexid, AccessShareLock)) == NULL)
		return false;
	ops = pmi_am_ops(index->rd_rel->relam);
	if (ops != NULL && RelFileLocatorBackendEquals(pmi_index_rnode(index), rlocator))
		(void) pmi_index_open(index, ops);
	relation_close(index, AccessShareLock);
	return ops != NULL;
}

void
pmi_load_main(Datum arg)
{
	Oid			dbid = DatumGetObjectId(arg);
	LoadShare	share;
	List	   *pools;
	ListCell   *lc;
	int			i = 0;
	int			loaded = 0;
	TimestampTz start = GetCurrentTimestamp();
	MemoryContext errcxt;

	memcpy(&share, MyBgworkerEntry->bgw_extra, sizeof(share));
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnectionByOid(dbid, InvalidOid, BGWORKER_BYPASS_ALLOWCONN);
	pgstat_report_appname("pm_index load");
	errcxt = AllocSetContextCreate(TopMemoryContext, "pm_index load errors", ALLOCSET_SMALL_SIZES);

	if (share.worker == 0)
		warn_unusable_pools();
	pools = pmi_startup_load_workers > 0 ? pools_to_load(dbid) : NIL;
	foreach(lc, pools)
	{
		CHECK_FOR_INTERRUPTS();
		if (i++ % share.nworkers == share.worker &&
			pmi_worker_index_transaction(*(RelFileLocatorBackend *) lfirst(lc), load_index, NULL,
										 "loading at startup", errcxt))
			loaded++;
	}
	if (loaded > 0)
		ereport(LOG,
				(errmsg("pm_index: worker %d of %d loaded %d indexes of database %u in %ld ms",
						share.worker + 1, share.nworkers, loaded, dbid,
						(long) TimestampDifferenceMilliseconds(start, GetCurrentTimestamp()))));
	proc_exit(0);
}
