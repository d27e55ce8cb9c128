/*
 * pm_index.h
 *	  Declarations shared by the PostgreSQL glue of pm_index (src/pg).
 *
 * src/pg is the only place that includes both PostgreSQL headers and the
 * core's; the core's errors become ereports here.
 */
#ifndef PM_INDEX_PG_H
#define PM_INDEX_PG_H

#include "postgres.h"

#include "port/atomics.h"
#include "storage/condition_variable.h"
#include "storage/lwlock.h"
#include "storage/relfilenode.h"
#include "utils/relcache.h"

#include "alloc.h"
#include "epoch.h"
#include "pool.h"

#define PMI_POOL_SUFFIX ".pmpool"

/* GUCs */
extern char *pmi_pool_dir_guc;
extern int	pmi_persistence_guc;
extern int	pmi_dram_tier_mb;
extern int	pmi_max_indexes;

/* set in the postmaster: this server started from a backup or in archive recovery / standby mode */
extern bool pmi_started_from_elsewhere;

#define PMI_COUNTER_BATCH 1024

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
	RelFileNode rnode;
	uint32		generation;
	uint32		state;
	uint64		dram_root;
	LWLock		lock;			/* protects state, builder_pid, dram_root */
	ConditionVariable ready_cv; /* broadcast when a build ends */
	int			builder_pid;
	/* published by each backend every PMI_COUNTER_BATCH writes and at exit */
	pg_atomic_uint64 inserts;
	pg_atomic_uint64 deletes;
	pg_atomic_uint64 flushes;	/* cache lines flushed by those writes */
	pg_atomic_uint64 fences;
} PmiSlot;

/* State in PostgreSQL shared memory: fixed at startup, rebuilt after a crash-restart. */
typedef struct PmIndexShared
{
	uint32		nslots;			/* epoch participant slots */
	Size		epoch_offset;	/* from the start of this struct */
	Size		arena_offset;
	Size		arena_size;
	Size		registry_offset;
	int			lwlock_tranche;
	LWLock	   *registry_lock;	/* slot assignment */
	int			nindexes;		/* registry slots */
	bool		unclean_start;	/* last stop was a crash: reconcile indexes with heaps */
} PmIndexShared;


extern PmIndexShared *pmi_shared;

static inline PmiSlot *
pmi_slot(int slotno)
{
	return (PmiSlot *) ((char *) pmi_shared + pmi_shared->registry_offset) + slotno;
}

/* pm_index.c */
extern const char *pmi_pool_dir(void);
extern pm_epoch_handle *pmi_epoch(void);
extern pm_alloc *pmi_dram(void);
extern void pmi_report_core_error(int elevel, const pm_error *err,
								  const char *index_name) pg_attribute_cold;

/* pool_registry.c */
extern char *pmi_pool_path(RelFileNode rnode);
extern void pmi_pool_remove(RelFileNode rnode);
extern bool pmi_parse_pool_name(const char *name, RelFileNode *rnode);
extern bool pmi_relfilenode_exists(RelFileNode rnode);
extern void pmi_ensure_pool_dir(void);
extern pm_pool *pmi_pool_open(Relation index);
extern pm_pool *pmi_pool_lookup(RelFileNode rnode);
extern bool pmi_pool_untrusted(pm_pool *pool);
extern void pmi_reject_untrusted(pm_pool *pool, const char *index_name);
extern void pmi_pool_forget(RelFileNode rnode);
extern int	pmi_sweep_orphans(void);

PGDLLEXPORT void pmi_sweeper_main(Datum arg);

/* index_registry.c */
extern void pmi_registry_init_backend(void);
extern int	pmi_registry_attach(RelFileNode rnode, uint32 *generation);
extern void pmi_registry_release(RelFileNode rnode);
extern void pmi_free_retired(uint32 space, uint32 tag, uint64 off);
extern void pmi_lifecycle_init(void);
extern void pmi_note_pool_created(RelFileNode rnode);

#endif							/* PM_INDEX_PG_H */
