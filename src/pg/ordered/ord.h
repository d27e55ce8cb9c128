/*
 * ord.h
 *	  What the ordered access methods share (those over a structure of
 *	  sorted (key, rest) entries): btree's operator classes, the key
 *	  encoding of one column or several, and the code built on them:
 *	  build, insert, scans, cost, the boolean-column planner support and
 *	  operator class validation.  An ordered access method is an OrdAm: the
 *	  platform's contract and its structure's operations (OrdOps).
 */
#ifndef ORD_H
#define ORD_H

#include "pm_index.h"
#include "pm_key.h"

#include "access/amapi.h"
#include "access/genam.h"
#include "lib/stringinfo.h"
#include "nodes/execnodes.h"
#include "nodes/pathnodes.h"
#include "storage/itemptr.h"
#include "utils/pg_locale.h"

/*
 * An entry: key is the order-preserving encoding of the value (ord_scalar.c,
 * ord_string.c), rest the NULL flag and the heap TID, never 0.  The pair is
 * an entry's identity and its sort order.
 */
typedef pm_key OrdKey;

static inline OrdKey
ord_key_make(uint64 key, uint64 rest)
{
	OrdKey		k;

	k.key = key;
	k.rest = rest;
	return k;
}

#define ORD_REST_NULL		(UINT64_C(1) << 48)
#define ORD_REST_MAX		((UINT64_C(1) << 49) - 1)
#define ORD_REST_NONNULL_MAX (ORD_REST_NULL - 1)
#define ORD_NULL_KEY		UINT64_MAX
#define ORD_BATCH_MAX		64
#define ORD_WIDE_MAX		((int) (PM_ALLOC_MAX_BLOCK - sizeof(pm_key_rec)))	/* a record's bytes */

/*
 * One node's entries in [lo, hi], sorted, and the range the node covers (cut
 * at the start).  The records of its wide keys are copies in records, which
 * each read resets (NULL: the index has no wide keys).
 */
typedef struct OrdBatch
{
	MemoryContext records;
	MemoryContext previous;		/* the previous read's: a read goes on from
								 * its fence */
	int			n;
	OrdKey		low;			/* inclusive */
	OrdKey		high;			/* exclusive; all ones: the last node */
	OrdKey		e[ORD_BATCH_MAX];
} OrdBatch;

/*
 * Whether a read of the range [lo, hi] in key direction kd (1 upwards, -1
 * downwards) goes on past batch b, and if so from where (*from): b's high
 * fence upwards, its low fence downwards, unless that is the end of the key
 * space or lies past the range.  order: the index's (OrdColumn.order).
 */
static inline bool
ord_batch_continues(const pm_key_order *order, const OrdBatch *b, const OrdKey *lo,
					const OrdKey *hi, int kd, OrdKey *from)
{
	if (kd > 0 ? pm_key_is_max(&b->high) || pm_key_cmp_by(order, &b->high, hi) > 0 :
		pm_key_is_min(&b->low) || pm_key_cmp_by(order, &b->low, lo) <= 0)
		return false;
	*from = kd > 0 ? b->high : b->low;
	return true;
}

/* An ordered structure's operations, over the state PmiAmOps.attach set up. */
typedef struct OrdOps
{
	/*
	 * whether the structure takes wide keys (pm_key.h), and so byte-string
	 * types
	 */
	bool		wide_keys;
	/* data bytes a wide entry's record may hold (0: ORD_WIDE_MAX) */
	int			record_max;

	/*
	 * The node covering from, from it on (forward) or below it (backward),
	 * keeping the entries in [lo, hi]; scans continue from the batch's high
	 * (forward) or low (backward) and neither repeat nor miss an entry.  A
	 * structure that meets damage raises it naming index.
	 */
	void		(*read_range) (Relation index, void *state, const OrdKey *from, bool backward,
							   const OrdKey *lo, const OrdKey *hi, OrdBatch *b);
	/* insert an entry; a no-op if it is already there */
	pm_errcode	(*insert) (void *state, const OrdKey *k, pm_error *err);

	/*
	 * insert n entries, each as insert does, faster in ascending order (NULL:
	 * insert one by one)
	 */
	pm_errcode	(*insert_sorted) (void *state, const OrdKey *keys, int n, pm_error *err);
	/* delete an entry; *found says whether it was there */
	pm_errcode	(*delete) (void *state, const OrdKey *k, bool *found, pm_error *err);

	/*
	 * Load sorted entries into the fresh pool of b (fill percent), then
	 * attach (pmi_build_attach) and build what the structure keeps in DRAM;
	 * returns the DRAM root to publish.  lo and hi: the smallest and largest
	 * keys to come.
	 */
	uint64		(*load) (Relation index, PmiBuild *b, uint64 lo, uint64 hi,
						 bool (*next) (void *ctx, OrdKey *k), void *ctx);
} OrdOps;

/*
 * An ordered access method.  Code of the family reaches its OrdAm from the
 * PmiAmOps the platform hands it: the contract is the first member.
 */
