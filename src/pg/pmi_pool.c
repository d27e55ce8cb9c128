/*
 * pmi_pool.c
 *	  Pool files of PostgreSQL relations: the pool directory, naming, the
 *	  per-backend cache of open pools, copies.
 *
 * A pool is named after its index's (tablespace, database, relfilenode), so
 * it follows PostgreSQL's own file lifecycle: REINDEX, TRUNCATE, VACUUM FULL
 * and SET TABLESPACE make a new relfilenode and therefore a new pool.  The
 * rule for removal is the one PostgreSQL applies to its own files: a pool
 * whose relation's main fork no longer exists is garbage (pmi_sweeper.c).
 */
#include "pm_index.h"

#include <sys/stat.h>

#include "access/table.h"
#include "catalog/namespace.h"
#include "miscadmin.h"
#include "storage/copydir.h"
#include "utils/inval.h"
#include "utils/memutils.h"
#include "utils/rel.h"

typedef struct PoolCacheEntry
{
	RelFileLocatorBackend rlocator;	/* hash key */
	Oid			relid;			/* index that opened it, for invalidation */
	pm_pool    *pool;
	dev_t		dev;			/* identity of the mapped file */
	ino_t		ino;
	bool		revalidate;		/* relcache invalidation seen since last use */
} PoolCacheEntry;

static HTAB *pool_cache = NULL;


/*
 * The pool directory as an absolute path (messages name files in full): a
 * relative pm_index.pool_dir is under the data directory, as log_directory
 * is.
 */
const char *
pmi_pool_dir(void)
{
	static char *dir = NULL;

	if (dir == NULL)
	{
		const char *setting = pmi_pool_dir_guc;
		MemoryContext oldcxt = MemoryContextSwitchTo(TopMemoryContext);

		dir = is_absolute_path(setting) ? pstrdup(setting) : psprintf("%s/%s", DataDir, setting);
		canonicalize_path(dir);
		MemoryContextSwitchTo(oldcxt);
	}
	return dir;
}

/* What names an index's pool: its relfilenode, and for a temporary index its backend. */
RelFileLocatorBackend
pmi_index_rnode(Relation index)
{
	RelFileLocatorBackend rlocator;

	rlocator.locator = index->rd_locator;
	rlocator.backend = index->rd_backend;
	return rlocator;
}

/*
 * The pool file name of rlocator, into buf; no allocation, no error.  As with
 * relation files, a temporary relation's name carries its backend
 * ("t<backend>_"): two backends' temporary relfilenodes may be equal.
 */
static void
format_pool_path(char *buf, size_t len, RelFileLocatorBackend rlocator)
{
	if (RelFileLocatorBackendIsTemp(rlocator))
		snprintf(buf, len, "%s/t%d_%u_%u_%u%s", pmi_pool_dir(), rlocator.backend,
				 rlocator.locator.spcOid, rlocator.locator.dbOid, rlocator.locator.relNumber, PMI_POOL_SUFFIX);
	else
		snprintf(buf, len, "%s/%u_%u_%u%s", pmi_pool_dir(), rlocator.locator.spcOid,
				 rlocator.locator.dbOid, rlocator.locator.relNumber, PMI_POOL_SUFFIX);
}

char *
pmi_pool_path(RelFileLocatorBackend rlocator)
{
	char		buf[MAXPGPATH];

	format_pool_path(buf, sizeof(buf), rlocator);
	return pstrdup(buf);
}

bool
pmi_parse_pool_name(const char *name, RelFileLocatorBackend *rlocator)
{
	unsigned	spc,
				db,
				rel;
	int			backend = INVALID_PROC_NUMBER;
	int			consumed = 0;

	if (name[0] == 't')
	{
		if (sscanf(name, "t%d_%u_%u_%u%n", &backend, &spc, &db, &rel, &consumed) != 4 ||
			backend <= 0)
			return false;
	}
	else if (sscanf(name, "%u_%u_%u%n", &spc, &db, &rel, &consumed) != 3)
		return false;
	if (strcmp(name + consumed, PMI_POOL_SUFFIX) != 0)
		return false;
	rlocator->locator.spcOid = spc;
	rlocator->locator.dbOid = db;
	rlocator->locator.relNumber = rel;
	rlocator->backend = backend;
	return true;
}

