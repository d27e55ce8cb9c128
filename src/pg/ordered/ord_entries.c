/*
 * ord_entries.c
 *	  The entry members of PmiAmOps for the ordered access methods: entries
 *	  are OrdKeys.  A reconciliation note is an entry's key and its own rest:
 *	  a narrow entry itself; the wide entry it stands for is the one of that
 *	  key that has that rest.
 */
#include "ord.h"

#include "miscadmin.h"
#include "utils/memutils.h"

/*
 * What ord_make_entry and ord_insert_entry need: the types keys are encoded
 * from, and memory for a record
 */
typedef struct EntryContext
{
	OrdColumn	col;			/* the key columns */
	OrdColumn	all;			/* ... and the included ones */
	MemoryContext records;		/* the last entry's */
} EntryContext;

void *
ord_entry_context(Relation index)
{
	EntryContext *c = palloc(sizeof(EntryContext));

	c->all = ord_column(index);
	/* an entry made to be looked up or compared: its key columns alone decide */
	c->col = c->all;
	c->col.natts = c->col.nkeys;
	c->records = AllocSetContextCreate(CurrentMemoryContext, "pm_index entry record",
									   ALLOCSET_SMALL_SIZES);
	return c;
}

void
ord_make_entry(void *context, const Datum *values, const bool *isnull, ItemPointer tid,
			   void *entry)
{
	EntryContext *c = context;
	MemoryContext old;

	MemoryContextReset(c->records);
	old = MemoryContextSwitchTo(c->records);
	*(OrdKey *) entry = ord_key_of(&c->col, values, isnull, tid);
	MemoryContextSwitchTo(old);
}

int
ord_entry_cmp(const void *a, const void *b)
{
	return pm_key_cmp(a, b);
}

bool
ord_entry_tid(const void *entry, ItemPointer tid)
{
	uint64		rest = ord_entry_rest(entry);

	if (rest == 0 || rest > ORD_REST_MAX)
		return false;
	pmi_tid_unpack(rest, tid);
	return true;
}

/* PmiAmOps.keep_entry: an entry from foreach_batch, with its record copied. */
void
ord_keep_entry(void *entry)
{
	ord_key_copy(entry, CurrentMemoryContext);
}

void
ord_insert_entry(Relation index, void *context, void *state, const Datum *values,
				 const bool *isnull, ItemPointer tid)
{
	EntryContext *c = context;
	MemoryContext old;
	OrdKey		k;
	pm_error	err;

	MemoryContextReset(c->records);
	old = MemoryContextSwitchTo(c->records);
	k = ord_key_of(&c->all, values, isnull, tid);
	MemoryContextSwitchTo(old);
	/* the structure's insert finds an entry that is there */
	if (ord_ops(index)->insert(state, &k, &err) != PM_OK)
		pmi_report(&err, index);
}

/*
 * PmiAmOps.log_entry: the key and the rest, then for a wide entry its record
 * (header and bytes), which replay rebuilds in its own memory.
 */
void
ord_log_entry(const pm_pool *pool, const void *entry, StringInfo out)
{
	OrdKey		k = *(const OrdKey *) entry;
	const pm_key_rec *r = NULL;

	if (pm_rest_is_wide(k.rest))
	{
		r = pm_key_rec_of(pool, k.rest);
		k.rest = PM_REST_WIDE;
	}
	appendBinaryStringInfo(out, (const char *) &k, sizeof(k));
	if (r != NULL)
		appendBinaryStringInfo(out, (const char *) r, pm_key_rec_size(r));
}

/*
 * The entry ord_log_entry wrote (a WAL record's, an operation log record's)
 * into *k, a wide one's record copied into CurrentMemoryContext.
 */
