/*
 * test_nbtree_crash.c
 *	  The nbtree survives crashes anywhere, SMOs included: after recovery
 *	  the structure checks, every acknowledged insert is there, every
 *	  acknowledged delete is not, nothing else is (only the one operation in
 *	  flight may or may not have happened), the allocator holds exactly the
 *	  meta block and the leaf blocks the tree reaches, and the tree keeps
 *	  working.
 *
 * The workload is a deterministic sequence of inserts, deletes and
 * compactions over a modest key space (KEYS x RESTS entries), generated
 * from a seed and the reference set, so the parent can replay it; phases
 * of growth (mostly inserts: leaves of 62 slots fill and split) alternate
 * with phases of deletes and compactions.  The child stores, after each
 * operation returns, the number of operations completed in shared memory.
 * One insert in BATCH_ONE_IN is a batch (nbt_insert_sorted) of 1..BATCH_MAX
 * ascending entries, some of them present already: a batch that returned
 * is all there after a crash; of the one in flight, the new entries that
 * survive are a prefix of it (each is durable before the next starts, so
 * no acknowledged entry is lost and none is there before an earlier one).
 * The base pool's allocator is left nearly full, so each run also takes a
 * new chunk and grows the pool in the middle of an SMO.
 *
 * adr: 1,000 simulated power failures, each at a persistence event
 * (crashsim.c: per cache line the durable, flushed or current content) of
 * one of 25 workloads: half at a uniformly random event, half aimed at the
 * events of an operation that performs an SMO (a tenth at the one that
 * grows the pool, a tenth at a merge) or of a batch insert (a tenth), found
 * by a calibration run of the same workload (the event sequence is
 * deterministic).
 * eadr: 200 SIGKILLs at a random moment; the same pool carries on from
 * crash to crash.
 * After each crash the parent recovers as after a restart (fresh DRAM arena
 * and epoch domain, nbt_rebuild with allocator recovery), verifies, runs
 * OPS_AFTER more operations on the recovered tree and verifies again.
 *
 * Workloads and crash points are seeded; PM_TEST_SEED=n runs other ones.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness_crash.h"
#include "nbt_harness.h"
#include "nbt_internal.h"
#include "nbt_wide_shim.h"

#define KEYS			256
#define RESTS			48
#define NID				(KEYS * RESTS)
#define LIVE_MAX		(NID * 3 / 4)
#define PHASE			150			/* ops per growth, shrink or emptying phase */
#define EMPTY_BEHIND	400			/* emptying: compactions this many ids behind the cursor */
#define MAX_POOL		(UINT64_C(16) << 20)
#define ARENA_SIZE		(32u << 20)
#define DOM_SLOTS		4
#define DOM_LIMBO		1024
#define BASE_OPS		20000		/* the prepared pool */
#define ADR_OPS			1500		/* per crash child */
#define ADR_POINTS		1000
#define ADR_SEEDS		25
#define EADR_KILLS		200
#define OPS_AFTER		300			/* on the recovered tree */
#define FREE_SLOTS		12			/* leaf blocks left free in the base pool */
#define MAX_REPORT		5
#define BATCH_ONE_IN	8			/* inserts that are a batch */
#define BATCH_MAX		40			/* entries of a batch at most */

typedef enum op_kind
{
	OP_INSERT,
	OP_DELETE,
	OP_COMPACT,
	OP_BATCH
} op_kind;

typedef struct op
{
	op_kind		kind;
	int			id;				/* key index * RESTS + rest index; a batch's first */
	int			n;				/* a batch: its ids, ascending, and which were absent */
	int			ids[BATCH_MAX];
	uint8_t		fresh[BATCH_MAX];
} op;

/* The workload generator: deterministic given its seed and reference set. */
typedef struct gen
{
	uint64_t	seed;
	uint64_t	n;				/* operations generated */
	uint8_t		ref[NID];
	int			live;
	int			cursor;			/* where the emptying phase deletes next */
} gen;

/*
 * Calibration, shared with the crash children (MAP_SHARED, mapped before
 * any fork): per operation, the event count after it and its SMOs
 * (crash_rep has what every child reports).
 */
typedef struct progress
{
	uint64_t	events_after[ADR_OPS];
	uint64_t	splits_after[ADR_OPS];
	uint64_t	compactions_after[ADR_OPS];
	uint64_t	merges_after[ADR_OPS];
	uint64_t	chunks_after[ADR_OPS];	/* allocator chunks in use + pool size */
	uint8_t		batch[ADR_OPS];	/* the op was a batch insert */
} progress;

/* A process's tree over a pool, with its own DRAM arena and epoch domain. */
typedef struct env
{
	pm_pool    *pool;
	void	   *arena;
	pm_epoch_domain *dom;
	pm_alloc	dram;
	pm_epoch_handle ep;
	nbt_tree	t;
	uint64_t	blocks_before;	/* allocated PM blocks at open, before any recovery */
	uint64_t	reachable;		/* set by verify_alloc */
} env;

