/*
 * pmhash_build.c
 *	  The hash table's life cycle (create, attach, recovery, allocator
 *	  marks) and its inspection (statistics, the check of its invariants).
 */
#include "pmhash_internal.h"

#include <stdio.h>
#include <stdlib.h>

#define SEG_BYTES	(PMHASH_SEG_SLOTS * sizeof(uint64_t))

/* What is wrong with the pool's meta block, or NULL: attach and the check refuse it. */
static const char *
meta_problem(const pm_pool *pool)
{
	uint64_t	off = pm_pool_root(pool, 0);
	const pmhash_meta *m;
	uint64_t	n;

	if (!pm_alloc_block_in_pool(pool, off, sizeof(pmhash_meta)))
		return "names no hash meta block";
	m = pm_pool_addr(pool, off);
	n = pm_load(&m->nbuckets);
	if (m->magic != PMHASH_MAGIC || m->version != PMHASH_VERSION || m->min_depth > PMHASH_MAX_MIN_DEPTH ||
		pm_load(&m->run_tag) > UINT32_MAX)
		return "has a damaged hash meta block";
	if (n < (UINT64_C(1) << m->min_depth) || n > PMHASH_MAX_BUCKETS)
		return "has a hash table of a bucket count it cannot have";
	for (uint64_t k = 0; k <= (n - 1) / PMHASH_SEG_SLOTS; k++)
		if (!pm_alloc_block_in_pool(pool, pm_load(&m->seg[k]), SEG_BYTES))
			return "has a hash table whose segment is outside the pool";
	return NULL;
}

pm_errcode
pmhash_create(pm_pool *pool, pm_alloc *a, uint32_t min_depth, pm_error *err)
{
	uint64_t	meta_off;
	uint64_t	seg_off;
	pmhash_meta *m;
	uint64_t   *seg;

	if (min_depth > PMHASH_MAX_MIN_DEPTH)
		return pm_error_set(err, PM_ERR_INVALID, 0, "pool file \"%s\": a hash table of 2^%u buckets",
							pool->path, min_depth);
	/* blocks allocated before a failure are unreachable: allocator recovery frees them */
	if ((meta_off = pm_alloc_block(a, sizeof(pmhash_meta), err)) == 0 ||
		(seg_off = pm_alloc_block(a, SEG_BYTES, err)) == 0)
		return err->code;
	m = pm_pool_addr(pool, meta_off);
	memset(m, 0, sizeof(*m));
	m->magic = PMHASH_MAGIC;
	m->version = PMHASH_VERSION;
	m->min_depth = min_depth;
	m->run_tag = 1;
	m->nbuckets = UINT64_C(1) << min_depth;
	m->seg[0] = seg_off;
	seg = pm_pool_addr(pool, seg_off);
	memset(seg, 0, SEG_BYTES);
	for (uint64_t b = 0; b < m->nbuckets; b++)
	{
		pmhash_block *blk;

		if ((seg[b] = pm_alloc_block(a, PMHASH_BLOCK, err)) == 0)
			return err->code;
		blk = pmhash_block_at(pool, seg[b]);
		pmhash_block_init(blk, m->run_tag << 32, b, min_depth);
		pm_persist(&pool->persist, blk, offsetof(pmhash_block, hash));
	}
	pm_persist(&pool->persist, seg, SEG_BYTES);
	pm_persist(&pool->persist, m, sizeof(*m));
	pm_pool_set_root(pool, 0, meta_off);
	return PM_OK;
}

pm_errcode
pmhash_attach(pmhash_table *t, pm_pool *pool, pm_uno *uno, pm_epoch_handle *epoch, pm_error *err)
{
	const char *problem = meta_problem(pool);

	if (problem != NULL)
		return pm_error_set(err, PM_ERR_CORRUPT, 0, "pool file \"%s\" %s", pool->path, problem);
	memset(t, 0, sizeof(*t));
	t->pool = pool;
	t->uno = uno;
	t->epoch = epoch;
	return PM_OK;
}

void
pmhash_detach(pmhash_table *t)
{
	pmhash_batch_free(&t->found);
}

