/*
 * pmi_tier_log.c
 *	  A tiered index's operation log as the platform applies and reads it
 *	  outside the insert and the replay workers (pmi_tier.c): a lane's batch
 *	  applied to the structure, the whole log applied at the first use after
 *	  a restart, the checkpoints of a structure that UNO logging makes
 *	  durable (PmiAmOps.checkpoint), the notes its records are for
 *	  reconciliation, what waits.
 *	  A record is a PmiNote followed by the entry as PmiAmOps.log_entry
 *	  writes it.
 */
#include "pm_index.h"

#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

/* records a replay batch applies at most */
#define TIER_BATCH_MAX		8192

/* A record of a batch, in the pool. */
typedef struct TierRecord
{
	PmiNote		note;
	PmiLoggedEntry entry;
} TierRecord;

/*
 * A record's parts: its reconciliation note and its entry as log_entry wrote
 * it.  PM_ERR_CORRUPT for a record too short to hold a note (a pool the
 * host did not write).
 */
pm_errcode
pmi_tier_record_parts(const pm_pool *pool, const char *data, uint32 len, PmiNote *note,
					  PmiLoggedEntry *entry, pm_error *err)
{
	if (len < sizeof(PmiNote))
		return pm_error_set(err, PM_ERR_CORRUPT, 0,
							"pool file \"%s\": an operation log record of %u bytes", pool->path,
							len);
	memcpy(note, data, sizeof(PmiNote));
	entry->data = data + sizeof(PmiNote);
	entry->len = len - sizeof(PmiNote);
	return PM_OK;
}

static int
cmp_record(const void *a, const void *b)
{
	const TierRecord *x = a;
	const TierRecord *y = b;

	if (x->note.key != y->note.key)
		return x->note.key < y->note.key ? -1 : 1;
	return x->note.rest < y->note.rest ? -1 : x->note.rest > y->note.rest;
}

/*
 * Apply a lane's records from position pos up to its tail (at most a
 * batch), sorted by key so that neighbouring inserts share the structure's
 * cached path; *applied_upto is where the batch ended.  By the lane's
 * applier, which records how far it applied (pmi_tier_lane_applied).
 * Returns how many were applied; a failure is returned in *err, and the
 * batch is applied again later (applying again is harmless).  A batch of
 * records never given to the structure before is applied as fresh (no
 * entry of it can be there), which spares a structure that would insert a
 * second copy of an entry its search for it.
 */
int
pmi_tier_apply_lane(int slotno, pm_pool *pool, const PmiAmOps *ops, void *state, const pm_olog *o,
					int lane, uint64 pos, uint64 *applied_upto, pm_error *err)
{
	PmiTierLane *tl = &pmi_slot(slotno)->tier_lane[lane];
	pm_olog_lane *l = pm_olog_lane_at(pool, o, lane);
	bool		fresh;
	uint64		tail = pm_load(&l->tail);
	TierRecord *batch;
	int			n = 0;
	pm_olog_record rec;
	MemoryContext cxt,
				per_record,
				old;
	pm_olog_cursor c;

	err->code = PM_OK;
	*applied_upto = pos;
	if (tail <= pos)
		return 0;
	cxt = AllocSetContextCreate(CurrentMemoryContext, "pm_index tier batch", ALLOCSET_DEFAULT_SIZES);
	/* what replay_entry allocates for a record (a wide key's copy) */
	per_record = AllocSetContextCreate(cxt, "pm_index tier record", ALLOCSET_SMALL_SIZES);
	batch = MemoryContextAlloc(cxt, sizeof(TierRecord) * TIER_BATCH_MAX);
	old = MemoryContextSwitchTo(per_record);
	pm_olog_cursor_init(&c, pos);
	while (n < TIER_BATCH_MAX && pm_olog_next(pool, o, lane, &c, tail, &rec, err))
	{
		if (pmi_tier_record_parts(pool, rec.data, rec.len, &batch[n].note, &batch[n].entry,
								  err) != PM_OK)
			break;
		n++;
	}
	if (err->code == PM_OK)
	{
		/*
		 * Once given to the structure, these records are never fresh again;
		 * none is while a background build fills the pool.
		 */
		if (pmi_pool_building(pool))
			tl->fresh_from = PG_UINT64_MAX;
		fresh = pos >= tl->fresh_from;
		if (tl->fresh_from != PG_UINT64_MAX)
			tl->fresh_from = Max(tl->fresh_from, c.pos);
		qsort(batch, n, sizeof(TierRecord), cmp_record);
		if (ops->replay_sorted != NULL)
		{
			PmiLoggedEntry *entries = MemoryContextAlloc(cxt, sizeof(PmiLoggedEntry) * Max(n, 1));

			for (int i = 0; i < n; i++)
			{
				entries[i] = batch[i].entry;
			}
			(void) ops->replay_sorted(ops, state, lane, entries, n, fresh, err);
		}
		else
			for (int i = 0; i < n && err->code == PM_OK; i++)
			{
				if (ops->replay_entry(ops, state, true, batch[i].entry.data, batch[i].entry.len, err) != PM_OK)
					break;
				MemoryContextReset(per_record);
			}
	}
	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);
	if (err->code != PM_OK)
		return 0;
	*applied_upto = c.pos;
	return n;
}

