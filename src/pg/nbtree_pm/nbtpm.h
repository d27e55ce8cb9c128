/*
 * nbtpm.h
 *	  The nbtree_pm index access method: the NBTree of src/core/nbtree as a
 *	  PostgreSQL index, one file per role (handler, key, index: its PmiAmOps,
 *	  build, insert, scan, cost, check, planner).  VACUUM, the verifier's
 *	  heap check and crash reconciliation are the platform's (src/pg/README.md).
 */
#ifndef NBTPM_H
#define NBTPM_H

#include "pm_index.h"

#include "access/amapi.h"
#include "access/genam.h"
#include "nodes/execnodes.h"
#include "nodes/pathnodes.h"
#include "storage/itemptr.h"

#include "nbtree.h"
#include "recon.h"

#define NBTPM_DEFAULT_FILLFACTOR 90

/* build progress subphases (PROGRESS_CREATEIDX_SUBPHASE) */
#define NBTPM_PHASE_TABLESCAN	2
#define NBTPM_PHASE_SORT		3
#define NBTPM_PHASE_LOAD		4


/* rest = NULL flag and heap TID; never 0 (offset numbers start at 1) */
#define NBTPM_REST_NULL		(UINT64_C(1) << 48)
#define NBTPM_NULL_KEY		UINT64_MAX

/*
 * Where a scan argument falls among a column's keys: the values of keys
 * below ge are less than the argument, those of keys below gt are less or
 * equal; has_ge / has_gt are false when that holds of every key.
 */
typedef struct NbtpmCut
{
	bool		has_ge;
	bool		has_gt;
	uint64		ge;
	uint64		gt;
} NbtpmCut;

/* nbtpm_key.c */
extern bool nbtpm_type_supported(Oid typid);
extern uint64 nbtpm_encode(Oid typid, Datum value);
extern Datum nbtpm_decode(Oid typid, uint64 key);
extern void nbtpm_cut(Oid opfamily, Oid coltype, Oid argtype, Datum arg, NbtpmCut *cut);
extern bool nbtpm_narrow(const NbtpmCut *cut, int strategy, uint64 *lo, uint64 *hi);
extern uint64 nbtpm_rest(ItemPointer tid, bool isnull);
extern void nbtpm_rest_tid(uint64 rest, ItemPointer tid);
extern nbt_skey nbtpm_skey(Oid typid, Datum value, bool isnull, ItemPointer tid);

/* nbtpm_handler.c */
extern Oid	nbtpm_column_type(Relation index);
extern bytea *nbtpm_options(Datum reloptions, bool validate);
extern bool nbtpm_validate(Oid opclassoid);
extern char *nbtpm_phasename(int64 phasenum);
extern bool nbtpm_canreturn(Relation index, int attno);

/* nbtpm_index.c: nbtree_pm's PmiAmOps */
extern const PmiAmOps nbtpm_am_ops;

static inline PmiIndex *
nbtpm_open(Relation index)
{
	return pmi_index_open(index, &nbtpm_am_ops);
}

/* A handle's tree (its am_state). */
static inline nbt_tree *
nbtpm_tree(PmiIndex *h)
{
	return (nbt_tree *) h->am_state;
}

/* nbtpm_check.c */
extern int64 nbtpm_check_structure(Relation index, void *state);
extern void nbtpm_shape(PmiIndex *h, PmiShape *shape);

/* nbtpm_build.c */
extern uint64 nbtpm_build(Relation heap, Relation index, IndexInfo *indexInfo, PmiBuild *b);

/* nbtpm_insert.c */
extern bool nbtpm_insert(Relation index, Datum *values, bool *isnull, ItemPointer ht_ctid,
						 Relation heapRel, IndexUniqueCheck checkUnique,
						 bool indexUnchanged, IndexInfo *indexInfo);

/* nbtpm_scan.c */
extern IndexScanDesc nbtpm_beginscan(Relation r, int nkeys, int norderbys);
extern void nbtpm_rescan(IndexScanDesc scan, ScanKey scankey, int nscankeys,
						 ScanKey orderbys, int norderbys);
extern bool nbtpm_gettuple(IndexScanDesc scan, ScanDirection dir);
extern int64 nbtpm_getbitmap(IndexScanDesc scan, TIDBitmap *tbm);
extern void nbtpm_endscan(IndexScanDesc scan);
extern void nbtpm_markpos(IndexScanDesc scan);
extern void nbtpm_restrpos(IndexScanDesc scan);

/* nbtpm_planner.c */
extern RestrictInfo *nbtpm_derive_clause(PlannerInfo *root, RelOptInfo *rel, IndexOptInfo *index,
										 RestrictInfo *rinfo);

/* nbtpm_cost.c */
extern void nbtpm_costestimate(PlannerInfo *root, IndexPath *path, double loop_count,
							   Cost *indexStartupCost, Cost *indexTotalCost,
							   Selectivity *indexSelectivity, double *indexCorrelation,
							   double *indexPages);

#endif							/* NBTPM_H */
