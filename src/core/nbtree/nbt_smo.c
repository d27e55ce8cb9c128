/*
 * nbt_smo.c
 *	  Structure modification of a leaf: copy, sync, link, then the parent
 *	  update; cooperative, so any process that meets the leaf can finish it.
 *
 * copy:   freeze the leaf (SMO bit in the bitmap: no more commits; FROZEN in
 *         next: no more relinking of its successor pointer), copy its live
 *         committed entries into one new leaf (compaction) or two (split at
 *         the median (key, rest)), persist the new PM blocks, publish with a
 *         CAS on leaf.copy.  Losers of the CAS free their private copies.
 *         A merge (asked for by nbt_request_merge) first claims the right
 *         sibling and copies it too: the new leaves then cover both.
 * sync:   replay deletes that hit the old leaf (or leaves) while it was
 *         being copied.
 * link:   the durability point.  CAS the predecessor's next, DRAM first and
 *         then PM (persisted), from the old leaf to the first new one.  A
 *         frozen predecessor is helped first, so no next pointer is lost to
 *         a concurrent copy.  New leaves are PENDING until this is done:
 *         writers that reach them help the SMO instead of committing into a
 *         block that PM does not reach yet.
 * parent: swap the parent's child pointer and insert the new separator
 *         (a merge drops the sibling's); then the old leaves are retired
 *         through epochs.
 * Every step is idempotent; the flags record what is done.
 *
 * Whoever starts an SMO (nbt_run_smo, nbt_compact_leaf) first reserves the
 * blocks the copy can need, so a full pool or DRAM tier fails the operation
 * before the leaf is frozen.  A frozen leaf that nobody can copy would stop
 * every insert into its key range until space came back.  In a full pool a
 * leaf with a slot to give back is rewritten into one new leaf instead of
 * split; a rewrite by VACUUM may use the tree's spare block (nbt_keep_spare),
 * and the old block it retires pays for the next rewrite.  That is how
 * VACUUM gives slots back when the filesystem has no room left.
 */
#include "nbt_internal.h"

#include <stdlib.h>
#include <string.h>

static void
free_private(nbt_tree *t, uint64_t *pm_blocks, uint64_t *dram_blocks, int n, uint64_t fence)
{
	pm_error	err;

	if (fence != 0)
		pm_free_block(&t->pm, fence, &err);
	for (int i = 0; i < n; i++)
	{
		if (pm_blocks[i])
			pm_free_block(&t->pm, pm_blocks[i], &err);
		if (dram_blocks[i])
		{
			pm_free_block(t->dram, dram_blocks[i], &err);
			pm_fetch_add(&nbt_droot_at(t)->leaves, -1);
		}
	}
}

/*
 * Blocks for the new leaves of one SMO, taken before the leaf is frozen,
 * and for a split of a tree that packs, the separator's record.
 */
typedef struct smo_spares
{
	uint64_t	pm_blocks[2];
	uint64_t	dram_blocks[2];
	uint64_t	fence;
} smo_spares;

/* A fence's record made from a packed entry: a pm_key_rec of at most NBT_PACKED_MAX bytes */
#define SMO_FENCE_SIZE	(sizeof(pm_key_rec) + NBT_PACKED_MAX)

static void
release_spares(nbt_tree *t, smo_spares *s)
{
	pm_error	err;

	if (s->fence)
		pm_free_block(&t->pm, s->fence, &err);

	for (int i = 0; i < 2; i++)
	{
		if (s->pm_blocks[i])
			pm_free_block(&t->pm, s->pm_blocks[i], &err);
		if (s->dram_blocks[i])
			pm_free_block(t->dram, s->dram_blocks[i], &err);
	}
}

/* Whether leaf l's block holds packed records: a split of it may need a fence record. */
static bool
holds_packed(nbt_leaf *l)
{
	return nbt_claim_bytes(pm_load(&l->claim)) > 0;
}

/*
 * Reserve the blocks of nleaves new leaves (1 or 2), and a fence record's
 * block for a split if packed; the first PM block may come from the tree's
 * spare if may_take_spare and no free one is left.  On failure nothing stays
 * reserved.
 */
