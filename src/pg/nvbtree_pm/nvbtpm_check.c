/*
 * nvbtpm_check.c
 *	  nvbtree_pm_check(index, heapallindexed) (the driver: src/pg/pmi_check.c):
 *	  the structure's invariants (every level's siblings and fences, each
 *	  node's search tree in order, separators against their children); and
 *	  the tree's shape for pm_index_stats(index).
 */
#include "nvbtpm.h"

PMI_CHECK_FUNCTION(nvbtree_pm_check, &nvbtpm_am.am)

int64
nvbtpm_check_structure(Relation index, void *state)
{
	uint64		entries;
	const char *problem = nvb_check(state, &entries);

	if (problem != NULL)
		pmi_report_corrupt(index, psprintf("%s.", problem));
	return (int64) entries;
}

/* pm_index_stats: the shape of the tree */
void
nvbtpm_shape(PmiIndex *h, PmiShape *shape)
{
	nvb_stats	st;

	nvb_get_stats(nvbtpm_tree(h), &st);
	shape->entries = st.entries;
	shape->leaves = st.leaves;
	shape->height = st.height;
	shape->pm_bytes = st.pm_bytes;
	shape->dram_bytes = st.dram_bytes;
	shape->splits = st.splits;
	shape->compactions = st.compactions;
	shape->merges = st.merges;
}
