/*
 * test_pmhash_crash.c
 *	  The hash table survives a power failure (adr) at every persistence
 *	  event of a workload of inserts and deletes through three appliers,
 *	  with the host's operation log (olog.h) and checkpoints every few
 *	  operations, on a table already split into dozens of buckets with a
 *	  chain too long to split: after UNO recovery, allocator recovery, the
 *	  table's recovery and the redo of the operation log from its applied
 *	  position, the table checks, holds exactly the entries of the
 *	  operations the log acknowledged (the one in flight either way), and the
 *	  allocator exactly the reachable blocks; it then keeps working.  Under
 *	  ASan, at every third event.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness_crash.h"
#include "pmhash_harness.h"
#include "pmhash_internal.h"

#define NID			5000
#define PRELOAD		3000
#define OPS			60
#define CHECKPOINT_EVERY 12
#define SEEDS		1
#define APPLIERS	3
#define MAX_REPORT	5

/* ASan runs the power failures at every third event. */
#if defined(__SANITIZE_ADDRESS__)
#define EVENT_STRIDE	3
#define EVENTS			"every third event"
#else
#define EVENT_STRIDE	1
#define EVENTS			"every event"
#endif

/* Hot ids preloaded: as many as fill the hot bucket's last block (make_base). */
static uint64_t hot_preloaded;

/*
 * An operation: id << 1 | delete (the operation log's 8-byte entry).  One
 * in three is of a hot id around the end of the hot bucket's full chain:
 * its inserts add a block, and split a bucket; its deletes drop it.
 */
static uint64_t
op_of(uint64_t seed, uint64_t k)
{
	uint64_t	s = seed * UINT64_C(0x9e3779b97f4a7c15) + k * UINT64_C(0xbf58476d1ce4e5b9) + 1;
	uint64_t	r = xorshift(&s);
	uint64_t	id = r % 3 == 0 ? hot_preloaded - 10 + (r >> 8) % 20 : (r >> 8) % NID;

	return id << 1 | ((r >> 40) % 10 < 3);
}

/* The preloaded entries: two in three of the ids from HOT_IDS to PRELOAD, and hot_preloaded hot ones. */
static bool
preloaded(uint64_t id)
{
	return id < HOT_IDS ? id < hot_preloaded : id < PRELOAD && id % 3 != 0;
}

/* ---- the host: a process's handle, the operation log's advance, applying an operation ---- */

typedef struct host
{
	hash_process hp;
	pmhash_table t;
	pm_epoch_handle epoch;
} host;

static void
advance(void *ctx, const uint64_t *pos, uint32_t npos)
{
	hash_process *hp = ctx;

	if (npos == 1)
	{
		pm_olog_set_applied(hp->pool, pm_olog_of(hp->pool), 0, pos[0]);
		pm_olog_reclaim(hp->pool, &hp->a, pm_olog_of(hp->pool), 0, pos[0]);
	}
}

static pm_errcode
checkpoint(host *h, pm_error *err)
{
	uint64_t	tail = pm_load(&pm_olog_lane_at(h->hp.pool, pm_olog_of(h->hp.pool), 0)->tail);
	pm_errcode	rc = pm_uno_checkpoint(h->hp.uno, &tail, 1, err);

	pm_epoch_reclaim(&h->hp.epoch);
	return rc;
}

/* Apply operation o through applier ap, checkpointing if its logs are full. */
static pm_errcode
apply(host *h, uint32_t ap, uint64_t o, pm_error *err)
{
	bool		answer;
	pm_errcode	rc;

	for (;;)
	{
		if (o & 1)
			rc = pmhash_delete(&h->t, ap, entry_of(o >> 1), &answer, err);
		else
			rc = pmhash_insert(&h->t, ap, entry_of(o >> 1), &answer, err);
		if (rc != PM_ERR_LIMIT || (rc = checkpoint(h, err)) != PM_OK)
			return rc;
	}
}

