/*
 * pmi_tier.c
 *	  Tiered writes (TIPS, src/core/tips/README.md): an insert into an index
 *	  WITH (tiered = on) is made durable by a record in a lane of its pool's
 *	  operation log and is visible to scans through that lane; the replay
 *	  workers of the server apply the lanes' records to the structure later,
 *	  a lane's batch at a time sorted by key, off the insert's path.
 *
 * A record is the reconciliation note of its entry (PmiNote) followed by
 * the entry as a WAL record carries it (PmiAmOps.log_entry), and its host
 * position is the WAL end of the heap tuple it names: the record stands
 * for the note an untiered insert makes in the reconciliation ring, so a
 * tiered insert persists twice (the record, the lane's tail).
 *
 * PostgreSQL's index entries are only ever inserted by aminsert and deleted
 * by VACUUM, and inserts of distinct entries commute: so an insert may go
 * to the log or straight into the structure (a unique index's, a full
 * lane's, a record too large for a lane), and nothing but VACUUM has to
 * wait for the log.  A scan reads what the structure holds and the records
 * not yet applied (pmi_tier_foreach_pending), copied before it reads the
 * structure, so an entry applied in between is seen twice (the scan drops
 * exact duplicates) rather than never.  VACUUM, the verifier and the
 * storage commands first apply every record (pmi_tier_drain).
 *
 * Shared state per index (PmiSlot): a bit per lane for its writer, its
 * applier, whether it may hold records not applied, and whether it keeps
 * applied records not yet reclaimed.  A writer holds a lane for one insert;
 * an applier (a replay worker, or a backend draining) for one batch.  A
 * lane's applied records are reclaimed (their segments freed) once no
 * reader can still be copying them (two reader epochs later) and the WAL
 * they name is flushed (they are notes until then).
 *
 * Replay workers (up to pm_index.tier_workers) are dynamic background
 * workers: a tiered insert starts worker 0 if it is not running, worker 0
 * starts the others as its adaptive scaling needs them (once per round, by
 * the ratio of records appended to records applied, the paper's rule), and
 * a worker with nothing to do for TIER_IDLE_EXIT_MS exits, so that idle
 * servers keep their worker slots.  A writer wakes worker 0 when a lane
 * starts to wait.  Every process that applies does so under the
 * structure's own concurrency control.
 */
#include "pm_index.h"

#include "access/xlog.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/proc.h"
#include "tcop/tcopprot.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/timestamp.h"

#include "tips/olog.h"

int			pmi_tier_workers = 2;
int			pmi_tier_lane_kb = 4096;
bool		pmi_debug_tier_pause = false;

/* how long a worker sleeps with nothing to do; the adaptive round */
#define TIER_NAP_MS			50
#define TIER_ROUND_MS		100
/* how long a worker stays with nothing to do */
#define TIER_IDLE_EXIT_MS	10000
/* how often a structure durable at its checkpoints is checkpointed while written */
#define TIER_CHECKPOINT_MS	100

/* The insert being appended: pmi_insert_logged calls tier_append in its critical section. */
typedef struct TierAppend
{
	PmiSlot    *slot;
	const pm_olog *olog;
	int			lane;
	StringInfoData record;
	uint64		host_pos;
	bool		lane_was_idle;	/* the append made the lane wait for replay */
} TierAppend;

static TierAppend appending;

static uint32
lane_segments(void)
{
	return (uint32) Max(2, ((uint64) pmi_tier_lane_kb << 10) / PM_OLOG_SEGMENT);
}

/* The pool's log, made on the first tiered insert (under the slot's lock). */
static const pm_olog *
olog_for_insert(PmiIndex *h, const char *name)
{
	const pm_olog *o = pm_olog_of(h->pool);
	PmiSlot    *s = pmi_slot(h->slotno);

	if (o != NULL)
		return o;
	LWLockAcquire(&s->lock, LW_EXCLUSIVE);
	o = pm_olog_of(h->pool);
	if (o == NULL)
	{
		pm_alloc	a;
		pm_error	err;

		pm_alloc_attach_pool(&a, h->pool);
		if (pm_olog_create(h->pool, &a, PMI_TIER_LANES, lane_segments(), &err) != PM_OK)
		{
			LWLockRelease(&s->lock);
			pmi_report_core_error(ERROR, &err, name);
		}
		o = pm_olog_of(h->pool);
	}
	LWLockRelease(&s->lock);
	return o;
}

