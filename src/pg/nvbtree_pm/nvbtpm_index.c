/*
 * nvbtpm_index.c
 *	  nvbtree_pm's side of the platform contract (PmiAmOps) and of the
 *	  ordered access methods' (OrdOps): formatting a pool, the first use
 *	  after a restart (nothing rebuilt: the lock table made, the allocator
 *	  recovered after a crash where lines may be lost), its entries as
 *	  VACUUM, the verifier and crash reconciliation see them ((key, rest)
 *	  pairs, a batch of a leaf at a time), leaf reads, inserts and the bulk
 *	  load.
 */
#include "nvbtpm.h"

#include "miscadmin.h"

#define NVBTPM_META_MAGIC	0x4e564250	/* "NVBP" */

/* The format parameter's first byte: the tree's kind */
#define NVBTPM_NARROW		0
#define NVBTPM_WIDE			1

/*
 * An index's format parameter: the tree's kind, wide where its entries can
 * be (strings, several columns, INCLUDE: ord_index_wide), then the ordered
 * access methods' parameter (what orders its strings: ord_format_param).
 * A narrow tree's 4 KiB nodes of 8-byte keys are the faster layout.
 */
static void
nvbtpm_format_param(Relation index, PmiFormatParam *param)
{
	PmiFormatParam ord;

	ord_format_param(index, &ord);
	if (ord.len + 1 > PMI_FORMAT_PARAM_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("nvbtree_pm does not support a locale name longer than %d bytes",
						PMI_FORMAT_PARAM_MAX - 3)));
	param->data[0] = ord_index_wide(index) ? NVBTPM_WIDE : NVBTPM_NARROW;
	memcpy(param->data + 1, ord.data, ord.len);
	param->len = ord.len + 1;
}

/* The order of a pool's records, from what nvbtpm_format_param made (ERROR if it is not that). */
static const pm_key_order *
order_of_param(const PmiFormatParam *param, bool *wide)
{
	if (param->len < 1 || param->data[0] > NVBTPM_WIDE)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("nvbtree_pm pool holds an unknown key format of %u bytes", param->len),
				 errhint("REINDEX the index.")));
	*wide = param->data[0] == NVBTPM_WIDE;
	return ord_order_of_format(param->data + 1, param->len - 1);
}

static pm_errcode
nvbtpm_format(pm_pool *pool, const PmiFormatParam *param, pm_error *err)
{
	bool		wide;

	pool->key_order = order_of_param(param, &wide);
	return nvb_format(pool, wide, param->data + 1, param->len - 1, err);
}

/* What a pool was formatted with: its kind and the host bytes its meta block keeps. */
static void
nvbtpm_pool_format_param(pm_pool *pool, PmiFormatParam *param)
{
	const uint8 *host;
	uint32		len;
	bool		wide;
	pm_error	err;

	if (nvb_meta_host(pool, &wide, &host, &len, &err) != PM_OK)
		pmi_report_core_error(ERROR, &err, NULL);
	if (len + 1 > PMI_FORMAT_PARAM_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("pool file \"%s\" holds a format parameter of %u bytes", pool->path, len),
				 errhint("REINDEX the index.")));
	param->data[0] = wide ? NVBTPM_WIDE : NVBTPM_NARROW;
	memcpy(param->data + 1, host, len);
	param->len = len + 1;
}

/*
 * The tree over pool, whose records order as its format parameter says;
 * replaced nodes retire through the slot's epoch space, tagged with its
 * generation.
 */
static void
nvbtpm_attach(void *state, pm_pool *pool, int slotno, uint32 generation, uint64 dram_root)
{
	PmiFormatParam param;
	bool		wide;

	nvbtpm_pool_format_param(pool, &param);
	pool->key_order = order_of_param(&param, &wide);
	nvb_attach(state, pool, pmi_dram(), pmi_epoch(), slotno + 1, generation, dram_root);
}

/* First use after a start: the pool checked, its allocator recovered, the lock table made. */
static uint64
nvbtpm_recover(const char *index_name, void *state, bool after_crash)
{
	nvb_tree   *t = state;
	pm_error	err;

	if (nvb_open(t, &err) != PM_OK)
		pmi_report_core_error(ERROR, &err, index_name);
	return t->dram_root;
}

/* A tree with only its lock table attached: what any process can reach from a registry slot. */
static nvb_tree
dram_layer(uint64 dram_root)
{
	nvb_tree	t;

	memset(&t, 0, sizeof(t));
	t.dram = pmi_dram();
	t.dram_root = dram_root;
	return t;
}

static void
nvbtpm_release_dram(uint64 dram_root)
{
	nvb_tree	t = dram_layer(dram_root);

	nvb_release_dram(&t);
}

static uint64
nvbtpm_dram_bytes(uint64 dram_root)
{
	nvb_tree	t = dram_layer(dram_root);

	return nvb_dram_bytes(&t);
}

