/*
 * test_phast_model.c
 *	  Single-thread model check of PhaST against an exact reference: random
 *	  inserts, deletes, forward and backward LNode reads and compactions over
 *	  a small key space (many duplicates, constant LNode and INode splits),
 *	  with structure checks, full scans both ways and rebuilds of the DRAM
 *	  layer from PM along the way; twice: keys spread over the whole key
 *	  space, and keys in a narrow range (as PostgreSQL's integers are), whose
 *	  partitions come from the bits below their common prefix.  Then the
 *	  persists of an insert (the paper's two), a bulk load, and a pool filled
 *	  to its maximum size.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "phast_harness.h"
#include "phast_internal.h"

#define NKEYS		20000
#define NRESTS		32
#define OPS			3000000L
#define CHECK_EVERY	500000L
#define FULL_POOL_SIZE	(UINT64_C(4) << 20)

static uint8_t ref[NKEYS * NRESTS];
static long ref_count;
static uint64_t key_base;
static uint64_t key_step;

static phast_key
key_of(int i)
{
	int			k = i / NRESTS;
	int			r = i % NRESTS;

	return (phast_key) {key_base + (uint64_t) k * key_step, r == NRESTS - 1 ? PHAST_REST_MAX : (uint64_t) r + 1};
}

/* The reference index of a key (keys are key_of's). */
static int
index_of(const phast_key *k)
{
	int			r = k->rest == PHAST_REST_MAX ? NRESTS - 1 : (int) k->rest - 1;

	return (int) ((k->key - key_base) / key_step) * NRESTS + r;
}

/* Scan everything forward (or backward) in LNode batches; compare with the reference. */
static bool
full_scan(phast_tree *t, bool backward, const char *when)
{
	phast_batch b;
	phast_key	from = backward ? PM_KEY_MAX : PM_KEY_MIN;
	int			i = backward ? NKEYS * NRESTS - 1 : 0;
	long		seen = 0;

	for (;;)
	{
		phast_read_leaf(t, &from, backward, &b);
		if (pm_key_cmp(backward ? &b.high : &b.low, &from) != 0)
			return tap_ok(false, "%s: %s batch fences continue the scan", when, backward ? "backward" : "forward");
		for (int e = 0; e < b.n; e++)
		{
			int			want;
			const phast_key *k = &b.e[backward ? b.n - 1 - e : e];

			if (backward)
			{
				while (i >= 0 && !ref[i])
					i--;
			}
			else
			{
				while (i < NKEYS * NRESTS && !ref[i])
					i++;
			}
			want = i;
			if (want < 0 || want >= NKEYS * NRESTS || index_of(k) != want)
				return tap_ok(false, "%s: %s scan entry %ld is (%llu,%llu), reference %d", when,
							  backward ? "backward" : "forward", seen, (unsigned long long) k->key,
							  (unsigned long long) k->rest, want);
			i += backward ? -1 : 1;
			seen++;
		}
		if (backward ? pm_key_is_min(&b.low) : pm_key_is_max(&b.high))
			break;
		from = backward ? b.low : b.high;
	}
	return tap_ok(seen == ref_count, "%s: %s scan sees all %ld entries (%ld)", when,
				  backward ? "backward" : "forward", ref_count, seen);
}

static bool
check(phast_tree *t, const char *when)
{
	uint64_t	entries = 0;
	const char *problem = phast_check(t, &entries);

	if (problem != NULL)
		return tap_ok(false, "%s: structure check: %s", when, problem);
	return tap_ok(entries == (uint64_t) ref_count, "%s: structure sound, %llu entries (reference %ld)",
				  when, (unsigned long long) entries, ref_count);
}

/* counters of the DRAM layers a run has built and released */
static uint64_t total_splits;
static uint64_t total_inode_splits;
static uint64_t total_compactions;

