/*
 * hashpm_scan.c
 *	  Index scans: every match collected at the first call and returned in
 *	  no particular order, each heap TID once, to be rechecked (the table
 *	  keeps hash codes, not values).  A scan looks up the hash codes of one
 *	  key: an = key, an = ANY array (each element), IS NULL; IS NOT NULL
 *	  alone walks every bucket.  The records waiting in the operation log
 *	  are copied before the table is read, so that an entry applied in
 *	  between is seen twice (and returned once) rather than never.
 */
#include "hashpm.h"

#include "access/hash.h"
#include "access/htup_details.h"
#include "access/relscan.h"
#include "lib/qunique.h"
#include "catalog/pg_type_d.h"
#include "miscadmin.h"
#include "nodes/tidbitmap.h"
#include "pgstat.h"
#include "utils/array.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"

/* What a scan looks for, from its most selective key. */
typedef enum HashpmSearch
{
	SEARCH_NOTHING,				/* a key that nothing matches (= NULL) */
	SEARCH_CODES,				/* values' hash codes */
	SEARCH_NULLS,				/* IS NULL */
	SEARCH_NOT_NULL				/* IS NOT NULL: every value */
} HashpmSearch;

typedef struct HashpmScanOpaqueData
{
	PmiIndex   *h;
	MemoryContext keycxt;		/* the keys' hash codes, reset by each rescan */
	HashpmSearch search;
	uint32	   *codes;			/* sorted, distinct */
	int			ncodes;
	uint64	   *rests;			/* the matches, sorted, distinct */
	int64		nrests;
	int64		caprests;
	int64		next;
	BlockNumber heap_blocks;	/* the table's size when last looked at */
	bool		started;
	bool		counted;		/* this scan is in pg_stat_*_indexes.idx_scan */

	/*
	 * non-MVCC scans: VACUUM waits until they end (pmi_interlock.c)
	 */
	bool		interlock;
	PmiScanHold hold;
} HashpmScanOpaqueData;

typedef HashpmScanOpaqueData *HashpmScanOpaque;

IndexScanDesc
hashpm_beginscan(Relation index, int nkeys, int norderbys)
{
	IndexScanDesc scan = RelationGetIndexScan(index, nkeys, norderbys);
	HashpmScanOpaque so = palloc0(sizeof(HashpmScanOpaqueData));

	so->h = pmi_index_open(index, &hashpm_am_ops);
	pmi_scan_check_built(so->h, index);
	so->keycxt = AllocSetContextCreate(CurrentMemoryContext, "hash_pm scan keys",
									   ALLOCSET_SMALL_SIZES);
	scan->opaque = so;
	return scan;
}

/* The hash code of a key's value of type subtype, by the operator family's function for it. */
static uint32
hash_value(Relation index, Oid subtype, Datum value)
{
	FmgrInfo   *proc;
	FmgrInfo	cross;

	if (!OidIsValid(subtype) || subtype == index->rd_opcintype[0])
		proc = index_getprocinfo(index, 1, HASHSTANDARD_PROC);
	else
	{
		Oid			procoid = get_opfamily_proc(index->rd_opfamily[0], subtype, subtype,
												HASHSTANDARD_PROC);

		if (!OidIsValid(procoid))
			elog(ERROR, "missing support function %d(%u,%u) for index \"%s\"",
				 HASHSTANDARD_PROC, subtype, subtype, RelationGetRelationName(index));
		fmgr_info(procoid, &cross);
		proc = &cross;
	}
	return DatumGetUInt32(FunctionCall1Coll(proc, index->rd_indcollation[0], value));
}

static int
cmp_code(const void *a, const void *b)
{
	uint32		x = *(const uint32 *) a;
	uint32		y = *(const uint32 *) b;

	return x < y ? -1 : x > y;
}

static int
cmp_rest(const void *a, const void *b)
{
	uint64		x = *(const uint64 *) a;
	uint64		y = *(const uint64 *) b;

	return x < y ? -1 : x > y;
}

