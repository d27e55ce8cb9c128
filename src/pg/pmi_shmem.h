/*
 * pmi_shmem.h
 *	  The platform's state in PostgreSQL shared memory: one registry slot
 *	  per index in use since startup, and what every backend shares.
 */
#ifndef PMI_SHMEM_H
#define PMI_SHMEM_H

#include "access/transam.h"
#include "port/atomics.h"
#include "datatype/timestamp.h"
#include "storage/condition_variable.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "pmi_compat.h"

#define PMI_COUNTER_BATCH 1024
#define PMI_TIER_MAX_WORKERS 32
#define PMI_TIER_LANES	64		/* PM_OLOG_MAX_LANES: a bit per lane */

/*
 * Tiered writes (pmi_tier.c): what one lane of an index's operation log has
 * applied and may reclaim once no reader can be copying below upto and the
 * WAL of every record below it is flushed.  Changed by the lane's applier.
 */
typedef struct PmiTierLane
{
	uint64		reclaim_upto;	/* a position applied, not yet reclaimed */
	uint64		reclaim_wal;	/* WAL to be flushed before reclaiming it */
	uint64		reclaim_epoch;	/* the reader epoch when it was applied */
	TimestampTz pending_since;	/* when the lane last had nothing to apply */
	/* a structure checkpointed by UNO logging: applied, not yet durable */
	uint64		consumed;

	/*
	 * Records at or past it have not been given to the structure since the
	 * first use (nor can a background build have inserted their entries):
	 * applied without looking for them first.  PG_UINT64_MAX: none is.
	 */
	uint64		fresh_from;
} PmiTierLane;

/* Registry slot states */
#define PMI_SLOT_FREE		0
#define PMI_SLOT_ATTACHED	1	/* assigned; DRAM layer not built yet */
#define PMI_SLOT_READY		2	/* DRAM layer built; serving */
#define PMI_SLOT_BUILDING	3	/* builder_pid is building the DRAM layer */

/*
 * One slot per pm_index index in use since startup: the shared DRAM root of
 * its tree, the lock that makes concurrent first users wait for one
 * rebuild, and persistence counters.  Its number (+1) is the epoch space of
 * the index's PM blocks; generation tells a reused slot from its past.
 */
typedef struct PmiSlot
{
	RelFileLocatorBackend rlocator;
	uint32		generation;
	uint32		state;
	uint32		am;				/* its access method: pmi_am_of_number */
	uint64		dram_root;
	LWLock		lock;			/* protects state, builder_pid, dram_root */
	ConditionVariable ready_cv; /* broadcast when a build ends */
	int			builder_pid;
	/* published by each backend every PMI_COUNTER_BATCH writes and at exit */
	pg_atomic_uint64 inserts;
	pg_atomic_uint64 deletes;
	pg_atomic_uint64 flushes;	/* cache lines flushed by those writes */
	pg_atomic_uint64 fences;
	/* the pool's WAL position at its first use since startup (pmi_redo.c) */
	uint64		replayed_before_start;
	/* the background build (pmi_fill.c): its worker, its snapshot's xmax */
	int			fill_pid;
	TransactionId ready_xmin;	/* older snapshots do not use the index */
	/* scans against VACUUM (pmi_interlock.c) */
	pg_atomic_uint64 vacuum_epoch;
	pg_atomic_uint32 scan_holds[2]; /* per epoch parity */
	/* tiered writes (pmi_tier.c), a bit per lane of the operation log */
	pg_atomic_uint32 tier_closed;	/* going away: no applier starts */
	pg_atomic_uint64 tier_writers;	/* lanes a writer holds */
	pg_atomic_uint64 tier_appliers; /* lanes an applier holds */
	pg_atomic_uint64 tier_pending;	/* lanes that may hold unapplied records */
	pg_atomic_uint64 tier_unreclaimed;	/* lanes with applied records kept */
	pg_atomic_uint64 tier_appended; /* records since the slot was taken */
	pg_atomic_uint64 tier_applied;
	/* a structure checkpointed by UNO logging (PmiAmOps.checkpoint) */
	pg_atomic_uint32 tier_exclusive;	/* one process excludes every applier */
	pg_atomic_uint32 tier_uncheckpointed;	/* changed since its checkpoint */
	TimestampTz tier_checkpointed_at;
	PmiTierLane tier_lane[PMI_TIER_LANES];
} PmiSlot;

/* State in PostgreSQL shared memory: fixed at startup, rebuilt after a crash-restart. */
typedef struct PmIndexShared
{
	uint32		nslots;			/* epoch participant slots */
	Size		epoch_offset;	/* from the start of this struct */
	Size		registry_offset;
	Size		proc_holds_offset;	/* nslots pg_atomic_uint32: scan holds per
									 * PGPROC */
	int			lwlock_tranche;
	LWLock	   *registry_lock;	/* slot assignment */
	int			nindexes;		/* registry slots */
	bool		unclean_start;	/* last stop was a crash: reconcile indexes
								 * with heaps */
	bool		from_backup;	/* that is, this start is from a base backup */

	/*
	 * the newest ready_xmin of any slot: planners look at slots only while it
	 * is recent
	 */
	pg_atomic_uint32 latest_ready_xmin;

	/*
	 * tier replay workers (pmi_tier.c): how many replay now (worker 0 adapts
	 * it), which run, and each one's latch (NULL while it is not running)
	 */
	pg_atomic_uint32 tier_active;
	pg_atomic_uint32 tier_running[PMI_TIER_MAX_WORKERS];	/* started, not exited */
	TimestampTz tier_started_at[PMI_TIER_MAX_WORKERS];
	Latch	   *tier_latch[PMI_TIER_MAX_WORKERS];
} PmIndexShared;


extern PmIndexShared *pmi_shared;

/* A lane's bit in the tier_* words of a slot. */
static inline uint64
pmi_tier_lane_bit(int lane)
{
	return UINT64CONST(1) << lane;
}

static inline PmiSlot *
pmi_slot(int slotno)
{
	return (PmiSlot *) ((char *) pmi_shared + pmi_shared->registry_offset) + slotno;
}

#endif							/* PMI_SHMEM_H */
