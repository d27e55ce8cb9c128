/*
 * ord_cost.c
 *	  amcostestimate of the ordered access methods.  Index nodes are memory, not disk pages: the descent
 *	  costs a comparison per level and each leaf visited costs CPU, with no
 *	  random_page_cost.  Selectivity comes from genericcostestimate (the
 *	  planner's own estimate for the quals); heap access is costed by the
 *	  planner as for any index.  Correlation is read from the column's
 *	  statistics as btree does, so range scans on clustered data are priced
 *	  like btree's.
 */
#include "ord.h"

#include <math.h>

#include "catalog/pg_statistic.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "parser/parsetree.h"
#include "utils/lsyscache.h"
#include "utils/selfuncs.h"
#include "utils/syscache.h"

static double
column_correlation(PlannerInfo *root, IndexOptInfo *index)
{
	RangeTblEntry *rte;
	HeapTuple	stats;
	AttStatsSlot sslot;
	double		correlation = 0;

	if (index->indexkeys[0] == 0)
		return 0;				/* an expression index: no column statistics */
	rte = planner_rt_fetch(index->rel->relid, root);
	if (rte->rtekind != RTE_RELATION)
		return 0;
	stats = SearchSysCache3(STATRELATTINH, ObjectIdGetDatum(rte->relid),
							Int16GetDatum(index->indexkeys[0]), BoolGetDatum(rte->inh));
	if (!HeapTupleIsValid(stats))
		return 0;
	if (get_attstatsslot(&sslot, stats, STATISTIC_KIND_CORRELATION, InvalidOid,
						 ATTSTATSSLOT_NUMBERS))
	{
		correlation = sslot.numbers[0];
		free_attstatsslot(&sslot);
	}
	ReleaseSysCache(stats);
	return correlation;
}

void
ord_costestimate(PlannerInfo *root, IndexPath *path, double loop_count,
				 Cost *indexStartupCost, Cost *indexTotalCost,
				 Selectivity *indexSelectivity, double *indexCorrelation,
				 double *indexPages)
{
	IndexOptInfo *index = path->indexinfo;
	GenericCosts costs;
	double		tuples = Max(index->tuples, 1);
	double		leaves;
	double		descent;
	double		qual_op_cost;
	const PmiAmOps *am = pmi_am_ops(index->relam);
	double		fanout = am->entries_per_node;
	double		per_leaf = fanout * am->default_fillfactor / 100;

	MemSet(&costs, 0, sizeof(costs));
	genericcostestimate(root, path, loop_count, &costs);

	/* a comparison per entry halved at each step down, plus a node visit per level */
	descent = ceil(log(tuples) / log(2.0)) * cpu_operator_cost +
		(ceil(log(tuples / per_leaf + 1) / log(fanout)) + 1) * 50.0 * cpu_operator_cost;
	leaves = ceil(costs.numIndexTuples / per_leaf) + 1;
	qual_op_cost = cpu_operator_cost *
		(list_length(path->indexclauses) + list_length(path->indexorderbys));

	*indexStartupCost = descent;
	*indexTotalCost = descent + leaves * 50.0 * cpu_operator_cost +
		costs.numIndexTuples * (cpu_index_tuple_cost + qual_op_cost);
	*indexSelectivity = costs.indexSelectivity;
	*indexCorrelation = column_correlation(root, index);
	if (index->reverse_sort[0])
		*indexCorrelation = -*indexCorrelation;
	/* what the planner sizes a parallel scan by: the pages these entries would fill, as btree's */
	*indexPages = ceil(costs.numIndexTuples * sizeof(OrdKey) / BLCKSZ) + 1;
}
