/*
 * pmi_redo.c
 *	  The pm_index resource manager: replay of the records pmi_wal.c writes
 *	  into a standby's own pools, and their description for pg_walinspect
 *	  (docs/replication.md).
 *
 * Replay applies an entry with the structure's own failure-atomic insert
 * and delete (PmiAmOps.replay_entry), through the startup process's handle
 * on the index (no Relation: recovery has no catalog access).  It never
 * raises an ERROR (that would stop recovery): a pool that cannot take a
 * record is marked untrusted, with a WARNING, and is not used until its
 * index is rebuilt.  A start from a backup_label replaces every pool, a
 * copy, with an empty one that replay keeps and a background build fills
 * (pmi_fill.c).
 */
#include "pm_index.h"

#include "access/xlog.h"
#include "access/xlog_internal.h"
#include "access/xlogreader.h"
#include "miscadmin.h"
#include "utils/memutils.h"

bool		pmi_archive_recovery = false;

static MemoryContext redo_context = NULL;

static const char *
index_name(RelFileLocator node)
{
	return psprintf("with relfilenode %u/%u/%u", node.spcOid, node.dbOid, node.relNumber);
}

static void
replay_create(XLogReaderState *record, const PmiWalHeader *hdr, const PmiAmOps *ops)
{
	RelFileLocatorBackend rlocator = {hdr->node, INVALID_PROC_NUMBER};
	const uint8 *uuid = (const uint8 *) XLogRecGetData(record) + sizeof(*hdr);
	PmiFormatParam param;
	pm_pool    *pool;

	if (XLogRecGetDataLen(record) < sizeof(*hdr) + 16 ||
		XLogRecGetDataLen(record) > sizeof(*hdr) + 16 + PMI_FORMAT_PARAM_MAX)
		elog(ERROR, "pm_index CREATE record of %u bytes", XLogRecGetDataLen(record));

	/*
	 * the structure's format parameter follows the UUID (records of 0.4 and
	 * before have none)
	 */
	param.len = XLogRecGetDataLen(record) - sizeof(*hdr) - 16;
	memcpy(param.data, uuid + 16, param.len);
	pool = pmi_pool_lookup(rlocator);

	/*
	 * Replayed again after a restart: the pool has taken records since.  A
	 * pool being built that replaced a backup's copy is current from here on:
	 * every entry of the index is in the records that follow.
	 */
	if (pool != NULL && memcmp(pool->hdr->uuid, uuid, 16) == 0)
	{
		if (pmi_pool_building(pool))
		{
			pm_pool_set_host_position(pool, record->EndRecPtr);
			pm_pool_clear_flag(pool, PM_POOL_FLAG_BUILDING);
		}
		return;
	}
	/* a relfilenode of a dropped index is reused: its slot goes with its pool */
	pmi_registry_release(rlocator);
	pool = pmi_create_pool_for(rlocator, ops, uuid, 0, &param, index_name(hdr->node));
	pm_pool_set_host_position(pool, record->EndRecPtr);
	pm_pool_close(pool);
}

static void
replay_entries(XLogReaderState *record, const PmiWalHeader *hdr, const PmiAmOps *ops, bool insert)
{
	RelFileLocatorBackend rlocator = {hdr->node, INVALID_PROC_NUMBER};
	const char *name = index_name(hdr->node);
	const char *p = XLogRecGetData(record) + sizeof(*hdr);
	const char *end = XLogRecGetData(record) + XLogRecGetDataLen(record);
	pm_pool    *pool = pmi_pool_lookup(rlocator);
	PmiIndex   *h;
	pm_error	err;

	/*
	 * no pool (dropped since), or one not used until rebuilt: nothing to keep
	 * current
	 */
	if (pool == NULL || pmi_pool_untrusted(pool))
		return;
	/* applied before a restart */
	if (record->EndRecPtr <= pm_load(&pool->hdr->host_position))
		return;
	h = pmi_index_open_for_replay(rlocator, ops, name);
	/* a structure durable at its checkpoints: one per record, before the position moves */
	if (ops->checkpoint != NULL)
		pmi_tier_exclusive_begin(h->slotno);
	PG_TRY();
	{
		for (uint32 i = 0; i < hdr->nentries; i++)
		{
			uint32		len;

			if (end - p < (ptrdiff_t) sizeof(len))
				elog(ERROR, "pm_index record for index %s is truncated", name);
			memcpy(&len, p, sizeof(len));
			p += sizeof(len);
			if (end - p < (ptrdiff_t) len)
				elog(ERROR, "pm_index record for index %s is truncated", name);
			if (ops->replay_entry(ops, h->am_state, insert, p, len, &err) != PM_OK)
				pmi_report_core_error(ERROR, &err, name);
			p += len;
		}
		if (ops->checkpoint != NULL &&
			pmi_tier_checkpoint_held(h->slotno, h->pool, ops, h->am_state, &err) != PM_OK)
			pmi_report_core_error(ERROR, &err, name);
	}
	PG_FINALLY();
	{
		if (ops->checkpoint != NULL)
			pmi_tier_exclusive_end(h->slotno);
	}
	PG_END_TRY();
	/* the heap's record that frees the deleted entries' items comes next */
	if (!insert)
		pmi_wait_for_scans_in_recovery(h, hdr->node.dbOid);
	pm_pool_set_host_position(h->pool, record->EndRecPtr);
}