/* A new pool's log: every record it will hold is fresh (pmi_tier_apply_lane). */
void
pmi_tier_fresh_log(int slotno)
{
	for (int lane = 0; lane < PMI_TIER_LANES; lane++)
		pmi_slot(slotno)->tier_lane[lane].fresh_from = 0;
}

/*
 * Where a lane's applier goes on from: what it applied, durable, or not yet
 * durable in a structure that its checkpoints make durable.
 */
uint64
pmi_tier_lane_from(int slotno, pm_pool *pool, const pm_olog *o, int lane)
{
	return Max(pm_load(&pm_olog_lane_at(pool, o, lane)->applied),
			   pmi_slot(slotno)->tier_lane[lane].consumed);
}

/*
 * A batch of the lane was applied up to upto: durable already in a
 * structure that is failure-atomic by itself; in one made durable by its
 * checkpoints, noted for the next checkpoint (pmi_tier_checkpoint).
 */
void
pmi_tier_lane_applied(int slotno, pm_pool *pool, const PmiAmOps *ops, const pm_olog *o, int lane,
					  uint64 upto)
{
	PmiSlot    *s = pmi_slot(slotno);

	if (ops->checkpoint == NULL)
		pm_olog_set_applied(pool, o, lane, upto);
	else
	{
		/* a scan that reads it finds the batch in the structure (pmi_tier_foreach_pending) */
		pg_write_barrier();
		s->tier_lane[lane].consumed = upto;
		pg_atomic_write_u32(&s->tier_uncheckpointed, 1);
	}
}

static int	exclusive_slotno = -1;	/* the slot this process excludes
										 * appliers from */

/* A process that exits (FATAL skips PG_FINALLY) lets the appliers go on. */
static void
end_exclusive_at_exit(int code, Datum arg)
{
	if (exclusive_slotno >= 0)
		pmi_tier_exclusive_end(exclusive_slotno);
}

/* Wake replay worker id if it runs. */
void
pmi_tier_wake_worker(int id)
{
	Latch	   *latch = pmi_shared->tier_latch[id];

	if (latch != NULL)
		SetLatch(latch);
}

/*
 * Lanes that wait for their appliers go first: a long series of exclusions
 * (VACUUM's walk of a large table, a run of buckets at a time) would
 * otherwise keep the replay workers out for its whole length, while the
 * lanes fill and every scan copies what waits.  The running workers are
 * woken, and given until one of them starts a batch (at most TIER_YIELD_MS).
 */
#define TIER_YIELD_MS	20

static void
yield_to_appliers(PmiSlot *s)
{
	TimestampTz start;
	bool		running = false;

	if (pg_atomic_read_u64(&s->tier_pending) == 0)
		return;
	for (int id = 0; id < PMI_TIER_MAX_WORKERS; id++)
	{
		running |= pmi_shared->tier_latch[id] != NULL;
		pmi_tier_wake_worker(id);
	}
	if (!running)
		return;
	start = GetCurrentTimestamp();
	while (pg_atomic_read_u64(&s->tier_appliers) == 0 && pg_atomic_read_u64(&s->tier_pending) != 0 &&
		   !TimestampDifferenceExceeds(start, GetCurrentTimestamp(), TIER_YIELD_MS))
		pg_usleep(200L);
}

/*
 * Exclude every applier of the index in registry slot slotno unless another
 * process does (false), waiting for those at work to finish their batch: a
 * structure that UNO logging makes durable is checkpointed, and changed
 * outside the lanes, with no applier at work (PmiAmOps.checkpoint).
 */
