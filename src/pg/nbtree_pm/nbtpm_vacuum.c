/*
 * nbtpm_vacuum.c
 *	  VACUUM: walk every leaf, delete the entries whose heap tuples are dead,
 *	  and rewrite leaves that are at least half dead (the SMO path, 1:1).
 *
 * A rewrite needs new blocks before it frees the old ones.  When the pool's
 * filesystem or the DRAM tier is full, the leaf stays as it is (its dead
 * entries are already gone) and VACUUM goes on: failing here would keep the
 * heap's dead tuples too, and with them the space the user wants back.
 */
#include "nbtpm.h"

#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "utils/rel.h"

typedef struct VacuumCounts
{
	double		live;
	double		removed;
	BlockNumber leaves;
	BlockNumber not_rewritten;	/* for lack of space */
} VacuumCounts;

/* Walk the whole index; with a callback, delete what it calls dead. */
static void
walk(Relation index, IndexBulkDeleteCallback callback, void *callback_state, VacuumCounts *c)
{
	PmiIndex *h = nbtpm_open(index);
	nbt_batch	b;
	nbt_skey	from = NBT_SKEY_MIN;
	pm_error	err;

	memset(c, 0, sizeof(*c));
	for (;;)
	{
		int			removed_here = 0;

		nbt_read_leaf(nbtpm_tree(h), &from, false, &b);
		c->leaves++;
		for (int i = 0; i < b.n; i++)
		{
			ItemPointerData tid;
			bool		found;

			nbtpm_rest_tid(b.e[i].sk.rest, &tid);
			if (callback == NULL || !callback(&tid, callback_state))
			{
				c->live++;
				continue;
			}
			{
				pm_counters before = pm_tls_counters;

				if (nbt_delete(nbtpm_tree(h), &b.e[i].sk, &found, &err) != PM_OK)
					pmi_report(&err, index);
				pmi_count_write(h, &before, false);
			}
			if (found)
			{
				c->removed++;
				removed_here++;
			}
		}
		/* the core decides: merge with the right sibling, rewrite, or neither */
		if (removed_here > 0)
		{
			bool		compacted;

			if (nbt_compact_leaf(nbtpm_tree(h), &b.low, &compacted, &err) != PM_OK)
			{
				if (!pm_errcode_is_out_of_space(err.code))
					pmi_report(&err, index);
				c->not_rewritten++;
			}
		}
		pmi_vacuum_delay(1, removed_here > 0);
		if (nbt_skey_is_max(&b.high))
			break;
		from = b.high;
	}
	/* set a block aside for the next VACUUM, from the ones this pass freed */
	if (callback != NULL)
		nbt_keep_spare(nbtpm_tree(h));
	if (c->not_rewritten > 0)
		ereport(WARNING,
				(errcode(ERRCODE_DISK_FULL),
				 errmsg("index \"%s\": %u leaves with dead entries were not rewritten for lack of space",
						RelationGetRelationName(index), c->not_rewritten),
				 errdetail("%s", err.msg),
				 errhint("Free space in the filesystem of pm_index.pool_dir; inserts rewrite these leaves when they fill up.")));
}

static IndexBulkDeleteResult *
fill_stats(IndexBulkDeleteResult *stats, const VacuumCounts *c, bool deleting)
{
	if (stats == NULL)
		stats = (IndexBulkDeleteResult *) palloc0(sizeof(IndexBulkDeleteResult));
	/* the index's own file is its metapage; the leaves live in the pool */
	stats->num_pages = 1;
	stats->estimated_count = false;
	stats->num_index_tuples = c->live;
	if (deleting)
		stats->tuples_removed += c->removed;
	return stats;
}

IndexBulkDeleteResult *
nbtpm_bulkdelete(IndexVacuumInfo *info, IndexBulkDeleteResult *stats,
				 IndexBulkDeleteCallback callback, void *callback_state)
{
	VacuumCounts c;

	pmi_flush_wal_before_deletes();
	walk(info->index, callback, callback_state, &c);
	return fill_stats(stats, &c, true);
}

IndexBulkDeleteResult *
nbtpm_vacuumcleanup(IndexVacuumInfo *info, IndexBulkDeleteResult *stats)
{
	VacuumCounts c;

	if (info->analyze_only || stats != NULL)
		return stats;
	/* no bulk delete ran (nothing to remove): count the entries */
	walk(info->index, NULL, NULL, &c);
	return fill_stats(NULL, &c, false);
}
