/*
 * test_uno.c
 *	  UNO logging on a toy structure, a chained map of 64-byte nodes and a
 *	  scratch block of random stores, made persistent only by pm_uno_log,
 *	  pm_uno_alloc and pm_uno_free calls before its stores, allocations and
 *	  frees:
 *	  - recovery puts back the checkpoint's image after random stores by
 *		three appliers through two handles (two processes' sets), frees the
 *		blocks allocated since, and keeps those whose free was deferred;
 *	  - frees wait for the checkpoint, which performs them; coalescing logs
 *		a range once per handle, a fresh block never; a rollback frees what
 *		the failed operation allocated and forgets its frees;
 *	  - a full log refuses before it changes anything, and takes records
 *		again after a checkpoint;
 *	  - damaged directories, chains and records are refused; allocator
 *		recovery waits for the logs to be empty and keeps their blocks;
 *	  - recovery killed at each of its steps (eadr) and run again leaves the
 *		checkpoint's state with the allocator exact;
 *	  - an adr power failure at every persistence event of a workload of
 *		map operations, checkpoints and the host's operation log (olog.h),
 *		and of the recovery of 8 such images: after recovery, allocator
 *		recovery and the redo of the operation log, the map equals a
 *		reference of every acknowledged operation and the allocator holds
 *		exactly the reachable blocks (under ASan, at every third event).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness_crash.h"
#include "olog.h"
#include "recon.h"
#include "uno.h"

#define TOY_BUCKETS		16
#define TOY_KEYS		48
#define SCRATCH			2048
#define NAPPLIERS		3
#define ROUND_OPS		300
#define CRASH_OPS		28
#define CHECKPOINT_EVERY 8
#define MAX_REPORT		5

/* ASan runs the power failures at every third event. */
#if defined(__SANITIZE_ADDRESS__)
#define EVENT_STRIDE	3
#define EVENTS			"every third event"
#else
#define EVENT_STRIDE	1
#define EVENTS			"every event"
#endif

/* ---- the toy structure: volatile logic, and the uno calls before its stores ---- */

typedef struct toy_root
{
	uint64_t	bucket[TOY_BUCKETS];	/* chains of nodes */
	uint64_t	scratch;		/* a SCRATCH-byte block */
	uint64_t	nodes;
	uint64_t	sum;			/* of the values added: applying an add twice shows */
} toy_root;

typedef struct toy_node
{
	uint64_t	key;
	uint64_t	value;
	uint64_t	next;
	uint64_t	pad[5];
} toy_node;

typedef struct toy
{
	pm_pool    *pool;
	pm_alloc	a;
	pm_uno	   *u;
} toy;

/* segments of the host's operation log lane (64 KiB each) */
#define OLOG_SEGMENTS	64

/* An operation, as the host's operation log keeps it (24 bytes). */
typedef struct op
{
	uint64_t	kind;			/* OP_* */
	uint64_t	key;			/* scribble: where | length << 16 */
	uint64_t	value;			/* scribble: the byte */
} op;

enum
{
	OP_PUT = 1,
	OP_DEL = 2,
	OP_SCRIBBLE = 3,
	OP_ADD = 4
};

/* What the toy holds, as the test keeps it. */
typedef struct model
{
	uint64_t	value[TOY_KEYS + 1];	/* 0: absent */
	uint8_t		scratch[SCRATCH];
	uint64_t	sum;
} model;

static toy_root *
root_of(const toy *t)
{
	return pm_pool_addr(t->pool, pm_pool_root(t->pool, 0));
}

static pm_errcode
toy_put(toy *t, uint32_t ap, uint64_t key, uint64_t value, pm_error *err)
{
	toy_root   *r = root_of(t);
	uint64_t   *link = &r->bucket[key % TOY_BUCKETS];
	toy_node   *n;
	uint64_t	off;
	pm_errcode	rc;

	for (off = *link; off != 0; off = n->next)
	{
		n = pm_pool_addr(t->pool, off);
		if (n->key == key)
		{
			if ((rc = pm_uno_log(t->u, ap, &n->value, sizeof(n->value), err)) != PM_OK)
				return rc;
			n->value = value;
			return PM_OK;
		}
	}
	if ((rc = pm_uno_log(t->u, ap, link, sizeof(*link), err)) != PM_OK ||
		(rc = pm_uno_log(t->u, ap, &r->nodes, sizeof(r->nodes), err)) != PM_OK)
		return rc;
	if ((off = pm_uno_alloc(t->u, ap, sizeof(toy_node), err)) == 0)
		return err->code;
	n = pm_pool_addr(t->pool, off);
	n->key = key;
	n->value = value;
	n->next = *link;
	*link = off;
	r->nodes++;
	return PM_OK;
}

/* Delete key; *freed (if not NULL) gets its node's offset, 0 if it was absent. */
static pm_errcode
toy_del(toy *t, uint32_t ap, uint64_t key, uint64_t *freed, pm_error *err)
{
	toy_root   *r = root_of(t);
	pm_errcode	rc;

	if (freed != NULL)
		*freed = 0;
	for (uint64_t *link = &r->bucket[key % TOY_BUCKETS]; *link != 0;)
	{
		toy_node   *n = pm_pool_addr(t->pool, *link);

		if (n->key != key)
		{
			link = &n->next;
			continue;
		}
		if ((rc = pm_uno_log(t->u, ap, link, sizeof(*link), err)) != PM_OK ||
			(rc = pm_uno_log(t->u, ap, &r->nodes, sizeof(r->nodes), err)) != PM_OK ||
			(rc = pm_uno_free(t->u, ap, *link, err)) != PM_OK)
			return rc;
		if (freed != NULL)
			*freed = *link;
		*link = n->next;
		r->nodes--;
		return PM_OK;
	}
	return PM_OK;
}

