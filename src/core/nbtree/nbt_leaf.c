/*
 * nbt_leaf.c
 *	  Leaf operations: locate, insert (log-structured), delete (in place),
 *	  and leaf reads for scans.
 *
 * Insert claims a slot (and the bytes of a packed record) with
 * fetch-and-add, writes and persists the record, writes key then val into
 * the PM block (the val store is the durability point), persists the slot, then
 * commits it in the DRAM bitmap with a CAS that fails once the leaf's SMO
 * bit is set; a failed commit helps the SMO and retries in the replacement.
 * Delete sets the DEAD bit of the matching slot, then repeats that in the
 * replacement leaf if an SMO has copied the leaf meanwhile (sync-on-write).
 */
#include "nbt_internal.h"

/*
 * Sort a leaf's entries, or a merging pair's (at most 2 * NBT_LEAF_CAP).
 * Insertion sort with the comparison inlined: for a few dozen entries it is
 * several times faster than qsort's call per comparison, and every scan
 * sorts each leaf it reads.
 */
void
nbt_sort_entries(const nbt_tree *t, nbt_entry *e, int n)
{
	for (int i = 1; i < n; i++)
	{
		nbt_entry	x = e[i];
		int			j = i;

		while (j > 0 && nbt_cmp(t, &x.sk, &e[j - 1].sk) < 0)
		{
			e[j] = e[j - 1];
			j--;
		}
		e[j] = x;
	}
}

/*
 * Find the leaf whose [low, high) covers sk.  READ resolves a leaf whose
 * SMO has finished its sync phase to the replacement (complete and clean);
 * WRITE first helps any SMO or pending leaf it meets, so the returned leaf
 * is linked in PM and accepts commits; RAW returns the leaf as reached.
 * start and *level1 as for nbt_descend_from (0 and NULL: from the root);
 * a route found stale starts over from the root.
 */
static pm_errcode
find_leaf(nbt_tree *t, const nbt_skey *sk, nbt_find_mode mode, uint64_t start,
		  uint64_t *level1, uint64_t *leaf_off, pm_error *err)
{
	for (;;)
	{
		uint64_t	off = nbt_descend_from(t, sk, start, level1);
		bool		restart = false;

		start = 0;
		while (!restart)
		{
			nbt_leaf   *l = nbt_leaf_at(t, off);
			uint32_t	flags;

			/* the fingerprints' line: fetch it alongside the fences' line */
			__builtin_prefetch((const char *) l + 64);
			if (nbt_cmp(t, sk, &l->low) < 0)
			{
				restart = true; /* stale route; descend again */
				break;
			}
			if (nbt_cmp(t, sk, &l->high) >= 0)
			{
				off = pm_load(&l->next) & ~NBT_FROZEN;
				continue;
			}
			flags = pm_load(&l->flags);
			if (mode == NBT_FIND_READ)
			{
				uint64_t	copy = pm_load(&l->copy);

				if (copy != 0 && (flags & NBT_SYNC_DONE))
				{
					off = copy;
					continue;
				}
			}
			else if (mode == NBT_FIND_WRITE)
			{
				pm_errcode	rc = PM_OK;

				if (flags & NBT_PENDING)
					rc = nbt_help_smo(t, pm_load(&l->origin), err);
				else if (pm_load(&l->bitmap) & NBT_SMO_BIT)
					rc = nbt_help_smo(t, off, err);
				else
				{
					*leaf_off = off;
					return PM_OK;
				}
				if (rc != PM_OK)
					return rc;
				restart = true;
				break;
			}
			*leaf_off = off;
			return PM_OK;
		}
	}
}

pm_errcode
nbt_find_leaf(nbt_tree *t, const nbt_skey *sk, nbt_find_mode mode, uint64_t *leaf_off,
			  pm_error *err)
{
	return find_leaf(t, sk, mode, 0, NULL, leaf_off, err);
}

/*
 * The slot of the live committed entry sk in leaf l, or -1; *val gets the
 * slot's value as read.  Fingerprints first, one PM read per match; a wide
 * entry is the same entry if its record orders equal (sk may be a local
 * copy of it).
 */
