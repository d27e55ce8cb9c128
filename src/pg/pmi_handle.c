/*
 * pmi_handle.c
 *	  This backend's handle on a pm_index index, whatever its access method:
 *	  the metapage that ties the relfilenode to its pool, the pool mapping,
 *	  the registry slot, and the first use after a restart (the access
 *	  method's recovery, then reconciliation after a crash), done by one
 *	  backend while concurrent first users wait for it.  Also what every
 *	  access method's writes share: the reconciliation note and the
 *	  persistence counters.
 */
#include "pm_index.h"

#include "access/generic_xlog.h"
#include "access/xlog.h"
#include "access/xlogrecovery.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/ipc.h"
#include "storage/proc.h"
#include "storage/procarray.h"
#include "storage/smgr.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/wait_event.h"

static HTAB *handles = NULL;
static const uint8 zero_uuid[16];

void
pmi_report(const pm_error *err, Relation index)
{
	pmi_report_core_error(ERROR, err, RelationGetRelationName(index));
	pg_unreachable();
}

/* Add this backend's pending counts to the slot (cheap to call; no lock). */
void
pmi_publish_counters(PmiIndex *h)
{
	PmiSlot    *s = pmi_slot(h->slotno);

	if (h->pool == NULL || s->generation != h->generation)
		return;					/* the index is gone; so are its counters */
	pg_atomic_fetch_add_u64(&s->inserts, h->pending_inserts);
	pg_atomic_fetch_add_u64(&s->deletes, h->pending_deletes);
	pg_atomic_fetch_add_u64(&s->flushes, h->pending_flushes);
	pg_atomic_fetch_add_u64(&s->fences, h->pending_fences);
	h->pending_inserts = h->pending_deletes = h->pending_flushes = h->pending_fences = 0;
}

/*
 * Count n writes and their flushes and fences.  Backends publish in batches:
 * a shared counter touched by every row would be a cache line all writers
 * fight over.
 */
void
pmi_count_writes(PmiIndex *h, const pm_counters *before, int n, bool insert)
{
	if (insert)
		h->pending_inserts += n;
	else
		h->pending_deletes += n;
	h->pending_flushes += pm_tls_counters.flushes - before->flushes;
	h->pending_fences += pm_tls_counters.fences - before->fences;
	if (h->pending_inserts + h->pending_deletes >= PMI_COUNTER_BATCH)
		pmi_publish_counters(h);
}

static void
publish_all_at_exit(int code, Datum arg)
{
	HASH_SEQ_STATUS status;
	PmiIndex *h;

	hash_seq_init(&status, handles);
	while ((h = hash_seq_search(&status)) != NULL)
		pmi_publish_counters(h);
}

void
pmi_write_metapage(Relation index, ForkNumber fork, const PmiAmOps *ops, const uint8 *uuid)
{
	PmiMetaPageData meta = {ops->meta_magic, PMI_META_VERSION, {0}};

	memcpy(meta.pool_uuid, uuid, 16);
	if (fork == INIT_FORKNUM)
	{
		/* the init fork is written directly, as contrib/bloom does */
		Page		page = (Page) palloc(BLCKSZ);

		PageInit(page, BLCKSZ, 0);
		memcpy(PageGetContents(page), &meta, sizeof(meta));
		((PageHeader) page)->pd_lower = ((char *) PageGetContents(page) + sizeof(meta)) - (char *) page;
		PageSetChecksumInplace(page, PMI_METAPAGE_BLKNO);
		smgrwrite(RelationGetSmgr(index), INIT_FORKNUM, PMI_METAPAGE_BLKNO, (char *) page, true);
		log_newpage(&(RelationGetSmgr(index))->smgr_rnode.node, INIT_FORKNUM,
					PMI_METAPAGE_BLKNO, page, true);
		smgrimmedsync(RelationGetSmgr(index), INIT_FORKNUM);
		pfree(page);
	}
	else
	{
		Buffer		buf;
		GenericXLogState *state;
		Page		page;

		if (RelationGetNumberOfBlocks(index) == 0)
			buf = ReadBuffer(index, P_NEW);
		else
			buf = ReadBuffer(index, PMI_METAPAGE_BLKNO);
		LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
		state = GenericXLogStart(index);
		page = GenericXLogRegisterBuffer(state, buf, GENERIC_XLOG_FULL_IMAGE);
		PageInit(page, BLCKSZ, 0);
		memcpy(PageGetContents(page), &meta, sizeof(meta));
		((PageHeader) page)->pd_lower = ((char *) PageGetContents(page) + sizeof(meta)) - (char *) page;
		GenericXLogFinish(state);
		UnlockReleaseBuffer(buf);
	}
}

