/*
 * test_alloc.c
 *	  Allocator: size classes, errors, arena exhaustion, chunk reuse, and a
 *	  million alloc/free under 2 threads and under 2 processes with a shared
 *	  ownership map that catches any block handed out twice.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "alloc.h"
#include "harness_common.h"

#include <pthread.h>
#include <sys/mman.h>
#include <sys/wait.h>

#define OPS_PER_WORKER	500000	/* alloc+free pairs: 2 workers = a million */
#define WORKING_SET		256
#define MAX_POOL		(64u << 20)

static char path[600];
static uint8_t *owned;			/* shared: one byte per 64-byte unit of the pool */
static uint64_t *violations;	/* shared counter */

typedef struct worker
{
	pm_alloc   *alloc;			/* shared allocator (threads) or NULL (process) */
	int			id;
	uint64_t	seed;
} worker;

static void
run_worker(pm_alloc *a, int id, uint64_t seed)
{
	static const size_t sizes[] = {64, 200, 1024, 4096, 100, 512};
	uint64_t	set[WORKING_SET] = {0};
	size_t		setsz[WORKING_SET] = {0};
	pm_error	err;

	for (long op = 0; op < 2L * OPS_PER_WORKER; op++)
	{
		int			i = (int) (xorshift(&seed) % WORKING_SET);

		if (set[i] == 0)
		{
			size_t		sz = sizes[xorshift(&seed) % 6];
			uint64_t	off = pm_alloc_block(a, sz, &err);
			uint64_t   *blk;

			if (off == 0)
			{
				fprintf(stderr, "alloc failed: %s\n", err.msg);
				pm_fetch_add(violations, 1);
				return;
			}
			if (__atomic_exchange_n(&owned[off / 64], 1, __ATOMIC_ACQ_REL) != 0)
				pm_fetch_add(violations, 1);	/* handed out twice */
			blk = pm_alloc_addr(a, off);
			blk[0] = ((uint64_t) id << 32) | (uint64_t) i;
			blk[pm_alloc_class_size(sz) / 8 - 1] = ~blk[0];
			set[i] = off;
			setsz[i] = sz;
		}
		else
		{
			uint64_t   *blk = pm_alloc_addr(a, set[i]);

			if (blk[0] != (((uint64_t) id << 32) | (uint64_t) i) ||
				blk[pm_alloc_class_size(setsz[i]) / 8 - 1] != ~blk[0])
				pm_fetch_add(violations, 1);	/* someone else wrote our block */
			__atomic_store_n(&owned[set[i] / 64], 0, __ATOMIC_RELEASE);
			if (pm_free_block(a, set[i], &err) != PM_OK)
				pm_fetch_add(violations, 1);
			set[i] = 0;
		}
	}
	for (int i = 0; i < WORKING_SET; i++)
	{
		if (set[i])
		{
			__atomic_store_n(&owned[set[i] / 64], 0, __ATOMIC_RELEASE);
			pm_free_block(a, set[i], &err);
		}
	}
}

static void *
thread_main(void *arg)
{
	worker	   *w = arg;

	run_worker(w->alloc, w->id, w->seed);
	return NULL;
}

static pm_pool *
fresh_pool(void)
{
	pm_pool_create_opts o = {0};
	pm_pool    *pool = NULL;
	pm_error	err;

	o.mode = PM_MODE_EADR;
	o.max_size = MAX_POOL;
	o.replace = true;
	if (pm_pool_create(path, &o, &pool, &err) != PM_OK)
	{
		tap_diag("create: %s", err.msg);
		exit(1);
	}
	return pool;
}

static void
count_block(void *ctx, uint64_t off, size_t size)
{
	(void) off;
	(void) size;
	(*(uint64_t *) ctx)++;
}

