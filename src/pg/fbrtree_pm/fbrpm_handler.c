/*
 * fbrpm_handler.c
 *	  The access method handler, reloptions, operator class validation and
 *	  build phase names of fbrtree_pm.
 */
#include "fbrpm.h"

#include "access/amvalidate.h"
#include "access/htup_details.h"
#include "access/stratnum.h"
#include "catalog/pg_amop.h"
#include "catalog/pg_amproc.h"
#include "catalog/pg_opclass.h"
#include "catalog/pg_type_d.h"
#include "commands/progress.h"
#include "commands/vacuum.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/regproc.h"
#include "utils/rel.h"
#include "utils/syscache.h"

PG_FUNCTION_INFO_V1(fbrtree_pm_handler);

bytea *
fbrpm_options(Datum reloptions, bool validate)
{
	return pmi_options(&fbrpm_am_ops, reloptions, validate);
}

char *
fbrpm_phasename(int64 phasenum)
{
	switch (phasenum)
	{
		case PROGRESS_CREATEIDX_SUBPHASE_INITIALIZE:
			return "initializing";
		case FBRPM_PHASE_TABLESCAN:
			return "scanning table";
		case FBRPM_PHASE_LOAD:
			return "loading nodes into the pool (sort-tile-recursive)";
		default:
			return NULL;
	}
}

/* Boxes and points are stored exactly; bounded types only for columns of points; shapes never. */
static bool
fbrpm_canreturn(Relation index, int attno)
{
	FbrpmOpclass oc;

	fbrpm_opclass(index, &oc);
	return fbrpm_can_return(&oc);
}

/*
 * Is the operator one the operator class's kind knows (GiST's strategy
 * numbers)?  gidx: the class boxes values with PostGIS's GiST compress.
 */
static bool
strategy_known(Oid coltype, bool gidx, const Form_pg_amop op)
{
	StrategyNumber s = op->amopstrategy;

	if (gidx)
	{
		/* PostGIS's gist_geometry_ops_nd and gist_geography_ops */
		if (op->amoprighttype != coltype)
			return false;
		if (op->amoppurpose == AMOP_ORDER)
			return s == FBRPM_DISTANCE_STRATEGY_BOUNDED || s == FBRPM_CPA_DISTANCE_STRATEGY;
		return s == RTOverlapStrategyNumber || s == RTSameStrategyNumber ||
			s == RTContainsStrategyNumber || s == RTContainedByStrategyNumber;
	}
	if (coltype == CIRCLEOID || coltype == POLYGONOID)
	{
		/* GiST's circle_ops and poly_ops */
		if (op->amoppurpose == AMOP_ORDER)
			return s == FBRPM_DISTANCE_STRATEGY && op->amoprighttype == POINTOID;
		return s >= RTLeftStrategyNumber && s <= RTOverAboveStrategyNumber &&
			op->amoprighttype == coltype;
	}
	if (coltype != BOXOID && coltype != POINTOID)
	{
		/* bounded: PostGIS's 2-D numbering, both sides of the column's type */
		if (op->amoprighttype != coltype)
			return false;
		if (op->amoppurpose == AMOP_ORDER)
			return s == FBRPM_DISTANCE_STRATEGY_BOUNDED || s == FBRPM_BOX_DISTANCE_STRATEGY;
		return s >= RTLeftStrategyNumber && s <= RTOverAboveStrategyNumber;
	}
	if (op->amoppurpose == AMOP_ORDER)
		return s == FBRPM_DISTANCE_STRATEGY && op->amoprighttype == POINTOID;
	if (coltype == BOXOID)
		return s >= RTLeftStrategyNumber && s <= RTOverAboveStrategyNumber &&
			op->amoprighttype == BOXOID;
	switch (s)
	{
		case RTLeftStrategyNumber:
		case RTRightStrategyNumber:
		case RTSameStrategyNumber:
		case RTBelowStrategyNumber:
		case RTAboveStrategyNumber:
		case RTOldBelowStrategyNumber:
		case RTOldAboveStrategyNumber:
			return op->amoprighttype == POINTOID;
		case FBRPM_POINT_IN_BOX_STRATEGY:
			return op->amoprighttype == BOXOID;
		case FBRPM_POINT_IN_POLYGON_STRATEGY:
			return op->amoprighttype == POLYGONOID;
		case FBRPM_POINT_IN_CIRCLE_STRATEGY:
			return op->amoprighttype == CIRCLEOID;
		default:
			return false;
	}
}

/* Is the support function one a bounded operator class may have, with its signature? */
static bool
support_known(Oid coltype, const Form_pg_amproc proc)
{
	switch (proc->amprocnum)
	{
		case FBRPM_PROC_BOX:
			return check_amproc_signature(proc->amproc, BOXOID, true, 1, 1, coltype);
		case FBRPM_PROC_POINT:
			return check_amproc_signature(proc->amproc, coltype, true, 2, 2, FLOAT8OID, FLOAT8OID);
		case FBRPM_PROC_SRID:
			return check_amproc_signature(proc->amproc, coltype, true, 2, 2, coltype, INT4OID);
		case FBRPM_PROC_GIDX:
			return check_amproc_signature(proc->amproc, INTERNALOID, true, 1, 1, INTERNALOID);
		default:
			return false;
	}
}

/*
 * Validate an operator class: every operator a known strategy for its kind
 * (GiST's numbers), searches returning bool, distance orderings float8.
 * box, point, circle and polygon take no support functions; any other type needs support
 * function 1 (value -> box), and may have 2 and 3 (index-only points), or
 * support function 4 (PostGIS's GiST compress: n-D boxes) alone.
 */
