/*
 * uno.c
 *	  UNO logging: undo and allocation logs per applier, checkpoints,
 *	  recovery; see uno.h and README.md.
 */
#include "uno.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define UNO_MAGIC		UINT64_C(0x31304f4e554d5050)	/* "PPMUNO01" */
#define UNO_VERSION		1
#define UNO_MAX_LOG_BLOCKS 65536	/* 4 GiB per log: a sane bound for validation */

#define REC_BYTES		sizeof(pm_uno_rec)

_Static_assert(sizeof(pm_uno_block) == PM_UNO_LOG_BLOCK, "a log block is one allocator block");
_Static_assert(PM_UNO_PAYLOAD % REC_BYTES == 0,
			   "allocation records never skip a block's end: record i is at i * REC_BYTES");
_Static_assert(sizeof(pm_uno_log_head) == PM_CACHELINE, "each log's head has a line of its own");

/*
 * The process's set of what needs no undo record in the current
 * generation: lines logged (key: the line's offset) and blocks allocated
 * (key: the offset | SET_BLOCK).  Lock-free open addressing, emptied under
 * the mutex by the first call that sees a new generation (no applier is
 * active across a checkpoint).  A full set forgets: the range is logged
 * again, which undo tolerates.
 */
#define SET_BITS		18
#define SET_SLOTS		(UINT64_C(1) << SET_BITS)
#define SET_PROBES		64
#define SET_BLOCK		UINT64_C(1)

struct pm_uno
{
	pm_pool    *pool;
	pm_alloc   *alloc;
	pm_uno_host host;
	uint64_t	dir_off;
	uint64_t   *set;
	uint64_t	set_gen;
	pthread_mutex_t set_mutex;
};

/* ---- the directory and its generation ---- */

static pm_uno_dir *
dir_of(const pm_uno *u)
{
	return pm_pool_addr(u->pool, u->dir_off);
}

static uint64_t
state_gen(uint64_t state)
{
	return state >> 1;
}

static bool
state_flush_done(uint64_t state)
{
	return (state & 1) != 0;
}

/* A log's head: generation (low 32 bits) and the bytes of its records. */
static uint64_t
head_make(uint64_t gen, uint64_t end)
{
	return (gen & UINT32_MAX) << 32 | end;
}

/* Bytes of records in the current generation (a head of another holds none). */
static uint64_t
head_end(uint64_t head, uint64_t gen)
{
	return head >> 32 == (gen & UINT32_MAX) ? head & UINT32_MAX : 0;
}

static uint64_t
rec_bytes(const pm_uno_rec *r)
{
	return REC_BYTES + (r->kind == PM_UNO_REC_UNDO ? r->len : 0);
}

static pm_uno_block *
block_at(const pm_pool *pool, uint64_t off)
{
	return pm_pool_addr(pool, off);
}

/* Persist one word of the pool. */
static void
persist_word(const pm_pool *pool, uint64_t *word, uint64_t value)
{
	pm_store(word, value);
	pm_persist(&pool->persist, word, sizeof(uint64_t));
}

static pm_errcode
corrupt(const pm_pool *pool, pm_error *err, const char *what, uint32_t applier)
{
	return pm_error_set(err, PM_ERR_CORRUPT, 0, "pool file \"%s\": UNO log of applier %u: %s",
						pool->path, applier, what);
}

/* ---- reading a log ---- */

/*
 * A walk over one log's records of the current generation, which checks
 * every offset it follows: a damaged pool is an error, not a read outside
 * it.
 */
typedef struct log_walk
{
	const pm_pool *pool;
	uint64_t	max_blocks;
	uint64_t	block;			/* holds pos, unless pos is past it */
	uint64_t	index;			/* block's place in the chain */
	uint64_t	pos;			/* of the next record */
	uint64_t	end;
} log_walk;

/* Move the walk to chain block index; false if the chain is damaged. */
static bool
walk_seek(log_walk *w, uint64_t index)
{
	if (w->block == 0 || index < w->index)
		return false;
	while (w->index < index)
	{
		uint64_t	next = pm_load(&block_at(w->pool, w->block)->next);

		if (w->index + 1 >= w->max_blocks || !pm_alloc_block_in_pool(w->pool, next, PM_UNO_LOG_BLOCK))
			return false;
		w->block = next;
		w->index++;
	}
	return true;
}

