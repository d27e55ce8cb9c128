/*
 * nvb_smo.c
 *	  Structure modifications (README.md: "Splits and rewrites", and
 *	  "Concurrency" for the parent's separator): a full node rewritten
 *	  without its garbage or split in two, each a copy on write committed by
 *	  one mapping-table store; the separator a split owes its parent, added
 *	  by the splitter or by any writer that finds it missing; the root's
 *	  growth; the rewrite or merge VACUUM asks for.
 */
#include "nvb_internal.h"

#include <stdlib.h>

/* a full node at most this many live slots in 4 is rewritten, not split */
#define NVB_COMPACT_QUARTERS	3
/* the rightmost node, split by an append past its last key, keeps this percentage */
#define NVB_APPEND_SPLIT_PCT	90

/*
 * A block for a node.  Out of space, this process's retired blocks are
 * freed first if no reader holds them; a delete (spare_ok) may then take
 * the spare block, so that VACUUM can rewrite leaves when the pool's
 * filesystem is full (the blocks its rewrites replace become the room for
 * the next ones).
 */
pm_errcode
nvb_node_alloc(nvb_tree *t, nvb_node **n, uint64_t *off, bool spare_ok, pm_error *err)
{
	*n = NULL;
	*off = pm_alloc_block(&t->pm, t->node_size, err);
	if (*off == 0 && pm_errcode_is_out_of_space(err->code) && t->epoch != NULL &&
		pm_epoch_reclaim(t->epoch) > 0)
		*off = pm_alloc_block(&t->pm, t->node_size, err);
	if (*off == 0 && pm_errcode_is_out_of_space(err->code) && spare_ok)
	{
		nvb_meta   *m = nvb_meta_of(t);
		uint64_t	spare = pm_load(&m->spare);

		if (spare != 0 && pm_cas(&m->spare, &spare, 0))
		{
			nvb_persist(t, &m->spare, sizeof(m->spare));
			*off = spare;
		}
	}
	if (*off == 0)
		return err->code;
	*n = pm_pool_addr(t->pool, *off);
	return PM_OK;
}

void
nvb_keep_spare(nvb_tree *t)
{
	nvb_meta   *m = nvb_meta_of(t);
	pm_error	err;
	uint64_t	off;
	uint64_t	none = 0;

	if (pm_load(&m->spare) != 0)
		return;
	if (t->epoch != NULL)
		(void) pm_epoch_reclaim(t->epoch);
	off = pm_alloc_block(&t->pm, t->node_size, &err);
	if (off == 0)
		return;
	if (pm_cas(&m->spare, &none, off))
		nvb_persist(t, &m->spare, sizeof(m->spare));
	else
		pm_free_block(&t->pm, off, &err);
}

/*
 * A new node written into a new block and persisted (no table word names
 * it yet), with room for count keys and incoming (NULL: none).  Keys that
 * do not fit are PM_ERR_LIMIT (callers choose splits whose halves fit).
 */
pm_errcode
nvb_node_new(nvb_tree *t, uint32_t id, int level, const nvb_key *low, const nvb_key *high,
			 uint32_t sibling, uint32_t leftmost, const nvb_key *keys, const uint32_t *children,
			 int count, const nvb_key *incoming, bool spare_ok, uint64_t *off, pm_error *err)
{
	int			cap = nvb_node_cap_for(t, level, low, high, keys, count, incoming);
	nvb_node   *n;
	pm_errcode	rc;

	if (cap == 0)
		return pm_error_set(err, PM_ERR_LIMIT, 0,
							"pool file \"%s\": NVB-tree node %u: %d entries do not fit a node",
							t->pool->path, id, count + (incoming != NULL));
	if ((rc = nvb_node_alloc(t, &n, off, spare_ok, err)) != PM_OK)
		return rc;
	nvb_node_write(t, n, id, level, cap, low, high, sibling, leftmost, keys, children, count);
	nvb_node_persist(t, n);
	return PM_OK;
}