static pm_errcode
reserve_leaves(nbt_tree *t, smo_spares *s, int nleaves, bool packed, bool may_take_spare,
			   pm_error *err)
{
	memset(s, 0, sizeof(*s));
	for (int i = 0; i < nleaves; i++)
	{
		s->pm_blocks[i] = pm_alloc_block(&t->pm, sizeof(nbt_kv), err);
		if (s->pm_blocks[i] == 0 && i == 0 && may_take_spare)
			s->pm_blocks[i] = __atomic_exchange_n(&nbt_droot_at(t)->spare_kv, 0, __ATOMIC_ACQ_REL);
		if (s->pm_blocks[i] == 0 ||
			(s->dram_blocks[i] = pm_alloc_block(t->dram, sizeof(nbt_leaf), err)) == 0)
		{
			release_spares(t, s);
			return err->code;
		}
	}
	if (nleaves == 2 && packed && (s->fence = pm_alloc_block(&t->pm, SMO_FENCE_SIZE, err)) == 0)
	{
		release_spares(t, s);
		return err->code;
	}
	return PM_OK;
}

void
nbt_keep_spare(nbt_tree *t)
{
	nbt_droot  *dr = nbt_droot_at(t);
	uint64_t	expected = 0;
	uint64_t	off;
	pm_error	err;

	if (pm_load(&dr->spare_kv) != 0)
		return;
	if (t->epoch != NULL)
		(void) pm_epoch_reclaim(t->epoch);
	off = pm_alloc_block(&t->pm, sizeof(nbt_kv), &err);
	if (off != 0 && !pm_cas(&dr->spare_kv, &expected, off))
		pm_free_block(&t->pm, off, &err);
}

/* A block for a new leaf: a reserved one if the caller has it, else a fresh one. */
static uint64_t
take_block(pm_alloc *a, uint64_t *spare, size_t size, pm_error *err)
{
	uint64_t	off = *spare;

	if (off == 0)
		return pm_alloc_block(a, size, err);
	*spare = 0;
	return off;
}

/* The next live slot of leaf l among *bits, which it takes from them, or -1; *val its val. */
static int
next_live_slot(nbt_tree *t, nbt_leaf *l, uint64_t *bits, uint64_t *val)
{
	nbt_kv	   *kv = nbt_kv_at(t, l->kv);

	while (*bits)
	{
		int			pos = __builtin_ctzll(*bits);

		*bits &= *bits - 1;
		*val = pm_load(&kv->slot[pos].val);
		if (nbt_val_live(*val))
			return pos;
	}
	return -1;
}

/* Room the live committed entries of leaf l take (a snapshot). */
static uint32_t
leaf_live_room(nbt_tree *t, nbt_leaf *l)
{
	uint64_t	bits = pm_load(&l->bitmap) & NBT_SLOT_BITS;
	uint32_t	room = 0;
	uint64_t	val;
	int			pos;

	while ((pos = next_live_slot(t, l, &bits, &val)) >= 0)
	{
		nbt_skey	sk = nbt_slot_entry(l->kv, pos, 0, val);

		room += nbt_entry_room(t, &sk);
	}
	return room;
}

/* Room a leaf's good claims took, dead and abandoned slots included. */
static uint32_t
leaf_claimed_room(nbt_leaf *l)
{
	uint64_t	claim = pm_load(&l->claim);
	uint32_t	slots = nbt_claim_slots(claim);
	uint32_t	bytes = nbt_claim_bytes(claim);

	if (slots > l->slot_cap)
		slots = l->slot_cap;
	if (bytes > nbt_kv_packed_room(l->slot_cap))
		bytes = nbt_kv_packed_room(l->slot_cap);
	return slots * (uint32_t) sizeof(nbt_pm_slot) + bytes;
}

