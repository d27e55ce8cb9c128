/*
 * ord_entries.c
 *	  The entry members of PmiAmOps for the ordered access methods: entries
 *	  are (key, rest) pairs (OrdKey), and a reconciliation note is the entry
 *	  itself.
 */
#include "ord.h"

/* what ord_make_entry needs: the type keys are encoded from */
void *
ord_entry_context(Relation index)
{
	Oid		   *coltype = palloc(sizeof(Oid));

	*coltype = ord_column_type(index);
	return coltype;
}

void
ord_make_entry(void *context, Datum value, bool isnull, ItemPointer tid, void *entry)
{
	*(OrdKey *) entry = ord_key_of(*(Oid *) context, value, isnull, tid);
}

int
ord_entry_cmp(const void *a, const void *b)
{
	return pm_key_cmp(a, b);
}

bool
ord_entry_tid(const void *entry, ItemPointer tid)
{
	const OrdKey *k = entry;

	if (k->rest == 0 || k->rest > ORD_REST_MAX)
		return false;
	ord_rest_tid(k->rest, tid);
	return true;
}

void
ord_note_entries(Relation index, void *state, uint64 key, uint64 rest, PmiEntryBatchFn fn,
				 void *arg)
{
	OrdKey		k = {key, rest};

	(void) fn(arg, &k, 1);
}