/*
 * A batch of a leaf (OrdOps.read_range; VACUUM's walk reads with it too),
 * its records copied into the batch's memory.
 */
static void
nvbtpm_read_range(Relation index, void *state, const OrdKey *from, bool backward,
				  const OrdKey *lo, const OrdKey *hi, OrdBatch *b)
{
	nvb_batch	nb;
	pm_error	err;

	if (b->records != NULL)
		ord_batch_next_records(b);
	if (nvb_read_range(state, from, backward, lo, hi, &nb, ord_copy_record, b->records,
					   &err) != PM_OK)
		pmi_report(&err, index);
	b->n = nb.n;
	b->low = nb.low;
	b->high = nb.high;
	memcpy(b->e, nb.e, sizeof(nb.e[0]) * nb.n);
}

/*
 * A batch at a time; the leaf of a batch fn deleted from is tidied: merged
 * into its left neighbour, which the walk has passed, if the two hold at
 * most half a leaf, else rewritten without the slots its deletes left once
 * they are half of it.  A tidy that finds no space leaves the leaf as it
 * is.  After deletes, a block is set aside for the next VACUUM from those
 * this walk freed.  A batch's wide keys are copies that last until fn
 * returns (PmiAmOps.keep_entry keeps one longer).
 */
static uint32
nvbtpm_foreach_batch(Relation index, void *state, PmiEntryBatchFn fn, void *arg, pm_error *err)
{
	OrdBatch   *b = palloc(sizeof(OrdBatch));
	OrdKey		from = PM_KEY_MIN;
	uint32		untidy = 0;
	bool		deleted_any = false;

	ord_batch_init(b, index);
	for (;;)
	{
		CHECK_FOR_INTERRUPTS();
		nvbtpm_read_range(index, state, &from, false, &PM_KEY_MIN, &PM_KEY_MAX, b);
		if (fn(arg, b->e, b->n) > 0)
		{
			bool		tidied;

			deleted_any = true;
			if (nvb_tidy_leaf(state, &b->low, &tidied, err) != PM_OK)
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
		nvb_keep_spare(state);
	return untidy;
}

static pm_errcode
nvbtpm_insert(void *state, const OrdKey *k, pm_error *err)
{
	return nvb_insert(state, k, err);
}

static pm_errcode
nvbtpm_delete(void *state, const OrdKey *k, bool *found, pm_error *err)
{
	return nvb_delete(state, k, found, err);
}

/* Bulk-load sorted entries into balanced leaves and the levels over them, then open the tree. */
static uint64
nvbtpm_load(Relation index, PmiBuild *b, uint64 lo, uint64 hi,
			bool (*next) (void *ctx, OrdKey *k), void *ctx)
{
	pm_error	err;
	nvb_tree   *t;

	if (nvb_bulk_load(b->pool, b->fillfactor, next, ctx, &err) != PM_OK)
		pmi_report(&err, index);
	t = pmi_build_attach(b);
	if (nvb_open(t, &err) != PM_OK)
		pmi_report(&err, index);
	return t->dram_root;
}

/* PmiAmOps.delete_entry: the structure's delete */
static pm_errcode
nvbtpm_delete_entry(void *state, const void *entry, bool *found, pm_error *err)
{
	return nvb_delete(state, entry, found, err);
}

static const PmiReloption nvbtpm_reloptions[] = {
	{"fillfactor", "Packs nvbtree_pm leaves at build to this percentage", NVBTPM_DEFAULT_FILLFACTOR, 10, 100},
	PMI_TIERED_RELOPTION,
};

const OrdAm nvbtpm_am = {
	.am = {
		.amname = "nvbtree_pm",
		.kind = PM_KIND_NVBTREE,
		.meta_magic = NVBTPM_META_MAGIC,
		.reloptions = nvbtpm_reloptions,
		.nreloptions = lengthof(nvbtpm_reloptions),
		.format = nvbtpm_format,
		.format_param = nvbtpm_format_param,
		.pool_format_param = nvbtpm_pool_format_param,
		.attach = nvbtpm_attach,
		.state_size = sizeof(nvb_tree),
		.recover = nvbtpm_recover,
		.release_dram = nvbtpm_release_dram,
		.dram_bytes = nvbtpm_dram_bytes,
		.keep_entry = ord_keep_entry,
		.delete_entry = nvbtpm_delete_entry,
		.foreach_batch = nvbtpm_foreach_batch,
		.check = nvbtpm_check_structure,
		.shape = nvbtpm_shape,
		ORD_AM_SHARED_OPS,
	},
	.ord = {
		.wide_keys = true,
		.record_max = NVB_WIDE_DATA_MAX,
		.read_range = nvbtpm_read_range,
		.insert = nvbtpm_insert,
		.delete = nvbtpm_delete,
		.load = nvbtpm_load,
	},
	.entries_per_node = NVB_LEAF_CAP,
};
