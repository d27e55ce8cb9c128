/*
 * pmi_load.c
 *	  Loading at startup: after a restart every index's DRAM layer is gone,
 *	  and the first user of an index would rebuild it while its query waits.
 *	  Once the sweeper has run, background workers open every index of each
 *	  database in turn (pm_index.startup_load_workers at once per database),
 *	  which builds the layer through the same first-use path a query takes:
 *	  a query that gets to an index first builds it itself, and one that
 *	  comes while a worker builds waits for it rather than building twice.
 */
#include "pm_index.h"

#include "access/relation.h"
#include "access/xact.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lmgr.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/relfilenodemap.h"
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
		if (RelFileNodeBackendIsTemp(*(RelFileNodeBackend *) lfirst(lc)))
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
 * The sweeper's last step: for each database with pools, start the load
 * workers and wait for them, so that at most pm_index.startup_load_workers
 * run at once.  Without a free worker slot an index loads on first use.
 */
void
pmi_launch_loads(void)
{
	List	   *databases = NIL;
	ListCell   *lc;

	if (pmi_startup_load_workers == 0)
		return;
	foreach(lc, pmi_list_pools(InvalidOid, LOG))
	{
		RelFileNodeBackend rnode = *(RelFileNodeBackend *) lfirst(lc);

		if (!RelFileNodeBackendIsTemp(rnode))
			databases = list_append_unique_oid(databases, rnode.node.dbNode);
	}
	foreach(lc, databases)
	{
		BackgroundWorkerHandle *handles[64];
		int			started = 0;

		for (int k = 0; k < Min(pmi_startup_load_workers, lengthof(handles)); k++)
		{
			LoadShare	share = {k, Min(pmi_startup_load_workers, lengthof(handles))};
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
 * Open the index of rnode, which builds its DRAM layer; false if it is not
 * one of ours.  An index that cannot load now (its pool needs a rebuild, the
 * DRAM tier's cap is too low) is left for its first use, which reports why.
 */
static bool
load_index(RelFileNodeBackend rnode, void *arg)
{
	Oid			indexid;
	Relation	index;
	const PmiAmOps *ops;

	indexid = RelidByRelfilenode(rnode.node.spcNode == MyDatabaseTableSpace ? InvalidOid :
								 rnode.node.spcNode, rnode.node.relNode);
	if (!OidIsValid(indexid) || (index = try_relation_open(indexid, AccessShareLock)) == NULL)
		return false;
	ops = pmi_am_ops(index->rd_rel->relam);
	if (ops != NULL && RelFileNodeBackendEquals(pmi_index_rnode(index), rnode))
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

	pools = pools_to_load(dbid);
	foreach(lc, pools)
	{
		CHECK_FOR_INTERRUPTS();
		if (i++ % share.nworkers == share.worker &&
			pmi_worker_index_transaction(*(RelFileNodeBackend *) lfirst(lc), load_index, NULL,
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
