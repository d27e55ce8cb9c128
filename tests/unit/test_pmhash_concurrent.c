/*
 * test_pmhash_concurrent.c
 *	  Appliers insert and delete while lock-free readers look up and scan,
 *	  as threads of one process (one UNO handle) and as processes (one
 *	  each); a coordinator stops the appliers for a checkpoint every few
 *	  milliseconds, or when one's log is full, while the readers go on
 *	  reading the blocks the checkpoint frees (retired through the epoch).
 *
 * Each applier owns the entries whose id it is given modulo the appliers,
 * and publishes each entry's state in shared memory: a version and a
 * present bit, set after its insert returns and cleared before its delete
 * starts.  A reader that sees the same present state before and after a
 * lookup must find the entry (none is missed); every rest a reader gets
 * must be of an entry of the hash code it asked for (none is torn); a scan
 * must return every entry whose present state did not change during it.
 * At the end the table checks and holds exactly the present entries.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "pmhash_harness.h"

#include <pthread.h>
#include <sys/wait.h>

#define NIDS		120000
#define APPLIERS	3
#define READERS		2
#define RUN_SECONDS	2.5
#define PAUSE_MS	20
#define LOG_BLOCKS	8			/* small logs: some fill between checkpoints */
#define MAX_REPORT	5

typedef struct shared
{
	uint64_t	state[NIDS];	/* version << 1 | present */
	uint64_t	pause;			/* appliers park */
	uint64_t	parked;
	uint64_t	need;			/* an applier's log is full */
	uint64_t	stop;
	uint64_t	ops;
	uint64_t	lookups;
	uint64_t	scans;
	uint64_t	checkpoints;
	uint64_t	misses;
	uint64_t	torn;
	uint64_t	errors;
	char		msg[400];
} shared;

static shared *sh;

typedef struct worker
{
	bool		applier;
	int			index;
	hash_process *hp;			/* the process's */
	pthread_t	thread;
} worker;

static void
fail(const char *what, const pm_error *err)
{
	if (pm_fetch_add(&sh->errors, 1) == 0)
		snprintf(sh->msg, sizeof(sh->msg), "%s: %s", what, err != NULL ? err->msg : "wrong answer");
}

/* Between operations: wait out a checkpoint. */
static void
park_if_asked(void)
{
	if (!pm_load(&sh->pause))
		return;
	pm_fetch_add(&sh->parked, 1);
	while (pm_load(&sh->pause))
		usleep(100);
	pm_fetch_add(&sh->parked, -1);
}

/* An applier's log is full: ask for a checkpoint and wait for it. */
static void
wait_for_checkpoint(void)
{
	pm_store(&sh->need, 1);
	while (!pm_load(&sh->pause))
		usleep(100);
	park_if_asked();
}

static void
run_applier(worker *w, pmhash_table *t)
{
	uint64_t	rng = (uint64_t) w->index * 7919 + 17;

	while (!pm_load(&sh->stop))
	{
		uint64_t	id = xorshift(&rng) % (NIDS / APPLIERS) * APPLIERS + (uint64_t) w->index;
		uint64_t	s = pm_load(&sh->state[id]);
		uint64_t	version = (s >> 1) + 1;
		bool		present = s & 1;
		bool		right;
		bool		answer;
		pm_error	err;
		pm_errcode	rc;

		park_if_asked();
		if (present && xorshift(&rng) % 4 != 0)
		{
			/* absent before the delete starts: a reader no longer expects it */
			pm_store(&sh->state[id], version << 1);
			while ((rc = pmhash_delete(t, (uint32_t) w->index, entry_of(id), &answer, &err)) == PM_ERR_LIMIT)
				wait_for_checkpoint();
			right = answer;
		}
		else
		{
			while ((rc = pmhash_insert(t, (uint32_t) w->index, entry_of(id), &answer, &err)) == PM_ERR_LIMIT)
				wait_for_checkpoint();
			right = answer == present;
			/* present once the insert returned */
			pm_store(&sh->state[id], version << 1 | 1);
		}
		if (rc != PM_OK || !right)
			fail("an applier's operation", rc != PM_OK ? &err : NULL);
		pm_fetch_add(&sh->ops, 1);
	}
}

/* Every rest of hash code h names an entry of that code. */
static void
check_rests(uint32_t h, const uint64_t *r, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		if (r[i] == 0 || r[i] > NIDS || hash_of(r[i] - 1) != h)
			pm_fetch_add(&sh->torn, 1);
}

