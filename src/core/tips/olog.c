/*
 * olog.c
 *	  The operation log of a pool; see olog.h.
 */
#include "olog.h"

#include <string.h>

#define LANE_BYTES	PM_ALLOC_MAX_BLOCK

/* A record: the host position, then the entry, in whole words. */
static uint32_t
record_size_for(uint32_t entry_size)
{
	return (8 + entry_size + 7) / 8 * 8;
}

static uint32_t
capacity_for(uint32_t entry_size)
{
	return (LANE_BYTES - sizeof(pm_olog_lane)) / record_size_for(entry_size);
}

static uint64_t *
record_words(const pm_olog *o, pm_olog_lane *l, uint64_t pos)
{
	return (uint64_t *) ((char *) l->records + (pos % o->capacity) * o->record_size);
}

pm_errcode
pm_olog_create(pm_pool *pool, pm_alloc *a, uint32_t nlanes, uint32_t entry_size, pm_error *err)
{
	uint64_t	dir_off;
	pm_olog    *o;

	if (nlanes == 0 || nlanes > PM_OLOG_MAX_LANES || entry_size == 0 || entry_size > PM_OLOG_MAX_ENTRY)
		return pm_error_set(err, PM_ERR_INVALID, 0,
							"pool file \"%s\": an operation log of %u lanes of %u-byte entries",
							pool->path, nlanes, entry_size);
	if ((dir_off = pm_alloc_block(a, sizeof(pm_olog), err)) == 0)
		return err->code;
	o = pm_pool_addr(pool, dir_off);
	memset(o, 0, sizeof(*o));
	o->nlanes = nlanes;
	o->entry_size = entry_size;
	o->record_size = record_size_for(entry_size);
	o->capacity = capacity_for(entry_size);
	for (uint32_t i = 0; i < nlanes; i++)
	{
		uint64_t	off = pm_alloc_block(a, LANE_BYTES, err);

		if (off == 0)
		{
			/* the blocks allocated so far are unreachable: allocator recovery frees them */
			return err->code;
		}
		memset(pm_pool_addr(pool, off), 0, sizeof(pm_olog_lane));
		pm_persist(&pool->persist, pm_pool_addr(pool, off), sizeof(pm_olog_lane));
		o->lane[i] = off;
	}
	pm_persist(&pool->persist, o, sizeof(*o));
	pm_pool_set_root(pool, PM_OLOG_ROOT, dir_off);
	return PM_OK;
}

bool
pm_olog_append(const pm_pool *pool, const pm_olog *o, uint32_t lane, const void *entry,
			   uint64_t host_pos)
{
	pm_olog_lane *l = pm_olog_lane_at(pool, o, lane);
	uint64_t	tail = pm_load_relaxed(&l->tail);
	uint64_t   *r;

	if (tail - pm_load(&l->reclaimed) >= o->capacity)
		return false;
	r = record_words(o, l, tail);
	r[0] = host_pos;
	memcpy(r + 1, entry, o->entry_size);
	pm_persist(&pool->persist, r, o->record_size);
	/* the durability point: the record is durable before the tail names it */
	pm_store(&l->tail, tail + 1);
	pm_persist(&pool->persist, &l->tail, sizeof(uint64_t));
	return true;
}

pm_olog_record
pm_olog_record_at(const pm_pool *pool, const pm_olog *o, uint32_t lane, uint64_t pos)
{
	uint64_t   *r = record_words(o, pm_olog_lane_at(pool, o, lane), pos);
	pm_olog_record rec = {r[0], r + 1};

	return rec;
}

/* Move a lane position forward to upto, at most limit, and persist it. */
static void
advance(const pm_pool *pool, uint64_t *position, uint64_t upto, uint64_t limit)
{
	pm_assert(upto >= pm_load(position) && upto <= limit);
	pm_store(position, upto);
	pm_persist(&pool->persist, position, sizeof(uint64_t));
}

void
pm_olog_set_applied(const pm_pool *pool, const pm_olog *o, uint32_t lane, uint64_t upto)
{
	pm_olog_lane *l = pm_olog_lane_at(pool, o, lane);

	advance(pool, &l->applied, upto, pm_load(&l->tail));
}

void
pm_olog_reclaim(const pm_pool *pool, const pm_olog *o, uint32_t lane, uint64_t upto)
{
	pm_olog_lane *l = pm_olog_lane_at(pool, o, lane);

	advance(pool, &l->reclaimed, upto, pm_load(&l->applied));
}

pm_errcode
pm_olog_validate(const pm_pool *pool, pm_error *err)
{
	uint64_t	dir_off = pm_pool_root(pool, PM_OLOG_ROOT);
	const pm_olog *o;

	if (dir_off == 0)
		return PM_OK;
	if (!pm_alloc_block_in_pool(pool, dir_off, sizeof(pm_olog)))
		return pm_error_set(err, PM_ERR_CORRUPT, 0, "pool file \"%s\" names an operation log at offset %llu, outside the pool",
							pool->path, (unsigned long long) dir_off);
	o = pm_pool_addr(pool, dir_off);
	if (o->nlanes == 0 || o->nlanes > PM_OLOG_MAX_LANES || o->entry_size == 0 ||
		o->entry_size > PM_OLOG_MAX_ENTRY || o->record_size != record_size_for(o->entry_size) ||
		o->capacity != capacity_for(o->entry_size))
		return pm_error_set(err, PM_ERR_CORRUPT, 0, "pool file \"%s\" has a damaged operation log directory",
							pool->path);
	for (uint32_t i = 0; i < o->nlanes; i++)
	{
		uint64_t	off = pm_load(&o->lane[i]);
		const pm_olog_lane *l;
		uint64_t	tail,
					applied,
					reclaimed;

		if (!pm_alloc_block_in_pool(pool, off, LANE_BYTES))
			return pm_error_set(err, PM_ERR_CORRUPT, 0, "pool file \"%s\": operation log lane %u is outside the pool",
								pool->path, i);
		l = pm_pool_addr(pool, off);
		tail = pm_load(&l->tail);
		applied = pm_load(&l->applied);
		reclaimed = pm_load(&l->reclaimed);
		if (!(reclaimed <= applied && applied <= tail && tail - reclaimed <= o->capacity))
			return pm_error_set(err, PM_ERR_CORRUPT, 0,
								"pool file \"%s\": operation log lane %u has positions out of order (%llu, %llu, %llu)",
								pool->path, i, (unsigned long long) reclaimed,
								(unsigned long long) applied, (unsigned long long) tail);
	}
	return PM_OK;
}

pm_errcode
pm_olog_mark(pm_alloc *a, const pm_pool *pool, pm_error *err)
{
	const pm_olog *o = pm_olog_of(pool);
	pm_errcode	rc;

	if (o == NULL)
		return PM_OK;
	rc = pm_alloc_mark(a, pm_pool_root(pool, PM_OLOG_ROOT), err);
	for (uint32_t i = 0; rc == PM_OK && i < o->nlanes; i++)
		rc = pm_alloc_mark(a, pm_load(&o->lane[i]), err);
	return rc;
}
