/*
 * test_nvbtree_model.c
 *	  Single-thread model check of the NVB-tree against an exact reference:
 *	  random inserts, deletes, forward and backward reads with bounds and
 *	  leaf rewrites over a small key space (many duplicates, constant
 *	  splits, two-child deletes and rewrites), with structure checks, full
 *	  scans both ways and reopenings (a restart: nothing rebuilt) along the
 *	  way; most entries deleted and every leaf tidied, merging sparse
 *	  leaves, then inserts again; sequential inserts (the append split); the persists of an insert
 *	  and of a delete counted in adr mode; a bulk load with inserts among
 *	  its leaves; a pool filled to its maximum size.  test_nvbtree_model_wide
 *	  and _order run it on a wide tree (nvb_wide_shim.h).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "nvb_harness.h"
#include "nvb_internal.h"

#define NKEYS		20000
#define NRESTS		32
#define OPS			2000000L
#define CHECK_EVERY	400000L
#define FULL_POOL_SIZE	(UINT64_C(4) << 20)
#define NIDX		(NKEYS * NRESTS)

static uint8_t ref[NIDX];
static long ref_count;

static nvb_key
key_of(int i)
{
	int			r = i % NRESTS;

	return (nvb_key) {(UINT64_C(1) << 63) + (uint64_t) (i / NRESTS), r == NRESTS - 1 ? NVB_REST_MAX : (uint64_t) r + 1};
}

static int
index_of(const nvb_key *k)
{
	int			r = k->rest == NVB_REST_MAX ? NRESTS - 1 : (int) k->rest - 1;

	return (int) (k->key - (UINT64_C(1) << 63)) * NRESTS + r;
}

static const char *
tmp_path(const char *name, char *buf, size_t len)
{
	snprintf(buf, len, "%s/nvb_%s.pool", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", name);
	return buf;
}

static bool
read_or_fail(nvb_tree *t, const nvb_key *from, bool backward, const nvb_key *lo, const nvb_key *hi,
			 nvb_batch *b)
{
	pm_error	err;

	if (nvb_read_range(t, from, backward, lo, hi, b, NULL, NULL, &err) != PM_OK)
		return tap_ok(false, "read: %s", err.msg);
	return true;
}

/* Scan everything forward (or backward) batch by batch; compare with the reference. */
static bool
full_scan(nvb_tree *t, bool backward, const char *when)
{
	nvb_batch	b;
	nvb_key		from = backward ? PM_KEY_MAX : PM_KEY_MIN;
	int			i = backward ? NIDX - 1 : 0;
	long		seen = 0;

	for (;;)
	{
		if (!read_or_fail(t, &from, backward, &PM_KEY_MIN, &PM_KEY_MAX, &b))
			return false;
		if (pm_key_cmp(backward ? &b.high : &b.low, &from) != 0 || pm_key_cmp(&b.low, &b.high) > 0)
			return tap_ok(false, "%s: %s batch fences continue the scan", when, backward ? "backward" : "forward");
		for (int e = 0; e < b.n; e++)
		{
			const nvb_key *k = &b.e[backward ? b.n - 1 - e : e];

			if (e > 0 && pm_key_cmp(&b.e[e - 1], &b.e[e]) >= 0)
				return tap_ok(false, "%s: a batch is not in order", when);
			if (pm_key_cmp(k, &b.low) < 0 || pm_key_cmp(k, &b.high) >= 0)
				return tap_ok(false, "%s: an entry outside its batch's fences", when);
			while (backward ? (i >= 0 && !ref[i]) : (i < NIDX && !ref[i]))
				i += backward ? -1 : 1;
			if (i < 0 || i >= NIDX || index_of(k) != i)
				return tap_ok(false, "%s: %s scan entry %ld is (%llu,%llu), reference %d", when,
							  backward ? "backward" : "forward", seen, (unsigned long long) k->key,
							  (unsigned long long) k->rest, i);
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
check(nvb_tree *t, const char *when)
{
	uint64_t	entries = 0;
	const char *problem = nvb_check(t, &entries);

	if (problem != NULL)
		return tap_ok(false, "%s: structure check: %s", when, problem);
	return tap_ok(entries == (uint64_t) ref_count, "%s: structure sound, %llu entries (reference %ld)",
				  when, (unsigned long long) entries, ref_count);
}

static uint64_t total_splits;
static uint64_t total_compactions;
static uint64_t total_merges;

/* Close the lock table and open the pool again: what a restart does, nothing of the tree rebuilt. */
static void
reopen(harness *h)
{
	nvb_stats	st;

	nvb_get_stats(&h->tree, &st);
	total_splits += st.splits;
	total_compactions += st.compactions;
	total_merges += st.merges;
	nvb_release_dram(&h->tree);
	harness_open(h);
}

/* A read at k with bounds [lo, hi]: exactly the reference's entries of the batch's range. */
static bool
bounded_read(harness *h, int i, bool backward, int lo_i, int hi_i, long op)
{
	nvb_batch	b;
	nvb_key		k = key_of(i),
				lo = key_of(lo_i),
				hi = key_of(hi_i);
	int			e = 0;

	if (!read_or_fail(&h->tree, &k, backward, &lo, &hi, &b))
		return false;
	if (pm_key_cmp(backward ? &b.high : &b.low, &k) != 0)
		return tap_ok(false, "op %ld: a read's batch does not start at its key", op);
	/* the reference's entries of the batch's range, in ascending order */
	for (int w = backward ? lo_i : (i > lo_i ? i : lo_i); w <= (backward ? (i - 1 < hi_i ? i - 1 : hi_i) : hi_i); w++)
	{
		nvb_key		kw = key_of(w);

		if (pm_key_cmp(&kw, &b.high) >= 0)
			break;
		if (!ref[w] || pm_key_cmp(&kw, &b.low) < 0)
			continue;
		if (e >= b.n || index_of(&b.e[e]) != w)
			return tap_ok(false, "op %ld: %s read at %d in [%d, %d] misses or adds entries near %d",
						  op, backward ? "backward" : "forward", i, lo_i, hi_i, w);
		e++;
	}
	if (e != b.n)
		return tap_ok(false, "op %ld: %s read at %d returns %d entries, reference %d", op,
					  backward ? "backward" : "forward", i, b.n, e);
	return true;
}

/*
 * Most entries deleted, then every leaf tidied as VACUUM's walk does (at
 * each batch's low, from the left), so that sparse leaves merge with their
 * right siblings; then inserts all over the merged leaves.  Checked after
 * each step.
 */
static void
shrink_and_merge(harness *h, uint64_t seed)
{
	pm_error	err;
	nvb_stats	st0,
				st;
	nvb_batch	b;
	nvb_key		from = PM_KEY_MIN;
	long		tidied = 0;

	nvb_get_stats(&h->tree, &st0);
	for (int i = 0; i < NIDX; i++)
	{
		nvb_key		k = key_of(i);
		bool		found;

		if (!ref[i] || xorshift(&seed) % 16 == 0)
			continue;
		if (nvb_delete(&h->tree, &k, &found, &err) != PM_OK || !found)
		{
			tap_ok(false, "shrink: delete of %d: %s", i, found ? err.msg : "not found");
			exit(1);
		}
		ref[i] = 0;
		ref_count--;
	}
	for (;;)
	{
		bool		t;

		if (!read_or_fail(&h->tree, &from, false, &PM_KEY_MIN, &PM_KEY_MAX, &b))
			exit(1);
		if (nvb_tidy_leaf(&h->tree, &b.low, &t, &err) != PM_OK)
		{
			tap_ok(false, "shrink: tidy: %s", err.msg);
			exit(1);
		}
		tidied += t;
		if (pm_key_is_max(&b.high))
			break;
		from = b.high;
	}
	nvb_get_stats(&h->tree, &st);
	tap_diag("shrink: %llu leaves before, %llu after %llu merges and %llu rewrites (%ld tidies)",
			 (unsigned long long) st0.leaves, (unsigned long long) st.leaves,
			 (unsigned long long) (st.merges - st0.merges),
			 (unsigned long long) (st.compactions - st0.compactions), tidied);
	if (!check(&h->tree, "after the shrink's merges") ||
		!full_scan(&h->tree, false, "after the shrink's merges") ||
		!full_scan(&h->tree, true, "after the shrink's merges"))
		exit(1);
	tap_ok(st.merges - st0.merges > st0.leaves / 4 && st.leaves < st0.leaves / 2,
		   "sparse leaves merge with their right siblings: %llu leaves of %llu left",
		   (unsigned long long) st.leaves, (unsigned long long) st0.leaves);
	for (int n = 0; n < NIDX / 8; n++)
	{
		int			i = (int) (xorshift(&seed) % NIDX);
		nvb_key		k = key_of(i);

		if (nvb_insert(&h->tree, &k, &err) != PM_OK)
		{
			tap_ok(false, "regrow: insert of %d: %s", i, err.msg);
			exit(1);
		}
		ref_count += !ref[i];
		ref[i] = 1;
	}
	pm_epoch_drain(&h->epoch);
	reopen(h);
	if (!check(&h->tree, "inserts into merged leaves, reopened") ||
		!full_scan(&h->tree, false, "inserts into merged leaves, reopened") ||
		!full_scan(&h->tree, true, "inserts into merged leaves, reopened"))
		exit(1);
}

static void
run_model(harness *h, uint64_t seed)
{
	char		path[256];
	pm_error	err;
	char		when[128];
	nvb_stats	st;
	long		reads = 0,
				tidied = 0;

	memset(ref, 0, sizeof(ref));
	ref_count = 0;
	h->pool = harness_new_nvb(tmp_path("model", path, sizeof(path)), PM_MODE_EADR, 0);
	nvb_attach(&h->tree, h->pool, &h->dram, &h->epoch, SPACE_PM, 0, 0);
	harness_open(h);
	for (long op = 1; op <= OPS; op++)
	{
		uint64_t	r = xorshift(&seed);
		int			i = (int) ((r >> 16) % NIDX);
		nvb_key		k = key_of(i);
		int			what = (int) (r % 100);
		/* phases: growth, then deletes outweighing inserts, then both */
		int			insert_pct = op < OPS / 3 ? 60 : op < 2 * OPS / 3 ? 30 : 50;

		if (what < insert_pct)
		{
			if (nvb_insert(&h->tree, &k, &err) != PM_OK)
			{
				tap_ok(false, "op %ld: insert: %s", op, err.msg);
				exit(1);
			}
			ref_count += !ref[i];
			ref[i] = 1;
		}
		else if (what < 88)
		{
			bool		found;

			if (nvb_delete(&h->tree, &k, &found, &err) != PM_OK || found != (ref[i] != 0))
			{
				tap_ok(false, "op %ld: delete found %d, reference %d", op, found, ref[i]);
				exit(1);
			}
			ref_count -= ref[i];
			ref[i] = 0;
		}
		else if (what < 98)
		{
			int			span = (int) ((r >> 40) % 4000);
			int			lo_i = i - span / 2 < 0 ? 0 : i - span / 2;
			int			hi_i = i + span / 2 >= NIDX ? NIDX - 1 : i + span / 2;

			reads++;
			if (!bounded_read(h, i, what >= 93, lo_i, hi_i, op))
				exit(1);
		}
		else
		{
			bool		t;

			if (nvb_tidy_leaf(&h->tree, &k, &t, &err) != PM_OK)
			{
				tap_ok(false, "op %ld: tidy: %s", op, err.msg);
				exit(1);
			}
			tidied += t;
		}
		if (op % CHECK_EVERY == 0)
		{
			snprintf(when, sizeof(when), "after %ld ops", op);
			if (!check(&h->tree, when) || !full_scan(&h->tree, false, when) ||
				!full_scan(&h->tree, true, when))
				exit(1);
			pm_epoch_drain(&h->epoch);
			reopen(h);
			snprintf(when, sizeof(when), "after %ld ops, reopened", op);
			if (!check(&h->tree, when) || !full_scan(&h->tree, false, when))
				exit(1);
		}
	}
	nvb_get_stats(&h->tree, &st);
	tap_diag("%llu leaves, %llu inner nodes, height %llu; %llu splits, %llu compactions, %ld reads, %ld leaves tidied",
			 (unsigned long long) st.leaves, (unsigned long long) st.inner_nodes,
			 (unsigned long long) st.height, (unsigned long long) total_splits,
			 (unsigned long long) total_compactions, reads, tidied);
	tap_ok(st.entries == (uint64_t) ref_count, "statistics count the entries");
	tap_ok(total_splits > 1000 && total_compactions > 100 && st.height >= 3 && tidied > 100,
		   "the run split and rewrote nodes (three levels at least) and tidied leaves");
	shrink_and_merge(h, seed);
	harness_close(h);
	unlink(path);
}

/*
 * Ascending inserts: the rightmost leaf splits keeping 90% (leaves end
 * about that full), and the scans see them all.
 */
static void
sequential(harness *h)
{
	char		path[256];
	pm_error	err;
	nvb_stats	st;
	int			n = 100000;
	uint64_t	entries;
	const char *problem;

	h->pool = harness_new_nvb(tmp_path("seq", path, sizeof(path)), PM_MODE_EADR, 0);
	nvb_attach(&h->tree, h->pool, &h->dram, &h->epoch, SPACE_PM, 0, 0);
	harness_open(h);
	for (int i = 0; i < n; i++)
	{
		nvb_key		k = {(uint64_t) i, 1};

		if (nvb_insert(&h->tree, &k, &err) != PM_OK)
		{
			tap_ok(false, "sequential insert: %s", err.msg);
			return;
		}
	}
	problem = nvb_check(&h->tree, &entries);
	nvb_get_stats(&h->tree, &st);
	tap_ok(problem == NULL && entries == (uint64_t) n, "sequential inserts: sound (%s)",
		   problem ? problem : "ok");
	{
		uint64_t	bytes = 0;

		for (int i = 0; i < n; i++)
			bytes += nvb_test_entry_bytes(&(nvb_key) {(uint64_t) i, 1});
		tap_ok(st.leaves <= bytes / (NVB_TEST_LEAF_ROOM * 85 / 100) + 1,
			   "sequential inserts fill leaves to about 90%% (%llu leaves for %d entries)",
			   (unsigned long long) st.leaves, n);
	}
	harness_close(h);
	unlink(path);
}

/*
 * In adr mode an insert that splits nothing flushes two lines (its slot,
 * then the link that commits it; a wide entry's record too) and fences
 * twice; a delete flushes one line with one fence (a slot with at most one
 * child), or four lines with three fences (a two-child delete: the copy's
 * key and links (and record), the link that commits it, the successor's
 * old link).
 */
static void
persists(harness *h)
{
	char		path[256];
	pm_error	err;
	nvb_stats	before,
				after;
	pm_counters c0;
	uint64_t	seed = 99;
	int			n = 0,
				d = 0;

	h->pool = harness_new_nvb(tmp_path("persist", path, sizeof(path)), PM_MODE_ADR, 0);
	nvb_attach(&h->tree, h->pool, &h->dram, &h->epoch, SPACE_PM, 0, 0);
	harness_open(h);
	nvb_get_stats(&h->tree, &before);
	c0 = pm_tls_counters;
	/* as many as the first leaf holds (a wide one's slots are a guess at its records' sizes) */
	for (uint64_t bytes = 0;;)
	{
		nvb_key		key = {xorshift(&seed) >> 1, 1};

		bytes += nvb_test_entry_bytes(&key);
		if (bytes > NVB_TEST_LEAF_ROOM * (NVB_TEST_KIND ? 4 : 9) / 10 || n == NVB_LEAF_CAP - 1)
			break;
		nvb_insert(&h->tree, &key, &err);
		n++;
	}
	nvb_get_stats(&h->tree, &after);
	tap_ok(after.splits == before.splits && after.compactions == before.compactions,
		   "persist accounting: %d inserts split nothing", n);
	tap_ok((NVB_TEST_KIND ? pm_tls_counters.flushes - c0.flushes >= 3 * (uint64_t) n :
			pm_tls_counters.flushes - c0.flushes == 2 * (uint64_t) n) &&
		   pm_tls_counters.fences - c0.fences == 2 * (uint64_t) n,
		   "an insert fences twice and flushes its slot and link (and a wide record) (%llu flushes, %llu fences for %d)",
		   (unsigned long long) (pm_tls_counters.flushes - c0.flushes),
		   (unsigned long long) (pm_tls_counters.fences - c0.fences), n);

	/* deletes of every other entry from a full tree of one leaf */
	{
		nvb_batch	b;
		nvb_key		all[NVB_LEAF_CAP];
		int			got = 0;
		nvb_key		from = PM_KEY_MIN;

		do
		{
			nvb_read_range(&h->tree, &from, false, &PM_KEY_MIN, &PM_KEY_MAX, &b, NULL, NULL, &err);
			memcpy(all + got, b.e, sizeof(nvb_key) * b.n);
			got += b.n;
			from = b.high;
		} while (!pm_key_is_max(&b.high));
		c0 = pm_tls_counters;
		for (int i = 0; i < got; i += 2)
		{
			bool		found;

			nvb_delete(&h->tree, &all[i], &found, &err);
			d += found;
		}
	}
	tap_ok(d == (n + 1) / 2 && (double) (pm_tls_counters.fences - c0.fences) / d <= 2.5,
		   "a delete persists at most 2.5 times on average (%.2f fences, %.2f lines flushed, for %d)",
		   (double) (pm_tls_counters.fences - c0.fences) / d,
		   (double) (pm_tls_counters.flushes - c0.flushes) / d, d);
	harness_close(h);
	unlink(path);
}

typedef struct load_src
{
	long		i;
	long		n;
} load_src;

static bool
next_sorted(void *ctx, nvb_key *k)
{
	load_src   *s = ctx;

	if (s->i >= s->n)
		return false;
	*k = (nvb_key) {UINT64_C(1) << 63 | (uint64_t) (s->i / 3), (uint64_t) (s->i % 3) + 1};
	s->i++;
	return true;
}

/* A bulk load of 1M entries, then inserts among them; an empty load. */
static void
bulk_load(harness *h)
{
	char		path[256];
	pm_error	err;
	load_src	src = {0, 1000000};
	uint64_t	entries;
	const char *problem;
	nvb_stats	st;

	h->pool = harness_new_nvb(tmp_path("load", path, sizeof(path)), PM_MODE_EADR, 0);
	if (nvb_bulk_load(h->pool, 75, next_sorted, &src, &err) != PM_OK)
	{
		tap_ok(false, "bulk load: %s", err.msg);
		return;
	}
	nvb_attach(&h->tree, h->pool, &h->dram, &h->epoch, SPACE_PM, 0, 0);
	harness_open(h);
	problem = nvb_check(&h->tree, &entries);
	tap_ok(problem == NULL && entries == (uint64_t) src.n, "bulk load: %ld entries, structure sound (%s)",
		   src.n, problem ? problem : "ok");
	nvb_get_stats(&h->tree, &st);
	{
		/* a leaf closes at the entry that would take it past 75% of its room */
		uint64_t	bytes = 0,
					largest = 0;
		uint64_t	target = NVB_TEST_LEAF_ROOM * 75 / 100;
		load_src	again = {0, src.n};
		nvb_key		k;

		while (next_sorted(&again, &k))
		{
			bytes += nvb_test_entry_bytes(&k);
			if (nvb_test_entry_bytes(&k) > largest)
				largest = nvb_test_entry_bytes(&k);
		}
		tap_ok(NVB_TEST_KIND ? st.leaves >= bytes / target &&
			   st.leaves <= bytes / (target - 2 * largest) + 1 :
			   st.leaves == (uint64_t) (src.n + NVB_LEAF_CAP * 75 / 100 - 1) / (NVB_LEAF_CAP * 75 / 100),
			   "bulk load fills leaves to 75%% (%llu leaves, height %llu)", (unsigned long long) st.leaves,
			   (unsigned long long) st.height);
	}
	for (long i = 0; i < 200000; i++)
	{
		nvb_key		k = {UINT64_C(1) << 63 | (uint64_t) (i * 5 % (src.n / 3)), 4 + (uint64_t) i};

		if (nvb_insert(&h->tree, &k, &err) != PM_OK)
		{
			tap_ok(false, "insert after the bulk load: %s", err.msg);
			return;
		}
	}
	problem = nvb_check(&h->tree, &entries);
	tap_ok(problem == NULL && entries == (uint64_t) src.n + 200000,
		   "inserts among loaded leaves split them soundly (%s)", problem ? problem : "ok");
	harness_close(h);

	src.i = src.n = 0;
	h->pool = harness_new_nvb(path, PM_MODE_EADR, 0);
	tap_ok(nvb_bulk_load(h->pool, 75, next_sorted, &src, &err) == PM_OK, "an empty bulk load");
	nvb_attach(&h->tree, h->pool, &h->dram, &h->epoch, SPACE_PM, 0, 0);
	harness_open(h);
	problem = nvb_check(&h->tree, &entries);
	tap_ok(problem == NULL && entries == 0, "an empty load is an empty tree (%s)", problem ? problem : "ok");
	harness_close(h);
	unlink(path);
}

/* A pool at its maximum size: an insert that needs a new node fails and changes nothing. */
static void
full_pool(harness *h)
{
	char		path[256];
	pm_error	err;
	uint64_t	i = 0;
	pm_errcode	rc = PM_OK;
	uint64_t	entries;
	const char *problem;

	h->pool = harness_new_nvb(tmp_path("full", path, sizeof(path)), PM_MODE_EADR, FULL_POOL_SIZE);
	nvb_attach(&h->tree, h->pool, &h->dram, &h->epoch, SPACE_PM, 0, 0);
	harness_open(h);
	while (rc == PM_OK && i < 10000000)
	{
		nvb_key		k = {i * UINT64_C(0x9e3779b97f4a7c15), 1};

		rc = nvb_insert(&h->tree, &k, &err);
		i++;
	}
	tap_ok(rc != PM_OK && pm_errcode_is_out_of_space(rc),
		   "a full pool fails an insert with an out-of-space error (%s)", err.msg);
	problem = nvb_check(&h->tree, &entries);
	tap_ok(problem == NULL && entries == i - 1, "the failed insert changed nothing (%s; %llu of %llu)",
		   problem ? problem : "sound", (unsigned long long) entries, (unsigned long long) (i - 1));
	harness_close(h);
	unlink(path);
}

#ifdef NVB_TEST_WIDE
/*
 * Records of the largest size a wide tree takes, every one of one 8-byte
 * key (so separators keep their records): leaves and the root split with
 * the fewest entries a node holds; a record one byte longer is refused
 * with PM_ERR_LIMIT and changes nothing; deletes of every other one.
 */
static void
longest_records(harness *h)
{
	char		path[256];
	pm_error	err;
	pm_errcode	rc = PM_OK;
	uint64_t	entries;
	const char *problem;
	nvb_stats	st;
	int			n = 600;

	h->pool = harness_new_nvb(tmp_path("longest", path, sizeof(path)), PM_MODE_EADR, 0);
	nvb_attach(&h->tree, h->pool, &h->dram, &h->epoch, SPACE_PM, 0, 0);
	harness_open(h);
	for (int i = 0; i < n && rc == PM_OK; i++)
		rc = nvb_test_record_op(&h->tree, true, 5, (uint64_t) i + 1, NVB_WIDE_DATA_MAX - 8 * (i % 2),
								NVB_WIDE_DATA_MAX, (uint64_t) i * 7919 % 601, &err);
	problem = nvb_check(&h->tree, &entries);
	nvb_get_stats(&h->tree, &st);
	tap_ok(rc == PM_OK && problem == NULL && entries == (uint64_t) n && st.height >= 3,
		   "%d entries of %d-byte records under one key: sound, %llu leaves, height %llu (%s)", n,
		   NVB_WIDE_DATA_MAX, (unsigned long long) st.leaves, (unsigned long long) st.height,
		   rc != PM_OK ? err.msg : problem ? problem : "ok");
	rc = nvb_test_record_op(&h->tree, true, 5, 9999, 8, NVB_WIDE_DATA_MAX + 1, 1, &err);
	problem = nvb_check(&h->tree, &entries);
	tap_ok(rc == PM_ERR_LIMIT && problem == NULL && entries == (uint64_t) n,
		   "a record of %d bytes is refused with a limit error and changes nothing (%s)",
		   NVB_WIDE_DATA_MAX + 1, err.msg);
	rc = PM_OK;
	for (int i = 0; i < n && rc == PM_OK; i += 2)
		rc = nvb_test_record_op(&h->tree, false, 5, (uint64_t) i + 1, NVB_WIDE_DATA_MAX,
								NVB_WIDE_DATA_MAX, (uint64_t) i * 7919 % 601, &err);
	problem = nvb_check(&h->tree, &entries);
	tap_ok(rc == PM_OK && problem == NULL && entries == (uint64_t) n / 2,
		   "every other one deleted: sound, %llu left (%s)", (unsigned long long) entries,
		   rc != PM_OK ? err.msg : problem ? problem : "ok");
	harness_close(h);
	unlink(path);
}
#endif

int
main(void)
{
	harness		h;
	uint64_t	seed = getenv("PM_TEST_SEED") ? strtoull(getenv("PM_TEST_SEED"), NULL, 10) : 20261202;

	if (seed == 0)
		seed = 1;
	tap_diag("seed %llu (PM_TEST_SEED)", (unsigned long long) seed);
	harness_shared(&h);
	pm_alloc_attach_arena(&h.dram, h.arena, "test DRAM arena");
	if (!harness_register(h.dom, (uint64_t) getpid(), harness_free, &h, &h.epoch))
		return 2;
	if (!getenv("NVB_ONLY_FULL"))
		run_model(&h, seed);
	sequential(&h);
	persists(&h);
	bulk_load(&h);
	full_pool(&h);
#ifdef NVB_TEST_WIDE
	longest_records(&h);
#endif
	tap_plan(tap_count);
	return tap_failed ? 1 : 0;
}
