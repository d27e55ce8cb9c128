/*
 * alloc.c
 *	  Lock-free block allocator over a pool file or a shared-memory arena.
 *
 * Chunk state word: class index + 1 in bits 48..63 (0 = unassigned chunk),
 * reserved block count in bits 0..31.  An allocator first reserves a block
 * by incrementing the count (only while it is below the chunk's capacity),
 * then claims a bit in the bitmap; free clears the bit, then decrements.  So
 * count >= set bits at all times, a reserver always finds a zero bit, and a
 * chunk whose count is 0 has no block in use or in flight and can be handed
 * back (state -> 0) with one CAS.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "alloc.h"

#include <string.h>
#include <unistd.h>

#define CHUNK_BITMAP_WORDS	64
#define STATE_CLASS_SHIFT	48
#define STATE_COUNT_MASK	UINT64_C(0xffffffff)

typedef struct pm_chunk_header
{
	uint64_t	state;
	uint64_t	reserved[7];
	uint64_t	bitmap[CHUNK_BITMAP_WORDS];
} pm_chunk_header;

_Static_assert(sizeof(pm_chunk_header) <= PM_CHUNK_HEADER_SIZE, "chunk header too large");
_Static_assert((PM_POOL_CHUNK_SIZE - PM_CHUNK_HEADER_SIZE) >> PM_ALLOC_MIN_SHIFT <=
			   CHUNK_BITMAP_WORDS * 64, "bitmap too small for the smallest class");

/* Arena header: the DRAM tier's equivalent of the pool header. */
#define PM_ARENA_MAGIC UINT64_C(0x414e455241444d50)	/* "PMDARENA" */
typedef struct pm_arena_header
{
	uint64_t	magic;
	uint64_t	size;			/* extent in bytes, fixed */
} pm_arena_header;

static const pm_persister volatile_persister = {PM_MODE_VOLATILE, NULL};

static inline uint32_t
class_blocks(int cls)
{
	return (PM_POOL_CHUNK_SIZE - PM_CHUNK_HEADER_SIZE) >> (cls + PM_ALLOC_MIN_SHIFT);
}

static inline uint64_t
state_make(int cls, uint64_t count)
{
	return ((uint64_t) (cls + 1) << STATE_CLASS_SHIFT) | count;
}

static inline int
state_class(uint64_t s)
{
	return (int) (s >> STATE_CLASS_SHIFT) - 1;
}

static inline uint64_t
state_count(uint64_t s)
{
	return s & STATE_COUNT_MASK;
}

static inline uint64_t
alloc_size(const pm_alloc *a)
{
	return a->pool != NULL ? pm_pool_size(a->pool) : pm_load(a->size_word);
}

static inline uint64_t
nchunks(const pm_alloc *a)
{
	return (alloc_size(a) - a->data_offset) / PM_POOL_CHUNK_SIZE;
}

static inline uint64_t
chunk_off(const pm_alloc *a, uint64_t ci)
{
	return a->data_offset + ci * PM_POOL_CHUNK_SIZE;
}

static inline pm_chunk_header *
chunk_at(const pm_alloc *a, uint64_t ci)
{
	return (pm_chunk_header *) pm_alloc_addr(a, chunk_off(a, ci));
}

/* Offset of block bi of chunk ci, of class cls. */
static inline uint64_t
block_off(const pm_alloc *a, uint64_t ci, int cls, uint32_t bi)
{
	return chunk_off(a, ci) + PM_CHUNK_HEADER_SIZE + ((uint64_t) bi << (cls + PM_ALLOC_MIN_SHIFT));
}

static int
class_of_size(size_t size)
{
	int			cls = 0;

	if (size > PM_ALLOC_MAX_BLOCK)
		return -1;
	while (((size_t) 1 << (cls + PM_ALLOC_MIN_SHIFT)) < size)
		cls++;
	return cls;
}

size_t
pm_alloc_class_size(size_t size)
{
	int			cls = class_of_size(size);

	return cls < 0 ? 0 : (size_t) 1 << (cls + PM_ALLOC_MIN_SHIFT);
}