typedef struct OrdAm
{
	PmiAmOps	am;
	OrdOps		ord;
	int			entries_per_node;	/* when full (cost estimates) */
} OrdAm;

/* ord_build.c: PmiAmOps.build of every ordered access method */
extern uint64 ord_build(Relation heap, Relation index, IndexInfo *indexInfo, PmiBuild *b);

static inline const OrdAm *
ord_am(const PmiAmOps *ops)
{
	/* every ordered access method builds with ord_build, and only they do */
	pm_assert(ops->build == ord_build);
	return (const OrdAm *) ops;
}

static inline const OrdOps *
ord_ops(Relation index)
{
	return &ord_am(pmi_index_am(index))->ord;
}

/* The PmiAmOps members every ordered access method takes from the family's code. */
#define ORD_AM_SHARED_OPS \
	.build = ord_build, \
	.entry_size = sizeof(OrdKey), \
	.entry_context = ord_entry_context, \
	.make_entry = ord_make_entry, \
	.entry_cmp = ord_entry_cmp, \
	.entry_tid = ord_entry_tid, \
	.insert_entry = ord_insert_entry, \
	.note_entries = ord_note_entries, \
	.log_entry = ord_log_entry, \
	.replay_entry = ord_replay_entry, \
	.replay_sorted = ord_replay_sorted, \
	.derive_clause = ord_derive_clause

/* build phases (PROGRESS_CREATEIDX_SUBPHASE) */
#define ORD_PHASE_TABLESCAN	2
#define ORD_PHASE_SORT		3
#define ORD_PHASE_LOAD		4

/* The entries of values, from the first to the last possible (NULLs follow). */
#define ORD_VALUES_LO	ord_key_make(0, 1)
#define ORD_VALUES_HI	ord_key_make(UINT64_MAX, ORD_REST_NONNULL_MAX)

/*
 * Where a scan argument cuts the entries (ord_bounds.c): those below ge hold
 * values < arg, those below gt values <= arg (has_ge, has_gt false: all of
 * them do).
 */
typedef struct OrdCut
{
	bool		has_ge;
	bool		has_gt;
	OrdKey		ge;
	OrdKey		gt;
} OrdCut;

/*
 * An index's key as the encoding sees it.  A column: the type its keys
 * encode (the operator class's input type) and operator family, the index
 * column's typmod (a value's usual form, which its entry then need not
 * keep) and collation: whether strings order by their bytes ("C", no
 * collation, or a pattern operator class) and if not, the collation's
 * locale (NULL: the database's libc one) and the order of records that a
 * libc collation's comparison makes; its ASC/DESC and NULLS FIRST/LAST.
 * The index: natts attributes
 * (desc), of which nkeys are key columns (keys: each one's, when there are
 * several; the top level then describes the first), the rest INCLUDE
 * columns whose values an entry keeps in its record.
 */
typedef struct OrdColumn
{
	Oid			type;
	Oid			opfamily;
	int32		typmod;
	Oid			collation;
	bool		by_bytes;
	pg_locale_t locale;
	const pm_key_order *order;	/* how its records order (NULL: memcmp) */
	bool		descending;
	bool		nulls_first;
	int			natts;
	int			nkeys;
	struct OrdColumn *keys;
	TupleDesc	desc;
	int			record_max;		/* of an entry's record (OrdOps.record_max) */
	const char *amname;
} OrdColumn;

/* ord_scalar.c */
extern bool ord_type_supported(Oid typid);
extern bool ord_index_wide(Relation index);

/* ord_string.c */
extern uint64 ord_entry_rest(const OrdKey *k);
extern void ord_entry_values(const OrdColumn *col, const OrdKey *k, Datum *values, bool *isnull);

/* ord_bounds.c */
extern void ord_cut(Oid opfamily, const OrdColumn *col, Oid argtype, Datum arg, OrdCut *cut);
extern bool ord_narrow(const pm_key_order *order, const OrdCut *cut, int strategy, OrdKey *lo,
					   OrdKey *hi);
extern void ord_key_raise(const pm_key_order *order, OrdKey *lo, const OrdKey *k);
extern void ord_key_lower(const pm_key_order *order, OrdKey *hi, const OrdKey *k);

/* ord_multicolumn.c */
extern OrdKey ord_key_of(const OrdColumn *col, const Datum *values, const bool *isnull,
						 ItemPointer tid);
extern bool ord_entries_equal(const OrdColumn *col, const OrdKey *a, const OrdKey *b, bool nulls_equal);
extern void ord_entry_key_values(const OrdColumn *col, const OrdKey *k, int upto, Datum *values,
								 bool *isnull);
extern void ord_column_cut(const OrdColumn *col, int c, StringInfo prefix, Oid argtype, Datum arg,
						   OrdCut *cut, StringInfo single);
extern void ord_column_values(const OrdColumn *col, int c, StringInfo prefix, OrdKey *lo,
							  OrdKey *hi);
