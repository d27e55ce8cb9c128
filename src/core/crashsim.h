/*
 * crashsim.h
 *	  Instrumented persistence for crash tests.
 *
 * adr: attached to a pool through its trace hooks, the simulator keeps, per
 * 64-byte line, the content known to be durable (updated at each drain for
 * the lines flushed since the previous one) and the content flushed but not
 * yet drained.  At the chosen persistence event it writes the image a power
 * failure could leave: for every line, at random, the durable content, the
 * flushed-but-undrained content, or the current content (a line the cache
 * evicted on its own).  Lines never stored since the last durable point are
 * the same in all three, so the image differs from reality only where
 * hardware is free to differ too.  Stores are observed by comparing lines,
 * so the code under test needs no store instrumentation.
 *
 * eadr: pm_crash_fork_kill runs a workload in a forked child and SIGKILLs
 * it after a delay; MAP_SHARED stores survive in the page cache exactly as
 * they would in eADR caches.
 */
#ifndef PM_CRASHSIM_H
#define PM_CRASHSIM_H

#include "pool.h"

typedef struct pm_crashsim pm_crashsim;

/*
 * Start observing pool; at persistence event number crash_at (1-based; 0:
 * never) write the crash image to image_path and call _exit(0).  The pool
 * must be in adr mode.  The pool is mapped anew in one window of its
 * max_size (pm_pool_map_full): addresses derived before are invalid.
 * Returns NULL on allocation or mapping failure.
 */
extern pm_crashsim *pm_crashsim_attach(pm_pool *pool, uint64_t crash_at,
									   const char *image_path, uint64_t seed);

/* Persistence events (flushes + drains) seen so far. */
extern uint64_t pm_crashsim_events(const pm_crashsim *cs);


/*
 * Fork; the child runs workload(ctx) and must not return before it is
 * killed (if it returns, it exits 0).  The parent kills it with SIGKILL
 * after delay_us microseconds and reaps it.  Returns true if the child was
 * killed (rather than exiting or failing first).
 */
extern bool pm_crash_fork_kill(void (*workload) (void *ctx), void *ctx, unsigned delay_us);

#endif							/* PM_CRASHSIM_H */
