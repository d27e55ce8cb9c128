/*
 * harness_crash.h
 *	  The workload children every tree's crash test runs: a child opens a
 *	  pool as after a restart, runs operations and reports in shared memory
 *	  how far it got (the parent then knows which operations were
 *	  acknowledged and which one was in flight).  An adr child runs under
 *	  crashsim, which ends it at a chosen persistence event with a power
 *	  failure image; an eadr child runs until it is killed.
 */
#ifndef PM_HARNESS_CRASH_H
#define PM_HARNESS_CRASH_H

#include "crashsim.h"
#include "harness_common.h"

#include <sys/wait.h>

/* What a workload child tells the parent (shared memory, mapped before any fork). */
typedef struct crash_report
{
	uint64_t	completed;		/* operations returned */
	uint64_t	started;		/* the workload loop was reached */
	uint64_t	errors;
	char		msg[256];		/* the first error */
	uint64_t	total_events;	/* adr: persistence events of a run that did not crash */
} crash_report;

static crash_report *crash_rep;

/* A test's workload: operations 0, 1, ... on its own tree handle. */
typedef struct crash_workload
{
	void	   *ctx;
	/* open the pool at path as after a restart, no recovery: NULL, or why not */
	const char *(*open) (void *ctx, const char *path, pm_mode mode, pm_pool **pool);
	/* run operation k: NULL, or why it failed */
	const char *(*step) (void *ctx, uint64_t k);
	/* if not NULL, after operation k (calibration runs); cs is NULL in eadr children */
	void		(*after) (void *ctx, uint64_t k, pm_crashsim *cs);
} crash_workload;

static inline void
crash_report_map(void)
{
	crash_rep = mmap(NULL, sizeof(crash_report), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (crash_rep == MAP_FAILED)
	{
		perror("mmap");
		exit(2);
	}
}

/* Before a child runs. */
static inline void
crash_report_reset(void)
{
	crash_rep->completed = 0;
	crash_rep->started = 0;
	crash_rep->errors = 0;
}

static void crash_child_fail(const char *why) __attribute__((noreturn));

/* In a child: report the (first) error and exit 4. */
static void
crash_child_fail(const char *why)
{
	if (__atomic_fetch_add(&crash_rep->errors, 1, __ATOMIC_ACQ_REL) == 0)
		snprintf(crash_rep->msg, sizeof(crash_rep->msg), "%s", why);
	_exit(4);
}

/* In a child, the pool open: operations 0 .. nops - 1 (nops 0: until killed). */
static inline void
crash_child_loop(const crash_workload *w, uint64_t nops, pm_crashsim *cs)
{
	__atomic_store_n(&crash_rep->started, 1, __ATOMIC_RELEASE);
	for (uint64_t k = 0; nops == 0 || k < nops; k++)
	{
		const char *why = w->step(w->ctx, k);

		if (why != NULL)
			crash_child_fail(why);
		__atomic_store_n(&crash_rep->completed, k + 1, __ATOMIC_RELEASE);
		if (w->after != NULL)
			w->after(w->ctx, k, cs);
	}
}

/*
 * adr: in a child, open the pool at path under crashsim, which writes a
 * power failure image of it to image_path (image_seed chooses the lines)
 * and exits 0 at persistence event crash_at (0: never), and run nops
 * operations; a child that does not crash exits 1 and reports its events.
 * Returns the child's exit status (4: the workload failed; -1: it died).
 */
static inline int
crash_run_adr_child(const crash_workload *w, const char *path, uint64_t crash_at,
					const char *image_path, uint64_t image_seed, uint64_t nops)
{
	pid_t		pid;
	int			status;

	crash_report_reset();
	pid = fork();
	if (pid == 0)
	{
		pm_pool    *pool;
		pm_crashsim *cs;
		const char *why;

		if ((why = w->open(w->ctx, path, PM_MODE_ADR, &pool)) != NULL)
			crash_child_fail(why);
		if ((cs = pm_crashsim_attach(pool, crash_at, image_path, image_seed)) == NULL)
			crash_child_fail("crashsim attach failed");
		crash_child_loop(w, nops, cs);
		crash_rep->total_events = pm_crashsim_events(cs);
		_exit(1);
	}
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

#endif							/* PM_HARNESS_CRASH_H */