/* Fill a new leaf (PM block + DRAM meta) with entries e[0..n). */
static void
fill_leaf(nbt_tree *t, uint64_t kv_off, uint64_t leaf_off, const nbt_entry *e, int n,
		  bool wants_records, const nbt_skey *low, const nbt_skey *high, uint64_t next_kv,
		  uint64_t next_leaf, uint64_t origin, uint64_t birth_right)
{
	nbt_kv	   *kv = nbt_kv_at(t, kv_off);
	nbt_leaf   *l = nbt_leaf_at(t, leaf_off);
	uint32_t	bytes = 0;
	uint32_t	slot_cap;

	memset(kv, 0, sizeof(*kv));
	kv->next = next_kv;
	kv->low = *low;
	pm_assert(n <= NBT_LEAF_CAP);
	for (int i = 0; i < n; i++)
	{
		pm_key_view v;

		/* an SMO's leaves partition the old key space: each entry within its new fences */
		pm_assert(nbt_cmp(t, low, &e[i].sk) <= 0 && nbt_cmp(t, &e[i].sk, high) < 0);
		kv->slot[i].key = e[i].sk.key;
		kv->slot[i].val = e[i].sk.rest;
		/* a packed entry is packed again: the old block goes with the old leaf */
		if (e[i].sk.rest & PM_REST_PACKED && nbt_rec_packs(t, e[i].sk.rest, &v))
		{
			kv->slot[i].val = nbt_rec_pack(kv, i, bytes, &v);
			bytes += nbt_packed_size(v.len);
		}
	}
	slot_cap = nbt_block_slots(t, (uint32_t) n, bytes, wants_records);
	kv->slot_cap = t->packed ? slot_cap : 0;
	pm_flush(&t->pool->persist, kv, sizeof(*kv));

	memset(l, 0, sizeof(*l));
	l->slot_cap = (uint8_t) slot_cap;
	l->kv = kv_off;
	l->next = next_leaf;
	l->bitmap = n == 64 ? ~UINT64_C(0) : (UINT64_C(1) << n) - 1;
	l->claim = nbt_claim_of((uint32_t) n, bytes);
	l->flags = NBT_PENDING;
	l->origin = origin;
	l->birth_right = birth_right;
	l->low = *low;
	l->high = *high;
	for (int i = 0; i < n; i++)
		l->fp[i] = nbt_fingerprint(e[i].sk.key);
}

/*
 * The right sibling this SMO of x absorbs, or 0.  A merge is asked for in
 * x.merge_right (under the parent's lock, before or just after the SMO bit);
 * the first helper that finds no request seals it.  A requested sibling is
 * claimed with the CAS that freezes it, which fails if it is in an SMO of
 * its own.  Every helper gets the same answer: the sibling's MERGED bit is
 * fixed once its SMO bit is set, and only a helper of x sets it.
 */
static uint64_t
merge_partner(nbt_tree *t, nbt_leaf *x, uint64_t off)
{
	uint64_t	asked = 0;
	uint64_t	y_off;
	nbt_leaf   *y;
	uint64_t	b;

	if (pm_cas(&x->merge_right, &asked, NBT_MERGE_SEALED) || asked == NBT_MERGE_SEALED)
		return 0;
	if (!(asked & NBT_MERGE_TAKEN))
	{
		/*
		 * x is frozen, so its live room only shrinks: at most half a block
		 * now, the pair's copy fits two leaves whatever y holds.  The first
		 * helper's answer is every helper's.
		 */
		uint64_t	answer = leaf_live_room(t, x) <= NBT_KV_ROOM / 2 ?
			asked | NBT_MERGE_TAKEN : NBT_MERGE_SEALED;

		if (pm_cas(&x->merge_right, &asked, answer))
			asked = answer;
		if (asked == NBT_MERGE_SEALED)
			return 0;
	}
	y_off = asked & ~NBT_MERGE_TAKEN;
	y = nbt_leaf_at(t, y_off);
	/* before the claim: y's helpers follow merge_left once they see MERGED */
	pm_store(&y->merge_left, off);
	b = pm_load(&y->bitmap);
	while (!(b & NBT_SMO_BIT) && !pm_cas(&y->bitmap, &b, b | NBT_SMO_BIT | NBT_MERGED))
		;
	return (pm_load(&y->bitmap) & NBT_MERGED) ? y_off : 0;
}