static bool
fbrpm_validate(Oid opclassoid)
{
	bool		result = true;
	HeapTuple	classtup;
	Form_pg_opclass classform;
	CatCList   *oprlist;
	CatCList   *proclist;
	char	   *opclassname;
	bool		bounded;
	bool		has_bbox = false;
	bool		has_gidx = false;

	classtup = SearchSysCache1(CLAOID, ObjectIdGetDatum(opclassoid));
	if (!HeapTupleIsValid(classtup))
		elog(ERROR, "cache lookup failed for operator class %u", opclassoid);
	classform = (Form_pg_opclass) GETSTRUCT(classtup);
	opclassname = NameStr(classform->opcname);
	bounded = classform->opcintype != BOXOID && classform->opcintype != POINTOID &&
		classform->opcintype != CIRCLEOID && classform->opcintype != POLYGONOID;
	proclist = SearchSysCacheList1(AMPROCNUM, ObjectIdGetDatum(classform->opcfamily));
	for (int i = 0; i < proclist->n_members; i++)
	{
		Form_pg_amproc proc = (Form_pg_amproc) GETSTRUCT(&proclist->members[i]->tuple);

		if (proc->amproclefttype == classform->opcintype)
		{
			has_bbox = has_bbox || proc->amprocnum == FBRPM_PROC_BOX;
			has_gidx = has_gidx || proc->amprocnum == FBRPM_PROC_GIDX;
		}
		if (!bounded || !support_known(classform->opcintype, proc))
		{
			ereport(INFO,
					(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
					 errmsg("fbrtree_pm operator family of \"%s\" contains invalid support function %d %s",
							opclassname, proc->amprocnum, format_procedure(proc->amproc))));
			result = false;
		}
	}
	if (bounded && has_bbox == has_gidx)
	{
		ereport(INFO,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("fbrtree_pm operator class \"%s\" for type %s needs support function %d (value -> box) or %d (PostGIS's GiST compress), not both",
						opclassname, format_type_be(classform->opcintype), FBRPM_PROC_BOX,
						FBRPM_PROC_GIDX)));
		result = false;
	}
	oprlist = SearchSysCacheList1(AMOPSTRATEGY, ObjectIdGetDatum(classform->opcfamily));
	for (int i = 0; i < oprlist->n_members; i++)
	{
		Form_pg_amop op = (Form_pg_amop) GETSTRUCT(&oprlist->members[i]->tuple);
		bool		ordering = op->amoppurpose == AMOP_ORDER;

		if (op->amoplefttype != classform->opcintype ||
			!strategy_known(op->amoplefttype, has_gidx, op) ||
			!check_amop_signature(op->amopopr, ordering ? FLOAT8OID : BOOLOID,
								  op->amoplefttype, op->amoprighttype))
		{
			ereport(INFO,
					(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
					 errmsg("fbrtree_pm operator family contains invalid operator %s for strategy %d",
							format_operator(op->amopopr), op->amopstrategy)));
			result = false;
		}
	}
	ReleaseCatCacheList(proclist);
	ReleaseCatCacheList(oprlist);
	ReleaseSysCache(classtup);
	return result;
}

Datum
fbrtree_pm_handler(PG_FUNCTION_ARGS)
{
	IndexAmRoutine *amroutine = makeNode(IndexAmRoutine);

	amroutine->amstrategies = 0;	/* GiST's numbers, not a fixed set */
	amroutine->amsupport = FBRPM_NPROCS;	/* all optional; bounded classes
											 * need 1 */
	amroutine->amoptsprocnum = 0;
	amroutine->amcanorder = false;
	amroutine->amcanorderbyop = true;
	amroutine->amcanbackward = false;
	amroutine->amcanunique = false;
	amroutine->amcanmulticol = false;
	amroutine->amoptionalkey = true;
	amroutine->amsearcharray = false;
	amroutine->amsearchnulls = true;
	amroutine->amstorage = false;
	amroutine->amclusterable = true;
	amroutine->ampredlocks = false;
	amroutine->amcanparallel = false;
	amroutine->amcaninclude = false;
	amroutine->amusemaintenanceworkmem = true;
	amroutine->amparallelvacuumoptions = VACUUM_OPTION_NO_PARALLEL;
	amroutine->amkeytype = InvalidOid;

	amroutine->ambuild = pmi_build;
	amroutine->ambuildempty = pmi_buildempty;
	amroutine->aminsert = fbrpm_insert;
	amroutine->ambulkdelete = pmi_bulkdelete;
	amroutine->amvacuumcleanup = pmi_vacuumcleanup;
	amroutine->amcanreturn = fbrpm_canreturn;
	amroutine->amcostestimate = fbrpm_costestimate;
	amroutine->amoptions = fbrpm_options;
	amroutine->amproperty = NULL;
	amroutine->ambuildphasename = fbrpm_phasename;
	amroutine->amvalidate = fbrpm_validate;
	amroutine->amadjustmembers = NULL;
	amroutine->ambeginscan = fbrpm_beginscan;
	amroutine->amrescan = fbrpm_rescan;
	amroutine->amgettuple = fbrpm_gettuple;
	amroutine->amgetbitmap = fbrpm_getbitmap;
	amroutine->amendscan = fbrpm_endscan;
	amroutine->ammarkpos = NULL;
	amroutine->amrestrpos = NULL;
	amroutine->amestimateparallelscan = NULL;
	amroutine->aminitparallelscan = NULL;
	amroutine->amparallelrescan = NULL;

	PG_RETURN_POINTER(amroutine);
}
