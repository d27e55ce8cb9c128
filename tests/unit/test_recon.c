/*
 * test_recon.c
 *	  The reconciliation ring: a busy writer grows the ring to its largest
 *	  and fills every stripe before it asks for a flush, no note whose
 *	  position is not durable is ever lost (one thread, and two growing one
 *	  ring at once), an unflushable log sets the overflow flag, clear forgets
 *	  everything, and allocator recovery keeps every stripe, including one
 *	  that a crash left linked but not yet counted; a writer that kept a
 *	  run while the stripe came round to it never overwrites the notes
 *	  written there.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "recon.h"
#include "tap.h"

#include <pthread.h>
#include <string.h>

#define RING_NOTES	(PM_RECON_MAX_STRIPES * PM_RECON_PER_STRIPE)
#define THREAD_NOTES 200000

/* The fake host log: positions up to log_durable survive a crash. */
static uint64_t log_durable;
static bool log_can_flush = true;
static uint64_t forced_flushes;

/* Durability only grows, as a log's flush position does. */
static void
log_flush(uint64_t upto)
{
	uint64_t	d = pm_load(&log_durable);

	while (d < upto && !pm_cas(&log_durable, &d, upto))
		;
}

static uint64_t
fake_durable(uint64_t upto, bool force)
{
	if (force && log_can_flush)
	{
		log_flush(upto);
		pm_fetch_add(&forced_flushes, 1);
	}
	return pm_load(&log_durable);
}

typedef struct seen_ctx
{
	uint8_t    *seen;			/* indexed by key */
	uint64_t	nkeys;
	uint64_t	notes;
} seen_ctx;

static void
mark_seen(void *arg, uint64_t key, uint64_t rest)
{
	seen_ctx   *c = arg;

	(void) rest;
	c->notes++;
	if (key < c->nkeys)
		c->seen[key] = 1;
}

/*
 * Every key in [0, n) whose position (key + 1) is past the durable point
 * must still be noted; returns how many are missing.
 */
static uint64_t
missing_needed(const pm_pool *pool, const pm_recon *r, uint64_t n, uint64_t *notes)
{
	seen_ctx	c = {calloc(n, 1), n, 0};
	uint64_t	missing = 0;

	pm_recon_foreach(pool, r, mark_seen, &c);
	for (uint64_t k = 0; k < n; k++)
		if (k + 1 > log_durable && !c.seen[k])
			missing++;
	free(c.seen);
	*notes = c.notes;
	return missing;
}

typedef struct writer
{
	pm_pool    *pool;
	pm_recon   *ring;
	int			home;
} writer;

/* Keys home, home + 2, ...: position = key + 1, rising as a log would. */
static void *
write_notes(void *arg)
{
	writer	   *w = arg;
	pm_recon_cursor c;

	pm_recon_cursor_init(&c, w->home);
	for (uint64_t k = (uint64_t) w->home; k < 2 * THREAD_NOTES; k += 2)
	{
		pm_recon_note(w->pool, w->ring, &c, k, 1, k + 1, fake_durable);
		/* the background flusher: now and then the log becomes durable up to here */
		if (k % 5003 == 0)
			log_flush(k > 3000 ? k - 3000 : 0);
	}
	return NULL;
}

/*
 * Recover the allocator from the pool's roots with ring_off as the ring,
 * then allocate stripe-sized blocks and overwrite them: a stripe recovery
 * failed to keep would be handed out (and its notes overwritten).  An error
 * if an allocation fails or returns the block `avoid`.
 */
static pm_errcode
recover_then_allocate(pm_pool *pool, pm_alloc *a, uint64_t ring_off, uint64_t avoid)
{
	pm_error	err;
	pm_errcode	rc;

	pm_pool_set_root(pool, PM_RECON_ROOT, ring_off);
	pm_alloc_recover_begin(a);
	rc = pm_recon_mark_roots(a, pool, &err);
	pm_alloc_recover_end(a);
	for (int i = 0; rc == PM_OK && i < 4 * PM_RECON_MAX_STRIPES; i++)
	{
		uint64_t	b = pm_alloc_block(a, sizeof(pm_recon_stripe), &err);

		if (b == 0)
			rc = err.code;
		else if (b == avoid)
			rc = PM_ERR_CORRUPT;
		else
			memset(pm_pool_addr(pool, b), 0xff, sizeof(pm_recon_stripe));
	}
	return rc;
}