/* Attach host h to pool, in epoch domain dom: NULL or why not. */
static const char *
host_attach(host *h, pm_pool *pool, pm_epoch_domain *dom)
{
	static char why[300];
	pm_error	err;

	if (!hash_process_attach(&h->hp, pool, dom, (uint64_t) getpid(), advance))
		return "uno attach";
	if (pmhash_attach(&h->t, pool, h->hp.uno, &h->epoch, &err) != PM_OK ||
		pm_epoch_register(dom, (uint64_t) getpid() | UINT64_C(1) << 32, -1, hash_free, &h->hp,
						  harness_always_alive, &h->epoch, &err) != PM_OK)
	{
		snprintf(why, sizeof(why), "attach: %s", err.msg);
		return why;
	}
	return NULL;
}

static void
host_detach(host *h)
{
	pmhash_detach(&h->t);
	pm_epoch_unregister(&h->epoch);
	hash_process_detach(&h->hp);
}

/* ---- the workload child ---- */

typedef struct child
{
	uint64_t	seed;
	pm_epoch_domain *dom;
	host		h;
} child;

static const char *
child_open(void *ctx, const char *path, pm_mode mode, pm_pool **pool)
{
	child	   *c = ctx;

	if (pm_pool_open(path, mode, pool, NULL) != PM_OK)
		return "the pool does not open";
	return host_attach(&c->h, *pool, c->dom);
}

/* Operation k: into the operation log (acknowledged), into the table, a checkpoint every few. */
static const char *
child_step(void *ctx, uint64_t k)
{
	child	   *c = ctx;
	uint64_t	o = op_of(c->seed, k);
	pm_error	err;

	if (pm_olog_reserve(c->h.hp.pool, &c->h.hp.a, pm_olog_of(c->h.hp.pool), 0, sizeof(o), &err) != PM_OK)
		return "the operation log is full";
	(void) pm_olog_append(c->h.hp.pool, pm_olog_of(c->h.hp.pool), 0, &o, sizeof(o), k + 1);
	if (apply(&c->h, (uint32_t) (k % APPLIERS), o, &err) != PM_OK)
		return "an operation failed";
	if (k % CHECKPOINT_EVERY == CHECKPOINT_EVERY - 1 && checkpoint(&c->h, &err) != PM_OK)
		return "a checkpoint failed";
	return NULL;
}

/* ---- recovery and its check ---- */

typedef struct block_list
{
	uint64_t	n;
	uint64_t	off[4096];
} block_list;

static void
list_block(void *ctx, uint64_t off, size_t size)
{
	block_list *l = ctx;

	(void) size;
	if (l->n < 4096)
		l->off[l->n] = off;
	l->n++;
}

/*
 * NULL if the image at path, recovered, holds exactly the preloaded entries
 * changed by the operations its log acknowledged, acks_min to acks_max of
 * them, and the allocator exactly the reachable blocks; else what is wrong.
 */
