/*
 * pm_key.h
 *	  The entry of the ordered structures (nbtree, phast): (key, rest), key
 *	  the host's order-preserving 64-bit encoding of the indexed value, rest
 *	  its tie-breaker, never 0 for an entry (PostgreSQL: a NULL flag and the
 *	  heap TID).  The pair is an entry's identity and its sort order, so any
 *	  number of duplicates of one key work; fences are pairs too, with (0,0)
 *	  and (MAX,MAX) the open ends.
 */
#ifndef PM_KEY_H
#define PM_KEY_H

#include <stdbool.h>
#include <stdint.h>

typedef struct pm_key
{
	uint64_t	key;
	uint64_t	rest;
} pm_key;

#define PM_KEY_MIN	((pm_key) {0, 0})
#define PM_KEY_MAX	((pm_key) {UINT64_MAX, UINT64_MAX})

static inline int
pm_key_cmp(const pm_key *a, const pm_key *b)
{
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	if (a->rest != b->rest)
		return a->rest < b->rest ? -1 : 1;
	return 0;
}

static inline bool
pm_key_is_max(const pm_key *a)
{
	return a->key == UINT64_MAX && a->rest == UINT64_MAX;
}

static inline bool
pm_key_is_min(const pm_key *a)
{
	return a->key == 0 && a->rest == 0;
}

/* The greatest key below k (k is not PM_KEY_MIN). */
static inline pm_key
pm_key_pred(const pm_key *k)
{
	if (k->rest > 0)
		return (pm_key) {k->key, k->rest - 1};
	return (pm_key) {k->key - 1, UINT64_MAX};
}

#endif							/* PM_KEY_H */