/* Take a free lane for one insert, the first from start on; -1 if all are busy. */
static int
claim_writer_lane(PmiSlot *s, int start)
{
	for (int i = 0; i < PMI_TIER_LANES; i++)
	{
		int			lane = (start + i) % PMI_TIER_LANES;

		if ((pg_atomic_read_u64(&s->tier_writers) & pmi_tier_lane_bit(lane)) == 0 &&
			(pg_atomic_fetch_or_u64(&s->tier_writers, pmi_tier_lane_bit(lane)) & pmi_tier_lane_bit(lane)) == 0)
			return lane;
	}
	return -1;
}

/*
 * Start replay worker id unless it runs (or is starting): a dynamic
 * background worker, so that workers take max_worker_processes slots only
 * while tiered indexes are written.  False if no slot is free.
 */
static bool
start_worker(int id)
{
	static TimestampTz failed_at = 0;	/* this process's last failure */
	char		name[BGW_MAXLEN];
	uint32		expected = 0;

	if (pg_atomic_read_u32(&pmi_shared->tier_running[id]) != 0)
	{
		/* started long ago and never running: it failed to start */
		if (pmi_shared->tier_latch[id] != NULL ||
			!TimestampDifferenceExceeds(pmi_shared->tier_started_at[id], GetCurrentTimestamp(),
										TIER_IDLE_EXIT_MS))
			return true;
		expected = 1;
		(void) pg_atomic_compare_exchange_u32(&pmi_shared->tier_running[id], &expected, 0);
		expected = 0;
	}
	/* no slot a moment ago: do not try (and log) on every insert */
	if (failed_at != 0 &&
		!TimestampDifferenceExceeds(failed_at, GetCurrentTimestamp(), TIER_IDLE_EXIT_MS))
		return false;
	if (!pg_atomic_compare_exchange_u32(&pmi_shared->tier_running[id], &expected, 1))
		return true;
	pmi_shared->tier_started_at[id] = GetCurrentTimestamp();
	snprintf(name, sizeof(name), "pm_index tier replay %d", id);
	if (!pmi_start_database_worker(InvalidOid, "pmi_tier_main", name, "pm_index tier replay", &id,
								   sizeof(id), NULL))
	{
		pg_atomic_write_u32(&pmi_shared->tier_running[id], 0);
		failed_at = GetCurrentTimestamp();
		ereport(LOG,
				(errmsg("pm_index: could not start a replay worker for tiered indexes"),
				 errhint("Raise max_worker_processes; meanwhile tiered indexes insert directly.")));
		return false;
	}
	return true;
}

/* PmiEntryChangeFn: the append of the prepared record, in the critical section. */
static pm_errcode
tier_append(PmiIndex *h, const void *entry, pm_error *err)
{
	TierAppend *t = &appending;
	PmiSlot    *s = t->slot;

	pm_olog_append(h->pool, t->olog, t->lane, t->record.data, t->record.len, t->host_pos);
	pg_atomic_fetch_add_u64(&s->tier_appended, 1);
	t->lane_was_idle = (pg_atomic_fetch_or_u64(&s->tier_pending, pmi_tier_lane_bit(t->lane)) &
						pmi_tier_lane_bit(t->lane)) == 0;
	if (t->lane_was_idle)
		s->tier_lane[t->lane].pending_since = GetCurrentTimestamp();
	return PM_OK;
}

/*
 * aminsert's tiered path: append the entry (with its reconciliation note)
 * to a lane of the index's operation log and WAL-log it, as one unit.
 * False, with nothing done, when the insert must go straight into the
 * structure: the index is not tiered or is temporary, no worker replays,
 * the record is too large for a lane, or every lane is busy or full.
 */
