/*
 * pmi_options.c
 *	  The reloptions of every access method: WITH (fillfactor = n), its
 *	  description and default the access method's (PmiAmOps).  They are
 *	  declared once per process, in _PG_init, as contrib/bloom does: the
 *	  relation cache parses an index's options before any function of its
 *	  access method has run.
 */
#include "pm_index.h"

#include "access/reloptions.h"
#include "utils/memutils.h"

/* the kind of each access method's options, by pmi_am_number */
static relopt_kind *kinds;

void
pmi_options_init(void)
{
	uint32		n = pmi_am_count();

	kinds = MemoryContextAlloc(TopMemoryContext, n * sizeof(relopt_kind));
	for (uint32 i = 0; i < n; i++)
	{
		const PmiAmOps *ops = pmi_am_of_number(i);

		kinds[i] = add_reloption_kind();
		add_int_reloption(kinds[i], "fillfactor", ops->fillfactor_desc, ops->default_fillfactor,
						  10, 100, AccessExclusiveLock);
	}
}

/* amoptions */
bytea *
pmi_options(const PmiAmOps *ops, Datum reloptions, bool validate)
{
	static const relopt_parse_elt tab[] = {
		{"fillfactor", RELOPT_TYPE_INT, offsetof(PmiOptions, fillfactor)}
	};

	return (bytea *) build_reloptions(reloptions, validate, kinds[pmi_am_number(ops)],
									  sizeof(PmiOptions), tab, lengthof(tab));
}
