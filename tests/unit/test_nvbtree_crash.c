/*
 * test_nvbtree_crash.c
 *	  The NVB-tree survives crashes anywhere, structure modifications
 *	  included: after a restart (a fresh DRAM tier and epoch domain,
 *	  nvb_attach and nvb_open, which rebuilds the allocator from the
 *	  mapping table) the tree checks, every acknowledged insert is there,
 *	  every acknowledged delete is not, nothing else changed (the one
 *	  operation in flight may or may not have happened), every mapping-table
 *	  word names a node of its id that the allocator holds, the allocator
 *	  holds nothing else, and the tree keeps working: more inserts and
 *	  deletes, each finding exactly what the recovered contents say, then a
 *	  clean check again.
 *
 * The workloads are deterministic sequences of inserts, deletes and leaf
 * tidies (nvb_tidy_leaf: merges and rewrites) generated from a seed and the reference set
 * (gen_next), so the parent can replay them; phases of growth, churn and
 * shrinking follow each other in a window of keys that moves, so leaves
 * fill, split, are rewritten when full of dead slots (a full leaf at most
 * three quarters live, or a two-child delete's full leaf) or by the tidy,
 * and deletes meet slots with two children.  They run on three base pools:
 *   small: one leaf of SMALL_BASE entries (fewer in a wide tree, whose
 *          leaf holds fewer), which splits early on, so that the root grows
 *          from a leaf to an inner node;
 *   big:   182 leaves of 221 entries (bulk loaded) under one inner root of
 *          181 separators, two short of full: the third split of the run
 *          splits the root and grows the tree to three levels;
 *   seg:   big, with node ids handed out up to two short of the end of the
 *          mapping table's first segment: the run's second split makes
 *          segment 1 and maps a node in it;
 *   sparse: big, with five of every six entries deleted: leaves of a sixth
 *          of their entries, which the workload's tidies merge.
 *
 * adr: ADR_POINTS simulated power failures (crashsim.c: per cache line the
 * durable, flushed or current content, chosen by a seed) at a persistence
 * event of one of ADR_SEEDS workloads.  A calibration run of each
 * workload records, per operation, its persistence events and what it did
 * (a split, a rewrite, a two-child delete, a root growth, a new table
 * segment, a merge); crash points are then aimed in turn at a random event,
 * at events of operations of each kind, and at the last events of a split
 * (its table stores and the parent's new separator) and of a merge (the
 * parent's separator removed, the two table stores).  The event sequence
 * is deterministic (each process's allocator starts at the same chunk).
 *
 * eadr: EADR_KILLS SIGKILLs of a workload process, in series of
 * SERIES_KILLS on one pool that carries on from kill to kill (each series
 * from a fresh copy of the small, the big or the sparse base, in turn): the
 * first at a split's pause point (pm_smo_pause_hook, "nvbtree_pm split":
 * the right half mapped, the left half not yet committed), so that the
 * restart finds a mapped right half that no node names, or, on the sparse
 * base, at a merge's ("nvbtree_pm merge": the parent's separator removed,
 * nothing remapped), so that it finds the right leaf reached from the left
 * one only; the others at a random moment.
 *
 * Workloads and crash points are seeded; PM_TEST_SEED=n runs other ones.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness_crash.h"
#include "nvb_harness.h"
#include "nvb_internal.h"

#include <signal.h>

#define RESTS			4			/* entries per key; rests 1 and 2 are bulk loaded */
#define BIG_KEYS		20111		/* big: 40,222 loaded entries, 182 leaves of 221 */
#define NID				(BIG_KEYS * RESTS)
#define LOAD_FILL		99			/* 221 of 224 leaf slots; 182 children per inner node */
#define SMALL_IDS		2000		/* small: the workload's ids */
#define SMALL_BASE		(NVB_TEST_KIND ? 50 : 200)	/* small: entries of its one leaf */
#define ID_BURN_TO		(NVB_SEG_IDS - 2)	/* seg: the next id to hand out */
#define MAX_POOL		(UINT64_C(16) << 20)
#define ARENA_SIZE		(4u << 20)
#define DOM_SLOTS		4
#define DOM_LIMBO		1024
#define PHASE			120			/* ops per growth, churn or shrink phase */
#define WINDOW			800			/* ids a phase's operations touch */
#define WIN_MOVE		100			/* ops before the window moves */
#define TIDY_PCT		6
#define ADR_SEEDS		24
#define ADR_POINTS		1500
#define ADR_OPS			500			/* per crash child */
#define EADR_SERIES		100
#define SERIES_KILLS	3			/* the first at a split or a merge, the others at random */
#define EADR_KILLS		(EADR_SERIES * SERIES_KILLS)
#define HOOK_WAIT_SEC	5.0			/* a child not killed at its pause by then is killed anyway */
#define OPS_AFTER		200			/* on the recovered tree */
#define MAX_REPORT		5

/* what an operation did (calibration) */
#define F_SPLIT			1
#define F_REWRITE		2
#define F_TWO_CHILD		4
#define F_GROW			8
#define F_SEGMENT		16
#define F_MERGE			32
#define NFLAGS			6

typedef enum base_kind
{
	BASE_SMALL,
	BASE_BIG,
	BASE_SEG,
	BASE_SPARSE,
	NBASES
} base_kind;

static const char *const base_name[NBASES] = {"small", "big", "seg", "sparse"};

typedef enum op_kind
{
	OP_INSERT,
	OP_DELETE,
	OP_TIDY
} op_kind;

typedef struct op
{
	op_kind		kind;
	int			id;				/* the entry; a tidy: the entry whose leaf it rewrites */
} op;