static pm_errcode
toy_scribble(toy *t, uint32_t ap, uint64_t where, uint64_t len, uint8_t byte, pm_error *err)
{
	uint8_t    *s = (uint8_t *) pm_pool_addr(t->pool, root_of(t)->scratch) + where;
	pm_errcode	rc;

	if ((rc = pm_uno_log(t->u, ap, s, len, err)) != PM_OK)
		return rc;
	memset(s, byte, len);
	return PM_OK;
}

static pm_errcode
toy_add(toy *t, uint32_t ap, uint64_t value, pm_error *err)
{
	toy_root   *r = root_of(t);
	pm_errcode	rc;

	if ((rc = pm_uno_log(t->u, ap, &r->sum, sizeof(r->sum), err)) != PM_OK)
		return rc;
	r->sum += value;
	return PM_OK;
}

static pm_errcode
toy_apply(toy *t, uint32_t ap, const op *o, uint64_t *freed, pm_error *err)
{
	if (o->kind == OP_ADD)
		return toy_add(t, ap, o->value, err);
	if (o->kind == OP_PUT)
		return toy_put(t, ap, o->key, o->value, err);
	if (o->kind == OP_DEL)
		return toy_del(t, ap, o->key, freed, err);
	return toy_scribble(t, ap, o->key & 0xffff, o->key >> 16, (uint8_t) o->value, err);
}

static void
model_apply(model *m, const op *o)
{
	if (o->kind == OP_PUT)
		m->value[o->key] = o->value;
	else if (o->kind == OP_DEL)
		m->value[o->key] = 0;
	else if (o->kind == OP_ADD)
		m->sum += o->value;
	else
		memset(m->scratch + (o->key & 0xffff), (uint8_t) o->value, o->key >> 16);
}

/* Operation k of workload seed: puts, deletes and scribbles over a small key space. */
static op
op_of(uint64_t seed, uint64_t k)
{
	uint64_t	s = seed * UINT64_C(0x9e3779b97f4a7c15) + k * UINT64_C(0xbf58476d1ce4e5b9) + 1;
	uint64_t	r = xorshift(&s);
	uint64_t	p = r % 100;
	op			o;

	o.key = (r >> 8) % TOY_KEYS + 1;
	o.value = (r >> 16) | 1;
	if (p < 40)
		o.kind = OP_PUT;
	else if (p < 60)
		o.kind = OP_DEL;
	else if (p < 75)
		o.kind = OP_ADD;
	else
	{
		uint64_t	len = (r >> 24) % 200 + 1;

		o.kind = OP_SCRIBBLE;
		o.key = (r >> 40) % (SCRATCH - len) | len << 16;
		o.value = (r >> 32) & 0xff;
	}
	return o;
}

/* NULL if the toy holds what m says, or what differs. */
static const char *
toy_differs(const toy *t, const model *m)
{
	static char why[200];
	toy_root   *r = root_of(t);
	uint64_t	seen[TOY_KEYS + 1] = {0};
	uint64_t	n = 0;

	for (int b = 0; b < TOY_BUCKETS; b++)
		for (uint64_t off = r->bucket[b]; off != 0; off = ((toy_node *) pm_pool_addr(t->pool, off))->next)
		{
			toy_node   *node = pm_pool_addr(t->pool, off);

			if (!pm_alloc_block_in_pool(t->pool, off, sizeof(toy_node)) || node->key == 0 ||
				node->key > TOY_KEYS || node->key % TOY_BUCKETS != (uint64_t) b || seen[node->key] != 0 ||
				++n > TOY_KEYS)
			{
				snprintf(why, sizeof(why), "chain %d is damaged at offset %llu", b, (unsigned long long) off);
				return why;
			}
			seen[node->key] = node->value;
		}
	for (int k = 1; k <= TOY_KEYS; k++)
		if (seen[k] != m->value[k])
		{
			snprintf(why, sizeof(why), "key %d has %llu, not %llu", k, (unsigned long long) seen[k],
					 (unsigned long long) m->value[k]);
			return why;
		}
	if (n != r->nodes)
		return "the node count is wrong";
	if (r->sum != m->sum)
		return "the sum is wrong";
	if (memcmp(pm_pool_addr(t->pool, r->scratch), m->scratch, SCRATCH) != 0)
		return "the scratch block differs";
	return NULL;
}

/* Allocator recovery marks: the scratch block and the nodes (the root is a pool root). */
static pm_errcode
toy_mark(const toy *t, pm_alloc *a, pm_error *err)
{
	toy_root   *r = root_of(t);
	pm_errcode	rc = pm_alloc_mark(a, r->scratch, err);

	for (int b = 0; rc == PM_OK && b < TOY_BUCKETS; b++)
		for (uint64_t off = r->bucket[b]; rc == PM_OK && off != 0;
			 off = ((toy_node *) pm_pool_addr(t->pool, off))->next)
			rc = pm_alloc_mark(a, off, err);
	return rc;
}

/* ---- the host ---- */

