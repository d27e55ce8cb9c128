/*
 * pmi_planner.c
 *	  What the planner sees of pm_index indexes: only those it may use
 *	  (get_relation_info_hook: not while a pool is being built, and in
 *	  recovery only those replay keeps current), and index conditions that
 *	  the core planner derives only for its own index access methods,
 *	  derived for pm_index's from set_rel_pathlist_hook.
 *
 * Some clauses never become index conditions of a non-core access method in
 * PostgreSQL 15: a boolean column used as a condition (WHERE b, NOT b, b IS
 * TRUE), which indxpath.c matches only for btree's and hash's boolean
 * operator families; a pattern match's prefix on a pattern operator class
 * (LIKE 'abc%'), which like_support.c derives only for btree's; and
 * PostGIS's ST_* predicates, whose support function answers only for GiST,
 * SP-GiST and BRIN.  For a base relation with pm_index indexes, each access
 * method's derive function turns such a restriction or join clause into
 * operator conditions on an index column or expression
 * (PmiAmOps.derive_clause), and index paths are built for those indexes with
 * the derived conditions added.  The conditions exist only while those paths
 * are made: the original clause stays in the relation's quals, so the plan
 * still evaluates it.  Join clauses give parameterized paths, so a join on
 * ST_Intersects can be a nested loop over an index scan.
 */
#include "pm_index.h"

#include "access/xlog.h"
#include "catalog/pg_type_d.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "optimizer/paths.h"
#include "optimizer/plancat.h"
#include "optimizer/restrictinfo.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

static set_rel_pathlist_hook_type prev_set_rel_pathlist_hook = NULL;
static get_relation_info_hook_type prev_get_relation_info_hook = NULL;

/* An index condition derived from rinfo: clause, which rinfo implies. */
RestrictInfo *
pmi_derived_condition(PlannerInfo *root, RestrictInfo *rinfo, Expr *clause)
{
#if PG_VERSION_NUM >= 160000
	return make_restrictinfo(root, clause, rinfo->is_pushed_down, rinfo->has_clone,
							 rinfo->is_clone, false, rinfo->security_level,
							 rinfo->required_relids, rinfo->incompatible_relids,
							 rinfo->outer_relids);
#else
	return make_restrictinfo(root, clause, rinfo->is_pushed_down, rinfo->outerjoin_delayed,
							 false, rinfo->security_level, rinfo->required_relids,
							 rinfo->outer_relids, rinfo->nullable_relids);
#endif
}

/*
 * "b = true" or "b = false" for a boolean key column used as a condition:
 * PostgreSQL 15 turns "WHERE b", "NOT b", "b IS TRUE" and "b IS FALSE" into
 * such index conditions only for btree's and hash's boolean operator
 * families (IsBooleanOpfamily); later majors do it for every operator family
 * with the boolean = in it, and so derive nothing here.  The derived
 * condition is exact.  equality is the access method's strategy number of =.
 */
List *
pmi_boolean_condition(PlannerInfo *root, IndexOptInfo *index, RestrictInfo *rinfo,
					  StrategyNumber equality)
{
#if PG_VERSION_NUM >= 160000
	return NIL;
#else
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
		return NIL;
	opno = get_opfamily_member(index->opfamily[col], BOOLOID, BOOLOID, equality);
	if (!OidIsValid(opno))
		return NIL;
	derived = make_opclause(opno, BOOLOID, false, (Expr *) column,
							(Expr *) makeBoolConst(value, false), InvalidOid, InvalidOid);
	set_opfuncid((OpExpr *) derived);
	return list_make1(pmi_derived_condition(root, rinfo, derived));
#endif
}

/* Is an equal condition derived already (another index on the same column)? */
static bool
derived_already(List *derived, RestrictInfo *d)
{
	ListCell   *lc;

	foreach(lc, derived)
	{
		if (equal(((RestrictInfo *) lfirst(lc))->clause, d->clause))
			return true;
	}
	return false;
}

