/*
 * pool.c
 *	  A pool file's life: create (under a temporary name, linked into place),
 *	  open, grow, close, the header words a host sets, and the volatile pool
 *	  that holds the DRAM tier.  The header and its crash marks are in
 *	  pool_header.c, the mappings in pool_map.c, the persistence modes in
 *	  pool_persist.c.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "pool_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <libpmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

static pm_errcode
errno_code(int e)
{
	switch (e)
	{
		case ENOENT:
			return PM_ERR_NOTFOUND;
		case EEXIST:
			return PM_ERR_EXISTS;
		case EACCES:
		case EPERM:
		case EROFS:
			return PM_ERR_PERMISSION;
		case ENOSPC:
		case EDQUOT:
		case EFBIG:
			return PM_ERR_NOSPACE;
		default:
			return PM_ERR_IO;
	}
}

pm_errcode
pmpool_sys_error(pm_error *err, const char *what, const char *path)
{
	int			e = errno;

	return pm_error_set(err, errno_code(e), e, "could not %s pool file \"%s\": %s",
						what, path, strerror(e));
}

/* Extend the file with real blocks, so a full disk is an error now, not SIGBUS later. */
static pm_errcode
reserve_file_space(int fd, uint64_t from, uint64_t to, const char *path, pm_error *err)
{
	int			e;

	if (to <= from)
		return PM_OK;
	e = posix_fallocate(fd, (off_t) from, (off_t) (to - from));
	if (e != 0)
	{
		errno = e;
		return pmpool_sys_error(err, "extend", path);
	}
	return PM_OK;
}

/*
 * Make the pool's file [from, to).  A volatile pool is extended without
 * allocating: its pages come at first touch, through a mapping that asked
 * for huge pages (memory that fallocate allocates is in small pages).
 */
static pm_errcode
extend_file(pm_pool *pool, uint64_t from, uint64_t to, pm_error *err)
{
	if (pool->persist.mode != PM_MODE_VOLATILE)
		return reserve_file_space(pool->fd, from, to, pool->path, err);
	if (ftruncate(pool->fd, (off_t) to) != 0)
		return pmpool_sys_error(err, "extend", pool->path);
	return PM_OK;
}

/* Flush file metadata in modes that promise durability beyond a process crash. */
static pm_errcode
sync_file(pm_pool *pool, pm_error *err)
{
	if (pool->persist.mode == PM_MODE_ADR || pool->persist.mode == PM_MODE_MSYNC)
	{
		if (fdatasync(pool->fd) != 0)
			return pmpool_sys_error(err, "sync", pool->path);
	}
	return PM_OK;
}