/* Does the relation's main fork exist?  (It does while the relfilenode is live.) */
bool
pmi_relfilenode_exists(RelFileLocatorBackend rlocator)
{
	char	   *path = pmi_relpath(rlocator, MAIN_FORKNUM);
	struct stat st;
	bool		exists = stat(path, &st) == 0 || errno != ENOENT;

	pfree(path);
	return exists;
}

/*
 * Is the pool directory a path relative to the data directory?  Such a
 * directory is created when it is missing; an absolute one must exist: it
 * is where persistent memory is mounted, and a mount point that is not
 * mounted must not become a directory on another filesystem.
 */
static bool
pool_dir_in_data_dir(void)
{
	return !is_absolute_path(pmi_pool_dir_guc);
}

/*
 * Make sure the pool directory exists, creating one under the data
 * directory; true if it does.  Otherwise reports why at elevel.
 */
bool
pmi_ensure_pool_dir(int elevel)
{
	const char *dir = pmi_pool_dir();
	struct stat st;

	if (stat(dir, &st) == 0)
	{
		if (S_ISDIR(st.st_mode))
			return true;
		ereport(elevel,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("pm_index.pool_dir \"%s\" is not a directory", dir)));
		return false;
	}
	if (errno == ENOENT && pool_dir_in_data_dir())
	{
		if (MakePGDirectory(dir) == 0 || errno == EEXIST)
			return true;
	}
	ereport(elevel,
			(errcode_for_file_access(),
			 errmsg("could not access pool directory \"%s\": %m", dir),
			 errhint("Create the directory named by pm_index.pool_dir, owned by the server's "
					 "operating system user, or reset pm_index.pool_dir to use the data directory.")));
	return false;
}

/* Does the pool directory hold any pool file? */
static bool
pool_dir_holds_pools(const char *dir)
{
	DIR		   *d = AllocateDir(dir);
	struct dirent *de;
	bool		holds = false;

	while (!holds && (de = ReadDirExtended(d, dir, LOG)) != NULL)
	{
		RelFileLocatorBackend rlocator;

		holds = pmi_parse_pool_name(de->d_name, &rlocator);
	}
	if (d != NULL)
		FreeDir(d);
	return holds;
}

/*
 * Why the pool file at path is not there, for a message: its directory is
 * missing or cannot be read, or holds no pool at all (pm_index.pool_dir
 * names another directory than the pools', or the filesystem holding them
 * is not mounted), or this file alone is gone.  REINDEX is the remedy only
 * in the last case: in the others every index's pool is where the
 * directory is.
 */
static void
pmi_pool_missing(const char *path, PmiMissingPool *m)
{
	const char *dir = pmi_pool_dir();
	struct stat st;
	int			rc = stat(dir, &st);

	m->detail = NULL;
	if (rc != 0 || !S_ISDIR(st.st_mode))
	{
		int			save_errno = rc != 0 ? errno : ENOTDIR;
		bool		gone = save_errno == ENOENT;

		m->sqlstate = gone ? ERRCODE_UNDEFINED_FILE :
			(save_errno == EACCES || save_errno == EPERM) ? ERRCODE_INSUFFICIENT_PRIVILEGE :
			ERRCODE_IO_ERROR;
		errno = save_errno;
		m->message = gone ? psprintf("pool directory \"%s\" does not exist", dir) :
			psprintf("could not access pool directory \"%s\": %m", dir);
		m->detail = psprintf("The index's pool file is \"%s\".", path);
		m->hint = !pool_dir_in_data_dir() ?
			"Mount or create the directory pm_index.pool_dir names, or set pm_index.pool_dir to the directory holding the pools, and restart the server." :
			gone ? "The pool directory under the data directory was removed: restore it, or REINDEX the index to build its pool again." :
			"Check that pm_index.pool_dir and its files are readable and writable by the server's operating system user.";
		return;
	}
	m->sqlstate = ERRCODE_UNDEFINED_FILE;
	if (!pool_dir_holds_pools(dir))
	{
		m->message = psprintf("pool file \"%s\" does not exist, and pool directory \"%s\" holds no pool file",
							  path, dir);
		m->hint = "If pm_index.pool_dir was changed or the filesystem holding the pools is not mounted, set it to the directory holding the pools, or mount it, and restart the server; if the pools were removed, REINDEX the index.";
	}
	else
	{
		m->message = psprintf("pool file \"%s\" does not exist", path);
		m->hint = "If the pool file was removed, REINDEX the index to build it again.";
	}
}