static void
read_metapage(Relation index, const PmiAmOps *ops, uint8 *uuid)
{
	Buffer		buf;
	PmiMetaPageData *meta;

	if (RelationGetNumberOfBlocks(index) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" has no metapage", RelationGetRelationName(index)),
				 errhint("REINDEX the index.")));
	buf = ReadBuffer(index, PMI_METAPAGE_BLKNO);
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	meta = (PmiMetaPageData *) PageGetContents(BufferGetPage(buf));
	if (meta->magic != ops->meta_magic || meta->version != PMI_META_VERSION)
	{
		UnlockReleaseBuffer(buf);
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("the metapage of index \"%s\" is not one of access method %s of this version",
						RelationGetRelationName(index), ops->amname),
				 errhint("REINDEX the index.")));
	}
	memcpy(uuid, meta->pool_uuid, 16);
	UnlockReleaseBuffer(buf);
}

/*
 * Create and format the pool of relfilenode rnode, replacing a stale pool of
 * a reused relfilenode (a crash before the orphan sweep); uuid NULL gives it
 * a new UUID, flags its header's (PM_POOL_FLAG_*) from the start,
 * format_param the structure's.  Returns it open; the caller closes it.
 */
pm_pool *
pmi_create_pool_for(RelFileNodeBackend rnode, const PmiAmOps *ops, const uint8 *uuid,
					uint64 flags, const PmiFormatParam *format_param, const char *index_name)
{
	char	   *path = pmi_pool_path(rnode);
	pm_pool_create_opts o = {0};
	pm_pool    *pool;
	pm_error	err;
	pm_alloc	a;
	uint64		ring;

	(void) pmi_ensure_pool_dir(ERROR);
	o.owner.system_id = GetSystemIdentifier();
	o.owner.tablespace = rnode.node.spcNode;
	o.owner.database = rnode.node.dbNode;
	o.owner.relfilenode = rnode.node.relNode;
	o.owner.kind = ops->kind;
	o.mode = (pm_mode) pmi_persistence_guc;
	o.max_size = (uint64) pmi_max_pool_mb << 20;
	o.replace = true;
	o.uuid = uuid;
	o.flags = flags;
	pmi_pool_forget(rnode);
	if (pm_pool_create(path, &o, &pool, &err) != PM_OK)
		pmi_report_core_error(ERROR, &err, index_name);
	pm_alloc_attach_pool(&a, pool);
	if (ops->format(pool, format_param, &err) != PM_OK ||
		(ring = pm_recon_create(pool, &a, &err)) == 0)
	{
		pm_pool_close(pool);
		pmi_report_core_error(ERROR, &err, index_name);
	}
	pm_pool_set_root(pool, PM_RECON_ROOT, ring);
	pfree(path);
	return pool;
}

/* A new pool for an index's current relfilenode, dropped if the transaction aborts. */
pm_pool *
pmi_create_pool(Relation index, const PmiAmOps *ops)
{
	RelFileNodeBackend rnode = pmi_index_rnode(index);
	PmiFormatParam param;
	pm_pool    *pool;

	pmi_format_param(index, ops, &param);
	pool = pmi_create_pool_for(rnode, ops, NULL, 0, &param, RelationGetRelationName(index));

	pmi_note_pool_created(rnode);
	return pool;
}

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

static void
check_uuid(Relation index, pm_pool *pool, const uint8 *uuid)
{
	if (memcmp(pool->hdr->uuid, uuid, 16) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("pool file \"%s\" does not belong to index \"%s\"",
						pool->path, RelationGetRelationName(index)),
				 errdetail("The pool's UUID differs from the one in the index's metapage."),
				 errhint("REINDEX the index.")));
}

/*
 * Who makes an index ready on its first use: a backend with its Relation,
 * or the startup process replaying WAL into it, with none.
 */