static void
reader_lookup(pmhash_table *t, uint64_t id)
{
	static __thread rests rs;
	uint64_t	before = pm_load(&sh->state[id]);
	uint32_t	h = hash_of(id);
	bool		found = false;
	pm_error	err;

	rs.n = 0;
	if (pmhash_lookup(t, h, collect_rest, &rs, &err) != PM_OK)
	{
		fail("a lookup", &err);
		return;
	}
	for (uint64_t i = 0; i < rs.n && i < HOT_IDS + 8; i++)
		found |= rs.r[i] == id + 1;
	check_rests(h, rs.r, rs.n < HOT_IDS + 8 ? rs.n : HOT_IDS + 8);
	if ((before & 1) && pm_load(&sh->state[id]) == before && !found)
		pm_fetch_add(&sh->misses, 1);
	pm_fetch_add(&sh->lookups, 1);
}

/* A scan returns every entry whose present state held throughout. */
static void
reader_scan(pmhash_table *t)
{
	uint64_t   *before = malloc(NIDS * sizeof(uint64_t));
	uint8_t    *seen = calloc(NIDS, 1);
	pmhash_batch b = {0};
	uint64_t	cursor = 0;
	pm_error	err;

	if (before == NULL || seen == NULL)
		exit(2);
	for (uint64_t id = 0; id < NIDS; id++)
		before[id] = pm_load(&sh->state[id]);
	while (cursor != PMHASH_SCAN_END)
	{
		if (pmhash_scan(t, &cursor, &b, &err) != PM_OK)
		{
			fail("a scan", &err);
			break;
		}
		for (uint32_t i = 0; i < b.n; i++)
		{
			check_rests(b.e[i].hash, &b.e[i].rest, 1);
			if (b.e[i].rest != 0 && b.e[i].rest <= NIDS)
				seen[b.e[i].rest - 1] = 1;
		}
	}
	for (uint64_t id = 0; id < NIDS; id++)
		if ((before[id] & 1) && pm_load(&sh->state[id]) == before[id] && !seen[id])
			pm_fetch_add(&sh->misses, 1);
	pm_fetch_add(&sh->scans, 1);
	pmhash_batch_free(&b);
	free(before);
	free(seen);
}

static void
run_reader(worker *w, pmhash_table *t)
{
	uint64_t	rng = (uint64_t) w->index * 104729 + 3;

	for (uint64_t k = 1; !pm_load(&sh->stop); k++)
	{
		if (k % 20000 == 0)
			reader_scan(t);
		else
			reader_lookup(t, xorshift(&rng) % NIDS);
	}
}

static void
run_worker(worker *w, uint64_t token)
{
	pm_epoch_handle epoch;
	pmhash_table t;

	if (!hash_table_attach(&t, &epoch, w->hp, token))
		exit(2);
	if (w->applier)
		run_applier(w, &t);
	else
		run_reader(w, &t);
	pmhash_detach(&t);
	pm_epoch_unregister(&epoch);
}

static void *
thread_main(void *arg)
{
	worker	   *w = arg;

	run_worker(w, (uint64_t) getpid() | (uint64_t) (w->applier ? 1 + w->index : 100 + w->index) << 32);
	return NULL;
}

/* The coordinator: a checkpoint every PAUSE_MS or when an applier asks, the appliers parked. */
static void
coordinate(hash_process *hp)
{
	double		end = now_sec() + RUN_SECONDS;
	pm_error	err;

	while (now_sec() < end)
	{
		for (int i = 0; i < PAUSE_MS && !pm_load(&sh->need); i++)
			usleep(1000);
		pm_store(&sh->pause, 1);
		while (pm_load(&sh->parked) < APPLIERS)
			usleep(50);
		if (pm_uno_checkpoint(hp->uno, NULL, 0, &err) != PM_OK)
			fail("a checkpoint", &err);
		pm_epoch_reclaim(&hp->epoch);
		sh->checkpoints++;
		pm_store(&sh->need, 0);
		pm_store(&sh->pause, 0);
	}
	pm_store(&sh->stop, 1);
}