static progress *P;
static uint64_t test_seed;		/* PM_TEST_SEED: explore other workloads and crash points */
static uint64_t leaked_total;	/* allocated-but-unreachable blocks freed by recovery */
static char base_path[600];
static char work_path[600];
static char image_path[600];

static nbt_skey
skey_of(int id)
{
	int			k = id / RESTS;
	int			r = id % RESTS;
	nbt_skey	sk;

	sk.key = k == KEYS - 1 ? UINT64_MAX : (uint64_t) k * 7919;
	sk.rest = r == RESTS - 1 ? NBT_REST_MAX : (uint64_t) r + 1;
	return sk;
}

static int
id_of(const nbt_skey *sk)
{
	int			k;
	int			r;

	if (sk->key == UINT64_MAX)
		k = KEYS - 1;
	else if (sk->key % 7919 == 0 && sk->key / 7919 < KEYS - 1)
		k = (int) (sk->key / 7919);
	else
		return -1;
	if (sk->rest == NBT_REST_MAX)
		r = RESTS - 1;
	else if (sk->rest >= 1 && sk->rest < RESTS)
		r = (int) sk->rest - 1;
	else
		return -1;
	return k * RESTS + r;
}

/*
 * Next operation; the reference is updated as if it succeeded.  Phases of
 * PHASE ops rotate: growth (mostly inserts: leaves fill and split),
 * shrinking (mostly deletes and compactions of the leaves they empty) and
 * emptying (deletes from a cursor that moves through the ids, compactions
 * just behind it, inserts anywhere: emptied neighbours merge).
 */
static op
gen_next(gen *g)
{
	uint64_t	x = xorshift(&g->seed);
	int			id = (int) ((x >> 8) % NID);
	int			what = (int) ((x >> 40) % 100);
	int			phase = (int) ((g->n++ / PHASE) % 3);
	bool		emptying = phase == 2;
	bool		insert;
	op			o;

	o.id = id;
	if (what < (phase == 0 ? 6 : 20))
	{
		if (emptying)
			o.id = (g->cursor + NID - (int) ((x >> 8) % EMPTY_BEHIND)) % NID;
		o.kind = OP_COMPACT;
		return o;
	}
	if (emptying)
		insert = what >= 65;
	else
		insert = g->live < LIVE_MAX && what < (phase == 0 ? 85 : 45);
	if (insert && (x >> 16) % BATCH_ONE_IN == 0 && g->live + BATCH_MAX <= LIVE_MAX)
	{
		/* a batch: ascending ids from id, gaps of 0..3, so some are present already */
		int			want = 1 + (int) ((x >> 24) % BATCH_MAX);

		o.kind = OP_BATCH;
		o.n = 0;
		for (; o.n < want && id < NID; id += (int) (xorshift(&g->seed) % 4))
		{
			o.ids[o.n] = id;
			o.fresh[o.n] = !g->ref[id];
			if (!g->ref[id])
				g->live++;
			g->ref[id] = 1;
			o.n++;
		}
		return o;
	}
	if (g->live == 0 || insert)
	{
		while (g->ref[id])
			id = (id + 1) % NID;
		o.kind = OP_INSERT;
		g->ref[id] = 1;
		g->live++;
	}
	else
	{
		if (emptying)
			id = g->cursor;
		while (!g->ref[id])
			id = (id + 1) % NID;
		o.kind = OP_DELETE;
		g->ref[id] = 0;
		g->live--;
		if (emptying)
			g->cursor = (id + 1) % NID;
	}
	o.id = id;
	return o;
}

static void
env_free(void *ctx, uint32_t space, uint32_t tag, uint64_t off)
{
	env		   *e = ctx;

	(void) tag;
	harness_free_to(&e->t.pm, &e->dram, space, off);
}

