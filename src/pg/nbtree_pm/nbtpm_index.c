/*
 * nbtpm_index.c
 *	  This backend's handle on an nbtree_pm index: the metapage that ties the
 *	  relfilenode to its pool, the pool mapping, the registry slot, and the
 *	  DRAM layer, rebuilt from the pool by the first user after a restart
 *	  while concurrent first users wait for it.
 */
#include "nbtpm.h"

#include "access/generic_xlog.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/ipc.h"
#include "storage/procarray.h"
#include "utils/wait_event.h"
#include "storage/smgr.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/rel.h"

static HTAB *handles = NULL;
static const uint8 zero_uuid[16];

void
nbtpm_report(const pm_error *err, Relation index)
{
	pmi_report_core_error(ERROR, err, RelationGetRelationName(index));
	pg_unreachable();
}

/* Add this backend's pending counts to the slot (cheap to call; no lock). */
void
nbtpm_publish_counters(NbtpmIndex *h)
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
 * Count one write and its flushes and fences.  Backends publish in batches:
 * a shared counter touched by every row would be a cache line all writers
 * fight over.
 */
void
nbtpm_count_write(NbtpmIndex *h, const pm_counters *before, bool insert)
{
	if (insert)
		h->pending_inserts++;
	else
		h->pending_deletes++;
	h->pending_flushes += pm_tls_counters.flushes - before->flushes;
	h->pending_fences += pm_tls_counters.fences - before->fences;
	if (h->pending_inserts + h->pending_deletes >= PMI_COUNTER_BATCH)
		nbtpm_publish_counters(h);
}

static void
publish_all_at_exit(int code, Datum arg)
{
	HASH_SEQ_STATUS status;
	NbtpmIndex *h;

	hash_seq_init(&status, handles);
	while ((h = hash_seq_search(&status)) != NULL)
		nbtpm_publish_counters(h);
}

void
nbtpm_write_metapage(Relation index, ForkNumber fork, const uint8 *uuid)
{
	NbtpmMetaPageData meta = {NBTPM_META_MAGIC, NBTPM_META_VERSION, {0}};

	memcpy(meta.pool_uuid, uuid, 16);
	if (fork == INIT_FORKNUM)
	{
		/* the init fork is written directly, as contrib/bloom does */
		Page		page = (Page) palloc(BLCKSZ);

		PageInit(page, BLCKSZ, 0);
		memcpy(PageGetContents(page), &meta, sizeof(meta));
		((PageHeader) page)->pd_lower = ((char *) PageGetContents(page) + sizeof(meta)) - (char *) page;
		PageSetChecksumInplace(page, NBTPM_METAPAGE_BLKNO);
		smgrwrite(RelationGetSmgr(index), INIT_FORKNUM, NBTPM_METAPAGE_BLKNO, (char *) page, true);
		log_newpage(&(RelationGetSmgr(index))->smgr_rnode.node, INIT_FORKNUM,
					NBTPM_METAPAGE_BLKNO, page, true);
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
			buf = ReadBuffer(index, NBTPM_METAPAGE_BLKNO);
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
read_metapage(Relation index, uint8 *uuid)
{
	Buffer		buf;
	NbtpmMetaPageData *meta;

	if (RelationGetNumberOfBlocks(index) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" has no metapage", RelationGetRelationName(index)),
				 errhint("REINDEX the index.")));
	buf = ReadBuffer(index, NBTPM_METAPAGE_BLKNO);
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	meta = (NbtpmMetaPageData *) PageGetContents(BufferGetPage(buf));
	if (meta->magic != NBTPM_META_MAGIC || meta->version != NBTPM_META_VERSION)
	{
		UnlockReleaseBuffer(buf);
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" is not an nbtree_pm index of this version",
						RelationGetRelationName(index)),
				 errhint("REINDEX the index.")));
	}
	memcpy(uuid, meta->pool_uuid, 16);
	UnlockReleaseBuffer(buf);
}

/*
 * Create and format the pool of an index's current relfilenode, replacing a
 * stale pool of a reused relfilenode (a crash before the orphan sweep).
 * Returns it open; the caller closes it.
 */
pm_pool *
nbtpm_create_pool(Relation index)
{
	char	   *path = pmi_pool_path(index->rd_node);
	pm_pool_create_opts o = {0};
	pm_pool    *pool;
	pm_error	err;
	pm_alloc	a;
	uint64		ring;

	pmi_ensure_pool_dir();
	o.owner.system_id = GetSystemIdentifier();
	o.owner.tablespace = index->rd_node.spcNode;
	o.owner.database = index->rd_node.dbNode;
	o.owner.relfilenode = index->rd_node.relNode;
	o.owner.kind = PM_KIND_NBTREE;
	o.mode = (pm_mode) pmi_persistence_guc;
	o.replace = true;
	pmi_pool_forget(index->rd_node);
	if (pm_pool_create(path, &o, &pool, &err) != PM_OK)
		nbtpm_report(&err, index);
	pmi_note_pool_created(index->rd_node);
	pm_alloc_attach_pool(&a, pool);
	if (nbt_format(pool, &err) != PM_OK || (ring = pm_recon_create(pool, &a, &err)) == 0)
	{
		pm_pool_close(pool);
		nbtpm_report(&err, index);
	}
	pm_pool_set_root(pool, 1, ring);
	pfree(path);
	return pool;
}

