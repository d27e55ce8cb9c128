/*
 * test_alloc_crash.c
 *	  The allocator leaks nothing across a crash: after recovery every block
 *	  is either reachable or free, and no block is owned twice.
 *
 * The client is a table of slots in a root block; each slot holds 0 or the
 * offset of a block that carries the slot's number.  The client protocol is
 * the one every structure in pm_index follows: write and persist a new block
 * before linking it; unlink (persistently) before freeing.
 *
 * adr: 1,000 crash points, each a simulated power failure at a random
 * persistence event of a deterministic workload (crashsim.c picks, per
 * cache line, durable, flushed or current content).
 * eadr: 200 SIGKILLs of a process running the workload at a random moment.
 * After each: open, recover by marking the reachable blocks, verify, then
 * keep working on the recovered pool and verify again.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "alloc.h"
#include "crashsim.h"
#include "harness_common.h"

#include <fcntl.h>
#include <sys/wait.h>

#define NSLOTS		512
#define MAX_POOL	(16u << 20)
#define BLOCK_MAGIC	UINT64_C(0xb10cb10cb10cb10c)
#define ADR_POINTS	1000
#define EADR_KILLS	200
#define ADR_OPS		1500

static char base_path[600];
static char work_path[600];
static char image_path[600];

typedef struct client
{
	pm_pool    *pool;
	pm_alloc	a;
	uint64_t   *slots;
} client;

static bool
client_open(client *c, const char *path, pm_mode mode)
{
	pm_error	err;

	if (pm_pool_open(path, mode, &c->pool, &err) != PM_OK)
	{
		tap_diag("open %s: %s", path, err.msg);
		return false;
	}
	pm_alloc_attach_pool(&c->a, c->pool);
	c->slots = pm_pool_addr(c->pool, pm_pool_root(c->pool, 0));
	return true;
}

/* One operation of the workload; false on an allocator error. */
static bool
client_step(client *c, uint64_t *seed)
{
	static const size_t sizes[] = {64, 1024, 4096, 16384};
	const pm_persister *p = &c->pool->persist;
	int			i = (int) (xorshift(seed) % NSLOTS);
	pm_error	err;

	if (c->slots[i] == 0)
	{
		size_t		sz = sizes[xorshift(seed) % 4];
		uint64_t	off = pm_alloc_block(&c->a, sz, &err);
		uint64_t   *blk;

		if (off == 0)
			return false;
		blk = pm_pool_addr(c->pool, off);
		blk[0] = BLOCK_MAGIC;
		blk[1] = (uint64_t) i;
		blk[sz / 8 - 1] = BLOCK_MAGIC ^ (uint64_t) i;
		pm_flush(p, blk, 16);
		pm_flush(p, &blk[sz / 8 - 1], 8);
		pm_drain(p);
		pm_store(&c->slots[i], off);
		pm_persist(p, &c->slots[i], 8);
	}
	else
	{
		uint64_t	off = c->slots[i];

		pm_store(&c->slots[i], 0);
		pm_persist(p, &c->slots[i], 8);
		if (pm_free_block(&c->a, off, &err) != PM_OK)
			return false;
	}
	return true;
}

/*
 * Recover and verify.  Returns NULL if all holds, else what failed.
 * *leaked gets the blocks that were allocated but unreachable before recovery.
 */
static const char *
recover_and_verify(client *c, uint64_t *leaked)
{
	static char why[300];
	pm_alloc_stats st;
	uint64_t	linked = 0;
	pm_error	err;

	pm_alloc_get_stats(&c->a, &st);
	pm_alloc_recover_begin(&c->a);
	if (pm_alloc_mark(&c->a, pm_pool_root(c->pool, 0), &err) != PM_OK)
		return "root block does not mark";
	for (int i = 0; i < NSLOTS; i++)
	{
		uint64_t	off = c->slots[i];
		uint64_t   *blk;

		if (off == 0)
			continue;
		if (pm_alloc_mark(&c->a, off, &err) != PM_OK)
		{
			snprintf(why, sizeof(why), "slot %d: %s", i, err.msg);
			return why;
		}
		blk = pm_pool_addr(c->pool, off);
		if (blk[0] != BLOCK_MAGIC || blk[1] != (uint64_t) i)
		{
			snprintf(why, sizeof(why), "slot %d: block at %llu is not its own (torn or reused)",
					 i, (unsigned long long) off);
			return why;
		}
		linked++;
	}
	pm_alloc_recover_end(&c->a);
	*leaked = st.blocks > linked + 1 ? st.blocks - linked - 1 : 0;
	pm_alloc_get_stats(&c->a, &st);
	if (st.blocks != linked + 1)
	{
		snprintf(why, sizeof(why), "%llu blocks allocated, %llu reachable",
				 (unsigned long long) st.blocks, (unsigned long long) linked + 1);
		return why;
	}
	return NULL;
}

/* Recover, verify, work on, verify again; NULL if all holds. */
static const char *
check_image(const char *path, uint64_t *leaked, uint64_t seed)
{
	client		c;
	const char *why;
	uint64_t	more;

	if (!client_open(&c, path, PM_MODE_ADR))
		return "image does not open";
	why = recover_and_verify(&c, leaked);
	for (int k = 0; why == NULL && k < 300; k++)
	{
		if (!client_step(&c, &seed))
			why = "allocation failed after recovery";
	}
	if (why == NULL)
	{
		why = recover_and_verify(&c, &more);
		if (why == NULL && more != 0)
			why = "blocks leaked without a crash";
	}
	pm_pool_close(c.pool);
	return why;
}

