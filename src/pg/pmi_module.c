/*
 * pmi_module.c
 *	  Module entry point: preload check, GUCs, shared memory (the registry,
 *	  the epoch domain; the DRAM tier beside it), the hooks and the startup
 *	  worker of the other files.  The one file that calls into all others.
 */
#include "pm_index.h"

#include <unistd.h>

#include "access/xlog.h"
#include "access/xlogrecovery.h"
#include "catalog/pg_control.h"
#include "common/controldata_utils.h"
#include "miscadmin.h"
#include "postmaster/bgworker.h"
#include "storage/ipc.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "utils/guc.h"

PG_MODULE_MAGIC;

char	   *pmi_pool_dir_guc = NULL;
int			pmi_persistence_guc = PM_MODE_AUTO;
int			pmi_max_dram_tier_mb = -1;

/*
 * The DRAM tier: a volatile pool the postmaster creates with shared memory
 * and every child inherits (its own copy of this struct and the mapping;
 * each maps what the tier grows by as it needs it).
 */
pm_pool    *pmi_dram_pool = NULL;
int			pmi_max_indexes = 1000;
int			pmi_max_pool_mb = 64 * 1024;
static int	debug_smo_pause_ms = 0;
static int	debug_unique_pause_ms = 0;

PmIndexShared *pmi_shared = NULL;

#define EPOCH_LIMBO_PER_SLOT 1024

static const struct config_enum_entry persistence_options[] = {
	{"auto", PM_MODE_AUTO, false},
	{"eadr", PM_MODE_EADR, false},
	{"adr", PM_MODE_ADR, false},
	{"msync", PM_MODE_MSYNC, false},
	{NULL, 0, false}
};

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;


/* A failed pm_assert: PostgreSQL's "TRAP: failed Assert(...)", then abort. */
static void
assert_failed(const char *cond, const char *file, int line)
{
#if PG_VERSION_NUM >= 160000
	ExceptionalCondition(cond, file, line);
#else
	ExceptionalCondition(cond, "FailedAssertion", file, line);
#endif
}

/*
 * The core cannot go on in the middle of an operation (an address it must
 * read cannot be mapped): PANIC, so that crash recovery repairs what the
 * operation left, as after any backend crash.
 */
static void
fatal_failure(const char *msg)
{
	ereport(PANIC,
			(errcode(ERRCODE_OUT_OF_MEMORY),
			 errmsg("pm_index: %s", msg),
			 errhint("%s", pmi_address_space_hint)));
}

/*
 * pm_index.debug_smo_pause: crash tests make a backend sleep inside a
 * structure modification (pm_smo_pause_hook) and kill it there.  The LOG
 * line tells the test that the backend has arrived.
 */
static void
debug_smo_pause(const char *where)
{
	if (debug_smo_pause_ms <= 0)
		return;
	ereport(LOG,
			(errmsg("pm_index: pausing %d ms inside an %s (pm_index.debug_smo_pause)",
					debug_smo_pause_ms, where)));
	pg_usleep(debug_smo_pause_ms * 1000L);
}

/*
 * pm_index.debug_unique_pause: concurrency tests make an insert into a
 * unique index sleep between its check and its entry, so that a second
 * insert of the value comes in there.
 */
void
pmi_debug_unique_pause(void)
{
	if (debug_unique_pause_ms > 0)
		pg_usleep(debug_unique_pause_ms * 1000L);
}

/*
 * pm_index.pool_dir: an empty value, which earlier versions documented as
 * the default, is the default directory, so that SHOW names the directory
 * in effect.
 */
static bool
check_pool_dir(char **newval, void **extra, GucSource source)
{
	if (*newval != NULL && (*newval)[0] == '\0')
	{
		char	   *dflt = strdup(PMI_DEFAULT_POOL_DIR);

		if (dflt == NULL)
			return false;
		free(*newval);
		*newval = dflt;
	}
	return true;
}

/* postmaster: was the data directory shut down cleanly; has shmem been set up before */
static bool started_clean = false;
bool		pmi_started_from_elsewhere = false;
bool		pmi_started_from_backup = false;
static bool shmem_initialized_once = false;

void		_PG_init(void);

static uint32
epoch_slots(void)
{
	/* every PGPROC may run index code: backends, autovacuum, bgworkers, aux */
	return (uint32) (MaxBackends + NUM_AUXILIARY_PROCS);
}

