/*
 * epoch.c
 *	  Cross-process epoch-based reclamation.
 *
 * Safety argument, in short.  A retirer unlinks a block, then reads the
 * global epoch r and records (r, block).  The epoch advances from g to g+1
 * only when every active participant entered at g.  A participant enters
 * by storing the global epoch into its slot, fencing, and re-reading the
 * global epoch until the two agree; it can only reach a block unlinked
 * before the global epoch it entered at advanced past the block's r.  A
 * reclaimer reads the global epoch G first and then every slot, and frees
 * (r, block) only if r < G and r < every active slot's epoch: any reader
 * not yet visible in its slot will enter at an epoch >= G > r, after the
 * unlink.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "epoch.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#define EPOCH_MAGIC		UINT64_C(0x48434f504549504d)	/* "MPIEPOCH" */
#define RECLAIMER_BIT	(UINT64_C(1) << 63)

typedef struct pm_epoch_entry
{
	uint64_t	epoch;
	uint64_t	off;
	uint32_t	space;
	uint32_t	tag;
} pm_epoch_entry;

typedef struct pm_epoch_slot
{
	uint64_t	owner;			/* 0: free; token; or RECLAIMER_BIT|token */
	uint64_t	active;			/* epoch entered at, 0 when quiescent */
	uint64_t	head;			/* next limbo entry to write (monotonic) */
	uint64_t	tail;			/* oldest unfreed limbo entry (monotonic) */
	uint64_t	pad[4];			/* keep slots on separate cache lines */
	pm_epoch_entry entries[];
} pm_epoch_slot;

struct pm_epoch_domain
{
	uint64_t	magic;
	uint64_t	global;			/* starts at 1; 0 means quiescent in slots */
	uint32_t	nslots;
	uint32_t	limbo_capacity;
	uint64_t	slot_size;
	uint64_t	pad[4];
};

static size_t
slot_size(int limbo_capacity)
{
	size_t		s = sizeof(pm_epoch_slot) + (size_t) limbo_capacity * sizeof(pm_epoch_entry);

	return (s + PM_CACHELINE - 1) & ~(size_t) (PM_CACHELINE - 1);
}

static inline pm_epoch_slot *
slot_at(const pm_epoch_domain *dom, int i)
{
	return (pm_epoch_slot *) ((char *) dom + sizeof(pm_epoch_domain) + (size_t) i * dom->slot_size);
}

size_t
pm_epoch_domain_size(int nslots, int limbo_capacity)
{
	return sizeof(pm_epoch_domain) + (size_t) nslots * slot_size(limbo_capacity);
}

void
pm_epoch_domain_init(void *mem, int nslots, int limbo_capacity)
{
	pm_epoch_domain *dom = mem;

	memset(mem, 0, pm_epoch_domain_size(nslots, limbo_capacity));
	dom->nslots = (uint32_t) nslots;
	dom->limbo_capacity = (uint32_t) limbo_capacity;
	dom->slot_size = slot_size(limbo_capacity);
	dom->global = 1;
	pm_store(&dom->magic, EPOCH_MAGIC);
}

bool
pm_epoch_pid_alive(uint64_t owner)
{
	return kill((pid_t) owner, 0) == 0 || errno == EPERM;
}

uint64_t
pm_epoch_current(const pm_epoch_domain *dom)
{
	return pm_load(&dom->global);
}

uint64_t
pm_epoch_pending(const pm_epoch_domain *dom)
{
	uint64_t	n = 0;

	for (uint32_t i = 0; i < dom->nslots; i++)
	{
		pm_epoch_slot *s = slot_at(dom, (int) i);

		n += pm_load(&s->head) - pm_load(&s->tail);
	}
	return n;
}

static void reap_if_dead(pm_epoch_handle *h, pm_epoch_slot *s);

static bool
try_claim(pm_epoch_slot *s, uint64_t owner)
{
	uint64_t	expected = 0;

	return pm_cas(&s->owner, &expected, owner);
}