/* ERROR: the pool file of index_name at path is not there (pmi_pool_missing says why). */
void
pmi_report_missing_pool(const char *path, const char *index_name)
{
	PmiMissingPool m;

	pmi_pool_missing(path, &m);
	ereport(ERROR,
			(errcode(m.sqlstate),
			 errmsg("%s", m.message),
			 m.detail ? errdetail("%s", m.detail) : 0,
			 errhint("%s", m.hint),
			 errcontext("index \"%s\"", index_name)));
	pg_unreachable();
}

/*
 * The condition of the pool file at path, from its header: what
 * pm_index_pools() shows (a pool whose index is gone is an orphan, which the
 * caller decides), what is wrong and what to do.  temporary: the pool of a
 * temporary index.
 */
void
pmi_pool_condition(const char *path, bool temporary, PmiPoolCondition *c)
{
	pm_error	err;

	c->detail = NULL;
	c->hint = NULL;
	c->unusable = false;
	c->header_valid = pm_pool_read_header(path, &c->hdr, NULL, &err) == PM_OK;
	if (!c->header_valid)
	{
		c->unusable = true;
		if (err.code == PM_ERR_NOTFOUND)
		{
			PmiMissingPool m;

			pmi_pool_missing(path, &m);
			c->state = m.sqlstate == ERRCODE_UNDEFINED_FILE ? "missing" : "inaccessible";
			c->detail = m.message;
			c->hint = m.hint;
			return;
		}
		c->state = err.code == PM_ERR_VERSION ? "needs reindex" :
			pm_errcode_is_access(err.code) ? "inaccessible" : "corrupt";
		c->detail = pstrdup(err.msg);
		(void) pmi_core_error_sqlstate(&err, &c->hint);
		return;
	}
	if (c->hdr.flags & PM_POOL_FLAG_UNTRUSTED)
	{
		c->state = "needs reindex";
		c->detail = "the pool was not kept current by WAL replay, or replay could not apply a change to it";
		c->hint = "REINDEX the index.";
		c->unusable = true;
	}
	else if (pm_header_torn(&c->hdr, pm_current_boot()))
	{
		c->state = "needs reindex";
		c->detail = "the pool was in use when the operating system stopped, on storage that may lose writes then";
		c->hint = "On a primary its first use replaces it with one a background worker builds from the table.";
	}
	else if (c->hdr.flags & PM_POOL_FLAG_BUILDING)
	{
		c->state = "building";
		c->detail = "a background worker is building the pool from its table; queries do not use the index until then";
	}
	else if (temporary)
		c->state = "temporary";
	else
		c->state = c->hdr.clean_shutdown == PM_POOL_CLEAN ? "clean" : "in use";
}

static void
pool_cache_invalidate(Datum arg, Oid relid)
{
	HASH_SEQ_STATUS status;
	PoolCacheEntry *e;

	if (pool_cache == NULL)
		return;
	hash_seq_init(&status, pool_cache);
	while ((e = hash_seq_search(&status)) != NULL)
	{
		if (relid == InvalidOid || e->relid == relid)
			e->revalidate = true;
	}
}

