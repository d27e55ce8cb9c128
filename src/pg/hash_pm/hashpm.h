/*
 * hashpm.h
 *	  The hash_pm index access method: equality over PostgreSQL's hash
 *	  operator classes, on the concurrent hash table of src/core/hash, a
 *	  volatile design that UNO logging (src/core/tips/uno.h) makes durable.
 *	  Every insert goes through the index's operation log (pmi_tier.c) and
 *	  is applied by the replay workers; see README.md.  One file per role:
 *	  handler (routine, options, validation, cost), index (its PmiAmOps),
 *	  build and insert, scan.
 */
#ifndef HASHPM_H
#define HASHPM_H

#include "pm_index.h"

#include "access/amapi.h"
#include "access/genam.h"
#include "fmgr.h"

#include "pmhash.h"
#include "uno.h"

/*
 * An entry: the value's 32-bit hash code and the heap TID (pmi_tid_pack).
 * A NULL is indexed too, with hash code 0 and HASHPM_REST_NULL
 * set, so that every heap tuple has its entry (VACUUM, the verifier).
 */
typedef struct HashpmEntry
{
	uint32		hash;
	uint32		pad;			/* 0 */
	uint64		rest;
} HashpmEntry;

#define HASHPM_REST_NULL	(UINT64CONST(1) << 63)

/* buckets of an empty index: the table grows by linear hashing from there */
#define HASHPM_MIN_DEPTH	4

/* A process's handles on the structure of one pool (PmiAmOps.state). */
typedef struct HashpmState
{
	pmhash_table table;
	pm_alloc	alloc;			/* the pool's allocator, for the UNO logs */
	pm_uno	   *uno;			/* malloc'd by pm_uno_attach */
	pm_pool    *pool;
	int			slotno;
	uint32		generation;
} HashpmState;

/* What hashing a value of the index's column needs (PmiAmOps.entry_context). */
typedef struct HashpmContext
{
	FmgrInfo	proc;			/* support function 1 of the column's class */
	Oid			collation;
} HashpmContext;

/* hashpm_index.c */
extern const PmiAmOps hashpm_am_ops;
extern uint64 hashpm_rest(ItemPointer tid, bool isnull);
extern void hashpm_make_entry(void *context, const Datum *values, const bool *isnull,
							  ItemPointer tid, void *entry);
extern void *hashpm_entry_context(Relation index);
extern pm_errcode hashpm_change_direct(HashpmState *st, bool insert, const HashpmEntry *e,
									   bool *changed, pm_error *err);

/* hashpm_build.c */
extern uint64 hashpm_build(Relation heap, Relation index, IndexInfo *ii, PmiBuild *b);
extern bool hashpm_insert(Relation index, Datum *values, bool *isnull, ItemPointer ht_ctid,
						  Relation heapRel, IndexUniqueCheck checkUnique, bool indexUnchanged,
						  IndexInfo *indexInfo);

/* hashpm_scan.c */
extern IndexScanDesc hashpm_beginscan(Relation index, int nkeys, int norderbys);
extern void hashpm_rescan(IndexScanDesc scan, ScanKey keys, int nkeys, ScanKey orderbys,
						  int norderbys);
extern bool hashpm_gettuple(IndexScanDesc scan, ScanDirection dir);
extern int64 hashpm_getbitmap(IndexScanDesc scan, TIDBitmap *tbm);
extern void hashpm_endscan(IndexScanDesc scan);

/* hashpm_handler.c */
extern bytea *hashpm_options(Datum reloptions, bool validate);
extern List *hashpm_derive_clause(PlannerInfo *root, RelOptInfo *rel, IndexOptInfo *index,
								  RestrictInfo *rinfo);

#endif							/* HASHPM_H */
