/*
 * fbr_split.c
 *	  Split heuristics and the in-place split (README: "Insert and split").
 */
#include "fbr_internal.h"

#include <float.h>
#include <stdlib.h>

/* ---------- R*-tree axis split ---------- */

typedef struct sort_ref
{
	double		key1;
	double		key2;
	int			idx;
} sort_ref;

static int
sort_ref_cmp(const void *a, const void *b)
{
	const sort_ref *x = a,
			   *y = b;

	if (x->key1 != y->key1)
		return x->key1 < y->key1 ? -1 : 1;
	if (x->key2 != y->key2)
		return x->key2 < y->key2 ? -1 : 1;
	return x->idx - y->idx;
}

/* Sort on one axis by lower (by_upper false) or upper bound. */
static void
axis_order(const fbr_item *items, int n, int axis, bool by_upper, sort_ref *ord)
{
	for (int i = 0; i < n; i++)
	{
		const fbr_box *b = &items[i].box;
		double		lo = axis == 0 ? b->xmin : b->ymin;
		double		hi = axis == 0 ? b->xmax : b->ymax;

		ord[i].key1 = by_upper ? hi : lo;
		ord[i].key2 = by_upper ? lo : hi;
		ord[i].idx = i;
	}
	qsort(ord, n, sizeof(sort_ref), sort_ref_cmp);
}

/* Prefix and suffix boxes of an order: pre[k] covers [0, k], suf[k] covers [k, n). */
static void
prefix_boxes(const fbr_item *items, const sort_ref *ord, int n, fbr_box *pre, fbr_box *suf)
{
	pre[0] = items[ord[0].idx].box;
	for (int i = 1; i < n; i++)
	{
		pre[i] = pre[i - 1];
		fbr_box_union(&pre[i], &items[ord[i].idx].box);
	}
	suf[n - 1] = items[ord[n - 1].idx].box;
	for (int i = n - 2; i >= 0; i--)
	{
		suf[i] = suf[i + 1];
		fbr_box_union(&suf[i], &items[ord[i].idx].box);
	}
}

static double
overlap_area(const fbr_box *a, const fbr_box *b)
{
	double		w = (a->xmax < b->xmax ? a->xmax : b->xmax) - (a->xmin > b->xmin ? a->xmin : b->xmin);
	double		h = (a->ymax < b->ymax ? a->ymax : b->ymax) - (a->ymin > b->ymin ? a->ymin : b->ymin);

	return w > 0 && h > 0 ? w * h : 0;
}

/*
 * The axis with the least sum of margins over all distributions; on it the
 * distribution with the least overlap, then the least total area, then
 * the least total margin (which still separates degenerate boxes).
 */
static void
split_rstar(const fbr_item *items, int n, bool *in_a)
{
	sort_ref	ord[2][2][FBR_CAP + 1];
	fbr_box		pre[FBR_CAP + 1];
	fbr_box		suf[FBR_CAP + 1];
	double		margin[2] = {0, 0};
	int			axis;
	double		best_overlap = DBL_MAX,
				best_area = DBL_MAX,
				best_margin = DBL_MAX;
	int			best_sort = 0,
				best_k = FBR_MIN_GROUP;

	for (int a = 0; a < 2; a++)
		for (int u = 0; u < 2; u++)
		{
			axis_order(items, n, a, u, ord[a][u]);
			prefix_boxes(items, ord[a][u], n, pre, suf);
			for (int k = FBR_MIN_GROUP; k <= n - FBR_MIN_GROUP; k++)
				margin[a] += fbr_box_margin(&pre[k - 1]) + fbr_box_margin(&suf[k]);
		}
	axis = margin[1] < margin[0] ? 1 : 0;
	for (int u = 0; u < 2; u++)
	{
		prefix_boxes(items, ord[axis][u], n, pre, suf);
		for (int k = FBR_MIN_GROUP; k <= n - FBR_MIN_GROUP; k++)
		{
			double		ov = overlap_area(&pre[k - 1], &suf[k]);
			double		ar = fbr_box_area(&pre[k - 1]) + fbr_box_area(&suf[k]);
			double		mg = fbr_box_margin(&pre[k - 1]) + fbr_box_margin(&suf[k]);

			if (ov < best_overlap ||
				(ov == best_overlap && (ar < best_area || (ar == best_area && mg < best_margin))))
			{
				best_overlap = ov;
				best_area = ar;
				best_margin = mg;
				best_sort = u;
				best_k = k;
			}
		}
	}
	for (int i = 0; i < n; i++)
		in_a[ord[axis][best_sort][i].idx] = i < best_k;
}

