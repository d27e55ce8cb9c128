/*
 * pm_common.h
 *	  Definitions shared by every part of src/core: error reporting, atomics,
 *	  checksums.
 *
 * src/core is plain C11 with no PostgreSQL header.  Anything the core needs
 * from its host is passed in explicitly; failures are returned as a pm_error
 * so the host can turn them into its own error reports (ereport in src/pg,
 * TAP diagnostics in the unit tests).
 */
#ifndef PM_COMMON_H
#define PM_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PM_CACHELINE 64

#define pm_likely(x)	__builtin_expect(!!(x), 1)
#define pm_unlikely(x)	__builtin_expect(!!(x), 0)

/*
 * Assertions, checked when built with PM_ASSERT_CHECKING (make PM_ASSERTS=1;
 * tests/run does) and compiled out otherwise.  A failed one calls
 * pm_assert_hook if the host set one (src/pg: PostgreSQL's
 * ExceptionalCondition), else prints and aborts.
 */
#ifdef PM_ASSERT_CHECKING
#define pm_assert(cond) \
	(pm_likely(cond) ? (void) 0 : pm_assert_failed(#cond, __FILE__, __LINE__))
#else
#define pm_assert(cond) ((void) 0)
#endif
extern void (*pm_assert_hook) (const char *cond, const char *file, int line);
extern void pm_assert_failed(const char *cond, const char *file, int line)
			__attribute__((noreturn));

/*
 * A failure the core cannot return from (an address it must read cannot be
 * mapped in the middle of an operation): pm_fatal_hook if the host set one
 * (src/pg: PANIC, so that crash recovery repairs what the operation left),
 * else the message is printed and the process aborts.
 */
extern void (*pm_fatal_hook) (const char *msg);
extern void pm_fatal(const char *fmt,...)
			__attribute__((noreturn, format(printf, 1, 2)));

/* Error classes; the host maps each to its own error codes. */
typedef enum pm_errcode
{
	PM_OK = 0,
	PM_ERR_IO,					/* a system call failed; sys_errno says why */
	PM_ERR_NOSPACE,				/* filesystem full */
	PM_ERR_ARENA_FULL,			/* a fixed-size arena (the DRAM tier) is full */
	PM_ERR_NOTFOUND,			/* pool file does not exist */
	PM_ERR_EXISTS,				/* pool file already exists */
	PM_ERR_PERMISSION,			/* access denied */
	PM_ERR_OWNERSHIP,			/* pool file of another user, or writable by others */
	PM_ERR_CORRUPT,				/* header or structure does not validate */
	PM_ERR_VERSION,				/* written by an incompatible format version */
	PM_ERR_INVALID,				/* bad argument from the caller */
	PM_ERR_LIMIT,				/* a fixed limit was reached */
	PM_ERR_POOL_MAX,			/* a pool file reached the maximum size it was created with */
	PM_ERR_NOMEM				/* process memory (malloc) ran out */
} pm_errcode;

/* The error says the pool file may not be used by this server's user (mode or owner). */
static inline bool
pm_errcode_is_access(pm_errcode code)
{
	return code == PM_ERR_PERMISSION || code == PM_ERR_OWNERSHIP;
}

/* The error says a pool, its filesystem or an arena has no room left. */
static inline bool
pm_errcode_is_out_of_space(pm_errcode code)
{
	return code == PM_ERR_NOSPACE || code == PM_ERR_ARENA_FULL || code == PM_ERR_POOL_MAX;
}

typedef struct pm_error
{
	pm_errcode	code;
	int			sys_errno;		/* errno of the failing call, or 0 */
	char		msg[256];		/* one sentence, names the file if any */
} pm_error;

/* Fill *err (if not NULL) and return code; printf-style message. */
extern pm_errcode pm_error_set(pm_error *err, pm_errcode code, int sys_errno,
							   const char *fmt,...)
			__attribute__((format(printf, 4, 5)));

extern const char *pm_errcode_name(pm_errcode code);

/* 64-bit FNV-1a; used for header checksums (not for security). */
extern uint64_t pm_fnv1a64(const void *data, size_t len);

/*
 * Atomics on 8-byte words of shared mappings.  Every word that more than one
 * process reads while another may write goes through these, so the compiler
 * neither tears nor caches it.
 */
#define pm_load(p)			__atomic_load_n((p), __ATOMIC_ACQUIRE)
#define pm_load_relaxed(p)	__atomic_load_n((p), __ATOMIC_RELAXED)
#define pm_store(p, v)		__atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define pm_store_relaxed(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define pm_cas(p, expp, v) \
	__atomic_compare_exchange_n((p), (expp), (v), false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)
#define pm_fetch_add(p, v)	__atomic_fetch_add((p), (v), __ATOMIC_ACQ_REL)
#define pm_fetch_and(p, v)	__atomic_fetch_and((p), (v), __ATOMIC_ACQ_REL)
#define pm_fetch_or(p, v)	__atomic_fetch_or((p), (v), __ATOMIC_ACQ_REL)
#define pm_full_fence()		__atomic_thread_fence(__ATOMIC_SEQ_CST)

#if defined(__x86_64__) || defined(__i386__)
#define pm_cpu_relax()		__builtin_ia32_pause()
#elif defined(__aarch64__)
#define pm_cpu_relax()		__asm__ __volatile__("yield")
#else
#define pm_cpu_relax()		((void) 0)
#endif

/* Pause in a spin loop; backoff grows with the attempt count. */
extern void pm_spin_delay(unsigned attempt);

/*
 * Test hook, NULL unless a host sets it: called in the middle of a structure
 * modification (where names it), at the point where a crash leaves the most
 * to repair: an nbtree leaf SMO between its copy and its link, an fbrtree
 * split between the new node and its parent entry.  Crash tests sleep there
 * and kill the process.
 */
extern void (*pm_smo_pause_hook) (const char *where);

static inline void
pm_smo_pause(const char *where)
{
	if (pm_unlikely(pm_smo_pause_hook != NULL))
		pm_smo_pause_hook(where);
}

#endif							/* PM_COMMON_H */