/* Append the live committed entries of the frozen leaf l to e; returns their slots. */
static uint64_t
gather_live(nbt_tree *t, nbt_leaf *l, nbt_entry *e, int *n)
{
	nbt_kv	   *kv = nbt_kv_at(t, l->kv);
	uint64_t	bits = pm_load(&l->bitmap) & NBT_SLOT_BITS;
	uint64_t	taken = 0;
	uint64_t	val;
	int			pos;

	while ((pos = next_live_slot(t, l, &bits, &val)) >= 0)
	{
		e[(*n)++].sk = nbt_slot_entry(l->kv, pos, pm_load_relaxed(&kv->slot[pos].key), val);
		taken |= UINT64_C(1) << pos;
	}
	return taken;
}

/*
 * Copy x (and the right sibling it absorbs, if any) into one new leaf, or
 * two split at the median when more than half a leaf's worth is live.
 */
static pm_errcode
smo_copy(nbt_tree *t, uint64_t off, smo_spares *spares, uint64_t *copy_out, pm_error *err)
{
	nbt_leaf   *x = nbt_leaf_at(t, off);
	nbt_droot  *dr = nbt_droot_at(t);
	nbt_entry	e[2 * NBT_LEAF_CAP];
	int			n = 0;
	uint64_t	y_off;
	nbt_leaf   *last;			/* the leaf whose high fence and next the copy takes */
	uint64_t	next_leaf;
	uint64_t	next_kv;
	uint64_t	copied;
	uint64_t	copied_right = 0;
	uint64_t	pm_blocks[2] = {0, 0};
	uint64_t	dram_blocks[2] = {0, 0};
	uint64_t	fence = 0;		/* the separator's own record, if made here */
	uint32_t	room[2 * NBT_LEAF_CAP];
	uint32_t	total = 0;
	uint32_t	left_room = 0;
	bool		wants;
	int			nleaves;
	int			nleft;
	uint64_t	expected = 0;

	pm_fetch_or(&x->next, NBT_FROZEN);
	y_off = merge_partner(t, x, off);
	last = x;
	if (y_off)
	{
		last = nbt_leaf_at(t, y_off);
		pm_fetch_or(&last->next, NBT_FROZEN);
	}
	next_leaf = pm_load(&last->next) & ~NBT_FROZEN;
	next_kv = next_leaf ? nbt_leaf_at(t, next_leaf)->kv : 0;

	/* the committed sets are fixed: the SMO bits are set */
	copied = gather_live(t, x, e, &n);
	if (y_off)
		copied_right = gather_live(t, last, e, &n);
	nbt_sort_entries(t, e, n);

	/*
	 * The copy partitions the old leaves' key space, so every entry lies
	 * within their fences.  One outside them is damage the pool brought (a
	 * rebuild reads fences and slots, not every entry against its fences):
	 * refuse the SMO before anything changes, as every insert there will.
	 */
	if (n > 0 && (nbt_cmp(t, &x->low, &e[0].sk) > 0 || nbt_cmp(t, &e[n - 1].sk, &last->high) >= 0))
		return pm_error_set(err, PM_ERR_CORRUPT, 0,
							"pool file \"%s\": the leaf at offset %llu holds an entry outside its key range",
							t->pool->path, (unsigned long long) off);
	for (int i = 0; i < n; i++)
		total += room[i] = nbt_entry_room(t, &e[i].sk);
	wants = ((pm_load(&x->flags) | pm_load(&last->flags)) & NBT_WANTS_RECORDS) != 0;
	nleaves = total > NBT_KV_ROOM / 2 ? 2 : 1;
	/* a starter that could reserve one leaf only (a full pool): it fits, see nbt_run_smo */
	if (nleaves == 2 && total < NBT_KV_ROOM && spares->pm_blocks[0] != 0 &&
		spares->pm_blocks[1] == 0)
		nleaves = 1;
	/* two leaves split the room in half: the left one takes entries up to half of it */
	nleft = n;
	if (nleaves == 2)
		for (nleft = 0; nleft < n - 1 && (nleft == 0 || left_room < (total + 1) / 2); nleft++)
			left_room += room[nleft];
	else
		left_room = total;
	/*
	 * A leaf's entries fit its block and a merge's copy two (merge_partner),
	 * as the rebuild checked every block: else the pool was damaged.
	 */
	if (left_room > NBT_KV_ROOM || total - left_room > NBT_KV_ROOM)
		return pm_error_set(err, PM_ERR_CORRUPT, 0,
							"pool file \"%s\": the entries of the leaf at offset %llu do not fit a copy",
							t->pool->path, (unsigned long long) off);

	for (int i = 0; i < nleaves; i++)
	{
		pm_blocks[i] = take_block(&t->pm, &spares->pm_blocks[i], sizeof(nbt_kv), err);
		if (pm_blocks[i] == 0)
			break;
		dram_blocks[i] = take_block(t->dram, &spares->dram_blocks[i], sizeof(nbt_leaf), err);
		if (dram_blocks[i] == 0)
			break;
		pm_fetch_add(&dr->leaves, 1);
	}
	if (pm_blocks[nleaves - 1] == 0 || dram_blocks[nleaves - 1] == 0)
	{
		free_private(t, pm_blocks, dram_blocks, nleaves, 0);
		return err->code;
	}

	if (nleaves == 1)
		fill_leaf(t, pm_blocks[0], dram_blocks[0], e, n, wants, &x->low, &last->high, next_kv,
				  next_leaf, off, 0);
	else
	{
		nbt_skey	sep = nbt_separator(&e[nleft - 1].sk, &e[nleft].sk);

		/* a fence outlives the block of a packed entry: it gets a record of its own */
		if (pm_rest_is_wide(sep.rest) && (sep.rest & PM_REST_PACKED))
		{
			fence = nbt_rec_fence(&t->pm, t->pool, &spares->fence, sep.rest, err);
			if (fence == 0)
			{
				free_private(t, pm_blocks, dram_blocks, nleaves, 0);
				return err->code;
			}
			sep.rest = fence;
		}

		fill_leaf(t, pm_blocks[0], dram_blocks[0], e, nleft, wants, &x->low, &sep, pm_blocks[1],
				  dram_blocks[1], off, dram_blocks[1]);
		fill_leaf(t, pm_blocks[1], dram_blocks[1], e + nleft, n - nleft, wants, &sep, &last->high,
				  next_kv, next_leaf, off, 0);
	}
	pm_drain(&t->pool->persist);
	{
		nbt_leaf   *first = nbt_leaf_at(t, dram_blocks[0]);

		first->copied = copied;
		first->absorbed = y_off;
		first->copied_right = copied_right;
	}

	if (!pm_cas(&x->copy, &expected, dram_blocks[0]))
	{
		/* another helper published first; ours was never visible */
		free_private(t, pm_blocks, dram_blocks, nleaves, fence & PM_REST_ADDR);
		*copy_out = expected;
		return PM_OK;
	}
	pm_fetch_add(y_off ? &dr->smo_merges : nleaves == 2 ? &dr->smo_splits : &dr->smo_compactions, 1);
	pm_fetch_add(&dr->leaves, y_off ? -2 : -1);	/* the old leaves go */
	*copy_out = dram_blocks[0];
	return PM_OK;
}

