/*
 * fbr_build.c
 *	  STR (sort-tile-recursive) bulk load (README: "Bulk load").
 */
#include "fbr_internal.h"

#include <math.h>
#include <stdlib.h>

static int
cmp_x(const void *a, const void *b)
{
	const fbr_box *x = &((const fbr_item *) a)->box;
	const fbr_box *y = &((const fbr_item *) b)->box;
	double		cx = x->xmin + x->xmax,
				cy = y->xmin + y->xmax;

	return cx < cy ? -1 : cx > cy;
}

static int
cmp_y(const void *a, const void *b)
{
	const fbr_box *x = &((const fbr_item *) a)->box;
	const fbr_box *y = &((const fbr_item *) b)->box;
	double		cx = x->ymin + x->ymax,
				cy = y->ymin + y->ymax;

	return cx < cy ? -1 : cx > cy;
}

/* First item of node i when count items go to nodes nodes as evenly as possible. */
static size_t
node_start(size_t i, size_t count, size_t nodes)
{
	return (size_t) ((unsigned __int128) i * count / nodes);
}

/*
 * One level: sort by x, cut into about sqrt(nodes) vertical slices of
 * whole nodes, sort each slice by y, cut it into nodes; write the nodes
 * and return their entries for the level above in up[].
 */
static pm_errcode
build_level(fbr_tree *t, fbr_item *items, size_t count, size_t nodes, bool leaf,
			fbr_item *up, pm_error *err)
{
	size_t		slices = (size_t) ceil(sqrt((double) nodes));
	size_t		per_slice = (nodes + slices - 1) / slices;

	qsort(items, count, sizeof(fbr_item), cmp_x);
	for (size_t s = 0; s * per_slice < nodes; s++)
	{
		size_t		first = node_start(s * per_slice, count, nodes);
		size_t		last_node = (s + 1) * per_slice < nodes ? (s + 1) * per_slice : nodes;

		qsort(items + first, node_start(last_node, count, nodes) - first, sizeof(fbr_item), cmp_y);
	}
	for (size_t i = 0; i < nodes; i++)
	{
		size_t		a = node_start(i, count, nodes);
		int			len = (int) (node_start(i + 1, count, nodes) - a);
		uint64_t	off = fbr_new_node(t, leaf, items + a, len, false, err);

		if (off == 0)
			return err->code;
		up[i].box = fbr_items_box(items + a, len);
		up[i].payload = off;
	}
	return PM_OK;
}

pm_errcode
fbr_bulk_load(fbr_tree *t, fbr_item *items, size_t n, int fill_pct, pm_error *err)
{
	fbr_meta   *meta = fbr_meta_block(t);
	uint64_t	old_root = meta->root;
	size_t		per = (size_t) (FBR_CAP * fill_pct / 100);
	fbr_item   *level = items;
	size_t		count = n;
	bool		leaf = true;
	pm_errcode	rc = PM_OK;

	if (per < 2)
		per = 2;
	if (per > FBR_CAP)
		per = FBR_CAP;
	if (fbr_count(fbr_node_at(t, old_root)->meta) != 0 || !fbr_is_leaf(fbr_node_at(t, old_root)->meta))
		return pm_error_set(err, PM_ERR_INVALID, 0, "pool file \"%s\": bulk load needs an empty tree",
							t->pool->path);
	if (n == 0)
		return PM_OK;
	for (;;)
	{
		size_t		nodes = (count + per - 1) / per;
		fbr_item   *up = malloc(nodes * sizeof(fbr_item));

		if (up == NULL)
			rc = pm_error_set(err, PM_ERR_NOMEM, 0, "pool file \"%s\": out of memory for a bulk load of %zu entries",
							  t->pool->path, n);
		else
			rc = build_level(t, level, count, nodes, leaf, up, err);
		if (level != items)
			free(level);
		if (rc != PM_OK)
		{
			free(up);
			return rc;
		}
		level = up;
		count = nodes;
		leaf = false;
		if (nodes == 1)
			break;
	}
	pm_store(&meta->root, level[0].payload);
	pm_persist(&t->pool->persist, &meta->root, sizeof(meta->root));
	free(level);
	pm_free_block(&t->pm, old_root, NULL);
	return PM_OK;
}
