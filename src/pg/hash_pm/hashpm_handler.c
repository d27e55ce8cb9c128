/*
 * hashpm_handler.c
 *	  The access method handler, reloptions, operator class validation,
 *	  cost estimate, planner conditions and verifier entry point of hash_pm.  Its operator
 *	  classes are the hash access method's (hash_ops): strategy 1, =, and
 *	  support function 1, the 32-bit hash of a value.
 */
#include "hashpm.h"

#include <math.h>

#include "access/amvalidate.h"
#include "access/hash.h"
#include "access/htup_details.h"
#include "catalog/pg_amop.h"
#include "catalog/pg_amproc.h"
#include "catalog/pg_opclass.h"
#include "catalog/pg_type_d.h"
#include "commands/vacuum.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/regproc.h"
#include "utils/selfuncs.h"
#include "utils/syscache.h"

PG_FUNCTION_INFO_V1(hash_pm_handler);

PMI_CHECK_FUNCTION(hash_pm_check, &hashpm_am_ops)

bytea *
hashpm_options(Datum reloptions, bool validate)
{
	return pmi_options(&hashpm_am_ops, reloptions, validate);
}

/*
 * Is procoid a hash function of values of type: int4 of one argument of
 * the type, or binary-compatible with it?  The built-in classes also use
 * the functions of types whose values are those of another (as hash's
 * validator allows): hashint4 for date, xid and cid, hashint8 for xid8,
 * timestamp_hash for timestamptz, hashchar for bool, hashvarlena for
 * bytea.
 */
static bool
hash_function_fits(Oid procoid, Oid type)
{
	switch (procoid)
	{
		case F_HASHINT4:
			if (type == DATEOID || type == XIDOID || type == CIDOID)
				return true;
			break;
		case F_HASHINT8:
			if (type == XID8OID)
				return true;
			break;
		case F_TIMESTAMP_HASH:
			if (type == TIMESTAMPTZOID)
				return true;
			break;
		case F_HASHCHAR:
			if (type == BOOLOID)
				return true;
			break;
		case F_HASHVARLENA:
			return true;
	}
	return check_amproc_signature(procoid, INT4OID, false, 1, 1, type);
}

/*
 * Every operator strategy 1 returning bool, every support function 1
 * returning int4 of one argument of its left type; each type of the family
 * that has an operator has a function to hash it.
 */
static bool
hashpm_validate(Oid opclassoid)
{
	bool		result = true;
	HeapTuple	classtup;
	Form_pg_opclass classform;
	CatCList   *oprlist;
	CatCList   *proclist;

	classtup = SearchSysCache1(CLAOID, ObjectIdGetDatum(opclassoid));
	if (!HeapTupleIsValid(classtup))
		elog(ERROR, "cache lookup failed for operator class %u", opclassoid);
	classform = (Form_pg_opclass) GETSTRUCT(classtup);
	proclist = SearchSysCacheList1(AMPROCNUM, ObjectIdGetDatum(classform->opcfamily));
	for (int i = 0; i < proclist->n_members; i++)
	{
		Form_pg_amproc proc = (Form_pg_amproc) GETSTRUCT(&proclist->members[i]->tuple);

		if (proc->amprocnum != HASHSTANDARD_PROC ||
			proc->amproclefttype != proc->amprocrighttype ||
			!hash_function_fits(proc->amproc, proc->amproclefttype))
		{
			ereport(INFO,
					(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
					 errmsg("hash_pm operator family of \"%s\" contains invalid support function %d %s",
							NameStr(classform->opcname), proc->amprocnum,
							format_procedure(proc->amproc))));
			result = false;
		}
	}
	oprlist = SearchSysCacheList1(AMOPSTRATEGY, ObjectIdGetDatum(classform->opcfamily));
	for (int i = 0; i < oprlist->n_members; i++)
	{
		Form_pg_amop op = (Form_pg_amop) GETSTRUCT(&oprlist->members[i]->tuple);
		bool		hashed = false;

		for (int j = 0; j < proclist->n_members; j++)
		{
			Form_pg_amproc proc = (Form_pg_amproc) GETSTRUCT(&proclist->members[j]->tuple);

			hashed = hashed || (proc->amprocnum == HASHSTANDARD_PROC &&
								proc->amproclefttype == op->amoprighttype);
		}
		if (op->amopstrategy != HTEqualStrategyNumber || op->amoppurpose != AMOP_SEARCH ||
			!check_amop_signature(op->amopopr, BOOLOID, op->amoplefttype, op->amoprighttype) ||
			!hashed)
		{
			ereport(INFO,
					(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
					 errmsg("hash_pm operator family of \"%s\" contains invalid operator %s for strategy %d",
							NameStr(classform->opcname), format_operator(op->amopopr),
							op->amopstrategy)));
			result = false;
		}
	}
	ReleaseCatCacheList(proclist);
	ReleaseCatCacheList(oprlist);
	ReleaseSysCache(classtup);
	return result;
}