/*
 * Replay, in the new leaves, the deletes that reached an old one (x, or
 * the sibling it absorbed) after the copy.  Only slots the copy took
 * (copied) count: a slot already dead then may share its (key, rest) with
 * a live later incarnation (a TID reused after VACUUM) that the copy did
 * take.
 */
static void
smo_sync(nbt_tree *t, nbt_leaf *x, uint64_t copied, nbt_leaf *left, nbt_leaf *right)
{
	nbt_kv	   *xkv = nbt_kv_at(t, x->kv);
	uint64_t	bits = copied;

	while (bits)
	{
		int			pos = __builtin_ctzll(bits);
		uint64_t	val = pm_load(&xkv->slot[pos].val);

		bits &= bits - 1;
		if (val & NBT_VAL_DEAD)
		{
			nbt_skey	sk = nbt_slot_entry(x->kv, pos, pm_load_relaxed(&xkv->slot[pos].key), val);

			(void) nbt_leaf_mark_dead(t, (right && nbt_cmp(t, &sk, &right->low) >= 0) ? right : left,
									  &sk);
		}
	}
}

/* Link the first new leaf in place of the old one: the durability point. */
static pm_errcode
smo_link(nbt_tree *t, uint64_t off, uint64_t left_off, pm_error *err)
{
	nbt_leaf   *x = nbt_leaf_at(t, off);
	nbt_leaf   *left = nbt_leaf_at(t, left_off);

	for (unsigned attempt = 0;; attempt++)
	{
		uint64_t	p_off;
		nbt_leaf   *p;
		uint64_t	n;
		uint64_t	*pm_next;
		uint64_t	expected;
		nbt_skey	pred;
		pm_errcode	rc;

		/*
		 * Another helper linked it (our flags were read before): the new leaf
		 * may even have been replaced since, so the predecessor would point
		 * to neither leaf.
		 */
		if (pm_load(&x->flags) & NBT_LINK_DONE)
			return PM_OK;
		if (pm_key_is_min(&x->low))
		{
			/* the first leaf: its predecessor is the tree's head */
			expected = off;
			(void) pm_cas(&nbt_droot_at(t)->first, &expected, left_off);
			pm_next = &nbt_meta(t)->head;
			expected = x->kv;
			(void) pm_cas(pm_next, &expected, left->kv);
			pm_persist(&t->pool->persist, pm_next, sizeof(uint64_t));
			return PM_OK;
		}
		pred = pm_key_pred(&x->low);
		rc = nbt_find_leaf(t, &pred, NBT_FIND_WRITE, &p_off, err);
		if (rc != PM_OK)
			return rc;
		p = nbt_leaf_at(t, p_off);
		n = pm_load(&p->next);
		if (n & NBT_FROZEN)
		{
			/* the predecessor is being copied: finish that, then link its replacement */
			rc = nbt_help_smo(t, p_off, err);
			if (rc != PM_OK)
				return rc;
			continue;
		}
		if (n == off)
		{
			if (!pm_cas(&p->next, &n, left_off))
				continue;
		}
		else if (n != left_off)
		{
			if (attempt > 100000)
				return pm_error_set(err, PM_ERR_CORRUPT, 0,
									"nbtree: predecessor of a leaf in SMO does not point to it");
			pm_spin_delay(attempt);
			continue;
		}
		pm_next = &nbt_kv_at(t, p->kv)->next;
		expected = x->kv;
		(void) pm_cas(pm_next, &expected, left->kv);
		pm_persist(&t->pool->persist, pm_next, sizeof(uint64_t));
		return PM_OK;
	}
}


