/*
 * phastpm_index.c
 *	  phast_pm's side of the platform contract (PmiAmOps) and of the ordered
 *	  access methods' (OrdOps): formatting a pool, the DRAM layer rebuilt
 *	  from the pool on first use after a restart, its entries as VACUUM, the
 *	  verifier and crash reconciliation see them ((key, rest) pairs, an
 *	  LNode's worth per batch), LNode reads, inserts and the bulk load.
 */
#include "phastpm.h"

#include "miscadmin.h"

#define PHASTPM_META_MAGIC	0x50485350	/* "PHSP" */

/* An empty structure of one partition; the build partitions the pool again from its data. */
static pm_errcode
phastpm_format(pm_pool *pool, const PmiFormatParam *param, pm_error *err)
{
	return phast_format(pool, 1, 0, UINT64_MAX, err);
}

static void
phastpm_attach(void *state, pm_pool *pool, int slotno, uint32 generation, uint64 dram_root)
{
	/*
	 * PhaST retires DRAM blocks only (index caches): epoch space 0, the DRAM
	 * tier
	 */
	phast_attach(state, pool, pmi_dram(), pmi_epoch(), 0, dram_root);
}

/* First use after a restart: the DRAM layer from the Master array, interrupted splits finished. */
static uint64
phastpm_recover(const char *index_name, void *state, bool after_crash)
{
	phast_tree *t = state;
	pm_error	err;

	if (phast_rebuild(t, true, &err) != PM_OK)
	{
		if (t->dram_root != 0)
			phast_release_dram(t);
		pmi_report_core_error(ERROR, &err, index_name);
	}
	return t->dram_root;
}

/* A structure with only its DRAM layer attached: what any process can reach from a registry slot. */
static phast_tree
dram_layer(uint64 dram_root)
{
	phast_tree	t;

	memset(&t, 0, sizeof(t));
	t.dram = pmi_dram();
	t.dram_root = dram_root;
	return t;
}

/* Free a structure's DRAM layer (its index is gone); no error. */
static void
phastpm_release_dram(uint64 dram_root)
{
	phast_tree	t = dram_layer(dram_root);

	phast_release_dram(&t);
}

/* Read in this backend's epoch: the layer retires the caches it replaces through it. */
static uint64
phastpm_dram_bytes(uint64 dram_root)
{
	phast_tree	t = dram_layer(dram_root);

	t.epoch = pmi_epoch();
	return phast_dram_bytes(&t);
}

/*
 * LNode by LNode.  An LNode fn deleted from drops its deleted slots in place
 * (phast_compact_leaf): inserts reuse them, and it needs no new block, so
 * nothing is left untidy for lack of space.
 */
static uint32
phastpm_foreach_batch(Relation index, void *state, PmiEntryBatchFn fn, void *arg, pm_error *err)
{
	phast_tree *t = state;
	phast_batch b;
	phast_key	from = PM_KEY_MIN;

	for (;;)
	{
		CHECK_FOR_INTERRUPTS();
		phast_read_leaf(t, &from, false, &b);
		if (fn(arg, b.e, b.n) > 0)
		{
			bool		compacted;

			if (phast_compact_leaf(t, &b.low, &compacted, err) != PM_OK)
				pmi_report(err, index);
		}
		if (pm_key_is_max(&b.high))
			return 0;
		from = b.high;
	}
}

/* ---- OrdOps: PhaST as an ordered structure ---- */

static void
phastpm_read_range(Relation index, void *state, const OrdKey *from, bool backward,
				   const OrdKey *lo, const OrdKey *hi, OrdBatch *b)
{
	phast_batch pb;

	phast_read_range(state, from, backward, lo, hi, &pb);
	b->n = pb.n;
	b->low = pb.low;
	b->high = pb.high;
	memcpy(b->e, pb.e, sizeof(pb.e[0]) * pb.n);
}

static pm_errcode
phastpm_insert(void *state, const OrdKey *k, pm_error *err)
{
	return phast_insert(state, k, err);
}

static pm_errcode
phastpm_delete(void *state, const OrdKey *k, bool *found, pm_error *err)
{
	return phast_delete(state, k, found, err);
}

/*
 * Partition the pool for the data's range and size (phast_parts_for),
 * bulk-load the sorted entries, then build the DRAM layer over them.
 */
static uint64
phastpm_load(Relation index, PmiBuild *b, uint64 lo, uint64 hi,
			 bool (*next) (void *ctx, OrdKey *k), void *ctx)
{
	pm_error	err;
	phast_tree *t;

	if (phast_format(b->pool, phast_parts_for(b->index_tuples), lo, hi, &err) != PM_OK ||
		phast_bulk_load(b->pool, b->fillfactor, next, ctx, &err) != PM_OK)
		pmi_report(&err, index);
	t = pmi_build_attach(b);
	if (phast_rebuild(t, false, &err) != PM_OK)
		pmi_report(&err, index);
	return t->dram_root;
}

/* PmiAmOps.delete_entry: the structure's delete */
static pm_errcode
phastpm_delete_entry(void *state, const void *entry, bool *found, pm_error *err)
{
	return phast_delete(state, entry, found, err);
}

static const PmiReloption phastpm_reloptions[] = {
	{"fillfactor", "Packs phast_pm LNodes at build to this percentage", PHASTPM_DEFAULT_FILLFACTOR, 10, 100},
	PMI_TIERED_RELOPTION,
};

const OrdAm phastpm_am = {
	.am = {
		.amname = "phast_pm",
		.kind = PM_KIND_PHAST,
		.meta_magic = PHASTPM_META_MAGIC,
		.reloptions = phastpm_reloptions,
		.nreloptions = lengthof(phastpm_reloptions),
		.format = phastpm_format,
		.attach = phastpm_attach,
		.state_size = sizeof(phast_tree),
		.recover = phastpm_recover,
		.release_dram = phastpm_release_dram,
		.dram_bytes = phastpm_dram_bytes,
		.delete_entry = phastpm_delete_entry,
		.foreach_batch = phastpm_foreach_batch,
		.check = phastpm_check_structure,
		.shape = phastpm_shape,
		ORD_AM_SHARED_OPS,
	},
	.ord = {
		.read_range = phastpm_read_range,
		.insert = phastpm_insert,
		.delete = phastpm_delete,
		.load = phastpm_load,
	},
	.entries_per_node = PHAST_LNODE_CAP,
};
