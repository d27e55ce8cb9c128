/*
 * fuzz_common.h
 *	  What the pool fuzz targets share: the pool file a run writes (random
 *	  bytes, or a valid pool of the target's structure with patches), its
 *	  open, the reconciliation ring's read, and the DRAM arena.
 *
 * Each target (fuzz_<structure>.c) builds its valid pool once, with
 * fuzz_set_up and a fill function, then for every input writes the file
 * with fuzz_open and does with it what a backend does on an index's first
 * use after a start and on the statements that follow: recover, scan,
 * insert, delete, verify.  Random content must give an error, never a
 * crash, a sanitizer report or a hang.
 *
 * The first input byte picks the file: even, the rest of the input is the
 * whole file; odd, the rest is a list of patches (4-byte offset, 1-byte
 * length, the bytes) applied to the valid pool, so that the fuzzer gets
 * past the header's checksum to the roots, the ring and the nodes behind
 * them.  The input "\x01" (no patch) is that valid pool: tests/run seeds
 * every target's corpus with it.
 */
#ifndef FUZZ_COMMON_H
#define FUZZ_COMMON_H

#include "alloc.h"
#include "epoch.h"
#include "pool.h"
#include "recon.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FUZZ_FILE_LIMIT		(PM_POOL_HEADER_SIZE + 8 * PM_POOL_CHUNK_SIZE)
#define FUZZ_ARENA_SIZE		(8u << 20)
#define FUZZ_SPACE_PM		1	/* epoch spaces: blocks retired from the pool */
#define FUZZ_SPACE_DRAM		2	/* ... and from the DRAM tier */

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char fuzz_path[64];
static uint8_t *fuzz_image;		/* the valid pool file */
static size_t fuzz_image_size;
static void *fuzz_arena;		/* the DRAM tier's memory (nbtree, phast) */

static inline void
fuzz_remove_file(void)
{
	(void) unlink(fuzz_path);
}

/* Make the valid pool of structure kind: created, fill()ed, given a ring; keep its bytes. */
static inline void
fuzz_set_up(uint32_t kind, pm_errcode (*fill) (pm_pool *pool, pm_error *err))
{
	pm_pool_create_opts o = {.owner = {.kind = kind}, .mode = PM_MODE_EADR};
	pm_pool    *pool;
	pm_error	err;
	pm_alloc	a;
	uint64_t	ring;
	int			fd;

	snprintf(fuzz_path, sizeof(fuzz_path), "/dev/shm/pm_index_fuzz_%d.pmpool", (int) getpid());
	atexit(fuzz_remove_file);
	o.replace = true;
	o.max_size = FUZZ_FILE_LIMIT;
	if (pm_pool_create(fuzz_path, &o, &pool, &err) != PM_OK || fill(pool, &err) != PM_OK)
	{
		fprintf(stderr, "set-up: %s\n", err.msg);
		abort();
	}
	pm_alloc_attach_pool(&a, pool);
	if ((ring = pm_recon_create(pool, &a, &err)) == 0)
	{
		fprintf(stderr, "set-up: %s\n", err.msg);
		abort();
	}
	pm_pool_set_root(pool, PM_RECON_ROOT, ring);
	fuzz_image_size = pm_pool_size(pool);
	pm_pool_close(pool);
	fuzz_image = malloc(fuzz_image_size);
	fd = open(fuzz_path, O_RDONLY);
	if (fuzz_image == NULL || fd < 0 ||
		pread(fd, fuzz_image, fuzz_image_size, 0) != (ssize_t) fuzz_image_size)
		abort();
	close(fd);
	fuzz_arena = malloc(FUZZ_ARENA_SIZE);
	if (fuzz_arena == NULL)
		abort();
}

static inline void
fuzz_write_all(int fd, const void *buf, size_t len)
{
	if (len > 0 && write(fd, buf, len) != (ssize_t) len)
		abort();
}

