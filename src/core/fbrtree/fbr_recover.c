/*
 * fbr_recover.c
 *	  Recovery after a crash (README: "Recovery"): finish or undo the split
 *	  or merge the crash interrupted, clear lock words, rebuild the
 *	  allocator from what the tree reaches.
 */
#include "fbr_internal.h"
#include "recon.h"

#include <stdlib.h>

typedef struct pending
{
	uint64_t	off;
	uint64_t	parent;			/* 0: the root */
	int			depth;
} pending;

typedef struct walk
{
	uint64_t   *nodes;
	size_t		n,
				cap;
	pending    *v0;
	size_t		nv0,
				v0cap;
	bool		oom;
	uint64_t	limit;			/* more reached nodes than this: the pool is damaged */
	const char *damage;			/* what the walk found wrong, or NULL */
	uint64_t	damage_off;
} walk;

static void *
grow(void *p, size_t *cap, size_t elem, bool *oom)
{
	size_t		c = *cap ? *cap * 2 : 1024;
	void	   *q = realloc(p, c * elem);

	if (q == NULL)
	{
		*oom = true;
		return p;
	}
	*cap = c;
	return q;
}

/* Every reachable node (duplicates reached twice while a split or merge is unfinished). */
static void
collect(fbr_tree *t, walk *w, uint64_t off, uint64_t parent, int depth)
{
	fbr_node   *n;
	uint64_t	m;

	if (w->oom || w->damage != NULL)
		return;
	/* offsets come from the pool: check them before following them (a damaged pool, not a crash) */
	if (!fbr_node_offset_ok(t, off))
		w->damage = "a child offset that is no node block";
	else if (depth >= FBR_MAX_DEPTH || w->n >= w->limit)
		w->damage = "a cycle of child offsets";
	if (w->damage != NULL)
	{
		w->damage_off = off;
		return;
	}
	n = fbr_node_at(t, off);
	m = n->meta;
	if ((fbr_bits(m) & ~fbr_slots_mask(t)) != 0)
		w->damage = "a node with bits set beyond its slots";	/* they would reach past its block */
	else if (!fbr_is_leaf(m) && fbr_bits(m) == 0)
		w->damage = "an inner node with no entries";	/* no subtree for an insert to descend to */
	if (w->damage != NULL)
	{
		w->damage_off = off;
		return;
	}
	if (w->n == w->cap)
		w->nodes = grow(w->nodes, &w->cap, sizeof(uint64_t), &w->oom);
	if (w->oom)
		return;
	w->nodes[w->n++] = off;
	n->lock = FBR_UNLOCKED;
	if (fbr_version(m) == 0)
	{
		if (w->nv0 == w->v0cap)
			w->v0 = grow(w->v0, &w->v0cap, sizeof(pending), &w->oom);
		if (w->oom)
			return;
		w->v0[w->nv0++] = (pending) {off, parent, depth};
	}
	if (!fbr_is_leaf(m))
		for (uint64_t bits = fbr_bits(m); bits; bits &= bits - 1)
			collect(t, w, fbr_slot_payload(n, __builtin_ctzll(bits), t->dims), off, depth + 1);
}

static int
u64_cmp(const void *a, const void *b)
{
	uint64_t	x = *(const uint64_t *) a,
				y = *(const uint64_t *) b;

	return x < y ? -1 : x > y;
}

static int
deeper_first(const void *a, const void *b)
{
	return ((const pending *) b)->depth - ((const pending *) a)->depth;
}

static bool
reached(const walk *w, uint64_t off)
{
	return bsearch(&off, w->nodes, w->n, sizeof(uint64_t), u64_cmp) != NULL;
}

/* Does n's slot s also live in sibling c (moved by the split)? */
static bool
moved_to(const fbr_tree *t, const fbr_node *n, int s, const fbr_node *c, bool leaf)
{
	fbr_item	mine,
				e;

	fbr_slot_load(n, s, t->dims, &mine);
	for (uint64_t bits = fbr_bits(c->meta); bits; bits &= bits - 1)
	{
		fbr_slot_load(c, __builtin_ctzll(bits), t->dims, &e);
		if (leaf ? fbr_item_equal(&e, &mine, t->dims) : e.payload == mine.payload)
			return true;
	}
	return false;
}

/*
 * A version-0 node is the first node of an unfinished split (aux: the new
 * sibling) or the receiver of an unfinished merge (aux: the victim |
 * AUX_MERGE).  Split: if the sibling is reachable, the moved entries are
 * cleared from n and n's box in its parent is made tight (steps 5-6 redone);
 * if not, nothing moved (the sibling leaked: the allocator frees it).
 * Merge: if the victim is still linked, the merge is rolled forward (steps
 * 3-4); then n leaves version 0.
 */