bool
pmi_tier_insert(Relation index, PmiIndex *h, Relation heap, const PmiNote *note,
				const void *entry)
{
	TierAppend *t = &appending;
	PmiSlot    *s = pmi_slot(h->slotno);
	pm_error	err;
	volatile pm_errcode rc = PM_OK;
	volatile TimestampTz waiting_since = 0;

	if (pmi_tier_workers == 0 || RelationUsesLocalBuffers(index) ||
		!pmi_index_tiered(index, h->ops) || !start_worker(0))
		return false;
	if (t->record.data == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);

		initStringInfo(&t->record);
		MemoryContextSwitchTo(old);
	}
	resetStringInfo(&t->record);
	appendBinaryStringInfo(&t->record, (const char *) note, sizeof(PmiNote));
	h->ops->log_entry(h->pool, entry, &t->record);
	if (t->record.len > PM_OLOG_MAX_RECORD)
		return false;
	t->olog = olog_for_insert(h, RelationGetRelationName(index));
	t->slot = s;
	t->host_pos = RelationNeedsWAL(heap) && XactLastRecEnd != InvalidXLogRecPtr ?
		XactLastRecEnd : 0;
	if (h->tier_alloc_pool != h->pool)
	{
		pm_alloc_attach_pool(&h->tier_alloc, h->pool);
		h->tier_alloc_pool = h->pool;
	}
	for (int start = MyProcNumber % PMI_TIER_LANES, full = 0;;)
	{
		t->lane = claim_writer_lane(s, start);
		rc = PM_ERR_LIMIT;
		if (t->lane >= 0)
		{
			PG_TRY();
			{
				rc = pm_olog_reserve(h->pool, &h->tier_alloc, t->olog, t->lane, t->record.len, &err);
				if (rc == PM_OK)
					pmi_insert_logged(index, h, entry, tier_append);
			}
			PG_FINALLY();
			{
				pg_atomic_fetch_and_u64(&s->tier_writers, ~pmi_tier_lane_bit(t->lane));
			}
			PG_END_TRY();
		}
		/* the lane's bit is set: a worker 0 that is exiting has seen it, or is gone */
		pg_memory_barrier();
		if (rc == PM_OK && pg_atomic_read_u32(&pmi_shared->tier_running[0]) == 0)
			(void) start_worker(0);
		/* a worker that replays goes on while lanes wait; one that sleeps is woken */
		if (rc == PM_ERR_LIMIT || (rc == PM_OK && t->lane_was_idle))
			pmi_tier_wake_worker(0);
		if (rc != PM_ERR_LIMIT)
			break;

		/*
		 * Every lane busy, or this one full.  A structure durable by itself
		 * takes the insert directly; one durable at its checkpoints tries
		 * the other lanes, then waits for the workers (an insert without the
		 * log would checkpoint it).
		 */
		if (h->ops->checkpoint == NULL)
			return false;
		/* a full lane: the next one, until every lane was tried */
		if (t->lane >= 0 && ++full < PMI_TIER_LANES)
		{
			start = (t->lane + 1) % PMI_TIER_LANES;
			continue;
		}
		full = 0;
		if (waiting_since == 0)
			waiting_since = GetCurrentTimestamp();
		else if (TimestampDifferenceExceeds(waiting_since, GetCurrentTimestamp(), TIER_IDLE_EXIT_MS))
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_RESOURCES),
					 errmsg("the operation log of index \"%s\" is full",
							RelationGetRelationName(index)),
					 errdetail("No lane of it has had room for this insert for %d seconds: the replay workers are not applying it.",
							   TIER_IDLE_EXIT_MS / 1000),
					 errhint("The server log says why (a full filesystem under the pool, no free "
							 "max_worker_processes slot); a larger pm_index.tier_log_size gives "
							 "bursts more room.")));
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, 1,
						 PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
	if (rc != PM_OK)
		pmi_report_core_error(ERROR, &err, RelationGetRelationName(index));
	return true;
}

/*
 * Copy the records of every lane that are not applied, then hand each to fn
 * (its note, its entry as log_entry wrote it).  Copied before the caller
 * reads the structure: a record applied meanwhile is then seen in both.
 */