extern void ord_column_null(const OrdColumn *col, int c, StringInfo prefix);
extern void ord_prefix_range(StringInfo prefix, OrdKey *lo, OrdKey *hi);
extern void ord_equal_range(const OrdKey *k, OrdKey *lo, OrdKey *hi);

/* ord_column.c */
extern OrdColumn ord_column(Relation index);
extern void ord_check_column(Relation index, const char *amname, bool wide_keys);
extern void ord_format_param(Relation index, PmiFormatParam *param);
extern const pm_key_order *ord_order_of_format(const uint8 *param, uint32 len);

/* ord_pending.c */
extern void ord_read_batch(Relation index, PmiIndex *h, const pm_key_order *order, const OrdKey *from,
						   bool backward, const OrdKey *lo, const OrdKey *hi, OrdBatch *b);

/* ord_batch.c */
extern void ord_batch_init(OrdBatch *b, Relation index);
extern void ord_batch_next_records(OrdBatch *b);
extern void ord_batch_copy(OrdBatch *dst, const OrdBatch *src);
extern void ord_batch_free(OrdBatch *b);
extern const pm_key_rec *ord_copy_record(void *cxt, const pm_key_rec *rec);
extern void ord_key_copy(OrdKey *k, MemoryContext cxt);
extern OrdKey ord_key_above(const OrdKey *k);

/* ord_handler.c */
extern IndexAmRoutine *ord_routine(amoptions_function options);

/* ord_validate.c: amvalidate, ambuildphasename, amcanreturn */
extern bool ord_validate(Oid opclassoid);
extern char *ord_phasename(int64 phasenum);
extern bool ord_canreturn(Relation index, int attno);


/* ord_insert.c */
extern bool ord_insert(Relation index, Datum *values, bool *isnull, ItemPointer ht_ctid,
					   Relation heapRel, IndexUniqueCheck checkUnique,
					   bool indexUnchanged, IndexInfo *indexInfo);

/* ord_unique.c */
extern pm_errcode ord_pool_insert(PmiIndex *h, const void *entry, pm_error *err);
extern void ord_aminsert_entry(Relation index, PmiIndex *h, Relation heap, const OrdKey *k);
extern bool ord_insert_unique(Relation index, PmiIndex *h, const OrdColumn *col, const OrdKey *k,
							  Datum *values, bool *isnull, ItemPointer tid, Relation heapRel,
							  IndexUniqueCheck checkUnique);

/* ord_scan.c */
extern IndexScanDesc ord_beginscan(Relation r, int nkeys, int norderbys);
extern void ord_rescan(IndexScanDesc scan, ScanKey scankey, int nscankeys,
					   ScanKey orderbys, int norderbys);
extern bool ord_gettuple(IndexScanDesc scan, ScanDirection dir);
extern int64 ord_getbitmap(IndexScanDesc scan, TIDBitmap *tbm);
extern void ord_endscan(IndexScanDesc scan);
extern void ord_markpos(IndexScanDesc scan);
extern Size ord_estimateparallelscan(PMI_ESTIMATEPARALLELSCAN_PARAMS);
extern void ord_initparallelscan(void *target);
extern void ord_parallelrescan(IndexScanDesc scan);
extern void ord_restrpos(IndexScanDesc scan);

/* ord_planner.c */
extern List *ord_derive_clause(PlannerInfo *root, RelOptInfo *rel, IndexOptInfo *index,
							   RestrictInfo *rinfo);

/* ord_cost.c */
extern void ord_costestimate(PlannerInfo *root, IndexPath *path, double loop_count,
							 Cost *indexStartupCost, Cost *indexTotalCost,
							 Selectivity *indexSelectivity, double *indexCorrelation,
							 double *indexPages);

/* ord_entries.c: PmiAmOps entry members for (key, rest) entries */
extern void *ord_entry_context(Relation index);
extern void ord_make_entry(void *context, const Datum *values, const bool *isnull,
						   ItemPointer tid, void *entry);
extern int	ord_entry_cmp(const void *a, const void *b);
extern bool ord_entry_tid(const void *entry, ItemPointer tid);
extern void ord_keep_entry(void *entry);
extern void ord_insert_entry(Relation index, void *context, void *state, const Datum *values,
							 const bool *isnull, ItemPointer tid);
extern void ord_log_entry(const pm_pool *pool, const void *entry, StringInfo out);
extern pm_errcode ord_logged_entry(const char *data, Size len, OrdKey *k, pm_error *err);
extern pm_errcode ord_replay_sorted(const PmiAmOps *ops, void *state, int applier,
								   const PmiLoggedEntry *entries, int n, bool fresh,
								   pm_error *err);
extern pm_errcode ord_replay_entry(const PmiAmOps *ops, void *state, bool insert, const char *data,
								   Size len, pm_error *err);
extern void ord_note_entries(Relation index, void *state, const PmiNote *notes, int n,
							 PmiEntryBatchFn fn, void *arg);

#endif							/* ORD_H */
