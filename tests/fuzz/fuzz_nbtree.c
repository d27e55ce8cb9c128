/*
 * fuzz_pool_open.c
 *	  libFuzzer target: what a backend does with a pool file it did not
 *	  write, on the first use of an nbtree_pm index after a restart.  Open
 *	  it (header validation, mapping), then recover its allocator, walk its
 *	  reconciliation ring and rebuild the tree's DRAM layer.  Random bytes
 *	  must give an error, never a crash.
 *
 * The first input byte picks the file: even, the rest of the input is the
 * whole file; odd, the rest is a list of patches (4-byte offset, 1-byte
 * length, the bytes) applied to a valid pool image: an nbtree of 2,000
 * entries, half of them wide (records), with its reconciliation ring, so that the fuzzer gets past the
 * header's checksum to the roots, the ring and the leaves behind it.
 *
 * Build: make fuzz (clang); tests/run --only fuzz runs it for a fixed time.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "alloc.h"
#include "nbtree.h"
#include "pool.h"
#include "recon.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FILE_LIMIT	(PM_POOL_HEADER_SIZE + 4 * PM_POOL_CHUNK_SIZE)
#define ARENA_SIZE	(8u << 20)

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char path[64];
static uint8_t *image;			/* the valid pool file */
static size_t image_size;
static void *arena;

static void
count_note(void *ctx, uint64_t key, uint64_t rest)
{
	(void) key;
	(void) rest;
	(*(uint64_t *) ctx)++;
}

/* Every other entry wide: its record (4 ordering bytes, 8 more) is in the pool too. */
static bool
next_key(void *ctx, nbt_skey *sk)
{
	static uint64_t words[(sizeof(pm_key_rec) + 12) / 8 + 1];
	pm_key_rec *r = (pm_key_rec *) words;
	uint64_t   *i = ctx;

	if (*i == 2000)
		return false;
	*sk = (nbt_skey) {*i * 7, 1};
	if (*i % 2 == 1)
	{
		r->rest = 1;
		r->keylen = 4;
		r->len = 12;
		memset(r->data, (int) *i, r->len);
		sk->rest = PM_REST_WIDE | PM_REST_LOCAL | (uintptr_t) r;
	}
	(*i)++;
	return true;
}

static void
remove_file(void)
{
	(void) unlink(path);
}

static void
set_up(void)
{
	pm_pool_create_opts o = {.owner = {.kind = PM_KIND_NBTREE}, .mode = PM_MODE_EADR};
	pm_pool    *pool;
	pm_error	err;
	pm_alloc	a;
	uint64_t	ring;
	uint64_t	i = 0;
	int			fd;

	snprintf(path, sizeof(path), "/dev/shm/pm_index_fuzz_%d.pmpool", (int) getpid());
	atexit(remove_file);
	o.replace = true;
	o.max_size = FILE_LIMIT;
	if (pm_pool_create(path, &o, &pool, &err) != PM_OK || nbt_format(pool, &err) != PM_OK ||
		nbt_bulk_load(pool, 90, next_key, &i, &err) != PM_OK)
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
	image_size = pm_pool_size(pool);
	pm_pool_close(pool);
	image = malloc(image_size);
	fd = open(path, O_RDONLY);
	if (image == NULL || fd < 0 || pread(fd, image, image_size, 0) != (ssize_t) image_size)
		abort();
	close(fd);
	arena = malloc(ARENA_SIZE);
	if (arena == NULL)
		abort();
}

static void
write_all(int fd, const void *buf, size_t len)
{
	if (len > 0 && write(fd, buf, len) != (ssize_t) len)
		abort();
}

static void
write_file(const uint8_t *data, size_t size)
{
	int			fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);

	if (fd < 0)
		abort();
	if (size == 0 || !(data[0] & 1))
		write_all(fd, data + (size > 0), size - (size > 0));
	else
	{
		uint8_t    *file = malloc(image_size);
		size_t		at = 1;

		memcpy(file, image, image_size);
		while (at + 5 <= size)
		{
			uint32_t	off;
			size_t		len = data[at + 4];

			memcpy(&off, data + at, 4);
			at += 5;
			if (len > size - at)
				len = size - at;
			off %= (uint32_t) image_size;
			if (len > image_size - off)
				len = image_size - off;
			memcpy(file + off, data + at, len);
			at += len;
		}
		write_all(fd, file, image_size);
		free(file);
	}
	close(fd);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	pm_pool    *pool;
	pm_error	err;
	pm_alloc	dram;
	pm_alloc	pm;
	nbt_tree	t;
	uint64_t	notes = 0;
	pm_recon   *ring;

	if (arena == NULL)
		set_up();
	write_file(data, size);
	if (pm_pool_open(path, PM_MODE_EADR, &pool, &err) != PM_OK)
		return 0;

	pm_alloc_attach_pool(&pm, pool);
	pm_alloc_recover_begin(&pm);
	if (pm_recon_mark_roots(&pm, pool, &err) == PM_OK && (ring = pm_recon_of(pool)) != NULL)
	{
		(void) pm_recon_overflowed(pool, ring);
		pm_recon_foreach(pool, ring, count_note, &notes);
	}
	pm_alloc_recover_end(&pm);

	pm_arena_format(arena, ARENA_SIZE);
	pm_alloc_attach_arena(&dram, arena, "fuzz arena");
	nbt_attach(&t, pool, &dram, NULL, 1, 0, 2, 0);
	if (nbt_rebuild(&t, true, &err) == PM_OK)
		nbt_release_dram(&t);
	pm_pool_close(pool);
	return 0;
}