static void
init_common(pm_alloc *a)
{
	a->seed = (uint32_t) getpid() * 2654435761u;
	for (int c = 0; c < PM_ALLOC_NCLASSES; c++)
		a->cache_chunk[c] = UINT32_MAX;
}

static pm_errcode
grow_pool(void *ctx, uint64_t min_size, pm_error *err)
{
	return pm_pool_grow((pm_pool *) ctx, min_size, err);
}

void
pm_alloc_attach_pool(pm_alloc *a, pm_pool *pool)
{
	memset(a, 0, sizeof(*a));
	a->pool = pool;
	a->data_offset = pool->hdr->data_offset;
	a->persist = &pool->persist;
	a->grow = grow_pool;
	a->grow_ctx = pool;
	a->name = pool->path;
	init_common(a);
}

size_t
pm_arena_min_size(void)
{
	return PM_POOL_HEADER_SIZE + PM_POOL_CHUNK_SIZE;
}

void
pm_arena_format(void *mem, size_t bytes)
{
	pm_arena_header *h = mem;
	uint64_t	n = (bytes - PM_POOL_HEADER_SIZE) / PM_POOL_CHUNK_SIZE;

	/* only chunk headers need zeroing: block contents are the user's */
	for (uint64_t ci = 0; ci < n; ci++)
		memset((char *) mem + PM_POOL_HEADER_SIZE + ci * PM_POOL_CHUNK_SIZE, 0,
			   sizeof(pm_chunk_header));
	h->magic = PM_ARENA_MAGIC;
	h->size = PM_POOL_HEADER_SIZE + n * PM_POOL_CHUNK_SIZE;
}
void
pm_alloc_attach_arena(pm_alloc *a, void *mem, const char *name)
{
	pm_arena_header *h = mem;

	memset(a, 0, sizeof(*a));
	a->base = mem;
	a->size_word = &h->size;
	a->data_offset = PM_POOL_HEADER_SIZE;
	a->persist = &volatile_persister;
	a->name = name;
	init_common(a);
}

/* Reserve a block in chunk ci for class cls; true if reserved. */
static bool
chunk_reserve(pm_alloc *a, uint64_t ci, int cls)
{
	pm_chunk_header *ch = chunk_at(a, ci);
	uint64_t	s = pm_load(&ch->state);

	for (;;)
	{
		if (s == 0)
		{
			/*
			 * Claim an unassigned chunk.  The class must be durable before
			 * any block of the chunk is linked anywhere durable, because
			 * recovery interprets marked offsets through it.
			 */
			if (pm_cas(&ch->state, &s, state_make(cls, 1)))
			{
				pm_persist(a->persist, &ch->state, sizeof(uint64_t));
				return true;
			}
			continue;
		}
		if (state_class(s) != cls || state_count(s) >= class_blocks(cls))
			return false;
		if (pm_cas(&ch->state, &s, s + 1))
			return true;
	}
}

/* Claim a bit in a chunk where a block is already reserved. */
static uint64_t
chunk_take_bit(pm_alloc *a, uint64_t ci, int cls)
{
	pm_chunk_header *ch = chunk_at(a, ci);
	uint32_t	nb = class_blocks(cls);
	uint32_t	nwords = (nb + 63) / 64;

	for (;;)
	{
		for (uint32_t w = 0; w < nwords; w++)
		{
			uint64_t	valid = (w == nwords - 1 && nb % 64) ? (UINT64_C(1) << (nb % 64)) - 1 : ~UINT64_C(0);
			uint64_t	word = pm_load(&ch->bitmap[w]);

			while ((~word & valid) != 0)
			{
				int			bit = __builtin_ctzll(~word & valid);

				if (pm_cas(&ch->bitmap[w], &word, word | (UINT64_C(1) << bit)))
					return block_off(a, ci, cls, w * 64 + bit);
			}
		}
		/* every bit we saw was taken by a concurrent reserver; ours is there */
	}
}

