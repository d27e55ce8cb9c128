/*
 * pmi_inspect.c
 *	  SQL-callable inspection functions: pm_index_version(), pm_index_pools(),
 *	  pm_index_loaded(), pm_index_dram_tier(), pm_index_size(),
 *	  pm_index_stats(), pm_index_tier_lag().
 */
#include "pm_index.h"

#include <sys/stat.h>

#include "access/relation.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/xact.h"
#include "storage/procarray.h"
#include "catalog/pg_class.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/fd.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"
#include "access/genam.h"
#include "commands/defrem.h"

PG_FUNCTION_INFO_V1(pm_index_version);
PG_FUNCTION_INFO_V1(pm_index_pools);
PG_FUNCTION_INFO_V1(pm_index_stats);
PG_FUNCTION_INFO_V1(pm_index_loaded);
PG_FUNCTION_INFO_V1(pm_index_dram_tier);
PG_FUNCTION_INFO_V1(pm_index_size);
PG_FUNCTION_INFO_V1(pm_index_tier_lag);

Datum
pm_index_version(PG_FUNCTION_ARGS)
{
	PG_RETURN_TEXT_P(cstring_to_text(PM_INDEX_VERSION));
}

#define POOLS_COLS 9

/*
 * Does a pg_class row whose inserting transaction has not aborted name the
 * relfilenode of a pool of the current database?  Rows of a CREATE INDEX or
 * REINDEX in progress (a prepared one's too) name their pools, and so do
 * rows deleted by a DROP INDEX not yet committed, which may roll back.  A
 * CREATE INDEX that crashed leaves a pool and a relation file that only a
 * row of an aborted transaction names.
 */
static bool
catalog_names_relfilenode(RelFileLocatorBackend rlocator)
{
	Relation	pg_class = table_open(RelationRelationId, AccessShareLock);
	ScanKeyData key[2];
	SysScanDesc scan;
	HeapTuple	tup;
	bool		named = false;

	ScanKeyInit(&key[0], Anum_pg_class_reltablespace, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(rlocator.locator.spcOid == MyDatabaseTableSpace ?
								 InvalidOid : rlocator.locator.spcOid));
	ScanKeyInit(&key[1], Anum_pg_class_relfilenode, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(rlocator.locator.relNumber));
	scan = systable_beginscan(pg_class, ClassTblspcRelfilenodeIndexId, true, SnapshotAny, 2, key);
	while (!named && HeapTupleIsValid(tup = systable_getnext(scan)))
	{
		TransactionId xmin = HeapTupleHeaderGetXmin(tup->t_data);

		named = HeapTupleHeaderXminCommitted(tup->t_data) ||
			TransactionIdIsCurrentTransactionId(xmin) || TransactionIdIsInProgress(xmin) ||
			TransactionIdDidCommit(xmin);
	}
	systable_endscan(scan);
	table_close(pg_class, AccessShareLock);
	return named;
}

/*
 * One row per file in the pool directory, and one per index of the current
 * database without its pool file: path, owning index (when it is in the
 * current database), database, relfilenode, bytes, mode, is_pmem, state,
 * detail.  State: clean (shut down cleanly), in use, temporary (the pool of
 * a temporary index), building (a background build fills it: pmi_fill.c),
 * needs reindex (the pool predates a recovery from an archive or a primary
 * without being kept by replay, or an OS crash may have torn it, or another
 * version wrote it), corrupt (the header does not validate), inaccessible
 * (the server may not read it, or must not trust it: its owner or mode is
 * wrong), missing (an index's pool file, or the directory, is not there),
 * orphan (no index has it: its relation's file is gone, or no catalog row
 * names its relfilenode), incomplete (an unfinished pool creation's
 * temporary file).  detail says what is wrong.
 */
