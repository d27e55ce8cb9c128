/*
 * fbrpm_cost.c
 *	  amcostestimate.  Nodes are memory, not disk pages: each node visited
 *	  costs a test of its entries, with no random_page_cost.  Selectivity is
 *	  the planner's own for the quals (genericcostestimate, which for
 *	  geometric and PostGIS operators means their restriction estimators),
 *	  so nothing is counted twice.  The nodes visited are estimated as the
 *	  leaves holding the matches plus one path from the root.
 */
#include "fbrpm.h"

#include <math.h>

#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "utils/selfuncs.h"

#define ENTRIES_PER_NODE (FBR_CAP * FBRPM_DEFAULT_FILLFACTOR / 100)

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

	MemSet(&costs, 0, sizeof(costs));
	genericcostestimate(root, path, loop_count, &costs);

	levels = ceil(log(tuples) / log(ENTRIES_PER_NODE)) + 1;
	nodes = ceil(costs.numIndexTuples / ENTRIES_PER_NODE) + levels;
	qual_op_cost = cpu_operator_cost *
		(list_length(path->indexclauses) + list_length(path->indexorderbys));

	*indexStartupCost = levels * FBR_CAP * cpu_operator_cost;
	*indexTotalCost = nodes * FBR_CAP * cpu_operator_cost +
		costs.numIndexTuples * (cpu_index_tuple_cost + qual_op_cost);
	*indexSelectivity = costs.indexSelectivity;
	*indexCorrelation = 0;		/* entries come in no heap order */
	*indexPages = nodes;
}
