/*
 * pmhash_ops.c
 *	  The hash table's operations: insert, delete, the split, lookup, scan
 *	  (README.md: Operations).  The logic is volatile; each store to the
 *	  pool follows a pm_uno_log of its range, and blocks come and go
 *	  through pm_uno_alloc and pm_uno_free: those calls are all there is of
 *	  persistence.
 */
#include "pmhash_internal.h"

#include <stdlib.h>

/* ---- a bucket's word ---- */

/* Take bucket p's lock; one of an earlier run (another tag) is free. */
static void
bucket_lock(pmhash_block *p, uint64_t tag)
{
	for (unsigned attempt = 0;; attempt++)
	{
		uint64_t	w = pm_load(&p->word);
		bool		this_run = w >> 32 == tag;

		if (!(this_run && (w & WORD_LOCKED)) &&
			pm_cas(&p->word, &w, (this_run ? w : tag << 32) | WORD_LOCKED))
			return;
		pm_spin_delay(attempt);
	}
}

/* The holder starts storing: readers wait, and retry once it unlocks. */
static void
bucket_modify(pmhash_block *p)
{
	pm_store_relaxed(&p->word, pm_load_relaxed(&p->word) | WORD_MODIFYING);
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

/* Release; the version moves if the holder stored. */
static void
bucket_unlock(pmhash_block *p)
{
	uint64_t	w = pm_load_relaxed(&p->word);
	uint64_t	version = w & WORD_VERSION_MASK;

	if (w & WORD_MODIFYING)
		version = (version + 4) & WORD_VERSION_MASK;
	pm_store(&p->word, (w & ~UINT64_C(0xffffffff)) | version);
}

/* The word a lock-free read of bucket p validates against, once no writer of this run stores. */
static uint64_t
read_begin(const pmhash_block *p, uint64_t tag)
{
	for (unsigned attempt = 0;; attempt++)
	{
		uint64_t	w = pm_load(&p->word);

		if (!(w >> 32 == tag && (w & WORD_MODIFYING)))
			return w & ~WORD_LOCKED;
		pm_spin_delay(attempt);
	}
}

/* Did what was read since read_begin gave w come from one state of the bucket? */
static bool
read_valid(const pmhash_block *p, uint64_t w)
{
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return (pm_load_relaxed(&p->word) & ~WORD_LOCKED) == w;
}

static pm_errcode
damaged(const pmhash_table *t, uint64_t bucket, pm_error *err)
{
	return pm_error_set(err, PM_ERR_CORRUPT, 0, "pool file \"%s\": hash bucket %llu is damaged",
						t->pool->path, (unsigned long long) bucket);
}

/* ---- writers ---- */

/*
 * Lock the bucket that holds hash code h, following splits; *out its first
 * block's offset.
 */
static pm_errcode
lock_bucket(pmhash_table *t, const pmhash_meta *m, uint32_t h, uint64_t *out, pm_error *err)
{
	uint64_t	tag = pm_load(&m->run_tag);
	uint64_t	b = pmhash_bucket_for(h, pm_load(&m->nbuckets));

	for (;;)
	{
		uint64_t	off = pmhash_bucket_off(t->pool, m, b);
		pmhash_block *p;
		uint64_t	next;

		if (off == 0)
			return damaged(t, b, err);
		p = pmhash_block_at(t->pool, off);
		bucket_lock(p, tag);
		if (p->depth > 32 || p->bucket != b)
		{
			bucket_unlock(p);
			return damaged(t, b, err);
		}
		if ((next = pmhash_redirect(h, b, p->depth)) == b)
		{
			*out = off;
			return PM_OK;
		}
		bucket_unlock(p);
		b = next;
	}
}

/* Where a locked bucket's chain holds an entry, and its end. */
typedef struct chain_pos
{
	pmhash_block *blk;			/* the block holding the entry; NULL: none */
	uint32_t	i;
	pmhash_block *last;
	uint64_t	last_off;
	pmhash_block *before_last;	/* NULL if last is the first block */
} chain_pos;

/* Walk the chain from first (at off); false if it names no block or loops. */
static bool
chain_find(const pm_pool *pool, pmhash_block *first, uint64_t off, pmhash_entry e, chain_pos *c)
{
	pmhash_block *b = first;

	c->blk = NULL;
	c->before_last = NULL;
	for (uint64_t k = 0;; k++)
	{
		if (b->n > PMHASH_BLOCK_CAP)
			return false;
		for (uint32_t i = 0; i < b->n; i++)
			if (b->hash[i] == e.hash && b->rest[i] == e.rest)
			{
				c->blk = b;
				c->i = i;
			}
		if (b->next == 0)
			break;
		if (k + 1 >= pmhash_max_chain(pool) || !pmhash_block_ok(pool, b->next))
			return false;
		c->before_last = b;
		off = b->next;
		b = pmhash_block_at(pool, off);
	}
	c->last = b;
	c->last_off = off;
	return true;
}

/* e into the free slot of the chain's last block. */
static pm_errcode
add_entry(pmhash_table *t, uint32_t ap, pmhash_meta *m, pmhash_block *p, pmhash_block *last,
		  pmhash_entry e, pm_error *err)
{
	uint32_t	i = last->n;
	pm_errcode	rc;

	if ((rc = pm_uno_log(t->uno, ap, &last->hash[i], sizeof(uint32_t), err)) != PM_OK ||
		(rc = pm_uno_log(t->uno, ap, &last->rest[i], sizeof(uint64_t), err)) != PM_OK ||
		(rc = pm_uno_log(t->uno, ap, &last->n, sizeof(uint32_t), err)) != PM_OK ||
		(rc = pm_uno_log(t->uno, ap, &m->count[ap].n, sizeof(uint64_t), err)) != PM_OK)
		return rc;
	bucket_modify(p);
	pm_store_relaxed(&last->hash[i], e.hash);
	pm_store_relaxed(&last->rest[i], e.rest);
	pm_store_relaxed(&last->n, i + 1);
	m->count[ap].n++;
	return PM_OK;
}

/* e into a new block after the chain's full last block. */
static pm_errcode
add_block(pmhash_table *t, uint32_t ap, pmhash_meta *m, pmhash_block *p, pmhash_block *last,
		  pmhash_entry e, pm_error *err)
{
	pmhash_block *b;
	uint64_t	off;
	pm_errcode	rc;

	if ((rc = pm_uno_log(t->uno, ap, &last->next, sizeof(uint64_t), err)) != PM_OK ||
		(rc = pm_uno_log(t->uno, ap, &m->count[ap].n, sizeof(uint64_t), err)) != PM_OK)
		return rc;
	if ((off = pm_uno_alloc(t->uno, ap, PMHASH_BLOCK, err)) == 0)
		return err->code;
	b = pmhash_block_at(t->pool, off);
	pmhash_block_init(b, 0, p->bucket, 0);
	b->hash[0] = e.hash;
	b->rest[0] = e.rest;
	b->n = 1;
	bucket_modify(p);
	pm_store(&last->next, off);
	m->count[ap].n++;
	return PM_OK;
}

/* The chain's last entry moves into e's slot; a block left empty (not the first) goes. */
static pm_errcode
remove_entry(pmhash_table *t, uint32_t ap, pmhash_meta *m, pmhash_block *p, const chain_pos *c,
			 pm_error *err)
{
	pmhash_block *last = c->last;
	uint32_t	j = last->n - 1;
	bool		drop = j == 0 && last != p;
	pm_errcode	rc;

	if ((rc = pm_uno_log(t->uno, ap, &c->blk->hash[c->i], sizeof(uint32_t), err)) != PM_OK ||
		(rc = pm_uno_log(t->uno, ap, &c->blk->rest[c->i], sizeof(uint64_t), err)) != PM_OK ||
		(rc = pm_uno_log(t->uno, ap, &last->n, sizeof(uint32_t), err)) != PM_OK ||
		(rc = pm_uno_log(t->uno, ap, &m->count[ap].n, sizeof(uint64_t), err)) != PM_OK ||
		(drop && (rc = pm_uno_log(t->uno, ap, &c->before_last->next, sizeof(uint64_t), err)) != PM_OK) ||
		(drop && (rc = pm_uno_free(t->uno, ap, c->last_off, err)) != PM_OK))
		return rc;
	bucket_modify(p);
	pm_store_relaxed(&c->blk->hash[c->i], last->hash[j]);
	pm_store_relaxed(&c->blk->rest[c->i], last->rest[j]);
	pm_store_relaxed(&last->n, j);
	if (drop)
		pm_store(&c->before_last->next, 0);
	m->count[ap].n--;
	return PM_OK;
}

/* ---- the split ---- */

/* A bucket's chain and its entries, sorted to the two halves of a split. */
typedef struct split_work
{
	uint64_t   *blocks;			/* the old chain */
	uint64_t	nblocks;
	pmhash_entry *stay;
	uint64_t	nstay;
	pmhash_entry *move;
	uint64_t	nmove;
	uint64_t   *fresh;			/* the new bucket's chain */
} split_work;

static void
split_work_free(split_work *w)
{
	free(w->blocks);
	free(w->stay);
	free(w->move);
	free(w->fresh);
}

/* Blocks for n entries: every one full but the last, and at least one. */
static uint64_t
blocks_for(uint64_t n)
{
	return n == 0 ? 1 : (n + PMHASH_BLOCK_CAP - 1) / PMHASH_BLOCK_CAP;
}

/*
 * Read locked bucket p's chain (at off) into w: its blocks, and its entries
 * by the hash bit level, which says the half they go to.
 */
static pm_errcode
split_collect(pmhash_table *t, pmhash_block *p, uint64_t off, int level, split_work *w, pm_error *err)
{
	chain_pos	c;
	pmhash_entry none = {0, 0};	/* no entry: rests are never 0 */
	pmhash_block *b = p;

	/* the chain is checked, and counted, before anything is sized by it */
	if (!chain_find(t->pool, p, off, none, &c))
		return damaged(t, p->bucket, err);
	for (w->nblocks = 1; b != c.last; w->nblocks++)
		b = pmhash_block_at(t->pool, b->next);
	if ((w->blocks = malloc(w->nblocks * sizeof(uint64_t))) == NULL ||
		(w->stay = malloc(w->nblocks * PMHASH_BLOCK_CAP * sizeof(pmhash_entry))) == NULL ||
		(w->move = malloc(w->nblocks * PMHASH_BLOCK_CAP * sizeof(pmhash_entry))) == NULL)
		return pm_error_set(err, PM_ERR_NOMEM, 0, "out of memory to split a hash bucket");
	b = p;
	for (uint64_t k = 0; k < w->nblocks; k++, b = pmhash_block_at(t->pool, off = b->next))
	{
		w->blocks[k] = off;
		for (uint32_t i = 0; i < b->n; i++)
		{
			pmhash_entry e = {b->hash[i], b->rest[i]};

			if (e.hash >> level & 1)
				w->move[w->nmove++] = e;
			else
				w->stay[w->nstay++] = e;
		}
	}
	return PM_OK;
}

/* Write n entries e into the chain of count blocks offs; the first's depth is depth. */
static void
fill_chain(const pm_pool *pool, const uint64_t *offs, uint64_t count, const pmhash_entry *e, uint64_t n,
		   uint32_t depth)
{
	for (uint64_t k = 0; k < count; k++)
	{
		pmhash_block *b = pmhash_block_at(pool, offs[k]);
		uint64_t	from = k * PMHASH_BLOCK_CAP;
		uint32_t	in = (uint32_t) (n - from < PMHASH_BLOCK_CAP ? n - from : PMHASH_BLOCK_CAP);

		for (uint32_t i = 0; i < in; i++)
		{
			pm_store_relaxed(&b->hash[i], e[from + i].hash);
			pm_store_relaxed(&b->rest[i], e[from + i].rest);
		}
		pm_store_relaxed(&b->n, in);
		if (k == 0)
			pm_store_relaxed(&b->depth, depth);
		pm_store(&b->next, k + 1 < count ? offs[k + 1] : 0);
	}
}

/*
 * Split bucket s = n - 2^level of a table of n buckets into s and n, both
 * of depth level + 1 (README.md: Split).  The new bucket is built in fresh
 * blocks and published in its segment before s is rewritten in place and
 * the table counts it.
 */
static pm_errcode
split_bucket(pmhash_table *t, uint32_t ap, pmhash_meta *m, uint64_t tag, uint64_t n, pm_error *err)
{
	int			level = pmhash_level(n);
	uint64_t	s = n - (UINT64_C(1) << level);
	uint64_t	off = pmhash_bucket_off(t->pool, m, s);
	uint64_t   *slot = pmhash_slot(t->pool, m, n);
	split_work	w = {0};
	uint64_t	keep;
	uint64_t	need;
	uint64_t	savepoint;
	pmhash_block *p;
	pm_errcode	rc = PM_OK;

	if (off == 0 || slot == NULL)
		return damaged(t, s, err);
	p = pmhash_block_at(t->pool, off);
	bucket_lock(p, tag);
	if (p->depth != (uint32_t) level || p->bucket != s)
		rc = damaged(t, s, err);
	else
		rc = split_collect(t, p, off, level, &w, err);
	keep = blocks_for(w.nstay);
	need = blocks_for(w.nmove);
	if (rc == PM_OK && (w.fresh = malloc(need * sizeof(uint64_t))) == NULL)
		rc = pm_error_set(err, PM_ERR_NOMEM, 0, "out of memory to split a hash bucket");
	savepoint = pm_uno_savepoint(t->uno, ap);
	for (uint64_t k = 0; rc == PM_OK && k < keep; k++)
		rc = pm_uno_log(t->uno, ap, pmhash_block_at(t->pool, w.blocks[k]), PMHASH_BLOCK, err);
	if (rc == PM_OK && (rc = pm_uno_log(t->uno, ap, slot, sizeof(uint64_t), err)) == PM_OK)
		rc = pm_uno_log(t->uno, ap, &m->nbuckets, sizeof(uint64_t), err);
	for (uint64_t k = keep; rc == PM_OK && k < w.nblocks; k++)
		rc = pm_uno_free(t->uno, ap, w.blocks[k], err);
	for (uint64_t k = 0; rc == PM_OK && k < need; k++)
		if ((w.fresh[k] = pm_uno_alloc(t->uno, ap, PMHASH_BLOCK, err)) == 0)
			rc = err->code;
	if (rc != PM_OK)
	{
		pm_uno_rollback(t->uno, ap, savepoint);
		bucket_unlock(p);
		split_work_free(&w);
		return rc;
	}
	for (uint64_t k = 0; k < need; k++)
		pmhash_block_init(pmhash_block_at(t->pool, w.fresh[k]), k == 0 ? tag << 32 : 0, n, 0);
	fill_chain(t->pool, w.fresh, need, w.move, w.nmove, level + 1);
	pm_store(slot, w.fresh[0]);
	bucket_modify(p);
	fill_chain(t->pool, w.blocks, keep, w.stay, w.nstay, level + 1);
	pm_store(&m->nbuckets, n + 1);
	bucket_unlock(p);
	split_work_free(&w);
	return PM_OK;
}

/* Segment k, if the table has none yet: zeroed (a fresh block needs no undo). */
static pm_errcode
add_segment(pmhash_table *t, uint32_t ap, pmhash_meta *m, uint64_t k, pm_error *err)
{
	uint64_t	off;
	pm_errcode	rc;

	if (pm_load(&m->seg[k]) != 0)
		return PM_OK;
	if ((rc = pm_uno_log(t->uno, ap, &m->seg[k], sizeof(uint64_t), err)) != PM_OK)
		return rc;
	if ((off = pm_uno_alloc(t->uno, ap, PMHASH_SEG_SLOTS * sizeof(uint64_t), err)) == 0)
		return err->code;
	memset(pm_pool_addr(t->pool, off), 0, PMHASH_SEG_SLOTS * sizeof(uint64_t));
	pm_store(&m->seg[k], off);
	return PM_OK;
}

/* Split the next bucket, unless another applier is splitting one. */
static pm_errcode
split_next(pmhash_table *t, uint32_t ap, pm_error *err)
{
	pmhash_meta *m = pmhash_meta_of(t->pool);
	uint64_t	tag = pm_load(&m->run_tag);
	uint64_t	w = pm_load(&m->split_lock);
	uint64_t	n;
	pm_errcode	rc = PM_OK;

	if ((w >> 32 == tag && (w & 1)) || !pm_cas(&m->split_lock, &w, tag << 32 | 1))
		return PM_OK;
	n = pm_load(&m->nbuckets);
	if (n < PMHASH_MAX_BUCKETS && (rc = add_segment(t, ap, m, n / PMHASH_SEG_SLOTS, err)) == PM_OK)
		rc = split_bucket(t, ap, m, tag, n, err);
	pm_store(&m->split_lock, tag << 32);
	return rc;
}

/* ---- insert, delete ---- */

pm_errcode
pmhash_insert(pmhash_table *t, uint32_t applier, pmhash_entry e, bool *existed, pm_error *err)
{
	pmhash_meta *m = pmhash_meta_of(t->pool);
	bool		grew = false;
	uint64_t	off;
	pm_errcode	rc;

	*existed = false;
	if (e.rest == 0)
		return pm_error_set(err, PM_ERR_INVALID, 0, "a hash entry's rest is never 0");
	pm_epoch_enter(t->epoch);
	if ((rc = lock_bucket(t, m, e.hash, &off, err)) == PM_OK)
	{
		pmhash_block *p = pmhash_block_at(t->pool, off);
		chain_pos	c;

		if (!chain_find(t->pool, p, off, e, &c))
			rc = damaged(t, p->bucket, err);
		else if (c.blk != NULL)
			*existed = true;
		else if (c.last->n < PMHASH_BLOCK_CAP)
			rc = add_entry(t, applier, m, p, c.last, e, err);
		else
			grew = (rc = add_block(t, applier, m, p, c.last, e, err)) == PM_OK;
		bucket_unlock(p);
	}
	if (grew)
	{
		rc = split_next(t, applier, err);
		/* without room for the split now, a later insert splits */
		if (rc == PM_ERR_LIMIT || pm_errcode_is_out_of_space(rc))
			rc = PM_OK;
	}
	pm_epoch_exit(t->epoch);
	return rc;
}

pm_errcode
pmhash_delete(pmhash_table *t, uint32_t applier, pmhash_entry e, bool *found, pm_error *err)
{
	pmhash_meta *m = pmhash_meta_of(t->pool);
	uint64_t	off;
	pm_errcode	rc;

	*found = false;
	pm_epoch_enter(t->epoch);
	if ((rc = lock_bucket(t, m, e.hash, &off, err)) == PM_OK)
	{
		pmhash_block *p = pmhash_block_at(t->pool, off);
		chain_pos	c;

		if (!chain_find(t->pool, p, off, e, &c))
			rc = damaged(t, p->bucket, err);
		else if (c.blk != NULL)
			*found = (rc = remove_entry(t, applier, m, p, &c, err)) == PM_OK;
		bucket_unlock(p);
	}
	pm_epoch_exit(t->epoch);
	return rc;
}

/* ---- lock-free readers ---- */

static bool
batch_add(pmhash_batch *b, uint32_t hash, uint64_t rest)
{
	if (b->n == b->cap)
	{
		uint32_t	cap = b->cap ? 2 * b->cap : PMHASH_BLOCK_CAP;
		pmhash_entry *e = realloc(b->e, cap * sizeof(pmhash_entry));

		if (e == NULL)
			return false;
		b->e = e;
		b->cap = cap;
	}
	b->e[b->n].hash = hash;
	b->e[b->n++].rest = rest;
	return true;
}

void
pmhash_batch_free(pmhash_batch *b)
{
	free(b->e);
	memset(b, 0, sizeof(*b));
}

/*
 * Read bucket p's chain without its lock: the entries of hash code h (of
 * any, if all) into out.  -1 out of memory; 1 if the chain names no block or
 * is too long (a writer changed it, or damage: the caller's validation
 * tells which); else 0.
 */
static int
read_chain(const pm_pool *pool, const pmhash_block *p, bool all, uint32_t h, pmhash_batch *out)
{
	out->n = 0;
	for (uint64_t k = 0;; k++)
	{
		uint32_t	n = pm_load_relaxed(&p->n);
		uint64_t	next;

		if (n > PMHASH_BLOCK_CAP)
			return 1;
		for (uint32_t i = 0; i < n; i++)
		{
			uint32_t	code = pm_load_relaxed(&p->hash[i]);

			if ((all || code == h) && !batch_add(out, code, pm_load_relaxed(&p->rest[i])))
				return -1;
		}
		if ((next = pm_load_relaxed(&p->next)) == 0)
			return 0;
		if (k + 1 >= pmhash_max_chain(pool) || !pmhash_block_ok(pool, next))
			return 1;
		p = pmhash_block_at(pool, next);
	}
}

/*
 * Read bucket *b as of one moment into out: its entries of hash code h,
 * following splits to the bucket that holds h; or, if all, every entry of
 * bucket *b itself.
 */
static pm_errcode
read_bucket(pmhash_table *t, uint64_t *b, bool all, uint32_t h, pmhash_batch *out, pm_error *err)
{
	const pmhash_meta *m = pmhash_meta_of(t->pool);
	uint64_t	tag = pm_load(&m->run_tag);

	for (;;)
	{
		uint64_t	off = pmhash_bucket_off(t->pool, m, *b);
		const pmhash_block *p;
		uint64_t	w;
		uint32_t	depth;
		uint64_t	bucket;
		int			got;

		if (off == 0)
			return damaged(t, *b, err);
		p = pmhash_block_at(t->pool, off);
		w = read_begin(p, tag);
		depth = pm_load_relaxed(&p->depth);
		bucket = pm_load_relaxed(&p->bucket);
		got = read_chain(t->pool, p, all, h, out);
		if (!read_valid(p, w))
			continue;
		if (got < 0)
			return pm_error_set(err, PM_ERR_NOMEM, 0, "out of memory to read a hash bucket");
		if (got > 0 || depth > 32 || bucket != *b)
			return damaged(t, *b, err);
		if (all || pmhash_redirect(h, *b, depth) == *b)
			return PM_OK;
		*b = pmhash_redirect(h, *b, depth);
	}
}

pm_errcode
pmhash_lookup(pmhash_table *t, uint32_t hash, void (*fn) (void *ctx, uint64_t rest), void *ctx,
			  pm_error *err)
{
	uint64_t	b = pmhash_bucket_for(hash, pm_load(&pmhash_meta_of(t->pool)->nbuckets));
	pm_errcode	rc;

	pm_epoch_enter(t->epoch);
	rc = read_bucket(t, &b, false, hash, &t->found, err);
	pm_epoch_exit(t->epoch);
	for (uint32_t i = 0; rc == PM_OK && i < t->found.n; i++)
		fn(ctx, t->found.e[i].rest);
	return rc;
}

pm_errcode
pmhash_scan(pmhash_table *t, uint64_t *cursor, pmhash_batch *b, pm_error *err)
{
	uint64_t	bucket = *cursor;
	pm_errcode	rc;

	b->n = 0;
	if (bucket >= pm_load(&pmhash_meta_of(t->pool)->nbuckets))
	{
		*cursor = PMHASH_SCAN_END;
		return PM_OK;
	}
	pm_epoch_enter(t->epoch);
	rc = read_bucket(t, &bucket, true, 0, b, err);
	pm_epoch_exit(t->epoch);
	*cursor = bucket + 1;
	return rc;
}