uint64_t
pm_alloc_block(pm_alloc *a, size_t size, pm_error *err)
{
	int			cls = class_of_size(size);

	if (cls < 0)
	{
		pm_error_set(err, PM_ERR_INVALID, 0, "block of %zu bytes is larger than the largest class (%u)",
					 size, PM_ALLOC_MAX_BLOCK);
		return 0;
	}
	for (;;)
	{
		uint64_t	n = nchunks(a);
		uint64_t	start = __atomic_load_n(&a->cache_chunk[cls], __ATOMIC_RELAXED);

		if (start >= n)
			start = n ? a->seed % n : 0;
		for (uint64_t i = 0; i < n; i++)
		{
			uint64_t	ci = (start + i) % n;

			if (chunk_reserve(a, ci, cls))
			{
				__atomic_store_n(&a->cache_chunk[cls], (uint32_t) ci, __ATOMIC_RELAXED);
				return chunk_take_bit(a, ci, cls);
			}
		}
		if (a->grow == NULL)
		{
			pm_error_set(err, PM_ERR_ARENA_FULL, 0, "%s is full (%llu bytes)", a->name,
						 (unsigned long long) (n * PM_POOL_CHUNK_SIZE));
			return 0;
		}
		if (a->grow(a->grow_ctx, alloc_size(a) + PM_POOL_CHUNK_SIZE, err) != PM_OK)
			return 0;
	}
}

/* The chunk, class and block index of the block that holds off; false if none does. */
static bool
locate_within(const pm_alloc *a, uint64_t off, uint64_t *ci, int *cls, uint32_t *bi)
{
	uint64_t	rel;
	uint64_t	in_chunk;
	uint64_t	s;

	if (off < a->data_offset)
		return false;
	rel = off - a->data_offset;
	*ci = rel / PM_POOL_CHUNK_SIZE;
	if (*ci >= nchunks(a))
		return false;
	in_chunk = rel % PM_POOL_CHUNK_SIZE;
	s = pm_load(&chunk_at(a, *ci)->state);
	*cls = state_class(s);
	if (*cls < 0 || *cls >= PM_ALLOC_NCLASSES || in_chunk < PM_CHUNK_HEADER_SIZE)
		return false;
	*bi = (uint32_t) ((in_chunk - PM_CHUNK_HEADER_SIZE) >> (*cls + PM_ALLOC_MIN_SHIFT));
	return *bi < class_blocks(*cls);
}

/* Locate off: chunk index, class, block index.  false if not a block start. */
static bool
locate(const pm_alloc *a, uint64_t off, uint64_t *ci, int *cls, uint32_t *bi)
{
	return locate_within(a, off, ci, cls, bi) && block_off(a, *ci, *cls, *bi) == off;
}

bool
pm_alloc_block_of(const pm_alloc *a, uint64_t off, uint64_t *start, size_t *size)
{
	uint64_t	ci;
	int			cls;
	uint32_t	bi;

	if (!locate_within(a, off, &ci, &cls, &bi))
		return false;
	*start = block_off(a, ci, cls, bi);
	*size = (size_t) 1 << (cls + PM_ALLOC_MIN_SHIFT);
	return true;
}

pm_errcode
pm_free_block(pm_alloc *a, uint64_t off, pm_error *err)
{
	uint64_t	ci;
	int			cls;
	uint32_t	bi;
	pm_chunk_header *ch;
	uint64_t	mask;
	uint64_t	s;

	if (!locate(a, off, &ci, &cls, &bi))
		return pm_error_set(err, PM_ERR_CORRUPT, 0, "%s: offset %llu is not a block",
							a->name, (unsigned long long) off);
	ch = chunk_at(a, ci);
	mask = UINT64_C(1) << (bi % 64);
	if ((pm_fetch_and(&ch->bitmap[bi / 64], ~mask) & mask) == 0)
		return pm_error_set(err, PM_ERR_CORRUPT, 0, "%s: block at offset %llu freed twice",
							a->name, (unsigned long long) off);
	s = pm_load(&ch->state);
	do
		pm_assert(state_count(s) > 0);	/* the bit we cleared was counted */
	while (!pm_cas(&ch->state, &s, s - 1));
	if (state_count(s - 1) == 0)
	{
		uint64_t	empty = s - 1;

		/* hand an empty chunk back, unless a reserver got in first */
		if (pm_cas(&ch->state, &empty, 0))
			pm_persist(a->persist, &ch->state, sizeof(uint64_t));
	}
	return PM_OK;
}