static void
pool_cache_init(void)
{
	HASHCTL		ctl;

	ctl.keysize = sizeof(RelFileLocatorBackend);
	ctl.entrysize = sizeof(PoolCacheEntry);
	ctl.hcxt = TopMemoryContext;
	pool_cache = hash_create("pm_index pool cache", 64, &ctl,
							 HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	CacheRegisterRelcacheCallback(pool_cache_invalidate, (Datum) 0);
}

/* Remember pool as this backend's mapping for e, with the identity of its file. */
static void
cache_entry_set(PoolCacheEntry *e, pm_pool *pool, const struct stat *st)
{
	e->pool = pool;
	e->relid = InvalidOid;
	e->dev = st->st_dev;
	e->ino = st->st_ino;
	e->revalidate = false;
}

/*
 * Open a pool that this backend's cache keeps, or close one: the file stays
 * open as long as it is mapped, so it is counted against the descriptors
 * PostgreSQL budgets for (fd.c then keeps fewer of its own open), or a
 * backend that uses many indexes (a database-wide VACUUM) runs out.
 */
static pm_errcode
cached_pool_open(const char *path, pm_pool **pool, pm_error *err)
{
	pm_errcode	rc;

	ReserveExternalFD();
	rc = pm_pool_open(path, (pm_mode) pmi_persistence_guc, pool, err);
	if (rc != PM_OK)
		ReleaseExternalFD();
	return rc;
}

static void
cached_pool_close(pm_pool *pool)
{
	pm_pool_close(pool);
	ReleaseExternalFD();
}

/*
 * Must a cached mapping be checked against the file?  After a relcache
 * invalidation of its index, and while it is torn: the first user of a torn
 * pool replaces the file (pmi_first_use.c), with no invalidation.
 */
static inline bool
mapping_may_be_stale(const PoolCacheEntry *e)
{
	return e->revalidate || e->pool->torn;
}

/* Is the file at path still the one e maps? */
static bool
mapping_is_of_file(const PoolCacheEntry *e, const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && st.st_dev == e->dev && st.st_ino == e->ino;
}

/*
 * Open (map) the pool of an index, or return this backend's open mapping of
 * it.  A mapping is re-checked against the file when it may be stale
 * (mapping_may_be_stale), so a pool replaced on disk is never used through
 * a stale mapping.  Errors are reported with ERROR, naming the index.
 */
pm_pool *
pmi_pool_open(Relation index)
{
	RelFileLocatorBackend rlocator = pmi_index_rnode(index);
	PoolCacheEntry *e;
	bool		found;
	char	   *path = NULL;
	struct stat st;
	pm_error	err;
	pm_pool    *pool;

	if (pool_cache == NULL)
		pool_cache_init();
	e = hash_search(pool_cache, &rlocator, HASH_ENTER, &found);
	if (found && e->pool != NULL)
	{
		if (!mapping_may_be_stale(e))
			return e->pool;
		path = pmi_pool_path(rlocator);
		if (mapping_is_of_file(e, path))
		{
			e->revalidate = false;
			pfree(path);
			return e->pool;
		}
		cached_pool_close(e->pool);
		e->pool = NULL;
	}
	if (path == NULL)
		path = pmi_pool_path(rlocator);
	e->relid = InvalidOid;
	e->pool = NULL;
	if (cached_pool_open(path, &pool, &err) != PM_OK)
	{
		hash_search(pool_cache, &rlocator, HASH_REMOVE, NULL);
		if (err.code == PM_ERR_NOTFOUND)
			pmi_report_missing_pool(path, RelationGetRelationName(index));
		pmi_report_core_error(ERROR, &err, RelationGetRelationName(index));
	}
	if (fstat(pool->fd, &st) != 0)
	{
		cached_pool_close(pool);
		hash_search(pool_cache, &rlocator, HASH_REMOVE, NULL);
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not stat pool file \"%s\": %m", path)));
	}
	cache_entry_set(e, pool, &st);
	pfree(path);
	return pool;
}

/*
 * The pool of an index that its metapage names by uuid.  This backend may
 * still map a file that another process has replaced since, before an
 * invalidation says so (the fresh pool of an unlogged index that crash
 * recovery reset, when planning here mapped the old file first): a mapping
 * of another pool is checked against the file, and opened again, before the
 * pool is refused.
 */
pm_pool *
pmi_pool_open_named(Relation index, const uint8 *uuid)
{
	pm_pool    *pool = pmi_pool_open(index);

	if (memcmp(pool->hdr->uuid, uuid, 16) != 0)
	{
		RelFileLocatorBackend rlocator = pmi_index_rnode(index);
		PoolCacheEntry *e = hash_search(pool_cache, &rlocator, HASH_FIND, NULL);

		if (e != NULL)
			e->revalidate = true;
		pool = pmi_pool_open(index);
	}
	if (memcmp(pool->hdr->uuid, uuid, 16) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("pool file \"%s\" does not belong to index \"%s\"",
						pool->path, RelationGetRelationName(index)),
				 errdetail("The pool's UUID differs from the one in the index's metapage."),
				 errhint("REINDEX the index.")));
	return pool;
}

/*
 * This backend's mapping of rlocator's pool, opened quietly if need be; NULL if
 * it cannot be opened.  Raises no error but out of memory (epoch callbacks
 * use it).
 */
