/*
 * test_fbrtree_crash.c
 *	  The fbrtree survives crashes anywhere, splits and merges included:
 *	  after recovery the structure checks, every acknowledged insert is
 *	  there, every acknowledged delete is not, nothing else is (only the one
 *	  operation in flight may or may not have happened), the allocator holds
 *	  exactly the meta block and the nodes the tree reaches, and the tree
 *	  keeps working.
 *
 * The workload is a deterministic sequence of inserts and deletes over a
 * fixed universe of NID boxes (payload = id) in a small area, generated
 * from a seed and the reference set, so the parent can replay it; phases
 * of growth (leaves split) alternate with phases that delete most entries
 * of a moving strip (leaves empty and merge, the root may collapse).
 *
 * adr: ADR_POINTS simulated power failures, each at a persistence event
 * (crashsim: per cache line the durable, flushed or current content) of
 * one of ADR_SEEDS workloads run on a copy of a prepared pool: half at a
 * uniformly random event, half at an event of an operation that splits or
 * merges, found by a calibration run of the same workload.
 * eadr: EADR_KILLS SIGKILLs at a random moment, then as many SIGKILLs that
 * the workload sends itself at a chosen fence (a trace hook counts them):
 * half at a random one, half at one of an operation that splits or merges
 * (found by a calibration run); the same pool carries on from crash to
 * crash.
 * After each crash the parent recovers (fbr_recover with allocator
 * recovery), verifies, runs OPS_AFTER more operations and verifies again.
 * Workloads and crash points are seeded; PM_TEST_SEED=n runs other ones.
 * test_fbrtree_crash_nd.c runs the same on a tree of 4-D boxes
 * (FBR_CRASH_DIMS).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "fbr_harness.h"
#include "fbr_internal.h"
#include "harness_crash.h"

#include <signal.h>

#ifndef FBR_CRASH_DIMS
#define FBR_CRASH_DIMS	2
#endif

#define NID			6000
#define LIVE_MAX	(NID * 2 / 3)
#define AREA		60.0
#define PHASE		400			/* ops per phase */
#define BASE_OPS	8000
#define ADR_OPS		1200
#define ADR_SEEDS	10
#define ADR_POINTS	(1500 / FBR_SCALE_DOWN * 2)
#define EADR_KILLS	(300 / FBR_SCALE_DOWN * 2)
#define OPS_AFTER	300
#define MAX_POOL	(UINT64_C(64) << 20)
#define MAX_REPORT	5

typedef struct gen
{
	uint64_t	seed;
	uint64_t	n;
	uint8_t		ref[NID];
	int			live;
} gen;

typedef struct op
{
	bool		insert;
	int			id;
} op;

/* Calibration, shared with the children (crash_rep has what every child reports). */
typedef struct progress
{
	uint64_t	events_after[ADR_OPS];
	uint64_t	smo_after[ADR_OPS];	/* splits + merges + root changes so far */
	uint64_t	merges;			/* in the calibration run */
} progress;

static progress *P;
static fbr_item universe[NID];
static char base_path[600];
static char work_path[600];
static char image_path[600];
static pm_epoch_domain *dom;
static uint64_t test_seed;

static bool
in_strip(int id, int strip)
{
	double		x = universe[id].box.min[0];

	return x >= strip * AREA / 7 && x < (strip + 1) * AREA / 7;
}

/*
 * Blocks of two phases over 7 vertical strips: a growth phase inserts
 * 90% of the time (below LIVE_MAX entries) into the strip the previous
 * block emptied (its nodes fill and split), then a strip phase deletes 75%
 * of the time from this block's strip (its nodes empty and merge) and
 * inserts anywhere otherwise: the tree keeps splitting and merging however
 * long the workload runs.
 */