/* Start a walk over the records of log l from pos (a record boundary) to end. */
static bool
walk_begin(log_walk *w, const pm_pool *pool, const pm_uno_dir *d, const pm_uno_log_head *l,
		   uint64_t pos, uint64_t end)
{
	w->pool = pool;
	w->max_blocks = d->max_log_blocks;
	w->block = pm_load(&l->first);
	w->index = 0;
	w->pos = pos;
	w->end = end;
	if (pos >= end)
		return pos == end;
	return pm_alloc_block_in_pool(pool, w->block, PM_UNO_LOG_BLOCK) &&
		end <= w->max_blocks * PM_UNO_PAYLOAD && walk_seek(w, pos / PM_UNO_PAYLOAD);
}

/* The same over all of l's records of generation gen. */
static bool
walk_log(log_walk *w, const pm_pool *pool, const pm_uno_dir *d, const pm_uno_log_head *l,
		 uint64_t gen)
{
	return walk_begin(w, pool, d, l, 0, head_end(pm_load(&l->head), gen));
}

/* The next record: 1, 0 at the end, -1 if the log is damaged. */
static int
walk_next(log_walk *w, const pm_uno_rec **out)
{
	for (;;)
	{
		uint64_t	in = w->pos % PM_UNO_PAYLOAD;
		const pm_uno_rec *r;

		if (w->pos >= w->end)
			return w->pos == w->end ? 0 : -1;
		if (PM_UNO_PAYLOAD - in < REC_BYTES)
		{
			w->pos += PM_UNO_PAYLOAD - in;
			continue;
		}
		if (!walk_seek(w, w->pos / PM_UNO_PAYLOAD))
			return -1;
		r = (const pm_uno_rec *) (block_at(w->pool, w->block)->data + in);
		if (r->kind == PM_UNO_REC_PAD)
		{
			w->pos += PM_UNO_PAYLOAD - in;
			continue;
		}
		if (r->kind < PM_UNO_REC_UNDO || r->kind > PM_UNO_REC_FREE ||
			(r->kind == PM_UNO_REC_UNDO && (r->len == 0 || r->len > PM_UNO_MAX_RANGE || r->len % PM_CACHELINE != 0)) ||
			in + rec_bytes(r) > PM_UNO_PAYLOAD || w->pos + rec_bytes(r) > w->end)
			return -1;
		w->pos += rec_bytes(r);
		*out = r;
		return 1;
	}
}

/*
 * Does a record name what pm_uno writes: lines inside one block (undo), a
 * block's start and size (alloc, free)?
 */
static bool
rec_ok(const pm_alloc *a, const pm_uno_rec *r, bool undo_log)
{
	uint64_t	start;
	size_t		size;

	if (undo_log != (r->kind == PM_UNO_REC_UNDO) || !pm_alloc_block_of(a, r->off, &start, &size))
		return false;
	if (r->kind == PM_UNO_REC_UNDO)
		return r->off % PM_CACHELINE == 0 && r->off + r->len <= start + size;
	return start == r->off && size == r->len;
}

/*
 * The chain of a log, block by block: each must be a log block in the pool,
 * at most max_log_blocks of them (a loop never ends otherwise); each is
 * marked in allocator a if a is not NULL.
 */
static pm_errcode
walk_chain(pm_alloc *a, const pm_pool *pool, const pm_uno_dir *d, const pm_uno_log_head *l,
		   uint32_t applier, uint64_t *nblocks, pm_error *err)
{
	uint64_t	n = 0;

	for (uint64_t off = pm_load(&l->first); off != 0; off = pm_load(&block_at(pool, off)->next))
	{
		pm_errcode	rc;

		if (n >= d->max_log_blocks || !pm_alloc_block_in_pool(pool, off, PM_UNO_LOG_BLOCK))
			return corrupt(pool, err, "its chain of blocks is damaged", applier);
		if (a != NULL && (rc = pm_alloc_mark(a, off, err)) != PM_OK)
			return rc;
		n++;
	}
	*nblocks = n;
	return PM_OK;
}

/* ---- writing a log (its applier alone) ---- */

/*
 * A block from the allocator.  A full pool first has the host reclaim what
 * it retired (a checkpoint's frees may wait in the epoch's limbo until some
 * process reclaims) and, if that freed any, is tried once more.
 */
static uint64_t
alloc_reclaiming(pm_uno *u, size_t size, pm_error *err)
{
	uint64_t	off = pm_alloc_block(u->alloc, size, err);

	if (off == 0 && pm_errcode_is_out_of_space(err->code) && u->host.reclaim != NULL &&
		u->host.reclaim(u->host.ctx) > 0)
		off = pm_alloc_block(u->alloc, size, err);
	return off;
}

