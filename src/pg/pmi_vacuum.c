/*
 * pmi_vacuum.c
 *	  ambulkdelete and amvacuumcleanup for every access method: walk the
 *	  structure a node's worth of entries at a time (PmiAmOps.foreach_batch),
 *	  delete the entries whose heap tuples VACUUM removes, and let the
 *	  structure tidy each node it deleted from (a rewrite, a merge).  Nodes
 *	  live in the pool: no pages to recycle, no free space map; the index's
 *	  own file is its metapage.
 *
 * Tidying a node needs new blocks before it frees the old ones.  When the
 * pool's filesystem or the DRAM tier is full, the node stays as it is (its
 * dead entries are already gone) and VACUUM goes on: failing here would
 * keep the heap's dead tuples too, and with them the space the user wants
 * back.
 */
#include "pm_index.h"

#include "access/genam.h"
#include "access/xlog.h"
#include "access/xlog_internal.h"
#include "commands/vacuum.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "utils/rel.h"

typedef struct VacuumPass
{
	Relation	index;
	PmiIndex   *h;
	IndexBulkDeleteCallback callback;
	void	   *callback_state;
	double		live;
	double		removed;
} VacuumPass;

/*
 * Before VACUUM removes entries: a PM delete is durable at once, but what
 * makes its heap tuple dead (the deleting transaction's commit, perhaps an
 * asynchronous one) is durable only when its WAL is flushed.  If a crash
 * lost that WAL, the tuple would be live again and its entry gone.  VACUUM
 * saw those commits before it got here, so their records are behind the
 * current insert position: one flush covers them all.
 */
static void
flush_wal_before_deletes(void)
{
	XLogRecPtr	upto = GetXLogInsertRecPtr();

	/*
	 * At the start of a page the insert position lies past the page header,
	 * where no record has been written yet; asking XLogFlush for it is an
	 * error.  Everything inserted so far ends at the page boundary.
	 */
	if (XLogSegmentOffset(upto, wal_segment_size) == SizeOfXLogLongPHD)
		upto -= SizeOfXLogLongPHD;
	else if (upto % XLOG_BLCKSZ == SizeOfXLogShortPHD)
		upto -= SizeOfXLogShortPHD;
	XLogFlush(upto);
}

/*
 * VACUUM's cost-based delay for work in a pool, which no buffer access
 * charges: a node read costs what a buffer hit does, a node written what
 * dirtying a page does.  Then sleep if the balance calls for it.
 */
static void
vacuum_delay(int nodes_read, int nodes_written)
{
	if (VacuumCostActive)
		VacuumCostBalance += nodes_read * VacuumCostPageHit + nodes_written * VacuumCostPageDirty;
	pmi_vacuum_delay_point();
}

/* One node's entries: delete the dead ones. */
static int
vacuum_batch(void *arg, const void *entries, int n)
{
	VacuumPass *v = arg;
	const PmiAmOps *ops = v->h->ops;
	int			ndead = 0;
	int			deleted;
	char	   *dead = palloc(ops->entry_size * n);
	pm_counters before;

	for (int i = 0; i < n; i++)
	{
		const void *entry = (const char *) entries + i * ops->entry_size;
		ItemPointerData tid;

		if (!ops->entry_tid(entry, &tid) || !v->callback(&tid, v->callback_state))
			v->live++;
		else
			memcpy(dead + ndead++ * ops->entry_size, entry, ops->entry_size);
	}
	before = pm_tls_counters;
	deleted = pmi_delete_logged(v->index, ops, v->h->pool, v->h->am_state, dead, ndead);
	pmi_count_writes(v->h, &before, deleted, false);
	pfree(dead);
	v->removed += deleted;
	vacuum_delay(1, deleted > 0);
	return deleted;
}

IndexBulkDeleteResult *
pmi_bulkdelete(IndexVacuumInfo *info, IndexBulkDeleteResult *stats,
			   IndexBulkDeleteCallback callback, void *callback_state)
{
	VacuumPass	v = {0};
	pm_error	err;
	uint32		untidy;

	v.index = info->index;
	v.h = pmi_index_open(info->index, pmi_index_am(info->index));
	v.callback = callback;
	v.callback_state = callback_state;
	/* an entry of a dead row may still wait in a tiered index's log */
	pmi_tier_drain(v.h, RelationGetRelationName(v.index));
	flush_wal_before_deletes();
	untidy = v.h->ops->foreach_batch(v.index, v.h->am_state, vacuum_batch, &v, &err);
	/* the heap items of the deleted entries are freed once this returns */
	if (v.removed > 0)
		pmi_wait_for_scans(v.h);
	if (untidy > 0)
	{
		const char *hint;
		int			sqlstate = pmi_core_error_sqlstate(&err, &hint);

		/*
		 * the dead entries are gone; what ran out is the room to rewrite
		 * their nodes
		 */
		ereport(WARNING,
				(errcode(sqlstate),
				 errmsg("index \"%s\": %u nodes with dead entries were not rewritten for lack of space",
						RelationGetRelationName(v.index), untidy),
				 errdetail("%s", err.msg),
				 hint ? errhint("%s Inserts rewrite these nodes when they fill up.", hint) : 0));
	}

	if (stats == NULL)
		stats = (IndexBulkDeleteResult *) palloc0(sizeof(IndexBulkDeleteResult));
	stats->num_pages = RelationGetNumberOfBlocks(v.index);
	stats->estimated_count = false;
	stats->num_index_tuples = v.live;
	stats->tuples_removed += v.removed;
	return stats;
}

IndexBulkDeleteResult *
pmi_vacuumcleanup(IndexVacuumInfo *info, IndexBulkDeleteResult *stats)
{
	PmiIndex   *h;
	PmiShape	shape;

	if (info->analyze_only || stats != NULL)
		return stats;
	/* no bulk delete ran (nothing to remove): count the entries */
	h = pmi_index_open(info->index, pmi_index_am(info->index));
	h->ops->shape(h, &shape);
	stats = (IndexBulkDeleteResult *) palloc0(sizeof(IndexBulkDeleteResult));
	stats->num_pages = RelationGetNumberOfBlocks(info->index);
	stats->estimated_count = false;
	stats->num_index_tuples = shape.entries;
	return stats;
}
