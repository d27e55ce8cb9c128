/*
 * pool.h
 *	  Pool files: create, open, map, grow; the header; offset translation;
 *	  the persistence primitives of the four persistence modes.
 *
 * See src/core/README.md for the format and the crash and concurrency rules.
 */
#ifndef PM_POOL_H
#define PM_POOL_H

#include "pm_common.h"

#include <pthread.h>

/* ---------- persistence modes and primitives ---------- */

typedef enum pm_mode
{
	PM_MODE_AUTO = 0,			/* resolve from the mapping at open */
	PM_MODE_EADR = 1,			/* visible means persistent: fences only */
	PM_MODE_ADR = 2,			/* flush cache lines + fence */
	PM_MODE_MSYNC = 3,			/* msync the page range (ordinary disks) */
	PM_MODE_VOLATILE = 4		/* DRAM tier: no persistence, no counting */
} pm_mode;

extern const char *pm_mode_name(pm_mode mode);
extern bool pm_mode_parse(const char *name, pm_mode *mode);

/*
 * Resolve AUTO: eadr on PM whose caches are in the persistence domain, adr on
 * PM without that, else eadr (which then protects against process crashes
 * only; *weak is set so the host can say so).
 */
extern pm_mode pm_mode_resolve(pm_mode requested, bool is_pmem,
							   bool has_auto_flush, bool *weak);

/*
 * Test hooks: an instrumented persistence layer (tests/unit, crashsim.c)
 * observes every flush and drain.  NULL in production; one predictable
 * branch per primitive.
 */
typedef struct pm_trace_hooks
{
	void		(*on_flush) (void *ctx, const void *addr, size_t len);
	void		(*on_drain) (void *ctx);
	void	   *ctx;
} pm_trace_hooks;

typedef struct pm_persister
{
	pm_mode		mode;			/* never PM_MODE_AUTO */
	const pm_trace_hooks *trace;
} pm_persister;

/*
 * Per-thread counters of flushed cache lines and fences.  A caller that
 * wants "persists per operation" reads them before and after.
 */
typedef struct pm_counters
{
	uint64_t	flushes;
	uint64_t	fences;
} pm_counters;

extern __thread pm_counters pm_tls_counters;

extern void pm_flush_slow(const pm_persister *p, const void *addr, size_t len);
extern void pm_drain_slow(const pm_persister *p);

/* Start writing back [addr, addr+len); durable after the next pm_drain. */
static inline void
pm_flush(const pm_persister *p, const void *addr, size_t len)
{
	if (p->trace != NULL || p->mode == PM_MODE_ADR || p->mode == PM_MODE_MSYNC)
		pm_flush_slow(p, addr, len);
}

/* Order and complete preceding flushes; a store fence in eadr mode. */
static inline void
pm_drain(const pm_persister *p)
{
	if (p->mode == PM_MODE_VOLATILE && p->trace == NULL)
		return;
	if (p->trace != NULL || p->mode != PM_MODE_EADR)
		pm_drain_slow(p);
	else
	{
		pm_tls_counters.fences++;
		pm_full_fence();
	}
}

static inline void
pm_persist(const pm_persister *p, const void *addr, size_t len)
{
	pm_flush(p, addr, len);
	pm_drain(p);
}

/* ---------- pool files ---------- */

#define PM_POOL_FORMAT_VERSION	2	/* 2: the reconciliation ring grows by stripes */
#define PM_POOL_HEADER_SIZE		4096
#define PM_POOL_NROOTS			8
#define PM_POOL_CHUNK_SIZE		(256 * 1024)
#define PM_POOL_DEFAULT_MAX_SIZE	(UINT64_C(64) << 30)
/* a process maps a pool with this much room past its size, or the size again if larger */
#define PM_POOL_MIN_HEADROOM	(UINT64_C(8) << 20)

/* clean_shutdown word values */
#define PM_POOL_IN_USE			UINT64_C(0)
#define PM_POOL_CLEAN			UINT64_C(0x434c45414e)	/* "CLEAN" */

/* Who the pool belongs to; for PostgreSQL an index relfilenode. */
typedef struct pm_owner
{
	uint64_t	system_id;		/* the host's instance identifier */
	uint32_t	tablespace;
	uint32_t	database;
	uint32_t	relfilenode;
	uint32_t	kind;			/* which structure: a pm_kind */
} pm_owner;

/*
 * The structure a pool holds.  Pool headers and WAL records carry it: a
 * value, once given, is never reused.
 */
