/*
 * fbrpm_insert.c
 *	  aminsert: one failure-atomic R-tree insert into the pool; no buffer
 *	  lock.  Durable on return (src/core/fbrtree/README.md), after a note in
 *	  the pool's reconciliation ring and before its WAL record (pmi_wal.c).
 *	  NULLs and empty values go to the side tree.
 */
#include "fbrpm.h"

#include "utils/rel.h"

bool
fbrpm_insert(Relation index, Datum *values, bool *isnull, ItemPointer ht_ctid,
			 Relation heapRel, IndexUniqueCheck checkUnique, bool indexUnchanged,
			 IndexInfo *indexInfo)
{
	PmiIndex   *h;
	pm_counters before;
	FbrpmOpclass oc;
	fbr_item	item;
	bool		side;
	pm_error	err;

	fbrpm_opclass(index, &oc);
	h = fbrpm_open(index, &oc);
	before = pm_tls_counters;
	side = fbrpm_entry(&oc, values[0], isnull[0], ht_ctid, &item);
	pmi_note_insert(h, heapRel, fbrpm_note_key(&item.box), item.payload);
	if (fbr_insert(side ? &fbrpm_trees(h)->side : &fbrpm_trees(h)->spatial, &item, &err) != PM_OK)
		pmi_report(&err, index);
	pmi_log_insert(index, h, &item);
	pmi_count_write(h, &before, true);
	return false;
}
