/*
 * nvb_tree.c
 *	  The operations (README.md: "Concurrency"): the lock-free descent with
 *	  its moves right, inserts and deletes under the one node's lock, and
 *	  the lock-free validated read of a leaf.
 */
#include "nvb_internal.h"

/* descents restarted (a node replaced or freed under a reader) before it is damage */
#define NVB_RESTARTS_MAX	10000

/*
 * Whether a descent failed at the same block (n, read as id) as the one
 * before it; records this failure either way.
 */
static bool
failed_again(const nvb_node *n, uint32_t id, int restarts, const nvb_node **bad,
			 uint32_t *bad_id)
{
	bool		again = restarts > 0 && n == *bad && id == *bad_id;

	*bad = n;
	*bad_id = id;
	return again;
}

/*
 * Descend to the node of level that covers k, moving right where a split
 * has not reached the parent yet: from the root, the separator at or below
 * k at each level (the leftmost child below them all), then right along
 * siblings while k is at or past a node's high fence.  A node that does
 * not cover k (replaced or freed meanwhile) restarts the descent.  The
 * same block failing again is damage, reported at once rather than after
 * NVB_RESTARTS_MAX backed-off restarts: a block its id maps to is current,
 * and one its id no longer maps to does not become current again while the
 * caller's epoch keeps it from being freed.  *fix gets the last node
 * reached by a move right: its parent may lack its separator, or (at the
 * root's level) there may be no parent yet (fix->level -1: none).  No lock.
 */
static pm_errcode
descend(nvb_tree *t, const nvb_key *k, int level, uint32_t *id_out, nvb_node **n_out,
		nvb_fix *fix, pm_error *err)
{
	nvb_meta   *m = nvb_meta_of(t);
	uint64_t	moves = 0;
	const nvb_node *bad = NULL;
	uint32_t	bad_id = NVB_NO_ID;

	if (fix != NULL)
		fix->level = -1;
	for (int restarts = 0; restarts < NVB_RESTARTS_MAX; restarts++)
	{
		uint32_t	id = (uint32_t) pm_load(&m->root);
		nvb_node   *n = nvb_node_get(t, id, NULL);
		int			lvl;

		if (restarts > 0)
			pm_spin_delay(restarts);
		if (!nvb_node_ok(t, n, id, -1) || n->level < level)
		{
			if (failed_again(n, id, restarts, &bad, &bad_id))
				return nvb_corrupt(t, err, "the root does not validate", id);
			continue;
		}
		lvl = n->level;
		for (;;)
		{
			int			s;
			uint32_t	child;

			if (nvb_cmp(t, k, &n->low) < 0)
				break;			/* restart */
			if (nvb_cmp(t, k, &n->high) >= 0)
			{
				uint32_t	sib = n->sibling;

				if (++moves > pm_load(&m->next_id) + NVB_RESTARTS_MAX)
					return nvb_corrupt(t, err, "its siblings do not end", id);
				n = nvb_node_get(t, sib, NULL);
				id = sib;
				if (!nvb_node_ok(t, n, sib, lvl))
					break;
				if (fix != NULL)
				{
					fix->level = lvl;
					fix->sep = n->low;
					fix->id = id;
				}
				continue;
			}
			if (lvl == level)
			{
				*id_out = id;
				*n_out = n;
				return PM_OK;
			}
			s = nvb_node_floor(t, n, k);
			if (s < 0)
				return nvb_corrupt(t, err, "its search tree does not validate", id);
			child = s == NVB_NONE ? n->leftmost : pm_load(&nvb_children(n)[s]);
			n = nvb_node_get(t, child, NULL);
			id = child;
			lvl--;
			if (!nvb_node_ok(t, n, child, lvl))
				break;
		}
		/* n, read as id, does not validate or does not cover k */
		if (failed_again(n, id, restarts, &bad, &bad_id))
			return nvb_corrupt(t, err, "a node does not cover the keys it is reached for", id);
	}
	return nvb_corrupt(t, err, "descents do not reach a node that covers the key", 0);
}

/*
 * Lock the node of level that covers k and return it current (*n at *off):
 * after the descent, under the lock, the node id maps to now, moved right
 * from while k is past its high fence.  The caller unlocks *id.
 */
pm_errcode
nvb_lock_covering(nvb_tree *t, const nvb_key *k, int level, uint32_t *id_out, nvb_node **n_out,
				  uint64_t *off_out, nvb_fix *fix, pm_error *err)
{
	for (int restarts = 0; restarts < NVB_RESTARTS_MAX; restarts++)
	{
		uint32_t	id;
		nvb_node   *n;
		pm_errcode	rc = descend(t, k, level, &id, &n, fix, err);

		if (rc != PM_OK)
			return rc;
		nvb_lock(t, id);
		for (;;)
		{
			uint64_t	off;

			n = nvb_node_get(t, id, &off);
			if (!nvb_node_ok(t, n, id, level) || nvb_cmp(t, k, &n->low) < 0)
			{
				nvb_unlock(t, id);
				break;			/* freed or replaced: descend again */
			}
			if (nvb_cmp(t, k, &n->high) >= 0)
			{
				uint32_t	sib = n->sibling;

				nvb_unlock(t, id);
				if (sib == NVB_NO_ID)
					return nvb_corrupt(t, err, "a high fence below the end has no sibling", id);
				nvb_lock(t, sib);
				id = sib;
				continue;
			}
			*id_out = id;
			*n_out = n;
			*off_out = off;
			return PM_OK;
		}
	}
	return nvb_corrupt(t, err, "writers do not reach a node that covers the key", 0);
}

