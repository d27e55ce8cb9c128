/*
 * test_olog.c
 *	  The operation log: sizes out of range refused; a lane fills to its
 *	  capacity and then refuses, wraps round once records are applied and
 *	  reclaimed, and returns each record as written; a writer and an applier
 *	  on two threads pass 1M records in order with none torn; after an adr
 *	  power failure at every persistence event of a workload, the log
 *	  validates, every acknowledged append is durable and every record the
 *	  tail names is whole; damaged positions and directories are refused; and
 *	  allocator recovery keeps the directory and the lanes.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness_crash.h"
#include "olog.h"

#include <pthread.h>
#include <string.h>

#define ENTRY		24			/* bytes: a sequence number and its two check words */
#define THREAD_RECORDS 1000000
#define CRASH_APPENDS 40

/* Entry number seq: seq, ~seq, seq * 31. */
static void
make_entry(uint64_t seq, uint64_t *e)
{
	e[0] = seq;
	e[1] = ~seq;
	e[2] = seq * 31;
}

static bool
entry_is(const void *p, uint64_t seq)
{
	uint64_t	e[3];

	make_entry(seq, e);
	return memcmp(p, e, sizeof(e)) == 0;
}

/* harness_pool's format: a log of 2 lanes of ENTRY-byte entries. */
static pm_errcode
format_log(pm_pool *pool, pm_error *err)
{
	pm_alloc	a;

	pm_alloc_attach_pool(&a, pool);
	return pm_olog_create(pool, &a, 2, ENTRY, err);
}

typedef struct threads
{
	pm_pool    *pool;
	const pm_olog *o;
	uint64_t	bad;			/* records the applier found out of order or torn */
	uint64_t	full;			/* appends refused while the lane was full */
} threads;

static void *
writer(void *arg)
{
	threads    *t = arg;
	uint64_t	e[3];

	for (uint64_t seq = 0; seq < THREAD_RECORDS; seq++)
	{
		make_entry(seq, e);
		while (!pm_olog_append(t->pool, t->o, 1, e, seq + 1))
			pm_fetch_add(&t->full, 1);
	}
	return NULL;
}

static void *
applier(void *arg)
{
	threads    *t = arg;
	pm_olog_lane *l = pm_olog_lane_at(t->pool, t->o, 1);
	uint64_t	next = 0;

	while (next < THREAD_RECORDS)
	{
		uint64_t	tail = pm_load(&l->tail);

		for (; next < tail; next++)
		{
			pm_olog_record r = pm_olog_record_at(t->pool, t->o, 1, next);

			if (r.host_pos != next + 1 || !entry_is(r.entry, next))
				t->bad++;
		}
		pm_olog_set_applied(t->pool, t->o, 1, tail);
		pm_olog_reclaim(t->pool, t->o, 1, tail);
	}
	return NULL;
}

/* ctx: the adr child's pool (crash_run_adr_child opens it, then crashsim remaps it). */
static const char *
crash_open(void *ctx, const char *path, pm_mode mode, pm_pool **pool)
{
	pm_error	err;

	if (pm_pool_open(path, mode, pool, &err) != PM_OK)
		return "the pool does not open";
	*(pm_pool **) ctx = *pool;
	return NULL;
}

/* Append entry k to lane 1; apply and reclaim after every 8th. */
static const char *
crash_step(void *ctx, uint64_t k)
{
	pm_pool    *child_pool = *(pm_pool **) ctx;
	const pm_olog *o = pm_olog_of(child_pool);
	uint64_t	e[3];

	make_entry(k, e);
	if (!pm_olog_append(child_pool, o, 1, e, k + 1))
		return "the lane is full";
	if (k % 8 == 7)
	{
		pm_olog_set_applied(child_pool, o, 1, k - 3);
		pm_olog_reclaim(child_pool, o, 1, k - 5);
	}
	return NULL;
}