/* Release the DRAM layer and build it again from PM (a restart). */
static void
rebuild(harness *h)
{
	pm_error	err;
	phast_stats st;

	phast_get_stats(&h->tree, &st);
	total_splits += st.splits;
	total_inode_splits += st.inode_splits;
	total_compactions += st.compactions;
	phast_release_dram(&h->tree);
	if (phast_rebuild(&h->tree, true, &err) != PM_OK)
	{
		tap_ok(false, "rebuild: %s", err.msg);
		exit(1);
	}
}

static void
run_model(harness *h, const char *name, int nparts, uint64_t seed)
{
	char		path[256];
	pm_error	err;
	char		when[128];
	phast_stats st;
	long		reads = 0;

	memset(ref, 0, sizeof(ref));
	ref_count = 0;
	total_splits = total_inode_splits = total_compactions = 0;
	snprintf(path, sizeof(path), "%s/phast_model_%s.pool", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", name);
	h->pool = harness_new_phast(path, PM_MODE_EADR, 0, nparts, key_base,
								key_base + (uint64_t) (NKEYS - 1) * key_step);
	phast_attach(&h->tree, h->pool, &h->dram, &h->epoch, SPACE_DRAM, 0);
	if (phast_rebuild(&h->tree, false, &err) != PM_OK)
	{
		tap_ok(false, "%s: first build: %s", name, err.msg);
		exit(1);
	}
	for (long op = 1; op <= OPS; op++)
	{
		uint64_t	r = xorshift(&seed);
		int			i = (int) ((r >> 16) % (NKEYS * NRESTS));
		phast_key	k = key_of(i);
		int			what = (int) (r % 100);

		if (what < 55)
		{
			if (phast_insert(&h->tree, &k, &err) != PM_OK)
			{
				tap_ok(false, "%s: insert: %s", name, err.msg);
				exit(1);
			}
			ref_count += !ref[i];
			ref[i] = 1;
		}
		else if (what < 90)
		{
			bool		found;

			phast_delete(&h->tree, &k, &found, &err);
			if (found != (ref[i] != 0))
			{
				tap_ok(false, "%s: op %ld: delete found %d, reference %d", name, op, found, ref[i]);
				exit(1);
			}
			ref_count -= ref[i];
			ref[i] = 0;
		}
		else if (what < 98)
		{
			phast_batch b;
			bool		backward = what >= 94;
			int			e = 0;

			phast_read_leaf(&h->tree, &k, backward, &b);
			reads++;
			/* exactly the reference's entries in the batch's range, which reaches k */
			if (!backward)
			{
				for (int w = i; w < NKEYS * NRESTS; w++)
				{
					phast_key	kw = key_of(w);

					if (pm_key_cmp(&kw, &b.high) >= 0)
						break;
					if (ref[w] && (e >= b.n || index_of(&b.e[e++]) != w))
						e = -1000000;
				}
			}
			else
			{
				for (int w = i - 1; w >= 0; w--)
				{
					phast_key	kw = key_of(w);

					if (pm_key_cmp(&kw, &b.low) < 0)
						break;
					if (ref[w] && (e >= b.n || index_of(&b.e[b.n - 1 - e++]) != w))
						e = -1000000;
				}
			}
			if (e != b.n || pm_key_cmp(backward ? &b.high : &b.low, &k) != 0)
			{
				tap_ok(false, "%s: op %ld: %s read at %d does not match the reference", name, op,
					   backward ? "backward" : "forward", i);
				exit(1);
			}
		}
		else
		{
			bool		compacted;

			phast_compact_leaf(&h->tree, &k, &compacted, &err);
		}
		if (op % CHECK_EVERY == 0)
		{
			snprintf(when, sizeof(when), "%s after %ld ops", name, op);
			if (!check(&h->tree, when) || !full_scan(&h->tree, false, when) || !full_scan(&h->tree, true, when))
				exit(1);
			rebuild(h);
			snprintf(when, sizeof(when), "%s after %ld ops, rebuilt from PM", name, op);
			if (!check(&h->tree, when) || !full_scan(&h->tree, false, when))
				exit(1);
		}
	}
	phast_get_stats(&h->tree, &st);
	tap_diag("%s: %llu partitions, %llu LNodes in %llu INodes (%llu levels); %llu LNode splits, %llu INode splits, %llu compactions, %ld reads",
			 name, (unsigned long long) st.partitions, (unsigned long long) st.lnodes,
			 (unsigned long long) st.inodes, (unsigned long long) st.height,
			 (unsigned long long) total_splits, (unsigned long long) total_inode_splits,
			 (unsigned long long) total_compactions, reads);
	tap_ok(st.entries == (uint64_t) ref_count, "%s: statistics count the entries", name);
	tap_ok(total_splits > 1000 && total_inode_splits > 10 && total_compactions > 100,
		   "%s: the run split LNodes and INodes and compacted LNodes", name);
	phast_release_dram(&h->tree);
	pm_pool_close(h->pool);
	unlink(path);
}

/* An insert that splits nothing costs two persists: the slot, then the bitmap's line. */
static void
persists_per_insert(harness *h)
{
	char		path[256];
	pm_error	err;
	phast_stats before,
				after;
	pm_counters c0;
	uint64_t	flushes,
				fences;
	int			n = 0;

	snprintf(path, sizeof(path), "%s/phast_persist.pool", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	h->pool = harness_new_phast(path, PM_MODE_ADR, 0, 4, 0, UINT64_MAX);
	phast_attach(&h->tree, h->pool, &h->dram, &h->epoch, SPACE_DRAM, 0);
	phast_rebuild(&h->tree, false, &err);
	phast_get_stats(&h->tree, &before);
	c0 = pm_tls_counters;
	for (uint64_t k = 1; k <= 40; k++)
	{
		phast_key	key = {k << 40, k};

		phast_insert(&h->tree, &key, &err);
		n++;
	}
	flushes = pm_tls_counters.flushes - c0.flushes;
	fences = pm_tls_counters.fences - c0.fences;
	phast_get_stats(&h->tree, &after);
	tap_ok(after.splits == before.splits, "persist accounting: %d inserts split nothing", n);
	tap_ok(flushes == 2 * (uint64_t) n && fences == 2 * (uint64_t) n,
		   "an insert flushes 2 lines and fences twice (%llu flushes, %llu fences for %d)",
		   (unsigned long long) flushes, (unsigned long long) fences, n);
	phast_release_dram(&h->tree);
	pm_pool_close(h->pool);
	unlink(path);
}

typedef struct load_src
{
	long		i;
	long		n;
} load_src;

static bool
next_sorted(void *ctx, phast_key *k)
{
	load_src   *s = ctx;

	if (s->i >= s->n)
		return false;
	*k = (phast_key) {UINT64_C(1) << 63 | (uint64_t) (s->i / 3), (uint64_t) (s->i % 3) + 1};
	s->i++;
	return true;
}

/* A bulk load of 1M entries over 16 partitions of a narrow range, then inserts among them. */
static void
bulk_load(harness *h)
{
	char		path[256];
	pm_error	err;
	load_src	src = {0, 1000000};
	uint64_t	entries;
	const char *problem;
	phast_stats st;

	snprintf(path, sizeof(path), "%s/phast_load.pool", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	h->pool = harness_new_phast(path, PM_MODE_EADR, 0, 1, 0, UINT64_MAX);
	/* a host formats first and partitions once it knows the data's range */
	tap_ok(phast_format(h->pool, 16, UINT64_C(1) << 63, (UINT64_C(1) << 63) + (uint64_t) src.n / 3,
						&err) == PM_OK, "an empty structure is formatted again with 16 partitions");
	if (phast_bulk_load(h->pool, 75, next_sorted, &src, &err) != PM_OK)
	{
		tap_ok(false, "bulk load: %s", err.msg);
		return;
	}
	phast_attach(&h->tree, h->pool, &h->dram, &h->epoch, SPACE_DRAM, 0);
	if (phast_rebuild(&h->tree, true, &err) != PM_OK)
	{
		tap_ok(false, "rebuild after the bulk load: %s", err.msg);
		return;
	}
	problem = phast_check(&h->tree, &entries);
	tap_ok(problem == NULL && entries == (uint64_t) src.n, "bulk load: %ld entries, structure sound (%s)",
		   src.n, problem ? problem : "ok");
	tap_ok(phast_format(h->pool, 4, 0, UINT64_MAX, &err) == PM_ERR_INVALID,
		   "a structure that holds entries is not formatted again");
	phast_get_stats(&h->tree, &st);
	tap_ok(st.lnodes >= (uint64_t) src.n / 42 && st.lnodes <= (uint64_t) src.n / 42 + 2 * 16,
		   "bulk load fills LNodes to 75%% (%llu LNodes)", (unsigned long long) st.lnodes);
	for (long i = 0; i < 200000; i++)
	{
		phast_key	k = {UINT64_C(1) << 63 | (uint64_t) (i * 5 % (src.n / 3)), 4 + (uint64_t) i};

		if (phast_insert(&h->tree, &k, &err) != PM_OK)
		{
			tap_ok(false, "insert after the bulk load: %s", err.msg);
			return;
		}
	}
	problem = phast_check(&h->tree, &entries);
	tap_ok(problem == NULL && entries == (uint64_t) src.n + 200000,
		   "inserts among loaded LNodes split them soundly (%s)", problem ? problem : "ok");
	phast_release_dram(&h->tree);
	pm_pool_close(h->pool);
	unlink(path);
}

/* A pool at its maximum size: an insert that needs a new LNode fails and changes nothing. */
static void
full_pool(harness *h)
{
	char		path[256];
	pm_error	err;
	uint64_t	i = 0;
	pm_errcode	rc = PM_OK;
	uint64_t	entries;
	const char *problem;

	snprintf(path, sizeof(path), "%s/phast_full.pool", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	h->pool = harness_new_phast(path, PM_MODE_EADR, FULL_POOL_SIZE, 2, 0, UINT64_MAX);
	phast_attach(&h->tree, h->pool, &h->dram, &h->epoch, SPACE_DRAM, 0);
	phast_rebuild(&h->tree, false, &err);
	while (rc == PM_OK && i < 10000000)
	{
		phast_key	k = {i * UINT64_C(0x9e3779b97f4a7c15), 1};

		rc = phast_insert(&h->tree, &k, &err);
		i++;
	}
	tap_ok(rc != PM_OK && pm_errcode_is_out_of_space(rc), "a full pool fails an insert with an out-of-space error (%s)",
		   err.msg);
	problem = phast_check(&h->tree, &entries);
	tap_ok(problem == NULL && entries == i - 1, "the failed insert changed nothing (%s; %llu of %llu)",
		   problem ? problem : "sound", (unsigned long long) entries, (unsigned long long) (i - 1));
	phast_release_dram(&h->tree);
	pm_pool_close(h->pool);
	unlink(path);
}

int
main(void)
{
	harness		h;
	uint64_t	seed = getenv("PM_TEST_SEED") ? strtoull(getenv("PM_TEST_SEED"), NULL, 10) : 20261125;

	if (seed == 0)
		seed = 1;
	tap_diag("seed %llu (PM_TEST_SEED)", (unsigned long long) seed);
	harness_shared(&h);
	pm_alloc_attach_arena(&h.dram, h.arena, "test DRAM arena");
	if (!harness_register(h.dom, (uint64_t) getpid(), harness_free, &h, &h.epoch))
		return 2;

	key_base = 0;
	key_step = UINT64_MAX / (NKEYS - 1);
	run_model(&h, "spread keys", 16, seed);
	key_base = UINT64_C(1) << 63;
	key_step = 1;
	run_model(&h, "narrow keys", 8, seed + 1);
	persists_per_insert(&h);
	bulk_load(&h);
	full_pool(&h);
	tap_plan(tap_count);
	return tap_failed ? 1 : 0;
}
