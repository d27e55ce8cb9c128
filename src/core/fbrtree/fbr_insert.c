/*
 * fbr_insert.c
 *	  Failure-atomic insert with lock coupling (README: "Insert and split").
 */
#include "fbr_internal.h"

#include <float.h>

/* Guttman's least enlargement; ties go to the smaller box. */
static int
choose_subtree(const fbr_node *n, uint64_t m, const fbr_box *b)
{
	uint64_t	bits = fbr_bits(m);
	int			best = -1;
	double		best_grow = DBL_MAX,
				best_area = DBL_MAX;

	while (bits)
	{
		int			s = __builtin_ctzll(bits);
		fbr_box		u = n->e[s].box;
		double		area = fbr_box_area(&u);
		double		grow;

		bits &= bits - 1;
		fbr_box_union(&u, b);
		grow = fbr_box_area(&u) - area;
		if (grow < best_grow || (grow == best_grow && area < best_area))
		{
			best = s;
			best_grow = grow;
			best_area = area;
		}
	}
	return best;
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
		fbr_node   *child;

		if (fbr_is_leaf(m))
			break;
		pos = choose_subtree(n, m, &item->box);
		if (!fbr_box_contains(&n->e[pos].box, &item->box))
		{
			fbr_box		u = n->e[pos].box;

			fbr_box_union(&u, &item->box);
			if (undrained)
				pm_drain(&t->pool->persist);
			fbr_box_store(&n->e[pos].box, &u);
			pm_flush(&t->pool->persist, &n->e[pos].box, sizeof(fbr_box));
			undrained = true;
		}
		path[level + 1] = n->e[pos].payload;
		child = fbr_node_at(t, path[level + 1]);
		fbr_lock(child);		/* alive: its parent is locked and holds it */
		if (fbr_count(pm_load_relaxed(&child->meta)) < FBR_CAP)
			fbr_release(&held);
		fbr_hold(&held, child);
		n = child;
	}
	rc = fbr_insert_at(t, path, level, item, 0, &holder, &held, err);
	fbr_release(&held);
	pm_epoch_exit(t->epoch);
	return rc;
}
