/*
 * pmi_am.c
 *	  The access methods built on the platform: the one place that lists
 *	  them.  Generic code reaches an access method through its PmiAmOps,
 *	  found here by the index's pg_am OID, or by the number a registry slot
 *	  records (shared memory holds no pointers).
 */
#include "pm_index.h"

#include "commands/defrem.h"
#include "lib/stringinfo.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "fbrtree_pm/fbrpm.h"
#include "hash_pm/hashpm.h"
#include "nbtree_pm/nbtpm.h"
#include "nvbtree_pm/nvbtpm.h"
#include "phast_pm/phastpm.h"

static const PmiAmOps *const access_methods[] = {
	&nbtpm_am.am,
	&fbrpm_am_ops,
	&phastpm_am.am,
	&hashpm_am_ops,
	&nvbtpm_am.am,
};

/*
 * What pmi_am_ops found for the pg_am OIDs this backend asked about, ours
 * and others' (the planner asks for every index of a table).  A change to
 * pg_am (CREATE or DROP EXTENSION) empties it: an OID could come back as
 * another access method's.
 */
typedef struct AmCacheEntry
{
	Oid			amoid;
	const PmiAmOps *ops;		/* NULL: not one of ours */
} AmCacheEntry;

#define AM_CACHE_SIZE 16
static AmCacheEntry am_cache[AM_CACHE_SIZE];
static int	am_cache_used;
static bool am_cache_callback_registered;

static void
am_cache_reset(Datum arg, int cacheid, uint32 hashvalue)
{
	am_cache_used = 0;
}

static const PmiAmOps *
am_ops_by_name(Oid amoid)
{
	char	   *name = get_am_name(amoid);
	const PmiAmOps *ops = NULL;

	if (name == NULL)
		return NULL;
	for (uint32 i = 0; i < lengthof(access_methods); i++)
	{
		if (strcmp(name, access_methods[i]->amname) == 0)
			ops = access_methods[i];
	}
	pfree(name);
	return ops;
}

/* The access method of a pm_index index, or NULL. */
const PmiAmOps *
pmi_am_ops(Oid amoid)
{
	const PmiAmOps *ops;

	for (int i = 0; i < am_cache_used; i++)
	{
		if (am_cache[i].amoid == amoid)
			return am_cache[i].ops;
	}
	if (!am_cache_callback_registered)
	{
		CacheRegisterSyscacheCallback(AMOID, am_cache_reset, (Datum) 0);
		am_cache_callback_registered = true;
	}
	ops = am_ops_by_name(amoid);
	if (am_cache_used == AM_CACHE_SIZE)
		am_cache_used = 0;
	am_cache[am_cache_used].amoid = amoid;
	am_cache[am_cache_used].ops = ops;
	am_cache_used++;
	return ops;
}

/* The access method of an index the caller knows to be a pm_index one. */
const PmiAmOps *
pmi_index_am(Relation index)
{
	const PmiAmOps *ops = pmi_am_ops(index->rd_rel->relam);

	if (ops == NULL)
		elog(ERROR, "index \"%s\" is not a pm_index index", RelationGetRelationName(index));
	return ops;
}

/* Their names for a message: "a, b or c". */
char *
pmi_am_names(void)
{
	StringInfoData names;

	initStringInfo(&names);
	for (uint32 i = 0; i < lengthof(access_methods); i++)
		appendStringInfo(&names, "%s%s", i == 0 ? "" : i + 1 < lengthof(access_methods) ? ", " : " or ",
						 access_methods[i]->amname);
	return names.data;
}

/* Does this database have any of them (is the extension created here)? */
bool
pmi_am_installed(void)
{
	for (uint32 i = 0; i < lengthof(access_methods); i++)
	{
		if (OidIsValid(get_am_oid(access_methods[i]->amname, true)))
			return true;
	}
	return false;
}

/* The largest DRAM tier every access method can address. */
uint64
pmi_dram_tier_max(void)
{
	uint64		max = UINT64_MAX;

	for (uint32 i = 0; i < lengthof(access_methods); i++)
	{
		if (access_methods[i]->dram_tier_max != 0)
			max = Min(max, access_methods[i]->dram_tier_max);
	}
	return max;
}

uint32
pmi_am_number(const PmiAmOps *ops)
{
	for (uint32 i = 0; i < lengthof(access_methods); i++)
	{
		if (access_methods[i] == ops)
			return i;
	}
	elog(ERROR, "access method \"%s\" is not registered with pm_index", ops->amname);
	return 0;					/* keep compiler quiet */
}

/* The access method whose structure a pool header's kind names, or NULL. */
const PmiAmOps *
pmi_am_of_kind(uint32 kind)
{
	for (uint32 i = 0; i < lengthof(access_methods); i++)
	{
		if (access_methods[i]->kind == kind)
			return access_methods[i];
	}
	return NULL;
}

uint32
pmi_am_count(void)
{
	return lengthof(access_methods);
}

const PmiAmOps *
pmi_am_of_number(uint32 number)
{
	Assert(number < lengthof(access_methods));
	return access_methods[number];
}

static void
attach_error_context(void *arg)
{
	errcontext("index \"%s\"", (const char *) arg);
}

/*
 * PmiAmOps.attach of the index named name, which the errors it raises (a
 * damaged pool) name in their CONTEXT.
 */
void
pmi_am_attach(const PmiAmOps *ops, void *state, pm_pool *pool, int slotno, uint32 generation,
			  uint64 dram_root, const char *name)
{
	ErrorContextCallback context;

	context.callback = attach_error_context;
	context.arg = (void *) name;
	context.previous = error_context_stack;
	error_context_stack = &context;
	ops->attach(state, pool, slotno, generation, dram_root);
	error_context_stack = context.previous;
}