/* A block no table word names any more: freed once no reader can hold it. */
void
nvb_node_retire(nvb_tree *t, uint64_t off)
{
	pm_error	err;

	if (t->epoch != NULL)
		pm_epoch_retire(t->epoch, t->space_pm, t->tag_pm, off);
	else
		pm_free_block(&t->pm, off, &err);
}

static void
count_smo(nvb_tree *t, uint64_t *counter)
{
	if (t->dram_root != 0)
		pm_fetch_add(counter, 1);
}

/* A node's live keys and children in order (read from the node, which the caller holds). */
typedef struct node_run
{
	int			n;
	nvb_key		keys[NVB_CAP_MAX];
	uint32_t	children[NVB_CAP_MAX];
} node_run;

static bool
run_of(const nvb_tree *t, nvb_node *n, node_run *run)
{
	int			slots[NVB_CAP_MAX];

	run->n = nvb_node_sorted(t, n, slots);
	if (run->n < 0)
		return false;
	for (int i = 0; i < run->n; i++)
	{
		run->keys[i] = nvb_keys(n)[slots[i]];
		run->children[i] = n->level > 0 ? nvb_children(n)[slots[i]] : 0;
	}
	return true;
}

/* Bytes run[from, to) takes in a node of level. */
static uint64_t
run_bytes(const nvb_tree *t, int level, const node_run *run, int from, int to)
{
	uint64_t	bytes = 0;

	for (int i = from; i < to; i++)
		bytes += nvb_entry_bytes(t, level, &run->keys[i]);
	return bytes;
}

/*
 * n's replacement with the same id and range, its live slots as a balanced
 * tree and room for incoming; committed.
 */
static pm_errcode
compact(nvb_tree *t, uint32_t id, nvb_node *n, uint64_t off, const node_run *run,
		const nvb_key *incoming, bool spare_ok, pm_error *err)
{
	uint64_t	c_off;
	pm_errcode	rc = nvb_node_new(t, id, n->level, &n->low, &n->high, n->sibling, n->leftmost,
								  run->keys, run->children, run->n, incoming, spare_ok, &c_off,
								  err);

	if (rc != PM_OK)
		return rc;
	nvb_table_set(t, id, c_off);
	nvb_node_retire(t, off);
	count_smo(t, &nvb_locks_of(t)->compactions);
	return PM_OK;
}

/*
 * Whether a full node is rewritten rather than split: it holds one entry,
 * or it is at most three quarters live (in a wide tree by slots and by
 * bytes), or, for a delete, it has garbage; and its live entries with
 * incoming fit one node.
 */
static bool
rewrite_suffices(const nvb_tree *t, nvb_node *n, const node_run *run, const nvb_key *incoming,
				 bool for_delete)
{
	bool		sparse;

	if (t->wide)
		sparse = run->n * 4 <= NVB_CAP_MAX * NVB_COMPACT_QUARTERS &&
			(run_bytes(t, n->level, run, 0, run->n) + nvb_fence_bytes(t, &n->low) +
			 nvb_fence_bytes(t, &n->high)) * 4 <= (uint64_t) nvb_node_room(t) * NVB_COMPACT_QUARTERS;
	else
		sparse = run->n * 4 <= nvb_cap(n) * NVB_COMPACT_QUARTERS;
	if (!(run->n < 2 || sparse || (for_delete && run->n < nvb_node_free_slot(n))))
		return false;
	return nvb_node_cap_for(t, n->level, &n->low, &n->high, run->keys, run->n, incoming) > 0;
}

/*
 * Where a full node splits: the entry that leads the right half (an inner
 * node's moves up instead).  Half the entries (a wide tree's: half the
 * bytes), or, for the rightmost node split by a key past all of its own, 90%
 * of them, so that ascending inserts leave full nodes; -1 when no split
 * leaves halves that fit a node with incoming in its half.
 */
