/*
 * nbt_rec.c
 *	  Wide entries' records (README: "Wide entries", "Packed records"):
 *	  storing a caller's record in the pool, as a block of its own or packed
 *	  into a leaf's block, checking the records a pool names (a rebuild
 *	  trusts nothing it reads), marking them for the allocator's recovery,
 *	  and retiring the ones an SMO drops.
 */
#include "nbt_internal.h"

#include <string.h>

/* A record at most one allocator block, its ordering bytes within its data, its rest an entry's. */
static bool
rec_fits(const pm_key_rec *r)
{
	return r->keylen <= r->len && r->len <= NBT_REC_DATA_MAX &&
		r->rest != 0 && r->rest <= NBT_REST_MAX;
}

/*
 * Whether rest may be an entry's that a caller inserts or bulk-loads: a
 * narrow tie-breaker, or a local record that fits.
 */
bool
nbt_input_rest_valid(uint64_t rest, pm_error *err)
{
	const pm_key_rec *r;

	if (!pm_rest_is_wide(rest))
	{
		if (rest != 0 && rest <= NBT_REST_MAX)
			return true;
		pm_error_set(err, PM_ERR_INVALID, 0, "entry tie-breaker out of range");
		return false;
	}
	if (!(rest & PM_REST_LOCAL) || (rest & (PM_REST_BELOW | PM_REST_ABOVE)))
	{
		pm_error_set(err, PM_ERR_INVALID, 0, "a wide entry to store must name a local record");
		return false;
	}
	r = pm_key_rec_of(NULL, rest);
	if (r->len > NBT_REC_DATA_MAX)
	{
		pm_error_set(err, PM_ERR_LIMIT, 0, "entry of %u bytes exceeds the maximum of %u bytes",
					 r->len, (unsigned) NBT_REC_DATA_MAX);
		return false;
	}
	if (!rec_fits(r))
	{
		pm_error_set(err, PM_ERR_INVALID, 0, "wide entry record is malformed");
		return false;
	}
	return true;
}

uint64_t
nbt_rec_store(pm_alloc *a, pm_pool *pool, uint64_t rest, pm_error *err)
{
	const pm_key_rec *r = pm_key_rec_of(NULL, rest);
	size_t		size = pm_key_rec_size(r);
	uint64_t	off = pm_alloc_block(a, size, err);
	void	   *dst;

	if (off == 0)
		return 0;
	dst = pm_pool_addr(pool, off);
	memcpy(dst, r, size);
	pm_persist(&pool->persist, dst, size);
	return PM_REST_WIDE | off;
}

bool
nbt_rec_packs(const nbt_tree *t, uint64_t rest, pm_key_view *v)
{
	if (!t->packed || !pm_rest_is_wide(rest))
		return false;
	*v = pm_key_view_of(t->pool, rest);
	return v->len <= NBT_PACKED_MAX;
}

uint64_t
nbt_rec_pack(nbt_kv *kv, int pos, uint32_t bytes_before, const pm_key_view *v)
{
	pm_key_packed *p = nbt_packed_at(kv, bytes_before, nbt_packed_size(v->len));
	uint64_t	dist = (uint64_t) ((char *) p - (char *) &kv->slot[pos]);

	p->keylen = (uint8_t) v->keylen;
	p->len = (uint8_t) v->len;
	memcpy(p->data, v->data, v->len);
	return NBT_VAL_PACKED | dist << PM_PACKED_DIST_SHIFT | v->rest;
}

uint32_t
nbt_block_slots(const nbt_tree *t, uint32_t n, uint32_t bytes, bool wants_records)
{
	uint32_t	slots = NBT_LEAF_CAP;
	uint32_t	keep_one = nbt_packed_size(NBT_PACKED_MAX);
	uint32_t	most;

	if (!t->packed)
		return NBT_LEAF_CAP;
	if (n > 0)
		slots = (uint32_t) ((uint64_t) n * NBT_KV_ROOM / (n * sizeof(nbt_pm_slot) + bytes));
	if (bytes > 0 || wants_records)
	{
		/* without that room only n + 1 slots: what the entry that asked for this copy needs */
		most = bytes + keep_one <= NBT_KV_ROOM ?
			(uint32_t) ((NBT_KV_ROOM - bytes - keep_one) / sizeof(nbt_pm_slot)) : 0;
		if (slots > most)
			slots = most;
	}
	if (slots < n + 1)
		slots = n + 1;
	/* the entries must fit, whatever the room left for more */
	most = (uint32_t) ((NBT_KV_ROOM - bytes) / sizeof(nbt_pm_slot));
	if (slots > most)
		slots = most;
	if (slots > NBT_LEAF_CAP)
		slots = NBT_LEAF_CAP;
	pm_assert(slots >= n);
	return slots;
}

