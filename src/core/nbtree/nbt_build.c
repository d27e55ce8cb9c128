/*
 * nbt_build.c
 *	  Formatting, bulk loading, rebuilding the DRAM layer from the PM layer
 *	  (recovery and first use), releasing it, verification and statistics.
 *
 * The PM layer is a list of KV blocks in key order, each with its low fence;
 * it is the whole persistent state.  Rebuild walks it once: each block
 * becomes a DRAM leaf (bitmap of live slots, fingerprints, fences from its
 * own low and the next block's low), and the inner levels are built bottom
 * up, each node filled to 90% so the first inserts do not split them all.
 */
#include "nbt_internal.h"
#include "recon.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define INNER_BUILD_FILL ((NBT_INNER_CAP * 9) / 10)

void
nbt_attach(nbt_tree *t, pm_pool *pool, pm_alloc *dram, pm_epoch_handle *epoch,
		   uint32_t space_pm, uint32_t tag_pm, uint32_t space_dram, uint64_t dram_root)
{
	memset(t, 0, sizeof(*t));
	t->pool = pool;
	pm_alloc_attach_pool(&t->pm, pool);
	t->dram = dram;
	t->epoch = epoch;
	t->space_pm = space_pm;
	t->tag_pm = tag_pm;
	t->space_dram = space_dram;
	t->dram_root = dram_root;
	t->packed = pool != NULL && nbt_pool_packs(pool);
}

static uint64_t
new_kv_block(pm_alloc *a, const nbt_skey *low, uint32_t slot_cap, pm_error *err)
{
	uint64_t	off = pm_alloc_block(a, sizeof(nbt_kv), err);
	nbt_kv	   *kv;

	if (off == 0)
		return 0;
	kv = pm_alloc_addr(a, off);
	memset(kv, 0, sizeof(*kv));
	kv->slot_cap = slot_cap;
	kv->low = *low;
	return off;
}

pm_errcode
nbt_format(pm_pool *pool, pm_error *err)
{
	return nbt_format_host(pool, NULL, 0, err);
}

/*
 * A new tree packs short records: its meta block is of version 3, which
 * builds that do not pack refuse.  Trees of versions 1 and 2 keep every
 * record in a block of its own.
 */
pm_errcode
nbt_format_host(pm_pool *pool, const void *host, uint32_t host_len, pm_error *err)
{
	pm_alloc	a;
	uint64_t	meta_off;
	uint64_t	kv_off;
	size_t		meta_size = sizeof(nbt_pm_meta_host);
	nbt_pm_meta *meta;
	nbt_skey	min = PM_KEY_MIN;

	if (host_len > NBT_META_HOST_MAX)
		return pm_error_set(err, PM_ERR_INVALID, 0, "%u bytes of the host's do not fit an nbtree "
							"meta block (at most %d)", host_len, NBT_META_HOST_MAX);
	pm_alloc_attach_pool(&a, pool);
	meta_off = pm_alloc_block(&a, meta_size, err);
	if (meta_off == 0)
		return err->code;
	kv_off = new_kv_block(&a, &min, 0, err);
	if (kv_off == 0)
		return err->code;
	pm_persist(&pool->persist, pm_pool_addr(pool, kv_off), sizeof(nbt_kv));
	meta = pm_pool_addr(pool, meta_off);
	memset(meta, 0, meta_size);
	meta->magic = NBT_META_MAGIC;
	meta->version = NBT_META_VERSION_PACKED;
	meta->head = kv_off;
	((nbt_pm_meta_host *) meta)->host_len = host_len;
	if (host_len > 0)
		memcpy(((nbt_pm_meta_host *) meta)->host, host, host_len);
	pm_persist(&pool->persist, meta, meta_size);
	pm_pool_set_root(pool, 0, meta_off);
	return PM_OK;
}

