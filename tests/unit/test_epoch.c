/*
 * test_epoch.c
 *	  Epoch reclamation never frees a block a live reader holds.
 *
 * A table of slots points to blocks in a shared arena; every block carries
 * its slot number in every word.  Workers replace blocks (allocate, fill,
 * CAS into the slot, retire the old one) and read blocks inside an epoch,
 * checking every word.  Freeing poisons a block first, so a reader that
 * still holds a freed block sees poison, and a reader that holds a block
 * already reused sees a foreign slot number.  The negative control frees at
 * once, without epochs, to show the check does catch use-after-free.  Also:
 * a participant killed inside an epoch is reaped and its retirements drained.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "alloc.h"
#include "epoch.h"
#include "harness_common.h"

#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>

#define NSLOTS		64
#define BLOCK		256
#define WORDS		(BLOCK / 8)
#define POISON		UINT64_C(0xdeaddeaddeaddead)
#define OPS			300000
#define ARENA_SIZE	(8u << 20)

typedef struct shared
{
	uint64_t	slots[NSLOTS];
	uint64_t	violations;
	uint64_t	frees;
	uint64_t	stop;
} shared;

static shared *sh;
static void *arena;
static pm_epoch_domain *dom;

typedef struct worker
{
	pm_alloc	a;
	pm_epoch_handle h;
	uint64_t	seed;
	bool		use_epochs;
	long		ops;
	uint64_t	token;
} worker;

static void
poison_and_free(void *ctx, uint32_t space, uint32_t tag, uint64_t off)
{
	pm_alloc   *a = ctx;
	uint64_t   *blk = pm_alloc_addr(a, off);
	pm_error	err;

	(void) space;
	(void) tag;
	for (int k = 0; k < WORDS; k++)
		pm_store_relaxed(&blk[k], POISON);
	if (pm_free_block(a, off, &err) != PM_OK)
		pm_fetch_add(&sh->violations, 1);
	pm_fetch_add(&sh->frees, 1);
}

/* Thread tokens: pid in the low 32 bits, a thread number above. */
static bool
token_alive(uint64_t owner)
{
	return pm_epoch_pid_alive(owner & 0xffffffff);
}

static uint64_t
new_block(worker *w, int i)
{
	pm_error	err;
	uint64_t	off = pm_alloc_block(&w->a, BLOCK, &err);
	uint64_t   *blk;

	if (off == 0)
	{
		fprintf(stderr, "arena full: %s\n", err.msg);
		exit(3);
	}
	blk = pm_alloc_addr(&w->a, off);
	for (int k = 0; k < WORDS; k++)
		pm_store_relaxed(&blk[k], (uint64_t) i);
	return off;
}

static void
work(worker *w)
{
	for (long op = 0; op < w->ops && !pm_load(&sh->stop); op++)
	{
		int			i = (int) (xorshift(&w->seed) % NSLOTS);

		if (xorshift(&w->seed) % 4 == 0)
		{
			/* replace */
			uint64_t	fresh = new_block(w, i);
			uint64_t	old = pm_load(&sh->slots[i]);

			while (!pm_cas(&sh->slots[i], &old, fresh))
				;
			if (w->use_epochs)
				pm_epoch_retire(&w->h, 0, 0, old);
			else
				poison_and_free(&w->a, 0, 0, old);
		}
		else
		{
			/* read, twice over, inside an epoch */
			uint64_t   *blk;

			if (w->use_epochs)
				pm_epoch_enter(&w->h);
			blk = pm_alloc_addr(&w->a, pm_load(&sh->slots[i]));
			for (int pass = 0; pass < 2; pass++)
				for (int k = 0; k < WORDS; k++)
					if (pm_load_relaxed(&blk[k]) != (uint64_t) i)
						pm_fetch_add(&sh->violations, 1);
			if (w->use_epochs)
				pm_epoch_exit(&w->h);
		}
	}
}

static void
worker_init(worker *w, uint64_t token, uint64_t seed, bool use_epochs, long ops)
{
	pm_error	err;

	memset(w, 0, sizeof(*w));
	pm_alloc_attach_arena(&w->a, arena, "epoch test arena");
	w->seed = seed;
	w->use_epochs = use_epochs;
	w->ops = ops;
	w->token = token;
	if (pm_epoch_register(dom, token, -1, poison_and_free, &w->a, token_alive, &w->h, &err) != PM_OK)
	{
		fprintf(stderr, "register: %s\n", err.msg);
		exit(3);
	}
}

