/*
 * pmi_amapi.h
 *	  The contract between the platform (src/pg/pmi_*.c) and an access
 *	  method: what an access method gives (PmiAmOps) and the handles the
 *	  platform gives it back (PmiIndex, PmiBuild).  Read this first to add
 *	  one; src/pg/README.md says where it is registered.
 */
#ifndef PMI_AMAPI_H
#define PMI_AMAPI_H

#include "lib/stringinfo.h"
#include "nodes/execnodes.h"
#include "nodes/pathnodes.h"
#include "storage/itemptr.h"
#include "pmi_compat.h"
#include "utils/relcache.h"

#include "alloc.h"
#include "pool.h"
#include "recon.h"

typedef struct PmiIndex PmiIndex;
typedef struct PmiShape PmiShape;
typedef struct PmiBuild PmiBuild;

/* pmi_planner.c: the index conditions an access method derives from a clause (NIL: none) */
typedef List *(*PmiDeriveClause) (PlannerInfo *root, RelOptInfo *rel, IndexOptInfo *index,
								  RestrictInfo *rinfo);

/*
 * A batch of n entries (entry_size bytes each) handed to a driver; returns
 * how many of them the driver deleted.
 */
typedef int (*PmiEntryBatchFn) (void *arg, const void *entries, int n);

/*
 * Insert an entry into the structure of h, in a critical section
 * (pmi_insert_logged): returns a failure, raises none, and a failed insert
 * changes nothing.
 */
typedef pm_errcode (*PmiEntryChangeFn) (PmiIndex *h, const void *entry, pm_error *err);

/* An entry as PmiAmOps.log_entry wrote it, in a WAL or an operation log record. */
typedef struct PmiLoggedEntry
{
	const char *data;
	Size		len;
} PmiLoggedEntry;

/* A reconciliation note: the key and rest an insert noted (pmi_note_insert). */
typedef struct PmiNote
{
	uint64		key;
	uint64		rest;
} PmiNote;

/*
 * A heap TID in the low 48 bits of an entry's 64-bit word (its block above
 * its offset), as the access methods store it, their own flags above; and
 * back, whatever the flags.
 */
#define PMI_TID_BITS	((UINT64CONST(1) << 48) - 1)

static inline uint64
pmi_tid_pack(ItemPointer tid)
{
	return ((uint64) ItemPointerGetBlockNumberNoCheck(tid) << 16) |
		ItemPointerGetOffsetNumberNoCheck(tid);
}

static inline void
pmi_tid_unpack(uint64 word, ItemPointer tid)
{
	word &= PMI_TID_BITS;
	ItemPointerSet(tid, (BlockNumber) (word >> 16), (OffsetNumber) (word & 0xffff));
}

/*
 * What a structure is formatted for (PmiAmOps.format): bytes of its access
 * method's, the same wherever the pool is made (they travel in the CREATE
 * WAL record and are read back from a pool), at most PMI_FORMAT_PARAM_MAX.
 */
#define PMI_FORMAT_PARAM_MAX	128
typedef struct PmiFormatParam
{
	uint32		len;
	uint8		data[PMI_FORMAT_PARAM_MAX];
} PmiFormatParam;


/*
 * A reloption of an access method, WITH (name = value): an integer between
 * min_value and max_value, or a boolean (0 or 1).  pmi_options.c declares
 * every access method's list in _PG_init and parses an index's values into
 * PmiOptions.
 */
typedef struct PmiReloption
{
	const char *name;
	const char *desc;
	int			default_value;
	int			min_value;
	int			max_value;
	bool		boolean;
} PmiReloption;

#define PMI_MAX_RELOPTIONS	8
#define PMI_FILLFACTOR		0	/* every access method's first reloption */

/*
 * The boolean reloption that makes an index's inserts tiered (pmi_tier.c),
 * in the list of an access method whose scans read the operation log.
 */
#define PMI_TIERED_RELOPTION \
	{"tiered", "Makes inserts durable in an operation log, applied to the index by background workers", 0, 0, 1, true}
/*
 * The contract between the platform and an access method.  Generic code
 * (src/pg/pmi_*.c) reaches a structure only through these; "state" is the
 * access method's per-process handles on its structure in one pool
 * (state_size bytes, set up by attach).
 */
