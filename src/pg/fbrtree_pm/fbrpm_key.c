/*
 * fbrpm_key.c
 *	  Keys of fbrtree_pm: how a column value becomes an entry's box, how a
 *	  box becomes a value again (index-only scans), and how scan keys and
 *	  ORDER BY operators decide for a node's box and a leaf entry.
 *
 * Strategy numbers are GiST's (access/stratnum.h), so the operator classes
 * read like GiST's box_ops and point_ops.  A leaf entry is decided by the
 * operator's own function on the rebuilt value, so results are exactly the
 * operator's, fuzzy comparisons (geo_decls.h EPSILON) included.  A node is
 * decided by the R-tree rule for the strategy over its box: "could a box
 * inside this one satisfy the operator?", written with the same fuzzy box
 * functions, each a necessary condition for every entry below.
 */
#include "fbrpm.h"

#include <float.h>
#include <math.h>

#include "access/stratnum.h"
#include "catalog/pg_type_d.h"
#include "utils/fmgrprotos.h"
#include "utils/geo_decls.h"
#include "utils/rel.h"

bool
fbrpm_type_supported(Oid typid)
{
	return typid == BOXOID || typid == POINTOID;
}

void
fbrpm_value_box(Oid typid, Datum value, fbr_box *box)
{
	if (typid == POINTOID)
	{
		Point	   *p = DatumGetPointP(value);

		box->xmin = box->xmax = p->x;
		box->ymin = box->ymax = p->y;
	}
	else
	{
		BOX		   *b = DatumGetBoxP(value);	/* normalized: high >= low */

		box->xmin = b->low.x;
		box->ymin = b->low.y;
		box->xmax = b->high.x;
		box->ymax = b->high.y;
	}
}

/* The box of a value to index; ERROR for coordinates no R-tree can order. */
void
fbrpm_entry_box(Relation index, Datum value, fbr_box *box)
{
	fbrpm_value_box(fbrpm_column_type(index), value, box);
	if (!isfinite(box->xmin) || !isfinite(box->ymin) || !isfinite(box->xmax) ||
		!isfinite(box->ymax))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("fbrtree_pm index \"%s\" cannot hold a value with an infinite or NaN coordinate",
						RelationGetRelationName(index)),
				 errhint("Use a GiST index if such values must be indexed, or exclude them with a partial index.")));
}

static void
to_pg_box(const fbr_box *box, BOX *b)
{
	b->low.x = box->xmin;
	b->low.y = box->ymin;
	b->high.x = box->xmax;
	b->high.y = box->ymax;
}

/* The column value an entry was made from (boxes and points are stored exactly). */
Datum
fbrpm_box_value(Oid typid, const fbr_box *box)
{
	if (typid == POINTOID)
	{
		Point	   *p = palloc(sizeof(Point));

		p->x = box->xmin;
		p->y = box->ymin;
		return PointPGetDatum(p);
	}
	else
	{
		BOX		   *b = palloc(sizeof(BOX));

		to_pg_box(box, b);
		return BoxPGetDatum(b);
	}
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
			return RTOverlapStrategyNumber;
		case RTOldBelowStrategyNumber:
			return RTBelowStrategyNumber;
		case RTOldAboveStrategyNumber:
			return RTAboveStrategyNumber;
		default:
			return InvalidStrategy;
	}
}

/*
 * Prepare a search key; false if the strategy is not one this opclass
 * knows (the operator class is then broken: validate refuses it).
 */
bool
fbrpm_prepare_key(Oid coltype, ScanKey sk, FbrpmKey *key)
{
	StrategyNumber s = sk->sk_strategy;

	if (coltype == POINTOID)
		s = point_strategy_as_box(s);
	else if (s < RTLeftStrategyNumber || s > RTOverAboveStrategyNumber)
		s = InvalidStrategy;
	if (s == InvalidStrategy)
		return false;
	key->strategy = s;
	key->op = &sk->sk_func;
	key->arg = sk->sk_argument;
	fbrpm_value_box(sk->sk_subtype == POINTOID ? POINTOID : BOXOID, sk->sk_argument, &key->query);
	return true;
}