/* The hash codes of a key: its value's, or its array's non-NULL elements'. */
static int
key_codes(Relation index, ScanKey sk, uint32 **codes)
{
	ArrayType  *arr;
	int16		elmlen;
	bool		elmbyval;
	char		elmalign;
	Datum	   *elems;
	bool	   *nulls;
	int			nelems;
	int			n = 0;
	Oid			subtype;

	if (!(sk->sk_flags & SK_SEARCHARRAY))
	{
		*codes = palloc(sizeof(uint32));
		(*codes)[0] = hash_value(index, sk->sk_subtype, sk->sk_argument);
		return 1;
	}
	arr = DatumGetArrayTypeP(sk->sk_argument);
	subtype = ARR_ELEMTYPE(arr);
	get_typlenbyvalalign(subtype, &elmlen, &elmbyval, &elmalign);
	deconstruct_array(arr, subtype, elmlen, elmbyval, elmalign, &elems, &nulls, &nelems);
	*codes = palloc(sizeof(uint32) * Max(nelems, 1));
	for (int i = 0; i < nelems; i++)
	{
		if (!nulls[i])
			(*codes)[n++] = hash_value(index, sk->sk_subtype, elems[i]);
	}
	qsort(*codes, n, sizeof(uint32), cmp_code);
	return (int) qunique(*codes, n, sizeof(uint32), cmp_code);
}

/*
 * The most selective of the keys (all are rechecked): = NULL matches
 * nothing, then fewest codes, then IS NULL, then IS NOT NULL.
 */
void
hashpm_rescan(IndexScanDesc scan, ScanKey keys, int nkeys, ScanKey orderbys, int norderbys)
{
	HashpmScanOpaque so = (HashpmScanOpaque) scan->opaque;
	MemoryContext old;

	pmi_scan_release(&so->hold);
	so->interlock = pmi_scan_needs_hold(scan);
	so->started = false;
	so->counted = false;
	so->nrests = 0;
	so->next = 0;
	if (keys && scan->numberOfKeys > 0)
		memmove(scan->keyData, keys, scan->numberOfKeys * sizeof(ScanKeyData));
	so->search = SEARCH_NOT_NULL;
	so->ncodes = 0;
	MemoryContextReset(so->keycxt);
	old = MemoryContextSwitchTo(so->keycxt);
	for (int i = 0; i < scan->numberOfKeys && so->search != SEARCH_NOTHING; i++)
	{
		ScanKey		sk = &scan->keyData[i];

		if (sk->sk_flags & SK_SEARCHNULL)
		{
			if (so->search == SEARCH_NOT_NULL)
				so->search = SEARCH_NULLS;
		}
		else if (sk->sk_flags & SK_SEARCHNOTNULL)
			continue;
		else if (sk->sk_flags & SK_ISNULL)
			so->search = SEARCH_NOTHING;
		else
		{
			uint32	   *codes;
			int			n = key_codes(scan->indexRelation, sk, &codes);

			if (so->search != SEARCH_CODES || n < so->ncodes)
			{
				so->search = n == 0 ? SEARCH_NOTHING : SEARCH_CODES;
				so->codes = codes;
				so->ncodes = n;
			}
		}
	}
	MemoryContextSwitchTo(old);
}

static void
add_rest(HashpmScanOpaque so, uint64 rest)
{
	if (so->nrests == so->caprests)
	{
		so->caprests = Max(so->caprests * 2, 64);
		so->rests = so->rests == NULL ?
			palloc_extended(sizeof(uint64) * so->caprests, MCXT_ALLOC_HUGE) :
			repalloc_huge(so->rests, sizeof(uint64) * so->caprests);
	}
	so->rests[so->nrests++] = rest;
}

/* Does an entry of this hash code and rest answer the scan? */
static bool
matches(HashpmScanOpaque so, uint32 hash, uint64 rest)
{
	switch (so->search)
	{
		case SEARCH_CODES:
			return (rest & HASHPM_REST_NULL) == 0 &&
				bsearch(&hash, so->codes, so->ncodes, sizeof(uint32), cmp_code) != NULL;
		case SEARCH_NULLS:
			return (rest & HASHPM_REST_NULL) != 0;
		case SEARCH_NOT_NULL:
			return (rest & HASHPM_REST_NULL) == 0;
		case SEARCH_NOTHING:
			break;
	}
	return false;
}

/* PmiTierRecordFn: a record waiting in the operation log */
static void
add_waiting(void *arg, const PmiNote *note, const char *entry, Size len)
{
	HashpmScanOpaque so = arg;

	if (matches(so, (uint32) note->key, note->rest))
		add_rest(so, note->rest);
}

typedef struct LookupArg
{
	HashpmScanOpaque so;
	uint32		hash;
} LookupArg;

