/*
 * fbrpm_index.c
 *	  What the shared index handle (src/pg/pmi_index.c) needs of fbrtree_pm:
 *	  formatting a pool (the spatial tree and the side tree of NULLs), and on
 *	  first use after a crash, recovery of both trees, of the allocator, and
 *	  reconciliation with the heap.  After a clean restart there is nothing
 *	  to rebuild: every node lives in the pool.
 */
#include "fbrpm.h"

#include "utils/rel.h"

#define FBRPM_META_MAGIC	0x46425250	/* "FBRP" */

static pm_errcode
fbrpm_format(pm_pool *pool, pm_error *err)
{
	pm_errcode	rc = fbr_format(pool, FBRPM_ROOT_SPATIAL, err);

	return rc != PM_OK ? rc : fbr_format(pool, FBRPM_ROOT_SIDE, err);
}

void
fbrpm_attach_trees(pm_pool *pool, int slotno, uint32 generation, fbr_tree *spatial,
				   fbr_tree *side)
{
	fbr_attach(spatial, pool, FBRPM_ROOT_SPATIAL, pmi_epoch(), slotno + 1, generation);
	fbr_attach(side, pool, FBRPM_ROOT_SIDE, pmi_epoch(), slotno + 1, generation);
}

static uint64
fbrpm_first_use(Relation index, pm_pool *pool, int slotno, uint32 generation)
{
	static const int meta_roots[] = {FBRPM_ROOT_SPATIAL, FBRPM_ROOT_SIDE};
	fbr_tree	spatial;
	fbr_tree	side;
	uint64_t	repaired_spatial;
	uint64_t	repaired_side;
	pm_error	err;

	if (!pmi_shared->unclean_start)
		return 0;
	/* a crash can leave node locks held, splits and merges half done, blocks leaked */
	fbrpm_attach_trees(pool, slotno, generation, &spatial, &side);
	if (fbr_recover(&spatial, false, &repaired_spatial, &err) != PM_OK ||
		fbr_recover(&side, false, &repaired_side, &err) != PM_OK ||
		fbr_recover_alloc(pool, meta_roots, lengthof(meta_roots), &err) != PM_OK)
		pmi_report(&err, index);
	if (repaired_spatial + repaired_side > 0)
		ereport(LOG,
				(errmsg("pm_index: index \"%s\": repaired %llu nodes a crash left in a split or merge",
						RelationGetRelationName(index),
						(unsigned long long) (repaired_spatial + repaired_side))));
	fbrpm_reconcile(index, pool, &spatial, &side);
	return 0;
}

static void
fbrpm_attach(PmiIndex *h, uint64 dram_root)
{
	fbrpm_attach_trees(h->pool, h->slotno, h->generation, &fbrpm_trees(h)->spatial,
					   &fbrpm_trees(h)->side);
}

const PmiAmOps fbrpm_am_ops = {
	.amname = "fbrtree_pm",
	.kind = PM_KIND_FBRTREE,
	.meta_magic = FBRPM_META_MAGIC,
	.format = fbrpm_format,
	.first_use = fbrpm_first_use,
	.attach = fbrpm_attach,
	.state_size = sizeof(FbrpmTrees),
	.shape = fbrpm_shape,
	.derive_clause = fbrpm_derive_clause,
};

/* A consistent callback that accepts every box: a search of it lists a whole tree. */
bool
fbrpm_accept_all(void *arg, const fbr_box *box, bool is_leaf)
{
	return true;
}

/* Append every entry of both trees to *out (the core's malloc'd results). */
void
fbrpm_list_entries(Relation index, fbr_tree *spatial, fbr_tree *side, fbr_results *out)
{
	pm_error	err;

	if (fbr_search(spatial, fbrpm_accept_all, NULL, out, &err) != PM_OK ||
		fbr_search(side, fbrpm_accept_all, NULL, out, &err) != PM_OK)
		pmi_report(&err, index);
}

/* Delete one entry from the tree it belongs to; returns whether it was there. */
bool
fbrpm_delete(Relation index, fbr_tree *spatial, fbr_tree *side, const fbr_item *item)
{
	bool		found;
	pm_error	err;

	if (fbr_delete((item->payload & FBRPM_PAYLOAD_SIDE) ? side : spatial, item, &found,
				   &err) != PM_OK)
		pmi_report(&err, index);
	return found;
}
