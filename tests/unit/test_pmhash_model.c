/*
 * test_pmhash_model.c
 *	  The hash table against a reference: 1.2M entries inserted in random
 *	  order, among inserts of entries already there, deletes and lookups of
 *	  random ones (pairs of entries share a hash code, 400 entries another),
 *	  through 4 appliers whose logs are checkpointed whenever one is full;
 *	  the structure checked at intervals while it grows from one bucket
 *	  through many doublings; a full scan returns each entry once; the space
 *	  an entry takes at the peak; mixed random operations; then every entry
 *	  deleted, and the chains back to one block each.  Damaged pools:
 *	  attach, the check, lookups, inserts and deletes report each damage,
 *	  never reading outside the pool (run it under ASan too).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "pmhash_harness.h"
#include "pmhash_internal.h"

#define NID			1200000
#define MIXED_OPS	400000
#define CHECK_EVERY	300000
#define APPLIERS	4
#define LOG_BLOCKS	16			/* 1 MiB logs: full between two of the host's checkpoints */
#define CHECKPOINT_EVERY 50000	/* operations between the host's checkpoints */
#define MAX_REPORT	5

static uint8_t present[NID];
static uint64_t npresent;

typedef struct tester
{
	hash_process hp;
	pmhash_table t;
	pm_epoch_handle epoch;
	uint64_t	checkpoints;
	uint64_t	full;			/* checkpoints because an applier's log was full */
	int			wrong;			/* answers that differ from the reference */
	uint64_t	rng;
} tester;

static void
wrong(tester *x, const char *what, uint64_t id, const pm_error *err)
{
	if (x->wrong++ < MAX_REPORT)
		tap_diag("%s of entry %llu: %s", what, (unsigned long long) id, err != NULL ? err->msg : "wrong answer");
}

/* Empty the logs: after a checkpoint the freed blocks wait in the checkpointer's epoch. */
static void
checkpoint(tester *x)
{
	pm_error	err;

	if (pm_uno_checkpoint(x->hp.uno, NULL, 0, &err) != PM_OK)
		wrong(x, "checkpoint", 0, &err);
	pm_epoch_reclaim(&x->hp.epoch);
	x->checkpoints++;
}

static void
do_insert(tester *x, uint64_t id)
{
	bool		existed;
	pm_error	err;
	pm_errcode	rc;

	while ((rc = pmhash_insert(&x->t, id % APPLIERS, entry_of(id), &existed, &err)) == PM_ERR_LIMIT)
	{
		x->full++;
		checkpoint(x);
	}
	if (rc != PM_OK || existed != present[id])
		wrong(x, "insert", id, rc != PM_OK ? &err : NULL);
	npresent += !present[id];
	present[id] = 1;
}

static void
do_delete(tester *x, uint64_t id)
{
	bool		found;
	pm_error	err;
	pm_errcode	rc;

	while ((rc = pmhash_delete(&x->t, id % APPLIERS, entry_of(id), &found, &err)) == PM_ERR_LIMIT)
	{
		x->full++;
		checkpoint(x);
	}
	if (rc != PM_OK || found != present[id])
		wrong(x, "delete", id, rc != PM_OK ? &err : NULL);
	npresent -= present[id];
	present[id] = 0;
}

static int
rest_order(const void *a, const void *b)
{
	uint64_t	x = *(const uint64_t *) a;
	uint64_t	y = *(const uint64_t *) b;

	return x < y ? -1 : x > y;
}

/* The lookup of id's hash code returns the present entries of that code, each once. */
static void
do_lookup(tester *x, uint64_t id)
{
	static rests rs;
	uint64_t	expect[HOT_IDS];
	uint64_t	n = 0;
	pm_error	err;

	if (id < HOT_IDS)
	{
		for (uint64_t i = 0; i < HOT_IDS; i++)
			if (present[i])
				expect[n++] = i + 1;
	}
	else
	{
		for (uint64_t i = id & ~UINT64_C(1); i <= (id | 1) && i < NID; i++)
			if (present[i])
				expect[n++] = i + 1;
	}
	rs.n = 0;
	if (pmhash_lookup(&x->t, hash_of(id), collect_rest, &rs, &err) != PM_OK)
	{
		wrong(x, "lookup", id, &err);
		return;
	}
	qsort(rs.r, rs.n, sizeof(uint64_t), rest_order);
	if (rs.n != n || memcmp(rs.r, expect, n * sizeof(uint64_t)) != 0)
		wrong(x, "lookup", id, NULL);
}