pm_pool *
pmi_pool_lookup(RelFileLocatorBackend rlocator)
{
	PoolCacheEntry *e;
	char		path[MAXPGPATH];
	pm_pool    *pool;
	pm_error	err;
	struct stat st;

	if (pool_cache == NULL)
		pool_cache_init();
	e = hash_search(pool_cache, &rlocator, HASH_FIND, NULL);
	format_pool_path(path, sizeof(path), rlocator);
	if (e != NULL && e->pool != NULL)
	{
		/*
		 * a torn pool's file is replaced by its first user; no handle maps a
		 * torn pool
		 */
		if (!e->pool->torn || mapping_is_of_file(e, path))
			return e->pool;
		cached_pool_close(e->pool);
		e->pool = NULL;
	}
	if (cached_pool_open(path, &pool, &err) != PM_OK)
		return NULL;
	if (fstat(pool->fd, &st) != 0)
	{
		cached_pool_close(pool);
		return NULL;
	}
	e = hash_search(pool_cache, &rlocator, HASH_ENTER_NULL, NULL);
	if (e == NULL)
	{
		cached_pool_close(pool);
		return NULL;
	}
	cache_entry_set(e, pool, &st);
	return pool;
}

/* Remove a pool file and this backend's mapping of it; logs, never raises. */
void
pmi_pool_remove(RelFileLocatorBackend rlocator)
{
	char	   *path = pmi_pool_path(rlocator);

	pmi_pool_forget(rlocator);
	if (unlink(path) != 0 && errno != ENOENT)
		ereport(LOG,
				(errcode_for_file_access(),
				 errmsg("pm_index: could not remove pool file \"%s\": %m", path)));
	pfree(path);
}

/* Drop this backend's mapping of a pool (before removing or replacing it). */
void
pmi_pool_forget(RelFileLocatorBackend rlocator)
{
	PoolCacheEntry *e;

	if (pool_cache == NULL)
		return;
	e = hash_search(pool_cache, &rlocator, HASH_FIND, NULL);
	if (e == NULL)
		return;
	cached_pool_close(e->pool);
	hash_search(pool_cache, &rlocator, HASH_REMOVE, NULL);
}

/*
 * Drop this process's mappings of pools whose files were removed since it
 * mapped them (their indexes' registry slots went first, so no handle of
 * this process is current for them).  A removed pool's space comes back
 * only when the last process lets its mapping go; a replay worker, which
 * reads no relcache invalidations, calls this between rounds.
 */
void
pmi_pool_forget_removed(void)
{
	HASH_SEQ_STATUS status;
	PoolCacheEntry *e;
	char		path[MAXPGPATH];
	struct stat st;

	if (pool_cache == NULL)
		return;
	hash_seq_init(&status, pool_cache);
	while ((e = hash_seq_search(&status)) != NULL)
	{
		format_pool_path(path, sizeof(path), e->rlocator);
		if (stat(path, &st) == 0 || errno != ENOENT)
			continue;
		cached_pool_close(e->pool);
		hash_search(pool_cache, &e->rlocator, HASH_REMOVE, NULL);
	}
}

/*
 * Copy the pool of relfilenode from to the name of relfilenode to (through a
 * temporary file, synced, then renamed), or with move rename it.  Nothing
 * to do when from has no pool.  The caller makes sure nobody writes the
 * pool meanwhile.
 */
void
pmi_pool_copy(RelFileLocatorBackend from, RelFileLocatorBackend to, bool move)
{
	char	   *src = pmi_pool_path(from);
	char	   *dst = pmi_pool_path(to);
	char	   *tmp = psprintf("%s.tmp", dst);
	struct stat st;

	if (stat(src, &st) != 0)
	{
		if (errno != ENOENT)
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not stat pool file \"%s\": %m", src)));
		return;
	}
	if (move)
	{
		pmi_pool_forget(from);
		durable_rename(src, dst, ERROR);
		return;
	}
	if (unlink(tmp) != 0 && errno != ENOENT)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not remove file \"%s\": %m", tmp)));
	PG_TRY();
	{
		copy_file(src, tmp);
		fsync_fname(tmp, false);
		durable_rename(tmp, dst, ERROR);
	}
	PG_CATCH();
	{
		unlink(tmp);
		PG_RE_THROW();
	}
	PG_END_TRY();
}

