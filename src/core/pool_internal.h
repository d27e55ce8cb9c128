/*
 * pool_internal.h
 *	  What the files of a pool (pool.c, pool_header.c, pool_map.c) share;
 *	  nothing outside them includes it.
 */
#ifndef PM_POOL_INTERNAL_H
#define PM_POOL_INTERNAL_H

#include "pool.h"

static inline uint64_t
pmpool_round_up(uint64_t v, uint64_t to)
{
	return (v + to - 1) / to * to;
}

/* errno as a pm_error about the pool file at path ("could not <what> pool file ...") */
pm_errcode	pmpool_sys_error(pm_error *err, const char *what, const char *path);

/* pool_header.c */
void		pmpool_header_init(pm_pool_header *hdr, pm_mode mode, uint64_t max_size, uint64_t size);
uint64_t	pmpool_header_checksum(const pm_pool_header *hdr);
pm_errcode	pmpool_header_validate(const pm_pool_header *hdr, int fd, const char *path, pm_error *err);
pm_errcode	pmpool_mark_boot(pm_pool *pool, pm_error *err);

/* pool_map.c */
uint64_t	pmpool_window_for(const pm_pool *pool, uint64_t size);
pm_errcode	pmpool_map_window(pm_pool *pool, uint64_t len, pm_error *err);
void		pmpool_unmap_all(pm_pool *pool);
pm_errcode	pmpool_extend_mapping(pm_pool *pool, uint64_t need, pm_error *err);

#endif							/* PM_POOL_INTERNAL_H */
