/*
 * pmi_metapage.c
 *	  An index's metapage, which ties its relfilenode to its pool by the
 *	  pool's UUID, and the creation of that pool.
 */
#include "pm_index.h"

#include "access/generic_xlog.h"
#include "access/xloginsert.h"
#include "storage/bufmgr.h"
#include "storage/smgr.h"
#include "utils/rel.h"

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
		log_newpage(&(RelationGetSmgr(index))->smgr_rlocator.locator, INIT_FORKNUM,
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

void
pmi_read_metapage(Relation index, const PmiAmOps *ops, uint8 *uuid)
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
 * Create and format the pool of relfilenode rlocator, replacing a stale pool of
 * a reused relfilenode (a crash before the orphan sweep); uuid NULL gives it
 * a new UUID, flags its header's (PM_POOL_FLAG_*) from the start,
 * format_param the structure's.  Returns it open; the caller closes it.
 */
pm_pool *
pmi_create_pool_for(RelFileLocatorBackend rlocator, const PmiAmOps *ops, const uint8 *uuid,
					uint64 flags, const PmiFormatParam *format_param, const char *index_name)
{
	char	   *path = pmi_pool_path(rlocator);
	pm_pool_create_opts o = {0};
	pm_pool    *pool;
	pm_error	err;
	pm_alloc	a;
	uint64		ring;

	(void) pmi_ensure_pool_dir(ERROR);
	o.owner.system_id = GetSystemIdentifier();
	o.owner.tablespace = rlocator.locator.spcOid;
	o.owner.database = rlocator.locator.dbOid;
	o.owner.relfilenode = rlocator.locator.relNumber;
	o.owner.kind = ops->kind;
	o.mode = (pm_mode) pmi_persistence_guc;
	o.max_size = (uint64) pmi_max_pool_mb << 20;
	o.replace = true;
	o.uuid = uuid;
	o.flags = flags;
	pmi_pool_forget(rlocator);
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
	RelFileLocatorBackend rlocator = pmi_index_rnode(index);
	PmiFormatParam param;
	pm_pool    *pool;

	pmi_format_param(index, ops, &param);
	pool = pmi_create_pool_for(rlocator, ops, NULL, 0, &param, RelationGetRelationName(index));

	pmi_note_pool_created(rlocator);
	return pool;
}
