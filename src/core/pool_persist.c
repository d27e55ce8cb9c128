/*
 * pool_persist.c
 *	  Persistence modes (their names, and which one a pool gets) and the slow
 *	  paths of the flush and drain primitives in pool.h.
 */
#include "pool.h"

#include <libpmem.h>
#include <string.h>

__thread pm_counters pm_tls_counters;

/* ---------- modes ---------- */

const char *
pm_mode_name(pm_mode mode)
{
	switch (mode)
	{
		case PM_MODE_AUTO:
			return "auto";
		case PM_MODE_EADR:
			return "eadr";
		case PM_MODE_ADR:
			return "adr";
		case PM_MODE_MSYNC:
			return "msync";
		case PM_MODE_VOLATILE:
			return "volatile";
	}
	return "unknown";
}

bool
pm_mode_parse(const char *name, pm_mode *mode)
{
	for (pm_mode m = PM_MODE_AUTO; m <= PM_MODE_MSYNC; m++)
	{
		if (strcmp(name, pm_mode_name(m)) == 0)
		{
			*mode = m;
			return true;
		}
	}
	return false;
}

pm_mode
pm_mode_resolve(pm_mode requested, bool is_pmem, bool has_auto_flush, bool *weak)
{
	if (weak)
		*weak = false;
	if (requested != PM_MODE_AUTO)
		return requested;
	if (is_pmem)
		return has_auto_flush ? PM_MODE_EADR : PM_MODE_ADR;
	if (weak)
		*weak = true;
	return PM_MODE_EADR;
}

/* ---------- persistence slow paths ---------- */

void
pm_flush_slow(const pm_persister *p, const void *addr, size_t len)
{
	uintptr_t	first = (uintptr_t) addr & ~(uintptr_t) (PM_CACHELINE - 1);
	uintptr_t	end = (uintptr_t) addr + len;

	if (p->trace != NULL && p->trace->on_flush != NULL)
		p->trace->on_flush(p->trace->ctx, addr, len);

	switch (p->mode)
	{
		case PM_MODE_ADR:
			pm_tls_counters.flushes += (end - first + PM_CACHELINE - 1) / PM_CACHELINE;
			pmem_flush(addr, len);
			break;
		case PM_MODE_MSYNC:
			pm_tls_counters.flushes += (end - first + PM_CACHELINE - 1) / PM_CACHELINE;
			/* pmem_msync aligns to pages itself; it cannot fail on a live map */
			(void) pmem_msync(addr, len);
			break;
		case PM_MODE_EADR:
		case PM_MODE_VOLATILE:
		case PM_MODE_AUTO:
			break;
	}
}

void
pm_drain_slow(const pm_persister *p)
{
	if (p->trace != NULL && p->trace->on_drain != NULL)
		p->trace->on_drain(p->trace->ctx);
	if (p->mode == PM_MODE_VOLATILE)
		return;
	pm_tls_counters.fences++;
	if (p->mode == PM_MODE_ADR)
		pmem_drain();
	else
		pm_full_fence();
}
