/*
 * fbrpm_index.c
 *	  fbrtree_pm's side of the platform contract (PmiAmOps): formatting a
 *	  pool (the spatial tree and the side tree of NULLs and empty values),
 *	  recovery of both trees and of the allocator on every first use after
 *	  a start (nothing is rebuilt, every node lives in the pool: recovery
 *	  repairs what a crash left and validates every node a scan may follow),
 *	  and its entries as VACUUM, the verifier and crash reconciliation see
 *	  them: (box, payload) items.
 *
 * The entries are listed by a lock-free search of both trees that accepts
 * every box, and handed out FBR_CAP at a time (about a leaf's worth); the
 * tree shrinks boxes and merges underfull nodes as entries are deleted, so
 * there is nothing left to tidy.  A reconciliation note holds an entry's
 * payload and its box's centre in float4 (fbrpm_note_key): the entry is
 * found again by a window search around that centre, in the side tree at
 * its TID.
 */
#include "fbrpm.h"

#include "miscadmin.h"
#include "utils/rel.h"

#define FBRPM_META_MAGIC	0x46425250	/* "FBRP" */

/*
 * The format parameter: the spatial tree's dimensions, 4 bytes (none, as
 * in CREATE records of 0.4 and before: 2); the side tree's are 2.
 */
static pm_errcode
fbrpm_format(pm_pool *pool, const PmiFormatParam *param, pm_error *err)
{
	uint32		dims = 2;
	pm_errcode	rc;

	if (param->len == sizeof(dims))
		memcpy(&dims, param->data, sizeof(dims));
	rc = fbr_format(pool, FBRPM_ROOT_SPATIAL, dims != 0 ? dims : 2, err);
	return rc != PM_OK ? rc : fbr_format(pool, FBRPM_ROOT_SIDE, 2, err);
}

static void
set_dims_param(uint32 dims, PmiFormatParam *param)
{
	param->len = sizeof(dims);
	memcpy(param->data, &dims, sizeof(dims));
}

static void
fbrpm_format_param(Relation index, PmiFormatParam *param)
{
	FbrpmOpclass oc;

	fbrpm_opclass(index, &oc);
	set_dims_param(oc.dims, param);
}

/* The spatial tree's dimensions in a pool. */
static int
pool_dims(const pm_pool *pool)
{
	fbr_tree	t;

	fbr_attach(&t, (pm_pool *) pool, FBRPM_ROOT_SPATIAL, NULL, 0, 0);
	return t.dims;
}

static void
fbrpm_pool_format_param(pm_pool *pool, PmiFormatParam *param)
{
	set_dims_param((uint32) pool_dims(pool), param);
}

static void
fbrpm_attach(void *state, pm_pool *pool, int slotno, uint32 generation, uint64 dram_root)
{
	FbrpmTrees *trees = state;

	fbr_attach(&trees->spatial, pool, FBRPM_ROOT_SPATIAL, pmi_epoch(), slotno + 1, generation);
	fbr_attach(&trees->side, pool, FBRPM_ROOT_SIDE, pmi_epoch(), slotno + 1, generation);
}

/*
 * A crash can leave node locks held, splits and merges half done, blocks
 * leaked.  After a clean stop too, the pool is a file anything may have
 * changed while the server was down: recovery's walk checks every child
 * offset before a scan or an insert follows one, so damage is this ERROR
 * rather than a read outside the pool.
 */
static uint64
fbrpm_recover(const char *index_name, void *state, bool after_crash)
{
	static const int meta_roots[] = {FBRPM_ROOT_SPATIAL, FBRPM_ROOT_SIDE};
	FbrpmTrees *trees = state;
	uint64_t	repaired_spatial;
	uint64_t	repaired_side;
	pm_error	err;

	if (fbr_recover(&trees->spatial, false, &repaired_spatial, &err) != PM_OK ||
		fbr_recover(&trees->side, false, &repaired_side, &err) != PM_OK ||
		fbr_recover_alloc(trees->spatial.pool, meta_roots, lengthof(meta_roots), &err) != PM_OK)
		pmi_report_core_error(ERROR, &err, index_name);
	if (repaired_spatial + repaired_side > 0)
		ereport(LOG,
				(errmsg("pm_index: index \"%s\": repaired %llu nodes a crash left in a split or merge",
						index_name, (unsigned long long) (repaired_spatial + repaired_side))));
	return 0;
}