typedef enum pm_kind
{
	PM_KIND_TEST = 0,			/* pools of the unit tests */
	PM_KIND_NBTREE = 1,
	PM_KIND_FBRTREE = 2,
	PM_KIND_PHAST = 3,
	PM_KIND_HASH = 4,
	PM_KIND_NVBTREE = 5,
} pm_kind;

typedef struct pm_pool_header
{
	/* static part: written once at creation, covered by static_checksum */
	char		magic[8];
	uint32_t	format_version;
	uint32_t	header_size;
	uint8_t		uuid[16];
	pm_owner	owner;
	uint32_t	created_mode;
	uint32_t	chunk_size;
	uint64_t	data_offset;
	uint64_t	max_size;		/* the size the pool may grow to */
	uint64_t	created_at;		/* creation time, microseconds since the Unix epoch */
	uint64_t	static_checksum;

	/*
	 * Mutable part: independent 8-byte words, each stored atomically and
	 * validated on its own at open (a checksum over them could not be
	 * updated failure-atomically).
	 */
	uint64_t	size;			/* committed extent in bytes */
	uint64_t	mode;			/* persistence mode of the current writer */
	uint64_t	clean_shutdown; /* PM_POOL_CLEAN or PM_POOL_IN_USE */
	uint64_t	flags;			/* PM_POOL_FLAG_* */
	uint64_t	roots[PM_POOL_NROOTS];
	uint64_t	writer_boot;	/* pm_current_boot() when last marked in use */
	uint64_t	host_position;	/* the host's (PostgreSQL: the WAL position replay applied) */
} pm_pool_header;

/* The pool cannot be proven current (its host could not keep it: a failed replay). */
#define PM_POOL_FLAG_UNTRUSTED	UINT64_C(1)
/*
 * The pool takes every change made since it was created but lacks what was
 * there before: the host fills it (a background build) and then clears this.
 */
#define PM_POOL_FLAG_BUILDING	UINT64_C(2)
#define PM_POOL_FLAGS_KNOWN		(PM_POOL_FLAG_UNTRUSTED | PM_POOL_FLAG_BUILDING)

typedef struct pm_pool_create_opts
{
	pm_owner	owner;
	pm_mode		mode;
	uint64_t	initial_size;	/* bytes of data area; rounded up to chunks */
	uint64_t	max_size;		/* 0: PM_POOL_DEFAULT_MAX_SIZE */
	bool		replace;		/* overwrite an existing file at path */
	const uint8_t *uuid;		/* the pool's UUID (a copy's elsewhere); NULL: a new one */
	uint64_t	flags;			/* PM_POOL_FLAG_* it is created with */
} pm_pool_create_opts;

/*
 * Where a process maps a pool: [0, window) at base, and the offsets at or
 * past window in extents mapped since, each at its own address (see
 * pm_pool_addr).  A byte of the pool has one address in a process while the
 * pool is open; only pm_pool_remap moves it.
 */
#define PM_POOL_MAX_EXTENTS		48

typedef struct pm_pool_extent
{
	uint64_t	start;			/* offset of addr; the previous extent's end */
	uint64_t	end;
	char	   *addr;
} pm_pool_extent;

typedef struct pm_pool
{
	char	   *path;
	int			fd;
	char	   *base;			/* mapping of [0, window) */
	uint64_t	window;
	uint64_t	max_size;		/* == hdr->max_size: the pool never grows past it */
	uint32_t	nextents;		/* published with release order */
	pm_pool_extent extents[PM_POOL_MAX_EXTENTS];
	pm_pool_header *hdr;
	pm_persister persist;
	bool		is_pmem;
	bool		weak_durability;	/* auto chose eadr on a non-PM file */
	bool		torn;			/* in use at an OS crash on storage that loses writes */
	pthread_mutex_t grow_mutex; /* threads of this process; fcntl across */
	pthread_mutex_t map_mutex;	/* threads of this process adding an extent */
	pm_trace_hooks trace;
	/* how this process orders the pool's wide records (pm_key.h; NULL: memcmp) */
	const struct pm_key_order *key_order;
} pm_pool;

extern pm_errcode pm_pool_create(const char *path, const pm_pool_create_opts *opts,
								 pm_pool **out, pm_error *err);
extern pm_errcode pm_pool_open(const char *path, pm_mode mode,
							   pm_pool **out, pm_error *err);
extern void pm_pool_close(pm_pool *pool);

/*
 * A volatile pool in anonymous shared memory (the DRAM tier) that grows up
 * to max_size bytes of data.  Processes forked after its creation use the
 * pm_pool they inherit; each maps new space as it needs it.
 */