static int
find_live_slot(nbt_tree *t, nbt_leaf *l, const nbt_skey *sk, uint64_t *val)
{
	nbt_kv	   *kv = nbt_kv_at(t, l->kv);
	uint64_t	bits = pm_load(&l->bitmap) & nbt_fp_matches(l, nbt_fingerprint(sk->key));

	while (bits)
	{
		int			pos = __builtin_ctzll(bits);

		bits &= bits - 1;
		if (pm_load_relaxed(&kv->slot[pos].key) != sk->key)
			continue;
		*val = pm_load(&kv->slot[pos].val);
		if (*val == sk->rest)
			return pos;
		if (nbt_val_live(*val) &&
			((*val & NBT_VAL_PACKED) || pm_rest_is_wide(*val) || pm_rest_is_wide(sk->rest)))
		{
			nbt_skey	have = nbt_slot_entry(l->kv, pos, sk->key, *val);

			if (nbt_cmp(t, &have, sk) == 0)
				return pos;
		}
	}
	return -1;
}

/*
 * What one insert of a batch leaves the next (README: "Batch inserts").
 * leaf: the leaf the entry went to (or was found in), found in the current
 * epoch section and good only while it lasts: 0 once the section is left.
 * level1: the level-1 node the last descent read that leaf from, and
 * routed: a key that descent routed; inner nodes are never freed and a
 * node's low end never changes, so a key not below routed may start its
 * descent there.
 */
typedef struct insert_hint
{
	uint64_t	leaf;
	uint64_t	level1;
	const nbt_skey *routed;
} insert_hint;

/*
 * After an insert ran out of space: free, once per insert, the blocks that
 * earlier SMOs retired, which become free outside the epoch section.
 * Whether the insert should try again.  Leaving the section drops the
 * hint's leaf.
 */
static bool
reclaim_once(nbt_tree *t, pm_errcode rc, bool *reclaimed, insert_hint *hint)
{
	if (!pm_errcode_is_out_of_space(rc) || *reclaimed)
		return false;
	pm_epoch_exit(t->epoch);
	hint->leaf = 0;
	(void) pm_epoch_reclaim(t->epoch);
	pm_epoch_enter(t->epoch);
	*reclaimed = true;
	return true;
}

/*
 * The leaf an insert of sk writes to, as nbt_find_leaf(NBT_FIND_WRITE)
 * finds it, through the hint where it is certain to give the same answer:
 * the hint's leaf if sk lies within its (immutable) fences and it is
 * neither PENDING nor in an SMO, exactly the test the descent's leaf must
 * pass; else a descent from the hint's level-1 node if sk is not below
 * the key routed through it; else from the root.
 */
static pm_errcode
find_leaf_hinted(nbt_tree *t, const nbt_skey *sk, insert_hint *hint, uint64_t *leaf_off,
				 pm_error *err)
{
	uint64_t	start = 0;
	pm_errcode	rc;

	if (hint->leaf != 0)
	{
		nbt_leaf   *l = nbt_leaf_at(t, hint->leaf);

		if (nbt_cmp(t, sk, &l->low) >= 0 && nbt_cmp(t, sk, &l->high) < 0 &&
			!(pm_load(&l->flags) & NBT_PENDING) && !(pm_load(&l->bitmap) & NBT_SMO_BIT))
		{
			*leaf_off = hint->leaf;
			return PM_OK;
		}
	}
	if (hint->level1 != 0 && nbt_cmp(t, sk, hint->routed) >= 0)
		start = hint->level1;
	hint->leaf = 0;
	rc = find_leaf(t, sk, NBT_FIND_WRITE, start, &hint->level1, leaf_off, err);
	if (rc == PM_OK)
	{
		hint->leaf = *leaf_off;
		hint->routed = sk;
	}
	return rc;
}

/*
 * Insert one entry (nbt_insert's semantics) inside the caller's epoch
 * section, finding its leaf through hint and leaving it the leaf the entry
 * went to.  sk stays in the caller's memory until the batch is done (the
 * hint may name it).
 */
