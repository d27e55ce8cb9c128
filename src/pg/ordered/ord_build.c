/*
 * ord_build.c
 *	  CREATE INDEX for the ordered access methods: scan the table, sort
 *	  (key, rest) pairs (in memory, or with a tuplesort spilling past
 *	  maintenance_work_mem), and hand them in order to the structure's load
 *	  (OrdOps.load), which fills the new pool at the fill factor and builds
 *	  what it keeps in DRAM.  A unique index's entries are checked as they
 *	  are loaded.
 */
#include "ord.h"

#include "access/tableam.h"
#include "catalog/index.h"
#include "catalog/pg_operator_d.h"
#include "catalog/pg_type_d.h"
#include "commands/progress.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/tuplesort.h"

#define SIGN_FLIP (UINT64_C(1) << 63)

/*
 * Entries are collected in memory while they fit maintenance_work_mem (16
 * bytes each, twice for the sort's buffer, and wide keys' records) and
 * sorted there (radix sort, or for wide keys a comparison sort); past that
 * they go to a tuplesort of (key, rest) int8 pairs, with wide keys (key,
 * bytes, rest) (bytea sorts as memcmp, then length: as records do) and the
 * records' host bytes, which spills to disk.  The records of a libc
 * collation's strings (their bytes and the end 0x00 0x00) order as the
 * collation does: there the bytes are the string's, a text in that
 * collation, which sorts as varstr_cmp and so as OrdColumn.order.
 */
typedef struct BuildState
{
	OrdColumn	col;
	bool		wide;			/* the type's keys can be wide */
	bool		by_text;		/* the bytes sort as a text in the column's
								 * collation */
	MemoryContext records;		/* wide keys' records while in memory */
	Size		record_bytes;
	pm_key_rec *loaded;			/* loading from the tuplesort: the current
								 * record */
	OrdKey	   *mem;			/* in-memory entries, NULL once spilled */
	int64		nmem;
	int64		capmem;
	int64		limit;			/* entries that fit the memory budget */
	Tuplesortstate *sort;		/* after a spill */
	TupleTableSlot *slot;
	TupleDesc	sortdesc;
	double		indtuples;
	uint64		lo;				/* the smallest and largest non-NULL keys */
	uint64		hi;
	int64		next;			/* loading: position in mem */
	/* a unique index: rows not alive (unchecked, as btree), the check's state */
	bool		unique;
	bool		nulls_equal;
	ItemPointerData *dead;		/* sorted once the scan is done */
	int64		ndead;
	int64		capdead;
	bool		have_alive;
	OrdKey		last_alive;		/* the last entry of a live row loaded */
	MemoryContext last_alive_record;
	bool		duplicate;		/* last_alive's value is duplicated: the load
								 * stopped */
} BuildState;

/* A bytea of len bytes at data. */
static bytea *
make_bytea(const uint8 *data, uint32 len)
{
	bytea	   *b = palloc(VARHDRSZ + len);

	SET_VARSIZE(b, VARHDRSZ + len);
	if (len > 0)
		memcpy(VARDATA(b), data, len);
	return b;
}

static void
sort_put(BuildState *bs, const OrdKey *sk)
{
	int			rest_col = bs->wide ? 2 : 1;

	/* int8 sorts signed: flip the sign bit so it sorts as the unsigned key */
	ExecClearTuple(bs->slot);
	bs->slot->tts_values[0] = Int64GetDatum((int64) (sk->key ^ SIGN_FLIP));
	bs->slot->tts_values[rest_col] = Int64GetDatum((int64) ord_entry_rest(sk));
	if (bs->wide)
	{
		/* the ordering bytes sort, the host's come along */
		const pm_key_rec *r = pm_rest_is_wide(sk->rest) ? pm_key_rec_of(NULL, sk->rest) : NULL;

		/*
		 * a libc collation's string without the end 0x00 0x00 (a NULL's
		 * record has no bytes)
		 */
		uint32		strip = bs->by_text && r && r->keylen >= 2 ? 2 : 0;

		bs->slot->tts_values[1] = PointerGetDatum(make_bytea(r ? r->data : NULL,
															 r ? r->keylen - strip : 0));
		bs->slot->tts_values[3] = PointerGetDatum(make_bytea(r ? r->data + r->keylen : NULL,
															 r ? r->len - r->keylen : 0));
	}
	memset(bs->slot->tts_isnull, 0, sizeof(bool) * bs->sortdesc->natts);
	ExecStoreVirtualTuple(bs->slot);
	tuplesort_puttupleslot(bs->sort, bs->slot);
	if (bs->wide)
	{
		pfree(DatumGetPointer(bs->slot->tts_values[1]));
		pfree(DatumGetPointer(bs->slot->tts_values[3]));
	}
}