static pm_errcode
check_meta(pm_pool *pool, nbt_pm_meta **out, pm_error *err)
{
	uint64_t	off = pm_pool_root(pool, 0);
	nbt_pm_meta *meta;

	if (off == 0 || !pm_pool_has_range(pool, off, sizeof(*meta)))
		return pm_error_set(err, PM_ERR_CORRUPT, 0, "pool file \"%s\" holds no nbtree", pool->path);
	meta = pm_pool_addr(pool, off);
	if (meta->magic != NBT_META_MAGIC)
		return pm_error_set(err, PM_ERR_CORRUPT, 0, "pool file \"%s\" has no nbtree meta block",
							pool->path);
	if (meta->version < NBT_META_VERSION || meta->version > NBT_META_VERSION_PACKED)
		return pm_error_set(err, PM_ERR_VERSION, 0,
							"pool file \"%s\" holds nbtree version %llu, this build reads %d to %d",
							pool->path, (unsigned long long) meta->version, NBT_META_VERSION,
							NBT_META_VERSION_PACKED);
	if (meta->version != NBT_META_VERSION &&
		(!pm_pool_has_range(pool, off, sizeof(nbt_pm_meta_host)) ||
		 ((nbt_pm_meta_host *) meta)->host_len > NBT_META_HOST_MAX))
		return pm_error_set(err, PM_ERR_CORRUPT, 0, "pool file \"%s\" has a damaged nbtree meta block",
							pool->path);
	*out = meta;
	return PM_OK;
}

pm_errcode
nbt_meta_host(pm_pool *pool, const uint8_t **host, uint32_t *host_len, pm_error *err)
{
	nbt_pm_meta *meta;
	pm_errcode	rc = check_meta(pool, &meta, err);

	*host = NULL;
	*host_len = 0;
	if (rc == PM_OK && meta->version != NBT_META_VERSION)
	{
		*host = ((nbt_pm_meta_host *) meta)->host;
		*host_len = ((nbt_pm_meta_host *) meta)->host_len;
	}
	return rc;
}

bool
nbt_pool_packs(pm_pool *pool)
{
	nbt_pm_meta *meta;
	pm_error	err;

	return check_meta(pool, &meta, &err) == PM_OK && meta->version == NBT_META_VERSION_PACKED;
}

/* A bulk-loaded block is full: its slots are decided by its entries, and it is flushed. */
static void
close_bulk_block(const nbt_tree *t, nbt_kv *kv, int used, uint32_t packed_bytes)
{
	if (t->packed)
		kv->slot_cap = nbt_block_slots(t, (uint32_t) used, packed_bytes, false);
	pm_flush(&t->pool->persist, kv, sizeof(*kv));
}

