/*
 * nvb_build.c
 *	  The bulk load (sorted entries into balanced leaves, inner levels over
 *	  them), the verifier and the statistics.
 */
#include "nvb_internal.h"

#include <stdio.h>
#include <stdlib.h>

/* One level's nodes as the level above sees them: id and low fence, in order. */
typedef struct level_vec
{
	int			n;
	int			cap;
	uint32_t   *id;
	nvb_key    *low;
} level_vec;

static bool
vec_push(level_vec *v, uint32_t id, const nvb_key *low)
{
	if (v->n == v->cap)
	{
		int			cap = v->cap > 0 ? v->cap * 2 : 256;
		uint32_t   *ids = realloc(v->id, sizeof(uint32_t) * cap);
		nvb_key    *lows;

		if (ids == NULL)
			return false;
		v->id = ids;
		lows = realloc(v->low, sizeof(nvb_key) * cap);
		if (lows == NULL)
			return false;
		v->low = lows;
		v->cap = cap;
	}
	v->id[v->n] = id;
	v->low[v->n] = *low;
	v->n++;
	return true;
}

static void
vec_free(level_vec *v)
{
	free(v->id);
	free(v->low);
	memset(v, 0, sizeof(*v));
}

/* Write node id: count keys (and children) filled, persisted, mapped. */
static pm_errcode
write_node(nvb_tree *t, uint32_t id, int level, const nvb_key *low, const nvb_key *high,
		   uint32_t sibling, uint32_t leftmost, const nvb_key *keys, const uint32_t *children,
		   int count, pm_error *err)
{
	nvb_node   *n;
	uint64_t	off;
	pm_errcode	rc = nvb_node_alloc(t, &n, &off, false, err);

	if (rc != PM_OK)
		return rc;
	nvb_node_init(n, id, level, low, high, sibling, leftmost);
	nvb_node_fill(n, keys, children, count);
	nvb_node_persist(t, n);
	nvb_table_set(t, id, off);
	return PM_OK;
}

/*
 * The level above v: nodes of up to per children each, the first child
 * their leftmost, the others' low fences their separators.
 */
static pm_errcode
build_level(nvb_tree *t, int level, const level_vec *v, int per, level_vec *up, pm_error *err)
{
	nvb_key		keys[NVB_INNER_CAP];
	uint32_t	children[NVB_INNER_CAP];
	uint32_t	id,
				next_id = NVB_NO_ID;
	pm_errcode	rc = nvb_id_new(t, &id, err);

	for (int first = 0; rc == PM_OK && first < v->n; first += per)
	{
		int			last = first + per < v->n ? first + per : v->n;
		nvb_key		low = first == 0 ? PM_KEY_MIN : v->low[first];
		nvb_key		high = last < v->n ? v->low[last] : PM_KEY_MAX;

		if (last < v->n && (rc = nvb_id_new(t, &next_id, err)) != PM_OK)
			break;
		for (int c = first + 1; c < last; c++)
		{
			keys[c - first - 1] = v->low[c];
			children[c - first - 1] = v->id[c];
		}
		rc = write_node(t, id, level, &low, &high, last < v->n ? next_id : NVB_NO_ID,
						v->id[first], keys, children, last - first - 1, err);
		if (rc == PM_OK && !vec_push(up, id, &low))
			rc = pm_error_set(err, PM_ERR_NOMEM, 0, "out of memory for an NVB-tree build");
		id = next_id;
	}
	return rc;
}

pm_errcode
nvb_bulk_load(pm_pool *pool, int fill_pct, bool (*next) (void *ctx, nvb_key *k), void *ctx,
			  pm_error *err)
{
	nvb_tree	t;
	nvb_meta   *m;
	nvb_key    *buf = malloc(sizeof(nvb_key) * (NVB_LEAF_CAP + 1));
	level_vec	v = {0},
				up = {0};
	int			per_leaf = NVB_LEAF_CAP * fill_pct / 100;
	int			per_inner = (NVB_INNER_CAP + 1) * fill_pct / 100;
	int			n = 0;
	uint32_t	id;
	uint64_t	old_off;
	nvb_key		low = PM_KEY_MIN;
	int			level = 0;
	pm_errcode	rc;

	if (buf == NULL)
		return pm_error_set(err, PM_ERR_NOMEM, 0, "out of memory for an NVB-tree build");
	memset(&t, 0, sizeof(t));
	t.pool = pool;
	pm_alloc_attach_pool(&t.pm, pool);
	if ((rc = nvb_meta_check(pool, &m, err)) != PM_OK)
		goto done;
	/* the formatted tree's empty root leaf gives its id to the first leaf */
	id = (uint32_t) m->root;
	if (!nvb_node_ok(&t, nvb_node_get(&t, id, &old_off), id, 0))
	{
		rc = nvb_corrupt(&t, err, "a freshly formatted tree's root does not validate", id);
		goto done;
	}
	pm_free_block(&t.pm, old_off, err);
	if (per_leaf < 1)
		per_leaf = 1;
	if (per_inner < 2)
		per_inner = 2;

	for (;;)
	{
		bool		more = n < per_leaf ? next(ctx, &buf[n]) : true;
		uint32_t	sib = NVB_NO_ID;

		if (n < per_leaf && more)
		{
			n++;
			continue;
		}
		/* a full leaf (or the last): its sibling, if a key is left over, gets a new id */
		if (n == per_leaf && (more = next(ctx, &buf[n])) &&
			(rc = nvb_id_new(&t, &sib, err)) != PM_OK)
			goto done;
		rc = write_node(&t, id, 0, &low, more ? &buf[n] : &PM_KEY_MAX, sib, NVB_NO_ID, buf,
						NULL, n, err);
		if (rc != PM_OK)
			goto done;
		if (!vec_push(&v, id, &low))
		{
			rc = pm_error_set(err, PM_ERR_NOMEM, 0, "out of memory for an NVB-tree build");
			goto done;
		}
		if (!more)
			break;
		low = buf[n];
		buf[0] = buf[n];
		n = 1;
		id = sib;
	}
	while (v.n > 1)
	{
		level++;
		if ((rc = build_level(&t, level, &v, per_inner, &up, err)) != PM_OK)
			goto done;
		vec_free(&v);
		v = up;
		memset(&up, 0, sizeof(up));
	}
	pm_store(&m->root, (uint64_t) v.id[0]);
	nvb_persist(&t, &m->root, sizeof(m->root));
done:
	vec_free(&v);
	vec_free(&up);
	free(buf);
	return rc;
}