/* Whether child may gain the separator sep: a node of level - 1 whose low fence is sep. */
static bool
separator_wanted(nvb_tree *t, int level, const nvb_key *sep, uint32_t child)
{
	nvb_node   *c = nvb_node_get(t, child, NULL);

	return nvb_node_ok(t, c, child, level - 1) && nvb_cmp(t, &c->low, sep) == 0;
}

/*
 * Insert k (with child, at an inner level) into the node of level that
 * covers it; a no-op if it is there.  A full node (no free slot, or no room
 * for k's record) makes room first (and a split adds its separator, after
 * the lock is released); a missing separator met on the way is added after.
 */
pm_errcode
nvb_insert_at(nvb_tree *t, int level, const nvb_key *k, uint32_t child, pm_error *err)
{
	nvb_fix		fix;
	pm_errcode	rc;

	for (;;)
	{
		uint32_t	id;
		nvb_node   *n;
		uint64_t	off;
		nvb_pos		pos;
		int			found;
		int			slot;
		int			placed;
		nvb_key		stored;
		bool		split;
		nvb_key		sep;
		uint32_t	right;

		if ((rc = nvb_lock_covering(t, k, level, &id, &n, &off, &fix, err)) != PM_OK)
			return rc;
		found = nvb_node_find(t, n, k, &pos);
		if (found < 0)
		{
			nvb_unlock(t, id);
			return nvb_corrupt(t, err, "its search tree does not validate", id);
		}
		if (found || (level > 0 && (nvb_cmp(t, k, &n->low) == 0 ||
									!separator_wanted(t, level, k, child))))
		{
			nvb_unlock(t, id);
			break;
		}
		slot = nvb_node_free_slot(n);
		placed = slot < nvb_cap(n) ? nvb_node_place(t, n, slot, k, &stored) : 0;
		if (placed < 0)
		{
			nvb_unlock(t, id);
			return nvb_corrupt(t, err, "its records do not validate", id);
		}
		if (placed)
		{
			nvb_node_link_new(t, n, slot, &stored, child, pos.link);
			nvb_unlock(t, id);
			break;
		}
		rc = nvb_make_room(t, id, n, off, k, false, &split, &sep, &right, err);
		nvb_unlock(t, id);
		if (rc != PM_OK)
			return rc;
		if (split && (rc = nvb_add_parent(t, level + 1, &sep, right, err)) != PM_OK)
			return rc;
	}
	if (fix.level >= 0)
	{
		pm_error	ignored;

		/* a repair: a failure leaves the tree correct, with the move right kept */
		(void) nvb_add_parent(t, fix.level + 1, &fix.sep, fix.id, &ignored);
	}
	return PM_OK;
}

/*
 * Whether k may be an entry of t: a rest that is not 0 and, if wide, a
 * record in the caller's memory of at most NVB_WIDE_DATA_MAX bytes, which
 * only a wide tree takes.
 */
pm_errcode
nvb_entry_ok(const nvb_tree *t, const nvb_key *k, pm_error *err)
{
	if (k->rest == 0)
		return pm_error_set(err, PM_ERR_INVALID, 0, "an NVB-tree entry's rest is never 0");
	if (!pm_rest_is_wide(k->rest))
		return PM_OK;
	if (!t->wide)
		return pm_error_set(err, PM_ERR_INVALID, 0,
							"pool file \"%s\": a wide entry for a narrow NVB-tree", t->pool->path);
	if ((k->rest & (PM_REST_LOCAL | PM_REST_BELOW | PM_REST_ABOVE | PM_REST_PACKED)) != PM_REST_LOCAL)
		return pm_error_set(err, PM_ERR_INVALID, 0,
							"a wide NVB-tree entry's record is in the caller's memory");
	if (pm_key_rec_of(NULL, k->rest)->len > NVB_WIDE_DATA_MAX)
		return pm_error_set(err, PM_ERR_LIMIT, 0,
							"an index key of %u bytes exceeds the maximum of an NVB-tree, %d",
							pm_key_rec_of(NULL, k->rest)->len + 8, NVB_WIDE_DATA_MAX + 8);
	return PM_OK;
}