pm_errcode
nbt_bulk_load(pm_pool *pool, int fill_pct, bool (*next) (void *ctx, nbt_skey *sk), void *ctx,
			  pm_error *err)
{
	nbt_tree	t;				/* for the pool's format only: no DRAM layer */
	nbt_pm_meta *meta;
	uint64_t	old_head;
	uint64_t	first = 0;
	nbt_kv	   *cur = NULL;
	uint64_t	cur_off = 0;
	uint32_t	fill = (uint32_t) (NBT_KV_ROOM * (fill_pct < 1 ? 1 : fill_pct > 100 ? 100 : fill_pct) / 100);
	int			used = 0;
	uint32_t	used_room = 0;
	uint32_t	packed_bytes = 0;
	nbt_skey	sk;
	nbt_skey	prev = PM_KEY_MIN;
	pm_errcode	rc = check_meta(pool, &meta, err);

	if (rc != PM_OK)
		return rc;
	nbt_attach(&t, pool, NULL, NULL, 0, 0, 0, 0);
	old_head = meta->head;

	while (next(ctx, &sk))
	{
		pm_key_view v;
		bool		packs;
		uint32_t	room;

		if (!nbt_input_rest_valid(sk.rest, err))
			return err->code;
		if (cur != NULL && pm_key_cmp_in(pool, &sk, &prev) <= 0)
			return pm_error_set(err, PM_ERR_INVALID, 0, "bulk load input is not sorted");
		packs = nbt_rec_packs(&t, sk.rest, &v);
		room = (uint32_t) sizeof(nbt_pm_slot) + (packs ? nbt_packed_size(v.len) : 0);
		/* the blocks stored so far are unreachable on failure: freed at recovery */
		if (pm_rest_is_wide(sk.rest) && !packs &&
			(sk.rest = nbt_rec_store(&t.pm, pool, sk.rest, err)) == 0)
			return err->code;
		if (cur == NULL || used == NBT_LEAF_CAP || (used > 0 && used_room + room > fill))
		{
			nbt_skey	low = cur == NULL ? PM_KEY_MIN : nbt_separator(&prev, &sk);
			uint64_t	off;

			/* a packed entry's record goes with its block: its fence gets one of its own */
			if (packs && pm_rest_is_wide(low.rest) &&
				(low.rest = nbt_rec_store(&t.pm, pool, sk.rest, err)) == 0)
				return err->code;
			off = new_kv_block(&t.pm, &low, 0, err);
			if (off == 0)
				return err->code;
			if (cur == NULL)
				first = off;
			else
			{
				cur->next = off;
				close_bulk_block(&t, cur, used, packed_bytes);
			}
			cur = pm_pool_addr(pool, off);
			cur_off = off;
			used = 0;
			used_room = 0;
			packed_bytes = 0;
		}
		cur->slot[used].key = sk.key;
		cur->slot[used].val = sk.rest;
		if (packs)
		{
			cur->slot[used].val = nbt_rec_pack(cur, used, packed_bytes, &v);
			packed_bytes += nbt_packed_size(v.len);
			/* the caller's record need not last: the next entry compares with the stored one */
			sk = nbt_slot_entry(cur_off, used, sk.key, cur->slot[used].val);
		}
		used++;
		used_room += room;
		prev = sk;
	}
	if (cur == NULL)
		return PM_OK;			/* empty input: the formatted empty leaf stays */
	close_bulk_block(&t, cur, used, packed_bytes);
	pm_drain(&pool->persist);
	pm_store(&meta->head, first);
	pm_persist(&pool->persist, &meta->head, sizeof(uint64_t));
	return pm_free_block(&t.pm, old_head, err);
}

/* Grow-only array of (low, DRAM offset) for the level being built. */
typedef struct level_vec
{
	nbt_skey   *low;
	uint64_t   *off;
	size_t		n;
	size_t		cap;
} level_vec;

static bool
vec_push(level_vec *v, const nbt_skey *low, uint64_t off)
{
	if (v->n == v->cap)
	{
		size_t		cap = v->cap ? v->cap * 2 : 1024;
		nbt_skey   *nl = realloc(v->low, cap * sizeof(nbt_skey));
		uint64_t   *no;

		if (nl == NULL)
			return false;
		v->low = nl;
		no = realloc(v->off, cap * sizeof(uint64_t));
		if (no == NULL)
			return false;
		v->off = no;
		v->cap = cap;
	}
	v->low[v->n] = *low;
	v->off[v->n] = off;
	v->n++;
	return true;
}

static void
vec_free(level_vec *v)
{
	free(v->low);
	free(v->off);
	memset(v, 0, sizeof(*v));
}

static bool
valid_block_offset(pm_pool *pool, uint64_t off)
{
	return off >= PM_POOL_HEADER_SIZE && off % sizeof(nbt_kv) == 0 &&
		pm_pool_has_range(pool, off, sizeof(nbt_kv));
}

/* Build inner levels over the leaves in v (consumed); sets the root. */
static pm_errcode
build_inner(nbt_tree *t, level_vec *v, pm_error *err)
{
	uint32_t	level = 1;

	for (;;)
	{
		level_vec	up = {0};
		nbt_inner  *prev = NULL;

		for (size_t i = 0; i < v->n; i += INNER_BUILD_FILL + 1)
		{
			uint64_t	off = nbt_inner_new(t, level, err);
			nbt_inner  *n;
			size_t		end = i + INNER_BUILD_FILL + 1;

			if (off == 0 || !vec_push(&up, &v->low[i], off))
			{
				vec_free(&up);
				return off == 0 ? err->code :
					pm_error_set(err, PM_ERR_NOMEM, 0, "out of memory building the tree");
			}
			n = nbt_inner_at(t, off);
			if (end > v->n)
				end = v->n;
			n->child0 = nbt_word_of_child(t, level, v->off[i]);
			for (size_t j = i + 1; j < end; j++)
			{
				nbt_inner_set(n, (int) n->count, &v->low[j],
							  nbt_word_of_child(t, level, v->off[j]));
				n->count++;
			}
			if (prev != NULL)
			{
				prev->high = v->low[i];
				prev->sibling = off;
			}
			prev = n;
		}
		vec_free(v);
		*v = up;
		if (v->n == 1)
		{
			pm_store(&nbt_droot_at(t)->root, v->off[0]);
			vec_free(v);
			return PM_OK;
		}
		level++;
	}
}