static Size
shared_size(void)
{
	Size		size = MAXALIGN(sizeof(PmIndexShared));

	size = add_size(size, mul_size(pmi_max_indexes, sizeof(PmiSlot)));
	size = add_size(size, MAXALIGN(pm_epoch_domain_size(epoch_slots(), EPOCH_LIMBO_PER_SLOT)));
	size = add_size(size, mul_size(epoch_slots(), sizeof(pg_atomic_uint32)));
	return size;
}

static void
pmi_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(shared_size());
	RequestNamedLWLockTranche("pm_index_registry", 1);
	RequestNamedLWLockTranche(PMI_UNIQUE_TRANCHE, PMI_UNIQUE_LOCKS);
}

/*
 * A new DRAM tier with the new shared memory (at startup and at each
 * crash-restart, when no child of the old one is left).
 */
static void
create_dram_tier(void)
{
	uint64		max = pmi_max_dram_tier_mb < 0 ? pmi_dram_tier_max() :
		Min((uint64) pmi_max_dram_tier_mb << 20, pmi_dram_tier_max());
	pm_error	err;

	pm_pool_close(pmi_dram_pool);
	pmi_dram_pool = NULL;
	if (pm_pool_create_volatile("pm_index DRAM tier (pm_index.max_dram_tier_size)", max,
								&pmi_dram_pool, &err) != PM_OK)
		pmi_report_core_error(FATAL, &err, NULL);
}

static void
pmi_shmem_startup(void)
{
	bool		found;
	Size		size = shared_size();
	char	   *base;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	pmi_shared = ShmemInitStruct("pm_index", size, &found);
	if (!found)
	{
		base = (char *) pmi_shared;
		pmi_shared->nslots = epoch_slots();
		pmi_shared->registry_offset = MAXALIGN(sizeof(PmIndexShared));
		pmi_shared->nindexes = pmi_max_indexes;
		pmi_shared->lwlock_tranche = LWLockNewTrancheId();
		pmi_shared->registry_lock = &(GetNamedLWLockTranche("pm_index_registry"))->lock;
		pg_atomic_init_u32(&pmi_shared->latest_ready_xmin, InvalidTransactionId);
		for (int i = 0; i < pmi_max_indexes; i++)
		{
			PmiSlot    *slot = pmi_slot(i);

			memset(slot, 0, sizeof(*slot));
			LWLockInitialize(&slot->lock, pmi_shared->lwlock_tranche);
			ConditionVariableInit(&slot->ready_cv);
			pg_atomic_init_u64(&slot->inserts, 0);
			pg_atomic_init_u64(&slot->deletes, 0);
			pg_atomic_init_u64(&slot->flushes, 0);
			pg_atomic_init_u64(&slot->fences, 0);
			pg_atomic_init_u64(&slot->vacuum_epoch, 0);
			pg_atomic_init_u32(&slot->scan_holds[0], 0);
			pg_atomic_init_u32(&slot->scan_holds[1], 0);
			pmi_tier_slot_init(slot, true);
		}
		pg_atomic_init_u32(&pmi_shared->tier_active, 1);
		memset(pmi_shared->tier_latch, 0, sizeof(pmi_shared->tier_latch));
		for (int i = 0; i < PMI_TIER_MAX_WORKERS; i++)
			pg_atomic_init_u32(&pmi_shared->tier_running[i], 0);
		pmi_shared->epoch_offset = MAXALIGN(pmi_shared->registry_offset +
											mul_size(pmi_max_indexes, sizeof(PmiSlot)));
		pm_epoch_domain_init(base + pmi_shared->epoch_offset, pmi_shared->nslots,
							 EPOCH_LIMBO_PER_SLOT);
		pmi_shared->proc_holds_offset =
			MAXALIGN(pmi_shared->epoch_offset +
					 pm_epoch_domain_size(pmi_shared->nslots, EPOCH_LIMBO_PER_SLOT));
		for (uint32 i = 0; i < pmi_shared->nslots; i++)
			pg_atomic_init_u32((pg_atomic_uint32 *) (base + pmi_shared->proc_holds_offset) + i, 0);
		create_dram_tier();
		/* a second initialization in one postmaster is a crash-restart */
		pmi_shared->unclean_start = !started_clean || shmem_initialized_once;
		pmi_shared->from_backup = pmi_started_from_backup && !shmem_initialized_once;
		shmem_initialized_once = true;
	}
	LWLockRelease(AddinShmemInitLock);
}

