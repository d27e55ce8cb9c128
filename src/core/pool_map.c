/*
 * pool_map.c
 *	  How a process maps a pool: one window with room past the pool's size,
 *	  extents added at other addresses when a lock-free reader follows an
 *	  offset past it, and the window remade between operations.
 *
 * Each process maps a pool with room past its current size
 * (pmpool_window_for), MAP_SHARED and MAP_NORESERVE, so that a backend's
 * address space stays within a small multiple of the pools it uses.  Bytes
 * past end of file are never touched: the allocator hands out only offsets
 * below the committed extent.  A lock-free reader may follow an offset
 * written by a process that has just grown the pool past the reader's
 * mapping: the reader then maps the new part as an extent at another
 * address, without moving what it has mapped (addresses it holds stay
 * valid), and a host folds the extents into one window between operations
 * (pm_pool_remap).  Every extent ends at a chunk boundary, and no block
 * crosses one, so a block is always whole at one address.  pmem_map_file
 * cannot map past end of file, so the mapping is made here the way libpmem
 * makes it (MAP_SYNC first, which only DAX filesystems accept).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "pool_internal.h"

#include <fcntl.h>
#include <libpmem.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MAP_SHARED_VALIDATE
#define MAP_SHARED_VALIDATE 0x03
#endif
#ifndef MAP_SYNC
#define MAP_SYNC 0x80000
#endif

/*
 * Map len bytes of fd from offset off.  MAP_SYNC is tried first: only a DAX
 * filesystem accepts it, and then stores reach PM without page-cache
 * writeback, which is what "is PM" means here.
 */
static void *
map_range(int fd, uint64_t off, uint64_t len, bool *is_pmem)
{
	void	   *addr;

	*is_pmem = true;
	addr = mmap(NULL, len, PROT_READ | PROT_WRITE,
				MAP_SHARED_VALIDATE | MAP_SYNC | MAP_NORESERVE, fd, (off_t) off);
	if (addr == MAP_FAILED)
	{
		*is_pmem = false;
		addr = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, (off_t) off);
	}
	/* pmem_is_pmem honours PMEM_IS_PMEM_FORCE (used to exercise PM code paths) */
	if (addr != MAP_FAILED && !*is_pmem)
		*is_pmem = pmem_is_pmem(addr, 64) != 0;
	return addr;
}

/*
 * The DRAM tier is walked like the inner nodes of a tree are: ask for
 * transparent huge pages, which shared memory gets where the kernel's
 * shmem_enabled setting is "advise" (PostgreSQL's own shared memory uses
 * huge_pages instead).  Pools on a DAX or huge tmpfs mount get large pages
 * from their filesystem.
 */
static void
advise_huge_pages(const pm_pool *pool, void *addr, uint64_t len)
{
	if (pool->persist.mode == PM_MODE_VOLATILE)
		(void) madvise(addr, len, MADV_HUGEPAGE);
}

/* A chunk boundary at or above v, within the pool's max_size. */
static uint64_t
chunk_boundary(const pm_pool *pool, uint64_t v)
{
	uint64_t	b = v <= PM_POOL_HEADER_SIZE ? PM_POOL_HEADER_SIZE :
		PM_POOL_HEADER_SIZE + pmpool_round_up(v - PM_POOL_HEADER_SIZE, PM_POOL_CHUNK_SIZE);

	return b < pool->max_size ? b : pool->max_size;
}

/* The mapping a process makes for a pool of size bytes: the size again, at least 8 MiB more. */
uint64_t
pmpool_window_for(const pm_pool *pool, uint64_t size)
{
	uint64_t	headroom = size > PM_POOL_MIN_HEADROOM ? size : PM_POOL_MIN_HEADROOM;

	return chunk_boundary(pool, size + headroom);
}

static uint64_t
mapped_end(const pm_pool *pool)
{
	uint32_t	n = __atomic_load_n(&pool->nextents, __ATOMIC_ACQUIRE);

	return n == 0 ? pool->window : pool->extents[n - 1].end;
}

void
pmpool_unmap_all(pm_pool *pool)
{
	for (uint32_t i = 0; i < pool->nextents; i++)
		munmap(pool->extents[i].addr, pool->extents[i].end - pool->extents[i].start);
	pool->nextents = 0;
	if (pool->base != NULL)
		munmap(pool->base, pool->window);
	pool->base = NULL;
	pool->window = 0;
	pool->hdr = NULL;
}

