/*
 * fbr_insert.c
 *	  Failure-atomic insert with lock coupling (README: "Insert and split").
 */
#include "fbr_internal.h"

#include <float.h>

/*
 * Guttman's least volume enlargement; ties go to the smaller box.  Returns
 * the slot, and whether its box must grow to take b (*grown: the box it
 * grows to).  Every insert runs it on each level: inlined with dims a
 * constant, once for each dims, as fbr_read_node.
 */
static inline __attribute__((always_inline)) int
choose_subtree_dims(const fbr_node *n, uint64_t m, const fbr_box *b, fbr_box *grown,
					bool *grows, int dims)
{
	uint64_t	bits = fbr_bits(m);
	int			best = __builtin_ctzll(bits);	/* when no growth compares (NaN, inf - inf) */
	double		best_grow = DBL_MAX,
				best_area = DBL_MAX;

	while (bits)
	{
		int			s = __builtin_ctzll(bits);
		fbr_box		u;
		double		area;
		double		grow;

		bits &= bits - 1;
		fbr_slot_box_load(n, s, dims, &u);
		area = fbr_box_volume(&u, dims);
		fbr_box_union(&u, b, dims);
		grow = fbr_box_volume(&u, dims) - area;
		if (grow < best_grow || (grow == best_grow && area < best_area))
		{
			best = s;
			best_grow = grow;
			best_area = area;
		}
	}
	fbr_slot_box_load(n, best, dims, grown);
	*grows = !fbr_box_contains(grown, b, dims);
	if (*grows)
		fbr_box_union(grown, b, dims);
	return best;
}

static int
choose_subtree(const fbr_tree *t, const fbr_node *n, uint64_t m, const fbr_box *b, fbr_box *grown,
			   bool *grows)
{
	switch (t->dims)
	{
		case 2:
			return choose_subtree_dims(n, m, b, grown, grows, 2);
		case 3:
			return choose_subtree_dims(n, m, b, grown, grows, 3);
		default:
			return choose_subtree_dims(n, m, b, grown, grows, 4);
	}
}

/*
 * Descend from the root, locking each child before deciding about its
 * parent: a child with a free slot cannot split, so every ancestor is
 * released (digest GAP-1: the paper tests "not full" without the child's
 * lock).  Entry boxes on the way are enlarged in place before the leaf
 * commit.  Enlargements must become durable top-down too (else a crash
 * can leave a child's box outside its parent's): a pending one is drained
 * before the next level's is flushed, and the last drains with the leaf
 * slot's, so an insert that enlarges one level pays no extra fence.
 */
pm_errcode
fbr_insert(fbr_tree *t, const fbr_item *item, pm_error *err)
{
	uint64_t	path[64];
	fbr_held	held;
	uint64_t	holder;
	int			level;
	fbr_node   *n;
	pm_errcode	rc;
	bool		undrained = false;

	pm_epoch_enter(t->epoch);
	for (;;)
	{
		uint64_t	root = fbr_root(t);

		n = fbr_node_at(t, root);
		if (!fbr_lock(n))
			continue;			/* collapsed meanwhile */
		if (fbr_root(t) != root)
		{
			fbr_unlock(n);
			continue;
		}
		held.n = 0;
		fbr_hold(&held, n);
		path[0] = root;
		break;
	}
	for (level = 0;; level++)
	{
		uint64_t	m = pm_load_relaxed(&n->meta);
		int			pos;
		fbr_box		u;
		bool		grows;
		fbr_node   *child;

		if (fbr_is_leaf(m))
			break;
		pos = choose_subtree(t, n, m, &item->box, &u, &grows);
		if (grows)
		{
			if (undrained)
				pm_drain(&t->pool->persist);
			fbr_slot_box_store(n, pos, t->dims, &u);
			pm_flush(&t->pool->persist, fbr_slot(n, pos, t->dims), fbr_box_size(t->dims));
			undrained = true;
		}
		path[level + 1] = fbr_slot_payload(n, pos, t->dims);
		child = fbr_node_at(t, path[level + 1]);
		fbr_lock(child);		/* alive: its parent is locked and holds it */
		if (fbr_count(pm_load_relaxed(&child->meta)) < t->cap)
			fbr_release(&held);
		fbr_hold(&held, child);
		n = child;
	}
	rc = fbr_insert_at(t, path, level, item, 0, &holder, &held, err);
	fbr_release(&held);
	pm_epoch_exit(t->epoch);
	return rc;
}
