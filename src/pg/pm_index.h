/*
 * pm_index.h
 *	  Declarations shared by the PostgreSQL glue of pm_index (src/pg): the
 *	  settings, and the platform's functions by file.  The contract with an
 *	  access method is pmi_amapi.h, the WAL records pmi_xlog.h, the shared
 *	  memory pmi_shmem.h; this includes them.
 *
 * src/pg is the only place that includes both PostgreSQL headers and the
 * core's; the core's errors become ereports here.
 */
#ifndef PM_INDEX_PG_H
#define PM_INDEX_PG_H

#include "postgres.h"

#include "pmi_compat.h"

#include "access/genam.h"
#include "access/transam.h"
#include "catalog/pg_class.h"
#include "common/relpath.h"
#include "fmgr.h"
#include "nodes/execnodes.h"
#include "storage/lwlock.h"
#include "lib/stringinfo.h"
#include "nodes/pathnodes.h"
#include "postmaster/bgworker.h"
#include "storage/block.h"
#include "storage/itemptr.h"
#include "storage/lockdefs.h"
#include "utils/relcache.h"

#include "alloc.h"
#include "epoch.h"
#include "pool.h"
#include "recon.h"
#include "tips/olog.h"

#include "pmi_amapi.h"
#include "pmi_shmem.h"
#include "pmi_xlog.h"

#define PMI_POOL_SUFFIX ".pmpool"

/* GUCs */
extern char *pmi_pool_dir_guc;

/* pm_index.pool_dir's default: relative, so under the data directory */
#define PMI_DEFAULT_POOL_DIR	"pm_index"

extern int	pmi_persistence_guc;
extern int	pmi_max_dram_tier_mb;
extern pm_pool *pmi_dram_pool;
extern int	pmi_max_indexes;
extern int	pmi_max_pool_mb;

/* set in the postmaster: this server started from a backup or in archive recovery / standby mode */
extern bool pmi_started_from_elsewhere;

/* ... from a backup (a backup_label: a base backup, pg_rewind) */
extern bool pmi_started_from_backup;

/* ... to replay WAL from an archive or a primary (standby.signal or recovery.signal) */
extern bool pmi_archive_recovery;

/* Block 0 of an index's main fork: ties the relfilenode to its pool. */
#define PMI_META_VERSION	1
#define PMI_METAPAGE_BLKNO	0

typedef struct PmiMetaPageData
{
	uint32		magic;			/* the access method's meta_magic */
	uint32		version;
	uint8		pool_uuid[16];	/* all zero: no pool yet (unlogged index
								 * reset) */
} PmiMetaPageData;

static inline bool
pmi_metapage_names_no_pool(const uint8 *uuid)
{
	static const uint8 zero_uuid[16];

	return memcmp(uuid, zero_uuid, 16) == 0;
}

/* pmi_metapage.c */
extern void pmi_write_metapage(Relation index, ForkNumber fork, const PmiAmOps *ops,
							   const uint8 *uuid);
extern void pmi_read_metapage(Relation index, const PmiAmOps *ops, uint8 *uuid);
extern pm_pool *pmi_create_pool(Relation index, const PmiAmOps *ops);
extern pm_pool *pmi_create_pool_for(RelFileLocatorBackend rlocator, const PmiAmOps *ops,
									const uint8 *uuid, uint64 flags,
									const PmiFormatParam *format_param, const char *index_name);

/* pmi_first_use.c */
/*
 * Who makes an index ready on its first use: a backend with its Relation,
 * or the startup process replaying WAL into it, with none.
 */
typedef struct PmiFirstUse
{
	Relation	index;			/* NULL: replay */
	RelFileLocatorBackend rlocator;
	const char *name;
	const PmiAmOps *ops;
	const uint8 *meta_uuid;		/* the metapage's (index only) */
} PmiFirstUse;

extern void pmi_ensure_ready(const PmiFirstUse *fu, int slotno, uint32 generation);
extern void pmi_publish_ready(int slotno, uint64 dram_root);

/* pmi_handle.c */
extern PmiIndex *pmi_index_open(Relation index, const PmiAmOps *ops);
extern PmiIndex *pmi_index_open_for_replay(RelFileLocatorBackend rlocator, const PmiAmOps *ops,
										   const char *name);