void
pmi_tier_foreach_pending(PmiIndex *h, PmiTierRecordFn fn, void *arg)
{
	PmiSlot    *s = pmi_slot(h->slotno);
	const pm_olog *o;
	uint64		lanes;

	pg_memory_barrier();
	lanes = pg_atomic_read_u64(&s->tier_pending);
	if (lanes == 0 || (o = pm_olog_of(h->pool)) == NULL)
		return;
	for (int lane = 0; lane < PMI_TIER_LANES; lane++)
	{
		pm_olog_lane *l;
		uint64		tail,
					pos;
		char	   *copy,
				   *end;
		pm_olog_cursor c;
		pm_olog_record rec;
		pm_error	err = {0};

		if ((lanes & pmi_tier_lane_bit(lane)) == 0 || lane >= (int) o->nlanes)
			continue;
		l = pm_olog_lane_at(h->pool, o, lane);
		tail = pm_load(&l->tail);
		/* below it the structure has them (durable or not yet) */
		pos = pmi_tier_lane_from(h->slotno, h->pool, o, lane);
		if (tail <= pos)
			continue;
		/* a lane's bytes bound its records' with their lengths */
		copy = end = palloc(tail - pos);
		pm_epoch_enter(pmi_epoch());
		/* applied again: what was applied before this section may be freed */
		pm_olog_cursor_init(&c, Max(pos, pm_load(&l->applied)));
		while (pm_olog_next(h->pool, o, lane, &c, tail, &rec, &err))
		{
			memcpy(end, &rec.len, sizeof(uint32));
			memcpy(end + sizeof(uint32), rec.data, rec.len);
			end += MAXALIGN(sizeof(uint32) + rec.len);
		}
		pm_epoch_exit(pmi_epoch());
		if (err.code != PM_OK)
			pmi_report_core_error(ERROR, &err, NULL);
		for (char *p = copy; p < end;)
		{
			uint32		len;
			PmiNote		note;
			PmiLoggedEntry entry;

			memcpy(&len, p, sizeof(uint32));
			if (pmi_tier_record_parts(h->pool, p + sizeof(uint32), len, &note, &entry,
									  &err) != PM_OK)
				pmi_report_core_error(ERROR, &err, NULL);
			fn(arg, &note, entry.data, entry.len);
			p += MAXALIGN(sizeof(uint32) + len);
		}
		pfree(copy);
	}
}

/*
 * After a batch: a lane with nothing left to apply leaves the pending set
 * (and is put back if a writer appended meanwhile); the applied records
 * become reclaimable.
 */
static void
after_apply(PmiSlot *s, pm_pool *pool, const pm_olog *o, int lane, uint64 applied, int n)
{
	pm_olog_lane *l = pm_olog_lane_at(pool, o, lane);

	pg_atomic_fetch_add_u64(&s->tier_applied, n);
	if (pm_load(&l->tail) == applied)
	{
		pg_atomic_fetch_and_u64(&s->tier_pending, ~pmi_tier_lane_bit(lane));
		if (pm_load(&l->tail) != applied)
			pg_atomic_fetch_or_u64(&s->tier_pending, pmi_tier_lane_bit(lane));
	}
	else
		s->tier_lane[lane].pending_since = GetCurrentTimestamp();
	if (applied > pm_load(&l->reclaimed))
		pg_atomic_fetch_or_u64(&s->tier_unreclaimed, pmi_tier_lane_bit(lane));
}

/*
 * Reclaim what the lane's applier may: the position noted by an earlier
 * call, once two reader epochs have passed since and the WAL its records
 * name is flushed (flushed here when the lane is half full, or when force);
 * then note the lane's applied position for a later call.  By the lane's
 * applier, on a server not in recovery.
 */
static void
reclaim_lane(PmiSlot *s, pm_pool *pool, const pm_olog *o, int lane, bool force)
{
	PmiTierLane *tl = &s->tier_lane[lane];
	pm_olog_lane *l = pm_olog_lane_at(pool, o, lane);
	pm_epoch_handle *eh = pmi_epoch();
	uint64		reclaimed = pm_load(&l->reclaimed);
	uint64		applied = pm_load(&l->applied);

	if (tl->reclaim_upto > reclaimed)
	{
		bool		half_full = pm_load(&l->tail) - reclaimed >
			(uint64) o->max_segments * PM_OLOG_SEGMENT_DATA / 2;

		(void) pm_epoch_reclaim(eh);
		if ((force || half_full) && GetFlushRecPtr(NULL) < tl->reclaim_wal)
			XLogFlush(tl->reclaim_wal);
		if (pm_epoch_current(eh->dom) >= tl->reclaim_epoch + 2 &&
			GetFlushRecPtr(NULL) >= tl->reclaim_wal)
		{
			pm_alloc	a;

			pm_alloc_attach_pool(&a, pool);
			pm_olog_reclaim(pool, &a, o, lane, tl->reclaim_upto);
			reclaimed = tl->reclaim_upto;
		}
	}
	if (tl->reclaim_upto <= reclaimed && applied > reclaimed)
	{
		tl->reclaim_upto = applied;
		tl->reclaim_wal = GetXLogInsertRecPtr();
		tl->reclaim_epoch = pm_epoch_current(eh->dom);
	}
	if (applied == reclaimed)
		pg_atomic_fetch_and_u64(&s->tier_unreclaimed, ~pmi_tier_lane_bit(lane));
}

