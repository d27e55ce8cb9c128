/*
 * mono_clock.h
 *	  The one clock of the unit tests and the core benchmarks: seconds on
 *	  CLOCK_MONOTONIC, which no change of the wall clock moves.
 */
#ifndef PM_MONO_CLOCK_H
#define PM_MONO_CLOCK_H

#include <time.h>

static inline double
now_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

#endif							/* PM_MONO_CLOCK_H */