extern bool pmi_index_plannable(Relation index, bool *transient);
extern void pmi_scan_check_built(PmiIndex *h, Relation index);
pg_noreturn extern void pmi_report(const pm_error *err, Relation index);
extern void pmi_count_writes(PmiIndex *h, const pm_counters *before, int n, bool insert);
extern void pmi_publish_counters(PmiIndex *h);
/* an index-only scan's tuples (pmi_index_only_tuple); zeroed before the first */
typedef struct PmiIndexOnlyTuples
{
	MemoryContext ctx;			/* NULL until the first tuple */
	bool		formed;			/* the last tuple was formed in ctx */
	bool		layout_known;	/* may_keep is set */
	bool		may_keep;		/* the index's tuples may share one layout */
	IndexTuple	fixed;			/* the tuple kept for that layout, or NULL */
	uint16		offsets[INDEX_MAX_KEYS];	/* of its columns' values */
} PmiIndexOnlyTuples;

extern MemoryContext pmi_index_only_context(PmiIndexOnlyTuples *t, void *scan_state);
extern IndexTuple pmi_index_only_tuple(PmiIndexOnlyTuples *t, Relation index,
									   const Datum *values, const bool *isnull);
extern void pmi_index_only_end(PmiIndexOnlyTuples *t);

/* pmi_check.c */
extern void pmi_check(Oid indexoid, bool heapallindexed, const PmiAmOps *ops);
pg_noreturn extern void pmi_report_corrupt(Relation index, const char *detail);

/* An access method's SQL function name(index regclass, heapallindexed bool): pmi_check. */
#define PMI_CHECK_FUNCTION(name, ops) \
PG_FUNCTION_INFO_V1(name); \
Datum \
name(PG_FUNCTION_ARGS) \
{ \
	pmi_check(PG_GETARG_OID(0), PG_GETARG_BOOL(1), (ops)); \
	PG_RETURN_VOID(); \
}

/* pmi_interlock.c: a scan's hold on the batches it has read (id 0: none) */
typedef struct PmiScanHold
{
	uint64		id;
	int			index;
} PmiScanHold;

extern bool pmi_scan_needs_hold(IndexScanDesc scan);
extern void pmi_scan_hold(PmiIndex *index, PmiScanHold *hold);
extern void pmi_scan_release(PmiScanHold *hold);
extern void pmi_wait_for_scans(PmiIndex *index);
extern void pmi_wait_for_scans_in_recovery(PmiIndex *index, Oid dbid);
extern void pmi_interlock_init(void);

/* pmi_vacuum.c */
extern IndexBulkDeleteResult *pmi_bulkdelete(IndexVacuumInfo *info,
											 IndexBulkDeleteResult *stats,
											 IndexBulkDeleteCallback callback,
											 void *callback_state);
extern IndexBulkDeleteResult *pmi_vacuumcleanup(IndexVacuumInfo *info,
												IndexBulkDeleteResult *stats);

/* pmi_build.c */
extern IndexBuildResult *pmi_build(Relation heap, Relation index, IndexInfo *ii);
extern void pmi_buildempty(Relation index);
extern void *pmi_build_attach(PmiBuild *b);

/* pmi_options.c */
extern void pmi_options_init(void);
extern bytea *pmi_options(const PmiAmOps *ops, Datum reloptions, bool validate);
extern int	pmi_reloption(Relation index, const PmiAmOps *ops, int option);
extern bool pmi_index_tiered(Relation index, const PmiAmOps *ops);

/* pmi_tier.c: tiered writes */
extern int	pmi_tier_workers;
extern int	pmi_tier_lane_kb;
extern bool pmi_debug_tier_pause;

/* A record waiting in an operation log: its note and its entry as log_entry wrote it. */
typedef void (*PmiTierRecordFn) (void *arg, const PmiNote *note, const char *entry, Size len);

extern bool pmi_tier_insert(Relation index, PmiIndex *h, Relation heap, const PmiNote *note,
							const void *entry);
extern void pmi_tier_foreach_pending(PmiIndex *h, PmiTierRecordFn fn, void *arg);
extern void pmi_tier_drain(PmiIndex *h, const char *name);
extern bool pmi_tier_exclusive_try(int slotno);
extern void pmi_tier_exclusive_begin(int slotno);
extern void pmi_tier_wake_worker(int id);
extern void pmi_tier_exclusive_end(int slotno);
extern void pmi_tier_checkpoint(int slotno, pm_pool *pool, const PmiAmOps *ops, void *state,
								const char *name);
