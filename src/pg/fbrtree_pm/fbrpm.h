/*
 * fbrpm.h
 *	  The fbrtree_pm index access method: the FBR-tree of src/core/fbrtree
 *	  as a PostgreSQL index, one file per role (handler, key, index: its
 *	  PmiAmOps, build, insert, scan, cost, check, planner).  VACUUM, the
 *	  verifier's heap check and crash reconciliation are the platform's
 *	  (src/pg/README.md).
 */
#ifndef FBRPM_H
#define FBRPM_H

#include "pm_index.h"

#include "access/amapi.h"
#include "access/genam.h"
#include "access/skey.h"
#include "nodes/execnodes.h"
#include "nodes/pathnodes.h"
#include "storage/itemptr.h"

#include "fbrtree.h"

/*
 * A pool holds two trees: the spatial one (pool root 0) and the side tree
 * of entries with no box (pool root 2): NULLs, keyed by their heap TID as a
 * point so that deleting one is a search, not a walk.  Pool root 1 is the
 * reconciliation ring.
 */
#define FBRPM_ROOT_SPATIAL	0
#define FBRPM_ROOT_SIDE		2

/* point <@ box: GiST's number for it in point_ops (its box group's <@) */
#define FBRPM_POINT_IN_BOX_STRATEGY 28
#define FBRPM_POINT_IN_POLYGON_STRATEGY 48
#define FBRPM_POINT_IN_CIRCLE_STRATEGY 68
#define FBRPM_DISTANCE_STRATEGY 15	/* built-in types: <-> point */
#define FBRPM_DISTANCE_STRATEGY_BOUNDED 13	/* PostGIS: <->, and <<->> of the
											 * n-D class */
#define FBRPM_CPA_DISTANCE_STRATEGY 20	/* PostGIS n-D: |=| */
#define FBRPM_BOX_DISTANCE_STRATEGY 14	/* PostGIS: <#> */

/*
 * Metres by which geography's boxes are taken to be rounded: PostGIS's
 * geocentric boxes of one place can miss each other (POINT(180 0) and
 * POINT(-180 0)) by about 1e-15 of the Earth's radius, nanometres; derived
 * conditions widen by this much and distance bounds shrink by it, far less
 * than anything a selectivity or a KNN scan notices.
 */
#define FBRPM_GEOGRAPHY_SLACK 0.001

/* payload: heap TID in the low 48 bits (pmi_tid_pack), flags above (side tree entries only) */
#define FBRPM_PAYLOAD_NULL	(UINT64_C(1) << 48)
#define FBRPM_PAYLOAD_EMPTY (UINT64_C(1) << 49) /* a value with no box
												 * (PostGIS EMPTY) */
#define FBRPM_PAYLOAD_SIDE	(FBRPM_PAYLOAD_NULL | FBRPM_PAYLOAD_EMPTY)

/* support functions of a bounded operator class (fbrpm_key.c) */
#define FBRPM_PROC_BOX		1	/* value -> box; NULL for an empty value */
#define FBRPM_PROC_POINT	2	/* (float8, float8) -> value: a point, for
								 * index-only scans */
#define FBRPM_PROC_SRID		3	/* (value, int4) -> value: set its SRID */
#define FBRPM_PROC_GIDX		4	/* PostGIS's GiST compress: the value's n-D
								 * box (a GIDX) */
#define FBRPM_NPROCS		4

typedef enum FbrpmKind
{
	FBRPM_BOX,					/* box: stored exactly, the operators' own
								 * functions decide */
	FBRPM_POINT,				/* point: likewise */
	FBRPM_SHAPE,				/* circle, polygon: a bounding box per value,
								 * entries rechecked */
	FBRPM_BOUNDED,				/* a bounding box per value, operators on
								 * boxes (PostGIS geometry) */
	FBRPM_GIDX					/* PostGIS's n-D box per value (geometry n-D,
								 * geography): rechecked */
} FbrpmKind;

/* What a scan, an insert or a check needs to know of the index's operator class. */
typedef struct FbrpmOpclass
{
	Relation	index;
	FbrpmKind	kind;
	Oid			type;			/* the column's */
	int			dims;			/* of the spatial tree's boxes */
	bool		geography;		/* GIDX: geocentric boxes, distances in metres */
	FmgrInfo   *bbox;			/* bounded: FBRPM_PROC_BOX */
	FmgrInfo   *gidx;			/* GIDX: FBRPM_PROC_GIDX */
	int32		srid;			/* bounded: the column's declared SRID, 0 for
								 * any */
	FmgrInfo   *set_srid;		/* bounded: FBRPM_PROC_SRID, if the class has
								 * it */
	Oid			st_srid;		/* bounded: PostGIS's ST_SRID, once looked up */
	bool		points;			/* bounded: the column holds points of one
								 * SRID only */
	FmgrInfo   *make_point;
} FbrpmOpclass;

/* One scan key, prepared for the tree's callbacks. */
typedef struct FbrpmKey
{
	StrategyNumber strategy;	/* point kinds: as a box strategy */
	fbr_box		query;			/* the argument's box (bounded: rounded
								 * outward to float4) */
	fbr_box		query_pred;		/* bounded: the float4 below each coordinate
								 * of query */
	fbr_box		query_succ;		/* bounded: the float4 above each coordinate
								 * of query */
	bool		empty_query;	/* bounded: the argument has no box */
	bool		unbounded;		/* GIDX: the argument's box is unknown: test
								 * every entry */
	FmgrInfo   *op;				/* the operator's function, for leaf entries */
	Datum		arg;
} FbrpmKey;