/* The lanes this process applies, in one slot at a time. */
static PmiSlot *applier_slot = NULL;
static uint64 applier_lanes = 0;

static void
release_applier_lane(PmiSlot *s, int lane)
{
	applier_lanes &= ~pmi_tier_lane_bit(lane);
	pg_atomic_fetch_and_u64(&s->tier_appliers, ~pmi_tier_lane_bit(lane));
}

/* A process that exits (FATAL skips PG_FINALLY) gives its lanes up. */
static void
release_applier_lanes_at_exit(int code, Datum arg)
{
	if (applier_lanes != 0)
		pg_atomic_fetch_and_u64(&applier_slot->tier_appliers, ~applier_lanes);
	applier_lanes = 0;
}

/*
 * Hold a lane as its applier; false if another process does, or one
 * excludes every applier (pmi_tier_exclusive_begin).  Each side sets its
 * word and then reads the other's, both full barriers: one of them sees
 * the other.
 */
static bool
claim_applier_lane(PmiSlot *s, int lane)
{
	static bool exit_hook = false;

	if (!exit_hook)
	{
		before_shmem_exit(release_applier_lanes_at_exit, 0);
		exit_hook = true;
	}
	if ((pg_atomic_fetch_or_u64(&s->tier_appliers, pmi_tier_lane_bit(lane)) & pmi_tier_lane_bit(lane)) != 0)
		return false;
	Assert(applier_lanes == 0 || applier_slot == s);
	applier_slot = s;
	applier_lanes |= pmi_tier_lane_bit(lane);
	if (pg_atomic_read_u32(&s->tier_exclusive) != 0)
	{
		release_applier_lane(s, lane);
		return false;
	}
	return true;
}

/*
 * An insert that cannot wait in the log of a structure made durable by its
 * checkpoints: straight into it with every applier excluded, and durable
 * before the inserting transaction can commit.  A temporary index's is
 * made durable by the next checkpoint a full log asks for: a crash takes
 * temporary relations with it.
 */
void
pmi_tier_insert_direct(Relation index, PmiIndex *h, const void *entry, PmiEntryChangeFn insert)
{
	bool		temporary = RelationUsesLocalBuffers(index);

	if (!temporary)
		pmi_tier_exclusive_begin(h->slotno);
	PG_TRY();
	{
		pm_error	err;

		pmi_insert_logged(index, h, entry, insert);
		if (!temporary && pmi_tier_checkpoint_held(h->slotno, h->pool, h->ops, h->am_state,
												   &err) != PM_OK)
			pmi_report_core_error(ERROR, &err, RelationGetRelationName(index));
	}
	PG_FINALLY();
	{
		if (!temporary)
			pmi_tier_exclusive_end(h->slotno);
	}
	PG_END_TRY();
}

/*
 * Apply every record appended to the index's log before this call, waiting
 * for the workers that hold lanes: before VACUUM deletes entries (an entry
 * it must delete may still wait in the log), before the verifier compares
 * the structure with the heap.  A failure to apply is an ERROR.
 */
