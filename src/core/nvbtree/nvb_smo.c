/*
 * nvb_smo.c
 *	  Structure modifications (README.md: "Splits and rewrites", and
 *	  "Concurrency" for the parent's separator): a full node rewritten
 *	  without its garbage or split in two, each a copy on write committed by
 *	  one mapping-table store; the separator a split owes its parent, added
 *	  by the splitter or by any writer that finds it missing; the root's
 *	  growth; the rewrite VACUUM asks for.
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
	*off = pm_alloc_block(&t->pm, NVB_NODE_SIZE, err);
	if (*off == 0 && pm_errcode_is_out_of_space(err->code) && t->epoch != NULL &&
		pm_epoch_reclaim(t->epoch) > 0)
		*off = pm_alloc_block(&t->pm, NVB_NODE_SIZE, err);
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
	off = pm_alloc_block(&t->pm, NVB_NODE_SIZE, &err);
	if (off == 0)
		return;
	if (pm_cas(&m->spare, &none, off))
		nvb_persist(t, &m->spare, sizeof(m->spare));
	else
		pm_free_block(&t->pm, off, &err);
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

/* A node's live keys and children in order (a copy: the node may be replaced). */
typedef struct node_run
{
	int			n;
	nvb_key		keys[NVB_LEAF_CAP];
	uint32_t	children[NVB_LEAF_CAP];
} node_run;

static bool
run_of(nvb_node *n, node_run *run)
{
	int			slots[NVB_LEAF_CAP];

	run->n = nvb_node_sorted(n, slots);
	if (run->n < 0)
		return false;
	for (int i = 0; i < run->n; i++)
	{
		run->keys[i] = nvb_keys(n)[slots[i]];
		run->children[i] = n->level > 0 ? nvb_children(n)[slots[i]] : 0;
	}
	return true;
}

/* n's replacement with the same id and range, its live slots as a balanced tree; committed. */
static pm_errcode
compact(nvb_tree *t, uint32_t id, nvb_node *n, uint64_t off, const node_run *run, bool spare_ok,
		pm_error *err)
{
	nvb_node   *c = NULL;
	uint64_t	c_off;
	pm_errcode	rc = nvb_node_alloc(t, &c, &c_off, spare_ok, err);

	if (rc != PM_OK)
		return rc;
	nvb_node_init(c, id, n->level, &n->low, &n->high, n->sibling, n->leftmost);
	nvb_node_fill(c, run->keys, run->children, run->n);
	nvb_node_persist(t, c);
	nvb_table_set(t, id, c_off);
	nvb_node_retire(t, off);
	count_smo(t, &nvb_locks_of(t)->compactions);
	return PM_OK;
}

/*
 * Make room in the full node id (n at off; the caller holds its lock) for
 * incoming: rewrite it without garbage if it is mostly garbage (for a
 * delete, if it has any: a delete may use the spare block), else split
 * it (Alg. 3 without its parent step): the right half as a new node with a
 * new id, the left half as id's new node whose sibling is the right, both
 * persisted, the right half mapped, then id remapped: the commit, after
 * which the two are one virtual node until the parent gains *sep -> *right,
 * which the caller adds after releasing the lock (nvb_add_parent).
 */
pm_errcode
nvb_make_room(nvb_tree *t, uint32_t id, nvb_node *n, uint64_t off, const nvb_key *incoming,
			  bool for_delete, bool *split, nvb_key *sep, uint32_t *right, pm_error *err)
{
	node_run   *run = malloc(sizeof(node_run));
	nvb_node   *l = NULL,
			   *r = NULL;
	uint64_t	l_off,
				r_off;
	uint32_t	r_id;
	int			m,
				r_from;
	pm_errcode	rc;

	*split = false;
	if (run == NULL)
		return pm_error_set(err, PM_ERR_NOMEM, 0, "out of memory for an NVB-tree split");
	if (!run_of(n, run))
	{
		free(run);
		return nvb_corrupt(t, err, "its search tree does not validate", id);
	}
	if (run->n * 4 <= nvb_cap(n) * NVB_COMPACT_QUARTERS || run->n < 2 ||
		(for_delete && run->n < nvb_cap(n)))
	{
		rc = compact(t, id, n, off, run, for_delete, err);
		free(run);
		return rc;
	}

	m = run->n / 2;
	if (pm_key_is_max(&n->high) && nvb_cmp(incoming, &run->keys[run->n - 1]) > 0)
		m = run->n * NVB_APPEND_SPLIT_PCT / 100;
	/* an inner node's middle separator moves up; its child leads the right half */
	r_from = n->level > 0 ? m + 1 : m;
	*sep = run->keys[m];
	if ((rc = nvb_id_new(t, &r_id, err)) != PM_OK ||
		(rc = nvb_node_alloc(t, &r, &r_off, for_delete, err)) != PM_OK)
	{
		free(run);
		return rc;
	}
	if ((rc = nvb_node_alloc(t, &l, &l_off, false, err)) != PM_OK)
	{
		pm_error	ignored;

		pm_free_block(&t->pm, r_off, &ignored);
		free(run);
		return rc;
	}
	nvb_node_init(r, r_id, n->level, sep, &n->high, n->sibling,
				  n->level > 0 ? run->children[m] : NVB_NO_ID);
	nvb_node_fill(r, run->keys + r_from, run->children + r_from, run->n - r_from);
	nvb_node_persist(t, r);
	nvb_node_init(l, id, n->level, &n->low, sep, r_id, n->leftmost);
	nvb_node_fill(l, run->keys, run->children, m);
	nvb_node_persist(t, l);
	nvb_table_set(t, r_id, r_off);
	pm_smo_pause("nvbtree_pm split");
	nvb_table_set(t, id, l_off);
	nvb_node_retire(t, off);
	count_smo(t, &nvb_locks_of(t)->splits);
	*split = true;
	*right = r_id;
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
			(rc = nvb_node_alloc(t, &root, &off, false, err)) == PM_OK)
		{
			nvb_node_init(root, id, level, &PM_KEY_MIN, &PM_KEY_MAX, NVB_NO_ID, old);
			nvb_node_fill(root, sep, &child, 1);
			nvb_node_persist(t, root);
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

/*
 * After deletes: rewrite the leaf covering k without its garbage when at
 * least half of the slots it handed out are.
 */
pm_errcode
nvb_tidy_leaf(nvb_tree *t, const nvb_key *k, bool *tidied, pm_error *err)
{
	node_run   *run = malloc(sizeof(node_run));
	uint32_t	id;
	nvb_node   *n;
	uint64_t	off;
	pm_errcode	rc;

	*tidied = false;
	if (run == NULL)
		return pm_error_set(err, PM_ERR_NOMEM, 0, "out of memory for an NVB-tree rewrite");
	nvb_section_enter(t);
	rc = nvb_lock_covering(t, k, 0, &id, &n, &off, NULL, err);
	if (rc == PM_OK)
	{
		int			used = nvb_node_free_slot(n);

		if (!run_of(n, run))
			rc = nvb_corrupt(t, err, "its search tree does not validate", id);
		else if (run->n * 2 <= used && run->n < used)
		{
			rc = compact(t, id, n, off, run, true, err);
			*tidied = rc == PM_OK;
		}
		nvb_unlock(t, id);
	}
	nvb_section_exit(t);
	free(run);
	return rc;
}
