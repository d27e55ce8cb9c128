/*
 * pmi_wal.c
 *	  WAL records of every change to the set of entries of a WAL-logged
 *	  index, for the pm_index resource manager (pmi_redo.c replays them;
 *	  docs/replication.md).
 *
 * Records are logical: the relation, the structure's kind and entries as
 * the structure makes them self-contained (PmiAmOps.log_entry), so a pool
 * never needs a page image and a standby's pool may differ from the
 * primary's in layout.  A record is written after the pool took the change:
 * a change that failed is never logged, and one a crash lost with its
 * record is what reconciliation handles.
 */
#include "pm_index.h"

#include "access/xloginsert.h"
#include "utils/memutils.h"
#include "utils/rel.h"


/* ---- logging ---- */

/*
 * An empty pool for a WAL-logged index: the standby makes one of the same
 * UUID, which the index's metapage (WAL-logged too) names, and the same
 * structure format parameter (the rest of the record).  The pool
 * remembers the position: it is kept by WAL from there on.
 */
void
pmi_log_create(Relation index, const PmiAmOps *ops, pm_pool *pool)
{
	PmiWalHeader hdr = {index->rd_node, ops->kind, 0};
	PmiFormatParam param;

	if (!RelationNeedsWAL(index))
		return;
	pmi_format_param(index, ops, &param);
	XLogBeginInsert();
	XLogRegisterData((char *) &hdr, sizeof(hdr));
	XLogRegisterData((char *) pool->hdr->uuid, sizeof(pool->hdr->uuid));
	XLogRegisterData((char *) param.data, param.len);
	pm_pool_set_host_position(pool, XLogInsert(PMI_RMGR_ID, XLOG_PMI_CREATE));
}

static void
log_entries(Relation index, const PmiAmOps *ops, const pm_pool *pool, uint8 info,
			const void *entries, int n)
{
	static StringInfo buf = NULL;
	PmiWalHeader hdr = {index->rd_node, ops->kind, 0};

	if (n == 0 || !RelationNeedsWAL(index))
		return;
	if (n > PMI_WAL_MAX_ENTRIES)
	{
		log_entries(index, ops, pool, info, entries, PMI_WAL_MAX_ENTRIES);
		log_entries(index, ops, pool, info,
					(const char *) entries + PMI_WAL_MAX_ENTRIES * ops->entry_size,
					n - PMI_WAL_MAX_ENTRIES);
		return;
	}
	hdr.nentries = (uint16) n;
	if (buf == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);

		buf = makeStringInfo();
		MemoryContextSwitchTo(old);
	}
	resetStringInfo(buf);
	for (int i = 0; i < n; i++)
	{
		int			at = buf->len;
		uint32		len = 0;

		appendBinaryStringInfo(buf, (const char *) &len, sizeof(len));
		ops->log_entry(pool, (const char *) entries + i * ops->entry_size, buf);
		len = buf->len - at - sizeof(len);
		memcpy(buf->data + at, &len, sizeof(len));
	}
	XLogBeginInsert();
	XLogRegisterData((char *) &hdr, sizeof(hdr));
	XLogRegisterData(buf->data, buf->len);
	(void) XLogInsert(PMI_RMGR_ID, info);
	if (buf->maxlen > 1024 * 1024)
	{
		/* one large batch of wide keys need not keep its memory */
		pfree(buf->data);
		pfree(buf);
		buf = NULL;
	}
}

/*
 * A pool copied or moved to another relfilenode by a storage command
 * (pmi_storage.c), which PostgreSQL logs for the relation's own files.
 */
void
pmi_log_copy(RelFileNodeBackend from, RelFileNodeBackend to, bool move)
{
	PmiWalHeader hdr = {to.node, 0, 0};
	uint8		moved = move;

	if (RelFileNodeBackendIsTemp(from))
		return;
	XLogBeginInsert();
	XLogRegisterData((char *) &hdr, sizeof(hdr));
	XLogRegisterData((char *) &from.node, sizeof(from.node));
	XLogRegisterData((char *) &moved, sizeof(moved));
	(void) XLogInsert(PMI_RMGR_ID, XLOG_PMI_COPY);
}

/* One entry an insert put in the pool. */
void
pmi_log_insert(Relation index, PmiIndex *h, const void *entry)
{
	log_entries(index, h->ops, h->pool, XLOG_PMI_INSERT, entry, 1);
}

/* Entries VACUUM or reconciliation deleted from the pool (n of them, entry_size apart). */
void
pmi_log_deletes(Relation index, const PmiAmOps *ops, const pm_pool *pool, const void *entries,
				int n)
{
	log_entries(index, ops, pool, XLOG_PMI_DELETE, entries, n);
}

/* A batch of a build's entries, after the build made the pool. */
void
pmi_log_build_entries(Relation index, const PmiAmOps *ops, const pm_pool *pool,
					  const void *entries, int n)
{
	log_entries(index, ops, pool, XLOG_PMI_ENTRIES, entries, n);
}
