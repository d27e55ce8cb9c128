/*
 * pool.c
 *	  Pool files: create, open, map, grow, header validation, and the slow
 *	  paths of the persistence primitives.
 *
 * Mapping: each process maps a pool with room past its current size
 * (window_for), MAP_SHARED and MAP_NORESERVE, so that a backend's address
 * space stays within a small multiple of the pools it uses.  Bytes past end
 * of file are never touched: the allocator hands out only offsets below the
 * committed extent.  A lock-free reader may follow an offset written by a
 * process that has just grown the pool past the reader's mapping: the
 * reader then maps the new part as an extent at another address, without
 * moving what it has mapped (addresses it holds stay valid), and a host
 * folds the extents into one window between operations (pm_pool_remap).
 * Every extent ends at a chunk boundary, and no block crosses one, so a
 * block is always whole at one address.  pmem_map_file cannot map past end
 * of file, so the mapping is made here the way libpmem makes it (MAP_SYNC
 * first, which only DAX filesystems accept) and libpmem provides the flush,
 * drain, msync and detection primitives.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "pool.h"

#include <errno.h>
#include <fcntl.h>
#include <libpmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef MAP_SHARED_VALIDATE
#define MAP_SHARED_VALIDATE 0x03
#endif
#ifndef MAP_SYNC
#define MAP_SYNC 0x80000
#endif

static const char pm_pool_magic[8] = {'P', 'M', 'I', 'N', 'D', 'E', 'X', '1'};

__thread pm_counters pm_tls_counters;

/* ---------- modes ---------- */

const char *
pm_mode_name(pm_mode mode)
{
	switch (mode)
	{
		case PM_MODE_AUTO:
			return "auto";
		case PM_MODE_EADR:
			return "eadr";
		case PM_MODE_ADR:
			return "adr";
		case PM_MODE_MSYNC:
			return "msync";
		case PM_MODE_VOLATILE:
			return "volatile";
	}
	return "unknown";
}

bool
pm_mode_parse(const char *name, pm_mode *mode)
{
	for (pm_mode m = PM_MODE_AUTO; m <= PM_MODE_MSYNC; m++)
	{
		if (strcmp(name, pm_mode_name(m)) == 0)
		{
			*mode = m;
			return true;
		}
	}
	return false;
}

pm_mode
pm_mode_resolve(pm_mode requested, bool is_pmem, bool has_auto_flush, bool *weak)
{
	if (weak)
		*weak = false;
	if (requested != PM_MODE_AUTO)
		return requested;
	if (is_pmem)
		return has_auto_flush ? PM_MODE_EADR : PM_MODE_ADR;
	if (weak)
		*weak = true;
	return PM_MODE_EADR;
}

/* ---------- persistence slow paths ---------- */

void
pm_flush_slow(const pm_persister *p, const void *addr, size_t len)
{
	uintptr_t	first = (uintptr_t) addr & ~(uintptr_t) (PM_CACHELINE - 1);
	uintptr_t	end = (uintptr_t) addr + len;

	if (p->trace != NULL && p->trace->on_flush != NULL)
		p->trace->on_flush(p->trace->ctx, addr, len);

	switch (p->mode)
	{
		case PM_MODE_ADR:
			pm_tls_counters.flushes += (end - first + PM_CACHELINE - 1) / PM_CACHELINE;
			pmem_flush(addr, len);
			break;
		case PM_MODE_MSYNC:
			pm_tls_counters.flushes += (end - first + PM_CACHELINE - 1) / PM_CACHELINE;
			/* pmem_msync aligns to pages itself; it cannot fail on a live map */
			(void) pmem_msync(addr, len);
			break;
		case PM_MODE_EADR:
		case PM_MODE_VOLATILE:
		case PM_MODE_AUTO:
			break;
	}
}