static int
split_point(const nvb_tree *t, nvb_node *n, const node_run *run, const nvb_key *incoming,
			nvb_key *sep)
{
	bool		append = pm_key_is_max(&n->high) &&
		nvb_cmp(t, incoming, &run->keys[run->n - 1]) > 0;
	int			inner = n->level > 0;

	for (int attempt = append ? 0 : 1; attempt < 2; attempt++)
	{
		int			pct = attempt == 0 ? NVB_APPEND_SPLIT_PCT : 50;
		int			m;

		if (t->wide)
		{
			uint64_t	goal = run_bytes(t, n->level, run, 0, run->n) * pct / 100;
			uint64_t	sum = 0;

			for (m = 0; m < run->n - 1 && sum < goal; m++)
				sum += nvb_entry_bytes(t, n->level, &run->keys[m]);
		}
		else
			m = run->n * pct / 100;
		if (m < 1)
			m = 1;
		if (m > run->n - 1)
			m = run->n - 1;

		/*
		 * A leaf's separator without the record of the entry that leads the
		 * right half, where the 8-byte keys either side differ, as B-trees
		 * truncate suffixes: (key, 1) sorts at or below every entry of the
		 * key (an entry's rest is at least 1, and a narrow rest's empty
		 * bytes sort first), and its rest is not 0, a free slot's.
		 */
		*sep = run->keys[m];
		if (!inner && t->wide && pm_rest_is_wide(sep->rest) && run->keys[m - 1].key != sep->key)
			sep->rest = 1;
		{
			bool		left = nvb_cmp(t, incoming, sep) < 0;
			int			r_from = m + inner;

			if (nvb_node_cap_for(t, n->level, &n->low, sep, run->keys, m,
								 left ? incoming : NULL) > 0 &&
				nvb_node_cap_for(t, n->level, sep, &n->high, run->keys + r_from, run->n - r_from,
								 left ? NULL : incoming) > 0)
				return m;
		}
	}
	return -1;
}

/*
 * Make room in the full node id (n at off; the caller holds its lock) for
 * incoming: rewrite it without garbage if it is mostly garbage (for a
 * delete, if it has any: a delete may use the spare block), else split
 * it (Alg. 3 without its parent step): the right half as a new node with a
 * new id, the left half as id's new node whose sibling is the right, both
 * persisted, the right half mapped, then id remapped: the commit, after
 * which the two are one virtual node until the parent gains *sep -> *right,
 * which the caller adds after releasing the lock (nvb_add_parent).  *sep is
 * the right node's low fence, which stays readable while the caller's
 * epoch section lasts.
 */
pm_errcode
nvb_make_room(nvb_tree *t, uint32_t id, nvb_node *n, uint64_t off, const nvb_key *incoming,
			  bool for_delete, bool *split, nvb_key *sep, uint32_t *right, pm_error *err)
{
	node_run   *run = malloc(sizeof(node_run));
	nvb_key		cut;
	uint64_t	l_off,
				r_off;
	uint32_t	r_id;
	int			m,
				r_from;
	pm_errcode	rc;

	*split = false;
	if (run == NULL)
		return pm_error_set(err, PM_ERR_NOMEM, 0, "out of memory for an NVB-tree split");
	if (!run_of(t, n, run))
	{
		free(run);
		return nvb_corrupt(t, err, "its search tree does not validate", id);
	}
	if (rewrite_suffices(t, n, run, incoming, for_delete))
	{
		rc = compact(t, id, n, off, run, incoming, for_delete, err);
		free(run);
		return rc;
	}
	if ((m = split_point(t, n, run, incoming, &cut)) < 0)
	{
		free(run);
		return pm_error_set(err, PM_ERR_LIMIT, 0,
							"pool file \"%s\": NVB-tree node %u: no split leaves halves that fit",
							t->pool->path, id);
	}
	/* an inner node's middle separator moves up; its child leads the right half */
	r_from = n->level > 0 ? m + 1 : m;
	if ((rc = nvb_id_new(t, &r_id, err)) != PM_OK ||
		(rc = nvb_node_new(t, r_id, n->level, &cut, &n->high, n->sibling,
						   n->level > 0 ? run->children[m] : NVB_NO_ID, run->keys + r_from,
						   run->children + r_from, run->n - r_from, NULL, for_delete, &r_off,
						   err)) != PM_OK)
	{
		free(run);
		return rc;
	}
	if ((rc = nvb_node_new(t, id, n->level, &n->low, &cut, r_id, n->leftmost, run->keys,
						   run->children, m, NULL, false, &l_off, err)) != PM_OK)
	{
		pm_error	ignored;

		pm_free_block(&t->pm, r_off, &ignored);
		free(run);
		return rc;
	}
	nvb_table_set(t, r_id, r_off);
	pm_smo_pause("nvbtree_pm split");
	nvb_table_set(t, id, l_off);
	nvb_node_retire(t, off);
	count_smo(t, &nvb_locks_of(t)->splits);
	*split = true;
	*right = r_id;
	*sep = ((nvb_node *) pm_pool_addr(t->pool, r_off))->low;
	free(run);
	return PM_OK;
}

