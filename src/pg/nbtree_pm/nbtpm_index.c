/*
 * nbtpm_index.c
 *	  nbtree_pm's side of the platform contract (PmiAmOps) and of the ordered
 *	  access methods' (OrdOps): formatting a pool, the DRAM layer rebuilt
 *	  from the pool on first use after a restart, its entries as VACUUM, the
 *	  verifier and crash reconciliation see them ((key, rest) pairs, a leaf's
 *	  worth per batch), leaf reads, inserts and the bulk load.
 */
#include "nbtpm.h"

#include "miscadmin.h"

#define NBTPM_META_MAGIC	0x4e425450	/* "NBTP" */

/*
 * An empty tree whose meta block keeps the format parameter (what orders
 * its strings: ord_format_param), which sets this process's order of the
 * pool's records.
 */
static pm_errcode
nbtpm_format(pm_pool *pool, const PmiFormatParam *param, pm_error *err)
{
	pm_errcode	rc = nbt_format_host(pool, param->data, param->len, err);

	if (rc == PM_OK)
		pool->key_order = ord_order_of_format(param->data, param->len);
	return rc;
}

static void
nbtpm_pool_format_param(pm_pool *pool, PmiFormatParam *param)
{
	const uint8 *host;
	uint32		len;
	pm_error	err;

	if (nbt_meta_host(pool, &host, &len, &err) != PM_OK)
		pmi_report_core_error(ERROR, &err, NULL);
	if (len > PMI_FORMAT_PARAM_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("pool file \"%s\" holds a format parameter of %u bytes", pool->path, len),
				 errhint("REINDEX the index.")));
	param->len = len;
	memcpy(param->data, host, len);
}

/* The tree over pool, whose records order as its format parameter says. */
static void
nbtpm_attach(void *state, pm_pool *pool, int slotno, uint32 generation, uint64 dram_root)
{
	PmiFormatParam param;

	nbtpm_pool_format_param(pool, &param);
	pool->key_order = ord_order_of_format(param.data, param.len);
	nbt_attach(state, pool, pmi_dram(), pmi_epoch(), slotno + 1, generation, 0, dram_root);
}

static uint64
nbtpm_recover(const char *index_name, void *state, bool after_crash)
{
	nbt_tree   *t = state;
	pm_error	err;

	if (nbt_rebuild(t, true, &err) != PM_OK)
		pmi_report_core_error(ERROR, &err, index_name);
	return t->dram_root;
}

/* A tree with only its DRAM layer attached: what any process can reach from a registry slot. */
static nbt_tree
dram_layer(uint64 dram_root)
{
	nbt_tree	t;

	memset(&t, 0, sizeof(t));
	t.dram = pmi_dram();
	t.dram_root = dram_root;
	return t;
}

/* Free a tree's DRAM layer (its index is gone); no error. */
static void
nbtpm_release_dram(uint64 dram_root)
{
	nbt_tree	t = dram_layer(dram_root);

	nbt_release_dram(&t);
}

static uint64
nbtpm_dram_bytes(uint64 dram_root)
{
	nbt_tree	t = dram_layer(dram_root);

	return nbt_dram_bytes(&t);
}

/* A leaf's entries into b (OrdOps.read_range; VACUUM's walk below reads with it too). */
static void
nbtpm_read_range(Relation index, void *state, const OrdKey *from, bool backward,
				 const OrdKey *lo, const OrdKey *hi, OrdBatch *b)
{
	nbt_batch	nb;

	if (b->records != NULL)
	{
		ord_batch_next_records(b);
		nbt_read_range_copy(state, from, backward, lo, hi, &nb, ord_copy_record, b->records);
	}
	else
		nbt_read_range(state, from, backward, lo, hi, &nb);
	b->n = nb.n;
	b->low = nb.low;
	b->high = nb.high;
	for (int i = 0; i < nb.n; i++)
		b->e[i] = nb.e[i].sk;
}

/*
 * Leaf by leaf.  A leaf fn deleted from is merged with its right sibling,
 * rewritten or left alone, as the core decides; a rewrite that finds no
 * space leaves the leaf as it is.  After deletes, a block is set aside for
 * the next VACUUM from the ones this walk freed.  A leaf's wide keys are
 * copies that last until fn returns (PmiAmOps.keep_entry keeps one longer).
 */