/*
 * An unlogged index reset after a crash (its metapage came from the init
 * fork, with no pool): give it a fresh empty pool.  Caller holds the slot lock.
 */
static void
recreate_empty_pool(Relation index, uint8 *uuid)
{
	pm_pool    *pool = nbtpm_create_pool(index);

	memcpy(uuid, pool->hdr->uuid, 16);
	pm_pool_close(pool);
	nbtpm_write_metapage(index, MAIN_FORKNUM, uuid);
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

/* Build the DRAM layer from the pool and reconcile; returns its DRAM root. */
static uint64
build_dram_layer(Relation index, int slotno, uint32 generation, const uint8 *meta_uuid)
{
	uint8		uuid[16];
	pm_pool    *pool;
	nbt_tree	t;
	pm_error	err;

	memcpy(uuid, meta_uuid, 16);
	if (memcmp(uuid, zero_uuid, 16) == 0)
		recreate_empty_pool(index, uuid);
	pool = pmi_pool_open(index);
	check_uuid(index, pool, uuid);
	pmi_reject_untrusted(pool, RelationGetRelationName(index));
	nbt_attach(&t, pool, pmi_dram(), pmi_epoch(), slotno + 1, generation, 0, 0);
	if (nbt_rebuild(&t, true, &err) != PM_OK)
		nbtpm_report(&err, index);
	if (pmi_shared->unclean_start)
	{
		PG_TRY();
		{
			nbtpm_reconcile(index, &t);
		}
		PG_CATCH();
		{
			nbt_release_dram(&t);
			PG_RE_THROW();
		}
		PG_END_TRY();
	}
	return t.dram_root;
}

/*
 * Make the slot READY: the first user builds the DRAM layer (and reconciles
 * after a crash) with no lock held, so the work can be cancelled; concurrent
 * first users sleep on the slot's condition variable, and take over if the
 * builder died.  A failed build leaves the slot for the next user.
 */
static void
ensure_ready(Relation index, int slotno, uint32 generation, const uint8 *meta_uuid)
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
		root = build_dram_layer(index, slotno, generation, meta_uuid);
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

	LWLockAcquire(&s->lock, LW_EXCLUSIVE);
	s->dram_root = root;
	s->state = PMI_SLOT_READY;
	s->builder_pid = 0;
	LWLockRelease(&s->lock);
	ConditionVariableBroadcast(&s->ready_cv);
}

/* Is this backend's handle still the live one for its slot? */
static inline bool
handle_current(NbtpmIndex *h, Relation index)
{
	PmiSlot    *s = pmi_slot(h->slotno);

	return h->pool != NULL && s->state == PMI_SLOT_READY && s->generation == h->generation &&
		RelFileNodeEquals(s->rnode, index->rd_node);
}

NbtpmIndex *
nbtpm_open(Relation index)
{
	NbtpmIndex *h;
	bool		found;
	uint8		uuid[16];
	PmiSlot    *s;

	/*
	 * Fast path: the handle cached in the relcache entry, which any
	 * invalidation of the index (drop, reindex, truncate) resets.
	 */
	if (index->rd_amcache != NULL)
	{
		h = *(NbtpmIndex **) index->rd_amcache;
		if (handle_current(h, index))
			return h;
		index->rd_amcache = NULL;
	}
	if (handles == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(RelFileNode);
		ctl.entrysize = sizeof(NbtpmIndex);
		ctl.hcxt = TopMemoryContext;
		handles = hash_create("nbtree_pm handles", 32, &ctl, HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
		before_shmem_exit(publish_all_at_exit, 0);
	}
	h = hash_search(handles, &index->rd_node, HASH_ENTER, &found);
	if (!found)
		h->pending_inserts = h->pending_deletes = h->pending_flushes = h->pending_fences = 0;
	if (found && handle_current(h, index) && pmi_pool_open(index) == h->pool)
		goto cache;
	h->pool = NULL;

	read_metapage(index, uuid);
	h->slotno = pmi_registry_attach(index->rd_node, &h->generation);
	ensure_ready(index, h->slotno, h->generation, uuid);
	s = pmi_slot(h->slotno);
	if (s->generation != h->generation || s->state != PMI_SLOT_READY)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("index \"%s\" was dropped or rebuilt concurrently",
						RelationGetRelationName(index))));
	if (memcmp(uuid, zero_uuid, 16) == 0)
		read_metapage(index, uuid);	/* a fresh pool was just made */
	h->pool = pmi_pool_open(index);
	check_uuid(index, h->pool, uuid);
	memcpy(h->uuid, uuid, 16);
	nbt_attach(&h->tree, h->pool, pmi_dram(), pmi_epoch(), h->slotno + 1, h->generation, 0,
			   s->dram_root);
	h->recon = pm_pool_root(h->pool, 1) ? pm_pool_addr(h->pool, pm_pool_root(h->pool, 1)) : NULL;
	h->flushed_lsn = 0;
cache:
	index->rd_amcache = MemoryContextAlloc(index->rd_indexcxt, sizeof(NbtpmIndex *));
	*(NbtpmIndex **) index->rd_amcache = h;
	return h;
}

/* Free a tree's DRAM layer (its index is gone); no error. */
void
nbtpm_release_dram(uint64 dram_root)
{
	nbt_tree	t;

	memset(&t, 0, sizeof(t));
	t.dram = pmi_dram();
	t.dram_root = dram_root;
	nbt_release_dram(&t);
}
