/*
 * nbtpm_scan.c
 *	  Index scans.  The scan keys become a sorted list of disjoint ranges of
 *	  (key, rest): one per distinct = ANY element, else one for the operator
 *	  bounds, plus the NULL range when NULLs qualify.  Entries are read one
 *	  leaf at a time (a sorted snapshot of that leaf, taken inside an epoch
 *	  and copied out), and the scan moves to the next leaf by its fence, so
 *	  it neither repeats nor misses an entry across concurrent splits.
 */
#include "nbtpm.h"

#include "access/relscan.h"
#include "access/stratnum.h"
#include "catalog/pg_type_d.h"
#include "miscadmin.h"
#include "nodes/tidbitmap.h"
#include "utils/array.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"

typedef struct NbtpmRange
{
	nbt_skey	lo;				/* inclusive */
	nbt_skey	hi;				/* inclusive */
} NbtpmRange;

typedef struct NbtpmScanOpaqueData
{
	PmiIndex *h;
	Oid			coltype;
	NbtpmRange *ranges;
	int			nranges;
	int			cur;			/* current range */
	bool		positioned;		/* batch/pos are meaningful */
	int			pos;			/* index into batch of the last entry returned */
	nbt_batch	batch;
	MemoryContext tupctx;		/* index-only tuples, reset per tuple; NULL until one */
	/* ammarkpos: the position to go back to (the batch is a snapshot) */
	bool		marked_positioned;
	int			marked_cur;
	int			marked_pos;
	nbt_batch  *marked_batch;	/* allocated by the first mark: merge joins only */
#ifdef PM_ASSERT_CHECKING
	/* the last entry returned and its direction (0: none since positioning) */
	nbt_skey	last_returned;
	int			last_dir;
#endif
} NbtpmScanOpaqueData;

typedef NbtpmScanOpaqueData *NbtpmScanOpaque;

#define REST_NONNULL_MAX	(NBTPM_REST_NULL - 1)

IndexScanDesc
nbtpm_beginscan(Relation r, int nkeys, int norderbys)
{
	IndexScanDesc scan = RelationGetIndexScan(r, nkeys, norderbys);
	NbtpmScanOpaque so = palloc0(sizeof(NbtpmScanOpaqueData));

	so->coltype = nbtpm_column_type(r);
	scan->opaque = so;
	return scan;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64		x = *(const uint64 *) a;
	uint64		y = *(const uint64 *) b;

	return x < y ? -1 : x > y;
}

/*
 * Sorted, distinct column keys equal to the non-NULL elements of an array
 * argument (for other strategies, the elements' keys bound the range).  An
 * element of another key space contributes the column keys it equals, if
 * any (a timestamp equals a date only at midnight).
 */
static uint64 *
array_keys(IndexScanDesc scan, ScanKey key, int *n, bool *inclusive)
{
	NbtpmScanOpaque so = (NbtpmScanOpaque) scan->opaque;
	ArrayType  *arr = DatumGetArrayTypeP(key->sk_argument);
	Oid			elemtype = ARR_ELEMTYPE(arr);
	int16		typlen;
	bool		typbyval;
	char		typalign;
	Datum	   *elems;
	bool	   *nulls;
	int			nelems;
	uint64	   *keys;
	int			m = 0;

	get_typlenbyvalalign(elemtype, &typlen, &typbyval, &typalign);
	deconstruct_array(arr, elemtype, typlen, typbyval, typalign, &elems, &nulls, &nelems);
	keys = palloc(sizeof(uint64) * Max(nelems, 1));
	for (int i = 0; i < nelems; i++)
	{
		uint64		klo = 0,
					khi = UINT64_MAX;

		if (nulls[i])
			continue;
		if (nbtpm_same_key_space(so->coltype, elemtype))
			keys[m++] = nbtpm_encode(elemtype, elems[i]);
		else if (nbtpm_search_bound(scan->indexRelation->rd_opfamily[0], so->coltype, elemtype,
									elems[i], key->sk_strategy, &klo, &khi))
			keys[m++] = key->sk_strategy < BTEqualStrategyNumber ? khi : klo;
	}
	/* converted keys are already the inclusive bounds of their strategy */
	*inclusive = !nbtpm_same_key_space(so->coltype, elemtype);
	qsort(keys, m, sizeof(uint64), cmp_u64);
	*n = 0;
	for (int i = 0; i < m; i++)
		if (*n == 0 || keys[*n - 1] != keys[i])
			keys[(*n)++] = keys[i];
	return keys;
}