void
pmi_tier_drain(PmiIndex *h, const char *name)
{
	PmiSlot    *s = pmi_slot(h->slotno);
	const pm_olog *o = pm_olog_of(h->pool);

	if (o == NULL)
		return;
	for (int lane = 0; lane < (int) o->nlanes && lane < PMI_TIER_LANES; lane++)
	{
		pm_olog_lane *l = pm_olog_lane_at(h->pool, o, lane);
		uint64		upto = pm_load(&l->tail);

		while (pmi_tier_lane_from(h->slotno, h->pool, o, lane) < upto)
		{
			pm_error	err;
			uint64		applied;
			int			n;

			CHECK_FOR_INTERRUPTS();
			if (!claim_applier_lane(s, lane))
			{
				pg_usleep(1000L);
				continue;
			}
			PG_TRY();
			{
				n = pmi_tier_apply_lane(h->slotno, h->pool, h->ops, h->am_state, o, lane,
										pmi_tier_lane_from(h->slotno, h->pool, o, lane),
										&applied, &err);
				if (err.code == PM_ERR_LIMIT && h->ops->checkpoint != NULL)
					n = 0;		/* checkpointed below, then applied again */
				else if (err.code == PM_OK)
				{
					pmi_tier_lane_applied(h->slotno, h->pool, h->ops, o, lane, applied);
					after_apply(s, h->pool, o, lane, applied, n);
				}
			}
			PG_FINALLY();
			{
				release_applier_lane(s, lane);
			}
			PG_END_TRY();
			if (err.code == PM_ERR_LIMIT && h->ops->checkpoint != NULL)
				pmi_tier_checkpoint(h->slotno, h->pool, h->ops, h->am_state, name);
			else if (err.code != PM_OK)
				pmi_report_core_error(ERROR, &err, name);
		}
	}
	/* what the caller does next needs it durable: VACUUM deletes, a copy copies */
	if (h->ops->checkpoint != NULL && pg_atomic_read_u32(&s->tier_uncheckpointed) != 0)
		pmi_tier_checkpoint(h->slotno, h->pool, h->ops, h->am_state, name);
}

/*
 * A storage command's copy of a pool (pmi_pool_copy): a tiered index's log
 * is applied first and the replay workers kept away while the file is
 * copied, so the copy is of a pool no process writes.  The index is locked
 * against inserts; a move has released the index's slot already.
 */
void
pmi_tier_copy_pool(RelFileLocatorBackend from, RelFileLocatorBackend to, bool move)
{
	int			slotno = move ? -1 : pmi_registry_find(from);
	PmiSlot    *s;

	if (slotno < 0)
	{
		pmi_pool_copy(from, to, move);
		return;
	}
	s = pmi_slot(slotno);
	pmi_tier_close(slotno);
	PG_TRY();
	{
		if (s->state == PMI_SLOT_READY && pg_atomic_read_u64(&s->tier_pending) != 0)
		{
			char		name[64];

			snprintf(name, sizeof(name), "with relfilenode %u", from.locator.relNumber);
			pmi_tier_drain(pmi_index_open_for_replay(from, pmi_am_of_number(s->am), name), name);
		}
		pmi_pool_copy(from, to, move);
	}
	PG_FINALLY();
	{
		pg_atomic_write_u32(&s->tier_closed, 0);
	}
	PG_END_TRY();
}

/*
 * Replay what waits in one lane of the index in registry slot s, whose
 * applier this process is: a batch, then what may be reclaimed.  Returns
 * how many records it applied; a failure to apply is logged.
 */
static int
replay_lane(int slotno, int lane)
{
	PmiSlot    *s = pmi_slot(slotno);
	char		name[64];
	PmiIndex   *h;
	const pm_olog *o;
	pm_error	err;
	uint64		applied;
	int			n;

	snprintf(name, sizeof(name), "with relfilenode %u", s->rlocator.locator.relNumber);
	h = pmi_index_open_for_replay(s->rlocator, pmi_am_of_number(s->am), name);
	o = pm_olog_of(h->pool);
	if (o == NULL)
		return 0;
	n = pmi_tier_apply_lane(slotno, h->pool, h->ops, h->am_state, o, lane,
							pmi_tier_lane_from(slotno, h->pool, o, lane), &applied, &err);
	if (err.code == PM_ERR_LIMIT && h->ops->checkpoint != NULL)
	{
		/* its UNO logs are full: checkpointed at once, applied again after */
		pg_atomic_write_u32(&s->tier_uncheckpointed, 1);
		s->tier_checkpointed_at = 0;
		return 0;
	}
	if (err.code != PM_OK)
	{
		static TimestampTz logged_at = 0;

		/* it is tried again every round: said once a while */
		if (TimestampDifferenceExceeds(logged_at, GetCurrentTimestamp(), TIER_IDLE_EXIT_MS))
		{
			pmi_report_core_error(LOG, &err, name);
			logged_at = GetCurrentTimestamp();
		}
		return 0;
	}
	pmi_tier_lane_applied(slotno, h->pool, h->ops, o, lane, applied);
	after_apply(s, h->pool, o, lane, applied, n);
	reclaim_lane(s, h->pool, o, lane, false);
	return n;
}