void
pm_drain_slow(const pm_persister *p)
{
	if (p->trace != NULL && p->trace->on_drain != NULL)
		p->trace->on_drain(p->trace->ctx);
	if (p->mode == PM_MODE_VOLATILE)
		return;
	pm_tls_counters.fences++;
	if (p->mode == PM_MODE_ADR)
		pmem_drain();
	else
		pm_full_fence();
}

/* ---------- helpers ---------- */

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

static pm_errcode
sys_error(pm_error *err, const char *what, const char *path)
{
	int			e = errno;

	return pm_error_set(err, errno_code(e), e, "could not %s pool file \"%s\": %s",
						what, path, strerror(e));
}

static uint64_t
round_up(uint64_t v, uint64_t to)
{
	return (v + to - 1) / to * to;
}

/* A new header's format, layout, sizes and mode; the creator adds the rest. */
static void
header_init(pm_pool_header *hdr, pm_mode mode, uint64_t max_size, uint64_t size)
{
	memset(hdr, 0, sizeof(*hdr));
	memcpy(hdr->magic, pm_pool_magic, sizeof(hdr->magic));
	hdr->format_version = PM_POOL_FORMAT_VERSION;
	hdr->header_size = PM_POOL_HEADER_SIZE;
	hdr->created_mode = mode;
	hdr->chunk_size = PM_POOL_CHUNK_SIZE;
	hdr->data_offset = PM_POOL_HEADER_SIZE;
	hdr->max_size = max_size;
	hdr->size = size;
	hdr->mode = mode;
}

static uint64_t
header_checksum(const pm_pool_header *hdr)
{
	return pm_fnv1a64(hdr, offsetof(pm_pool_header, static_checksum));
}

void
pm_uuid_format(const uint8_t uuid[16], char out[37])
{
	static const char hex[] = "0123456789abcdef";
	int			o = 0;

	for (int i = 0; i < 16; i++)
	{
		if (i == 4 || i == 6 || i == 8 || i == 10)
			out[o++] = '-';
		out[o++] = hex[uuid[i] >> 4];
		out[o++] = hex[uuid[i] & 15];
	}
	out[o] = '\0';
}

/*
 * Validate a header against the file it came from.  Each mutable word is
 * checked on its own; the static part by its checksum.
 */
