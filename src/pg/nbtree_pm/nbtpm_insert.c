/*
 * nbtpm_insert.c
 *	  aminsert: one log-structured append into the pool; no WAL, no buffer
 *	  lock.  Durable on return (see src/core/nbtree/README.md), after a note
 *	  in the pool's reconciliation ring.
 */
#include "nbtpm.h"

#include "access/xlog.h"
#include "storage/proc.h"
#include "utils/rel.h"

/*
 * How far WAL is flushed, for the reconciliation ring.  When every stripe's
 * next note still names unflushed heap WAL (asynchronous commit outran the
 * WAL writer), force flushes up to it, as a synchronous commit would, so
 * that no note is lost and reconciliation after a crash stays bounded by the
 * ring.
 */
static uint64
wal_durable_upto(uint64 upto, bool force)
{
	if (force)
		XLogFlush((XLogRecPtr) upto);
	return GetFlushRecPtr(NULL);
}

bool
nbtpm_insert(Relation index, Datum *values, bool *isnull, ItemPointer ht_ctid,
			 Relation heapRel, IndexUniqueCheck checkUnique, bool indexUnchanged,
			 IndexInfo *indexInfo)
{
	NbtpmIndex *h = nbtpm_open(index);
	nbt_skey	sk = nbtpm_skey(nbtpm_column_type(index), values[0], isnull[0], ht_ctid);
	pm_counters before = pm_tls_counters;
	pm_error	err;

	/*
	 * The heap tuple's WAL ends at XactLastRecEnd and may not be flushed yet:
	 * note the entry before it becomes durable, so that reconciliation after
	 * a crash checks it (nbtpm_reconcile.c).
	 */
	if (h->recon != NULL && RelationNeedsWAL(heapRel) && XactLastRecEnd != InvalidXLogRecPtr)
		pm_recon_note(h->pool, h->recon, MyProc->pgprocno, sk.key, sk.rest, XactLastRecEnd,
					  &h->flushed_lsn, wal_durable_upto);
	if (nbt_insert(&h->tree, &sk, &err) != PM_OK)
		nbtpm_report(&err, index);
	nbtpm_count_write(h, &before, true);
	return false;
}
