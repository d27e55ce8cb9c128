/*
 * nbtpm_reconcile.c
 *	  Crash reconciliation with the heap for nbtree_pm (the protocol:
 *	  src/pg/pmi_reconcile.c).  Only entries whose heap WAL may not have been
 *	  flushed need checking: every insert notes (key, TID, WAL end) in the
 *	  pool's reconciliation ring first (src/core/recon.h), so the check visits
 *	  at most the ring's notes (43,648 when it has grown to its largest); an
 *	  insert that finds no note it may overwrite in a ring that large (all
 *	  name unflushed WAL) flushes WAL first (pmi_note_insert).
 *	  If a ring stripe overflowed anyway, or the pool has no ring, every entry
 *	  is checked: one heap item visit per entry.
 */
#include "nbtpm.h"

#include "miscadmin.h"

typedef struct EntryMatch
{
	Oid			coltype;
	const nbt_skey *e;
} EntryMatch;

static bool
value_matches(void *arg, Datum value, bool isnull)
{
	EntryMatch *m = arg;
	ItemPointerData tid;
	nbt_skey	now;

	nbtpm_rest_tid(m->e->rest, &tid);
	now = nbtpm_skey(m->coltype, value, isnull, &tid);
	return now.key == m->e->key && now.rest == m->e->rest;
}

typedef struct NoteList
{
	nbt_skey   *e;
	int			n;
} NoteList;

static void
collect_note(void *ctx, uint64_t key, uint64_t rest)
{
	NoteList   *l = ctx;

	l->e[l->n].key = key;
	l->e[l->n].rest = rest;
	l->n++;
}

/* Remove the entry if it is no longer current; returns whether it was removed. */
static bool
reconcile_entry(PmiHeapCheck *c, nbt_tree *t, const nbt_skey *sk)
{
	EntryMatch	m = {nbtpm_column_type(c->index), sk};
	ItemPointerData tid;
	bool		found;
	pm_error	err;

	if (sk->rest == 0 || sk->rest > NBT_REST_MAX)
		return false;
	nbtpm_rest_tid(sk->rest, &tid);
	if (pmi_heap_item_current(c, &tid, value_matches, &m))
		return false;
	if (nbt_delete(t, sk, &found, &err) != PM_OK)
		pmi_report(&err, c->index);
	return found;
}

void
nbtpm_reconcile(Relation index, nbt_tree *t)
{
	PmiHeapCheck c;
	nbt_batch	b;
	nbt_skey	from = NBT_SKEY_MIN;
	int64		removed = 0;
	int64		checked = 0;
	pm_recon   *ring = pmi_recon_ring(t->pool);

	pmi_heap_check_begin(&c, index);
	if (ring != NULL)
	{
		NoteList	notes;

		notes.e = palloc(sizeof(nbt_skey) * PM_RECON_MAX_STRIPES * PM_RECON_PER_STRIPE);
		notes.n = 0;
		pm_recon_foreach(t->pool, ring, collect_note, &notes);
		for (int i = 0; i < notes.n; i++)
		{
			CHECK_FOR_INTERRUPTS();
			removed += reconcile_entry(&c, t, &notes.e[i]);
		}
		checked = notes.n;
		pfree(notes.e);
	}
	else
	{
		for (;;)
		{
			CHECK_FOR_INTERRUPTS();
			nbt_read_leaf(t, &from, false, &b);
			for (int i = 0; i < b.n; i++)
				removed += reconcile_entry(&c, t, &b.e[i].sk);
			checked += b.n;
			if (nbt_skey_is_max(&b.high))
				break;
			from = b.high;
		}
	}
	pmi_heap_check_end(&c);
	pmi_reconcile_done(index, t->pool, ring == NULL, checked, removed);
}