/* Memory for the DRAM tier of one process (reused: formatted at each use). */
static void
env_map(env *e)
{
	e->arena = mmap(NULL, ARENA_SIZE, PROT_READ | PROT_WRITE,
					MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (e->arena == MAP_FAILED)
	{
		perror("mmap");
		exit(2);
	}
	e->dom = harness_domain_sized(false, DOM_SLOTS, DOM_LIMBO);
}

/*
 * Open a pool as after a restart: fresh DRAM arena and epoch domain, then
 * rebuild the DRAM layer (recovering the allocator if asked).
 */
static const char *
env_open(env *e, const char *path, pm_mode mode, bool recover)
{
	static char why[400];
	pm_error	err;

	if (pm_pool_open(path, mode, &e->pool, &err) != PM_OK)
	{
		snprintf(why, sizeof(why), "open: %s", err.msg);
		return why;
	}
	pm_arena_format(e->arena, ARENA_SIZE);
	pm_alloc_attach_arena(&e->dram, e->arena, "crash test DRAM arena");
	pm_epoch_domain_init(e->dom, DOM_SLOTS, DOM_LIMBO);
	if (pm_epoch_register(e->dom, 1, -1, env_free, e, harness_always_alive, &e->ep, &err) != PM_OK)
	{
		snprintf(why, sizeof(why), "epoch register: %s", err.msg);
		pm_pool_close(e->pool);
		return why;
	}
	nbt_attach(&e->t, e->pool, &e->dram, &e->ep, SPACE_PM, 0, SPACE_DRAM, 0);
	{
		pm_alloc_stats st;

		pm_alloc_get_stats(&e->t.pm, &st);
		e->blocks_before = st.blocks;
	}
	if (nbt_rebuild(&e->t, recover, &err) != PM_OK)
	{
		snprintf(why, sizeof(why), "rebuild: %s", err.msg);
		pm_pool_close(e->pool);
		return why;
	}
	return NULL;
}

static void
env_close(env *e)
{
	pm_epoch_drain(&e->ep);
	pm_pool_close(e->pool);
	e->pool = NULL;
}

/* Apply one operation; checks what delete reports against the reference. */
static const char *
apply(env *e, op o, bool expect_found)
{
	static char why[400];
	nbt_skey	sk = skey_of(o.id);
	pm_error	err;
	bool		flag;

	switch (o.kind)
	{
		case OP_INSERT:
			if (nbt_insert(&e->t, &sk, &err) != PM_OK)
			{
				snprintf(why, sizeof(why), "insert %d: %s", o.id, err.msg);
				return why;
			}
			break;
		case OP_DELETE:
			if (nbt_delete(&e->t, &sk, &flag, &err) != PM_OK)
			{
				snprintf(why, sizeof(why), "delete %d: %s", o.id, err.msg);
				return why;
			}
			if (flag != expect_found)
			{
				snprintf(why, sizeof(why), "delete %d: found=%d, the reference says %d", o.id,
						 flag, expect_found);
				return why;
			}
			break;
		case OP_BATCH:
			{
				nbt_skey	sks[BATCH_MAX];
				int			done = -1;

				for (int i = 0; i < o.n; i++)
					sks[i] = skey_of(o.ids[i]);
				if (nbt_insert_sorted(&e->t, sks, o.n, &done, &err) != PM_OK || done != o.n)
				{
					snprintf(why, sizeof(why), "batch of %d from %d: %d done: %s", o.n, o.id,
							 done, done == o.n ? "no error" : err.msg);
					return why;
				}
			}
			break;
		case OP_COMPACT:
			if (nbt_compact_leaf(&e->t, &sk, &flag, &err) != PM_OK)
			{
				snprintf(why, sizeof(why), "compact %d: %s", o.id, err.msg);
				return why;
			}
			break;
	}
	return NULL;
}


/* ---------- verification ---------- */

static int
u64_cmp(const void *a, const void *b)
{
	uint64_t	x = *(const uint64_t *) a,
				y = *(const uint64_t *) b;

	return x < y ? -1 : x > y;
}

typedef struct block_list
{
	uint64_t   *off;
	size_t		n;
	size_t		cap;
} block_list;

static void
collect_block(void *ctx, uint64_t off, size_t size)
{
	block_list *bl = ctx;

	(void) size;
	if (bl->n < bl->cap)
		bl->off[bl->n] = off;
	bl->n++;
}

/*
 * The allocator holds exactly the meta block, the leaf blocks the tree
 * reaches (the meta block's list) and the spare block the DRAM
 * layer keeps for rewrites in a full pool: counts and offsets.
 */
static const char *
verify_alloc(env *e)
{
	static char why[400];
	pm_alloc_stats st;
	block_list	reach = {0};
	block_list	alloc = {0};
	nbt_pm_meta *meta = nbt_meta(&e->t);
	uint64_t	spare = nbt_droot_at(&e->t)->spare_kv;
	const char *res = NULL;

	reach.cap = 2;
	for (uint64_t off = meta->head; off != 0; off = nbt_kv_at(&e->t, off)->next)
		reach.cap += 2 + NBT_LEAF_CAP;
	reach.off = malloc(sizeof(uint64_t) * reach.cap);
	reach.off[reach.n++] = pm_pool_root(e->pool, 0);
	if (spare != 0)
		reach.off[reach.n++] = spare;
	for (uint64_t off = meta->head; off != 0; off = nbt_kv_at(&e->t, off)->next)
	{
		reach.off[reach.n++] = off;
		reach.n += (size_t) harness_kv_records(nbt_kv_at(&e->t, off), reach.off + reach.n);
	}
	qsort(reach.off, reach.n, sizeof(uint64_t), u64_cmp);

	e->reachable = reach.n;
	pm_alloc_get_stats(&e->t.pm, &st);
	alloc.cap = st.blocks + reach.n + 16;
	alloc.off = malloc(sizeof(uint64_t) * alloc.cap);
	pm_alloc_foreach(&e->t.pm, collect_block, &alloc);

	if (st.blocks != reach.n)
	{
		snprintf(why, sizeof(why), "allocator counts %llu blocks, the tree reaches %zu (meta + leaves + records + spare)",
				 (unsigned long long) st.blocks, reach.n);
		res = why;
	}
	else if (alloc.n != reach.n)
	{
		snprintf(why, sizeof(why), "allocator bitmaps hold %zu blocks, the tree reaches %zu",
				 alloc.n, reach.n);
		res = why;
	}
	else
	{
		qsort(alloc.off, alloc.n, sizeof(uint64_t), u64_cmp);
		for (size_t i = 0; i < reach.n; i++)
		{
			if (alloc.off[i] != reach.off[i])
			{
				snprintf(why, sizeof(why), "block %llu is allocated but not reached, or reached but free",
						 (unsigned long long) (alloc.off[i] < reach.off[i] ? alloc.off[i] : reach.off[i]));
				res = why;
				break;
			}
		}
	}
	free(reach.off);
	free(alloc.off);
	return res;
}

/*
 * Structure and content.  The tree must hold exactly ref, except that the
 * entry of the operation in flight (inflight, if not NULL, an insert or a
 * delete) may or may not be there, and of a batch in flight the entries
 * absent before it may be there if they are a prefix of it.  got[]
 * receives what the tree holds.
 */
static const char *
verify_tree(env *e, const uint8_t *ref, const op *inflight, uint8_t *got)
{
	int			fuzzy_id = inflight != NULL && (inflight->kind == OP_INSERT ||
											  inflight->kind == OP_DELETE) ? inflight->id : -1;
	uint8_t		in_batch[NID] = {0};
	bool		gap = false;
	static char why[400];
	const char *cw;
	uint64_t	entries = 0;
	uint64_t	n = 0;
	nbt_skey	from = PM_KEY_MIN;
	nbt_skey	prev = PM_KEY_MIN;
	nbt_batch	b;

	cw = nbt_check(&e->t, &entries);
	if (cw != NULL)
	{
		snprintf(why, sizeof(why), "nbt_check: %s", cw);
		return why;
	}
	memset(got, 0, NID);
	for (;;)
	{
		nbt_read_leaf(&e->t, &from, false, &b);
		for (int i = 0; i < b.n; i++)
		{
			int			id = id_of(&b.e[i].sk);

			if (id < 0)
			{
				snprintf(why, sizeof(why), "entry (%llu,%llu) was never inserted",
						 (unsigned long long) b.e[i].sk.key, (unsigned long long) b.e[i].sk.rest);
				return why;
			}
			if (n > 0 && pm_key_cmp(&b.e[i].sk, &prev) <= 0)
				return "full read not strictly ascending";
			prev = b.e[i].sk;
			got[id] = 1;
			n++;
		}
		if (pm_key_is_max(&b.high))
			break;
		from = b.high;
	}
	if (n != entries)
	{
		snprintf(why, sizeof(why), "full read returned %llu entries, nbt_check counted %llu",
				 (unsigned long long) n, (unsigned long long) entries);
		return why;
	}
	if (nbt_count_pm(e->pool) != n)
	{
		snprintf(why, sizeof(why), "the PM layer holds %llu live entries, the tree reads %llu",
				 (unsigned long long) nbt_count_pm(e->pool), (unsigned long long) n);
		return why;
	}
	if (inflight != NULL && inflight->kind == OP_BATCH)
	{
		for (int i = 0; i < inflight->n; i++)
		{
			int			id = inflight->ids[i];

			if (!inflight->fresh[i])
				continue;
			in_batch[id] = 1;
			if (got[id] && gap)
			{
				snprintf(why, sizeof(why), "entry %d (%d of the batch in flight) is present, an "
						 "earlier one of the batch is not", id, i);
				return why;
			}
			gap |= !got[id];
		}
	}
	for (int id = 0; id < NID; id++)
	{
		if (got[id] != ref[id] && id != fuzzy_id && !(in_batch[id] && got[id]))
		{
			snprintf(why, sizeof(why), "entry %d (key %d, rest %d) is %s; the reference says %s",
					 id, id / RESTS, id % RESTS, got[id] ? "present" : "absent",
					 ref[id] ? "present" : "absent");
			return why;
		}
	}
	return NULL;
}

/*
 * After a crash: recover, verify against the reference (ops [0, completed)
 * of g applied; op completed in flight), keep working, verify again.  On
 * success *cur is the state the pool holds afterwards.
 */
static const char *
check_after_crash(env *e, const char *path, pm_mode mode, const gen *start, uint64_t completed,
				  uint64_t more_seed, gen *cur, int *inflight_kind, bool *inflight_done)
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
	*inflight_kind = inflight.kind;

	if ((w = env_open(e, path, mode, true)) != NULL)
		return w;
	w = verify_tree(e, cur->ref, &inflight, got);
	if (w == NULL)
		w = verify_alloc(e);
	if (w != NULL)
	{
		snprintf(why, sizeof(why), "after recovery (%llu ops done, op %s %d in flight): %s",
				 (unsigned long long) completed,
				 inflight.kind == OP_INSERT ? "insert" : inflight.kind == OP_DELETE ? "delete" :
				 inflight.kind == OP_BATCH ? "batch from" : "compact",
				 inflight.id, w);
		env_close(e);
		return why;
	}
	if (e->blocks_before > e->reachable)
		leaked_total += e->blocks_before - e->reachable;
	/* the state the pool really holds: the in-flight op did or did not happen */
	*inflight_done = inflight.kind != OP_COMPACT && got[inflight.id] == g.ref[inflight.id];
	for (int i = 0; inflight.kind == OP_BATCH && i < inflight.n; i++)
		*inflight_done &= got[inflight.ids[i]];
	memcpy(cur->ref, got, NID);
	cur->live = 0;
	for (int id = 0; id < NID; id++)
		cur->live += got[id];

	/* the recovered tree keeps working */
	cur->seed = more_seed;
	for (int i = 0; i < OPS_AFTER && w == NULL; i++)
		w = apply(e, gen_next(cur), true);
	pm_epoch_drain(&e->ep);
	if (w == NULL)
		w = verify_tree(e, cur->ref, NULL, got);
	if (w == NULL)
		w = verify_alloc(e);
	env_close(e);
	if (w != NULL)
	{
		snprintf(why, sizeof(why), "after %d more ops on the recovered tree: %s", OPS_AFTER, w);
		return why;
	}
	return NULL;
}

