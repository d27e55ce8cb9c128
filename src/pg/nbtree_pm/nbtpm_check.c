/*
 * nbtpm_check.c
 *	  nbtree_pm_check(index, heapallindexed) (the driver: src/pg/pmi_check.c):
 *	  the structure's invariants (PM list, DRAM leaves, fences, inner
 *	  levels); and the tree's shape for pm_index_stats(index).
 */
#include "nbtpm.h"

#include "miscadmin.h"

PMI_CHECK_FUNCTION(nbtree_pm_check, &nbtpm_am.am)

int64
nbtpm_check_structure(Relation index, void *state)
{
	nbt_tree   *t = state;
	const char *problem;
	uint64		entries;

	problem = nbt_check(t, &entries);
	if (problem != NULL)
		pmi_report_corrupt(index, psprintf("%s.", problem));
	if (nbt_count_pm(t->pool) != entries)
		pmi_report_corrupt(index,
						   psprintf("The pool holds %llu entries, the DRAM layer commits %llu.",
									(unsigned long long) nbt_count_pm(t->pool),
									(unsigned long long) entries));
	return (int64) entries;
}

/* Live entries, counted leaf by leaf. */
static int64
count_entries(nbt_tree *t)
{
	nbt_batch	b;
	nbt_skey	from = PM_KEY_MIN;
	int64		n = 0;

	for (;;)
	{
		CHECK_FOR_INTERRUPTS();
		nbt_read_leaf(t, &from, false, &b);
		n += b.n;
		if (pm_key_is_max(&b.high))
			return n;
		from = b.high;
	}
}

/* pm_index_stats: the shape of the tree */
void
nbtpm_shape(PmiIndex *h, PmiShape *shape)
{
	nbt_stats	st;

	nbt_get_stats(nbtpm_tree(h), &st);
	shape->entries = count_entries(nbtpm_tree(h));
	shape->leaves = st.leaves;
	shape->height = st.height + 1;	/* inner levels + the leaves */
	shape->pm_bytes = st.pm_bytes;
	shape->dram_bytes = st.dram_bytes;
	shape->splits = st.smo_splits;
	shape->compactions = st.smo_compactions;
	shape->merges = st.smo_merges;
}