pm_errcode
pm_epoch_register(pm_epoch_domain *dom, uint64_t owner, int preferred_slot,
				  pm_epoch_free_fn free_fn, void *free_ctx, pm_epoch_alive_fn alive_fn,
				  pm_epoch_handle *h, pm_error *err)
{
	memset(h, 0, sizeof(*h));
	h->slot = -1;
	if (owner == 0 || (owner & RECLAIMER_BIT))
		return pm_error_set(err, PM_ERR_INVALID, 0, "invalid epoch participant token");
	h->dom = dom;
	h->owner = owner;
	h->free_fn = free_fn;
	h->free_ctx = free_ctx;
	h->alive_fn = alive_fn ? alive_fn : pm_epoch_pid_alive;

	if (preferred_slot >= 0 && preferred_slot < (int) dom->nslots)
	{
		pm_epoch_slot *s = slot_at(dom, preferred_slot);

		/* the host guarantees the slot is ours; wait out a transient reclaimer */
		for (unsigned attempt = 0; !try_claim(s, owner); attempt++)
		{
			uint64_t	cur = pm_load(&s->owner);

			if (cur != 0 && !(cur & RECLAIMER_BIT) && !h->alive_fn(cur))
			{
				/* a dead predecessor in our slot: take it over */
				if (pm_cas(&s->owner, &cur, owner))
					break;
			}
			else if (cur & RECLAIMER_BIT && !h->alive_fn(cur & ~RECLAIMER_BIT))
			{
				if (pm_cas(&s->owner, &cur, owner))
					break;
			}
			pm_spin_delay(attempt);
		}
		pm_store(&s->active, 0);
		h->slot = preferred_slot;
		return PM_OK;
	}
	/* a free slot first; failing that, one whose owner died without leaving */
	for (int pass = 0; pass < 2; pass++)
	{
		for (uint32_t i = 0; i < dom->nslots; i++)
		{
			pm_epoch_slot *s = slot_at(dom, (int) i);

			if (pass == 1)
				reap_if_dead(h, s);
			if (try_claim(s, owner))
			{
				pm_store(&s->active, 0);
				h->slot = (int) i;
				return PM_OK;
			}
		}
	}
	return pm_error_set(err, PM_ERR_LIMIT, 0, "all %u epoch participant slots are in use",
						dom->nslots);
}

void
pm_epoch_unregister(pm_epoch_handle *h)
{
	pm_epoch_slot *s;

	if (h->slot < 0)
		return;
	s = slot_at(h->dom, h->slot);
	pm_store(&s->active, 0);
	h->nesting = 0;
	(void) pm_epoch_reclaim(h);
	/* out of every section now, so the wait ends: others' sections do */
	for (unsigned attempt = 0; h->noverflow > 0; attempt++)
	{
		pm_spin_delay(attempt);
		(void) pm_epoch_reclaim(h);
	}
	free(h->overflow);
	h->overflow = NULL;
	h->overflow_cap = 0;
	pm_store(&s->owner, 0);
	h->slot = -1;
}

void
pm_epoch_enter(pm_epoch_handle *h)
{
	pm_epoch_slot *s = slot_at(h->dom, h->slot);
	uint64_t	e;
	uint64_t	again;

	if (h->nesting++ > 0)
		return;
	e = pm_load(&h->dom->global);
	for (;;)
	{
		__atomic_store_n(&s->active, e, __ATOMIC_SEQ_CST);
		again = __atomic_load_n(&h->dom->global, __ATOMIC_SEQ_CST);
		if (again == e)
			break;
		e = again;
	}
}

void
pm_epoch_exit(pm_epoch_handle *h)
{
	pm_assert(h->nesting > 0);
	if (--h->nesting > 0)
		return;
	pm_store(&slot_at(h->dom, h->slot)->active, 0);
}

/*
 * Clear the reader state of a participant that died, so the epoch can move.
 * Its limbo stays in the slot; the slot becomes free and is drained by the
 * next reclaimer (or inherited by the next participant to claim it).
 */
static void
reap_if_dead(pm_epoch_handle *h, pm_epoch_slot *s)
{
	uint64_t	owner = pm_load(&s->owner);

	if (owner == 0 || owner == h->owner)
		return;
	if (h->alive_fn(owner & ~RECLAIMER_BIT))
		return;
	pm_store(&s->active, 0);
	(void) pm_cas(&s->owner, &owner, 0);
}

static bool
try_advance(pm_epoch_handle *h)
{
	pm_epoch_domain *dom = h->dom;
	uint64_t	e = __atomic_load_n(&dom->global, __ATOMIC_SEQ_CST);

	for (uint32_t i = 0; i < dom->nslots; i++)
	{
		pm_epoch_slot *s = slot_at(dom, (int) i);
		uint64_t	a = __atomic_load_n(&s->active, __ATOMIC_SEQ_CST);

		if (a != 0 && a != e)
		{
			reap_if_dead(h, s);
			return false;
		}
	}
	return pm_cas(&dom->global, &e, e + 1);
}

/* Oldest epoch any reader may still be in: min over active slots and global. */
static uint64_t
safe_bound(const pm_epoch_domain *dom)
{
	uint64_t	bound = __atomic_load_n(&dom->global, __ATOMIC_SEQ_CST);

	for (uint32_t i = 0; i < dom->nslots; i++)
	{
		uint64_t	a = __atomic_load_n(&slot_at(dom, (int) i)->active, __ATOMIC_SEQ_CST);

		if (a != 0 && a < bound)
			bound = a;
	}
	return bound;
}

