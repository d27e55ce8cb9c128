/*
 * pmi_worker.c
 *	  Background workers of this library that connect to a database (the
 *	  background build, pmi_fill.c; the startup load, pmi_load.c): starting
 *	  one, and running its work on one index in a transaction of its own.
 */
#include "pm_index.h"

#include "access/xact.h"
#include "access/xlog.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

/*
 * Register a background worker of this library that connects to database
 * dbid (bgw_main_arg; InvalidOid: a worker that connects to none) and runs
 * function; extra (extra_len bytes, may be 0) goes to its bgw_extra.  False
 * if no worker slot is free.
 */
bool
pmi_start_database_worker(Oid dbid, const char *function, const char *name, const char *type,
						  const void *extra, Size extra_len, BackgroundWorkerHandle **handle)
{
	BackgroundWorker worker;

	Assert(extra_len <= BGW_EXTRALEN);
	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	/* one started on a hot standby runs there (a build: pmi_fill.c) */
	worker.bgw_start_time = RecoveryInProgress() ? BgWorkerStart_ConsistentState :
		BgWorkerStart_RecoveryFinished;
	worker.bgw_restart_time = BGW_NEVER_RESTART;
	worker.bgw_main_arg = ObjectIdGetDatum(dbid);
	if (extra_len > 0)
		memcpy(worker.bgw_extra, extra, extra_len);
	snprintf(worker.bgw_library_name, BGW_MAXLEN, "pm_index");
	snprintf(worker.bgw_function_name, BGW_MAXLEN, "%s", function);
	snprintf(worker.bgw_name, BGW_MAXLEN, "%s", name);
	snprintf(worker.bgw_type, BGW_MAXLEN, "%s", type);
	return RegisterDynamicBackgroundWorker(&worker, handle);
}

/*
 * In a database worker: fn(rlocator, arg) in a transaction of its own.  An
 * error is logged, with its detail and hint, as the failure of "doing"
 * (what the worker was doing to the index), and the worker goes on with its
 * next index: one index that cannot be loaded or rebuilt leaves the others
 * to be.  Returns fn's result, false after an error.  errcxt outlives the
 * transaction, to hold the error while it is logged.
 */
bool
pmi_worker_index_transaction(RelFileLocatorBackend rlocator, PmiWorkerIndexFn fn, void *arg,
							 const char *doing, MemoryContext errcxt)
{
	volatile bool result = false;

	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
	PG_TRY();
	{
		result = fn(rlocator, arg);
		PopActiveSnapshot();
		CommitTransactionCommand();
	}
	PG_CATCH();
	{
		MemoryContext old = MemoryContextSwitchTo(errcxt);
		ErrorData  *edata = CopyErrorData();

		MemoryContextSwitchTo(old);
		FlushErrorState();
		AbortCurrentTransaction();
		ereport(LOG,
				(errmsg("pm_index: %s the index with relfilenode %u failed: %s",
						doing, rlocator.locator.relNumber, edata->message),
				 edata->detail ? errdetail("%s", edata->detail) : 0,
				 edata->hint ? errhint("%s", edata->hint) : 0));
		FreeErrorData(edata);
		MemoryContextReset(errcxt);
	}
	PG_END_TRY();
	return result;
}
