/*
 * test_nbtree_model.c
 *	  Single-thread model check of the nbtree against an exact reference:
 *	  10 million random inserts, deletes, forward and backward range reads
 *	  and compactions over a small key space (many duplicates, constant
 *	  SMOs), with structural checks, full comparisons and rebuilds of the
 *	  DRAM layer from PM along the way; some inserts come as batches of
 *	  1..BATCH_MAX entries (nbt_insert_sorted), ascending with gaps of one
 *	  of several widths (an entry repeated, entries already present), a few
 *	  in random order, each batch's range compared with the reference (a
 *	  sparse batch's entries looked up).  Then most of the middle of the key
 *	  space is deleted and swept with compactions: leaves must merge, the
 *	  leaf count must fall, and the content must still be the reference.
 *	  Then a staged case: an inner split while a merge is pending.  Last, a
 *	  pool that reaches its maximum size: inserts fail before any leaf is
 *	  frozen (a batch then stops where the first entry fails, those before
 *	  it in), and after deletes a compaction sweep (as VACUUM does) lets
 *	  inserts go on in the same full pool.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "nbt_harness.h"
#include "nbt_internal.h"
#include "nbt_wide_shim.h"

#define NKEYS		20000
#define NRESTS		64
#ifdef NBT_TEST_WIDE
/* each comparison of a wide run reads records: a third of the operations, as many checkpoints */
#define OPS			3000000L
#define CHECK_EVERY	300000L
#else
#define OPS			10000000L
#define CHECK_EVERY	1000000L
#endif
#define MERGE_KEEP	40			/* the merge phase keeps one entry in MERGE_KEEP */
#define MERGE_SWEEPS 8
#define PAIR_LEAVES	200			/* the staged inner split: leaves of PAIR_FILL entries */
#define PAIR_FILL	50
#define FULL_POOL_SIZE	(UINT64_C(4) << 20)
#define FULL_BATCH	500			/* the batch into the full pool */
#define BATCH_MAX	2000
#define BATCH_EVERY	2000		/* one insert in this many is a batch */

static uint8_t ref[NKEYS * NRESTS];	/* 1: (key index, rest index) present */
static long ref_count;

static uint64_t
key_of(int k)
{
	return k == NKEYS - 1 ? UINT64_MAX : (uint64_t) k * 1000003;
}

static uint64_t
rest_of(int r)
{
	return r == NRESTS - 1 ? NBT_REST_MAX : (uint64_t) r + 1;
}

static nbt_skey
skey_of(int k, int r)
{
	return (nbt_skey) {key_of(k), rest_of(r)};
}

/* Reference successor (forward) / predecessor (backward) from index i. */
static int
ref_next(int i)
{
	while (i < NKEYS * NRESTS && !ref[i])
		i++;
	return i;
}

static int
ref_prev(int i)
{
	while (i >= 0 && !ref[i])
		i--;
	return i;
}

/* Compare up to want entries from position (k, r) forward or backward. */
static const char *
compare_range(nbt_tree *t, int k, int r, bool backward, int want)
{
	static char msg[200];
	nbt_batch	b;
	nbt_skey	start = skey_of(k, r);
	int			idx = k * NRESTS + r;
	int			got = 0;

	if (!backward)
	{
		int			ri = ref_next(idx);

		nbt_read_leaf(t, &start, false, &b);
		for (;;)
		{
			for (int i = 0; i < b.n && got < want; i++)
			{
				if (pm_key_cmp(&b.e[i].sk, &start) < 0)
					continue;
				if (ri >= NKEYS * NRESTS)
					return "forward read returned an entry past the reference's end";
				if (pm_key_cmp(&b.e[i].sk, &(nbt_skey) {key_of(ri / NRESTS), rest_of(ri % NRESTS)}) != 0)
				{
					snprintf(msg, sizeof(msg), "forward read: entry %d differs", got);
					return msg;
				}
				ri = ref_next(ri + 1);
				got++;
			}
			if (got >= want || pm_key_is_max(&b.high))
				break;
			{
				nbt_skey	from = b.high;

				nbt_read_leaf(t, &from, false, &b);
			}
		}
		if (got < want && ri < NKEYS * NRESTS)
			return "forward read missed entries";
	}
	else
	{
		int			ri = ref_prev(idx);

		nbt_read_leaf(t, &start, false, &b);
		for (;;)
		{
			for (int i = b.n - 1; i >= 0 && got < want; i--)
			{
				if (pm_key_cmp(&b.e[i].sk, &start) > 0)
					continue;
				if (ri < 0)
					return "backward read returned an entry before the reference's start";
				if (pm_key_cmp(&b.e[i].sk, &(nbt_skey) {key_of(ri / NRESTS), rest_of(ri % NRESTS)}) != 0)
				{
					snprintf(msg, sizeof(msg), "backward read: entry %d differs", got);
					return msg;
				}
				ri = ref_prev(ri - 1);
				got++;
			}
			if (got >= want || pm_key_is_min(&b.low))
				break;
			{
				nbt_skey	from = b.low;

				nbt_read_leaf(t, &from, true, &b);
			}
		}
		if (got < want && ri >= 0)
			return "backward read missed entries";
	}
	return NULL;
}