/*
 * The PM allocator's recovery after the DRAM layer is built: every block a
 * leaf names, and the host's roots, are marked; the rest is free.  It comes
 * last so that a rebuild that fails for want of DRAM leaves the pool as it
 * was.  A block that does not mark is corruption: the allocator is then left
 * unfinished (recover_end would free reachable blocks), and the next rebuild
 * meets the same error.
 */
static pm_errcode
recover_pm_allocator(nbt_tree *t, bool any_wide, pm_error *err)
{
	pm_errcode	rc;

	pm_alloc_recover_begin(&t->pm);
	/* root 0 is the meta block; roots 1.. are the host's (its reconciliation ring) */
	rc = pm_recon_mark_roots(&t->pm, t->pool, err);
	for (uint64_t off = nbt_droot_at(t)->first; off != 0 && rc == PM_OK;)
	{
		nbt_leaf   *l = nbt_leaf_at(t, off);

		rc = pm_alloc_mark(&t->pm, l->kv, err);
		if (rc == PM_OK && any_wide)
			rc = nbt_rec_mark_kv(&t->pm, t->pool, l->kv, err);
		off = l->next & ~NBT_FROZEN;
	}
	if (rc == PM_OK)
		pm_alloc_recover_end(&t->pm);
	return rc;
}