static pm_errcode
header_validate(const pm_pool_header *hdr, int fd, const char *path, pm_error *err)
{
	uint64_t	size = pm_load(&hdr->size);
	uint64_t	mode = pm_load(&hdr->mode);
	uint64_t	clean = pm_load(&hdr->clean_shutdown);
	uint64_t	file_size;
	struct stat st;

	/*
	 * The file's length is read after the size word: a pool only grows, and
	 * its size word is published after the file is extended, so this order
	 * never mistakes a concurrent growth for truncation.
	 */
	if (fstat(fd, &st) != 0)
		return sys_error(err, "stat", path);
	file_size = (uint64_t) st.st_size;

	/*
	 * As PostgreSQL demands of its data directory, a pool belongs to the
	 * server's user alone: another user who may write it could change the
	 * index behind the server's back (a restore as the wrong user, a chmod).
	 */
	if (st.st_uid != geteuid())
		return pm_error_set(err, PM_ERR_OWNERSHIP, 0,
							"pool file \"%s\" is owned by user ID %u, not by the server's user ID %u",
							path, (unsigned) st.st_uid, (unsigned) geteuid());
	if (st.st_mode & (S_IWGRP | S_IWOTH))
		return pm_error_set(err, PM_ERR_OWNERSHIP, 0,
							"pool file \"%s\" is writable by group or others (mode %04o)",
							path, (unsigned) (st.st_mode & 07777));

	if (file_size < PM_POOL_HEADER_SIZE)
		return pm_error_set(err, PM_ERR_CORRUPT, 0,
							"pool file \"%s\" is truncated (%llu bytes, header needs %d)",
							path, (unsigned long long) file_size, PM_POOL_HEADER_SIZE);
	if (memcmp(hdr->magic, pm_pool_magic, sizeof(pm_pool_magic)) != 0)
		return pm_error_set(err, PM_ERR_CORRUPT, 0,
							"pool file \"%s\" has no pm_index pool header", path);
	if (hdr->format_version != PM_POOL_FORMAT_VERSION)
		return pm_error_set(err, PM_ERR_VERSION, 0,
							"pool file \"%s\" has format version %u, this build reads version %d",
							path, hdr->format_version, PM_POOL_FORMAT_VERSION);
	if (hdr->static_checksum != header_checksum(hdr))
		return pm_error_set(err, PM_ERR_CORRUPT, 0,
							"pool file \"%s\" has a header checksum mismatch", path);
	if (hdr->header_size != PM_POOL_HEADER_SIZE ||
		hdr->chunk_size != PM_POOL_CHUNK_SIZE ||
		hdr->data_offset != PM_POOL_HEADER_SIZE ||
		hdr->max_size < PM_POOL_HEADER_SIZE + PM_POOL_CHUNK_SIZE ||
		hdr->created_mode < PM_MODE_EADR || hdr->created_mode > PM_MODE_MSYNC)
		return pm_error_set(err, PM_ERR_CORRUPT, 0,
							"pool file \"%s\" has an invalid header geometry", path);

	if (size < hdr->data_offset || (size - hdr->data_offset) % hdr->chunk_size != 0 ||
		size > hdr->max_size)
		return pm_error_set(err, PM_ERR_CORRUPT, 0,
							"pool file \"%s\" has an invalid size word %llu", path,
							(unsigned long long) size);
	if (size > file_size)
		return pm_error_set(err, PM_ERR_CORRUPT, 0,
							"pool file \"%s\" is truncated (%llu bytes, header says %llu)",
							path, (unsigned long long) file_size, (unsigned long long) size);
	if (mode < PM_MODE_EADR || mode > PM_MODE_MSYNC)
		return pm_error_set(err, PM_ERR_CORRUPT, 0,
							"pool file \"%s\" has an invalid persistence mode word", path);
	if (clean != PM_POOL_CLEAN && clean != PM_POOL_IN_USE)
		return pm_error_set(err, PM_ERR_CORRUPT, 0,
							"pool file \"%s\" has an invalid shutdown marker", path);
	if (pm_load(&hdr->flags) & ~PM_POOL_FLAGS_KNOWN)
		return pm_error_set(err, PM_ERR_CORRUPT, 0,
							"pool file \"%s\" has unknown header flags", path);
	for (int i = 0; i < PM_POOL_NROOTS; i++)
	{
		uint64_t	r = pm_load(&hdr->roots[i]);

		if (r != 0 && (r < hdr->data_offset || r >= size || r % 8 != 0))
			return pm_error_set(err, PM_ERR_CORRUPT, 0,
								"pool file \"%s\" has an invalid root offset %llu in slot %d",
								path, (unsigned long long) r, i);
	}
	return PM_OK;
}

pm_errcode
pm_pool_read_header(const char *path, pm_pool_header *hdr, uint64_t *file_size,
					pm_error *err)
{
	int			fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	ssize_t		n;
	pm_errcode	rc;

	if (fd < 0)
		return sys_error(err, "open", path);
	memset(hdr, 0, sizeof(*hdr));
	n = pread(fd, hdr, sizeof(*hdr), 0);
	if (n < 0)
	{
		rc = sys_error(err, "read", path);
		close(fd);
		return rc;
	}
	rc = header_validate(hdr, fd, path, err);
	if (file_size)
		*file_size = fstat(fd, &st) == 0 ? (uint64_t) st.st_size : 0;
	close(fd);
	return rc;
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
		return sys_error(err, "extend", path);
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
		return sys_error(err, "extend", pool->path);
	return PM_OK;
}

