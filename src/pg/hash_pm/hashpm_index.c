/*
 * hashpm_index.c
 *	  hash_pm's side of the platform contract (PmiAmOps): a pool formatted
 *	  with the hash table and its UNO logs, the recovery of both at first
 *	  use, entries as VACUUM, the verifier, reconciliation and WAL see them,
 *	  the replay of a lane's batch as the lane's UNO applier, checkpoints.
 */
#include "hashpm.h"

#include "miscadmin.h"
#include "utils/rel.h"

#include "olog.h"

#define HASHPM_META_MAGIC	0x48535048	/* "HPSH" */

/* UNO logs of 16 MiB for each of the 64 appliers: one per lane of the operation log */
#define HASHPM_LOG_BLOCKS	0

/* a direct change checkpoints once its applier's UNO logs are this full */
#define HASHPM_DIRECT_CHECKPOINT_PCT 25

uint64
hashpm_rest(ItemPointer tid, bool isnull)
{
	return (isnull ? HASHPM_REST_NULL : 0) | pmi_tid_pack(tid);
}

static pm_errcode
hashpm_format(pm_pool *pool, const PmiFormatParam *param, pm_error *err)
{
	pm_alloc	a;
	pm_errcode	rc;

	pm_alloc_attach_pool(&a, pool);
	if ((rc = pm_uno_create(pool, &a, PM_UNO_MAX_APPLIERS, HASHPM_LOG_BLOCKS, err)) != PM_OK)
		return rc;
	return pmhash_create(pool, &a, HASHPM_MIN_DEPTH, err);
}

/* ---- the UNO host: the operation log's positions, deferred frees ---- */

/* A checkpoint made the table durable with every record below positions[lane]. */
static void
advance_log(void *ctx, const uint64_t *positions, uint32_t npositions)
{
	HashpmState *st = ctx;
	const pm_olog *o = pm_olog_of(st->pool);

	for (uint32_t lane = 0; o != NULL && lane < npositions && lane < o->nlanes; lane++)
	{
		if (positions[lane] > pm_load(&pm_olog_lane_at(st->pool, o, lane)->applied))
			pm_olog_set_applied(st->pool, o, lane, positions[lane]);
	}
}

/* A block a checkpoint frees: lock-free readers may hold it until their epoch ends. */
static void
release_block(void *ctx, uint64_t off)
{
	HashpmState *st = ctx;

	pm_epoch_retire(pmi_epoch(), (uint32) st->slotno + 1, st->generation, off);
}

/*
 * The pool is full: the blocks retired by release_block that no reader holds
 * (this process's, and those of processes that have exited, VACUUM's
 * backend say) are freed now rather than at some later reclaim.
 */
static int
reclaim_blocks(void *ctx)
{
	return pm_epoch_reclaim(pmi_epoch());
}

static void
detach(HashpmState *st)
{
	if (st->uno != NULL)
	{
		pmhash_detach(&st->table);
		pm_uno_detach(st->uno);
		st->uno = NULL;
	}
}

static void
hashpm_attach(void *state, pm_pool *pool, int slotno, uint32 generation, uint64 dram_root)
{
	HashpmState *st = state;
	pm_uno_host host = {.advance = advance_log, .release = release_block, .ctx = st,
	.reclaim = reclaim_blocks};
	pm_error	err;

	detach(st);
	st->pool = pool;
	st->slotno = slotno;
	st->generation = generation;
	pm_alloc_attach_pool(&st->alloc, pool);
	if (pm_uno_attach(pool, &st->alloc, &host, &st->uno, &err) != PM_OK)
		pmi_report_core_error(ERROR, &err, NULL);
	if (pmhash_attach(&st->table, pool, st->uno, pmi_epoch(), &err) != PM_OK)
	{
		pm_uno_detach(st->uno);
		st->uno = NULL;
		pmi_report_core_error(ERROR, &err, NULL);
	}
}

/*
 * First use after a restart: the table back at its last checkpoint (or
 * that checkpoint finished), the allocator rebuilt from what is reachable,
 * the locks a crash left held freed.  The platform then applies the
 * operation log from the positions the checkpoint gave it.
 */