/* A new empty block at the end of log l's chain, after prev (0: the first). */
static uint64_t
log_grow(pm_uno *u, pm_uno_log_head *l, uint64_t prev, pm_error *err)
{
	uint64_t	off = alloc_reclaiming(u, PM_UNO_LOG_BLOCK, err);

	if (off == 0)
		return 0;
	/* linked only once its link is durable; a crash before leaves it to allocator recovery */
	persist_word(u->pool, &block_at(u->pool, off)->next, 0);
	persist_word(u->pool, prev == 0 ? &l->first : &block_at(u->pool, prev)->next, off);
	return off;
}

/*
 * Move (*blk, *index) along log l's chain to its block number target,
 * growing the chain up to its limit.
 */
static pm_errcode
log_reach(pm_uno *u, uint32_t applier, pm_uno_log_head *l, uint64_t *blk, uint64_t *index,
		  uint64_t target, pm_error *err)
{
	if (*blk == 0 && (*blk = log_grow(u, l, 0, err)) == 0)
		return err->code;
	while (*index < target)
	{
		uint64_t	next = pm_load(&block_at(u->pool, *blk)->next);

		if (next == 0 && *index + 1 >= dir_of(u)->max_log_blocks)
			return pm_error_set(err, PM_ERR_LIMIT, 0,
								"pool file \"%s\": the UNO logs of applier %u are full (%u blocks): a checkpoint must empty them",
								u->pool->path, applier, dir_of(u)->max_log_blocks);
		if (next == 0 && (next = log_grow(u, l, *blk, err)) == 0)
			return err->code;
		*blk = next;
		(*index)++;
	}
	return PM_OK;
}

/*
 * Append a record to log l: an undo record's image is copied from the
 * pool's lines at off.  The record is persisted, then the head that counts
 * it: before this returns the record is durable, after it nothing of it is
 * needed.  Fails (PM_ERR_LIMIT, or the allocator's error) before the log
 * holds anything more.  A record that does not fit in the rest of its
 * block starts the next one, and a pad record says so.
 */
static pm_errcode
log_append(pm_uno *u, uint32_t applier, pm_uno_log_head *l, uint64_t gen, uint32_t kind,
		   uint64_t off, uint32_t len, pm_error *err)
{
	const pm_persister *p = &u->pool->persist;
	pm_uno_rec	hdr = {0, off, len, kind};
	uint64_t	end = head_end(pm_load(&l->head), gen);
	uint64_t	bytes = rec_bytes(&hdr);
	uint64_t	in = end % PM_UNO_PAYLOAD;
	uint64_t	start = PM_UNO_PAYLOAD - in >= bytes ? end : end - in + PM_UNO_PAYLOAD;
	uint64_t	blk = pm_load(&l->tail);
	uint64_t	index = pm_load(&l->tail_index);
	pm_uno_rec *pad = NULL;
	pm_uno_rec *r;
	pm_errcode	rc;

	/* the hint is of no use in a new generation, or after a crash between its store and the head's */
	if (end == 0 || blk == 0 || index > end / PM_UNO_PAYLOAD)
	{
		blk = pm_load(&l->first);
		index = 0;
	}
	if (start != end && PM_UNO_PAYLOAD - in >= REC_BYTES)
	{
		if ((rc = log_reach(u, applier, l, &blk, &index, end / PM_UNO_PAYLOAD, err)) != PM_OK)
			return rc;
		pad = (pm_uno_rec *) (block_at(u->pool, blk)->data + in);
	}
	if ((rc = log_reach(u, applier, l, &blk, &index, start / PM_UNO_PAYLOAD, err)) != PM_OK)
		return rc;
	if (pad != NULL)
	{
		pm_uno_rec	skip = {0, 0, 0, PM_UNO_REC_PAD};

		memcpy(pad, &skip, REC_BYTES);
		pm_flush(p, pad, REC_BYTES);
	}
	r = (pm_uno_rec *) (block_at(u->pool, blk)->data + start % PM_UNO_PAYLOAD);
	if (kind == PM_UNO_REC_UNDO)
	{
		memcpy(r + 1, pm_pool_addr(u->pool, off), len);
		/* taken after the copy: a store the copy saw was logged with a smaller number */
		hdr.seq = pm_fetch_add(&dir_of(u)->seq, 1);
	}
	memcpy(r, &hdr, REC_BYTES);
	pm_flush(p, r, bytes);
	pm_drain(p);
	pm_store(&l->tail, blk);
	pm_store(&l->tail_index, index);
	persist_word(u->pool, &l->head, head_make(gen, start + bytes));
	return PM_OK;
}

/* ---- the process's set ---- */

static uint64_t *
set_slot(pm_uno *u, uint64_t key, int probe)
{
	uint64_t	h = (key * UINT64_C(0x9e3779b97f4a7c15)) >> (64 - SET_BITS);

	return &u->set[(h + probe) & (SET_SLOTS - 1)];
}

