/*
 * pmi_handle.c
 *	  This backend's handle on a pm_index index, whatever its access method:
 *	  the pool mapping, the registry slot (made ready by its first user,
 *	  pmi_first_use.c), whether the planner may use the index, and the
 *	  persistence counters every access method's writes publish.
 */
#include "pm_index.h"

#include "access/itup.h"
#include "access/xlog.h"
#include "access/xlogrecovery.h"
#include "storage/bufmgr.h"
#include "storage/ipc.h"
#include "storage/proc.h"
#include "utils/memutils.h"
#include "utils/rel.h"

static HTAB *handles = NULL;

void
pmi_report(const pm_error *err, Relation index)
{
	pmi_report_core_error(ERROR, err, RelationGetRelationName(index));
	pg_unreachable();
}

/* Add this backend's pending counts to the slot (cheap to call; no lock). */
void
pmi_publish_counters(PmiIndex *h)
{
	PmiSlot    *s = pmi_slot(h->slotno);

	if (h->pool == NULL || s->generation != h->generation)
		return;					/* the index is gone; so are its counters */
	pg_atomic_fetch_add_u64(&s->inserts, h->pending_inserts);
	pg_atomic_fetch_add_u64(&s->deletes, h->pending_deletes);
	pg_atomic_fetch_add_u64(&s->flushes, h->pending_flushes);
	pg_atomic_fetch_add_u64(&s->fences, h->pending_fences);
	h->pending_inserts = h->pending_deletes = h->pending_flushes = h->pending_fences = 0;
}

/*
 * Count n writes and their flushes and fences.  Backends publish in batches:
 * a shared counter touched by every row would be a cache line all writers
 * fight over.
 */
void
pmi_count_writes(PmiIndex *h, const pm_counters *before, int n, bool insert)
{
	if (insert)
		h->pending_inserts += n;
	else
		h->pending_deletes += n;
	h->pending_flushes += pm_tls_counters.flushes - before->flushes;
	h->pending_fences += pm_tls_counters.fences - before->fences;
	if (h->pending_inserts + h->pending_deletes >= PMI_COUNTER_BATCH)
		pmi_publish_counters(h);
}

static void
publish_all_at_exit(int code, Datum arg)
{
	HASH_SEQ_STATUS status;
	PmiIndex   *h;

	hash_seq_init(&status, handles);
	while ((h = hash_seq_search(&status)) != NULL)
		pmi_publish_counters(h);
}

/*
 * Fold the extents another process's growth of the pool (and of the DRAM
 * tier) made this backend map into one window with room to grow.  Every
 * access method callback starts here, and what a scan keeps between
 * callbacks names the pool by offsets, so no address into the pool is live.
 */
static void
remap_between_operations(pm_pool *pool, const char *index_name)
{
	pm_error	err;

	if (pm_pool_remap(pool, &err) != PM_OK || pm_pool_remap(pmi_dram_pool, &err) != PM_OK)
		pmi_report_core_error(ERROR, &err, index_name);
}

/* Is this backend's handle still the live one for its slot? */
static inline bool
handle_current(PmiIndex *h, RelFileLocatorBackend rlocator)
{
	PmiSlot    *s = pmi_slot(h->slotno);

	return h->pool != NULL && s->state == PMI_SLOT_READY && s->generation == h->generation &&
		RelFileLocatorBackendEquals(s->rlocator, rlocator);
}

/* This backend's handle of rlocator, for an index of access method ops (not yet open). */
static PmiIndex *
handle_entry(RelFileLocatorBackend rlocator, const PmiAmOps *ops, bool *found)
{
	PmiIndex   *h;

	if (handles == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(RelFileLocatorBackend);
		ctl.entrysize = sizeof(PmiIndex);
		ctl.hcxt = TopMemoryContext;
		handles = hash_create("pm_index handles", 32, &ctl, HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
		before_shmem_exit(publish_all_at_exit, 0);
	}
	h = hash_search(handles, &rlocator, HASH_ENTER, found);
	if (!*found)
	{
		h->pending_inserts = h->pending_deletes = h->pending_flushes = h->pending_fences = 0;
		h->ops = NULL;
		h->am_state = NULL;
	}
	return h;
}

/* Open h (handle_entry) in its slot, the first use done by whoever came first. */
static void
handle_attach(PmiIndex *h, const PmiFirstUse *fu)
{
	PmiSlot    *s;

	h->pool = NULL;
	h->tier_alloc_pool = NULL;
	if (h->ops != fu->ops)
	{
		/* a new handle, or a relfilenode reused by an index of another AM */
		if (h->am_state != NULL)
			pfree(h->am_state);
		h->am_state = MemoryContextAllocZero(TopMemoryContext, fu->ops->state_size);
		h->ops = fu->ops;
	}
	h->slotno = pmi_registry_attach(fu->rlocator, fu->ops, &h->generation);
	pmi_ensure_ready(fu, h->slotno, h->generation);
	s = pmi_slot(h->slotno);
	if (s->generation != h->generation || s->state != PMI_SLOT_READY)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("index \"%s\" was dropped or rebuilt concurrently", fu->name)));
}