static void *
thread_main(void *arg)
{
	worker	   *w = arg;

	work(w);
	if (w->use_epochs)
		pm_epoch_drain(&w->h);
	pm_epoch_unregister(&w->h);
	return NULL;
}

static void
reset_table(void)
{
	worker		w;

	pm_arena_format(arena, ARENA_SIZE);
	pm_epoch_domain_init(dom, 8, 256);
	memset(sh, 0, sizeof(*sh));
	pm_alloc_attach_arena(&w.a, arena, "epoch test arena");
	for (int i = 0; i < NSLOTS; i++)
		sh->slots[i] = new_block(&w, i);
}

static void
run_threads(bool use_epochs, long ops)
{
	pthread_t	t[2];
	worker		w[2];

	for (int i = 0; i < 2; i++)
	{
		worker_init(&w[i], (uint64_t) getpid() | ((uint64_t) (i + 1) << 32), 7 + i, use_epochs, ops);
		pthread_create(&t[i], NULL, thread_main, &w[i]);
	}
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
}

int
main(void)
{
	size_t		dsize = pm_epoch_domain_size(8, 256);
	char	   *mem = mmap(NULL, sizeof(shared) + dsize + ARENA_SIZE, PROT_READ | PROT_WRITE,
						   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pm_alloc_stats st;
	pm_alloc	a;

	tap_plan(12);
	sh = (shared *) mem;
	dom = (pm_epoch_domain *) (mem + 4096);
	arena = mem + 4096 + ((dsize + 4095) & ~(size_t) 4095);

	/* negative control: free at once; the check must see it */
	reset_table();
	run_threads(false, 3 * OPS);
	tap_ok(sh->violations > 0,
		   "control: freeing without epochs is caught (%llu poisoned or reused reads)",
		   (unsigned long long) sh->violations);

	/* 2 threads with epochs */
	reset_table();
	run_threads(true, OPS);
	tap_ok(sh->violations == 0 && sh->frees > OPS / 8,
		   "2 threads: %llu blocks freed through epochs, %llu bad reads",
		   (unsigned long long) sh->frees, (unsigned long long) sh->violations);
	pm_alloc_attach_arena(&a, arena, "epoch test arena");
	pm_alloc_get_stats(&a, &st);
	tap_ok(st.blocks == NSLOTS && pm_epoch_pending(dom) == 0,
		   "after drain only the %d live blocks remain (%llu)", NSLOTS,
		   (unsigned long long) st.blocks);

	/* 2 processes with epochs */
	reset_table();
	{
		pid_t		pids[2];
		int			clean = 0;

		for (int i = 0; i < 2; i++)
		{
			pids[i] = fork();
			if (pids[i] == 0)
			{
				worker		w;

				worker_init(&w, (uint64_t) getpid(), 100 + i, true, OPS);
				work(&w);
				pm_epoch_drain(&w.h);
				pm_epoch_unregister(&w.h);
				_exit(0);
			}
		}
		for (int i = 0; i < 2; i++)
		{
			int			status;

			waitpid(pids[i], &status, 0);
			clean += WIFEXITED(status) && WEXITSTATUS(status) == 0;
		}
		tap_ok(clean == 2 && sh->violations == 0 && sh->frees > OPS / 8,
			   "2 processes: %llu blocks freed through epochs, %llu bad reads",
			   (unsigned long long) sh->frees, (unsigned long long) sh->violations);
		pm_alloc_get_stats(&a, &st);
		tap_ok(st.blocks == NSLOTS, "after the processes only the live blocks remain (%llu)",
			   (unsigned long long) st.blocks);
	}

	/* a participant killed inside an epoch, with retirements of its own */
	reset_table();
	{
		int			fds[2];
		pid_t		pid;
		char		c;
		worker		w;
		uint64_t	before;
		int			rounds = 0;

		if (pipe(fds) != 0)
			return 1;
		pid = fork();
		if (pid == 0)
		{
			worker		cw;

			worker_init(&cw, (uint64_t) getpid(), 5, true, 0);
			for (int i = 0; i < 10; i++)
			{
				uint64_t	fresh = new_block(&cw, i);
				uint64_t	old = pm_load(&sh->slots[i]);

				pm_store(&sh->slots[i], fresh);
				pm_epoch_retire(&cw.h, 0, 0, old);
			}
			pm_epoch_enter(&cw.h);
			if (write(fds[1], "x", 1) != 1)
				_exit(2);
			pause();
			_exit(0);
		}
		if (read(fds[0], &c, 1) != 1)
			return 1;
		worker_init(&w, (uint64_t) getpid(), 9, true, 0);
		before = pm_epoch_current(dom);
		{
			uint64_t	fresh = new_block(&w, 20);
			uint64_t	old = pm_load(&sh->slots[20]);

			pm_store(&sh->slots[20], fresh);
			pm_epoch_retire(&w.h, 0, 0, old);
		}
		pm_epoch_reclaim(&w.h);
		tap_ok(pm_epoch_current(dom) <= before + 1 && pm_epoch_pending(dom) == 11,
			   "a live reader holds the epoch: nothing of its era is freed (pending %llu)",
			   (unsigned long long) pm_epoch_pending(dom));
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		while (pm_epoch_pending(dom) != 0 && rounds++ < 100)
			pm_epoch_reclaim(&w.h);
		tap_ok(pm_epoch_pending(dom) == 0 && sh->violations == 0,
			   "after the reader is killed its slot is reaped and all 11 retired blocks are freed (%d rounds)",
			   rounds);
		pm_alloc_get_stats(&a, &st);
		tap_ok(st.blocks == NSLOTS, "no block leaked (%llu live)", (unsigned long long) st.blocks);
		pm_epoch_unregister(&w.h);
	}

	/*
	 * Two participants inside sections retire more than their rings hold:
	 * each section holds back what both retire in it, so waiting for ring
	 * space would never end; the overflow takes the rest, and all of it is
	 * freed once both have left.
	 */
	{
		worker		w[2];
		pm_alloc_stats st;
		int			rounds = 0;

		reset_table();
		pm_epoch_domain_init(dom, 8, 8);
		for (int i = 0; i < 2; i++)
		{
			worker_init(&w[i], (uint64_t) getpid() | ((uint64_t) (i + 1) << 32), 11 + i, true, 0);
			pm_epoch_enter(&w[i].h);
		}
		for (int k = 0; k < 40; k++)
		{
			worker	   *x = &w[k % 2];
			int			i = k % NSLOTS;
			uint64_t	old = pm_load(&sh->slots[i]);

			pm_store(&sh->slots[i], new_block(x, i));
			pm_epoch_retire(&x->h, 0, 0, old);
		}
		tap_ok(sh->frees == 0 && w[0].h.noverflow > 0 && w[1].h.noverflow > 0,
			   "inside their sections both retired 20 blocks past rings of 8 without waiting; none freed (overflow %u and %u)",
			   w[0].h.noverflow, w[1].h.noverflow);
		for (int i = 0; i < 2; i++)
			pm_epoch_exit(&w[i].h);
		while (sh->frees < 40 && rounds++ < 100)
			for (int i = 0; i < 2; i++)
				pm_epoch_reclaim(&w[i].h);
		for (int i = 0; i < 2; i++)
			pm_epoch_unregister(&w[i].h);
		pm_alloc_get_stats(&a, &st);
		tap_ok(sh->frees == 40 && sh->violations == 0 && st.blocks == NSLOTS,
			   "once they left, all 40 were freed (%llu) and no block leaked (%llu live)",
			   (unsigned long long) sh->frees, (unsigned long long) st.blocks);
	}

	/* slots: exhaustion is an error; a dead owner's slot is taken over */
	{
		pm_epoch_handle hs[9];
		pm_error	err;
		int			got = 0;

		pm_epoch_domain_init(dom, 8, 256);
		for (int i = 0; i < 8; i++)
			got += pm_epoch_register(dom, (uint64_t) getpid() | ((uint64_t) (i + 1) << 32), -1,
									 poison_and_free, &a, token_alive, &hs[i], &err) == PM_OK;
		tap_ok(got == 8 && pm_epoch_register(dom, (uint64_t) getpid() | (UINT64_C(9) << 32), -1,
											 poison_and_free, &a, token_alive, &hs[8], &err) == PM_ERR_LIMIT,
			   "a ninth participant is refused: %s", err.msg);
		pm_epoch_domain_init(dom, 8, 256);
		for (int i = 0; i < 8; i++)
			pm_epoch_register(dom, 0x7ffffff0 + (uint64_t) i, -1, poison_and_free, &a, NULL, &hs[i], &err);
		tap_ok(pm_epoch_register(dom, (uint64_t) getpid(), -1, poison_and_free, &a, NULL, &hs[8], &err) == PM_OK,
			   "slots of dead owners are taken over");
	}
	return tap_done();
}