static bool
set_has(pm_uno *u, uint64_t key)
{
	for (int i = 0; i < SET_PROBES; i++)
	{
		uint64_t	v = pm_load(set_slot(u, key, i));

		if (v == key)
			return true;
		if (v == 0)
			return false;
	}
	return false;
}

static void
set_add(pm_uno *u, uint64_t key)
{
	for (int i = 0; i < SET_PROBES; i++)
	{
		uint64_t   *slot = set_slot(u, key, i);
		uint64_t	v = pm_load(slot);

		if (v == 0 && pm_cas(slot, &v, key))
			return;
		if (v == key)
			return;
	}
}

/* The current generation, with the set emptied if it belonged to an earlier one. */
static uint64_t
current_gen(pm_uno *u)
{
	uint64_t	gen = state_gen(pm_load(&dir_of(u)->state));

	if (pm_load(&u->set_gen) != gen)
	{
		pthread_mutex_lock(&u->set_mutex);
		if (u->set_gen != gen)
		{
			memset(u->set, 0, SET_SLOTS * sizeof(uint64_t));
			pm_store(&u->set_gen, gen);
		}
		pthread_mutex_unlock(&u->set_mutex);
	}
	return gen;
}

/* ---- life cycle ---- */

pm_errcode
pm_uno_create(pm_pool *pool, pm_alloc *a, uint32_t nappliers, uint32_t max_log_blocks, pm_error *err)
{
	uint64_t	off;
	pm_uno_dir *d;

	if (max_log_blocks == 0)
		max_log_blocks = PM_UNO_DEFAULT_LOG_BLOCKS;
	if (nappliers == 0 || nappliers > PM_UNO_MAX_APPLIERS || max_log_blocks > UNO_MAX_LOG_BLOCKS)
		return pm_error_set(err, PM_ERR_INVALID, 0,
							"pool file \"%s\": UNO logs for %u appliers of %u blocks each",
							pool->path, nappliers, max_log_blocks);
	if ((off = pm_alloc_block(a, sizeof(pm_uno_dir), err)) == 0)
		return err->code;
	d = pm_pool_addr(pool, off);
	memset(d, 0, sizeof(*d));
	d->magic = UNO_MAGIC;
	d->version = UNO_VERSION;
	d->nappliers = nappliers;
	d->max_log_blocks = max_log_blocks;
	/* generation 1: the zeroed heads (generation 0) hold nothing */
	d->state = 1 << 1;
	pm_persist(&pool->persist, d, sizeof(*d));
	pm_pool_set_root(pool, PM_UNO_ROOT, off);
	return PM_OK;
}

/*
 * The directory's own words, which no applier changes: what a process may
 * check while others append to the logs (their heads and tail hints move
 * then, a word at a time).
 */
static pm_errcode
validate_dir(pm_pool *pool, uint64_t off, pm_error *err)
{
	const pm_uno_dir *d;

	if (!pm_alloc_block_in_pool(pool, off, sizeof(pm_uno_dir)))
		return pm_error_set(err, PM_ERR_CORRUPT, 0, "pool file \"%s\" names UNO logs at offset %llu, outside the pool",
							pool->path, (unsigned long long) off);
	d = pm_pool_addr(pool, off);
	if (d->magic != UNO_MAGIC || d->version != UNO_VERSION || d->nappliers == 0 ||
		d->nappliers > PM_UNO_MAX_APPLIERS || d->max_log_blocks == 0 ||
		d->max_log_blocks > UNO_MAX_LOG_BLOCKS || d->nhost_pos > PM_UNO_MAX_APPLIERS)
		return pm_error_set(err, PM_ERR_CORRUPT, 0, "pool file \"%s\" has a damaged UNO log directory",
							pool->path);
	return PM_OK;
}

pm_errcode
pm_uno_attach(pm_pool *pool, pm_alloc *a, const pm_uno_host *host, pm_uno **out, pm_error *err)
{
	pm_uno	   *u;
	pm_errcode	rc;

	if (pm_pool_root(pool, PM_UNO_ROOT) == 0)
		return pm_error_set(err, PM_ERR_INVALID, 0, "pool file \"%s\" has no UNO logs", pool->path);
	if ((rc = validate_dir(pool, pm_pool_root(pool, PM_UNO_ROOT), err)) != PM_OK)
		return rc;
	u = calloc(1, sizeof(*u));
	if (u == NULL || (u->set = calloc(SET_SLOTS, sizeof(uint64_t))) == NULL)
	{
		free(u);
		return pm_error_set(err, PM_ERR_NOMEM, 0, "out of memory for the UNO logs of \"%s\"", pool->path);
	}
	u->pool = pool;
	u->alloc = a;
	u->host = *host;
	u->dir_off = pm_pool_root(pool, PM_UNO_ROOT);
	pthread_mutex_init(&u->set_mutex, NULL);
	*out = u;
	return PM_OK;
}