bool
pmi_tier_exclusive_try(int slotno)
{
	PmiSlot    *s = pmi_slot(slotno);
	uint32		expected = 0;
	static bool exit_hook = false;

	if (!exit_hook)
	{
		before_shmem_exit(end_exclusive_at_exit, 0);
		exit_hook = true;
	}
	if (!pg_atomic_compare_exchange_u32(&s->tier_exclusive, &expected, 1))
		return false;
	exclusive_slotno = slotno;
	while (pg_atomic_read_u64(&s->tier_appliers) != 0)
		pg_usleep(100L);
	return true;
}

/* pmi_tier_exclusive_try, waiting for another process's exclusion to end. */
void
pmi_tier_exclusive_begin(int slotno)
{
	yield_to_appliers(pmi_slot(slotno));
	while (!pmi_tier_exclusive_try(slotno))
	{
		CHECK_FOR_INTERRUPTS();
		pg_usleep(100L);
	}
}

void
pmi_tier_exclusive_end(int slotno)
{
	exclusive_slotno = -1;
	pg_atomic_write_u32(&pmi_slot(slotno)->tier_exclusive, 0);
}

/*
 * pmi_tier_checkpoint by the process that excludes every applier: the
 * structure durable as it is, each lane's applied position where its
 * applier got to.  Raises nothing (a full log of an UNO applier asks for
 * one inside a critical section).
 */
pm_errcode
pmi_tier_checkpoint_held(int slotno, pm_pool *pool, const PmiAmOps *ops, void *state,
						 pm_error *err)
{
	PmiSlot    *s = pmi_slot(slotno);
	const pm_olog *o = pm_olog_of(pool);
	uint64		positions[PMI_TIER_LANES];
	uint32		npositions = o == NULL ? 0 : Min(o->nlanes, PMI_TIER_LANES);

	for (uint32 lane = 0; lane < npositions; lane++)
		positions[lane] = pmi_tier_lane_from(slotno, pool, o, lane);
	pg_atomic_write_u32(&s->tier_uncheckpointed, 0);
	if (ops->checkpoint(state, positions, npositions, err) != PM_OK)
	{
		pg_atomic_write_u32(&s->tier_uncheckpointed, 1);
		return err->code;
	}
	s->tier_checkpointed_at = GetCurrentTimestamp();
	for (uint32 lane = 0; lane < npositions; lane++)
	{
		pm_olog_lane *l = pm_olog_lane_at(pool, o, lane);

		if (pm_load(&l->applied) > pm_load(&l->reclaimed))
			pg_atomic_fetch_or_u64(&s->tier_unreclaimed, pmi_tier_lane_bit(lane));
	}
	return PM_OK;
}

/*
 * Make a structure that UNO logging makes durable (PmiAmOps.checkpoint)
 * durable as it is, with every applier excluded meanwhile.
 */
void
pmi_tier_checkpoint(int slotno, pm_pool *pool, const PmiAmOps *ops, void *state, const char *name)
{
	pm_error	err;
	pm_errcode	rc;

	pmi_tier_exclusive_begin(slotno);
	rc = pmi_tier_checkpoint_held(slotno, pool, ops, state, &err);
	pmi_tier_exclusive_end(slotno);
	if (rc != PM_OK)
		pmi_report_core_error(ERROR, &err, name);
}

/*
 * First use after a restart (pmi_first_use.c), before reconciliation: apply
 * every record the log holds.  Applying again what was applied before the
 * stop is harmless.  Raises an ERROR for a log that does not validate or a
 * record that cannot be applied.
 */
void
pmi_tier_recover(int slotno, pm_pool *pool, const PmiAmOps *ops, void *state, const char *name)
{
	PmiSlot    *s = pmi_slot(slotno);
	const pm_olog *o;
	pm_error	err;

	/*
	 * Past what is applied here, records are fresh (pmi_tier_apply_lane);
	 * in a pool that a background build fills, none is (the slot's
	 * PG_UINT64_MAX stays): the build may insert a waiting record's entry
	 * first.
	 */
	bool		building = pmi_pool_building(pool);

	if (pm_pool_root(pool, PM_OLOG_ROOT) == 0)
	{
		if (!building)
			pmi_tier_fresh_log(slotno);
		return;
	}
	if (pm_olog_validate(pool, &err) != PM_OK)
		pmi_report_core_error(ERROR, &err, name);
	o = pm_olog_of(pool);
	for (int lane = 0; lane < (int) o->nlanes; lane++)
	{
		pm_olog_lane *l = pm_olog_lane_at(pool, o, lane);

		uint64		pos = pm_load(&l->applied);
		bool		checkpointed = false;

		while (pos < pm_load(&l->tail))
		{
			uint64		upto;

			CHECK_FOR_INTERRUPTS();
			(void) pmi_tier_apply_lane(slotno, pool, ops, state, o, lane, pos, &upto, &err);

			/*
			 * an UNO applier's logs are full: what is applied made durable,
			 * the batch again (once: a batch always fits empty logs)
			 */
			if (err.code == PM_ERR_LIMIT && ops->checkpoint != NULL && !checkpointed)
			{
				pmi_tier_checkpoint(slotno, pool, ops, state, name);
				checkpointed = true;
				continue;
			}
			checkpointed = false;
			if (err.code != PM_OK)
				pmi_report_core_error(ERROR, &err, name);
			pos = upto;
			pmi_tier_lane_applied(slotno, pool, ops, o, lane, pos);
		}
		if (!building)
			s->tier_lane[lane].fresh_from = pos;
	}
}