/* NULL if the image's log is sound for acks acknowledged appends, or what is wrong. */
static const char *
check_crash_image(const char *image, uint64_t acks)
{
	static char why[320];
	pm_pool    *pool;
	pm_error	err;
	const pm_olog *o;
	pm_olog_lane *l;
	uint64_t	tail;
	uint64_t	applied;

	if (pm_pool_open(image, PM_MODE_ADR, &pool, &err) != PM_OK)
		return "the image does not open";
	if (pm_olog_validate(pool, &err) != PM_OK)
	{
		snprintf(why, sizeof(why), "does not validate: %s", err.msg);
		pm_pool_close(pool);
		return why;
	}
	o = pm_olog_of(pool);
	l = pm_olog_lane_at(pool, o, 1);
	tail = pm_load(&l->tail);
	applied = pm_load(&l->applied);
	why[0] = '\0';
	/* the append in flight may or may not have reached its durability point */
	if (tail < acks || tail > acks + 1)
		snprintf(why, sizeof(why), "tail %llu after %llu acknowledged appends",
				 (unsigned long long) tail, (unsigned long long) acks);
	for (uint64_t pos = applied; why[0] == '\0' && pos < tail; pos++)
	{
		pm_olog_record r = pm_olog_record_at(pool, o, 1, pos);

		if (r.host_pos != pos + 1 || !entry_is(r.entry, pos))
			snprintf(why, sizeof(why), "record %llu below the tail is not whole", (unsigned long long) pos);
	}
	pm_pool_close(pool);
	return why[0] != '\0' ? why : NULL;
}