static List *derive_all(PlannerInfo *root, RelOptInfo *rel, List *indexes, List *derivers,
						List *clauses);

/*
 * An OR of clauses: the OR of what each arm yields (an arm that yields
 * nothing stands as it is), so that a BitmapOr of index scans can serve it
 * as it serves GiST's or btree's derived conditions.  An arm that is an AND
 * yields the AND of what its members yield.  NULL if no arm yields anything.
 *
 * The arms are read in the OR's orclause, where each is a RestrictInfo or
 * an AND of RestrictInfos (make_sub_restrictinfos), and the derived OR is
 * an expression, which make_restrictinfo decorates again: an arm that
 * stands as it is is taken from the clause, whose arguments are the
 * orclause's arms as written, in the same order.
 */
static RestrictInfo *
derive_or(PlannerInfo *root, RelOptInfo *rel, List *indexes, List *derivers, RestrictInfo *rinfo)
{
	List	   *arms = NIL;
	bool		any = false;
	ListCell   *lc;
	ListCell   *lw;
	RestrictInfo *derived;

	Assert(list_length(((BoolExpr *) rinfo->orclause)->args) ==
		   list_length(((BoolExpr *) rinfo->clause)->args));
	forboth(lc, ((BoolExpr *) rinfo->orclause)->args, lw, ((BoolExpr *) rinfo->clause)->args)
	{
		Node	   *arm = lfirst(lc);
		List	   *members = is_andclause(arm) ? ((BoolExpr *) arm)->args : list_make1(arm);
		List	   *yielded = derive_all(root, rel, indexes, derivers, members);
		List	   *clauses = NIL;
		ListCell   *ly;

		if (yielded == NIL)
		{
			arms = lappend(arms, lfirst(lw));
			continue;
		}
		any = true;
		foreach(ly, yielded)
		{
			clauses = lappend(clauses, ((RestrictInfo *) lfirst(ly))->clause);
		}
		arms = lappend(arms, make_ands_explicit(clauses));
	}
	if (!any)
		return NULL;
	derived = pmi_derived_condition(root, rinfo, make_orclause(arms));
	/* redundant with the original clause: selectivity 1 (clausesel.c) */
	derived->norm_selec = derived->outer_selec = 2.0;
	return derived;
}

static List *
derive_all(PlannerInfo *root, RelOptInfo *rel, List *indexes, List *derivers, List *clauses)
{
	List	   *out = NIL;
	ListCell   *lc;
	ListCell   *li;
	ListCell   *ld;

	foreach(lc, clauses)
	{
		RestrictInfo *rinfo = lfirst(lc);

		if (!IsA(rinfo, RestrictInfo))
			continue;
		if (restriction_is_or_clause(rinfo))
		{
			RestrictInfo *d = derive_or(root, rel, indexes, derivers, rinfo);

			if (d != NULL && !derived_already(out, d))
				out = lappend(out, d);
			continue;
		}
		forboth(li, indexes, ld, derivers)
		{
			PmiDeriveClause derive = (PmiDeriveClause) lfirst(ld);
			ListCell   *lr;

			foreach(lr, derive(root, rel, lfirst(li), rinfo))
			{
				RestrictInfo *d = lfirst(lr);

				if (!derived_already(out, d))
					out = lappend(out, d);
			}
		}
	}
	return out;
}