/* Flush file metadata in modes that promise durability beyond a process crash. */
static pm_errcode
sync_file(pm_pool *pool, pm_error *err)
{
	if (pool->persist.mode == PM_MODE_ADR || pool->persist.mode == PM_MODE_MSYNC)
	{
		if (fdatasync(pool->fd) != 0)
			return sys_error(err, "sync", pool->path);
	}
	return PM_OK;
}

/* ---------- operating-system crashes ---------- */

/* The kernel's random boot id; PM_INDEX_BOOT_ID_FILE names another file (tests fake a reboot). */
#define PM_BOOT_ID_FILE "/proc/sys/kernel/random/boot_id"

uint64_t
pm_current_boot(void)
{
	const char *path = getenv("PM_INDEX_BOOT_ID_FILE");
	char		buf[128];
	ssize_t		n;
	size_t		len;
	int			fd;
	uint64_t	tag;

	if (path == NULL || path[0] == '\0')
		path = PM_BOOT_ID_FILE;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n <= 0)
		return 0;
	len = strcspn(buf, "\n");
	if (len > (size_t) n)
		len = (size_t) n;
	if (len == 0)
		return 0;
	tag = pm_fnv1a64(buf, len);
	return tag != 0 ? tag : 1;
}

bool
pm_header_torn(const pm_pool_header *hdr, uint64_t current_boot)
{
	return current_boot != 0 &&
		pm_load(&hdr->clean_shutdown) == PM_POOL_IN_USE &&
		pm_load(&hdr->writer_boot) != current_boot;
}

/* Would a kernel crash lose stores the pool has made visible? */
static bool
loses_writes_at_os_crash(const pm_pool *pool)
{
	return !pool->is_pmem && pool->persist.mode != PM_MODE_MSYNC;
}

/* Sync the header page itself, whatever the mode: the marks must precede any store. */
static pm_errcode
sync_header(pm_pool *pool, pm_error *err)
{
	if (pool->is_pmem)
	{
		pmem_persist(pool->hdr, sizeof(pm_pool_header));
		return PM_OK;
	}
	if (msync(pool->hdr, PM_POOL_HEADER_SIZE, MS_SYNC) != 0)
		return sys_error(err, "sync", pool->path);
	return PM_OK;
}

/* The open's part of the protocol in pool.h. */
static pm_errcode
mark_boot(pm_pool *pool, pm_error *err)
{
	uint64_t	boot = pm_current_boot();
	bool		in_use = pm_load(&pool->hdr->clean_shutdown) == PM_POOL_IN_USE;

	pool->torn = pm_header_torn(pool->hdr, boot);
	if (pool->torn)
		return PM_OK;
	if (loses_writes_at_os_crash(pool))
	{
		if (in_use && pm_load(&pool->hdr->writer_boot) == boot)
			return PM_OK;
		pm_store(&pool->hdr->writer_boot, boot);
		pm_store(&pool->hdr->clean_shutdown, PM_POOL_IN_USE);
		return sync_header(pool, err);
	}
	if (!in_use)
		return PM_OK;
	if (fdatasync(pool->fd) != 0)
		return sys_error(err, "sync", pool->path);
	pm_store(&pool->hdr->clean_shutdown, PM_POOL_CLEAN);
	return sync_header(pool, err);
}

pm_errcode
pm_pool_file_close_clean(const char *path, bool *marked, pm_error *err)
{
	pm_pool_header hdr;
	uint64_t	clean = PM_POOL_CLEAN;
	pm_errcode	rc;
	int			fd;

	*marked = false;
	rc = pm_pool_read_header(path, &hdr, NULL, err);
	if (rc != PM_OK)
		return rc;
	if (hdr.clean_shutdown == PM_POOL_CLEAN || (hdr.flags & PM_POOL_FLAG_UNTRUSTED) != 0 ||
		pm_header_torn(&hdr, pm_current_boot()))
		return PM_OK;
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return sys_error(err, "open", path);
	if (fdatasync(fd) != 0 ||
		pwrite(fd, &clean, sizeof(clean), offsetof(pm_pool_header, clean_shutdown)) != (ssize_t) sizeof(clean) ||
		fdatasync(fd) != 0)
	{
		rc = sys_error(err, "mark clean", path);
		close(fd);
		return rc;
	}
	close(fd);
	*marked = true;
	return PM_OK;
}