/*
 * The notes of the records whose heap WAL may not have been flushed before
 * a crash: every record not reclaimed (reclamation waits for the flush).
 */
void
pmi_tier_notes(pm_pool *pool, void (*fn) (void *ctx, uint64_t key, uint64_t rest), void *ctx)
{
	const pm_olog *o;
	pm_error	err = {0};

	if (pm_pool_root(pool, PM_OLOG_ROOT) == 0)
		return;
	o = pm_olog_of(pool);
	for (int lane = 0; lane < (int) o->nlanes; lane++)
	{
		pm_olog_lane *l = pm_olog_lane_at(pool, o, lane);
		pm_olog_cursor c;
		pm_olog_record rec;

		pm_olog_cursor_init(&c, pm_load(&l->reclaimed));
		while (pm_olog_next(pool, o, lane, &c, pm_load(&l->tail), &rec, &err))
		{
			PmiNote		note;
			PmiLoggedEntry entry;

			if (pmi_tier_record_parts(pool, rec.data, rec.len, &note, &entry, &err) != PM_OK)
				break;
			fn(ctx, note.key, note.rest);
		}
		if (err.code != PM_OK)
			pmi_report_core_error(ERROR, &err, NULL);
	}
}

/*
 * After a restart the first use applied every record (pmi_tier_recover):
 * the lanes still keep the applied ones until a worker reclaims them.
 */
void
pmi_tier_note_recovered(int slotno, pm_pool *pool)
{
	PmiSlot    *s = pmi_slot(slotno);
	const pm_olog *o;

	if (pm_pool_root(pool, PM_OLOG_ROOT) == 0)
		return;
	o = pm_olog_of(pool);
	for (int lane = 0; lane < (int) o->nlanes && lane < PMI_TIER_LANES; lane++)
	{
		pm_olog_lane *l = pm_olog_lane_at(pool, o, lane);

		if (pm_load(&l->applied) > pm_load(&l->reclaimed))
			pg_atomic_fetch_or_u64(&s->tier_unreclaimed, pmi_tier_lane_bit(lane));
	}
}

/*
 * What waits in the log of the index in registry slot slotno, whose pool
 * is pool: records, their bytes, the oldest's age (pm_index_tier_lag).
 */
void
pmi_tier_lag(int slotno, pm_pool *pool, int64 *records, int64 *bytes, double *age_seconds)
{
	PmiSlot    *s = pmi_slot(slotno);
	const pm_olog *o = pm_olog_of(pool);
	uint64		lanes = pg_atomic_read_u64(&s->tier_pending);
	TimestampTz now = GetCurrentTimestamp();
	TimestampTz oldest = now;

	*records = (int64) (pg_atomic_read_u64(&s->tier_appended) - pg_atomic_read_u64(&s->tier_applied));
	*bytes = 0;
	if (o != NULL)
		for (int lane = 0; lane < (int) o->nlanes && lane < PMI_TIER_LANES; lane++)
		{
			pm_olog_lane *l = pm_olog_lane_at(pool, o, lane);
			uint64		tail = pm_load(&l->tail);
			uint64		applied = pm_load(&l->applied);

			if (tail > applied)
			{
				*bytes += (int64) (tail - applied);
				if ((lanes & pmi_tier_lane_bit(lane)) != 0 && s->tier_lane[lane].pending_since != 0)
					oldest = Min(oldest, s->tier_lane[lane].pending_since);
			}
		}
	*records = Max(*records, 0);
	*age_seconds = *bytes > 0 ? (double) (now - oldest) / USECS_PER_SEC : 0;
}