int
main(void)
{
	char	   *dir = tap_tmpdir("olog");
	char		path[600];
	char		work[600];
	char		image[600];
	pm_pool    *pool;
	pm_alloc	a;
	pm_error	err = {0};
	pm_olog    *o;
	pm_olog_lane *l;
	uint64_t	e[3];
	uint64_t	n;
	bool		same;
	threads		t = {0};
	pthread_t	th[2];
	uint64_t	events;
	int			points = 0;
	int			failures = 0;
	pm_pool    *child_pool = NULL;
	crash_workload w = {&child_pool, crash_open, crash_step, NULL};

	tap_plan(12);
	snprintf(path, sizeof(path), "%s/pool.pm", dir);
	snprintf(work, sizeof(work), "%s/work.pm", dir);
	snprintf(image, sizeof(image), "%s/image.pm", dir);
	pool = harness_pool(path, PM_MODE_EADR, 64 << 20, PM_KIND_TEST, NULL);
	pm_alloc_attach_pool(&a, pool);
	tap_ok(pm_olog_create(pool, &a, 0, ENTRY, &err) == PM_ERR_INVALID &&
		   pm_olog_create(pool, &a, 2, PM_OLOG_MAX_ENTRY + 1, &err) == PM_ERR_INVALID,
		   "no lanes, or entries over %d bytes, refused", PM_OLOG_MAX_ENTRY);
	if (format_log(pool, &err) != PM_OK || (o = pm_olog_of(pool)) == NULL)
	{
		tap_diag("create: %s", err.msg);
		return 1;
	}
	tap_ok(o->nlanes == 2 && o->capacity > 1000, "a log of 2 lanes of %d-byte entries (%u records a lane)",
		   ENTRY, o->capacity);

	/* one lane: full at its capacity, then wraps round once applied and reclaimed */
	for (n = 0; n < 10 * (uint64_t) o->capacity; n++)
	{
		make_entry(n, e);
		if (!pm_olog_append(pool, o, 0, e, n + 1))
			break;
	}
	tap_ok(n == o->capacity, "a lane takes %u records and then refuses", o->capacity);
	pm_olog_set_applied(pool, o, 0, o->capacity / 2);
	pm_olog_reclaim(pool, o, 0, o->capacity / 3);
	for (; n < 10 * (uint64_t) o->capacity; n++)
	{
		make_entry(n, e);
		if (!pm_olog_append(pool, o, 0, e, n + 1))
			break;
	}
	tap_ok(n == o->capacity + o->capacity / 3, "after a third is reclaimed it takes a third more");
	same = true;
	for (uint64_t pos = o->capacity / 3; pos < n; pos++)
	{
		pm_olog_record r = pm_olog_record_at(pool, o, 0, pos);

		same &= r.host_pos == pos + 1 && entry_is(r.entry, pos);
	}
	tap_ok(same, "every record from reclaimed to the tail reads as written, across the wrap");
	l = pm_olog_lane_at(pool, o, 0);
	tap_ok(pm_olog_validate(pool, &err) == PM_OK, "the log validates");
	pm_olog_set_applied(pool, o, 0, n);
	pm_olog_reclaim(pool, o, 0, n);

	/* a writer and an applier thread, on the other lane (positions from 0) */
	t.pool = pool;
	t.o = o;
	pthread_create(&th[0], NULL, writer, &t);
	pthread_create(&th[1], NULL, applier, &t);
	pthread_join(th[0], NULL);
	pthread_join(th[1], NULL);
	tap_ok(t.bad == 0, "a writer and an applier thread passed %d records in order, none torn "
		   "(the writer found the lane full %llu times)", THREAD_RECORDS, (unsigned long long) t.full);

	/* damage */
	{
		uint64_t	saved = l->applied;

		l->applied = l->tail + 1;
		tap_ok(pm_olog_validate(pool, &err) == PM_ERR_CORRUPT, "applied past the tail refused (%s)", err.msg);
		l->applied = saved;
		o->record_size += 8;
		tap_ok(pm_olog_validate(pool, &err) == PM_ERR_CORRUPT, "a damaged directory refused (%s)", err.msg);
		o->record_size -= 8;
	}

	/* allocator recovery keeps the directory and the lanes */
	{
		bool		overlap = false;
		pm_errcode	rc;

		pm_alloc_recover_begin(&a);
		rc = pm_olog_mark(&a, pool, &err);
		pm_alloc_recover_end(&a);
		for (int i = 0; rc == PM_OK && i < 64; i++)
		{
			uint64_t	b = pm_alloc_block(&a, PM_ALLOC_MAX_BLOCK, &err);

			for (uint32_t k = 0; k < o->nlanes; k++)
				overlap |= b == o->lane[k];
			overlap |= b == pm_pool_root(pool, PM_OLOG_ROOT);
		}
		tap_ok(rc == PM_OK && !overlap && pm_olog_validate(pool, &err) == PM_OK,
			   "allocator recovery keeps the directory and the lanes");
	}
	pm_pool_close(pool);

	/* adr power failures at every persistence event of a workload */
	crash_report_map();
	pm_pool_close(harness_pool(path, PM_MODE_ADR, 64 << 20, PM_KIND_TEST, format_log));
	if (!copy_file(path, work))
		return 1;
	events = crash_run_adr_child(&w, work, 0, image, 1, CRASH_APPENDS) == 1 ? crash_rep->total_events : 0;
	tap_ok(events > 4 * CRASH_APPENDS, "the workload runs to its end (%llu persistence events)",
		   (unsigned long long) events);
	for (uint64_t at = 1; at <= events; at++)
	{
		for (uint64_t seed = 1; seed <= 3; seed++)
		{
			const char *why;

			if (!copy_file(path, work) ||
				crash_run_adr_child(&w, work, at, image, at * 7 + seed, CRASH_APPENDS) != 0)
			{
				if (failures++ < 5)
					tap_diag("event %llu: the child did not crash (%s)", (unsigned long long) at, crash_rep->msg);
				continue;
			}
			points++;
			if ((why = check_crash_image(image, crash_rep->completed)) != NULL && failures++ < 5)
				tap_diag("event %llu, seed %llu: %s", (unsigned long long) at, (unsigned long long) seed, why);
		}
	}
	tap_ok(failures == 0, "%d power failures (every event, 3 images each): the log validates, "
		   "every acknowledged append is durable, every record below the tail whole", points);
	return tap_done();
}
