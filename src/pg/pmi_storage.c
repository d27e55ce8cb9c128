/*
 * pmi_storage.c
 *	  Pools follow the storage commands that move or copy an index's files
 *	  without building it again.
 *
 * PostgreSQL gives an index a new relfilenode and copies its files block by
 * block for ALTER INDEX ... SET TABLESPACE (also spelt ALTER TABLE, and
 * ALTER INDEX ALL IN TABLESPACE); it copies a whole database for CREATE
 * DATABASE ... TEMPLATE and moves one for ALTER DATABASE ... SET
 * TABLESPACE.  None of these calls the access method, so a ProcessUtility
 * hook makes the pools follow:
 *
 * - SET TABLESPACE (transactional): the database's pm_index indexes and
 *   their relfilenodes are noted before the command; afterwards each index
 *   whose relfilenode changed gets a copy of its pool under the new name,
 *   made in the command's transaction (the command holds the index's
 *   exclusive lock, so nobody writes the pool meanwhile).  The copy is a
 *   pool created by the transaction, removed if it aborts; the old pool
 *   goes with the old relfilenode when it commits (pmi_registry.c).
 * - CREATE DATABASE: the template's pools are copied under the new
 *   database's names, the template's default tablespace mapped to the new
 *   database's as the command maps it.  The command's lock on the template
 *   keeps everyone out of it until the copies are done.
 * - ALTER DATABASE ... SET TABLESPACE: the move has committed when the
 *   command returns (nobody may be connected to that database); the pools
 *   of the old default tablespace are renamed to the new one.
 *
 * Pools stay in pm_index.pool_dir whatever the tablespace: a tablespace is
 * where PostgreSQL keeps blocks, the pool directory is where the server's
 * persistent memory is mounted, and the tablespace is part of a pool's name
 * only.
 */
#include "pm_index.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_database.h"
#include "commands/dbcommands.h"
#include "commands/defrem.h"
#include "miscadmin.h"
#include "tcop/utility.h"
#include "utils/syscache.h"

static ProcessUtility_hook_type prev_ProcessUtility = NULL;

/* After SET TABLESPACE: a copy of each moved index's pool under its new relfilenode. */
static void
follow_moved_indexes(List *before)
{
	ListCell   *lc;

	foreach(lc, before)
	{
		PmiIndexPool *f = lfirst(lc);
		HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(f->relid));
		RelFileLocatorBackend now;

		if (!HeapTupleIsValid(tup))
			continue;
		now = pmi_class_rnode((Form_pg_class) GETSTRUCT(tup));
		ReleaseSysCache(tup);
		if (RelFileLocatorBackendEquals(now, f->rlocator))
			continue;
		pmi_note_pool_created(now);
		pmi_tier_copy_pool(f->rlocator, now, false);
		pmi_log_copy(f->rlocator, now, false);
	}
}

static Oid
database_tablespace(Oid dbid)
{
	HeapTuple	tup = SearchSysCache1(DATABASEOID, ObjectIdGetDatum(dbid));
	Oid			spc;

	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for database %u", dbid);
	spc = ((Form_pg_database) GETSTRUCT(tup))->dattablespace;
	ReleaseSysCache(tup);
	return spc;
}

/*
 * The pools of database from, under database to's names: copied, or moved
 * (then the registry forgets them under their old names).  Pools in
 * tablespace from_spc go to to_spc.
 */
static void
follow_database(Oid from, Oid from_spc, Oid to, Oid to_spc, bool move)
{
	List	   *pools = pmi_list_pools(from, LOG);
	ListCell   *lc;

	foreach(lc, pools)
	{
		RelFileLocatorBackend old = *(RelFileLocatorBackend *) lfirst(lc);
		RelFileLocatorBackend new = old;

		CHECK_FOR_INTERRUPTS();
		if (RelFileLocatorBackendIsTemp(old))
			continue;			/* an orphan: no session is connected to from */
		new.locator.dbOid = to;
		if (old.locator.spcOid == from_spc)
			new.locator.spcOid = to_spc;
		if (RelFileLocatorBackendEquals(old, new))
			continue;
		if (move)
			pmi_registry_release(old);
		pmi_tier_copy_pool(old, new, move);
		pmi_log_copy(old, new, move);
	}
	list_free_deep(pools);
}

static char *
option_string(List *options, const char *name)
{
	ListCell   *lc;

	foreach(lc, options)
	{
		DefElem    *d = lfirst(lc);

		if (strcmp(d->defname, name) == 0 && d->arg != NULL)
			return defGetString(d);
	}
	return NULL;
}

static bool
sets_tablespace(AlterTableStmt *stmt)
{
	ListCell   *lc;

	foreach(lc, stmt->cmds)
	{
		if (((AlterTableCmd *) lfirst(lc))->subtype == AT_SetTableSpace)
			return true;
	}
	return false;
}

static void
pmi_process_utility(PlannedStmt *pstmt, const char *queryString, bool readOnlyTree,
					ProcessUtilityContext context, ParamListInfo params,
					QueryEnvironment *queryEnv, DestReceiver *dest, QueryCompletion *qc)
{
	Node	   *stmt = pstmt->utilityStmt;
	List	   *indexes = NIL;
	Oid			moved_db = InvalidOid;
	Oid			moved_from = InvalidOid;

	if (IsA(stmt, AlterTableMoveAllStmt) ||
		(IsA(stmt, AlterTableStmt) && sets_tablespace((AlterTableStmt *) stmt)))
		indexes = pmi_list_index_pools(false);
	else if (IsA(stmt, AlterDatabaseStmt) &&
			 option_string(((AlterDatabaseStmt *) stmt)->options, "tablespace") != NULL)
	{
		moved_db = get_database_oid(((AlterDatabaseStmt *) stmt)->dbname, false);
		moved_from = database_tablespace(moved_db);
	}

	if (prev_ProcessUtility)
		prev_ProcessUtility(pstmt, queryString, readOnlyTree, context, params, queryEnv,
							dest, qc);
	else
		standard_ProcessUtility(pstmt, queryString, readOnlyTree, context, params, queryEnv,
								dest, qc);

	if (indexes != NIL)
	{
		CommandCounterIncrement();
		follow_moved_indexes(indexes);
	}
	else if (OidIsValid(moved_db))
		follow_database(moved_db, moved_from, moved_db, database_tablespace(moved_db), true);
	else if (IsA(stmt, CreatedbStmt))
	{
		CreatedbStmt *c = (CreatedbStmt *) stmt;
		char	   *template = option_string(c->options, "template");
		Oid			from = get_database_oid(template ? template : "template1", false);
		Oid			to = get_database_oid(c->dbname, false);

		follow_database(from, database_tablespace(from), to, database_tablespace(to), false);
	}
}

void
pmi_storage_init(void)
{
	prev_ProcessUtility = ProcessUtility_hook;
	ProcessUtility_hook = pmi_process_utility;
}