static op
gen_next(gen *g)
{
	uint64_t	x = xorshift(&g->seed);
	int			id = (int) ((x >> 8) % NID);
	int			block = (int) (g->n / (2 * PHASE));
	bool		growth = g->n / PHASE % 2 == 0;
	int			strip = growth ? (block + 6) % 7 : block % 7;
	int			tries = 64;
	op			o;

	g->n++;
	o.insert = g->live == 0 ||
		(g->live < LIVE_MAX && (int) ((x >> 40) % 100) < (growth ? 90 : 25));
	/* an absent (insert) or live (delete) id, preferably in the strip */
	while (g->ref[id] == o.insert || (tries > 0 && (growth == o.insert) && !in_strip(id, strip)))
	{
		if (g->ref[id] != o.insert)
			tries--;
		id = (id + 1) % NID;
	}
	o.id = id;
	g->ref[id] = o.insert;
	g->live += o.insert ? 1 : -1;
	return o;
}

typedef struct env
{
	pm_pool    *pool;
	fbr_harness h;
	pm_epoch_domain *dom;
} env;

/* What crashes left unfinished, seen before recovery: version-0 nodes by the aux tag. */
static uint64_t unfinished_splits;
static uint64_t unfinished_merges;

static void
count_unfinished(fbr_tree *t, uint64_t off, int depth)
{
	fbr_node   *n = fbr_node_at(t, off);
	uint64_t	m = n->meta;

	if (fbr_version(m) == 0 && (n->aux & FBR_AUX_MERGE))
		unfinished_merges++;
	else if (fbr_version(m) == 0)
		unfinished_splits++;
	if (!fbr_is_leaf(m) && depth < 64)
		for (uint64_t bits = fbr_bits(m); bits; bits &= bits - 1)
			count_unfinished(t, fbr_slot_payload(n, __builtin_ctzll(bits), t->dims), depth + 1);
}

/* Open a pool as after a restart: a fresh epoch domain, then (if asked) recovery. */
static const char *
env_open(env *e, const char *path, pm_mode mode, bool recover, uint64_t *repaired)
{
	static char why[400];
	pm_error	err;

	if (pm_pool_open(path, mode, &e->pool, &err) != PM_OK)
	{
		snprintf(why, sizeof(why), "open: %s", err.msg);
		return why;
	}
	pm_epoch_domain_init(e->dom, HARNESS_SLOTS, HARNESS_LIMBO);
	fbr_attach(&e->h.tree, e->pool, FBR_TEST_ROOT, &e->h.epoch, SPACE_PM, 0);
	if (pm_epoch_register(e->dom, 1, -1, fbr_harness_free, &e->h, harness_always_alive, &e->h.epoch, &err) != PM_OK)
	{
		snprintf(why, sizeof(why), "epoch register: %s", err.msg);
		return why;
	}
	if (recover)
		count_unfinished(&e->h.tree, fbr_root(&e->h.tree), 0);
	if (recover && fbr_recover(&e->h.tree, true, repaired, &err) != PM_OK)
	{
		snprintf(why, sizeof(why), "recover: %s", err.msg);
		return why;
	}
	return NULL;
}

static void
env_close(env *e)
{
	pm_epoch_drain(&e->h.epoch);
	pm_epoch_unregister(&e->h.epoch);
	pm_pool_close(e->pool);
}

static const char *
apply(env *e, op o)
{
	static char why[400];
	pm_error	err;
	bool		found;

	if (o.insert)
	{
		if (fbr_insert(&e->h.tree, &universe[o.id], &err) != PM_OK)
		{
			snprintf(why, sizeof(why), "insert %d: %s", o.id, err.msg);
			return why;
		}
	}
	else if (fbr_delete(&e->h.tree, &universe[o.id], &found, &err) != PM_OK || !found)
	{
		snprintf(why, sizeof(why), "delete %d did not find it", o.id);
		return why;
	}
	return NULL;
}

/*
 * Structure, content (ref, except fuzzy_id, which may be either way),
 * allocator.  got[] receives the content.
 */
