/*
 * ord_handler.c
 *	  The IndexAmRoutine of an ordered access method: btree's five strategies
 *	  and comparison support function, several key columns and INCLUDE
 *	  columns (where the structure takes wide keys: ord_check_column),
 *	  ordered scans both ways, = ANY arrays, IS NULL, index-only scans, mark
 *	  and restore, CLUSTER, unique indexes, parallel index scans.
 */
#include "ord.h"

#include "access/stratnum.h"
#include "commands/vacuum.h"

#if PG_VERSION_NUM >= 180000
/* The ordered operator classes number their strategies as btree's. */
static CompareType
translate_strategy(StrategyNumber strategy, Oid opfamily)
{
	return strategy >= BTLessStrategyNumber && strategy <= BTGreaterStrategyNumber ?
		(CompareType) strategy : COMPARE_INVALID;
}

static StrategyNumber
translate_cmptype(CompareType cmptype, Oid opfamily)
{
	return cmptype >= COMPARE_LT && cmptype <= COMPARE_GT ? (StrategyNumber) cmptype : InvalidStrategy;
}
#endif

IndexAmRoutine *
ord_routine(amoptions_function options)
{
	IndexAmRoutine *amroutine = makeNode(IndexAmRoutine);

	amroutine->amstrategies = BTMaxStrategyNumber;
	amroutine->amsupport = 1;
	amroutine->amoptsprocnum = 0;
	amroutine->amcanorder = true;
	amroutine->amcanorderbyop = false;
	amroutine->amcanbackward = true;
	amroutine->amcanunique = true;
	amroutine->amcanmulticol = true;
	amroutine->amoptionalkey = true;
	amroutine->amsearcharray = true;
	amroutine->amsearchnulls = true;
	amroutine->amstorage = false;
	amroutine->amclusterable = true;
	amroutine->ampredlocks = false;
	amroutine->amcanparallel = true;
	amroutine->amcaninclude = true;
	amroutine->amusemaintenanceworkmem = true;
	amroutine->amparallelvacuumoptions = VACUUM_OPTION_NO_PARALLEL;
	amroutine->amkeytype = InvalidOid;

	amroutine->ambuild = pmi_build;
	amroutine->ambuildempty = pmi_buildempty;
	amroutine->aminsert = ord_insert;
	amroutine->ambulkdelete = pmi_bulkdelete;
	amroutine->amvacuumcleanup = pmi_vacuumcleanup;
	amroutine->amcanreturn = ord_canreturn;
	amroutine->amcostestimate = ord_costestimate;
	amroutine->amoptions = options;
	amroutine->amproperty = NULL;
	amroutine->ambuildphasename = ord_phasename;
	amroutine->amvalidate = ord_validate;
	amroutine->amadjustmembers = NULL;
	amroutine->ambeginscan = ord_beginscan;
	amroutine->amrescan = ord_rescan;
	amroutine->amgettuple = ord_gettuple;
	amroutine->amgetbitmap = ord_getbitmap;
	amroutine->amendscan = ord_endscan;
	amroutine->ammarkpos = ord_markpos;
	amroutine->amrestrpos = ord_restrpos;
	amroutine->amestimateparallelscan = ord_estimateparallelscan;
	amroutine->aminitparallelscan = ord_initparallelscan;
	amroutine->amparallelrescan = ord_parallelrescan;
#if PG_VERSION_NUM >= 180000
	/* the planner finds an ordering index's sort operators through these */
	amroutine->amconsistentequality = true;
	amroutine->amconsistentordering = true;
	amroutine->amtranslatestrategy = translate_strategy;
	amroutine->amtranslatecmptype = translate_cmptype;
#endif

	return amroutine;
}