uint32_t
nbt_entry_room(const nbt_tree *t, const nbt_skey *sk)
{
	if (pm_rest_is_wide(sk->rest) && (sk->rest & PM_REST_PACKED))
		return (uint32_t) sizeof(nbt_pm_slot) + nbt_packed_size(pm_key_view_of(t->pool, sk->rest).len);
	return (uint32_t) sizeof(nbt_pm_slot);
}

const pm_key_rec *
nbt_rec_whole(const pm_pool *pool, uint64_t rest, nbt_rec_buf *buf)
{
	pm_key_rec *r = (pm_key_rec *) buf->words;
	pm_key_view v;

	if (!(rest & PM_REST_PACKED))
		return pm_key_rec_of(pool, rest);
	v = pm_key_view_of(pool, rest);
	r->rest = v.rest;
	r->keylen = v.keylen;
	r->len = v.len;
	memcpy(r->data, v.data, v.len);
	return r;
}

uint64_t
nbt_rec_fence(pm_alloc *a, pm_pool *pool, uint64_t *spare, uint64_t rest, pm_error *err)
{
	nbt_rec_buf buf;
	const pm_key_rec *r = nbt_rec_whole(pool, rest, &buf);
	size_t		size = pm_key_rec_size(r);
	uint64_t	off = *spare;
	void	   *dst;

	if (off != 0)
		*spare = 0;
	else if ((off = pm_alloc_block(a, size, err)) == 0)
		return 0;
	dst = pm_pool_addr(pool, off);
	memcpy(dst, r, size);
	pm_flush(&pool->persist, dst, size);
	return PM_REST_WIDE | off;
}

static bool
nbt_rec_valid(const pm_pool *pool, uint64_t rest)
{
	uint64_t	off = rest & PM_REST_ADDR;
	const pm_key_rec *r;

	if ((rest & ~(PM_REST_WIDE | PM_REST_ADDR)) != 0 || off < PM_POOL_HEADER_SIZE ||
		off % (UINT64_C(1) << PM_ALLOC_MIN_SHIFT) != 0 ||
		!pm_pool_has_range(pool, off, sizeof(*r)))
		return false;
	r = pm_pool_addr(pool, off);
	return rec_fits(r) && pm_pool_has_range(pool, off, pm_key_rec_size(r));
}

/*
 * Whether a block's slots and packed records are as inserts leave them:
 * its slots within NBT_LEAF_CAP (all of them where the tree does not pack),
 * each record within the block's room for records, its lengths and rest an
 * entry's, and all of them within that room.  Then nothing a slot names
 * reaches outside its block, and a copy of its entries fits a leaf.
 */
static bool
packed_records_fit(const nbt_kv *kv, bool packed)
{
	uint32_t	slots = nbt_kv_slots(kv);
	uint64_t	bytes = 0;

	if (kv->slot_cap > NBT_LEAF_CAP || (!packed && kv->slot_cap != 0))
		return false;
	for (uint32_t pos = 0; pos < slots; pos++)
	{
		uint64_t	val = kv->slot[pos].val;
		size_t		at;
		const pm_key_packed *p;

		if (!(val & NBT_VAL_PACKED))
			continue;
		if (!packed || (val & PM_REST_WIDE))
			return false;
		at = NBT_KV_HEADER + pos * sizeof(nbt_pm_slot) + pm_packed_dist(val);
		if (at < NBT_KV_HEADER + slots * sizeof(nbt_pm_slot) ||
			at + sizeof(pm_key_packed) > sizeof(nbt_kv))
			return false;
		p = (const pm_key_packed *) ((const char *) kv + at);
		if (p->keylen > p->len || p->len > NBT_PACKED_MAX ||
			at + nbt_packed_size(p->len) > sizeof(nbt_kv) || (val & PM_PACKED_REST_MASK) == 0)
			return false;
		bytes += nbt_packed_size(p->len);
	}
	return bytes <= nbt_kv_packed_room(slots);
}

/*
 * Check the records a block names (its low fence's, its slots', packed ones
 * only where the tree packs); *any_wide (if given) set if it names a block
 * of its own.
 */
