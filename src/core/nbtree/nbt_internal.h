/*
 * nbt_internal.h
 *	  Layouts and helpers shared by the files of src/core/nbtree.
 *
 * PM offsets are relative to the pool; DRAM offsets to the shared arena.
 * Every word that another process may read concurrently is accessed with
 * the pm_load/pm_store/pm_cas macros.
 */
#ifndef PM_NBT_INTERNAL_H
#define PM_NBT_INTERNAL_H

#include "nbtree.h"

#include <stddef.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* ---------- PM layer ---------- */

#define NBT_META_MAGIC	UINT64_C(0x314d45455254424e)	/* "NBTREEM1" */
#define NBT_META_VERSION 1		/* without host bytes */
#define NBT_META_VERSION_HOST 2 /* with host bytes (nbt_pm_meta_host) */
#define NBT_META_VERSION_PACKED 3	/* host bytes (maybe none), and packed records */

typedef struct nbt_pm_meta
{
	uint64_t	magic;
	uint64_t	version;
	uint64_t	head;			/* first KV block; CAS at the link of its SMO */
	uint64_t	pad[5];
} nbt_pm_meta;

/* The meta block of versions 2 and 3: the host's bytes follow, written at format, never changed. */
typedef struct nbt_pm_meta_host
{
	nbt_pm_meta meta;
	uint32_t	host_len;
	uint8_t		host[NBT_META_HOST_MAX];
} nbt_pm_meta_host;

/*
 * A slot is valid when val holds a rest (non-zero) without the DEAD bit.
 * Insert writes key, then val: the val store is the durability point (a
 * wide entry's record is durable before it).  Delete sets DEAD (keeping the
 * rest, so the SMO sync phase can still name the entry, and the record).
 * A packed entry's val is PM_VAL_PACKED | its record's distance | its rest
 * (pm_key.h); other code names it by its slot (nbt_slot_entry).
 */
#define NBT_VAL_DEAD	(UINT64_C(1) << 62)
#define NBT_VAL_REST	(~NBT_VAL_DEAD)
#define NBT_VAL_PACKED	PM_VAL_PACKED

_Static_assert(NBT_REST_MAX == PM_PACKED_REST_MASK, "a packed val holds an entry's rest");

typedef struct nbt_pm_slot
{
	uint64_t	key;
	uint64_t	val;
} nbt_pm_slot;

typedef struct nbt_kv
{
	uint64_t	next;			/* next block in key order, 0 at the end */
	uint64_t	slot_cap;		/* slots of this block, immutable (0: NBT_LEAF_CAP); the
								 * room after them holds packed records */
	nbt_skey	low;			/* low fence, immutable */
	nbt_pm_slot slot[NBT_LEAF_CAP];
} nbt_kv;

_Static_assert(sizeof(nbt_kv) == 1024, "KV block must be 1 KiB");

/*
 * A block's room for entries: its first slot_cap slots, then packed records
 * from the end of the block down to them (README: "Packed records").  A
 * narrow entry takes a slot; a packed one its slot and its record.  Each
 * block's split of its room is fixed when it is written, after the entries
 * it is written with.
 */
#define NBT_KV_HEADER	offsetof(nbt_kv, slot)
#define NBT_KV_ROOM		(sizeof(nbt_kv) - NBT_KV_HEADER)
#define NBT_PACKED_MAX	80		/* data bytes of a record that is packed */

_Static_assert(NBT_KV_ROOM == NBT_LEAF_CAP * sizeof(nbt_pm_slot), "narrow entries fill a block");
_Static_assert(sizeof(nbt_kv) <= PM_PACKED_DIST_MAX + 1, "a packed record's distance fits its val");
_Static_assert(NBT_PACKED_MAX <= PM_PACKED_LEN_MAX, "a packed record's lengths fit a byte");

/* Room of a packed record of len data bytes. */
static inline uint32_t
nbt_packed_size(uint32_t len)
{
	return (uint32_t) sizeof(pm_key_packed) + len;
}

/* Slots of a block (its slot_cap checked by the rebuild; bounded here all the same). */
static inline uint32_t
nbt_kv_slots(const nbt_kv *kv)
{
	return kv->slot_cap == 0 || kv->slot_cap > NBT_LEAF_CAP ? NBT_LEAF_CAP : (uint32_t) kv->slot_cap;
}

/* Bytes a block of slot_cap slots keeps for packed records. */
static inline uint32_t
nbt_kv_packed_room(uint32_t slot_cap)
{
	return (uint32_t) (NBT_KV_ROOM - slot_cap * sizeof(nbt_pm_slot));
}

