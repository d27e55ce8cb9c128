/*
 * test_phast_crash.c
 *	  PhaST survives crashes anywhere, LNode splits included: after the
 *	  DRAM layer is rebuilt from the pool (which finishes interrupted
 *	  splits) the structure checks, every acknowledged insert is there,
 *	  every acknowledged delete is not, nothing else is (only the operation
 *	  in flight may or may not have happened), the allocator holds exactly
 *	  the meta block and the LNodes the chain reaches, and the structure
 *	  keeps working.
 *
 * The workload is a deterministic sequence of inserts, deletes and
 * compactions over KEYS x RESTS entries, generated from a seed, so the
 * parent can replay it on a reference.  adr: simulated power failures at a
 * persistence event (crashsim.c: per line the durable, flushed or current
 * content), half at a random event, half aimed at the events of an
 * operation that splits an LNode (found by a calibration run: the event
 * sequence is deterministic).  eadr: SIGKILLs at a random moment, the same
 * pool carrying on from crash to crash.  PM_TEST_SEED=n runs other ones.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness_crash.h"
#include "phast_harness.h"
#include "phast_internal.h"

#define KEYS			512
#define RESTS			24
#define NID				(KEYS * RESTS)
#define ARENA_SIZE		(32u << 20)
#define ADR_OPS			1200
#define ADR_POINTS		1000
#define ADR_SEEDS		25
#define EADR_KILLS		200
#define OPS_AFTER		300
#define MAX_REPORT		5

static uint64_t test_seed;
static uint8_t ref[NID];
static char base_path[600];
static char work_path[600];
static char image_path[600];

typedef struct op
{
	int			kind;			/* 0 insert, 1 delete, 2 compact */
	int			id;
} op;

static phast_key
key_of(int id)
{
	return (phast_key) {(UINT64_C(1) << 63) + (uint64_t) (id / RESTS) * 977, (uint64_t) (id % RESTS) + 1};
}

/* Operation k of workload seed: mostly inserts in the first half of each 400, deletes after. */
static op
op_of(uint64_t seed, uint64_t k)
{
	uint64_t	s = seed * UINT64_C(0x9e3779b97f4a7c15) + k * UINT64_C(0xbf58476d1ce4e5b9) + 1;
	uint64_t	r = xorshift(&s);
	int			p = (int) (r % 100);
	bool		growing = (k / 200) % 2 == 0;
	op			o;

	o.id = (int) ((r >> 20) % NID);
	o.kind = p < (growing ? 75 : 30) ? 0 : p < 92 ? 1 : 2;
	return o;
}

static void
apply_ref(const op *o)
{
	if (o->kind == 0)
		ref[o->id] = 1;
	else if (o->kind == 1)
		ref[o->id] = 0;
}

/* ---- the child's side ---- */

typedef struct child
{
	uint64_t	seed;
	uint64_t	first_op;		/* the workload's operation numbers continue */
	pm_pool    *pool;
	pm_alloc	dram;
	void	   *arena;
	pm_epoch_domain *dom;
	pm_epoch_handle epoch;
	phast_tree	tree;
	uint64_t   *events_at;		/* calibration: persistence events after each op */
	uint8_t    *splits_at;		/* calibration: did op k split? */
} child;

static void
cfree(void *ctx, uint32_t space, uint32_t tag, uint64_t off)
{
	child	   *c = ctx;
	pm_error	err;

	(void) space;
	(void) tag;
	pm_free_block(&c->dram, off, &err);
}

