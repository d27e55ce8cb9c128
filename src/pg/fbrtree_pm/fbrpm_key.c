/*
 * fbrpm_key.c
 *	  Keys of fbrtree_pm: how a column value becomes an entry (a box and a
 *	  payload), how an entry becomes a value again (index-only scans), and
 *	  how scan keys and ORDER BY operators decide for a node's box and a
 *	  leaf entry.  Strategy numbers are GiST's, so the operator classes read
 *	  like GiST's box_ops, point_ops and PostGIS's gist_geometry_ops_2d.
 *
 * Four kinds of operator class:
 *
 * - box and point (built in): values are stored exactly.  A leaf entry is
 *   decided by the operator's own function on the rebuilt value, so results
 *   are exactly the operator's, fuzzy comparisons (geo_decls.h EPSILON)
 *   included; a node by the R-tree rule for the strategy ("could a box
 *   inside this one satisfy the operator?"), written with the same fuzzy
 *   box functions.  KNN distances are the operator's: no recheck.  A point
 *   <@ polygon or circle key tests nodes against the argument's bounding
 *   box and leaf entries with the operator.
 *
 * - circle and polygon (built in, "shapes"): an entry is the value's
 *   bounding box.  Nodes and leaf entries alike pass the R-tree rule on
 *   that box, as GiST's circle_ops and poly_ops decide, and the executor
 *   rechecks every leaf entry with the operator; KNN returns box distances
 *   as lower bounds, rechecked.
 *
 * - bounded (any other type, such as PostGIS geometry): support function 1
 *   gives a value's bounding box (NULL for an empty value).  The operators
 *   compare boxes rounded outward to float4 (PostGIS's box2df), so nodes and
 *   entries are tested on their boxes rounded the same way: a leaf entry
 *   with the operator's own comparisons (the answer is GiST's, no recheck),
 *   a node with the R-tree rule.  KNN returns box distances as lower bounds
 *   and asks the executor to recheck them.  Empty values have no box: they live in the side
 *   tree, where a scan finds them if its keys might accept an empty value.
 *   With support functions 2 (x, y -> point) and 3 (value, srid -> value)
 *   and a column declared to hold points of one SRID (the type modifier),
 *   points are rebuilt exactly, with that SRID, for index-only scans and
 *   exact distances.  No value is made without its SRID: an entry keeps
 *   none, so a column that declares none has no index-only scans, and an
 *   EMPTY made to stand for its EMPTY entries takes the SRID of the scan's
 *   argument.
 */
#include "fbrpm.h"

#include <float.h>
#include <math.h>

#include "access/gist.h"
#include "access/stratnum.h"
#include "catalog/pg_type.h"
#include "parser/parse_func.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/fmgrprotos.h"
#include "utils/geo_decls.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"


/* PostGIS's type modifier: SRID in bits 8..28 (signed), geometry type in bits 2..7, Z, M */
#define GEOM_TYPMOD_SRID(t)		((((t) & 0x0FFFFF00) - ((t) & 0x10000000)) >> 8)
#define GEOM_TYPMOD_TYPE(t)		(((t) & 0x000000FC) >> 2)
#define GEOM_TYPMOD_ZM(t)		((t) & 0x00000003)
#define GEOM_POINTTYPE			1

void
fbrpm_opclass(Relation index, FbrpmOpclass *oc)
{
	Form_pg_attribute att = TupleDescAttr(RelationGetDescr(index), 0);

	memset(oc, 0, sizeof(*oc));
	oc->index = index;

	/*
	 * the operator class's input type: the column's, or for a domain the type
	 * it is over
	 */
	oc->type = index->rd_opcintype[0];
	oc->dims = 2;
	if (oc->type == BOXOID)
		oc->kind = FBRPM_BOX;
	else if (oc->type == POINTOID)
		oc->kind = FBRPM_POINT;
	else if (oc->type == CIRCLEOID || oc->type == POLYGONOID)
		oc->kind = FBRPM_SHAPE;
	else if (OidIsValid(index_getprocid(index, 1, FBRPM_PROC_GIDX)))
	{
		/* geography's boxes are geocentric X Y Z; geometry's X Y Z M */
		oc->kind = FBRPM_GIDX;
		oc->gidx = index_getprocinfo(index, 1, FBRPM_PROC_GIDX);
		oc->geography = fbrpm_type_is_geography(oc->type);
		oc->dims = oc->geography ? 3 : 4;
	}
	else
	{
		oc->kind = FBRPM_BOUNDED;
		if (!OidIsValid(index_getprocid(index, 1, FBRPM_PROC_BOX)))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
					 errmsg("operator class of fbrtree_pm index \"%s\" has no bounding box function",
							RelationGetRelationName(index)),
					 errhint("An fbrtree_pm operator class for type %s needs support function %d (value -> box).",
							 format_type_be(oc->type), FBRPM_PROC_BOX)));
		oc->bbox = index_getprocinfo(index, 1, FBRPM_PROC_BOX);
		if (OidIsValid(index_getprocid(index, 1, FBRPM_PROC_SRID)))
			oc->set_srid = index_getprocinfo(index, 1, FBRPM_PROC_SRID);
		/* a declared SRID of 0 admits values of any SRID */
		if (att->atttypmod >= 0)
			oc->srid = GEOM_TYPMOD_SRID(att->atttypmod);
		if (oc->srid != 0 && oc->set_srid != NULL &&
			GEOM_TYPMOD_TYPE(att->atttypmod) == GEOM_POINTTYPE &&
			GEOM_TYPMOD_ZM(att->atttypmod) == 0 &&
			OidIsValid(index_getprocid(index, 1, FBRPM_PROC_POINT)))
		{
			oc->points = true;
			oc->make_point = index_getprocinfo(index, 1, FBRPM_PROC_POINT);
		}
	}
}