typedef struct FirstUse
{
	Relation	index;			/* NULL: replay */
	RelFileNodeBackend rnode;
	const char *name;
	const PmiAmOps *ops;
	const uint8 *meta_uuid;		/* the metapage's (index only) */
} FirstUse;

/*
 * Make the structure ready to serve and, after a crash, reconcile it with
 * the heap; returns the DRAM root to publish.  In recovery the pool holds
 * what replay applied, which no heap check may change (reconciliation is
 * for what a primary's crash lost).
 */
static uint64
recover(const FirstUse *fu, pm_pool *pool, int slotno, uint32 generation)
{
	const PmiAmOps *ops = fu->ops;
	void	   *state = palloc0(ops->state_size);
	bool		after_crash = pmi_shared->unclean_start;
	uint64		dram_root;

	ops->attach(state, pool, slotno, generation, 0);
	dram_root = ops->recover(fu->name, state, after_crash);
	if (after_crash && fu->index != NULL && !RecoveryInProgress())
	{
		PG_TRY();
		{
			pmi_reconcile(fu->index, pool, ops, state);
		}
		PG_CATCH();
		{
			if (dram_root != 0)
				ops->release_dram(dram_root);
			PG_RE_THROW();
		}
		PG_END_TRY();
	}
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
replace_torn_pool(const FirstUse *fu, const uint8 *uuid)
{
	PmiFormatParam param;

	pmi_format_param(fu->index, fu->ops, &param);
	pm_pool_close(pmi_create_pool_for(fu->rnode, fu->ops, uuid, PM_POOL_FLAG_BUILDING, &param,
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
first_use(const FirstUse *fu, int slotno, uint32 generation)
{
	pm_pool    *pool;

	if (fu->index != NULL)
	{
		uint8		uuid[16];

		memcpy(uuid, fu->meta_uuid, 16);
		if (memcmp(uuid, zero_uuid, 16) == 0)
			recreate_empty_pool(fu->index, fu->ops, uuid);
		pool = pmi_pool_open(fu->index);
		check_uuid(fu->index, pool, uuid);
		if (pool->torn && !RecoveryInProgress())
			pool = replace_torn_pool(fu, uuid);
	}
	else if ((pool = pmi_pool_lookup(fu->rnode)) == NULL)
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
static void
ensure_ready(const FirstUse *fu, int slotno, uint32 generation)
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

/*
 * Fold the extents another process's growth of the pool (and of the DRAM
 * tier) made this backend map into one window with room to grow.  Every
 * access method callback starts here, and what a scan keeps between
 * callbacks names the pool by offsets, so no address into the pool is live.
 */
static void
remap_between_operations(pm_pool *pool, const char *index_name)
{
	pm_error	err;

	if (pm_pool_remap(pool, &err) != PM_OK || pm_pool_remap(pmi_dram_pool, &err) != PM_OK)
		pmi_report_core_error(ERROR, &err, index_name);
}

/* Is this backend's handle still the live one for its slot? */
static inline bool
handle_current(PmiIndex *h, RelFileNodeBackend rnode)
{
	PmiSlot    *s = pmi_slot(h->slotno);

	return h->pool != NULL && s->state == PMI_SLOT_READY && s->generation == h->generation &&
		RelFileNodeBackendEquals(s->rnode, rnode);
}

/* This backend's handle of rnode, for an index of access method ops (not yet open). */
static PmiIndex *
handle_entry(RelFileNodeBackend rnode, const PmiAmOps *ops, bool *found)
{
	PmiIndex   *h;

	if (handles == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(RelFileNodeBackend);
		ctl.entrysize = sizeof(PmiIndex);
		ctl.hcxt = TopMemoryContext;
		handles = hash_create("pm_index handles", 32, &ctl, HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
		before_shmem_exit(publish_all_at_exit, 0);
	}
	h = hash_search(handles, &rnode, HASH_ENTER, found);
	if (!*found)
	{
		h->pending_inserts = h->pending_deletes = h->pending_flushes = h->pending_fences = 0;
		h->ops = NULL;
		h->am_state = NULL;
	}
	return h;
}

/* Open h (handle_entry) in its slot, the first use done by whoever came first. */
static void
handle_attach(PmiIndex *h, const FirstUse *fu)
{
	PmiSlot    *s;

	h->pool = NULL;
	if (h->ops != fu->ops)
	{
		/* a new handle, or a relfilenode reused by an index of another AM */
		if (h->am_state != NULL)
			pfree(h->am_state);
		h->am_state = MemoryContextAllocZero(TopMemoryContext, fu->ops->state_size);
		h->ops = fu->ops;
	}
	h->slotno = pmi_registry_attach(fu->rnode, fu->ops, &h->generation);
	ensure_ready(fu, h->slotno, h->generation);
	s = pmi_slot(h->slotno);
	if (s->generation != h->generation || s->state != PMI_SLOT_READY)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("index \"%s\" was dropped or rebuilt concurrently", fu->name)));
}

/*
 * An index whose definition gives its structure another format parameter
 * than its pool was made with (a pool of an older build, whose encoding of
 * the index's keys has changed since) is not used until rebuilt.
 */
static void
check_format_param(Relation index, const PmiAmOps *ops, pm_pool *pool)
{
	PmiFormatParam want;
	PmiFormatParam have;

	if (ops->pool_format_param == NULL)
		return;
	pmi_format_param(index, ops, &want);
	ops->pool_format_param(pool, &have);
	if (want.len != have.len || memcmp(want.data, have.data, want.len) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" was built for another key format than its definition gives",
						RelationGetRelationName(index)),
				 errdetail("Its pool was made by a build of pm_index that encoded its keys "
						   "differently, or for another operator class or collation."),
				 errhint("REINDEX the index.")));
}

PmiIndex *
pmi_index_open(Relation index, const PmiAmOps *ops)
{
	PmiIndex   *h;
	bool		found;
	uint8		uuid[16];
	pm_pool    *pool;
	RelFileNodeBackend rnode = pmi_index_rnode(index);
	FirstUse	fu = {index, rnode, RelationGetRelationName(index), ops, uuid};

	/*
	 * Fast path: the handle cached in the relcache entry, which any
	 * invalidation of the index (drop, reindex, truncate) resets.
	 */
	if (index->rd_amcache != NULL)
	{
		h = *(PmiIndex **) index->rd_amcache;
		if (handle_current(h, rnode))
		{
			remap_between_operations(h->pool, fu.name);
			return h;
		}
		index->rd_amcache = NULL;
	}
	h = handle_entry(rnode, ops, &found);
	if (found && handle_current(h, rnode) && pmi_pool_open(index) == h->pool)
		goto cache;
	read_metapage(index, ops, uuid);
	handle_attach(h, &fu);
	if (memcmp(uuid, zero_uuid, 16) == 0)
		read_metapage(index, ops, uuid);	/* a fresh pool was just made */
	pool = pmi_pool_open(index);
	check_uuid(index, pool, uuid);
	check_format_param(index, ops, pool);
	memcpy(h->uuid, uuid, 16);
	/* the handle names its pool once attached: an error on the way leaves it to the next call */
	ops->attach(h->am_state, pool, h->slotno, h->generation, pmi_slot(h->slotno)->dram_root);
	h->pool = pool;
	pm_recon_cursor_init(&h->recon_cursor, MyProc->pgprocno);
cache:
	index->rd_amcache = MemoryContextAlloc(index->rd_indexcxt, sizeof(PmiIndex *));
	*(PmiIndex **) index->rd_amcache = h;
	remap_between_operations(h->pool, fu.name);
	return h;
}

/*
 * The startup process's handle on an index it replays WAL into.  Recovery
 * has no catalog access, so there is no Relation: the pool is found by its
 * relfilenode, and its UUID is the one the metapage names because both
 * came from the same records.  The caller found the pool there and trusted.
 */
PmiIndex *
pmi_index_open_for_replay(RelFileNodeBackend rnode, const PmiAmOps *ops, const char *name)
{
	PmiIndex   *h;
	bool		found;
	FirstUse	fu = {NULL, rnode, name, ops, NULL};

	h = handle_entry(rnode, ops, &found);
	if (!(found && handle_current(h, rnode) && pmi_pool_lookup(rnode) == h->pool))
	{
		pm_pool    *pool;

		handle_attach(h, &fu);
		pool = pmi_pool_lookup(rnode);
		if (pool == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_FILE),
					 errmsg("index %s has no pool file", name)));
		memcpy(h->uuid, pool->hdr->uuid, 16);
		ops->attach(h->am_state, pool, h->slotno, h->generation, pmi_slot(h->slotno)->dram_root);
		h->pool = pool;
	}
	remap_between_operations(h->pool, name);
	return h;
}