void
pm_uno_detach(pm_uno *u)
{
	pthread_mutex_destroy(&u->set_mutex);
	free(u->set);
	free(u);
}

uint32_t
pm_uno_appliers(const pm_uno *u)
{
	return dir_of(u)->nappliers;
}

/* ---- the plug-in calls ---- */

pm_errcode
pm_uno_log(pm_uno *u, uint32_t applier, const void *addr, size_t size, pm_error *err)
{
	uint64_t	off = pm_pool_off(u->pool, addr);
	uint64_t	first = off & ~(uint64_t) (PM_CACHELINE - 1);
	uint64_t	end = (off + size + PM_CACHELINE - 1) & ~(uint64_t) (PM_CACHELINE - 1);
	uint64_t	gen;
	uint64_t	block;
	size_t		block_size;
	uint64_t	line;
	pm_errcode	rc;

	pm_assert(applier < pm_uno_appliers(u));
	if (size == 0)
		return PM_OK;
	if (end - first > PM_UNO_MAX_RANGE)
		return pm_error_set(err, PM_ERR_INVALID, 0, "pool file \"%s\": an UNO log range of %zu bytes",
							u->pool->path, size);
	gen = current_gen(u);
	if (pm_alloc_block_of(u->alloc, off, &block, &block_size) && off + size <= block + block_size &&
		set_has(u, block | SET_BLOCK))
		return PM_OK;
	for (line = first; line < end && set_has(u, line); line += PM_CACHELINE)
		;
	if (line == end)
		return PM_OK;
	rc = log_append(u, applier, &dir_of(u)->ulog[applier], gen, PM_UNO_REC_UNDO, first,
					(uint32_t) (end - first), err);
	if (rc != PM_OK)
		return rc;
	for (line = first; line < end; line += PM_CACHELINE)
		set_add(u, line);
	return PM_OK;
}

uint64_t
pm_uno_alloc(pm_uno *u, uint32_t applier, size_t size, pm_error *err)
{
	uint64_t	gen = current_gen(u);
	uint64_t	off;

	pm_assert(applier < pm_uno_appliers(u));
	if ((off = alloc_reclaiming(u, size, err)) == 0)
		return 0;
	/* a crash before the record leaves the block to allocator recovery */
	if (log_append(u, applier, &dir_of(u)->mlog[applier], gen, PM_UNO_REC_ALLOC, off,
				   (uint32_t) pm_alloc_class_size(size), err) != PM_OK)
	{
		pm_error	ignored;

		pm_free_block(u->alloc, off, &ignored);
		return 0;
	}
	set_add(u, off | SET_BLOCK);
	return off;
}

pm_errcode
pm_uno_free(pm_uno *u, uint32_t applier, uint64_t off, pm_error *err)
{
	uint64_t	start;
	size_t		size;

	pm_assert(applier < pm_uno_appliers(u));
	if (!pm_alloc_block_of(u->alloc, off, &start, &size) || start != off)
		return pm_error_set(err, PM_ERR_CORRUPT, 0, "pool file \"%s\": offset %llu freed is not a block",
							u->pool->path, (unsigned long long) off);
	return log_append(u, applier, &dir_of(u)->mlog[applier], current_gen(u), PM_UNO_REC_FREE, off,
					  (uint32_t) size, err);
}

uint64_t
pm_uno_savepoint(pm_uno *u, uint32_t applier)
{
	uint64_t	gen = current_gen(u);

	return head_make(gen, head_end(pm_load(&dir_of(u)->mlog[applier].head), gen));
}

void
pm_uno_rollback(pm_uno *u, uint32_t applier, uint64_t savepoint)
{
	pm_uno_dir *d = dir_of(u);
	pm_uno_log_head *l = &d->mlog[applier];
	uint64_t	gen = state_gen(pm_load(&d->state));
	uint64_t	end = head_end(pm_load(&l->head), gen);
	log_walk	w;
	const pm_uno_rec *r;

	pm_assert(savepoint >> 32 == (gen & UINT32_MAX));
	if (end == (savepoint & UINT32_MAX))
		return;
	/* the records go first: a crash then leaves the blocks to allocator recovery */
	persist_word(u->pool, &l->head, savepoint);
	if (!walk_begin(&w, u->pool, d, l, savepoint & UINT32_MAX, end))
		return;
	while (walk_next(&w, &r) == 1)
	{
		pm_error	ignored;

		/* this applier's own blocks since the savepoint: they free */
		if (r->kind == PM_UNO_REC_ALLOC)
			pm_free_block(u->alloc, r->off, &ignored);
	}
}