/* The structure's check, and its count against the reference. */
static bool
checked(tester *x, const char *when)
{
	uint64_t	entries;
	const char *why = pmhash_check(&x->t, &entries);

	if (why == NULL && entries == npresent)
		return true;
	tap_diag("%s: %s (%llu entries, %llu in the reference)", when, why != NULL ? why : "wrong count",
			 (unsigned long long) entries, (unsigned long long) npresent);
	return false;
}

/* A scan returns every present entry once and nothing else. */
static bool
scan_matches(tester *x)
{
	static uint8_t seen[NID];
	pmhash_batch b = {0};
	uint64_t	cursor = 0;
	uint64_t	n = 0;
	bool		ok = true;
	pm_error	err;

	memset(seen, 0, sizeof(seen));
	while (ok && cursor != PMHASH_SCAN_END)
	{
		ok = pmhash_scan(&x->t, &cursor, &b, &err) == PM_OK;
		for (uint32_t i = 0; ok && i < b.n; i++)
		{
			uint64_t	id = b.e[i].rest - 1;

			if (!(ok = id < NID && present[id] && !seen[id] && b.e[i].hash == hash_of(id)))
				break;
			seen[id] = 1;
			n++;
		}
	}
	pmhash_batch_free(&b);
	return ok && n == npresent;
}

/* harness_pool's format, with small logs. */
static pm_errcode
format_small_logs(pm_pool *pool, pm_error *err)
{
	return hash_format_logs(pool, LOG_BLOCKS, err);
}

static uint64_t
rnd(tester *x, uint64_t below)
{
	return xorshift(&x->rng) % below;
}

static void
test_model(const char *path)
{
	pm_pool    *pool = harness_pool(path, PM_MODE_EADR, 256 << 20, PM_KIND_HASH, format_small_logs);
	pm_epoch_domain *dom = harness_domain();
	static uint32_t perm[NID];
	tester		x = {0};
	pmhash_stats st;
	pm_error	err;
	bool		checks = true;
	double		t0 = now_sec();

	x.rng = 42;
	if (!hash_process_attach(&x.hp, pool, dom, (uint64_t) getpid(), NULL) ||
		!hash_table_attach(&x.t, &x.epoch, &x.hp, (uint64_t) getpid() | UINT64_C(1) << 32))
		exit(2);
	for (uint64_t i = 0; i < NID; i++)
		perm[i] = (uint32_t) i;
	for (uint64_t i = NID - 1; i > 0; i--)
	{
		uint64_t	j = rnd(&x, i + 1);
		uint32_t	s = perm[i];

		perm[i] = perm[j];
		perm[j] = s;
	}

	/* every entry, in random order, among others' inserts, deletes and lookups */
	for (uint64_t i = 0; i < NID; i++)
	{
		do_insert(&x, perm[i]);
		if (i % 8 == 0)
		{
			do_insert(&x, perm[rnd(&x, i + 1)]);
			do_delete(&x, rnd(&x, NID));
			do_lookup(&x, rnd(&x, NID));
			do_lookup(&x, rnd(&x, HOT_IDS));
		}
		if (i % CHECKPOINT_EVERY == 0)
			checkpoint(&x);
		if (i % CHECK_EVERY == CHECK_EVERY - 1)
			checks &= checked(&x, "growing");
	}
	checks &= checked(&x, "grown");
	pmhash_get_stats(&x.t, &st, &err);
	tap_ok(x.wrong == 0 && checks && x.checkpoints > NID / CHECKPOINT_EVERY,
		   "%llu entries inserted in random order (%.1f s, %llu checkpoints, %llu on full logs): every answer "
		   "right, the structure checks", (unsigned long long) npresent, now_sec() - t0,
		   (unsigned long long) x.checkpoints, (unsigned long long) x.full);
	tap_ok(st.buckets >= 8192 && st.entries == npresent && st.counted == npresent,
		   "from 1 bucket to %llu (%d doublings); %llu blocks, chains of 1/2/3/4+ blocks: %llu/%llu/%llu/%llu, "
		   "the longest %llu", (unsigned long long) st.buckets, pmhash_level(st.buckets),
		   (unsigned long long) st.blocks, (unsigned long long) st.chains[0], (unsigned long long) st.chains[1],
		   (unsigned long long) st.chains[2], (unsigned long long) st.chains[3], (unsigned long long) st.longest);
	tap_ok((double) st.bytes / st.entries <= 24, "%.1f bytes an entry at %llu entries (%.0f%% of the slots used)",
		   (double) st.bytes / st.entries, (unsigned long long) st.entries,
		   100.0 * st.entries / (st.blocks * PMHASH_BLOCK_CAP));
	tap_ok(scan_matches(&x), "a scan returns each of the %llu entries once", (unsigned long long) npresent);

	/* mixed */
	t0 = now_sec();
	for (uint64_t k = 0; k < MIXED_OPS; k++)
	{
		uint64_t	p = rnd(&x, 100);
		uint64_t	id = p % 10 == 0 ? rnd(&x, HOT_IDS) : rnd(&x, NID);

		if (k % CHECKPOINT_EVERY == 0)
			checkpoint(&x);
		if (p < 40)
			do_insert(&x, id);
		else if (p < 70)
			do_delete(&x, id);
		else
			do_lookup(&x, id);
	}
	tap_ok(x.wrong == 0 && checked(&x, "mixed") && scan_matches(&x),
		   "%d random inserts, deletes and lookups (%.1f s): every answer right, the structure checks",
		   MIXED_OPS, now_sec() - t0);

	/* every entry deleted */
	for (uint64_t i = 0; i < NID; i++)
	{
		if (present[perm[i]])
			do_delete(&x, perm[i]);
		if (i % 64 == 0)
			do_lookup(&x, rnd(&x, NID));
	}
	checkpoint(&x);
	pmhash_get_stats(&x.t, &st, &err);
	tap_ok(x.wrong == 0 && checked(&x, "emptied") && st.entries == 0 && st.blocks == st.buckets,
		   "every entry deleted: the %llu chains are one block each again", (unsigned long long) st.buckets);
	pmhash_detach(&x.t);
	pm_epoch_unregister(&x.epoch);
	hash_process_detach(&x.hp);
	pm_pool_close(pool);
	harness_domain_unmap(dom);
}