/* Run or finish the SMO of leaf off; the copy takes spares' blocks first. */
static pm_errcode
help_smo(nbt_tree *t, uint64_t off, smo_spares *spares, pm_error *err)
{
	nbt_leaf   *x = nbt_leaf_at(t, off);
	uint64_t	copy;
	uint64_t	right_off;
	uint64_t	y_off;
	nbt_leaf   *left;
	nbt_leaf   *right;
	nbt_leaf   *y;
	uint32_t	flags;
	pm_errcode	rc;

	/* claimed by the left sibling's merge: that SMO replaces this leaf too */
	if (pm_fetch_or(&x->bitmap, NBT_SMO_BIT) & NBT_MERGED)
		return help_smo(t, pm_load(&x->merge_left), spares, err);
	copy = pm_load(&x->copy);
	if (copy == 0)
	{
		rc = smo_copy(t, off, spares, &copy, err);
		if (rc != PM_OK)
			return rc;
	}
	/* a frozen leaf, a published copy, the old leaf still linked */
	pm_smo_pause("nbtree_pm leaf SMO");
	left = nbt_leaf_at(t, copy);
	right_off = left->birth_right;
	right = right_off ? nbt_leaf_at(t, right_off) : NULL;
	y_off = left->absorbed;
	y = y_off ? nbt_leaf_at(t, y_off) : NULL;
	if (y)
	{
		uint64_t	expected = 0;

		/* before y's sync: deletes that reach y from now on follow it */
		(void) pm_cas(&y->copy, &expected, copy);
	}

	flags = pm_load(&x->flags);
	if (!(flags & NBT_SYNC_DONE))
	{
		smo_sync(t, x, left->copied, left, right);
		if (y)
		{
			smo_sync(t, y, left->copied_right, left, right);
			/* readers that reach y resolve to the copy from now on */
			pm_fetch_or(&y->flags, NBT_SYNC_DONE);
		}
		pm_fetch_or(&x->flags, NBT_SYNC_DONE);
	}
	if (!(flags & NBT_LINK_DONE))
	{
		rc = smo_link(t, off, copy, err);
		if (rc != PM_OK)
			return rc;
		pm_fetch_or(&x->flags, NBT_LINK_DONE);
	}
	/*
	 * Idempotent, and done by every helper once the link is done: a helper
	 * that finds LINK_DONE set must not depend on the linker (which may be
	 * preempted or dead) to clear PENDING, or writers that reach the new
	 * leaves spin in nbt_find_leaf until it does.
	 */
	pm_fetch_and(&left->flags, (uint8_t) ~NBT_PENDING);
	if (right)
		pm_fetch_and(&right->flags, (uint8_t) ~NBT_PENDING);
	if (!(flags & NBT_PARENT_DONE))
	{
		rc = nbt_replace_child(t, &x->low, off, copy, right ? &right->low : NULL, right_off,
							   y_off, err);
		if (rc != PM_OK)
			return rc;
		if (!(pm_fetch_or(&x->flags, NBT_PARENT_DONE) & NBT_PARENT_DONE))
		{
			nbt_rec_retire_dropped(t, x, left->copied, y, left->copied_right);
			pm_epoch_retire(t->epoch, t->space_pm, t->tag_pm, x->kv);
			pm_epoch_retire(t->epoch, t->space_dram, 0, off);
			if (y)
			{
				pm_epoch_retire(t->epoch, t->space_pm, t->tag_pm, y->kv);
				pm_epoch_retire(t->epoch, t->space_dram, 0, y_off);
			}
		}
	}
	return PM_OK;
}