pm_errcode
nbt_rebuild(nbt_tree *t, bool recover_alloc, pm_error *err)
{
	nbt_pm_meta *meta;
	nbt_droot  *dr;
	level_vec	leaves = {0};
	nbt_leaf   *prev = NULL;
	uint64_t	off;
	bool		any_wide = false;	/* records to mark: a second pass over the blocks */
	pm_errcode	rc = check_meta(t->pool, &meta, err);

	if (rc != PM_OK)
		return rc;
	t->dram_root = pm_alloc_block(t->dram, sizeof(nbt_droot), err);
	if (t->dram_root == 0)
		return err->code;
	dr = nbt_droot_at(t);
	memset(dr, 0, sizeof(*dr));
	dr->magic = NBT_DROOT_MAGIC;

	for (off = meta->head; off != 0;)
	{
		nbt_kv	   *kv;
		uint64_t	leaf_off;
		nbt_leaf   *l;
		uint64_t	next;

		if (!valid_block_offset(t->pool, off))
		{
			rc = pm_error_set(err, PM_ERR_CORRUPT, 0,
							  "pool file \"%s\": leaf block offset %llu is invalid",
							  t->pool->path, (unsigned long long) off);
			goto fail;
		}
		/* records are checked before anything compares them */
		if ((rc = nbt_rec_check_kv(t->pool, off, t->packed, &any_wide, err)) != PM_OK)
			goto fail;
		kv = nbt_kv_at(t, off);
		next = kv->next;
		if (prev != NULL && nbt_cmp(t, &kv->low, &prev->low) <= 0)
		{
			rc = pm_error_set(err, PM_ERR_CORRUPT, 0,
							  "pool file \"%s\": leaf blocks out of key order at offset %llu",
							  t->pool->path, (unsigned long long) off);
			goto fail;
		}
		leaf_off = pm_alloc_block(t->dram, sizeof(nbt_leaf), err);
		if (leaf_off == 0)
		{
			rc = err->code;
			goto fail;
		}
		l = nbt_leaf_at(t, leaf_off);
		memset(l, 0, sizeof(*l));
		l->kv = off;
		l->low = prev == NULL ? PM_KEY_MIN : kv->low;
		l->high = PM_KEY_MAX;
		l->slot_cap = (uint8_t) nbt_kv_slots(kv);
		for (int pos = 0; pos < l->slot_cap; pos++)
		{
			uint64_t	val = kv->slot[pos].val;
			uint32_t	bytes = nbt_claim_bytes(l->claim);

			if (val == 0)
				continue;
			/* claims resume after the last slot and below the lowest record named */
			if (val & NBT_VAL_PACKED)
			{
				uint32_t	at = (uint32_t) (NBT_KV_HEADER + pos * sizeof(nbt_pm_slot)) +
					pm_packed_dist(val);

				if (sizeof(nbt_kv) - at > bytes)
					bytes = (uint32_t) (sizeof(nbt_kv) - at);
			}
			l->claim = nbt_claim_of((uint32_t) pos + 1, bytes);
			if (val & NBT_VAL_PACKED)
				dr->holds_packed = 1;
			if (nbt_val_live(val))
			{
				l->bitmap |= UINT64_C(1) << pos;
				l->fp[pos] = nbt_fingerprint(kv->slot[pos].key);
			}
		}
		if (prev != NULL)
		{
			prev->high = l->low;
			prev->next = leaf_off;
		}
		else
			dr->first = leaf_off;
		dr->leaves++;
		if (!vec_push(&leaves, &l->low, leaf_off))
		{
			rc = pm_error_set(err, PM_ERR_NOMEM, 0, "out of memory rebuilding the tree");
			goto fail;
		}
		prev = l;
		off = next;
	}
	if (prev == NULL)
	{
		rc = pm_error_set(err, PM_ERR_CORRUPT, 0, "pool file \"%s\": the tree has no leaf block",
						  t->pool->path);
		goto fail;
	}
	rc = build_inner(t, &leaves, err);
	if (rc != PM_OK)
		goto fail;
	if (recover_alloc && (rc = recover_pm_allocator(t, any_wide, err)) != PM_OK)
		goto fail;
	/* kept in DRAM only: a crash frees it (unreachable), and the next rebuild takes it again */
	nbt_keep_spare(t);
	return PM_OK;

fail:
	vec_free(&leaves);
	nbt_release_dram(t);
	return rc;
}

void
nbt_release_dram(nbt_tree *t)
{
	nbt_droot  *dr;
	pm_error	err;
	uint64_t	level_head;

	if (t->dram_root == 0)
		return;
	dr = nbt_droot_at(t);
	/* without the pool attached the index is gone, and its pool with it */
	if (dr->spare_kv != 0 && t->pool != NULL)
		pm_free_block(&t->pm, dr->spare_kv, &err);
	for (uint64_t off = dr->first; off != 0;)
	{
		uint64_t	next = nbt_leaf_at(t, off)->next & ~NBT_FROZEN;

		pm_free_block(t->dram, off, &err);
		off = next;
	}
	/* inner levels: leftmost node of each level via child0, then siblings */
	level_head = dr->root;
	while (level_head != 0)
	{
		nbt_inner  *n = nbt_inner_at(t, level_head);
		uint64_t	below = n->level > 1 ? n->child0 : 0;

		for (uint64_t off = level_head; off != 0;)
		{
			uint64_t	sib = nbt_inner_at(t, off)->sibling;

			pm_free_block(t->dram, off, &err);
			off = sib;
		}
		level_head = below;
	}
	pm_free_block(t->dram, t->dram_root, &err);
	t->dram_root = 0;
}
uint64_t
nbt_count_pm(pm_pool *pool)
{
	nbt_pm_meta *meta;
	pm_error	err;
	uint64_t	n = 0;

	if (check_meta(pool, &meta, &err) != PM_OK)
		return 0;
	for (uint64_t off = meta->head; off != 0; off = ((nbt_kv *) pm_pool_addr(pool, off))->next)
	{
		nbt_kv	   *kv = pm_pool_addr(pool, off);

		for (int pos = 0; pos < (int) nbt_kv_slots(kv); pos++)
			n += nbt_val_live(kv->slot[pos].val);
	}
	return n;
}