/* Pool offset of slot pos of the block at kv_off. */
static inline uint64_t
nbt_slot_offset(uint64_t kv_off, int pos)
{
	return kv_off + NBT_KV_HEADER + (uint64_t) pos * sizeof(nbt_pm_slot);
}

/* The entry a slot holds (val read from it), as the rest of the tree names entries. */
static inline nbt_skey
nbt_slot_entry(uint64_t kv_off, int pos, uint64_t key, uint64_t val)
{
	if (val & NBT_VAL_PACKED)
		return (nbt_skey) {key, PM_REST_WIDE | PM_REST_PACKED | nbt_slot_offset(kv_off, pos)};
	return (nbt_skey) {key, val & NBT_VAL_REST};
}

static inline bool
nbt_val_live(uint64_t val)
{
	return val != 0 && !(val & NBT_VAL_DEAD);
}

/*
 * A wide entry's record that is not packed (pm_key_rec) is a pool block of
 * its own.  The slot that stores the entry names it, and so do the fences
 * and separators made from the entry.  It is retired when a rewrite of its
 * leaf drops its dead slot, unless it is the leaf's low fence; a fence's
 * record goes when a merge drops the fence (README: "Wide entries").  A
 * packed record goes with its block; a fence made from a packed entry has a
 * block of its own.
 */
_Static_assert(NBT_REC_DATA_MAX == PM_ALLOC_MAX_BLOCK - sizeof(pm_key_rec),
			   "a record is at most one allocator block");

/* ---------- DRAM layer ---------- */

#define NBT_FROZEN		UINT64_C(1)		/* in leaf.next: its SMO has copied it */
#define NBT_SMO_BIT		(UINT64_C(1) << 63)	/* in leaf.bitmap */
#define NBT_MERGED		(UINT64_C(1) << 62)	/* in leaf.bitmap, set with the SMO bit: the
											 * left sibling's merge absorbs this leaf */
#define NBT_SLOT_BITS	((UINT64_C(1) << NBT_LEAF_CAP) - 1)	/* leaf.bitmap's committed slots */
#define NBT_MERGE_SEALED UINT64_C(1)	/* in leaf.merge_right: the SMO absorbs nothing */
#define NBT_MERGE_TAKEN	UINT64_C(2)	/* in leaf.merge_right with the sibling: it absorbs it */

/*
 * leaf.claim: slots claimed (low half, fetch-and-add; may pass the block's
 * slots) and packed bytes claimed (high half); a claim is good only if both
 * fit their part of the block (nbt_claim_fits).  Claims only grow, so good
 * ones never overlap.
 */
#define NBT_CLAIM_BYTES_SHIFT 32

static inline uint64_t
nbt_claim_of(uint32_t slots, uint32_t bytes)
{
	return (uint64_t) bytes << NBT_CLAIM_BYTES_SHIFT | slots;
}

static inline uint32_t
nbt_claim_slots(uint64_t claim)
{
	return (uint32_t) claim;
}

static inline uint32_t
nbt_claim_bytes(uint64_t claim)
{
	return (uint32_t) (claim >> NBT_CLAIM_BYTES_SHIFT);
}

static inline bool
nbt_claim_fits(uint64_t claim, uint32_t slot_cap)
{
	return nbt_claim_slots(claim) <= slot_cap &&
		nbt_claim_bytes(claim) <= nbt_kv_packed_room(slot_cap);
}

/* leaf.flags */
#define NBT_SYNC_DONE	0x01u	/* deletes of the copy phase are replayed */
#define NBT_LINK_DONE	0x02u	/* replacement linked in PM: durability point */
#define NBT_PARENT_DONE 0x04u	/* parent points to the replacement */
#define NBT_PENDING		0x08u	/* created by an SMO whose link is not done */
#define NBT_WANTS_RECORDS 0x10u /* an insert found no room for its packed record */

