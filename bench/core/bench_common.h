/*
 * bench_common.h
 *	  Helpers shared by the core micro-benchmarks.
 */
#ifndef PM_BENCH_COMMON_H
#define PM_BENCH_COMMON_H

#include <time.h>

/* Monotonic time in seconds. */
static inline double
bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec + ts.tv_nsec / 1e9;
}

#endif							/* PM_BENCH_COMMON_H */