static long batches,
			batch_entries,
			batch_new;

/*
 * A batch of 1..BATCH_MAX entries through nbt_insert_sorted from index idx
 * on, ascending with gaps of up to 1, 4, 64 or 1024 index positions (0:
 * the entry again), one batch in eight shuffled; then the reference takes
 * them and the batch's range is read back (a sparse one's entries are
 * looked up).  Returns the first problem, or
 * NULL.
 */
static const char *
batch_insert(nbt_tree *t, uint64_t *seed, int idx)
{
	static char msg[300];
	static nbt_skey sks[BATCH_MAX];
	static int	idxs[BATCH_MAX];
	uint64_t	x = xorshift(seed);
	int			want = 1 + (int) (x % BATCH_MAX);
	int			gap = (int[]) {1, 4, 64, 1024}[(x >> 16) % 4];
	bool		shuffle = (x >> 24) % 8 == 0;
	int			n = 0;
	int			done = -1;
	int			lo = idx,
				hi = idx;
	long		present = 0;
	pm_error	err;
	const char *why;

	while (n < want && idx < NKEYS * NRESTS)
	{
		idxs[n] = idx;
		sks[n++] = skey_of(idx / NRESTS, idx % NRESTS);
		hi = idx;
		idx += (int) (xorshift(seed) % (uint64_t) (gap + 1));
	}
	if (shuffle)
		for (int i = n - 1; i > 0; i--)
		{
			int			j = (int) (xorshift(seed) % (uint64_t) (i + 1));
			nbt_skey	s = sks[i];
			int			d = idxs[i];

			sks[i] = sks[j], sks[j] = s;
			idxs[i] = idxs[j], idxs[j] = d;
		}
	if (nbt_insert_sorted(t, sks, n, &done, &err) != PM_OK)
	{
		snprintf(msg, sizeof(msg), "batch of %d: entry %d failed: %s", n, done, err.msg);
		return msg;
	}
	if (done != n)
		return "a batch that succeeded did not report every entry done";
	batches++;
	batch_entries += n;
	for (int i = 0; i < n; i++)
		if (!ref[idxs[i]])
		{
			ref[idxs[i]] = 1;
			ref_count++;
			batch_new++;
		}
	if (hi - lo <= 16 * BATCH_MAX)
	{
		for (int i = lo; i <= hi; i++)
			present += ref[i];
		why = compare_range(t, lo / NRESTS, lo % NRESTS, false, (int) present);
	}
	else
	{
		/* a sparse batch: each of its entries looked up */
		why = NULL;
		for (int i = 0; i < n && why == NULL; i++)
		{
			nbt_batch	b;

			nbt_read_range(t, &sks[i], false, &sks[i], &sks[i], &b);
			if (b.n != 1 || pm_key_cmp(&b.e[0].sk, &sks[i]) != 0)
				why = "an entry of the batch is not found";
		}
	}
	if (why != NULL)
	{
		snprintf(msg, sizeof(msg), "after a batch of %d (gap %d%s): %s", n, gap,
				 shuffle ? ", shuffled" : "", why);
		return msg;
	}
	return NULL;
}

