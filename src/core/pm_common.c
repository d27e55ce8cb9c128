/*
 * pm_common.c
 *	  Error reporting, checksums and spin backoff for src/core.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "pm_common.h"

#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

void		(*pm_smo_pause_hook) (const char *where) = NULL;
void		(*pm_assert_hook) (const char *cond, const char *file, int line) = NULL;

void
pm_assert_failed(const char *cond, const char *file, int line)
{
	if (pm_assert_hook != NULL)
		pm_assert_hook(cond, file, line);
	fprintf(stderr, "pm_index: assertion failed: %s (%s:%d)\n", cond, file, line);
	abort();
}

void		(*pm_fatal_hook) (const char *msg) = NULL;

void
pm_fatal(const char *fmt,...)
{
	char		msg[512];
	va_list		ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (pm_fatal_hook != NULL)
		pm_fatal_hook(msg);
	fprintf(stderr, "pm_index: %s\n", msg);
	abort();
}

pm_errcode
pm_error_set(pm_error *err, pm_errcode code, int sys_errno, const char *fmt,...)
{
	if (err != NULL)
	{
		va_list		ap;

		err->code = code;
		err->sys_errno = sys_errno;
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
	}
	return code;
}

const char *
pm_errcode_name(pm_errcode code)
{
	switch (code)
	{
		case PM_OK:
			return "ok";
		case PM_ERR_IO:
			return "i/o error";
		case PM_ERR_NOSPACE:
			return "out of space";
		case PM_ERR_ARENA_FULL:
			return "arena full";
		case PM_ERR_NOTFOUND:
			return "not found";
		case PM_ERR_EXISTS:
			return "already exists";
		case PM_ERR_PERMISSION:
			return "permission denied";
		case PM_ERR_OWNERSHIP:
			return "wrong ownership";
		case PM_ERR_CORRUPT:
			return "corrupt";
		case PM_ERR_VERSION:
			return "incompatible version";
		case PM_ERR_INVALID:
			return "invalid argument";
		case PM_ERR_LIMIT:
			return "limit reached";
		case PM_ERR_POOL_MAX:
			return "pool at its maximum size";
		case PM_ERR_NOMEM:
			return "out of memory";
	}
	return "unknown error";
}

uint64_t
pm_fnv1a64(const void *data, size_t len)
{
	const unsigned char *p = data;
	uint64_t	h = UINT64_C(0xcbf29ce484222325);

	for (size_t i = 0; i < len; i++)
	{
		h ^= p[i];
		h *= UINT64_C(0x100000001b3);
	}
	return h;
}

/*
 * Busy-wait a little, then yield, then sleep: the same shape as PostgreSQL's
 * perform_spin_delay, so a waiter never burns a core for long while the
 * process it waits for is descheduled.
 */
void
pm_spin_delay(unsigned attempt)
{
	if (attempt < 64)
	{
		for (unsigned i = 0; i < (1u << (attempt < 6 ? attempt : 6)); i++)
			pm_cpu_relax();
	}
	else if (attempt < 256)
		sched_yield();
	else
	{
		struct timespec ts = {0, 1000L * (attempt < 1256 ? attempt - 255 : 1000)};

		nanosleep(&ts, NULL);
	}
}