static pm_errcode
insert_one(nbt_tree *t, const nbt_skey *sk, insert_hint *hint, pm_error *err)
{
	pm_errcode	rc = PM_OK;
	bool		reclaimed = false;
	bool		wide = pm_rest_is_wide(sk->rest);
	uint64_t	stored = wide ? 0 : sk->rest;	/* the rest the slot gets */
	bool		committed = false;
	bool		written = false;	/* a slot (abandoned unless committed) names the record */
	pm_key_view packed;
	bool		packs;
	uint64_t	want;			/* the claim: a slot, and the packed record's bytes */

	if (!nbt_input_rest_valid(sk->rest, err))
		return err->code;
	packs = nbt_rec_packs(t, sk->rest, &packed);
	want = nbt_claim_of(1, packs ? nbt_packed_size(packed.len) : 0);
	for (;;)
	{
		uint64_t	off;
		nbt_leaf   *l;
		uint64_t	claim;
		uint32_t	pos;
		nbt_kv	   *kv;
		uint64_t	val;
		uint64_t	b;
		uint64_t	seen;

		rc = find_leaf_hinted(t, sk, hint, &off, err);
		if (rc != PM_OK)
			break;
		l = nbt_leaf_at(t, off);
		/*
		 * The slot this insert will most likely claim, while it checks: the
		 * descent's block prefetch misses a leaf reached by moving right, and
		 * without this line the load measured 2-8% slower even so (3 pairs).
		 */
		__builtin_prefetch(&nbt_kv_at(t, l->kv)->slot[nbt_claim_slots(pm_load_relaxed(&l->claim)) %
													  NBT_LEAF_CAP], 1);

		/*
		 * After a crash the host may insert an identity that survived in PM
		 * while its WAL did not (see src/pg: reconciliation): inserting is
		 * idempotent, so that never becomes a duplicate.
		 */
		if (find_live_slot(t, l, sk, &seen) >= 0)
			break;
		if (stored == 0 && !packs)
		{
			/* the record goes to the pool once, before any slot can name it */
			stored = nbt_rec_store(&t->pm, t->pool, sk->rest, err);
			if (stored == 0)
			{
				if (reclaim_once(t, err->code, &reclaimed, hint))
					continue;
				rc = err->code;
				break;
			}
		}
		/* a leaf seen full is not claimed from: claims only ever grow */
		claim = pm_load(&l->claim);
		if (nbt_claim_fits(claim + want, l->slot_cap))
			claim = pm_fetch_add(&l->claim, want);
		if (!nbt_claim_fits(claim + want, l->slot_cap))
		{
			/* full: split or compact it, then retry in the replacement */
			if (packs && nbt_claim_slots(claim + want) <= l->slot_cap)
				pm_fetch_or(&l->flags, NBT_WANTS_RECORDS);
			rc = nbt_run_smo(t, off, nbt_claim_slots(want) * sizeof(nbt_pm_slot) +
							 nbt_claim_bytes(want), err);
			if (reclaim_once(t, rc, &reclaimed, hint))
			{
				rc = PM_OK;
				continue;
			}
			if (rc != PM_OK)
				break;
			continue;
		}
		pos = nbt_claim_slots(claim);
		kv = nbt_kv_at(t, l->kv);
		val = stored;
		if (packs)
		{
			if (pm_load_relaxed(&nbt_droot_at(t)->holds_packed) == 0)
				pm_store(&nbt_droot_at(t)->holds_packed, 1);
			/* the record is durable before the slot names it, as a block of its own is */
			val = nbt_rec_pack(kv, (int) pos, nbt_claim_bytes(claim), &packed);
			pm_persist(&t->pool->persist,
					   nbt_packed_at(kv, nbt_claim_bytes(claim), nbt_claim_bytes(want)),
					   nbt_claim_bytes(want));
		}
		pm_store_relaxed(&kv->slot[pos].key, sk->key);
		pm_store(&kv->slot[pos].val, val);
		pm_persist(&t->pool->persist, &kv->slot[pos], sizeof(nbt_pm_slot));
		written = true;
		pm_store_relaxed(&l->fp[pos], nbt_fingerprint(sk->key));

		b = pm_load(&l->bitmap);
		while (!(b & NBT_SMO_BIT) && !pm_cas(&l->bitmap, &b, b | (UINT64_C(1) << pos)))
			;
		if (!(b & NBT_SMO_BIT))
		{
			committed = true;
			break;
		}
		/* an SMO froze the leaf before our commit: the slot is abandoned */
		rc = nbt_help_smo(t, off, err);
		if (rc != PM_OK)
			break;
	}
	if (rc != PM_OK)
		hint->leaf = 0;
	/*
	 * No committed slot names the record.  An abandoned one may, in a leaf
	 * whose SMO is linked unless the insert failed helping it: then a crash
	 * could make that slot an entry again, and the record is left to the
	 * allocator's next recovery.
	 */
	if (wide && stored != 0 && !committed && (!written || rc == PM_OK))
	{
		pm_error	ignored;

		(void) pm_free_block(&t->pm, stored & PM_REST_ADDR, &ignored);
	}
	return rc;
}