/* harness_pool's format: the logs, the toy (pool root 0) and a one-lane operation log. */
static pm_errcode
format_toy(pm_pool *pool, pm_error *err)
{
	pm_alloc	a;
	uint64_t	root;
	toy_root   *r;
	pm_errcode	rc;

	pm_alloc_attach_pool(&a, pool);
	if ((rc = pm_uno_create(pool, &a, NAPPLIERS, 0, err)) != PM_OK ||
		(rc = pm_olog_create(pool, &a, 1, OLOG_SEGMENTS, err)) != PM_OK)
		return rc;
	if ((root = pm_alloc_block(&a, sizeof(toy_root), err)) == 0)
		return err->code;
	r = pm_pool_addr(pool, root);
	memset(r, 0, sizeof(*r));
	if ((r->scratch = pm_alloc_block(&a, SCRATCH, err)) == 0)
		return err->code;
	memset(pm_pool_addr(pool, r->scratch), 0, SCRATCH);
	pm_persist(&pool->persist, pm_pool_addr(pool, r->scratch), SCRATCH);
	pm_persist(&pool->persist, r, sizeof(*r));
	pm_pool_set_root(pool, 0, root);
	return PM_OK;
}

/* The checkpoint's positions reached the structure: the operation log's lane 0 is applied that far. */
static void
host_advance(void *ctx, const uint64_t *pos, uint32_t npos)
{
	toy		   *t = ctx;

	if (npos == 1)
	{
		pm_olog_set_applied(t->pool, pm_olog_of(t->pool), 0, pos[0]);
		pm_olog_reclaim(t->pool, &t->a, pm_olog_of(t->pool), 0, pos[0]);
	}
}

/* Attach a toy handle (its own uno handle: a process's) to pool; NULL or why not. */
static const char *
toy_attach(toy *t, pm_pool *pool)
{
	static char why[300];
	pm_uno_host host = {.advance = host_advance, .ctx = t};
	pm_error	err;

	t->pool = pool;
	pm_alloc_attach_pool(&t->a, pool);
	if (pm_uno_attach(pool, &t->a, &host, &t->u, &err) != PM_OK)
	{
		snprintf(why, sizeof(why), "uno attach: %s", err.msg);
		return why;
	}
	return NULL;
}

/* A checkpoint that tells the host the operation log's tail. */
static pm_errcode
toy_checkpoint(toy *t, pm_error *err)
{
	uint64_t	tail = pm_load(&pm_olog_lane_at(t->pool, pm_olog_of(t->pool), 0)->tail);

	return pm_uno_checkpoint(t->u, &tail, 1, err);
}

/* Every block allocated, in order (allocator foreach). */
typedef struct block_list
{
	uint64_t	n;
	uint64_t	off[8192];
} block_list;

static void
list_block(void *ctx, uint64_t off, size_t size)
{
	block_list *l = ctx;

	(void) size;
	if (l->n < 8192)
		l->off[l->n] = off;
	l->n++;
}

static bool
allocated(const toy *t, uint64_t off)
{
	static block_list l;

	l.n = 0;
	pm_alloc_foreach(&t->a, list_block, &l);
	for (uint64_t i = 0; i < l.n && i < 8192; i++)
		if (l.off[i] == off)
			return true;
	return false;
}

/*
 * Allocator recovery of the toy's pool: the roots (toy, uno directory) and
 * the operation log (pm_recon_mark_roots), the uno logs' blocks, the toy's
 * blocks.
 */
static pm_errcode
recover_allocator(toy *t, pm_error *err)
{
	pm_errcode	rc;

	pm_alloc_recover_begin(&t->a);
	if ((rc = pm_recon_mark_roots(&t->a, t->pool, err)) != PM_OK ||
		(rc = pm_uno_mark(&t->a, t->pool, err)) != PM_OK || (rc = toy_mark(t, &t->a, err)) != PM_OK)
		return rc;
	pm_alloc_recover_end(&t->a);
	return PM_OK;
}

/*
 * The whole recovery: uno (free_blocks), then the allocator's unless
 * free_blocks, then the operation log's records past applied again, then
 * a checkpoint.  NULL or why it failed.
 */
static const char *
toy_recover(toy *t, bool free_blocks)
{
	static char why[300];
	const pm_olog *o = pm_olog_of(t->pool);
	pm_olog_lane *l = pm_olog_lane_at(t->pool, o, 0);
	pm_olog_cursor c;
	pm_olog_record rec;
	pm_error	err;

	if (pm_uno_recover(t->u, free_blocks, &err) != PM_OK ||
		(!free_blocks && recover_allocator(t, &err) != PM_OK))
	{
		snprintf(why, sizeof(why), "recovery: %s", err.msg);
		return why;
	}
	pm_olog_cursor_init(&c, pm_load(&l->applied));
	while (pm_olog_next(t->pool, o, 0, &c, pm_load(&l->tail), &rec, &err))
		if (toy_apply(t, 0, rec.data, NULL, &err) != PM_OK)
		{
			snprintf(why, sizeof(why), "redo: %s", err.msg);
			return why;
		}
	if (err.code != PM_OK)
	{
		snprintf(why, sizeof(why), "redo: %s", err.msg);
		return why;
	}
	if (toy_checkpoint(t, &err) != PM_OK)
	{
		snprintf(why, sizeof(why), "checkpoint after redo: %s", err.msg);
		return why;
	}
	return NULL;
}

/* ---- eadr: recovery killed at each of its steps ---- */

static uint64_t pause_exit_at;
static uint64_t pauses;

static void
pause_hook(const char *where)
{
	(void) where;
	if (++pauses == pause_exit_at)
		_exit(0);
}

