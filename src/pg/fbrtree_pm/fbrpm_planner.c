/*
 * fbrpm_planner.c
 *	  Index conditions for PostGIS's ST_* predicates on fbrtree_pm indexes.
 *
 * PostGIS makes ST_Intersects, ST_DWithin, ST_Contains and the rest
 * indexable through a support function (postgis_index_supportfn) that
 * answers SupportRequestIndexCondition only for GiST, SP-GiST and BRIN
 * operator families.  fbrtree_pm cannot change that function or PostGIS's
 * catalogs, so it derives the same conditions itself (through
 * pmi_planner.c's hook): for an fbrtree_pm index on a geometry column, each
 * clause calling such a function on that column yields the lossy box
 * condition PostGIS's GiST would get (&&, ~, @ or ~=; for ST_DWithin, &&
 * against ST_Expand of the other side); the original clause stays and
 * rechecks, as with GiST.  A derived condition must hold for every row the
 * clause accepts (the executor rechecks it too), so where PostGIS's own
 * loses rows a sequential scan returns, the one derived here differs from
 * it (below).
 *
 * Selectivity is PostGIS's: each derived condition is marked redundant
 * (norm_selec > 1, as equivalence classes mark theirs), so row estimates
 * count only the original clause; fbrpm_cost.c estimates the index scan
 * itself with the condition's own selectivity.
 */
#include "fbrpm.h"

#include <float.h>

#include "access/htup_details.h"
#include "access/stratnum.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type_d.h"
#include "commands/defrem.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "optimizer/paths.h"
#include "optimizer/restrictinfo.h"
#include "parser/parse_func.h"
#include "utils/float.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

/* The functions PostGIS's support function makes indexable, and their box conditions. */
typedef struct StPredicate
{
	const char *name;
	StrategyNumber column_first;	/* f(column, other) */
	StrategyNumber column_second;	/* f(other, column) */
	bool		expand;			/* other side widened by the third argument */
	bool		nd;				/* implies its n-D box condition (a 3-D
								 * predicate) */
	bool		geography;		/* has a geography form, whose condition is && */
} StPredicate;

/*
 * The strategies are looked up in the index's operator family.  On a 2-D
 * class every predicate implies its 2-D box condition, the 3-D ones too.
 * On geometry_ops_nd (&&&) only the 3-D ones imply theirs, and only with
 * an unbounded M range (ST_Expand(other, d, d, d, 'Infinity'); PostGIS's
 * n-D box operators pass over a dimension that reaches FLT_MAX): they
 * ignore M, and PostGIS's own condition, which compares M, loses rows.
 * The 2-D predicates get no condition there: two geometries that meet in
 * 2-D need not have overlapping Z ranges (PostGIS gives GiST's n-D class
 * none for them either).  On geography, PostGIS indexes four predicates,
 * each with && (ST_Covers too: geocentric boxes are not compared for
 * containment).
 */
static const StPredicate st_predicates[] = {
	{"st_intersects", RTOverlapStrategyNumber, RTOverlapStrategyNumber, false, false, true},
	{"st_dwithin", RTOverlapStrategyNumber, RTOverlapStrategyNumber, true, false, true},
	{"st_touches", RTOverlapStrategyNumber, RTOverlapStrategyNumber, false, false, false},
	{"st_crosses", RTOverlapStrategyNumber, RTOverlapStrategyNumber, false, false, false},
	{"st_overlaps", RTOverlapStrategyNumber, RTOverlapStrategyNumber, false, false, false},
	{"st_contains", RTContainsStrategyNumber, RTContainedByStrategyNumber, false, false, false},
	{"st_containsproperly", RTContainsStrategyNumber, RTContainedByStrategyNumber, false, false, false},
	{"st_covers", RTContainsStrategyNumber, RTContainedByStrategyNumber, false, false, true},
	{"st_within", RTContainedByStrategyNumber, RTContainsStrategyNumber, false, false, false},
	{"st_coveredby", RTContainedByStrategyNumber, RTContainsStrategyNumber, false, false, true},
	{"st_equals", RTSameStrategyNumber, RTSameStrategyNumber, false, false, false},
	{"st_orderingequals", RTSameStrategyNumber, RTSameStrategyNumber, false, false, false},
	{"st_dfullywithin", RTOverlapStrategyNumber, RTOverlapStrategyNumber, true, false, false},
	{"st_3dintersects", RTOverlapStrategyNumber, RTOverlapStrategyNumber, false, true, false},
	{"st_3ddwithin", RTOverlapStrategyNumber, RTOverlapStrategyNumber, true, true, false},
	{"st_3ddfullywithin", RTOverlapStrategyNumber, RTOverlapStrategyNumber, true, true, false},
};

/* The PostGIS predicate a function is, or NULL. */
static const StPredicate *
st_predicate(Oid funcid)
{
	HeapTuple	tup = SearchSysCache1(PROCOID, ObjectIdGetDatum(funcid));
	Form_pg_proc proc;
	const StPredicate *found = NULL;
	char	   *support;

	if (!HeapTupleIsValid(tup))
		return NULL;
	proc = (Form_pg_proc) GETSTRUCT(tup);
	if (OidIsValid(proc->prosupport) &&
		(support = get_func_name(proc->prosupport)) != NULL &&
		strcmp(support, "postgis_index_supportfn") == 0)
	{
		for (int i = 0; i < lengthof(st_predicates); i++)
			if (strcmp(NameStr(proc->proname), st_predicates[i].name) == 0)
				found = &st_predicates[i];
	}
	ReleaseSysCache(tup);
	return found;
}