typedef struct nbt_leaf
{
	/* the first two cache lines hold everything a lookup reads */
	uint64_t	kv;				/* PM offset of the KV block */
	uint64_t	bitmap;			/* committed slots | NBT_SMO_BIT */
	uint64_t	copy;			/* first replacement leaf, 0 before the copy */
	uint64_t	claim;			/* slots and packed bytes claimed (nbt_claim_of) */
	nbt_skey	low;			/* immutable fences */
	nbt_skey	high;
	uint8_t		fp[NBT_LEAF_CAP];	/* 1-byte hash of each slot's key */
	uint8_t		flags;
	uint8_t		slot_cap;		/* its block's slots (nbt_kv_slots) */
	/* used by writers and SMOs */
	uint64_t	next;			/* DRAM offset of the next leaf | NBT_FROZEN */
	uint64_t	origin;			/* while PENDING: the leaf whose SMO made this */
	uint64_t	birth_right;	/* the second replacement leaf of that SMO, or 0 */
	uint64_t	copied;			/* the origin's slots this SMO copied (first leaf) */
	/* merges (README: "Merge") */
	uint64_t	merge_right;	/* the right sibling this leaf's SMO is asked to absorb (| TAKEN
								 * once it will), or SEALED */
	uint64_t	merge_left;		/* the leaf whose SMO claimed this one (MERGED) */
	uint64_t	absorbed;		/* first leaf of an SMO: the origin's sibling it absorbed */
	uint64_t	copied_right;	/* first leaf: the absorbed sibling's slots it copied */
} nbt_leaf;

_Static_assert(offsetof(nbt_leaf, next) <= 128, "a lookup's leaf fields must fit two cache lines");
_Static_assert(offsetof(nbt_leaf, fp) + 64 <= sizeof(nbt_leaf), "fingerprint compares read 64 bytes");

#define NBT_INNER_CAP	82

/*
 * Separators as struct-of-arrays: a search reads the compact key array
 * (656 bytes) and touches rest only on equal keys, so a binary search costs
 * a few cache lines, not one per probe.  Child i covers
 * [(key[i], rest[i]), next separator); child0 covers what is below key[0].
 * Children are DRAM offsets, or at level 1 words that add a hint
 * (nbt_word_of_child).
 */
typedef struct nbt_inner
{
	uint64_t	version;		/* optimistic lock: odd while a writer holds it */
	uint32_t	count;
	uint32_t	level;			/* 1: children are leaves */
	uint64_t	sibling;		/* right neighbour at this level (B-link) */
	nbt_skey	high;			/* exclusive upper bound; MAX on the right edge */
	uint64_t	child0;			/* covers keys below the first separator */
	uint64_t	pad[2];
	uint64_t	key[NBT_INNER_CAP];
	uint64_t	rest[NBT_INNER_CAP];
	uint64_t	child[NBT_INNER_CAP];
} nbt_inner;

static inline nbt_skey
nbt_inner_sep(const nbt_inner *n, int i)
{
	return (nbt_skey) {n->key[i], n->rest[i]};
}

static inline void
nbt_inner_set(nbt_inner *n, int i, const nbt_skey *sep, uint64_t child)
{
	n->key[i] = sep->key;
	n->rest[i] = sep->rest;
	n->child[i] = child;
}

_Static_assert(sizeof(nbt_inner) <= 2048, "inner node must fit 2 KiB");

#define NBT_DROOT_MAGIC UINT64_C(0x544f4f5244544247)

/*
 * The shared DRAM descriptor of one tree.  Its counters change only on SMOs:
 * a counter bumped by every insert would be a cache line every writer
 * fights over.
 */
typedef struct nbt_droot
{
	uint64_t	magic;
	uint64_t	root;			/* DRAM offset of the root inner node */
	uint64_t	first;			/* DRAM offset of the first leaf */
	uint64_t	smo_splits;
	uint64_t	smo_compactions;
	uint64_t	smo_merges;
	uint64_t	leaves;
	uint64_t	inner_nodes;
	uint64_t	spare_kv;		/* a PM block kept for rewrites in a full pool */
	uint64_t	holds_packed;	/* set once a leaf holds a packed record: merges
								 * reserve a separator's record */
} nbt_droot;

/* ---------- helpers ---------- */

static inline nbt_kv *
nbt_kv_at(const nbt_tree *t, uint64_t off)
{
	return (nbt_kv *) pm_pool_addr(t->pool, off);
}

static inline nbt_leaf *
nbt_leaf_at(const nbt_tree *t, uint64_t off)
{
	return (nbt_leaf *) pm_alloc_addr(t->dram, off);
}

/*
 * A level-1 node's child word: the leaf's DRAM offset (exact: leaves are
 * blocks of at least 256 bytes, which the allocator aligns to their size, in
 * a tier below NBT_DRAM_TIER_MAX) and its KV block's pool offset, a hint that
 * lets a lookup load the block together with the leaf rather than after it
 * (README: "Performance").  The hint is only ever prefetched: bits a pool
 * beyond 64 TiB would need are simply lost.
 */
