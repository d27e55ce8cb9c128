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

/* The access-method, storage and WAL APIs it uses are PostgreSQL 15's. */
#if PG_VERSION_NUM < 150000 || PG_VERSION_NUM >= 160000
#error "pm_index builds for PostgreSQL 15 only: set PG_CONFIG to a PostgreSQL 15 pg_config"
#endif

#include "access/genam.h"
#include "access/rmgr.h"
#include "access/transam.h"
#include "catalog/pg_class.h"
#include "nodes/execnodes.h"
#include "port/atomics.h"
#include "storage/condition_variable.h"
#include "storage/lwlock.h"
#include "common/relpath.h"
#include "lib/stringinfo.h"
#include "nodes/pathnodes.h"
#include "postmaster/bgworker.h"
#include "storage/block.h"
#include "storage/itemptr.h"
#include "storage/lockdefs.h"
#include "storage/relfilenode.h"
#include "utils/relcache.h"

#include "alloc.h"
#include "epoch.h"
#include "pool.h"
#include "recon.h"

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
	RelFileNodeBackend rnode;
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
} PmiSlot;

/* State in PostgreSQL shared memory: fixed at startup, rebuilt after a crash-restart. */
typedef struct PmIndexShared
{
	uint32		nslots;			/* epoch participant slots */
	Size		epoch_offset;	/* from the start of this struct */
	Size		registry_offset;
	Size		proc_holds_offset;	/* nslots pg_atomic_uint32: scan holds per PGPROC */
	int			lwlock_tranche;
	LWLock	   *registry_lock;	/* slot assignment */
	int			nindexes;		/* registry slots */
	bool		unclean_start;	/* last stop was a crash: reconcile indexes with heaps */
	bool		from_backup;	/* that is, this start is from a base backup */
	/* the newest ready_xmin of any slot: planners look at slots only while it is recent */
	pg_atomic_uint32 latest_ready_xmin;
} PmIndexShared;


extern PmIndexShared *pmi_shared;

typedef struct PmiIndex PmiIndex;
typedef struct PmiShape PmiShape;
typedef struct PmiBuild PmiBuild;

/* pmi_planner.c: the index conditions an access method derives from a clause (NIL: none) */
typedef List *(*PmiDeriveClause) (PlannerInfo *root, RelOptInfo *rel, IndexOptInfo *index,
								  RestrictInfo *rinfo);

/*
 * A batch of n entries (entry_size bytes each) handed to a driver; returns
 * how many of them the driver deleted.
 */
typedef int (*PmiEntryBatchFn) (void *arg, const void *entries, int n);

/*
 * Insert an entry into the structure of h, in a critical section
 * (pmi_insert_logged): returns a failure, raises none, and a failed insert
 * changes nothing.
 */
typedef pm_errcode (*PmiEntryChangeFn) (PmiIndex *h, const void *entry, pm_error *err);

/* A reconciliation note: the key and rest an insert noted (pmi_note_insert). */
typedef struct PmiNote
{
	uint64		key;
	uint64		rest;
} PmiNote;

/*
 * What a structure is formatted for (PmiAmOps.format): bytes of its access
 * method's, the same wherever the pool is made (they travel in the CREATE
 * WAL record and are read back from a pool), at most PMI_FORMAT_PARAM_MAX.
 */
#define PMI_FORMAT_PARAM_MAX	128
typedef struct PmiFormatParam
{
	uint32		len;
	uint8		data[PMI_FORMAT_PARAM_MAX];
} PmiFormatParam;

/*
 * The contract between the platform and an access method.  Generic code
 * (src/pg/pmi_*.c) reaches a structure only through these; "state" is the
 * access method's per-process handles on its structure in one pool
 * (state_size bytes, set up by attach).
 */
