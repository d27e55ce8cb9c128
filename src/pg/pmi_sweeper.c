/*
 * pmi_sweeper.c
 *	  The pool sweeper: a background worker that runs once per postmaster
 *	  start, after recovery has finished (before that a main fork can be
 *	  missing only because redo has not recreated it yet).  It creates the
 *	  pool directory, says what durability the pools get, removes pools whose
 *	  relation's file is gone, marks pools that predate a start from an
 *	  archive without being kept by replay, starts the build of pools that
 *	  replaced a backup's copies or that replace pools an OS crash tore
 *	  (pmi_fill.c), and then, in every database, the check of each index's
 *	  pool and the loading of every index's DRAM layer (pmi_load.c).
 *
 *	  On a standby, a second worker starts the build of pools that replaced
 *	  a backup's copies (pmi_fill.c) and removes the pools of dropped indexes
 *	  while replay goes on: replay creates a pool after its relation's file
 *	  (the storage record comes before the build's), and removes that file
 *	  when it replays the drop, so a pool without one is an orphan there too.
 */
#include "pm_index.h"

#include <sys/stat.h>
#include <unistd.h>

#include "access/xlog.h"
#include "catalog/pg_tablespace_d.h"
#include "common/relpath.h"
#include "miscadmin.h"
#include "postmaster/bgworker.h"
#include "storage/bufpage.h"
#include "storage/fd.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "tcop/tcopprot.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

/* Does the metapage of the index at rlocator name the pool with this UUID? */
static bool
metapage_names_pool(RelFileLocatorBackend rlocator, const uint8 *uuid)
{
	char	   *path = pmi_relpath(rlocator, MAIN_FORKNUM);
	PGAlignedBlock page;
	PmiMetaPageData *meta = (PmiMetaPageData *) PageGetContents(page.data);
	int			fd = OpenTransientFile(path, O_RDONLY | PG_BINARY);
	bool		names;

	pfree(path);
	if (fd < 0)
		return false;
	names = pg_pread(fd, page.data, BLCKSZ, 0) == BLCKSZ && meta->version == PMI_META_VERSION &&
		memcmp(meta->pool_uuid, uuid, 16) == 0;
	CloseTransientFile(fd);
	return names;
}

/*
 * A pool under its index's old tablespace after ALTER DATABASE ... SET
 * TABLESPACE: the command renames the pools after it has committed, and a
 * crash can come between.  Its index is then the relation with the same
 * relfilenode in another tablespace whose metapage names this pool; give the
 * pool that relation's name.  True if it did.
 */
static bool
adopt_moved_pool(RelFileLocatorBackend rlocator, const char *path)
{
	pm_pool_header hdr;
	pm_error	err;
	List	   *tablespaces = list_make1_oid(DEFAULTTABLESPACE_OID);
	DIR		   *d;
	struct dirent *de;
	ListCell   *lc;
	bool		adopted = false;

	if (RelFileLocatorBackendIsTemp(rlocator) || pm_pool_read_header(path, &hdr, NULL, &err) != PM_OK)
		return false;
	d = AllocateDir("pg_tblspc");
	while ((de = ReadDirExtended(d, "pg_tblspc", LOG)) != NULL)
	{
		Oid			spc = atooid(de->d_name);

		if (OidIsValid(spc))
			tablespaces = lappend_oid(tablespaces, spc);
	}
	if (d != NULL)
		FreeDir(d);
	foreach(lc, tablespaces)
	{
		RelFileLocatorBackend moved = rlocator;
		char	   *moved_path;
		struct stat st;

		moved.locator.spcOid = lfirst_oid(lc);
		if (moved.locator.spcOid == rlocator.locator.spcOid || !metapage_names_pool(moved, hdr.uuid))
			continue;
		moved_path = pmi_pool_path(moved);
		if (stat(moved_path, &st) != 0 && errno == ENOENT &&
			durable_rename(path, moved_path, LOG) == 0)
		{
			ereport(LOG,
					(errmsg("pm_index: renamed pool file \"%s\" to \"%s\"", path, moved_path),
					 errdetail("Its index's database moved to another tablespace.")));
			adopted = true;
		}
		pfree(moved_path);
		break;
	}
	list_free(tablespaces);
	return adopted;
}

/*
 * Remove pools whose relfilenode is gone (unless a database move left them
 * under an old name), and temporary files that an interrupted pool creation
 * left before this postmaster started.  Returns the number of files removed.
 */