/* Open the pool as after a restart: a fresh arena and domain, the DRAM layer rebuilt. */
static const char *
copen(void *ctx, const char *path, pm_mode mode, pm_pool **pool)
{
	child	   *c = ctx;
	static char why[300];
	pm_error	err;

	if (pm_pool_open(path, mode, pool, &err) != PM_OK)
	{
		snprintf(why, sizeof(why), "open: %s", err.msg);
		return why;
	}
	c->pool = *pool;
	pm_arena_format(c->arena, ARENA_SIZE);
	pm_alloc_attach_arena(&c->dram, c->arena, "crash test arena");
	pm_epoch_domain_init(c->dom, 4, 1024);
	if (pm_epoch_register(c->dom, (uint64_t) getpid(), -1, cfree, c, harness_always_alive, &c->epoch, &err) != PM_OK)
		return "epoch register failed";
	phast_attach(&c->tree, *pool, &c->dram, &c->epoch, SPACE_DRAM, 0);
	if (phast_rebuild(&c->tree, true, &err) != PM_OK)
	{
		snprintf(why, sizeof(why), "rebuild: %s", err.msg);
		return why;
	}
	return NULL;
}

static const char *
cstep(void *ctx, uint64_t k)
{
	child	   *c = ctx;
	op			o = op_of(c->seed, c->first_op + k);
	phast_key	key = key_of(o.id);
	static char why[300];
	pm_error	err;
	pm_errcode	rc = PM_OK;
	bool		b;

	if (o.kind == 0)
		rc = phast_insert(&c->tree, &key, &err);
	else if (o.kind == 1)
		rc = phast_delete(&c->tree, &key, &b, &err);
	else
		rc = phast_compact_leaf(&c->tree, &key, &b, &err);
	if (rc != PM_OK)
	{
		snprintf(why, sizeof(why), "op %llu: %s", (unsigned long long) k, err.msg);
		return why;
	}
	return NULL;
}

static void
cafter(void *ctx, uint64_t k, pm_crashsim *cs)
{
	child	   *c = ctx;
	phast_stats st;
	static uint64_t last_splits;

	if (c->events_at == NULL || cs == NULL)
		return;
	c->events_at[k] = pm_crashsim_events(cs);
	phast_get_stats(&c->tree, &st);
	c->splits_at[k] = st.splits != last_splits;
	last_splits = st.splits;
}

/* ---- the parent's side ---- */

/* After a crash: recover, verify against the reference (id in flight may go either way). */
static const char *
verify(child *c, const char *path, int in_flight)
{
	static char why[400];
	pm_pool    *pool;
	const char *r = copen(c, path, PM_MODE_EADR, &pool);
	uint64_t	entries;
	phast_batch b;
	phast_key	from = PM_KEY_MIN;
	uint8_t		seen[NID];
	pm_alloc_stats ast;
	phast_stats st;

	if (r != NULL)
		return r;
	if ((r = phast_check(&c->tree, &entries)) != NULL)
	{
		snprintf(why, sizeof(why), "structure: %s", r);
		goto out;
	}
	memset(seen, 0, sizeof(seen));
	for (;;)
	{
		phast_read_leaf(&c->tree, &from, false, &b);
		for (int i = 0; i < b.n; i++)
		{
			int			id = (int) ((b.e[i].key - (UINT64_C(1) << 63)) / 977) * RESTS + (int) b.e[i].rest - 1;

			seen[id] = 1;
		}
		if (pm_key_is_max(&b.high))
			break;
		from = b.high;
	}
	for (int id = 0; id < NID; id++)
		if (seen[id] != ref[id] && id != in_flight)
		{
			snprintf(why, sizeof(why), "entry %d is %s after the crash but %s in the reference", id,
					 seen[id] ? "present" : "absent", ref[id] ? "present" : "absent");
			r = why;
			goto out;
		}
	phast_get_stats(&c->tree, &st);
	pm_alloc_get_stats(&c->tree.pm, &ast);
	if (ast.blocks != st.lnodes + 1)
	{
		snprintf(why, sizeof(why), "the allocator holds %llu blocks, the structure reaches %llu",
				 (unsigned long long) ast.blocks, (unsigned long long) st.lnodes + 1);
		r = why;
	}
out:
	phast_release_dram(&c->tree);
	pm_pool_close(pool);
	return r;
}

