/*
 * recon.c
 *	  The reconciliation ring of a pool; see recon.h.
 */
#include "recon.h"

#include <string.h>

_Static_assert(sizeof(pm_recon) <= PM_ALLOC_MAX_BLOCK, "recon ring must fit one block");

uint64_t
pm_recon_create(pm_pool *pool, pm_alloc *a, pm_error *err)
{
	uint64_t	off = pm_alloc_block(a, sizeof(pm_recon), err);
	pm_recon   *r;

	if (off == 0)
		return 0;
	r = pm_pool_addr(pool, off);
	memset(r, 0, sizeof(*r));
	pm_persist(&pool->persist, r, sizeof(*r));
	return off;
}

void
pm_recon_note(pm_pool *pool, pm_recon *r, int home, uint64_t key, uint64_t rest, uint64_t pos,
			  uint64_t *durable, pm_recon_durable_fn durable_fn)
{
	unsigned	first = (unsigned) home % PM_RECON_STRIPES;
	pm_recon_entry *e;

	for (unsigned i = 0;; i++)
	{
		pm_recon_stripe *s = &r->stripe[(first + i) % PM_RECON_STRIPES];
		bool		last = i == PM_RECON_STRIPES - 1;
		uint64_t	old;

		e = &s->e[pm_fetch_add(&s->head, 1) % PM_RECON_PER_STRIPE];
		old = pm_load(&e->pos);
		/*
		 * Refresh the durable position; at the last stripe every slot was
		 * busy, so force a flush past both notes, which frees the whole ring.
		 */
		if (old > *durable)
			*durable = durable_fn(old > pos ? old : pos, last);
		if (old <= *durable)
			break;
		if (last)
		{
			/* the note we overwrite may still be needed: check everything after a crash */
			if (!pm_load(&s->overflow))
			{
				pm_store(&s->overflow, 1);
				pm_persist(&pool->persist, &s->overflow, sizeof(uint64_t));
			}
			break;
		}
		/* a needed note stays where it is; try the next stripe */
	}
	pm_store_relaxed(&e->key, key);
	pm_store_relaxed(&e->rest, rest);
	pm_store(&e->pos, pos);
	pm_persist(&pool->persist, e, sizeof(*e));
}

bool
pm_recon_overflowed(const pm_recon *r)
{
	for (int i = 0; i < PM_RECON_STRIPES; i++)
		if (pm_load(&r->stripe[i].overflow))
			return true;
	return false;
}

void
pm_recon_foreach(const pm_recon *r, void (*fn) (void *ctx, uint64_t key, uint64_t rest), void *ctx)
{
	for (int i = 0; i < PM_RECON_STRIPES; i++)
		for (int j = 0; j < PM_RECON_PER_STRIPE; j++)
			if (pm_load(&r->stripe[i].e[j].pos) != 0)
				fn(ctx, r->stripe[i].e[j].key, r->stripe[i].e[j].rest);
}

void
pm_recon_clear(pm_pool *pool, pm_recon *r)
{
	memset(r, 0, sizeof(*r));
	pm_persist(&pool->persist, r, sizeof(*r));
}