extern pm_errcode pmi_tier_checkpoint_held(int slotno, pm_pool *pool, const PmiAmOps *ops,
										   void *state, pm_error *err);
extern void pmi_tier_insert_direct(Relation index, PmiIndex *h, const void *entry,
								   PmiEntryChangeFn insert);
extern void pmi_tier_copy_pool(RelFileLocatorBackend from, RelFileLocatorBackend to, bool move);
PGDLLEXPORT void pmi_tier_main(Datum arg);

/* pmi_tier_log.c */
extern pm_errcode pmi_tier_record_parts(const pm_pool *pool, const char *data, uint32 len,
										PmiNote *note, PmiLoggedEntry *entry, pm_error *err);
extern int	pmi_tier_apply_lane(int slotno, pm_pool *pool, const PmiAmOps *ops, void *state,
								const pm_olog *o, int lane, uint64 pos, uint64 *applied_upto,
								pm_error *err);
extern void pmi_tier_fresh_log(int slotno);
extern uint64 pmi_tier_lane_from(int slotno, pm_pool *pool, const pm_olog *o, int lane);
extern void pmi_tier_lane_applied(int slotno, pm_pool *pool, const PmiAmOps *ops, const pm_olog *o,
								  int lane, uint64 upto);
extern void pmi_tier_recover(int slotno, pm_pool *pool, const PmiAmOps *ops, void *state,
							 const char *name);
extern void pmi_tier_note_recovered(int slotno, pm_pool *pool);
extern void pmi_tier_notes(pm_pool *pool, void (*fn) (void *ctx, uint64_t key, uint64_t rest),
						   void *ctx);
extern void pmi_tier_lag(int slotno, pm_pool *pool, int64 *records, int64 *bytes,
						 double *age_seconds);

/* pmi_reconcile.c */
extern void pmi_reconcile(Relation index, pm_pool *pool, const PmiAmOps *ops, void *state);
extern void pmi_note_insert(PmiIndex *h, Relation heap, uint64 key, uint64 rest);

/* pmi_am.c: the access methods */
extern const PmiAmOps *pmi_am_ops(Oid amoid);
extern const PmiAmOps *pmi_index_am(Relation index);
extern bool pmi_am_installed(void);
extern char *pmi_am_names(void);
extern uint64 pmi_dram_tier_max(void);
extern uint32 pmi_am_number(const PmiAmOps *ops);
extern const PmiAmOps *pmi_am_of_number(uint32 number);
extern void pmi_am_attach(const PmiAmOps *ops, void *state, pm_pool *pool, int slotno,
						  uint32 generation, uint64 dram_root, const char *name);
extern uint32 pmi_am_count(void);
extern const PmiAmOps *pmi_am_of_kind(uint32 kind);

/* pmi_errors.c */
extern int	pmi_core_error_sqlstate(const pm_error *err, const char **hint);
extern void pmi_report_core_error(int elevel, const pm_error *err,
								  const char *index_name) pg_attribute_cold;
extern const char pmi_address_space_hint[];

/* pmi_pool.c */
extern const char *pmi_pool_dir(void);
extern RelFileLocatorBackend pmi_index_rnode(Relation index);
extern char *pmi_pool_path(RelFileLocatorBackend rlocator);
extern void pmi_pool_remove(RelFileLocatorBackend rlocator);
extern bool pmi_parse_pool_name(const char *name, RelFileLocatorBackend *rlocator);
extern bool pmi_relfilenode_exists(RelFileLocatorBackend rlocator);
extern List *pmi_list_pools(Oid dbid, int elevel);

/* A pm_index index of the current database and the relfilenode its pool is named after. */
typedef struct PmiIndexPool
{
	Oid			relid;
	RelFileLocatorBackend rlocator;
} PmiIndexPool;

extern RelFileLocatorBackend pmi_class_rnode(Form_pg_class c);
extern List *pmi_list_index_pools(bool other_sessions);

/* Why an index's pool file is not there: a message (also pm_index_pools().detail), a detail, a hint. */
typedef struct PmiMissingPool
{
	int			sqlstate;
	char	   *message;
	char	   *detail;			/* or NULL */
	const char *hint;
} PmiMissingPool;

pg_noreturn extern void pmi_report_missing_pool(const char *path, const char *index_name);