/* Help an SMO that someone else started (it reserved what the copy needs). */
pm_errcode
nbt_help_smo(nbt_tree *t, uint64_t off, pm_error *err)
{
	smo_spares	none = {{0, 0}, {0, 0}, 0};

	return help_smo(t, off, &none, err);
}

/*
 * Start (or join) the SMO of leaf off with the blocks for its copy in hand,
 * for an entry that needs this much room.
 */
pm_errcode
nbt_run_smo(nbt_tree *t, uint64_t off, uint32_t need, pm_error *err)
{
	smo_spares	spares;
	bool		packed = holds_packed(nbt_leaf_at(t, off));
	pm_errcode	rc = reserve_leaves(t, &spares, 2, packed, false, err);

	/*
	 * A full pool: a leaf with room to give back for the entry is rewritten
	 * into one new leaf.  It is full, so nothing commits into it any more,
	 * and the copy takes less than a leaf's room.
	 */
	if (pm_errcode_is_out_of_space(rc) &&
		leaf_live_room(t, nbt_leaf_at(t, off)) + need <= NBT_KV_ROOM)
		rc = reserve_leaves(t, &spares, 1, false, false, err);
	if (rc != PM_OK)
		return rc;
	rc = help_smo(t, off, &spares, err);
	release_spares(t, &spares);
	return rc;
}