/* The reference after ops [from, to) of the workload. */
static void
replay(uint64_t seed, uint64_t from, uint64_t to)
{
	for (uint64_t k = from; k < to; k++)
	{
		op			o = op_of(seed, k);

		apply_ref(&o);
	}
}

/* A base pool with the first 2,000 operations of the workload, and the reference after them. */
static void
make_base(child *c, uint64_t seed)
{
	pm_pool    *pool = harness_new_phast(base_path, PM_MODE_EADR, UINT64_C(1) << 28, 4,
										 UINT64_C(1) << 63, (UINT64_C(1) << 63) + KEYS * 977);
	const char *r;

	pm_pool_close(pool);
	if ((r = copen(c, base_path, PM_MODE_EADR, &pool)) != NULL)
	{
		tap_ok(false, "base pool: %s", r);
		exit(1);
	}
	c->seed = seed;
	c->first_op = 0;
	for (uint64_t k = 0; k < 2000; k++)
		cstep(c, k);
	phast_release_dram(&c->tree);
	pm_pool_close(pool);
	memset(ref, 0, sizeof(ref));
	replay(seed, 0, 2000);
}

static void
adr_runs(child *c)
{
	crash_workload w = {c, copen, cstep, cafter};
	int			failures = 0,
				runs = 0,
				aimed = 0;
	uint64_t	s = test_seed;

	for (int ws = 0; ws < ADR_SEEDS; ws++)
	{
		uint64_t	seed = test_seed * 31 + (uint64_t) ws;
		uint64_t	total;
		uint64_t	split_ops[ADR_OPS];
		int			nsplit = 0;

		make_base(c, seed);
		c->first_op = 2000;
		/* calibration: the events after each op, and which ops split */
		copy_file(base_path, work_path);
		c->events_at = mmap(NULL, sizeof(uint64_t) * ADR_OPS, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		c->splits_at = mmap(NULL, ADR_OPS, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (crash_run_adr_child(&w, work_path, 0, image_path, 0, ADR_OPS) != 1)
		{
			tap_ok(false, "adr calibration run of workload %d failed: %s", ws, crash_rep->msg);
			exit(1);
		}
		total = crash_rep->total_events;
		for (uint64_t k = 1; k < ADR_OPS; k++)
			if (c->splits_at[k])
				split_ops[nsplit++] = k;
		for (int point = 0; point < ADR_POINTS / ADR_SEEDS; point++)
		{
			uint64_t	crash_at;
			int			st;
			const char *r;
			op			flight;
			uint8_t		saved[NID];

			if (point % 2 == 1 && nsplit > 0)
			{
				uint64_t	k = split_ops[xorshift(&s) % nsplit];
				uint64_t	lo = c->events_at[k - 1],
							hi = c->events_at[k];

				crash_at = lo + 1 + xorshift(&s) % (hi - lo);
				aimed++;
			}
			else
				crash_at = 1 + xorshift(&s) % total;
			copy_file(base_path, work_path);
			st = crash_run_adr_child(&w, work_path, crash_at, image_path, xorshift(&s), ADR_OPS);
			runs++;
			if (st != 0)
			{
				if (failures++ < MAX_REPORT)
					tap_diag("workload %d, event %llu: the child did not crash (status %d: %s)", ws,
							 (unsigned long long) crash_at, st, crash_rep->msg);
				continue;
			}
			memcpy(saved, ref, sizeof(ref));
			replay(seed, 2000, 2000 + crash_rep->completed);
			flight = op_of(seed, 2000 + crash_rep->completed);
			r = verify(c, image_path, flight.kind < 2 ? flight.id : -1);
			if (r != NULL && failures++ < MAX_REPORT)
				tap_diag("workload %d, crash at event %llu after %llu ops: %s", ws,
						 (unsigned long long) crash_at, (unsigned long long) crash_rep->completed, r);
			memcpy(ref, saved, sizeof(ref));
		}
		munmap(c->events_at, sizeof(uint64_t) * ADR_OPS);
		munmap(c->splits_at, ADR_OPS);
		c->events_at = NULL;
		c->splits_at = NULL;
	}
	tap_ok(failures == 0, "adr: %d power failures (%d aimed at LNode splits) recover to the acknowledged state",
		   runs, aimed);
}

static void
eadr_workload(void *ctx)
{
	child	   *c = ctx;
	pm_pool    *pool;
	const char *why = copen(c, work_path, PM_MODE_EADR, &pool);

	if (why != NULL)
		crash_child_fail(why);
	crash_child_loop(&(crash_workload) {c, copen, cstep, NULL}, 0, NULL);
}

static void
eadr_runs(child *c)
{
	int			failures = 0,
				kills = 0;
	uint64_t	s = test_seed * 7 + 3;
	uint64_t	done = 2000;
	pm_pool    *pool;

	make_base(c, test_seed + 99);
	copy_file(base_path, work_path);
	for (int i = 0; i < EADR_KILLS; i++)
	{
		const char *r;
		op			flight;

		c->first_op = done;
		crash_report_reset();
		if (!pm_crash_fork_kill(eadr_workload, c, 2000 + (unsigned) (xorshift(&s) % 20000)))
		{
			if (failures++ < MAX_REPORT)
				tap_diag("eadr kill %d: the child was not killed (%s)", i, crash_rep->msg);
			continue;
		}
		kills++;
		replay(c->seed, done, done + crash_rep->completed);
		flight = op_of(c->seed, done + crash_rep->completed);
		r = verify(c, work_path, flight.kind < 2 ? flight.id : -1);
		if (r != NULL && failures++ < MAX_REPORT)
			tap_diag("eadr kill %d after %llu ops: %s", i, (unsigned long long) crash_rep->completed, r);
		/* the in-flight op is settled by the pool: apply what it holds now */
		if (flight.kind < 2 && copen(c, work_path, PM_MODE_EADR, &pool) == NULL)
		{
			phast_batch b;
			phast_key	k = key_of(flight.id);

			phast_read_leaf(&c->tree, &k, false, &b);
			ref[flight.id] = b.n > 0 && pm_key_cmp(&b.e[0], &k) == 0;
			phast_release_dram(&c->tree);
			pm_pool_close(pool);
		}
		done += crash_rep->completed + 1;
	}
	tap_ok(failures == 0 && kills > EADR_KILLS / 2, "eadr: %d SIGKILLs recover to the acknowledged state", kills);
	/* the recovered structure goes on working */
	if (copen(c, work_path, PM_MODE_EADR, &pool) == NULL)
	{
		uint64_t	entries;
		const char *problem;

		c->first_op = done;
		for (uint64_t k = 0; k < OPS_AFTER; k++)
			cstep(c, k);
		replay(c->seed, done, done + OPS_AFTER);
		problem = phast_check(&c->tree, &entries);
		tap_ok(problem == NULL, "after the crashes, %d more operations leave the structure sound (%s)",
			   OPS_AFTER, problem ? problem : "ok");
		phast_release_dram(&c->tree);
		pm_pool_close(pool);
	}
}

int
main(void)
{
	child		c = {0};
	const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";

	test_seed = getenv("PM_TEST_SEED") ? strtoull(getenv("PM_TEST_SEED"), NULL, 10) : 20261125;
	tap_diag("seed %llu (PM_TEST_SEED)", (unsigned long long) test_seed);
	snprintf(base_path, sizeof(base_path), "%s/phast_crash_base.pool", dir);
	snprintf(work_path, sizeof(work_path), "%s/phast_crash_work.pool", dir);
	snprintf(image_path, sizeof(image_path), "%s/phast_crash_image.pool", dir);
	crash_report_map();
	c.arena = mmap(NULL, ARENA_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	c.dom = mmap(NULL, pm_epoch_domain_size(4, 1024), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	adr_runs(&c);
	eadr_runs(&c);
	unlink(base_path);
	unlink(work_path);
	unlink(image_path);
	tap_plan(tap_count);
	return tap_failed ? 1 : 0;
}