void
pm_alloc_recover_begin(pm_alloc *a)
{
	uint64_t	n = nchunks(a);

	for (uint64_t ci = 0; ci < n; ci++)
	{
		pm_chunk_header *ch = chunk_at(a, ci);
		int			cls = state_class(ch->state);

		memset(ch->bitmap, 0, sizeof(ch->bitmap));
		/* a class word that does not decode is reset: nothing reachable can use it */
		ch->state = (cls >= 0 && cls < PM_ALLOC_NCLASSES) ? state_make(cls, 0) : 0;
	}
	for (int c = 0; c < PM_ALLOC_NCLASSES; c++)
		a->cache_chunk[c] = UINT32_MAX;
}

pm_errcode
pm_alloc_mark(pm_alloc *a, uint64_t off, pm_error *err)
{
	uint64_t	ci;
	int			cls;
	uint32_t	bi;
	pm_chunk_header *ch;
	uint64_t	mask;

	if (!locate(a, off, &ci, &cls, &bi))
		return pm_error_set(err, PM_ERR_CORRUPT, 0,
							"%s: reachable offset %llu is not a block", a->name,
							(unsigned long long) off);
	ch = chunk_at(a, ci);
	mask = UINT64_C(1) << (bi % 64);
	if (ch->bitmap[bi / 64] & mask)
		return pm_error_set(err, PM_ERR_CORRUPT, 0,
							"%s: block at offset %llu is reachable twice", a->name,
							(unsigned long long) off);
	ch->bitmap[bi / 64] |= mask;
	ch->state++;
	return PM_OK;
}

void
pm_alloc_recover_end(pm_alloc *a)
{
	uint64_t	n = nchunks(a);

	for (uint64_t ci = 0; ci < n; ci++)
	{
		pm_chunk_header *ch = chunk_at(a, ci);

		if (state_count(ch->state) == 0)
			ch->state = 0;
		pm_flush(a->persist, ch, sizeof(*ch));
	}
	pm_drain(a->persist);
}

void
pm_alloc_get_stats(const pm_alloc *a, pm_alloc_stats *st)
{
	uint64_t	n = nchunks(a);

	memset(st, 0, sizeof(*st));
	st->chunks = n;
	for (uint64_t ci = 0; ci < n; ci++)
	{
		uint64_t	s = pm_load(&chunk_at(a, ci)->state);
		int			cls = state_class(s);

		if (s == 0)
			continue;
		st->chunks_in_use++;
		st->blocks += state_count(s);
		/* a damaged pool's chunk may name no class: its blocks have no size */
		if (cls >= 0 && cls < PM_ALLOC_NCLASSES)
			st->bytes += state_count(s) << (cls + PM_ALLOC_MIN_SHIFT);
	}
}

void
pm_alloc_foreach(const pm_alloc *a, void (*fn) (void *ctx, uint64_t off, size_t size),
				 void *ctx)
{
	uint64_t	n = nchunks(a);

	for (uint64_t ci = 0; ci < n; ci++)
	{
		pm_chunk_header *ch = chunk_at(a, ci);
		int			cls = state_class(pm_load(&ch->state));

		if (cls < 0 || cls >= PM_ALLOC_NCLASSES)
			continue;
		for (uint32_t bi = 0; bi < class_blocks(cls); bi++)
		{
			if (pm_load(&ch->bitmap[bi / 64]) & (UINT64_C(1) << (bi % 64)))
				fn(ctx, block_off(a, ci, cls, bi), (size_t) 1 << (cls + PM_ALLOC_MIN_SHIFT));
		}
	}
}
