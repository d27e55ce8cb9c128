/*
 * pmi_interlock.c
 *	  Scans against VACUUM: no heap item an index scan may still return from
 *	  its copied entries is freed before the scan moves on.
 *
 * A scan copies a node's entries into its own batch and returns them one by
 * one.  Meanwhile VACUUM may delete an entry of that batch, and once
 * ambulkdelete returns, free the heap item the entry names and mark the heap
 * page all-visible.  An index-only scan would then return the deleted row's
 * values without visiting the heap (a later row in the item is no better),
 * and a scan under a non-MVCC snapshot (a unique or exclusion check) would
 * take a later row in that item for the entry's.  btree prevents both by
 * keeping its leaf page pinned, which VACUUM's cleanup lock waits for;
 * plain and bitmap scans under an MVCC snapshot need no interlock (a later
 * row in the item is invisible to them), as in btree.
 *
 * Here each index's registry slot has a vacuum epoch and two hold counters,
 * one per epoch parity.  A scan that needs the interlock holds the counter
 * of the current epoch from before it reads a batch until it reads the next
 * one (or ends); ambulkdelete, after its deletes, advances the epoch and
 * waits until the previous parity's holds are gone.  A hold taken before
 * the advance is waited for; one taken after it reads entries the deletes
 * have already removed.  An idle cursor therefore holds VACUUM of its index,
 * as a pinned btree page does.  Holds are also released when the
 * (sub)transaction that took them aborts, since an aborted scan never ends.
 *
 * On a hot standby, replay of VACUUM's deletes (pmi_redo.c) waits the same
 * way, as recovery waits for a buffer pin: up to max_standby_streaming_delay
 * (max_standby_archive_delay for archived WAL) after the record arrived, then
 * it cancels the transactions of the backends that hold scans in the index's
 * database with a recovery conflict.  A per-backend count of holds in shared
 * memory says which backends those are.
 */
#include "pm_index.h"

#include "access/relscan.h"
#include "access/xact.h"
#include "access/xlogrecovery.h"
#include "miscadmin.h"
#include "postmaster/startup.h"
#include "storage/latch.h"
#include "storage/proc.h"
#include "storage/procarray.h"
#include "storage/procsignal.h"
#include "storage/standby.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/wait_event.h"

/* A hold of this backend: the slot counter it adds to, and who took it. */
typedef struct ScanHold
{
	uint64		id;				/* 0: unused */
	PmiSlot    *slot;
	uint64		epoch;
	SubTransactionId subxid;
} ScanHold;

static ScanHold *holds;
static int	nholds;
static uint64 last_hold_id;

static pg_atomic_uint32 *
counter(PmiSlot *slot, uint64 epoch)
{
	return &slot->scan_holds[epoch & 1];
}

/* How many holds the backend with this PGPROC number has. */
static pg_atomic_uint32 *
proc_holds(int pgprocno)
{
	return (pg_atomic_uint32 *) ((char *) pmi_shared + pmi_shared->proc_holds_offset) + pgprocno;
}

/* Add to the counter of the current epoch; returns that epoch. */
static uint64
add_hold(PmiSlot *slot)
{
	for (;;)
	{
		uint64		epoch = pg_atomic_read_u64(&slot->vacuum_epoch);

		pg_atomic_fetch_add_u32(counter(slot, epoch), 1);
		/* an advance after this read waits for the hold just added */
		if (pg_atomic_read_u64(&slot->vacuum_epoch) == epoch)
			return epoch;
		pg_atomic_fetch_sub_u32(counter(slot, epoch), 1);
	}
}

static ScanHold *
find_hold(const PmiScanHold *hold)
{
	if (hold->id == 0 || hold->index < 0 || hold->index >= nholds ||
		holds[hold->index].id != hold->id)
		return NULL;
	return &holds[hold->index];
}

static void
drop_hold(ScanHold *h)
{
	pg_atomic_fetch_sub_u32(counter(h->slot, h->epoch), 1);
	pg_atomic_fetch_sub_u32(proc_holds(MyProcNumber), 1);
	h->id = 0;
}

/* Does this scan need holds: does it return index data, or use a non-MVCC snapshot? */
bool
pmi_scan_needs_hold(IndexScanDesc scan)
{
	return scan->xs_want_itup || !IsMVCCSnapshot(scan->xs_snapshot);
}

/*
 * Take a hold on index h's current vacuum epoch before reading a batch, or
 * move the scan's hold there (releasing the older one after).
 */
