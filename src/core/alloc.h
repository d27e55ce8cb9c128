/*
 * alloc.h
 *	  Block allocator over a pool file or a shared-memory arena.
 *
 * Space is cut into 256 KiB chunks; a chunk serves one block size class
 * (64 B .. 64 KiB, powers of two) and keeps its allocation bitmap in its
 * first 4 KiB.  Allocation and free are lock-free CASes on words that every
 * process maps, so processes and threads allocate from one pool without a
 * lock.  Crash rule: bitmaps are not made durable per operation; after an
 * unclean shutdown the owner of the pool marks every block it can reach
 * (pm_alloc_mark) and the allocator rebuilds its state from those marks, so
 * after recovery every block is either reachable or free.  See README.md.
 */
#ifndef PM_ALLOC_H
#define PM_ALLOC_H

#include "pool.h"

#define PM_ALLOC_MIN_SHIFT	6		/* 64 B */
#define PM_ALLOC_MAX_SHIFT	16		/* 64 KiB */
#define PM_ALLOC_NCLASSES	(PM_ALLOC_MAX_SHIFT - PM_ALLOC_MIN_SHIFT + 1)
#define PM_ALLOC_MAX_BLOCK	(1u << PM_ALLOC_MAX_SHIFT)
#define PM_CHUNK_HEADER_SIZE	4096

typedef pm_errcode (*pm_grow_fn) (void *ctx, uint64_t min_size, pm_error *err);

typedef struct pm_alloc
{
	const pm_pool *pool;		/* the pool; NULL for an arena: */
	char	   *base;			/* the arena's address in this process */
	const uint64_t *size_word;	/* shared committed extent, in bytes */
	uint64_t	data_offset;	/* offset of chunk 0 */
	const pm_persister *persist;
	pm_grow_fn	grow;			/* NULL: fixed size (arena) */
	void	   *grow_ctx;
	const char *name;			/* for messages: pool path or arena name */

	/*
	 * The per-process cache: for each class, the chunk this process last
	 * allocated from.  Processes start at different chunks (seeded by pid),
	 * so in the common case each one CASes bitmap words nobody else touches.
	 * Blocks themselves are not cached per process: a cached block would be
	 * lost with the process until the next recovery.
	 */
	uint32_t	cache_chunk[PM_ALLOC_NCLASSES];
	uint32_t	seed;
} pm_alloc;

/* Attach to a pool (persistent) */
extern void pm_alloc_attach_pool(pm_alloc *a, pm_pool *pool);

/*
 * A shared-memory arena (the DRAM tier): format once, attach in every
 * process.  Fixed size; exhausting it is PM_ERR_ARENA_FULL.
 */
extern size_t pm_arena_min_size(void);
extern void pm_arena_format(void *mem, size_t bytes);
extern void pm_alloc_attach_arena(pm_alloc *a, void *mem, const char *name);

/* Allocate a block of at least size bytes; returns its offset, 0 on error. */
extern uint64_t pm_alloc_block(pm_alloc *a, size_t size, pm_error *err);

/* Free a block; PM_ERR_CORRUPT if off is not an allocated block. */
extern pm_errcode pm_free_block(pm_alloc *a, uint64_t off, pm_error *err);

extern size_t pm_alloc_class_size(size_t size);	/* 0 if too large */

/*
 * The block whose bytes include offset off: its start and size, from the
 * class of off's chunk (whether the block is allocated is not checked);
 * false if off lies in no chunk assigned to a class, or in a chunk header.
 */
extern bool pm_alloc_block_of(const pm_alloc *a, uint64_t off, uint64_t *start, size_t *size);

/*
 * Could off name a block of bytes bytes: line-aligned, past the pool header,
 * inside the committed extent?  The check of an offset read from a pool
 * before it is followed.
 */
static inline bool
pm_alloc_block_in_pool(const pm_pool *pool, uint64_t off, uint64_t bytes)
{
	return off >= pool->hdr->data_offset && off % PM_CACHELINE == 0 &&
		pm_pool_has_range(pool, off, bytes);
}

static inline void *
pm_alloc_addr(const pm_alloc *a, uint64_t off)
{
	return a->pool != NULL ? pm_pool_addr(a->pool, off) : a->base + off;
}

/* Recovery: begin, mark every reachable block, end.  Caller is exclusive. */
extern void pm_alloc_recover_begin(pm_alloc *a);
extern pm_errcode pm_alloc_mark(pm_alloc *a, uint64_t off, pm_error *err);
extern void pm_alloc_recover_end(pm_alloc *a);

typedef struct pm_alloc_stats
{
	uint64_t	chunks;			/* chunks in the extent */
	uint64_t	chunks_in_use;	/* chunks assigned to a class */
	uint64_t	blocks;			/* allocated blocks */
	uint64_t	bytes;			/* bytes in allocated blocks */
} pm_alloc_stats;

extern void pm_alloc_get_stats(const pm_alloc *a, pm_alloc_stats *st);

/* Call fn for every allocated block (tests, verification). */
extern void pm_alloc_foreach(const pm_alloc *a,
							 void (*fn) (void *ctx, uint64_t off, size_t size),
							 void *ctx);

#endif							/* PM_ALLOC_H */