/* Keep only the elements of set (sorted) that are in other (sorted). */
static int
intersect(uint64 *set, int n, const uint64 *other, int m)
{
	int			out = 0;

	for (int i = 0, j = 0; i < n && j < m;)
	{
		if (set[i] < other[j])
			i++;
		else if (set[i] > other[j])
			j++;
		else
		{
			set[out++] = set[i];
			i++;
			j++;
		}
	}
	return out;
}

static void
compute_ranges(IndexScanDesc scan)
{
	NbtpmScanOpaque so = (NbtpmScanOpaque) scan->opaque;
	uint64		lo = 0,
				hi = UINT64_MAX;
	bool		want_values = true;
	bool		want_nulls = true;
	bool		possible = true;
	uint64	   *set = NULL;
	int			nset = 0;
	int			n = 0;

	for (int i = 0; i < scan->numberOfKeys && possible; i++)
	{
		ScanKey		key = &scan->keyData[i];

		if (key->sk_flags & SK_ISNULL)
		{
			if (key->sk_flags & SK_SEARCHNULL)
				want_values = false;
			else if (key->sk_flags & SK_SEARCHNOTNULL)
				want_nulls = false;
			else
				possible = false;	/* a strict operator against NULL */
			continue;
		}
		want_nulls = false;
		if (key->sk_flags & SK_SEARCHARRAY)
		{
			int			m;
			bool		inclusive;
			uint64	   *keys = array_keys(scan, key, &m, &inclusive);

			if (m == 0)
				possible = false;
			else if (key->sk_strategy == BTEqualStrategyNumber)
			{
				if (set == NULL)
				{
					set = keys;
					nset = m;
				}
				else
					nset = intersect(set, nset, keys, m);
			}
			else
			{
				/* col < ANY (a) is col < max(a); col > ANY (a) is col > min(a) */
				uint64		k = (key->sk_strategy < BTEqualStrategyNumber) ? keys[m - 1] : keys[0];
				uint64		klo = 0,
							khi = UINT64_MAX;

				if (!inclusive && key->sk_strategy == BTLessStrategyNumber && k-- == 0)
					possible = false;
				else if (!inclusive && key->sk_strategy == BTGreaterStrategyNumber && k++ == UINT64_MAX)
					possible = false;
				else if (key->sk_strategy < BTEqualStrategyNumber)
					khi = k;
				else
					klo = k;
				lo = Max(lo, klo);
				hi = Min(hi, khi);
				possible = possible && lo <= hi;
			}
			continue;
		}
		if (nbtpm_same_key_space(so->coltype, key->sk_subtype))
			possible = nbtpm_encode_bound(so->coltype, key->sk_subtype, key->sk_argument,
										  key->sk_strategy, &lo, &hi);
		else
			possible = nbtpm_search_bound(scan->indexRelation->rd_opfamily[0], so->coltype,
										  key->sk_subtype, key->sk_argument, key->sk_strategy,
										  &lo, &hi);
	}

	if (so->ranges)
		pfree(so->ranges);
	so->ranges = palloc(sizeof(NbtpmRange) * (Max(nset, 1) + 1));
	if (possible && want_values)
	{
		if (set != NULL)
		{
			for (int i = 0; i < nset; i++)
			{
				if (set[i] < lo || set[i] > hi)
					continue;
				so->ranges[n].lo = (nbt_skey) {set[i], 1};
				so->ranges[n].hi = (nbt_skey) {set[i], REST_NONNULL_MAX};
				n++;
			}
		}
		else
		{
			so->ranges[n].lo = (nbt_skey) {lo, 1};
			so->ranges[n].hi = (nbt_skey) {hi, REST_NONNULL_MAX};
			n++;
		}
	}
	if (possible && want_nulls)
	{
		so->ranges[n].lo = (nbt_skey) {NBTPM_NULL_KEY, NBTPM_REST_NULL};
		so->ranges[n].hi = (nbt_skey) {NBTPM_NULL_KEY, NBT_REST_MAX};
		n++;
	}
	so->nranges = n;
	if (set)
		pfree(set);
}

