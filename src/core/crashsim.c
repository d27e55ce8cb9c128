/*
 * crashsim.c
 *	  Instrumented persistence for crash tests; see crashsim.h.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "crashsim.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int	pm_crashsim_write_image(pm_crashsim *cs, const char *path);
static void pm_crashsim_detach(pm_crashsim *cs);

struct pm_crashsim
{
	pm_pool    *pool;
	uint64_t	nlines;			/* lines covered: the pool's max size */
	char	   *durable;		/* content known to be durable */
	char	   *flushed;		/* content at the last flush of a line */
	uint8_t    *flushed_flag;	/* line flushed since the last drain */
	uint64_t   *pending;		/* the lines with flushed_flag set */
	uint64_t	npending;
	uint64_t	events;
	uint64_t	crash_at;
	char	   *image_path;
	uint64_t	rng;
	pthread_mutex_t mutex;
};

static uint64_t
next_rand(pm_crashsim *cs)
{
	/* xorshift64*: reproducible per seed */
	cs->rng ^= cs->rng >> 12;
	cs->rng ^= cs->rng << 25;
	cs->rng ^= cs->rng >> 27;
	return cs->rng * UINT64_C(2685821657736338717);
}

static uint64_t
file_lines(pm_crashsim *cs)
{
	struct stat st;

	if (fstat(cs->pool->fd, &st) != 0)
		return 0;
	return (uint64_t) st.st_size / PM_CACHELINE;
}

static void
count_event(pm_crashsim *cs)
{
	cs->events++;
	if (cs->crash_at != 0 && cs->events == cs->crash_at)
	{
		if (pm_crashsim_write_image(cs, cs->image_path) != 0)
			_exit(3);
		_exit(0);
	}
}

static void
on_flush(void *ctx, const void *addr, size_t len)
{
	pm_crashsim *cs = ctx;
	uint64_t	off = (uint64_t) ((const char *) addr - cs->pool->base);
	uint64_t	first = off / PM_CACHELINE;
	uint64_t	last = (off + len - 1) / PM_CACHELINE;

	pthread_mutex_lock(&cs->mutex);
	for (uint64_t l = first; l <= last && l < cs->nlines; l++)
	{
		memcpy(cs->flushed + l * PM_CACHELINE, cs->pool->base + l * PM_CACHELINE, PM_CACHELINE);
		if (!cs->flushed_flag[l])
		{
			cs->flushed_flag[l] = 1;
			cs->pending[cs->npending++] = l;
		}
	}
	count_event(cs);
	pthread_mutex_unlock(&cs->mutex);
}

static void
on_drain(void *ctx)
{
	pm_crashsim *cs = ctx;

	pthread_mutex_lock(&cs->mutex);
	for (uint64_t i = 0; i < cs->npending; i++)
	{
		uint64_t	l = cs->pending[i];

		memcpy(cs->durable + l * PM_CACHELINE, cs->flushed + l * PM_CACHELINE, PM_CACHELINE);
		cs->flushed_flag[l] = 0;
	}
	cs->npending = 0;
	count_event(cs);
	pthread_mutex_unlock(&cs->mutex);
}

pm_crashsim *
pm_crashsim_attach(pm_pool *pool, uint64_t crash_at, const char *image_path, uint64_t seed)
{
	pm_crashsim *cs = calloc(1, sizeof(*cs));
	pm_trace_hooks hooks;
	uint64_t	have;

	/* the simulation reads the pool through one window: map all of it now */
	if (cs == NULL || pm_pool_map_full(pool, NULL) != PM_OK)
	{
		free(cs);
		return NULL;
	}
	cs->pool = pool;
	cs->nlines = pool->window / PM_CACHELINE;
	cs->durable = calloc(cs->nlines, PM_CACHELINE);
	cs->flushed = calloc(cs->nlines, PM_CACHELINE);
	cs->flushed_flag = calloc(cs->nlines, 1);
	cs->pending = calloc(cs->nlines, sizeof(uint64_t));
	cs->image_path = image_path ? strdup(image_path) : NULL;
	if (!cs->durable || !cs->flushed || !cs->flushed_flag || !cs->pending || (image_path && !cs->image_path))
	{
		pm_crashsim_detach(cs);
		return NULL;
	}
	cs->crash_at = crash_at;
	cs->rng = seed * 2 + 1;
	pthread_mutex_init(&cs->mutex, NULL);
	/* what is in the file when observation starts is taken as durable */
	have = file_lines(cs);
	memcpy(cs->durable, pool->base, have * PM_CACHELINE);
	hooks.on_flush = on_flush;
	hooks.on_drain = on_drain;
	hooks.ctx = cs;
	pm_pool_set_trace(pool, &hooks);
	return cs;
}

static void
pm_crashsim_detach(pm_crashsim *cs)
{
	if (cs == NULL)
		return;
	if (cs->pool && cs->pool->persist.trace && cs->pool->persist.trace->ctx == cs)
		pm_pool_set_trace(cs->pool, NULL);
	free(cs->durable);
	free(cs->flushed);
	free(cs->flushed_flag);
	free(cs->pending);
	free(cs->image_path);
	free(cs);
}

uint64_t
pm_crashsim_events(const pm_crashsim *cs)
{
	return cs->events;
}

static int
pm_crashsim_write_image(pm_crashsim *cs, const char *path)
{
	uint64_t	n = file_lines(cs);
	char	   *image = malloc(n * PM_CACHELINE + 1);
	int			fd;
	ssize_t		done;

	if (image == NULL)
		return -1;
	for (uint64_t l = 0; l < n; l++)
	{
		const char *src = cs->durable + l * PM_CACHELINE;
		uint64_t	r = next_rand(cs) % 3;

		if (cs->flushed_flag[l] && r == 1)
			src = cs->flushed + l * PM_CACHELINE;
		else if (r == 2)
			src = cs->pool->base + l * PM_CACHELINE;	/* evicted before the failure */
		memcpy(image + l * PM_CACHELINE, src, PM_CACHELINE);
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
	{
		free(image);
		return -1;
	}
	done = write(fd, image, n * PM_CACHELINE);
	free(image);
	if (done != (ssize_t) (n * PM_CACHELINE))
	{
		close(fd);
		if (done >= 0)
			errno = EIO;
		return -1;
	}
	return close(fd);
}

bool
pm_crash_fork_kill(void (*workload) (void *ctx), void *ctx, unsigned delay_us)
{
	pid_t		pid = fork();
	int			status;
	struct timespec ts = {delay_us / 1000000, (long) (delay_us % 1000000) * 1000};

	if (pid < 0)
		return false;
	if (pid == 0)
	{
		workload(ctx);
		_exit(0);
	}
	nanosleep(&ts, NULL);
	kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
}