/* ---------- Guttman quadratic split ---------- */

static double
union_area(const fbr_box *a, const fbr_box *b)
{
	fbr_box		u = *a;

	fbr_box_union(&u, b);
	return fbr_box_area(&u);
}

static void
split_quadratic(const fbr_item *items, int n, bool *in_a)
{
	bool		done[FBR_CAP + 1] = {false};
	int			seed_a = 0,
				seed_b = 1,
				na = 1,
				nb = 1;
	double		worst = -DBL_MAX;
	fbr_box		box_a,
				box_b;

	/* seeds: the pair that would waste the most area together */
	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n; j++)
		{
			double		d = union_area(&items[i].box, &items[j].box) -
				fbr_box_area(&items[i].box) - fbr_box_area(&items[j].box);

			if (d > worst)
			{
				worst = d;
				seed_a = i;
				seed_b = j;
			}
		}
	in_a[seed_a] = true;
	in_a[seed_b] = false;
	done[seed_a] = done[seed_b] = true;
	box_a = items[seed_a].box;
	box_b = items[seed_b].box;
	for (int left = n - 2; left > 0; left--)
	{
		int			pick = -1;
		double		pick_diff = -1,
					pick_da = 0,
					pick_db = 0;
		bool		to_a;

		if (na + left <= FBR_MIN_GROUP || nb + left <= FBR_MIN_GROUP)
		{
			/* the short group takes everything left */
			bool		rest_a = na + left <= FBR_MIN_GROUP;

			for (int i = 0; i < n; i++)
				if (!done[i])
					in_a[i] = rest_a;
			return;
		}
		/* next: the item with the strongest preference */
		for (int i = 0; i < n; i++)
		{
			double		da,
						db;

			if (done[i])
				continue;
			da = union_area(&box_a, &items[i].box) - fbr_box_area(&box_a);
			db = union_area(&box_b, &items[i].box) - fbr_box_area(&box_b);
			if (pick < 0 || (da > db ? da - db : db - da) > pick_diff)
			{
				pick = i;
				pick_diff = da > db ? da - db : db - da;
				pick_da = da;
				pick_db = db;
			}
		}
		if (pick_da != pick_db)
			to_a = pick_da < pick_db;
		else if (fbr_box_area(&box_a) != fbr_box_area(&box_b))
			to_a = fbr_box_area(&box_a) < fbr_box_area(&box_b);
		else
			to_a = na <= nb;
		done[pick] = true;
		in_a[pick] = to_a;
		if (to_a)
		{
			fbr_box_union(&box_a, &items[pick].box);
			na++;
		}
		else
		{
			fbr_box_union(&box_b, &items[pick].box);
			nb++;
		}
	}
}

void
fbr_partition(fbr_split_method method, const fbr_item *items, int n, bool *in_a)
{
	if (method == FBR_SPLIT_QUADRATIC)
		split_quadratic(items, n, in_a);
	else
		split_rstar(items, n, in_a);
}

/* ---------- insert into a locked node, splitting in place ---------- */

static void
place_in_free_slot(fbr_tree *t, fbr_node *n, const fbr_item *item)
{
	uint64_t	m = pm_load_relaxed(&n->meta);
	int			s = __builtin_ctzll(~fbr_bits(m) & FBR_BITS_MASK);

	fbr_item_store(&n->e[s], item);
	pm_persist(&t->pool->persist, &n->e[s], sizeof(fbr_item));
	fbr_commit(t, n, fbr_meta_with(m, fbr_next_version(fbr_version(m)), fbr_bits(m) | UINT64_C(1) << s));
}

/*
 * The in-place split, in the order of the paper's prose with the digest's
 * fixes (GAP-2, GAP-3, GAP-4):
 *   1. the moving group B is written to a new node C (locked by us), persisted;
 *   2. n's version becomes 0 (aux = C): "splitting", nothing removed yet;
 *   3-4. C's entry is inserted into the parent (which may split in turn), or
 *      a new root holding n and C is published: C is reachable;
 *   5. only then n's entry in its parent shrinks to the box of group A;
 *   6. one commit clears B's bits from n and sets next(old version);
 *   7. if the new item belongs to A, it is inserted into n as usual.
 */