typedef struct PmiAmOps
{
	const char *amname;
	uint32		kind;			/* the pool header names the structure (its core header defines it) */
	uint32		meta_magic;		/* block 0 of the main fork */

	/* reloptions: the build fill factor, its description and default */
	const char *fillfactor_desc;
	int			default_fillfactor;

	/*
	 * An empty structure in a fresh pool.  param is what the structure is
	 * formatted for (format_param's for the index; empty without one), such
	 * as the dimensions of an R-tree's boxes or the collation that orders a
	 * B+-tree's strings.  A pool made again without the index's catalog
	 * entry (replay of the CREATE record, which carries it; a backup's copy
	 * replaced at startup) gets the parameter of the pool it stands for
	 * (pool_format_param), and an index whose definition now gives another
	 * parameter than its pool's is refused until REINDEX.
	 */
	pm_errcode	(*format) (pm_pool *pool, const PmiFormatParam *param, pm_error *err);
	void		(*format_param) (Relation index, PmiFormatParam *param);	/* NULL: empty */
	void		(*pool_format_param) (pm_pool *pool, PmiFormatParam *param);	/* NULL: empty */
	/* the structure's handles over pool, in registry slot slotno, its DRAM root */
	void		(*attach) (void *state, pm_pool *pool, int slotno, uint32 generation,
						   uint64 dram_root);
	Size		state_size;

	/*
	 * ambuild after the pool and metapage exist: fill the pool from the heap,
	 * attaching the structure with pmi_build_attach when it is ready to be
	 * loaded.  Returns the DRAM root to publish (0: none).
	 */
	uint64		(*build) (Relation heap, Relation index, IndexInfo *ii, PmiBuild *b);

	/*
	 * First use after startup, no lock held, state attached with no DRAM
	 * root: make the structure ready to serve (repairs after a crash,
	 * volatile state).  Returns the DRAM root to publish (0: none).  No
	 * Relation: the startup process recovers the indexes it replays into.
	 */
	uint64		(*recover) (const char *index_name, void *state, bool after_crash);
	/* free the DRAM tier under a root recover or build published (NULL: never publishes one) */
	void		(*release_dram) (uint64 dram_root);
	/* bytes of the DRAM tier under a published root, from any database (with release_dram) */
	uint64		(*dram_bytes) (uint64 dram_root);
	/* the largest DRAM tier its structure can address (0: no limit) */
	uint64		dram_tier_max;

	/*
	 * Entries, for VACUUM (pmi_vacuum.c), the verifier (pmi_check.c) and
	 * crash reconciliation (pmi_reconcile.c).  An entry is entry_size bytes
	 * and names one heap TID.
	 */
	Size		entry_size;
	/* what make_entry needs of the index for one operation (palloc'd) */
	void	   *(*entry_context) (Relation index);
	/* the entry a heap tuple with these index values makes (valid until the next call) */
	void		(*make_entry) (void *context, const Datum *values, const bool *isnull,
							   ItemPointer tid, void *entry);
	/*
	 * Make an entry that foreach_batch handed out last beyond its batch, in
	 * CurrentMemoryContext (NULL: an entry holds nothing outside itself).
	 */
	void		(*keep_entry) (void *entry);
	/* a total order of entries; 0 only for the same entry */
	int			(*entry_cmp) (const void *a, const void *b);
	/* the heap TID an entry names; false if it names none */
	bool		(*entry_tid) (const void *entry, ItemPointer tid);
	/*
	 * Delete one entry, setting *found if it was there.  Runs in a critical
	 * section (pmi_delete_logged): returns a failure, raises none, and a
	 * failed delete changes nothing.
	 */
	pm_errcode	(*delete_entry) (void *state, const void *entry, bool *found, pm_error *err);
	/*
	 * Insert the entry of a heap tuple, all its columns, unless the structure
	 * has it: the background build (pmi_fill.c) meets rows whose entries an
	 * insert or replay put there first.  context is entry_context's.
	 */
	void		(*insert_entry) (Relation index, void *context, void *state, const Datum *values,
								 const bool *isnull, ItemPointer tid);

	/*
	 * Every entry, a node's worth per batch.  After a batch fn deleted from,
	 * the structure tidies the node (a rewrite, a merge) if it can; returns
	 * the batches left untidy for lack of space, with the last reason in
	 * *err.
	 */
	uint32		(*foreach_batch) (Relation index, void *state, PmiEntryBatchFn fn, void *arg,
								  pm_error *err);
	/*
	 * The entries reconciliation notes (src/core/recon.h) stand for, n of
	 * them sorted by (key, rest), handed to fn.
	 */
	void		(*note_entries) (Relation index, void *state, const PmiNote *notes, int n,
								 PmiEntryBatchFn fn, void *arg);

	/*
	 * WAL (pmi_wal.c, pmi_redo.c): an entry as a record carries it,
	 * self-contained (what it names in pool copied in), and its replay, which
	 * inserts it (a no-op if it is there) or deletes it, with no Relation and
	 * no ERROR.
	 */
	void		(*log_entry) (const pm_pool *pool, const void *entry, StringInfo out);
	pm_errcode	(*replay_entry) (void *state, bool insert, const char *data, Size len,
								 pm_error *err);

	/* verifier: the structure's own invariants (pmi_report_corrupt); returns its entry count */
	int64		(*check) (Relation index, void *state);
	/* pm_index_stats: the structure's shape */
	void		(*shape) (PmiIndex *h, PmiShape *shape);
	/* planner: index conditions from clauses its operators do not match (NULL: none) */
	PmiDeriveClause derive_clause;
	/* entries a node holds when full (cost estimates) */
	int			entries_per_node;

	/*
	 * The operations of the family of access methods it belongs to, which
	 * share their code over them (src/pg/ordered: OrdOps), or NULL.
	 */
	const void *family_ops;
} PmiAmOps;

