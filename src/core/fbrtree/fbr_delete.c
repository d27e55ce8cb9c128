/*
 * fbr_delete.c
 *	  Delete with box shrink, in-place merge of underfull nodes, root
 *	  collapse (README: "Delete and merge").
 */
#include "fbr_internal.h"

#include <float.h>

static bool
fbr_trylock(fbr_node *n)
{
	uint64_t	expected = FBR_UNLOCKED;

	return pm_cas(&n->lock, &expected, FBR_LOCKED);
}

static bool
touches_edge(const fbr_box *outer, const fbr_box *b, int dims)
{
	for (int d = 0; d < dims; d++)
		if (b->min[d] == outer->min[d] || b->max[d] == outer->max[d])
			return true;
	return false;
}

/*
 * Merge the locked child x (slot xs of the locked parent p) with a sibling
 * that is free right now (trylock: writers lock top-down, siblings have no
 * order).  In place, the paper's five steps: copy the victim's entries into
 * free slots of the receiver; commit them with version 0 (aux names the
 * victim); enlarge the receiver's box in p; one commit on p unlinks the
 * victim; the receiver leaves version 0.  The victim is marked dead and
 * retired.  Every extra lock taken is added to held.
 */
static bool
merge_child(fbr_tree *t, fbr_node *p, int xs, fbr_node *x, fbr_held *held)
{
	int			dims = t->dims;
	uint64_t	pmeta = pm_load_relaxed(&p->meta);
	uint64_t	bits = fbr_bits(pmeta);
	int			cx = fbr_count(pm_load_relaxed(&x->meta));
	int			best = -1;
	double		best_grow = DBL_MAX;
	fbr_node   *s;
	fbr_node   *recv,
			   *victim;
	int			recv_slot,
				victim_slot;
	uint64_t	rm,
				vm,
				vbits,
				free_bits,
				added = 0;
	fbr_box		u,
				vbox,
				xbox;

	fbr_slot_box_load(p, xs, dims, &xbox);
	while (bits)
	{
		int			i = __builtin_ctzll(bits);
		fbr_node   *sib = fbr_node_at(t, fbr_slot_payload(p, i, dims));
		fbr_box		b;
		double		grow;

		bits &= bits - 1;
		if (i == xs || cx + fbr_count(pm_load(&sib->meta)) > fbr_merge_max(t))
			continue;
		fbr_slot_box_load(p, i, dims, &b);
		grow = fbr_box_volume(&b, dims);
		fbr_box_union(&b, &xbox, dims);
		grow = fbr_box_volume(&b, dims) - grow;
		if (grow < best_grow)
		{
			best = i;
			best_grow = grow;
		}
	}
	if (best < 0)
		return false;
	s = fbr_node_at(t, fbr_slot_payload(p, best, dims));
	if (!fbr_trylock(s))
		return false;
	fbr_hold(held, s);
	if (cx + fbr_count(pm_load_relaxed(&s->meta)) > fbr_merge_max(t))
		return false;
	if (fbr_count(pm_load_relaxed(&s->meta)) >= cx)
	{
		recv = s, recv_slot = best;
		victim = x, victim_slot = xs;
	}
	else
	{
		recv = x, recv_slot = xs;
		victim = s, victim_slot = best;
	}
	rm = pm_load_relaxed(&recv->meta);
	vm = pm_load_relaxed(&victim->meta);
	/* 1: copy */
	free_bits = ~fbr_bits(rm) & fbr_slots_mask(t);
	for (vbits = fbr_bits(vm); vbits; vbits &= vbits - 1)
	{
		int			from = __builtin_ctzll(vbits);
		int			to = __builtin_ctzll(free_bits);
		fbr_item	e;

		free_bits &= free_bits - 1;
		added |= UINT64_C(1) << to;
		fbr_slot_load(victim, from, dims, &e);
		fbr_slot_store(recv, to, dims, &e);
		pm_flush(&t->pool->persist, fbr_slot(recv, to, dims), fbr_slot_size(dims));
	}
	pm_drain(&t->pool->persist);
	/* 2 */
	pm_store_relaxed(&recv->aux, pm_pool_off(t->pool, victim) | FBR_AUX_MERGE);
	fbr_commit(t, recv, fbr_meta_with(rm, 0, fbr_bits(rm) | added));
	/* 3 */
	fbr_slot_box_load(p, recv_slot, dims, &u);
	fbr_slot_box_load(p, victim_slot, dims, &vbox);
	fbr_box_union(&u, &vbox, dims);
	fbr_slot_box_store(p, recv_slot, dims, &u);
	pm_persist(&t->pool->persist, fbr_slot(p, recv_slot, dims), fbr_box_size(dims));
	/* 4 */
	fbr_commit(t, p, fbr_meta_with(pmeta, fbr_next_version(fbr_version(pmeta)),
								   fbr_bits(pmeta) & ~(UINT64_C(1) << victim_slot)));
	/* 5 */
	fbr_commit(t, recv, fbr_meta_with(rm, fbr_next_version(fbr_version(rm)), fbr_bits(rm) | added));
	fbr_mark_dead(victim);
	fbr_retire(t, pm_pool_off(t->pool, victim));
	pm_fetch_add(&fbr_meta_block(t)->merges, 1);
	return true;
}

