/*
 * ord_planner.c
 *	  Index conditions the core planner derives only for btree's operator
 *	  families, derived for the ordered access methods through pmi_planner.c's
 *	  hook (PmiAmOps.derive_clause).  The original clause stays in the plan's
 *	  filter.
 *
 * A boolean column used as a condition (pmi_boolean_condition).
 *
 * A pattern match with a fixed prefix (LIKE 'abc%', ~ '^abc', starts_with):
 * its function's planner support (like_support.c) gives another access
 * method's index the prefix's range only where the column's collation is
 * "C" and its operator family holds the type's own >= and <; a pattern
 * operator family (text_pattern_ops, bpchar_pattern_ops), which orders by
 * bytes whatever the collation, gets its ~>=~ and ~<~ range only as btree's.
 * The support function is asked again as the btree family that orders as
 * the index column (the planner's sortopfamily, found from the column's <
 * operator), and what it gives is kept when every operator of it is in the
 * column's own family.
 */
#include "ord.h"

#include "access/stratnum.h"
#include "catalog/pg_type_d.h"
#include "fmgr.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "nodes/supportnodes.h"
#include "optimizer/optimizer.h"
#include "optimizer/paths.h"
#include "optimizer/restrictinfo.h"
#include "utils/lsyscache.h"

/*
 * The index conditions that the planner support function support of the
 * clause's function funcid gives for index column col as a column of
 * operator family opfamily, as indxpath.c asks it (the column the
 * function's first argument).
 */
static List *
support_conditions(PlannerInfo *root, RegProcedure support, Oid funcid, Node *clause,
				   IndexOptInfo *index, int col, Oid opfamily)
{
	SupportRequestIndexCondition req;

	req.type = T_SupportRequestIndexCondition;
	req.root = root;
	req.funcid = funcid;
	req.node = clause;
	req.indexarg = 0;
	req.index = index;
	req.indexcol = col;
	req.opfamily = opfamily;
	req.indexcollation = index->indexcollations[col];
	req.lossy = true;
	return (List *) DatumGetPointer(OidFunctionCall1(support, PointerGetDatum(&req)));
}

/* A pattern match's prefix range (see the top), or NIL. */
static List *
pattern_conditions(PlannerInfo *root, IndexOptInfo *index, RestrictInfo *rinfo)
{
	Node	   *clause = (Node *) rinfo->clause;
	List	   *args;
	Oid			funcid;
	RegProcedure support;

	if (is_opclause(clause))
	{
		set_opfuncid((OpExpr *) clause);
		funcid = ((OpExpr *) clause)->opfuncid;
		args = ((OpExpr *) clause)->args;
	}
	else if (is_funcclause(clause))
	{
		funcid = ((FuncExpr *) clause)->funcid;
		args = ((FuncExpr *) clause)->args;
	}
	else
		return NIL;
	if (list_length(args) != 2 || !OidIsValid(support = get_func_support(funcid)))
		return NIL;
	for (int col = 0; col < index->nkeycolumns; col++)
	{
		List	   *exprs;
		List	   *derived = NIL;
		ListCell   *lc;

		if (index->sortopfamily == NULL || !OidIsValid(index->sortopfamily[col]) ||
			!match_index_to_operand(linitial(args), col, index) ||
			support_conditions(root, support, funcid, clause, index, col,
							   index->opfamily[col]) != NIL)	/* the planner's own */
			continue;
		exprs = support_conditions(root, support, funcid, clause, index, col,
								   index->sortopfamily[col]);
		foreach(lc, exprs)
		{
			Expr	   *expr = lfirst(lc);

			if (!IsA(expr, OpExpr) || !op_in_opfamily(((OpExpr *) expr)->opno, index->opfamily[col]))
				return NIL;
			set_opfuncid((OpExpr *) expr);
			derived = lappend(derived, pmi_derived_condition(root, rinfo, expr));
		}
		return derived;
	}
	return NIL;
}

List *
ord_derive_clause(PlannerInfo *root, RelOptInfo *rel, IndexOptInfo *index, RestrictInfo *rinfo)
{
	List	   *derived = pmi_boolean_condition(root, index, rinfo, BTEqualStrategyNumber);

	return derived != NIL ? derived : pattern_conditions(root, index, rinfo);
}
