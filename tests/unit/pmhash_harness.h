/*
 * pmhash_harness.h
 *	  Shared set-up for the hash table's tests: a pool holding the table, its
 *	  UNO logs and a one-lane operation log; a process's handle (allocator,
 *	  UNO handle, an epoch participant through which checkpoints retire the
 *	  blocks they free); a thread's handle on the table; and the entries the
 *	  tests use, whose hash codes a model knows.
 */
#ifndef PM_PMHASH_HARNESS_H
#define PM_PMHASH_HARNESS_H

#include "harness_common.h"
#include "olog.h"
#include "pmhash.h"
#include "recon.h"

#define HASH_APPLIERS	8
#define HOT_IDS			400		/* ids 0 .. HOT_IDS - 1 share one hash code */

/* A bijection of 32-bit words (murmur3's finalizer). */
static inline uint32_t
mix32(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x85ebca6b;
	x ^= x >> 13;
	x *= 0xc2b2ae35;
	x ^= x >> 16;
	return x;
}

/*
 * Entry id's hash code: ids 2k and 2k + 1 share one, the hot ids another
 * (of a k no id has), so equal codes of distinct entries are everywhere and
 * one chain is too long for any split to shorten.
 */
static inline uint32_t
hash_of(uint64_t id)
{
	return id < HOT_IDS ? mix32(UINT32_MAX) : mix32((uint32_t) (id >> 1));
}

static inline pmhash_entry
entry_of(uint64_t id)
{
	pmhash_entry e = {hash_of(id), id + 1};

	return e;
}

typedef struct hash_process
{
	pm_pool    *pool;
	pm_alloc	a;
	pm_uno	   *uno;
	pm_epoch_domain *dom;
	pm_epoch_handle epoch;		/* the checkpointer's */
} hash_process;

static void
hash_free(void *ctx, uint32_t space, uint32_t tag, uint64_t off)
{
	hash_process *hp = ctx;
	pm_error	err;

	(void) space;
	(void) tag;
	pm_free_block(&hp->a, off, &err);
}

/* A checkpoint's frees: lock-free readers may still read the blocks. */
static void
hash_release(void *ctx, uint64_t off)
{
	hash_process *hp = ctx;

	pm_epoch_retire(&hp->epoch, SPACE_PM, 0, off);
}

/*
 * UNO logs of log_blocks blocks (0: the default) for HASH_APPLIERS, an empty
 * table, a one-lane operation log.
 */
static inline pm_errcode
hash_format_logs(pm_pool *pool, uint32_t log_blocks, pm_error *err)
{
	pm_alloc	a;
	pm_errcode	rc;

	pm_alloc_attach_pool(&a, pool);
	if ((rc = pm_uno_create(pool, &a, HASH_APPLIERS, log_blocks, err)) != PM_OK ||
		(rc = pmhash_create(pool, &a, 0, err)) != PM_OK)
		return rc;
	return pm_olog_create(pool, &a, 1, 64, err);
}

/* harness_pool's format, with logs of the default size. */
static inline pm_errcode
hash_format(pm_pool *pool, pm_error *err)
{
	return hash_format_logs(pool, 0, err);
}

/*
 * A process's handle on pool; its epoch participant (token) is the
 * checkpointer's.  host's advance (if not NULL) is the checkpoints'.  false
 * and a message on failure.
 */
static inline bool
hash_process_attach(hash_process *hp, pm_pool *pool, pm_epoch_domain *dom, uint64_t token,
					void (*advance) (void *ctx, const uint64_t *pos, uint32_t npos))
{
	pm_uno_host host = {.advance = advance, .release = hash_release, .ctx = hp};
	pm_error	err;

	hp->pool = pool;
	hp->dom = dom;
	pm_alloc_attach_pool(&hp->a, pool);
	if (!harness_register(dom, token, hash_free, hp, &hp->epoch))
		return false;
	if (pm_uno_attach(pool, &hp->a, &host, &hp->uno, &err) != PM_OK)
	{
		fprintf(stderr, "uno attach: %s\n", err.msg);
		return false;
	}
	return true;
}

static inline void
hash_process_detach(hash_process *hp)
{
	pm_uno_detach(hp->uno);
	pm_epoch_unregister(&hp->epoch);
}

/* A thread's handle on the table, with its own epoch participant (token). */
static inline bool
hash_table_attach(pmhash_table *t, pm_epoch_handle *epoch, hash_process *hp, uint64_t token)
{
	pm_error	err;

	if (!harness_register(hp->dom, token, hash_free, hp, epoch))
		return false;
	if (pmhash_attach(t, hp->pool, hp->uno, epoch, &err) != PM_OK)
	{
		fprintf(stderr, "hash attach: %s\n", err.msg);
		return false;
	}
	return true;
}

/* A lookup's rests, collected. */
typedef struct rests
{
	uint64_t	n;
	uint64_t	r[HOT_IDS + 8];
} rests;

static void
collect_rest(void *ctx, uint64_t rest)
{
	rests	   *rs = ctx;

	if (rs->n < HOT_IDS + 8)
		rs->r[rs->n] = rest;
	rs->n++;
}

/*
 * Allocator recovery of a hash pool: the roots and the operation log
 * (pm_recon_mark_roots), the UNO logs' blocks, the table's.
 */
static inline pm_errcode
hash_recover_allocator(pm_alloc *a, pm_pool *pool, pm_error *err)
{
	pm_errcode	rc;

	pm_alloc_recover_begin(a);
	if ((rc = pm_recon_mark_roots(a, pool, err)) != PM_OK ||
		(rc = pm_uno_mark(a, pool, err)) != PM_OK || (rc = pmhash_mark(a, pool, err)) != PM_OK)
		return rc;
	pm_alloc_recover_end(a);
	return PM_OK;
}

#endif							/* PM_PMHASH_HARNESS_H */