/*
 * The standby's own pool copied as the primary copied its.  Replayed again
 * after a restart, the copy is there already (a copy keeps the UUID) and may
 * have taken records since.
 */
static void
replay_copy(XLogReaderState *record, const PmiWalHeader *hdr)
{
	RelFileLocatorBackend to = {hdr->node, INVALID_PROC_NUMBER};
	RelFileLocatorBackend from = {{0}, INVALID_PROC_NUMBER};
	uint8		moved;
	pm_pool    *source;
	pm_pool    *copy;

	if (XLogRecGetDataLen(record) < sizeof(*hdr) + sizeof(from.locator) + sizeof(moved))
		elog(ERROR, "pm_index COPY record too short");
	memcpy(&from.locator, XLogRecGetData(record) + sizeof(*hdr), sizeof(from.locator));
	memcpy(&moved, XLogRecGetData(record) + sizeof(*hdr) + sizeof(from.locator), sizeof(moved));
	source = pmi_pool_lookup(from);
	copy = pmi_pool_lookup(to);
	if (source == NULL || (copy != NULL && memcmp(copy->hdr->uuid, source->hdr->uuid, 16) == 0))
		return;
	pmi_registry_release(to);
	pmi_pool_forget(to);
	if (moved)
	{
		pmi_registry_release(from);
		pmi_pool_forget(from);
	}
	pmi_pool_copy(from, to, moved);
}

/* Replay that failed: the index is not used here until it is rebuilt. */
static void
replay_failed(const PmiWalHeader *hdr, ErrorData *edata)
{
	RelFileLocatorBackend rlocator = {hdr->node, INVALID_PROC_NUMBER};
	pm_pool    *pool = pmi_pool_lookup(rlocator);

	if (pool != NULL)
		pm_pool_set_flag(pool, PM_POOL_FLAG_UNTRUSTED);
	ereport(WARNING,
			(errcode(edata->sqlerrcode),
			 errmsg("pm_index: could not replay a change of the index %s: %s",
					index_name(hdr->node), edata->message),
			 errdetail("The index is not used on this server until it is rebuilt."),
			 errhint("After a promotion, REINDEX the index.")));
}

