/*
 * nbtpm_index.c
 *	  What the shared index handle (src/pg/pmi_index.c) needs of nbtree_pm:
 *	  formatting a pool, and on first use after a restart the DRAM layer,
 *	  rebuilt from the pool and published in the registry slot, then
 *	  reconciliation with the heap if the server crashed.
 */
#include "nbtpm.h"

#define NBTPM_META_MAGIC	0x4e425450	/* "NBTP" */

static uint64
nbtpm_first_use(Relation index, pm_pool *pool, int slotno, uint32 generation)
{
	nbt_tree	t;
	pm_error	err;

	nbt_attach(&t, pool, pmi_dram(), pmi_epoch(), slotno + 1, generation, 0, 0);
	if (nbt_rebuild(&t, true, &err) != PM_OK)
		pmi_report(&err, index);
	if (pmi_shared->unclean_start)
	{
		PG_TRY();
		{
			nbtpm_reconcile(index, &t);
		}
		PG_CATCH();
		{
			nbt_release_dram(&t);
			PG_RE_THROW();
		}
		PG_END_TRY();
	}
	return t.dram_root;
}

static void
nbtpm_attach(PmiIndex *h, uint64 dram_root)
{
	nbt_attach(nbtpm_tree(h), h->pool, pmi_dram(), pmi_epoch(), h->slotno + 1, h->generation, 0,
			   dram_root);
}

const PmiAmOps nbtpm_am_ops = {
	.amname = "nbtree_pm",
	.kind = PM_KIND_NBTREE,
	.meta_magic = NBTPM_META_MAGIC,
	.format = nbt_format,
	.first_use = nbtpm_first_use,
	.attach = nbtpm_attach,
	.state_size = sizeof(nbt_tree),
	.shape = nbtpm_shape,
	.release_dram = nbtpm_release_dram,
	.derive_clause = nbtpm_derive_clause,
	.dram_tier_max = NBT_DRAM_TIER_MAX,	/* inner nodes' child words */
};

/* Free a tree's DRAM layer (its index is gone); no error. */
void
nbtpm_release_dram(uint64 dram_root)
{
	nbt_tree	t;

	memset(&t, 0, sizeof(t));
	t.dram = pmi_dram();
	t.dram_root = dram_root;
	nbt_release_dram(&t);
}
