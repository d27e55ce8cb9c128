/*
 * nvb_node.c
 *	  One node's binary search tree (README.md: "A node's search tree"):
 *	  search, the append-and-link insert, the thesis's three deletes, reads
 *	  in order, a fresh node filled as a balanced tree; in a wide tree, the
 *	  records beside the slots (README.md: "Wide entries").
 *
 * Links are read with atomic one-byte loads, since readers take no lock;
 * every slot and link read from the pool is checked against the node's
 * capacity, every record against the node's block, and every walk is
 * bounded, so a damaged node is reported, never followed out of its block
 * or round a cycle.
 */
#include "nvb_internal.h"

#define NVB_WALK_MAX	(4 * NVB_CAP_MAX)	/* steps of one walk before it is damage */

static inline int
link_get(nvb_node *n, int slot, int dir)
{
	return pm_load(nvb_link(n, slot, dir));
}

/*
 * Start loading every line of a node at once: a search or walk then hops
 * between lines already on their way, rather than waiting for each in turn.
 */
static inline void
prefetch_node(const nvb_node *n)
{
	uint32_t	end = nvb_slots_end(n->level, nvb_cap(n));

	for (uint32_t off = PM_CACHELINE; off < end; off += PM_CACHELINE)
		__builtin_prefetch((const char *) n + off);
}

bool
nvb_rec_ok(const nvb_tree *t, const nvb_node *n, uint64_t rest)
{
	uint64_t	base = pm_pool_off(t->pool, n);
	uint64_t	off = rest & PM_REST_ADDR;
	const pm_key_rec *r;

	/* no flag but PM_REST_WIDE: the others are for keys outside the pool */
	if ((rest & ~(PM_REST_WIDE | PM_REST_ADDR)) != 0 || off % 8 != 0 ||
		off < base + nvb_slots_end(n->level, nvb_cap(n)) ||
		off + sizeof(pm_key_rec) > base + t->node_size)
		return false;
	r = pm_pool_addr(t->pool, off);
	return r->keylen <= r->len && r->len <= base + t->node_size - off - sizeof(pm_key_rec) &&
		r->rest != 0 && r->rest <= NVB_REST_MAX;
}

static inline bool
slot_ok(const nvb_node *n, int s)
{
	return s == NVB_NONE || s < nvb_cap(n);
}

/*
 * Search for k.  Returns 1 and the slot holding it, 0 (slot NVB_NONE) with
 * the empty link where it belongs, or -1 for a damaged node.
 */
int
nvb_node_find(const nvb_tree *t, nvb_node *n, const nvb_key *k, nvb_pos *pos)
{
	nvb_key    *keys = nvb_keys(n);
	uint8_t    *link = &n->root;

	prefetch_node(n);
	for (int steps = 0; steps <= nvb_cap(n); steps++)
	{
		int			s = pm_load(link);
		int			c;

		if (!slot_ok(n, s))
			return -1;
		pos->link = link;
		pos->slot = s;
		pos->depth = steps;
		if (s == NVB_NONE)
			return 0;
		if (!nvb_key_ok(t, n, &keys[s]))
			return -1;
		c = nvb_cmp(t, k, &keys[s]);
		if (c == 0)
			return 1;
		link = nvb_link(n, s, c > 0);
	}
	return -1;
}

/*
 * Inner nodes: the slot of the last separator at or below k, NVB_NONE when
 * k is below them all (the leftmost child's), or -1 for a damaged node.
 */
int
nvb_node_floor(const nvb_tree *t, nvb_node *n, const nvb_key *k)
{
	nvb_key    *keys = nvb_keys(n);
	int			s = pm_load(&n->root);
	int			best = NVB_NONE;

	prefetch_node(n);
	for (int steps = 0; s != NVB_NONE; steps++)
	{
		if (!slot_ok(n, s) || steps > nvb_cap(n) || !nvb_key_ok(t, n, &keys[s]))
			return -1;
		if (nvb_cmp(t, k, &keys[s]) >= 0)
		{
			best = s;
			s = link_get(n, s, 1);
		}
		else
			s = link_get(n, s, 0);
	}
	return best;
}