/*
 * Leave the pool's allocator nearly full: FREE_SLOTS free leaf-sized
 * blocks, every chunk assigned.  The runs then take a fresh chunk and grow
 * the pool in the middle of an SMO after a few SMOs.  The filler blocks
 * are unreachable: recovery frees them.
 */
static const char *
fill_allocator(env *e, uint64_t *fillers)
{
	pm_alloc_stats st;
	pm_error	err;
	uint64_t   *dummy = malloc(sizeof(uint64_t) * 4096);
	size_t		n = 0;
	uint64_t	c0;

	pm_alloc_get_stats(&e->t.pm, &st);
	c0 = st.chunks_in_use;
	for (;;)
	{
		uint64_t	off = pm_alloc_block(&e->t.pm, sizeof(nbt_kv), &err);

		if (off == 0 || n == 4096)
		{
			free(dummy);
			return "filling the allocator failed";
		}
		pm_alloc_get_stats(&e->t.pm, &st);
		if (st.chunks_in_use > c0)
		{
			pm_free_block(&e->t.pm, off, &err);	/* hands the fresh chunk back */
			break;
		}
		dummy[n++] = off;
	}
	for (int i = 0; i < FREE_SLOTS && n > 0; i++)
		pm_free_block(&e->t.pm, dummy[--n], &err);
	*fillers = n;
	free(dummy);
	for (;;)
	{
		pm_alloc_get_stats(&e->t.pm, &st);
		if (st.chunks_in_use >= st.chunks)
			return NULL;
		if (pm_alloc_block(&e->t.pm, PM_ALLOC_MAX_BLOCK, &err) == 0)
			return "filling the allocator failed";
		(*fillers)++;
	}
}