uint64_t
nbt_dram_bytes(const nbt_tree *t)
{
	nbt_droot  *dr = nbt_droot_at(t);

	return pm_load(&dr->leaves) * pm_alloc_class_size(sizeof(nbt_leaf)) +
		pm_load(&dr->inner_nodes) * pm_alloc_class_size(sizeof(nbt_inner)) +
		pm_alloc_class_size(sizeof(nbt_droot));
}

void
nbt_get_stats(nbt_tree *t, nbt_stats *st)
{
	nbt_droot  *dr = nbt_droot_at(t);

	memset(st, 0, sizeof(*st));
	st->smo_splits = pm_load(&dr->smo_splits);
	st->smo_compactions = pm_load(&dr->smo_compactions);
	st->smo_merges = pm_load(&dr->smo_merges);
	st->leaves = pm_load(&dr->leaves);
	st->inner_nodes = pm_load(&dr->inner_nodes);
	st->height = nbt_inner_at(t, pm_load(&dr->root))->level;
	st->dram_bytes = nbt_dram_bytes(t);
	st->pm_bytes = pm_pool_size(t->pool);
}

static char check_msg[256];

#define CHECK_FAIL(...) \
	do { snprintf(check_msg, sizeof(check_msg), __VA_ARGS__); return check_msg; } while (0)

