/*
 * ord_preprocess.c
 *	  The scan keys of an ordered index scan made into what the scan driver
 *	  reads (ord_scan.c): disjoint ranges of (key, rest), one per span of
 *	  keys equal to an = ANY element, else one for the operator bounds, plus
 *	  the NULL range when NULLs qualify, in the order the index presents
 *	  (ASC or DESC, NULLS FIRST or LAST).  A multicolumn index's ranges lie
 *	  within the prefix its leading equalities make, narrowed by the keys on
 *	  the next column; its other keys become filters.  As btree's
 *	  nbtpreprocesskeys.c, it runs once per rescan.
 */
#include "ord_scan.h"

#include "access/stratnum.h"
#include "catalog/pg_type_d.h"
#include "utils/array.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

static int
cmp_range_lo(const void *a, const void *b, void *order)
{
	return pm_key_cmp_by(order, &((const OrdRange *) a)->lo, &((const OrdRange *) b)->lo);
}

/*
 * Where arg cuts the entries: of the column, or of a multicolumn index's
 * column bound_col after the prefix.
 */
static void
cut_of(IndexScanDesc scan, Oid argtype, Datum arg, OrdCut *cut)
{
	OrdScanOpaque so = (OrdScanOpaque) scan->opaque;
	StringInfoData single;

	if (so->col.nkeys == 1)
	{
		ord_cut(scan->indexRelation->rd_opfamily[0], &so->col, argtype, arg, cut);
		return;
	}
	initStringInfo(&single);
	ord_column_cut(&so->col, so->bound_col, &so->prefix, argtype, arg, cut, &single);
	pfree(single.data);
}

/*
 * A key's strategy in the order entries are stored: commuted on a DESC
 * column of a multicolumn index, whose bytes are inverted.
 */
static int
strategy_of(OrdScanOpaque so, ScanKey key)
{
	/* < and >, <= and >= swap: btree's numbering is symmetric around = */
	if (so->col.nkeys > 1 && so->col.keys[key->sk_attno - 1].descending)
		return BTMaxStrategyNumber + 1 - key->sk_strategy;
	return key->sk_strategy;
}

/* The entries a key's column can hold: its values (of the column, or after the prefix). */
static void
values_range(OrdScanOpaque so, OrdKey *lo, OrdKey *hi)
{
	if (so->col.nkeys == 1)
	{
		*lo = ORD_VALUES_LO;
		*hi = ORD_VALUES_HI;
	}
	else
		ord_column_values(&so->col, so->bound_col, &so->prefix, lo, hi);
}

static ArrayType *
array_elements(ScanKey key, Datum **elems, bool **nulls, int *nelems)
{
	ArrayType  *arr = DatumGetArrayTypeP(key->sk_argument);
	int16		typlen;
	bool		typbyval;
	char		typalign;

	get_typlenbyvalalign(ARR_ELEMTYPE(arr), &typlen, &typbyval, &typalign);
	deconstruct_array(arr, ARR_ELEMTYPE(arr), typlen, typbyval, typalign, elems, nulls, nelems);
	return arr;
}

/*
 * "column = ANY (array)": the entries equal to some non-NULL element, as
 * sorted, disjoint ranges (an element equals one key, none, or for a float
 * zero two: -0 and +0).
 */
static OrdRange *
array_equal_ranges(IndexScanDesc scan, ScanKey key, int *n)
{
	Datum	   *elems;
	bool	   *nulls;
	int			nelems;
	ArrayType  *arr = array_elements(key, &elems, &nulls, &nelems);
	OrdRange   *spans = palloc(sizeof(OrdRange) * Max(nelems, 1));
	const pm_key_order *order = ((OrdScanOpaque) scan->opaque)->col.order;
	int			m = 0;

	for (int i = 0; i < nelems; i++)
	{
		OrdCut		cut;

		if (nulls[i])
			continue;
		cut_of(scan, ARR_ELEMTYPE(arr), elems[i], &cut);
		values_range((OrdScanOpaque) scan->opaque, &spans[m].lo, &spans[m].hi);
		if (ord_narrow(order, &cut, BTEqualStrategyNumber, &spans[m].lo, &spans[m].hi))
			m++;
	}
	qsort_arg(spans, m, sizeof(OrdRange), cmp_range_lo, unconstify(pm_key_order *, order));
	*n = 0;
	for (int i = 0; i < m; i++)
	{
		if (*n > 0 && pm_key_cmp_by(order, &spans[i].lo, &spans[*n - 1].hi) <= 0)
			ord_key_raise(order, &spans[*n - 1].hi, &spans[i].hi);
		else
			spans[(*n)++] = spans[i];
	}
	return spans;
}

