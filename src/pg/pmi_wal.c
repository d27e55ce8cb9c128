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
 *
 * An insert or a delete and its record are one unit, as a page change and
 * its record are in PostgreSQL: the record is formed (its memory allocated,
 * its entries copied) before the change, and the change and XLogInsert run
 * in a critical section, where nothing raises an ERROR.  The structures'
 * changes return their failures (a full disk, a pool at its maximum size)
 * rather than raise them, and a failed change changes nothing; the caller
 * raises the failure once the critical section has ended, after logging
 * the changes made before it.
 */
#include "pm_index.h"

#include "access/xloginsert.h"
#include "miscadmin.h"
#include "utils/memutils.h"
#include "utils/rel.h"

/*
 * Bytes of entries per record at most: a batch of more (wide keys) is
 * logged in several records.
 */
#define PMI_WAL_MAX_BYTES	(16 * 1024 * 1024)

/*
 * A record of entries formed before the change it logs.  The entries the
 * pool took are moved to the front as the change goes (wal_keep), by
 * copies within memory formed beforehand.  One is formed at a time; its
 * memory is kept for the next.
 */
typedef struct PmiWalEntries
{
	PmiWalHeader hdr;
	uint8		info;
	int			n;				/* entries formed */
	int			kept;			/* entries kept, at the front of data */
	int			kept_len;		/* their bytes */
	StringInfoData data;		/* each entry: a uint32 length, then
								 * log_entry's bytes */
	int		   *ends;			/* where formed entry i ends in data */
	int		   *kept_ends;		/* where kept entry i ends */
	int			maxn;			/* room in ends and kept_ends */
} PmiWalEntries;

static PmiWalEntries formed;

/*
 * pm_index.debug_wal_error: tests make the forming of every record fail, as
 * running out of memory there would, to check that the change is then not
 * made.
 */
bool		pmi_debug_wal_error = false;


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
	PmiWalHeader hdr = {index->rd_locator, ops->kind, 0};
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

/*
 * Form the record of a change to n entries (entry_size apart) of a
 * WAL-logged index, before the change: every allocation, and every copy of
 * what an entry names, is done here.  NULL when there is nothing to log.
 */
static PmiWalEntries *
wal_form(Relation index, const PmiAmOps *ops, const pm_pool *pool, uint8 info,
		 const void *entries, int n)
{
	PmiWalEntries *rec = &formed;

	if (n == 0 || !RelationNeedsWAL(index))
		return NULL;
	if (pmi_debug_wal_error)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("pm_index: could not form a WAL record of index entries (pm_index.debug_wal_error)")));
	if (rec->data.data == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);

		initStringInfo(&rec->data);
		MemoryContextSwitchTo(old);
	}
	if (n > rec->maxn)
	{
		int			maxn = Max(n, 64);

		if (rec->ends != NULL)
		{
			pfree(rec->ends);
			pfree(rec->kept_ends);
			rec->ends = rec->kept_ends = NULL;
			rec->maxn = 0;
		}
		rec->ends = MemoryContextAlloc(TopMemoryContext, sizeof(int) * maxn);
		rec->kept_ends = MemoryContextAlloc(TopMemoryContext, sizeof(int) * maxn);
		rec->maxn = maxn;
	}
	rec->hdr.node = index->rd_locator;
	rec->hdr.kind = ops->kind;
	rec->hdr.nentries = 0;
	rec->info = info;
	rec->n = rec->kept = rec->kept_len = 0;
	resetStringInfo(&rec->data);
	for (int i = 0; i < n; i++)
	{
		int			at = rec->data.len;
		uint32		len = 0;

		appendBinaryStringInfo(&rec->data, (const char *) &len, sizeof(len));
		ops->log_entry(pool, (const char *) entries + i * ops->entry_size, &rec->data);
		len = rec->data.len - at - sizeof(len);
		memcpy(rec->data.data + at, &len, sizeof(len));
		rec->ends[rec->n++] = rec->data.len;
	}
	return rec;
}

/*
 * Formed entry i is in the pool now: it goes into the record.  Entries are
 * kept in the order they were formed.  Raises no error.
 */
static void
wal_keep(PmiWalEntries *rec, int i)
{
	int			start;
	int			len;

	if (rec == NULL)
		return;
	Assert(i < rec->n && i >= rec->kept);
	start = i == 0 ? 0 : rec->ends[i - 1];
	len = rec->ends[i] - start;
	if (start != rec->kept_len)
		memmove(rec->data.data + rec->kept_len, rec->data.data + start, len);
	rec->kept_len += len;
	rec->kept_ends[rec->kept++] = rec->kept_len;
}