static const char *
check_image(const char *path, pm_epoch_domain *dom, uint64_t seed, uint64_t acks_min, uint64_t acks_max)
{
	static char why[400];
	static block_list before;
	static block_list after;
	static uint8_t model[NID];
	pm_pool    *pool;
	pm_olog_lane *lane;
	pm_olog_cursor c;
	pm_olog_record rec;
	pm_error	err = {0};
	host		h;
	uint64_t	entries;
	uint64_t	expected = 0;
	uint64_t	tail;
	const char *problem;

	if (pm_pool_open(path, PM_MODE_ADR, &pool, &err) != PM_OK)
		return "the image does not open";
	if ((problem = host_attach(&h, pool, dom)) != NULL)
	{
		snprintf(why, sizeof(why), "%s", problem);
		pm_pool_close(pool);
		return why;
	}
	why[0] = '\0';
	lane = pm_olog_lane_at(pool, pm_olog_of(pool), 0);
	if (pm_uno_recover(h.hp.uno, false, &err) != PM_OK || hash_recover_allocator(&h.hp.a, pool, &err) != PM_OK)
		snprintf(why, sizeof(why), "recovery: %s", err.msg);
	pmhash_recover(&h.t);
	pm_olog_cursor_init(&c, pm_load(&lane->applied));
	while (why[0] == '\0' && pm_olog_next(pool, pm_olog_of(pool), 0, &c, pm_load(&lane->tail), &rec, &err))
	{
		uint64_t	o;

		memcpy(&o, rec.data, sizeof(o));
		if (apply(&h, 0, o, &err) != PM_OK)
			snprintf(why, sizeof(why), "redo: %s", err.msg);
	}
	if (why[0] == '\0' && err.code != PM_OK)
		snprintf(why, sizeof(why), "redo: %s", err.msg);
	if (why[0] == '\0' && checkpoint(&h, &err) != PM_OK)
		snprintf(why, sizeof(why), "checkpoint after redo: %s", err.msg);
	tail = olog_records_below(pm_load(&lane->tail), sizeof(uint64_t));
	for (uint64_t id = 0; id < NID; id++)
		model[id] = preloaded(id);
	for (uint64_t k = 0; k < tail; k++)
		model[op_of(seed, k) >> 1] = !(op_of(seed, k) & 1);
	for (uint64_t id = 0; id < NID; id++)
		expected += model[id];
	if (why[0] == '\0' && (tail < acks_min || tail > acks_max))
		snprintf(why, sizeof(why), "the operation log holds %llu operations, not %llu to %llu",
				 (unsigned long long) tail, (unsigned long long) acks_min, (unsigned long long) acks_max);
	else if (why[0] == '\0' && (problem = pmhash_check(&h.t, &entries)) != NULL)
		snprintf(why, sizeof(why), "after %llu operations: %s", (unsigned long long) tail, problem);
	else if (why[0] == '\0' && entries != expected)
		snprintf(why, sizeof(why), "after %llu operations: %llu entries, not %llu", (unsigned long long) tail,
				 (unsigned long long) entries, (unsigned long long) expected);
	for (uint64_t id = 0; why[0] == '\0' && id < NID; id++)
	{
		rests		rs = {0};

		if (pmhash_lookup(&h.t, hash_of(id), collect_rest, &rs, &err) != PM_OK)
			snprintf(why, sizeof(why), "lookup: %s", err.msg);
		for (uint64_t i = 0; i < rs.n && i < HOT_IDS + 8; i++)
			if (rs.r[i] == 0 || rs.r[i] > NID || !model[rs.r[i] - 1])
				snprintf(why, sizeof(why), "after %llu operations: entry %llu is there", (unsigned long long) tail,
						 (unsigned long long) rs.r[i] - 1);
	}
	if (why[0] == '\0')
	{
		pm_epoch_drain(&h.hp.epoch);
		before.n = after.n = 0;
		pm_alloc_foreach(&h.hp.a, list_block, &before);
		if (hash_recover_allocator(&h.hp.a, pool, &err) != PM_OK)
			snprintf(why, sizeof(why), "allocator recovery: %s", err.msg);
		pm_alloc_foreach(&h.hp.a, list_block, &after);
		if (why[0] == '\0' && (before.n != after.n || memcmp(before.off, after.off, sizeof(uint64_t) * before.n) != 0))
			snprintf(why, sizeof(why), "the allocator holds %llu blocks, %llu reachable",
					 (unsigned long long) before.n, (unsigned long long) after.n);
	}
	host_detach(&h);
	pm_pool_close(pool);
	return why[0] != '\0' ? why : NULL;
}

/* The buckets of the table of the pool at path. */
static uint64_t
buckets_of(const char *path, pm_epoch_domain *dom)
{
	pm_pool    *pool;
	pm_error	err;
	host		h;
	pmhash_stats st = {0};

	if (pm_pool_open(path, PM_MODE_ADR, &pool, &err) != PM_OK || host_attach(&h, pool, dom) != NULL)
		exit(2);
	pmhash_get_stats(&h.t, &st, &err);
	host_detach(&h);
	pm_pool_close(pool);
	return st.buckets;
}

/* The base pool: a table of the preloaded entries, checkpointed. */
static void
make_base(const char *path, pm_epoch_domain *dom)
{
	pm_pool    *pool = harness_pool(path, PM_MODE_ADR, 32 << 20, PM_KIND_HASH, hash_format);
	pm_error	err;
	host		h;

	if (host_attach(&h, pool, dom) != NULL)
		exit(2);
	for (uint64_t id = HOT_IDS; id < NID; id++)
		if (preloaded(id) && apply(&h, id % APPLIERS, id << 1, &err) != PM_OK)
			exit(2);
	/* hot entries until their bucket's last block is full, past a few blocks */
	for (;;)
	{
		const pmhash_meta *m = pmhash_meta_of(pool);
		uint64_t	off = pmhash_bucket_off(pool, m, pmhash_bucket_for(hash_of(0), m->nbuckets));

		while (pmhash_block_at(pool, off)->next != 0)
			off = pmhash_block_at(pool, off)->next;
		if (hot_preloaded >= 3 * PMHASH_BLOCK_CAP && pmhash_block_at(pool, off)->n == PMHASH_BLOCK_CAP)
			break;
		if (hot_preloaded + 10 == HOT_IDS || apply(&h, 0, hot_preloaded++ << 1, &err) != PM_OK)
			exit(2);
	}
	if (checkpoint(&h, &err) != PM_OK)
		exit(2);
	pm_epoch_drain(&h.hp.epoch);
	host_detach(&h);
	pm_pool_close(pool);
}