/*
 * Is the type PostGIS's geography?  Its boxes are geocentric, 3-D whatever
 * the values' dimensions, and PostGIS indexes fewer predicates on it.
 */
bool
fbrpm_type_is_geography(Oid type)
{
	HeapTuple	tup = SearchSysCache1(TYPEOID, ObjectIdGetDatum(type));
	bool		result;

	if (!HeapTupleIsValid(tup))
		return false;
	result = strcmp(NameStr(((Form_pg_type) GETSTRUCT(tup))->typname), "geography") == 0;
	ReleaseSysCache(tup);
	return result;
}

bool
fbrpm_can_return(const FbrpmOpclass *oc)
{
	return oc->kind == FBRPM_BOX || oc->kind == FBRPM_POINT || oc->points;
}

/* Does a leaf entry's answer stand without the executor's recheck? */
bool
fbrpm_exact_entries(const FbrpmOpclass *oc)
{
	return oc->kind != FBRPM_SHAPE && oc->kind != FBRPM_GIDX;
}

static void
from_pg_box(const BOX *b, fbr_box *box)
{
	box->min[0] = b->low.x;		/* normalized: high >= low */
	box->min[1] = b->low.y;
	box->max[0] = b->high.x;
	box->max[1] = b->high.y;
}

static void
to_pg_box(const fbr_box *box, BOX *b)
{
	b->low.x = box->min[0];
	b->low.y = box->min[1];
	b->high.x = box->max[0];
	b->high.y = box->max[1];
}

/*
 * GIDX: the box PostGIS's GiST keeps for a value, from its own compress
 * function, so that the boxes are GiST's to the bit (float4, rounded
 * outward; geography's geocentric).  Dimensions the value lacks (Z, M of a
 * 2-D geometry) span -FLT_MAX..FLT_MAX, as PostGIS pads a missing Z: every
 * box operator passes over them.  False for a value with no box (EMPTY, or
 * a non-finite coordinate: GiST's "unknown" key).
 */
static bool
gidx_box(const FbrpmOpclass *oc, Datum value, fbr_box *box)
{
	GISTENTRY	in;
	GISTENTRY  *out;
	const float *c;
	int			ndims;

	gistentryinit(in, value, NULL, NULL, 0, true);
	out = (GISTENTRY *) DatumGetPointer(FunctionCall1(oc->gidx, PointerGetDatum(&in)));
	ndims = (VARSIZE(DatumGetPointer(out->key)) - VARHDRSZ) / (2 * sizeof(float));
	if (ndims == 0)
		return false;
	c = (const float *) VARDATA(DatumGetPointer(out->key));
	for (int d = 0; d < oc->dims; d++)
	{
		box->min[d] = d < ndims ? c[2 * d] : -FLT_MAX;
		box->max[d] = d < ndims ? c[2 * d + 1] : FLT_MAX;
	}
	return true;
}

