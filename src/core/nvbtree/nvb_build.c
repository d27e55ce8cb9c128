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

/* A key a builder holds, with its record's copy (a wide key's next() may reuse its memory). */
typedef struct staged
{
	nvb_key		k;
	uint32_t	child;
	uint64_t	rec[(sizeof(pm_key_rec) + NVB_WIDE_DATA_MAX + 7) / 8];
} staged;

static void
stage(const nvb_tree *t, staged *s, const nvb_key *k, uint32_t child)
{
	s->k = *k;
	s->child = child;
	if (t->wide && pm_rest_is_wide(k->rest))
	{
		pm_key_view v = pm_key_view_of(t->pool, k->rest);
		pm_key_rec *r = (pm_key_rec *) s->rec;

		r->rest = v.rest;
		r->keylen = v.keylen;
		r->len = v.len;
		memcpy(r->data, v.data, v.len);
		s->k.rest = PM_REST_WIDE | PM_REST_LOCAL | (uintptr_t) r;
	}
}

/*
 * One level's nodes, written left to right from the keys pushed in order:
 * a leaf level's entries, or an inner level's children with their low
 * fences (the first child of a node is its leftmost, the others'
 * separators).  A node is closed when the next key would take it past
 * fill_pct percent (a narrow tree's: of its slots; a wide tree's: of its
 * slots and its bytes); the key that did not fit is its high fence and the
 * next node's first.
 */
typedef struct builder
{
	nvb_tree   *t;
	int			level;
	int			fill_pct;
	uint32_t	id;				/* the node being filled */
	bool		first;			/* it is the level's first: low is PM_KEY_MIN */
	bool		open;			/* it has its low (inner: its leftmost child) */
	staged		low;
	uint32_t	leftmost;
	int			n;
	staged	   *items;			/* NVB_CAP_MAX + 1 */
	nvb_key		keys[NVB_CAP_MAX + 1];
	uint32_t	children[NVB_CAP_MAX + 1];
	level_vec	out;			/* the nodes written: id and low fence */
} builder;

static bool
over_target(const builder *b, int count)
{
	const nvb_tree *t = b->t;
	uint64_t	bytes;

	if (!t->wide)
	{
		int			per = b->level == 0 ? NVB_LEAF_CAP * b->fill_pct / 100 :
			(NVB_INNER_CAP + 1) * b->fill_pct / 100 - 1;

		return count > (per < 1 ? 1 : per);
	}
	if (count <= 1)
		return false;
	if (count > NVB_CAP_MAX * b->fill_pct / 100)
		return true;
	bytes = nvb_fence_bytes(t, &b->low.k);
	for (int i = 0; i < count; i++)
		bytes += nvb_entry_bytes(t, b->level, &b->items[i].k);
	return bytes > (uint64_t) nvb_node_room(t) * b->fill_pct / 100;
}

/* Write the node of the first c items, high fence high and sibling sib. */
static pm_errcode
write_node(builder *b, int c, const nvb_key *high, uint32_t sib, pm_error *err)
{
	nvb_key		low = b->first ? PM_KEY_MIN : b->low.k;
	uint64_t	off;
	pm_errcode	rc;

	for (int i = 0; i < c; i++)
	{
		b->keys[i] = b->items[i].k;
		b->children[i] = b->items[i].child;
	}
	rc = nvb_node_new(b->t, b->id, b->level, &low, high, sib, b->level > 0 ? b->leftmost : NVB_NO_ID,
					  b->keys, b->children, c, NULL, false, &off, err);
	if (rc != PM_OK)
		return rc;
	nvb_table_set(b->t, b->id, off);
	if (!vec_push(&b->out, b->id, &((nvb_node *) pm_pool_addr(b->t->pool, off))->low))
		return pm_error_set(err, PM_ERR_NOMEM, 0, "out of memory for an NVB-tree build");
	return PM_OK;
}

/* Whether the first c items fit one node between low and high. */
static bool
fits(builder *b, const nvb_key *low, const nvb_key *high, int c)
{
	for (int i = 0; i < c; i++)
		b->keys[i] = b->items[i].k;
	return nvb_node_cap_for(b->t, b->level, low, high, b->keys, c, NULL) > 0;
}

/*
 * Close the node before item c, its high fence: with fewer items if they
 * do not fit with that fence (a wide one), the first left out then being
 * the fence.  The fence starts the next node: a leaf's first entry, an
 * inner node's leftmost child.
 */
static pm_errcode
close_node(builder *b, int c, pm_error *err)
{
	const nvb_tree *t = b->t;
	nvb_key		low = b->first ? PM_KEY_MIN : b->low.k;
	int			inner = b->level > 0;
	uint32_t	sib;
	int			carried;
	pm_errcode	rc;

	while (c > 1 - inner && !fits(b, &low, &b->items[c].k, c))
		c--;
	if ((rc = nvb_id_new(b->t, &sib, err)) != PM_OK ||
		(rc = write_node(b, c, &b->items[c].k, sib, err)) != PM_OK)
		return rc;
	stage(t, &b->low, &b->items[c].k, NVB_NO_ID);
	b->leftmost = b->items[c].child;
	carried = c + inner;
	for (int i = carried; i < b->n; i++)
		stage(t, &b->items[i - carried], &b->items[i].k, b->items[i].child);
	b->n -= carried;
	b->id = sib;
	b->first = false;
	return PM_OK;
}