/*
 * A scan of a pool being built would miss rows.  The planner never chooses
 * one (pmi_index_plannable); this stops a plan that slipped past, cached
 * while the pool was torn and then replaced.
 */
void
pmi_scan_check_built(PmiIndex *h, Relation index)
{
	if (pmi_pool_building(h->pool))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("index \"%s\" is being built", RelationGetRelationName(index)),
				 errdetail("A background worker is filling its pool from its table."),
				 errhint("Run the statement again: plans made now do not use the index.")));
}

/*
 * May the planner use this index?  Not while its pool is being built
 * (pmi_fill.c), nor for a snapshot older than the build's (*transient then:
 * a plan made without it is made again once the index is ready).  In
 * recovery its pool must be there and trusted, and replay must have passed
 * every record the pool took before this server started using it: a
 * restarted standby's pool can be ahead of the heap pages replay meets
 * again.  On a primary an untrusted pool is left to refuse its use with the
 * reason.  Raises no error.
 */
bool
pmi_index_plannable(Relation index, bool *transient)
{
	RelFileNodeBackend rnode = pmi_index_rnode(index);
	pm_pool    *pool = pmi_pool_lookup(rnode);
	TransactionId ready_xmin;
	uint64		replayed;

	if (pool == NULL)
		return !RecoveryInProgress();	/* an unlogged index's first use makes one */
	/* a torn pool is replaced by one being built on its first use */
	if (pool->torn || pmi_pool_building(pool))
	{
		*transient = true;
		return false;
	}
	ready_xmin = pmi_registry_ready_xmin(rnode);
	if (TransactionIdIsValid(ready_xmin) && TransactionIdPrecedes(TransactionXmin, ready_xmin))
	{
		*transient = true;
		return false;
	}
	if (!RecoveryInProgress())
		return true;
	if (pmi_pool_untrusted(pool))
		return false;
	if (!pmi_registry_replayed_before_start(rnode, &replayed))
		replayed = pm_load(&pool->hdr->host_position);
	return GetXLogReplayRecPtr(NULL) >= replayed;
}