void
_PG_init(void)
{
	BackgroundWorker worker;

	if (!process_shared_preload_libraries_in_progress)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("pm_index must be loaded via shared_preload_libraries"),
				 errhint("Add pm_index to shared_preload_libraries in postgresql.conf, "
						 "for example shared_preload_libraries = 'pm_index', and restart the server.")));

	DefineCustomStringVariable("pm_index.pool_dir",
							   "Directory holding the pool files of pm_index indexes.",
							   "A relative path is under the data directory, and created there if "
							   "missing; an absolute one must exist. On a machine with persistent "
							   "memory, point it into a DAX-mounted filesystem.",
							   &pmi_pool_dir_guc,
							   PMI_DEFAULT_POOL_DIR,
							   PGC_POSTMASTER,
							   0,
							   check_pool_dir, NULL, NULL);
	DefineCustomEnumVariable("pm_index.persistence",
							 "How pool writes are made durable: auto, eadr, adr or msync.",
							 "eadr: fences only (caches are persistent, or only process crashes "
							 "matter); adr: cache-line flushes; msync: for ordinary disks that must "
							 "survive an OS crash; auto picks from the pool's mapping.",
							 &pmi_persistence_guc,
							 PM_MODE_AUTO,
							 persistence_options,
							 PGC_POSTMASTER,
							 0,
							 NULL, NULL, NULL);
	DefineCustomIntVariable("pm_index.max_dram_tier_size",
							"Largest size the DRAM tier of pm_index indexes may grow to.",
							"Inner nodes and leaf metadata live in this shared memory, which "
							"grows as indexes need it and is rebuilt from the pools after a "
							"restart. -1: as large as the access methods can address.",
							&pmi_max_dram_tier_mb,
							-1,
							-1,
							(int) Min(pmi_dram_tier_max() >> 20, INT_MAX),
							PGC_POSTMASTER,
							GUC_UNIT_MB,
							NULL, NULL, NULL);
	DefineCustomIntVariable("pm_index.startup_load_workers",
							"Background workers that load the indexes of a database after a start.",
							"They build every index's DRAM layer so that first queries do not "
							"wait for it. 0: each index loads on first use.",
							&pmi_startup_load_workers,
							2,
							0,
							64,
							PGC_SIGHUP,
							0,
							NULL, NULL, NULL);
	DefineCustomIntVariable("pm_index.max_indexes",
							"Maximum number of pm_index indexes in use at once.",
							"Each index in use since startup takes a registry slot in shared memory.",
							&pmi_max_indexes,
							1000,
							16,
							100000,
							PGC_POSTMASTER,
							0,
							NULL, NULL, NULL);
	DefineCustomIntVariable("pm_index.max_pool_size",
							"Largest size a new pm_index pool may grow to.",
							"Pools keep the limit they were created with.",
							&pmi_max_pool_mb,
							64 * 1024,
							16,
							INT_MAX,
							PGC_SIGHUP,
							GUC_UNIT_MB,
							NULL, NULL, NULL);
	DefineCustomIntVariable("pm_index.tier_workers",
							"The most background workers that apply the operation logs of tiered indexes.",
							"Indexes WITH (tiered = on) make inserts durable in a log that these "
							"workers apply; they start when such indexes are written, as many as "
							"the logs' rate needs, and exit when idle. 0: tiered indexes insert directly.",
							&pmi_tier_workers,
							2,
							0,
							PMI_TIER_MAX_WORKERS,
							PGC_SIGHUP,
							0,
							NULL, NULL, NULL);
	DefineCustomIntVariable("pm_index.tier_log_size",
							"Largest size of one lane of a tiered index's operation log.",
							"A tiered index's log has a lane per concurrent writer; an insert "
							"whose lane is full goes directly into the index (into one "
							"durable only at its checkpoints: into another lane, or it waits "
							"for the replay workers). Set when the log is made (the first "
							"tiered insert into a pool).",
							&pmi_tier_lane_kb,
							4096,
							128,
							1024 * 1024,
							PGC_SIGHUP,
							GUC_UNIT_KB,
							NULL, NULL, NULL);
	DefineCustomIntVariable("pm_index.debug_smo_pause",
							"Sleep this long inside every structure modification of a pm_index index (crash tests only).",
							NULL,
							&debug_smo_pause_ms,
							0,
							0,
							60000,
							PGC_SUSET,
							GUC_UNIT_MS | GUC_NOT_IN_SAMPLE,
							NULL, NULL, NULL);
	DefineCustomIntVariable("pm_index.debug_unique_pause",
							"Sleep this long between the unique check and the entry of an insert (concurrency tests only).",
							NULL,
							&debug_unique_pause_ms,
							0,
							0,
							60000,
							PGC_SUSET,
							GUC_UNIT_MS | GUC_NOT_IN_SAMPLE,
							NULL, NULL, NULL);
	DefineCustomBoolVariable("pm_index.debug_tier_pause",
							 "Keep the replay workers from applying tiered indexes' logs (tests only).",
							 NULL,
							 &pmi_debug_tier_pause,
							 false,
							 PGC_SIGHUP,
							 GUC_NOT_IN_SAMPLE,
							 NULL, NULL, NULL);
	DefineCustomBoolVariable("pm_index.debug_wal_error",
							 "Fail the forming of every WAL record of pm_index index entries (tests only).",
							 NULL,
							 &pmi_debug_wal_error,
							 false,
							 PGC_SUSET,
							 GUC_NOT_IN_SAMPLE,
							 NULL, NULL, NULL);
	pm_smo_pause_hook = debug_smo_pause;
	pm_assert_hook = assert_failed;
	pm_fatal_hook = fatal_failure;
	MarkGUCPrefixReserved("pm_index");

	/*
	 * read before the startup process changes it: did the server stop
	 * cleanly?
	 */
	{
		bool		crc_ok;
		ControlFileData *cf = get_controlfile(DataDir, &crc_ok);

		started_clean = crc_ok && (cf->state == DB_SHUTDOWNED || cf->state == DB_SHUTDOWNED_IN_RECOVERY);

		/*
		 * A server restored from a base backup, or recovering from an archive
		 * or a primary (standby, PITR): its pools are current only if WAL
		 * replay kept them so (pmi_trust.c).
		 */
		pmi_started_from_backup = access(psprintf("%s/%s", DataDir, BACKUP_LABEL_FILE), F_OK) == 0;
		pmi_archive_recovery = access(psprintf("%s/%s", DataDir, STANDBY_SIGNAL_FILE), F_OK) == 0 ||
			access(psprintf("%s/%s", DataDir, RECOVERY_SIGNAL_FILE), F_OK) == 0;
		pmi_started_from_elsewhere = (crc_ok && (cf->state == DB_IN_ARCHIVE_RECOVERY ||
												 cf->state == DB_SHUTDOWNED_IN_RECOVERY)) ||
			pmi_started_from_backup || pmi_archive_recovery;

		/*
		 * every transaction that began before a pool was replaced has an
		 * older xid
		 */
		pmi_fill_xid_bound = cf->checkPointCopy.nextXid;
		pfree(cf);
	}

	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = pmi_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = pmi_shmem_startup;
	pmi_options_init();
	pmi_planner_init();
	pmi_storage_init();
	pmi_lifecycle_init();
	pmi_trust_init();
	pmi_unique_init();
	pmi_interlock_init();
	pmi_redo_init();

	/*
	 * once recovery has finished: create the pool directory, remove orphans,
	 * check and load
	 */
	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker.bgw_restart_time = BGW_NEVER_RESTART;
	snprintf(worker.bgw_library_name, BGW_MAXLEN, "pm_index");
	snprintf(worker.bgw_function_name, BGW_MAXLEN, "pmi_sweeper_main");
	snprintf(worker.bgw_name, BGW_MAXLEN, "pm_index pool sweeper");
	snprintf(worker.bgw_type, BGW_MAXLEN, "pm_index pool sweeper");
	RegisterBackgroundWorker(&worker);

	/*
	 * in archive recovery, from the first consistent state: the pools of
	 * dropped indexes
	 */
	if (pmi_archive_recovery)
	{
		worker.bgw_flags = BGWORKER_SHMEM_ACCESS;
		worker.bgw_start_time = BgWorkerStart_ConsistentState;
		snprintf(worker.bgw_function_name, BGW_MAXLEN, "pmi_standby_sweeper_main");
		snprintf(worker.bgw_name, BGW_MAXLEN, "pm_index standby pool sweeper");
		snprintf(worker.bgw_type, BGW_MAXLEN, "pm_index standby pool sweeper");
		RegisterBackgroundWorker(&worker);
	}
}