/* ---- checkpoint and recovery ---- */

/*
 * Release, from the newest, the blocks of every allocation log's records of
 * kind: each record leaves the log (persisted) before its block is
 * released, so a crash between the two never releases a block twice (it
 * leaves the block to allocator recovery).
 */
static pm_errcode
release_records(pm_uno *u, uint64_t gen, uint32_t kind, pm_error *err)
{
	pm_uno_dir *d = dir_of(u);

	for (uint32_t i = 0; i < d->nappliers; i++)
	{
		pm_uno_log_head *l = &d->mlog[i];
		uint64_t	n = head_end(pm_load(&l->head), gen) / REC_BYTES;
		uint64_t   *blocks;
		log_walk	w;

		if (n == 0)
			continue;
		if ((blocks = malloc(sizeof(uint64_t) * ((n - 1) * REC_BYTES / PM_UNO_PAYLOAD + 1))) == NULL)
			return pm_error_set(err, PM_ERR_NOMEM, 0, "out of memory for the UNO logs of \"%s\"",
								u->pool->path);
		if (!walk_log(&w, u->pool, d, l, gen))
		{
			free(blocks);
			return corrupt(u->pool, err, "its allocation log is damaged", i);
		}
		for (uint64_t k = 0; k <= (n - 1) * REC_BYTES / PM_UNO_PAYLOAD; k++)
		{
			if (!walk_seek(&w, k))
			{
				free(blocks);
				return corrupt(u->pool, err, "its allocation log is damaged", i);
			}
			blocks[k] = w.block;
		}
		while (n-- > 0)
		{
			uint64_t	pos = n * REC_BYTES;
			pm_uno_block *b = block_at(u->pool, blocks[pos / PM_UNO_PAYLOAD]);
			const pm_uno_rec *r = (const pm_uno_rec *) (b->data + pos % PM_UNO_PAYLOAD);

			if (r->kind != kind)
				continue;
			persist_word(u->pool, &l->head, head_make(gen, pos));
			if (u->host.release != NULL)
				u->host.release(u->host.ctx, r->off);
			else if (pm_free_block(u->alloc, r->off, err) != PM_OK)
			{
				free(blocks);
				return err->code;
			}
			pm_smo_pause("uno release");
		}
		free(blocks);
	}
	return PM_OK;
}

/*
 * The checkpoint's steps after its flush is done: the host's positions
 * move, the deferred frees happen, and a new generation starts, which
 * empties every log at once.
 */
static pm_errcode
finish_checkpoint(pm_uno *u, bool free_blocks, pm_error *err)
{
	pm_uno_dir *d = dir_of(u);
	uint64_t	gen = state_gen(pm_load(&d->state));
	pm_errcode	rc;

	if (u->host.advance != NULL)
		u->host.advance(u->host.ctx, d->host_pos, d->nhost_pos);
	if (free_blocks && (rc = release_records(u, gen, PM_UNO_REC_FREE, err)) != PM_OK)
		return rc;
	persist_word(u->pool, &d->state, (gen + 1) << 1);
	return PM_OK;
}

pm_errcode
pm_uno_checkpoint(pm_uno *u, const uint64_t *host_pos, uint32_t npos, pm_error *err)
{
	pm_uno_dir *d = dir_of(u);
	const pm_persister *p = &u->pool->persist;
	uint64_t	gen;
	pm_errcode	rc;

	if (npos > PM_UNO_MAX_APPLIERS)
		return pm_error_set(err, PM_ERR_INVALID, 0, "a checkpoint of %u host positions", npos);
	if (state_flush_done(pm_load(&d->state)) && (rc = finish_checkpoint(u, true, err)) != PM_OK)
		return rc;
	gen = state_gen(pm_load(&d->state));
	for (uint32_t i = 0; i < d->nappliers; i++)
	{
		for (int m = 0; m < 2; m++)
		{
			log_walk	w;
			const pm_uno_rec *r;
			int			got;

			if (!walk_log(&w, u->pool, d, m == 0 ? &d->ulog[i] : &d->mlog[i], gen))
				return corrupt(u->pool, err, "its chain of blocks is damaged", i);
			while ((got = walk_next(&w, &r)) == 1)
				if (r->kind != PM_UNO_REC_FREE)
					pm_flush(p, pm_pool_addr(u->pool, r->off), r->len);
			if (got < 0)
				return corrupt(u->pool, err, "a record is damaged", i);
		}
	}
	pm_drain(p);
	if (npos > 0)
		memcpy(d->host_pos, host_pos, npos * sizeof(uint64_t));
	d->nhost_pos = npos;
	pm_flush(p, &d->nhost_pos, sizeof(d->nhost_pos));
	pm_persist(p, d->host_pos, sizeof(d->host_pos));
	/* the structure is durable as of here: a crash now finishes this checkpoint */
	persist_word(u->pool, &d->state, gen << 1 | 1);
	return finish_checkpoint(u, true, err);
}

