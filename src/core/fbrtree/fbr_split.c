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

		ord[i].key1 = by_upper ? b->max[axis] : b->min[axis];
		ord[i].key2 = by_upper ? b->min[axis] : b->max[axis];
		ord[i].idx = i;
	}
	qsort(ord, n, sizeof(sort_ref), sort_ref_cmp);
}

/* Prefix and suffix boxes of an order: pre[k] covers [0, k], suf[k] covers [k, n). */
static inline __attribute__((always_inline)) void
prefix_boxes(const fbr_item *items, const sort_ref *ord, int n, int dims, fbr_box *pre,
			 fbr_box *suf)
{
	fbr_box_copy(&pre[0], &items[ord[0].idx].box, dims);
	for (int i = 1; i < n; i++)
	{
		fbr_box_copy(&pre[i], &pre[i - 1], dims);
		fbr_box_union(&pre[i], &items[ord[i].idx].box, dims);
	}
	fbr_box_copy(&suf[n - 1], &items[ord[n - 1].idx].box, dims);
	for (int i = n - 2; i >= 0; i--)
	{
		fbr_box_copy(&suf[i], &suf[i + 1], dims);
		fbr_box_union(&suf[i], &items[ord[i].idx].box, dims);
	}
}

/* The length of the overlap of a and b on axis d (<= 0 if they only touch or are apart). */
static inline double
overlap_length(const fbr_box *a, const fbr_box *b, int d)
{
	return (a->max[d] < b->max[d] ? a->max[d] : b->max[d]) -
		(a->min[d] > b->min[d] ? a->min[d] : b->min[d]);
}

/* The volume a and b share (0 if they only touch). */
static inline __attribute__((always_inline)) double
overlap_volume(const fbr_box *a, const fbr_box *b, int dims)
{
	double		w = overlap_length(a, b, 0);
	double		h = overlap_length(a, b, 1);
	double		v;

	if (!(w > 0 && h > 0))
		return 0;
	v = w * h;
	for (int d = 2; d < dims; d++)
	{
		double		l = overlap_length(a, b, d);

		if (!(l > 0))
			return 0;
		v *= l;
	}
	return v;
}

/*
 * The axis (of dims) with the least sum of margins over all distributions;
 * on it the distribution with the least overlap, then the least total
 * volume, then the least total margin (which still separates degenerate
 * boxes).
 */