/*
 * The first slot never handed out, from the append cursor on (after a
 * crash the cursor may lag: slots past it whose key was written are
 * skipped); the capacity when the node is full.  Caller holds the lock.
 */
int
nvb_node_free_slot(nvb_node *n)
{
	nvb_key    *keys = nvb_keys(n);
	int			s = n->count;

	while (s < nvb_cap(n) && keys[s].rest != 0)
		s++;
	return s;
}

/*
 * The pool offset below which slot's record goes: records are placed in
 * slot order downwards under the fences', so it is the record of the last
 * wide slot before it, or the lowest fence's, or the block's end.  Only a
 * record's offset is read: an abandoned slot's record may be torn.  0 for a
 * damaged node.
 */
static uint64_t
heap_floor(const nvb_tree *t, nvb_node *n, int slot)
{
	uint64_t	base = pm_pool_off(t->pool, n);
	uint64_t	floor = base + t->node_size;
	nvb_key    *keys = nvb_keys(n);

	if (pm_rest_is_wide(n->low.rest) && (n->low.rest & PM_REST_ADDR) < floor)
		floor = n->low.rest & PM_REST_ADDR;
	if (pm_rest_is_wide(n->high.rest) && (n->high.rest & PM_REST_ADDR) < floor)
		floor = n->high.rest & PM_REST_ADDR;
	for (int i = slot - 1; i >= 0; i--)
	{
		uint64_t	rest = pm_load(&keys[i].rest);

		if (pm_rest_is_wide(rest))
		{
			if ((rest & PM_REST_ADDR) < floor)
				floor = rest & PM_REST_ADDR;
			break;
		}
	}
	if (floor % 8 != 0 || floor < base + nvb_slots_end(n->level, nvb_cap(n)) ||
		floor > base + t->node_size)
		return 0;
	return floor;
}

/* Write k's record (its ordering bytes only for a fence) below floor; returns its offset. */
static uint64_t
write_rec(const nvb_tree *t, uint64_t floor, const nvb_key *k, bool ordering_only)
{
	pm_key_view v = pm_key_view_of(t->pool, k->rest);
	uint32_t	len = ordering_only ? v.keylen : v.len;
	uint64_t	off = floor - nvb_rec_bytes(len);
	pm_key_rec *r = pm_pool_addr(t->pool, off);

	r->rest = v.rest;
	r->keylen = v.keylen;
	r->len = len;
	memcpy(r->data, v.data, len);
	return off;
}

/*
 * In a wide tree, store k's record for the free slot, flushed (not
 * drained: the slot's own flush is drained with it); *stored is k naming
 * it.  A narrow key is stored as it is.  Returns 1, 0 when the record does
 * not fit above the slots, or -1 for a damaged node.  Caller holds the lock.
 */
int
nvb_node_place(const nvb_tree *t, nvb_node *n, int slot, const nvb_key *k, nvb_key *stored)
{
	uint64_t	floor;
	uint64_t	off;

	*stored = *k;
	if (!t->wide || !pm_rest_is_wide(k->rest))
		return 1;
	floor = heap_floor(t, n, slot);
	if (floor == 0)
		return -1;
	if (floor - pm_pool_off(t->pool, n) <
		nvb_slots_end(n->level, nvb_cap(n)) + nvb_rec_bytes(pm_key_view_of(t->pool, k->rest).len))
		return 0;
	off = write_rec(t, floor, k, false);
	pm_flush(&t->pool->persist, pm_pool_addr(t->pool, off), floor - off);
	stored->rest = PM_REST_WIDE | off;
	return 1;
}

/*
 * Append k (and child, inner nodes; as nvb_node_place stored it) at the
 * free slot and commit it by storing the slot in link, the empty link
 * nvb_node_find gave: the slot and its record are persisted before the store
 * that makes them reachable, and that store is the commit (README.md:
 * "Crash protocol").  Caller holds the lock.
 */
