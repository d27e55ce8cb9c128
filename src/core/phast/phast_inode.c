/*
 * phast_inode.c
 *	  The DRAM layer: INode locks, the descent from a partition's index cache
 *	  through its skiplist, new INodes, INode splits and the index cache.
 */
#include "phast_internal.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- the relaxed RW lock ---- */

void
phast_lock_shared(phast_inode *in)
{
	for (unsigned attempt = 0;; attempt++)
	{
		uint64_t	w = pm_load(&in->lock);

		if (!(w & PHAST_WRITER) && pm_cas(&in->lock, &w, w + 1))
			return;
		pm_spin_delay(attempt);
	}
}

void
phast_unlock_shared(phast_inode *in)
{
	pm_fetch_add(&in->lock, (uint64_t) -1);
}

/*
 * Take the lock exclusively (the caller holds it in no mode), or return
 * false if another writer has it: that writer is splitting, and the caller
 * retries its operation afterwards.  New shared holders wait from the
 * moment the writer bit is set; the writer then waits for the old ones.
 */
bool
phast_lock_exclusive(phast_inode *in)
{
	uint64_t	w = pm_load(&in->lock);

	do
	{
		if (w & PHAST_WRITER)
			return false;
	} while (!pm_cas(&in->lock, &w, w | PHAST_WRITER));
	for (unsigned attempt = 0; pm_load(&in->lock) != PHAST_WRITER; attempt++)
		pm_spin_delay(attempt);
	pm_fetch_add(&in->version, 1);	/* odd: lock-free readers retry */
	return true;
}

void
phast_unlock_exclusive(phast_inode *in)
{
	pm_fetch_add(&in->version, 1);
	pm_store(&in->lock, 0);
}

/* ---- descent ---- */

/* The INode whose range holds k, as of now (callers validate or lock). */
uint64_t
phast_find_inode(phast_tree *t, const phast_key *k)
{
	phast_desc *d = phast_desc_of(t);
	int			p = phast_part_of(d->nparts, d->prefix_bits, d->part_bits, d->prefix, k->key);
	phast_cache *c = pm_alloc_addr(t->dram, pm_load(&d->parts[p].cache));
	uint64_t	cur = d->parts[p].first;
	int			level = PHAST_MAX_LEVEL - 1;
	int			lo = 0,
				hi = (int) c->n - 1;

	/* the last cached INode whose low is <= k */
	while (lo <= hi)
	{
		int			mid = (lo + hi) / 2;

		if (pm_key_cmp(&c->e[mid].low, k) <= 0)
		{
			cur = c->e[mid].inode;
			lo = mid + 1;
		}
		else
			hi = mid - 1;
	}
	if (cur != d->parts[p].first)
		level = (int) c->level;
	/* down the skiplist: lows are immutable, links only ever gain INodes */
	for (; level >= 0; level--)
	{
		for (;;)
		{
			uint64_t	next = pm_load(&phast_inode_at(t, cur)->next[level]);

			if (next == 0 || pm_key_cmp(&phast_inode_at(t, next)->low, k) > 0)
				break;
			cur = next;
		}
	}
	return cur;
}