/*
 * "column < ANY (array)" is "column < the largest element", "column > ANY
 * (array)" is "column > the smallest": narrow [*lo, *hi] by the loosest
 * bound any non-NULL element gives.  False when none gives one.
 */
static bool
narrow_by_any(IndexScanDesc scan, ScanKey key, OrdKey *lo, OrdKey *hi)
{
	Datum	   *elems;
	bool	   *nulls;
	int			nelems;
	ArrayType  *arr = array_elements(key, &elems, &nulls, &nelems);
	int			strategy = strategy_of((OrdScanOpaque) scan->opaque, key);
	const pm_key_order *order = ((OrdScanOpaque) scan->opaque)->col.order;
	bool		upper = strategy < BTEqualStrategyNumber;
	bool		any = false;
	OrdKey		vlo,
				vhi;
	OrdKey		loosest;

	values_range((OrdScanOpaque) scan->opaque, &vlo, &vhi);
	loosest = upper ? vlo : vhi;
	for (int i = 0; i < nelems; i++)
	{
		OrdCut		cut;
		OrdKey		elo = vlo,
					ehi = vhi;

		if (nulls[i])
			continue;
		cut_of(scan, ARR_ELEMTYPE(arr), elems[i], &cut);
		if (!ord_narrow(order, &cut, strategy, &elo, &ehi))
			continue;
		any = true;
		if (upper)
			ord_key_raise(order, &loosest, &ehi);
		else
			ord_key_lower(order, &loosest, &elo);
	}
	if (!any)
		return false;
	if (upper)
		ord_key_lower(order, hi, &loosest);
	else
		ord_key_raise(order, lo, &loosest);
	return pm_key_cmp_by(order, lo, hi) <= 0;
}

/* Keep of set (sorted, disjoint ranges) only the entries that are in other (the same). */
static int
intersect(const pm_key_order *order, OrdRange *set, int n, const OrdRange *other, int m)
{
	int			out = 0;

	for (int i = 0, j = 0; i < n && j < m;)
	{
		OrdRange	both = set[i];
		bool		set_ends_first = pm_key_cmp_by(order, &set[i].hi, &other[j].hi) < 0;

		ord_key_raise(order, &both.lo, &other[j].lo);
		ord_key_lower(order, &both.hi, &other[j].hi);
		if (pm_key_cmp_by(order, &both.lo, &both.hi) <= 0)
			set[out++] = both;
		/* out <= i: the span just written is never one still to be read */
		if (set_ends_first)
			i++;
		else
			j++;
	}
	return out;
}

/*
 * A multicolumn index's scan keys: the prefix of segments the entries start
 * with, one per leading column that has an equality to a single segment
 * (or IS NULL); bound_col, the next column, whose keys the ranges narrow;
 * the other keys as filters.  *bound_keys: bound_col has keys.  False when
 * no entry can qualify (a strict operator against NULL).
 */
static bool
composite_plan(IndexScanDesc scan, bool *bound_keys)
{
	OrdScanOpaque so = (OrdScanOpaque) scan->opaque;
	bool	   *in_prefix = palloc0(sizeof(bool) * Max(scan->numberOfKeys, 1));
	StringInfoData single;
	int			c;

	initStringInfo(&single);
	resetStringInfo(&so->prefix);
	so->nfilters = 0;
	for (c = 0; c < so->col.nkeys; c++)
	{
		int			chosen = -1;

		for (int i = 0; i < scan->numberOfKeys && chosen < 0; i++)
		{
			ScanKey		key = &scan->keyData[i];

			if (key->sk_attno - 1 != c)
				continue;
			if (key->sk_flags & SK_ISNULL)
			{
				if (key->sk_flags & SK_SEARCHNULL)
				{
					ord_column_null(&so->col, c, &so->prefix);
					chosen = i;
				}
				else if (!(key->sk_flags & SK_SEARCHNOTNULL))
					return false;	/* a strict operator against NULL */
			}
			else if (!(key->sk_flags & SK_SEARCHARRAY) &&
					 key->sk_strategy == BTEqualStrategyNumber)
			{
				OrdCut		cut;

				ord_column_cut(&so->col, c, &so->prefix, key->sk_subtype, key->sk_argument, &cut,
							   &single);
				if (single.len > 0)
				{
					appendBinaryStringInfo(&so->prefix, single.data, single.len);
					chosen = i;
				}
			}
		}
		if (chosen < 0)
			break;
		in_prefix[chosen] = true;
	}
	so->bound_col = c;
	*bound_keys = false;
	so->filter_upto = 0;
	so->filters = palloc(sizeof(OrdFilter) * Max(scan->numberOfKeys, 1));
	for (int i = 0; i < scan->numberOfKeys; i++)
	{
		ScanKey		key = &scan->keyData[i];
		OrdFilter  *f;

		if (key->sk_attno - 1 == so->bound_col)
		{
			*bound_keys = true;
			continue;
		}
		if (in_prefix[i])
			continue;
		if ((key->sk_flags & SK_ISNULL) && !(key->sk_flags & (SK_SEARCHNULL | SK_SEARCHNOTNULL)))
			return false;
		f = &so->filters[so->nfilters++];
		f->key = key;
		f->nelems = 0;
		if (key->sk_flags & SK_SEARCHARRAY)
			(void) array_elements(key, &f->elems, &f->nulls, &f->nelems);
		so->filter_upto = Max(so->filter_upto, key->sk_attno);
	}
	pfree(in_prefix);
	pfree(single.data);
	return true;
}