void
nbtpm_rescan(IndexScanDesc scan, ScanKey scankey, int nscankeys, ScanKey orderbys,
			 int norderbys)
{
	NbtpmScanOpaque so = (NbtpmScanOpaque) scan->opaque;

	if (scankey && scan->numberOfKeys > 0)
		memmove(scan->keyData, scankey, scan->numberOfKeys * sizeof(ScanKeyData));
	so->h = nbtpm_open(scan->indexRelation);
	compute_ranges(scan);
	so->cur = -1;
	so->positioned = false;
#ifdef PM_ASSERT_CHECKING
	so->last_dir = 0;
#endif
}

/* Load the leaf to start range r in direction dir. */
static void
position_at(NbtpmScanOpaque so, int r, ScanDirection dir)
{
	so->cur = r;
	if (ScanDirectionIsForward(dir))
	{
		nbt_read_range(&so->h->tree.nbt, &so->ranges[r].lo, false, &so->ranges[r].lo,
					   &so->ranges[r].hi, &so->batch);
		so->pos = -1;
	}
	else
	{
		/*
		 * A backward read takes an exclusive bound: start just above hi (a
		 * range's rest is at most NBT_REST_MAX, so this cannot wrap), which
		 * reads hi's leaf once rather than hi alone and then its leaf again.
		 */
		nbt_skey	above_hi = {so->ranges[r].hi.key, so->ranges[r].hi.rest + 1};

		nbt_read_range(&so->h->tree.nbt, &above_hi, true, &so->ranges[r].lo,
					   &so->ranges[r].hi, &so->batch);
		so->pos = so->batch.n;
	}
	so->positioned = true;
}

/*
 * Step to the next qualifying entry in direction dir.  Returns false at the
 * end, leaving the state so that a step the other way starts over from the
 * end just left.
 */
static bool
step(NbtpmScanOpaque so, ScanDirection dir, nbt_skey *out)
{
	int			d = ScanDirectionIsForward(dir) ? 1 : -1;

	if (so->nranges == 0)
		return false;
	if (!so->positioned)
		position_at(so, d > 0 ? 0 : so->nranges - 1, dir);
	else if (so->cur < 0 || so->cur >= so->nranges)
	{
		/* past one end: only a step back from that end finds anything */
		if ((d > 0 && so->cur >= so->nranges) || (d < 0 && so->cur < 0))
			return false;
		position_at(so, d > 0 ? 0 : so->nranges - 1, dir);
	}
	for (;;)
	{
		NbtpmRange *range = &so->ranges[so->cur];

		so->pos += d;
		if (so->pos >= 0 && so->pos < so->batch.n)
		{
			nbt_skey   *e = &so->batch.e[so->pos].sk;

			if (nbt_skey_cmp(e, &range->lo) >= 0 && nbt_skey_cmp(e, &range->hi) <= 0)
			{
#ifdef PM_ASSERT_CHECKING
				/* strictly ordered in one direction, so never repeated across SMOs */
				pm_assert(so->last_dir != d || nbt_skey_cmp(e, &so->last_returned) * d > 0);
				so->last_returned = *e;
				so->last_dir = d;
#endif
				*out = *e;
				return true;
			}
			/* before the range's start in this direction: skip; past its end: next range */
			if ((d > 0 && nbt_skey_cmp(e, &range->hi) <= 0) ||
				(d < 0 && nbt_skey_cmp(e, &range->lo) >= 0))
				continue;
		}
		else if (d > 0 && !nbt_skey_is_max(&so->batch.high) &&
				 nbt_skey_cmp(&so->batch.high, &range->hi) <= 0)
		{
			nbt_skey	from = so->batch.high;

			CHECK_FOR_INTERRUPTS();
			nbt_read_range(&so->h->tree.nbt, &from, false, &range->lo, &range->hi, &so->batch);
			so->pos = -1;
			continue;
		}
		else if (d < 0 && !nbt_skey_is_min(&so->batch.low) &&
				 nbt_skey_cmp(&so->batch.low, &range->lo) > 0)
		{
			nbt_skey	from = so->batch.low;

			CHECK_FOR_INTERRUPTS();
			nbt_read_range(&so->h->tree.nbt, &from, true, &range->lo, &range->hi, &so->batch);
			so->pos = so->batch.n;
			continue;
		}
		/* this range is done */
		if (so->cur + d < 0 || so->cur + d >= so->nranges)
		{
			so->cur += d;
			return false;
		}
		position_at(so, so->cur + d, dir);
	}
}

