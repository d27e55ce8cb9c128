/*
 * fuzz_nvbtree.c
 *	  libFuzzer target: an nvbtree_pm pool a backend did not write, from its
 *	  first use after a start on.  Open it (the meta block and the root
 *	  checked, the allocator rebuilt from whatever the mapping table names,
 *	  a spare block set aside, the lock table made), read the
 *	  reconciliation ring, verify, scan it both ways and in bounded pieces,
 *	  insert (leaves split, an inner node too), delete (two-child deletes
 *	  among them), tidy leaves and verify again (fuzz_common.h: the input
 *	  and the valid pool).
 *
 * The first input byte's bit 1 (bit 0 is fuzz_common.h's) opens the pool in
 * adr mode, whose every flush and drain then runs; else in eadr mode.
 *
 * Scans check what any caller relies on to end: each batch of a forward
 * scan ends past where it started, each of a backward one starts before
 * where it ended, and no batch has more entries than NVB_BATCH_MAX.  A
 * damaged pool may give wrong entries or PM_ERR_CORRUPT, but a scan that
 * stops moving would hang an index scan: that aborts here.
 *
 * The valid pool: an NVB-tree of 1,500 entries inserted in a scrambled
 * order (leaves whose search trees are not balanced, two levels), a fifth
 * of them deleted (one- and two-child deletes: leaves with dead slots and
 * moved successors), with its reconciliation ring.
 *
 * fuzz_nvbtree_wide builds it with FUZZ_NVB_WIDE: a wide tree of wide
 * entries (records of 8 to 88 bytes beside their slots, 16 entries to an
 * 8-byte key), whose reads copy records out.
 *
 * Build: make fuzz (clang); tests/run --only fuzz runs it for a fixed time.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "fuzz_common.h"
#include "nvbtree.h"

#define ENTRIES		1500
#define SET_UP_ARENA (1u << 20)
#define SCAN_BATCHES 100000		/* far more than a pool of FUZZ_FILE_LIMIT holds */

#ifdef FUZZ_NVB_WIDE
#define WIDE_TREE	true
#define RECORD_MAX	(8 + 80)

/*
 * Entry i: key i * 7 >> 4, and a record of i * 7 (8 bytes, big-endian),
 * then up to 80 bytes of payload, and the narrow entry's rest.  Records
 * come from a ring that outlives the few keys one call holds at once.
 */
static nvb_key
entry(uint64_t i)
{
	static uint64_t ring[8][(sizeof(pm_key_rec) + RECORD_MAX + 7) / 8];
	static int	next;
	pm_key_rec *r = (pm_key_rec *) ring[next++ % 8];

	r->rest = 1 + i % 3;
	r->keylen = 8;
	r->len = 8 + (uint32_t) (i % 5) * 20;
	for (int b = 0; b < 8; b++)
		r->data[b] = (uint8_t) ((i * 7) >> (56 - 8 * b));
	memset(r->data + 8, (int) (i & 0xff), r->len - 8);
	return (nvb_key) {i * 7 >> 4, PM_REST_WIDE | PM_REST_LOCAL | (uintptr_t) r};
}

/* The same entry with another rest (a record of its own). */
static nvb_key
with_rest(nvb_key k, uint64_t rest)
{
	((pm_key_rec *) (uintptr_t) (k.rest & PM_REST_ADDR))->rest = rest;
	return k;
}

/* Reads copy records here; each read starts it again. */
static uint64_t copies[(NVB_BATCH_MAX + 2) * ((sizeof(pm_key_rec) + NVB_WIDE_DATA_MAX + 7) / 8)];
static size_t copies_used;

static const pm_key_rec *
copy_record(void *ctx, const pm_key_rec *rec)
{
	size_t		words = (sizeof(pm_key_rec) + rec->len + 7) / 8;
	pm_key_rec *dst = (pm_key_rec *) &copies[copies_used];

	(void) ctx;
	if (rec->len > NVB_WIDE_DATA_MAX || copies_used + words > sizeof(copies) / 8)
		abort();				/* a read's copies are checked records of one leaf */
	memcpy(dst, rec, sizeof(pm_key_rec) + rec->len);
	copies_used += words;
	return dst;
}

/* Keys a scan holds: the caller's and copies, in memcmp order. */
static int
key_cmp(const nvb_key *a, const nvb_key *b)
{
	return pm_key_cmp(a, b);
}
#else
#define WIDE_TREE	false

static nvb_key
entry(uint64_t i)
{
	return (nvb_key) {i * 7, 1 + i % 3};
}

static nvb_key
with_rest(nvb_key k, uint64_t rest)
{
	k.rest = rest;
	return k;
}

static const pm_key_rec *
copy_record(void *ctx, const pm_key_rec *rec)
{
	(void) ctx;
	(void) rec;
	abort();					/* a narrow tree has no records */
}

/*
 * Two pairs compared as words, as the NVB-tree orders them: a damaged
 * fence's rest may carry PM_REST_WIDE, which pm_key_cmp would follow.
 */
static int
key_cmp(const nvb_key *a, const nvb_key *b)
{
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return (a->rest > b->rest) - (a->rest < b->rest);
}
#endif

