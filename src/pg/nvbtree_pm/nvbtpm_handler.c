/*
 * nvbtpm_handler.c
 *	  The access method handler and reloptions of nvbtree_pm: an ordered
 *	  access method (src/pg/ordered/ord_handler.c).
 */
#include "nvbtpm.h"

#include "fmgr.h"

PG_FUNCTION_INFO_V1(nvbtree_pm_handler);

bytea *
nvbtpm_options(Datum reloptions, bool validate)
{
	return pmi_options(&nvbtpm_am.am, reloptions, validate);
}

Datum
nvbtree_pm_handler(PG_FUNCTION_ARGS)
{
	PG_RETURN_POINTER(ord_routine(nvbtpm_options));
}
