/*
 * nvb_node.c
 *	  One node's binary search tree (README.md: "A node's search tree"):
 *	  search, the append-and-link insert, the thesis's three deletes, reads
 *	  in order, and a fresh node filled as a balanced tree.
 *
 * Links are read with atomic one-byte loads, since readers take no lock;
 * every slot and link read from the pool is checked against the node's
 * capacity and every walk is bounded, so a damaged node is reported, never
 * followed out of its block or round a cycle.
 */
#include "nvb_internal.h"

#define NVB_WALK_MAX	(4 * NVB_LEAF_CAP)	/* steps of one walk before it is damage */

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
	for (int off = PM_CACHELINE; off < NVB_NODE_SIZE; off += PM_CACHELINE)
		__builtin_prefetch((const char *) n + off);
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
nvb_node_find(nvb_node *n, const nvb_key *k, nvb_pos *pos)
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
		c = nvb_cmp(k, &keys[s]);
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
nvb_node_floor(nvb_node *n, const nvb_key *k)
{
	nvb_key    *keys = nvb_keys(n);
	int			s = pm_load(&n->root);
	int			best = NVB_NONE;

	prefetch_node(n);
	for (int steps = 0; s != NVB_NONE; steps++)
	{
		if (!slot_ok(n, s) || steps > nvb_cap(n))
			return -1;
		if (nvb_cmp(k, &keys[s]) >= 0)
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
 * Append k (and child, inner nodes) at the free slot and commit it by
 * storing the slot in link, the empty link nvb_node_find gave: the slot is
 * persisted before the store that makes it reachable, and that store is
 * the commit (README.md: "Crash protocol").  Caller holds the lock.
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
 * inserts alone never reorder a walk.  Returns 1, or 0,
 * having changed nothing, when the two-child case finds no free slot, or
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
				idx;
	uint8_t    *m_link;
	nvb_stripe *st;

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

	pm_store(&st->version, st->version + 1);
	pm_full_fence();
	nvb_keys(n)[idx] = nvb_keys(n)[m];
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
nvb_node_sorted(nvb_node *n, int *slots)
{
	nvb_key    *keys = nvb_keys(n);
	int			stack[NVB_LEAF_CAP + 1];
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
		if (out == 0 || nvb_cmp(&keys[slots[out - 1]], &keys[s]) != 0)
		{
			if (out > 0 && nvb_cmp(&keys[slots[out - 1]], &keys[s]) > 0)
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
nvb_node_collect(nvb_node *n, const nvb_key *from, bool backward, const nvb_key *lo,
				 const nvb_key *hi, nvb_key *out, int max, bool *more, nvb_key *next)
{
	nvb_key    *keys = nvb_keys(n);
	int			stack[NVB_LEAF_CAP + 1];
	int			depth = 0;
	int			got = 0;
	int			fwd = backward ? 1 : 0; /* the link toward earlier keys in read order */
	nvb_key		start = backward ? *from : (nvb_cmp(from, lo) > 0 ? *from : *lo);
	nvb_key		last;
	bool		have_last = false;
	int			s = pm_load(&n->root);

	prefetch_node(n);
	*more = false;

	/* seek: the path to the first key of the read, keeping the slots still to come */
	for (int steps = 0; s != NVB_NONE; steps++)
	{
		int			c;

		if (!slot_ok(n, s) || steps > nvb_cap(n) || depth >= nvb_cap(n))
			return -1;
		c = nvb_cmp(&keys[s], &start);
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
		c = nvb_cmp(&k, have_last ? &last : &start);
		if (have_last && c == 0)
			;					/* a duplicate a crash left: once */
		else if (backward ? c >= 0 : c < 0)
			return -1;			/* not in read order: forward from start, backward below it */
		else if (backward ? nvb_cmp(&k, lo) < 0 : nvb_cmp(&k, hi) > 0)
		{
			*more = true;
			*next = backward ? (got > 0 ? out[NVB_BATCH_MAX - got] : *lo) : k;
			break;
		}
		else if (!backward || nvb_cmp(&k, hi) <= 0)
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

/*
 * A fresh node in a block just allocated: no slot handed out, every link
 * empty.  The caller fills and persists it before any link or table entry
 * names it.
 */
void
nvb_node_init(nvb_node *n, uint32_t id, int level, const nvb_key *low, const nvb_key *high,
			  uint32_t sibling, uint32_t leftmost)
{
	memset(n, 0, sizeof(*n));
	n->magic = NVB_NODE_MAGIC;
	n->id = id;
	n->level = (uint8_t) level;
	n->root = NVB_NONE;
	n->sibling = sibling;
	n->leftmost = leftmost;
	n->low = *low;
	n->high = *high;
	memset(nvb_link(n, 0, 0), NVB_NONE, 2 * nvb_cap(n));
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
 * Fill a fresh node with count sorted keys (and children) as a balanced
 * search tree whose slots are in key order (README.md: "Balanced rebuild").
 */
void
nvb_node_fill(nvb_node *n, const nvb_key *keys, const uint32_t *children, int count)
{
	memcpy(nvb_keys(n), keys, sizeof(nvb_key) * count);
	if (n->level > 0)
		memcpy(nvb_children(n), children, sizeof(uint32_t) * count);
	n->count = (uint8_t) count;
	n->root = (uint8_t) balance(n, 0, count);
}

/*
 * Persist a filled node: its header, every link (an unflushed link could
 * come back as the block's old bytes after a power failure and be followed
 * once its slot is used) and the slots handed out.
 */
void
nvb_node_persist(const nvb_tree *t, nvb_node *n)
{
	pm_flush(&t->pool->persist, n, 64 + 2 * nvb_cap(n));
	if (n->count > 0)
	{
		if (n->level > 0)
			pm_flush(&t->pool->persist, nvb_children(n), sizeof(uint32_t) * n->count);
		pm_flush(&t->pool->persist, nvb_keys(n), sizeof(nvb_key) * n->count);
	}
	pm_drain(&t->pool->persist);
}