pm_errcode
nvb_insert(nvb_tree *t, const nvb_key *k, pm_error *err)
{
	pm_errcode	rc;

	if ((rc = nvb_entry_ok(t, k, err)) != PM_OK)
		return rc;
	nvb_section_enter(t);
	rc = nvb_insert_at(t, 0, k, NVB_NO_ID, err);
	nvb_section_exit(t);
	return rc;
}

/*
 * Delete k from its leaf, every copy of it (a crash inside a two-child
 * delete can leave two); a two-child delete in a full leaf rewrites the
 * leaf first.
 */
pm_errcode
nvb_delete(nvb_tree *t, const nvb_key *k, bool *found, pm_error *err)
{
	pm_errcode	rc = PM_OK;

	*found = false;
	nvb_section_enter(t);
	for (;;)
	{
		uint32_t	id;
		nvb_node   *n;
		uint64_t	off;
		nvb_pos		pos;
		int			there;
		int			removed = 1;
		bool		split;
		nvb_key		sep;
		uint32_t	right;

		if ((rc = nvb_lock_covering(t, k, 0, &id, &n, &off, NULL, err)) != PM_OK)
			break;
		while ((there = nvb_node_find(t, n, k, &pos)) == 1 &&
			   (removed = nvb_node_remove(t, n, &pos)) == 1)
			*found = true;
		if (there == 1 && removed < 0)
			there = -1;
		if (there <= 0)
		{
			nvb_unlock(t, id);
			if (there < 0)
				rc = nvb_corrupt(t, err, "its search tree does not validate", id);
			break;
		}
		/* a two-child delete found the leaf full */
		rc = nvb_make_room(t, id, n, off, k, true, &split, &sep, &right, err);
		nvb_unlock(t, id);
		if (rc == PM_OK && split)
			rc = nvb_add_parent(t, 1, &sep, right, err);
		if (rc != PM_OK)
			break;
	}
	nvb_section_exit(t);
	return rc;
}

/* A stripe's version once no delete is under way there. */
static uint32_t
stable_version(nvb_stripe *st)
{
	unsigned	attempt = 0;
	uint32_t	v;

	while ((v = pm_load(&st->version)) & 1)
		pm_spin_delay(attempt++);
	return v;
}

/* k naming a copy of its record, if it names one in the pool. */
static void
copy_out(nvb_key *k, nvb_copy_fn copy, void *ctx, const nvb_tree *t)
{
	if (pm_rest_is_wide(k->rest) && !(k->rest & PM_REST_LOCAL))
		k->rest = PM_REST_WIDE | PM_REST_LOCAL |
			(uintptr_t) copy(ctx, pm_key_rec_of(t->pool, k->rest));
}

pm_errcode
nvb_read_range(nvb_tree *t, const nvb_key *k, bool backward, const nvb_key *lo,
			   const nvb_key *hi, nvb_batch *b, nvb_copy_fn copy, void *ctx, pm_error *err)
{
	nvb_key		target = backward ? nvb_pred(t, k) : *k;
	pm_errcode	rc = PM_OK;

	b->n = 0;
	if (backward && pm_key_is_min(k))
	{
		b->low = b->high = PM_KEY_MIN;
		return PM_OK;
	}
	nvb_section_enter(t);
	for (int tries = 0;; tries++)
	{
		uint32_t	id;
		nvb_node   *n;
		nvb_stripe *st;
		uint32_t	v;
		bool		more;
		nvb_key		next;
		int			got;

		if (tries >= NVB_RESTARTS_MAX)
		{
			rc = nvb_corrupt(t, err, "reads do not settle", 0);
			break;
		}
		if ((rc = descend(t, &target, 0, &id, &n, NULL, err)) != PM_OK)
			break;
		st = nvb_stripe_of(t, id);
		v = stable_version(st);
		got = nvb_node_collect(t, n, k, backward, lo, hi, b->e, NVB_BATCH_MAX, &more, &next);
		pm_full_fence();
		if (pm_load(&st->version) != v)
			continue;
		if (got < 0)
		{
			rc = nvb_corrupt(t, err, "its search tree does not validate", id);
			break;
		}
		/* the keys come in order: the first and the last (or the next) against the fences */
		if ((got > 0 && (nvb_cmp(t, &b->e[0], &n->low) < 0 ||
						 nvb_cmp(t, &b->e[got - 1], &n->high) >= 0)) ||
			(!backward && more && nvb_cmp(t, &next, &n->high) >= 0))
		{
			rc = nvb_corrupt(t, err, "an entry lies outside its fences", id);
			break;
		}
		b->n = got;
		if (backward)
		{
			b->high = *k;
			b->low = more ? next : n->low;
		}
		else
		{
			b->low = *k;
			b->high = more ? next : n->high;
		}
		/* in the epoch section still: no record read may be freed yet */
		if (t->wide)
		{
			for (int i = 0; i < got; i++)
				copy_out(&b->e[i], copy, ctx, t);
			copy_out(&b->low, copy, ctx, t);
			copy_out(&b->high, copy, ctx, t);
		}
		break;
	}
	nvb_section_exit(t);
	return rc;
}
