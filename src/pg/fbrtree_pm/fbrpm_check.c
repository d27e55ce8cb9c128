/*
 * fbrpm_check.c
 *	  fbrtree_pm_check(index, heapallindexed) (the driver: src/pg/pmi_check.c):
 *	  both trees' invariants (meta block, versions, bitmaps, locks, equal
 *	  leaf depth, every child's entries inside its parent's box, no node
 *	  reached twice); and the trees' shape for pm_index_stats(index).
 */
#include "fbrpm.h"

PMI_CHECK_FUNCTION(fbrtree_pm_check, &fbrpm_am_ops)

static void
check_tree(Relation index, fbr_tree *t, const char *which, fbr_stats *st)
{
	const char *problem = fbr_check(t, st);

	if (problem != NULL)
		pmi_report_corrupt(index, psprintf("In the %s tree: %s.", which, problem));
}

int64
fbrpm_check_structure(Relation index, void *state)
{
	FbrpmTrees *trees = state;
	fbr_stats	spatial;
	fbr_stats	side;

	check_tree(index, &trees->spatial, "spatial", &spatial);
	check_tree(index, &trees->side, "NULL", &side);
	return (int64) (spatial.entries + side.entries);
}

/* pm_index_stats: both trees together */
void
fbrpm_shape(PmiIndex *h, PmiShape *shape)
{
	fbr_stats	spatial;
	fbr_stats	side;

	fbr_get_stats(&fbrpm_trees(h)->spatial, &spatial);
	fbr_get_stats(&fbrpm_trees(h)->side, &side);
	shape->entries = spatial.entries + side.entries;
	shape->leaves = spatial.leaves + side.leaves;
	shape->height = spatial.height;
	shape->pm_bytes = spatial.pm_bytes + side.pm_bytes;
	shape->dram_bytes = 0;
	shape->splits = spatial.splits + side.splits;
	shape->compactions = -1;
	shape->merges = spatial.merges + side.merges;
}
