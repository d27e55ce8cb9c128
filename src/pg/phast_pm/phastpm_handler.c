/*
 * phastpm_handler.c
 *	  The access method handler and reloptions of phast_pm: an ordered
 *	  access method (src/pg/ordered/ord_handler.c).
 */
#include "phastpm.h"

#include "fmgr.h"

PG_FUNCTION_INFO_V1(phast_pm_handler);

bytea *
phastpm_options(Datum reloptions, bool validate)
{
	return pmi_options(&phastpm_am.am, reloptions, validate);
}

Datum
phast_pm_handler(PG_FUNCTION_ARGS)
{
	PG_RETURN_POINTER(ord_routine(phastpm_options));
}