/* Leaves a forward read visits from from_sk until it passes to_sk. */
static uint64_t
count_leaves(nbt_tree *t, const nbt_skey *from_sk, const nbt_skey *to_sk)
{
	nbt_batch	b;
	nbt_skey	from = *from_sk;
	uint64_t	n = 0;

	for (;;)
	{
		nbt_read_leaf(t, &from, false, &b);
		n++;
		if (pm_key_is_max(&b.high) || pm_key_cmp(&b.high, to_sk) >= 0)
			return n;
		from = b.high;
	}
}

/*
 * Empty the middle of the key space but one entry in MERGE_KEEP, then sweep
 * nbt_compact_leaf over it until the leaf count stops falling.  *before and
 * *after get the range's leaf counts, *merges the merges done.  Returns the
 * first problem, or NULL.
 */
static const char *
merge_phase(nbt_tree *t, uint64_t *before, uint64_t *after, uint64_t *merges)
{
	static char msg[200];
	nbt_skey	lo = skey_of(NKEYS / 10, 0);
	nbt_skey	hi = skey_of(NKEYS * 9 / 10, 0);
	long		seen = 0;
	nbt_stats	st;
	pm_error	err;
	uint64_t	n;
	const char *why;

	*before = count_leaves(t, &lo, &hi);
	for (int i = NKEYS / 10 * NRESTS; i < NKEYS * 9 / 10 * NRESTS; i++)
	{
		nbt_skey	sk = skey_of(i / NRESTS, i % NRESTS);
		bool		found;

		if (!ref[i] || seen++ % MERGE_KEEP == 0)
			continue;
		if (nbt_delete(t, &sk, &found, &err) != PM_OK || !found)
			return "merge phase: a delete failed or missed its entry";
		ref[i] = 0;
		ref_count--;
	}
	nbt_get_stats(t, &st);
	*merges = st.smo_merges;
	for (int sweep = 0; sweep < MERGE_SWEEPS; sweep++)
	{
		uint64_t	leaves = count_leaves(t, &lo, &hi);
		nbt_skey	from = lo;
		nbt_batch	b;
		bool		compacted;

		for (;;)
		{
			nbt_read_leaf(t, &from, false, &b);
			if (nbt_compact_leaf(t, &b.low, &compacted, &err) != PM_OK)
				return "merge phase: compaction failed";
			if (pm_key_is_max(&b.high) || pm_key_cmp(&b.high, &hi) >= 0)
				break;
			from = b.high;
		}
		if (count_leaves(t, &lo, &hi) == leaves)
			break;
	}
	*after = count_leaves(t, &lo, &hi);
	nbt_get_stats(t, &st);
	*merges = st.smo_merges - *merges;
	if (st.leaves != count_leaves(t, &PM_KEY_MIN, &PM_KEY_MAX))
		return "merge phase: the leaf count in the stats differs from the tree's";
	if ((why = nbt_check(t, &n)) != NULL)
	{
		snprintf(msg, sizeof(msg), "merge phase: check: %s", why);
		return msg;
	}
	if (n != (uint64_t) ref_count)
		return "merge phase: entry count differs from the reference";
	if ((why = compare_range(t, 0, 0, false, NKEYS * NRESTS)) != NULL ||
		(why = compare_range(t, NKEYS - 1, NRESTS - 1, true, NKEYS * NRESTS)) != NULL)
	{
		snprintf(msg, sizeof(msg), "merge phase: %s", why);
		return msg;
	}
	return NULL;
}

static bool
next_bulk_key(void *ctx, nbt_skey *sk)
{
	uint64_t   *i = ctx;

	if (*i == PAIR_LEAVES * PAIR_FILL)
		return false;
	*sk = (nbt_skey) {(*i)++ * 1000, 1};
	return true;
}

