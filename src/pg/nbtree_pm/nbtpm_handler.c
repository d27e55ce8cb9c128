/*
 * nbtpm_handler.c
 *	  The access method handler, reloptions, operator class validation and
 *	  build phase names of nbtree_pm.
 */
#include "nbtpm.h"

#include "access/amvalidate.h"
#include "access/htup_details.h"
#include "access/stratnum.h"
#include "catalog/pg_amop.h"
#include "catalog/pg_amproc.h"
#include "catalog/pg_opclass.h"
#include "catalog/pg_opfamily.h"
#include "catalog/pg_type_d.h"
#include "commands/defrem.h"
#include "commands/progress.h"
#include "commands/vacuum.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/regproc.h"
#include "utils/rel.h"
#include "utils/syscache.h"

PG_FUNCTION_INFO_V1(nbtree_pm_handler);

bytea *
nbtpm_options(Datum reloptions, bool validate)
{
	return pmi_options(&nbtpm_am_ops, reloptions, validate);
}

char *
nbtpm_phasename(int64 phasenum)
{
	switch (phasenum)
	{
		case PROGRESS_CREATEIDX_SUBPHASE_INITIALIZE:
			return "initializing";
		case NBTPM_PHASE_TABLESCAN:
			return "scanning table";
		case NBTPM_PHASE_SORT:
			return "sorting entries";
		case NBTPM_PHASE_LOAD:
			return "loading leaves into the pool";
		default:
			return NULL;
	}
}

bool
nbtpm_canreturn(Relation index, int attno)
{
	/* every supported key decodes back to its value exactly */
	return true;
}

/*
 * The type keys are encoded from: the operator class's input type, which is
 * the column's type or, for a domain, the type the domain is over.
 */
Oid
nbtpm_column_type(Relation index)
{
	return index->rd_opcintype[0];
}

/*
 * Validate an operator class: input type supported; operators are the five
 * btree strategies returning bool; support function 1 is a btree-style
 * three-way comparison returning int4.  Cross-type members of the family
 * must pair types that share the key space (checked by encoding support).
 */
bool
nbtpm_validate(Oid opclassoid)
{
	bool		result = true;
	HeapTuple	classtup;
	Form_pg_opclass classform;
	Oid			opfamilyoid;
	Oid			opcintype;
	char	   *opclassname;
	CatCList   *oprlist;
	CatCList   *proclist;
	bool		has_cmp = false;
	int			strategies_seen = 0;

	classtup = SearchSysCache1(CLAOID, ObjectIdGetDatum(opclassoid));
	if (!HeapTupleIsValid(classtup))
		elog(ERROR, "cache lookup failed for operator class %u", opclassoid);
	classform = (Form_pg_opclass) GETSTRUCT(classtup);
	opfamilyoid = classform->opcfamily;
	opcintype = classform->opcintype;
	opclassname = NameStr(classform->opcname);

	if (!nbtpm_type_supported(opcintype))
	{
		ereport(INFO,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("nbtree_pm operator class \"%s\" is for unsupported type %s",
						opclassname, format_type_be(opcintype))));
		result = false;
	}

	oprlist = SearchSysCacheList1(AMOPSTRATEGY, ObjectIdGetDatum(opfamilyoid));
	proclist = SearchSysCacheList1(AMPROCNUM, ObjectIdGetDatum(opfamilyoid));

	for (int i = 0; i < proclist->n_members; i++)
	{
		Form_pg_amproc procform = (Form_pg_amproc) GETSTRUCT(&proclist->members[i]->tuple);

		if (procform->amprocnum != 1 ||
			!check_amproc_signature(procform->amproc, INT4OID, true, 2, 2,
									procform->amproclefttype, procform->amprocrighttype))
		{
			ereport(INFO,
					(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
					 errmsg("nbtree_pm operator class \"%s\" has an invalid support function %s",
							opclassname, format_procedure(procform->amproc))));
			result = false;
		}
		if (procform->amproclefttype == opcintype && procform->amprocrighttype == opcintype)
			has_cmp = true;
	}
	for (int i = 0; i < oprlist->n_members; i++)
	{
		Form_pg_amop oprform = (Form_pg_amop) GETSTRUCT(&oprlist->members[i]->tuple);

		if (oprform->amopstrategy < 1 || oprform->amopstrategy > BTMaxStrategyNumber ||
			oprform->amoppurpose != AMOP_SEARCH ||
			!check_amop_signature(oprform->amopopr, BOOLOID,
								  oprform->amoplefttype, oprform->amoprighttype) ||
			!nbtpm_type_supported(oprform->amoplefttype) ||
			!nbtpm_type_supported(oprform->amoprighttype))
		{
			ereport(INFO,
					(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
					 errmsg("nbtree_pm operator family contains invalid operator %s for strategy %d",
							format_operator(oprform->amopopr), oprform->amopstrategy)));
			result = false;
			continue;
		}
		if (oprform->amoplefttype == opcintype && oprform->amoprighttype == opcintype)
			strategies_seen |= 1 << oprform->amopstrategy;
	}
	if (strategies_seen != 0x3e || !has_cmp)
	{
		ereport(INFO,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("nbtree_pm operator class \"%s\" lacks operators for all five strategies or its comparison function",
						opclassname)));
		result = false;
	}
	ReleaseCatCacheList(proclist);
	ReleaseCatCacheList(oprlist);
	ReleaseSysCache(classtup);
	return result;
}

Datum
nbtree_pm_handler(PG_FUNCTION_ARGS)
{
	IndexAmRoutine *amroutine = makeNode(IndexAmRoutine);

	amroutine->amstrategies = BTMaxStrategyNumber;
	amroutine->amsupport = 1;
	amroutine->amoptsprocnum = 0;
	amroutine->amcanorder = true;
	amroutine->amcanorderbyop = false;
	amroutine->amcanbackward = true;
	amroutine->amcanunique = false;
	amroutine->amcanmulticol = false;
	amroutine->amoptionalkey = true;
	amroutine->amsearcharray = true;
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
	amroutine->aminsert = nbtpm_insert;
	amroutine->ambulkdelete = pmi_bulkdelete;
	amroutine->amvacuumcleanup = pmi_vacuumcleanup;
	amroutine->amcanreturn = nbtpm_canreturn;
	amroutine->amcostestimate = nbtpm_costestimate;
	amroutine->amoptions = nbtpm_options;
	amroutine->amproperty = NULL;
	amroutine->ambuildphasename = nbtpm_phasename;
	amroutine->amvalidate = nbtpm_validate;
	amroutine->amadjustmembers = NULL;
	amroutine->ambeginscan = nbtpm_beginscan;
	amroutine->amrescan = nbtpm_rescan;
	amroutine->amgettuple = nbtpm_gettuple;
	amroutine->amgetbitmap = nbtpm_getbitmap;
	amroutine->amendscan = nbtpm_endscan;
	amroutine->ammarkpos = nbtpm_markpos;
	amroutine->amrestrpos = nbtpm_restrpos;
	amroutine->amestimateparallelscan = NULL;
	amroutine->aminitparallelscan = NULL;
	amroutine->amparallelrescan = NULL;

	PG_RETURN_POINTER(amroutine);
}