int
main(void)
{
	char	   *dir = tap_tmpdir("recon");
	char		path[600];
	pm_pool_create_opts o = {0};
	pm_pool    *pool = NULL;
	pm_alloc	a;
	pm_error	err = {0};
	pm_recon   *r;
	uint64_t	off;
	pm_recon_cursor c;
	pm_recon_cursor idle;
	uint64_t	notes;
	uint64_t	missing;
	uint64_t	linked;
	pm_errcode	rc;
	pthread_t	th[2];
	writer		w[2];

	tap_plan(14);
	snprintf(path, sizeof(path), "%s/pool.pm", dir);
	o.owner.kind = PM_KIND_TEST;
	o.mode = PM_MODE_EADR;
	o.max_size = 64 << 20;
	if (pm_pool_create(path, &o, &pool, &err) != PM_OK)
	{
		tap_diag("pool: %s", err.msg);
		return 1;
	}
	pm_alloc_attach_pool(&a, pool);
	off = pm_recon_create(pool, &a, &err);
	tap_ok(off != 0, "ring created (%s)", off ? "ok" : err.msg);
	r = pm_pool_addr(pool, off);
	tap_ok(pm_recon_capacity(r) == PM_RECON_MIN_STRIPES * PM_RECON_PER_STRIPE,
		   "a new ring has %d stripes", PM_RECON_MIN_STRIPES);

	/* one writer, nothing durable: the ring grows to its largest and fills before any flush */
	pm_recon_cursor_init(&c, 3);
	for (uint64_t k = 0; k < RING_NOTES; k++)
		pm_recon_note(pool, r, &c, k, 1, k + 1, fake_durable);
	tap_ok(forced_flushes == 0 && pm_recon_capacity(r) == RING_NOTES,
		   "one writer grew the ring to %d stripes and filled all %d notes without a flush",
		   PM_RECON_MAX_STRIPES, (int) RING_NOTES);
	missing = missing_needed(pool, r, RING_NOTES, &notes);
	tap_ok(missing == 0 && notes == RING_NOTES, "every note kept (%llu)", (unsigned long long) notes);

	/* the next note needs a flush, which frees the ring */
	pm_recon_note(pool, r, &c, RING_NOTES, 1, RING_NOTES + 1, fake_durable);
	tap_ok(forced_flushes == 1 && log_durable >= 1 && !pm_recon_overflowed(pool, r),
		   "a full ring forces one flush, no overflow");
	for (uint64_t k = RING_NOTES + 1; k < 3 * RING_NOTES; k++)
		pm_recon_note(pool, r, &c, k, 1, k + 1, fake_durable);
	tap_ok(forced_flushes <= 3, "one flush per ring's worth of notes (%llu for 3 rings)",
		   (unsigned long long) forced_flushes);
	tap_ok(missing_needed(pool, r, 3 * RING_NOTES, &notes) == 0,
		   "no note past the durable point lost (durable %llu)", (unsigned long long) log_durable);

	/* allocator recovery from the roots keeps every stripe: new blocks never overlap one */
	rc = recover_then_allocate(pool, &a, off, 0);
	tap_ok(rc == PM_OK && missing_needed(pool, r, 3 * RING_NOTES, &notes) == 0,
		   "after allocator recovery the stripes are still allocated (%llu notes intact)",
		   (unsigned long long) notes);

	/* a log that cannot flush: the overwrite is recorded as an overflow */
	log_can_flush = false;
	for (uint64_t k = 3 * RING_NOTES; k < 5 * RING_NOTES; k++)
		pm_recon_note(pool, r, &c, k, 1, k + 1, fake_durable);
	tap_ok(pm_recon_overflowed(pool, r), "overwriting a needed note sets the overflow flag");

	pm_recon_clear(pool, r);
	missing = missing_needed(pool, r, 1, &notes);
	tap_ok(!pm_recon_overflowed(pool, r) && missing == 0 && notes == 0,
		   "clear forgets notes and overflow");

	/*
	 * A growth a crash interrupted: the stripe is linked but not counted.
	 * Recovery keeps it and the next growth uses it.
	 */
	log_can_flush = true;
	log_durable = 0;
	pm_recon_cursor_init(&c, 0);
	off = pm_recon_create(pool, &a, &err);
	r = pm_pool_addr(pool, off);
	linked = pm_alloc_block(&a, sizeof(pm_recon_stripe), &err);
	memset(pm_pool_addr(pool, linked), 0, sizeof(pm_recon_stripe));
	r->stripe[PM_RECON_MIN_STRIPES] = linked;
	rc = recover_then_allocate(pool, &a, off, linked);
	for (uint64_t k = 0; k <= PM_RECON_MIN_STRIPES * PM_RECON_PER_STRIPE; k++)
		pm_recon_note(pool, r, &c, k, 1, k + 1, fake_durable);
	tap_ok(rc == PM_OK && r->stripe[PM_RECON_MIN_STRIPES] == linked &&
		   pm_recon_capacity(r) == (PM_RECON_MIN_STRIPES + 1) * PM_RECON_PER_STRIPE,
		   "an interrupted growth's stripe is kept by recovery and used by the next growth");

	/*
	 * A writer that went idle holding a run: the other writer fills the
	 * stripe, comes round to that run and takes its slots.  The idle writer's
	 * next notes must leave those (needed) notes in place.
	 */
	off = pm_recon_create(pool, &a, &err);
	r = pm_pool_addr(pool, off);
	log_durable = 0;
	forced_flushes = 0;
	pm_recon_cursor_init(&idle, 0);
	pm_recon_cursor_init(&c, 0);
	pm_recon_note(pool, r, &idle, 0, 1, 1, fake_durable);
	log_flush(1);				/* the idle writer's note may be overwritten, its free slots taken */
	for (uint64_t k = 1; k <= PM_RECON_PER_STRIPE; k++)
		pm_recon_note(pool, r, &c, k, 1, k + 1, fake_durable);
	for (uint64_t k = PM_RECON_PER_STRIPE + 1; k < PM_RECON_PER_STRIPE + PM_RECON_RUN; k++)
		pm_recon_note(pool, r, &idle, k, 1, k + 1, fake_durable);
	missing = missing_needed(pool, r, PM_RECON_PER_STRIPE + PM_RECON_RUN, &notes);
	tap_ok(forced_flushes == 0 && missing == 0,
		   "a writer back from idle keeps out of the notes written over its run (%llu notes)",
		   (unsigned long long) notes);

	/* two writers growing a new ring, a background flusher: no needed note lost, no overflow */
	off = pm_recon_create(pool, &a, &err);
	r = pm_pool_addr(pool, off);
	log_durable = 0;
	forced_flushes = 0;
	for (int i = 0; i < 2; i++)
	{
		w[i] = (writer) {pool, r, i};
		pthread_create(&th[i], NULL, write_notes, &w[i]);
	}
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	tap_ok(!pm_recon_overflowed(pool, r), "two writers: no overflow (%llu forced flushes, %llu stripes)",
		   (unsigned long long) forced_flushes,
		   (unsigned long long) (pm_recon_capacity(r) / PM_RECON_PER_STRIPE));
	tap_ok(missing_needed(pool, r, 2 * THREAD_NOTES, &notes) == 0,
		   "two writers: every note past the durable point (%llu) kept",
		   (unsigned long long) log_durable);

	pm_pool_close(pool);
	tap_rmdir(dir);
	return tap_done();
}