/*
 * Stage what the concurrency test rarely hits: the level-1 node holding a
 * pending merge pair splits right between them.  Bulk-load leaves (of
 * PAIR_FILL narrow entries, fewer wide ones), split the 71st leaf, right of
 * entries 40 and 41 of the first level-1 node, until the node is full,
 * request the merge of those two leaves without running it, split the
 * node, then run the merge.
 */
static const char *
split_keeps_merge_pair(const char *dir)
{
	static char msg[300];
	char		path[600];
	harness		h;
	pm_error	err;
	uint64_t	i = 0;
	uint64_t	k = 1;
	uint64_t	n = 0;
	uint64_t	x_off;
	nbt_inner  *node;
	nbt_batch	b;
	nbt_skey	from = PM_KEY_MIN;
	pm_errcode	rc;
	const char *why = NULL;

	snprintf(path, sizeof(path), "%s/pair.pm", dir);
	harness_shared(&h);
	harness_attach(&h, harness_new_pool(path, PM_MODE_EADR, UINT64_C(1) << 28), (uint64_t) getpid(), 0);
	if (nbt_bulk_load(h.pool, 81, next_bulk_key, &i, &err) != PM_OK ||
		nbt_rebuild(&h.tree, false, &err) != PM_OK)
	{
		snprintf(msg, sizeof(msg), "set-up: %s", err.msg);
		return msg;
	}
	node = nbt_inner_at(&h.tree, nbt_descend(&h.tree, &PM_KEY_MIN, 1));
	/* keys inside the 71st leaf's range: its splits add entries right of the pair */
	for (int leaf = 0; leaf < 70; leaf++)
	{
		nbt_read_leaf(&h.tree, &from, false, &b);
		from = b.high;
	}
	for (; node->count < NBT_INNER_CAP && k < 1000; k++)
		(void) nbt_insert(&h.tree, &(nbt_skey) {from.key + k, 1}, &err);
	x_off = nbt_leaf_of_word(node->child[40]);
	if (node->count != NBT_INNER_CAP ||
		!nbt_request_merge(&h.tree, x_off, nbt_leaf_of_word(node->child[41])))
		why = "set-up: the node did not fill, or the merge request was refused";
	for (; why == NULL && node->count == NBT_INNER_CAP && k < 1000; k++)
		(void) nbt_insert(&h.tree, &(nbt_skey) {from.key + k, 1}, &err);
	if (why == NULL)
	{
		pm_epoch_enter(&h.epoch);
		rc = nbt_help_smo(&h.tree, x_off, &err);
		pm_epoch_exit(&h.epoch);
		if (rc != PM_OK)
		{
			snprintf(msg, sizeof(msg), "the merge after the split: %s", err.msg);
			why = msg;
		}
	}
	if (why == NULL && (why = nbt_check(&h.tree, &n)) == NULL &&
		n != PAIR_LEAVES * PAIR_FILL + k - 1)
		why = "entries lost or gained";
	pm_epoch_unregister(&h.epoch);
	pm_pool_close(h.pool);
	munmap(h.arena, HARNESS_ARENA);
	harness_domain_unmap(h.dom);
	return why;
}

/* Insert random keys until one fails; *n gets the count inserted and keys[] them. */
static pm_errcode
insert_until_full(nbt_tree *t, uint64_t *seed, uint64_t *keys, uint64_t max, uint64_t *n,
				  pm_error *err)
{
	for (*n = 0; *n < max; (*n)++)
	{
		nbt_skey	sk = {xorshift(seed) >> 1, 1};
		pm_errcode	rc = nbt_insert(t, &sk, err);

		if (rc != PM_OK)
			return rc;
		keys[*n] = sk.key;
	}
	return PM_OK;
}

/*
 * A pool at its maximum size: the failing insert leaves no leaf frozen (the
 * check passes) and loses nothing; after half the entries are deleted and
 * every leaf is offered a compaction, a tenth as many new inserts fit.
 */