/* Add the next key (with its child, at an inner level). */
static pm_errcode
push(builder *b, const nvb_key *k, uint32_t child, pm_error *err)
{
	if (b->level > 0 && !b->open)
	{
		/* an inner level's first child: the first node's leftmost, below PM_KEY_MIN's */
		b->leftmost = child;
		b->open = true;
		return PM_OK;
	}
	stage(b->t, &b->items[b->n++], k, child);
	if (over_target(b, b->n))
		return close_node(b, b->n - 1, err);
	return PM_OK;
}

/* Write the level's last node. */
static pm_errcode
finish(builder *b, pm_error *err)
{
	return write_node(b, b->n, &PM_KEY_MAX, NVB_NO_ID, err);
}

static pm_errcode
builder_start(builder *b, nvb_tree *t, int level, int fill_pct, uint32_t id, pm_error *err)
{
	memset(b, 0, sizeof(*b));
	b->t = t;
	b->level = level;
	b->fill_pct = fill_pct;
	b->id = id;
	b->first = true;
	b->items = malloc(sizeof(staged) * (NVB_CAP_MAX + 1));
	if (b->items == NULL)
		return pm_error_set(err, PM_ERR_NOMEM, 0, "out of memory for an NVB-tree build");
	return PM_OK;
}

static void
builder_end(builder *b)
{
	free(b->items);
	b->items = NULL;
	vec_free(&b->out);
}

pm_errcode
nvb_bulk_load(pm_pool *pool, int fill_pct, bool (*next) (void *ctx, nvb_key *k), void *ctx,
			  pm_error *err)
{
	nvb_tree	t;
	nvb_meta   *m;
	builder		b;
	nvb_key		k;
	uint64_t	old_off;
	uint32_t	id;
	pm_errcode	rc;

	nvb_attach(&t, pool, NULL, NULL, 0, 0, 0);
	if ((rc = nvb_meta_check(pool, &m, err)) != PM_OK)
		return rc;
	/* the formatted tree's empty root leaf gives its id to the first leaf */
	id = (uint32_t) m->root;
	if (!nvb_node_ok(&t, nvb_node_get(&t, id, &old_off), id, 0))
		return nvb_corrupt(&t, err, "a freshly formatted tree's root does not validate", id);
	pm_free_block(&t.pm, old_off, err);
	if ((rc = builder_start(&b, &t, 0, fill_pct, id, err)) != PM_OK)
		return rc;
	while (rc == PM_OK && next(ctx, &k))
	{
		if ((rc = nvb_entry_ok(&t, &k, err)) == PM_OK)
			rc = push(&b, &k, NVB_NO_ID, err);
	}
	if (rc == PM_OK)
		rc = finish(&b, err);
	while (rc == PM_OK && b.out.n > 1)
	{
		builder		up;

		if ((rc = nvb_id_new(&t, &id, err)) != PM_OK ||
			(rc = builder_start(&up, &t, b.level + 1, fill_pct, id, err)) != PM_OK)
			break;
		for (int i = 0; rc == PM_OK && i < b.out.n; i++)
			rc = push(&up, &b.out.low[i], b.out.id[i], err);
		if (rc == PM_OK)
			rc = finish(&up, err);
		builder_end(&b);
		b = up;
	}
	if (rc == PM_OK)
	{
		pm_store(&m->root, (uint64_t) b.out.id[0]);
		nvb_persist(&t, &m->root, sizeof(m->root));
	}
	builder_end(&b);
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
	int			slots[NVB_CAP_MAX];
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
			cnt = nvb_node_sorted(t, n, slots);
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
				if (nvb_cmp(t, &n->low, &expect_low) != 0)
				{
					snprintf(problem, sizeof(problem),
							 "node %u: its low fence is not its left sibling's high", id);
					return problem;
				}
				if (cnt > 0 && (nvb_cmp(t, &keys[slots[0]], &n->low) < 0 ||
								nvb_cmp(t, &keys[slots[cnt - 1]], &n->high) >= 0))
				{
					snprintf(problem, sizeof(problem), "node %u: a key outside its fences", id);
					return problem;
				}
				for (int i = -1; level > 0 && i < cnt; i++)
				{
					uint32_t	c = i < 0 ? n->leftmost : nvb_children(n)[slots[i]];
					nvb_node   *cn = nvb_node_get(t, c, NULL);
					const nvb_key *sep = i < 0 ? &n->low : &keys[slots[i]];

					if (!nvb_node_ok(t, cn, c, level - 1) || nvb_cmp(t, &cn->low, sep) != 0)
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
		st->merges = pm_load(&l->merges);
	}
}