/* ---------- the workloads ---------- */

/* A workload child: its tree and its generator. */
typedef struct work
{
	env		   *e;
	gen			g;
	op_kind		last;			/* of the op just applied */
} work;

static const char *
work_open(void *ctx, const char *path, pm_mode mode, pm_pool **pool)
{
	work	   *c = ctx;
	const char *w = env_open(c->e, path, mode, false);

	*pool = c->e->pool;
	return w;
}

static const char *
work_step(void *ctx, uint64_t k)
{
	work	   *c = ctx;

	op			o = gen_next(&c->g);

	(void) k;
	c->last = o.kind;
	return apply(c->e, o, true);
}

/* Calibration (adr): after op k, the events so far and the SMOs. */
static void
work_calibrate(void *ctx, uint64_t k, pm_crashsim *cs)
{
	work	   *c = ctx;
	nbt_stats	st;
	pm_alloc_stats ast;

	nbt_get_stats(&c->e->t, &st);
	P->events_after[k] = pm_crashsim_events(cs);
	P->splits_after[k] = st.smo_splits;
	P->compactions_after[k] = st.smo_compactions;
	P->merges_after[k] = st.smo_merges;
	pm_alloc_get_stats(&c->e->t.pm, &ast);
	P->chunks_after[k] = ast.chunks_in_use + pm_pool_size(c->e->pool);
	P->batch[k] = c->last == OP_BATCH;
}

/*
 * adr child: run ADR_OPS ops of g on a copy of the base pool under crashsim,
 * crashing at event crash_at (0: never; then record the calibration).
 */
static int
run_adr_child(env *e, const gen *g0, uint64_t crash_at, uint64_t iseed, bool calibrate)
{
	work		c = {e, *g0, OP_INSERT};
	crash_workload w = {&c, work_open, work_step, calibrate ? work_calibrate : NULL};

	return crash_run_adr_child(&w, work_path, crash_at, image_path, iseed, ADR_OPS);
}