/* replay_lane, then give the lane up, also after an ERROR. */
static int
replay_held_lane(int slotno, int lane)
{
	PmiSlot    *s = pmi_slot(slotno);
	volatile int n = 0;

	PG_TRY();
	{
		n = replay_lane(slotno, lane);
	}
	PG_FINALLY();
	{
		release_applier_lane(s, lane);
	}
	PG_END_TRY();
	return n;
}

/*
 * A worker's checkpoint of a structure that UNO logging makes durable,
 * unless another process excludes its appliers or it is going away.  A
 * failure is logged; the next round tries again.
 */
static void
checkpoint_slot(int slotno, uint32 generation)
{
	PmiSlot    *s = pmi_slot(slotno);
	char		name[64];

	if (!pmi_tier_exclusive_try(slotno))
		return;
	/* a dropped index's closer waits for the exclusion to end (pmi_tier_close) */
	if (pg_atomic_read_u32(&s->tier_closed) != 0 || s->state != PMI_SLOT_READY ||
		s->generation != generation)
	{
		pmi_tier_exclusive_end(slotno);
		return;
	}
	snprintf(name, sizeof(name), "with relfilenode %u", s->rlocator.locator.relNumber);
	PG_TRY();
	{
		PmiIndex   *h = pmi_index_open_for_replay(s->rlocator, pmi_am_of_number(s->am), name);
		pm_error	err;

		if (pmi_tier_checkpoint_held(slotno, h->pool, h->ops, h->am_state, &err) != PM_OK)
			pmi_report_core_error(LOG, &err, name);
	}
	PG_CATCH();
	{
		pmi_tier_exclusive_end(slotno);
		EmitErrorReport();
		FlushErrorState();
		return;
	}
	PG_END_TRY();
	pmi_tier_exclusive_end(slotno);
}

/*
 * One replay worker's pass over the indexes: each lane of a tiered index
 * with records waiting, or applied records to reclaim, that no other
 * process holds.  Returns how many records it applied.
 */
static int64
replay_round(MemoryContext cxt)
{
	int64		total = 0;

	for (int slotno = 0; slotno < pmi_shared->nindexes; slotno++)
	{
		PmiSlot    *s = pmi_slot(slotno);
		uint32		generation = s->generation;
		uint64		lanes;

		pg_read_barrier();
		lanes = pg_atomic_read_u64(&s->tier_pending) | pg_atomic_read_u64(&s->tier_unreclaimed);
		for (int lane = 0; lanes != 0 && lane < PMI_TIER_LANES; lane++)
		{
			if ((lanes & pmi_tier_lane_bit(lane)) == 0 || !claim_applier_lane(s, lane))
				continue;

			/*
			 * an index being dropped waits for its appliers: none starts now,
			 * nor on a slot taken by another index since its lanes were read
			 */
			pg_memory_barrier();
			if (pg_atomic_read_u32(&s->tier_closed) != 0 || s->state != PMI_SLOT_READY ||
				s->generation != generation)
			{
				release_applier_lane(s, lane);
				break;
			}
			total += replay_held_lane(slotno, lane);
			MemoryContextReset(cxt);
			CHECK_FOR_INTERRUPTS();
		}
		if (pg_atomic_read_u32(&s->tier_uncheckpointed) != 0 &&
			TimestampDifferenceExceeds(s->tier_checkpointed_at, GetCurrentTimestamp(),
									   TIER_CHECKPOINT_MS))
		{
			checkpoint_slot(slotno, generation);
			MemoryContextReset(cxt);
		}
	}
	return total;
}

/*
 * Worker 0's adaptive scaling, once per round: more workers while records
 * are appended faster than applied, fewer while less than half as fast
 * (the paper's rule, one at a time below 4 and by 4 above).
 */