bool
nbtpm_gettuple(IndexScanDesc scan, ScanDirection dir)
{
	NbtpmScanOpaque so = (NbtpmScanOpaque) scan->opaque;
	nbt_skey	e;

	if (!step(so, dir, &e))
		return false;
	nbtpm_rest_tid(e.rest, &scan->xs_heaptid);
	scan->xs_recheck = false;
	if (scan->xs_want_itup)
	{
		Relation	index = scan->indexRelation;
		bool		isnull = (e.rest & NBTPM_REST_NULL) != 0;
		Datum		value = isnull ? (Datum) 0 : nbtpm_decode(so->coltype, e.key);
		MemoryContext old;

		old = MemoryContextSwitchTo(pmi_tuple_context(&so->tupctx, so));
		scan->xs_itup = index_form_tuple(RelationGetDescr(index), &value, &isnull);
		scan->xs_itupdesc = RelationGetDescr(index);
		MemoryContextSwitchTo(old);
	}
	return true;
}

int64
nbtpm_getbitmap(IndexScanDesc scan, TIDBitmap *tbm)
{
	NbtpmScanOpaque so = (NbtpmScanOpaque) scan->opaque;
	ItemPointerData tids[NBT_LEAF_CAP];
	int			n = 0;
	int64		total = 0;
	nbt_skey	e;

	while (step(so, ForwardScanDirection, &e))
	{
		nbtpm_rest_tid(e.rest, &tids[n++]);
		if (n == NBT_LEAF_CAP)
		{
			tbm_add_tuples(tbm, tids, n, false);
			total += n;
			n = 0;
		}
	}
	if (n > 0)
		tbm_add_tuples(tbm, tids, n, false);
	return total + n;
}

/*
 * Mark and restore (merge joins): a leaf batch is a private snapshot, so the
 * position is the batch, the index into it and the range.
 */
void
nbtpm_markpos(IndexScanDesc scan)
{
	NbtpmScanOpaque so = (NbtpmScanOpaque) scan->opaque;

	so->marked_positioned = so->positioned;
	so->marked_cur = so->cur;
	so->marked_pos = so->pos;
	if (!so->positioned)
		return;
	if (so->marked_batch == NULL)
		so->marked_batch = MemoryContextAlloc(GetMemoryChunkContext(so), sizeof(nbt_batch));
	*so->marked_batch = so->batch;
}

void
nbtpm_restrpos(IndexScanDesc scan)
{
	NbtpmScanOpaque so = (NbtpmScanOpaque) scan->opaque;

	so->positioned = so->marked_positioned;
	so->cur = so->marked_cur;
	so->pos = so->marked_pos;
	if (so->positioned)
		so->batch = *so->marked_batch;
#ifdef PM_ASSERT_CHECKING
	so->last_dir = 0;
#endif
}

void
nbtpm_endscan(IndexScanDesc scan)
{
	NbtpmScanOpaque so = (NbtpmScanOpaque) scan->opaque;

	if (so->tupctx)
		MemoryContextDelete(so->tupctx);
	if (so->ranges)
		pfree(so->ranges);
	if (so->marked_batch)
		pfree(so->marked_batch);
	pfree(so);
}
