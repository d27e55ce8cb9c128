/*
 * pm_key.c
 *	  The order of wide entries (pm_key.h): by key, then the record's
 *	  ordering bytes, then rest; the key just below a record's (BELOW) sorts
 *	  after every entry below that record's, the key just above (ABOVE)
 *	  before every entry above it.  The ordering bytes compare with memcmp,
 *	  or in a host's order (pm_key_order).
 */
#include "pm_key.h"
#include "pool.h"

#include <string.h>

const pm_key_rec *
pm_key_rec_of(const pm_pool *pool, uint64_t rest)
{
	uint64_t	addr = rest & PM_REST_ADDR;

	if (rest & PM_REST_LOCAL)
		return (const pm_key_rec *) (uintptr_t) addr;
	pm_assert(pool != NULL && !(rest & PM_REST_PACKED));
	return (const pm_key_rec *) pm_pool_addr(pool, addr);
}

pm_key_view
pm_key_view_of(const pm_pool *pool, uint64_t rest)
{
	pm_key_view v;

	if (rest & PM_REST_PACKED)
	{
		const uint8_t *slot = pm_pool_addr(pool, rest & PM_REST_ADDR);
		/* a published slot's val changes only by a structure's flag, never its rest or distance */
		uint64_t	val = pm_load_relaxed((const uint64_t *) (slot + sizeof(uint64_t)));
		const pm_key_packed *p = (const pm_key_packed *) (slot + pm_packed_dist(val));

		v.rest = val & PM_PACKED_REST_MASK;
		v.keylen = p->keylen;
		v.len = p->len;
		v.data = p->data;
	}
	else
	{
		const pm_key_rec *r = pm_key_rec_of(pool, rest);

		v.rest = r->rest;
		v.keylen = r->keylen;
		v.len = r->len;
		v.data = r->data;
	}
	return v;
}

/* What one side of a comparison orders by. */
typedef struct side
{
	const uint8_t *bytes;
	uint32_t	len;
	uint64_t	rest;
	int			offset;			/* -1: just below, 1: just above, 0: the record's */
} side;

static side
side_of(const pm_pool *pool, uint64_t rest)
{
	side		s = {NULL, 0, rest, 0};

	if (pm_rest_is_wide(rest))
	{
		pm_key_view v = pm_key_view_of(pool, rest);

		s.bytes = v.data;
		s.len = v.keylen;
		s.rest = v.rest;
		s.offset = ((rest & PM_REST_ABOVE) != 0) - ((rest & PM_REST_BELOW) != 0);
	}
	return s;
}

const pm_key_order *
pm_pool_key_order(const pm_pool *pool)
{
	return pool != NULL ? pool->key_order : NULL;
}

int
pm_key_cmp_wide(const pm_pool *pool, const pm_key_order *order, const pm_key *a, const pm_key *b)
{
	side		x;
	side		y;
	uint32_t	common;
	int			c;

	/* the open ends of a key: below and above all of its entries */
	if (a->rest == 0 || b->rest == 0 || ((a->rest | b->rest) & PM_REST_HIGH))
		return a->rest < b->rest ? -1 : a->rest > b->rest;
	x = side_of(pool, a->rest);
	y = side_of(pool, b->rest);
	if (order != NULL)
	{
		c = order->cmp(order, x.bytes, x.len, y.bytes, y.len);
		if (c != 0)
			return c < 0 ? -1 : 1;
	}
	else
	{
		common = x.len < y.len ? x.len : y.len;
		c = common > 0 ? memcmp(x.bytes, y.bytes, common) : 0;
		if (c != 0)
			return c < 0 ? -1 : 1;
		if (x.len != y.len)
			return x.len < y.len ? -1 : 1;
	}
	if (x.rest != y.rest)
		return x.rest < y.rest ? -1 : 1;
	return (x.offset > y.offset) - (x.offset < y.offset);
}