/* ---- damage ---- */

typedef struct damage
{
	tester	   *x;
	int			missed;
} damage;

/* Does attach refuse the pool with *word = value?  (It is put back.) */
static bool
attach_refused(tester *x, uint64_t *word, uint64_t value)
{
	uint64_t	saved = *word;
	pmhash_table other;
	pm_error	err;
	bool		refused;

	*word = value;
	refused = pmhash_attach(&other, x->hp.pool, x->hp.uno, &x->epoch, &err) == PM_ERR_CORRUPT;
	*word = saved;
	return refused;
}

/* Change a word; expect the check to name it and an operation on entry id to refuse it; put it back. */
static void
expect_damage(damage *d, uint64_t *word, uint64_t value, uint64_t id, bool ops_see_it, const char *what)
{
	uint64_t	saved = *word;
	uint64_t	entries;
	const char *why;
	bool		existed;
	bool		found;
	rests		rs = {0};
	pm_error	err;
	bool		ok;

	*word = value;
	why = pmhash_check(&d->x->t, &entries);
	ok = why != NULL;
	if (ops_see_it)
		ok &= pmhash_lookup(&d->x->t, hash_of(id), collect_rest, &rs, &err) == PM_ERR_CORRUPT &&
			pmhash_insert(&d->x->t, 0, entry_of(id), &existed, &err) == PM_ERR_CORRUPT &&
			pmhash_delete(&d->x->t, 0, entry_of(id), &found, &err) == PM_ERR_CORRUPT;
	*word = saved;
	if (!ok || pmhash_check(&d->x->t, &entries) != NULL)
	{
		tap_diag("%s: not reported (%s)", what, why != NULL ? why : "the check passed");
		d->missed++;
	}
}