void
nvb_node_link_new(const nvb_tree *t, nvb_node *n, int slot, const nvb_key *k, uint32_t child,
				  uint8_t *link)
{
	nvb_key    *key = &nvb_keys(n)[slot];
	uint8_t    *own = nvb_link(n, slot, 0);

	*key = *k;
	pm_flush(&t->pool->persist, key, sizeof(*key));
	if (n->level > 0)
	{
		nvb_children(n)[slot] = child;
		pm_flush(&t->pool->persist, &nvb_children(n)[slot], sizeof(uint32_t));
	}
	if (own[0] != NVB_NONE || own[1] != NVB_NONE)
	{
		/* a node's links start empty and persisted; only damage gets here */
		own[0] = own[1] = NVB_NONE;
		pm_flush(&t->pool->persist, own, 2);
	}
	pm_drain(&t->pool->persist);
	pm_store(link, (uint8_t) slot);
	nvb_persist(t, link, 1);
	if (slot >= n->count)
		n->count = (uint8_t) (slot + 1);
}

/*
 * Remove the slot pos found (the thesis's delete, Alg. 2 as corrected in
 * README.md): a slot with at most one child is bypassed by one link store;
 * one with two is replaced by a copy of its successor in a free slot, the
 * copy committed by one link store, then the successor's old slot bypassed.
 * Either can reorder what a lock-free reader walks: the two-child case moves
 * a key where the walk may have passed it, and a bypass lets a later insert
 * land in a subtree the walk reaches before a slot it holds on its stack
 * (the removed one, whose key is past the new one's).  So the stripe's
 * version is odd while a delete runs, and readers validate against it;
 * inserts alone never reorder a walk.  Returns 1, or 0, having changed
 * nothing, when the two-child case finds no free slot or no room for the
 * copy's record, or
 * -1, having changed nothing, for a damaged node: a link out of the node,
 * one that names the slot itself (a bypass that would leave it in place),
 * or a successor's walk that does not end.  Caller holds the lock.
 */
int
nvb_node_remove(const nvb_tree *t, nvb_node *n, const nvb_pos *pos)
{
	int			d = pos->slot;
	int			l = link_get(n, d, 0);
	int			r = link_get(n, d, 1);
	int			m,
				idx,
				placed;
	uint8_t    *m_link;
	nvb_stripe *st;
	nvb_key		copy;

	if (!slot_ok(n, l) || !slot_ok(n, r) || l == d || r == d)
		return -1;
	st = nvb_stripe_of(t, n->id);
	if (l == NVB_NONE || r == NVB_NONE)
	{
		pm_store(&st->version, st->version + 1);
		pm_full_fence();
		pm_store(pos->link, (uint8_t) (l == NVB_NONE ? r : l));
		nvb_persist(t, pos->link, 1);
		pm_store(&st->version, st->version + 1);
		return 1;
	}
	idx = nvb_node_free_slot(n);
	if (idx >= nvb_cap(n))
		return 0;

	/* the successor: the leftmost slot of the right subtree, and the link reaching it */
	m = r;
	m_link = nvb_link(n, d, 1);
	for (int steps = 0; link_get(n, m, 0) != NVB_NONE; steps++)
	{
		if (steps >= nvb_cap(n) || !slot_ok(n, link_get(n, m, 0)))
			return -1;
		m_link = nvb_link(n, m, 0);
		m = link_get(n, m, 0);
	}

	/* the copy's record goes below the others, as every slot's (heap_floor) */
	if (!nvb_key_ok(t, n, &nvb_keys(n)[m]))
		return -1;
	placed = nvb_node_place(t, n, idx, &nvb_keys(n)[m], &copy);
	if (placed <= 0)
		return placed;

	pm_store(&st->version, st->version + 1);
	pm_full_fence();
	nvb_keys(n)[idx] = copy;
	pm_flush(&t->pool->persist, &nvb_keys(n)[idx], sizeof(nvb_key));
	if (n->level > 0)
	{
		nvb_children(n)[idx] = nvb_children(n)[m];
		pm_flush(&t->pool->persist, &nvb_children(n)[idx], sizeof(uint32_t));
	}
	*nvb_link(n, idx, 0) = (uint8_t) l;
	*nvb_link(n, idx, 1) = (uint8_t) (m == r ? link_get(n, m, 1) : r);
	nvb_persist(t, nvb_link(n, idx, 0), 2);
	pm_store(pos->link, (uint8_t) idx);
	nvb_persist(t, pos->link, 1);
	if (m != r)
	{
		pm_store(m_link, (uint8_t) link_get(n, m, 1));
		nvb_persist(t, m_link, 1);
	}
	if (idx >= n->count)
		n->count = (uint8_t) (idx + 1);
	pm_store(&st->version, st->version + 1);
	return 1;
}