/*
 * The scan keys as a list of disjoint ranges in the order the index presents
 * its entries.  Entries are stored in ascending (key, rest) order with NULLs
 * last; a DESC index reads its value ranges from the top (so->desc flips
 * every read), and NULLS FIRST puts the NULL range at the front.
 */
void
ord_compute_ranges(IndexScanDesc scan)
{
	OrdScanOpaque so = (OrdScanOpaque) scan->opaque;
	OrdKey		lo = ORD_VALUES_LO,
				hi = ORD_VALUES_HI;
	bool		want_values = true;
	bool		want_nulls = true;
	bool		possible = true;
	OrdRange   *set = NULL;
	int			nset = 0;
	int			nvalues = 0;
	int			first_value;

	if (so->col.nkeys > 1)
	{
		bool		bound_keys;

		possible = composite_plan(scan, &bound_keys);
		if (possible && bound_keys)
			values_range(so, &lo, &hi);
		else if (possible)
			ord_prefix_range(&so->prefix, &lo, &hi);
	}
	for (int i = 0; i < scan->numberOfKeys && possible; i++)
	{
		ScanKey		key = &scan->keyData[i];

		if (so->col.nkeys > 1 && key->sk_attno - 1 != so->bound_col)
			continue;
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
		if ((key->sk_flags & SK_SEARCHARRAY) && key->sk_strategy == BTEqualStrategyNumber)
		{
			int			m;
			OrdRange   *spans = array_equal_ranges(scan, key, &m);

			if (set == NULL)
			{
				set = spans;
				nset = m;
			}
			else
			{
				nset = intersect(so->col.order, set, nset, spans, m);
				pfree(spans);
			}
			possible = nset > 0;
		}
		else if (key->sk_flags & SK_SEARCHARRAY)
			possible = narrow_by_any(scan, key, &lo, &hi);
		else
		{
			OrdCut		cut;

			cut_of(scan, key->sk_subtype, key->sk_argument, &cut);
			possible = ord_narrow(so->col.order, &cut, strategy_of(so, key), &lo, &hi);
		}
	}
	/* a multicolumn index's NULLs are in its ranges */
	if (so->col.nkeys > 1)
		want_nulls = false;

	if (so->ranges)
		pfree(so->ranges);
	so->ranges = palloc(sizeof(OrdRange) * (Max(nset, 1) + 1));
	so->nranges = 0;
	if (!possible)
		return;
	/* the NULL range first or last, the value ranges in key order between */
	first_value = (want_nulls && so->nulls_first) ? 1 : 0;
	if (want_values && set != NULL)
	{
		for (int i = 0; i < nset; i++)
		{
			OrdRange   *r = &so->ranges[first_value + nvalues];

			*r = set[i];
			ord_key_raise(so->col.order, &r->lo, &lo);
			ord_key_lower(so->col.order, &r->hi, &hi);
			if (pm_key_cmp_by(so->col.order, &r->lo, &r->hi) <= 0)
				nvalues++;
		}
	}
	else if (want_values)
	{
		so->ranges[first_value].lo = lo;
		so->ranges[first_value].hi = hi;
		nvalues = 1;
	}
	if (set)
		pfree(set);
	if (so->desc)
	{
		for (int i = 0, j = nvalues - 1; i < j; i++, j--)
		{
			OrdRange	tmp = so->ranges[first_value + i];

			so->ranges[first_value + i] = so->ranges[first_value + j];
			so->ranges[first_value + j] = tmp;
		}
	}
	so->nranges = nvalues;
	if (want_nulls)
	{
		OrdRange   *nulls = &so->ranges[so->nulls_first ? 0 : nvalues];

		nulls->lo = ord_key_make(ORD_NULL_KEY, ORD_REST_NULL);
		nulls->hi = ord_key_make(ORD_NULL_KEY, ORD_REST_MAX);
		so->nranges++;
	}
}