static inline __attribute__((always_inline)) void
split_rstar(const fbr_tree *t, const fbr_item *items, int n, bool *in_a, int dims)
{
	int			min_group = fbr_min_group(t);
	sort_ref	ord[FBR_MAX_DIMS][2][FBR_CAP + 1];
	int			axis = 0;
	fbr_box		pre[FBR_CAP + 1];
	fbr_box		suf[FBR_CAP + 1];
	double		best_axis_margin = DBL_MAX;
	double		best_overlap = DBL_MAX,
				best_area = DBL_MAX,
				best_margin = DBL_MAX;
	int			best_sort = 0,
				best_k = min_group;

	/* ties go to the lower axis */
	for (int a = 0; a < dims; a++)
	{
		double		margin = 0;

		for (int u = 0; u < 2; u++)
		{
			axis_order(items, n, a, u, ord[a][u]);
			prefix_boxes(items, ord[a][u], n, dims, pre, suf);
			for (int k = min_group; k <= n - min_group; k++)
				margin += fbr_box_margin(&pre[k - 1], dims) + fbr_box_margin(&suf[k], dims);
		}
		if (margin < best_axis_margin)
		{
			best_axis_margin = margin;
			axis = a;
		}
	}
	for (int u = 0; u < 2; u++)
	{
		prefix_boxes(items, ord[axis][u], n, dims, pre, suf);
		for (int k = min_group; k <= n - min_group; k++)
		{
			double		ov = overlap_volume(&pre[k - 1], &suf[k], dims);
			double		ar = fbr_box_volume(&pre[k - 1], dims) + fbr_box_volume(&suf[k], dims);
			double		mg = fbr_box_margin(&pre[k - 1], dims) + fbr_box_margin(&suf[k], dims);

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

static inline __attribute__((always_inline)) double
union_volume(const fbr_box *a, const fbr_box *b, int dims)
{
	fbr_box		u;

	fbr_box_copy(&u, a, dims);
	fbr_box_union(&u, b, dims);
	return fbr_box_volume(&u, dims);
}

static inline __attribute__((always_inline)) void
split_quadratic(const fbr_tree *t, const fbr_item *items, int n, bool *in_a, int dims)
{
	int			min_group = fbr_min_group(t);
	bool		done[FBR_CAP + 1] = {false};
	int			seed_a = 0,
				seed_b = 1,
				na = 1,
				nb = 1;
	double		worst = -DBL_MAX;
	fbr_box		box_a,
				box_b;

	/* seeds: the pair that would waste the most volume together */
	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n; j++)
		{
			double		d = union_volume(&items[i].box, &items[j].box, dims) -
				fbr_box_volume(&items[i].box, dims) - fbr_box_volume(&items[j].box, dims);

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
	fbr_box_copy(&box_a, &items[seed_a].box, dims);
	fbr_box_copy(&box_b, &items[seed_b].box, dims);
	for (int left = n - 2; left > 0; left--)
	{
		int			pick = -1;
		double		pick_diff = -1,
					pick_da = 0,
					pick_db = 0;
		bool		to_a;

		if (na + left <= min_group || nb + left <= min_group)
		{
			/* the short group takes everything left */
			bool		rest_a = na + left <= min_group;

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
			da = union_volume(&box_a, &items[i].box, dims) - fbr_box_volume(&box_a, dims);
			db = union_volume(&box_b, &items[i].box, dims) - fbr_box_volume(&box_b, dims);
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
		else if (fbr_box_volume(&box_a, dims) != fbr_box_volume(&box_b, dims))
			to_a = fbr_box_volume(&box_a, dims) < fbr_box_volume(&box_b, dims);
		else
			to_a = na <= nb;
		done[pick] = true;
		in_a[pick] = to_a;
		if (to_a)
		{
			fbr_box_union(&box_a, &items[pick].box, dims);
			na++;
		}
		else
		{
			fbr_box_union(&box_b, &items[pick].box, dims);
			nb++;
		}
	}
}

static inline __attribute__((always_inline)) void
partition_dims(const fbr_tree *t, const fbr_item *items, int n, bool *in_a, int dims)
{
	if (t->split == FBR_SPLIT_QUADRATIC)
		split_quadratic(t, items, n, in_a, dims);
	else
		split_rstar(t, items, n, in_a, dims);
}

/* Inlined with dims a constant, once for each dims, as fbr_read_node. */
static void
fbr_partition(const fbr_tree *t, const fbr_item *items, int n, bool *in_a)
{
	switch (t->dims)
	{
		case 2:
			partition_dims(t, items, n, in_a, 2);
			break;
		case 3:
			partition_dims(t, items, n, in_a, 3);
			break;
		default:
			partition_dims(t, items, n, in_a, 4);
			break;
	}
}

/* ---------- insert into a locked node, splitting in place ---------- */

static void
place_in_free_slot(fbr_tree *t, fbr_node *n, const fbr_item *item)
{
	uint64_t	m = pm_load_relaxed(&n->meta);
	int			s = __builtin_ctzll(~fbr_bits(m) & fbr_slots_mask(t));

	fbr_slot_store(n, s, t->dims, item);
	pm_persist(&t->pool->persist, fbr_slot(n, s, t->dims), fbr_slot_size(t->dims));
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
	int			cap = t->cap;
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

	if (fbr_count(m) < cap)
	{
		place_in_free_slot(t, n, item);
		*holder = path[level];
		return PM_OK;
	}

	for (int s = 0; s < cap; s++)
	{
		fbr_slot_load(n, s, t->dims, &all[s]);
		slot[s] = s;
	}
	fbr_item_copy(&all[cap], item, t->dims);
	slot[cap] = -1;
	fbr_partition(t, all, cap + 1, in_a);
	/* the group with more resident entries stays: fewer bytes copied */
	for (int i = 0; i < cap; i++)
		kept += in_a[i];
	if (kept < cap - kept)
		for (int i = 0; i <= cap; i++)
			in_a[i] = !in_a[i];
	for (int i = 0; i <= cap; i++)
	{
		if (in_a[i])
			fbr_item_copy(&group_a[na++], &all[i], t->dims);
		else
		{
			fbr_item_copy(&group_b[nb++], &all[i], t->dims);
			if (slot[i] >= 0)
				moved_bits |= UINT64_C(1) << slot[i];
			if (slot[i] >= 0 && all[i].payload == track && track != 0)
				track_moves = true;
		}
	}

	pm_assert(na + nb == cap + 1 && na <= cap && nb > 0 && nb <= cap);
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
	box_all = fbr_items_box(t, all, cap + 1);
	up.box = fbr_items_box(t, group_b, nb);
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
		int			s = fbr_find_child(t, ph, path[level]);
		fbr_box		box_a = fbr_items_box(t, group_a, na);

		fbr_slot_box_store(ph, s, t->dims, &box_a);
		pm_persist(&t->pool->persist, fbr_slot(ph, s, t->dims), fbr_box_size(t->dims));
	}
	/* 6 */
	fbr_commit(t, n, fbr_meta_with(m, fbr_next_version(fbr_version(m)), fbr_bits(m) & ~moved_bits));
	pm_fetch_add(&meta->splits, 1);
	/* 7 */
	if (in_a[cap])
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