static int
sweep_orphans(void)
{
	const char *dir = pmi_pool_dir();
	DIR		   *d = AllocateDir(dir);
	struct dirent *de;
	int			removed = 0;
	pg_time_t	started = timestamptz_to_time_t(PgStartTime);

	while ((de = ReadDir(d, dir)) != NULL)
	{
		RelFileLocatorBackend rlocator;
		char	   *path;
		struct stat st;
		size_t		len = strlen(de->d_name);
		bool		orphan = false;

		CHECK_FOR_INTERRUPTS();
		path = psprintf("%s/%s", dir, de->d_name);
		if (len > 4 && strcmp(de->d_name + len - 4, ".tmp") == 0)
			orphan = stat(path, &st) == 0 && st.st_mtime < started;
		else if (pmi_parse_pool_name(de->d_name, &rlocator))
		{
			orphan = !pmi_relfilenode_exists(rlocator) && !adopt_moved_pool(rlocator, path);
			if (orphan)
				pmi_registry_release(rlocator);
		}
		if (orphan)
		{
			if (unlink(path) == 0)
			{
				removed++;
				ereport(LOG,
						(errmsg("pm_index: removed orphaned pool file \"%s\"", path),
						 errdetail("Its relation's file no longer exists.")));
			}
			else if (errno != ENOENT)
				ereport(LOG,
						(errcode_for_file_access(),
						 errmsg("pm_index: could not remove orphaned pool file \"%s\": %m", path)));
		}
		pfree(path);
	}
	FreeDir(d);
	return removed;
}

/* Mark every pool that predates a start from elsewhere, so later starts distrust it too. */
static void
mark_untrusted_pools(void)
{
	int			marked = pmi_mark_untrusted_pools(ERROR);

	if (marked > 0)
		ereport(LOG,
				(errmsg("pm_index: %d pools were not kept current by WAL replay; their indexes need REINDEX",
						marked)));
}

/* Tell the administrator once per start what durability the pools get. */
static void
report_durability(void)
{
	char	   *probe = psprintf("%s/durability_probe.tmp", pmi_pool_dir());
	int			fd = open(probe, O_RDWR | O_CREAT | O_TRUNC, 0600);
	bool		is_pmem = false;
	pm_error	err;

	if (fd < 0 || ftruncate(fd, 4096) != 0)
	{
		ereport(WARNING,
				(errcode_for_file_access(),
				 errmsg("pm_index: could not create a file in pool directory \"%s\": %m",
						pmi_pool_dir()),
				 errhint("pm_index indexes cannot be created until the directory is writable.")));
		if (fd >= 0)
			close(fd);
		pfree(probe);
		return;
	}
	close(fd);
	if (pm_path_is_pmem(probe, &is_pmem, &err) != PM_OK)
		is_pmem = false;
	unlink(probe);
	if (!is_pmem && pmi_persistence_guc == PM_MODE_AUTO)
		ereport(LOG,
				(errmsg("pm_index: pool directory \"%s\" is not on persistent memory; "
						"pm_index.persistence = auto uses eadr semantics there",
						pmi_pool_dir()),
				 errdetail("Pools survive process and server crashes. After an operating "
						   "system crash or power failure, indexes whose pools were in use are "
						   "rebuilt from their tables by a background worker."),
				 errhint("Point pm_index.pool_dir into a DAX filesystem on persistent memory, "
						 "or set pm_index.persistence = msync.")));
	pfree(probe);
}

/* How often a standby looks for the pools of dropped indexes. */
#define STANDBY_SWEEP_INTERVAL_MS	10000

void
pmi_standby_sweeper_main(Datum arg)
{
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();
	pmi_launch_fills();
	while (RecoveryInProgress())
	{
		(void) sweep_orphans();
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 STANDBY_SWEEP_INTERVAL_MS, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
	proc_exit(0);
}

/*
 * Connected to no database: it reads the shared catalog of databases, to
 * start a worker in each that checks the pools of its indexes (pmi_load.c).
 * Without a pool directory there is nothing to sweep or build, but those
 * checks still name every index that cannot be used.
 */
void
pmi_sweeper_main(Datum arg)
{
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnection(NULL, NULL, 0);
	if (pmi_ensure_pool_dir(WARNING))
	{
		report_durability();
		(void) sweep_orphans();
		if (pmi_started_from_elsewhere)
			mark_untrusted_pools();
		pmi_launch_fills();
	}
	pmi_launch_loads();
	proc_exit(0);
}