/* The format parameter of an index's structure (PmiAmOps.format). */
static inline void
pmi_format_param(Relation index, const PmiAmOps *ops, PmiFormatParam *param)
{
	param->len = 0;
	if (ops->format_param != NULL)
		ops->format_param(index, param);
}

/* An index build in progress (pmi_build.c). */
struct PmiBuild
{
	Relation	index;
	const PmiAmOps *ops;
	pm_pool    *pool;			/* the new pool, formatted */
	int			fillfactor;		/* percent, from the reloption */
	double		heap_tuples;	/* set by ops->build */
	double		index_tuples;
	int			slotno;			/* -1 until pmi_build_attach */
	uint32		generation;
	void	   *state;
};

/* The reloptions every access method takes (ops->fillfactor_desc). */
typedef struct PmiOptions
{
	int32		vl_len_;		/* varlena header */
	int			fillfactor;
} PmiOptions;

/* What pm_index_stats shows of a structure (counters since format; -1: not applicable). */
struct PmiShape
{
	int64		entries;
	int64		leaves;
	int32		height;			/* levels, the leaves included */
	int64		pm_bytes;
	int64		dram_bytes;
	int64		splits;
	int64		compactions;
	int64		merges;
};

/* Block 0 of an index's main fork: ties the relfilenode to its pool. */
#define PMI_META_VERSION	1
#define PMI_METAPAGE_BLKNO	0

typedef struct PmiMetaPageData
{
	uint32		magic;			/* the access method's meta_magic */
	uint32		version;
	uint8		pool_uuid[16];	/* all zero: no pool yet (unlogged index reset) */
} PmiMetaPageData;

/* This backend's handle on one index: pool, registry slot, tree. */
struct PmiIndex
{
	RelFileNodeBackend rnode;	/* hash key */
	const PmiAmOps *ops;
	int			slotno;
	uint32		generation;
	pm_pool    *pool;
	uint8		uuid[16];
	pm_recon_cursor recon_cursor;	/* this backend's place in the ring */
	/* this backend's writes not yet added to the slot's counters */
	uint64		pending_inserts;
	uint64		pending_deletes;
	uint64		pending_flushes;
	uint64		pending_fences;
	void	   *am_state;		/* the access method's: ops->state_size bytes */
};

static inline PmiSlot *
pmi_slot(int slotno)
{
	return (PmiSlot *) ((char *) pmi_shared + pmi_shared->registry_offset) + slotno;
}


/* pmi_handle.c */
extern PmiIndex *pmi_index_open(Relation index, const PmiAmOps *ops);
extern PmiIndex *pmi_index_open_for_replay(RelFileNodeBackend rnode, const PmiAmOps *ops,
										   const char *name);
