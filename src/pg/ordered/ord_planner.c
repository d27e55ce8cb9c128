/*
 * ord_planner.c
 *	  Index conditions for a boolean column used as a condition, for the
 *	  ordered access methods (PmiAmOps.derive_clause).
 *
 * The planner turns "WHERE b", "NOT b", "b IS TRUE" and "b IS FALSE" into
 * "b = true" / "b = false" index conditions only for btree's and hash's
 * boolean operator families (IsBooleanOpfamily in PostgreSQL 15), so the
 * ordered access methods derive them themselves through pmi_planner.c's hook.  The derived
 * condition is exact; the original clause stays in the plan's filter.
 */
#include "ord.h"

#include "access/stratnum.h"
#include "catalog/pg_type_d.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "optimizer/paths.h"
#include "optimizer/restrictinfo.h"
#include "utils/lsyscache.h"

RestrictInfo *
ord_derive_clause(PlannerInfo *root, RelOptInfo *rel, IndexOptInfo *index, RestrictInfo *rinfo)
{
	Node	   *clause = (Node *) rinfo->clause;
	Node	   *column = clause;
	bool		value = true;
	Oid			opno;
	Expr	   *derived;
	int			col;

	if (is_notclause(clause))
	{
		column = (Node *) get_notclausearg((Expr *) clause);
		value = false;
	}
	else if (IsA(clause, BooleanTest) &&
			 (((BooleanTest *) clause)->booltesttype == IS_TRUE ||
			  ((BooleanTest *) clause)->booltesttype == IS_FALSE))
	{
		column = (Node *) ((BooleanTest *) clause)->arg;
		value = ((BooleanTest *) clause)->booltesttype == IS_TRUE;
	}
	/* the boolean key column (or expression) it is */
	for (col = 0; col < index->nkeycolumns; col++)
		if (index->opcintype[col] == BOOLOID && match_index_to_operand(column, col, index))
			break;
	if (col == index->nkeycolumns)
		return NULL;
	opno = get_opfamily_member(index->opfamily[col], BOOLOID, BOOLOID, BTEqualStrategyNumber);
	if (!OidIsValid(opno))
		return NULL;
	derived = make_opclause(opno, BOOLOID, false, (Expr *) column,
							(Expr *) makeBoolConst(value, false), InvalidOid, InvalidOid);
	set_opfuncid((OpExpr *) derived);
	return make_restrictinfo(root, derived, rinfo->is_pushed_down, rinfo->outerjoin_delayed,
							 false, rinfo->security_level, rinfo->required_relids,
							 rinfo->outer_relids, rinfo->nullable_relids);
}
