/*
 * pmi_unique.c
 *	  What unique pm_index indexes need from the server: the locks that make
 *	  an insert's unique check and its entry atomic, and a clear refusal of
 *	  INSERT ... ON CONFLICT, which PostgreSQL runs only over btree's
 *	  unique indexes.
 *
 * The locks are a fixed array of LWLocks in shared memory; an insert takes
 * the one its index and value hash to (pmi_unique_lock), so inserts of equal
 * values into one index are serialized and others rarely meet.
 *
 * ON CONFLICT: the executor prepares every unique index of the target
 * table for it, and refuses one of another access method with an internal
 * error ("unexpected non-btree speculative unique index", at the first
 * row).  The ExecutorStart hook refuses the statement before it runs
 * instead, with the reason and what works.
 */
#include "pm_index.h"

#include "access/table.h"
#include "catalog/partition.h"
#include "catalog/pg_inherits.h"
#include "common/hashfn.h"
#include "executor/executor.h"
#include "parser/parsetree.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

static ExecutorStart_hook_type prev_executor_start_hook = NULL;
static LWLockPadded *unique_locks = NULL;

LWLock *
pmi_unique_lock(Oid indexoid, uint64 key)
{
	uint64		h = hash_combine64(hash_bytes_uint32_extended(indexoid, 0),
								   hash_bytes_extended((const unsigned char *) &key,
													   sizeof(key), 0));

	if (unique_locks == NULL)
		unique_locks = GetNamedLWLockTranche(PMI_UNIQUE_TRANCHE);
	return &unique_locks[h % PMI_UNIQUE_LOCKS].lock;
}

/* Refuse ON CONFLICT into relid (a partition tree: any of its tables). */
static void
refuse_unique_pm_indexes(Oid relid)
{
	List	   *relids = list_make1_oid(relid);
	ListCell   *lc;

	if (get_rel_relkind(relid) == RELKIND_PARTITIONED_TABLE)
		relids = find_all_inheritors(relid, RowExclusiveLock, NULL);
	foreach(lc, relids)
	{
		Relation	rel = table_open(lfirst_oid(lc), NoLock);
		List	   *indexes = RelationGetIndexList(rel);
		ListCell   *li;

		foreach(li, indexes)
		{
			Relation	index = index_open(lfirst_oid(li), RowExclusiveLock);
			const PmiAmOps *ops = pmi_am_ops(index->rd_rel->relam);

			if (ops != NULL && index->rd_index->indisunique)
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("INSERT ... ON CONFLICT is not supported on table \"%s\"",
								RelationGetRelationName(rel)),
						 errdetail("Its unique index \"%s\" uses access method %s; PostgreSQL "
								   "runs ON CONFLICT only with unique indexes of access method btree.",
								   RelationGetRelationName(index), ops->amname),
						 errhint("Make that index a btree one, or for ON CONFLICT DO NOTHING replace "
								 "it with an exclusion constraint: EXCLUDE USING %s (column WITH =, ...).",
								 ops->amname)));
			index_close(index, NoLock);
		}
		list_free(indexes);
		table_close(rel, NoLock);
	}
}

static void
refuse_on_conflict(PlannedStmt *stmt, Plan *plan)
{
	ModifyTable *mt = (ModifyTable *) plan;
	ListCell   *lc;

	if (plan == NULL || !IsA(plan, ModifyTable) || mt->onConflictAction == ONCONFLICT_NONE)
		return;
	foreach(lc, mt->resultRelations)
	{
		refuse_unique_pm_indexes(rt_fetch(lfirst_int(lc), stmt->rtable)->relid);
	}
}

/* A ModifyTable is the top of a plan or of a subplan (a data-modifying WITH). */
static void
pmi_executor_start(QueryDesc *queryDesc, int eflags)
{
	PlannedStmt *stmt = queryDesc->plannedstmt;

	if (!(eflags & EXEC_FLAG_EXPLAIN_ONLY) &&
		(stmt->commandType == CMD_INSERT || stmt->hasModifyingCTE))
	{
		ListCell   *lc;

		refuse_on_conflict(stmt, stmt->planTree);
		foreach(lc, stmt->subplans)
		{
			refuse_on_conflict(stmt, lfirst(lc));
		}
	}
	if (prev_executor_start_hook)
		prev_executor_start_hook(queryDesc, eflags);
	else
		standard_ExecutorStart(queryDesc, eflags);
}

void
pmi_unique_init(void)
{
	prev_executor_start_hook = ExecutorStart_hook;
	ExecutorStart_hook = pmi_executor_start;
}
