/*
 * fbr_node.c
 *	  Nodes of the FBR-tree: format, consistent reads, locks, commits,
 *	  allocation and retirement.
 */
#include "fbr_internal.h"

pm_errcode
fbr_format(pm_pool *pool, int meta_root, int dims, pm_error *err)
{
	fbr_tree	t;
	uint64_t	meta_off;
	uint64_t	root;
	fbr_meta   *meta;

	if (dims < 2 || dims > FBR_MAX_DIMS)
		return pm_error_set(err, PM_ERR_INVALID, 0,
							"pool file \"%s\": an fbrtree has 2 to %d dimensions, not %d",
							pool->path, FBR_MAX_DIMS, dims);
	fbr_attach(&t, pool, meta_root, NULL, 0, 0);
	t.dims = dims;
	t.cap = fbr_cap_for(dims);
	meta_off = pm_alloc_block(&t.pm, sizeof(fbr_meta), err);
	if (meta_off == 0)
		return err->code;
	root = fbr_new_node(&t, true, NULL, 0, false, err);
	if (root == 0)
		return err->code;
	meta = pm_pool_addr(pool, meta_off);
	memset(meta, 0, sizeof(*meta));
	meta->magic = FBR_META_MAGIC;
	/* 2-D: format 1, which builds that know only 2-D trees read */
	meta->format = dims == 2 ? FBR_FORMAT_2D : FBR_FORMAT_ND;
	meta->dims = dims == 2 ? 0 : (uint64_t) dims;
	meta->root = root;
	pm_persist(&pool->persist, meta, sizeof(*meta));
	pm_pool_set_root(pool, meta_root, meta_off);
	return PM_OK;
}

void
fbr_attach(fbr_tree *t, pm_pool *pool, int meta_root, pm_epoch_handle *epoch, uint32_t space,
		   uint32_t tag)
{
	t->pool = pool;
	t->meta_root = meta_root;
	pm_alloc_attach_pool(&t->pm, pool);
	t->epoch = epoch;
	t->space = space;
	t->tag = tag;
	t->split = FBR_SPLIT_RSTAR;
	t->dims = 2;
	if (fbr_meta_block_ok(t))
	{
		int			dims = fbr_meta_dims(fbr_meta_block(t));

		if (dims != 0)
			t->dims = dims;
	}
	t->cap = fbr_cap_for(t->dims);
}

/*
 * Seqlock-style read: the metadata word before and after the copy must be
 * equal.  In-place box enlargements and shrinks do not change the word; a
 * box copied mid-change is still enclosing (README: invariant I2).  Every
 * search reads nodes through here, so it is inlined with dims a constant,
 * once for each dims: a 2-D copy is five loads and stores per entry.
 */
static inline __attribute__((always_inline)) uint64_t
read_node(const fbr_node *n, int dims, fbr_item *items, int *slots, int *count)
{
	for (unsigned attempt = 0;; attempt++)
	{
		uint64_t	m = pm_load(&n->meta);
		uint64_t	bits = fbr_bits(m);
		int			c = 0;

		while (bits)
		{
			int			s = __builtin_ctzll(bits);

			bits &= bits - 1;
			fbr_slot_read(n, s, dims, &items[c]);
			if (slots)
				slots[c] = s;
			c++;
		}
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (pm_load_relaxed(&n->meta) == m)
		{
			*count = c;
			return m;
		}
		pm_spin_delay(attempt);
	}
}

_Static_assert(FBR_MAX_DIMS == 4, "fbr_read_node instantiates dims 2, 3 and 4");

uint64_t
fbr_read_node(const fbr_tree *t, const fbr_node *n, fbr_item *items, int *slots, int *count)
{
	switch (t->dims)
	{
		case 2:
			return read_node(n, 2, items, slots, count);
		case 3:
			return read_node(n, 3, items, slots, count);
		default:
			return read_node(n, 4, items, slots, count);
	}
}

bool
fbr_lock(fbr_node *n)
{
	for (unsigned attempt = 0;; attempt++)
	{
		uint64_t	expected = FBR_UNLOCKED;

		if (pm_cas(&n->lock, &expected, FBR_LOCKED))
			return true;
		if (expected == FBR_DEAD)
			return false;
		pm_spin_delay(attempt);
	}
}

void
fbr_unlock(fbr_node *n)
{
	pm_store(&n->lock, FBR_UNLOCKED);
}

void
fbr_mark_dead(fbr_node *n)
{
	pm_store(&n->lock, FBR_DEAD);
}

void
fbr_commit(fbr_tree *t, fbr_node *n, uint64_t meta)
{
	pm_store(&n->meta, meta);
	pm_persist(&t->pool->persist, &n->meta, sizeof(n->meta));
}

fbr_box
fbr_items_box(const fbr_tree *t, const fbr_item *items, int n)
{
	fbr_box		b;

	fbr_box_copy(&b, &items[0].box, t->dims);
	for (int i = 1; i < n; i++)
		fbr_box_union(&b, &items[i].box, t->dims);
	return b;
}

fbr_box
fbr_node_box(const fbr_tree *t, const fbr_node *n, uint64_t meta)
{
	uint64_t	bits = fbr_bits(meta);
	fbr_box		b,
				e;

	pm_assert(bits != 0);
	fbr_slot_box_load(n, __builtin_ctzll(bits), t->dims, &b);
	for (bits &= bits - 1; bits; bits &= bits - 1)
	{
		fbr_slot_box_load(n, __builtin_ctzll(bits), t->dims, &e);
		fbr_box_union(&b, &e, t->dims);
	}
	return b;
}

uint64_t
fbr_new_node(fbr_tree *t, bool leaf, const fbr_item *items, int n, bool locked, pm_error *err)
{
	uint64_t	off = pm_alloc_block(&t->pm, FBR_NODE_SIZE, err);
	fbr_node   *node;

	if (off == 0)
		return 0;
	node = fbr_node_at(t, off);
	node->lock = locked ? FBR_LOCKED : FBR_UNLOCKED;
	node->aux = 0;
	for (int i = 0; i < n; i++)
		fbr_slot_store(node, i, t->dims, &items[i]);
	node->meta = fbr_make_meta(leaf, 1, (UINT64_C(1) << n) - 1);
	pm_persist(&t->pool->persist, node, sizeof(fbr_node) + fbr_slot_size(t->dims) * n);
	return off;
}

void
fbr_retire(fbr_tree *t, uint64_t off)
{
	pm_epoch_retire(t->epoch, t->space, t->tag, off);
}

int
fbr_find_child(const fbr_tree *t, const fbr_node *n, uint64_t child)
{
	uint64_t	bits = fbr_bits(pm_load_relaxed(&n->meta));

	while (bits)
	{
		int			s = __builtin_ctzll(bits);

		bits &= bits - 1;
		if (fbr_slot_payload(n, s, t->dims) == child)
			return s;
	}
	return -1;
}

void
fbr_hold(fbr_held *h, fbr_node *n)
{
	h->node[h->n++] = n;
}

/* Nodes a merge or collapse marked dead stay locked for good. */
void
fbr_release(fbr_held *h)
{
	while (h->n > 0)
	{
		fbr_node   *n = h->node[--h->n];

		if (pm_load_relaxed(&n->lock) == FBR_LOCKED)
			fbr_unlock(n);
	}
}