/* The box of a value of the opclass's type or of a query argument of type argtype. */
static bool
datum_box(const FbrpmOpclass *oc, Oid argtype, Datum value, fbr_box *box)
{
	memset(box, 0, sizeof(*box));
	if (oc->kind == FBRPM_GIDX)
		return gidx_box(oc, value, box);
	if (argtype == POINTOID)
	{
		Point	   *p = DatumGetPointP(value);

		box->min[0] = box->max[0] = p->x;
		box->min[1] = box->max[1] = p->y;
		return true;
	}
	if (argtype == BOXOID)
	{
		from_pg_box(DatumGetBoxP(value), box);
		return true;
	}
	if (argtype == POLYGONOID)
	{
		from_pg_box(&DatumGetPolygonP(value)->boundbox, box);
		return true;
	}
	if (argtype == CIRCLEOID)
	{
		CIRCLE	   *c = DatumGetCircleP(value);

		/* as GiST's circle_ops: the centre plus and minus the radius */
		box->min[0] = float8_mi(c->center.x, c->radius);
		box->max[0] = float8_pl(c->center.x, c->radius);
		box->min[1] = float8_mi(c->center.y, c->radius);
		box->max[1] = float8_pl(c->center.y, c->radius);
		return true;
	}
	else
	{
		LOCAL_FCINFO(fcinfo, 1);
		Datum		result;

		/* the bounding box function returns NULL for an empty value */
		InitFunctionCallInfoData(*fcinfo, oc->bbox, 1, InvalidOid, NULL, NULL);
		fcinfo->args[0].value = value;
		fcinfo->args[0].isnull = false;
		result = FunctionCallInvoke(fcinfo);
		if (fcinfo->isnull)
			return false;
		from_pg_box(DatumGetBoxP(result), box);
		return true;
	}
}

/*
 * The entry for a heap tuple's value: its box in the spatial tree, or, for
 * a NULL or an empty value, its TID as a point in the side tree.  ERROR for
 * coordinates no R-tree can order.  Returns whether it goes to the side tree.
 */
bool
fbrpm_entry(const FbrpmOpclass *oc, Datum value, bool isnull, ItemPointer tid, fbr_item *item)
{
	uint64		flags = isnull ? FBRPM_PAYLOAD_NULL : 0;

	if (!isnull && !datum_box(oc, oc->type, value, &item->box))
		flags = FBRPM_PAYLOAD_EMPTY;
	item->payload = pmi_tid_pack(tid) | flags;
	if (flags != 0)
	{
		fbrpm_side_box(tid, &item->box);
		return true;
	}
	for (int d = 0; d < oc->dims; d++)
		if (!isfinite(item->box.min[d]) || !isfinite(item->box.max[d]))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("fbrtree_pm index \"%s\" cannot hold a value with an infinite or NaN coordinate",
							RelationGetRelationName(oc->index)),
					 errhint("Use a GiST index if such values must be indexed, or exclude them with a partial index.")));
	return false;
}

/* An empty value of the SRID srid. */
static Datum
empty_value(const FbrpmOpclass *oc, int32 srid)
{
	Oid			typinput;
	Oid			typioparam;

	getTypeInputInfo(oc->type, &typinput, &typioparam);
	return OidInputFunctionCall(typinput, psprintf("SRID=%d;POINT EMPTY", srid), typioparam, -1);
}

/*
 * The SRID of a value of the column's type: PostGIS's ST_SRID, from the
 * schema of support function 3 (its ST_SetSRID), looked up once per oc.
 */
static int32
value_srid(FbrpmOpclass *oc, Datum value)
{
	if (!OidIsValid(oc->st_srid))
	{
		Oid			argtypes[1] = {oc->type};
		char	   *schema = get_namespace_name(get_func_namespace(oc->set_srid->fn_oid));

		oc->st_srid = LookupFuncName(list_make2(makeString(schema), makeString("st_srid")), 1,
									 argtypes, false);
	}
	return DatumGetInt32(OidFunctionCall1(oc->st_srid, value));
}

/*
 * The empty value the side tree's EMPTY entries stand for beside like, a
 * scan's argument: of the column's declared SRID, or where the column
 * declares none, of like's.  The entries keep no SRID; an EMPTY row of
 * another SRID than like's is one PostGIS's distances refuse, in the
 * executor's recheck as in a sequential scan, and one the box operators
 * answer for as for like's (they compare no SRIDs).
 */
Datum
fbrpm_empty_value(FbrpmOpclass *oc, Datum like)
{
	return empty_value(oc, oc->srid != 0 || oc->set_srid == NULL ? oc->srid : value_srid(oc, like));
}

/* The column value an entry was made from (fbrpm_can_return says whether it can be). */
Datum
fbrpm_entry_value(const FbrpmOpclass *oc, const fbr_item *item)
{
	const fbr_box *box = &item->box;

	switch (oc->kind)
	{
		case FBRPM_POINT:
			{
				Point	   *p = palloc(sizeof(Point));

				p->x = box->min[0];
				p->y = box->min[1];
				return PointPGetDatum(p);
			}
		case FBRPM_BOX:
			{
				BOX		   *b = palloc(sizeof(BOX));

				to_pg_box(box, b);
				return BoxPGetDatum(b);
			}
		case FBRPM_SHAPE:
		case FBRPM_GIDX:
			elog(ERROR, "a bounding box does not give back the value it bounds");
			break;
		case FBRPM_BOUNDED:
			break;
	}
	/* points: the column declares their SRID */
	if (item->payload & FBRPM_PAYLOAD_EMPTY)
		return empty_value(oc, oc->srid);
	return FunctionCall2(oc->set_srid,
						 FunctionCall2(oc->make_point, Float8GetDatum(box->min[0]),
									   Float8GetDatum(box->min[1])),
						 Int32GetDatum(oc->srid));
}