/*
 * An index whose definition gives its structure another format parameter
 * than its pool was made with (a pool of an older build, whose encoding of
 * the index's keys has changed since) is not used until rebuilt.
 */
static void
check_format_param(Relation index, const PmiAmOps *ops, pm_pool *pool)
{
	PmiFormatParam want;
	PmiFormatParam have;

	if (ops->pool_format_param == NULL)
		return;
	pmi_format_param(index, ops, &want);
	ops->pool_format_param(pool, &have);
	if (want.len != have.len || memcmp(want.data, have.data, want.len) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" was built for another key format than its definition gives",
						RelationGetRelationName(index)),
				 errdetail("Its pool was made by a build of pm_index that encoded its keys "
						   "differently, or for another operator class or collation."),
				 errhint("REINDEX the index.")));
}

PmiIndex *
pmi_index_open(Relation index, const PmiAmOps *ops)
{
	PmiIndex   *h;
	bool		found;
	uint8		uuid[16];
	pm_pool    *pool;
	RelFileLocatorBackend rlocator = pmi_index_rnode(index);
	PmiFirstUse fu = {index, rlocator, RelationGetRelationName(index), ops, uuid};

	/*
	 * Fast path: the handle cached in the relcache entry, which any
	 * invalidation of the index (drop, reindex, truncate) resets.
	 */
	if (index->rd_amcache != NULL)
	{
		h = *(PmiIndex **) index->rd_amcache;
		if (handle_current(h, rlocator))
		{
			remap_between_operations(h->pool, fu.name);
			return h;
		}
		index->rd_amcache = NULL;
	}
	h = handle_entry(rlocator, ops, &found);
	if (found && handle_current(h, rlocator) && pmi_pool_open(index) == h->pool)
		goto cache;
	pmi_read_metapage(index, ops, uuid);
	handle_attach(h, &fu);
	if (pmi_metapage_names_no_pool(uuid))
		pmi_read_metapage(index, ops, uuid);	/* a fresh pool was just made */
	pool = pmi_pool_open_named(index, uuid);
	check_format_param(index, ops, pool);
	memcpy(h->uuid, uuid, 16);

	/*
	 * the handle names its pool once attached: an error on the way leaves it
	 * to the next call
	 */
	pmi_am_attach(ops, h->am_state, pool, h->slotno, h->generation, pmi_slot(h->slotno)->dram_root,
				  fu.name);
	h->pool = pool;
	pm_recon_cursor_init(&h->recon_cursor, MyProcNumber);
cache:
	index->rd_amcache = MemoryContextAlloc(index->rd_indexcxt, sizeof(PmiIndex *));
	*(PmiIndex **) index->rd_amcache = h;
	remap_between_operations(h->pool, fu.name);
	return h;
}

/*
 * The startup process's handle on an index it replays WAL into.  Recovery
 * has no catalog access, so there is no Relation: the pool is found by its
 * relfilenode, and its UUID is the one the metapage names because both
 * came from the same records.  The caller found the pool there and trusted.
 */
PmiIndex *
pmi_index_open_for_replay(RelFileLocatorBackend rlocator, const PmiAmOps *ops, const char *name)
{
	PmiIndex   *h;
	bool		found;
	PmiFirstUse fu = {NULL, rlocator, name, ops, NULL};

	h = handle_entry(rlocator, ops, &found);
	if (!(found && handle_current(h, rlocator) && pmi_pool_lookup(rlocator) == h->pool))
	{
		pm_pool    *pool;

		handle_attach(h, &fu);
		pool = pmi_pool_lookup(rlocator);
		if (pool == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_FILE),
					 errmsg("index %s has no pool file", name)));
		memcpy(h->uuid, pool->hdr->uuid, 16);
		pmi_am_attach(ops, h->am_state, pool, h->slotno, h->generation,
					  pmi_slot(h->slotno)->dram_root, name);
		h->pool = pool;
	}
	remap_between_operations(h->pool, name);
	return h;
}

/*
 * A scan of a pool being built would miss rows.  The planner never chooses
 * one (pmi_index_plannable); this stops a plan that slipped past, cached
 * while the pool was torn and then replaced.
 */
void
pmi_scan_check_built(PmiIndex *h, Relation index)
{
	if (pmi_pool_building(h->pool))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("index \"%s\" is being built", RelationGetRelationName(index)),
				 errdetail("A background worker is filling its pool from its table."),
				 errhint("Run the statement again: plans made now do not use the index.")));
}

/*
 * May the planner use this index?  Not while its pool is being built
 * (pmi_fill.c), nor for a snapshot older than the build's (*transient then:
 * a plan made without it is made again once the index is ready).  In
 * recovery its pool must be there and trusted, and replay must have passed
 * every record the pool took before this server started using it: a
 * restarted standby's pool can be ahead of the heap pages replay meets
 * again.  On a primary an untrusted pool is left to refuse its use with the
 * reason.  Raises no error.
 */
