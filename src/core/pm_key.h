/*
 * pm_key.h
 *	  The entry of the ordered structures (nbtree, phast): (key, rest), key
 *	  the host's order-preserving 64-bit encoding of the indexed value, rest
 *	  its tie-breaker, never 0 for an entry (PostgreSQL: a NULL flag and the
 *	  heap TID).  The pair is an entry's identity and its sort order, so any
 *	  number of duplicates of one key work; fences are pairs too, with (0,0)
 *	  and (MAX,MAX) the open ends.
 *
 *	  A wide entry orders by more than its 8-byte key: its rest names a
 *	  record (pm_key_rec) that holds the entry's own rest and the bytes that
 *	  order it after the key, then bytes the host keeps with the entry (never
 *	  compared).  Entries of one key order by (bytes, rest), a narrow entry's
 *	  bytes being empty, so a structure may hold both kinds.  A record lives
 *	  in the pool once an entry is stored, either as a block of its own (rest:
 *	  PM_REST_WIDE | offset) or packed beside the entry's slot (PM_REST_WIDE |
 *	  PM_REST_PACKED | the slot's offset; see pm_key_packed), or in the
 *	  caller's memory (PM_REST_WIDE | PM_REST_LOCAL | address) for keys a
 *	  caller builds or copies out.  PM_REST_BELOW makes the key just below
 *	  the record's (pm_key_pred), PM_REST_ABOVE the key just above it (both:
 *	  the record's own).  Only the nbtree takes wide entries.
 *
 *	  A record's ordering bytes compare with memcmp, or with the host's
 *	  pm_key_order where the host's order is not one of bytes (a collation
 *	  whose comparison function is the order: PostgreSQL's libc collations).
 *	  A pool's order is the one its pm_pool names (key_order), which the
 *	  host sets for its process when it opens the pool; keys equal by their
 *	  8 bytes then compare by their records in that order.
 */
#ifndef PM_KEY_H
#define PM_KEY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct pm_key
{
	uint64_t	key;
	uint64_t	rest;
} pm_key;

#define PM_REST_HIGH	(UINT64_C(1) << 63)	/* never an entry's: above every entry of the key */
#define PM_REST_WIDE	(UINT64_C(1) << 61)	/* rest names a record */
#define PM_REST_LOCAL	(UINT64_C(1) << 60)	/* ... at an address of this process */
#define PM_REST_BELOW	(UINT64_C(1) << 59)	/* the key just below the record's */
#define PM_REST_ABOVE	(UINT64_C(1) << 58)	/* the key just above the record's */
#define PM_REST_PACKED	(UINT64_C(1) << 57)	/* ... packed beside the slot at the offset */
#define PM_REST_ADDR	((UINT64_C(1) << 57) - 1)	/* the record's pool offset or address */

/* A wide entry's record; immutable once an entry names it. */
typedef struct pm_key_rec
{
	uint64_t	rest;			/* the entry's tie-breaker, as a narrow entry's */
	uint32_t	keylen;			/* bytes of data that order the entry */
	uint32_t	len;			/* bytes of data: keylen, then the host's */
	uint8_t		data[];
} pm_key_rec;

/* Bytes of a record: its header and its data. */
static inline size_t
pm_key_rec_size(const pm_key_rec *r)
{
	return sizeof(pm_key_rec) + r->len;
}

/*
 * A packed record: a slot {key, val} in the pool whose val is PM_VAL_PACKED |
 * the record's distance in bytes after the slot << PM_PACKED_DIST_SHIFT |
 * the entry's rest (PM_PACKED_REST_BITS), with the record (lengths, then its
 * data) in the same block as the slot.  It costs two bytes of header and no
 * allocator block, and lives exactly as long as its slot's block.  The
 * slot's val may gain a structure's own flag (bit 62) without changing it.
 */
typedef struct pm_key_packed
{
	uint8_t		keylen;
	uint8_t		len;
	uint8_t		data[];
} pm_key_packed;

#define PM_VAL_PACKED		(UINT64_C(1) << 60)
#define PM_PACKED_REST_BITS 49
#define PM_PACKED_REST_MASK ((UINT64_C(1) << PM_PACKED_REST_BITS) - 1)
#define PM_PACKED_DIST_SHIFT PM_PACKED_REST_BITS
#define PM_PACKED_DIST_MAX	1023	/* 10 bits: a record within 1 KiB after its slot */
#define PM_PACKED_LEN_MAX	255