/*
 * The box strategy whose node rule serves a point strategy: the query point
 * is a degenerate box, and "point left of q" needs what "box left of q"
 * needs of the node.
 */
static StrategyNumber
point_strategy_as_box(StrategyNumber s)
{
	switch (s)
	{
		case RTLeftStrategyNumber:
		case RTRightStrategyNumber:
		case RTBelowStrategyNumber:
		case RTAboveStrategyNumber:
			return s;
		case RTSameStrategyNumber:
		case FBRPM_POINT_IN_BOX_STRATEGY:
		case FBRPM_POINT_IN_POLYGON_STRATEGY:
		case FBRPM_POINT_IN_CIRCLE_STRATEGY:
			return RTOverlapStrategyNumber;
		case RTOldBelowStrategyNumber:
			return RTBelowStrategyNumber;
		case RTOldAboveStrategyNumber:
			return RTAboveStrategyNumber;
		default:
			return InvalidStrategy;
	}
}

/* Largest float4 <= d, and smallest >= d, clamped to the float4 range (PostGIS's box2df). */
static double
float_down(double d)
{
	float		f;

	if (d >= FLT_MAX)
		return FLT_MAX;
	if (d <= -FLT_MAX)
		return -FLT_MAX;
	f = (float) d;
	return (double) f <= d ? f : nextafterf(f, -FLT_MAX);
}

static double
float_up(double d)
{
	float		f;

	if (d >= FLT_MAX)
		return FLT_MAX;
	if (d <= -FLT_MAX)
		return -FLT_MAX;
	f = (float) d;
	return (double) f >= d ? f : nextafterf(f, FLT_MAX);
}

static void
round_outward(const fbr_box *in, fbr_box *out)
{
	out->min[0] = float_down(in->min[0]);
	out->min[1] = float_down(in->min[1]);
	out->max[0] = float_up(in->max[0]);
	out->max[1] = float_up(in->max[1]);
}

/* The float4 next to each coordinate of a float4 box, towards direction. */
static void
float_neighbours(const fbr_box *in, fbr_box *out, float direction)
{
	out->min[0] = nextafterf((float) in->min[0], direction);
	out->min[1] = nextafterf((float) in->min[1], direction);
	out->max[0] = nextafterf((float) in->max[0], direction);
	out->max[1] = nextafterf((float) in->max[1], direction);
}

/*
 * Prepare a search key; false if the strategy is not one this opclass
 * knows (the operator class is then broken: validate refuses it).
 */
bool
fbrpm_prepare_key(const FbrpmOpclass *oc, ScanKey sk, FbrpmKey *key)
{
	StrategyNumber s = sk->sk_strategy;

	key->op = &sk->sk_func;
	key->arg = sk->sk_argument;
	key->empty_query = false;
	switch (oc->kind)
	{
		case FBRPM_POINT:
			s = point_strategy_as_box(s);
			break;
		case FBRPM_BOX:
		case FBRPM_SHAPE:
		case FBRPM_BOUNDED:
			if (s < RTLeftStrategyNumber || s > RTOverAboveStrategyNumber)
				s = InvalidStrategy;
			break;
		case FBRPM_GIDX:
			if (s != RTOverlapStrategyNumber && s != RTSameStrategyNumber &&
				s != RTContainsStrategyNumber && s != RTContainedByStrategyNumber)
				s = InvalidStrategy;
			break;
	}
	if (s == InvalidStrategy)
		return false;
	key->strategy = s;
	key->unbounded = false;
	if (oc->kind == FBRPM_GIDX)
	{
		/* an argument with no box: every entry goes to the recheck */
		key->unbounded = !datum_box(oc, oc->type, sk->sk_argument, &key->query);
	}
	else if (oc->kind == FBRPM_BOUNDED)
	{
		fbr_box		q;

		key->empty_query = !datum_box(oc, oc->type, sk->sk_argument, &q);
		if (!key->empty_query)
		{
			round_outward(&q, &key->query);
			float_neighbours(&key->query, &key->query_pred, -INFINITY);
			float_neighbours(&key->query, &key->query_succ, INFINITY);
		}
	}
	else
		datum_box(oc, OidIsValid(sk->sk_subtype) ? sk->sk_subtype : oc->type, sk->sk_argument,
				  &key->query);
	return true;
}

