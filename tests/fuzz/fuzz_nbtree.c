/*
 * fuzz_nbtree.c
 *	  libFuzzer target: an nbtree_pm pool a backend did not write, from its
 *	  first use after a start on.  Open it (header validation, mapping),
 *	  rebuild the DRAM layer and the allocator from the leaves, read the
 *	  reconciliation ring, verify, scan it both ways, insert, delete, tidy
 *	  leaves and verify again (fuzz_common.h: the input and the valid pool).
 *
 * The valid pool: an nbtree of 2,000 entries, half of them wide (records:
 * packed into the leaves, and a quarter of all entries in blocks of their
 * own), with its reconciliation ring.
 *
 * Build: make fuzz (clang); tests/run --only fuzz runs it for a fixed time.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "fuzz_common.h"
#include "nbtree.h"

#define ENTRIES		2000
#define RECORD_WORDS ((sizeof(pm_key_rec) + 100) / 8 + 1)

/*
 * Entry i: key i * 7; odd ones wide (4 ordering bytes, then 8 more, or 96
 * more for every other one: too many to pack), in a record at words.
 */
static void
entry(uint64_t i, uint64_t *words, nbt_skey *sk)
{
	pm_key_rec *r = (pm_key_rec *) words;

	*sk = (nbt_skey) {i * 7, 1 + i % 3};
	if (i % 2 == 1)
	{
		r->rest = sk->rest;
		r->keylen = 4;
		r->len = i % 4 == 1 ? 12 : 100;
		memset(r->data, (int) i, r->len);
		sk->rest = PM_REST_WIDE | PM_REST_LOCAL | (uintptr_t) r;
	}
}

static bool
next_key(void *ctx, nbt_skey *sk)
{
	static uint64_t words[RECORD_WORDS];
	uint64_t   *i = ctx;

	if (*i == ENTRIES)
		return false;
	entry((*i)++, words, sk);
	return true;
}

static pm_errcode
fill(pm_pool *pool, pm_error *err)
{
	uint64_t	i = 0;
	pm_errcode	rc = nbt_format(pool, err);

	return rc != PM_OK ? rc : nbt_bulk_load(pool, 90, next_key, &i, err);
}

/*
 * The copies a read makes of its wide keys' records, kept while the batch
 * is in use: the next read starts from one of its fences.
 */
typedef struct copies
{
	void	   *p[2 * NBT_LEAF_CAP + 2];
	int			n;
} copies;

static const pm_key_rec *
copy_rec(void *ctx, const pm_key_rec *rec)
{
	copies	   *c = ctx;
	void	   *p = malloc(pm_key_rec_size(rec));

	if (p == NULL || c->n == (int) (sizeof(c->p) / sizeof(c->p[0])))
		abort();
	memcpy(p, rec, pm_key_rec_size(rec));
	c->p[c->n++] = p;
	return p;
}

static void
free_copies(copies *c)
{
	while (c->n > 0)
		free(c->p[--c->n]);
}

/* A whole scan, forward or backward, as an index scan reads it batch by batch. */
static void
scan(nbt_tree *t, bool backward)
{
	nbt_skey	lo = PM_KEY_MIN;
	nbt_skey	hi = PM_KEY_MAX;
	nbt_skey	at = backward ? PM_KEY_MAX : PM_KEY_MIN;
	nbt_batch	b;
	copies		c[2] = {{.n = 0}, {.n = 0}};

	for (int turn = 0;; turn ^= 1)
	{
		nbt_read_range_copy(t, &at, backward, &lo, &hi, &b, copy_rec, &c[turn]);
		free_copies(&c[turn ^ 1]);
		at = backward ? b.low : b.high;
		if (backward ? pm_key_is_min(&at) : pm_key_is_max(&at))
			break;
	}
	free_copies(&c[0]);
	free_copies(&c[1]);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint64_t words[RECORD_WORDS];
	pm_pool    *pool;
	pm_error	err;
	pm_alloc	dram;
	pm_epoch_handle epoch;
	nbt_tree	t;
	uint64_t	entries;

	if (fuzz_image == NULL)
		fuzz_set_up(PM_KIND_NBTREE, fill);
	if ((pool = fuzz_open(data, size)) == NULL)
		return 0;
	fuzz_dram(&dram);
	nbt_attach(&t, pool, &dram, &epoch, FUZZ_SPACE_PM, 0, FUZZ_SPACE_DRAM, 0);
	fuzz_epoch_begin(&epoch, &t.pm, &dram);
	if (nbt_rebuild(&t, true, &err) == PM_OK)
	{
		bool		found;
		bool		compacted;

		(void) fuzz_read_ring(pool);
		(void) nbt_check(&t, &entries);
		scan(&t, false);
		scan(&t, true);
		for (uint64_t i = 0; i < 300; i++)
		{
			nbt_skey	sk;

			entry(ENTRIES + i * 13 % 997, words, &sk);
			if (nbt_insert(&t, &sk, &err) != PM_OK)
				break;
		}
		for (uint64_t i = 0; i < ENTRIES; i += 5)
		{
			nbt_skey	sk;

			entry(i, words, &sk);
			if (nbt_delete(&t, &sk, &found, &err) != PM_OK ||
				(i % 100 == 0 && nbt_compact_leaf(&t, &sk, &compacted, &err) != PM_OK))
				break;
		}
		scan(&t, false);
		(void) nbt_check(&t, &entries);
		nbt_release_dram(&t);
	}
	fuzz_epoch_end(&epoch);
	pm_pool_close(pool);
	return 0;
}