static void
adapt_workers(uint64 *appended_before, uint64 *applied_before)
{
	uint64		appended = 0,
				applied = 0;
	uint32		active = pg_atomic_read_u32(&pmi_shared->tier_active);
	uint32		step = active < 4 ? 1 : 4;
	uint64		produced,
				consumed;

	for (int slotno = 0; slotno < pmi_shared->nindexes; slotno++)
	{
		PmiSlot    *s = pmi_slot(slotno);

		appended += pg_atomic_read_u64(&s->tier_appended);
		applied += pg_atomic_read_u64(&s->tier_applied);
	}
	produced = appended - Min(appended, *appended_before);
	consumed = applied - Min(applied, *applied_before);
	*appended_before = appended;
	*applied_before = applied;
	if (produced > consumed && active < (uint32) pmi_tier_workers)
		active = Min(active + step, (uint32) pmi_tier_workers);
	else if (consumed > 0 ? produced * 2 < consumed : produced == 0)
		active = Max(1, active - Min(active - 1, step));
	pg_atomic_write_u32(&pmi_shared->tier_active, active);
	for (uint32 id = 1; id < active; id++)
	{
		if (start_worker(id))
			pmi_tier_wake_worker(id);
	}
}

/* Whether any tiered index has records waiting or applied records to reclaim. */
static bool
any_lane_busy(void)
{
	for (int slotno = 0; slotno < pmi_shared->nindexes; slotno++)
	{
		PmiSlot    *s = pmi_slot(slotno);

		if ((pg_atomic_read_u64(&s->tier_pending) | pg_atomic_read_u64(&s->tier_unreclaimed)) != 0 ||
			pg_atomic_read_u32(&s->tier_uncheckpointed) != 0)
			return true;
	}
	return false;
}

/* This worker gives up its number (unless a newer worker has it). */
static void
worker_exit(int code, Datum arg)
{
	int			id = DatumGetInt32(arg);

	if (pmi_shared->tier_latch[id] == MyLatch)
	{
		pmi_shared->tier_latch[id] = NULL;
		pg_atomic_write_u32(&pmi_shared->tier_running[id], 0);
	}
}

/* A replay worker's main loop (bgw_extra: its number). */
void
pmi_tier_main(Datum arg)
{
	int			id;
	MemoryContext cxt;
	uint64		appended_before = 0,
				applied_before = 0;
	TimestampTz round_start = GetCurrentTimestamp();
	TimestampTz last_work = round_start;

	memcpy(&id, MyBgworkerEntry->bgw_extra, sizeof(id));
	before_shmem_exit(worker_exit, Int32GetDatum(id));
	pqsignal(SIGTERM, die);
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	BackgroundWorkerUnblockSignals();
	/* connected to no database, as the logical replication launcher: in pg_stat_activity */
	BackgroundWorkerInitializeConnection(NULL, NULL, 0);
	pgstat_report_appname("pm_index tier replay");
	pmi_shared->tier_latch[id] = MyLatch;
	cxt = AllocSetContextCreate(TopMemoryContext, "pm_index tier replay", ALLOCSET_DEFAULT_SIZES);
	for (;;)
	{
		int64		applied = 0;

		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
		if ((uint32) id < pg_atomic_read_u32(&pmi_shared->tier_active) && !pmi_debug_tier_pause)
		{
			MemoryContext old = MemoryContextSwitchTo(cxt);

			applied = replay_round(cxt);
			MemoryContextSwitchTo(old);
		}
		if (id == 0 && TimestampDifferenceExceeds(round_start, GetCurrentTimestamp(), TIER_ROUND_MS))
		{
			adapt_workers(&appended_before, &applied_before);
			round_start = GetCurrentTimestamp();
		}
		if (applied > 0)
			last_work = GetCurrentTimestamp();
		else
		{
			/*
			 * idle long enough: exit (a writer starts a worker again), unless
			 * something waits that this worker would apply or reclaim
			 */
			if (TimestampDifferenceExceeds(last_work, GetCurrentTimestamp(), TIER_IDLE_EXIT_MS) &&
				((uint32) id >= pg_atomic_read_u32(&pmi_shared->tier_active) || !any_lane_busy()))
			{
				uint32		expected = 0;

				/*
				 * A writer sets its lane's bit, then looks for worker 0: either
				 * it finds none and starts one, or worker 0 sees the bit here.
				 */
				worker_exit(0, Int32GetDatum(id));
				pg_memory_barrier();
				if (id != 0 || !any_lane_busy() ||
					!pg_atomic_compare_exchange_u32(&pmi_shared->tier_running[id], &expected, 1))
					proc_exit(0);
				pmi_shared->tier_latch[id] = MyLatch;
				last_work = GetCurrentTimestamp();
			}
			pmi_pool_forget_removed();
			(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
							 TIER_NAP_MS, PG_WAIT_EXTENSION);
			ResetLatch(MyLatch);
		}
	}
}
