/*
 * recon.c
 *	  The reconciliation ring of a pool; see recon.h.
 */
#include "recon.h"
#include "tips/olog.h"

#include <string.h>

_Static_assert(sizeof(pm_recon_stripe) <= PM_ALLOC_MAX_BLOCK, "a stripe must fit one block");

static pm_recon_stripe *
stripe_at(const pm_pool *pool, const pm_recon *r, int i)
{
	return pm_pool_addr(pool, pm_load(&r->stripe[i]));
}

/* A zeroed stripe block, persisted; 0 if the pool has no room. */
static uint64_t
new_stripe(pm_pool *pool, pm_alloc *a, pm_error *err)
{
	uint64_t	off = pm_alloc_block(a, sizeof(pm_recon_stripe), err);

	if (off != 0)
	{
		memset(pm_pool_addr(pool, off), 0, sizeof(pm_recon_stripe));
		pm_persist(&pool->persist, pm_pool_addr(pool, off), sizeof(pm_recon_stripe));
	}
	return off;
}

/*
 * Link stripe n (a new block, unless a concurrent writer linked one first)
 * and make it usable.  The link is persisted before the count, so after a
 * crash a linked stripe is either in use or simply linked: both are marked
 * and visited, and the next growth reuses it.  False if the pool is full.
 */
static bool
grow(pm_pool *pool, pm_recon *r, uint64_t n)
{
	pm_alloc	a;
	pm_error	err;
	uint64_t	expected = 0;

	if (pm_load(&r->stripe[n]) == 0)
	{
		uint64_t	off;

		pm_alloc_attach_pool(&a, pool);
		if ((off = new_stripe(pool, &a, &err)) == 0)
			return false;
		if (!pm_cas(&r->stripe[n], &expected, off))
			pm_free_block(&a, off, &err);
		pm_persist(&pool->persist, &r->stripe[n], sizeof(uint64_t));
	}
	expected = n;
	pm_cas(&r->nstripes, &expected, n + 1);
	pm_persist(&pool->persist, &r->nstripes, sizeof(uint64_t));
	return true;
}

uint64_t
pm_recon_create(pm_pool *pool, pm_alloc *a, pm_error *err)
{
	uint64_t	off = pm_alloc_block(a, sizeof(pm_recon), err);
	pm_recon   *r;

	if (off == 0)
		return 0;
	r = pm_pool_addr(pool, off);
	memset(r, 0, sizeof(*r));
	for (int i = 0; i < PM_RECON_MIN_STRIPES; i++)
		if ((r->stripe[i] = new_stripe(pool, a, err)) == 0)
			return 0;
	r->nstripes = PM_RECON_MIN_STRIPES;
	pm_persist(&pool->persist, r, sizeof(*r));
	return off;
}

void
pm_recon_cursor_init(pm_recon_cursor *c, int home)
{
	c->durable = 0;
	c->stripe = (uint32_t) home;
	c->slot = 0;
	c->left = 0;
}

/* Claim the next run of the cursor's stripe (taken modulo n) and fetch its lines. */
static void
claim_run(pm_pool *pool, pm_recon *r, pm_recon_cursor *c, uint64_t n)
{
	pm_recon_stripe *s;

	c->stripe %= n;
	s = stripe_at(pool, r, (int) c->stripe);
	c->slot = (uint32_t) (pm_fetch_add(&s->head, PM_RECON_RUN) % PM_RECON_PER_STRIPE);
	c->left = PM_RECON_RUN;
	for (size_t i = 0; i < PM_RECON_RUN * sizeof(pm_recon_entry); i += 64)
		__builtin_prefetch((const char *) &s->e[c->slot] + i, 1);
}

