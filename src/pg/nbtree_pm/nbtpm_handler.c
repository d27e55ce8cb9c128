/*
 * nbtpm_handler.c
 *	  The access method handler and reloptions of nbtree_pm: an ordered
 *	  access method (src/pg/ordered/ord_handler.c).
 */
#include "nbtpm.h"

#include "fmgr.h"

PG_FUNCTION_INFO_V1(nbtree_pm_handler);

bytea *
nbtpm_options(Datum reloptions, bool validate)
{
	return pmi_options(&nbtpm_am.am, reloptions, validate);
}

Datum
nbtree_pm_handler(PG_FUNCTION_ARGS)
{
	PG_RETURN_POINTER(ord_routine(nbtpm_options));
}