typedef struct undo_item
{
	uint64_t	seq;
	const pm_uno_rec *rec;
} undo_item;

static int
newest_first(const void *a, const void *b)
{
	uint64_t	x = ((const undo_item *) a)->seq;
	uint64_t	y = ((const undo_item *) b)->seq;

	return x < y ? 1 : x > y ? -1 : 0;
}

/* Put every undo record's image back, newest first, and persist them. */
static pm_errcode
undo_all(pm_uno *u, uint64_t gen, pm_error *err)
{
	pm_uno_dir *d = dir_of(u);
	undo_item  *items = NULL;
	size_t		n = 0;
	size_t		cap = 0;

	for (uint32_t i = 0; i < d->nappliers; i++)
	{
		log_walk	w;
		const pm_uno_rec *r;
		int			got;

		if (!walk_log(&w, u->pool, d, &d->ulog[i], gen))
		{
			free(items);
			return corrupt(u->pool, err, "its chain of blocks is damaged", i);
		}
		while ((got = walk_next(&w, &r)) == 1)
		{
			if (n == cap)
			{
				undo_item  *more = realloc(items, sizeof(undo_item) * (cap = cap ? 2 * cap : 1024));

				if (more == NULL)
				{
					free(items);
					return pm_error_set(err, PM_ERR_NOMEM, 0, "out of memory to undo the UNO logs of \"%s\"",
										u->pool->path);
				}
				items = more;
			}
			items[n].seq = r->seq;
			items[n++].rec = r;
		}
		if (got < 0)
		{
			free(items);
			return corrupt(u->pool, err, "a record is damaged", i);
		}
	}
	if (n > 0)
		qsort(items, n, sizeof(undo_item), newest_first);
	for (size_t k = 0; k < n; k++)
	{
		void	   *to = pm_pool_addr(u->pool, items[k].rec->off);

		memcpy(to, items[k].rec + 1, items[k].rec->len);
		pm_flush(&u->pool->persist, to, items[k].rec->len);
		pm_smo_pause("uno undo");
	}
	pm_drain(&u->pool->persist);
	free(items);
	return PM_OK;
}

pm_errcode
pm_uno_recover(pm_uno *u, bool free_blocks, pm_error *err)
{
	pm_uno_dir *d = dir_of(u);
	uint64_t	state = pm_load(&d->state);
	uint64_t	gen = state_gen(state);
	pm_errcode	rc;

	if ((rc = pm_uno_validate(u->pool, err)) != PM_OK)
		return rc;
	if (state_flush_done(state))
		return finish_checkpoint(u, free_blocks, err);
	if ((rc = undo_all(u, gen, err)) != PM_OK)
		return rc;
	if (free_blocks && (rc = release_records(u, gen, PM_UNO_REC_ALLOC, err)) != PM_OK)
		return rc;
	persist_word(u->pool, &d->state, (gen + 1) << 1);
	return PM_OK;
}

/* ---- validation, allocator recovery, statistics ---- */

/* Check log l of an applier: its chain, its tail hint, its records. */
static pm_errcode
validate_log(pm_alloc *a, pm_pool *pool, const pm_uno_dir *d, const pm_uno_log_head *l,
			 uint32_t applier, bool undo_log, pm_error *err)
{
	uint64_t	gen = state_gen(pm_load(&d->state));
	uint64_t	nblocks;
	uint64_t	tail_index = pm_load(&l->tail_index);
	log_walk	w;
	const pm_uno_rec *r;
	int			got;
	pm_errcode	rc;

	if ((rc = walk_chain(NULL, pool, d, l, applier, &nblocks, err)) != PM_OK)
		return rc;
	if (head_end(pm_load(&l->head), gen) > nblocks * PM_UNO_PAYLOAD)
		return corrupt(pool, err, "its head is past its blocks", applier);
	if (head_end(pm_load(&l->head), gen) != 0 &&
		(tail_index >= nblocks || !walk_log(&w, pool, d, l, gen) || !walk_seek(&w, tail_index) ||
		 w.block != pm_load(&l->tail)))
		return corrupt(pool, err, "its tail is not in its chain", applier);
	if (!walk_log(&w, pool, d, l, gen))
		return corrupt(pool, err, "its chain of blocks is damaged", applier);
	while ((got = walk_next(&w, &r)) == 1)
		if (!rec_ok(a, r, undo_log))
			return corrupt(pool, err, "a record names no block of the pool", applier);
	return got == 0 ? PM_OK : corrupt(pool, err, "a record is damaged", applier);
}