/*
 * The workload generator: deterministic given its state.  Its operations
 * take the ids [lo, lo + span); inserts always add an absent entry and
 * deletes remove a present one, so an operation's expected effect (and a
 * delete's "found") is known.
 */
typedef struct gen
{
	uint64_t	rng;
	uint64_t	n;				/* operations generated */
	int			lo;
	int			span;
	int			live;
	uint8_t		ref[NID];
} gen;

/*
 * Calibration, shared with the crash children (MAP_SHARED, mapped before
 * any fork): per operation, the event count after it and what it did.
 */
/* What calibration compares before and after each operation. */
typedef struct smo_counts
{
	uint64_t	splits;
	uint64_t	rewrites;
	uint64_t	merges;
	uint64_t	segments;
	int			height;
} smo_counts;

typedef struct progress
{
	uint64_t	events_after[ADR_OPS];
	uint8_t		did[ADR_OPS];
	smo_counts	before;			/* the counters before the next operation */
} progress;

/* A process's tree over a pool, with its own DRAM tier and epoch domain. */
typedef struct env
{
	pm_pool    *pool;
	void	   *arena;
	pm_epoch_domain *dom;
	pm_alloc	dram;
	pm_epoch_handle ep;
	nvb_tree	t;
} env;

/* What verifications found, over all crashes. */
typedef struct vstats
{
	uint64_t	orphans;		/* mapped nodes no level reaches (a split's uncommitted right
								 * half, a merge's right leaf before its table word is cleared) */
	int			with_orphan;	/* crashes after which there was a new one */
	int			with_dup;		/* crashes after which a leaf held a key twice */
	int			inflight_done;	/* the insert or delete in flight had taken effect */
	int			inflight_ops;
} vstats;

static progress *P;
static uint64_t test_seed;
static char base_path[NBASES][600];
static char work_path[600];
static char image_path[600];
static gen	base_gen[NBASES];

/* ---------- entries ---------- */

static nvb_key
key_of(int id)
{
	return (nvb_key) {(uint64_t) (id / RESTS + 1) * 1000, (uint64_t) (id % RESTS) + 1};
}

/* The id of an entry, or -1 if no workload makes it. */
static int
id_of(const nvb_key *k)
{
	if (k->key == 0 || k->key % 1000 != 0 || k->key / 1000 > BIG_KEYS ||
		k->rest < 1 || k->rest > RESTS)
		return -1;
	return (int) (k->key / 1000 - 1) * RESTS + (int) k->rest - 1;
}

static op
gen_apply(gen *g, op o)
{
	if (o.kind == OP_INSERT)
	{
		g->live += !g->ref[o.id];
		g->ref[o.id] = 1;
	}
	else if (o.kind == OP_DELETE)
	{
		g->live -= g->ref[o.id];
		g->ref[o.id] = 0;
	}
	return o;
}

/*
 * Operation n: a phase (growth: 75% of the changes are inserts; churn: 50%;
 * shrink: 25%) in a window of WINDOW ids that moves every WIN_MOVE
 * operations; an insert takes the first absent id of the window from a
 * random one on, a delete the first present one (each becomes the other
 * kind if the window has none).
 */
static op
gen_next(gen *g)
{
	uint64_t	r = xorshift(&g->rng);
	int			phase = (int) (g->n / PHASE % 3);
	int			width = g->span < WINDOW ? g->span : WINDOW;
	int			start = g->lo + (int) (g->n / WIN_MOVE * 7919 % (uint64_t) (g->span - width + 1));
	int			at = (int) ((r >> 16) % (uint64_t) width);
	int			p = (int) (r % 100);
	int			insert_pct = phase == 0 ? 75 : phase == 1 ? 50 : 25;
	op			o;

	g->n++;
	if (p < TIDY_PCT)
		return (op) {OP_TIDY, start + at};
	o.kind = (p - TIDY_PCT) * 100 < insert_pct * (100 - TIDY_PCT) ? OP_INSERT : OP_DELETE;
	for (int pass = 0; pass < 2; pass++)
	{
		for (int i = 0; i < width; i++)
		{
			int			id = start + (at + i) % width;

			if ((o.kind == OP_INSERT) == !g->ref[id])
			{
				o.id = id;
				return gen_apply(g, o);
			}
		}
		o.kind = o.kind == OP_INSERT ? OP_DELETE : OP_INSERT;
	}
	return (op) {OP_TIDY, start + at};	/* not reached: a window has ids */
}

/* ---------- a process's tree ---------- */

static void
env_free(void *ctx, uint32_t space, uint32_t tag, uint64_t off)
{
	env		   *e = ctx;
	pm_error	err;

	(void) space;
	(void) tag;
	pm_free_block(&e->t.pm, off, &err);
}

