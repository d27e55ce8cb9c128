/*
 * ord_bounds.c
 *	  Where a scan argument cuts an index's keys, and the ranges it narrows.
 */
#include "ord_key.h"

#include "utils/date.h"
#include "utils/lsyscache.h"

/*
 * The keys a column of the type can hold, as inclusive runs in key order:
 * the type's finite range and, for the datetime types, its infinities.  A
 * search for a bound probes only these: the cross-type comparison functions
 * are monotone over valid values, not over arbitrary bit patterns (a "date"
 * before 4713 BC overflows when converted to a timestamp).
 */
typedef struct KeyRun
{
	uint64		first;
	uint64		last;
} KeyRun;

/* the key of an integer-encoded value (ord_scalar.c) */
#define INT_KEY(v)	((uint64) (int64) (v) ^ SIGN_FLIP)

static const KeyRun int2_runs[] = {{INT_KEY(PG_INT16_MIN), INT_KEY(PG_INT16_MAX)}};
static const KeyRun int4_runs[] = {{INT_KEY(PG_INT32_MIN), INT_KEY(PG_INT32_MAX)}};
static const KeyRun oid_runs[] = {{INT_KEY(0), INT_KEY(PG_UINT32_MAX)}};
static const KeyRun time_runs[] = {{INT_KEY(0), INT_KEY(USECS_PER_DAY)}};
static const KeyRun date_runs[] = {
	{INT_KEY(DATEVAL_NOBEGIN), INT_KEY(DATEVAL_NOBEGIN)},
	{INT_KEY(DATETIME_MIN_JULIAN - POSTGRES_EPOCH_JDATE), INT_KEY(DATE_END_JULIAN - POSTGRES_EPOCH_JDATE - 1)},
	{INT_KEY(DATEVAL_NOEND), INT_KEY(DATEVAL_NOEND)},
};
static const KeyRun timestamp_runs[] = {
	{INT_KEY(DT_NOBEGIN), INT_KEY(DT_NOBEGIN)},
	{INT_KEY(MIN_TIMESTAMP), INT_KEY(END_TIMESTAMP - 1)},
	{INT_KEY(DT_NOEND), INT_KEY(DT_NOEND)},
};
static const KeyRun bool_runs[] = {{0, 1}};
static const KeyRun any_runs[] = {{0, UINT64_MAX}};

/* The runs of the type's keys; returns how many. */
static int
key_runs(Oid typid, const KeyRun **runs)
{
	switch (typid)
	{
		case INT2OID:
			*runs = int2_runs;
			return lengthof(int2_runs);
		case INT4OID:
			*runs = int4_runs;
			return lengthof(int4_runs);
		case OIDOID:
			*runs = oid_runs;
			return lengthof(oid_runs);
		case TIMEOID:
			*runs = time_runs;
			return lengthof(time_runs);
		case DATEOID:
			*runs = date_runs;
			return lengthof(date_runs);
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
			*runs = timestamp_runs;
			return lengthof(timestamp_runs);
		case BOOLOID:
			*runs = bool_runs;
			return lengthof(bool_runs);
		default:
			*runs = any_runs;
			return lengthof(any_runs);
	}
}

/*
 * The first key of the column's type whose value compares above limit with
 * arg (cmp(value, arg) > limit), or the key just above the type's last key
 * when none does; false when that would be beyond UINT64_MAX.  The family's
 * comparison orders both types consistently, so within the valid keys the
 * answer is a single cut point: skip whole runs, then bisect one.
 */
static bool
first_key_above(FmgrInfo *cmp, Oid coltype, Datum arg, int limit, uint64 *key)
{
	const KeyRun *runs;
	int			nruns = key_runs(coltype, &runs);

	for (int r = 0; r < nruns; r++)
	{
		uint64		lo = runs[r].first,
					hi = runs[r].last;

		if (DatumGetInt32(FunctionCall2(cmp, ord_decode(coltype, hi), arg)) <= limit)
			continue;
		/* the answer is in [lo, hi]: hi qualifies */
		while (lo < hi)
		{
			uint64		mid = lo + (hi - lo) / 2;

			if (DatumGetInt32(FunctionCall2(cmp, ord_decode(coltype, mid), arg)) > limit)
				hi = mid;
			else
				lo = mid + 1;
		}
		*key = lo;
		return true;
	}
	*key = runs[nruns - 1].last + 1;
	return runs[nruns - 1].last != UINT64_MAX;
}

/* Do values of both types encode into one key space (no search needed)? */
static bool
same_key_space(Oid coltype, Oid argtype)
{
	if (!OidIsValid(argtype) || argtype == coltype)
		return true;
	if (ord_class_of(coltype) == KEY_FLOAT && ord_class_of(argtype) == KEY_FLOAT)
		return true;
	return (coltype == INT2OID || coltype == INT4OID || coltype == INT8OID) &&
		(argtype == INT2OID || argtype == INT4OID || argtype == INT8OID);
}