#define NBT_LEAF_SHIFT		8	/* leaf offsets are multiples of 256 */
#define NBT_KV_SHIFT		10	/* KV blocks (1 KiB) are multiples of 1 KiB */
#define NBT_CHILD_LEAF_BITS	28
_Static_assert(sizeof(nbt_leaf) > (1 << NBT_LEAF_SHIFT) / 2, "a leaf's block is 256-byte aligned");
_Static_assert(NBT_DRAM_TIER_MAX == UINT64_C(1) << (NBT_CHILD_LEAF_BITS + NBT_LEAF_SHIFT),
			   "leaf offsets of the whole tier fit a child word");

static inline uint64_t
nbt_leaf_of_word(uint64_t word)
{
	return (word & ((UINT64_C(1) << NBT_CHILD_LEAF_BITS) - 1)) << NBT_LEAF_SHIFT;
}

static inline uint64_t
nbt_kv_hint_of_word(uint64_t word)
{
	return (word >> NBT_CHILD_LEAF_BITS) << NBT_KV_SHIFT;
}

/* The child a node at level stores as word. */
static inline uint64_t
nbt_child_of_word(uint32_t level, uint64_t word)
{
	return level == 1 ? nbt_leaf_of_word(word) : word;
}

/* The word a node at level stores for child. */
static inline uint64_t
nbt_word_of_child(const nbt_tree *t, uint32_t level, uint64_t child)
{
	uint64_t	kv;

	if (level != 1)
		return child;
	pm_assert(child % (1 << NBT_LEAF_SHIFT) == 0 && child < NBT_DRAM_TIER_MAX);
	kv = pm_load(&nbt_leaf_at(t, child)->kv);
	return (kv >> NBT_KV_SHIFT) << NBT_CHILD_LEAF_BITS | child >> NBT_LEAF_SHIFT;
}

static inline nbt_inner *
nbt_inner_at(const nbt_tree *t, uint64_t off)
{
	return (nbt_inner *) pm_alloc_addr(t->dram, off);
}

static inline nbt_droot *
nbt_droot_at(const nbt_tree *t)
{
	return (nbt_droot *) pm_alloc_addr(t->dram, t->dram_root);
}

static inline nbt_pm_meta *
nbt_meta(const nbt_tree *t)
{
	return (nbt_pm_meta *) pm_pool_addr(t->pool, pm_pool_root(t->pool, 0));
}

static inline uint8_t
nbt_fingerprint(uint64_t key)
{
	uint64_t	h = key * UINT64_C(0x9e3779b97f4a7c15);

	return (uint8_t) (h >> 56);
}

/*
 * The slots of leaf l whose fingerprint equals fp, as a bitmap (callers AND
 * it with the committed bits).  One vector compare per 16 slots replaces a
 * per-slot loop that cost more than the leaf's cache misses in cache.  The
 * read races with inserters' fingerprint stores exactly as per-byte relaxed
 * loads would: a slot is trusted only after its commit bit and its PM key.
 */
static inline uint64_t
nbt_fp_matches(const nbt_leaf *l, uint8_t fp)
{
	uint64_t	mask = 0;

#ifdef __SSE2__
	const __m128i want = _mm_set1_epi8((char) fp);

	for (int i = 0; i < 4; i++)
	{
		__m128i		have = _mm_loadu_si128((const __m128i *) &l->fp[i * 16]);

		mask |= (uint64_t) (uint16_t) _mm_movemask_epi8(_mm_cmpeq_epi8(have, want)) << (i * 16);
	}
#else
	for (int i = 0; i < NBT_LEAF_CAP; i++)
		if (pm_load_relaxed(&l->fp[i]) == fp)
			mask |= UINT64_C(1) << i;
#endif
	return mask & NBT_SLOT_BITS;
}

/* Atomic snapshot of a 16-byte skey that never changes after publication. */
static inline nbt_skey
nbt_skey_load(const nbt_skey *p)
{
	nbt_skey	s;

	s.key = pm_load_relaxed(&p->key);
	s.rest = pm_load_relaxed(&p->rest);
	return s;
}

/*
 * The fence between neighbouring entries a < b: b, or where their 8-byte
 * keys differ and b is wide, (b.key, 0), which every entry of that key
 * follows: a fence without a record to keep.
 */
static inline nbt_skey
nbt_separator(const nbt_skey *a, const nbt_skey *b)
{
	if (pm_rest_is_wide(b->rest) && a->key < b->key)
		return (nbt_skey) {b->key, 0};
	return *b;
}

/* The tree's order of entries, fences and separators. */
static inline int
nbt_cmp(const nbt_tree *t, const nbt_skey *a, const nbt_skey *b)
{
	return pm_key_cmp_in(t->pool, a, b);
}