static void *
fbrpm_entry_context(Relation index)
{
	FbrpmOpclass *oc = palloc(sizeof(FbrpmOpclass));

	fbrpm_opclass(index, oc);
	return oc;
}

static void
fbrpm_make_entry(void *context, const Datum *values, const bool *isnull, ItemPointer tid,
				 void *entry)
{
	(void) fbrpm_entry(context, values[0], isnull[0], tid, entry);
}

/*
 * Items by payload (a TID is indexed once), then by the bits of their
 * boxes' first dims coordinates: a total order in which only the same
 * entry compares equal, whatever the coordinates (NaN, -0).
 */
int
fbrpm_item_cmp(const fbr_item *x, const fbr_item *y, int dims)
{
	if (x->payload != y->payload)
		return x->payload < y->payload ? -1 : 1;
	for (int d = 0; d < dims; d++)
	{
		uint64		a[2],
					b[2];

		memcpy(&a[0], &x->box.min[d], sizeof(double));
		memcpy(&a[1], &x->box.max[d], sizeof(double));
		memcpy(&b[0], &y->box.min[d], sizeof(double));
		memcpy(&b[1], &y->box.max[d], sizeof(double));
		if (a[0] != b[0])
			return a[0] < b[0] ? -1 : 1;
		if (a[1] != b[1])
			return a[1] < b[1] ? -1 : 1;
	}
	return 0;
}

/*
 * PmiAmOps.entry_cmp: coordinates past a tree's dimensions are 0 in every
 * entry it hands out (fbrpm_entry, fbr_search into a fresh buffer)
 */
static int
fbrpm_entry_cmp(const void *a, const void *b)
{
	return fbrpm_item_cmp(a, b, FBR_MAX_DIMS);
}

static bool
fbrpm_entry_tid(const void *entry, ItemPointer tid)
{
	pmi_tid_unpack(((const fbr_item *) entry)->payload, tid);
	return true;
}

/* PmiAmOps.delete_entry: from the tree the entry belongs to. */
static pm_errcode
fbrpm_delete_entry(void *state, const void *entry, bool *found, pm_error *err)
{
	FbrpmTrees *trees = state;
	const fbr_item *item = entry;

	return fbr_delete((item->payload & FBRPM_PAYLOAD_SIDE) ? &trees->side : &trees->spatial, item,
					  found, err);
}

/*
 * PmiAmOps.log_entry: an item names its box and payload itself.  Logged
 * are the coordinates of its tree's dimensions, then the payload, so that a
 * 2-D entry takes 40 bytes; replay tells the dimensions from the length.
 */
static void
fbrpm_log_entry(const pm_pool *pool, const void *entry, StringInfo out)
{
	const fbr_item *item = entry;
	int			dims = 2;

	if ((item->payload & FBRPM_PAYLOAD_SIDE) == 0)
		dims = pool_dims(pool);
	appendBinaryStringInfo(out, (const char *) item->box.min, dims * sizeof(double));
	appendBinaryStringInfo(out, (const char *) item->box.max, dims * sizeof(double));
	appendBinaryStringInfo(out, (const char *) &item->payload, sizeof(item->payload));
}

/* A box in a tree of some dimensions, for the callbacks below. */
typedef struct TreeBox
{
	const fbr_box *box;
	int			dims;
} TreeBox;

static bool
contains_box(void *arg, const fbr_box *box, bool is_leaf)
{
	const TreeBox *b = arg;

	return fbr_box_contains(box, b->box, b->dims);
}

/*
 * Insert item unless the tree has it: the tree's insert adds an item even if
 * an equal one is there, so look for it first.
 */
