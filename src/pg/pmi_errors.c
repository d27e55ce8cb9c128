/*
 * pmi_errors.c
 *	  The core's errors (pm_error, src/core/pool.h) as PostgreSQL errors: a
 *	  SQLSTATE and a HINT saying what to do for each kind of failure.
 */
#include "pm_index.h"

/* What to do when a pool cannot be mapped for lack of address space. */
const char	pmi_address_space_hint[] =
"A server process maps about twice the size of each pool it uses (pm_index_pools() lists their sizes): raise the server's address-space limit (ulimit -v) or vm.max_map_count, or use fewer pm_index indexes per session.";

/* The SQLSTATE of a core error, and into *hint what to do about it (or NULL). */
int
pmi_core_error_sqlstate(const pm_error *err, const char **hint)
{
	int			sqlstate;

	*hint = NULL;

	switch (err->code)
	{
		case PM_ERR_NOTFOUND:
			sqlstate = ERRCODE_UNDEFINED_FILE;
			*hint = "If the pool file was removed, REINDEX the index to rebuild it.";
			break;
		case PM_ERR_EXISTS:
			sqlstate = ERRCODE_DUPLICATE_FILE;
			break;
		case PM_ERR_PERMISSION:
			sqlstate = ERRCODE_INSUFFICIENT_PRIVILEGE;
			*hint = "Check that pm_index.pool_dir and its files are writable by the server's operating system user.";
			break;
		case PM_ERR_OWNERSHIP:
			sqlstate = ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE;
			*hint = "Pool files must belong to the server's operating system user and be writable by it alone (mode 0600): fix the file's owner or mode, or REINDEX the index to create a new pool.";
			break;
		case PM_ERR_NOSPACE:
			sqlstate = ERRCODE_DISK_FULL;
			*hint = "Free space in the filesystem of pm_index.pool_dir.";
			break;
		case PM_ERR_ARENA_FULL:
			sqlstate = ERRCODE_CONFIGURATION_LIMIT_EXCEEDED;
			*hint = "The DRAM tier grows up to pm_index.max_dram_tier_size and as memory allows: raise the setting and restart the server, or free memory (pm_index_stats() shows each index's DRAM bytes).";
			break;
		case PM_ERR_CORRUPT:
			sqlstate = ERRCODE_INDEX_CORRUPTED;
			*hint = "REINDEX the index to rebuild its pool.";
			break;
		case PM_ERR_VERSION:
			sqlstate = ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE;
			*hint = "The pool was written by another version of pm_index, whose pool format this library does not read: REINDEX the index to rebuild its pool in this version's format.";
			break;
		case PM_ERR_INVALID:
			sqlstate = ERRCODE_INVALID_PARAMETER_VALUE;
			break;
		case PM_ERR_LIMIT:
			sqlstate = ERRCODE_PROGRAM_LIMIT_EXCEEDED;
			break;
		case PM_ERR_POOL_MAX:
			sqlstate = ERRCODE_PROGRAM_LIMIT_EXCEEDED;
			*hint = "A pool keeps the maximum size it was created with: raise pm_index.max_pool_size, then REINDEX the index so that its new pool may grow to it.";
			break;
		case PM_ERR_NOMEM:
			sqlstate = ERRCODE_OUT_OF_MEMORY;
			break;
		case PM_ERR_IO:
		default:
			sqlstate = ERRCODE_IO_ERROR;
			break;
	}
	if (err->sys_errno == ENOMEM)
	{
		sqlstate = ERRCODE_OUT_OF_MEMORY;
		*hint = pmi_address_space_hint;
	}
	return sqlstate;
}

void
pmi_report_core_error(int elevel, const pm_error *err, const char *index_name)
{
	const char *hint;
	int			sqlstate = pmi_core_error_sqlstate(err, &hint);

	ereport(elevel,
			(errcode(sqlstate),
			 errmsg("%s", err->msg),
			 hint ? errhint("%s", hint) : 0,
			 index_name ? errcontext("index \"%s\"", index_name) : 0));
}