/* adr workload in a child: runs ADR_OPS steps, crashing at event crash_at. */
static int
run_adr_child(uint64_t crash_at, uint64_t wseed, uint64_t iseed, uint64_t *events_out)
{
	int			fds[2];
	pid_t		pid;
	int			status;

	if (pipe(fds) != 0)
		return -1;
	pid = fork();
	if (pid == 0)
	{
		client		c;
		pm_crashsim *cs;
		uint64_t	ev;

		close(fds[0]);
		if (!client_open(&c, work_path, PM_MODE_ADR))
			_exit(2);
		cs = pm_crashsim_attach(c.pool, crash_at, image_path, iseed);
		c.slots = pm_pool_addr(c.pool, pm_pool_root(c.pool, 0));	/* the attach remapped */
		for (int k = 0; k < ADR_OPS; k++)
		{
			if (!client_step(&c, &wseed))
				_exit(4);
		}
		ev = pm_crashsim_events(cs);
		if (write(fds[1], &ev, sizeof(ev)) != sizeof(ev))
			_exit(5);
		_exit(1);				/* finished without crashing */
	}
	close(fds[1]);
	if (events_out && read(fds[0], events_out, sizeof(*events_out)) != sizeof(*events_out))
		*events_out = 0;
	close(fds[0]);
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void
eadr_workload(void *arg)
{
	uint64_t	seed = *(uint64_t *) arg;
	client		c;

	if (!client_open(&c, work_path, PM_MODE_EADR))
		_exit(2);
	for (;;)
	{
		if (!client_step(&c, &seed))
			_exit(4);
	}
}

int
main(void)
{
	char	   *dir = tap_tmpdir("alloc_crash");
	pm_pool_create_opts o = {0};
	pm_pool    *pool;
	pm_alloc	a;
	pm_error	err;
	uint64_t	root;
	uint64_t	calib[4];
	int			failures = 0;
	uint64_t	leaked_total = 0;
	int			crashed = 0;

	tap_plan(5);
	snprintf(base_path, sizeof(base_path), "%s/base.pm", dir);
	snprintf(work_path, sizeof(work_path), "%s/work.pm", dir);
	snprintf(image_path, sizeof(image_path), "%s/image.pm", dir);

	/* the starting pool: one root block with NSLOTS empty slots */
	o.mode = PM_MODE_ADR;
	o.max_size = MAX_POOL;
	if (pm_pool_create(base_path, &o, &pool, &err) != PM_OK)
	{
		tap_diag("create: %s", err.msg);
		return 1;
	}
	pm_alloc_attach_pool(&a, pool);
	root = pm_alloc_block(&a, NSLOTS * 8, &err);
	memset(pm_pool_addr(pool, root), 0, NSLOTS * 8);
	pm_persist(&pool->persist, pm_pool_addr(pool, root), NSLOTS * 8);
	pm_pool_set_root(pool, 0, root);
	pm_pool_close(pool);

	/* calibrate: persistence events in a full run of each workload seed */
	for (int s = 0; s < 4; s++)
	{
		copy_file(base_path, work_path);
		if (run_adr_child(0, 100 + s, 1, &calib[s]) != 1)
			calib[s] = 0;
	}
	tap_ok(calib[0] > 1000 && calib[1] > 1000 && calib[2] > 1000 && calib[3] > 1000,
		   "adr workloads run to completion (%llu..%llu persistence events)",
		   (unsigned long long) calib[0], (unsigned long long) calib[3]);

	/* adr: simulated power failures */
	{
		uint64_t	rng = 12345;

		for (int point = 0; point < ADR_POINTS; point++)
		{
			int			s = point % 4;
			uint64_t	at = 1 + xorshift(&rng) % calib[s];
			uint64_t	leaked = 0;
			const char *why;
			int			rc;

			copy_file(base_path, work_path);
			rc = run_adr_child(at, 100 + s, xorshift(&rng), NULL);
			if (rc != 0)
			{
				if (failures++ < 5)
					tap_diag("adr point %d (event %llu): child exit %d", point,
							 (unsigned long long) at, rc);
				continue;
			}
			crashed++;
			why = check_image(image_path, &leaked, rng);
			leaked_total += leaked;
			if (why && failures++ < 5)
				tap_diag("adr point %d (seed %d, event %llu): %s", point, s,
						 (unsigned long long) at, why);
		}
	}
	tap_ok(crashed == ADR_POINTS && failures == 0,
		   "%d adr crash points: %d crashed as planned, %d failures", ADR_POINTS, crashed, failures);
	tap_diag("adr: %llu allocated-but-unreachable blocks reclaimed by recovery",
			 (unsigned long long) leaked_total);

	/* eadr: SIGKILL at a random moment */
	{
		uint64_t	rng = 777;
		int			killed = 0;
		int			efail = 0;

		leaked_total = 0;
		copy_file(base_path, work_path);
		for (int k = 0; k < EADR_KILLS; k++)
		{
			uint64_t	seed = xorshift(&rng);
			unsigned	delay = 200 + (unsigned) (xorshift(&rng) % 20000);
			uint64_t	leaked = 0;
			const char *why;

			/* the same pool file carries on from crash to crash */
			killed += pm_crash_fork_kill(eadr_workload, &seed, delay);
			why = check_image(work_path, &leaked, seed);
			leaked_total += leaked;
			if (why && efail++ < 5)
				tap_diag("eadr kill %d: %s", k, why);
		}
		tap_ok(killed == EADR_KILLS, "%d of %d workload processes were killed mid-run",
			   killed, EADR_KILLS);
		tap_ok(efail == 0, "%d eadr fork-and-kill crashes: %d failures", EADR_KILLS, efail);
		tap_ok(leaked_total > 0,
			   "eadr kills left %llu allocated-but-unlinked blocks, all reclaimed by recovery",
			   (unsigned long long) leaked_total);
	}

	tap_rmdir(dir);
	return tap_done();
}
