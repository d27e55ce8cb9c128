/*
 * fbrpm_vacuum.c
 *	  ambulkdelete and amvacuumcleanup.  Every entry of both trees is listed
 *	  (a lock-free search), and each whose heap tuple VACUUM removes is
 *	  deleted with its box and payload; the tree shrinks boxes and merges
 *	  underfull nodes as it goes.  Nodes live in the pool: no pages to
 *	  recycle, no free space map.
 */
#include "fbrpm.h"

#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "utils/rel.h"


/*
 * Delete every listed entry whose heap tuple VACUUM removes.  For the
 * cost-based delay, each FBR_CAP listed entries count as one node
 * read and each delete as one node written.
 */
static void
delete_dead(Relation index, PmiIndex *h, const fbr_results *all, IndexBulkDeleteResult *stats,
			IndexBulkDeleteCallback callback, void *callback_state)
{
	int			deleted = 0;

	for (size_t i = 0; i < all->n; i++)
	{
		ItemPointerData tid;

		if (i % FBR_CAP == 0)
		{
			pmi_vacuum_delay(1, deleted);
			deleted = 0;
		}
		fbrpm_payload_tid(all->items[i].payload, &tid);
		if (callback(&tid, callback_state))
		{
			pm_counters before = pm_tls_counters;

			if (fbrpm_delete(index, &fbrpm_trees(h)->spatial, &fbrpm_trees(h)->side, &all->items[i]))
			{
				stats->tuples_removed++;
				deleted++;
				pmi_count_write(h, &before, false);
			}
		}
		else
			stats->num_index_tuples++;
	}
}

/* The listing is the core's (malloc'd): freed whether or not the deletes fail. */
static void
list_and_delete(Relation index, IndexBulkDeleteResult *stats, IndexBulkDeleteCallback callback,
				void *callback_state)
{
	PmiIndex   *h = fbrpm_open(index);
	fbr_results *all = palloc0(sizeof(fbr_results));	/* survives a longjmp */

	PG_TRY();
	{
		fbrpm_list_entries(index, &fbrpm_trees(h)->spatial, &fbrpm_trees(h)->side, all);
		delete_dead(index, h, all, stats, callback, callback_state);
	}
	PG_FINALLY();
	{
		fbr_results_free(all);
	}
	PG_END_TRY();
}

IndexBulkDeleteResult *
fbrpm_bulkdelete(IndexVacuumInfo *info, IndexBulkDeleteResult *stats,
				 IndexBulkDeleteCallback callback, void *callback_state)
{
	if (stats == NULL)
		stats = palloc0(sizeof(IndexBulkDeleteResult));
	pmi_flush_wal_before_deletes();
	list_and_delete(info->index, stats, callback, callback_state);
	stats->num_pages = RelationGetNumberOfBlocks(info->index);
	return stats;
}

IndexBulkDeleteResult *
fbrpm_vacuumcleanup(IndexVacuumInfo *info, IndexBulkDeleteResult *stats)
{
	PmiIndex   *h;
	fbr_stats	spatial;
	fbr_stats	side;

	if (info->analyze_only)
		return stats;
	if (stats == NULL)
	{
		/* no bulkdelete pass: count the entries */
		h = fbrpm_open(info->index);
		stats = palloc0(sizeof(IndexBulkDeleteResult));
		fbr_get_stats(&fbrpm_trees(h)->spatial, &spatial);
		fbr_get_stats(&fbrpm_trees(h)->side, &side);
		stats->num_index_tuples = spatial.entries + side.entries;
		stats->num_pages = RelationGetNumberOfBlocks(info->index);
	}
	return stats;
}