static void
eadr_workload(void *arg)
{
	work	   *c = arg;
	crash_workload w = {c, work_open, work_step, NULL};
	pm_pool    *pool;
	const char *why;

	if ((why = work_open(c, work_path, PM_MODE_EADR, &pool)) != NULL)
		crash_child_fail(why);
	crash_child_loop(&w, 0, NULL);
}

/* The op index whose events contain event ev in the calibration of a seed. */
static int
op_of_event(const uint64_t *ev_after, uint64_t ev)
{
	int			lo = 0,
				hi = ADR_OPS - 1;

	while (lo < hi)
	{
		int			mid = (lo + hi) / 2;

		if (ev_after[mid] >= ev)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

int
main(void)
{
	char	   *dir = tap_tmpdir("nbt_crash");
	env			e;
	gen			base;
	uint64_t	calib_events[ADR_SEEDS];
	uint64_t   *calib_ev[ADR_SEEDS];
	uint8_t    *calib_smo[ADR_SEEDS];	/* per op: 1 split, 2 compaction, 8 merge; 4 new chunk
										 * or growth */
	int			calib_merges[ADR_SEEDS];	/* ops with a merge */
	uint8_t    *calib_batch[ADR_SEEDS]; /* per op: a batch insert with events */
	int			calib_batches[ADR_SEEDS];
	int			calib_ok = 0;
	int			calib_smos = 0;
	double		t0;

	if (getenv("PM_TEST_SEED"))
		test_seed = strtoull(getenv("PM_TEST_SEED"), NULL, 10);
	tap_plan(8);
	if (test_seed)
		tap_diag("PM_TEST_SEED=%llu", (unsigned long long) test_seed);
	alarm(900);
	P = mmap(NULL, sizeof(progress), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (P == MAP_FAILED)
	{
		perror("mmap");
		return 2;
	}
	crash_report_map();
	env_map(&e);
	snprintf(base_path, sizeof(base_path), "%s/base.pm", dir);
	snprintf(work_path, sizeof(work_path), "%s/work.pm", dir);
	snprintf(image_path, sizeof(image_path), "%s/image.pm", dir);

	/* the base pool: BASE_OPS ops from empty, closed with nothing pending */
	{
		const char *w = NULL;

		pm_pool_close(harness_new_pool(base_path, PM_MODE_ADR, MAX_POOL));
		memset(&base, 0, sizeof(base));
		base.seed = 2024 + test_seed;
		if ((w = env_open(&e, base_path, PM_MODE_ADR, false)) == NULL)
		{
			for (int i = 0; i < BASE_OPS && w == NULL; i++)
				w = apply(&e, gen_next(&base), true);
			pm_epoch_drain(&e.ep);
			if (w == NULL)
			{
				uint8_t		got[NID];

				w = verify_tree(&e, base.ref, NULL, got);
			}
			if (w == NULL)
				w = verify_alloc(&e);
			if (w == NULL)
			{
				nbt_stats	st;
				uint64_t	fillers = 0;

				w = fill_allocator(&e, &fillers);
				nbt_get_stats(&e.t, &st);
				tap_diag("base pool: %d live entries, %llu leaves, height %llu; %llu filler blocks, "
						 "%d leaf blocks free, then the allocator needs a new chunk",
						 base.live, (unsigned long long) st.leaves, (unsigned long long) st.height,
						 (unsigned long long) fillers, FREE_SLOTS);
			}
			env_close(&e);
		}
		tap_ok(w == NULL, "base pool of %d ops builds and verifies%s%s", BASE_OPS,
			   w ? ": " : "", w ? w : "");
	}

	/* calibrate: persistence events of each workload seed, and which ops do SMOs */
	for (int s = 0; s < ADR_SEEDS; s++)
	{
		gen			g = base;
		int			rc;

		g.seed = 100 + (uint64_t) s + test_seed * 1000;
		calib_ev[s] = calloc(ADR_OPS, sizeof(uint64_t));
		calib_smo[s] = calloc(ADR_OPS, 1);
		calib_batch[s] = calloc(ADR_OPS, 1);
		calib_batches[s] = 0;
		copy_file(base_path, work_path);
		rc = run_adr_child(&e, &g, 0, 1, true);
		calib_events[s] = crash_rep->total_events;
		if (rc == 1 && crash_rep->completed == ADR_OPS)
			calib_ok++;
		else if (crash_rep->errors)
			tap_diag("calibration seed %d: %s", s, crash_rep->msg);
		for (int k = 0; k < ADR_OPS; k++)
		{
			calib_ev[s][k] = P->events_after[k];
			calib_smo[s][k] = (P->splits_after[k] != (k ? P->splits_after[k - 1] : 0)) |
				(P->compactions_after[k] != (k ? P->compactions_after[k - 1] : 0)) << 1 |
				(k > 0 && P->chunks_after[k] != P->chunks_after[k - 1]) << 2 |
				(P->merges_after[k] != (k ? P->merges_after[k - 1] : 0)) << 3;
			/* a batch of entries present already has no event to crash at */
			calib_batch[s][k] = P->batch[k] && P->events_after[k] > (k ? P->events_after[k - 1] : 0);
			calib_batches[s] += calib_batch[s][k];
		}
		{
			int			nsmo = 0;
			int			nchunk = 0;
			uint64_t	smo_events = 0;

			calib_merges[s] = 0;
			for (int k = 0; k < ADR_OPS; k++)
			{
				nchunk += (calib_smo[s][k] & 4) != 0;
				calib_merges[s] += (calib_smo[s][k] & 8) != 0;
				if (calib_smo[s][k])
				{
					nsmo++;
					smo_events += calib_ev[s][k] - (k ? calib_ev[s][k - 1] : 0);
				}
			}
			if (s < 3)
				tap_diag("seed %d: %llu persistence events in %d ops; %d ops perform an SMO "
						 "(%llu splits, %llu compactions, %llu merges; %llu of the events); %d "
						 "take a new chunk or grow the pool", s,
						 (unsigned long long) calib_events[s], ADR_OPS, nsmo,
						 (unsigned long long) P->splits_after[ADR_OPS - 1],
						 (unsigned long long) P->compactions_after[ADR_OPS - 1],
						 (unsigned long long) P->merges_after[ADR_OPS - 1],
						 (unsigned long long) smo_events, nchunk);
			calib_smos += nsmo;
		}
	}
	tap_ok(calib_ok == ADR_SEEDS && calib_events[0] > 1000,
		   "%d adr workloads run to completion under crashsim (%llu..%llu events, "
		   "%d ops with an SMO in all)", ADR_SEEDS,
		   (unsigned long long) calib_events[0], (unsigned long long) calib_events[ADR_SEEDS - 1],
		   calib_smos);
	if (calib_ok != ADR_SEEDS)
	{
		tap_rmdir(dir);
		return 1;
	}

	/* adr: simulated power failures */
	t0 = now_sec();
	{
		uint64_t	rng = 12345 + test_seed;
		int			crashed = 0,
					failures = 0,
					in_smo = 0,
					in_split = 0,
					in_chunk = 0,
					in_merge = 0,
					aimed = 0,
					inflight_done = 0,
					inflight_ops = 0,
					in_batch = 0,
					batch_done = 0;

		for (int point = 0; point < ADR_POINTS; point++)
		{
			int			s = point % ADR_SEEDS;
			gen			g = base;
			gen			cur;
			uint64_t	at;
			const char *why;
			int			rc;
			int			kind;
			bool		done = false;
			int			k_chunk;

			g.seed = 100 + (uint64_t) s + test_seed * 1000;
			k_chunk = -1;
			for (int k = 0; k < ADR_OPS && point % 10 == 3; k++)
			{
				if (calib_smo[s][k] & 4)
					k_chunk = k;
			}
			if (k_chunk >= 0)
			{
				/* aimed at the op that takes a new chunk and grows the pool */
				uint64_t	lo = k_chunk ? calib_ev[s][k_chunk - 1] : 0;

				at = lo + 1 + xorshift(&rng) % (calib_ev[s][k_chunk] - lo);
				aimed++;
			}
			else if (point % 10 == 5 && calib_merges[s] > 0)
			{
				/*
				 * aimed at a merge: its last event (the link), the one before (the new
				 * block's drain), or any
				 */
				int			k;
				uint64_t	lo;
				uint64_t	back = xorshift(&rng) % 3;

				do
					k = (int) (xorshift(&rng) % ADR_OPS);
				while (!(calib_smo[s][k] & 8));
				lo = k ? calib_ev[s][k - 1] : 0;
				at = back < 2 && calib_ev[s][k] - back > lo ? calib_ev[s][k] - back :
					lo + 1 + xorshift(&rng) % (calib_ev[s][k] - lo);
				aimed++;
			}
			else if (point % 10 == 7 && calib_batches[s] > 0)
			{
				/* aimed: a random event of a random batch insert */
				int			k;
				uint64_t	lo;

				do
					k = (int) (xorshift(&rng) % ADR_OPS);
				while (!calib_batch[s][k]);
				lo = k ? calib_ev[s][k - 1] : 0;
				at = lo + 1 + xorshift(&rng) % (calib_ev[s][k] - lo);
				aimed++;
			}
			else if (point % 2 == 1)
			{
				/* aimed: a random event of a random op that performs an SMO */
				int			k;

				do
					k = (int) (xorshift(&rng) % ADR_OPS);
				while (!calib_smo[s][k]);
				{
					uint64_t	lo = k ? calib_ev[s][k - 1] : 0;

					at = lo + 1 + xorshift(&rng) % (calib_ev[s][k] - lo);
				}
				aimed++;
			}
			else
				at = 1 + xorshift(&rng) % calib_events[s];

			copy_file(base_path, work_path);
			rc = run_adr_child(&e, &g, at, xorshift(&rng), false);
			if (rc != 0)
			{
				if (failures++ < MAX_REPORT)
					tap_diag("adr point %d (seed %d, event %llu): child exit %d%s%s", point, s,
							 (unsigned long long) at, rc, crash_rep->errors ? ": " : "",
							 crash_rep->errors ? crash_rep->msg : "");
				continue;
			}
			crashed++;
			if (crash_rep->completed < ADR_OPS && calib_smo[s][crash_rep->completed] &&
				op_of_event(calib_ev[s], at) == (int) crash_rep->completed)
			{
				in_smo++;
				in_split += calib_smo[s][crash_rep->completed] & 1;
				in_chunk += (calib_smo[s][crash_rep->completed] & 4) != 0;
				in_merge += (calib_smo[s][crash_rep->completed] & 8) != 0;
			}
			why = check_after_crash(&e, image_path, PM_MODE_ADR, &g, crash_rep->completed, xorshift(&rng),
									&cur, &kind, &done);
			if (kind != OP_COMPACT)
			{
				inflight_ops++;
				inflight_done += done;
			}
			if (kind == OP_BATCH)
			{
				in_batch++;
				batch_done += done;
			}
			if (why && failures++ < MAX_REPORT)
				tap_diag("adr point %d (seed %d, event %llu, image seed in run): %s", point, s,
						 (unsigned long long) at, why);
		}
		tap_diag("adr: %d crash points in %.1f s; %d inside an operation that performs an SMO "
				 "(%d of them a split, %d a merge, %d taking a new chunk or growing the pool; %d "
				 "points aimed at SMOs or growth); the insert or delete in flight had taken effect "
				 "in %d of %d",
				 ADR_POINTS, now_sec() - t0, in_smo, in_split, in_merge, in_chunk, aimed,
				 inflight_done, inflight_ops);
		tap_diag("adr: %d crash points in a batch insert, %d of them after all of it was durable",
				 in_batch, batch_done);
		tap_ok(crashed == ADR_POINTS, "%d of %d adr crash points crashed as planned",
			   crashed, ADR_POINTS);
		tap_ok(failures == 0,
			   "adr: after every crash, recovery checks, holds exactly the acknowledged entries, "
			   "leaks no block, and keeps working (%d failures)", failures);
		tap_ok(in_smo >= ADR_POINTS / 3 && in_merge >= ADR_POINTS / 20 && in_batch >= ADR_POINTS / 20,
			   "adr: %d crash points landed inside an SMO, %d inside a merge, %d inside a batch "
			   "insert", in_smo, in_merge, in_batch);
	}
	for (int s = 0; s < ADR_SEEDS; s++)
	{
		free(calib_ev[s]);
		free(calib_smo[s]);
		free(calib_batch[s]);
	}

	/* eadr: SIGKILL at a random moment; the pool carries on */
	t0 = now_sec();
	{
		uint64_t	rng = 777 + test_seed;
		int			killed = 0,
					efail = 0,
					in_ops = 0;
		uint64_t	ops_total = 0;
		gen			state = base;
		work		c;

		leaked_total = 0;
		copy_file(base_path, work_path);
		for (int k = 0; k < EADR_KILLS; k++)
		{
			unsigned	delay = 3000 + (unsigned) (xorshift(&rng) % 20000);
			const char *why;
			gen			cur;
			int			kind;
			bool		done;

			c.e = &e;
			c.g = state;
			c.g.seed = xorshift(&rng);
			crash_report_reset();
			killed += pm_crash_fork_kill(eadr_workload, &c, delay);
			if (crash_rep->errors)
			{
				if (efail++ < MAX_REPORT)
					tap_diag("eadr kill %d: the workload failed: %s", k, crash_rep->msg);
				break;
			}
			in_ops += crash_rep->started && crash_rep->completed > 0;
			ops_total += crash_rep->completed;
			why = check_after_crash(&e, work_path, PM_MODE_EADR, &c.g, crash_rep->completed, xorshift(&rng),
									&cur, &kind, &done);
			if (why)
			{
				if (efail++ < MAX_REPORT)
					tap_diag("eadr kill %d (%llu ops done): %s", k,
							 (unsigned long long) crash_rep->completed, why);
				break;			/* the pool is in an unknown state */
			}
			state = cur;
		}
		tap_diag("eadr: %d kills in %.1f s, %d inside the workload loop, %llu ops acknowledged; "
				 "recovery freed %llu allocated-but-unreachable blocks (base fillers included)",
				 EADR_KILLS, now_sec() - t0, in_ops, (unsigned long long) ops_total,
				 (unsigned long long) leaked_total);
		tap_ok(killed == EADR_KILLS, "%d of %d eadr workload processes were killed mid-run",
			   killed, EADR_KILLS);
		tap_ok(efail == 0,
			   "eadr: after every kill, recovery checks, holds exactly the acknowledged entries, "
			   "leaks no block, and keeps working (%d failures)", efail);
		tap_ok(in_ops >= EADR_KILLS / 2, "eadr: %d of %d kills landed in the workload loop",
			   in_ops, EADR_KILLS);
	}

	tap_rmdir(dir);
	return tap_done();
}