static uint32
nbtpm_foreach_batch(Relation index, void *state, PmiEntryBatchFn fn, void *arg, pm_error *err)
{
	nbt_tree   *t = state;
	OrdBatch   *b = palloc(sizeof(OrdBatch));
	OrdKey		from = PM_KEY_MIN;
	uint32		untidy = 0;
	bool		deleted_any = false;

	ord_batch_init(b, index);
	for (;;)
	{
		CHECK_FOR_INTERRUPTS();
		nbtpm_read_range(index, t, &from, false, &PM_KEY_MIN, &PM_KEY_MAX, b);
		if (fn(arg, b->e, b->n) > 0)
		{
			bool		compacted;

			deleted_any = true;
			if (nbt_compact_leaf(t, &b->low, &compacted, err) != PM_OK)
			{
				if (!pm_errcode_is_out_of_space(err->code))
					pmi_report(err, index);
				untidy++;
			}
		}
		if (pm_key_is_max(&b->high))
			break;
		from = b->high;
	}
	ord_batch_free(b);
	pfree(b);
	if (deleted_any)
		nbt_keep_spare(t);
	return untidy;
}

/* ---- the rest of OrdOps: the NBTree as an ordered structure ---- */

static pm_errcode
nbtpm_insert(void *state, const OrdKey *k, pm_error *err)
{
	return nbt_insert(state, k, err);
}

static pm_errcode
nbtpm_insert_sorted(void *state, const OrdKey *keys, int n, pm_error *err)
{
	return nbt_insert_sorted(state, keys, n, NULL, err);
}

static pm_errcode
nbtpm_delete(void *state, const OrdKey *k, bool *found, pm_error *err)
{
	return nbt_delete(state, k, found, err);
}

/* Bulk-load sorted leaves into the pool, then build the DRAM layer over them. */
static uint64
nbtpm_load(Relation index, PmiBuild *b, uint64 lo, uint64 hi,
		   bool (*next) (void *ctx, OrdKey *k), void *ctx)
{
	pm_error	err;
	nbt_tree   *t;

	if (nbt_bulk_load(b->pool, b->fillfactor, next, ctx, &err) != PM_OK)
		pmi_report(&err, index);
	t = pmi_build_attach(b);
	if (nbt_rebuild(t, false, &err) != PM_OK)
		pmi_report(&err, index);
	return t->dram_root;
}

/* PmiAmOps.delete_entry: the structure's delete */
static pm_errcode
nbtpm_delete_entry(void *state, const void *entry, bool *found, pm_error *err)
{
	return nbt_delete(state, entry, found, err);
}

static const PmiReloption nbtpm_reloptions[] = {
	{"fillfactor", "Packs nbtree_pm leaves at build to this percentage", NBTPM_DEFAULT_FILLFACTOR, 10, 100},
	PMI_TIERED_RELOPTION,
};

const OrdAm nbtpm_am = {
	.am = {
		.amname = "nbtree_pm",
		.kind = PM_KIND_NBTREE,
		.meta_magic = NBTPM_META_MAGIC,
		.reloptions = nbtpm_reloptions,
		.nreloptions = lengthof(nbtpm_reloptions),
		.format = nbtpm_format,
		.format_param = ord_format_param,
		.pool_format_param = nbtpm_pool_format_param,
		.attach = nbtpm_attach,
		.state_size = sizeof(nbt_tree),
		.recover = nbtpm_recover,
		.release_dram = nbtpm_release_dram,
		.dram_bytes = nbtpm_dram_bytes,
		.dram_tier_max = NBT_DRAM_TIER_MAX, /* inner nodes' child words */
		.keep_entry = ord_keep_entry,
		.delete_entry = nbtpm_delete_entry,
		.foreach_batch = nbtpm_foreach_batch,
		.check = nbtpm_check_structure,
		.shape = nbtpm_shape,
		ORD_AM_SHARED_OPS,
	},
	.ord = {
		.wide_keys = true,
		.read_range = nbtpm_read_range,
		.insert = nbtpm_insert,
		.insert_sorted = nbtpm_insert_sorted,
		.delete = nbtpm_delete,
		.load = nbtpm_load,
	},
	.entries_per_node = NBT_LEAF_CAP,
};
