/*
 * fbrpm_insert.c
 *	  aminsert: one failure-atomic R-tree insert into the pool; no buffer
 *	  lock.  Durable on return (src/core/fbrtree/README.md), after a note in
 *	  the pool's reconciliation ring, one unit with its WAL record
 *	  (pmi_insert_logged); in a tiered index, a record of its operation
 *	  log instead, which is the note too, applied later by the replay
 *	  workers (pmi_tier.c).
 *	  NULLs and empty values go to the side tree.
 */
#include "fbrpm.h"

#include "utils/rel.h"

/* PmiEntryChangeFn: into the tree the item belongs to (NULLs and empty values: the side tree) */
static pm_errcode
insert_item(PmiIndex *h, const void *entry, pm_error *err)
{
	const fbr_item *item = entry;
	FbrpmTrees *trees = fbrpm_trees(h);

	return fbr_insert((item->payload & FBRPM_PAYLOAD_SIDE) ? &trees->side : &trees->spatial, item,
					  err);
}

bool
fbrpm_insert(Relation index, Datum *values, bool *isnull, ItemPointer ht_ctid,
			 Relation heapRel, IndexUniqueCheck checkUnique, bool indexUnchanged,
			 IndexInfo *indexInfo)
{
	PmiIndex   *h;
	pm_counters before;
	FbrpmOpclass oc;
	fbr_item	item;
	PmiNote		note;

	fbrpm_opclass(index, &oc);
	h = pmi_index_open(index, &fbrpm_am_ops);
	before = pm_tls_counters;
	(void) fbrpm_entry(&oc, values[0], isnull[0], ht_ctid, &item);
	note.key = fbrpm_note_key(&item.box);
	note.rest = item.payload;
	if (!pmi_tier_insert(index, h, heapRel, &note, &item))
	{
		pmi_note_insert(h, heapRel, note.key, note.rest);
		pmi_insert_logged(index, h, &item, insert_item);
	}
	pmi_count_writes(h, &before, 1, true);
	return false;
}
