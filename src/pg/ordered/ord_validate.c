/*
 * ord_validate.c
 *	  Operator class validation, build phase names and index-only support of
 *	  the ordered access methods.
 */
#include "ord.h"

#include "access/amvalidate.h"
#include "access/htup_details.h"
#include "access/stratnum.h"
#include "catalog/pg_amop.h"
#include "catalog/pg_amproc.h"
#include "catalog/pg_opclass.h"
#include "catalog/pg_type_d.h"
#include "commands/defrem.h"
#include "commands/progress.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/regproc.h"
#include "utils/rel.h"
#include "utils/syscache.h"

char *
ord_phasename(int64 phasenum)
{
	switch (phasenum)
	{
		case PROGRESS_CREATEIDX_SUBPHASE_INITIALIZE:
			return "initializing";
		case ORD_PHASE_TABLESCAN:
			return "scanning table";
		case ORD_PHASE_SORT:
			return "sorting entries";
		case ORD_PHASE_LOAD:
			return "loading leaves into the pool";
		default:
			return NULL;
	}
}

bool
ord_canreturn(Relation index, int attno)
{
	/* every supported key decodes back to its value exactly */
	return true;
}

/*
 * Validate an operator class: input type supported; operators are the five
 * btree strategies returning bool; support function 1 is a btree-style
 * three-way comparison returning int4.  Cross-type members of the family
 * must pair types that share the key space (checked by encoding support).
 */
bool
ord_validate(Oid opclassoid)
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
	char	   *amname;

	classtup = SearchSysCache1(CLAOID, ObjectIdGetDatum(opclassoid));
	if (!HeapTupleIsValid(classtup))
		elog(ERROR, "cache lookup failed for operator class %u", opclassoid);
	classform = (Form_pg_opclass) GETSTRUCT(classtup);
	opfamilyoid = classform->opcfamily;
	opcintype = classform->opcintype;
	opclassname = NameStr(classform->opcname);
	amname = get_am_name(classform->opcmethod);

	if (!ord_type_supported(opcintype))
	{
		ereport(INFO,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("%s operator class \"%s\" is for unsupported type %s",
						amname, opclassname, format_type_be(opcintype))));
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
					 errmsg("%s operator class \"%s\" has an invalid support function %s",
							amname, opclassname, format_procedure(procform->amproc))));
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
			!ord_type_supported(oprform->amoplefttype) ||
			!ord_type_supported(oprform->amoprighttype))
		{
			ereport(INFO,
					(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
					 errmsg("%s operator family contains invalid operator %s for strategy %d",
							amname, format_operator(oprform->amopopr), oprform->amopstrategy)));
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
				 errmsg("%s operator class \"%s\" lacks operators for all five strategies or its comparison function",
						amname, opclassname)));
		result = false;
	}
	ReleaseCatCacheList(proclist);
	ReleaseCatCacheList(oprlist);
	ReleaseSysCache(classtup);
	return result;
}
