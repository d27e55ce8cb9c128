/*
 * nbtpm_insert.c
 *	  aminsert: one log-structured append into the pool; no WAL, no buffer
 *	  lock.  Durable on return (see src/core/nbtree/README.md), after a note
 *	  in the pool's reconciliation ring.
 */
#include "nbtpm.h"

bool
nbtpm_insert(Relation index, Datum *values, bool *isnull, ItemPointer ht_ctid,
			 Relation heapRel, IndexUniqueCheck checkUnique, bool indexUnchanged,
			 IndexInfo *indexInfo)
{
	PmiIndex *h = nbtpm_open(index);
	nbt_skey	sk = nbtpm_skey(nbtpm_column_type(index), values[0], isnull[0], ht_ctid);
	pm_counters before = pm_tls_counters;
	pm_error	err;

	pmi_note_insert(h, heapRel, sk.key, sk.rest);
	if (nbt_insert(nbtpm_tree(h), &sk, &err) != PM_OK)
		pmi_report(&err, index);
	pmi_count_write(h, &before, true);
	return false;
}