int
main(void)
{
	char	   *dir = tap_tmpdir("alloc");
	pm_pool    *pool;
	pm_alloc	a;
	pm_error	err;
	pm_alloc_stats st;

	tap_plan(14);
	snprintf(path, sizeof(path), "%s/alloc.pm", dir);
	owned = mmap(NULL, MAX_POOL / 64, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	violations = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	/* basics */
	pool = fresh_pool();
	pm_alloc_attach_pool(&a, pool);
	tap_ok(pm_alloc_class_size(1) == 64 && pm_alloc_class_size(65) == 128 &&
		   pm_alloc_class_size(65536) == 65536 && pm_alloc_class_size(65537) == 0,
		   "size classes are powers of two from 64 B to 64 KiB");
	tap_ok(pm_alloc_block(&a, 100000, &err) == 0 && err.code == PM_ERR_INVALID,
		   "oversized request is an error: %s", err.msg);
	{
		uint64_t	x = pm_alloc_block(&a, 1000, &err);
		uint64_t	y = pm_alloc_block(&a, 1000, &err);

		tap_ok(x && y && x != y && x % 1024 == 0 && y % 1024 == 0,
			   "two 1000-byte blocks are distinct and 1 KiB aligned");
		tap_ok(pm_free_block(&a, x, &err) == PM_OK && pm_free_block(&a, x, &err) == PM_ERR_CORRUPT,
			   "double free is detected: %s", err.msg);
		tap_ok(pm_free_block(&a, y + 8, &err) == PM_ERR_CORRUPT, "freeing an interior offset is refused");
		pm_free_block(&a, y, &err);
		pm_alloc_get_stats(&a, &st);
		tap_ok(st.blocks == 0 && st.chunks_in_use == 0, "empty chunks go back to the free state");
	}
	{
		/* fill several chunks of one class, free all, take them for another class */
		uint64_t	offs[800];
		uint64_t	n = 0;
		uint64_t	chunks_before;

		for (int i = 0; i < 800; i++)
			offs[i] = pm_alloc_block(&a, 1024, &err);
		pm_alloc_get_stats(&a, &st);
		pm_alloc_foreach(&a, count_block, &n);
		tap_ok(st.blocks == 800 && n == 800 && st.chunks_in_use >= 4 && pm_pool_size(pool) > 4 * PM_POOL_CHUNK_SIZE,
			   "800 KiB blocks span several chunks; the pool grew (%llu chunks)",
			   (unsigned long long) st.chunks);
		for (int i = 0; i < 800; i++)
			pm_free_block(&a, offs[i], &err);
		chunks_before = st.chunks;

		for (int i = 0; i < 800; i++)
			offs[i] = pm_alloc_block(&a, 4096, &err);
		pm_alloc_get_stats(&a, &st);
		tap_ok(st.chunks <= chunks_before + 10, "freed chunks serve another class");
		for (int i = 0; i < 800; i++)
			pm_free_block(&a, offs[i], &err);
	}
	pm_pool_close(pool);

	/* arena: fixed size, exhaustion is an error */
	{
		size_t		sz = pm_arena_min_size() + 2 * PM_POOL_CHUNK_SIZE;
		void	   *mem = malloc(sz);
		uint64_t	got = 0;

		pm_arena_format(mem, sz);
		pm_alloc_attach_arena(&a, mem, "test arena");
		while (pm_alloc_block(&a, 65536, &err) != 0)
			got++;
		tap_ok(got == 9 && err.code == PM_ERR_ARENA_FULL && strstr(err.msg, "test arena"),
			   "arena of 3 chunks holds 9 blocks of 64 KiB, then: %s", err.msg);
		free(mem);
	}

	/* 2 threads, one allocator */
	pool = fresh_pool();
	pm_alloc_attach_pool(&a, pool);
	{
		pthread_t	t[2];
		worker		w[2] = {{&a, 1, 11}, {&a, 2, 22}};

		*violations = 0;
		for (int i = 0; i < 2; i++)
			pthread_create(&t[i], NULL, thread_main, &w[i]);
		for (int i = 0; i < 2; i++)
			pthread_join(t[i], NULL);
		tap_ok(*violations == 0, "2 threads x %d alloc/free pairs: %llu violations",
			   OPS_PER_WORKER, (unsigned long long) *violations);
		pm_alloc_get_stats(&a, &st);
		tap_ok(st.blocks == 0, "everything freed after the threads (%llu blocks left)",
			   (unsigned long long) st.blocks);
	}
	pm_pool_close(pool);

	/* 2 processes, each with its own mapping and allocator handle */
	pool = fresh_pool();
	pm_pool_close(pool);
	{
		pid_t		pids[2];
		int			ok_exit = 0;

		*violations = 0;
		for (int i = 0; i < 2; i++)
		{
			pids[i] = fork();
			if (pids[i] == 0)
			{
				pm_pool    *p;
				pm_alloc	pa;

				if (pm_pool_open(path, PM_MODE_EADR, &p, &err) != PM_OK)
					_exit(2);
				pm_alloc_attach_pool(&pa, p);
				run_worker(&pa, i + 1, 1000 + i);
				_exit(0);
			}
		}
		for (int i = 0; i < 2; i++)
		{
			int			status;

			waitpid(pids[i], &status, 0);
			ok_exit += WIFEXITED(status) && WEXITSTATUS(status) == 0;
		}
		tap_ok(ok_exit == 2, "both allocator processes finished");
		tap_ok(*violations == 0, "2 processes x %d alloc/free pairs: %llu violations",
			   OPS_PER_WORKER, (unsigned long long) *violations);
		pm_pool_open(path, PM_MODE_EADR, &pool, &err);
		pm_alloc_attach_pool(&a, pool);
		pm_alloc_get_stats(&a, &st);
		tap_ok(st.blocks == 0 && st.chunks_in_use == 0,
			   "everything freed after the processes; pool has %llu chunks",
			   (unsigned long long) st.chunks);
		pm_pool_close(pool);
	}

	tap_rmdir(dir);
	return tap_done();
}