/* Where a packed record of size bytes goes, bytes_before bytes of them claimed before it. */
static inline pm_key_packed *
nbt_packed_at(nbt_kv *kv, uint32_t bytes_before, uint32_t size)
{
	return (pm_key_packed *) ((char *) kv + sizeof(nbt_kv) - bytes_before - size);
}

/* Room for a whole record that can be packed (a pm_key_rec, aligned as one). */
typedef struct nbt_rec_buf
{
	uint64_t	words[(sizeof(pm_key_rec) + NBT_PACKED_MAX + 7) / 8];
} nbt_rec_buf;

/* nbt_rec.c */
extern bool nbt_input_rest_valid(uint64_t rest, pm_error *err);
extern uint64_t nbt_rec_store(pm_alloc *a, pm_pool *pool, uint64_t rest, pm_error *err);

/* Whether t packs the wide entry's record rest names; *v then views it. */
extern bool nbt_rec_packs(const nbt_tree *t, uint64_t rest, pm_key_view *v);

/* Write v's record packed for slot pos of kv (not persisted); returns the slot's val. */
extern uint64_t nbt_rec_pack(nbt_kv *kv, int pos, uint32_t bytes_before, const pm_key_view *v);

/* Room an entry takes in a block: its slot, and its record if packed. */
extern uint32_t nbt_entry_room(const nbt_tree *t, const nbt_skey *sk);

/*
 * The slots of a new block of a tree that packs, written with n entries
 * whose packed records take bytes: as many as entries of their mean size
 * would fill, but at least one more than n, and where the block holds
 * packed records or an insert wanted room for one, room for one more of the
 * largest where the block has it.
 */
extern uint32_t nbt_block_slots(const nbt_tree *t, uint32_t n, uint32_t bytes, bool wants_records);

/* The whole record a pool or local rest names, a packed one copied into buf. */
extern const pm_key_rec *nbt_rec_whole(const pm_pool *pool, uint64_t rest, nbt_rec_buf *buf);

/*
 * A fence's own record for a packed entry (rest names it): in *spare if the
 * caller reserved one (taken), else a new block; flushed, not drained.
 * Returns the fence's rest, 0 on error.
 */
extern uint64_t nbt_rec_fence(pm_alloc *a, pm_pool *pool, uint64_t *spare, uint64_t rest,
							  pm_error *err);
extern pm_errcode nbt_rec_check_kv(const pm_pool *pool, uint64_t kv_off, bool packed,
								   bool *any_wide, pm_error *err);
extern pm_errcode nbt_rec_mark_kv(pm_alloc *a, const pm_pool *pool, uint64_t kv_off,
								  pm_error *err);
extern void nbt_rec_retire_dropped(nbt_tree *t, nbt_leaf *x, uint64_t copied, nbt_leaf *y,
								   uint64_t copied_right);

/* nbt_inner.c */
extern uint64_t nbt_descend(nbt_tree *t, const nbt_skey *sk, uint32_t stop_level);
extern uint64_t nbt_descend_from(nbt_tree *t, const nbt_skey *sk, uint64_t start,
								 uint64_t *level1);
extern pm_errcode nbt_replace_child(nbt_tree *t, const nbt_skey *low, uint64_t old_child,
									uint64_t new_child, const nbt_skey *sep,
									uint64_t right_child, uint64_t absorbed, pm_error *err);
extern bool nbt_request_merge(nbt_tree *t, uint64_t x_off, uint64_t y_off);
extern uint64_t nbt_inner_new(nbt_tree *t, uint32_t level, pm_error *err);

/* nbt_smo.c */
extern pm_errcode nbt_help_smo(nbt_tree *t, uint64_t leaf_off, pm_error *err);
extern pm_errcode nbt_run_smo(nbt_tree *t, uint64_t leaf_off, uint32_t need, pm_error *err);
extern bool nbt_merge_may_join(nbt_tree *t, uint64_t x_off, uint64_t y_off);

/* nbt_leaf.c */
typedef enum nbt_find_mode
{
	NBT_FIND_READ,				/* resolve through finished copies */
	NBT_FIND_WRITE,				/* help SMOs and pending leaves first */
	NBT_FIND_RAW				/* the leaf as reached; no helping */
} nbt_find_mode;

extern pm_errcode nbt_find_leaf(nbt_tree *t, const nbt_skey *sk, nbt_find_mode mode,
								uint64_t *leaf_off, pm_error *err);
extern bool nbt_leaf_mark_dead(nbt_tree *t, nbt_leaf *l, const nbt_skey *sk);
extern void nbt_sort_entries(const nbt_tree *t, nbt_entry *e, int n);

#endif							/* PM_NBT_INTERNAL_H */