typedef struct PmiAmOps
{
	const char *amname;
	uint32		kind;			/* the structure its pools hold: a pm_kind
								 * (pool.h) */
	uint32		meta_magic;		/* block 0 of the main fork */

	/*
	 * reloptions (pmi_options.c): the first is fillfactor, the build's fill
	 * factor; the access method's own follow
	 */
	const PmiReloption *reloptions;
	int			nreloptions;

	/*
	 * An empty structure in a fresh pool.  param is what the structure is
	 * formatted for (format_param's for the index; empty without one), such
	 * as the dimensions of an R-tree's boxes or the collation that orders a
	 * B+-tree's strings.  A pool made again without the index's catalog entry
	 * (replay of the CREATE record, which carries it; a backup's copy
	 * replaced at startup) gets the parameter of the pool it stands for
	 * (pool_format_param), and an index whose definition now gives another
	 * parameter than its pool's is refused until REINDEX.
	 */
	pm_errcode	(*format) (pm_pool *pool, const PmiFormatParam *param, pm_error *err);
	void		(*format_param) (Relation index, PmiFormatParam *param);	/* NULL: empty */
	void		(*pool_format_param) (pm_pool *pool, PmiFormatParam *param);	/* NULL: empty */

	/*
	 * the structure's handles over pool, in registry slot slotno, its DRAM
	 * root
	 */
	void		(*attach) (void *state, pm_pool *pool, int slotno, uint32 generation,
						   uint64 dram_root);
	Size		state_size;

	/*
	 * ambuild after the pool and metapage exist: fill the pool from the heap,
	 * attaching the structure with pmi_build_attach when it is ready to be
	 * loaded.  Returns the DRAM root to publish (0: none).
	 */
	uint64		(*build) (Relation heap, Relation index, IndexInfo *ii, PmiBuild *b);

	/*
	 * First use after startup, no lock held, state attached with no DRAM
	 * root: make the structure ready to serve (repairs after a crash,
	 * volatile state).  Returns the DRAM root to publish (0: none).  No
	 * Relation: the startup process recovers the indexes it replays into.
	 */
	uint64		(*recover) (const char *index_name, void *state, bool after_crash);

	/*
	 * free the DRAM tier under a root recover or build published (NULL: never
	 * publishes one)
	 */
	void		(*release_dram) (uint64 dram_root);

	/*
	 * bytes of the DRAM tier under a published root, from any database (with
	 * release_dram)
	 */
	uint64		(*dram_bytes) (uint64 dram_root);
	/* the largest DRAM tier its structure can address (0: no limit) */
	uint64		dram_tier_max;

	/*
	 * Entries, for VACUUM (pmi_vacuum.c), the verifier (pmi_check.c) and
	 * crash reconciliation (pmi_reconcile.c).  An entry is entry_size bytes
	 * and names one heap TID.
	 */
	Size		entry_size;
	/* what make_entry needs of the index for one operation (palloc'd) */
	void	   *(*entry_context) (Relation index);

	/*
	 * the entry a heap tuple with these index values makes (valid until the
	 * next call)
	 */
	void		(*make_entry) (void *context, const Datum *values, const bool *isnull,
							   ItemPointer tid, void *entry);

	/*
	 * Make an entry that foreach_batch handed out last beyond its batch, in
	 * CurrentMemoryContext (NULL: an entry holds nothing outside itself).
	 */
	void		(*keep_entry) (void *entry);
	/* a total order of entries; 0 only for the same entry */
	int			(*entry_cmp) (const void *a, const void *b);
	/* the heap TID an entry names; false if it names none */
	bool		(*entry_tid) (const void *entry, ItemPointer tid);

	/*
	 * Delete one entry, setting *found if it was there.  Runs in a critical
	 * section (pmi_delete_logged): returns a failure, raises none, and a
	 * failed delete changes nothing.
	 */
	pm_errcode	(*delete_entry) (void *state, const void *entry, bool *found, pm_error *err);

	/*
	 * Insert the entry of a heap tuple, all its columns, unless the structure
	 * has it: the background build (pmi_fill.c) meets rows whose entries an
	 * insert or replay put there first.  context is entry_context's.
	 */
	void		(*insert_entry) (Relation index, void *context, void *state, const Datum *values,
								 const bool *isnull, ItemPointer tid);

	/*
	 * Every entry, a node's worth per batch.  After a batch fn deleted from,
	 * the structure tidies the node (a rewrite, a merge) if it can; returns
	 * the batches left untidy for lack of space, with the last reason in
	 * *err.
	 */
	uint32		(*foreach_batch) (Relation index, void *state, PmiEntryBatchFn fn, void *arg,
								  pm_error *err);

	/*
	 * The entries reconciliation notes (src/core/recon.h) stand for, n of
	 * them sorted by (key, rest), handed to fn.
	 */
	void		(*note_entries) (Relation index, void *state, const PmiNote *notes, int n,
								 PmiEntryBatchFn fn, void *arg);

	/*
	 * WAL (pmi_wal.c, pmi_redo.c): an entry as a record carries it,
	 * self-contained (what it names in pool copied in), and its replay, which
	 * inserts it (a no-op if it is there) or deletes it, with no Relation and
	 * no ERROR.
	 */
	void		(*log_entry) (const pm_pool *pool, const void *entry, StringInfo out);
	pm_errcode	(*replay_entry) (const struct PmiAmOps *ops, void *state, bool insert,
								 const char *data, Size len, pm_error *err);

	/*
	 * Tiered writes' replay (pmi_tier_log.c): insert n logged entries, sorted
	 * by their notes, as replay_entry would one by one, with no ERROR (NULL:
	 * replay_entry is called for each).  applier is the lane being applied,
	 * which one process at a time applies.  fresh: none of them can be in
	 * the structure, so a structure whose insert would add a second copy of
	 * an entry need not look for it first.  A failure leaves some of them
	 * in; the caller applies all of them again later (not fresh).
	 */
	pm_errcode	(*replay_sorted) (const struct PmiAmOps *ops, void *state, int applier,
								  const PmiLoggedEntry *entries, int n, bool fresh,
								  pm_error *err);

	/*
	 * A structure that is failure-atomic only through UNO logging
	 * (src/core/tips/uno.h), not by its own protocol (NULL for those that
	 * are).  Its changes are durable at its checkpoints alone, so every
	 * insert goes through the operation log (pmi_tier.c), whose applied
	 * positions move only here: make the structure durable as it is and
	 * move each lane's applied position to positions[lane] (npositions of
	 * them).  The platform calls it with every applier excluded
	 * (pmi_tier_checkpoint).  Changes made outside a lane's applier (VACUUM,
	 * reconciliation, a standby's replay, a background build) run with
	 * every applier excluded too, as applier 0, and a checkpoint follows
	 * them before the operation that made them returns.
	 */
	pm_errcode	(*checkpoint) (void *state, const uint64 *positions, uint32 npositions,
							   pm_error *err);

	/*
	 * verifier: the structure's own invariants (pmi_report_corrupt); returns
	 * its entry count
	 */
	int64		(*check) (Relation index, void *state);
	/* pm_index_stats: the structure's shape */
	void		(*shape) (PmiIndex *h, PmiShape *shape);

	/*
	 * planner: index conditions from clauses its operators do not match
	 * (NULL: none)
	 */
	PmiDeriveClause derive_clause;
} PmiAmOps;

