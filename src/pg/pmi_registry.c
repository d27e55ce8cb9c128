/*
 * pmi_registry.c
 *	  The shared registry of pm_index indexes in use, and the pool lifecycle
 *	  at transaction end.
 *
 * Registry: a fixed array of slots in shared memory (pm_index.max_indexes),
 * assigned on first use of an index after startup or at its build.  A slot
 * holds the DRAM root of the index's volatile layer, so every backend finds
 * the same tree, and the lock that lets one backend rebuild that layer while
 * concurrent first users wait.  It is volatile like the DRAM tier: a restart
 * starts with an empty registry and every index is rebuilt on first use.
 * A slot's number + 1 is the epoch space of the index's retired PM blocks
 * (space 0: the DRAM tier), so a block retired by an index that is gone by
 * the time its epoch ends is not freed into another index's pool.
 *
 * Lifecycle: a pool goes when its relfilenode goes, at the end of the
 * transaction that drops it, not before.  At commit (or abort) the list of
 * relfilenodes that smgr is about to delete (smgrGetPendingDeletes) names
 * exactly the indexes dropped, reindexed, truncated, or created and rolled
 * back; their pools are removed then.  Pools created in an aborted
 * subtransaction are removed at top-level end if their relation's file is
 * gone by then.  DROP DATABASE removes its directories without pending
 * deletes: the pools of a database dropped by the transaction are removed
 * at its commit.  Temporary indexes are handled apart (drop_temp_pools).
 * Anything missed (a crash in between, two-phase commit) is removed by the
 * orphan sweep at the next startup.
 */
#include "pm_index.h"

#include <sys/stat.h>
#include <unistd.h>

#include "access/xact.h"
#include "catalog/objectaccess.h"
#include "catalog/pg_database.h"
#include "catalog/storage.h"
#include "common/relpath.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/proc.h"
#include "storage/procarray.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

static List *pools_created = NIL;	/* RelFileLocatorBackends, in
									 * TopMemoryContext */
static List *temp_pools = NIL;	/* this backend's temporary indexes' pools,
								 * likewise */
static List *databases_dropped = NIL;	/* Oids, in TopMemoryContext */
static object_access_hook_type prev_object_access_hook = NULL;
static pm_alloc dram_alloc;		/* this backend's view of the DRAM tier */
static bool dram_attached = false;
static pm_epoch_handle epoch_handle = {.slot = -1};

void
pmi_registry_init_backend(void)
{
	static bool done = false;

	if (!done)
	{
		LWLockRegisterTranche(pmi_shared->lwlock_tranche, "pm_index");
		done = true;
	}
}


/*
 * The slot of rlocator, assigned if it has none.  ERROR when the registry is
 * full.
 */
int
pmi_registry_attach(RelFileLocatorBackend rlocator, const PmiAmOps *ops, uint32 *generation)
{
	int			free_slot = -1;

	pmi_registry_init_backend();
	LWLockAcquire(pmi_shared->registry_lock, LW_EXCLUSIVE);
	for (int i = 0; i < pmi_shared->nindexes; i++)
	{
		PmiSlot    *s = pmi_slot(i);

		if (s->state != PMI_SLOT_FREE && RelFileLocatorBackendEquals(s->rlocator, rlocator))
		{
			*generation = s->generation;
			LWLockRelease(pmi_shared->registry_lock);
			return i;
		}
		if (s->state == PMI_SLOT_FREE && free_slot < 0)
			free_slot = i;
	}
	if (free_slot < 0)
	{
		LWLockRelease(pmi_shared->registry_lock);
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("too many pm_index indexes in use (pm_index.max_indexes = %d)",
						pmi_max_indexes),
				 errhint("Raise pm_index.max_indexes and restart the server.")));
	}
	{
		PmiSlot    *s = pmi_slot(free_slot);

		s->rlocator = rlocator;
		s->am = pmi_am_number(ops);
		s->generation++;
		s->dram_root = 0;
		pg_atomic_write_u64(&s->inserts, 0);
		pg_atomic_write_u64(&s->deletes, 0);
		pg_atomic_write_u64(&s->flushes, 0);
		pg_atomic_write_u64(&s->fences, 0);
		s->ready_xmin = InvalidTransactionId;
		s->fill_pid = 0;
		pmi_tier_slot_init(s, false);
		s->state = PMI_SLOT_ATTACHED;
		*generation = s->generation;
	}
	LWLockRelease(pmi_shared->registry_lock);
	return free_slot;
}

