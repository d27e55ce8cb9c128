/*
 * nbtpm_vacuum.c
 *	  VACUUM: walk every leaf, delete the entries whose heap tuples are dead,
 *	  and rewrite leaves that are at least half dead (the SMO path, 1:1).
 */
#include "nbtpm.h"

#include "commands/vacuum.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"

typedef struct VacuumCounts
{
	double		live;
	double		removed;
	BlockNumber leaves;
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

		vacuum_delay_point();
		nbt_read_leaf(&h->tree.nbt, &from, false, &b);
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

				if (nbt_delete(&h->tree.nbt, &b.e[i].sk, &found, &err) != PM_OK)
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

			if (nbt_compact_leaf(&h->tree.nbt, &b.low, &compacted, &err) != PM_OK)
				pmi_report(&err, index);
		}
		if (nbt_skey_is_max(&b.high))
			break;
		from = b.high;
	}
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