pm_errcode
fbr_insert_at(fbr_tree *t, uint64_t *path, int level, const fbr_item *item,
			  uint64_t track, uint64_t *holder, fbr_held *held, pm_error *err)
{
	fbr_node   *n = fbr_node_at(t, path[level]);
	uint64_t	m = pm_load_relaxed(&n->meta);
	fbr_item	all[FBR_CAP + 1];
	int			slot[FBR_CAP + 1];
	bool		in_a[FBR_CAP + 1];
	fbr_item	group_b[FBR_CAP];
	fbr_item	group_a[FBR_CAP + 1];
	int			na = 0,
				nb = 0,
				kept = 0;
	uint64_t	moved_bits = 0;
	bool		track_moves = false;
	uint64_t	c_off,
				parent_holder;
	fbr_node   *ph;
	fbr_box		box_all;
	fbr_item	up;
	fbr_meta   *meta = fbr_meta_block(t);

	if (fbr_count(m) < FBR_CAP)
	{
		place_in_free_slot(t, n, item);
		*holder = path[level];
		return PM_OK;
	}

	for (int s = 0; s < FBR_CAP; s++)
	{
		all[s] = n->e[s];
		slot[s] = s;
	}
	all[FBR_CAP] = *item;
	slot[FBR_CAP] = -1;
	fbr_partition(t->split, all, FBR_CAP + 1, in_a);
	/* the group with more resident entries stays: fewer bytes copied */
	for (int i = 0; i < FBR_CAP; i++)
		kept += in_a[i];
	if (kept < FBR_CAP - kept)
		for (int i = 0; i <= FBR_CAP; i++)
			in_a[i] = !in_a[i];
	for (int i = 0; i <= FBR_CAP; i++)
	{
		if (in_a[i])
			group_a[na++] = all[i];
		else
		{
			group_b[nb++] = all[i];
			if (slot[i] >= 0)
				moved_bits |= UINT64_C(1) << slot[i];
			if (slot[i] >= 0 && all[i].payload == track && track != 0)
				track_moves = true;
		}
	}

	pm_assert(na + nb == FBR_CAP + 1 && na <= FBR_CAP && nb > 0 && nb <= FBR_CAP);
	/* 1 */
	c_off = fbr_new_node(t, fbr_is_leaf(m), group_b, nb, true, err);
	if (c_off == 0)
		return err->code;
	fbr_hold(held, fbr_node_at(t, c_off));
	/* 2 */
	pm_store_relaxed(&n->aux, c_off);
	fbr_commit(t, n, fbr_meta_with(m, 0, fbr_bits(m)));
	/* n at version 0 names C, which nothing reaches yet */
	pm_smo_pause("fbrtree_pm split");
	/* 3-4 */
	box_all = fbr_items_box(all, FBR_CAP + 1);
	up.box = fbr_items_box(group_b, nb);
	up.payload = c_off;
	if (level == 0)
	{
		fbr_item	r[2] = {{box_all, path[0]}, up};

		parent_holder = fbr_new_node(t, false, r, 2, true, err);
		if (parent_holder == 0)
			goto undo;
		fbr_hold(held, fbr_node_at(t, parent_holder));
		pm_store(&meta->root, parent_holder);
		pm_persist(&t->pool->persist, &meta->root, sizeof(meta->root));
		pm_fetch_add(&meta->root_splits, 1);
	}
	else if (fbr_insert_at(t, path, level - 1, &up, path[level], &parent_holder, held, err) != PM_OK)
		goto undo;
	/* 5 */
	ph = fbr_node_at(t, parent_holder);
	{
		int			s = fbr_find_child(ph, path[level]);
		fbr_box		box_a = fbr_items_box(group_a, na);

		fbr_box_store(&ph->e[s].box, &box_a);
		pm_persist(&t->pool->persist, &ph->e[s].box, sizeof(fbr_box));
	}
	/* 6 */
	fbr_commit(t, n, fbr_meta_with(m, fbr_next_version(fbr_version(m)), fbr_bits(m) & ~moved_bits));
	pm_fetch_add(&meta->splits, 1);
	/* 7 */
	if (in_a[FBR_CAP])
		place_in_free_slot(t, n, item);
	*holder = track_moves ? c_off : path[level];
	return PM_OK;

undo:
	/* C never became reachable: n is as before the split (crash state 2) */
	fbr_commit(t, n, m);
	held->n--;
	pm_free_block(&t->pm, c_off, NULL);
	return err->code;
}