/* ---------- open / create / close ---------- */

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
		return sys_error(err, "open", dir);
	if (fsync(fd) != 0)
		rc = sys_error(err, "sync", dir);
	close(fd);
	return rc;
}

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
		PM_POOL_HEADER_SIZE + round_up(v - PM_POOL_HEADER_SIZE, PM_POOL_CHUNK_SIZE);

	return b < pool->max_size ? b : pool->max_size;
}

/* The mapping a process makes for a pool of size bytes: the size again, at least 8 MiB more. */
static uint64_t
window_for(const pm_pool *pool, uint64_t size)
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

static void
unmap_all(pm_pool *pool)
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
static pm_errcode
map_window(pm_pool *pool, uint64_t len, pm_error *err)
{
	bool		is_pmem;
	void	   *addr = map_range(pool->fd, 0, len, &is_pmem);

	if (addr == MAP_FAILED)
		return sys_error(err, "map", pool->path);
	advise_huge_pages(pool, addr, len);
	unmap_all(pool);
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
static pm_errcode
extend_mapping(pm_pool *pool, uint64_t need, pm_error *err)
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
		end = window_for(pool, pm_pool_size(pool) > need ? pm_pool_size(pool) : need);
		if (need > pool->max_size || pool->nextents == PM_POOL_MAX_EXTENTS)
			rc = pm_error_set(err, PM_ERR_CORRUPT, 0,
							  "pool file \"%s\": offset %llu is beyond what the pool can map",
							  pool->path, (unsigned long long) need);
		else if ((addr = map_range(pool->fd, start, end - start, &is_pmem)) == MAP_FAILED)
			rc = sys_error(err, "map", pool->path);
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
		if (extend_mapping(pool, off + 1, &err) != PM_OK)
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
	want = window_for(pool, size);
	return map_window(pool, want > mapped_end(pool) ? want : mapped_end(pool), err);
}

pm_errcode
pm_pool_map_full(pm_pool *pool, pm_error *err)
{
	if (pool->nextents == 0 && pool->window == pool->max_size)
		return PM_OK;
	return map_window(pool, pool->max_size, err);
}