static int
find_slot(RelFileLocatorBackend rlocator)
{
	for (int i = 0; i < pmi_shared->nindexes; i++)
	{
		PmiSlot    *s = pmi_slot(i);

		if (s->state != PMI_SLOT_FREE && RelFileLocatorBackendEquals(s->rlocator, rlocator))
			return i;
	}
	return -1;
}

/*
 * Where replay stood in rlocator's pool when this server first used it
 * (PmiSlot.replayed_before_start); false if no process has made it ready.
 */
bool
pmi_registry_replayed_before_start(RelFileLocatorBackend rlocator, uint64 *position)
{
	int			slotno;
	bool		ready = false;

	pmi_registry_init_backend();
	LWLockAcquire(pmi_shared->registry_lock, LW_SHARED);
	slotno = find_slot(rlocator);
	if (slotno >= 0)
	{
		PmiSlot    *s = pmi_slot(slotno);

		LWLockAcquire(&s->lock, LW_SHARED);
		ready = s->state == PMI_SLOT_READY;
		*position = s->replayed_before_start;
		LWLockRelease(&s->lock);
	}
	LWLockRelease(pmi_shared->registry_lock);
	return ready;
}

/*
 * The xmax of the snapshot a background build filled rlocator's pool with
 * (pmi_fill.c), while snapshots older than the newest such value may run;
 * InvalidTransactionId otherwise.
 */
TransactionId
pmi_registry_ready_xmin(RelFileLocatorBackend rlocator)
{
	TransactionId latest = pg_atomic_read_u32(&pmi_shared->latest_ready_xmin);
	TransactionId xmin = InvalidTransactionId;
	int			slotno;

	if (!TransactionIdIsValid(latest) || !TransactionIdPrecedes(TransactionXmin, latest))
		return InvalidTransactionId;
	pmi_registry_init_backend();
	LWLockAcquire(pmi_shared->registry_lock, LW_SHARED);
	slotno = find_slot(rlocator);
	if (slotno >= 0)
		xmin = pmi_slot(slotno)->ready_xmin;
	LWLockRelease(pmi_shared->registry_lock);
	return xmin;
}

void
pmi_registry_set_ready_xmin(int slotno, TransactionId xmin)
{
	PmiSlot    *s = pmi_slot(slotno);
	TransactionId latest;

	LWLockAcquire(&s->lock, LW_EXCLUSIVE);
	s->ready_xmin = xmin;
	LWLockRelease(&s->lock);
	LWLockAcquire(pmi_shared->registry_lock, LW_EXCLUSIVE);
	latest = pg_atomic_read_u32(&pmi_shared->latest_ready_xmin);
	if (!TransactionIdIsValid(latest) || TransactionIdPrecedes(latest, xmin))
		pg_atomic_write_u32(&pmi_shared->latest_ready_xmin, xmin);
	LWLockRelease(pmi_shared->registry_lock);
}

/*
 * Make this process the one that builds the slot's pool, unless another
 * live one is: a hot standby's build worker goes on after a promotion,
 * when the new primary starts its own.
 */
bool
pmi_registry_claim_fill(int slotno)
{
	PmiSlot    *s = pmi_slot(slotno);
	bool		mine;

	LWLockAcquire(&s->lock, LW_EXCLUSIVE);
	mine = s->fill_pid == 0 || s->fill_pid == MyProcPid || BackendPidGetProc(s->fill_pid) == NULL;
	if (mine)
		s->fill_pid = MyProcPid;
	LWLockRelease(&s->lock);
	return mine;
}

/* The registry slot of rlocator, or -1 if it has none. */
int
pmi_registry_find(RelFileLocatorBackend rlocator)
{
	int			slotno;

	pmi_registry_init_backend();
	LWLockAcquire(pmi_shared->registry_lock, LW_SHARED);
	slotno = find_slot(rlocator);
	LWLockRelease(pmi_shared->registry_lock);
	return slotno;
}

/*
 * Free the slot of rlocator and its DRAM layer.  The caller holds the lock
 * that keeps every other backend away from the index (or the index is
 * being dropped at commit).  Raises no error: runs after commit.
 */
void
pmi_registry_release(RelFileLocatorBackend rlocator)
{
	int			slotno;

	pmi_registry_init_backend();
	/* replay workers stop applying to it first: they take the registry lock */
	slotno = pmi_registry_find(rlocator);
	if (slotno >= 0)
	{
		pmi_tier_close(slotno);
		/* and find nothing to do here from now on */
		pg_atomic_write_u64(&pmi_slot(slotno)->tier_pending, 0);
		pg_atomic_write_u64(&pmi_slot(slotno)->tier_unreclaimed, 0);
	}
	LWLockAcquire(pmi_shared->registry_lock, LW_EXCLUSIVE);
	slotno = find_slot(rlocator);
	if (slotno >= 0)
	{
		PmiSlot    *s = pmi_slot(slotno);

		if (s->state == PMI_SLOT_READY && s->dram_root != 0)
			pmi_am_of_number(s->am)->release_dram(s->dram_root);
		s->state = PMI_SLOT_FREE;
		s->dram_root = 0;
		s->generation++;
	}
	LWLockRelease(pmi_shared->registry_lock);
}