/*
 * A new root over the old one at level - 1 and the node right of it, child,
 * unless the root has grown meanwhile (*grown false: the caller adds the
 * separator the usual way).  The meta block's root word is the commit.
 */
static pm_errcode
grow_root(nvb_tree *t, int level, const nvb_key *sep, uint32_t child, bool *grown,
		  pm_error *err)
{
	nvb_meta   *m = nvb_meta_of(t);
	uint32_t	old;
	nvb_node   *root;
	uint64_t	off;
	uint32_t	id;
	pm_errcode	rc = PM_OK;

	*grown = false;
	nvb_lock(t, NVB_NO_ID);
	old = (uint32_t) pm_load(&m->root);
	root = nvb_node_get(t, old, NULL);
	if (!nvb_node_ok(t, root, old, -1))
		rc = nvb_corrupt(t, err, "the root does not validate", old);
	else if (root->level == level - 1)
	{
		if ((rc = nvb_id_new(t, &id, err)) == PM_OK &&
			(rc = nvb_node_new(t, id, level, &PM_KEY_MIN, &PM_KEY_MAX, NVB_NO_ID, old, sep,
							   &child, 1, NULL, false, &off, err)) == PM_OK)
		{
			nvb_table_set(t, id, off);
			pm_store(&m->root, (uint64_t) id);
			nvb_persist(t, &m->root, sizeof(m->root));
			*grown = true;
		}
	}
	nvb_unlock(t, NVB_NO_ID);
	return rc;
}

/*
 * Add the separator sep -> child at level (child is a node of level - 1
 * whose low fence is sep), if it is missing: a split's second step, or
 * the repair of one a crash interrupted.
 */
pm_errcode
nvb_add_parent(nvb_tree *t, int level, const nvb_key *sep, uint32_t child, pm_error *err)
{
	nvb_meta   *m = nvb_meta_of(t);
	uint32_t	root_id = (uint32_t) pm_load(&m->root);
	nvb_node   *root = nvb_node_get(t, root_id, NULL);
	bool		grown;
	pm_errcode	rc;

	if (level >= NVB_MAX_LEVEL)
		return nvb_corrupt(t, err, "the tree is too tall", child);
	if (!nvb_node_ok(t, root, root_id, -1))
		return nvb_corrupt(t, err, "the root does not validate", root_id);
	if (root->level < level)
	{
		if ((rc = grow_root(t, level, sep, child, &grown, err)) != PM_OK || grown)
			return rc;
	}
	return nvb_insert_at(t, level, sep, child, err);
}

/* Whether run's entries fill at most half a leaf: by slots, and in a wide tree by bytes. */
static bool
fills_half(const nvb_tree *t, const node_run *run)
{
	if (!t->wide)
		return run->n * 2 <= NVB_LEAF_CAP;
	return run->n * 2 <= NVB_CAP_MAX &&
		run_bytes(t, 0, run, 0, run->n) * 2 <= nvb_node_room(t);
}