static void
pmi_set_rel_pathlist(PlannerInfo *root, RelOptInfo *rel, Index rti, RangeTblEntry *rte)
{
	List	   *indexes = NIL;
	List	   *derivers = NIL;
	List	   *restrict_derived;
	List	   *join_derived;
	ListCell   *lc;
	ListCell   *li;

	if (prev_set_rel_pathlist_hook)
		prev_set_rel_pathlist_hook(root, rel, rti, rte);
	if (!IS_SIMPLE_REL(rel) || rte->rtekind != RTE_RELATION || rel->indexlist == NIL)
		return;
	foreach(lc, rel->indexlist)
	{
		IndexOptInfo *index = lfirst(lc);
		const PmiAmOps *ops = OidIsValid(index->relam) ? pmi_am_ops(index->relam) : NULL;

		if (ops == NULL || ops->derive_clause == NULL)
			continue;
		indexes = lappend(indexes, index);
		derivers = lappend(derivers, ops->derive_clause);
	}
	if (indexes == NIL)
		return;
	restrict_derived = derive_all(root, rel, indexes, derivers, rel->baserestrictinfo);
	join_derived = derive_all(root, rel, indexes, derivers, rel->joininfo);
	if (restrict_derived != NIL || join_derived != NIL)
	{
		List	   *saved_indexes = rel->indexlist;
		List	   *saved_restrict = rel->baserestrictinfo;
		List	   *saved_join = rel->joininfo;
		List	   *saved_indrestrict = NIL;

		/*
		 * restriction clauses reach index paths through each index's
		 * indrestrictinfo
		 */
		foreach(lc, indexes)
		{
			IndexOptInfo *index = lfirst(lc);

			saved_indrestrict = lappend(saved_indrestrict, index->indrestrictinfo);
			index->indrestrictinfo = list_concat_copy(index->indrestrictinfo, restrict_derived);
		}
		rel->indexlist = indexes;
		rel->baserestrictinfo = list_concat_copy(saved_restrict, restrict_derived);
		rel->joininfo = list_concat_copy(saved_join, join_derived);
		create_index_paths(root, rel);
		rel->indexlist = saved_indexes;
		rel->baserestrictinfo = saved_restrict;
		rel->joininfo = saved_join;
		forboth(lc, indexes, li, saved_indrestrict)
			((IndexOptInfo *) lfirst(lc))->indrestrictinfo = lfirst(li);
	}
}

/*
 * The planner sees a pm_index index only when it may be used
 * (pmi_index_plannable): not while a background build fills its pool, and
 * on a hot standby only when replay keeps its pool current.  A partial
 * index's entry count is the one recorded in pg_class.
 */
static void
pmi_get_relation_info(PlannerInfo *root, Oid relationObjectId, bool inhparent,
					  RelOptInfo *rel)
{
	ListCell   *lc;
	List	   *keep = NIL;

	if (prev_get_relation_info_hook)
		prev_get_relation_info_hook(root, relationObjectId, inhparent, rel);
	foreach(lc, rel->indexlist)
	{
		IndexOptInfo *index = lfirst(lc);
		Relation	irel;
		bool		usable;
		bool		transient = false;

		if (pmi_am_ops(index->relam) == NULL)
		{
			keep = lappend(keep, index);
			continue;
		}
		irel = index_open(index->indexoid, NoLock);
		usable = pmi_index_plannable(irel, &transient);

		/*
		 * A partial index's entry count: the core planner estimates it from
		 * the index's pages and their density (plancat.c estimate_rel_size),
		 * and these entries are in a pool, not pages: it would be 0, so that
		 * every scan of the index seemed to return all of it.  The count of
		 * the last build or VACUUM stands in.
		 */
		if (index->indpred != NIL)
			index->tuples = irel->rd_rel->reltuples >= 0 ?
				Min(irel->rd_rel->reltuples, rel->tuples) : rel->tuples;
		index_close(irel, NoLock);
		if (usable)
			keep = lappend(keep, index);
		root->glob->transientPlan |= transient;
	}
	rel->indexlist = keep;
}

void
pmi_planner_init(void)
{
	prev_set_rel_pathlist_hook = set_rel_pathlist_hook;
	set_rel_pathlist_hook = pmi_set_rel_pathlist;
	prev_get_relation_info_hook = get_relation_info_hook;
	get_relation_info_hook = pmi_get_relation_info;
}