void
pm_recon_note(pm_pool *pool, pm_recon *r, pm_recon_cursor *c, uint64_t key, uint64_t rest,
			  uint64_t pos, pm_recon_durable_fn durable_fn)
{
	pm_recon_stripe *s;
	pm_recon_entry *e;
	uint64_t	old;
	uint64_t	tries = 0;		/* stripes met in a row whose next note is needed */

	for (;;)
	{
		uint64_t	n = pm_load(&r->nstripes);

		if (c->left == 0)
			claim_run(pool, r, c, n);
		s = stripe_at(pool, r, (int) c->stripe);
		e = &s->e[c->slot];
		old = pm_load(&e->pos);
		if (old != PM_RECON_WRITING && old > c->durable)
			c->durable = durable_fn(old > pos ? old : pos, false);
		if (old <= c->durable)
		{
			if (pm_cas(&e->pos, &old, PM_RECON_WRITING))
				goto write;
			/* the stripe came round to this run and another writer took the slot */
			c->left = 0;
			continue;
		}

		/* a needed note stays where it is; go on in the next stripe */
		if (++tries < n)
		{
			c->left = 0;
			c->stripe++;
			continue;
		}
		if (n < PM_RECON_MAX_STRIPES && grow(pool, r, n))
		{
			c->left = 0;
			c->stripe = (uint32_t) n;
			tries = 0;
			continue;
		}
		/* a slot still being written is another writer's a moment longer */
		if (old == PM_RECON_WRITING)
		{
			c->left = 0;
			c->stripe++;
			tries = 0;
			continue;
		}

		/*
		 * Every stripe's next slot is needed and the ring cannot grow: force
		 * a flush past both notes, which frees the whole ring.  If the host
		 * cannot flush, the note we overwrite may still be needed: check
		 * everything after a crash.
		 */
		c->durable = durable_fn(old > pos ? old : pos, true);
		if (old > c->durable && !pm_load(&s->overflow))
		{
			pm_store(&s->overflow, 1);
			pm_persist(&pool->persist, &s->overflow, sizeof(uint64_t));
		}
		if (pm_cas(&e->pos, &old, PM_RECON_WRITING))
			break;
		c->left = 0;
	}
write:
	c->slot++;
	c->left--;
	pm_store_relaxed(&e->key, key);
	pm_store_relaxed(&e->rest, rest);
	pm_store(&e->pos, pos);
	pm_persist(&pool->persist, e, sizeof(*e));
}

/* Stripes linked (in use, or linked by a growth a crash interrupted) */
static int
linked_stripes(const pm_recon *r)
{
	int			n = 0;

	while (n < PM_RECON_MAX_STRIPES && pm_load(&r->stripe[n]) != 0)
		n++;
	return n;
}

bool
pm_recon_overflowed(const pm_pool *pool, const pm_recon *r)
{
	int			n = linked_stripes(r);

	for (int i = 0; i < n; i++)
		if (pm_load(&stripe_at(pool, r, i)->overflow))
			return true;
	return false;
}

void
pm_recon_foreach(const pm_pool *pool, const pm_recon *r,
				 void (*fn) (void *ctx, uint64_t key, uint64_t rest), void *ctx)
{
	int			n = linked_stripes(r);

	for (int i = 0; i < n; i++)
	{
		const pm_recon_stripe *s = stripe_at(pool, r, i);

		for (size_t j = 0; j < PM_RECON_PER_STRIPE; j++)
			if (pm_load(&s->e[j].pos) != 0)
				fn(ctx, s->e[j].key, s->e[j].rest);
	}
}

uint64_t
pm_recon_capacity(const pm_recon *r)
{
	return pm_load(&r->nstripes) * PM_RECON_PER_STRIPE;
}

void
pm_recon_clear(pm_pool *pool, pm_recon *r)
{
	int			n = linked_stripes(r);

	for (int i = 0; i < n; i++)
	{
		pm_recon_stripe *s = stripe_at(pool, r, i);

		memset(s, 0, sizeof(*s));
		pm_persist(&pool->persist, s, sizeof(*s));
	}
}

pm_errcode
pm_recon_mark_roots(pm_alloc *a, pm_pool *pool, pm_error *err)
{
	pm_errcode	rc = PM_OK;
	const pm_recon *r = pm_recon_of(pool);
	int			n = r != NULL ? linked_stripes(r) : 0;

	for (int i = 0; rc == PM_OK && i < PM_POOL_NROOTS; i++)
		if (i != PM_OLOG_ROOT && pm_pool_root(pool, i) != 0)
			rc = pm_alloc_mark(a, pm_pool_root(pool, i), err);
	for (int i = 0; rc == PM_OK && i < n; i++)
		rc = pm_alloc_mark(a, pm_load(&r->stripe[i]), err);
	if (rc == PM_OK)
		rc = pm_olog_mark(a, pool, err);
	return rc;
}