/* The stripes a merge holds, each locked once however many of its nodes share it. */
typedef struct held_stripes
{
	int			n;
	uint32_t	ids[3];
} held_stripes;

static void
hold(const nvb_tree *t, held_stripes *h, uint32_t id)
{
	for (int i = 0; i < h->n; i++)
		if (nvb_stripe_of(t, h->ids[i]) == nvb_stripe_of(t, id))
			return;
	nvb_lock(t, id);
	h->ids[h->n++] = id;
}

static void
release(const nvb_tree *t, held_stripes *h)
{
	for (int i = 0; i < h->n; i++)
		nvb_unlock(t, h->ids[i]);
	h->n = 0;
}

/*
 * Merge leaf r_id, whose low fence is sep, into its left neighbour, if the
 * parent names r_id by a separator of its own, the neighbour is the child
 * before it there and the two hold at most half a leaf (README.md:
 * "Merges").  Under the locks of the parent, the left leaf and r_id: the
 * merged leaf written into a new block (the left leaf's id and low fence,
 * r_id's high fence and sibling), the parent's separator removed (r_id is
 * then reached from the left leaf only, as after a split that has not
 * reached its parent), the left id remapped to the merged block (the
 * commit), r_id's table word cleared.  One merge at a time; a merge under
 * way elsewhere makes this one a no-op.  runs: room for two.
 */
static pm_errcode
merge_into_left(nvb_tree *t, uint32_t r_id, const nvb_key *sep, node_run *runs, bool *merged,
				pm_error *err)
{
	nvb_locks  *locks = nvb_locks_of(t);
	uint32_t	idle = 0;
	held_stripes h = {0};
	nvb_key		below = nvb_pred(t, sep);
	uint32_t	p_id,
				id;
	nvb_node   *p,
			   *l,
			   *r;
	uint64_t	p_off,
				l_off,
				r_off,
				m_off;
	nvb_pos		pos;
	int			found,
				left,
				removed = 0;
	pm_errcode	rc;

	*merged = false;
	if (!pm_cas(&locks->merging, &idle, 1))
		return PM_OK;
	if ((rc = nvb_lock_covering(t, sep, 1, &p_id, &p, &p_off, NULL, err)) != PM_OK)
		goto done;
	h.ids[h.n++] = p_id;
	found = nvb_node_find(t, p, sep, &pos);
	left = found == 1 ? nvb_node_floor(t, p, &below) : 0;
	if (found < 0 || left < 0)
	{
		rc = nvb_corrupt(t, err, "its search tree does not validate", p_id);
		goto unlock;
	}
	if (!found || pm_load(&nvb_children(p)[pos.slot]) != r_id)
		goto unlock;
	id = left == NVB_NONE ? p->leftmost : pm_load(&nvb_children(p)[left]);
	if (id == r_id)
	{
		rc = nvb_corrupt(t, err, "two of its separators name one child", p_id);
		goto unlock;
	}
	hold(t, &h, id);
	hold(t, &h, r_id);
	l = nvb_node_get(t, id, &l_off);
	r = nvb_node_get(t, r_id, &r_off);
	/* the left child must be r_id's left neighbour (not one whose split has not reached p) */
	if (!nvb_node_ok(t, l, id, 0) || !nvb_node_ok(t, r, r_id, 0) || l->sibling != r_id ||
		nvb_cmp(t, &l->high, sep) != 0 || nvb_cmp(t, &r->low, sep) != 0)
		goto unlock;
	if (!run_of(t, l, &runs[0]) || !run_of(t, r, &runs[1]))
	{
		rc = nvb_corrupt(t, err, "its search tree does not validate", id);
		goto unlock;
	}
	if (runs[0].n + runs[1].n > NVB_CAP_MAX)
		goto unlock;
	memcpy(runs[0].keys + runs[0].n, runs[1].keys, sizeof(nvb_key) * runs[1].n);
	memset(runs[0].children + runs[0].n, 0, sizeof(uint32_t) * runs[1].n);
	runs[0].n += runs[1].n;
	if (!fills_half(t, &runs[0]))
		goto unlock;
	if ((rc = nvb_node_new(t, id, 0, &l->low, &r->high, r->sibling, NVB_NO_ID, runs[0].keys,
						   runs[0].children, runs[0].n, NULL, true, &m_off, err)) != PM_OK)
		goto unlock;

	/*
	 * The separator, every copy of it (a two-child delete a crash cut can
	 * leave two).  A copy that cannot be removed (a full parent: a two-child
	 * delete needs a free slot) leaves the leaves as they are, r_id still
	 * named.
	 */
	do
	{
		removed = nvb_node_remove(t, p, &pos);
		if (removed != 1)
			break;
		found = nvb_node_find(t, p, sep, &pos);
	} while (found == 1);
	if (removed != 1 || found != 0)
	{
		pm_error	ignored;

		pm_free_block(&t->pm, m_off, &ignored);
		if (removed < 0 || found < 0)
			rc = nvb_corrupt(t, err, "its search tree does not validate", p_id);
		goto unlock;
	}
	pm_smo_pause("nvbtree_pm merge");
	nvb_table_set(t, id, m_off);
	nvb_table_set(t, r_id, 0);
	nvb_node_retire(t, l_off);
	nvb_node_retire(t, r_off);
	count_smo(t, &locks->merges);
	*merged = true;
unlock:
	release(t, &h);
done:
	pm_store(&locks->merging, 0);
	return rc;
}