/* ---- verification and statistics ---- */

static char problem[256];

typedef struct walk_totals
{
	uint64_t	leaves;
	uint64_t	inner;
	uint64_t	entries;
	int			height;
} walk_totals;

/*
 * Walk every level from the root's down its leftmost children, each level
 * along its siblings; with check, verify what nvb_check promises.
 */
static const char *
walk(nvb_tree *t, bool check, walk_totals *tot)
{
	nvb_meta   *m = nvb_meta_of(t);
	uint32_t	first = (uint32_t) pm_load(&m->root);
	nvb_node   *root = nvb_node_get(t, first, NULL);
	int			slots[NVB_LEAF_CAP];
	uint64_t	limit = pm_load(&m->next_id);

	memset(tot, 0, sizeof(*tot));
	if (!nvb_node_ok(t, root, first, -1))
		return "the root does not validate";
	tot->height = root->level + 1;
	for (int level = root->level; level >= 0; level--)
	{
		uint32_t	id = first;
		nvb_key		expect_low = PM_KEY_MIN;
		uint64_t	nodes = 0;

		for (;;)
		{
			nvb_node   *n = nvb_node_get(t, id, NULL);
			nvb_key    *keys;
			int			cnt;

			if (!nvb_node_ok(t, n, id, level))
			{
				snprintf(problem, sizeof(problem), "node %u at level %d does not validate",
						 id, level);
				return problem;
			}
			if (++nodes > limit)
				return "a level's siblings do not end";
			keys = nvb_keys(n);
			cnt = nvb_node_sorted(n, slots);
			if (cnt < 0)
			{
				snprintf(problem, sizeof(problem), "node %u: its search tree is not in order", id);
				return problem;
			}
			if (level == 0)
			{
				tot->leaves++;
				tot->entries += cnt;
			}
			else
				tot->inner++;
			if (check)
			{
				if (nvb_cmp(&n->low, &expect_low) != 0)
				{
					snprintf(problem, sizeof(problem),
							 "node %u: its low fence is not its left sibling's high", id);
					return problem;
				}
				if (cnt > 0 && (nvb_cmp(&keys[slots[0]], &n->low) < 0 ||
								nvb_cmp(&keys[slots[cnt - 1]], &n->high) >= 0))
				{
					snprintf(problem, sizeof(problem), "node %u: a key outside its fences", id);
					return problem;
				}
				for (int i = -1; level > 0 && i < cnt; i++)
				{
					uint32_t	c = i < 0 ? n->leftmost : nvb_children(n)[slots[i]];
					nvb_node   *cn = nvb_node_get(t, c, NULL);
					const nvb_key *sep = i < 0 ? &n->low : &keys[slots[i]];

					if (!nvb_node_ok(t, cn, c, level - 1) || nvb_cmp(&cn->low, sep) != 0)
					{
						snprintf(problem, sizeof(problem),
								 "node %u: child %u does not start at its separator", id, c);
						return problem;
					}
				}
			}
			expect_low = n->high;
			if (n->sibling == NVB_NO_ID)
			{
				if (check && !pm_key_is_max(&n->high))
				{
					snprintf(problem, sizeof(problem),
							 "node %u: the last of its level ends below the end", id);
					return problem;
				}
				break;
			}
			id = n->sibling;
		}
		if (level > 0)
		{
			nvb_node   *n = nvb_node_get(t, first, NULL);

			first = n->leftmost;
		}
	}
	return NULL;
}

const char *
nvb_check(nvb_tree *t, uint64_t *entries)
{
	nvb_meta   *m;
	pm_error	err;
	walk_totals tot;
	const char *p;

	*entries = 0;
	if (nvb_meta_check(t->pool, &m, &err) != PM_OK)
	{
		snprintf(problem, sizeof(problem), "%s", err.msg);
		return problem;
	}
	p = walk(t, true, &tot);
	*entries = tot.entries;
	return p;
}

void
nvb_get_stats(nvb_tree *t, nvb_stats *st)
{
	walk_totals tot;
	pm_alloc_stats as;
	nvb_meta   *m;
	pm_error	err;

	memset(st, 0, sizeof(*st));
	if (nvb_meta_check(t->pool, &m, &err) != PM_OK)
		return;
	(void) walk(t, false, &tot);
	st->leaves = tot.leaves;
	st->inner_nodes = tot.inner;
	st->height = tot.height;
	st->entries = tot.entries;
	st->node_ids = pm_load(&m->next_id) - 1;
	pm_alloc_get_stats(&t->pm, &as);
	st->pm_bytes = as.bytes;
	st->dram_bytes = nvb_dram_bytes(t);
	if (t->dram_root != 0)
	{
		nvb_locks  *l = nvb_locks_of(t);

		st->splits = pm_load(&l->splits);
		st->compactions = pm_load(&l->compactions);
	}
}