/* The valid tree: scrambled inserts (i * 7919 mod a prime), then every fifth deleted. */
static pm_errcode
fill(pm_pool *pool, pm_error *err)
{
	void	   *arena = malloc(SET_UP_ARENA);
	pm_alloc	dram;
	nvb_tree	t;
	pm_errcode	rc;

	if (arena == NULL)
		abort();
	pm_arena_format(arena, SET_UP_ARENA);
	pm_alloc_attach_arena(&dram, arena, "fuzz set-up arena");
	if ((rc = nvb_format(pool, WIDE_TREE, NULL, 0, err)) != PM_OK)
		return rc;
	nvb_attach(&t, pool, &dram, NULL, FUZZ_SPACE_PM, 0, 0);
	if ((rc = nvb_open(&t, err)) != PM_OK)
		return rc;
	for (uint64_t i = 0; rc == PM_OK && i < ENTRIES; i++)
	{
		nvb_key		k = entry(i * 7919 % 1511 % ENTRIES);

		rc = nvb_insert(&t, &k, err);
	}
	for (uint64_t i = 0; rc == PM_OK && i < ENTRIES; i += 5)
	{
		nvb_key		k = entry(i * 3 % ENTRIES);
		bool		found;

		rc = nvb_delete(&t, &k, &found, err);
	}
	nvb_release_dram(&t);
	free(arena);
	return rc;
}

/* The pool the input makes, opened in adr mode when the input asks; NULL if open refuses it. */
static pm_pool *
open_pool(const uint8_t *data, size_t size)
{
	pm_pool    *pool;
	pm_error	err;

	if (size == 0 || !(data[0] & 2))
		return fuzz_open(data, size);
	fuzz_write_file(data, size);
	if (pm_pool_open(fuzz_path, PM_MODE_ADR, &pool, &err) != PM_OK)
		return NULL;
	return pool;
}

/*
 * A scan from at, forward or backward, within [lo, hi], as an index scan
 * reads it batch by batch, until it ends, fails or has read max batches.
 */
static void
scan(nvb_tree *t, nvb_key at, bool backward, nvb_key lo, nvb_key hi, int max)
{
	nvb_batch	b;
	pm_error	err;

	for (int i = 0; i < max; i++)
	{
		nvb_key		next;

#ifdef FUZZ_NVB_WIDE
		copies_used = 0;
#endif
		if (nvb_read_range(t, &at, backward, &lo, &hi, &b, WIDE_TREE ? copy_record : NULL, NULL,
						   &err) != PM_OK)
			return;
		if (b.n < 0 || b.n > NVB_BATCH_MAX)
			abort();
		next = backward ? b.low : b.high;
		if (backward ? pm_key_is_min(&next) || key_cmp(&next, &lo) <= 0 :
			pm_key_is_max(&next) || key_cmp(&next, &hi) > 0)
			return;
		/* a scan that does not move would never end */
		if (backward ? key_cmp(&next, &at) >= 0 : key_cmp(&next, &at) <= 0)
			abort();
		at = next;
	}
	if (max == SCAN_BATCHES)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	pm_pool    *pool;
	pm_error	err;
	pm_alloc	dram;
	pm_epoch_handle epoch;
	nvb_tree	t;
	uint64_t	entries;
	nvb_stats	st;

	if (fuzz_image == NULL)
		fuzz_set_up(PM_KIND_NVBTREE, fill);
	if ((pool = open_pool(data, size)) == NULL)
		return 0;
	fuzz_dram(&dram);
	nvb_attach(&t, pool, &dram, &epoch, FUZZ_SPACE_PM, 0, 0);
	fuzz_epoch_begin(&epoch, &t.pm, &dram);
	if (nvb_open(&t, &err) == PM_OK)
	{
		bool		found;
		bool		tidied;

		(void) fuzz_read_ring(pool);
		(void) nvb_check(&t, &entries);
		nvb_get_stats(&t, &st);
		scan(&t, PM_KEY_MIN, false, PM_KEY_MIN, PM_KEY_MAX, SCAN_BATCHES);
		scan(&t, PM_KEY_MAX, true, PM_KEY_MIN, PM_KEY_MAX, SCAN_BATCHES);
		scan(&t, entry(300), false, entry(300), entry(900), 4);
		scan(&t, entry(900), true, entry(300), entry(900), 4);
		/* new keys past the end (the append split) and among the others */
		for (uint64_t i = 0; i < 400; i++)
		{
			nvb_key		k = with_rest(i < 100 ? entry(ENTRIES + i) : entry(i * 13 % ENTRIES),
									  i < 100 ? 1 : 4);

			if (nvb_insert(&t, &k, &err) != PM_OK)
				break;
		}
		for (uint64_t i = 0; i < ENTRIES; i += 4)
		{
			nvb_key		k = entry(i);

			if (nvb_delete(&t, &k, &found, &err) != PM_OK ||
				(i % 100 == 0 && nvb_tidy_leaf(&t, &k, &tidied, &err) != PM_OK))
				break;
		}
		scan(&t, PM_KEY_MIN, false, PM_KEY_MIN, PM_KEY_MAX, SCAN_BATCHES);
		(void) nvb_check(&t, &entries);
		nvb_release_dram(&t);
	}
	fuzz_epoch_end(&epoch);
	pm_pool_close(pool);
	return 0;
}
