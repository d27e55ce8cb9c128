/*
 * ord_cost.c
 *	  amcostestimate of the ordered access methods.  Index nodes are memory, not disk pages: the descent
 *	  costs a comparison per level and each leaf visited costs CPU, with no
 *	  random_page_cost.  Selectivity comes from genericcostestimate (the
 *	  planner's own estimate for the quals); the entries read, from the
 *	  quals that bound the scan (a multicolumn index's leading columns, as
 *	  btcostestimate has them); heap access is costed by the planner as for
 *	  any index.  Correlation is read from the column's
 *	  statistics as btree does, so range scans on clustered data are priced
 *	  like btree's.
 */
#include "ord.h"

#include <math.h>

#include "access/stratnum.h"
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

/*
 * The quals that bound a multicolumn index's scan (ord_scan.c): one
 * equality (or IS NULL) on each leading column, then all the quals on the
 * next one; the others are tested on every entry in those bounds.
 */
static List *
bounding_quals(IndexPath *path)
{
	IndexOptInfo *index = path->indexinfo;
	List	   *bound = NIL;
	int			col = 0;
	bool		equality = false;
	ListCell   *lc;

	foreach(lc, path->indexclauses)
	{
		IndexClause *iclause = lfirst_node(IndexClause, lc);
		ListCell   *lc2;

		if (iclause->indexcol != col)
		{
			/*
			 * the next column bounds the scan only after an equality on this
			 * one
			 */
			if (!equality || iclause->indexcol != col + 1)
				break;
			col = iclause->indexcol;
			equality = false;
		}
		foreach(lc2, iclause->indexquals)
		{
			RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc2);
			Expr	   *clause = rinfo->clause;

			if (IsA(clause, OpExpr) &&
				get_op_opfamily_strategy(((OpExpr *) clause)->opno, index->opfamily[col]) ==
				BTEqualStrategyNumber)
				equality = true;
			else if (IsA(clause, NullTest) && ((NullTest *) clause)->nulltesttype == IS_NULL)
				equality = true;
			bound = lappend(bound, rinfo);
		}
	}
	return bound;
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
	const OrdAm *am = ord_am(pmi_am_ops(index->relam));
	double		fanout = am->entries_per_node;
	double		per_leaf = fanout * am->am.reloptions[PMI_FILLFACTOR].default_value / 100;

	MemSet(&costs, 0, sizeof(costs));
	if (index->nkeycolumns > 1)
	{
		/*
		 * the entries read: those within the bounds (of a partial index's),
		 * not those that qualify
		 */
		List	   *bound = add_predicate_to_index_quals(index, bounding_quals(path));

		costs.numIndexTuples = clamp_row_est(clauselist_selectivity(root, bound, index->rel->relid,
																	JOIN_INNER, NULL) *
											 index->rel->tuples);
	}
	genericcostestimate(root, path, loop_count, &costs);

	/*
	 * a comparison per entry halved at each step down, plus a node visit per
	 * level
	 */
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
	if (index->reverse_sort != NULL && index->reverse_sort[0])
		*indexCorrelation = -*indexCorrelation;

	/*
	 * what the planner sizes a parallel scan by: the pages these entries
	 * would fill, as btree's
	 */
	*indexPages = ceil(costs.numIndexTuples * sizeof(OrdKey) / BLCKSZ) + 1;
}