bool
pmi_index_plannable(Relation index, bool *transient)
{
	RelFileLocatorBackend rlocator = pmi_index_rnode(index);
	pm_pool    *pool = pmi_pool_lookup(rlocator);
	TransactionId ready_xmin;
	uint64		replayed;

	if (pool == NULL)
		return !RecoveryInProgress();	/* an unlogged index's first use makes
										 * one */
	/* a torn pool is replaced by one being built on its first use */
	if (pool->torn || pmi_pool_building(pool))
	{
		*transient = true;
		return false;
	}
	ready_xmin = pmi_registry_ready_xmin(rlocator);
	if (TransactionIdIsValid(ready_xmin) && TransactionIdPrecedes(TransactionXmin, ready_xmin))
	{
		*transient = true;
		return false;
	}
	if (!RecoveryInProgress())
		return true;
	if (pmi_pool_untrusted(pool))
		return false;
	if (!pmi_registry_replayed_before_start(rlocator, &replayed))
		replayed = pm_load(&pool->hdr->host_position);
	return GetXLogReplayRecPtr(NULL) >= replayed;
}

/*
 * Whether an index's tuples without NULLs all share one layout: every column
 * fixed-width and passed by value.  Sets where each column's value lies in a
 * tuple's data, aligned as index_form_tuple aligns it.
 */
static bool
fixed_layout(TupleDesc desc, uint16 *offsets)
{
	Size		off = 0;

	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		if (!att->attbyval || att->attlen <= 0)
			return false;
		off = att_align_nominal(off, att->attalign);
		offsets[i] = off;
		off += att->attlen;
	}
	return true;
}

/* Whether tuple reads back values: the layout fixed_layout assumed holds. */
static bool
reads_back(IndexTuple tuple, TupleDesc desc, const Datum *values)
{
	for (int i = 0; i < desc->natts; i++)
	{
		bool		isnull;

		if (index_getattr(tuple, i + 1, desc, &isnull) != values[i] || isnull)
			return false;
	}
	return true;
}

/*
 * The context an index-only scan decodes an entry's values in and forms its
 * tuple in (pmi_index_only_tuple): made on first use (most scans are not
 * index-only) as a child of the context that holds the scan's state, and
 * reset when the last tuple was formed there.
 */
MemoryContext
pmi_index_only_context(PmiIndexOnlyTuples *t, void *scan_state)
{
	if (t->ctx == NULL)
		t->ctx = AllocSetContextCreate(GetMemoryChunkContext(scan_state), "pm_index index-only tuples",
									   ALLOCSET_SMALL_SIZES);
	else if (t->formed)
		MemoryContextReset(t->ctx);
	t->formed = false;
	return t->ctx;
}

/*
 * The tuple an index-only scan returns (xs_itup) for the values of an entry,
 * valid until the next; called in pmi_index_only_context.  The first tuple
 * without NULLs of an index of fixed-width by-value columns (int8, int4,
 * timestamptz, float8 keys) is kept once it reads back its values, and later
 * ones store their values into it: sizing, allocating and filling a tuple per
 * row would be most of a short index-only range's cost.
 */
IndexTuple
pmi_index_only_tuple(PmiIndexOnlyTuples *t, Relation index, const Datum *values,
					 const bool *isnull)
{
	TupleDesc	desc = RelationGetDescr(index);
	bool		any_null = false;
	IndexTuple	tuple;

	for (int i = 0; i < desc->natts; i++)
		any_null = any_null || isnull[i];
	if (t->fixed != NULL && !any_null)
	{
		char	   *data = (char *) t->fixed + IndexInfoFindDataOffset(t->fixed->t_info);

		for (int i = 0; i < desc->natts; i++)
			store_att_byval(data + t->offsets[i], values[i], TupleDescAttr(desc, i)->attlen);
		return t->fixed;
	}
	if (!t->layout_known)
	{
		t->may_keep = fixed_layout(desc, t->offsets);
		t->layout_known = true;
	}
	tuple = index_form_tuple(desc, (Datum *) values, (bool *) isnull);
	t->formed = true;
	if (t->may_keep && !any_null)
	{
		t->may_keep = false;
		if (reads_back(tuple, desc, values))
		{
			t->fixed = MemoryContextAlloc(MemoryContextGetParent(t->ctx), IndexTupleSize(tuple));
			memcpy(t->fixed, tuple, IndexTupleSize(tuple));
			return t->fixed;
		}
	}
	return tuple;
}

void
pmi_index_only_end(PmiIndexOnlyTuples *t)
{
	if (t->ctx != NULL)
		MemoryContextDelete(t->ctx);
	if (t->fixed != NULL)
		pfree(t->fixed);
	memset(t, 0, sizeof(*t));
}