int
main(void)
{
	char	   *dir = tap_tmpdir("pmhash_crash");
	char		path[600];
	char		work[600];
	char		image[600];
	pm_epoch_domain *dom = harness_domain_sized(false, HARNESS_SLOTS, HARNESS_LIMBO);
	child		c = {0};
	crash_workload w = {&c, child_open, child_step, NULL};
	uint64_t	points = 0;
	int			failures = 0;
	const char *why;

	tap_plan(3);
	snprintf(path, sizeof(path), "%s/pool.pm", dir);
	snprintf(work, sizeof(work), "%s/work.pm", dir);
	snprintf(image, sizeof(image), "%s/image.pm", dir);
	crash_report_map();
	make_base(path, dom);
	c.dom = dom;
	for (c.seed = 1; c.seed <= SEEDS; c.seed++)
	{
		uint64_t	events;

		if (!copy_file(path, work))
			return 2;
		events = crash_run_adr_child(&w, work, 0, image, 1, OPS) == 1 ? crash_rep->total_events : 0;
		if (c.seed == 1)
		{
			uint64_t	before = buckets_of(path, dom);
			uint64_t	after = buckets_of(work, dom);

			why = events > 0 ? check_image(work, dom, c.seed, OPS, OPS) : "the workload failed";
			tap_ok(why == NULL && after > before,
				   "the workload runs to its end (%llu persistence events, %llu buckets split) and recovers as it is%s%s",
				   (unsigned long long) events, (unsigned long long) (after - before), why ? ": " : "",
				   why ? why : "");
		}
		for (uint64_t at = 1; at <= events; at += EVENT_STRIDE)
		{
			if (!copy_file(path, work) || crash_run_adr_child(&w, work, at, image, at * 7 + c.seed, OPS) != 0)
			{
				if (failures++ < MAX_REPORT)
					tap_diag("seed %llu event %llu: the child did not crash (%s)", (unsigned long long) c.seed,
							 (unsigned long long) at, crash_rep->msg);
				continue;
			}
			points++;
			if ((why = check_image(image, dom, c.seed, crash_rep->completed, crash_rep->completed + 1)) != NULL &&
				failures++ < MAX_REPORT)
				tap_diag("seed %llu event %llu: %s", (unsigned long long) c.seed, (unsigned long long) at, why);
		}
	}
	tap_ok(failures == 0 && points > 500 / EVENT_STRIDE,
		   "%llu power failures (" EVENTS " of %d workload of %d operations): after recovery and redo the "
		   "table checks, holds exactly the acknowledged operations' entries, the allocator the reachable blocks",
		   (unsigned long long) points, SEEDS, OPS);

	/* and the recovered table keeps working: the last image, 2,000 more operations */
	{
		pm_pool    *pool;
		pm_error	err;
		host		h;
		int			bad = 0;
		uint64_t	entries;

		if (pm_pool_open(image, PM_MODE_ADR, &pool, &err) != PM_OK || host_attach(&h, pool, dom) != NULL)
			return 2;
		for (uint64_t k = 0; k < 2000; k++)
			bad += apply(&h, (uint32_t) (k % APPLIERS), op_of(99, k), &err) != PM_OK;
		bad += checkpoint(&h, &err) != PM_OK;
		why = pmhash_check(&h.t, &entries);
		tap_ok(bad == 0 && why == NULL, "the recovered table takes 2,000 more operations and checks (%llu entries)",
			   (unsigned long long) entries);
		host_detach(&h);
		pm_pool_close(pool);
	}
	return tap_done();
}