/* The format parameter of an index's structure (PmiAmOps.format). */
static inline void
pmi_format_param(Relation index, const PmiAmOps *ops, PmiFormatParam *param)
{
	param->len = 0;
	if (ops->format_param != NULL)
		ops->format_param(index, param);
}

/* An index build in progress (pmi_build.c). */
struct PmiBuild
{
	Relation	index;
	const PmiAmOps *ops;
	pm_pool    *pool;			/* the new pool, formatted */
	int			fillfactor;		/* percent, from the reloption */
	double		heap_tuples;	/* set by ops->build */
	double		index_tuples;
	int			slotno;			/* -1 until pmi_build_attach */
	uint32		generation;
	void	   *state;
};

/* An index's reloptions, in the order of its access method's list. */
typedef struct PmiOptions
{
	int32		vl_len_;		/* varlena header */
	int			values[PMI_MAX_RELOPTIONS];
	bool		flags[PMI_MAX_RELOPTIONS];	/* the boolean ones' */
} PmiOptions;

/* What pm_index_stats shows of a structure (counters since format; -1: not applicable). */
struct PmiShape
{
	int64		entries;
	int64		leaves;
	int32		height;			/* levels, the leaves included */
	int64		pm_bytes;
	int64		dram_bytes;
	int64		splits;
	int64		compactions;
	int64		merges;
};

/* This backend's handle on one index: pool, registry slot, tree. */
struct PmiIndex
{
	RelFileLocatorBackend rlocator;	/* hash key */
	const PmiAmOps *ops;
	int			slotno;
	uint32		generation;
	pm_pool    *pool;
	uint8		uuid[16];
	pm_recon_cursor recon_cursor;	/* this backend's place in the ring */
	pm_alloc	tier_alloc;		/* the pool's allocator, for the operation
								 * log (pmi_tier.c) */
	const pm_pool *tier_alloc_pool; /* the pool tier_alloc is attached to */
	/* this backend's writes not yet added to the slot's counters */
	uint64		pending_inserts;
	uint64		pending_deletes;
	uint64		pending_flushes;
	uint64		pending_fences;
	void	   *am_state;		/* the access method's: ops->state_size bytes */
};

#endif							/* PMI_AMAPI_H */
