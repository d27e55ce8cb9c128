/*
 * fuzz_phast.c
 *	  libFuzzer target: a phast_pm pool a backend did not write, from its
 *	  first use after a start on.  Open it, rebuild the DRAM skiplists and
 *	  the allocator from the LNodes (finishing interrupted splits), read the
 *	  reconciliation ring, verify, scan both ways, insert (LNodes split),
 *	  delete, compact and verify again (fuzz_common.h: the input and the
 *	  valid pool).
 *
 * The valid pool: 4 partitions, 3,000 entries bulk-loaded to 70%, with its
 * reconciliation ring.
 *
 * Build: make fuzz (clang); tests/run --only fuzz runs it for a fixed time.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "fuzz_common.h"
#include "phast.h"

#define ENTRIES		3000

static phast_key
entry(uint64_t i)
{
	return (phast_key) {i * 7, 1 + i % 3};
}

static bool
next_key(void *ctx, phast_key *k)
{
	uint64_t   *i = ctx;

	if (*i == ENTRIES)
		return false;
	*k = entry((*i)++);
	return true;
}

static pm_errcode
fill(pm_pool *pool, pm_error *err)
{
	uint64_t	i = 0;
	pm_errcode	rc = phast_format(pool, 4, 0, ENTRIES * 7, err);

	return rc != PM_OK ? rc : phast_bulk_load(pool, 70, next_key, &i, err);
}

/* A whole scan, forward or backward, as an index scan reads it batch by batch. */
static void
scan(phast_tree *t, bool backward)
{
	phast_key	lo = PM_KEY_MIN;
	phast_key	hi = PM_KEY_MAX;
	phast_key	at = backward ? PM_KEY_MAX : PM_KEY_MIN;
	phast_batch b;

	for (;;)
	{
		phast_read_range(t, &at, backward, &lo, &hi, &b);
		at = backward ? b.low : b.high;
		if (backward ? pm_key_is_min(&at) : pm_key_is_max(&at))
			break;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	pm_pool    *pool;
	pm_error	err;
	pm_alloc	dram;
	pm_epoch_handle epoch;
	phast_tree	t;
	uint64_t	entries;

	if (fuzz_image == NULL)
		fuzz_set_up(PM_KIND_PHAST, fill);
	if ((pool = fuzz_open(data, size)) == NULL)
		return 0;
	fuzz_dram(&dram);
	phast_attach(&t, pool, &dram, &epoch, FUZZ_SPACE_DRAM, 0);
	fuzz_epoch_begin(&epoch, &t.pm, &dram);
	if (phast_rebuild(&t, true, &err) == PM_OK)
	{
		bool		found;
		bool		compacted;

		(void) fuzz_read_ring(pool);
		(void) phast_check(&t, &entries);
		scan(&t, false);
		scan(&t, true);
		for (uint64_t i = 0; i < 300; i++)
		{
			phast_key	k = entry(i * 10 + 3);

			k.rest = 4;
			if (phast_insert(&t, &k, &err) != PM_OK)
				break;
		}
		for (uint64_t i = 0; i < ENTRIES; i += 5)
		{
			phast_key	k = entry(i);

			if (phast_delete(&t, &k, &found, &err) != PM_OK ||
				(i % 100 == 0 && phast_compact_leaf(&t, &k, &compacted, &err) != PM_OK))
				break;
		}
		scan(&t, false);
		(void) phast_check(&t, &entries);
	}
	if (t.dram_root != 0)
		phast_release_dram(&t);
	fuzz_epoch_end(&epoch);
	pm_pool_close(pool);
	return 0;
}
