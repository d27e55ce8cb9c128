/*
 * fbrpm_cost.c
 *	  amcostestimate.  Nodes are memory, not disk pages: each node visited
 *	  costs a test of its entries, with no random_page_cost.  Selectivity is
 *	  the planner's own for the quals (their restriction estimators: for
 *	  PostGIS, its own), so nothing is counted twice.  The nodes visited are estimated as the
 *	  leaves holding the matches plus one path from the root.
 */
#include "fbrpm.h"

#include <math.h>

#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "utils/selfuncs.h"

#define ENTRIES_PER_NODE (FBR_CAP * FBRPM_DEFAULT_FILLFACTOR / 100)

/*
 * The selectivity of the index conditions.  A condition fbrpm_planner.c
 * derived from an ST_* call is marked redundant, so that row estimates count
 * only the call; for the index scan itself its own selectivity counts.
 */
static Selectivity
index_selectivity(PlannerInfo *root, IndexPath *path)
{
	List	   *quals = NIL;
	ListCell   *lc;

	foreach(lc, path->indexclauses)
	{
		IndexClause *ic = lfirst(lc);
		ListCell   *lq;

		foreach(lq, ic->indexquals)
		{
			RestrictInfo *rinfo = lfirst(lq);

			quals = lappend(quals, fbrpm_clause_is_derived(rinfo) ? (Node *) rinfo->clause :
							(Node *) rinfo);
		}
	}
	return clauselist_selectivity(root, quals, path->indexinfo->rel->relid, JOIN_INNER, NULL);
}

void
fbrpm_costestimate(PlannerInfo *root, IndexPath *path, double loop_count,
				   Cost *indexStartupCost, Cost *indexTotalCost,
				   Selectivity *indexSelectivity, double *indexCorrelation,
				   double *indexPages)
{
	IndexOptInfo *index = path->indexinfo;
	GenericCosts costs;
	double		tuples = Max(index->tuples, 1);
	double		levels;
	double		nodes;
	double		qual_op_cost;

	/*
	 * At least one entry, as genericcostestimate assumes of an index it
	 * estimates itself: given no tuples (an estimate of 0, for a window where
	 * there were no rows at the last ANALYZE), it would estimate them again
	 * from the conditions, and a derived one counts as matching every row.
	 */
	MemSet(&costs, 0, sizeof(costs));
	costs.numIndexTuples = clamp_row_est(index_selectivity(root, path) * index->rel->tuples);
	genericcostestimate(root, path, loop_count, &costs);

	levels = ceil(log(tuples) / log(ENTRIES_PER_NODE)) + 1;
	nodes = ceil(costs.numIndexTuples / ENTRIES_PER_NODE) + levels;
	qual_op_cost = cpu_operator_cost *
		(list_length(path->indexclauses) + list_length(path->indexorderbys));

	*indexStartupCost = levels * FBR_CAP * cpu_operator_cost;
	*indexTotalCost = nodes * FBR_CAP * cpu_operator_cost +
		costs.numIndexTuples * (cpu_index_tuple_cost + qual_op_cost);
	*indexSelectivity = Min(costs.numIndexTuples / tuples, 1.0);
	*indexCorrelation = 0;		/* entries come in no heap order */
	*indexPages = nodes;

	/*
	 * A scan orders by one distance (fbrpm_beginscan refuses more): such a
	 * path must lose to a sort above another scan.
	 */
	if (list_length(path->indexorderbys) > 1)
	{
		*indexStartupCost += disable_cost;
		*indexTotalCost += disable_cost;
	}
}
