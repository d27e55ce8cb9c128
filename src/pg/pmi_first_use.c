/*
 * pmi_first_use.c
 *	  The first use of an index's pool after a restart, done by one process
 *	  while concurrent first users wait for it: a fresh pool for an unlogged
 *	  index that crash recovery reset, a torn pool replaced, the access
 *	  method's recovery of its DRAM layer, then reconciliation with the heap
 *	  after a crash.
 */
#include "pm_index.h"

#include "access/xlog.h"
#include "miscadmin.h"
#include "storage/procarray.h"
#include "utils/rel.h"
#include "utils/wait_event.h"

/*
 * An unlogged index reset after a crash (its metapage came from the init
 * fork, with no pool): give it a fresh empty pool.  Caller holds the slot lock.
 */
static void
recreate_empty_pool(Relation index, const PmiAmOps *ops, uint8 *uuid)
{
	pm_pool    *pool = pmi_create_pool(index, ops);

	memcpy(uuid, pool->hdr->uuid, 16);
	pm_pool_close(pool);
	pmi_write_metapage(index, MAIN_FORKNUM, ops, uuid);
}

/*
 * Make the structure ready to serve and, after a crash, reconcile it with
 * the heap; returns the DRAM root to publish.  In recovery the pool holds
 * what replay applied, which no heap check may change (reconciliation is
 * for what a primary's crash lost).
 */
static uint64
recover(const PmiFirstUse *fu, pm_pool *pool, int slotno, uint32 generation)
{
	const PmiAmOps *ops = fu->ops;
	void	   *state = palloc0(ops->state_size);
	bool		after_crash = pmi_shared->unclean_start;
	uint64		dram_root;

	pmi_am_attach(ops, state, pool, slotno, generation, 0, fu->name);
	dram_root = ops->recover(fu->name, state, after_crash);
	PG_TRY();
	{
		/* a tiered index's log: what it holds is applied before anything reads */
		pmi_tier_recover(slotno, pool, ops, state, fu->name);
		if (after_crash && fu->index != NULL && !RecoveryInProgress())
			pmi_reconcile(fu->index, pool, ops, state);
		/* a structure durable at its checkpoints: what the log and reconciliation did */
		if (ops->checkpoint != NULL)
			pmi_tier_checkpoint(slotno, pool, ops, state, fu->name);
	}
	PG_CATCH();
	{
		if (dram_root != 0)
			ops->release_dram(dram_root);
		PG_RE_THROW();
	}
	PG_END_TRY();
	pmi_tier_note_recovered(slotno, pool);
	pfree(state);
	return dram_root;
}

/*
 * A pool an operating-system crash may have torn: its first user on a
 * primary replaces it with an empty one of the same UUID that is being
 * built.  Inserts go into it from here on, queries do not use it, and a
 * background worker fills it from the table (pmi_fill.c); no transaction
 * inserted into the torn pool, which is refused until replaced.
 */
static pm_pool *
replace_torn_pool(const PmiFirstUse *fu, const uint8 *uuid)
{
	PmiFormatParam param;

	pmi_format_param(fu->index, fu->ops, &param);
	pm_pool_close(pmi_create_pool_for(fu->rlocator, fu->ops, uuid, PM_POOL_FLAG_BUILDING, &param,
									  fu->name));
	ereport(LOG,
			(errmsg("pm_index: index \"%s\" is built again from its table in the background",
					fu->name),
			 errdetail("Its pool file was in use when the operating system stopped, on storage "
					   "that may lose writes then; it was replaced with an empty one.")));
	return pmi_pool_open(fu->index);
}

/*
 * The first use of the pool since startup; returns the DRAM root to publish.
 * Records where replay stood in it then (PmiSlot.replayed_before_start).
 */
static uint64
first_use(const PmiFirstUse *fu, int slotno, uint32 generation)
{
	pm_pool    *pool;

	if (fu->index != NULL)
	{
		uint8		uuid[16];

		memcpy(uuid, fu->meta_uuid, 16);
		if (pmi_metapage_names_no_pool(uuid))
			recreate_empty_pool(fu->index, fu->ops, uuid);
		pool = pmi_pool_open_named(fu->index, uuid);
		if (pool->torn && !RecoveryInProgress())
			pool = replace_torn_pool(fu, uuid);
	}
	else if ((pool = pmi_pool_lookup(fu->rlocator)) == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_FILE),
				 errmsg("index %s has no pool file", fu->name)));
	pmi_reject_untrusted(pool, fu->name);
	pmi_slot(slotno)->replayed_before_start = pm_load(&pool->hdr->host_position);
	return recover(fu, pool, slotno, generation);
}

/*
 * Make the slot READY: the first user builds the DRAM layer (and reconciles
 * after a crash) with no lock held, so the work can be cancelled; concurrent
 * first users sleep on the slot's condition variable, and take over if the
 * builder died.  A failed build leaves the slot for the next user.
 */
void
pmi_ensure_ready(const PmiFirstUse *fu, int slotno, uint32 generation)
{
	PmiSlot    *s = pmi_slot(slotno);
	uint64		root;

	for (;;)
	{
		bool		mine = false;

		LWLockAcquire(&s->lock, LW_EXCLUSIVE);
		if (s->generation != generation || s->state == PMI_SLOT_READY)
		{
			LWLockRelease(&s->lock);
			ConditionVariableCancelSleep();
			return;
		}
		if (s->state == PMI_SLOT_ATTACHED ||
			(s->state == PMI_SLOT_BUILDING && BackendPidGetProc(s->builder_pid) == NULL))
		{
			s->state = PMI_SLOT_BUILDING;
			s->builder_pid = MyProcPid;
			mine = true;
		}
		LWLockRelease(&s->lock);
		if (mine)
			break;
		(void) ConditionVariableTimedSleep(&s->ready_cv, 1000, PG_WAIT_EXTENSION);
	}
	ConditionVariableCancelSleep();

	PG_TRY();
	{
		root = first_use(fu, slotno, generation);
	}
	PG_CATCH();
	{
		LWLockAcquire(&s->lock, LW_EXCLUSIVE);
		if (s->generation == generation && s->builder_pid == MyProcPid)
		{
			s->state = PMI_SLOT_ATTACHED;
			s->builder_pid = 0;
		}
		LWLockRelease(&s->lock);
		ConditionVariableBroadcast(&s->ready_cv);
		PG_RE_THROW();
	}
	PG_END_TRY();

	pmi_publish_ready(slotno, root);
}

/* The slot's index is ready to serve (after a build or a first use). */
void
pmi_publish_ready(int slotno, uint64 dram_root)
{
	PmiSlot    *s = pmi_slot(slotno);

	LWLockAcquire(&s->lock, LW_EXCLUSIVE);
	s->dram_root = dram_root;
	s->state = PMI_SLOT_READY;
	s->builder_pid = 0;
	LWLockRelease(&s->lock);
	ConditionVariableBroadcast(&s->ready_cv);
}