pm_errcode
pm_uno_validate(pm_pool *pool, pm_error *err)
{
	uint64_t	off = pm_pool_root(pool, PM_UNO_ROOT);
	const pm_uno_dir *d;
	pm_alloc	a;
	pm_errcode	rc;

	if (off == 0)
		return PM_OK;
	if ((rc = validate_dir(pool, off, err)) != PM_OK)
		return rc;
	d = pm_pool_addr(pool, off);
	pm_alloc_attach_pool(&a, pool);
	for (uint32_t i = 0; i < d->nappliers; i++)
	{
		if ((rc = validate_log(&a, pool, d, &d->ulog[i], i, true, err)) != PM_OK ||
			(rc = validate_log(&a, pool, d, &d->mlog[i], i, false, err)) != PM_OK)
			return rc;
	}
	return PM_OK;
}

pm_errcode
pm_uno_mark(pm_alloc *a, pm_pool *pool, pm_error *err)
{
	uint64_t	off = pm_pool_root(pool, PM_UNO_ROOT);
	const pm_uno_dir *d;
	uint64_t	gen;

	if (off == 0)
		return PM_OK;
	d = pm_pool_addr(pool, off);
	gen = state_gen(pm_load(&d->state));
	for (uint32_t i = 0; i < d->nappliers; i++)
		if (head_end(pm_load(&d->ulog[i].head), gen) != 0 || head_end(pm_load(&d->mlog[i].head), gen) != 0 ||
			state_flush_done(pm_load(&d->state)))
			return pm_error_set(err, PM_ERR_INVALID, 0,
								"pool file \"%s\": UNO logs hold records: recover them before the allocator",
								pool->path);
	for (uint32_t i = 0; i < d->nappliers; i++)
	{
		uint64_t	n;
		pm_errcode	rc;

		if ((rc = walk_chain(a, pool, d, &d->ulog[i], i, &n, err)) != PM_OK ||
			(rc = walk_chain(a, pool, d, &d->mlog[i], i, &n, err)) != PM_OK)
			return rc;
	}
	return PM_OK;
}

uint32_t
pm_uno_fill_pct(pm_uno *u, uint32_t applier)
{
	pm_uno_dir *d = dir_of(u);
	uint64_t	gen = state_gen(pm_load(&d->state));
	uint64_t	undo = head_end(pm_load(&d->ulog[applier].head), gen);
	uint64_t	alloc = head_end(pm_load(&d->mlog[applier].head), gen);
	uint64_t	end = undo > alloc ? undo : alloc;

	return (uint32_t) (end * 100 / ((uint64_t) d->max_log_blocks * PM_UNO_PAYLOAD));
}

void
pm_uno_get_stats(pm_uno *u, pm_uno_stats *st)
{
	pm_uno_dir *d = dir_of(u);
	uint64_t	gen = state_gen(pm_load(&d->state));

	memset(st, 0, sizeof(*st));
	st->generation = gen;
	for (uint32_t i = 0; i < d->nappliers; i++)
	{
		for (int m = 0; m < 2; m++)
		{
			const pm_uno_log_head *l = m == 0 ? &d->ulog[i] : &d->mlog[i];
			uint64_t	end = head_end(pm_load(&l->head), gen);
			uint64_t	nblocks = 0;
			log_walk	w;
			const pm_uno_rec *r;

			uint32_t	pct = (uint32_t) (end * 100 / ((uint64_t) d->max_log_blocks * PM_UNO_PAYLOAD));

			walk_chain(NULL, u->pool, d, l, i, &nblocks, NULL);
			st->log_blocks += nblocks;
			if (pct > st->fullest_pct)
				st->fullest_pct = pct;
			if (!walk_log(&w, u->pool, d, l, gen))
				continue;
			while (walk_next(&w, &r) == 1)
			{
				st->undo_records += r->kind == PM_UNO_REC_UNDO;
				st->undo_bytes += r->kind == PM_UNO_REC_UNDO ? r->len : 0;
				st->allocs += r->kind == PM_UNO_REC_ALLOC;
				st->frees += r->kind == PM_UNO_REC_FREE;
			}
		}
	}
}