/* What monitoring says of a pool file (pm_index_pools(), the start's WARNINGs). */
typedef struct PmiPoolCondition
{
	const char *state;			/* pm_index_pools().state */
	char	   *detail;			/* what is wrong, or NULL */
	const char *hint;			/* what to do, or NULL */
	bool		unusable;		/* no query may use the index until someone
								 * acts */
	bool		header_valid;	/* hdr was read */
	pm_pool_header hdr;
} PmiPoolCondition;

extern void pmi_pool_condition(const char *path, bool temporary, PmiPoolCondition *c);
extern void pmi_pool_copy(RelFileLocatorBackend from, RelFileLocatorBackend to, bool move);
extern bool pmi_ensure_pool_dir(int elevel);
extern pm_pool *pmi_pool_open(Relation index);
extern pm_pool *pmi_pool_open_named(Relation index, const uint8 *uuid);
extern pm_pool *pmi_pool_lookup(RelFileLocatorBackend rlocator);
extern void pmi_pool_forget(RelFileLocatorBackend rlocator);
extern void pmi_pool_forget_removed(void);
extern bool pmi_pool_building(const pm_pool *pool);

/* pmi_fill.c */
extern FullTransactionId pmi_fill_xid_bound;
extern void pmi_replace_copied_pools(void);
extern void pmi_launch_fills(void);
extern void pmi_wait_until_built(PmiIndex *h);
PGDLLEXPORT void pmi_fill_main(Datum arg);

/* pmi_sweeper.c */
PGDLLEXPORT void pmi_sweeper_main(Datum arg);
PGDLLEXPORT void pmi_standby_sweeper_main(Datum arg);

/* pmi_trust.c */
extern bool pmi_pool_untrusted(pm_pool *pool);
extern void pmi_reject_untrusted(pm_pool *pool, const char *index_name);
extern int	pmi_mark_untrusted_pools(int elevel);
extern void pmi_trust_init(void);

/* pmi_worker.c */
extern bool pmi_start_database_worker(Oid dbid, const char *function, const char *name,
									  const char *type, const void *extra, Size extra_len,
									  BackgroundWorkerHandle **handle);
typedef bool (*PmiWorkerIndexFn) (RelFileLocatorBackend rlocator, void *arg);
extern bool pmi_worker_index_transaction(RelFileLocatorBackend rlocator, PmiWorkerIndexFn fn, void *arg,
										 const char *doing, MemoryContext errcxt);

/* pmi_load.c */
extern int	pmi_startup_load_workers;
extern void pmi_launch_loads(void);
PGDLLEXPORT void pmi_load_main(Datum arg);

/* pmi_registry.c */
extern pm_epoch_handle *pmi_epoch(void);
extern pm_alloc *pmi_dram(void);
extern void pmi_registry_init_backend(void);
extern int	pmi_registry_attach(RelFileLocatorBackend rlocator, const PmiAmOps *ops,
								uint32 *generation);
extern void pmi_registry_release(RelFileLocatorBackend rlocator);
extern int	pmi_registry_find(RelFileLocatorBackend rlocator);
extern void pmi_tier_close(int slotno);
extern void pmi_tier_slot_init(PmiSlot *s, bool first);
extern void pmi_lifecycle_init(void);
extern void pmi_note_pool_created(RelFileLocatorBackend rlocator);
extern bool pmi_registry_replayed_before_start(RelFileLocatorBackend rlocator, uint64 *position);
extern TransactionId pmi_registry_ready_xmin(RelFileLocatorBackend rlocator);
extern void pmi_registry_set_ready_xmin(int slotno, TransactionId xmin);
extern bool pmi_registry_claim_fill(int slotno);

/* pmi_planner.c */
extern void pmi_planner_init(void);
extern RestrictInfo *pmi_derived_condition(PlannerInfo *root, RestrictInfo *rinfo, Expr *clause);
extern List *pmi_boolean_condition(PlannerInfo *root, IndexOptInfo *index, RestrictInfo *rinfo,
								   StrategyNumber equality);

/* pmi_storage.c */
extern void pmi_storage_init(void);

/* pmi_unique.c: inserts into unique indexes hold one of these LWLocks */
#define PMI_UNIQUE_TRANCHE	"pm_index_unique"
#define PMI_UNIQUE_LOCKS	1024
extern LWLock *pmi_unique_lock(Oid indexoid, uint64 key);
extern void pmi_debug_unique_pause(void);	/* pmi_module.c */
extern void pmi_unique_init(void);

#endif							/* PM_INDEX_PG_H */