/*
 * Entries a batch inserts in one epoch section: a section holds back every
 * participant's reclamation while it lasts, so it lasts about as long as
 * this many inserts (a few dozen microseconds), not a whole batch; the leaf
 * hint does not outlive it.
 */
#define NBT_BATCH_SECTION	64

pm_errcode
nbt_insert_sorted(nbt_tree *t, const nbt_skey *sks, int n, int *done, pm_error *err)
{
	insert_hint hint = {0, 0, NULL};
	pm_errcode	rc = PM_OK;
	int			i = 0;

	while (i < n && rc == PM_OK)
	{
		int			end = n - i > NBT_BATCH_SECTION ? i + NBT_BATCH_SECTION : n;

		pm_epoch_enter(t->epoch);
		for (; i < end; i++)
		{
			rc = insert_one(t, &sks[i], &hint, err);
			if (rc != PM_OK)
				break;
		}
		pm_epoch_exit(t->epoch);
		hint.leaf = 0;
	}
	if (done != NULL)
		*done = i;
	return rc;
}

pm_errcode
nbt_insert(nbt_tree *t, const nbt_skey *sk, pm_error *err)
{
	return nbt_insert_sorted(t, sk, 1, NULL, err);
}

/* Set DEAD on the committed slot holding sk; true if this call did it. */
bool
nbt_leaf_mark_dead(nbt_tree *t, nbt_leaf *l, const nbt_skey *sk)
{
	uint64_t	val;
	int			pos;

	/* a failed CAS means a concurrent delete of the same entry: look again */
	while ((pos = find_live_slot(t, l, sk, &val)) >= 0)
	{
		nbt_pm_slot *slot = &nbt_kv_at(t, l->kv)->slot[pos];

		if (pm_cas(&slot->val, &val, val | NBT_VAL_DEAD))
		{
			pm_persist(&t->pool->persist, &slot->val, sizeof(uint64_t));
			return true;
		}
	}
	return false;
}

pm_errcode
nbt_delete(nbt_tree *t, const nbt_skey *sk, bool *found, pm_error *err)
{
	uint64_t	off;
	pm_errcode	rc;

	*found = false;
	pm_epoch_enter(t->epoch);
	rc = nbt_find_leaf(t, sk, NBT_FIND_RAW, &off, err);
	while (rc == PM_OK)
	{
		nbt_leaf   *l = nbt_leaf_at(t, off);
		uint64_t	copy;

		if (nbt_leaf_mark_dead(t, l, sk))
			*found = true;
		/* the leaf was copied: the entry may live on in the replacement */
		copy = pm_load(&l->copy);
		if (copy == 0)
			break;
		off = copy;
		while (nbt_cmp(t, sk, &nbt_leaf_at(t, off)->high) >= 0)
			off = pm_load(&nbt_leaf_at(t, off)->next) & ~NBT_FROZEN;
	}
	pm_epoch_exit(t->epoch);
	return rc;
}

/*
 * Collect the live committed entries of leaf l within [lo, hi] into b,
 * sorted.  For one key (lo.key == hi.key) only slots whose fingerprint
 * matches are read from PM: about one PM line per lookup, as in the paper.
 */