/*
 * Database, relfilenode, tablespace, backend: a total order, in which
 * workers take indexes (load workers share them out by position in it).
 */
static int
pool_order(const ListCell *a, const ListCell *b)
{
	const RelFileLocatorBackend *x = lfirst(a);
	const RelFileLocatorBackend *y = lfirst(b);

	if (x->locator.dbOid != y->locator.dbOid)
		return x->locator.dbOid < y->locator.dbOid ? -1 : 1;
	if (x->locator.relNumber != y->locator.relNumber)
		return x->locator.relNumber < y->locator.relNumber ? -1 : 1;
	if (x->locator.spcOid != y->locator.spcOid)
		return x->locator.spcOid < y->locator.spcOid ? -1 : 1;
	return x->backend < y->backend ? -1 : x->backend > y->backend ? 1 : 0;
}

/*
 * The relfilenodes of the pool files in the pool directory (a list of
 * palloc'd RelFileLocatorBackends, temporary ones included, in pool_order), of
 * one database or, with InvalidOid, of all.  A directory it cannot read is
 * reported at elevel: callers at commit or at exit pass LOG, and their list
 * is then short (the orphan sweep removes what they missed).
 */
List *
pmi_list_pools(Oid dbid, int elevel)
{
	const char *dir = pmi_pool_dir();
	DIR		   *d = AllocateDir(dir);
	struct dirent *de;
	List	   *found = NIL;

	while ((de = ReadDirExtended(d, dir, elevel)) != NULL)
	{
		RelFileLocatorBackend rlocator;

		if (pmi_parse_pool_name(de->d_name, &rlocator) &&
			(!OidIsValid(dbid) || rlocator.locator.dbOid == dbid))
		{
			RelFileLocatorBackend *copy = palloc(sizeof(RelFileLocatorBackend));

			*copy = rlocator;
			found = lappend(found, copy);
		}
	}
	if (d != NULL)
		FreeDir(d);
	list_sort(found, pool_order);
	return found;
}

/*
 * The relfilenode of an index of the current database as its pool's name has
 * it: a temporary index's carries the backend of its session.
 */
RelFileLocatorBackend
pmi_class_rnode(Form_pg_class c)
{
	RelFileLocatorBackend r;

	r.locator.spcOid = OidIsValid(c->reltablespace) ? c->reltablespace : MyDatabaseTableSpace;
	r.locator.dbOid = MyDatabaseId;
	r.locator.relNumber = c->relfilenode;
	r.backend = c->relpersistence == RELPERSISTENCE_TEMP ?
		GetTempNamespaceProcNumber(c->relnamespace) : INVALID_PROC_NUMBER;
	return r;
}

/*
 * The pm_index indexes of the current database's catalog (a list of
 * palloc'd PmiIndexPools), each with storage of its own; the temporary ones
 * of other sessions too if other_sessions.
 */
List *
pmi_list_index_pools(bool other_sessions)
{
	Relation	pg_class;
	SysScanDesc scan;
	HeapTuple	tup;
	List	   *found = NIL;

	if (!pmi_am_installed())
		return NIL;
	pg_class = table_open(RelationRelationId, AccessShareLock);
	scan = systable_beginscan(pg_class, InvalidOid, false, NULL, 0, NULL);
	while ((tup = systable_getnext(scan)) != NULL)
	{
		Form_pg_class c = (Form_pg_class) GETSTRUCT(tup);
		PmiIndexPool *ip;

		if (c->relkind != RELKIND_INDEX || !OidIsValid(c->relam) || pmi_am_ops(c->relam) == NULL ||
			(c->relpersistence == RELPERSISTENCE_TEMP && !other_sessions &&
			 !isTempNamespace(c->relnamespace)))
			continue;
		ip = palloc(sizeof(PmiIndexPool));
		ip->relid = c->oid;
		ip->rlocator = pmi_class_rnode(c);
		found = lappend(found, ip);
	}
	systable_endscan(scan);
	table_close(pg_class, AccessShareLock);
	return found;
}

/* Is the pool being built (pmi_fill.c): does it lack entries from before its creation? */
bool
pmi_pool_building(const pm_pool *pool)
{
	return (pm_load(&pool->hdr->flags) & PM_POOL_FLAG_BUILDING) != 0;
}