static const char *
full_pool(const char *dir)
{
	static char msg[400];
	char		path[600];
	harness		h;
	pm_error	err;
	uint64_t	seed = 7;
	uint64_t	max = FULL_POOL_SIZE / 8 + FULL_BATCH;
	uint64_t   *keys = malloc(max * sizeof(uint64_t));
	uint64_t	n = 0;
	uint64_t	more = 0;
	uint64_t	entries = 0;
	pm_errcode	rc;
	const char *why = NULL;

	snprintf(path, sizeof(path), "%s/full.pm", dir);
	harness_shared(&h);
	harness_attach(&h, harness_new_pool(path, PM_MODE_EADR, FULL_POOL_SIZE), (uint64_t) getpid(), 0);
	if (keys == NULL || nbt_rebuild(&h.tree, false, &err) != PM_OK)
		return "set-up failed";
	rc = insert_until_full(&h.tree, &seed, keys, max, &n, &err);
	if (!pm_errcode_is_out_of_space(rc))
		why = "inserts did not stop with an out-of-space error";
	else if ((why = nbt_check(&h.tree, &entries)) != NULL)
		snprintf(msg, sizeof(msg), "after the failed insert: %s", why), why = msg;
	else if (entries != n)
		why = "the failed insert lost or added entries";
	if (why == NULL)
	{
		/* a batch into the full pool: what fits in leaves with room goes in, then it stops */
		nbt_skey	batch[FULL_BATCH];
		int			done = -1;

		for (int i = 0; i < FULL_BATCH; i++)
			batch[i] = (nbt_skey) {xorshift(&seed) >> 1, 1};
		for (int i = 1; i < FULL_BATCH; i++)
			for (int j = i; j > 0 && batch[j].key < batch[j - 1].key; j--)
			{
				nbt_skey	x = batch[j];

				batch[j] = batch[j - 1], batch[j - 1] = x;
			}
		rc = nbt_insert_sorted(&h.tree, batch, FULL_BATCH, &done, &err);
		if (!pm_errcode_is_out_of_space(rc) || done < 0 || done >= FULL_BATCH)
			why = "a batch into the full pool did not stop with an out-of-space error";
		else if ((why = nbt_check(&h.tree, &entries)) != NULL)
			snprintf(msg, sizeof(msg), "after the failed batch: %s", why), why = msg;
		else if (entries != n + (uint64_t) done)
			why = "the failed batch holds other than its first *done entries";
		for (int i = 0; why == NULL && i < FULL_BATCH; i++)
		{
			nbt_batch	b;

			nbt_read_range(&h.tree, &batch[i], false, &batch[i], &batch[i], &b);
			if ((b.n == 1) != (i < done))
				why = "an entry of the failed batch is in the tree or missing against *done";
		}
		for (int i = 0; why == NULL && i < done; i++)
			keys[n++] = batch[i].key;
		tap_diag("full pool: a batch of %d stopped after %d", FULL_BATCH, done);
	}
	for (uint64_t i = 0; why == NULL && i < n; i += 2)
	{
		bool		found;

		if (nbt_delete(&h.tree, &(nbt_skey) {keys[i], 1}, &found, &err) != PM_OK || !found)
			why = "a delete failed";
	}
	if (why == NULL)
	{
		nbt_skey	from = PM_KEY_MIN;
		nbt_batch	b;
		bool		compacted;

		for (;;)
		{
			nbt_read_leaf(&h.tree, &from, false, &b);
			if (nbt_compact_leaf(&h.tree, &b.low, &compacted, &err) != PM_OK &&
				!pm_errcode_is_out_of_space(err.code))
			{
				why = "a compaction failed";
				break;
			}
			if (pm_key_is_max(&b.high))
				break;
			from = b.high;
		}
		nbt_keep_spare(&h.tree);
	}
	if (why == NULL)
	{
		rc = insert_until_full(&h.tree, &seed, keys, n / 10, &more, &err);
		if (rc != PM_OK)
		{
			snprintf(msg, sizeof(msg), "after the compactions, insert %llu of %llu failed: %s",
					 (unsigned long long) more, (unsigned long long) n / 10, err.msg);
			why = msg;
		}
	}
	if (why == NULL && (why = nbt_check(&h.tree, &entries)) == NULL &&
		entries != n - (n + 1) / 2 + more)
		why = "entries lost or gained";
	tap_diag("full pool: %llu inserts fit in %llu bytes; after deleting half, %llu more",
			 (unsigned long long) n, (unsigned long long) FULL_POOL_SIZE, (unsigned long long) more);
	free(keys);
	pm_epoch_unregister(&h.epoch);
	pm_pool_close(h.pool);
	munmap(h.arena, HARNESS_ARENA);
	harness_domain_unmap(h.dom);
	return why;
}