Datum
pm_index_pools(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	const char *dir = pmi_pool_dir();
	List	   *indexes = pmi_list_index_pools(true);
	bool	   *has_pool = palloc0(sizeof(bool) * (list_length(indexes) + 1));
	ListCell   *lc;
	DIR		   *d;
	struct dirent *de;

	InitMaterializedSRF(fcinfo, 0);
	d = AllocateDir(dir);
	while (d != NULL && (de = ReadDirExtended(d, dir, LOG)) != NULL)
	{
		Datum		values[POOLS_COLS] = {0};
		bool		nulls[POOLS_COLS] = {0};
		RelFileLocatorBackend rlocator;
		char	   *path;
		struct stat st;
		PmiPoolCondition c;
		bool		is_pmem;
		pm_error	err;
		size_t		len = strlen(de->d_name);
		bool		is_tmp = len > 4 && strcmp(de->d_name + len - 4, ".tmp") == 0;

		CHECK_FOR_INTERRUPTS();
		if (!is_tmp && !pmi_parse_pool_name(de->d_name, &rlocator))
			continue;
		path = psprintf("%s/%s", dir, de->d_name);
		if (stat(path, &st) != 0)
			continue;			/* removed meanwhile */
		values[0] = CStringGetTextDatum(path);
		values[4] = Int64GetDatum((int64) st.st_size);
		if (is_tmp)
		{
			nulls[1] = nulls[2] = nulls[3] = nulls[5] = nulls[6] = nulls[8] = true;
			values[7] = CStringGetTextDatum("incomplete");
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
			continue;
		}
		nulls[1] = true;
		if (rlocator.locator.dbOid == MyDatabaseId)
		{
			int			i = 0;

			foreach(lc, indexes)
			{
				PmiIndexPool *ip = lfirst(lc);

				if (RelFileLocatorBackendEquals(ip->rlocator, rlocator))
				{
					values[1] = ObjectIdGetDatum(ip->relid);
					nulls[1] = false;
					has_pool[i] = true;
					break;
				}
				i++;
			}
		}
		values[2] = ObjectIdGetDatum(rlocator.locator.dbOid);
		values[3] = ObjectIdGetDatum(rlocator.locator.relNumber);
		nulls[5] = nulls[6] = nulls[8] = true;
		pmi_pool_condition(path, RelFileLocatorBackendIsTemp(rlocator), &c);
		if (c.header_valid)
		{
			values[5] = CStringGetTextDatum(pm_mode_name((pm_mode) c.hdr.mode));
			nulls[5] = false;
			if (pm_path_is_pmem(path, &is_pmem, &err) == PM_OK)
			{
				values[6] = BoolGetDatum(is_pmem);
				nulls[6] = false;
			}
		}
		/* an orphan is garbage whatever its header says */
		if (!pmi_relfilenode_exists(rlocator) ||
			(rlocator.locator.dbOid == MyDatabaseId && nulls[1] && !catalog_names_relfilenode(rlocator)))
		{
			c.state = "orphan";
			c.detail = NULL;
		}
		values[7] = CStringGetTextDatum(c.state);
		if (c.detail != NULL)
		{
			values[8] = CStringGetTextDatum(c.detail);
			nulls[8] = false;
		}
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		pfree(path);
	}
	if (d != NULL)
		FreeDir(d);

	/* the indexes without a pool file */
	foreach(lc, indexes)
	{
		PmiIndexPool *ip = lfirst(lc);
		Datum		values[POOLS_COLS] = {0};
		bool		nulls[POOLS_COLS] = {0};
		char	   *path;
		PmiPoolCondition c;

		if (has_pool[foreach_current_index(lc)])
			continue;
		path = pmi_pool_path(ip->rlocator);
		pmi_pool_condition(path, RelFileLocatorBackendIsTemp(ip->rlocator), &c);
		values[0] = CStringGetTextDatum(path);
		values[1] = ObjectIdGetDatum(ip->relid);
		values[2] = ObjectIdGetDatum(ip->rlocator.locator.dbOid);
		values[3] = ObjectIdGetDatum(ip->rlocator.locator.relNumber);
		nulls[4] = nulls[5] = nulls[6] = true;
		values[7] = CStringGetTextDatum(c.state);
		values[8] = CStringGetTextDatum(c.detail);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

#define LOADED_COLS 8

/*
 * One row per index in the registry (used since startup, in any database):
 * database, tablespace, relfilenode, access method, state of its DRAM layer
 * (ready, building, not built), inserts and deletes since startup, and the
 * DRAM tier its layer holds (NULL until ready).  The registry lock keeps a
 * DRAM layer from being released while it is read; this backend's epoch
 * participant, registered before the lock is taken, keeps what the layer
 * retires from being reused while it is read.
 */
Datum
pm_index_loaded(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;

	InitMaterializedSRF(fcinfo, 0);
	pmi_registry_init_backend();
	(void) pmi_epoch();
	LWLockAcquire(pmi_shared->registry_lock, LW_SHARED);
	for (int i = 0; i < pmi_shared->nindexes; i++)
	{
		PmiSlot    *s = pmi_slot(i);
		const PmiAmOps *ops;
		Datum		values[LOADED_COLS];
		bool		nulls[LOADED_COLS] = {0};

		if (s->state == PMI_SLOT_FREE || s->rlocator.backend != INVALID_PROC_NUMBER)
			continue;			/* temporary indexes are their backend's
								 * business */
		ops = pmi_am_of_number(s->am);
		values[0] = ObjectIdGetDatum(s->rlocator.locator.dbOid);
		values[1] = ObjectIdGetDatum(s->rlocator.locator.spcOid);
		values[2] = ObjectIdGetDatum(s->rlocator.locator.relNumber);
		values[3] = CStringGetTextDatum(ops->amname);
		values[4] = CStringGetTextDatum(s->state == PMI_SLOT_READY ? "ready" :
										s->state == PMI_SLOT_BUILDING ? "building" : "not built");
		values[5] = Int64GetDatum((int64) pg_atomic_read_u64(&s->inserts));
		values[6] = Int64GetDatum((int64) pg_atomic_read_u64(&s->deletes));
		if (s->state != PMI_SLOT_READY)
			nulls[7] = true;
		else if (s->dram_root != 0 && ops->dram_bytes != NULL)
			values[7] = Int64GetDatum((int64) ops->dram_bytes(s->dram_root));
		else
			values[7] = Int64GetDatum(0);	/* a structure with no DRAM layer */
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	LWLockRelease(pmi_shared->registry_lock);
	return (Datum) 0;
}

/* The DRAM tier, cluster-wide: bytes it has, bytes in use, bytes it may grow to. */
Datum
pm_index_dram_tier(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	Datum		values[3];
	bool		nulls[3] = {0};
	pm_alloc_stats st;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	pm_alloc_get_stats(pmi_dram(), &st);
	values[0] = Int64GetDatum((int64) pm_pool_size(pmi_dram_pool));
	values[1] = Int64GetDatum((int64) st.bytes);
	values[2] = Int64GetDatum((int64) pmi_dram_pool->max_size);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/*
 * Open the pm_index index relid for function, with its access method in
 * *ops: an OID that names no relation is undefined_object, one of another
 * kind of relation wrong_object_type, as PostgreSQL's functions report them.
 */
static Relation
open_pm_index(Oid relid, const char *function, const PmiAmOps **ops)
{
	Relation	rel = try_relation_open(relid, AccessShareLock);

	if (rel == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("index with OID %u does not exist", relid)));
	*ops = rel->rd_rel->relkind == RELKIND_INDEX ? pmi_am_ops(rel->rd_rel->relam) : NULL;
	if (*ops == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a pm_index index", RelationGetRelationName(rel)),
				 errhint("%s takes an index of access method %s.", function, pmi_am_names())));
	return rel;
}

/*
 * Bytes of the index's pool file: what pg_relation_size() is for other
 * indexes (it shows only the metapage of these).
 */
Datum
pm_index_size(PG_FUNCTION_ARGS)
{
	const PmiAmOps *ops;
	Relation	index = open_pm_index(PG_GETARG_OID(0), "pm_index_size", &ops);
	char	   *path;
	struct stat st;

	path = pmi_pool_path(pmi_index_rnode(index));
	if (stat(path, &st) != 0)
	{
		if (errno == ENOENT)
			pmi_report_missing_pool(path, RelationGetRelationName(index));
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not stat pool file \"%s\" of index \"%s\": %m",
						path, RelationGetRelationName(index))));
	}
	relation_close(index, AccessShareLock);
	PG_RETURN_INT64((int64) st.st_size);
}