/* In a child: recover the pool at path, dying at pause number exit_at (0: never); returns the pauses passed. */
static uint64_t
recover_child(const char *path, uint64_t exit_at)
{
	uint64_t   *count = mmap(NULL, sizeof(uint64_t), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	uint64_t	n;
	pid_t		pid;

	*count = 0;
	pid = fork();
	if (pid == 0)
	{
		pm_pool    *pool;
		pm_error	err;
		toy			t;

		if (pm_pool_open(path, PM_MODE_EADR, &pool, &err) != PM_OK || toy_attach(&t, pool) != NULL)
			_exit(2);
		pause_exit_at = exit_at;
		pm_smo_pause_hook = pause_hook;
		if (pm_uno_recover(t.u, true, &err) != PM_OK)
			_exit(3);
		*count = pauses;
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	n = *count;
	munmap(count, sizeof(uint64_t));
	return n;
}

/* ---- adr: power failures during a workload, and during a recovery ---- */

typedef struct child
{
	uint64_t	seed;
	bool		recovering;		/* the child runs toy_recover as its one step */
	toy			t;
} child;

static const char *
child_open(void *ctx, const char *path, pm_mode mode, pm_pool **pool)
{
	child	   *c = ctx;
	pm_error	err;

	if (pm_pool_open(path, mode, pool, &err) != PM_OK)
		return "the pool does not open";
	return toy_attach(&c->t, *pool);
}

/* Operation k: into the operation log (acknowledged), into the toy, a checkpoint every few. */
static const char *
child_step(void *ctx, uint64_t k)
{
	child	   *c = ctx;
	op			o = op_of(c->seed, k);
	pm_error	err;

	if (c->recovering)
		return toy_recover(&c->t, false);
	if (pm_olog_reserve(c->t.pool, &c->t.a, pm_olog_of(c->t.pool), 0, sizeof(o), &err) != PM_OK)
		return "the operation log is full";
	(void) pm_olog_append(c->t.pool, pm_olog_of(c->t.pool), 0, &o, sizeof(o), k + 1);
	if (toy_apply(&c->t, (uint32_t) (k % NAPPLIERS), &o, NULL, &err) != PM_OK)
		return "an operation failed";
	if (k % CHECKPOINT_EVERY == CHECKPOINT_EVERY - 1 && toy_checkpoint(&c->t, &err) != PM_OK)
		return "a checkpoint failed";
	return NULL;
}

/*
 * NULL if the image at path, recovered, holds exactly the operations its
 * operation log acknowledged, with acks_min <= that many <= acks_max, and
 * the allocator exactly the reachable blocks; else what is wrong.
 */
static const char *
check_image(const char *path, uint64_t seed, uint64_t acks_min, uint64_t acks_max)
{
	static char why[400];
	static block_list before;
	static block_list after;
	pm_pool    *pool;
	pm_error	err;
	toy			t;
	model		m = {0};
	uint64_t	tail;
	const char *problem;

	if (pm_pool_open(path, PM_MODE_ADR, &pool, &err) != PM_OK)
		return "the image does not open";
	if ((problem = toy_attach(&t, pool)) != NULL || (problem = toy_recover(&t, false)) != NULL)
	{
		snprintf(why, sizeof(why), "%s", problem);
		pm_pool_close(pool);
		return why;
	}
	tail = olog_records_below(pm_load(&pm_olog_lane_at(pool, pm_olog_of(pool), 0)->tail), sizeof(op));
	for (uint64_t k = 0; k < tail; k++)
	{
		op			o = op_of(seed, k);

		model_apply(&m, &o);
	}
	why[0] = '\0';
	if (tail < acks_min || tail > acks_max)
		snprintf(why, sizeof(why), "the operation log holds %llu operations, not %llu to %llu",
				 (unsigned long long) tail, (unsigned long long) acks_min, (unsigned long long) acks_max);
	else if ((problem = toy_differs(&t, &m)) != NULL)
		snprintf(why, sizeof(why), "after %llu operations: %s", (unsigned long long) tail, problem);
	else
	{
		before.n = 0;
		pm_alloc_foreach(&t.a, list_block, &before);
		after.n = 0;
		if (recover_allocator(&t, &err) != PM_OK)
			snprintf(why, sizeof(why), "allocator recovery: %s", err.msg);
		pm_alloc_foreach(&t.a, list_block, &after);
		if (why[0] == '\0' && (before.n != after.n || memcmp(before.off, after.off, sizeof(uint64_t) * before.n) != 0))
			snprintf(why, sizeof(why), "the allocator holds %llu blocks, %llu reachable",
					 (unsigned long long) before.n, (unsigned long long) after.n);
	}
	pm_uno_detach(t.u);
	pm_pool_close(pool);
	return why[0] != '\0' ? why : NULL;
}

/* ---- the tests ---- */

/* Random operations on t through appliers 0..2, switching between handles u[0] and u[1]. */
static bool
random_ops(toy *t, pm_uno *u[2], uint64_t seed, int nops, model *m, uint64_t *freed, int *nfreed)
{
	pm_error	err;

	for (int k = 0; k < nops; k++)
	{
		op			o = op_of(seed, (uint64_t) k);
		uint64_t	f = 0;

		t->u = u[k % 5 == 0];
		if (toy_apply(t, (uint32_t) (k % NAPPLIERS), &o, &f, &err) != PM_OK)
		{
			tap_diag("operation %d: %s", k, err.msg);
			return false;
		}
		model_apply(m, &o);
		if (f != 0 && *nfreed < 1024)
			freed[(*nfreed)++] = f;
	}
	t->u = u[0];
	return true;
}

static uint64_t
blocks_of(const toy *t)
{
	pm_alloc_stats st;

	pm_alloc_get_stats(&t->a, &st);
	return st.blocks;
}

static uint64_t
log_blocks(pm_uno *u)
{
	pm_uno_stats st;

	pm_uno_get_stats(u, &st);
	return st.log_blocks;
}

static void
test_undo_and_frees(const char *path)
{
	pm_pool    *pool = harness_pool(path, PM_MODE_EADR, 64 << 20, PM_KIND_TEST, format_toy);
	toy			t;
	pm_uno	   *u[2];
	pm_error	err;
	model		m0 = {0};
	model		m = {0};
	uint64_t	freed[1024];
	int			nfreed = 0;
	bool		restored = true;
	bool		kept = true;
	bool		exact = true;
	pm_uno_stats st;

	if (toy_attach(&t, pool) != NULL)
		exit(2);
	u[0] = t.u;
	if (toy_attach(&t, pool) != NULL)
		exit(2);
	u[1] = t.u;
	t.u = u[0];
	for (uint64_t round = 1; round <= 4; round++)
	{
		uint64_t	blocks;
		uint64_t	logs;

		if (toy_checkpoint(&t, &err) != PM_OK)
			tap_diag("checkpoint: %s", err.msg);
		m0 = m;
		blocks = blocks_of(&t);
		logs = log_blocks(t.u);
		nfreed = 0;
		if (!random_ops(&t, u, round, ROUND_OPS, &m, freed, &nfreed) || toy_differs(&t, &m) != NULL)
			tap_diag("round %llu: the toy does not hold its operations", (unsigned long long) round);
		for (int i = 0; i < nfreed; i++)
			kept &= allocated(&t, freed[i]);
		pm_uno_get_stats(t.u, &st);
		if (round == 1)
			tap_ok(st.undo_records > 0 && st.allocs > 0 && st.frees > 0 && nfreed > 0,
				   "%d random operations logged %llu undo records (%llu bytes), %llu allocations, %llu frees",
				   ROUND_OPS, (unsigned long long) st.undo_records, (unsigned long long) st.undo_bytes,
				   (unsigned long long) st.allocs, (unsigned long long) st.frees);
		/* a crash now: the process's stores are all there (eadr) */
		if (pm_uno_recover(t.u, true, &err) != PM_OK)
			tap_diag("recover: %s", err.msg);
		restored &= toy_differs(&t, &m0) == NULL;
		exact &= blocks_of(&t) == blocks + log_blocks(t.u) - logs;
		m = m0;
		if (!restored)
			break;
	}
	tap_ok(restored, "4 rounds: recovery puts back the checkpoint's image (stores by 3 appliers, 2 handles)");
	tap_ok(kept, "a deleted node's block stays allocated until the checkpoint");
	tap_ok(exact, "recovery frees the blocks allocated since the checkpoint, and only those");

	/* a checkpoint performs the frees and keeps the rest */
	{
		bool		freed_now = true;

		nfreed = 0;
		random_ops(&t, u, 99, ROUND_OPS, &m, freed, &nfreed);
		if (toy_checkpoint(&t, &err) != PM_OK)
			tap_diag("checkpoint: %s", err.msg);
		for (int i = 0; i < nfreed; i++)
			freed_now &= !allocated(&t, freed[i]);
		pm_uno_get_stats(t.u, &st);
		tap_ok(freed_now && nfreed > 0 && st.undo_records == 0 && st.allocs == 0 && st.frees == 0 &&
			   toy_differs(&t, &m) == NULL,
			   "a checkpoint frees the %d deleted nodes' blocks and empties the logs", nfreed);
		if (pm_uno_recover(t.u, true, &err) != PM_OK)
			tap_diag("recover: %s", err.msg);
		tap_ok(toy_differs(&t, &m) == NULL, "recovery right after a checkpoint changes nothing");
	}

	/* coalescing: once per handle; never in a fresh block */
	{
		toy_root   *r = root_of(&t);
		uint64_t	before;
		uint64_t	fresh;

		pm_uno_get_stats(t.u, &st);
		before = st.undo_records;
		pm_uno_log(u[0], 0, &r->nodes, 8, &err);
		pm_uno_log(u[0], 1, &r->nodes, 8, &err);
		pm_uno_log(u[0], 0, (char *) &r->nodes + 4, 4, &err);
		pm_uno_log(u[1], 2, &r->nodes, 8, &err);
		fresh = pm_uno_alloc(u[0], 0, 4096, &err);
		pm_uno_log(u[0], 0, pm_pool_addr(pool, fresh + 1000), 3000, &err);
		pm_uno_get_stats(t.u, &st);
		tap_ok(fresh != 0 && st.undo_records == before + 2,
			   "a line is logged once per handle (%llu records), a fresh block's not at all",
			   (unsigned long long) (st.undo_records - before));
		if (toy_checkpoint(&t, &err) != PM_OK)
			tap_diag("checkpoint: %s", err.msg);
	}

	/* rollback: the failed operation's allocations freed at once, its frees forgotten */
	{
		uint64_t	blocks = blocks_of(&t);
		uint64_t	logs = log_blocks(t.u);
		uint64_t	node = root_of(&t)->bucket[0] != 0 ? root_of(&t)->bucket[0] : root_of(&t)->bucket[1];
		uint64_t	sp = pm_uno_savepoint(t.u, 1);
		bool		all = true;

		for (int i = 0; i < 3; i++)
			all &= pm_uno_alloc(t.u, 1, 1024, &err) != 0;
		all &= pm_uno_free(t.u, 1, node, &err) == PM_OK;
		pm_uno_rollback(t.u, 1, sp);
		pm_uno_get_stats(t.u, &st);
		if (toy_checkpoint(&t, &err) != PM_OK)
			tap_diag("checkpoint: %s", err.msg);
		tap_ok(all && node != 0 && blocks_of(&t) == blocks + log_blocks(t.u) - logs && allocated(&t, node) && st.allocs == 0 &&
			   st.frees == 0, "a rollback frees 3 allocations and forgets a free");
	}
	pm_uno_detach(u[1]);
	pm_uno_detach(u[0]);
	pm_pool_close(pool);
}

static pm_errcode
format_small_logs(pm_pool *pool, pm_error *err)
{
	pm_alloc	a;

	pm_alloc_attach_pool(&a, pool);
	return pm_uno_create(pool, &a, 1, 1, err);
}

static void
test_limits(const char *path)
{
	pm_pool    *pool = harness_pool(path, PM_MODE_EADR, 64 << 20, PM_KIND_TEST, format_small_logs);
	pm_alloc	a;
	pm_uno	   *u;
	pm_uno_host host = {0};
	pm_error	err;
	uint64_t	area;
	pm_uno_stats before;
	pm_uno_stats after;
	int			n = 0;
	pm_errcode	rc = PM_OK;

	pm_alloc_attach_pool(&a, pool);
	area = pm_alloc_block(&a, PM_ALLOC_MAX_BLOCK, &err);
	if (area == 0 || pm_uno_attach(pool, &a, &host, &u, &err) != PM_OK)
		exit(2);
	tap_ok(pm_uno_log(u, 0, pm_pool_addr(pool, area), PM_UNO_MAX_RANGE + 1, &err) == PM_ERR_INVALID,
		   "a range over %d bytes refused", PM_UNO_MAX_RANGE);
	for (; n < 1024; n++)
	{
		pm_uno_get_stats(u, &before);
		if ((rc = pm_uno_log(u, 0, pm_pool_addr(pool, area + 64 * n), 8, &err)) != PM_OK)
			break;
	}
	pm_uno_get_stats(u, &after);
	tap_ok(rc == PM_ERR_LIMIT && after.undo_records == before.undo_records && after.log_blocks == 1,
		   "an undo log of one block takes %d records and then refuses, unchanged (%s)", n, err.msg);
	for (n = 0; n < 4000; n++)
		if (pm_uno_alloc(u, 0, 64, &err) == 0)
			break;
	pm_uno_get_stats(u, &after);
	tap_ok(err.code == PM_ERR_LIMIT && after.allocs == (uint64_t) n && n == PM_UNO_PAYLOAD / sizeof(pm_uno_rec),
		   "an allocation log of one block takes %d allocations and then refuses", n);
	if (pm_uno_checkpoint(u, NULL, 0, &err) != PM_OK)
		tap_diag("checkpoint: %s", err.msg);
	tap_ok(pm_uno_log(u, 0, pm_pool_addr(pool, area + 64 * 1000), 8, &err) == PM_OK &&
		   pm_uno_alloc(u, 0, 64, &err) != 0, "after a checkpoint both take records again");
	pm_uno_detach(u);
	pm_pool_close(pool);
}

/* A host that holds one retired block back until reclaim frees it. */
typedef struct HeldBack
{
	pm_alloc   *a;
	uint64_t	held;
	int			calls;
} HeldBack;

static int
reclaim_held(void *ctx)
{
	HeldBack   *h = ctx;
	pm_error	err;

	h->calls++;
	if (h->held == 0 || pm_free_block(h->a, h->held, &err) != PM_OK)
		return 0;
	h->held = 0;
	return 1;
}

/*
 * A full pool: an allocation asks the host to reclaim what it retired and
 * tries again once; with nothing to reclaim it fails as before.
 */
static void
test_reclaim_when_full(const char *path)
{
	pm_pool    *pool = harness_pool(path, PM_MODE_EADR, 64 << 20, PM_KIND_TEST, format_small_logs);
	pm_alloc	a;
	HeldBack	h = {&a, 0, 0};
	pm_uno_host host = {.ctx = &h, .reclaim = reclaim_held};
	pm_uno	   *u;
	pm_error	err;
	uint64_t	last = 0;
	uint64_t	off;
	int			n = 0;

	pm_alloc_attach_pool(&a, pool);
	/* the allocation log's block first: an allocation's record needs it */
	if (pm_uno_attach(pool, &a, &host, &u, &err) != PM_OK || pm_uno_alloc(u, 0, 64, &err) == 0)
		exit(2);
	while ((off = pm_alloc_block(&a, PM_ALLOC_MAX_BLOCK, &err)) != 0)
	{
		last = off;
		n++;
	}
	if (!pm_errcode_is_out_of_space(err.code) || last == 0)
		exit(2);
	off = pm_uno_alloc(u, 0, PM_ALLOC_MAX_BLOCK, &err);
	tap_ok(off == 0 && pm_errcode_is_out_of_space(err.code) && h.calls == 1,
		   "a full pool (%d blocks) with nothing retired: the allocation asks once and fails", n);
	h.held = last;
	off = pm_uno_alloc(u, 0, PM_ALLOC_MAX_BLOCK, &err);
	tap_ok(off == last && h.calls == 2 && h.held == 0,
		   "with a block retired, the allocation reclaims it and gets it");
	pm_uno_detach(u);
	pm_pool_close(pool);
}

/* Change a word, expect validation to refuse it, put it back. */
static bool
refused(pm_pool *pool, uint64_t *word, uint64_t value, const char *what)
{
	uint64_t	saved = *word;
	pm_error	err;
	bool		ok;

	*word = value;
	ok = pm_uno_validate(pool, &err) == PM_ERR_CORRUPT;
	*word = saved;
	if (!ok)
		tap_diag("%s: not refused", what);
	return ok && pm_uno_validate(pool, &err) == PM_OK;
}

static void
test_damage(const char *path)
{
	pm_pool    *pool = harness_pool(path, PM_MODE_EADR, 64 << 20, PM_KIND_TEST, format_toy);
	toy			t;
	pm_error	err;
	model		m = {0};
	uint64_t	freed[1024];
	int			nfreed = 0;
	pm_uno	   *u[2];
	pm_uno_dir *d;
	pm_uno_block *b;
	pm_uno_rec *r;
	uint64_t	magic;
	bool		all = true;

	if (toy_attach(&t, pool) != NULL)
		exit(2);
	u[0] = u[1] = t.u;
	random_ops(&t, u, 7, 100, &m, freed, &nfreed);
	d = pm_pool_addr(pool, pm_pool_root(pool, PM_UNO_ROOT));
	b = pm_pool_addr(pool, d->ulog[0].first);
	r = (pm_uno_rec *) b->data;
	tap_ok(pm_uno_validate(pool, &err) == PM_OK, "the logs validate");
	all &= refused(pool, &d->magic, 0, "magic");
	all &= refused(pool, (uint64_t *) &d->version, (uint64_t) (PM_UNO_MAX_APPLIERS + 1) << 32 | d->version,
				   "appliers");
	all &= refused(pool, &b->next, d->ulog[0].first, "a chain that loops");
	all &= refused(pool, &b->next, 12345, "a link outside the blocks");
	all &= refused(pool, &d->ulog[1].first, pm_pool_size(pool) - 100, "a first block outside the pool");
	all &= refused(pool, &d->ulog[0].head, d->ulog[0].head + 2 * PM_UNO_PAYLOAD, "a head past the blocks");
	all &= refused(pool, &d->ulog[0].tail_index, 7, "a tail hint outside the chain");
	all &= refused(pool, &r->off, 64, "a record in the pool header");
	all &= refused(pool, &r->off, pm_pool_size(pool) + 4096, "a record past the pool");
	all &= refused(pool, (uint64_t *) &r->len, (uint64_t) PM_UNO_REC_UNDO << 32 | 100, "an undo record of part of a line");
	all &= refused(pool, (uint64_t *) &r->len, (uint64_t) 9 << 32 | 64, "a record of no kind");
	r = (pm_uno_rec *) ((pm_uno_block *) pm_pool_addr(pool, d->mlog[0].first))->data;
	all &= refused(pool, &r->off, r->off + 8, "an allocation record inside a block");
	tap_ok(all, "damaged directory, chains, heads, hints and records refused (each: PM_ERR_CORRUPT)");
	pm_uno_detach(t.u);
	magic = d->magic;
	d->magic = 0;
	tap_ok(toy_attach(&t, pool) != NULL, "a damaged directory does not attach");
	d->magic = magic;
	if (toy_attach(&t, pool) != NULL)
		exit(2);

	/* allocator recovery: only once the logs are empty; it keeps their blocks */
	{
		bool		overlap = false;
		pm_errcode	rc;

		tap_ok(pm_uno_mark(&t.a, pool, &err) == PM_ERR_INVALID, "allocator recovery refused while the logs hold records");
		if (pm_uno_recover(t.u, false, &err) != PM_OK)
			tap_diag("recover: %s", err.msg);
		rc = recover_allocator(&t, &err);
		for (int i = 0; rc == PM_OK && i < 64; i++)
		{
			uint64_t	blk = pm_alloc_block(&t.a, PM_ALLOC_MAX_BLOCK, &err);

			for (uint32_t k = 0; k < NAPPLIERS; k++)
				for (int m2 = 0; m2 < 2; m2++)
					for (uint64_t off = (m2 ? d->mlog : d->ulog)[k].first; off != 0;
						 off = ((pm_uno_block *) pm_pool_addr(pool, off))->next)
						overlap |= blk == off;
		}
		tap_ok(rc == PM_OK && !overlap && pm_uno_validate(pool, &err) == PM_OK,
			   "after recovery, allocator recovery keeps the logs' blocks");
	}
	pm_uno_detach(t.u);
	pm_pool_close(pool);
}

static void
test_recovery_killed(const char *path, const char *work)
{
	pm_pool    *pool = harness_pool(path, PM_MODE_EADR, 64 << 20, PM_KIND_TEST, format_toy);
	toy			t;
	pm_uno	   *u[2];
	pm_error	err;
	model		m = {0};
	model		m0;
	uint64_t	freed[1024];
	int			nfreed = 0;
	uint64_t	blocks;
	uint64_t	logs;
	uint64_t	npauses;
	int			bad = 0;

	if (toy_attach(&t, pool) != NULL)
		exit(2);
	u[0] = u[1] = t.u;
	random_ops(&t, u, 11, 150, &m, freed, &nfreed);
	if (toy_checkpoint(&t, &err) != PM_OK)
		tap_diag("checkpoint: %s", err.msg);
	m0 = m;
	blocks = blocks_of(&t);
	logs = log_blocks(t.u);
	random_ops(&t, u, 12, 150, &m, freed, &nfreed);
	logs = log_blocks(t.u) - logs;
	pm_uno_detach(t.u);
	pm_pool_close(pool);

	if (!copy_file(path, work))
		exit(2);
	npauses = recover_child(work, 0);
	for (uint64_t at = 1; at <= npauses; at++)
	{
		const char *why = NULL;

		if (!copy_file(path, work))
			exit(2);
		recover_child(work, at);
		if (pm_pool_open(work, PM_MODE_EADR, &pool, &err) != PM_OK || toy_attach(&t, pool) != NULL)
			why = "does not open";
		else if (pm_uno_recover(t.u, true, &err) != PM_OK)
			why = err.msg;
		else if ((why = toy_differs(&t, &m0)) == NULL && blocks_of(&t) != blocks + logs)
			why = "the allocator is not exact";
		if (why != NULL && bad++ < MAX_REPORT)
			tap_diag("killed at step %llu: %s", (unsigned long long) at, why);
		pm_uno_detach(t.u);
		pm_pool_close(pool);
	}
	tap_ok(npauses > 30 && bad == 0,
		   "recovery killed at each of its %llu steps (undo, frees) and run again: the checkpoint's state, the allocator exact",
		   (unsigned long long) npauses);
}

static void
test_power_failures(const char *path, const char *work, const char *image, const char *image2)
{
	child		c = {0};
	crash_workload w = {&c, child_open, child_step, NULL};
	uint64_t	points = 0;
	uint64_t	recovery_points = 0;
	int			failures = 0;
	int			recovery_failures = 0;
	int			images = 0;

	crash_report_map();
	pm_pool_close(harness_pool(path, PM_MODE_ADR, 16 << 20, PM_KIND_TEST, format_toy));
	for (c.seed = 1; c.seed <= 2; c.seed++)
	{
		uint64_t	events;
		uint64_t	acks;
		uint64_t	image_at;

		c.recovering = false;
		if (!copy_file(path, work))
			exit(2);
		events = crash_run_adr_child(&w, work, 0, image, 1, CRASH_OPS) == 1 ? crash_rep->total_events : 0;
		if (c.seed == 1)
			tap_ok(events > 10 * CRASH_OPS, "the workload runs to its end (%llu persistence events)",
				   (unsigned long long) events);
		image_at = events / 4;
		for (uint64_t at = 1; at <= events; at += EVENT_STRIDE)
		{
			const char *why;
			bool		keep = at >= image_at;

			if (!copy_file(path, work) || crash_run_adr_child(&w, work, at, image, at * 7 + c.seed, CRASH_OPS) != 0)
			{
				if (failures++ < MAX_REPORT)
					tap_diag("seed %llu event %llu: the child did not crash (%s)", (unsigned long long) c.seed,
							 (unsigned long long) at, crash_rep->msg);
				continue;
			}
			points++;
			acks = crash_rep->completed;
			/* check_image recovers the image in place: keep a copy of one every quarter */
			if (keep && !copy_file(image, image2))
				exit(2);
			if ((why = check_image(image, c.seed, acks, acks + 1)) != NULL && failures++ < MAX_REPORT)
				tap_diag("seed %llu event %llu: %s", (unsigned long long) c.seed, (unsigned long long) at, why);

			/* that copy: a power failure at every event of its recovery */
			if (keep)
			{
				child		r = {c.seed, true, {0}};
				crash_workload rw = {&r, child_open, child_step, NULL};
				uint64_t	rev;

				if (!copy_file(image2, work))
					exit(2);
				rev = crash_run_adr_child(&rw, work, 0, image, 1, 1) == 1 ? crash_rep->total_events : 0;
				image_at += events / 4;
				images++;
				for (uint64_t rat = 1; rat <= rev; rat += EVENT_STRIDE)
				{
					if (!copy_file(image2, work) || crash_run_adr_child(&rw, work, rat, image, rat, 1) != 0)
					{
						if (recovery_failures++ < MAX_REPORT)
							tap_diag("recovery event %llu: the child did not crash (%s)", (unsigned long long) rat,
									 crash_rep->msg);
						continue;
					}
					recovery_points++;
					if ((why = check_image(image, c.seed, acks, acks + 1)) != NULL && recovery_failures++ < MAX_REPORT)
						tap_diag("recovery event %llu: %s", (unsigned long long) rat, why);
				}
				if (rev == 0)
					recovery_failures++;
			}
		}
	}
	tap_ok(failures == 0, "%llu power failures (" EVENTS " of 2 workloads): after recovery and redo, every "
		   "acknowledged operation and nothing else, the allocator exactly the reachable blocks",
		   (unsigned long long) points);
	tap_ok(recovery_failures == 0 && recovery_points > 100 / EVENT_STRIDE,
		   "%llu power failures during the recovery of %d of those images (" EVENTS "): recovered again, the same",
		   (unsigned long long) recovery_points, images);
}

int
main(void)
{
	char	   *dir = tap_tmpdir("uno");
	char		path[600];
	char		work[600];
	char		image[600];
	char		image2[600];

	tap_plan(23);
	snprintf(path, sizeof(path), "%s/pool.pm", dir);
	snprintf(work, sizeof(work), "%s/work.pm", dir);
	snprintf(image, sizeof(image), "%s/image.pm", dir);
	snprintf(image2, sizeof(image2), "%s/image2.pm", dir);
	test_undo_and_frees(path);
	test_limits(path);
	test_reclaim_when_full(path);
	test_damage(path);
	test_recovery_killed(path, work);
	test_power_failures(path, work, image, image2);
	return tap_done();
}