/* Make a new name in path's directory survive an OS crash. */
static pm_errcode
sync_directory_of(const char *path, pm_error *err)
{
	char		dir[4096];
	const char *slash = strrchr(path, '/');
	int			fd;
	pm_errcode	rc = PM_OK;
	size_t		len = slash == NULL ? 0 : slash == path ? 1 : (size_t) (slash - path);

	if (len >= sizeof(dir))
		return pm_error_set(err, PM_ERR_INVALID, 0, "pool path \"%s\" is too long", path);
	if (len == 0)
		strcpy(dir, ".");
	else
	{
		memcpy(dir, path, len);
		dir[len] = '\0';
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return pmpool_sys_error(err, "open", dir);
	if (fsync(fd) != 0)
		rc = pmpool_sys_error(err, "sync", dir);
	close(fd);
	return rc;
}

/* A pm_pool with nothing open or mapped yet; NULL when out of memory. */
static pm_pool *
new_pool_struct(const char *path)
{
	pm_pool    *pool = calloc(1, sizeof(*pool));

	if (pool == NULL || (pool->path = strdup(path)) == NULL)
	{
		free(pool);
		return NULL;
	}
	pool->fd = -1;
	pthread_mutex_init(&pool->grow_mutex, NULL);
	pthread_mutex_init(&pool->map_mutex, NULL);
	return pool;
}

pm_errcode
pm_pool_open(const char *path, pm_mode mode, pm_pool **out, pm_error *err)
{
	pm_pool    *pool;
	pm_pool_header hdr;
	pm_errcode	rc;

	*out = NULL;
	rc = pm_pool_read_header(path, &hdr, NULL, err);
	if (rc != PM_OK)
		return rc;

	pool = new_pool_struct(path);
	if (pool == NULL)
		return pm_error_set(err, PM_ERR_NOMEM, 0, "out of memory opening pool file \"%s\"", path);
	pool->fd = open(path, O_RDWR | O_CLOEXEC);
	if (pool->fd < 0)
	{
		rc = pmpool_sys_error(err, "open", path);
		goto fail;
	}
	pool->max_size = hdr.max_size;
	rc = pmpool_map_window(pool, pmpool_window_for(pool, hdr.size), err);
	if (rc != PM_OK)
		goto fail;
	/* revalidate through the mapping: the file may have changed since the read */
	rc = pmpool_header_validate(pool->hdr, pool->fd, path, err);
	if (rc != PM_OK)
		goto fail;

	pool->persist.mode = pm_mode_resolve(mode, pool->is_pmem, pmem_has_auto_flush() == 1,
										 &pool->weak_durability);
	if (pm_load(&pool->hdr->mode) != (uint64_t) pool->persist.mode)
	{
		pm_store(&pool->hdr->mode, (uint64_t) pool->persist.mode);
		pm_persist(&pool->persist, &pool->hdr->mode, sizeof(uint64_t));
	}
	rc = pmpool_mark_boot(pool, err);
	if (rc != PM_OK)
		goto fail;
	*out = pool;
	return PM_OK;

fail:
	pm_pool_close(pool);
	return rc;
}

pm_errcode
pm_pool_create(const char *path, const pm_pool_create_opts *opts, pm_pool **out,
			   pm_error *err)
{
	char		tmp[4096];
	pm_pool_header hdr;
	uint64_t	size;
	uint64_t	max_size = opts->max_size ? opts->max_size : PM_POOL_DEFAULT_MAX_SIZE;
	int			fd;
	pm_errcode	rc;

	*out = NULL;
	if (opts->mode > PM_MODE_MSYNC)
		return pm_error_set(err, PM_ERR_INVALID, 0, "invalid persistence mode for pool \"%s\"", path);
	if (opts->flags & ~PM_POOL_FLAGS_KNOWN)
		return pm_error_set(err, PM_ERR_INVALID, 0, "unknown flags for pool \"%s\"", path);
	size = PM_POOL_HEADER_SIZE +
		pmpool_round_up(opts->initial_size ? opts->initial_size : PM_POOL_CHUNK_SIZE, PM_POOL_CHUNK_SIZE);
	max_size = pmpool_round_up(max_size, PM_POOL_CHUNK_SIZE) + PM_POOL_HEADER_SIZE;
	if (size > max_size)
		return pm_error_set(err, PM_ERR_INVALID, 0,
							"initial size of pool \"%s\" exceeds its maximum size", path);
	if ((size_t) snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= sizeof(tmp))
		return pm_error_set(err, PM_ERR_INVALID, 0, "pool path \"%s\" is too long", path);

	/*
	 * Build the whole file under a temporary name and link it into place, so
	 * a crash never leaves a half-written pool under the real name; the
	 * orphan sweep removes leftover *.tmp files.
	 */
	(void) unlink(tmp);
	fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return pmpool_sys_error(err, "create", tmp);
	rc = reserve_file_space(fd, 0, size, tmp, err);
	if (rc != PM_OK)
		goto fail;

	pmpool_header_init(&hdr, opts->mode == PM_MODE_AUTO ? PM_MODE_EADR : opts->mode, max_size, size);
	if (opts->uuid != NULL)
		memcpy(hdr.uuid, opts->uuid, sizeof(hdr.uuid));
	else
	{
		if (getrandom(hdr.uuid, sizeof(hdr.uuid), 0) != (ssize_t) sizeof(hdr.uuid))
		{
			rc = pmpool_sys_error(err, "generate a UUID for", tmp);
			goto fail;
		}
		hdr.uuid[6] = (hdr.uuid[6] & 0x0f) | 0x40;	/* RFC 4122 version 4 */
		hdr.uuid[8] = (hdr.uuid[8] & 0x3f) | 0x80;
	}
	hdr.owner = opts->owner;
	{
		struct timespec now;

		clock_gettime(CLOCK_REALTIME, &now);
		hdr.created_at = (uint64_t) now.tv_sec * 1000000 + (uint64_t) now.tv_nsec / 1000;
	}
	hdr.static_checksum = pmpool_header_checksum(&hdr);
	hdr.clean_shutdown = PM_POOL_IN_USE;
	hdr.flags = opts->flags;
	hdr.writer_boot = pm_current_boot();
	if (pwrite(fd, &hdr, sizeof(hdr), 0) != (ssize_t) sizeof(hdr))
	{
		rc = pmpool_sys_error(err, "write", tmp);
		goto fail;
	}
	/* in every mode: an OS crash must find either no pool or a valid header */
	if (fsync(fd) != 0)
	{
		rc = pmpool_sys_error(err, "sync", tmp);
		goto fail;
	}
	close(fd);
	fd = -1;

	if (opts->replace)
	{
		if (rename(tmp, path) != 0)
		{
			rc = pmpool_sys_error(err, "rename", tmp);
			goto fail;
		}
	}
	else
	{
		if (link(tmp, path) != 0)
		{
			rc = pmpool_sys_error(err, "create", path);
			goto fail;
		}
		(void) unlink(tmp);
	}
	rc = sync_directory_of(path, err);
	if (rc != PM_OK)
		return rc;
	return pm_pool_open(path, opts->mode, out, err);

fail:
	if (fd >= 0)
		close(fd);
	(void) unlink(tmp);
	return rc;
}

/*
 * A volatile pool: the DRAM tier, shared by the processes a host forks after
 * creating it.  An anonymous shared file (memfd) holds it; it vanishes with
 * the last process that has it open or mapped.  Its space comes zeroed from
 * the kernel, which is what a fresh allocator needs, and it grows like a
 * pool file, up to max_size.
 */
pm_errcode
pm_pool_create_volatile(const char *name, uint64_t max_size, pm_pool **out, pm_error *err)
{
	pm_pool    *pool;
	pm_pool_header hdr;
	pm_errcode	rc;

	*out = NULL;
	pool = new_pool_struct(name);
	if (pool == NULL)
		return pm_error_set(err, PM_ERR_NOMEM, 0, "out of memory creating %s", name);
	pool->persist.mode = PM_MODE_VOLATILE;
	pool->max_size = pmpool_round_up(max_size, PM_POOL_CHUNK_SIZE) + PM_POOL_HEADER_SIZE;
	pool->fd = memfd_create("pm_index_dram_tier", MFD_CLOEXEC);
	if (pool->fd < 0)
	{
		rc = pmpool_sys_error(err, "create", name);
		goto fail;
	}
	pmpool_header_init(&hdr, PM_MODE_VOLATILE, pool->max_size, PM_POOL_HEADER_SIZE + PM_POOL_CHUNK_SIZE);
	rc = extend_file(pool, 0, hdr.size, err);
	if (rc != PM_OK)
		goto fail;
	if (pwrite(pool->fd, &hdr, sizeof(hdr), 0) != (ssize_t) sizeof(hdr))
	{
		rc = pmpool_sys_error(err, "write", name);
		goto fail;
	}
	rc = pmpool_map_window(pool, pmpool_window_for(pool, hdr.size), err);
	if (rc != PM_OK)
		goto fail;
	*out = pool;
	return PM_OK;

fail:
	pm_pool_close(pool);
	return rc;
}

void
pm_pool_close(pm_pool *pool)
{
	if (pool == NULL)
		return;
	pmpool_unmap_all(pool);
	if (pool->fd >= 0)
		close(pool->fd);
	pthread_mutex_destroy(&pool->grow_mutex);
	pthread_mutex_destroy(&pool->map_mutex);
	free(pool->path);
	free(pool);
}

/* ---------- growth ---------- */

/*
 * Threads of one process serialize on grow_mutex; processes on an fcntl
 * lock of the file (released by the kernel if the holder dies).  The order
 * is: extend the file (real blocks), sync its metadata where the mode asks
 * for durability, then publish the new size word.  A crash between the two
 * leaves a file longer than the size word; open accepts that, the tail is
 * zeroes and is never handed out.
 */
pm_errcode
pm_pool_grow(pm_pool *pool, uint64_t min_size, pm_error *err)
{
	struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1};
	uint64_t	cur;
	uint64_t	target;
	pm_errcode	rc = PM_OK;

	min_size = PM_POOL_HEADER_SIZE + pmpool_round_up(min_size - PM_POOL_HEADER_SIZE, PM_POOL_CHUNK_SIZE);
	if (min_size <= pm_pool_size(pool))
		return PM_OK;
	if (min_size > pool->max_size)
	{
		if (pool->persist.mode == PM_MODE_VOLATILE)
			return pm_error_set(err, PM_ERR_ARENA_FULL, 0, "%s is full (%llu bytes)",
								pool->path, (unsigned long long) pm_pool_size(pool));
		return pm_error_set(err, PM_ERR_POOL_MAX, 0,
							"pool file \"%s\" would exceed its maximum size of %llu bytes",
							pool->path, (unsigned long long) pool->max_size);
	}

	pthread_mutex_lock(&pool->grow_mutex);
	while (fcntl(pool->fd, F_SETLKW, &fl) != 0)
	{
		if (errno != EINTR)
		{
			rc = pmpool_sys_error(err, "lock", pool->path);
			pthread_mutex_unlock(&pool->grow_mutex);
			return rc;
		}
	}
	cur = pm_pool_size(pool);
	if (min_size > cur)
	{
		/* grow by at least an eighth, so many small indexes stay small and big ones grow rarely */
		target = cur + pmpool_round_up(cur / 8, PM_POOL_CHUNK_SIZE);
		if (target < min_size)
			target = min_size;
		if (target > pool->max_size)
			target = pool->max_size;
		/* map the new space first: the grower uses it at once, and may fail here cleanly */
		rc = pmpool_extend_mapping(pool, target, err);
		if (rc == PM_OK)
			rc = extend_file(pool, cur, target, err);
		if (rc != PM_OK && target > min_size)
		{
			/* short of disk or address space, settle for what was asked */
			target = min_size;
			rc = pmpool_extend_mapping(pool, target, err);
			if (rc == PM_OK)
				rc = extend_file(pool, cur, target, err);
		}
		if (rc == PM_OK)
			rc = sync_file(pool, err);
		if (rc != PM_OK && pool->persist.mode == PM_MODE_VOLATILE && err != NULL)
			rc = pm_error_set(err, PM_ERR_ARENA_FULL, err->sys_errno, "%s cannot grow past %llu bytes: %s",
							  pool->path, (unsigned long long) cur, strerror(err->sys_errno));
		if (rc == PM_OK)
		{
			pm_store(&pool->hdr->size, target);
			pm_persist(&pool->persist, &pool->hdr->size, sizeof(uint64_t));
		}
	}
	fl.l_type = F_UNLCK;
	(void) fcntl(pool->fd, F_SETLK, &fl);
	pthread_mutex_unlock(&pool->grow_mutex);
	return rc;
}

void
pm_pool_set_root(pm_pool *pool, int i, uint64_t off)
{
	pm_store(&pool->hdr->roots[i], off);
	pm_persist(&pool->persist, &pool->hdr->roots[i], sizeof(uint64_t));
}

void
pm_pool_set_flag(pm_pool *pool, uint64_t flag)
{
	pm_fetch_or(&pool->hdr->flags, flag);
	pm_persist(&pool->persist, &pool->hdr->flags, sizeof(uint64_t));
}

void
pm_pool_clear_flag(pm_pool *pool, uint64_t flag)
{
	pm_fetch_and(&pool->hdr->flags, ~flag);
	pm_persist(&pool->persist, &pool->hdr->flags, sizeof(uint64_t));
}

void
pm_pool_set_host_position(pm_pool *pool, uint64_t position)
{
	pm_store(&pool->hdr->host_position, position);
	pm_persist(&pool->persist, &pool->hdr->host_position, sizeof(uint64_t));
}

void
pm_pool_set_trace(pm_pool *pool, const pm_trace_hooks *hooks)
{
	if (hooks == NULL)
		pool->persist.trace = NULL;
	else
	{
		pool->trace = *hooks;
		pool->persist.trace = &pool->trace;
	}
}