/*
 * The slots in key order, each key once (a crash inside a two-child delete
 * can leave the successor's key twice, side by side in order).  Returns
 * their number, or -1 for a damaged node.  Caller holds the lock or reads
 * a block no writer changes.
 */
int
nvb_node_sorted(const nvb_tree *t, nvb_node *n, int *slots)
{
	nvb_key    *keys = nvb_keys(n);
	int			stack[NVB_CAP_MAX + 1];
	int			depth = 0;
	int			out = 0;
	int			s = pm_load(&n->root);

	for (int steps = 0;; steps++)
	{
		if (steps > NVB_WALK_MAX)
			return -1;
		if (s != NVB_NONE)
		{
			if (!slot_ok(n, s) || depth >= nvb_cap(n))
				return -1;
			stack[depth++] = s;
			s = link_get(n, s, 0);
			continue;
		}
		if (depth == 0)
			return out;
		s = stack[--depth];
		if (!nvb_key_ok(t, n, &keys[s]))
			return -1;
		if (out == 0 || nvb_cmp(t, &keys[slots[out - 1]], &keys[s]) != 0)
		{
			if (out > 0 && nvb_cmp(t, &keys[slots[out - 1]], &keys[s]) > 0)
				return -1;
			if (out >= nvb_cap(n))
				return -1;
			slots[out++] = s;
		}
		s = link_get(n, s, 1);
	}
}

/*
 * A lock-free read of a leaf: its keys in [max(from, lo), hi] (forward) or
 * in [lo, min(from, hi)] below from (backward), at most max of them, into
 * out in ascending order.  *more says the read stopped before the node's
 * end: forward at *next, the first key not returned (above hi, or past the
 * max), backward at *next, the lowest key returned or lo.  Returns the
 * number read, or -1 for a damaged node, among them one whose walk is not
 * in order (its keys would come back unsorted, and a scan's next batch
 * would start where an earlier one did).  A concurrent insert or delete
 * may or may not be seen; the caller validates against the stripe's
 * version for the moves of a two-child delete.
 */
int
nvb_node_collect(const nvb_tree *t, nvb_node *n, const nvb_key *from, bool backward,
				 const nvb_key *lo, const nvb_key *hi, nvb_key *out, int max, bool *more,
				 nvb_key *next)
{
	nvb_key    *keys = nvb_keys(n);
	int			stack[NVB_CAP_MAX + 1];
	int			depth = 0;
	int			got = 0;
	int			fwd = backward ? 1 : 0; /* the link toward earlier keys in read order */
	nvb_key		start = backward ? *from : (nvb_cmp(t, from, lo) > 0 ? *from : *lo);
	nvb_key		last;
	bool		have_last = false;
	int			s = pm_load(&n->root);

	prefetch_node(n);
	*more = false;

	/* seek: the path to the first key of the read, keeping the slots still to come */
	for (int steps = 0; s != NVB_NONE; steps++)
	{
		int			c;

		if (!slot_ok(n, s) || steps > nvb_cap(n) || depth >= nvb_cap(n) ||
			!nvb_key_ok(t, n, &keys[s]))
			return -1;
		c = nvb_cmp(t, &keys[s], &start);
		if (backward ? c < 0 : c >= 0)
		{
			stack[depth++] = s;
			s = link_get(n, s, fwd);
		}
		else
			s = link_get(n, s, !fwd);
	}

	for (int steps = 0; depth > 0; steps++)
	{
		nvb_key		k;
		int			c;

		if (steps > NVB_WALK_MAX)
			return -1;
		s = stack[--depth];
		k = keys[s];
		if (!nvb_key_ok(t, n, &k))
			return -1;
		c = nvb_cmp(t, &k, have_last ? &last : &start);
		if (have_last && c == 0)
			;					/* a duplicate a crash left: once */
		else if (backward ? c >= 0 : c < 0)
			return -1;			/* not in read order: forward from start, backward below it */
		else if (backward ? nvb_cmp(t, &k, lo) < 0 : nvb_cmp(t, &k, hi) > 0)
		{
			*more = true;
			*next = backward ? (got > 0 ? out[NVB_BATCH_MAX - got] : *lo) : k;
			break;
		}
		else if (!backward || nvb_cmp(t, &k, hi) <= 0)
		{
			if (got == max)
			{
				*more = true;
				*next = backward ? out[NVB_BATCH_MAX - got] : k;
				break;
			}
			/* backward reads fill out from its end */
			out[backward ? NVB_BATCH_MAX - 1 - got : got] = k;
			got++;
		}
		last = k;
		have_last = true;
		/* the subtree after s in read order, down its near side */
		s = link_get(n, s, !fwd);
		for (int down = 0; s != NVB_NONE; down++)
		{
			if (!slot_ok(n, s) || down > nvb_cap(n) || depth >= nvb_cap(n))
				return -1;
			stack[depth++] = s;
			s = link_get(n, s, fwd);
		}
	}
	if (backward && got > 0 && got < NVB_BATCH_MAX)
		memmove(out, out + NVB_BATCH_MAX - got, sizeof(nvb_key) * got);
	return got;
}