extern pm_errcode pm_pool_create_volatile(const char *name, uint64_t max_size,
										  pm_pool **out, pm_error *err);

/* Read and validate a header without mapping (inspection, orphan sweep). */
extern pm_errcode pm_pool_read_header(const char *path, pm_pool_header *hdr,
									  uint64_t *file_size, pm_error *err);

/* Make the committed extent at least min_size bytes; ENOSPC is an error. */
extern pm_errcode pm_pool_grow(pm_pool *pool, uint64_t min_size, pm_error *err);

/*
 * Operating-system crashes.  On a non-PM file in any mode but msync, stores
 * reach the file only when the kernel writes the page cache back, so a
 * kernel crash or power loss can leave any mix of old and new pages.  Each
 * open on such storage marks the pool in use under the current kernel boot
 * (the mark is synced before the caller can store anything); a clean server
 * shutdown writes the pool back and marks it clean.  A pool found in use
 * under another boot may be torn: pool->torn is set and the header left as
 * it is, so the verdict holds until the pool is replaced.  An open on
 * durable storage (PM, or msync) writes back what earlier weak opens of
 * this boot left and marks the pool clean.
 */

/* A nonzero tag of the kernel boot this process runs under, or 0 if unknown. */
extern uint64_t pm_current_boot(void);

/* Was the pool, as this header shows it, in use when its boot ended? */
extern bool pm_header_torn(const pm_pool_header *hdr, uint64_t current_boot);

/*
 * Write a pool file that no process has open back to its storage and mark it
 * clean; a torn or untrusted pool is left as it is (*marked = false).
 */
extern pm_errcode pm_pool_file_close_clean(const char *path, bool *marked, pm_error *err);

extern void pm_pool_set_root(pm_pool *pool, int i, uint64_t off);
extern void pm_pool_set_flag(pm_pool *pool, uint64_t flag);
extern void pm_pool_clear_flag(pm_pool *pool, uint64_t flag);
extern void pm_pool_set_host_position(pm_pool *pool, uint64_t position);

/* Install test hooks (instrumented persistence). */
extern void pm_pool_set_trace(pm_pool *pool, const pm_trace_hooks *hooks);

static inline uint64_t
pm_pool_size(const pm_pool *pool)
{
	return pm_load(&pool->hdr->size);
}

/* Whether [off, off + len) lies inside the pool (no overflow for any off). */
static inline bool
pm_pool_has_range(const pm_pool *pool, uint64_t off, uint64_t len)
{
	uint64_t	size = pm_pool_size(pool);

	return off <= size && len <= size - off;
}

static inline uint64_t
pm_pool_root(const pm_pool *pool, int i)
{
	return pm_load(&pool->hdr->roots[i]);
}

/*
 * Address of offset off in this process.  Offsets below the window are one
 * addition away; others are in an extent, mapped on first use if another
 * process grew the pool past this process's mapping during the current
 * operation (a failure to map then is fatal: see pm_fatal).
 */
extern void *pm_pool_addr_far(const pm_pool *pool, uint64_t off);

static inline void *
pm_pool_addr(const pm_pool *pool, uint64_t off)
{
	if (pm_likely(off < pool->window))
		return pool->base + off;
	return pm_pool_addr_far(pool, off);
}

extern uint64_t pm_pool_off_far(const pm_pool *pool, const void *addr);

static inline uint64_t
pm_pool_off(const pm_pool *pool, const void *addr)
{
	uint64_t	off = (uint64_t) ((const char *) addr - pool->base);

	if (pm_likely((const char *) addr >= pool->base && off < pool->window))
		return off;
	return pm_pool_off_far(pool, addr);
}

/* Bytes of address space this process maps for the pool. */
extern uint64_t pm_pool_mapped(const pm_pool *pool);

/*
 * Map the pool anew in one window sized from its current size, if it has
 * extents or outgrew its window.  The caller promises that no address into
 * the pool derived before the call is used after it (the host calls this
 * between operations: src/pg at the start of every access-method callback).
 * On failure the old mapping stays.
 */
extern pm_errcode pm_pool_remap(pm_pool *pool, pm_error *err);

/* Map the pool's whole max_size in one window (the same promise; crash simulation). */
extern pm_errcode pm_pool_map_full(pm_pool *pool, pm_error *err);

/* Would a file at path be mapped as PM? (path must exist; opened read-write) */
extern pm_errcode pm_path_is_pmem(const char *path, bool *is_pmem, pm_error *err);

extern void pm_uuid_format(const uint8_t uuid[16], char out[37]);

#endif							/* PM_POOL_H */