void
pmhash_recover(pmhash_table *t)
{
	pmhash_meta *m = pmhash_meta_of(t->pool);

	/* not logged: undo brings back the tag of the run that logged it, no later one */
	pm_store(&m->run_tag, (m->run_tag + 1) & UINT32_MAX);
	pm_persist(&t->pool->persist, &m->run_tag, sizeof(uint64_t));
}

/*
 * Walk bucket b's chain: fn(ctx, offset, block) for each block, false from
 * fn stopping it; PM_ERR_CORRUPT if the chain names no block or loops
 * (Brent's cycle detection: a loop is found within twice its length).
 */
static pm_errcode
walk_bucket(const pm_pool *pool, const pmhash_meta *m, uint64_t b,
			bool (*fn) (void *ctx, uint64_t off, const pmhash_block *blk), void *ctx, pm_error *err)
{
	uint64_t	off = pmhash_bucket_off(pool, m, b);
	uint64_t	mark = off;
	uint64_t	power = 1;
	uint64_t	steps = 0;

	while (off != 0)
	{
		const pmhash_block *blk = pmhash_block_at(pool, off);

		if (blk->n > PMHASH_BLOCK_CAP || !fn(ctx, off, blk))
			break;
		if ((off = blk->next) == 0)
			return PM_OK;
		if (!pmhash_block_ok(pool, off) || off == mark)
			break;
		if (++steps == power)
		{
			mark = off;
			power *= 2;
			steps = 0;
		}
	}
	return pm_error_set(err, PM_ERR_CORRUPT, 0, "pool file \"%s\": hash bucket %llu is damaged",
						pool->path, (unsigned long long) b);
}

static bool
mark_block(void *ctx, uint64_t off, const pmhash_block *blk)
{
	pm_error	err;

	(void) blk;
	/* a block named twice, a loop too, fails to mark */
	return pm_alloc_mark(ctx, off, &err) == PM_OK;
}

pm_errcode
pmhash_mark(pm_alloc *a, pm_pool *pool, pm_error *err)
{
	const char *problem = meta_problem(pool);
	const pmhash_meta *m;
	pm_errcode	rc = PM_OK;

	if (problem != NULL)
		return pm_error_set(err, PM_ERR_CORRUPT, 0, "pool file \"%s\" %s", pool->path, problem);
	m = pmhash_meta_of(pool);
	for (uint64_t k = 0; rc == PM_OK && k < PMHASH_MAX_SEGS; k++)
	{
		uint64_t	seg = pm_load(&m->seg[k]);

		if (seg != 0 && !pm_alloc_block_in_pool(pool, seg, SEG_BYTES))
			rc = pm_error_set(err, PM_ERR_CORRUPT, 0, "pool file \"%s\": hash segment %llu is outside the pool",
							  pool->path, (unsigned long long) k);
		else if (seg != 0)
			rc = pm_alloc_mark(a, seg, err);
	}
	for (uint64_t b = 0; rc == PM_OK && b < pm_load(&m->nbuckets); b++)
		rc = walk_bucket(pool, m, b, mark_block, a, err);
	return rc;
}

/* ---- statistics ---- */

typedef struct chain_stats
{
	uint64_t	blocks;
	uint64_t	entries;
} chain_stats;

static bool
count_block(void *ctx, uint64_t off, const pmhash_block *blk)
{
	chain_stats *cs = ctx;

	(void) off;
	cs->blocks++;
	cs->entries += blk->n;
	return true;
}