/* Bytes an entry takes in a node of level: its slot, links, child and record. */
uint32_t
nvb_entry_bytes(const nvb_tree *t, int level, const nvb_key *k)
{
	uint32_t	bytes = 16 + 2 + (level > 0 ? 4 : 0);

	if (t->wide && pm_rest_is_wide(k->rest))
		bytes += nvb_rec_bytes(pm_key_view_of(t->pool, k->rest).len);
	return bytes;
}

/* Bytes a fence's record takes (its ordering bytes); 0 for a narrow fence. */
uint32_t
nvb_fence_bytes(const nvb_tree *t, const nvb_key *k)
{
	if (!t->wide || !pm_rest_is_wide(k->rest))
		return 0;
	return nvb_rec_bytes(pm_key_view_of(t->pool, k->rest).keylen);
}

/* An empty wide node's guess at its records' mean size: a short string's */
#define NVB_EMPTY_MEAN_REC	32

/* Bytes of a wide node past its header, less what aligning its arrays may take. */
uint32_t
nvb_node_room(const nvb_tree *t)
{
	return t->node_size - 64 - 32;
}

/*
 * The slots of a new node that is to hold count keys between low and high,
 * and room for incoming (NULL: none); 0 if they do not fit.  A narrow tree's
 * nodes have their level's.  A wide node's rest of the room is shared
 * between slots and records as the keys' mean record would fill it, so a
 * node of short keys keeps many slots and one of long keys room for their
 * records.
 */
int
nvb_node_cap_for(const nvb_tree *t, int level, const nvb_key *low, const nvb_key *high,
				 const nvb_key *keys, int count, const nvb_key *incoming)
{
	uint32_t	per = 16 + 2 + (level > 0 ? 4 : 0);
	int			want = count + (incoming != NULL);
	uint64_t	recs = 0;
	uint64_t	used;
	uint64_t	mean;
	uint64_t	cap;

	if (!t->wide)
	{
		int			fixed = level == 0 ? NVB_LEAF_CAP : NVB_INNER_CAP;

		return want <= fixed ? fixed : 0;
	}
	for (int i = 0; i < count; i++)
		recs += nvb_entry_bytes(t, level, &keys[i]) - per;
	used = nvb_fence_bytes(t, low) + nvb_fence_bytes(t, high) + recs + (uint64_t) count * per;
	if (incoming != NULL)
		used += nvb_entry_bytes(t, level, incoming);
	if (used > nvb_node_room(t) || want > NVB_CAP_MAX)
		return 0;
	mean = count > 0 ? recs / count :
		incoming != NULL ? nvb_entry_bytes(t, level, incoming) - per : NVB_EMPTY_MEAN_REC;
	cap = want + (nvb_node_room(t) - used) / (per + mean);
	return cap > NVB_CAP_MAX ? NVB_CAP_MAX : cap < 1 ? 1 : (int) cap;
}