/*
 * Memory, not pages: each hash code looked up reads a bucket's block (a
 * comparison per slot), each match costs a tuple; no random_page_cost.
 * Selectivity is genericcostestimate's, from the planner's own estimates.
 */
static void
hashpm_costestimate(PlannerInfo *root, IndexPath *path, double loop_count,
					Cost *indexStartupCost, Cost *indexTotalCost,
					Selectivity *indexSelectivity, double *indexCorrelation,
					double *indexPages)
{
	GenericCosts costs;
	double		lookup = PMHASH_BLOCK_CAP * cpu_operator_cost;
	double		qual_op_cost = cpu_operator_cost * list_length(path->indexclauses);

	MemSet(&costs, 0, sizeof(costs));
	genericcostestimate(root, path, loop_count, &costs);
	*indexStartupCost = lookup;
	*indexTotalCost = lookup * Max(costs.num_sa_scans, 1) +
		costs.numIndexTuples * (cpu_index_tuple_cost + qual_op_cost);
	*indexSelectivity = costs.indexSelectivity;
	*indexCorrelation = 0;		/* entries come in no heap order */
	*indexPages = ceil(costs.numIndexTuples / PMHASH_BLOCK_CAP) + 1;
}

/* PmiAmOps.derive_clause: a boolean column used as a condition, as for hash's bool_ops */
List *
hashpm_derive_clause(PlannerInfo *root, RelOptInfo *rel, IndexOptInfo *index, RestrictInfo *rinfo)
{
	return pmi_boolean_condition(root, index, rinfo, HTEqualStrategyNumber);
}

Datum
hash_pm_handler(PG_FUNCTION_ARGS)
{
	IndexAmRoutine *amroutine = makeNode(IndexAmRoutine);

	amroutine->amstrategies = HTMaxStrategyNumber;
	amroutine->amsupport = HASHSTANDARD_PROC;
	amroutine->amoptsprocnum = 0;
	amroutine->amcanorder = false;
	amroutine->amcanorderbyop = false;
	amroutine->amcanbackward = false;
	amroutine->amcanunique = false;
	amroutine->amcanmulticol = false;
	amroutine->amoptionalkey = false;
	amroutine->amsearcharray = true;
	amroutine->amsearchnulls = true;
	amroutine->amstorage = false;
	amroutine->amclusterable = false;
	amroutine->ampredlocks = false;
	amroutine->amcanparallel = false;
	amroutine->amcaninclude = false;
	amroutine->amusemaintenanceworkmem = false;
	amroutine->amparallelvacuumoptions = VACUUM_OPTION_NO_PARALLEL;
	amroutine->amkeytype = INT4OID;

	amroutine->ambuild = pmi_build;
	amroutine->ambuildempty = pmi_buildempty;
	amroutine->aminsert = hashpm_insert;
	amroutine->ambulkdelete = pmi_bulkdelete;
	amroutine->amvacuumcleanup = pmi_vacuumcleanup;
	amroutine->amcanreturn = NULL;
	amroutine->amcostestimate = hashpm_costestimate;
	amroutine->amoptions = hashpm_options;
	amroutine->amproperty = NULL;
	amroutine->ambuildphasename = NULL;
	amroutine->amvalidate = hashpm_validate;
	amroutine->amadjustmembers = NULL;
	amroutine->ambeginscan = hashpm_beginscan;
	amroutine->amrescan = hashpm_rescan;
	amroutine->amgettuple = hashpm_gettuple;
	amroutine->amgetbitmap = hashpm_getbitmap;
	amroutine->amendscan = hashpm_endscan;
	amroutine->ammarkpos = NULL;
	amroutine->amrestrpos = NULL;
	amroutine->amestimateparallelscan = NULL;
	amroutine->aminitparallelscan = NULL;
	amroutine->amparallelrescan = NULL;

	PG_RETURN_POINTER(amroutine);
}
