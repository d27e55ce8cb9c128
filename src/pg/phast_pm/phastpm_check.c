/*
 * phastpm_check.c
 *	  phast_pm_check(index, heapallindexed) (the driver: src/pg/pmi_check.c):
 *	  the structure's invariants (the PM chain, partition heads, fences, the
 *	  DRAM INodes and index caches against it); and its shape for
 *	  pm_index_stats(index).
 */
#include "phastpm.h"

PMI_CHECK_FUNCTION(phast_pm_check, &phastpm_am.am)

int64
phastpm_check_structure(Relation index, void *state)
{
	phast_tree *t = state;
	uint64		entries;
	const char *problem = phast_check(t, &entries);

	if (problem != NULL)
		pmi_report_corrupt(index, psprintf("%s.", problem));
	return (int64) entries;
}

/* pm_index_stats: the shape of the structure (height: skiplist levels + the LNodes) */
void
phastpm_shape(PmiIndex *h, PmiShape *shape)
{
	phast_stats st;

	phast_get_stats(phastpm_tree(h), &st);
	shape->entries = st.entries;
	shape->leaves = st.lnodes;
	shape->height = st.height + 1;
	shape->pm_bytes = st.pm_bytes;
	shape->dram_bytes = st.dram_bytes;
	shape->splits = st.splits;
	shape->compactions = st.compactions;
	shape->merges = -1;
}