static const char *
verify(env *e, const uint8_t *ref, int fuzzy_id, uint8_t *got)
{
	static char why[400];
	fbr_results all = {0};
	fbr_stats	st;
	const char *cw = fbr_check(&e->h.tree, &st);
	uint64_t	blocks = 0;
	pm_error	err;

	if (cw != NULL)
	{
		snprintf(why, sizeof(why), "fbr_check: %s", cw);
		return why;
	}
	memset(got, 0, NID);
	fbr_search(&e->h.tree, accept_all, NULL, &all, &err);
	for (size_t i = 0; i < all.n; i++)
	{
		uint64_t	id = all.items[i].payload;

		if (id >= NID || !item_same(&all.items[i], &universe[id], FBR_CRASH_DIMS) || got[id])
		{
			snprintf(why, sizeof(why), "entry %llu is unknown, altered or there twice",
					 (unsigned long long) id);
			fbr_results_free(&all);
			return why;
		}
		got[id] = 1;
	}
	fbr_results_free(&all);
	for (int id = 0; id < NID; id++)
		if (got[id] != ref[id] && id != fuzzy_id)
		{
			snprintf(why, sizeof(why), "entry %d is %s, the reference says %s", id,
					 got[id] ? "present" : "absent", ref[id] ? "present" : "absent");
			return why;
		}
	pm_alloc_foreach(&e->h.tree.pm, count_block, &blocks);
	if (blocks != st.leaves + st.inner_nodes + 1)
	{
		snprintf(why, sizeof(why), "the allocator holds %llu blocks, the tree reaches %llu nodes + meta",
				 (unsigned long long) blocks, (unsigned long long) (st.leaves + st.inner_nodes));
		return why;
	}
	return NULL;
}

/*
 * After a crash: recover, verify against ops [0, completed) of g (op
 * completed in flight), keep working, verify again; *cur receives the state
 * the pool holds afterwards.
 */
static const char *
check_after_crash(env *e, const char *path, pm_mode mode, const gen *start, uint64_t completed,
				  uint64_t more_seed, gen *cur, uint64_t *repaired)
{
	static char why[600];
	gen			g = *start;
	uint8_t		got[NID];
	op			inflight;
	const char *w;

	for (uint64_t i = 0; i < completed; i++)
		(void) gen_next(&g);
	*cur = g;
	inflight = gen_next(&g);
	if ((w = env_open(e, path, mode, true, repaired)) == NULL)
		w = verify(e, cur->ref, inflight.id, got);
	if (w == NULL)
	{
		memcpy(cur->ref, got, NID);
		cur->live = 0;
		for (int id = 0; id < NID; id++)
			cur->live += got[id];
		cur->seed = more_seed;
		for (int i = 0; i < OPS_AFTER && w == NULL; i++)
			w = apply(e, gen_next(cur));
		pm_epoch_drain(&e->h.epoch);
		if (w == NULL)
			w = verify(e, cur->ref, -1, got);
	}
	if (e->pool != NULL)
		env_close(e);
	e->pool = NULL;
	if (w == NULL)
		return NULL;
	snprintf(why, sizeof(why), "%llu ops done, %s %d in flight: %s", (unsigned long long) completed,
			 inflight.insert ? "insert" : "delete", inflight.id, w);
	return why;
}

/* A workload child: its tree, its generator, and (eadr) where it dies. */
typedef struct work
{
	env		   *e;
	gen			g;
	const char *path;
	uint64_t	kill_at;		/* fence number to die at; 0: wait for the parent's kill */
	bool		calibrate;		/* count fences per op for ADR_OPS ops, then exit */
	uint64_t	fences;
} work;

static const char *
work_open(void *ctx, const char *path, pm_mode mode, pm_pool **pool)
{
	work	   *c = ctx;
	const char *w = env_open(c->e, path, mode, false, NULL);

	*pool = c->e->pool;
	return w;
}

static const char *
work_step(void *ctx, uint64_t k)
{
	work	   *c = ctx;

	(void) k;
	return apply(c->e, gen_next(&c->g));
}

/* Calibration: after op k, the events so far (adr: crashsim's; eadr: fences) and the SMOs. */
static void
work_calibrate(void *ctx, uint64_t k, pm_crashsim *cs)
{
	work	   *c = ctx;
	fbr_stats	st;

	fbr_get_stats(&c->e->h.tree, &st);
	P->events_after[k] = cs != NULL ? pm_crashsim_events(cs) : c->fences;
	P->smo_after[k] = st.splits + st.merges + st.root_splits + st.root_collapses;
	P->merges = st.merges;
}

