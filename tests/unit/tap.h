/*
 * tap.h
 *	  Minimal TAP producer for the C unit tests (read by tests/run and prove).
 */
#ifndef PM_TAP_H
#define PM_TAP_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int	tap_count;
static int	tap_failed;

static inline void
tap_plan(int n)
{
	printf("1..%d\n", n);
	fflush(stdout);
}

static inline bool tap_ok(bool cond, const char *fmt,...)
			__attribute__((format(printf, 2, 3)));
static inline void tap_diag(const char *fmt,...)
			__attribute__((format(printf, 1, 2)));

static inline bool
tap_ok(bool cond, const char *fmt,...)
{
	va_list		ap;

	tap_count++;
	if (!cond)
		tap_failed++;
	printf("%sok %d - ", cond ? "" : "not ", tap_count);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	return cond;
}

static inline void
tap_diag(const char *fmt,...)
{
	va_list		ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

/* A test that cannot run here counts as passed, with the reason (TAP's SKIP directive). */
static inline void
tap_skip(const char *reason)
{
	tap_count++;
	printf("ok %d # skip %s\n", tap_count, reason);
	fflush(stdout);
}

static inline int
tap_done(void)
{
	return tap_failed ? 1 : 0;
}

/* A fresh scratch directory for one test binary; removed by tap_rmdir. */
static inline char *
tap_tmpdir(const char *name)
{
	const char *base = getenv("PM_TEST_TMPDIR");
	static char dir[512];

	/* /dev/shm when available: pools behave as on an eADR-capable tmpfs */
	if (base == NULL)
		base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
	snprintf(dir, sizeof(dir), "%s/pm_index_%s_XXXXXX", base, name);
	if (mkdtemp(dir) == NULL)
	{
		perror("mkdtemp");
		exit(2);
	}
	return dir;
}

static inline void
tap_rmdir(const char *dir)
{
	char		cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		tap_diag("could not remove %s", dir);
}

#endif							/* PM_TAP_H */