/*
 * Epoch callback for retired PM blocks: space is slot number + 1, tag the
 * slot's generation when the block was retired.  A block of an index that
 * has gone since is not freed (its pool went with it).  Raises no error.
 */
static void
pmi_free_retired(uint32 space, uint32 tag, uint64 off)
{
	PmiSlot    *s;
	pm_pool    *pool;
	pm_alloc	a;
	pm_error	err;

	if (space == 0 || space > (uint32) pmi_shared->nindexes)
		return;
	s = pmi_slot((int) space - 1);
	if (s->generation != tag || s->state == PMI_SLOT_FREE)
		return;
	pool = pmi_pool_lookup(s->rlocator);
	if (pool == NULL)
		return;					/* cannot map it now: recovery reclaims the
								 * block */
	pm_alloc_attach_pool(&a, pool);
	if (pm_free_block(&a, off, &err) != PM_OK)
		elog(LOG, "pm_index: %s", err.msg);
}

/* Remove the pool and registry slot of a relfilenode that is going away. */
static void
drop_pool(RelFileLocatorBackend rlocator)
{
	char	   *path = pmi_pool_path(rlocator);
	struct stat st;

	if (stat(path, &st) == 0 || find_slot(rlocator) >= 0)
	{
		pmi_registry_release(rlocator);
		pmi_pool_remove(rlocator);
	}
	pfree(path);
}

/* A relation whose main fork is missing or empty was removed by this transaction. */
static bool
relation_file_gone(RelFileLocatorBackend rlocator)
{
	char	   *path = pmi_relpath(rlocator, MAIN_FORKNUM);
	struct stat st;
	bool		gone = stat(path, &st) != 0 || st.st_size == 0;

	pfree(path);
	return gone;
}

/*
 * DROP DATABASE removes the database's directories itself, not through
 * pending deletes: note the database, and remove its pools at commit.
 */
static void
pmi_object_access(ObjectAccessType access, Oid classId, Oid objectId, int subId, void *arg)
{
	if (prev_object_access_hook)
		prev_object_access_hook(access, classId, objectId, subId, arg);
	if (access == OAT_DROP && classId == DatabaseRelationId)
	{
		MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);

		databases_dropped = lappend_oid(databases_dropped, objectId);
		MemoryContextSwitchTo(old);
	}
}

/*
 * Temporary relations: smgr's pending deletes leave them out, and their
 * files go after the transaction-end callbacks.  A temporary index's pool
 * is therefore removed at the end of the next transaction of its backend
 * that finds the index's file gone, or when the backend exits.
 */
static void
drop_temp_pools(bool all)
{
	ListCell   *lc;

	foreach(lc, temp_pools)
	{
		RelFileLocatorBackend *rlocator = lfirst(lc);

		if (all || relation_file_gone(*rlocator))
		{
			drop_pool(*rlocator);
			temp_pools = foreach_delete_current(temp_pools, lc);
			pfree(rlocator);
		}
	}
}

static void
drop_temp_pools_at_exit(int code, Datum arg)
{
	drop_temp_pools(true);
}

void
pmi_note_pool_created(RelFileLocatorBackend rlocator)
{
	static bool exit_callback_registered = false;
	MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);
	RelFileLocatorBackend *copy = palloc(sizeof(RelFileLocatorBackend));

	*copy = rlocator;
	pools_created = lappend(pools_created, copy);
	if (RelFileLocatorBackendIsTemp(rlocator))
	{
		copy = palloc(sizeof(RelFileLocatorBackend));
		*copy = rlocator;
		temp_pools = lappend(temp_pools, copy);
		if (!exit_callback_registered)
		{
			before_shmem_exit(drop_temp_pools_at_exit, (Datum) 0);
			exit_callback_registered = true;
		}
	}
	MemoryContextSwitchTo(old);
}