static inline bool
box_fn(PGFunction fn, const BOX *a, const BOX *b)
{
	return DatumGetBool(DirectFunctionCall2(fn, BoxPGetDatum(a), BoxPGetDatum(b)));
}

/* box and point: could an entry whose box lies inside n satisfy the key (fuzzily)? */
static bool
node_may_match_fuzzy(const FbrpmKey *key, const BOX *n)
{
	BOX			q;

	to_pg_box(&key->query, &q);
	switch (key->strategy)
	{
		case RTLeftStrategyNumber:
			return !box_fn(box_overright, n, &q);
		case RTOverLeftStrategyNumber:
			return !box_fn(box_right, n, &q);
		case RTOverlapStrategyNumber:
		case RTContainedByStrategyNumber:
			return box_fn(box_overlap, n, &q);
		case RTOverRightStrategyNumber:
			return !box_fn(box_left, n, &q);
		case RTRightStrategyNumber:
			return !box_fn(box_overleft, n, &q);
		case RTSameStrategyNumber:
		case RTContainsStrategyNumber:
			return box_fn(box_contain, n, &q);
		case RTOverBelowStrategyNumber:
			return !box_fn(box_above, n, &q);
		case RTBelowStrategyNumber:
			return !box_fn(box_overabove, n, &q);
		case RTAboveStrategyNumber:
			return !box_fn(box_overbelow, n, &q);
		case RTOverAboveStrategyNumber:
			return !box_fn(box_below, n, &q);
	}
	return true;
}

/* bounded: D(x0) <= q.max[0], U(x1) >= q.min[0], the same for y (see below) */
static inline bool
overlaps_query(const FbrpmKey *key, double x0, double y0, double x1, double y1)
{
	return x0 < key->query_succ.max[0] && x1 > key->query_pred.min[0] &&
		y0 < key->query_succ.max[1] && y1 > key->query_pred.min[1];
}

/*
 * bounded: does a leaf entry's box satisfy the key, or could a box inside a
 * node's?  Both rounded outward to float4 as PostGIS's operators and GiST
 * round them; a leaf entry is decided with the comparisons of PostGIS's
 * box2df functions, so the answer is GiST's and needs no recheck.
 *
 * The entry is not rounded: each comparison of a rounded coordinate with a
 * query coordinate F (a float4) is the comparison of the raw coordinate x,
 * clamped to float4's range as the rounding clamps it, with F or with the
 * float4 next to F (pred/succ, computed once per scan).  With D rounding
 * down (minima) and U rounding up (maxima):
 *
 *	 D(x) <= F  iff  x < succ(F)		D(x) < F  iff  x < F
 *	 D(x) >= F  iff  x >= F				D(x) > F  iff  x >= succ(F)
 *	 U(x) >= F  iff  x > pred(F)		U(x) > F  iff  x > F
 *	 U(x) <= F  iff  x <= F				U(x) < F  iff  x <= pred(F)
 *
 * (D(x) is the largest float4 <= x: it is > F exactly when some float4
 * above F is <= x, i.e. succ(F) <= x; the others follow the same way.)
 */