static inline bool
box_fn(PGFunction fn, const BOX *a, const BOX *b)
{
	return DatumGetBool(DirectFunctionCall2(fn, BoxPGetDatum(a), BoxPGetDatum(b)));
}

/* Could an entry whose box lies inside n satisfy the key? */
static bool
node_may_match(const FbrpmKey *key, const BOX *n)
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

bool
fbrpm_consistent(Oid coltype, const FbrpmKey *keys, int nkeys, const fbr_box *box, bool is_leaf)
{
	BOX			b;
	Point		p;
	Datum		value;

	to_pg_box(box, &b);
	p.x = box->xmin;
	p.y = box->ymin;
	value = coltype == POINTOID ? PointPGetDatum(&p) : BoxPGetDatum(&b);
	for (int i = 0; i < nkeys; i++)
	{
		if (is_leaf ? !DatumGetBool(FunctionCall2(keys[i].op, value, keys[i].arg))
			: !node_may_match(&keys[i], &b))
			return false;
	}
	return true;
}

/*
 * ORDER BY value <-> point: a leaf entry's distance is the operator's own;
 * a node's is a lower bound for everything inside its box, made a little
 * smaller still so that rounding can never put it above an entry's exact
 * distance (best-first search relies on bounds never exceeding them).
 */
double
fbrpm_distance(Oid coltype, FmgrInfo *op, Datum point, const fbr_box *box, bool is_leaf)
{
	Point	   *q = DatumGetPointP(point);
	double		dx,
				dy;

	if (is_leaf)
	{
		BOX			b;
		Point		p;

		to_pg_box(box, &b);
		p.x = box->xmin;
		p.y = box->ymin;
		return DatumGetFloat8(FunctionCall2(op, coltype == POINTOID ? PointPGetDatum(&p) :
											BoxPGetDatum(&b), point));
	}
	dx = q->x < box->xmin ? box->xmin - q->x : (q->x > box->xmax ? q->x - box->xmax : 0);
	dy = q->y < box->ymin ? box->ymin - q->y : (q->y > box->ymax ? q->y - box->ymax : 0);
	return hypot(dx, dy) * (1 - 1e-9);
}

uint64
fbrpm_payload(ItemPointer tid, bool isnull)
{
	return ((uint64) ItemPointerGetBlockNumber(tid) << 16) | ItemPointerGetOffsetNumber(tid) |
		(isnull ? FBRPM_PAYLOAD_NULL : 0);
}

void
fbrpm_payload_tid(uint64 payload, ItemPointer tid)
{
	ItemPointerSet(tid, (BlockNumber) ((payload & FBRPM_TID_MASK) >> 16),
				   (OffsetNumber) (payload & 0xffff));
}

/* The side tree keys a NULL by its heap TID as a point. */
void
fbrpm_side_box(ItemPointer tid, fbr_box *box)
{
	box->xmin = box->xmax = ItemPointerGetBlockNumber(tid);
	box->ymin = box->ymax = ItemPointerGetOffsetNumber(tid);
}

/*
 * The reconciliation ring holds a 64-bit key per entry: the box's centre as
 * two float4.  fbrpm_note_window widens it by one float4 step each way, so
 * the window always overlaps the entry's box and a search finds the entry.
 */
uint64
fbrpm_note_key(const fbr_box *box)
{
	float4		cx = (float4) (box->xmin / 2 + box->xmax / 2);
	float4		cy = (float4) (box->ymin / 2 + box->ymax / 2);
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
	if (isnan(cx) || isnan(cy))
	{
		window->xmin = window->ymin = -INFINITY;
		window->xmax = window->ymax = INFINITY;
		return;
	}
	window->xmin = nextafterf(cx, -INFINITY);
	window->xmax = nextafterf(cx, INFINITY);
	window->ymin = nextafterf(cy, -INFINITY);
	window->ymax = nextafterf(cy, INFINITY);
}