/* A root with one child hands the root over to that child. */
static void
collapse_root(fbr_tree *t)
{
	fbr_meta   *meta = fbr_meta_block(t);

	for (;;)
	{
		uint64_t	root = fbr_root(t);
		fbr_node   *r = fbr_node_at(t, root);
		uint64_t	m = pm_load(&r->meta);

		if (fbr_is_leaf(m) || fbr_count(m) != 1)
			return;
		if (!fbr_lock(r))
			continue;
		m = pm_load_relaxed(&r->meta);
		if (fbr_root(t) != root || fbr_count(m) != 1)
		{
			fbr_unlock(r);
			return;
		}
		pm_store(&meta->root, fbr_slot_payload(r, __builtin_ctzll(fbr_bits(m)), t->dims));
		pm_persist(&t->pool->persist, &meta->root, sizeof(meta->root));
		fbr_mark_dead(r);
		fbr_retire(t, root);
		pm_fetch_add(&meta->root_collapses, 1);
	}
}

/*
 * Merge underfull inner nodes bottom-up along a path found earlier: each
 * step locks parent then child afresh and re-validates the link.
 */
static void
condense(fbr_tree *t, const uint64_t *path, int level)
{
	for (int j = level; j >= 1; j--)
	{
		fbr_held	held = {0};
		fbr_node   *p = fbr_node_at(t, path[j - 1]);
		fbr_node   *x;
		int			xs;
		bool		merged;

		if (!fbr_lock(p))
			break;
		fbr_hold(&held, p);
		xs = fbr_find_child(t, p, path[j]);
		if (xs < 0)
		{
			fbr_release(&held);
			break;
		}
		x = fbr_node_at(t, path[j]);
		fbr_lock(x);
		fbr_hold(&held, x);
		merged = fbr_count(pm_load_relaxed(&x->meta)) < fbr_underfull(t) &&
			merge_child(t, p, xs, x, &held);
		fbr_release(&held);
		if (!merged)
			break;
	}
	collapse_root(t);
}

/*
 * Invalidate first, shrink second (every mix of old and new coordinates
 * still encloses what is valid); only the parent's entry shrinks, and
 * only if the deleted box touched its edge.
 */
pm_errcode
fbr_delete(fbr_tree *t, const fbr_item *item, bool *found, pm_error *err)
{
	uint64_t	path[64];
	int			depth;

	(void) err;
	*found = false;
	pm_epoch_enter(t->epoch);
	while (fbr_find_leaf(t, item, path, &depth))
	{
		fbr_held	held = {0};
		fbr_node   *p = NULL;
		fbr_node   *l = fbr_node_at(t, path[depth]);
		int			ps = -1;
		int			k = -1;
		uint64_t	m;
		bool		merged = false;

		if (depth > 0)
		{
			p = fbr_node_at(t, path[depth - 1]);
			if (!fbr_lock(p))
				continue;
			fbr_hold(&held, p);
			if ((ps = fbr_find_child(t, p, path[depth])) < 0)
			{
				fbr_release(&held);
				continue;
			}
			fbr_lock(l);
		}
		else if (!fbr_lock(l))
			continue;
		fbr_hold(&held, l);
		if (depth == 0 && fbr_root(t) != path[0])
		{
			fbr_release(&held);
			continue;
		}
		m = pm_load_relaxed(&l->meta);
		for (uint64_t bits = fbr_bits(m); bits && k < 0; bits &= bits - 1)
		{
			fbr_item	e;

			fbr_slot_load(l, __builtin_ctzll(bits), t->dims, &e);
			if (fbr_item_equal(&e, item, t->dims))
				k = __builtin_ctzll(bits);
		}
		if (k < 0)
		{
			/* moved by a split since the search: look again */
			fbr_release(&held);
			continue;
		}
		fbr_commit(t, l, fbr_meta_with(m, fbr_next_version(fbr_version(m)),
									   fbr_bits(m) & ~(UINT64_C(1) << k)));
		*found = true;
		m = pm_load_relaxed(&l->meta);
		if (p != NULL && fbr_count(m) > 0)
		{
			fbr_box		pbox;

			fbr_slot_box_load(p, ps, t->dims, &pbox);
			if (touches_edge(&pbox, &item->box, t->dims))
			{
				fbr_box		tight = fbr_node_box(t, l, m);

				fbr_slot_box_store(p, ps, t->dims, &tight);
				pm_persist(&t->pool->persist, fbr_slot(p, ps, t->dims), fbr_box_size(t->dims));
			}
		}
		if (p != NULL && fbr_count(m) < fbr_underfull(t))
			merged = merge_child(t, p, ps, l, &held);
		merged = merged && fbr_count(pm_load_relaxed(&p->meta)) < fbr_underfull(t);
		fbr_release(&held);
		if (merged)
			condense(t, path, depth - 1);
		break;
	}
	pm_epoch_exit(t->epoch);
	return PM_OK;
}