static uint64
hashpm_recover(const char *index_name, void *state, bool after_crash)
{
	HashpmState *st = state;
	pm_alloc	a;
	pm_error	err;

	if (pm_uno_recover(st->uno, false, &err) != PM_OK)
		pmi_report_core_error(ERROR, &err, index_name);
	pm_alloc_attach_pool(&a, st->pool);
	pm_alloc_recover_begin(&a);
	if (pm_recon_mark_roots(&a, st->pool, &err) != PM_OK ||
		pm_uno_mark(&a, st->pool, &err) != PM_OK ||
		pmhash_mark(&a, st->pool, &err) != PM_OK)
		pmi_report_core_error(ERROR, &err, index_name);
	pm_alloc_recover_end(&a);
	pmhash_recover(&st->table);
	return 0;
}

static pm_errcode
hashpm_checkpoint(void *state, const uint64 *positions, uint32 npositions, pm_error *err)
{
	HashpmState *st = state;

	return pm_uno_checkpoint(st->uno, positions, npositions, err);
}

/*
 * A change outside the lanes (VACUUM, reconciliation, a standby's replay,
 * a background build, an insert that cannot wait), by a process that
 * excludes every applier: as applier 0, checkpointing first when its logs
 * fill up, so that the change itself cannot run out of log.
 */
pm_errcode
hashpm_change_direct(HashpmState *st, bool insert, const HashpmEntry *e, bool *changed,
					 pm_error *err)
{
	pmhash_entry he = {e->hash, e->rest};
	pm_errcode	rc = PM_OK;

	for (int attempt = 0; attempt < 2; attempt++)
	{
		bool		existed = false;

		/* a second attempt: the change found the logs full and changed nothing */
		if ((attempt > 0 || pm_uno_fill_pct(st->uno, 0) >= HASHPM_DIRECT_CHECKPOINT_PCT) &&
			(rc = pmi_tier_checkpoint_held(st->slotno, st->pool, &hashpm_am_ops, st, err)) != PM_OK)
			return rc;
		if (insert)
		{
			rc = pmhash_insert(&st->table, 0, he, &existed, err);
			*changed = !existed;
		}
		else
			rc = pmhash_delete(&st->table, 0, he, changed, err);
		if (rc != PM_ERR_LIMIT)
			break;
	}
	return rc;
}

/* ---- entries ---- */

void *
hashpm_entry_context(Relation index)
{
	HashpmContext *c = palloc(sizeof(HashpmContext));

	fmgr_info_copy(&c->proc, index_getprocinfo(index, 1, 1), CurrentMemoryContext);
	c->collation = index->rd_indcollation[0];
	return c;
}

void
hashpm_make_entry(void *context, const Datum *values, const bool *isnull, ItemPointer tid,
				  void *entry)
{
	HashpmContext *c = context;
	HashpmEntry *e = entry;

	e->pad = 0;
	e->hash = isnull[0] ? 0 :
		DatumGetUInt32(FunctionCall1Coll(&c->proc, c->collation, values[0]));
	e->rest = hashpm_rest(tid, isnull[0]);
}

static int
hashpm_entry_cmp(const void *a, const void *b)
{
	const HashpmEntry *x = a;
	const HashpmEntry *y = b;

	if (x->hash != y->hash)
		return x->hash < y->hash ? -1 : 1;
	return x->rest < y->rest ? -1 : x->rest > y->rest;
}

static bool
hashpm_entry_tid(const void *entry, ItemPointer tid)
{
	pmi_tid_unpack(((const HashpmEntry *) entry)->rest, tid);
	return true;
}

static pm_errcode
hashpm_delete_entry(void *state, const void *entry, bool *found, pm_error *err)
{
	return hashpm_change_direct(state, false, entry, found, err);
}

/*
 * The background build's insert (pmi_fill.c), which checkpoints once the
 * pool is filled: a crash before leaves the pool to be filled again.
 */