/*
 * How far WAL is flushed, for the reconciliation ring.  When every stripe's
 * next note still names unflushed heap WAL and the ring is as large as it
 * grows (asynchronous commit outran the WAL writer), force flushes up to it,
 * as a synchronous commit would, so that no note is lost and reconciliation
 * after a crash stays bounded by the ring.
 */
static uint64
wal_durable_upto(uint64 upto, bool force)
{
	if (force)
		XLogFlush((XLogRecPtr) upto);
	return GetFlushRecPtr(NULL);
}

/*
 * Before an entry naming a heap tuple is inserted: the tuple's WAL ends at
 * XactLastRecEnd and may not be flushed yet, so note (key, rest) in the
 * pool's ring for reconciliation after a crash (docs/design.md section 7).
 */
void
pmi_note_insert(PmiIndex *h, Relation heap, uint64 key, uint64 rest)
{
	pm_recon   *recon = pm_recon_of(h->pool);

	if (recon != NULL && RelationNeedsWAL(heap) && XactLastRecEnd != InvalidXLogRecPtr)
		pm_recon_note(h->pool, recon, &h->recon_cursor, key, rest, XactLastRecEnd,
					  wal_durable_upto);
}

/*
 * The context an index-only scan forms its tuples in, reset for each tuple:
 * made on first use (most scans are not index-only) as a child of the
 * context that holds the scan's state.
 */
MemoryContext
pmi_tuple_context(MemoryContext *ctx, void *scan_state)
{
	if (*ctx == NULL)
		*ctx = AllocSetContextCreate(GetMemoryChunkContext(scan_state), "pm_index index-only tuples",
									 ALLOCSET_SMALL_SIZES);
	MemoryContextReset(*ctx);
	return *ctx;
}