/* The LNode of in whose range holds k (in's range holds k). */
int
phast_inode_slot(const phast_inode *in, const phast_key *k)
{
	int			lo = 0,
				hi = (int) pm_load_relaxed(&in->nleaves) - 1;

	if (hi < 0)
		return 0;
	/* the first j whose high is above k */
	while (lo < hi)
	{
		int			mid = (lo + hi) / 2;

		if (pm_key_cmp(&in->lhigh[mid], k) > 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/* ---- building blocks ---- */

/* A skiplist level for a new INode: 1 + geometric(1/2), below the first INodes' height. */
uint32_t
phast_random_level(void)
{
	static __thread uint64_t state;
	uint32_t	level = 1;

	if (state == 0)
		state = ((uint64_t) getpid() << 32) ^ (uint64_t) (uintptr_t) &state ^ UINT64_C(0x2545f4914f6cdd1d);
	state ^= state << 13;
	state ^= state >> 7;
	state ^= state << 17;
	for (uint64_t bits = state; (bits & 1) && level < PHAST_MAX_LEVEL - 1; bits >>= 1)
		level++;
	return level;
}

uint64_t
phast_new_inode(phast_tree *t, uint32_t part, uint32_t nlevels, const phast_key *low, pm_error *err)
{
	uint64_t	off = pm_alloc_block(t->dram, sizeof(phast_inode), err);
	phast_inode *in;

	if (off == 0)
		return 0;
	in = phast_inode_at(t, off);
	memset(in, 0, offsetof(phast_inode, lhigh));
	in->nlevels = nlevels;
	in->part = part;
	in->low = *low;
	in->high = PM_KEY_MAX;
	return off;
}

static void
part_lock(phast_part *p)
{
	for (unsigned attempt = 0;; attempt++)
	{
		uint64_t	w = 0;

		if (pm_cas(&p->lock, &w, 1))
			return;
		pm_spin_delay(attempt);
	}
}

static void
part_unlock(phast_part *p)
{
	pm_store(&p->lock, 0);
}

/*
 * Replace the partition's index cache by one over the lowest level whose
 * INodes fit it; the old one is retired through epochs (readers may hold
 * it).  Caller holds the partition lock or is exclusive.
 */
pm_errcode
phast_build_cache(phast_tree *t, int part, pm_error *err)
{
	phast_part *p = &phast_desc_of(t)->parts[part];
	uint32_t	level = 0;
	uint32_t	n;
	uint64_t	off;
	uint64_t	old = p->cache;
	phast_cache *c;

	for (;; level++)
	{
		n = 0;
		for (uint64_t cur = p->first; cur != 0; cur = phast_inode_at(t, cur)->next[level])
		{
			if (level == 0 && phast_inode_at(t, cur)->part != (uint32_t) part)
				break;			/* level 0 goes on into the next partition */
			n++;
		}
		if (n <= PHAST_CACHE_MAX || level == PHAST_MAX_LEVEL - 1)
			break;
	}
	off = pm_alloc_block(t->dram, sizeof(phast_cache) + sizeof(phast_cache_entry) * n, err);
	if (off == 0)
		return err->code;
	c = pm_alloc_addr(t->dram, off);
	c->n = 0;
	c->level = level;
	for (uint64_t cur = p->first; cur != 0 && c->n < n; cur = phast_inode_at(t, cur)->next[level])
	{
		c->e[c->n].low = phast_inode_at(t, cur)->low;
		c->e[c->n].inode = cur;
		c->n++;
	}
	pm_store(&p->cache, off);
	if (old != 0)
	{
		if (t->epoch != NULL)
			pm_epoch_retire(t->epoch, t->space_dram, 0, old);
		else
			pm_free_block(t->dram, old, err);
	}
	return PM_OK;
}

/*
 * Split a full INode (caller holds it exclusively): the upper half of its
 * LNodes go to a new INode linked right after it, at level 0 first (what
 * lock-free readers move right through), then at its higher levels and in
 * the partition's cache under the partition lock.  DRAM only.
 */
pm_errcode
phast_split_inode(phast_tree *t, uint64_t ioff, pm_error *err)
{
	phast_inode *in = phast_inode_at(t, ioff);
	phast_part *p = &phast_desc_of(t)->parts[in->part];
	uint32_t	half = in->nleaves / 2;
	uint32_t	moved = in->nleaves - half;
	uint64_t	noff = phast_new_inode(t, in->part, phast_random_level(), &in->lhigh[half - 1], err);
	phast_inode *n;
	pm_errcode	rc;

	if (noff == 0)
		return err->code;
	n = phast_inode_at(t, noff);
	n->high = in->high;
	n->nleaves = moved;
	memcpy(n->lhigh, &in->lhigh[half], sizeof(phast_key) * moved);
	memcpy(n->shadow, &in->shadow[half], sizeof(uint64_t) * moved);
	memcpy(n->leaf, &in->leaf[half], sizeof(uint64_t) * moved);
	n->next[0] = in->next[0];
	pm_store(&in->next[0], noff);
	in->nleaves = half;
	in->high = n->low;

	part_lock(p);
	for (uint32_t level = 1; level < n->nlevels; level++)
	{
		uint64_t	pred = p->first;

		for (;;)
		{
			uint64_t	next = phast_inode_at(t, pred)->next[level];

			if (next == 0 || pm_key_cmp(&phast_inode_at(t, next)->low, &n->low) > 0)
				break;
			pred = next;
		}
		n->next[level] = phast_inode_at(t, pred)->next[level];
		pm_store(&phast_inode_at(t, pred)->next[level], noff);
	}
	pm_fetch_add(&p->inodes, 1);
	rc = phast_build_cache(t, (int) in->part, err);
	part_unlock(p);
	pm_fetch_add(&phast_desc_of(t)->inode_splits, 1);
	/* a cache that could not be replaced is only stale: descents move right */
	(void) rc;
	return PM_OK;
}