static void
hashpm_insert_entry(Relation index, void *context, void *state, const Datum *values,
					const bool *isnull, ItemPointer tid)
{
	HashpmState *st = state;
	HashpmEntry e;
	bool		added;
	pm_error	err;
	pm_errcode	rc;

	hashpm_make_entry(context, values, isnull, tid, &e);
	pmi_tier_exclusive_begin(st->slotno);
	rc = hashpm_change_direct(st, true, &e, &added, &err);
	pmi_tier_exclusive_end(st->slotno);
	if (rc != PM_OK)
		pmi_report(&err, index);
}

/*
 * Bucket by bucket, with every applier excluded for a run of buckets at a
 * time (a batch fn deletes from is changed as applier 0); a checkpoint
 * before the run ends makes what fn deleted durable before VACUUM frees the
 * heap items.
 */
#define BUCKETS_PER_RUN 64

/* A walk over the buckets, handing each bucket's entries to fn. */
typedef struct BucketWalk
{
	HashpmState *st;
	uint64		cursor;
	pmhash_batch b;
	HashpmEntry *entries;
	uint32		cap;
	PmiEntryBatchFn fn;
	void	   *arg;
} BucketWalk;

/* The next run of buckets, by the process that excludes every applier. */
static pm_errcode
walk_run(BucketWalk *w, pm_error *err)
{
	bool		deleted = false;
	pm_errcode	rc = PM_OK;

	for (int i = 0; i < BUCKETS_PER_RUN && w->cursor != PMHASH_SCAN_END; i++)
	{
		if ((rc = pmhash_scan(&w->st->table, &w->cursor, &w->b, err)) != PM_OK)
			return rc;
		if (w->b.n > w->cap)
		{
			w->cap = Max(w->b.n, 256);
			w->entries = w->entries == NULL ? palloc(sizeof(HashpmEntry) * w->cap) :
				repalloc(w->entries, sizeof(HashpmEntry) * w->cap);
		}
		for (uint32 j = 0; j < w->b.n; j++)
		{
			w->entries[j].hash = w->b.e[j].hash;
			w->entries[j].pad = 0;
			w->entries[j].rest = w->b.e[j].rest;
		}
		if (w->b.n > 0 && w->fn(w->arg, w->entries, (int) w->b.n) > 0)
			deleted = true;
	}
	if (deleted)
		rc = pmi_tier_checkpoint_held(w->st->slotno, w->st->pool, &hashpm_am_ops, w->st, err);
	return rc;
}

static pm_errcode
walk_run_excluded(BucketWalk *w, pm_error *err)
{
	volatile pm_errcode rc = PM_OK;

	pmi_tier_exclusive_begin(w->st->slotno);
	PG_TRY();
	{
		rc = walk_run(w, err);
	}
	PG_FINALLY();
	{
		pmi_tier_exclusive_end(w->st->slotno);
	}
	PG_END_TRY();
	return rc;
}

static uint32
hashpm_foreach_batch(Relation index, void *state, PmiEntryBatchFn fn, void *arg, pm_error *err)
{
	BucketWalk	w = {0};

	w.st = state;
	w.fn = fn;
	w.arg = arg;
	while (w.cursor != PMHASH_SCAN_END)
	{
		CHECK_FOR_INTERRUPTS();
		if (walk_run_excluded(&w, err) != PM_OK)
		{
			pmhash_batch_free(&w.b);
			pmi_report(err, index);
		}
	}
	pmhash_batch_free(&w.b);
	return 0;
}

/* A note is its entry's hash code and rest. */
static void
hashpm_note_entries(Relation index, void *state, const PmiNote *notes, int n,
					PmiEntryBatchFn fn, void *arg)
{
	for (int i = 0; i < n; i++)
	{
		HashpmEntry e = {(uint32) notes[i].key, 0, notes[i].rest};

		(void) fn(arg, &e, 1);
	}
}

/* ---- WAL and the operation log ---- */

static void
hashpm_log_entry(const pm_pool *pool, const void *entry, StringInfo out)
{
	appendBinaryStringInfo(out, entry, sizeof(HashpmEntry));
}