static pm_errcode
insert_once(fbr_tree *t, const fbr_item *item, pm_error *err)
{
	fbr_results found = {0};
	bool		there = false;
	pm_errcode	rc;

	TreeBox		b = {&item->box, t->dims};

	rc = fbr_search(t, contains_box, &b, &found, err);
	for (size_t i = 0; rc == PM_OK && i < found.n && !there; i++)
		there = fbrpm_item_cmp(&found.items[i], item, t->dims) == 0;
	fbr_results_free(&found);
	if (rc != PM_OK || there)
		return rc;
	return fbr_insert(t, item, err);
}

/*
 * An entry as fbrpm_log_entry wrote it, its coordinates past dims 0.
 * Returns the dimensions it was logged with, or 0 (err set) if the bytes
 * are no such entry.
 */
int
fbrpm_logged_item(const char *data, Size len, fbr_item *item, pm_error *err)
{
	int			dims = (int) (len / sizeof(double) - 1) / 2;

	if (len % sizeof(double) != 0 || dims < 2 || dims > FBR_MAX_DIMS)
	{
		pm_error_set(err, PM_ERR_CORRUPT, 0, "a logged fbrtree_pm entry has %zu bytes", len);
		return 0;
	}
	memset(item, 0, sizeof(*item));
	memcpy(item->box.min, data, dims * sizeof(double));
	memcpy(item->box.max, data + dims * sizeof(double), dims * sizeof(double));
	memcpy(&item->payload, data + 2 * dims * sizeof(double), sizeof(item->payload));
	return dims;
}

/* A logged entry and the tree it belongs to, refused if its dimensions are not the tree's. */
static fbr_tree *
logged_item_tree(FbrpmTrees *trees, const char *data, Size len, fbr_item *item, pm_error *err)
{
	int			dims = fbrpm_logged_item(data, len, item, err);
	fbr_tree   *t;

	if (dims == 0)
		return NULL;
	t = (item->payload & FBRPM_PAYLOAD_SIDE) ? &trees->side : &trees->spatial;
	if (dims != t->dims)
	{
		pm_error_set(err, PM_ERR_CORRUPT, 0,
					 "a logged fbrtree_pm entry has %d dimensions, its tree %d", dims, t->dims);
		return NULL;
	}
	return t;
}

/* PmiAmOps.replay_entry: a record replayed again after a restart adds nothing. */
static pm_errcode
fbrpm_replay_entry(const PmiAmOps *ops, void *state, bool insert, const char *data, Size len,
				   pm_error *err)
{
	fbr_item	item;
	fbr_tree   *t = logged_item_tree(state, data, len, &item, err);
	bool		there;

	if (t == NULL)
		return err->code;
	return insert ? insert_once(t, &item, err) : fbr_delete(t, &item, &there, err);
}

/*
 * PmiAmOps.replay_sorted: fresh entries (none can be in the tree) go in
 * without the search that keeps a record applied again from adding a
 * second copy, a search that costs about as much as the insert.
 */
static pm_errcode
fbrpm_replay_sorted(const PmiAmOps *ops, void *state, int applier, const PmiLoggedEntry *entries,
					int n, bool fresh, pm_error *err)
{
	err->code = PM_OK;
	for (int i = 0; i < n; i++)
	{
		fbr_item	item;
		fbr_tree   *t = logged_item_tree(state, entries[i].data, entries[i].len, &item, err);

		if (t == NULL ||
			(fresh ? fbr_insert(t, &item, err) : insert_once(t, &item, err)) != PM_OK)
			return err->code;
	}
	return PM_OK;
}

static void
fbrpm_insert_entry(Relation index, void *context, void *state, const Datum *values,
				   const bool *isnull, ItemPointer tid)
{
	FbrpmTrees *trees = state;
	fbr_item	item;
	bool		side = fbrpm_entry(context, values[0], isnull[0], tid, &item);
	pm_error	err;

	if (insert_once(side ? &trees->side : &trees->spatial, &item, &err) != PM_OK)
		pmi_report(&err, index);
}

/* A consistent callback that accepts every box: a search of it lists a whole tree. */
bool
fbrpm_accept_all(void *arg, const fbr_box *box, bool is_leaf)
{
	return true;
}