static bool
bounded_matches(const FbrpmKey *key, const fbr_box *box, bool is_leaf)
{
	const fbr_box *q = &key->query;
	const fbr_box *pred = &key->query_pred;
	const fbr_box *succ = &key->query_succ;
	double		x0 = Min(Max(box->min[0], -FLT_MAX), FLT_MAX);
	double		y0 = Min(Max(box->min[1], -FLT_MAX), FLT_MAX);
	double		x1 = Min(Max(box->max[0], -FLT_MAX), FLT_MAX);
	double		y1 = Min(Max(box->max[1], -FLT_MAX), FLT_MAX);

	switch (key->strategy)
	{
		case RTLeftStrategyNumber:
			/* leaf U(x1) < q.min[0]; node D(x0) < q.min[0] */
			return is_leaf ? x1 <= pred->min[0] : x0 < q->min[0];
		case RTOverLeftStrategyNumber:
			/* leaf U(x1) <= q.max[0]; node D(x0) <= q.max[0] */
			return is_leaf ? x1 <= q->max[0] : x0 < succ->max[0];
		case RTOverlapStrategyNumber:
			return overlaps_query(key, x0, y0, x1, y1);
		case RTOverRightStrategyNumber:
			/* leaf D(x0) >= q.min[0]; node U(x1) >= q.min[0] */
			return is_leaf ? x0 >= q->min[0] : x1 > pred->min[0];
		case RTRightStrategyNumber:
			/* leaf D(x0) > q.max[0]; node U(x1) > q.max[0] */
			return is_leaf ? x0 >= succ->max[0] : x1 > q->max[0];
		case RTSameStrategyNumber:
			/* leaf: each rounded coordinate equals the query's; node: as ~ */
			if (is_leaf)
				return q->min[0] <= x0 && x0 < succ->min[0] && pred->max[0] < x1 && x1 <= q->max[0] &&
					q->min[1] <= y0 && y0 < succ->min[1] && pred->max[1] < y1 && y1 <= q->max[1];
			/* FALLTHROUGH */
		case RTContainsStrategyNumber:
			/* D(x0) <= q.min[0], U(x1) >= q.max[0], the same for y */
			return x0 < succ->min[0] && x1 > pred->max[0] && y0 < succ->min[1] && y1 > pred->max[1];
		case RTContainedByStrategyNumber:

			/*
			 * leaf: D(x0) >= q.min[0], U(x1) <= q.max[0], the same for y;
			 * node: as &&
			 */
			if (is_leaf)
				return x0 >= q->min[0] && x1 <= q->max[0] && y0 >= q->min[1] && y1 <= q->max[1];
			return overlaps_query(key, x0, y0, x1, y1);
		case RTOverBelowStrategyNumber:
			/* leaf U(y1) <= q.max[1]; node D(y0) <= q.max[1] */
			return is_leaf ? y1 <= q->max[1] : y0 < succ->max[1];
		case RTBelowStrategyNumber:
			/* leaf U(y1) < q.min[1]; node D(y0) < q.min[1] */
			return is_leaf ? y1 <= pred->min[1] : y0 < q->min[1];
		case RTAboveStrategyNumber:
			/* leaf D(y0) > q.max[1]; node U(y1) > q.max[1] */
			return is_leaf ? y0 >= succ->max[1] : y1 > q->max[1];
		case RTOverAboveStrategyNumber:
			/* leaf D(y0) >= q.min[1]; node U(y1) >= q.min[1] */
			return is_leaf ? y0 >= q->min[1] : y1 > pred->min[1];
	}
	return true;
}

/*
 * GIDX: could an entry whose box lies inside box satisfy the key?  PostGIS's
 * n-D box operators pass over a dimension where either box reaches FLT_MAX
 * (a missing Z or M is padded so; gidx_overlaps and the rest), and so does
 * this test; a node reaches FLT_MAX wherever one of its entries does, so
 * the test stays true of every node above a match.  Leaf entries take the
 * same test and the executor's recheck.
 */
static bool
gidx_may_match(const FbrpmKey *key, const fbr_box *box, int dims)
{
	const fbr_box *q = &key->query;
	bool		containment = key->strategy == RTSameStrategyNumber ||
		key->strategy == RTContainsStrategyNumber;

	if (key->unbounded)
		return true;
	for (int d = 0; d < dims; d++)
	{
		if (box->max[d] == FLT_MAX || q->max[d] == FLT_MAX)
			continue;
		if (containment ? box->min[d] > q->min[d] || box->max[d] < q->max[d] :
			box->min[d] > q->max[d] || q->min[d] > box->max[d])
			return false;
	}
	return true;
}

bool
fbrpm_consistent(const FbrpmOpclass *oc, const FbrpmKey *keys, int nkeys, const fbr_box *box,
				 bool is_leaf)
{
	BOX			b;
	Point		p;
	Datum		value;

	if (oc->kind == FBRPM_GIDX)
	{
		for (int i = 0; i < nkeys; i++)
			if (!gidx_may_match(&keys[i], box, oc->dims))
				return false;
		return true;
	}
	if (oc->kind == FBRPM_BOUNDED)
	{
		for (int i = 0; i < nkeys; i++)
			if (!bounded_matches(&keys[i], box, is_leaf))
				return false;
		return true;
	}
	to_pg_box(box, &b);
	p.x = box->min[0];
	p.y = box->min[1];
	value = oc->kind == FBRPM_POINT ? PointPGetDatum(&p) : BoxPGetDatum(&b);
	for (int i = 0; i < nkeys; i++)
	{
		if (is_leaf && oc->kind != FBRPM_SHAPE ?
			!DatumGetBool(FunctionCall2(keys[i].op, value, keys[i].arg)) :
			!node_may_match_fuzzy(&keys[i], &b))
			return false;
	}
	return true;
}

/*
 * Does a key rule out every entry of the spatial tree?  A query with no box
 * (EMPTY) matches no value that has one.
 */
bool
fbrpm_key_matches_nothing(const FbrpmKey *key)
{
	return key->empty_query;
}