/*
 * Whether the SMO of leaf x may still absorb its right sibling y: x asked
 * for it (a leaf claimed by its own left sibling never runs its request)
 * and y is not in an SMO of its own.
 */
bool
nbt_merge_may_join(nbt_tree *t, uint64_t x_off, uint64_t y_off)
{
	nbt_leaf   *x = nbt_leaf_at(t, x_off);
	uint64_t	yb;

	if ((pm_load(&x->bitmap) & NBT_MERGED) ||
		(pm_load(&x->merge_right) & ~NBT_MERGE_TAKEN) != y_off)
		return false;
	yb = pm_load(&nbt_leaf_at(t, y_off)->bitmap);
	return !(yb & NBT_SMO_BIT) || (yb & NBT_MERGED);
}

/*
 * A merge of two leaves whose live entries together take at most this much
 * room.  A split leaves more than half a block's room in its two halves,
 * and a merged leaf needs more than that live and a full leaf to split
 * again: each direction takes at least a dozen operations on the pair, so
 * merges and splits cannot chase each other.
 */
#define NBT_MERGE_MAX_ROOM	(NBT_KV_ROOM / 3)

/* One attempt of nbt_compact_leaf, inside an epoch section. */
static pm_errcode
compact_once(nbt_tree *t, const nbt_skey *sk, bool *compacted, pm_error *err)
{
	uint64_t	off;
	pm_errcode	rc = nbt_find_leaf(t, sk, NBT_FIND_WRITE, &off, err);
	nbt_leaf   *l;
	uint32_t	claimed;
	uint32_t	live;
	uint64_t	y_off;
	bool		may_merge;
	bool		rewrite;
	smo_spares	spares;

	if (rc != PM_OK)
		return rc;
	l = nbt_leaf_at(t, off);
	claimed = leaf_claimed_room(l);
	live = leaf_live_room(t, l);
	y_off = pm_load(&l->next);
	/* a frozen next: the leaf's SMO has begun meanwhile */
	may_merge = y_off != 0 && !(y_off & NBT_FROZEN) &&
		live + leaf_live_room(t, nbt_leaf_at(t, y_off)) <= NBT_MERGE_MAX_ROOM;
	/* dead and abandoned slots are reclaimed only by rewriting the leaf */
	rewrite = claimed > 0 && live * 2 <= claimed;
	if (!may_merge && !rewrite)
		return PM_OK;
	/* before the merge request: that freezes the leaf */
	/* the sibling may take packed records until the merge claims it: the tree's flag decides */
	rc = reserve_leaves(t, &spares, 2,
						holds_packed(l) || (may_merge && pm_load(&nbt_droot_at(t)->holds_packed)),
						false, err);
	if (pm_errcode_is_out_of_space(rc) && rewrite)
	{
		/*
		 * A full pool: rewrite into one leaf, no merge (concurrent inserts
		 * could make a pair's copy outgrow it).  The leaf has a dead or
		 * abandoned slot, so its copy fits one leaf.
		 */
		rc = reserve_leaves(t, &spares, 1, false, true, err);
		may_merge = false;
	}
	if (rc != PM_OK)
		return rc;
	if ((may_merge && nbt_request_merge(t, off, y_off)) || rewrite)
	{
		rc = help_smo(t, off, &spares, err);
		*compacted = rc == PM_OK;
	}
	release_spares(t, &spares);
	return rc;
}

pm_errcode
nbt_compact_leaf(nbt_tree *t, const nbt_skey *sk, bool *compacted, pm_error *err)
{
	pm_errcode	rc;

	*compacted = false;
	pm_epoch_enter(t->epoch);
	rc = compact_once(t, sk, compacted, err);
	pm_epoch_exit(t->epoch);
	if (pm_errcode_is_out_of_space(rc))
	{
		/* the blocks the previous rewrites retired become free outside the epoch section */
		(void) pm_epoch_reclaim(t->epoch);
		pm_epoch_enter(t->epoch);
		rc = compact_once(t, sk, compacted, err);
		pm_epoch_exit(t->epoch);
	}
	return rc;
}