static void
add_found(void *ctx, uint64_t rest)
{
	LookupArg  *la = ctx;

	if (matches(la->so, la->hash, rest))
		add_rest(la->so, rest);
}

/* Every match, each once: the log's waiting records first, then the table. */
static void
collect(IndexScanDesc scan)
{
	HashpmScanOpaque so = (HashpmScanOpaque) scan->opaque;
	HashpmState *st = so->h->am_state;
	pm_error	err;

	so->started = true;
	if (!so->counted)
	{
		pgstat_count_index_scan(scan->indexRelation);
		so->counted = true;
	}
	if (so->search == SEARCH_NOTHING)
		return;
	if (so->interlock)
		pmi_scan_hold(so->h, &so->hold);
	pmi_tier_foreach_pending(so->h, add_waiting, so);
	if (so->search == SEARCH_NOT_NULL)
	{
		pmhash_batch b = {0};
		uint64		cursor = 0;

		while (cursor != PMHASH_SCAN_END)
		{
			CHECK_FOR_INTERRUPTS();
			if (pmhash_scan(&st->table, &cursor, &b, &err) != PM_OK)
			{
				pmhash_batch_free(&b);
				pmi_report(&err, scan->indexRelation);
			}
			for (uint32 i = 0; i < b.n; i++)
			{
				if (matches(so, b.e[i].hash, b.e[i].rest))
					add_rest(so, b.e[i].rest);
			}
		}
		pmhash_batch_free(&b);
	}
	else
	{
		int			ncodes = so->search == SEARCH_NULLS ? 1 : so->ncodes;

		for (int i = 0; i < ncodes; i++)
		{
			LookupArg	la = {so, so->search == SEARCH_NULLS ? 0 : so->codes[i]};

			CHECK_FOR_INTERRUPTS();
			if (pmhash_lookup(&st->table, la.hash, add_found, &la, &err) != PM_OK)
				pmi_report(&err, scan->indexRelation);
		}
	}
	if (so->nrests > 1)
	{
		qsort(so->rests, so->nrests, sizeof(uint64), cmp_rest);
		so->nrests = (int64) qunique(so->rests, so->nrests, sizeof(uint64), cmp_rest);
	}
}

/*
 * A TID a damaged pool made up is not handed to the heap, which would fail
 * on a block past its end (a bitmap heap scan skips those itself).
 */
static void
check_tid(IndexScanDesc scan, ItemPointer tid)
{
	HashpmScanOpaque so = (HashpmScanOpaque) scan->opaque;
	BlockNumber block = ItemPointerGetBlockNumberNoCheck(tid);
	OffsetNumber offset = ItemPointerGetOffsetNumberNoCheck(tid);

	if (block >= so->heap_blocks && scan->heapRelation != NULL)
		so->heap_blocks = RelationGetNumberOfBlocks(scan->heapRelation);
	if (offset == InvalidOffsetNumber || offset > MaxHeapTuplesPerPage ||
		(block >= so->heap_blocks && scan->heapRelation != NULL))
		pmi_report_corrupt(scan->indexRelation,
						   psprintf("An entry names heap tuple (%u,%u), which the table cannot hold.",
									block, offset));
}

bool
hashpm_gettuple(IndexScanDesc scan, ScanDirection dir)
{
	HashpmScanOpaque so = (HashpmScanOpaque) scan->opaque;

	if (!so->started)
		collect(scan);
	if (so->next >= so->nrests)
		return false;
	pmi_tid_unpack(so->rests[so->next++], &scan->xs_heaptid);
	check_tid(scan, &scan->xs_heaptid);
	scan->xs_recheck = true;
	return true;
}

int64
hashpm_getbitmap(IndexScanDesc scan, TIDBitmap *tbm)
{
	HashpmScanOpaque so = (HashpmScanOpaque) scan->opaque;
	ItemPointerData tids[256];
	int64		n = 0;

	collect(scan);
	while (so->next < so->nrests)
	{
		int			batch = 0;

		while (batch < lengthof(tids) && so->next < so->nrests)
		{
			pmi_tid_unpack(so->rests[so->next++], &tids[batch]);
			check_tid(scan, &tids[batch++]);
		}
		tbm_add_tuples(tbm, tids, batch, true);
		n += batch;
	}
	return n;
}

void
hashpm_endscan(IndexScanDesc scan)
{
	HashpmScanOpaque so = (HashpmScanOpaque) scan->opaque;

	pmi_scan_release(&so->hold);
}
