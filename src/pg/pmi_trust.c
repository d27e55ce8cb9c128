/*
 * pmi_trust.c
 *	  Which pools may be served.  One that predates a recovery without being
 *	  kept by WAL replay (pmi_redo.c), one replay could not apply a record
 *	  to, and one an operating-system crash may have torn are refused until
 *	  the index is rebuilt (pmi_reject_untrusted).  (A pool copied by a
 *	  backup, and on a primary a torn one, is replaced by one that a
 *	  background worker builds: pmi_fill.c.)  Pools are marked clean when the
 *	  server shuts down.
 *
 * On storage that is not persistent memory (and in any mode but msync) a
 * pool survives process and server crashes, since its stores sit in the
 * kernel's page cache, but not a kernel crash or power loss, which may keep
 * any mix of old and new pages.  The core marks such a pool in use under the
 * current kernel boot when a process opens it (pool.h).  At a clean shutdown
 * the postmaster, the last process alive, writes every pool back and marks
 * it clean.  A pool still in use under an earlier boot was open when the
 * operating system stopped: no process serves it (pmi_reject_untrusted).  On
 * a primary its first user replaces it with an empty pool that a background
 * worker builds from the table (pmi_first_use.c, pmi_fill.c); a standby does
 * not use it, and after a promotion it is replaced the same way.
 */
#include "pm_index.h"

#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/lmgr.h"

/*
 * Is the pool not provably current?  An OS crash may have torn it, its flag
 * says so (replay could not apply a record to it), or this server started
 * in recovery and the pool predates that start without being kept by WAL
 * (its index's changes were never logged).  A WAL-logged pool that predates
 * a standby's restart is current once replay passes its position
 * (pmi_index_plannable); a pool being built takes every change from its
 * creation on, logged or not.
 */
bool
pmi_pool_untrusted(pm_pool *pool)
{
	uint64		start_us = (uint64) (PgStartTime +
									 (int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * USECS_PER_DAY);

	uint64		flags = pm_load(&pool->hdr->flags);

	return pool->torn || (flags & PM_POOL_FLAG_UNTRUSTED) != 0 ||
		((flags & PM_POOL_FLAG_BUILDING) == 0 && pmi_started_from_elsewhere &&
		 pool->hdr->created_at < start_us &&
		 (pmi_started_from_backup || pm_load(&pool->hdr->host_position) == 0));
}

/*
 * Mark the pools pmi_pool_untrusted refuses, for this start and every later
 * one.  A pool that cannot be opened is refused when its index is used.
 * Returns how many were marked.
 */
int
pmi_mark_untrusted_pools(int elevel)
{
	List	   *pools = pmi_list_pools(InvalidOid, elevel);
	ListCell   *lc;
	int			marked = 0;

	foreach(lc, pools)
	{
		char	   *path = pmi_pool_path(*(RelFileLocatorBackend *) lfirst(lc));
		pm_pool    *pool;
		pm_error	err;

		if (pm_pool_open(path, (pm_mode) pmi_persistence_guc, &pool, &err) == PM_OK)
		{
			if (pmi_pool_untrusted(pool))
			{
				pm_pool_set_flag(pool, PM_POOL_FLAG_UNTRUSTED);
				marked++;
			}
			pm_pool_close(pool);
		}
		pfree(path);
	}
	list_free_deep(pools);
	return marked;
}

/* ERROR out of using an untrusted pool, marking it so for later starts too. */
void
pmi_reject_untrusted(pm_pool *pool, const char *index_name)
{
	if (!pmi_pool_untrusted(pool))
		return;
	if (pool->torn)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("index \"%s\" cannot be used until it is rebuilt", index_name),
				 errdetail("Its pool file \"%s\" was in use when the operating system stopped, "
						   "on storage that may lose writes then.", pool->path),
				 errhint("A server in recovery does not use this index; after a promotion it is "
						 "built again in the background.")));
	pm_pool_set_flag(pool, PM_POOL_FLAG_UNTRUSTED);
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("index \"%s\" cannot be used until it is rebuilt", index_name),
			 errdetail("Its pool file \"%s\" was not kept current by WAL replay, or replay "
					   "could not apply a change to it.", pool->path),
			 RecoveryInProgress() ?
			 errhint("A server in recovery does not use this index; after a promotion, "
					 "REINDEX the index.") :
			 errhint("REINDEX the index.")));
}

/*
 * on_proc_exit callback of the postmaster (or of a single-user backend): no
 * other process can be storing into a pool any more.
 */
static void
close_pools_clean(int code, Datum arg)
{
	List	   *pools = pmi_list_pools(InvalidOid, LOG);
	ListCell   *lc;
	int			marked = 0;

	foreach(lc, pools)
	{
		char	   *path = pmi_pool_path(*(RelFileLocatorBackend *) lfirst(lc));
		bool		was_marked;
		pm_error	err;

		if (pm_pool_file_close_clean(path, &was_marked, &err) != PM_OK)
			ereport(LOG,
					(errmsg("pm_index: could not mark pool file \"%s\" clean: %s", path, err.msg),
					 errdetail("After an operating system crash its index will be rebuilt.")));
		marked += was_marked;
		pfree(path);
	}
	ereport(DEBUG1, (errmsg_internal("pm_index: wrote back %d pools and marked them clean", marked)));
}

void
pmi_trust_init(void)
{
	if (!IsUnderPostmaster)
		on_proc_exit(close_pools_clean, (Datum) 0);
}