pm_errcode
nbt_rec_check_kv(const pm_pool *pool, uint64_t kv_off, bool packed, bool *any_wide,
				 pm_error *err)
{
	const nbt_kv *kv = pm_pool_addr(pool, kv_off);

	if (!packed_records_fit(kv, packed))
		return pm_error_set(err, PM_ERR_CORRUPT, 0,
							"pool file \"%s\": leaf block %llu holds damaged slots or packed records",
							pool->path, (unsigned long long) kv_off);
	for (int pos = -1; pos < (int) nbt_kv_slots(kv); pos++)
	{
		uint64_t	rest = pos < 0 ? kv->low.rest : kv->slot[pos].val & NBT_VAL_REST;

		if (!pm_rest_is_wide(rest))
			continue;
		if (!nbt_rec_valid(pool, rest))
			return pm_error_set(err, PM_ERR_CORRUPT, 0,
								"pool file \"%s\": leaf block %llu names an invalid record",
								pool->path, (unsigned long long) kv_off);
		if (any_wide)
			*any_wide = true;
	}
	return PM_OK;
}

pm_errcode
nbt_rec_mark_kv(pm_alloc *a, const pm_pool *pool, uint64_t kv_off, pm_error *err)
{
	const nbt_kv *kv = pm_pool_addr(pool, kv_off);
	bool		low_in_slot = false;
	pm_errcode	rc = PM_OK;

	for (int pos = 0; pos < (int) nbt_kv_slots(kv) && rc == PM_OK; pos++)
	{
		uint64_t	val = kv->slot[pos].val;
		uint64_t	rest = val & NBT_VAL_REST;

		if (val == 0 || !pm_rest_is_wide(rest))
			continue;
		low_in_slot |= rest == kv->low.rest;
		rc = pm_alloc_mark(a, rest & PM_REST_ADDR, err);
	}
	/* a low fence whose entry is gone keeps its record */
	if (rc == PM_OK && pm_rest_is_wide(kv->low.rest) && !low_in_slot)
		rc = pm_alloc_mark(a, kv->low.rest & PM_REST_ADDR, err);
	return rc;
}

/*
 * Add the wide rests of l's dead slots, which the copy did not take: the
 * committed ones, and those a rebuild found dead (it commits only live
 * slots).  A slot neither committed nor dead was abandoned by an insert
 * that stored the same record again elsewhere.
 */
static void
add_dropped(nbt_tree *t, nbt_leaf *l, uint64_t copied, uint64_t *rests, int *n)
{
	nbt_kv	   *kv = nbt_kv_at(t, l->kv);
	uint64_t	committed = pm_load(&l->bitmap) & NBT_SLOT_BITS;

	for (int pos = 0; pos < (int) nbt_kv_slots(kv); pos++)
	{
		uint64_t	val = pm_load(&kv->slot[pos].val);
		uint64_t	rest = val & NBT_VAL_REST;

		if (((copied >> pos) & 1) || !(((committed >> pos) & 1) || (val & NBT_VAL_DEAD)))
			continue;
		if (pm_rest_is_wide(rest))
			rests[(*n)++] = rest;
	}
}

/* Whether a slot of l among bits names rest. */
static bool
slots_name(nbt_tree *t, nbt_leaf *l, uint64_t bits, uint64_t rest)
{
	nbt_kv	   *kv = nbt_kv_at(t, l->kv);

	while (bits)
	{
		int			pos = __builtin_ctzll(bits);

		bits &= bits - 1;
		if ((pm_load(&kv->slot[pos].val) & NBT_VAL_REST) == rest)
			return true;
	}
	return false;
}

/*
 * Once the SMO of x (absorbing y, if any) has replaced them in the parent:
 * retire the records its copy dropped.  Those are the dead slots' records,
 * except x's low fence, which the first new leaf keeps, and with a merge,
 * y's low fence, which no leaf or separator names any more unless the copy
 * took its entry.  Every record has one slot and the fence's is taken once,
 * so nothing is retired twice.
 */
void
nbt_rec_retire_dropped(nbt_tree *t, nbt_leaf *x, uint64_t copied, nbt_leaf *y,
					   uint64_t copied_right)
{
	uint64_t	rests[2 * NBT_LEAF_CAP + 1];
	int			n = 0;

	add_dropped(t, x, copied, rests, &n);
	if (y != NULL)
	{
		int			first_of_y = n;
		bool		low_taken = false;

		add_dropped(t, y, copied_right, rests, &n);
		for (int i = first_of_y; i < n; i++)
			low_taken |= rests[i] == y->low.rest;
		if (pm_rest_is_wide(y->low.rest) && !low_taken &&
			!slots_name(t, y, copied_right, y->low.rest))
			rests[n++] = y->low.rest;
	}
	for (int i = 0; i < n; i++)
		if (rests[i] != x->low.rest)
			pm_epoch_retire(t->epoch, t->space_pm, t->tag_pm, rests[i] & PM_REST_ADDR);
}