/* The listing is the core's (malloc'd): freed whether or not fn fails. */
static uint32
fbrpm_foreach_batch(Relation index, void *state, PmiEntryBatchFn fn, void *arg, pm_error *err)
{
	FbrpmTrees *trees = state;
	fbr_results *all = palloc0(sizeof(fbr_results));	/* survives a longjmp */

	PG_TRY();
	{
		if (fbr_search(&trees->spatial, fbrpm_accept_all, NULL, all, err) != PM_OK ||
			fbr_search(&trees->side, fbrpm_accept_all, NULL, all, err) != PM_OK)
			pmi_report(err, index);
		for (size_t i = 0; i < all->n; i += FBR_CAP)
			(void) fn(arg, &all->items[i], (int) Min(all->n - i, FBR_CAP));
	}
	PG_FINALLY();
	{
		fbr_results_free(all);
	}
	PG_END_TRY();
	pfree(all);
	return 0;
}

static bool
in_window(void *arg, const fbr_box *box, bool is_leaf)
{
	const TreeBox *w = arg;

	return fbr_box_overlaps(w->box, box, w->dims);
}

static void
note_entries_one(Relation index, void *state, uint64 key, uint64 payload, PmiEntryBatchFn fn,
				 void *arg)
{
	FbrpmTrees *trees = state;
	bool		side = (payload & FBRPM_PAYLOAD_SIDE) != 0;
	fbr_results *found = palloc0(sizeof(fbr_results));	/* survives a longjmp */
	fbr_box		window;
	pm_error	err;

	if (side)
	{
		ItemPointerData tid;

		pmi_tid_unpack(payload, &tid);
		fbrpm_side_box(&tid, &window);
	}
	else
		fbrpm_note_window(key, &window);
	PG_TRY();
	{
		size_t		n = 0;

		fbr_tree   *t = side ? &trees->side : &trees->spatial;
		TreeBox		w = {&window, t->dims};

		if (fbr_search(t, in_window, &w, found, &err) != PM_OK)
			pmi_report(&err, index);
		for (size_t i = 0; i < found->n; i++)
			if (found->items[i].payload == payload)
				found->items[n++] = found->items[i];
		if (n > 0)
			(void) fn(arg, found->items, (int) n);
	}
	PG_FINALLY();
	{
		fbr_results_free(found);
	}
	PG_END_TRY();
	pfree(found);
}

static void
fbrpm_note_entries(Relation index, void *state, const PmiNote *notes, int n, PmiEntryBatchFn fn,
				   void *arg)
{
	for (int i = 0; i < n; i++)
		note_entries_one(index, state, notes[i].key, notes[i].rest, fn, arg);
}

static const PmiReloption fbrpm_reloptions[] = {
	{"fillfactor", "Packs fbrtree_pm nodes at build to this percentage", FBRPM_DEFAULT_FILLFACTOR, 10, 100},
	PMI_TIERED_RELOPTION,
};

const PmiAmOps fbrpm_am_ops = {
	.amname = "fbrtree_pm",
	.kind = PM_KIND_FBRTREE,
	.meta_magic = FBRPM_META_MAGIC,
	.reloptions = fbrpm_reloptions,
	.nreloptions = lengthof(fbrpm_reloptions),
	.format = fbrpm_format,
	.format_param = fbrpm_format_param,
	.pool_format_param = fbrpm_pool_format_param,
	.attach = fbrpm_attach,
	.state_size = sizeof(FbrpmTrees),
	.build = fbrpm_build,
	.recover = fbrpm_recover,
	.entry_size = sizeof(fbr_item),
	.entry_context = fbrpm_entry_context,
	.make_entry = fbrpm_make_entry,
	.entry_cmp = fbrpm_entry_cmp,
	.entry_tid = fbrpm_entry_tid,
	.delete_entry = fbrpm_delete_entry,
	.insert_entry = fbrpm_insert_entry,
	.foreach_batch = fbrpm_foreach_batch,
	.note_entries = fbrpm_note_entries,
	.log_entry = fbrpm_log_entry,
	.replay_entry = fbrpm_replay_entry,
	.replay_sorted = fbrpm_replay_sorted,
	.check = fbrpm_check_structure,
	.shape = fbrpm_shape,
	.derive_clause = fbrpm_derive_clause,
};