/* Free h's overflow entries retired before bound (they are in retirement order). */
static int
drain_overflow(pm_epoch_handle *h, uint64_t bound)
{
	pm_epoch_entry *o = h->overflow;
	uint32_t	n = 0;

	while (n < h->noverflow && o[n].epoch < bound)
	{
		h->free_fn(h->free_ctx, o[n].space, o[n].tag, o[n].off);
		n++;
	}
	if (n > 0)
	{
		memmove(o, o + n, (size_t) (h->noverflow - n) * sizeof(*o));
		h->noverflow -= n;
	}
	return (int) n;
}

/* Free the entries of slot s retired before bound; caller owns the ring. */
static int
drain_slot(pm_epoch_handle *h, pm_epoch_slot *s, uint64_t bound)
{
	uint64_t	tail = pm_load(&s->tail);
	uint64_t	head = pm_load(&s->head);
	uint32_t	cap = h->dom->limbo_capacity;
	int			freed = 0;

	while (tail != head)
	{
		pm_epoch_entry *e = &s->entries[tail % cap];

		if (e->epoch >= bound)
			break;
		h->free_fn(h->free_ctx, e->space, e->tag, e->off);
		tail++;
		freed++;
		pm_store(&s->tail, tail);
	}
	return freed;
}

int
pm_epoch_reclaim(pm_epoch_handle *h)
{
	pm_epoch_domain *dom = h->dom;
	uint64_t	bound;
	int			freed;

	/* two advances let a retirement made just now become free in one call */
	(void) try_advance(h);
	(void) try_advance(h);
	bound = safe_bound(dom);
	freed = drain_slot(h, slot_at(dom, h->slot), bound) + drain_overflow(h, bound);

	/* drain slots whose participant has left */
	for (uint32_t i = 0; i < dom->nslots; i++)
	{
		pm_epoch_slot *s = slot_at(dom, (int) i);
		uint64_t	expected = 0;

		if ((int) i == h->slot || pm_load(&s->head) == pm_load(&s->tail))
			continue;
		if (pm_load(&s->owner) != 0)
		{
			reap_if_dead(h, s);
			continue;
		}
		if (!pm_cas(&s->owner, &expected, h->owner | RECLAIMER_BIT))
			continue;
		freed += drain_slot(h, s, bound);
		pm_store(&s->owner, 0);
	}
	return freed;
}

void
pm_epoch_retire(pm_epoch_handle *h, uint32_t space, uint32_t tag, uint64_t off)
{
	pm_epoch_domain *dom = h->dom;
	pm_epoch_slot *s = slot_at(dom, h->slot);
	uint64_t	head = pm_load(&s->head);
	pm_epoch_entry *e;

	if (head - pm_load(&s->tail) >= dom->limbo_capacity / 2)
		(void) pm_epoch_reclaim(h);
	if (head - pm_load(&s->tail) >= dom->limbo_capacity && h->nesting > 0)
	{
		/*
		 * Inside a section, waiting for the ring could wait for ourselves
		 * (our epoch holds back what we retired in it) or for a participant
		 * waiting here for us: keep the entry aside until reclaim frees it.
		 */
		if (h->noverflow == h->overflow_cap)
		{
			uint32_t	cap = h->overflow_cap ? h->overflow_cap * 2 : dom->limbo_capacity;
			void	   *grown = realloc(h->overflow, (size_t) cap * sizeof(pm_epoch_entry));

			if (grown != NULL)
			{
				h->overflow = grown;
				h->overflow_cap = cap;
			}
		}
		if (h->noverflow < h->overflow_cap)
		{
			e = &((pm_epoch_entry *) h->overflow)[h->noverflow++];
			e->space = space;
			e->tag = tag;
			e->off = off;
			e->epoch = __atomic_load_n(&dom->global, __ATOMIC_SEQ_CST);
			return;
		}
	}
	for (unsigned attempt = 0; head - pm_load(&s->tail) >= dom->limbo_capacity; attempt++)
	{
		/* a reader holds an old epoch; it leaves at the end of its operation */
		pm_spin_delay(attempt);
		(void) pm_epoch_reclaim(h);
	}
	e = &s->entries[head % dom->limbo_capacity];
	e->space = space;
	e->tag = tag;
	e->off = off;
	e->epoch = __atomic_load_n(&dom->global, __ATOMIC_SEQ_CST);
	pm_store(&s->head, head + 1);
}

void
pm_epoch_drain(pm_epoch_handle *h)
{
	pm_epoch_slot *s = slot_at(h->dom, h->slot);

	for (unsigned attempt = 0; pm_load(&s->head) != pm_load(&s->tail) || h->noverflow > 0; attempt++)
	{
		(void) pm_epoch_reclaim(h);
		if (pm_load(&s->head) != pm_load(&s->tail) || h->noverflow > 0)
			pm_spin_delay(attempt);
	}
}