static void
spill(BuildState *bs)
{
	AttrNumber	attnums[3] = {1, 2, 3};
	Oid			sortops[3] = {Int8LessOperator, Int8LessOperator, Int8LessOperator};
	Oid			collations[3] = {InvalidOid, InvalidOid, InvalidOid};
	bool		nullsfirst[3] = {false, false, false};

	if (bs->wide)
		sortops[1] = bs->by_text ? TextLessOperator : ByteaLessOperator;
	if (bs->by_text)
		collations[1] = bs->col.collation;
	bs->sort = tuplesort_begin_heap(bs->sortdesc, bs->wide ? 3 : 2, attnums, sortops,
									collations, nullsfirst, maintenance_work_mem, NULL,
									TUPLESORT_NONE);
	for (int64 i = 0; i < bs->nmem; i++)
		sort_put(bs, &bs->mem[i]);
	pfree(bs->mem);
	bs->mem = NULL;
	if (bs->records)
		MemoryContextReset(bs->records);
}

static void
build_callback(Relation index, ItemPointer tid, Datum *values, bool *isnull,
			   bool tupleIsAlive, void *state)
{
	BuildState *bs = state;
	MemoryContext old;
	OrdKey		sk;

	/*
	 * Make room before making the entry: a spill frees the records of the
	 * entries it hands to the tuplesort, and this one's must outlive it.
	 */
	if (bs->mem != NULL && bs->nmem == bs->capmem)
	{
		if (bs->capmem * 2 > bs->limit ||
			bs->record_bytes + bs->capmem * 4 * sizeof(OrdKey) > (Size) maintenance_work_mem * 1024)
			spill(bs);
		else
		{
			bs->capmem *= 2;
			bs->mem = repalloc_huge(bs->mem, sizeof(OrdKey) * bs->capmem);
		}
	}
	old = bs->records ? MemoryContextSwitchTo(bs->records) : NULL;
	sk = ord_key_of(&bs->col, values, isnull, tid);
	if (old)
	{
		MemoryContextSwitchTo(old);
		if (pm_rest_is_wide(sk.rest))
			bs->record_bytes += pm_key_rec_size(pm_key_rec_of(NULL, sk.rest));
	}
	bs->indtuples++;
	if (bs->unique && !tupleIsAlive)
	{
		if (bs->ndead == bs->capdead)
		{
			bs->capdead = Max(bs->capdead * 2, 64);
			bs->dead = repalloc_huge(bs->dead, sizeof(ItemPointerData) * bs->capdead);
		}
		bs->dead[bs->ndead++] = *tid;
	}
	if (bs->col.nkeys > 1 || !isnull[0])
	{
		bs->lo = Min(bs->lo, sk.key);
		bs->hi = Max(bs->hi, sk.key);
	}
	if (bs->mem != NULL)
		bs->mem[bs->nmem++] = sk;
	else
	{
		/* the tuplesort has its copy */
		sort_put(bs, &sk);
		if (bs->records)
			MemoryContextReset(bs->records);
	}
}

/*
 * Sort by (key, rest): a stable LSD radix sort on the key, one pass per byte
 * in which the keys differ, then insertion sort by rest within runs of one
 * key, which the heap scan's TID order leaves nearly sorted already.
 */
static void
radix_sort(OrdKey *e, int64 n)
{
	OrdKey	   *buf = palloc_extended(sizeof(OrdKey) * Max(n, 1), MCXT_ALLOC_HUGE);
	int64		count[256];

	for (int shift = 0; shift < 64; shift += 8)
	{
		memset(count, 0, sizeof(count));
		for (int64 i = 0; i < n; i++)
			count[(e[i].key >> shift) & 0xff]++;
		if (n == 0 || count[(e[0].key >> shift) & 0xff] == n)
			continue;			/* every key has this byte in common */
		for (int64 b = 0, sum = 0; b < 256; b++)
		{
			int64		c = count[b];

			count[b] = sum;
			sum += c;
		}
		for (int64 i = 0; i < n; i++)
			buf[count[(e[i].key >> shift) & 0xff]++] = e[i];
		memcpy(e, buf, sizeof(OrdKey) * n);
		CHECK_FOR_INTERRUPTS();
	}
	pfree(buf);
	for (int64 i = 1; i < n; i++)
	{
		OrdKey		x = e[i];
		int64		j = i - 1;

		while (j >= 0 && e[j].key == x.key && e[j].rest > x.rest)
		{
			e[j + 1] = e[j];
			j--;
		}
		e[j + 1] = x;
	}
}