void
pmi_scan_hold(PmiIndex *index, PmiScanHold *hold)
{
	PmiSlot    *slot = pmi_slot(index->slotno);
	ScanHold   *h = find_hold(hold);

	if (h != NULL)
	{
		uint64		old = h->epoch;

		if (h->slot == slot && pg_atomic_read_u64(&slot->vacuum_epoch) == old)
			return;
		h->epoch = add_hold(slot);
		pg_atomic_fetch_sub_u32(counter(h->slot, old), 1);
		h->slot = slot;
		return;
	}
	for (hold->index = 0; hold->index < nholds; hold->index++)
		if (holds[hold->index].id == 0)
			break;
	if (hold->index == nholds)
	{
		int			n = Max(8, nholds * 2);

		holds = holds == NULL ?
			MemoryContextAllocZero(TopMemoryContext, n * sizeof(ScanHold)) :
			repalloc(holds, n * sizeof(ScanHold));
		MemSet(holds + nholds, 0, (n - nholds) * sizeof(ScanHold));
		nholds = n;
	}
	h = &holds[hold->index];
	h->slot = slot;
	h->subxid = GetCurrentSubTransactionId();
	pg_atomic_fetch_add_u32(proc_holds(MyProcNumber), 1);
	h->epoch = add_hold(slot);
	h->id = hold->id = ++last_hold_id;
}

/* The scan is done with its batches (no-op without a hold). */
void
pmi_scan_release(PmiScanHold *hold)
{
	ScanHold   *h = find_hold(hold);

	if (h != NULL)
		drop_hold(h);
	hold->id = 0;
}

/*
 * ambulkdelete, after its deletes: advance the epoch and wait until no scan
 * holds a batch it may have read before them.
 */
void
pmi_wait_for_scans(PmiIndex *index)
{
	PmiSlot    *slot = pmi_slot(index->slotno);
	uint64		epoch;

	/*
	 * a full barrier: the deletes above are visible before the counter is
	 * read
	 */
	epoch = pg_atomic_fetch_add_u64(&slot->vacuum_epoch, 1);
	while (pg_atomic_read_u32(counter(slot, epoch)) != 0)
	{
		CHECK_FOR_INTERRUPTS();
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, 10,
						 PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
	}
}

/* Cancel the transactions of the backends in database dbid that hold scans. */
static void
cancel_holders(Oid dbid)
{
	LWLockAcquire(ProcArrayLock, LW_SHARED);
	for (uint32 i = 0; i < pmi_shared->nslots; i++)
	{
		PGPROC	   *proc = &ProcGlobal->allProcs[i];

		if (pg_atomic_read_u32(proc_holds(i)) != 0 && proc->pid != 0 && proc->databaseId == dbid)
			(void) SendProcSignal(proc->pid, PROCSIG_RECOVERY_CONFLICT_SNAPSHOT,
								  PMI_PROCSIGNAL_TARGET(proc));
	}
	LWLockRelease(ProcArrayLock);
}

/*
 * The startup process, after replaying deletes from index in database dbid:
 * the same wait, bounded as recovery bounds a wait for a buffer pin, then
 * the holders are cancelled (again every second until their holds are gone).
 */
void
pmi_wait_for_scans_in_recovery(PmiIndex *index, Oid dbid)
{
	PmiSlot    *slot = pmi_slot(index->slotno);
	uint64		epoch = pg_atomic_fetch_add_u64(&slot->vacuum_epoch, 1);
	TimestampTz deadline = 0;
	int			delay = -1;

	while (pg_atomic_read_u32(counter(slot, epoch)) != 0)
	{
		if (deadline == 0)
		{
			TimestampTz received;
			bool		from_stream;

			GetXLogReceiptTime(&received, &from_stream);
			delay = from_stream ? max_standby_streaming_delay : max_standby_archive_delay;
			deadline = TimestampTzPlusMilliseconds(received, Max(delay, 0));
		}
		if (delay >= 0 && GetCurrentTimestamp() >= deadline)
		{
			cancel_holders(dbid);
			deadline = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), 1000);
		}
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, 10,
						 PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		ProcessStartupProcInterrupts();
	}
}

/* Release the holds of the ending (sub)transaction: all, or those of subxid. */
static void
release_holds(bool all, SubTransactionId subxid)
{
	for (int i = 0; i < nholds; i++)
		if (holds[i].id != 0 && (all || holds[i].subxid == subxid))
			drop_hold(&holds[i]);
}

static void
xact_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
		case XACT_EVENT_PREPARE:
			release_holds(true, InvalidSubTransactionId);
			break;
		default:
			break;
	}
}

static void
subxact_callback(SubXactEvent event, SubTransactionId mySubid, SubTransactionId parentSubid,
				 void *arg)
{
	if (event == SUBXACT_EVENT_ABORT_SUB)
		release_holds(false, mySubid);
	else if (event == SUBXACT_EVENT_COMMIT_SUB)
	{
		/* the scans live on in the parent: so do their holds */
		for (int i = 0; i < nholds; i++)
			if (holds[i].id != 0 && holds[i].subxid == mySubid)
				holds[i].subxid = parentSubid;
	}
}

void
pmi_interlock_init(void)
{
	RegisterXactCallback(xact_callback, NULL);
	RegisterSubXactCallback(subxact_callback, NULL);
}