/*
 * Does a key accept an empty value (the side tree's EMPTY entries)?  The
 * operator decides, as a sequential scan would: "EMPTY ~= EMPTY" is true,
 * "EMPTY && x" false.  PostGIS's GiST answers false for every EMPTY query
 * and every EMPTY entry (and, for "@", returns an EMPTY whenever its leaf
 * page's box reaches the query, an accident of its layout); fbrtree_pm
 * answers as the operator.  Every empty value of one SRID is the same to
 * the box operators, so one call per key decides for all of them.
 */
bool
fbrpm_key_accepts_empty(FbrpmOpclass *oc, const FbrpmKey *key)
{
	/*
	 * GIDX: the side tree holds values with no box and non-finite ones; the
	 * recheck decides
	 */
	if (oc->kind == FBRPM_GIDX)
		return true;
	if (oc->kind != FBRPM_BOUNDED)
		return false;
	return DatumGetBool(FunctionCall2(key->op, fbrpm_empty_value(oc, key->arg), key->arg));
}

void
fbrpm_prepare_orderby(const FbrpmOpclass *oc, ScanKey sk, FbrpmOrderBy *ob)
{
	ob->op = &sk->sk_func;
	ob->arg = sk->sk_argument;
	ob->null_arg = (sk->sk_flags & SK_ISNULL) != 0;
	ob->no_distance = ob->null_arg;
	if (!ob->null_arg && oc->kind == FBRPM_GIDX)
		ob->no_distance = !datum_box(oc, oc->type, sk->sk_argument, &ob->query);
	else if (!ob->null_arg && oc->kind == FBRPM_BOUNDED)
	{
		fbr_box		q;

		ob->no_distance = !datum_box(oc, oc->type, sk->sk_argument, &q);
		if (!ob->no_distance)
			round_outward(&q, &ob->query);
	}
	else if (!ob->null_arg)
		datum_box(oc, POINTOID, sk->sk_argument, &ob->query);
}

/* The operator's distance for a value (isnull: it has none, as for an EMPTY geometry). */
double
fbrpm_value_distance(const FbrpmOrderBy *ob, Datum value, bool *isnull)
{
	LOCAL_FCINFO(fcinfo, 2);
	Datum		result;

	InitFunctionCallInfoData(*fcinfo, ob->op, 2, InvalidOid, NULL, NULL);
	fcinfo->args[0].value = value;
	fcinfo->args[0].isnull = false;
	fcinfo->args[1].value = ob->arg;
	fcinfo->args[1].isnull = false;
	result = FunctionCallInvoke(fcinfo);
	*isnull = fcinfo->isnull;
	return *isnull ? 0 : DatumGetFloat8(result);
}

/* Are the distances an ORDER BY returns exact (else lower bounds, rechecked)? */
bool
fbrpm_exact_distances(const FbrpmOpclass *oc)
{
	return fbrpm_can_return(oc);
}

/* Distance between two boxes in dims dimensions (0 if they overlap); hypot: no overflow. */
static double
box_gap(const fbr_box *a, const fbr_box *b, int dims)
{
	double		gap = 0;

	for (int d = 0; d < dims; d++)
	{
		if (a->max[d] < b->min[d])
			gap = hypot(gap, b->min[d] - a->max[d]);
		else if (b->max[d] < a->min[d])
			gap = hypot(gap, a->min[d] - b->max[d]);
	}
	return gap;
}

/*
 * Could something inside box be FLT_MAX or more away from query, over the
 * dimensions query has (a Z or M it lacks spans -FLT_MAX..FLT_MAX)?
 * PostGIS's n-D distance searches its closest points from FLT_MAX down and
 * gives 0 for a pair farther apart, so no positive bound holds for such a
 * box.  A box that reaches FLT_MAX holds values anywhere beyond it (PostGIS
 * clamps boxes there), and so does a query that does.
 */
static bool
may_reach_flt_max(const fbr_box *box, const fbr_box *query, int dims)
{
	double		far = 0;

	for (int d = 0; d < dims; d++)
	{
		if (d >= 2 && query->min[d] == -FLT_MAX && query->max[d] == FLT_MAX)
			continue;
		if (query->min[d] <= -FLT_MAX || query->max[d] >= FLT_MAX ||
			box->min[d] <= -FLT_MAX || box->max[d] >= FLT_MAX)
			return true;
		far = hypot(far, Max(fabs(query->max[d] - box->min[d]), fabs(box->max[d] - query->min[d])));
	}
	return far >= FLT_MAX / 2;
}

/*
 * The radius geocentric box distances (chords of the unit sphere) are
 * scaled by: below the least radius of curvature of the Earth's ellipsoids
 * (b^2/a: 6,335,439 m for WGS 84, 6,334,832 m for Bessel 1841), so that the
 * bound stays below the geodesic on the spheroid as well as below the
 * distance on the sphere.  (GiST scales by the mean radius, 6,371,009 m,
 * more than a north-south spheroid distance near the equator.)
 */