static void
pmi_redo(XLogReaderState *record)
{
	uint8		info = XLogRecGetInfo(record) & ~XLR_INFO_MASK;
	PmiWalHeader hdr;
	const PmiAmOps *ops;
	MemoryContext old;

	/*
	 * Crash recovery of this server's own WAL: every logged change is in the
	 * pool already, since a record is written after its change.
	 */
	if (!pmi_archive_recovery && !pmi_started_from_backup)
		return;
	if (XLogRecGetDataLen(record) < sizeof(hdr))
		elog(PANIC, "pm_index record too short: %u bytes", XLogRecGetDataLen(record));
	memcpy(&hdr, XLogRecGetData(record), sizeof(hdr));
	ops = pmi_am_of_kind(hdr.kind);
	if (ops == NULL && info != XLOG_PMI_COPY)
	{
		ereport(WARNING,
				(errmsg("pm_index: skipping a record for index %s of unknown kind %u",
						index_name(hdr.node), hdr.kind)));
		return;
	}
	old = MemoryContextSwitchTo(redo_context);
	PG_TRY();
	{
		if (info == XLOG_PMI_CREATE)
			replay_create(record, &hdr, ops);
		else if (info == XLOG_PMI_COPY)
			replay_copy(record, &hdr);
		else
			replay_entries(record, &hdr, ops, info != XLOG_PMI_DELETE);
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(redo_context);
		edata = CopyErrorData();
		FlushErrorState();

		/*
		 * replay runs with no lock of its own held: what the error left is
		 * ours
		 */
		LWLockReleaseAll();
		ConditionVariableCancelSleep();
		replay_failed(&hdr, edata);
	}
	PG_END_TRY();
	MemoryContextSwitchTo(old);
	MemoryContextReset(redo_context);
}

static void
pmi_redo_startup(void)
{
	if (redo_context == NULL)
		redo_context = AllocSetContextCreate(TopMemoryContext, "pm_index replay",
											 ALLOCSET_DEFAULT_SIZES);
	if (pmi_started_from_backup)
		pmi_replace_copied_pools();
}

static void
pmi_redo_cleanup(void)
{
	if (redo_context != NULL)
		MemoryContextDelete(redo_context);
	redo_context = NULL;
}

static const char *
pmi_identify(uint8 info)
{
	switch (info & ~XLR_INFO_MASK)
	{
		case XLOG_PMI_CREATE:
			return "CREATE";
		case XLOG_PMI_ENTRIES:
			return "ENTRIES";
		case XLOG_PMI_INSERT:
			return "INSERT";
		case XLOG_PMI_DELETE:
			return "DELETE";
		case XLOG_PMI_COPY:
			return "COPY";
	}
	return NULL;
}

static void
pmi_desc(StringInfo buf, XLogReaderState *record)
{
	PmiWalHeader hdr;
	const PmiAmOps *ops;

	if (XLogRecGetDataLen(record) < sizeof(hdr))
		return;
	memcpy(&hdr, XLogRecGetData(record), sizeof(hdr));
	appendStringInfo(buf, "rel %u/%u/%u", hdr.node.spcOid, hdr.node.dbOid, hdr.node.relNumber);
	if ((XLogRecGetInfo(record) & ~XLR_INFO_MASK) == XLOG_PMI_COPY)
	{
		RelFileLocator from;
		uint8		moved;

		if (XLogRecGetDataLen(record) >= sizeof(hdr) + sizeof(from) + sizeof(moved))
		{
			memcpy(&from, XLogRecGetData(record) + sizeof(hdr), sizeof(from));
			memcpy(&moved, XLogRecGetData(record) + sizeof(hdr) + sizeof(from), sizeof(moved));
			appendStringInfo(buf, "; %s from %u/%u/%u", moved ? "moved" : "copied",
							 from.spcOid, from.dbOid, from.relNumber);
		}
		return;
	}
	ops = pmi_am_of_kind(hdr.kind);
	appendStringInfo(buf, "; %s", ops ? ops->amname : "unknown kind");
	if ((XLogRecGetInfo(record) & ~XLR_INFO_MASK) == XLOG_PMI_CREATE)
	{
		char		uuid[37];

		if (XLogRecGetDataLen(record) >= sizeof(hdr) + 16)
		{
			pm_uuid_format((const uint8 *) XLogRecGetData(record) + sizeof(hdr), uuid);
			appendStringInfo(buf, "; pool %s", uuid);
		}
	}
	else
		appendStringInfo(buf, "; %u %s", hdr.nentries, hdr.nentries == 1 ? "entry" : "entries");
}

static RmgrData pmi_rmgr = {
	.rm_name = "pm_index",
	.rm_redo = pmi_redo,
	.rm_desc = pmi_desc,
	.rm_identify = pmi_identify,
	.rm_startup = pmi_redo_startup,
	.rm_cleanup = pmi_redo_cleanup,
};

/* _PG_init, while shared_preload_libraries load */
void
pmi_redo_init(void)
{
	RegisterCustomRmgr(PMI_RMGR_ID, &pmi_rmgr);
}