static void
repair(fbr_tree *t, const walk *w, const pending *pn)
{
	fbr_node   *n = fbr_node_at(t, pn->off);
	fbr_node   *p = pn->parent ? fbr_node_at(t, pn->parent) : NULL;
	uint64_t	m = n->meta;
	uint64_t	bits = fbr_bits(m);
	uint64_t	other = n->aux & ~FBR_AUX_MERGE;
	int			ns = p ? fbr_find_child(t, p, pn->off) : -1;

	if (fbr_version(m) != 0)
		return;					/* reached twice: already repaired */
	if (n->aux & FBR_AUX_MERGE)
	{
		int			vs = p ? fbr_find_child(t, p, other) : -1;

		if (vs >= 0 && ns >= 0 && reached(w, other))
		{
			uint64_t	pm = p->meta;
			fbr_box		u,
						v;

			fbr_slot_box_load(p, ns, t->dims, &u);
			fbr_slot_box_load(p, vs, t->dims, &v);
			fbr_box_union(&u, &v, t->dims);
			fbr_slot_box_store(p, ns, t->dims, &u);
			pm_persist(&t->pool->persist, fbr_slot(p, ns, t->dims), fbr_box_size(t->dims));
			fbr_commit(t, p, fbr_meta_with(pm, fbr_next_version(fbr_version(pm)),
										   fbr_bits(pm) & ~(UINT64_C(1) << vs)));
		}
	}
	else if (reached(w, other))
	{
		fbr_node   *c = fbr_node_at(t, other);

		for (uint64_t b = bits; b; b &= b - 1)
			if (moved_to(t, n, __builtin_ctzll(b), c, fbr_is_leaf(m)))
				bits &= ~(UINT64_C(1) << __builtin_ctzll(b));
		if (ns >= 0 && bits != 0)
		{
			fbr_box		tight = fbr_node_box(t, n, bits);

			fbr_slot_box_store(p, ns, t->dims, &tight);
			pm_persist(&t->pool->persist, fbr_slot(p, ns, t->dims), fbr_box_size(t->dims));
		}
	}
	fbr_commit(t, n, fbr_meta_with(m, 1, bits));
}

/* Mark the node at off and everything below it in use in a (allocator recovery). */
static pm_errcode
mark(fbr_tree *t, pm_alloc *a, uint64_t off, pm_error *err)
{
	fbr_node   *n;
	pm_errcode	rc;

	if (!fbr_node_offset_ok(t, off))
		return pm_error_set(err, PM_ERR_CORRUPT, 0,
							"pool file \"%s\": the fbrtree has a child offset that is no node block (offset %llu)",
							t->pool->path, (unsigned long long) off);
	n = fbr_node_at(t, off);
	rc = pm_alloc_mark(a, off, err);

	if (rc == PM_OK && !fbr_is_leaf(n->meta))
		for (uint64_t bits = fbr_bits(n->meta); bits && rc == PM_OK; bits &= bits - 1)
			rc = mark(t, a, fbr_slot_payload(n, __builtin_ctzll(bits), t->dims), err);
	return rc;
}

pm_errcode
fbr_recover(fbr_tree *t, bool recover_alloc, uint64_t *repaired, pm_error *err)
{
	walk		w = {0};
	fbr_meta   *meta;
	pm_errcode	rc = PM_OK;

	*repaired = 0;
	if (!fbr_meta_block_ok(t) || (meta = fbr_meta_block(t))->magic != FBR_META_MAGIC)
		return pm_error_set(err, PM_ERR_CORRUPT, 0, "pool file \"%s\" holds no fbrtree", t->pool->path);
	if (meta->format != FBR_FORMAT_2D && meta->format != FBR_FORMAT_ND)
		return pm_error_set(err, PM_ERR_VERSION, 0,
							"pool file \"%s\" holds fbrtree format %llu, this build reads %d and %d",
							t->pool->path, (unsigned long long) meta->format, FBR_FORMAT_2D, FBR_FORMAT_ND);
	if (fbr_meta_dims(meta) == 0)
		return pm_error_set(err, PM_ERR_CORRUPT, 0,
							"pool file \"%s\": fbrtree meta block of format %llu with dims field %llu",
							t->pool->path, (unsigned long long) meta->format,
							(unsigned long long) meta->dims);
	if (fbr_meta_dims(meta) != t->dims)
		return pm_error_set(err, PM_ERR_INVALID, 0,
							"pool file \"%s\": the handle has %d dims, the fbrtree %d",
							t->pool->path, t->dims, fbr_meta_dims(meta));
	w.limit = fbr_reach_limit(t);
	collect(t, &w, meta->root, 0, 0);
	if (w.oom)
		rc = pm_error_set(err, PM_ERR_NOMEM, 0, "out of memory recovering pool file \"%s\"", t->pool->path);
	else if (w.damage != NULL)
		rc = pm_error_set(err, PM_ERR_CORRUPT, 0, "pool file \"%s\": the fbrtree has %s (offset %llu)",
						  t->pool->path, w.damage, (unsigned long long) w.damage_off);
	else
	{
		qsort(w.nodes, w.n, sizeof(uint64_t), u64_cmp);
		if (w.nv0 > 1)
			qsort(w.v0, w.nv0, sizeof(pending), deeper_first);
		for (size_t i = 0; i < w.nv0; i++)
			repair(t, &w, &w.v0[i]);
		*repaired = w.nv0;
	}
	free(w.nodes);
	free(w.v0);
	if (rc == PM_OK && recover_alloc)
		rc = fbr_recover_alloc(t->pool, &t->meta_root, 1, err);
	return rc;
}

pm_errcode
fbr_recover_alloc(pm_pool *pool, const int *meta_roots, int ntrees, pm_error *err)
{
	pm_alloc	a;
	pm_errcode	rc = PM_OK;

	pm_alloc_attach_pool(&a, pool);
	pm_alloc_recover_begin(&a);
	/* meta blocks and the host's blocks (its reconciliation ring) */
	rc = pm_recon_mark_roots(&a, pool, err);
	for (int i = 0; rc == PM_OK && i < ntrees; i++)
	{
		fbr_tree	t;

		fbr_attach(&t, pool, meta_roots[i], NULL, 0, 0);
		if (!fbr_meta_block_ok(&t))
			rc = pm_error_set(err, PM_ERR_CORRUPT, 0, "pool file \"%s\" holds no fbrtree", pool->path);
		else
			rc = mark(&t, &a, fbr_root(&t), err);
	}
	/* unfinished marks would free reachable blocks: leave the allocator for the next try */
	if (rc == PM_OK)
		pm_alloc_recover_end(&a);
	return rc;
}