/*
 * Write the kept entries, in records of at most PMI_WAL_MAX_ENTRIES entries
 * and about PMI_WAL_MAX_BYTES.  Called in the critical section of the
 * change; raises no error.
 */
static void
wal_insert(PmiWalEntries *rec)
{
	int			first = 0;

	if (rec == NULL)
		return;
	while (first < rec->kept)
	{
		int			start = first == 0 ? 0 : rec->kept_ends[first - 1];
		int			last = first;

		while (last + 1 < rec->kept && last + 1 - first < PMI_WAL_MAX_ENTRIES &&
			   rec->kept_ends[last + 1] - start <= PMI_WAL_MAX_BYTES)
			last++;
		rec->hdr.nentries = (uint16) (last - first + 1);
		XLogBeginInsert();
		XLogRegisterData((char *) &rec->hdr, sizeof(rec->hdr));
		XLogRegisterData(rec->data.data + start, rec->kept_ends[last] - start);
		(void) XLogInsert(PMI_RMGR_ID, rec->info);
		first = last + 1;
	}
	rec->n = rec->kept = rec->kept_len = 0;
}

/*
 * Once the change is done: memory a large record of wide keys took need not
 * be kept for the next one.
 */
static void
release_large(PmiWalEntries *rec)
{
	if (rec != NULL && rec->data.maxlen > 1024 * 1024)
	{
		pfree(rec->data.data);
		rec->data.data = NULL;
	}
}

/*
 * Insert one entry with insert(h, entry, err) and log it, as one unit; a
 * failure of the insert is raised after it, with nothing logged.
 */
void
pmi_insert_logged(Relation index, PmiIndex *h, const void *entry, PmiEntryChangeFn insert)
{
	PmiWalEntries *rec = wal_form(index, h->ops, h->pool, XLOG_PMI_INSERT, entry, 1);
	pm_error	err;
	pm_errcode	rc;

	START_CRIT_SECTION();
	rc = insert(h, entry, &err);
	if (rc == PM_OK)
	{
		wal_keep(rec, 0);
		wal_insert(rec);
	}
	END_CRIT_SECTION();
	release_large(rec);
	if (rc != PM_OK)
		pmi_report_core_error(ERROR, &err, RelationGetRelationName(index));
}

/*
 * Delete n entries (entry_size apart) from the structure state of pool and
 * log the deletes, as one unit.  Returns how many were there; a failure of a
 * delete is raised after the deletes before it were logged.
 */
int
pmi_delete_logged(Relation index, const PmiAmOps *ops, const pm_pool *pool, void *state,
				  const void *entries, int n)
{
	PmiWalEntries *rec = wal_form(index, ops, pool, XLOG_PMI_DELETE, entries, n);
	pm_error	err;
	pm_errcode	rc = PM_OK;
	int			deleted = 0;

	START_CRIT_SECTION();
	for (int i = 0; i < n && rc == PM_OK; i++)
	{
		bool		found = false;

		rc = ops->delete_entry(state, (const char *) entries + i * ops->entry_size, &found, &err);
		if (rc == PM_OK && found)
		{
			wal_keep(rec, i);
			deleted++;
		}
	}
	wal_insert(rec);
	END_CRIT_SECTION();
	release_large(rec);
	if (rc != PM_OK)
		pmi_report_core_error(ERROR, &err, RelationGetRelationName(index));
	return deleted;
}

/*
 * A pool copied or moved to another relfilenode by a storage command
 * (pmi_storage.c), which PostgreSQL logs for the relation's own files.
 */
void
pmi_log_copy(RelFileLocatorBackend from, RelFileLocatorBackend to, bool move)
{
	PmiWalHeader hdr = {to.locator, 0, 0};
	uint8		moved = move;

	if (RelFileLocatorBackendIsTemp(from))
		return;
	XLogBeginInsert();
	XLogRegisterData((char *) &hdr, sizeof(hdr));
	XLogRegisterData((char *) &from.locator, sizeof(from.locator));
	XLogRegisterData((char *) &moved, sizeof(moved));
	(void) XLogInsert(PMI_RMGR_ID, XLOG_PMI_COPY);
}

/*
 * A batch of a build's entries, after the build made the pool.  Not one
 * unit with the change: a failure here fails the build, whose transaction
 * then drops the relfilenode and its pool (docs/replication.md, section 4).
 */
void
pmi_log_build_entries(Relation index, const PmiAmOps *ops, const pm_pool *pool,
					  const void *entries, int n)
{
	PmiWalEntries *rec = wal_form(index, ops, pool, XLOG_PMI_ENTRIES, entries, n);

	for (int i = 0; i < n && rec != NULL; i++)
		wal_keep(rec, i);
	wal_insert(rec);
	release_large(rec);
}
