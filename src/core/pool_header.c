/*
 * pool_header.c
 *	  A pool's header: its layout when created, its validation against the
 *	  file it came from, and the marks that tell an operating-system crash
 *	  (which may have torn a pool on storage that loses writes then) from a
 *	  process crash.  The protocol is in pool.h.
 */
#include "pool_internal.h"

#include <fcntl.h>
#include <libpmem.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static const char pm_pool_magic[8] = {'P', 'M', 'I', 'N', 'D', 'E', 'X', '1'};

/* A new header's format, layout, sizes and mode; the creator adds the rest. */
void
pmpool_header_init(pm_pool_header *hdr, pm_mode mode, uint64_t max_size, uint64_t size)
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

uint64_t
pmpool_header_checksum(const pm_pool_header *hdr)
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
pm_errcode
pmpool_header_validate(const pm_pool_header *hdr, int fd, const char *path, pm_error *err)
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
		return pmpool_sys_error(err, "stat", path);
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
	if (hdr->static_checksum != pmpool_header_checksum(hdr))
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
		return pmpool_sys_error(err, "open", path);
	memset(hdr, 0, sizeof(*hdr));
	n = pread(fd, hdr, sizeof(*hdr), 0);
	if (n < 0)
	{
		rc = pmpool_sys_error(err, "read", path);
		close(fd);
		return rc;
	}
	rc = pmpool_header_validate(hdr, fd, path, err);
	if (file_size)
		*file_size = fstat(fd, &st) == 0 ? (uint64_t) st.st_size : 0;
	close(fd);
	return rc;
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
		return pmpool_sys_error(err, "sync", pool->path);
	return PM_OK;
}

/* The open's part of the protocol in pool.h. */
pm_errcode
pmpool_mark_boot(pm_pool *pool, pm_error *err)
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
		return pmpool_sys_error(err, "sync", pool->path);
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
		return pmpool_sys_error(err, "open", path);
	if (fdatasync(fd) != 0 ||
		pwrite(fd, &clean, sizeof(clean), offsetof(pm_pool_header, clean_shutdown)) != (ssize_t) sizeof(clean) ||
		fdatasync(fd) != 0)
	{
		rc = pmpool_sys_error(err, "mark clean", path);
		close(fd);
		return rc;
	}
	close(fd);
	*marked = true;
	return PM_OK;
}