/* Run ADR_OPS ops of g on a copy of the base pool under crashsim, crashing at event crash_at. */
static int
run_adr_child(env *e, const gen *g0, uint64_t crash_at, uint64_t image_seed, bool calibrate)
{
	work		c = {e, *g0, work_path, 0, calibrate, 0};
	crash_workload w = {&c, work_open, work_step, calibrate ? work_calibrate : NULL};

	return crash_run_adr_child(&w, work_path, crash_at, image_path, image_seed, ADR_OPS);
}

static void
count_fence(void *arg)
{
	work	   *c = arg;

	if (++c->fences == c->kill_at)
		raise(SIGKILL);
}

static void
eadr_workload(void *arg)
{
	work	   *c = arg;
	pm_trace_hooks hooks = {NULL, count_fence, c};
	crash_workload w = {c, work_open, work_step, c->calibrate ? work_calibrate : NULL};
	pm_pool    *pool;
	const char *why;

	if ((why = work_open(c, c->path, PM_MODE_EADR, &pool)) != NULL)
		crash_child_fail(why);
	c->fences = 0;
	if (c->kill_at != 0 || c->calibrate)
		pm_pool_set_trace(pool, &hooks);
	crash_child_loop(&w, c->calibrate ? ADR_OPS : 0, NULL);
	_exit(1);
}

/* Run the workload in a child; true if SIGKILL ended it. */
static bool
run_eadr_child(work *c)
{
	pid_t		pid = fork();
	int			status;

	if (pid == 0)
		eadr_workload(c);
	waitpid(pid, &status, 0);
	return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
}

/*
 * A fence to die at: half the time one of an operation that splits or
 * merges, found by a calibration run of the same workload on a copy of the
 * pool (fence counts are deterministic), else any of the first 4000.
 */
static uint64_t
aim_fence(work *c, uint64_t *rng, int k)
{
	work		calib = *c;
	int			smo_ops = 0;

	if (k % 2 == 0)
		return 1 + xorshift(rng) % 4000;
	copy_file(work_path, image_path);
	calib.path = image_path;
	calib.calibrate = true;
	calib.kill_at = 0;
	crash_report_reset();
	(void) run_eadr_child(&calib);
	for (int i = 0; i < ADR_OPS; i++)
		smo_ops += P->smo_after[i] != (i ? P->smo_after[i - 1] : 0);
	if (crash_rep->errors || smo_ops == 0)
		return 1 + xorshift(rng) % 4000;
	for (int pick = (int) (xorshift(rng) % smo_ops), i = 0;; i++)
		if (P->smo_after[i] != (i ? P->smo_after[i - 1] : 0) && pick-- == 0)
		{
			uint64_t	lo = i ? P->events_after[i - 1] : 0;

			return lo + 1 + xorshift(rng) % (P->events_after[i] - lo);
		}
}