pm_errcode
pmhash_get_stats(pmhash_table *t, pmhash_stats *st, pm_error *err)
{
	const pmhash_meta *m = pmhash_meta_of(t->pool);

	memset(st, 0, sizeof(*st));
	st->buckets = pm_load(&m->nbuckets);
	st->bytes = pm_alloc_class_size(sizeof(pmhash_meta));
	for (uint64_t k = 0; k < PMHASH_MAX_SEGS; k++)
		st->bytes += pm_load(&m->seg[k]) != 0 ? SEG_BYTES : 0;
	for (int i = 0; i < PM_UNO_MAX_APPLIERS; i++)
		st->counted += m->count[i].n;
	for (uint64_t b = 0; b < st->buckets; b++)
	{
		chain_stats cs = {0, 0};
		pm_errcode	rc = walk_bucket(t->pool, m, b, count_block, &cs, err);

		if (rc != PM_OK)
			return rc;
		st->blocks += cs.blocks;
		st->entries += cs.entries;
		st->chains[cs.blocks < 4 ? cs.blocks - 1 : 3]++;
		if (cs.blocks > st->longest)
			st->longest = cs.blocks;
	}
	st->bytes += st->blocks * PMHASH_BLOCK;
	return PM_OK;
}

/* ---- the check ---- */

typedef struct checker
{
	const pm_pool *pool;
	uint64_t	bucket;
	uint32_t	depth;
	char	   *why;			/* the first problem, in a static buffer */
	uint64_t   *blocks;			/* every block, to find one named twice */
	uint64_t	nblocks;
	uint64_t	blocks_cap;
	pmhash_entry *e;			/* the bucket's entries */
	uint64_t	n;
	uint64_t	cap;
	const pmhash_block *last;
} checker;

static int
entry_order(const void *a, const void *b)
{
	const pmhash_entry *x = a;
	const pmhash_entry *y = b;

	if (x->hash != y->hash)
		return x->hash < y->hash ? -1 : 1;
	return x->rest < y->rest ? -1 : x->rest > y->rest;
}

static int
offset_order(const void *a, const void *b)
{
	uint64_t	x = *(const uint64_t *) a;
	uint64_t	y = *(const uint64_t *) b;

	return x < y ? -1 : x > y;
}

static bool
check_block(void *ctx, uint64_t off, const pmhash_block *blk)
{
	checker    *c = ctx;

	if (c->last != NULL && c->last->n != PMHASH_BLOCK_CAP)
		snprintf(c->why, 256, "bucket %llu has a block that is not full before its last",
				 (unsigned long long) c->bucket);
	else if (blk->bucket != c->bucket)
		snprintf(c->why, 256, "bucket %llu has a block of bucket %llu", (unsigned long long) c->bucket,
				 (unsigned long long) blk->bucket);
	else if (c->last != NULL && blk->n == 0)
		snprintf(c->why, 256, "bucket %llu ends in an empty block", (unsigned long long) c->bucket);
	if (c->why[0] != '\0')
		return false;
	if (c->nblocks == c->blocks_cap || c->n + PMHASH_BLOCK_CAP > c->cap)
	{
		uint64_t   *more_blocks = c->nblocks == c->blocks_cap ?
			realloc(c->blocks, (c->blocks_cap = 2 * c->blocks_cap + 64) * sizeof(uint64_t)) : c->blocks;
		pmhash_entry *more_e = c->n + PMHASH_BLOCK_CAP > c->cap ?
			realloc(c->e, (c->cap = 2 * c->cap + PMHASH_BLOCK_CAP) * sizeof(pmhash_entry)) : c->e;

		if (more_blocks != NULL)
			c->blocks = more_blocks;
		if (more_e != NULL)
			c->e = more_e;
		if (more_blocks == NULL || more_e == NULL)
		{
			snprintf(c->why, 256, "out of memory to check the table");
			return false;
		}
	}
	c->blocks[c->nblocks++] = off;
	for (uint32_t i = 0; i < blk->n; i++)
	{
		if (blk->rest[i] == 0 || (blk->hash[i] & ((UINT64_C(1) << c->depth) - 1)) != c->bucket)
		{
			snprintf(c->why, 256, "bucket %llu holds an entry (%u, %llu) that is not its own",
					 (unsigned long long) c->bucket, blk->hash[i], (unsigned long long) blk->rest[i]);
			return false;
		}
		c->e[c->n].hash = blk->hash[i];
		c->e[c->n++].rest = blk->rest[i];
	}
	c->last = blk;
	return true;
}