static void
at_xact_end(bool commit)
{
	RelFileLocator *rlocators;
	int			n = smgrGetPendingDeletes(commit, &rlocators);
	ListCell   *lc;

	for (int i = 0; i < n; i++)
	{
		RelFileLocatorBackend rlocator = {rlocators[i], INVALID_PROC_NUMBER};

		drop_pool(rlocator);
	}
	if (n > 0)
		pfree(rlocators);
	drop_temp_pools(false);

	foreach(lc, commit ? databases_dropped : NIL)
	{
		List	   *pools = pmi_list_pools(lfirst_oid(lc), LOG);
		ListCell   *lp;

		foreach(lp, pools)
		{
			drop_pool(*(RelFileLocatorBackend *) lfirst(lp));
		}
		list_free_deep(pools);
	}
	list_free(databases_dropped);
	databases_dropped = NIL;

	/*
	 * creations rolled back by a subtransaction are no longer pending
	 * anywhere
	 */
	foreach(lc, pools_created)
	{
		RelFileLocatorBackend rlocator = *(RelFileLocatorBackend *) lfirst(lc);

		if (relation_file_gone(rlocator))
			drop_pool(rlocator);
	}
	list_free_deep(pools_created);
	pools_created = NIL;
}

static void
xact_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
			at_xact_end(true);
			break;
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
			at_xact_end(false);
			break;
		case XACT_EVENT_PREPARE:
			/* the commit happens elsewhere: the startup sweep handles it */
			list_free_deep(pools_created);
			pools_created = NIL;
			list_free(databases_dropped);
			databases_dropped = NIL;
			break;
		default:
			break;
	}
}

void
pmi_lifecycle_init(void)
{
	RegisterXactCallback(xact_callback, NULL);
	prev_object_access_hook = object_access_hook;
	object_access_hook = pmi_object_access;
}

/* The DRAM tier allocator of this backend, attached on first use. */
pm_alloc *
pmi_dram(void)
{
	if (!dram_attached)
	{
		pm_alloc_attach_pool(&dram_alloc, pmi_dram_pool);
		dram_attached = true;
	}
	return &dram_alloc;
}

/* Free a retired block: space 0 is the DRAM tier, others a pool (registry slot + 1). */
static void
epoch_free(void *ctx, uint32 space, uint32 tag, uint64 off)
{
	pm_error	err;

	if (space != 0)
		pmi_free_retired(space, tag, off);
	else if (pm_free_block(pmi_dram(), off, &err) != PM_OK)
		elog(LOG, "pm_index: %s", err.msg);
}

static void
epoch_shutdown(int code, Datum arg)
{
	pm_epoch_unregister(&epoch_handle);
}

/* This backend's epoch participant, registered on first use. */
pm_epoch_handle *
pmi_epoch(void)
{
	if (epoch_handle.slot < 0)
	{
		pm_error	err;

		if (pm_epoch_register((pm_epoch_domain *) ((char *) pmi_shared + pmi_shared->epoch_offset),
							  (uint64) MyProcPid, MyProcNumber, epoch_free, NULL, NULL,
							  &epoch_handle, &err) != PM_OK)
			pmi_report_core_error(ERROR, &err, NULL);
		before_shmem_exit(epoch_shutdown, 0);
	}
	return &epoch_handle;
}

/*
 * The index is going away (dropped, or moved under another name): no
 * applier starts on it, and those at work finish first.  Then nothing but
 * the caller touches its pool.
 */
void
pmi_tier_close(int slotno)
{
	PmiSlot    *s = pmi_slot(slotno);

	pg_atomic_write_u32(&s->tier_closed, 1);
	pg_memory_barrier();
	while (pg_atomic_read_u64(&s->tier_appliers) != 0 ||
		   pg_atomic_read_u32(&s->tier_exclusive) != 0)
		pg_usleep(1000L);
}

/*
 * Reset a registry slot's tiering state: at shared memory's creation
 * (first: the atomics are initialized) or when an index takes the slot.
 */
void
pmi_tier_slot_init(PmiSlot *s, bool first)
{
	pg_atomic_uint64 *words[] = {&s->tier_writers, &s->tier_appliers, &s->tier_pending,
	&s->tier_unreclaimed, &s->tier_appended, &s->tier_applied};

	pg_atomic_uint32 *flags[] = {&s->tier_closed, &s->tier_exclusive, &s->tier_uncheckpointed};

	for (int i = 0; i < lengthof(flags); i++)
	{
		if (first)
			pg_atomic_init_u32(flags[i], 0);
		else
			pg_atomic_write_u32(flags[i], 0);
	}
	s->tier_checkpointed_at = 0;
	for (int i = 0; i < lengthof(words); i++)
	{
		if (first)
			pg_atomic_init_u64(words[i], 0);
		else
			pg_atomic_write_u64(words[i], 0);
	}
	memset(s->tier_lane, 0, sizeof(s->tier_lane));
	for (int lane = 0; lane < PMI_TIER_LANES; lane++)
		s->tier_lane[lane].fresh_from = PG_UINT64_MAX;
}