/* The ORDER BY distance of a scan. */
typedef struct FbrpmOrderBy
{
	FmgrInfo   *op;
	Datum		arg;
	bool		null_arg;
	bool		no_distance;	/* NULL or empty argument: every distance is
								 * unknown */
	fbr_box		query;
} FbrpmOrderBy;

#define FBRPM_DEFAULT_FILLFACTOR 90

/* build progress subphases (PROGRESS_CREATEIDX_SUBPHASE) */
#define FBRPM_PHASE_TABLESCAN	2
#define FBRPM_PHASE_LOAD		3

/* fbrpm_key.c */
extern void fbrpm_opclass(Relation index, FbrpmOpclass *oc);
extern bool fbrpm_type_is_geography(Oid type);
extern bool fbrpm_can_return(const FbrpmOpclass *oc);
extern bool fbrpm_entry(const FbrpmOpclass *oc, Datum value, bool isnull, ItemPointer tid,
						fbr_item *item);
extern Datum fbrpm_entry_value(const FbrpmOpclass *oc, const fbr_item *item);
extern Datum fbrpm_empty_value(FbrpmOpclass *oc, Datum like);
extern bool fbrpm_prepare_key(const FbrpmOpclass *oc, ScanKey sk, FbrpmKey *key);
extern bool fbrpm_consistent(const FbrpmOpclass *oc, const FbrpmKey *keys, int nkeys,
							 const fbr_box *box, bool is_leaf);
extern bool fbrpm_key_matches_nothing(const FbrpmKey *key);
extern bool fbrpm_key_accepts_empty(FbrpmOpclass *oc, const FbrpmKey *key);
extern void fbrpm_prepare_orderby(const FbrpmOpclass *oc, ScanKey sk, FbrpmOrderBy *ob);
extern double fbrpm_distance(const FbrpmOpclass *oc, const FbrpmOrderBy *ob, const fbr_box *box,
							 bool is_leaf);
extern double fbrpm_value_distance(const FbrpmOrderBy *ob, Datum value, bool *isnull);
extern bool fbrpm_exact_distances(const FbrpmOpclass *oc);
extern bool fbrpm_exact_entries(const FbrpmOpclass *oc);
extern void fbrpm_side_box(ItemPointer tid, fbr_box *box);
extern uint64 fbrpm_note_key(const fbr_box *box);
extern void fbrpm_note_window(uint64 note_key, fbr_box *window);

/* fbrpm_handler.c */
extern bytea *fbrpm_options(Datum reloptions, bool validate);
extern char *fbrpm_phasename(int64 phasenum);

/* fbrpm_index.c: fbrtree_pm's PmiAmOps */
extern const PmiAmOps fbrpm_am_ops;
extern int	fbrpm_item_cmp(const fbr_item *x, const fbr_item *y, int dims);
extern int	fbrpm_logged_item(const char *data, Size len, fbr_item *item, pm_error *err);

/* A handle's two trees (its am_state). */
typedef struct FbrpmTrees
{
	fbr_tree	spatial;		/* entries with a box */
	fbr_tree	side;			/* NULLs and EMPTYs */
} FbrpmTrees;

static inline FbrpmTrees *
fbrpm_trees(PmiIndex *h)
{
	return (FbrpmTrees *) h->am_state;
}
extern bool fbrpm_accept_all(void *arg, const fbr_box *box, bool is_leaf);

/* fbrpm_check.c */
extern int64 fbrpm_check_structure(Relation index, void *state);
extern void fbrpm_shape(PmiIndex *h, PmiShape *shape);

/* fbrpm_build.c */
extern uint64 fbrpm_build(Relation heap, Relation index, IndexInfo *indexInfo, PmiBuild *b);

/* fbrpm_insert.c */
extern bool fbrpm_insert(Relation index, Datum *values, bool *isnull, ItemPointer ht_ctid,
						 Relation heapRel, IndexUniqueCheck checkUnique,
						 bool indexUnchanged, IndexInfo *indexInfo);

/* fbrpm_scan.c */
extern IndexScanDesc fbrpm_beginscan(Relation r, int nkeys, int norderbys);
extern void fbrpm_rescan(IndexScanDesc scan, ScanKey scankey, int nscankeys,
						 ScanKey orderbys, int norderbys);
extern bool fbrpm_gettuple(IndexScanDesc scan, ScanDirection dir);
extern int64 fbrpm_getbitmap(IndexScanDesc scan, TIDBitmap *tbm);
extern void fbrpm_endscan(IndexScanDesc scan);

/* fbrpm_planner.c */
extern List *fbrpm_derive_clause(PlannerInfo *root, RelOptInfo *rel, IndexOptInfo *index,
								 RestrictInfo *rinfo);
extern bool fbrpm_clause_is_derived(RestrictInfo *rinfo);

/* fbrpm_cost.c */
extern void fbrpm_costestimate(PlannerInfo *root, IndexPath *path, double loop_count,
							   Cost *indexStartupCost, Cost *indexTotalCost,
							   Selectivity *indexSelectivity, double *indexCorrelation,
							   double *indexPages);

#endif							/* FBRPM_H */