/*
 * A damaged pool whose head leaf links to the last block-aligned offset below
 * 2^64: the block's end wraps to 0, so only a bounds check written without
 * the overflow refuses it.  The link is put back afterwards.
 */
static bool
wrapping_leaf_link_is_corrupt(nbt_tree *t)
{
	nbt_pm_meta *meta = pm_pool_addr(t->pool, pm_pool_root(t->pool, 0));
	nbt_kv	   *head = pm_pool_addr(t->pool, meta->head);
	uint64_t	saved = head->next;
	pm_error	err;
	pm_errcode	rc;

	nbt_release_dram(t);
	head->next = (uint64_t) 0 - sizeof(nbt_kv);
	rc = nbt_rebuild(t, false, &err);
	head->next = saved;
	if (rc == PM_OK)
		nbt_release_dram(t);
	return rc == PM_ERR_CORRUPT && nbt_rebuild(t, false, &err) == PM_OK;
}

/*
 * A damaged pool whose second leaf holds an entry below its low fence (a
 * rebuild does not compare entries with fences): the SMO of that leaf must
 * refuse it as corruption, changing nothing, rather than spread it.  The key
 * is put back and the DRAM layer rebuilt afterwards.
 */
static bool
entry_outside_fences_is_refused(nbt_tree *t)
{
	nbt_pm_meta *meta = pm_pool_addr(t->pool, pm_pool_root(t->pool, 0));
	nbt_kv	   *kv = pm_pool_addr(t->pool, meta->head);
	nbt_skey	low;
	int			pos = 0;
	uint64_t	saved;
	uint64_t	off;
	pm_error	err;
	pm_errcode	rc = PM_OK;

	/* a leaf after the first with a live entry, and a low fence with a key below it */
	do
	{
		if (kv->next == 0)
			return false;
		kv = pm_pool_addr(t->pool, kv->next);
		low = kv->low;
		for (pos = 0; pos < (int) nbt_kv_slots(kv) && !nbt_val_live(kv->slot[pos].val); pos++)
			;
	} while (pos == (int) nbt_kv_slots(kv) || low.key == 0);
	saved = kv->slot[pos].key;
	nbt_release_dram(t);
	kv->slot[pos].key = low.key - 1;
	if (nbt_rebuild(t, false, &err) == PM_OK)
	{
		pm_epoch_enter(t->epoch);
		if (nbt_find_leaf(t, &low, NBT_FIND_WRITE, &off, &err) == PM_OK)
			rc = nbt_run_smo(t, off, (uint32_t) sizeof(nbt_pm_slot), &err);
		pm_epoch_exit(t->epoch);
		nbt_release_dram(t);
	}
	kv->slot[pos].key = saved;
	if (rc != PM_ERR_CORRUPT)
		tap_diag("the SMO of the damaged leaf: %s", rc == PM_OK ? "no error" : err.msg);
	return rc == PM_ERR_CORRUPT && nbt_rebuild(t, false, &err) == PM_OK && nbt_check(t, NULL) == NULL;
}