static inline uint32_t
pm_packed_dist(uint64_t val)
{
	return (uint32_t) ((val >> PM_PACKED_DIST_SHIFT) & PM_PACKED_DIST_MAX);
}

#define PM_KEY_MIN	((pm_key) {0, 0})
#define PM_KEY_MAX	((pm_key) {UINT64_MAX, UINT64_MAX})

struct pm_pool;

/*
 * A host's order of records' ordering bytes (a and b, alen and blen of
 * them): negative, 0 or positive as a sorts before, with or after b; 0 only
 * for equal bytes, so that an entry's identity stays its bytes.  A host
 * embeds it in what the function needs.  It must not fail or allocate: it
 * runs inside the structures' operations.
 */
typedef struct pm_key_order
{
	int			(*cmp) (const struct pm_key_order *order, const uint8_t *a, uint32_t alen,
						const uint8_t *b, uint32_t blen);
} pm_key_order;

/*
 * Whether rest names a record.  0, and the rests with PM_REST_HIGH (all
 * ones, and what pm_key_pred makes of them), are the open ends of a key:
 * never wide.
 */
static inline bool
pm_rest_is_wide(uint64_t rest)
{
	return (rest & (PM_REST_HIGH | PM_REST_WIDE)) == PM_REST_WIDE;
}

/*
 * The record a wide rest names, a block of its own or a local one; pool
 * resolves pool offsets (NULL: none may occur).  Not for packed records.
 */
extern const pm_key_rec *pm_key_rec_of(const struct pm_pool *pool, uint64_t rest);

/*
 * What a wide rest's record holds, in any of its forms: the entry's rest,
 * its ordering bytes and all of its data.
 */
typedef struct pm_key_view
{
	uint64_t	rest;
	uint32_t	keylen;
	uint32_t	len;
	const uint8_t *data;
} pm_key_view;

extern pm_key_view pm_key_view_of(const struct pm_pool *pool, uint64_t rest);

/*
 * Order of two entries of one key of which one at least is wide, their
 * records in pool (or local), in order (NULL: memcmp) (pm_key.c).
 */
extern int	pm_key_cmp_wide(const struct pm_pool *pool, const pm_key_order *order,
							const pm_key *a, const pm_key *b);

/* The order of a pool's records in this process (NULL: memcmp). */
extern const pm_key_order *pm_pool_key_order(const struct pm_pool *pool);

/* Order of two entries whose wide records are local, in order (NULL: memcmp). */
static inline int
pm_key_cmp_by(const pm_key_order *order, const pm_key *a, const pm_key *b)
{
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	if (a->rest == b->rest)
		return 0;
	if (pm_rest_is_wide(a->rest) || pm_rest_is_wide(b->rest))
		return pm_key_cmp_wide(NULL, order, a, b);
	return a->rest < b->rest ? -1 : 1;
}

/* Order of two entries whose wide records are in pool (or local), in the pool's order. */
static inline int
pm_key_cmp_in(const struct pm_pool *pool, const pm_key *a, const pm_key *b)
{
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	if (a->rest == b->rest)
		return 0;
	if (pm_rest_is_wide(a->rest) || pm_rest_is_wide(b->rest))
		return pm_key_cmp_wide(pool, pm_pool_key_order(pool), a, b);
	return a->rest < b->rest ? -1 : 1;
}

/* Order of two entries, narrow or with local records, by memcmp. */
static inline int
pm_key_cmp(const pm_key *a, const pm_key *b)
{
	return pm_key_cmp_by(NULL, a, b);
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

/*
 * The greatest key below k (k is not PM_KEY_MIN); for a wide k, a key that
 * sorts just below it and above everything below it.
 */
static inline pm_key
pm_key_pred(const pm_key *k)
{
	if (pm_rest_is_wide(k->rest))
		return (pm_key) {k->key, k->rest | PM_REST_BELOW};
	if (k->rest > 0)
		return (pm_key) {k->key, k->rest - 1};
	return (pm_key) {k->key - 1, UINT64_MAX};
}

#endif							/* PM_KEY_H */