/* The problem of bucket b, into c->why (empty: none). */
static void
check_bucket(checker *c, const pmhash_meta *m, uint64_t b, uint64_t n, uint64_t tag)
{
	int			level = pmhash_level(n);
	uint64_t	split = n - (UINT64_C(1) << level);
	uint64_t	off = pmhash_bucket_off(c->pool, m, b);
	const pmhash_block *p;
	pm_error	err;

	if (off == 0)
	{
		snprintf(c->why, 256, "bucket %llu names no block", (unsigned long long) b);
		return;
	}
	p = pmhash_block_at(c->pool, off);
	c->bucket = b;
	c->depth = b < split || b >= (UINT64_C(1) << level) ? level + 1 : level;
	c->n = 0;
	c->last = NULL;
	if (p->depth != c->depth)
		snprintf(c->why, 256, "bucket %llu has depth %u, not %u", (unsigned long long) b, p->depth, c->depth);
	else if (p->word >> 32 == tag && (p->word & (WORD_LOCKED | WORD_MODIFYING)))
		snprintf(c->why, 256, "bucket %llu is locked", (unsigned long long) b);
	else if (walk_bucket(c->pool, m, b, check_block, c, &err) != PM_OK && c->why[0] == '\0')
		snprintf(c->why, 256, "%s", err.msg);
	if (c->why[0] != '\0')
		return;
	qsort(c->e, c->n, sizeof(pmhash_entry), entry_order);
	for (uint64_t i = 1; i < c->n; i++)
		if (entry_order(&c->e[i - 1], &c->e[i]) == 0)
		{
			snprintf(c->why, 256, "bucket %llu holds entry (%u, %llu) twice", (unsigned long long) b,
					 c->e[i].hash, (unsigned long long) c->e[i].rest);
			return;
		}
}

const char *
pmhash_check(pmhash_table *t, uint64_t *entries)
{
	static char why[256];
	const pmhash_meta *m = pmhash_meta_of(t->pool);
	const char *problem = meta_problem(t->pool);
	checker		c = {0};
	uint64_t	n;
	uint64_t	tag;
	uint64_t	counted = 0;

	c.pool = t->pool;
	c.why = why;
	why[0] = '\0';
	*entries = 0;
	if (problem != NULL)
	{
		snprintf(why, sizeof(why), "the pool %s", problem);
		return why;
	}
	n = pm_load(&m->nbuckets);
	tag = pm_load(&m->run_tag);
	if (m->split_lock >> 32 == tag && (m->split_lock & 1))
		snprintf(why, sizeof(why), "the split lock is held");
	for (uint64_t b = 0; why[0] == '\0' && b < n; b++)
	{
		check_bucket(&c, m, b, n, tag);
		*entries += c.n;
	}
	/* a bucket is published only with the count that includes it */
	for (uint64_t b = n; why[0] == '\0' && b < PMHASH_MAX_BUCKETS; b++)
	{
		uint64_t   *slot = pmhash_slot(t->pool, m, b);

		if (slot == NULL)
			b += PMHASH_SEG_SLOTS - 1 - b % PMHASH_SEG_SLOTS;
		else if (*slot != 0)
			snprintf(why, sizeof(why), "bucket %llu is published past the bucket count %llu",
					 (unsigned long long) b, (unsigned long long) n);
	}
	if (why[0] == '\0')
	{
		qsort(c.blocks, c.nblocks, sizeof(uint64_t), offset_order);
		for (uint64_t i = 1; i < c.nblocks; i++)
			if (c.blocks[i - 1] == c.blocks[i])
				snprintf(why, sizeof(why), "the block at offset %llu is in two chains",
						 (unsigned long long) c.blocks[i]);
	}
	for (int i = 0; i < PM_UNO_MAX_APPLIERS; i++)
		counted += m->count[i].n;
	if (why[0] == '\0' && counted != *entries)
		snprintf(why, sizeof(why), "the appliers count %llu entries, the buckets hold %llu",
				 (unsigned long long) counted, (unsigned long long) *entries);
	free(c.blocks);
	free(c.e);
	return why[0] != '\0' ? why : NULL;
}