#define FBRPM_EARTH_MIN_RADIUS	6330000.0

/*
 * ORDER BY value <-> query.  box and point, and bounded columns of points:
 * a leaf entry's distance is the operator's own.  Otherwise (nodes, and
 * every entry of a shape, bounded or GIDX kind) a lower bound for
 * everything inside the box, made a little smaller still so that rounding
 * can never put it above an exact distance (best-first search and the
 * executor's recheck rely on bounds never exceeding them).  Geography's
 * bound is the geocentric gap (a chord of the unit sphere, never longer
 * than the arc) times FBRPM_EARTH_MIN_RADIUS, less the rounding of the
 * boxes (FBRPM_GEOGRAPHY_SLACK).
 */
double
fbrpm_distance(const FbrpmOpclass *oc, const FbrpmOrderBy *ob, const fbr_box *box, bool is_leaf)
{
	if (is_leaf && oc->points)
	{
		fbr_item	item = {*box, 0};
		bool		isnull;
		double		d = fbrpm_value_distance(ob, fbrpm_entry_value(oc, &item), &isnull);

		return isnull ? INFINITY : d;
	}
	if (is_leaf && fbrpm_can_return(oc))
	{
		BOX			b;
		Point		p;

		to_pg_box(box, &b);
		p.x = box->min[0];
		p.y = box->min[1];
		return DatumGetFloat8(FunctionCall2(ob->op, oc->kind == FBRPM_POINT ? PointPGetDatum(&p) :
											BoxPGetDatum(&b), ob->arg));
	}
	if (oc->kind == FBRPM_BOUNDED)
	{
		fbr_box		n;

		round_outward(box, &n);
		return box_gap(&n, &ob->query, 2) * (1 - 1e-9);
	}
	if (oc->kind == FBRPM_GIDX && oc->geography)
		return Max(box_gap(box, &ob->query, oc->dims) * FBRPM_EARTH_MIN_RADIUS * (1 - 1e-9) -
				   FBRPM_GEOGRAPHY_SLACK, 0);
	if (oc->kind == FBRPM_GIDX)
		return may_reach_flt_max(box, &ob->query, oc->dims) ? 0 :
			box_gap(box, &ob->query, oc->dims) * (1 - 1e-9);

	/*
	 * A shape's distance is fuzzy: a point within EPSILON of a polygon is
	 * inside it (distance 0), so the bound leaves that much room too.
	 */
	if (oc->kind == FBRPM_SHAPE)
		return Max(box_gap(box, &ob->query, 2) * (1 - 1e-9) - EPSILON, 0);
	return box_gap(box, &ob->query, 2) * (1 - 1e-9);
}

/* The side tree keys an entry by its heap TID as a point. */
void
fbrpm_side_box(ItemPointer tid, fbr_box *box)
{
	memset(box, 0, sizeof(*box));
	box->min[0] = box->max[0] = ItemPointerGetBlockNumber(tid);
	box->min[1] = box->max[1] = ItemPointerGetOffsetNumber(tid);
}

/*
 * The reconciliation ring holds a 64-bit key per entry: the centre of the
 * box's first two dimensions as two float4.  fbrpm_note_window widens it by one float4 step each way, so
 * the window always overlaps the entry's box and a search finds the entry.
 */
uint64
fbrpm_note_key(const fbr_box *box)
{
	float4		cx = (float4) (box->min[0] / 2 + box->max[0] / 2);
	float4		cy = (float4) (box->min[1] / 2 + box->max[1] / 2);
	uint32		ux,
				uy;

	memcpy(&ux, &cx, 4);
	memcpy(&uy, &cy, 4);
	return ((uint64) ux << 32) | uy;
}

void
fbrpm_note_window(uint64 note_key, fbr_box *window)
{
	uint32		ux = (uint32) (note_key >> 32);
	uint32		uy = (uint32) note_key;
	float4		cx,
				cy;

	memcpy(&cx, &ux, 4);
	memcpy(&cy, &uy, 4);

	/*
	 * the dimensions past the first two are not in the key: the window spans
	 * them
	 */
	for (int d = 0; d < FBR_MAX_DIMS; d++)
	{
		window->min[d] = -INFINITY;
		window->max[d] = INFINITY;
	}
	if (isnan(cx) || isnan(cy))
		return;
	window->min[0] = nextafterf(cx, -INFINITY);
	window->max[0] = nextafterf(cx, INFINITY);
	window->min[1] = nextafterf(cy, -INFINITY);
	window->max[1] = nextafterf(cy, INFINITY);
}
