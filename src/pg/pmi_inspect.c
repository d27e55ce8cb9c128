/*
 * pmi_inspect.c
 *	  SQL-callable inspection functions: pm_index_version(), pm_index_pools(),
 *	  pm_index_loaded(), pm_index_dram_tier(), pm_index_size(),
 *	  pm_index_stats().
 */
#include "pm_index.h"

#include <sys/stat.h>

#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/fd.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/relfilenodemap.h"
#include "access/genam.h"
#include "commands/defrem.h"

PG_FUNCTION_INFO_V1(pm_index_version);
PG_FUNCTION_INFO_V1(pm_index_pools);
PG_FUNCTION_INFO_V1(pm_index_stats);
PG_FUNCTION_INFO_V1(pm_index_loaded);
PG_FUNCTION_INFO_V1(pm_index_dram_tier);
PG_FUNCTION_INFO_V1(pm_index_size);

Datum
pm_index_version(PG_FUNCTION_ARGS)
{
	PG_RETURN_TEXT_P(cstring_to_text(PM_INDEX_VERSION));
}

#define POOLS_COLS 9

/*
 * One row per file in the pool directory: path, owning index (when it is in
 * the current database), database, relfilenode, bytes, mode, is_pmem, state,
 * detail.  State: clean (shut down cleanly), in use, orphan (its relation's
 * file is gone), inaccessible (the server may not read it, or must not trust
 * it: its owner or mode is wrong), corrupt (the header does not validate;
 * detail says why for both),
 * needs reindex (the pool predates a recovery from an archive or a primary
 * without being kept by replay, or an OS crash may have torn it), building
 * (a background build fills it: pmi_fill.c), temporary (an unfinished pool
 * creation).
 */
Datum
pm_index_pools(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	const char *dir = pmi_pool_dir();
	DIR		   *d;
	struct dirent *de;

	InitMaterializedSRF(fcinfo, 0);
	d = AllocateDir(dir);
	if (d == NULL && errno == ENOENT)
		return (Datum) 0;		/* no pool created yet */
	while ((de = ReadDir(d, dir)) != NULL)
	{
		Datum		values[POOLS_COLS] = {0};
		bool		nulls[POOLS_COLS] = {0};
		RelFileNodeBackend rnode;
		char	   *path;
		struct stat st;
		pm_pool_header hdr;
		pm_error	err;
		bool		is_pmem;
		size_t		len = strlen(de->d_name);
		bool		is_tmp = len > 4 && strcmp(de->d_name + len - 4, ".tmp") == 0;

		CHECK_FOR_INTERRUPTS();
		if (!is_tmp && !pmi_parse_pool_name(de->d_name, &rnode))
			continue;
		path = psprintf("%s/%s", dir, de->d_name);
		if (stat(path, &st) != 0)
			continue;			/* removed meanwhile */
		values[0] = CStringGetTextDatum(path);
		values[4] = Int64GetDatum((int64) st.st_size);
		if (is_tmp)
		{
			nulls[1] = nulls[2] = nulls[3] = nulls[5] = nulls[6] = nulls[8] = true;
			values[7] = CStringGetTextDatum("temporary");
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
			continue;
		}
		if (rnode.node.dbNode == MyDatabaseId)
		{
			Oid			relid = RelidByRelfilenode(rnode.node.spcNode == MyDatabaseTableSpace ?
												   0 : rnode.node.spcNode, rnode.node.relNode);

			values[1] = ObjectIdGetDatum(relid);
			nulls[1] = !OidIsValid(relid);
		}
		else
			nulls[1] = true;
		values[2] = ObjectIdGetDatum(rnode.node.dbNode);
		values[3] = ObjectIdGetDatum(rnode.node.relNode);
		nulls[5] = nulls[6] = nulls[8] = true;
		if (pm_pool_read_header(path, &hdr, NULL, &err) == PM_OK)
		{
			values[5] = CStringGetTextDatum(pm_mode_name((pm_mode) hdr.mode));
			nulls[5] = false;
			if (pm_path_is_pmem(path, &is_pmem, &err) == PM_OK)
			{
				values[6] = BoolGetDatum(is_pmem);
				nulls[6] = false;
			}
		}
		else
		{
			values[8] = CStringGetTextDatum(err.msg);
			nulls[8] = false;
		}
		/* an orphan is garbage whatever its header says: the sweep will remove it */
		if (!pmi_relfilenode_exists(rnode))
			values[7] = CStringGetTextDatum("orphan");
		else if (nulls[5] && err.code == PM_ERR_VERSION)
			values[7] = CStringGetTextDatum("needs reindex");
		else if (nulls[5])
			values[7] = CStringGetTextDatum(pm_errcode_is_access(err.code) ?
											"inaccessible" : "corrupt");
		else if ((hdr.flags & PM_POOL_FLAG_UNTRUSTED) || pm_header_torn(&hdr, pm_current_boot()))
			values[7] = CStringGetTextDatum("needs reindex");
		else if (hdr.flags & PM_POOL_FLAG_BUILDING)
			values[7] = CStringGetTextDatum("building");
		else
			values[7] = CStringGetTextDatum(hdr.clean_shutdown == PM_POOL_CLEAN ? "clean" : "in use");
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		pfree(path);
	}
	FreeDir(d);
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

		if (s->state == PMI_SLOT_FREE || s->rnode.backend != InvalidBackendId)
			continue;			/* temporary indexes are their backend's business */
		ops = pmi_am_of_number(s->am);
		values[0] = ObjectIdGetDatum(s->rnode.node.dbNode);
		values[1] = ObjectIdGetDatum(s->rnode.node.spcNode);
		values[2] = ObjectIdGetDatum(s->rnode.node.relNode);
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

static const PmiAmOps *
ops_or_error(Relation index, const char *function)
{
	const PmiAmOps *ops = pmi_am_ops(index->rd_rel->relam);

	if (ops == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a pm_index index", RelationGetRelationName(index)),
				 errhint("%s takes an index of access method %s.", function, pmi_am_names())));
	return ops;
}

/*
 * Bytes of the index's pool file: what pg_relation_size() is for other
 * indexes (it shows only the metapage of these).
 */
Datum
pm_index_size(PG_FUNCTION_ARGS)
{
	Relation	index = index_open(PG_GETARG_OID(0), AccessShareLock);
	char	   *path;
	struct stat st;

	ops_or_error(index, "pm_index_size");
	path = pmi_pool_path(pmi_index_rnode(index));
	if (stat(path, &st) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not stat pool file \"%s\" of index \"%s\": %m",
						path, RelationGetRelationName(index)),
				 errhint("If the pool file was removed, REINDEX the index to rebuild it.")));
	index_close(index, AccessShareLock);
	PG_RETURN_INT64((int64) st.st_size);
}

#define STATS_COLS 12

Datum
pm_index_stats(PG_FUNCTION_ARGS)
{
	Oid			indexoid = PG_GETARG_OID(0);
	Relation	index = index_open(indexoid, AccessShareLock);
	const PmiAmOps *ops = ops_or_error(index, "pm_index_stats");
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
	pmi_publish_counters(h);	/* other backends' last partial batch is not in yet */
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
	index_close(index, AccessShareLock);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