static void
test_damage(const char *path)
{
	pm_pool    *pool = harness_pool(path, PM_MODE_EADR, 64 << 20, PM_KIND_HASH, hash_format);
	pm_epoch_domain *dom = harness_domain();
	tester		x = {0};
	damage		d = {&x, 0};
	pmhash_meta *m;
	pmhash_block *p;
	uint64_t	id = HOT_IDS;
	uint64_t	n;
	uint64_t	b;
	uint64_t   *slot;
	uint32_t	twin = 0;
	uint32_t	twin_of = 0;
	pm_error	err;

	if (!hash_process_attach(&x.hp, pool, dom, (uint64_t) getpid(), NULL) ||
		!hash_table_attach(&x.t, &x.epoch, &x.hp, (uint64_t) getpid() | UINT64_C(1) << 32))
		exit(2);
	memset(present, 0, sizeof(present));
	npresent = 0;
	for (uint64_t i = 0; i < 20000; i++)
		do_insert(&x, i);
	m = pmhash_meta_of(pool);
	n = m->nbuckets;
	/* an entry whose bucket has a chain of two blocks */
	do
	{
		b = pmhash_bucket_for(hash_of(++id), n);
		slot = pmhash_slot(pool, m, b);
		p = pmhash_block_at(pool, *slot);
	} while (p->next == 0);
	tap_ok(checked(&x, "before damage"), "a table of 20,000 entries in %llu buckets checks",
		   (unsigned long long) n);

	tap_ok(attach_refused(&x, &m->magic, m->magic + 1) && attach_refused(&x, &m->nbuckets, 0) &&
		   attach_refused(&x, &m->nbuckets, PMHASH_MAX_BUCKETS + 1) &&
		   attach_refused(&x, &m->seg[0], pm_pool_size(pool)) && attach_refused(&x, &m->seg[0], 0) &&
		   attach_refused(&x, &m->run_tag, UINT64_C(1) << 32),
		   "a meta block of another magic, of 0 or too many buckets, naming a segment outside the pool or a "
		   "run tag past 32 bits does not attach");
	expect_damage(&d, slot, 12345, id, true, "a bucket naming no block");
	expect_damage(&d, slot, pm_pool_size(pool), id, true, "a bucket past the pool");
	expect_damage(&d, (uint64_t *) &p->depth, 40 | (uint64_t) p->n << 32, id, true, "a depth past the hash");
	expect_damage(&d, (uint64_t *) &p->depth, p->depth | (uint64_t) 200 << 32, id, true, "a block of 200 entries");
	expect_damage(&d, &p->next, *slot, id, true, "a chain that loops");
	expect_damage(&d, &p->next, pm_pool_size(pool) - 512, id, true, "a chain out of the pool");
	expect_damage(&d, &p->bucket, b + 1, id, true, "a block of another bucket");
	expect_damage(&d, &p->word, p->word | WORD_LOCKED, id, false, "a bucket left locked");
	expect_damage(&d, (uint64_t *) &p->hash[0], (uint64_t) (p->hash[1]) << 32 | (p->hash[0] ^ 1u), id, false,
				  "an entry in the wrong bucket");
	for (uint32_t i = 0; i < p->n; i++)
		for (uint32_t j = i + 1; j < p->n; j++)
			if (p->hash[i] == p->hash[j])
				twin = i, twin_of = j;
	expect_damage(&d, &p->rest[twin_of], p->rest[twin], id, false, "an entry twice");
	expect_damage(&d, &p->rest[2], 0, id, false, "an entry of rest 0");
	expect_damage(&d, &m->count[1].n, m->count[1].n + 1, id, false, "a count that is wrong");
	expect_damage(&d, &m->split_lock, m->run_tag << 32 | 1, id, false, "the split lock left held");
	expect_damage(&d, pmhash_slot(pool, m, n), *slot, id, false, "a bucket published past the count");
	tap_ok(d.missed == 0 && twin_of != 0, "14 damages of buckets, chains, entries and counts: the check names each, and "
		   "lookups, inserts and deletes meeting one refuse it (PM_ERR_CORRUPT)");

	/* allocator recovery keeps exactly the table's blocks (after the logs are recovered) */
	{
		pm_alloc_stats before;
		pm_alloc_stats after;
		pm_errcode	rc;

		checkpoint(&x);
		pm_epoch_drain(&x.hp.epoch);
		pm_alloc_get_stats(&x.hp.a, &before);
		rc = pm_uno_recover(x.hp.uno, true, &err) == PM_OK ? hash_recover_allocator(&x.hp.a, pool, &err) : err.code;
		pm_alloc_get_stats(&x.hp.a, &after);
		tap_ok(rc == PM_OK && before.blocks == after.blocks && checked(&x, "after allocator recovery"),
			   "allocator recovery marks exactly the allocated blocks (%llu)", (unsigned long long) after.blocks);
	}
	pmhash_detach(&x.t);
	pm_epoch_unregister(&x.epoch);
	hash_process_detach(&x.hp);
	pm_pool_close(pool);
	harness_domain_unmap(dom);
}

int
main(void)
{
	char	   *dir = tap_tmpdir("pmhash_model");
	char		path[600];

	tap_plan(10);
	snprintf(path, sizeof(path), "%s/pool.pm", dir);
	test_model(path);
	test_damage(path);
	return tap_done();
}