/* Lock the leaf covering k and read its live entries into run; the caller unlocks *id. */
static pm_errcode
lock_leaf_run(nvb_tree *t, const nvb_key *k, uint32_t *id, nvb_node **n, uint64_t *off,
			  node_run *run, pm_error *err)
{
	pm_errcode	rc = nvb_lock_covering(t, k, 0, id, n, off, NULL, err);

	if (rc == PM_OK && !run_of(t, *n, run))
	{
		nvb_unlock(t, *id);
		rc = nvb_corrupt(t, err, "its search tree does not validate", *id);
	}
	return rc;
}

/*
 * After deletes: merge the leaf covering k into its left neighbour if the
 * two hold at most half a leaf (VACUUM's walk goes left to right, so the
 * neighbour has had its deletes), else rewrite it without its garbage when
 * at least half of the slots it handed out are.
 */
pm_errcode
nvb_tidy_leaf(nvb_tree *t, const nvb_key *k, bool *tidied, pm_error *err)
{
	node_run   *runs = malloc(2 * sizeof(node_run));
	nvb_node   *root;
	uint32_t	id;
	nvb_node   *n;
	uint64_t	off;
	pm_errcode	rc;

	*tidied = false;
	if (runs == NULL)
		return pm_error_set(err, PM_ERR_NOMEM, 0, "out of memory for an NVB-tree rewrite");
	nvb_section_enter(t);
	root = nvb_node_get(t, (uint32_t) pm_load(&nvb_meta_of(t)->root), NULL);
	rc = lock_leaf_run(t, k, &id, &n, &off, &runs[0], err);
	if (rc == PM_OK && !pm_key_is_min(&n->low) && root != NULL && root->level > 0 &&
		fills_half(t, &runs[0]))
	{
		/* the locks are taken again, the parent's first */
		nvb_key		sep = n->low;

		nvb_unlock(t, id);
		rc = merge_into_left(t, id, &sep, runs, tidied, err);
		if (rc != PM_OK || *tidied)
			goto out;
		rc = lock_leaf_run(t, k, &id, &n, &off, &runs[0], err);
	}
	if (rc == PM_OK)
	{
		int			used = nvb_node_free_slot(n);

		if (runs[0].n * 2 <= used && runs[0].n < used)
		{
			rc = compact(t, id, n, off, &runs[0], NULL, true, err);
			*tidied = rc == PM_OK;
		}
		nvb_unlock(t, id);
	}
out:
	nvb_section_exit(t);
	free(runs);
	return rc;
}