static void
collect(nbt_tree *t, nbt_leaf *l, const nbt_skey *lo, const nbt_skey *hi, nbt_batch *b)
{
	nbt_kv	   *kv = nbt_kv_at(t, l->kv);
	uint64_t	bits = pm_load(&l->bitmap) & NBT_SLOT_BITS;
	bool		one_key = lo->key == hi->key;

	b->n = 0;
	b->low = l->low;
	b->high = l->high;
	if (one_key)
		bits &= nbt_fp_matches(l, nbt_fingerprint(lo->key));
	while (bits)
	{
		int			pos = __builtin_ctzll(bits);
		uint64_t	val;
		nbt_skey	sk;

		bits &= bits - 1;
		val = pm_load(&kv->slot[pos].val);
		if (!nbt_val_live(val))
			continue;
		sk = nbt_slot_entry(l->kv, pos, pm_load_relaxed(&kv->slot[pos].key), val);
		if (nbt_cmp(t, &sk, lo) >= 0 && nbt_cmp(t, &sk, hi) <= 0)
			b->e[b->n++].sk = sk;
	}
	if (b->n > 1)
		nbt_sort_entries(t, b->e, b->n);
}

/* Make a batch key that names a pool record name the caller's copy of it. */
static void
copy_out(nbt_tree *t, nbt_skey *sk, nbt_copy_fn copy, void *ctx)
{
	if (pm_rest_is_wide(sk->rest) && !(sk->rest & PM_REST_LOCAL))
	{
		nbt_rec_buf buf;
		const pm_key_rec *r = nbt_rec_whole(t->pool, sk->rest, &buf);

		sk->rest = PM_REST_WIDE | PM_REST_LOCAL | (uintptr_t) copy(ctx, r);
	}
}

void
nbt_read_leaf(nbt_tree *t, const nbt_skey *sk, bool backward, nbt_batch *b)
{
	nbt_read_range(t, sk, backward, &PM_KEY_MIN, &PM_KEY_MAX, b);
}

void
nbt_read_range(nbt_tree *t, const nbt_skey *sk, bool backward, const nbt_skey *lo,
			   const nbt_skey *hi, nbt_batch *b)
{
	nbt_read_range_copy(t, sk, backward, lo, hi, b, NULL, NULL);
}

void
nbt_read_range_copy(nbt_tree *t, const nbt_skey *sk, bool backward, const nbt_skey *lo,
					const nbt_skey *hi, nbt_batch *b, nbt_copy_fn copy, void *ctx)
{
	nbt_skey	target = *sk;
	nbt_skey	from = *lo;
	nbt_skey	to = *hi;
	uint64_t	off;
	pm_error	err;

	/*
	 * A merge makes leaves that reach past where the caller's previous batch
	 * ended: the batch stops at sk, so batches stay disjoint and contiguous.
	 */
	if (backward)
	{
		if (pm_key_is_min(sk))
		{
			b->n = 0;
			b->low = b->high = PM_KEY_MIN;
			return;
		}
		target = pm_key_pred(sk);
		if (nbt_cmp(t, &target, &to) < 0)
			to = target;
	}
	else if (nbt_cmp(t, sk, &from) > 0)
		from = *sk;
	pm_epoch_enter(t->epoch);
	/* READ mode never helps, so it cannot fail */
	(void) nbt_find_leaf(t, &target, NBT_FIND_READ, &off, &err);
	collect(t, nbt_leaf_at(t, off), &from, &to, b);
	if (backward && nbt_cmp(t, &b->high, sk) > 0)
		b->high = *sk;
	else if (!backward && nbt_cmp(t, &b->low, sk) < 0)
		b->low = *sk;
	if (copy != NULL)
	{
		/* in the epoch section: a record may be retired once it is left */
		for (int i = 0; i < b->n; i++)
			copy_out(t, &b->e[i].sk, copy, ctx);
		copy_out(t, &b->low, copy, ctx);
		copy_out(t, &b->high, copy, ctx);
	}
	pm_epoch_exit(t->epoch);
}