/* The table holds exactly the present entries, and checks. */
static const char *
final_content(hash_process *hp)
{
	static char why[300];
	pm_epoch_handle epoch;
	pmhash_table t;
	pmhash_batch b = {0};
	uint64_t	cursor = 0;
	uint64_t	n = 0;
	uint64_t	entries;
	uint64_t	expected = 0;
	const char *problem;
	pm_error	err;

	if (!hash_table_attach(&t, &epoch, hp, (uint64_t) getpid() | UINT64_C(999) << 32))
		return "attach";
	why[0] = '\0';
	while (why[0] == '\0' && cursor != PMHASH_SCAN_END)
	{
		if (pmhash_scan(&t, &cursor, &b, &err) != PM_OK)
			snprintf(why, sizeof(why), "scan: %s", err.msg);
		for (uint32_t i = 0; why[0] == '\0' && i < b.n; i++, n++)
			if (b.e[i].rest == 0 || b.e[i].rest > NIDS || !(sh->state[b.e[i].rest - 1] & 1))
				snprintf(why, sizeof(why), "entry %llu is there and should not be", (unsigned long long) b.e[i].rest);
	}
	for (uint64_t id = 0; id < NIDS; id++)
		expected += sh->state[id] & 1;
	if (why[0] == '\0' && (problem = pmhash_check(&t, &entries)) != NULL)
		snprintf(why, sizeof(why), "%s", problem);
	else if (why[0] == '\0' && (n != expected || entries != expected))
		snprintf(why, sizeof(why), "%llu entries, %llu expected", (unsigned long long) n, (unsigned long long) expected);
	pmhash_batch_free(&b);
	pmhash_detach(&t);
	pm_epoch_unregister(&epoch);
	return why[0] != '\0' ? why : NULL;
}

static pm_errcode
format_small_logs(pm_pool *pool, pm_error *err)
{
	return hash_format_logs(pool, LOG_BLOCKS, err);
}

static void
run(const char *path, bool processes)
{
	pm_pool    *pool = harness_pool(path, PM_MODE_EADR, 256 << 20, PM_KIND_HASH, format_small_logs);
	pm_epoch_domain *dom = harness_domain();
	hash_process hp;
	worker		w[APPLIERS + READERS];
	pid_t		pid[APPLIERS + READERS];
	const char *why;
	pmhash_stats st = {0};
	pmhash_table t;
	pm_epoch_handle epoch;
	pm_error	err;

	memset(sh, 0, sizeof(*sh));
	if (!hash_process_attach(&hp, pool, dom, (uint64_t) getpid(), NULL))
		exit(2);
	for (int i = 0; i < APPLIERS + READERS; i++)
	{
		w[i].applier = i < APPLIERS;
		w[i].index = i < APPLIERS ? i : i - APPLIERS;
		w[i].hp = &hp;
		if (!processes)
		{
			pthread_create(&w[i].thread, NULL, thread_main, &w[i]);
			continue;
		}
		if ((pid[i] = fork()) == 0)
		{
			hash_process own;
			pm_pool    *own_pool;

			if (pm_pool_open(path, PM_MODE_EADR, &own_pool, &err) != PM_OK ||
				!hash_process_attach(&own, own_pool, dom, (uint64_t) getpid(), NULL))
				_exit(2);
			w[i].hp = &own;
			run_worker(&w[i], (uint64_t) getpid() | UINT64_C(1) << 32);
			hash_process_detach(&own);
			_exit(0);
		}
	}
	coordinate(&hp);
	for (int i = 0; i < APPLIERS + READERS; i++)
	{
		if (!processes)
			pthread_join(w[i].thread, NULL);
		else
		{
			int			status;

			waitpid(pid[i], &status, 0);
			if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
				fail("a worker process died", NULL);
		}
	}
	why = final_content(&hp);
	if (hash_table_attach(&t, &epoch, &hp, (uint64_t) getpid() | UINT64_C(998) << 32))
	{
		pmhash_get_stats(&t, &st, &err);
		pmhash_detach(&t);
		pm_epoch_unregister(&epoch);
	}
	tap_ok(sh->errors == 0 && sh->misses == 0 && sh->torn == 0 && sh->scans > 0,
		   "%d appliers and %d readers as %s, %.1f s: %llu operations, %llu lookups and %llu scans, "
		   "%llu checkpoints: no reader missed an entry, none saw one torn (%s)", APPLIERS, READERS,
		   processes ? "processes" : "threads", RUN_SECONDS, (unsigned long long) sh->ops,
		   (unsigned long long) sh->lookups, (unsigned long long) sh->scans,
		   (unsigned long long) sh->checkpoints, sh->errors ? sh->msg : "no error");
	if (sh->misses || sh->torn)
		tap_diag("%llu misses, %llu torn", (unsigned long long) sh->misses, (unsigned long long) sh->torn);
	tap_ok(why == NULL, "then the table checks and holds exactly the present entries (%llu in %llu buckets)%s%s",
		   (unsigned long long) st.entries, (unsigned long long) st.buckets, why ? ": " : "", why ? why : "");
	hash_process_detach(&hp);
	pm_pool_close(pool);
	harness_domain_unmap(dom);
}

int
main(void)
{
	char	   *dir = tap_tmpdir("pmhash_concurrent");
	char		path[600];

	tap_plan(4);
	snprintf(path, sizeof(path), "%s/pool.pm", dir);
	sh = mmap(NULL, sizeof(shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return 2;
	run(path, false);
	run(path, true);
	return tap_done();
}