static int
cmp_entries(const void *a, const void *b, void *order)
{
	return pm_key_cmp_by(order, a, b);
}

/* The in-memory sort: wide keys' order needs their records. */
static void
sort_in_memory(BuildState *bs)
{
	if (bs->wide)
		qsort_interruptible(bs->mem, bs->nmem, sizeof(OrdKey), cmp_entries,
							unconstify(pm_key_order *, bs->col.order));
	else
		radix_sort(bs->mem, bs->nmem);
}

static int
cmp_tid(const void *a, const void *b)
{
	return ItemPointerCompare((ItemPointer) a, (ItemPointer) b);
}

/*
 * A unique index's check of the entries as they are loaded: entries of equal
 * values are neighbours, and two of live rows are a duplicate.  False when
 * sk is the second: the caller ends the load and ord_build reports it.
 */
static bool
unique_so_far(BuildState *bs, const OrdKey *sk)
{
	ItemPointerData tid;

	pmi_tid_unpack(ord_entry_rest(sk), &tid);
	if (bs->ndead > 0 &&
		bsearch(&tid, bs->dead, bs->ndead, sizeof(ItemPointerData), cmp_tid) != NULL)
		return true;
	if (bs->have_alive && ord_entries_equal(&bs->col, &bs->last_alive, sk, bs->nulls_equal))
	{
		bs->duplicate = true;
		return false;
	}
	bs->last_alive = *sk;
	if (bs->last_alive_record)
	{
		/* a tuplesort's record is the next one's buffer */
		MemoryContextReset(bs->last_alive_record);
		ord_key_copy(&bs->last_alive, bs->last_alive_record);
	}
	bs->have_alive = true;
	return true;
}

static bool
next_sorted(void *ctx, OrdKey *sk)
{
	BuildState *bs = ctx;
	bool		isnull;

	if ((bs->next & 1023) == 0)
	{
		CHECK_FOR_INTERRUPTS();
		pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_DONE, bs->next);
	}
	if (bs->mem != NULL)
	{
		if (bs->next >= bs->nmem)
			return false;
		*sk = bs->mem[bs->next++];
	}
	else
	{
		if (!tuplesort_gettupleslot(bs->sort, true, false, bs->slot, NULL))
			return false;
		sk->key = (uint64) DatumGetInt64(slot_getattr(bs->slot, 1, &isnull)) ^ SIGN_FLIP;
		sk->rest = (uint64) DatumGetInt64(slot_getattr(bs->slot, bs->wide ? 3 : 2, &isnull));
		if (bs->wide)
		{
			bytea	   *bytes = DatumGetByteaPP(slot_getattr(bs->slot, 2, &isnull));
			bytea	   *host = DatumGetByteaPP(slot_getattr(bs->slot, 4, &isnull));
			uint32		keylen = VARSIZE_ANY_EXHDR(bytes);
			uint32		hostlen = VARSIZE_ANY_EXHDR(host);
			uint32		end = bs->by_text && sk->key != ORD_NULL_KEY ? 2 : 0;

			if (keylen + end + hostlen > 0)
			{
				bs->loaded->rest = sk->rest;
				bs->loaded->keylen = keylen + end;
				bs->loaded->len = keylen + end + hostlen;
				memcpy(bs->loaded->data, VARDATA_ANY(bytes), keylen);
				memset(bs->loaded->data + keylen, 0, end);
				memcpy(bs->loaded->data + keylen + end, VARDATA_ANY(host), hostlen);
				sk->rest = PM_REST_WIDE | PM_REST_LOCAL | (uintptr_t) bs->loaded;
			}
		}
		bs->next++;
	}
	return !bs->unique || unique_so_far(bs, sk);
}

