/*
 * nbtpm_index.c
 *	  nbtree_pm's side of the platform contract (PmiAmOps): formatting a
 *	  pool, the DRAM layer rebuilt from the pool on first use after a
 *	  restart, and its entries as VACUUM, the verifier and crash
 *	  reconciliation see them: (key, rest) pairs, a leaf's worth per batch.
 *	  A reconciliation note is the entry itself.
 */
#include "nbtpm.h"

#include "miscadmin.h"

#define NBTPM_META_MAGIC	0x4e425450	/* "NBTP" */

static void
nbtpm_attach(void *state, pm_pool *pool, int slotno, uint32 generation, uint64 dram_root)
{
	nbt_attach(state, pool, pmi_dram(), pmi_epoch(), slotno + 1, generation, 0, dram_root);
}

static uint64
nbtpm_recover(Relation index, void *state, bool after_crash)
{
	nbt_tree   *t = state;
	pm_error	err;

	if (nbt_rebuild(t, true, &err) != PM_OK)
		pmi_report(&err, index);
	return t->dram_root;
}

/* Free a tree's DRAM layer (its index is gone); no error. */
static void
nbtpm_release_dram(uint64 dram_root)
{
	nbt_tree	t;

	memset(&t, 0, sizeof(t));
	t.dram = pmi_dram();
	t.dram_root = dram_root;
	nbt_release_dram(&t);
}

static void *
nbtpm_entry_context(Relation index)
{
	Oid		   *coltype = palloc(sizeof(Oid));

	*coltype = nbtpm_column_type(index);
	return coltype;
}

static void
nbtpm_make_entry(void *context, Datum value, bool isnull, ItemPointer tid, void *entry)
{
	*(nbt_skey *) entry = nbtpm_skey(*(Oid *) context, value, isnull, tid);
}

static int
nbtpm_entry_cmp(const void *a, const void *b)
{
	return nbt_skey_cmp(a, b);
}

static bool
nbtpm_entry_tid(const void *entry, ItemPointer tid)
{
	const nbt_skey *sk = entry;

	if (sk->rest == 0 || sk->rest > NBT_REST_MAX)
		return false;
	nbtpm_rest_tid(sk->rest, tid);
	return true;
}

static bool
nbtpm_delete_entry(Relation index, void *state, const void *entry)
{
	bool		found;
	pm_error	err;

	if (nbt_delete(state, entry, &found, &err) != PM_OK)
		pmi_report(&err, index);
	return found;
}

/*
 * Leaf by leaf.  A leaf fn deleted from is merged with its right sibling,
 * rewritten or left alone, as the core decides; a rewrite that finds no
 * space leaves the leaf as it is.  After deletes, a block is set aside for
 * the next VACUUM from the ones this walk freed.
 */
static uint32
nbtpm_foreach_batch(Relation index, void *state, PmiEntryBatchFn fn, void *arg, pm_error *err)
{
	nbt_tree   *t = state;
	nbt_batch	b;
	nbt_skey	keys[NBT_LEAF_CAP];
	nbt_skey	from = NBT_SKEY_MIN;
	uint32		untidy = 0;
	bool		deleted_any = false;

	for (;;)
	{
		CHECK_FOR_INTERRUPTS();
		nbt_read_leaf(t, &from, false, &b);
		for (int i = 0; i < b.n; i++)
			keys[i] = b.e[i].sk;
		if (fn(arg, keys, b.n) > 0)
		{
			bool		compacted;

			deleted_any = true;
			if (nbt_compact_leaf(t, &b.low, &compacted, err) != PM_OK)
			{
				if (!pm_errcode_is_out_of_space(err->code))
					pmi_report(err, index);
				untidy++;
			}
		}
		if (nbt_skey_is_max(&b.high))
			break;
		from = b.high;
	}
	if (deleted_any)
		nbt_keep_spare(t);
	return untidy;
}

static void
nbtpm_note_entries(Relation index, void *state, uint64 key, uint64 rest, PmiEntryBatchFn fn,
				   void *arg)
{
	nbt_skey	sk = {key, rest};

	(void) fn(arg, &sk, 1);
}

const PmiAmOps nbtpm_am_ops = {
	.amname = "nbtree_pm",
	.kind = PM_KIND_NBTREE,
	.meta_magic = NBTPM_META_MAGIC,
	.fillfactor_desc = "Packs nbtree_pm leaves at build to this percentage",
	.default_fillfactor = NBTPM_DEFAULT_FILLFACTOR,
	.format = nbt_format,
	.attach = nbtpm_attach,
	.state_size = sizeof(nbt_tree),
	.build = nbtpm_build,
	.recover = nbtpm_recover,
	.release_dram = nbtpm_release_dram,
	.dram_tier_max = NBT_DRAM_TIER_MAX, /* inner nodes' child words */
	.entry_size = sizeof(nbt_skey),
	.entry_context = nbtpm_entry_context,
	.make_entry = nbtpm_make_entry,
	.entry_cmp = nbtpm_entry_cmp,
	.entry_tid = nbtpm_entry_tid,
	.delete_entry = nbtpm_delete_entry,
	.foreach_batch = nbtpm_foreach_batch,
	.note_entries = nbtpm_note_entries,
	.check = nbtpm_check_structure,
	.shape = nbtpm_shape,
	.derive_clause = nbtpm_derive_clause,
};