/* Replace every mapping of the pool by one window of len bytes. */
pm_errcode
pmpool_map_window(pm_pool *pool, uint64_t len, pm_error *err)
{
	bool		is_pmem;
	void	   *addr = map_range(pool->fd, 0, len, &is_pmem);

	if (addr == MAP_FAILED)
		return pmpool_sys_error(err, "map", pool->path);
	advise_huge_pages(pool, addr, len);
	pmpool_unmap_all(pool);
	pool->base = addr;
	pool->window = len;
	pool->hdr = (pm_pool_header *) addr;
	pool->is_pmem = is_pmem;
	return PM_OK;
}

/*
 * Map the pool up to at least offset need (exclusive) as a new extent sized
 * from the pool's current size.  Threads of the process serialize on
 * map_mutex; readers find the extent once nextents says so.
 */
pm_errcode
pmpool_extend_mapping(pm_pool *pool, uint64_t need, pm_error *err)
{
	pm_errcode	rc = PM_OK;
	uint64_t	start;
	uint64_t	end;

	pthread_mutex_lock(&pool->map_mutex);
	start = mapped_end(pool);
	if (need > start)
	{
		bool		is_pmem;
		void	   *addr;

		/* up to max_size, this is at least need */
		end = pmpool_window_for(pool, pm_pool_size(pool) > need ? pm_pool_size(pool) : need);
		if (need > pool->max_size || pool->nextents == PM_POOL_MAX_EXTENTS)
			rc = pm_error_set(err, PM_ERR_CORRUPT, 0,
							  "pool file \"%s\": offset %llu is beyond what the pool can map",
							  pool->path, (unsigned long long) need);
		else if ((addr = map_range(pool->fd, start, end - start, &is_pmem)) == MAP_FAILED)
			rc = pmpool_sys_error(err, "map", pool->path);
		else
		{
			pm_pool_extent *e = &pool->extents[pool->nextents];

			advise_huge_pages(pool, addr, end - start);
			e->start = start;
			e->end = end;
			e->addr = addr;
			__atomic_store_n(&pool->nextents, pool->nextents + 1, __ATOMIC_RELEASE);
		}
	}
	pthread_mutex_unlock(&pool->map_mutex);
	return rc;
}

void *
pm_pool_addr_far(const pm_pool *cpool, uint64_t off)
{
	pm_pool    *pool = (pm_pool *) cpool;

	for (;;)
	{
		uint32_t	n = __atomic_load_n(&pool->nextents, __ATOMIC_ACQUIRE);
		pm_error	err;

		for (uint32_t i = n; i-- > 0;)
		{
			const pm_pool_extent *e = &pool->extents[i];

			if (off >= e->start && off < e->end)
				return e->addr + (off - e->start);
		}
		if (pmpool_extend_mapping(pool, off + 1, &err) != PM_OK)
			pm_fatal("%s", err.msg);
	}
}

uint64_t
pm_pool_off_far(const pm_pool *pool, const void *addr)
{
	uint32_t	n = __atomic_load_n(&pool->nextents, __ATOMIC_ACQUIRE);
	const char *a = addr;

	for (uint32_t i = 0; i < n; i++)
	{
		const pm_pool_extent *e = &pool->extents[i];

		if (a >= e->addr && a < e->addr + (e->end - e->start))
			return e->start + (uint64_t) (a - e->addr);
	}
	pm_assert(!"address outside every mapping of the pool");
	return 0;
}

uint64_t
pm_pool_mapped(const pm_pool *pool)
{
	return mapped_end(pool);
}

pm_errcode
pm_pool_remap(pm_pool *pool, pm_error *err)
{
	uint64_t	size = pm_pool_size(pool);
	uint64_t	want;

	/* called before every operation: done when one window has room left or is the whole pool */
	if (pool->nextents == 0 &&
		(pool->window >= size + PM_POOL_MIN_HEADROOM / 2 || pool->window == pool->max_size))
		return PM_OK;
	want = pmpool_window_for(pool, size);
	return pmpool_map_window(pool, want > mapped_end(pool) ? want : mapped_end(pool), err);
}

pm_errcode
pm_pool_map_full(pm_pool *pool, pm_error *err)
{
	if (pool->nextents == 0 && pool->window == pool->max_size)
		return PM_OK;
	return pmpool_map_window(pool, pool->max_size, err);
}

pm_errcode
pm_path_is_pmem(const char *path, bool *is_pmem, pm_error *err)
{
	int			fd = open(path, O_RDWR | O_CLOEXEC);
	void	   *addr;

	if (fd < 0)
		return pmpool_sys_error(err, "open", path);
	addr = map_range(fd, 0, 4096, is_pmem);
	if (addr == MAP_FAILED)
	{
		pm_errcode	rc = pmpool_sys_error(err, "map", path);

		close(fd);
		return rc;
	}
	munmap(addr, 4096);
	close(fd);
	return PM_OK;
}