static void
report_duplicate(Relation heap, Relation index, const BuildState *bs)
{
	Datum		values[INDEX_MAX_KEYS];
	bool		isnull[INDEX_MAX_KEYS];
	char	   *key_desc;

	ord_entry_values(&bs->col, &bs->last_alive, values, isnull);
	key_desc = BuildIndexValueDescription(index, values, isnull);

	ereport(ERROR,
			(errcode(ERRCODE_UNIQUE_VIOLATION),
			 errmsg("could not create unique index \"%s\"", RelationGetRelationName(index)),
			 key_desc ? errdetail("Key %s is duplicated.", key_desc) :
			 errdetail("Duplicate keys exist."),
			 errtableconstraint(heap, RelationGetRelationName(index))));
}

/* PmiAmOps.build of the ordered access methods: the pool is made; sort, then load */
uint64
ord_build(Relation heap, Relation index, IndexInfo *indexInfo, PmiBuild *b)
{
	BuildState	bs;
	uint64		dram_root;

	ord_check_column(index, b->ops->amname, ord_am(b->ops)->ord.wide_keys);
	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, ORD_PHASE_TABLESCAN);
	memset(&bs, 0, sizeof(bs));
	bs.col = ord_column(index);
	bs.wide = ord_index_wide(index);
	bs.by_text = bs.col.order != NULL;
	bs.sortdesc = CreateTemplateTupleDesc(bs.wide ? 4 : 2);
	TupleDescInitEntry(bs.sortdesc, 1, "key", INT8OID, -1, 0);
	if (bs.wide)
	{
		TupleDescInitEntry(bs.sortdesc, 2, "bytes", bs.by_text ? TEXTOID : BYTEAOID, -1, 0);
		if (bs.by_text)
			TupleDescInitEntryCollation(bs.sortdesc, 2, bs.col.collation);
		bs.records = AllocSetContextCreate(CurrentMemoryContext, "pm_index build records",
										   ALLOCSET_DEFAULT_SIZES);
		bs.last_alive_record = AllocSetContextCreate(CurrentMemoryContext, "pm_index build record",
													 ALLOCSET_SMALL_SIZES);
		bs.loaded = palloc(sizeof(pm_key_rec) + ORD_WIDE_MAX);
	}
	TupleDescInitEntry(bs.sortdesc, bs.wide ? 3 : 2, "rest", INT8OID, -1, 0);
	if (bs.wide)
		TupleDescInitEntry(bs.sortdesc, 4, "host", BYTEAOID, -1, 0);
	bs.slot = MakeSingleTupleTableSlot(bs.sortdesc, &TTSOpsMinimalTuple);
	bs.limit = (int64) maintenance_work_mem * 1024 / (2 * sizeof(OrdKey));
	bs.capmem = Min(bs.limit, 1024);
	bs.mem = palloc_extended(sizeof(OrdKey) * bs.capmem, MCXT_ALLOC_HUGE);
	bs.lo = UINT64_MAX;
	bs.hi = 0;
	bs.unique = indexInfo->ii_Unique;
	bs.nulls_equal = indexInfo->ii_NullsNotDistinct;
	if (bs.unique)
		bs.dead = palloc(sizeof(ItemPointerData));

	/*
	 * no synchronized scan: TIDs then come in nearly sorted order (see
	 * radix_sort)
	 */
	b->heap_tuples = table_index_build_scan(heap, index, indexInfo, false, true,
											build_callback, &bs, NULL);
	b->index_tuples = bs.indtuples;
	if (bs.lo > bs.hi)
	{
		/* no value: the whole key space */
		bs.lo = 0;
		bs.hi = UINT64_MAX;
	}

	if (bs.ndead > 1)
		qsort(bs.dead, bs.ndead, sizeof(ItemPointerData), cmp_tid);

	pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_TOTAL, bs.indtuples);
	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, ORD_PHASE_SORT);
	if (bs.mem != NULL)
		sort_in_memory(&bs);
	else
		tuplesort_performsort(bs.sort);

	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, ORD_PHASE_LOAD);
	dram_root = ord_am(b->ops)->ord.load(index, b, bs.lo, bs.hi, next_sorted, &bs);
	pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_DONE, bs.next);
	if (bs.duplicate)
		report_duplicate(heap, index, &bs);
	if (bs.sort)
		tuplesort_end(bs.sort);
	else
		pfree(bs.mem);
	ExecDropSingleTupleTableSlot(bs.slot);
	if (bs.wide)
	{
		MemoryContextDelete(bs.records);
		MemoryContextDelete(bs.last_alive_record);
		pfree(bs.loaded);
	}
	return dram_root;
}
