/*
 * pmi_options.c
 *	  The reloptions of every access method, from its list (PmiAmOps.
 *	  reloptions): fillfactor first, then the access method's own.  They are
 *	  declared once per process, in _PG_init, as contrib/bloom does: the
 *	  relation cache parses an index's options before any function of its
 *	  access method has run.
 */
#include "pm_index.h"

#include "access/reloptions.h"
#include "utils/memutils.h"
#include "utils/rel.h"

/* each access method's kind of options and parse table, by pmi_am_number */
static relopt_kind *kinds;
static relopt_parse_elt **tables;

void
pmi_options_init(void)
{
	uint32		n = pmi_am_count();

	kinds = MemoryContextAlloc(TopMemoryContext, n * sizeof(relopt_kind));
	tables = MemoryContextAlloc(TopMemoryContext, n * sizeof(relopt_parse_elt *));
	for (uint32 i = 0; i < n; i++)
	{
		const PmiAmOps *ops = pmi_am_of_number(i);

		pm_assert(ops->nreloptions >= 1 && ops->nreloptions <= PMI_MAX_RELOPTIONS &&
				  strcmp(ops->reloptions[PMI_FILLFACTOR].name, "fillfactor") == 0);
		kinds[i] = add_reloption_kind();
		tables[i] = MemoryContextAlloc(TopMemoryContext, ops->nreloptions * sizeof(relopt_parse_elt));
		for (int o = 0; o < ops->nreloptions; o++)
		{
			const PmiReloption *r = &ops->reloptions[o];

			tables[i][o].optname = r->name;
			if (r->boolean)
			{
				add_bool_reloption(kinds[i], r->name, r->desc, r->default_value != 0,
								   AccessExclusiveLock);
				tables[i][o].opttype = RELOPT_TYPE_BOOL;
				tables[i][o].offset = offsetof(PmiOptions, flags) + o * sizeof(bool);
			}
			else
			{
				add_int_reloption(kinds[i], r->name, r->desc, r->default_value, r->min_value,
								  r->max_value, AccessExclusiveLock);
				tables[i][o].opttype = RELOPT_TYPE_INT;
				tables[i][o].offset = offsetof(PmiOptions, values) + o * sizeof(int);
			}
		}
	}
}

/* amoptions */
bytea *
pmi_options(const PmiAmOps *ops, Datum reloptions, bool validate)
{
	uint32		number = pmi_am_number(ops);

	return (bytea *) build_reloptions(reloptions, validate, kinds[number], sizeof(PmiOptions),
									  tables[number], ops->nreloptions);
}

/* The value of the index's reloption number option (its default if not set). */
int
pmi_reloption(Relation index, const PmiAmOps *ops, int option)
{
	PmiOptions *opts = (PmiOptions *) index->rd_options;

	pm_assert(option >= 0 && option < ops->nreloptions);
	if (opts == NULL)
		return ops->reloptions[option].default_value;
	return ops->reloptions[option].boolean ? opts->flags[option] : opts->values[option];
}

/* Whether the index's inserts are tiered: WITH (tiered = on) (pmi_tier.c). */
bool
pmi_index_tiered(Relation index, const PmiAmOps *ops)
{
	/* a structure durable at its checkpoints only ever takes inserts through its log */
	if (ops->checkpoint != NULL)
		return true;
	for (int o = 0; o < ops->nreloptions; o++)
		if (strcmp(ops->reloptions[o].name, "tiered") == 0)
			return pmi_reloption(index, ops, o) != 0;
	return false;
}