pm_errcode
ord_logged_entry(const char *data, Size len, OrdKey *k, pm_error *err)
{
	if (len < sizeof(*k))
		return pm_error_set(err, PM_ERR_CORRUPT, 0, "a logged entry of %zu bytes is too short",
							len);
	memcpy(k, data, sizeof(*k));
	if (k->rest == PM_REST_WIDE)
	{
		pm_key_rec *r;

		if (len < sizeof(*k) + sizeof(pm_key_rec))
			return pm_error_set(err, PM_ERR_CORRUPT, 0,
								"a logged wide entry of %zu bytes is too short", len);
		r = palloc(len - sizeof(*k));	/* aligned */
		memcpy(r, data + sizeof(*k), len - sizeof(*k));
		if (pm_key_rec_size(r) != len - sizeof(*k))
			return pm_error_set(err, PM_ERR_CORRUPT, 0,
								"a logged wide entry's record has %u bytes in %zu",
								r->len, len - sizeof(*k) - sizeof(pm_key_rec));
		k->rest = PM_REST_WIDE | PM_REST_LOCAL | (uintptr_t) r;
	}
	return PM_OK;
}

/* PmiAmOps.replay_entry of the ordered access methods: their structure's insert or delete. */
pm_errcode
ord_replay_entry(const PmiAmOps *ops, void *state, bool insert, const char *data, Size len,
				 pm_error *err)
{
	const OrdOps *oo = &ord_am(ops)->ord;
	OrdKey		k;
	bool		found;

	/* a wide key's record lives until the record's replay ends */
	if (ord_logged_entry(data, len, &k, err) != PM_OK)
		return err->code;
	return insert ? oo->insert(state, &k, err) : oo->delete(state, &k, &found, err);
}

/*
 * PmiAmOps.replay_sorted of the ordered access methods: the entries decoded
 * (wide keys' records in CurrentMemoryContext), then the structure's sorted
 * insert, or its insert one by one.
 */
pm_errcode
ord_replay_sorted(const PmiAmOps *ops, void *state, int applier, const PmiLoggedEntry *entries,
				  int n, bool fresh, pm_error *err)
{
	const OrdOps *oo = &ord_am(ops)->ord;
	OrdKey	   *keys = palloc(sizeof(OrdKey) * Max(n, 1));

	err->code = PM_OK;
	for (int i = 0; i < n; i++)
		if (ord_logged_entry(entries[i].data, entries[i].len, &keys[i], err) != PM_OK)
			return err->code;
	if (oo->insert_sorted != NULL)
		return oo->insert_sorted(state, keys, n, err);
	for (int i = 0; i < n; i++)
		if (oo->insert(state, &keys[i], err) != PM_OK)
			return err->code;
	return PM_OK;
}

static int
cmp_rest(const void *a, const void *b)
{
	uint64		x = *(const uint64 *) a;
	uint64		y = *(const uint64 *) b;

	return x < y ? -1 : x > y;
}

/*
 * A narrow entry is its note.  The wide entries of one key are read once for
 * all the notes of that key, and those with a noted rest handed on: however
 * many notes share a key, a reconciliation reads the index at most once.
 */
void
ord_note_entries(Relation index, void *state, const PmiNote *notes, int n, PmiEntryBatchFn fn,
				 void *arg)
{
	OrdBatch   *b;
	uint64	   *rests;

	if (!ord_index_wide(index))
	{
		for (int i = 0; i < n; i++)
		{
			OrdKey		k = {notes[i].key, notes[i].rest};

			(void) fn(arg, &k, 1);
		}
		return;
	}
	b = palloc(sizeof(OrdBatch));
	rests = palloc(sizeof(uint64) * Max(n, 1));
	ord_batch_init(b, index);
	for (int first = 0, end; first < n; first = end)
	{
		OrdKey		lo = {notes[first].key, 0};
		OrdKey		hi = {notes[first].key, UINT64_MAX};

		/* notes are sorted: the rests of this key's notes, sorted */
		for (end = first; end < n && notes[end].key == notes[first].key; end++)
			rests[end - first] = notes[end].rest;
		for (OrdKey from = lo;;)
		{
			CHECK_FOR_INTERRUPTS();
			ord_ops(index)->read_range(index, state, &from, false, &lo, &hi, b);
			for (int i = 0; i < b->n; i++)
			{
				uint64		rest = ord_entry_rest(&b->e[i]);

				if (bsearch(&rest, rests, end - first, sizeof(uint64), cmp_rest) != NULL)
					(void) fn(arg, &b->e[i], 1);
			}

			/*
			 * lo and hi are a key's open ends, which no record's order
			 * decides
			 */
			if (!ord_batch_continues(NULL, b, &lo, &hi, 1, &from))
				break;
		}
	}
	ord_batch_free(b);
	pfree(b);
	pfree(rests);
}