extern bool pmi_index_plannable(Relation index, bool *transient);
extern void pmi_scan_check_built(PmiIndex *h, Relation index);
extern pm_pool *pmi_create_pool(Relation index, const PmiAmOps *ops);
extern pm_pool *pmi_create_pool_for(RelFileNodeBackend rnode, const PmiAmOps *ops,
									const uint8 *uuid, uint64 flags,
									const PmiFormatParam *format_param, const char *index_name);
extern void pmi_write_metapage(Relation index, ForkNumber fork, const PmiAmOps *ops,
							   const uint8 *uuid);
extern void pmi_report(const pm_error *err, Relation index) pg_attribute_noreturn();
extern void pmi_note_insert(PmiIndex *h, Relation heap, uint64 key, uint64 rest);
extern void pmi_count_writes(PmiIndex *h, const pm_counters *before, int n, bool insert);
extern void pmi_publish_counters(PmiIndex *h);
extern void pmi_publish_ready(int slotno, uint64 dram_root);
extern MemoryContext pmi_tuple_context(MemoryContext *ctx, void *scan_state);

/* pmi_check.c */
extern void pmi_check(Oid indexoid, bool heapallindexed, const PmiAmOps *ops);
extern void pmi_report_corrupt(Relation index, const char *detail) pg_attribute_noreturn();

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
extern bytea *pmi_options(const PmiAmOps *ops, Datum reloptions, bool validate);

/* pmi_reconcile.c */
extern void pmi_reconcile(Relation index, pm_pool *pool, const PmiAmOps *ops, void *state);

/* pmi_am.c: the access methods */
extern const PmiAmOps *pmi_am_ops(Oid amoid);
extern const PmiAmOps *pmi_index_am(Relation index);
extern bool pmi_am_installed(void);
extern char *pmi_am_names(void);
extern uint64 pmi_dram_tier_max(void);
extern uint32 pmi_am_number(const PmiAmOps *ops);
extern const PmiAmOps *pmi_am_of_number(uint32 number);
extern const PmiAmOps *pmi_am_of_kind(uint32 kind);

/* pmi_pool.c */
extern const char *pmi_pool_dir(void);
extern int	pmi_core_error_sqlstate(const pm_error *err, const char **hint);
extern void pmi_report_core_error(int elevel, const pm_error *err,
								  const char *index_name) pg_attribute_cold;
extern const char pmi_address_space_hint[];
extern RelFileNodeBackend pmi_index_rnode(Relation index);
extern char *pmi_pool_path(RelFileNodeBackend rnode);
extern void pmi_pool_remove(RelFileNodeBackend rnode);
extern bool pmi_parse_pool_name(const char *name, RelFileNodeBackend *rnode);
extern bool pmi_relfilenode_exists(RelFileNodeBackend rnode);
extern List *pmi_list_pools(Oid dbid, int elevel);

/* A pm_index index of the current database and the relfilenode its pool is named after. */
typedef struct PmiIndexPool
{
	Oid			relid;
	RelFileNodeBackend rnode;
} PmiIndexPool;

extern RelFileNodeBackend pmi_class_rnode(Form_pg_class c);
extern List *pmi_list_index_pools(bool other_sessions);

/* Why an index's pool file is not there: a message (also pm_index_pools().detail), a detail, a hint. */
typedef struct PmiMissingPool
{
	int			sqlstate;
	char	   *message;
	char	   *detail;			/* or NULL */
	const char *hint;
} PmiMissingPool;

extern void pmi_pool_missing(const char *path, PmiMissingPool *m);
extern void pmi_report_missing_pool(const char *path, const char *index_name) pg_attribute_noreturn();

/* What monitoring says of a pool file (pm_index_pools(), the start's WARNINGs). */
typedef struct PmiPoolCondition
{
	const char *state;			/* pm_index_pools().state */
	char	   *detail;			/* what is wrong, or NULL */
	const char *hint;			/* what to do, or NULL */
	bool		unusable;		/* no query may use the index until someone acts */
	bool		header_valid;	/* hdr was read */
	pm_pool_header hdr;
} PmiPoolCondition;