static Expr *
float8_const(float8 value)
{
	return (Expr *) makeConst(FLOAT8OID, -1, InvalidOid, sizeof(float8), Float8GetDatum(value),
							  false, FLOAT8PASSBYVAL);
}

/*
 * ST_Expand(other, distance), from the schema of the function being
 * rewritten; for geography, whose box is geocentric, _ST_Expand.  With
 * unbounded_m, ST_Expand(other, distance, distance, distance, 'Infinity'):
 * X, Y and Z widened by distance, M unbounded.
 */
static Expr *
expanded(Oid funcid, Oid type, Expr *other, Expr *distance, bool unbounded_m)
{
	Oid			argtypes[5] = {type, FLOAT8OID, FLOAT8OID, FLOAT8OID, FLOAT8OID};
	char	   *schema = get_namespace_name(get_func_namespace(funcid));
	List	   *args = unbounded_m ?
		list_make5(other, distance, distance, distance, float8_const(get_float8_infinity())) :
		list_make2(other, distance);
	Oid			expand = LookupFuncName(list_make2(makeString(schema),
												   makeString(fbrpm_type_is_geography(type) ?
															  "_st_expand" : "st_expand")),
										list_length(args), argtypes, true);

	if (!OidIsValid(expand) || exprType((Node *) distance) != FLOAT8OID)
		return NULL;
	return (Expr *) makeFuncExpr(expand, type, args, InvalidOid, InvalidOid, COERCE_EXPLICIT_CALL);
}

/* Is distance a constant below FLT_MAX (not NaN, not NULL)? */
static bool
below_flt_max(Expr *distance)
{
	return IsA(distance, Const) && !((Const *) distance)->constisnull &&
		((Const *) distance)->consttype == FLOAT8OID &&
		DatumGetFloat8(((Const *) distance)->constvalue) < FLT_MAX;
}

/* The box condition on index's column that clause implies, or NIL. */
List *
fbrpm_derive_clause(PlannerInfo *root, RelOptInfo *rel, IndexOptInfo *index, RestrictInfo *rinfo)
{
	FuncExpr   *call;
	const StPredicate *pred;
	Oid			type = index->opcintype[0];
	int			col;
	Expr	   *other;
	Oid			opno;
	bool		nd_class;
	Expr	   *clause;
	RestrictInfo *derived;

	if (!IsA(rinfo->clause, FuncExpr) || type == BOXOID || type == POINTOID)
		return NIL;
	call = (FuncExpr *) rinfo->clause;
	if (list_length(call->args) < 2 || (pred = st_predicate(call->funcid)) == NULL)
		return NIL;

	/*
	 * the index's column, or its expression (ST_Transform(geom, 3857),
	 * ST_Centroid(area))
	 */
	if (match_index_to_operand(linitial(call->args), 0, index))
		col = 0;
	else if (match_index_to_operand(lsecond(call->args), 0, index))
		col = 1;
	else
		return NIL;
	other = (Expr *) list_nth(call->args, 1 - col);
	if (exprType((Node *) other) != type ||
		bms_is_member(rel->relid, pull_varnos(root, (Node *) other)) ||
		contain_volatile_functions((Node *) other))
		return NIL;

	/*
	 * PostGIS's distances start from FLT_MAX and stop below the distance
	 * asked: from FLT_MAX on, ST_DWithin and ST_3DDWithin accept values
	 * farther apart than any box admits (ST_3DDWithin EMPTY ones too), and at
	 * infinity the others do.  Only a constant below FLT_MAX gives a
	 * condition.
	 */
	if (pred->expand && (list_length(call->args) < 3 || !below_flt_max(lthird(call->args))))
		return NIL;
	nd_class = OidIsValid(get_opfamily_proc(index->opfamily[0], type, type, FBRPM_PROC_GIDX));
	if (fbrpm_type_is_geography(type))
	{
		Expr	   *slack = float8_const(FBRPM_GEOGRAPHY_SLACK);

		if (!pred->geography)
			return NIL;

		/*
		 * The other side is widened by FBRPM_GEOGRAPHY_SLACK besides any
		 * distance, so that the condition holds wherever the predicate does
		 * (GiST's misses POINT(-180 0) for ST_Intersects with POINT(180 0)).
		 */
		if (pred->expand)
			slack = (Expr *) makeFuncExpr(F_FLOAT8PL, FLOAT8OID, list_make2(lthird(call->args), slack),
										  InvalidOid, InvalidOid, COERCE_EXPLICIT_CALL);
		if ((other = expanded(call->funcid, type, other, slack, false)) == NULL)
			return NIL;
		opno = get_opfamily_member(index->opfamily[0], type, type, RTOverlapStrategyNumber);
	}
	else if (nd_class && !pred->nd)
		return NIL;
	else
	{
		if ((pred->expand || nd_class) &&
			(other = expanded(call->funcid, type, other,
							  pred->expand ? lthird(call->args) : float8_const(0), nd_class)) == NULL)
			return NIL;
		opno = get_opfamily_member(index->opfamily[0], type, type,
								   col == 0 ? pred->column_first : pred->column_second);
	}
	if (!OidIsValid(opno))
		return NIL;
	clause = make_opclause(opno, BOOLOID, false, (Expr *) list_nth(call->args, col), other,
						   InvalidOid, InvalidOid);
	set_opfuncid((OpExpr *) clause);
	derived = pmi_derived_condition(root, rinfo, clause);
	/* redundant with the original clause: selectivity 1 (clausesel.c) */
	derived->norm_selec = derived->outer_selec = 2.0;
	return list_make1(derived);
}

bool
fbrpm_clause_is_derived(RestrictInfo *rinfo)
{
	return rinfo->norm_selec > 1;
}