static pm_errcode
logged_entry(const char *data, Size len, HashpmEntry *e, pm_error *err)
{
	if (len != sizeof(HashpmEntry))
		return pm_error_set(err, PM_ERR_CORRUPT, 0, "a hash_pm entry of %zu bytes", (size_t) len);
	memcpy(e, data, sizeof(HashpmEntry));
	return PM_OK;
}

/* A standby's replay, which excludes every applier (pmi_redo.c). */
static pm_errcode
hashpm_replay_entry(const PmiAmOps *ops, void *state, bool insert, const char *data, Size len,
					pm_error *err)
{
	HashpmEntry e;
	bool		changed;

	if (logged_entry(data, len, &e, err) != PM_OK)
		return err->code;
	return hashpm_change_direct(state, insert, &e, &changed, err);
}

/* A lane's batch, as the lane's UNO applier. */
static pm_errcode
hashpm_replay_sorted(const PmiAmOps *ops, void *state, int applier,
					 const PmiLoggedEntry *entries, int n, bool fresh, pm_error *err)
{
	HashpmState *st = state;

	err->code = PM_OK;
	for (int i = 0; i < n; i++)
	{
		HashpmEntry e;
		pmhash_entry he;
		bool		existed;

		if (logged_entry(entries[i].data, entries[i].len, &e, err) != PM_OK)
			return err->code;
		he.hash = e.hash;
		he.rest = e.rest;
		if (pmhash_insert(&st->table, (uint32) applier, he, &existed, err) != PM_OK)
			return err->code;
	}
	return PM_OK;
}

/* ---- the verifier, statistics ---- */

static int64
hashpm_check(Relation index, void *state)
{
	HashpmState *st = state;
	const char *problem;
	uint64		entries = 0;

	pmi_tier_exclusive_begin(st->slotno);
	problem = pmhash_check(&st->table, &entries);
	pmi_tier_exclusive_end(st->slotno);
	if (problem != NULL)
		pmi_report_corrupt(index, problem);
	return (int64) entries;
}

static void
hashpm_shape(PmiIndex *h, PmiShape *shape)
{
	HashpmState *st = h->am_state;
	pmhash_stats s;
	pm_error	err;
	pm_errcode	rc;

	/* a walk of every chain, exact and safe with no applier at work */
	pmi_tier_exclusive_begin(st->slotno);
	rc = pmhash_get_stats(&st->table, &s, &err);
	pmi_tier_exclusive_end(st->slotno);
	if (rc != PM_OK)
		pmi_report_core_error(ERROR, &err, NULL);
	shape->entries = (int64) s.entries;
	shape->leaves = (int64) s.blocks;
	shape->height = 1;
	shape->pm_bytes = (int64) s.bytes;
	shape->dram_bytes = 0;
	shape->splits = -1;
	shape->compactions = -1;
	shape->merges = -1;
}

static const PmiReloption hashpm_reloptions[] = {
	{"fillfactor", "Accepted for compatibility with hash: hash_pm's buckets split when a chain grows a block", 75, 10, 100},
};

const PmiAmOps hashpm_am_ops = {
	.amname = "hash_pm",
	.kind = PM_KIND_HASH,
	.meta_magic = HASHPM_META_MAGIC,
	.reloptions = hashpm_reloptions,
	.nreloptions = lengthof(hashpm_reloptions),
	.format = hashpm_format,
	.attach = hashpm_attach,
	.state_size = sizeof(HashpmState),
	.build = hashpm_build,
	.recover = hashpm_recover,
	.entry_size = sizeof(HashpmEntry),
	.entry_context = hashpm_entry_context,
	.make_entry = hashpm_make_entry,
	.entry_cmp = hashpm_entry_cmp,
	.entry_tid = hashpm_entry_tid,
	.delete_entry = hashpm_delete_entry,
	.insert_entry = hashpm_insert_entry,
	.foreach_batch = hashpm_foreach_batch,
	.note_entries = hashpm_note_entries,
	.log_entry = hashpm_log_entry,
	.replay_entry = hashpm_replay_entry,
	.replay_sorted = hashpm_replay_sorted,
	.checkpoint = hashpm_checkpoint,
	.check = hashpm_check,
	.shape = hashpm_shape,
	.derive_clause = hashpm_derive_clause,
};