const char *
nbt_check(nbt_tree *t, uint64_t *entries)
{
	nbt_pm_meta *meta;
	pm_error	err;
	nbt_droot  *dr = nbt_droot_at(t);
	uint64_t	kv_off;
	uint64_t	leaf_off;
	uint64_t	n = 0;
	uint64_t	nleaves = 0;
	uint64_t	node_off;
	nbt_inner  *node;

	if (check_meta(t->pool, &meta, &err) != PM_OK)
		CHECK_FAIL("%s", err.msg);

	/* PM list and DRAM leaf list walk in step */
	kv_off = meta->head;
	leaf_off = dr->first;
	while (kv_off != 0 || leaf_off != 0)
	{
		nbt_kv	   *kv;
		nbt_leaf   *l;
		nbt_skey	high;

		if (kv_off == 0 || leaf_off == 0)
			CHECK_FAIL("PM list and DRAM leaf list differ in length at leaf %llu",
					   (unsigned long long) nleaves);
		if (!valid_block_offset(t->pool, kv_off))
			CHECK_FAIL("invalid PM block offset %llu", (unsigned long long) kv_off);
		if (nbt_rec_check_kv(t->pool, kv_off, t->packed, NULL, &err) != PM_OK)
			CHECK_FAIL("%s", err.msg);
		kv = nbt_kv_at(t, kv_off);
		l = nbt_leaf_at(t, leaf_off);
		if (l->kv != kv_off)
			CHECK_FAIL("leaf %llu: DRAM leaf names PM block %llu, list has %llu",
					   (unsigned long long) nleaves, (unsigned long long) l->kv,
					   (unsigned long long) kv_off);
		if (nleaves > 0 && nbt_cmp(t, &kv->low, &l->low) != 0)
			CHECK_FAIL("leaf %llu: low fence differs between PM and DRAM", (unsigned long long) nleaves);
		if (l->next & NBT_FROZEN || l->copy != 0 || (l->flags & NBT_PENDING) ||
			(l->bitmap & ~NBT_SLOT_BITS) || l->merge_right != 0)
			CHECK_FAIL("leaf %llu: unfinished SMO", (unsigned long long) nleaves);
		high = l->next ? nbt_leaf_at(t, l->next)->low : PM_KEY_MAX;
		if (nbt_cmp(t, &l->high, &high) != 0 || nbt_cmp(t, &l->low, &l->high) >= 0)
			CHECK_FAIL("leaf %llu: fences out of order", (unsigned long long) nleaves);
		if (l->slot_cap != nbt_kv_slots(kv))
			CHECK_FAIL("leaf %llu: DRAM and PM differ in slots", (unsigned long long) nleaves);
		for (int pos = 0; pos < l->slot_cap; pos++)
		{
			uint64_t	val = kv->slot[pos].val;
			nbt_skey	sk = nbt_slot_entry(kv_off, pos, kv->slot[pos].key, val);
			bool		committed = (l->bitmap >> pos) & 1;

			if (!nbt_val_live(val))
				continue;
			if (!committed)
				CHECK_FAIL("leaf %llu slot %d: live in PM but not committed", (unsigned long long) nleaves, pos);
			if (committed && (uint32_t) pos >= nbt_claim_slots(l->claim))
				CHECK_FAIL("leaf %llu slot %d: committed beyond the claimed count", (unsigned long long) nleaves, pos);
			if (committed && l->fp[pos] != nbt_fingerprint(sk.key))
				CHECK_FAIL("leaf %llu slot %d: fingerprint mismatch", (unsigned long long) nleaves, pos);
			if (nbt_cmp(t, &sk, &l->low) < 0 || nbt_cmp(t, &sk, &l->high) >= 0)
				CHECK_FAIL("leaf %llu slot %d: entry outside the leaf's fences", (unsigned long long) nleaves, pos);
			n += committed;
		}
		nleaves++;
		kv_off = kv->next;
		leaf_off = l->next & ~NBT_FROZEN;
	}

	/* inner levels: every level, left to right, routes exactly the level below */
	node_off = dr->root;
	while (node_off != 0)
	{
		uint64_t	below_first = 0;
		nbt_skey	expect_low = PM_KEY_MIN;
		uint64_t	expect_child = 0;
		uint32_t	level = nbt_inner_at(t, node_off)->level;

		for (uint64_t off = node_off; off != 0; off = nbt_inner_at(t, off)->sibling)
		{
			node = nbt_inner_at(t, off);
			if (node->version & 1)
				CHECK_FAIL("inner node locked");
			if (node->level != level || node->count > NBT_INNER_CAP)
				CHECK_FAIL("inner node at level %u malformed", level);
			for (int i = -1; i < (int) node->count; i++)
			{
				uint64_t	word = i < 0 ? node->child0 : node->child[i];
				uint64_t	child = nbt_child_of_word(level, word);
				nbt_skey	low = i < 0 ? expect_low : nbt_inner_sep(node, i);
				nbt_skey	clow;

				if (i >= 0 && nbt_cmp(t, &low, &expect_low) <= 0)
					CHECK_FAIL("level %u: separators out of order", level);
				if (below_first == 0)
					below_first = child;
				if (expect_child != 0 && child != expect_child)
					CHECK_FAIL("level %u: children are not the level below in order", level);
				if (level == 1)
				{
					if (word != nbt_word_of_child(t, 1, child))
						CHECK_FAIL("level 1: a child's KV block hint is not its leaf's block");
					clow = nbt_leaf_at(t, child)->low;
					expect_child = nbt_leaf_at(t, child)->next & ~NBT_FROZEN;
				}
				else
				{
					nbt_inner  *c = nbt_inner_at(t, child);

					clow = expect_low;
					if (i >= 0)
						clow = nbt_inner_sep(node, i);
					expect_child = c->sibling;
				}
				if (level == 1 && nbt_cmp(t, &clow, &low) != 0)
					CHECK_FAIL("level 1: separator differs from its leaf's low fence");
				expect_low = low;
			}
			if (node->sibling == 0 && !pm_key_is_max(&node->high))
				CHECK_FAIL("level %u: rightmost node has a finite high fence", level);
			if (node->sibling != 0)
			{
				nbt_inner  *sib = nbt_inner_at(t, node->sibling);

				(void) sib;
				expect_low = node->high;
			}
		}
		if (expect_child != 0)
			CHECK_FAIL("level %u: does not reach the last node below", level);
		node_off = level > 1 ? below_first : 0;
		if (level == 1 && below_first != dr->first)
			CHECK_FAIL("level 1 does not start at the first leaf");
	}
	if (entries)
		*entries = n;
	return NULL;
}