extern void pmi_pool_condition(const char *path, bool temporary, PmiPoolCondition *c);
extern void pmi_pool_copy(RelFileNodeBackend from, RelFileNodeBackend to, bool move);
extern bool pmi_ensure_pool_dir(int elevel);
extern pm_pool *pmi_pool_open(Relation index);
extern pm_pool *pmi_pool_lookup(RelFileNodeBackend rnode);
extern void pmi_pool_forget(RelFileNodeBackend rnode);
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
extern bool pmi_start_database_worker(Oid dbid, const char *function, const char *name,
									  const char *type, const void *extra, Size extra_len,
									  BackgroundWorkerHandle **handle);
typedef bool (*PmiWorkerIndexFn) (RelFileNodeBackend rnode, void *arg);
extern bool pmi_worker_index_transaction(RelFileNodeBackend rnode, PmiWorkerIndexFn fn, void *arg,
										 const char *doing, MemoryContext errcxt);

/* pmi_load.c */
extern int	pmi_startup_load_workers;
extern void pmi_launch_loads(void);
PGDLLEXPORT void pmi_load_main(Datum arg);

/* pmi_registry.c */
extern pm_epoch_handle *pmi_epoch(void);
extern pm_alloc *pmi_dram(void);
extern void pmi_registry_init_backend(void);
extern int	pmi_registry_attach(RelFileNodeBackend rnode, const PmiAmOps *ops,
								uint32 *generation);
extern void pmi_registry_release(RelFileNodeBackend rnode);
extern void pmi_free_retired(uint32 space, uint32 tag, uint64 off);
extern void pmi_lifecycle_init(void);
extern void pmi_note_pool_created(RelFileNodeBackend rnode);
extern bool pmi_registry_replayed_before_start(RelFileNodeBackend rnode, uint64 *position);
extern TransactionId pmi_registry_ready_xmin(RelFileNodeBackend rnode);
extern void pmi_registry_set_ready_xmin(int slotno, TransactionId xmin);
extern bool pmi_registry_claim_fill(int slotno);

/* pmi_planner.c */
extern void pmi_planner_init(void);

/* pmi_wal.c: the records of the pm_index resource manager (pmi_redo.c replays them) */
/*
 * RM_EXPERIMENTAL_ID until an id is reserved on the PostgreSQL wiki's list
 * of custom resource managers.
 */
#define PMI_RMGR_ID			RM_EXPERIMENTAL_ID

#define XLOG_PMI_CREATE		0x00	/* an empty pool: the header, then the pool's UUID */
#define XLOG_PMI_ENTRIES	0x10	/* a build's entries */
#define XLOG_PMI_INSERT		0x20
#define XLOG_PMI_DELETE		0x30
#define XLOG_PMI_COPY		0x40	/* the header (node: the copy's), the source's node, move */

/*
 * Every record starts with this; entries follow, each a uint32 length and
 * the bytes log_entry made (unaligned).
 */
typedef struct PmiWalHeader
{
	RelFileNode node;
	uint16		kind;			/* the pool header's structure kind */
	uint16		nentries;
} PmiWalHeader;

/* entries per record at most (a batch of more is logged in several) */
#define PMI_WAL_MAX_ENTRIES	PG_UINT16_MAX

extern bool pmi_debug_wal_error;
extern void pmi_log_create(Relation index, const PmiAmOps *ops, pm_pool *pool);
extern void pmi_insert_logged(Relation index, PmiIndex *h, const void *entry,
							  PmiEntryChangeFn insert);
extern int	pmi_delete_logged(Relation index, const PmiAmOps *ops, const pm_pool *pool,
							  void *state, const void *entries, int n);
extern void pmi_log_copy(RelFileNodeBackend from, RelFileNodeBackend to, bool move);
extern void pmi_log_build_entries(Relation index, const PmiAmOps *ops, const pm_pool *pool,
								  const void *entries, int n);

/* pmi_redo.c */
extern void pmi_redo_init(void);

/* pmi_storage.c */
extern void pmi_storage_init(void);

/* pmi_unique.c: inserts into unique indexes hold one of these LWLocks */
#define PMI_UNIQUE_TRANCHE	"pm_index_unique"
#define PMI_UNIQUE_LOCKS	1024
extern LWLock *pmi_unique_lock(Oid indexoid, uint64 key);
extern void pmi_debug_unique_pause(void);	/* pmi_module.c */
extern void pmi_unique_init(void);

#endif							/* PM_INDEX_PG_H */