/* Slots [lo, hi) of a sorted run as a balanced tree; returns its root. */
static int
balance(nvb_node *n, int lo, int hi)
{
	int			mid;

	if (lo >= hi)
		return NVB_NONE;
	mid = lo + (hi - lo) / 2;
	*nvb_link(n, mid, 0) = (uint8_t) balance(n, lo, mid);
	*nvb_link(n, mid, 1) = (uint8_t) balance(n, mid + 1, hi);
	return mid;
}

/*
 * Write a fresh node of cap slots (nvb_node_cap_for) into a block just
 * allocated: its header and fences, count sorted keys (and children) in its
 * first slots as a balanced search tree whose slots are in key order
 * (README.md: "Balanced rebuild"), every other slot free with its links
 * empty.  In a wide tree the wide fences' records (their ordering bytes)
 * go to the block's end, then the keys' in slot order below them; keys,
 * fences and children may name records anywhere (the pool or the caller's
 * memory).  The caller persists the node before any link or table word
 * names it.
 */
void
nvb_node_write(const nvb_tree *t, nvb_node *n, uint32_t id, int level, int cap,
			   const nvb_key *low, const nvb_key *high, uint32_t sibling, uint32_t leftmost,
			   const nvb_key *keys, const uint32_t *children, int count)
{
	uint64_t	floor = pm_pool_off(t->pool, n) + t->node_size;
	nvb_key    *slots;

	memset(n, 0, nvb_slots_end(level, cap));
	n->magic = NVB_NODE_MAGIC;
	n->id = id;
	n->level = (uint8_t) level;
	n->cap = (uint8_t) cap;
	n->sibling = sibling;
	n->leftmost = leftmost;
	n->low = *low;
	n->high = *high;
	if (t->wide && pm_rest_is_wide(low->rest))
	{
		floor = write_rec(t, floor, low, true);
		n->low.rest = PM_REST_WIDE | floor;
	}
	if (t->wide && pm_rest_is_wide(high->rest))
	{
		floor = write_rec(t, floor, high, true);
		n->high.rest = PM_REST_WIDE | floor;
	}
	memset(nvb_link(n, 0, 0), NVB_NONE, 2 * cap);
	slots = nvb_keys(n);
	for (int i = 0; i < count; i++)
	{
		slots[i] = keys[i];
		if (t->wide && pm_rest_is_wide(keys[i].rest))
		{
			floor = write_rec(t, floor, &keys[i], false);
			slots[i].rest = PM_REST_WIDE | floor;
		}
	}
	if (level > 0 && count > 0)
		memcpy(nvb_children(n), children, sizeof(uint32_t) * count);
	n->count = (uint8_t) count;
	n->root = (uint8_t) balance(n, 0, count);
}

/*
 * Persist a written node: its header, every link (an unflushed link could
 * come back as the block's old bytes after a power failure and be followed
 * once its slot is used), the slots handed out and their records.  A wide
 * node's free slots too: one that came back as the block's old bytes would
 * look handed out, and its rest would place the next record (heap_floor).
 */
void
nvb_node_persist(const nvb_tree *t, nvb_node *n)
{
	uint64_t	floor = t->wide ? heap_floor(t, n, n->count) : 0;

	pm_flush(&t->pool->persist, n, 64 + 2 * nvb_cap(n));
	if (n->level > 0 && n->count > 0)
		pm_flush(&t->pool->persist, nvb_children(n), sizeof(uint32_t) * n->count);
	if (t->wide || n->count > 0)
		pm_flush(&t->pool->persist, nvb_keys(n),
				 sizeof(nvb_key) * (t->wide ? nvb_cap(n) : n->count));
	if (floor != 0)
		pm_flush(&t->pool->persist, pm_pool_addr(t->pool, floor),
				 pm_pool_off(t->pool, n) + t->node_size - floor);
	pm_drain(&t->pool->persist);
}