pm_errcode
pm_path_is_pmem(const char *path, bool *is_pmem, pm_error *err)
{
	int			fd = open(path, O_RDWR | O_CLOEXEC);
	void	   *addr;

	if (fd < 0)
		return sys_error(err, "open", path);
	addr = map_range(fd, 0, 4096, is_pmem);
	if (addr == MAP_FAILED)
	{
		pm_errcode	rc = sys_error(err, "map", path);

		close(fd);
		return rc;
	}
	munmap(addr, 4096);
	close(fd);
	return PM_OK;
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
		rc = sys_error(err, "open", path);
		goto fail;
	}
	pool->max_size = hdr.max_size;
	rc = map_window(pool, window_for(pool, hdr.size), err);
	if (rc != PM_OK)
		goto fail;
	/* revalidate through the mapping: the file may have changed since the read */
	rc = header_validate(pool->hdr, pool->fd, path, err);
	if (rc != PM_OK)
		goto fail;

	pool->persist.mode = pm_mode_resolve(mode, pool->is_pmem, pmem_has_auto_flush() == 1,
										 &pool->weak_durability);
	if (pm_load(&pool->hdr->mode) != (uint64_t) pool->persist.mode)
	{
		pm_store(&pool->hdr->mode, (uint64_t) pool->persist.mode);
		pm_persist(&pool->persist, &pool->hdr->mode, sizeof(uint64_t));
	}
	rc = mark_boot(pool, err);
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
		round_up(opts->initial_size ? opts->initial_size : PM_POOL_CHUNK_SIZE, PM_POOL_CHUNK_SIZE);
	max_size = round_up(max_size, PM_POOL_CHUNK_SIZE) + PM_POOL_HEADER_SIZE;
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
		return sys_error(err, "create", tmp);
	rc = reserve_file_space(fd, 0, size, tmp, err);
	if (rc != PM_OK)
		goto fail;

	header_init(&hdr, opts->mode == PM_MODE_AUTO ? PM_MODE_EADR : opts->mode, max_size, size);
	if (opts->uuid != NULL)
		memcpy(hdr.uuid, opts->uuid, sizeof(hdr.uuid));
	else
	{
		if (getrandom(hdr.uuid, sizeof(hdr.uuid), 0) != (ssize_t) sizeof(hdr.uuid))
		{
			rc = sys_error(err, "generate a UUID for", tmp);
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
	hdr.static_checksum = header_checksum(&hdr);
	hdr.clean_shutdown = PM_POOL_IN_USE;
	hdr.flags = opts->flags;
	hdr.writer_boot = pm_current_boot();
	if (pwrite(fd, &hdr, sizeof(hdr), 0) != (ssize_t) sizeof(hdr))
	{
		rc = sys_error(err, "write", tmp);
		goto fail;
	}
	/* in every mode: an OS crash must find either no pool or a valid header */
	if (fsync(fd) != 0)
	{
		rc = sys_error(err, "sync", tmp);
		goto fail;
	}
	close(fd);
	fd = -1;

	if (opts->replace)
	{
		if (rename(tmp, path) != 0)
		{
			rc = sys_error(err, "rename", tmp);
			goto fail;
		}
	}
	else
	{
		if (link(tmp, path) != 0)
		{
			rc = sys_error(err, "create", path);
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
	pool->max_size = round_up(max_size, PM_POOL_CHUNK_SIZE) + PM_POOL_HEADER_SIZE;
	pool->fd = memfd_create("pm_index_dram_tier", MFD_CLOEXEC);
	if (pool->fd < 0)
	{
		rc = sys_error(err, "create", name);
		goto fail;
	}
	header_init(&hdr, PM_MODE_VOLATILE, pool->max_size, PM_POOL_HEADER_SIZE + PM_POOL_CHUNK_SIZE);
	rc = extend_file(pool, 0, hdr.size, err);
	if (rc != PM_OK)
		goto fail;
	if (pwrite(pool->fd, &hdr, sizeof(hdr), 0) != (ssize_t) sizeof(hdr))
	{
		rc = sys_error(err, "write", name);
		goto fail;
	}
	rc = map_window(pool, window_for(pool, hdr.size), err);
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
	unmap_all(pool);
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

	min_size = PM_POOL_HEADER_SIZE + round_up(min_size - PM_POOL_HEADER_SIZE, PM_POOL_CHUNK_SIZE);
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
			rc = sys_error(err, "lock", pool->path);
			pthread_mutex_unlock(&pool->grow_mutex);
			return rc;
		}
	}
	cur = pm_pool_size(pool);
	if (min_size > cur)
	{
		/* grow by at least an eighth, so many small indexes stay small and big ones grow rarely */
		target = cur + round_up(cur / 8, PM_POOL_CHUNK_SIZE);
		if (target < min_size)
			target = min_size;
		if (target > pool->max_size)
			target = pool->max_size;
		/* map the new space first: the grower uses it at once, and may fail here cleanly */
		rc = extend_mapping(pool, target, err);
		if (rc == PM_OK)
			rc = extend_file(pool, cur, target, err);
		if (rc != PM_OK && target > min_size)
		{
			/* short of disk or address space, settle for what was asked */
			target = min_size;
			rc = extend_mapping(pool, target, err);
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