#define STATS_COLS 12

Datum
pm_index_stats(PG_FUNCTION_ARGS)
{
	const PmiAmOps *ops;
	Relation	index = open_pm_index(PG_GETARG_OID(0), "pm_index_stats", &ops);
	PmiIndex   *h;
	PmiSlot    *s;
	TupleDesc	tupdesc;
	Datum		values[STATS_COLS];
	bool		nulls[STATS_COLS] = {0};
	PmiShape	shape;
	uint64		writes;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	h = pmi_index_open(index, ops);
	s = pmi_slot(h->slotno);
	pmi_publish_counters(h);	/* other backends' last partial batch is not
								 * in yet */
	writes = pg_atomic_read_u64(&s->inserts) + pg_atomic_read_u64(&s->deletes);
	ops->shape(h, &shape);

	values[0] = Int64GetDatum(shape.entries);
	values[1] = Int64GetDatum(shape.leaves);
	values[2] = Int32GetDatum(shape.height);
	values[3] = Int64GetDatum(shape.pm_bytes);
	values[4] = Int64GetDatum(shape.dram_bytes);
	/* counters a structure does not keep (-1) are NULL */
	values[5] = Int64GetDatum(shape.splits);
	nulls[5] = shape.splits < 0;
	values[6] = Int64GetDatum(shape.compactions);
	nulls[6] = shape.compactions < 0;
	values[7] = Int64GetDatum(shape.merges);
	nulls[7] = shape.merges < 0;
	values[8] = Int64GetDatum((int64) pg_atomic_read_u64(&s->inserts));
	values[9] = Int64GetDatum((int64) pg_atomic_read_u64(&s->deletes));
	if (writes > 0)
	{
		values[10] = Float8GetDatum((double) pg_atomic_read_u64(&s->flushes) / writes);
		values[11] = Float8GetDatum((double) pg_atomic_read_u64(&s->fences) / writes);
	}
	else
		nulls[10] = nulls[11] = true;
	relation_close(index, AccessShareLock);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

#define TIER_LAG_COLS 3

/*
 * What waits in an index's operation log: entries, bytes, the oldest's
 * wait.  Takes no lock (monitoring must not wait for DDL) and loads
 * nothing: an index no backend has used since startup has nothing waiting
 * that a scan could miss (its first use applies the log).
 */
Datum
pm_index_tier_lag(PG_FUNCTION_ARGS)
{
	HeapTuple	tup = SearchSysCache1(RELOID, PG_GETARG_DATUM(0));
	TupleDesc	tupdesc;
	Datum		values[TIER_LAG_COLS] = {0};
	bool		nulls[TIER_LAG_COLS] = {false, false, true};
	int64		records = 0,
				bytes = 0;
	double		age = 0;
	int			slotno = -1;
	pm_pool    *pool = NULL;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	if (!HeapTupleIsValid(tup))
		PG_RETURN_NULL();
	if (((Form_pg_class) GETSTRUCT(tup))->relkind == RELKIND_INDEX &&
		pmi_am_ops(((Form_pg_class) GETSTRUCT(tup))->relam) != NULL)
	{
		RelFileLocatorBackend rlocator = pmi_class_rnode((Form_pg_class) GETSTRUCT(tup));

		slotno = pmi_registry_find(rlocator);
		if (slotno >= 0 && pmi_slot(slotno)->state == PMI_SLOT_READY)
			pool = pmi_pool_lookup(rlocator);
	}
	ReleaseSysCache(tup);
	if (pool != NULL)
		pmi_tier_lag(slotno, pool, &records, &bytes, &age);
	values[0] = Int64GetDatum(records);
	values[1] = Int64GetDatum(bytes);
	if (bytes > 0)
	{
		Interval   *wait = palloc0(sizeof(Interval));

		wait->time = (TimeOffset) (age * USECS_PER_SEC);
		values[2] = IntervalPGetDatum(wait);
		nulls[2] = false;
	}
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