int
main(void)
{
	char	   *dir = tap_tmpdir("nbt_model");
	char		path[600];
	harness		h;
	pm_error	err;
	uint64_t	seed = 42;
	long		bad_found = 0,
				bad_range = 0,
				bad_check = 0,
				bad_rebuild = 0,
				bad_batch = 0,
				errors = 0;
	nbt_stats	st;
	uint64_t	splits = 0,
				compactions = 0,
				random_merges = 0;
	uint64_t	range_before = 0,
				range_after = 0,
				merges = 0;
	const char *merge_why;

	tap_plan(15);
	snprintf(path, sizeof(path), "%s/model.pm", dir);
	harness_shared(&h);
	harness_attach(&h, harness_new_pool(path, PM_MODE_EADR, UINT64_C(1) << 30), (uint64_t) getpid(), 0);
	if (nbt_rebuild(&h.tree, false, &err) != PM_OK)
	{
		tap_diag("rebuild: %s", err.msg);
		return 1;
	}
	tap_ok(compare_range(&h.tree, 0, 0, false, 10) == NULL, "empty tree reads empty");

	for (long op = 1; op <= OPS; op++)
	{
		uint64_t	x = xorshift(&seed);
		int			k = (int) ((x >> 8) % NKEYS);
		int			r = (int) ((x >> 40) % NRESTS);
		int			idx = k * NRESTS + r;
		int			what = (int) (x % 100);
		nbt_skey	sk = skey_of(k, r);

		if (what < 55 && (x >> 48) % BATCH_EVERY == 0)
		{
			const char *why = batch_insert(&h.tree, &seed, idx);

			if (why != NULL && bad_batch++ == 0)
				tap_diag("op %ld: %s", op, why);
		}
		else if (what < 55)
		{
			if (!ref[idx])
			{
				if (nbt_insert(&h.tree, &sk, &err) != PM_OK)
				{
					if (errors++ == 0)
						tap_diag("insert: %s", err.msg);
					continue;
				}
				ref[idx] = 1;
				ref_count++;
			}
		}
		else if (what < 85)
		{
			bool		found;

			/* half the deletes aim at an entry that exists */
			if ((x & 0x100) && ref_count > 0)
			{
				int			j = ref_next(idx);

				if (j >= NKEYS * NRESTS)
					j = ref_next(0);
				idx = j;
				sk = skey_of(idx / NRESTS, idx % NRESTS);
			}
			if (nbt_delete(&h.tree, &sk, &found, &err) != PM_OK)
			{
				if (errors++ == 0)
					tap_diag("delete: %s", err.msg);
				continue;
			}
			if (found != (ref[idx] == 1))
			{
				if (bad_found++ == 0)
					tap_diag("op %ld: delete found=%d, reference has %d", op, found, ref[idx]);
			}
			if (ref[idx])
			{
				ref[idx] = 0;
				ref_count--;
			}
		}
		else if (what < 99)
		{
			const char *why = compare_range(&h.tree, k, r, what & 1, 1 + (int) ((x >> 20) % 100));

			if (why && bad_range++ == 0)
				tap_diag("op %ld: %s", op, why);
		}
		else
		{
			bool		compacted;

			if (nbt_compact_leaf(&h.tree, &sk, &compacted, &err) != PM_OK && errors++ == 0)
				tap_diag("compact: %s", err.msg);
		}

		if (op % CHECK_EVERY == 0)
		{
			uint64_t	n = 0;
			const char *why = nbt_check(&h.tree, &n);

			if (why == NULL && n != (uint64_t) ref_count)
				why = "entry count differs from the reference";
			if (why && bad_check++ == 0)
				tap_diag("op %ld: check: %s (%llu vs %ld)", op, why, (unsigned long long) n, ref_count);
			why = compare_range(&h.tree, 0, 0, false, NKEYS * NRESTS);
			if (why && bad_range++ == 0)
				tap_diag("op %ld: full forward comparison: %s", op, why);

			/* every other checkpoint: throw the DRAM layer away and rebuild from PM */
			if ((op / CHECK_EVERY) % 2 == 0)
			{
				nbt_get_stats(&h.tree, &st);
				splits += st.smo_splits;
				compactions += st.smo_compactions;
				random_merges += st.smo_merges;
				/* as after a restart: nothing retired may still be pending */
				pm_epoch_drain(&h.epoch);
				nbt_release_dram(&h.tree);
				if (nbt_rebuild(&h.tree, true, &err) != PM_OK)
				{
					if (bad_rebuild++ == 0)
						tap_diag("op %ld: rebuild: %s", op, err.msg);
					break;
				}
				why = compare_range(&h.tree, NKEYS - 1, NRESTS - 1, true, NKEYS * NRESTS);
				if (why && bad_rebuild++ == 0)
					tap_diag("op %ld: after rebuild: %s", op, why);
			}
		}
	}
	nbt_get_stats(&h.tree, &st);
	splits += st.smo_splits;
	compactions += st.smo_compactions;
	random_merges += st.smo_merges;

	merge_why = merge_phase(&h.tree, &range_before, &range_after, &merges);
	tap_diag("merge phase: the emptied range went from %llu to %llu leaves in %llu merges",
			 (unsigned long long) range_before, (unsigned long long) range_after,
			 (unsigned long long) merges);
	if (merge_why)
		tap_diag("%s", merge_why);
	tap_ok(merge_why == NULL && merges > 0 && range_after * 4 < range_before,
		   "emptying a range merges its leaves (leaf count below a quarter); structure, stats and "
		   "forward and backward reads match the reference");
	pm_epoch_drain(&h.epoch);
	nbt_release_dram(&h.tree);
	if (nbt_rebuild(&h.tree, true, &err) != PM_OK)
	{
		tap_diag("rebuild after the merge phase: %s", err.msg);
		return 1;
	}
	merge_why = compare_range(&h.tree, NKEYS - 1, NRESTS - 1, true, NKEYS * NRESTS);
	tap_ok(merge_why == NULL && nbt_check(&h.tree, NULL) == NULL,
		   "after the merges a rebuild from PM reproduces the reference%s%s",
		   merge_why ? ": " : "", merge_why ? merge_why : "");
	nbt_get_stats(&h.tree, &st);
	tap_diag("%ld entries at the end; random phase: %llu splits, %llu compactions, %llu merges; "
			 "%llu leaves, height %llu",
			 ref_count, (unsigned long long) splits, (unsigned long long) compactions,
			 (unsigned long long) random_merges,
			 (unsigned long long) st.leaves, (unsigned long long) st.height);
	tap_ok(errors == 0, "%ld operations without an error", OPS);
	tap_ok(bad_found == 0, "every delete found exactly what the reference had (%ld mismatches)", bad_found);
	tap_ok(bad_range == 0, "every forward and backward read matched the reference (%ld mismatches)", bad_range);
	tap_diag("%ld batches of %ld entries (%ld of them new) through nbt_insert_sorted",
			 batches, batch_entries, batch_new);
	tap_ok(bad_batch == 0 && batches > 100,
		   "every batch insert succeeded and its range matched the reference (%ld mismatches)",
		   bad_batch);
	tap_ok(bad_check == 0, "structure checks and entry counts held at every checkpoint");
	tap_ok(bad_rebuild == 0, "rebuilds of the DRAM layer from PM reproduced the tree");
	tap_ok(splits > 1000 && compactions > 100 && st.height >= 2,
		   "the run exercised splits, compactions and a multi-level tree");
	tap_ok(nbt_count_pm(h.pool) == (uint64_t) ref_count, "the PM layer alone holds exactly the reference");
	tap_ok(wrapping_leaf_link_is_corrupt(&h.tree),
		   "a rebuild refuses a leaf link whose block would end past 2^64 as corruption");
	tap_ok(entry_outside_fences_is_refused(&h.tree),
		   "the SMO of a leaf that holds an entry outside its fences refuses it as corruption");
	pm_epoch_unregister(&h.epoch);
	pm_pool_close(h.pool);
	merge_why = split_keeps_merge_pair(dir);
	tap_ok(merge_why == NULL, "an inner split between a leaf and the sibling its pending merge "
		   "absorbs keeps them in one node; the merge completes and the tree checks%s%s",
		   merge_why ? ": " : "", merge_why ? merge_why : "");
	merge_why = full_pool(dir);
	tap_ok(merge_why == NULL, "a pool at its maximum size fails inserts (a batch at its first failing entry) without freezing a "
		   "leaf; after deletes, compactions let inserts go on in it%s%s",
		   merge_why ? ": " : "", merge_why ? merge_why : "");
	tap_rmdir(dir);
	return tap_done();
}