/* The DRAM tier and the epoch domain: shared, mapped once before any fork. */
static void
env_map(env *e)
{
	e->arena = mmap(NULL, ARENA_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	e->dom = mmap(NULL, pm_epoch_domain_size(DOM_SLOTS, DOM_LIMBO), PROT_READ | PROT_WRITE,
				  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (e->arena == MAP_FAILED || e->dom == MAP_FAILED)
	{
		perror("mmap");
		exit(2);
	}
}

/*
 * Open the pool at path as a restart does: a fresh DRAM tier and epoch
 * domain, nvb_attach and nvb_open.  The allocator starts at the same chunk
 * in every process (its seed is the pid's otherwise), so that a workload's
 * persistence events are the same in its calibration and its crash runs.
 */
static const char *
env_open(env *e, const char *path, pm_mode mode)
{
	static char why[400];
	pm_error	err;

	if (pm_pool_open(path, mode, &e->pool, &err) != PM_OK)
	{
		snprintf(why, sizeof(why), "pool open: %s", err.msg);
		return why;
	}
	pm_arena_format(e->arena, ARENA_SIZE);
	pm_alloc_attach_arena(&e->dram, e->arena, "crash test DRAM tier");
	pm_epoch_domain_init(e->dom, DOM_SLOTS, DOM_LIMBO);
	if (pm_epoch_register(e->dom, (uint64_t) getpid(), -1, env_free, e, harness_always_alive,
						  &e->ep, &err) != PM_OK)
	{
		snprintf(why, sizeof(why), "epoch register: %s", err.msg);
		pm_pool_close(e->pool);
		return why;
	}
	nvb_attach(&e->t, e->pool, &e->dram, &e->ep, SPACE_PM, 0, 0);
	e->t.pm.seed = UINT32_C(0x9e3779b9);
	if (nvb_open(&e->t, &err) != PM_OK)
	{
		snprintf(why, sizeof(why), "nvb_open: %s", err.msg);
		pm_epoch_unregister(&e->ep);
		pm_pool_close(e->pool);
		return why;
	}
	return NULL;
}

static void
env_close(env *e)
{
	pm_epoch_drain(&e->ep);
	pm_epoch_unregister(&e->ep);
	nvb_release_dram(&e->t);
	pm_pool_close(e->pool);
	e->pool = NULL;
}

/* Run o; a delete must find its entry (the generator deletes present ones only). */
static const char *
apply(env *e, op o)
{
	static char why[400];
	nvb_key		k = key_of(o.id);
	pm_error	err;
	pm_errcode	rc;
	bool		b = true;

	if (o.kind == OP_INSERT)
		rc = nvb_insert(&e->t, &k, &err);
	else if (o.kind == OP_DELETE)
		rc = nvb_delete(&e->t, &k, &b, &err);
	else
		rc = nvb_tidy_leaf(&e->t, &k, &b, &err);
	if (rc != PM_OK)
	{
		snprintf(why, sizeof(why), "%s of %d: %s", o.kind == OP_INSERT ? "insert" :
				 o.kind == OP_DELETE ? "delete" : "tidy", o.id, err.msg);
		return why;
	}
	if (o.kind == OP_DELETE && !b)
	{
		snprintf(why, sizeof(why), "delete of %d did not find the entry", o.id);
		return why;
	}
	return NULL;
}

/* Would deleting id bypass a slot with two children (a copy of its successor)? */
static bool
two_child(env *e, int id)
{
	wide_buf	buf;
	nvb_key		k = nvb_test_key(&e->t, key_of(id), &buf);
	uint32_t	nid;
	nvb_node   *n;
	uint64_t	off;
	nvb_pos		pos;
	pm_error	err;
	bool		two;

	if (nvb_lock_covering(&e->t, &k, 0, &nid, &n, &off, NULL, &err) != PM_OK)
		return false;
	two = nvb_node_find(&e->t, n, &k, &pos) == 1 && *nvb_link(n, pos.slot, 0) != NVB_NONE &&
		*nvb_link(n, pos.slot, 1) != NVB_NONE;
	nvb_unlock(&e->t, nid);
	return two;
}

static void
counters(env *e, smo_counts *c)
{
	nvb_meta   *m = nvb_meta_of(&e->t);
	nvb_locks  *l = nvb_locks_of(&e->t);
	uint32_t	root = (uint32_t) pm_load(&m->root);

	c->splits = pm_load(&l->splits);
	c->rewrites = pm_load(&l->compactions);
	c->merges = pm_load(&l->merges);
	c->height = nvb_node_get(&e->t, root, NULL)->level + 1;
	c->segments = (pm_load(&m->next_id) + NVB_SEG_IDS - 1) / NVB_SEG_IDS;
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

static bool
allocated(const block_list *bl, uint64_t off)
{
	return bsearch(&off, bl->off, bl->n, sizeof(uint64_t), u64_cmp) != NULL;
}

/*
 * The mapping table against the nodes and the allocator: every word of an
 * id handed out is 0 or names a block the allocator holds whose node
 * validates as that id, the directory's segments are allocated, and the
 * allocator holds exactly those, the meta block and the spare.  *mapped
 * gets the ids mapped.
 */
static const char *
verify_table(env *e, uint64_t *mapped)
{
	static char why[400];
	nvb_meta   *m = nvb_meta_of(&e->t);
	uint64_t	next = pm_load(&m->next_id);
	uint64_t	spare = pm_load(&m->spare);
	pm_alloc_stats st;
	block_list	bl = {0};
	uint64_t	expect = 1 + (spare != 0);
	const char *res = NULL;

	*mapped = 0;
	pm_alloc_get_stats(&e->t.pm, &st);
	bl.cap = st.blocks + 16;
	bl.off = malloc(sizeof(uint64_t) * bl.cap);
	pm_alloc_foreach(&e->t.pm, collect_block, &bl);
	if (bl.n > bl.cap)
	{
		free(bl.off);
		return "the allocator's bitmaps hold more blocks than its counts";
	}
	qsort(bl.off, bl.n, sizeof(uint64_t), u64_cmp);
	if (!allocated(&bl, pm_pool_root(e->pool, 0)) || (spare != 0 && !allocated(&bl, spare)))
		res = "the meta block or the spare block is not allocated";
	for (uint64_t s = 0; res == NULL && s * NVB_SEG_IDS < next; s++)
	{
		uint64_t	seg = pm_load(&m->dir[s]);

		if (seg == 0)
			continue;
		expect++;
		if (!allocated(&bl, seg))
		{
			snprintf(why, sizeof(why), "mapping-table segment %llu is not allocated",
					 (unsigned long long) s);
			res = why;
		}
		for (uint64_t i = 0; res == NULL && i < NVB_SEG_IDS && s * NVB_SEG_IDS + i < next; i++)
		{
			uint32_t	id = (uint32_t) (s * NVB_SEG_IDS + i);
			uint64_t	w = ((uint64_t *) pm_pool_addr(e->pool, seg))[i];
			uint64_t	off;
			nvb_node   *n;

			if (w == 0)
				continue;
			n = nvb_node_get(&e->t, id, &off);
			if (!nvb_node_ok(&e->t, n, id, -1) || off != w || !allocated(&bl, w))
			{
				snprintf(why, sizeof(why), "the table word of id %u names block %llu, "
						 "which is not an allocated node of that id", id, (unsigned long long) w);
				res = why;
			}
			(*mapped)++;
			expect++;
		}
	}
	if (res == NULL && bl.n != expect)
	{
		snprintf(why, sizeof(why), "the allocator holds %zu blocks; the meta block, the spare, "
				 "the table's segments and the nodes it maps are %llu", bl.n,
				 (unsigned long long) expect);
		res = why;
	}
	free(bl.off);
	return res;
}

/* Keys a leaf's walk meets twice (a two-child delete cut between its commit and its bypass). */
static int
leaf_dups(env *e, nvb_node *n)
{
	int			stack[NVB_CAP_MAX + 1];
	int			depth = 0;
	int			s = n->root;
	int			dups = 0;
	nvb_key		last = PM_KEY_MIN;

	for (int steps = 0; steps < 4 * NVB_CAP_MAX && (s != NVB_NONE || depth > 0); steps++)
	{
		if (s != NVB_NONE && depth < NVB_CAP_MAX)
		{
			stack[depth++] = s;
			s = *nvb_link(n, s, 0);
			continue;
		}
		s = stack[--depth];
		dups += nvb_cmp(&e->t, &nvb_keys(n)[s], &last) == 0;
		last = nvb_keys(n)[s];
		s = *nvb_link(n, s, 1);
	}
	return dups;
}

/* Duplicated keys over all leaves (nvb_check has checked the structure). */
static int
tree_dups(env *e)
{
	nvb_meta   *m = nvb_meta_of(&e->t);
	uint32_t	id = (uint32_t) pm_load(&m->root);
	nvb_node   *n = nvb_node_get(&e->t, id, NULL);
	int			dups = 0;

	while (n->level > 0)
		n = nvb_node_get(&e->t, n->leftmost, NULL);
	for (;;)
	{
		dups += leaf_dups(e, n);
		if (n->sibling == NVB_NO_ID)
			return dups;
		n = nvb_node_get(&e->t, n->sibling, NULL);
	}
}

/*
 * A whole scan, forward or backward, batch by batch: each batch sorted,
 * inside its fences, the fences continuing the scan; every entry one a
 * workload makes.  Sets got[] (forward) or checks it (backward).
 */
static const char *
scan(env *e, bool backward, uint8_t *got, uint64_t *n_out)
{
	static char why[400];
	nvb_batch	b;
	nvb_key		at = backward ? PM_KEY_MAX : PM_KEY_MIN;
	int			expect = NID;
	uint64_t	n = 0;
	pm_error	err;

	if (!backward)
		memset(got, 0, NID);
	for (;;)
	{
		if (nvb_read_range(&e->t, &at, backward, &PM_KEY_MIN, &PM_KEY_MAX, &b, NULL, NULL, &err) != PM_OK)
		{
			snprintf(why, sizeof(why), "read: %s", err.msg);
			return why;
		}
		if (b.n < 0 || b.n > NVB_BATCH_MAX ||
			pm_key_cmp(backward ? &b.high : &b.low, &at) != 0 ||
			pm_key_cmp(&b.low, &b.high) >= 0)
			return "a batch's fences do not continue the scan";
		for (int i = 0; i < b.n; i++)
		{
			const nvb_key *k = &b.e[backward ? b.n - 1 - i : i];
			int			id = id_of(k);

			if ((i > 0 && pm_key_cmp(&b.e[i - 1], &b.e[i]) >= 0) ||
				pm_key_cmp(k, &b.low) < 0 || pm_key_cmp(k, &b.high) >= 0)
				return "a batch is not sorted or not inside its fences";
			if (id < 0)
			{
				snprintf(why, sizeof(why), "entry (%llu,%llu) was never inserted",
						 (unsigned long long) k->key, (unsigned long long) k->rest);
				return why;
			}
			if (!backward)
				got[id] = 1;
			else
			{
				/* the next entry down of the forward scan's */
				while (--expect >= 0 && !got[expect])
					;
				if (expect != id)
					return "the backward scan is not the forward one reversed";
			}
			n++;
		}
		if (backward ? pm_key_is_min(&b.low) : pm_key_is_max(&b.high))
			break;
		at = backward ? b.low : b.high;
	}
	if (backward)
	{
		while (--expect >= 0 && !got[expect])
			;
		if (expect >= 0)
			return "the backward scan misses entries of the forward one";
	}
	*n_out = n;
	return NULL;
}

/*
 * Structure and contents: nvb_check, the mapping table and the allocator,
 * both scans; the tree holds exactly ref but for the entry fuzzy (the
 * insert or delete in flight, -1: none), which may go either way.  got[]
 * receives what the tree holds.
 */
static const char *
verify(env *e, const uint8_t *ref, int fuzzy, uint8_t *got, vstats *vs)
{
	static char why[500];
	const char *w;
	uint64_t	entries,
				n,
				n_back,
				mapped;
	nvb_stats	st;

	if ((w = nvb_check(&e->t, &entries)) != NULL)
	{
		snprintf(why, sizeof(why), "nvb_check: %s", w);
		return why;
	}
	if ((w = verify_table(e, &mapped)) != NULL)
		return w;
	if ((w = scan(e, false, got, &n)) != NULL || (w = scan(e, true, got, &n_back)) != NULL)
		return w;
	if (n != entries || n_back != n)
	{
		snprintf(why, sizeof(why), "the scans read %llu and %llu entries, nvb_check counts %llu",
				 (unsigned long long) n, (unsigned long long) n_back,
				 (unsigned long long) entries);
		return why;
	}
	for (int id = 0; id < NID; id++)
		if (got[id] != ref[id] && id != fuzzy)
		{
			snprintf(why, sizeof(why), "entry %d (key %d, rest %d) is %s; the acknowledged "
					 "operations leave it %s", id, id / RESTS, id % RESTS + 1,
					 got[id] ? "present" : "absent", ref[id] ? "present" : "absent");
			return why;
		}
	if (vs != NULL)
	{
		nvb_get_stats(&e->t, &st);
		if (mapped < st.leaves + st.inner_nodes)
			return "the levels reach more nodes than the table maps";
		vs->orphans = mapped - st.leaves - st.inner_nodes;
		vs->with_dup += tree_dups(e) > 0;
	}
	return NULL;
}

/*
 * After a crash: restart on the pool at path, verify against the state the
 * first completed operations of start leave (the next one in flight), then
 * run OPS_AFTER more operations from the recovered contents and verify
 * again.  *cur gets the generator of the state the pool holds afterwards.
 */
static const char *
check_after_crash(env *e, const char *path, pm_mode mode, const gen *start, uint64_t completed,
				  uint64_t more_seed, gen *cur, vstats *vs)
{
	static char why[700];
	static uint8_t got[NID];
	uint64_t	orphans_before = vs->orphans;
	op			inflight;
	const char *w;

	*cur = *start;
	for (uint64_t i = 0; i < completed; i++)
		(void) gen_next(cur);
	{
		gen			peek = *cur;

		inflight = gen_next(&peek);
	}
	if ((w = env_open(e, path, mode)) != NULL)
	{
		snprintf(why, sizeof(why), "restart after %llu ops: %s", (unsigned long long) completed, w);
		return why;
	}
	w = verify(e, cur->ref, inflight.kind != OP_TIDY ? inflight.id : -1, got, vs);
	if (w != NULL)
	{
		snprintf(why, sizeof(why), "after the restart (%llu ops done, %s %d in flight): %s",
				 (unsigned long long) completed, inflight.kind == OP_INSERT ? "insert" :
				 inflight.kind == OP_DELETE ? "delete" : "tidy", inflight.id, w);
		env_close(e);
		return why;
	}
	vs->with_orphan += vs->orphans > orphans_before;
	if (inflight.kind != OP_TIDY)
	{
		vs->inflight_ops++;
		vs->inflight_done += got[inflight.id] != cur->ref[inflight.id];
	}
	/* the state the pool holds: the operation in flight did or did not happen */
	memcpy(cur->ref, got, NID);
	cur->live = 0;
	for (int id = 0; id < NID; id++)
		cur->live += got[id];
	cur->rng = more_seed | 1;
	for (int i = 0; i < OPS_AFTER && w == NULL; i++)
		w = apply(e, gen_next(cur));
	pm_epoch_drain(&e->ep);
	if (w == NULL)
		w = verify(e, cur->ref, -1, got, NULL);
	env_close(e);
	if (w != NULL)
	{
		snprintf(why, sizeof(why), "%d more ops on the recovered tree: %s", OPS_AFTER, w);
		return why;
	}
	return NULL;
}

/* ---------- the base pools ---------- */

typedef struct load_src
{
	int			i;
} load_src;

/* big: for each key, its rests 1 and 2, ascending */
static bool
load_next(void *ctx, nvb_key *k)
{
	load_src   *s = ctx;

	if (s->i >= 2 * BIG_KEYS)
		return false;
	*k = key_of(s->i / 2 * RESTS + s->i % 2);
	s->i++;
	return true;
}

static const char *
make_base(env *e, base_kind kind, gen *g)
{
	static char why[400];
	uint8_t    *got = malloc(NID);
	pm_pool    *pool = harness_new_nvb(base_path[kind], PM_MODE_ADR, MAX_POOL);
	pm_error	err;
	const char *w = NULL;

	memset(g, 0, sizeof(*g));
	if (kind == BASE_SMALL)
	{
		g->lo = 0;
		g->span = SMALL_IDS;
	}
	else
	{
		load_src	src = {0};

		if (nvb_bulk_load(pool, LOAD_FILL, load_next, &src, &err) != PM_OK)
		{
			snprintf(why, sizeof(why), "bulk load: %s", err.msg);
			free(got);
			return why;
		}
		for (int i = 0; i < 2 * BIG_KEYS; i++)
			g->ref[i / 2 * RESTS + i % 2] = 1;
		g->live = 2 * BIG_KEYS;
		g->lo = 0;
		g->span = NID;
	}
	pm_pool_close(pool);
	if ((w = env_open(e, base_path[kind], PM_MODE_ADR)) != NULL)
	{
		free(got);
		return w;
	}
	if (kind == BASE_SMALL)
	{
		uint64_t	s = 4242;

		for (int i = 0; i < SMALL_BASE && w == NULL; i++)
		{
			int			id = (int) (xorshift(&s) % SMALL_IDS);

			if (!g->ref[id])
				w = apply(e, gen_apply(g, (op) {OP_INSERT, id}));
		}
	}
	else if (kind == BASE_SEG)
	{
		uint32_t	id;

		while (w == NULL && pm_load(&nvb_meta_of(&e->t)->next_id) < ID_BURN_TO)
			if (nvb_id_new(&e->t, &id, &err) != PM_OK)
				w = err.msg;
	}
	else if (kind == BASE_SPARSE)
	{
		int			loaded = 0;

		for (int id = 0; id < NID && w == NULL; id++)
			if (g->ref[id] && loaded++ % 6 != 0)
				w = apply(e, gen_apply(g, (op) {OP_DELETE, id}));
	}
	pm_epoch_drain(&e->ep);
	if (w == NULL)
		w = verify(e, g->ref, -1, got, NULL);
	if (w == NULL)
	{
		nvb_stats	st;

		nvb_get_stats(&e->t, &st);
		tap_diag("base %s: %llu entries, %llu leaves, height %llu, next id %llu",
				 base_name[kind], (unsigned long long) st.entries,
				 (unsigned long long) st.leaves, (unsigned long long) st.height,
				 (unsigned long long) pm_load(&nvb_meta_of(&e->t)->next_id));
	}
	env_close(e);
	free(got);
	return w;
}

/* ---------- the workload children ---------- */

typedef struct work
{
	env		   *e;
	gen			g;
	bool		calibrate;
	uint64_t	pause_kill;		/* eadr: SIGKILL at this pause of pause_at (0: none) */
	const char *pause_at;		/* "nvbtree_pm split" or "nvbtree_pm merge" */
} work;

static const char *
work_open(void *ctx, const char *path, pm_mode mode, pm_pool **pool)
{
	work	   *c = ctx;
	const char *w = env_open(c->e, path, mode);

	*pool = c->e->pool;
	if (w == NULL && c->calibrate)
		counters(c->e, &P->before);
	return w;
}

static const char *
work_step(void *ctx, uint64_t k)
{
	work	   *c = ctx;
	op			o = gen_next(&c->g);

	if (c->calibrate && k < ADR_OPS)
		P->did[k] = o.kind == OP_DELETE && two_child(c->e, o.id) ? F_TWO_CHILD : 0;
	return apply(c->e, o);
}

/* Calibration: after op k, the events so far and what the op did. */
static void
work_calibrate(void *ctx, uint64_t k, pm_crashsim *cs)
{
	work	   *c = ctx;
	smo_counts	now;

	counters(c->e, &now);
	P->events_after[k] = pm_crashsim_events(cs);
	P->did[k] |= (now.splits != P->before.splits ? F_SPLIT : 0) |
		(now.rewrites != P->before.rewrites ? F_REWRITE : 0) |
		(now.height != P->before.height ? F_GROW : 0) |
		(now.segments != P->before.segments ? F_SEGMENT : 0) |
		(now.merges != P->before.merges ? F_MERGE : 0);
	P->before = now;
}

static uint64_t pause_kill_at;
static const char *pause_kill_where;
static uint64_t pauses;

static void
kill_at_pause(const char *where)
{
	if (strcmp(where, pause_kill_where) == 0 && ++pauses == pause_kill_at)
		kill(getpid(), SIGKILL);
}

/* An eadr child: open the work pool after the last kill and run until killed. */
static void
eadr_workload(void *arg)
{
	work	   *c = arg;
	crash_workload w = {c, work_open, work_step, NULL};
	pm_pool    *pool;
	const char *why;

	if ((why = work_open(c, work_path, PM_MODE_EADR, &pool)) != NULL)
		crash_child_fail(why);
	if (c->pause_kill > 0)
	{
		pauses = 0;
		pause_kill_at = c->pause_kill;
		pause_kill_where = c->pause_at;
		pm_smo_pause_hook = kill_at_pause;
	}
	crash_child_loop(&w, 0, NULL);
}

/* An eadr child killed by its own pause hook (or after HOOK_WAIT_SEC); true if it was. */
static bool
fork_kill_at_pause(work *c)
{
	pid_t		pid = fork();
	int			status = 0;
	double		t0 = now_sec();

	if (pid == 0)
	{
		eadr_workload(c);
		_exit(0);
	}
	while (waitpid(pid, &status, WNOHANG) == 0)
	{
		struct timespec ts = {0, 200000};

		if (now_sec() - t0 > HOOK_WAIT_SEC)
		{
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			return false;
		}
		nanosleep(&ts, NULL);
	}
	return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
}

/* The op index whose events hold event ev. */
static int
op_of_event(uint64_t ev)
{
	int			lo = 0,
				hi = ADR_OPS - 1;

	while (lo < hi)
	{
		int			mid = (lo + hi) / 2;

		if (P->events_after[mid] >= ev)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/* A random op of the calibration that did what flags says, or -1. */
static int
pick_op(uint64_t *rng, uint8_t flags)
{
	int			n = 0,
				pick;

	for (int k = 0; k < ADR_OPS; k++)
		n += (P->did[k] & flags) != 0;
	if (n == 0)
		return -1;
	pick = (int) (xorshift(rng) % (uint64_t) n);
	for (int k = 0; k < ADR_OPS; k++)
		if ((P->did[k] & flags) != 0 && pick-- == 0)
			return k;
	return -1;
}

/* The events of op k: (lo, hi]. */
static void
op_events(int k, uint64_t *lo, uint64_t *hi)
{
	*lo = k > 0 ? P->events_after[k - 1] : 0;
	*hi = P->events_after[k];
}

int
main(void)
{
	char	   *dir = tap_tmpdir("nvb_crash");
	env			e;
	vstats		vs = {0};
	int			failures = 0;
	double		t0;
	int			landed[NFLAGS] = {0};	/* crash points inside an op that split, rewrote, ... */
	int			aimed = 0;
	int			crashed = 0;

	if (getenv("PM_TEST_SEED"))
		test_seed = strtoull(getenv("PM_TEST_SEED"), NULL, 10);
	tap_diag("seed %llu (PM_TEST_SEED)", (unsigned long long) test_seed);
	alarm(900);
	P = mmap(NULL, sizeof(progress), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (P == MAP_FAILED)
	{
		perror("mmap");
		return 2;
	}
	crash_report_map();
	env_map(&e);
	for (int b = 0; b < NBASES; b++)
		snprintf(base_path[b], sizeof(base_path[b]), "%s/base_%s.pm", dir, base_name[b]);
	snprintf(work_path, sizeof(work_path), "%s/work.pm", dir);
	snprintf(image_path, sizeof(image_path), "%s/image.pm", dir);

	for (int b = 0; b < NBASES; b++)
	{
		const char *w = make_base(&e, (base_kind) b, &base_gen[b]);

		if (!tap_ok(w == NULL, "base pool %s builds and verifies%s%s", base_name[b],
					w ? ": " : "", w ? w : ""))
		{
			tap_rmdir(dir);
			tap_plan(tap_count);
			return 1;
		}
	}

	/*
	 * adr: each workload calibrated, then its share of the crash points,
	 * aimed in turn (point % 12): 0, 1 any event; 2, 3 a split's; 4 a
	 * rewrite's; 5 a two-child delete's; 6 a root growth's; 7 a new
	 * segment's; 8 one of a split's last six (the table stores, the
	 * parent's separator); 9 a rewrite's or a two-child delete's last
	 * three; 10 a merge's; 11 one of a merge's last four (the parent's
	 * separator, the table stores).  An aim with no such op takes a
	 * split's.
	 */
	t0 = now_sec();
	{
		uint64_t	rng = 12345 + test_seed * 7919;
		int			calib_ok = 0;
		int			did_total[NFLAGS] = {0};
		uint64_t	events_total = 0;

		for (int s = 0; s < ADR_SEEDS; s++)
		{
			base_kind	kind = (base_kind) (s % NBASES);
			gen			g0 = base_gen[kind];
			work		c = {&e, g0, true, 0};
			crash_workload w = {&c, work_open, work_step, work_calibrate};
			int			rc;

			g0.rng = c.g.rng = 1000 + (uint64_t) s + test_seed * 100003;
			memset(P, 0, sizeof(*P));
			copy_file(base_path[kind], work_path);
			rc = crash_run_adr_child(&w, work_path, 0, image_path, 0, ADR_OPS);
			if (rc != 1 || crash_rep->completed != ADR_OPS)
			{
				if (failures++ < MAX_REPORT)
					tap_diag("calibration of workload %d (%s) failed (status %d): %s", s,
							 base_name[kind], rc, crash_rep->errors ? crash_rep->msg : "");
				continue;
			}
			calib_ok++;
			events_total += P->events_after[ADR_OPS - 1];
			for (int k = 0; k < ADR_OPS; k++)
				for (int f = 0; f < NFLAGS; f++)
					did_total[f] += (P->did[k] >> f) & 1;

			for (int point = 0; point < ADR_POINTS / ADR_SEEDS; point++)
			{
				static const uint8_t aim[12] = {0, 0, F_SPLIT, F_SPLIT, F_REWRITE, F_TWO_CHILD,
				F_GROW, F_SEGMENT, F_SPLIT, F_REWRITE | F_TWO_CHILD, F_MERGE, F_MERGE};
				int			k = aim[point % 12] ? pick_op(&rng, aim[point % 12]) : -1;
				uint64_t	lo,
							hi,
							at;
				const char *why;
				gen			cur;

				if (aim[point % 12] && k < 0)
					k = pick_op(&rng, F_SPLIT);
				if (k < 0)
					at = 1 + xorshift(&rng) % P->events_after[ADR_OPS - 1];
				else
				{
					op_events(k, &lo, &hi);
					if (point % 12 == 8 && hi - lo > 6)
						lo = hi - 6;
					else if (point % 12 == 9 && hi - lo > 3)
						lo = hi - 3;
					else if (point % 12 == 11 && hi - lo > 4)
						lo = hi - 4;
					at = lo + 1 + xorshift(&rng) % (hi - lo);
					aimed++;
				}
				c.g = g0;
				c.calibrate = false;
				w.after = NULL;
				copy_file(base_path[kind], work_path);
				rc = crash_run_adr_child(&w, work_path, at, image_path, xorshift(&rng), ADR_OPS);
				if (rc != 0)
				{
					if (failures++ < MAX_REPORT)
						tap_diag("workload %d (%s), event %llu: the child did not crash "
								 "(status %d%s%s)", s, base_name[kind], (unsigned long long) at,
								 rc, crash_rep->errors ? ": " : "",
								 crash_rep->errors ? crash_rep->msg : "");
					continue;
				}
				crashed++;
				vs.orphans = 0;	/* the base has none */
				if (crash_rep->completed < ADR_OPS &&
					op_of_event(at) == (int) crash_rep->completed)
					for (int f = 0; f < NFLAGS; f++)
						landed[f] += (P->did[crash_rep->completed] >> f) & 1;
				why = check_after_crash(&e, image_path, PM_MODE_ADR, &g0, crash_rep->completed,
										xorshift(&rng), &cur, &vs);
				if (why != NULL && failures++ < MAX_REPORT)
					tap_diag("workload %d (%s), crash at event %llu (op %llu): %s", s,
							 base_name[kind], (unsigned long long) at,
							 (unsigned long long) crash_rep->completed, why);
			}
		}
		tap_diag("adr: %d workloads of %d ops, %llu persistence events; their ops: %d splits, "
				 "%d rewrites, %d two-child deletes, %d root growths, %d new table segments, "
				 "%d merges", calib_ok, ADR_OPS, (unsigned long long) events_total, did_total[0],
				 did_total[1], did_total[2], did_total[3], did_total[4], did_total[5]);
		tap_diag("adr: %d power failures in %.1f s (%d aimed); inside an op that split: %d, "
				 "rewrote: %d, deleted a slot of two children: %d, grew the root: %d, made a "
				 "table segment: %d, merged: %d", crashed, now_sec() - t0, aimed, landed[0],
				 landed[1], landed[2], landed[3], landed[4], landed[5]);
		tap_diag("adr: after the restart, the insert or delete in flight had taken effect in %d "
				 "of %d; a leaf held a key twice after %d; a node (a split's right half, a "
				 "merge's right leaf) was left mapped but unreached after %d", vs.inflight_done, vs.inflight_ops,
				 vs.with_dup, vs.with_orphan);
		tap_ok(calib_ok == ADR_SEEDS, "%d of %d adr workloads run to completion under crashsim",
			   calib_ok, ADR_SEEDS);
		tap_ok(crashed >= ADR_POINTS * 9 / 10 && failures == 0,
			   "adr: %d power failures; after each, the restarted tree checks, holds exactly the "
			   "acknowledged entries, maps only nodes the allocator holds, and keeps working "
			   "(%d failures)", crashed, failures);
		tap_ok(landed[0] >= crashed / 5 && landed[1] >= crashed / 20 && landed[2] >= crashed / 20 &&
			   landed[3] >= crashed / 40 && landed[4] >= crashed / 40 &&
			   landed[5] >= crashed / 30 && vs.with_dup > 0,
			   "adr: power failures landed in splits (%d), rewrites (%d), two-child deletes (%d, "
			   "%d leaving a key twice), root growths (%d), new table segments (%d) and merges (%d)",
			   landed[0], landed[1], landed[2], vs.with_dup, landed[3], landed[4], landed[5]);
	}

	/*
	 * eadr: SIGKILLs, at a split's or a merge's pause point or at random.  A series of
	 * kills carries one pool on from kill to kill; each series starts from
	 * a fresh copy of a base (small and big in turn), with its kill at a
	 * split (the sparse base's at a merge): a key space whose leaves have
	 * all split to its full density splits no more, and the splits must not
	 * run out however many operations the random kills let through (the
	 * machine's speed decides that).
	 */
	t0 = now_sec();
	{
		uint64_t	rng = 777 + test_seed * 31;
		int			killed = 0,
					at_pause = 0,
					efail = 0,
					in_loop = 0;
		uint64_t	ops_total = 0,
					orphans_end = 0;
		vstats		evs = {0};

		for (int series = 0; series < EADR_SERIES && efail == 0; series++)
		{
			base_kind	kind = series % 3 == 0 ? BASE_SMALL : series % 3 == 1 ? BASE_BIG : BASE_SPARSE;
			gen			state = base_gen[kind];

			copy_file(base_path[kind], work_path);
			evs.orphans = 0;
			for (int i = 0; i < SERIES_KILLS; i++)
			{
				work		c = {&e, state, false, 0};
				const char *why;
				gen			cur;

				c.g.rng = xorshift(&rng) | 1;
				crash_report_reset();
				if (i == 0)
				{
					c.pause_kill = 1 + xorshift(&rng) % 3;
					c.pause_at = kind == BASE_SPARSE ? "nvbtree_pm merge" : "nvbtree_pm split";
					if (fork_kill_at_pause(&c))
					{
						killed++;
						at_pause++;
					}
				}
				else
					killed += pm_crash_fork_kill(eadr_workload, &c,
												 300 + (unsigned) (xorshift(&rng) % 3000));
				if (crash_rep->errors)
				{
					if (efail++ < MAX_REPORT)
						tap_diag("eadr series %d, kill %d: the workload failed: %s", series, i,
								 crash_rep->msg);
					break;
				}
				in_loop += crash_rep->started && crash_rep->completed > 0;
				ops_total += crash_rep->completed;
				why = check_after_crash(&e, work_path, PM_MODE_EADR, &c.g, crash_rep->completed,
										xorshift(&rng), &cur, &evs);
				if (why != NULL)
				{
					if (efail++ < MAX_REPORT)
						tap_diag("eadr series %d (%s), kill %d (%s, %llu ops done): %s", series,
								 base_name[kind], i, c.pause_kill ? c.pause_at : "at random",
								 (unsigned long long) crash_rep->completed, why);
					break;		/* the pool is in an unknown state */
				}
				state = cur;
			}
			orphans_end += evs.orphans;
		}
		tap_diag("eadr: %d kills in %.1f s (%d at a split's or a merge's pause point), %d inside "
				 "the workload loop, %llu ops acknowledged; a node left mapped but unreached "
				 "after %d, %llu such nodes in the series' last pools", killed, now_sec() - t0,
				 at_pause, in_loop, (unsigned long long) ops_total, evs.with_orphan,
				 (unsigned long long) orphans_end);
		tap_ok(killed == EADR_KILLS && at_pause == EADR_SERIES,
			   "%d of %d eadr workload processes were killed mid-run, %d of %d at a split or a merge",
			   killed, EADR_KILLS, at_pause, EADR_SERIES);
		tap_ok(efail == 0,
			   "eadr: after every kill, the restarted tree checks, holds exactly the acknowledged "
			   "entries, maps only nodes the allocator holds, and keeps working (%d failures)",
			   efail);
		tap_ok(in_loop >= EADR_KILLS / 2 && evs.with_orphan >= EADR_SERIES - EADR_SERIES / 3,
			   "eadr: %d kills landed in the workload loop, %d left a split's right half mapped",
			   in_loop, evs.with_orphan);
	}

	for (int b = 0; b < NBASES; b++)
		unlink(base_path[b]);
	tap_rmdir(dir);
	tap_plan(tap_count);
	return tap_done();
}