/*
 * Where arg falls among the column's keys: values of keys below ge are < arg,
 * values of keys below gt are <= arg (has_ge, has_gt false: of all keys).
 * The keys from ge up to gt are the values equal to arg: one key, none (a
 * timestamp that is no date), or two for a float zero (-0 and +0 are equal
 * and keep keys of their own, so that an index-only scan returns the stored
 * sign).
 */
void
ord_cut(Oid opfamily, const OrdColumn *col, Oid argtype, Datum arg, OrdCut *cut)
{
	Oid			coltype = col->type;
	Oid			cmpproc;
	FmgrInfo	cmp;
	uint64		ge = 0;
	uint64		gt = 0;

	if (!OidIsValid(argtype))
		argtype = coltype;
	if (ord_class_of(coltype) == KEY_BYTES)
	{
		/* text and name are the one cross-type pair, in one byte space */
		Assert(argtype == col->type || (ord_class_of(argtype) == KEY_BYTES &&
										(col->type == TEXTOID || col->type == NAMEOID)));
		cut->has_ge = cut->has_gt = true;
		cut->ge = ord_bytes_key(col, argtype, arg, 0, false);
		cut->gt = ord_bytes_key(col, argtype, arg, UINT64_MAX, false);
		return;
	}
	if (same_key_space(coltype, argtype))
	{
		uint64		k = ord_encode(argtype, arg);

		cut->has_ge = true;
		ge = k;
		if (ord_class_of(argtype) == KEY_FLOAT && ord_float_value(argtype, arg) == 0)
		{
			ge = ord_encode_double(-0.0);
			k = ord_encode_double(0.0);
		}
		cut->has_gt = k != UINT64_MAX;
		gt = k + 1;
	}
	else
	{
		cmpproc = get_opfamily_proc(opfamily, coltype, argtype, 1); /* btree's ORDER proc */
		if (!OidIsValid(cmpproc))
			elog(ERROR, "pm_index: no comparison function for types %u and %u", coltype, argtype);
		fmgr_info(cmpproc, &cmp);
		cut->has_ge = first_key_above(&cmp, coltype, arg, -1, &ge);
		cut->has_gt = first_key_above(&cmp, coltype, arg, 0, &gt);
	}
	cut->ge = ord_key_make(ge, 0);
	cut->gt = ord_key_make(gt, 0);
}

/* lo becomes k if k is above it. */
void
ord_key_raise(const pm_key_order *order, OrdKey *lo, const OrdKey *k)
{
	if (pm_key_cmp_by(order, k, lo) > 0)
		*lo = *k;
}

/* hi becomes k if k is below it. */
void
ord_key_lower(const pm_key_order *order, OrdKey *hi, const OrdKey *k)
{
	if (pm_key_cmp_by(order, k, hi) < 0)
		*hi = *k;
}

/*
 * Lower hi to just below the cut point k; false when no entry is below k.
 * Below the NULL key, a value's rest is below the NULL flag, which keeps a
 * range's end clear of the NULLs; below any other key, all of its entries
 * count (wide ones too).
 */
static bool
lower_below(const pm_key_order *order, OrdKey *hi, const OrdKey *k)
{
	OrdKey		last;

	if (pm_key_is_min(k))
		return false;
	last = pm_key_pred(k);
	if (last.key == ORD_NULL_KEY && !pm_rest_is_wide(last.rest) && last.rest > ORD_REST_NONNULL_MAX)
		last.rest = ORD_REST_NONNULL_MAX;
	ord_key_lower(order, hi, &last);
	return true;
}

/*
 * Narrow the inclusive range of entries [*lo, *hi] by "column <strategy>
 * arg", where cut places arg.  Returns false when no entry can satisfy both.
 */
bool
ord_narrow(const pm_key_order *order, const OrdCut *cut, int strategy, OrdKey *lo, OrdKey *hi)
{
	switch (strategy)
	{
		case BTLessStrategyNumber:
			if (cut->has_ge && !lower_below(order, hi, &cut->ge))
				return false;
			break;
		case BTLessEqualStrategyNumber:
			if (cut->has_gt && !lower_below(order, hi, &cut->gt))
				return false;
			break;
		case BTEqualStrategyNumber:
			if (!cut->has_ge || (cut->has_gt && pm_key_cmp_by(order, &cut->gt, &cut->ge) == 0))
				return false;
			ord_key_raise(order, lo, &cut->ge);
			if (cut->has_gt && !lower_below(order, hi, &cut->gt))
				return false;
			break;
		case BTGreaterEqualStrategyNumber:
			if (!cut->has_ge)
				return false;
			ord_key_raise(order, lo, &cut->ge);
			break;
		case BTGreaterStrategyNumber:
			if (!cut->has_gt)
				return false;
			ord_key_raise(order, lo, &cut->gt);
			break;
		default:
			elog(ERROR, "pm_index: unexpected btree strategy %d", strategy);
	}
	return pm_key_cmp_by(order, lo, hi) <= 0;
}