int
main(void)
{
	char	   *dir = tap_tmpdir("fbr_crash");
	env			e = {0};
	gen			base = {0};
	uint64_t	calib_events[ADR_SEEDS];
	uint64_t   *calib_ev[ADR_SEEDS];
	uint8_t    *calib_smo[ADR_SEEDS];
	double		t0;
	const char *w = NULL;

	tap_plan(7);
	fbr_test_dims = FBR_CRASH_DIMS;
	if (getenv("PM_TEST_SEED"))
		test_seed = strtoull(getenv("PM_TEST_SEED"), NULL, 10);
	P = mmap(NULL, sizeof(progress), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	crash_report_map();
	e.dom = harness_domain_sized(false, HARNESS_SLOTS, HARNESS_LIMBO);
	dom = e.dom;
	snprintf(base_path, sizeof(base_path), "%s/base.pool", dir);
	snprintf(work_path, sizeof(work_path), "%s/work.pool", dir);
	snprintf(image_path, sizeof(image_path), "%s/image.pool", dir);
	{
		uint64_t	s = 7;

		for (int id = 0; id < NID; id++)
		{
			fbr_box		b = {{0}, {0}};
			double		wd;

			for (int d = 0; d < FBR_CRASH_DIMS; d++)
				b.min[d] = grid(&s, 0, AREA);
			wd = xorshift(&s) % 2 ? 0 : grid(&s, 0, 2);
			for (int d = 0; d < FBR_CRASH_DIMS; d++)
				b.max[d] = b.min[d] + wd / (d + 1);
			universe[id].box = b;
			universe[id].payload = (uint64_t) id;
		}
	}

	/* the prepared pool */
	{
		pm_pool    *pool = fbr_harness_pool(base_path, PM_MODE_EADR, MAX_POOL);
		uint8_t		got[NID];

		pm_pool_close(pool);
		base.seed = 1;
		if ((w = env_open(&e, base_path, PM_MODE_EADR, false, NULL)) == NULL)
		{
			for (int i = 0; i < BASE_OPS && w == NULL; i++)
				w = apply(&e, gen_next(&base));
			pm_epoch_drain(&e.h.epoch);
			if (w == NULL)
				w = verify(&e, base.ref, -1, got);
			env_close(&e);
		}
		tap_ok(w == NULL, "base pool of %d ops (%d live entries, %d-D boxes) builds and verifies%s%s",
			   BASE_OPS, base.live, FBR_CRASH_DIMS, w ? ": " : "", w ? w : "");
		if (w != NULL)
			return tap_done();
	}

	/* calibration: persistence events of each workload, and which ops split or merge */
	{
		int			calib_ok = 0;
		int			nsmo = 0;
		uint64_t	merges = 0;

		for (int s = 0; s < ADR_SEEDS; s++)
		{
			gen			g = base;

			g.seed = 100 + (uint64_t) s + test_seed * 1000;
			calib_ev[s] = calloc(ADR_OPS, sizeof(uint64_t));
			calib_smo[s] = calloc(ADR_OPS, 1);
			copy_file(base_path, work_path);
			if (run_adr_child(&e, &g, 0, 1, true) == 1 && crash_rep->completed == ADR_OPS)
				calib_ok++;
			else if (crash_rep->errors)
				tap_diag("calibration seed %d: %s", s, crash_rep->msg);
			calib_events[s] = crash_rep->total_events;
			merges += P->merges;
			for (int k = 0; k < ADR_OPS; k++)
			{
				calib_ev[s][k] = P->events_after[k];
				calib_smo[s][k] = P->smo_after[k] != (k ? P->smo_after[k - 1] : 0);
				nsmo += calib_smo[s][k];
			}
		}
		tap_ok(calib_ok == ADR_SEEDS && nsmo > ADR_SEEDS * 10 && merges > 0,
			   "%d adr workloads of %d ops run under crashsim (%llu events in the first; %d ops "
			   "split or merge in all, %llu merges)", ADR_SEEDS, ADR_OPS,
			   (unsigned long long) calib_events[0], nsmo, (unsigned long long) merges);
		if (calib_ok != ADR_SEEDS)
			return tap_done();
	}

	/* adr: simulated power failures */
	t0 = now_sec();
	{
		uint64_t	rng = 12345 + test_seed;
		int			crashed = 0,
					failures = 0,
					in_smo = 0;
		uint64_t	repaired_total = 0;

		unfinished_splits = unfinished_merges = 0;
		for (int point = 0; point < ADR_POINTS; point++)
		{
			int			s = point % ADR_SEEDS;
			gen			g = base;
			gen			cur;
			uint64_t	at;
			uint64_t	repaired = 0;
			const char *why;

			g.seed = 100 + (uint64_t) s + test_seed * 1000;
			if (point % 2 == 1)
			{
				int			k;
				uint64_t	lo;

				do
					k = (int) (xorshift(&rng) % ADR_OPS);
				while (!calib_smo[s][k]);
				lo = k ? calib_ev[s][k - 1] : 0;
				at = lo + 1 + xorshift(&rng) % (calib_ev[s][k] - lo);
			}
			else
				at = 1 + xorshift(&rng) % calib_events[s];
			copy_file(base_path, work_path);
			if (run_adr_child(&e, &g, at, xorshift(&rng), false) != 0)
			{
				if (failures++ < MAX_REPORT)
					tap_diag("adr point %d: the child did not crash as planned%s%s", point,
							 crash_rep->errors ? ": " : "", crash_rep->errors ? crash_rep->msg : "");
				continue;
			}
			crashed++;
			in_smo += crash_rep->completed < ADR_OPS && calib_smo[s][crash_rep->completed];
			why = check_after_crash(&e, image_path, PM_MODE_ADR, &g, crash_rep->completed, xorshift(&rng),
									&cur, &repaired);
			repaired_total += repaired;
			if (why && failures++ < MAX_REPORT)
				tap_diag("adr point %d (seed %d, event %llu): %s", point, s, (unsigned long long) at, why);
		}
		tap_diag("adr: %d crash points in %.1f s, %d inside an operation that splits or merges; "
				 "recovery repaired %llu version-0 nodes", ADR_POINTS, now_sec() - t0, in_smo,
				 (unsigned long long) repaired_total);
		tap_ok(crashed == ADR_POINTS, "%d of %d adr crash points crashed as planned", crashed, ADR_POINTS);
		tap_ok(failures == 0, "adr: after every crash, recovery checks, holds exactly the acknowledged "
			   "entries, leaks no block, and keeps working (%d failures)", failures);
		tap_ok(repaired_total > 0 && unfinished_splits > 0 && unfinished_merges > 0,
			   "adr: crashes left %llu nodes to repair, %llu of them in a split and %llu in a merge",
			   (unsigned long long) repaired_total, (unsigned long long) unfinished_splits,
			   (unsigned long long) unfinished_merges);
	}
	for (int s = 0; s < ADR_SEEDS; s++)
	{
		free(calib_ev[s]);
		free(calib_smo[s]);
	}

	/* eadr: SIGKILL at a random moment, then at a random fence; the pool carries on */
	{
		uint64_t	rng = 777 + test_seed;
		gen			state = base;

		copy_file(base_path, work_path);
		for (int at_fence = 0; at_fence < 2; at_fence++)
		{
			int			killed = 0,
						efail = 0;
			uint64_t	ops_total = 0,
						repaired_total = 0;
			work		c;

			unfinished_splits = unfinished_merges = 0;
			t0 = now_sec();
			for (int k = 0; k < EADR_KILLS && efail == 0; k++)
			{
				gen			cur;
				uint64_t	repaired = 0;
				const char *why;

				c.e = &e;
				c.g = state;
				c.g.seed = xorshift(&rng);
				c.path = work_path;
				c.calibrate = false;
				c.kill_at = at_fence ? aim_fence(&c, &rng, k) : 0;
				crash_report_reset();
				if (at_fence)
					killed += run_eadr_child(&c);
				else
					killed += pm_crash_fork_kill(eadr_workload, &c, 2000 + (unsigned) (xorshift(&rng) % 20000));
				if (crash_rep->errors)
				{
					efail++;
					tap_diag("eadr kill %d: the workload failed: %s", k, crash_rep->msg);
					break;
				}
				ops_total += crash_rep->completed;
				why = check_after_crash(&e, work_path, PM_MODE_EADR, &c.g, crash_rep->completed, xorshift(&rng),
										&cur, &repaired);
				repaired_total += repaired;
				if (why)
				{
					efail++;
					tap_diag("eadr kill %d: %s", k, why);
					break;
				}
				state = cur;
			}
			tap_diag("eadr: %d kills %s in %.1f s, %llu ops acknowledged, %llu version-0 nodes repaired "
					 "(%llu in a split, %llu in a merge)",
					 EADR_KILLS, at_fence ? "at a chosen fence" : "after a random delay", now_sec() - t0,
					 (unsigned long long) ops_total, (unsigned long long) repaired_total,
					 (unsigned long long) unfinished_splits, (unsigned long long) unfinished_merges);
			tap_ok(killed == EADR_KILLS && efail == 0 && (!at_fence || repaired_total > 0),
				   "eadr, %s: %d of %d workload processes killed mid-run; after every kill, recovery "
				   "checks, holds exactly the acknowledged entries, leaks no block, and keeps working "
				   "(%d failures)", at_fence ? "kills at a chosen fence" : "kills after a random delay",
				   killed, EADR_KILLS, efail);
		}
	}
	tap_rmdir(dir);
	return tap_done();
}