static inline void
fuzz_write_file(const uint8_t *data, size_t size)
{
	int			fd = open(fuzz_path, O_RDWR | O_CREAT | O_TRUNC, 0600);

	if (fd < 0)
		abort();
	if (size == 0 || !(data[0] & 1))
		fuzz_write_all(fd, data + (size > 0), size - (size > 0));
	else
	{
		uint8_t    *file = malloc(fuzz_image_size);
		size_t		at = 1;

		if (file == NULL)
			abort();
		memcpy(file, fuzz_image, fuzz_image_size);
		while (at + 5 <= size)
		{
			uint32_t	off;
			size_t		len = data[at + 4];

			memcpy(&off, data + at, 4);
			at += 5;
			if (len > size - at)
				len = size - at;
			off %= (uint32_t) fuzz_image_size;
			if (len > fuzz_image_size - off)
				len = fuzz_image_size - off;
			memcpy(file + off, data + at, len);
			at += len;
		}
		fuzz_write_all(fd, file, fuzz_image_size);
		free(file);
	}
	close(fd);
}

/* The pool the input makes, opened as a backend opens it; NULL if open refuses it. */
static inline pm_pool *
fuzz_open(const uint8_t *data, size_t size)
{
	pm_pool    *pool;
	pm_error	err;

	fuzz_write_file(data, size);
	if (pm_pool_open(fuzz_path, PM_MODE_EADR, &pool, &err) != PM_OK)
		return NULL;
	return pool;
}

static inline void
fuzz_count_note(void *ctx, uint64_t key, uint64_t rest)
{
	(void) key;
	(void) rest;
	(*(uint64_t *) ctx)++;
}

/* What reconciliation after a crash reads of the ring; the notes counted. */
static inline uint64_t
fuzz_read_ring(pm_pool *pool)
{
	pm_recon   *ring = pm_recon_of(pool);
	uint64_t	notes = 0;

	if (ring != NULL && !pm_recon_overflowed(pool, ring))
		pm_recon_foreach(pool, ring, fuzz_count_note, &notes);
	return notes;
}

/* A fresh DRAM tier for this run. */
static inline void
fuzz_dram(pm_alloc *dram)
{
	pm_arena_format(fuzz_arena, FUZZ_ARENA_SIZE);
	pm_alloc_attach_arena(dram, fuzz_arena, "fuzz arena");
}

/* The allocators retired blocks go back to (the run's pool and DRAM tier). */
static pm_alloc *fuzz_free_pm;
static pm_alloc *fuzz_free_dram;
static void *fuzz_domain;

static inline void
fuzz_free(void *ctx, uint32_t space, uint32_t tag, uint64_t off)
{
	pm_error	err;

	(void) ctx;
	(void) tag;
	(void) pm_free_block(space == FUZZ_SPACE_PM ? fuzz_free_pm : fuzz_free_dram, off, &err);
}

/* A fresh epoch domain with this process its one participant, freeing to pm and dram. */
static inline void
fuzz_epoch_begin(pm_epoch_handle *h, pm_alloc *pm, pm_alloc *dram)
{
	pm_error	err;

	if (fuzz_domain == NULL && (fuzz_domain = malloc(pm_epoch_domain_size(2, 256))) == NULL)
		abort();
	pm_epoch_domain_init(fuzz_domain, 2, 256);
	fuzz_free_pm = pm;
	fuzz_free_dram = dram;
	if (pm_epoch_register(fuzz_domain, (uint64_t) getpid(), -1, fuzz_free, NULL,
						  pm_epoch_pid_alive, h, &err) != PM_OK)
	{
		fprintf(stderr, "epoch: %s\n", err.msg);
		abort();
	}
}

/* Free what the run retired, before its pool is closed. */
static inline void
fuzz_epoch_end(pm_epoch_handle *h)
{
	pm_epoch_drain(h);
	pm_epoch_unregister(h);
}

#endif							/* FUZZ_COMMON_H */
