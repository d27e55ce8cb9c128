/*
 * phast_lnode.c
 *	  The PM layer: format, bulk load, the log-free LNode split and in-place
 *	  compaction (README.md: Operations, Crash protocol).
 */
#include "phast_internal.h"

#include <stdlib.h>
#include <string.h>

static int
cmp_key(const void *a, const void *b)
{
	return pm_key_cmp(a, b);
}

static uint64_t
new_lnode(pm_alloc *a, const phast_key *low, pm_error *err)
{
	uint64_t	off = pm_alloc_block(a, sizeof(phast_lnode), err);
	phast_lnode *l;

	if (off == 0)
		return 0;
	l = pm_alloc_addr(a, off);
	memset(l, 0, sizeof(*l));
	l->low = *low;
	return off;
}

/* The partitioning for nparts partitions over [lo, hi] (README.md: Partitions). */
static void
partitioning(int nparts, uint64_t lo, uint64_t hi, uint32_t *prefix_bits, uint32_t *part_bits,
			 uint64_t *prefix)
{
	uint32_t	k = 0;
	uint32_t	c = lo == hi ? 64 : (uint32_t) __builtin_clzll(lo ^ hi);

	while ((1 << k) < nparts)
		k++;
	if (c + k > 64)
		c = 64 - k;
	*part_bits = k;
	*prefix_bits = k == 0 ? 0 : c;
	*prefix = *prefix_bits > 0 ? lo >> (64 - *prefix_bits) : 0;
}

/*
 * Free the empty structure a pool holds (formatted before its partitioning
 * was known), or fail if it holds entries.
 */
static pm_errcode
free_empty(pm_pool *pool, pm_alloc *a, pm_error *err)
{
	uint64_t	moff = pm_pool_root(pool, 0);
	phast_meta *m = pm_alloc_addr(a, moff);

	if (m->magic != PHAST_META_MAGIC)
		return pm_error_set(err, PM_ERR_INVALID, 0, "pool \"%s\" holds another structure", pool->path);
	for (uint64_t off = m->master[0]; off != 0; off = ((phast_lnode *) pm_alloc_addr(a, off))->next)
		if (((phast_lnode *) pm_alloc_addr(a, off))->bitmap != 0)
			return pm_error_set(err, PM_ERR_INVALID, 0, "pool \"%s\" holds entries already", pool->path);
	pm_pool_set_root(pool, 0, 0);
	for (uint64_t off = m->master[0]; off != 0;)
	{
		uint64_t	next = ((phast_lnode *) pm_alloc_addr(a, off))->next;

		pm_free_block(a, off, err);
		off = next;
	}
	return pm_free_block(a, moff, err);
}

int
phast_parts_for(double nentries)
{
	int			nparts = 1;

	while (nparts < PHAST_MAX_PARTS && nentries > (double) nparts * PHAST_ENTRIES_PER_PART)
		nparts *= 2;
	return nparts;
}

pm_errcode
phast_format(pm_pool *pool, int nparts, uint64_t lo, uint64_t hi, pm_error *err)
{
	pm_alloc	a;
	uint64_t	moff;
	phast_meta *m;
	uint64_t	prev = 0;

	if (nparts < 1 || nparts > PHAST_MAX_PARTS || (nparts & (nparts - 1)) != 0 || lo > hi)
		return pm_error_set(err, PM_ERR_INVALID, 0,
							"a PhaST structure takes 1 to %d partitions, a power of two, over a key range",
							PHAST_MAX_PARTS);
	pm_alloc_attach_pool(&a, pool);
	if (pm_pool_root(pool, 0) != 0 && free_empty(pool, &a, err) != PM_OK)
		return err->code;
	moff = pm_alloc_block(&a, sizeof(phast_meta), err);
	if (moff == 0)
		return err->code;
	m = pm_alloc_addr(&a, moff);
	memset(m, 0, sizeof(*m));
	m->magic = PHAST_META_MAGIC;
	m->version = PHAST_VERSION;
	m->nparts = (uint32_t) nparts;
	partitioning(nparts, lo, hi, &m->prefix_bits, &m->part_bits, &m->prefix);
	/* one empty LNode per partition, chained in key order: the Master array's heads */
	for (int p = 0; p < nparts; p++)
	{
		phast_key	low = {phast_part_low(m->prefix_bits, m->part_bits, m->prefix, p), 0};
		uint64_t	off = new_lnode(&a, &low, err);

		if (off == 0)
			return err->code;
		m->master[p] = off;
		if (prev != 0)
			((phast_lnode *) pm_alloc_addr(&a, prev))->next = off;
		prev = off;
	}
	for (int p = 0; p < nparts; p++)
		pm_flush(&pool->persist, pm_alloc_addr(&a, m->master[p]), sizeof(phast_lnode));
	pm_persist(&pool->persist, m, sizeof(*m));
	pm_pool_set_root(pool, 0, moff);
	return PM_OK;
}

/* Append k to the LNode at *cur, starting a new one when it holds fill entries. */
static pm_errcode
load_one(pm_alloc *a, uint64_t *cur, int fill, const phast_key *k, pm_error *err)
{
	phast_lnode *l = pm_alloc_addr(a, *cur);
	int			n = __builtin_popcountll(l->bitmap);

	if (n >= fill)
	{
		uint64_t	off = new_lnode(a, k, err);

		if (off == 0)
			return err->code;
		((phast_lnode *) pm_alloc_addr(a, off))->next = l->next;
		l->next = off;
		pm_flush(a->persist, l, sizeof(*l));
		*cur = off;
		l = pm_alloc_addr(a, off);
		n = 0;
	}
	l->slot[n] = *k;
	l->fp[n] = phast_fingerprint(k);
	l->bitmap |= UINT64_C(1) << n;
	return PM_OK;
}

pm_errcode
phast_bulk_load(pm_pool *pool, int fill_pct, bool (*next) (void *ctx, phast_key *k), void *ctx,
				pm_error *err)
{
	phast_meta *m = phast_meta_of(pool);
	pm_alloc	a;
	int			fill = PHAST_LNODE_CAP * fill_pct / 100;
	int			part = 0;
	uint64_t	cur = m->master[0];
	phast_key	k;
	phast_key	last = PM_KEY_MIN;
	pm_errcode	rc = PM_OK;

	if (fill < 1)
		fill = 1;
	pm_alloc_attach_pool(&a, pool);
	while (rc == PM_OK && next(ctx, &k))
	{
		int			p = phast_part_of(m->nparts, m->prefix_bits, m->part_bits, m->prefix, k.key);

		if (pm_key_cmp(&k, &last) < 0 || k.rest == 0 || k.rest > PHAST_REST_MAX)
			return pm_error_set(err, PM_ERR_INVALID, 0, "bulk load entries must come sorted, with a valid rest");
		last = k;
		for (; part < p; part++)
		{
			pm_flush(&pool->persist, pm_alloc_addr(&a, cur), sizeof(phast_lnode));
			cur = m->master[part + 1];
		}
		rc = load_one(&a, &cur, fill, &k, err);
	}
	pm_flush(&pool->persist, pm_alloc_addr(&a, cur), sizeof(phast_lnode));
	pm_drain(&pool->persist);
	return rc;
}

/*
 * The live slots of an LNode, sorted, with their slot numbers (a slot's key
 * is read once: the caller holds the INode exclusively, nothing changes).
 */
static int
live_sorted(const phast_lnode *l, phast_key *keys)
{
	int			n = 0;

	for (int i = 0; i < PHAST_LNODE_CAP; i++)
		if (phast_slot_live(l, l->bitmap, i, &keys[n]))
			n++;
	qsort(keys, n, sizeof(phast_key), cmp_key);
	return n;
}

/* The bits of l's slots that hold live keys below bound (all of them if bound is NULL). */
static uint64_t
live_bits_below(const phast_lnode *l, const phast_key *bound)
{
	uint64_t	bits = 0;
	phast_key	k;

	for (int i = 0; i < PHAST_LNODE_CAP; i++)
		if (phast_slot_live(l, l->bitmap, i, &k) && (bound == NULL || pm_key_cmp(&k, bound) < 0))
			bits |= UINT64_C(1) << i;
	return bits;
}

/*
 * Drop the deleted slots of LNode j of in (held exclusively) in place: one
 * bitmap store.  Lock-free readers see the INode's version change.
 */
void
phast_drop_dead(phast_tree *t, phast_inode *in, int j)
{
	phast_lnode *l = phast_lnode_at(t, in->leaf[j]);

	pm_store(&l->bitmap, live_bits_below(l, NULL));
	pm_persist(&t->pool->persist, l, PM_CACHELINE);
	in->shadow[j] = l->bitmap;
	pm_fetch_add(&phast_desc_of(t)->compactions, 1);
}

/*
 * Make room in LNode j of the INode at ioff, which the caller holds
 * exclusively: drop its deleted slots in place if at most half of them are
 * live, else split it (README.md: LNode split).  The commit point of a split
 * is the old LNode's next word; until then the new LNode is unreachable.
 */
pm_errcode
phast_split_lnode(phast_tree *t, uint64_t ioff, int j, pm_error *err)
{
	phast_inode *in = phast_inode_at(t, ioff);
	phast_lnode *o = phast_lnode_at(t, in->leaf[j]);
	const pm_persister *ps = &t->pool->persist;
	phast_key	keys[PHAST_LNODE_CAP];
	int			n = live_sorted(o, keys);
	int			m = n / 2;
	uint64_t	noff;
	phast_lnode *nl;

	if (n <= PHAST_LNODE_CAP / 2)
	{
		phast_drop_dead(t, in, j);
		return PM_OK;
	}
	noff = new_lnode(&t->pm, &keys[m], err);
	if (noff == 0)
		return err->code;
	nl = phast_lnode_at(t, noff);
	for (int i = m; i < n; i++)
	{
		nl->slot[i - m] = keys[i];
		nl->fp[i - m] = phast_fingerprint(&keys[i]);
	}
	nl->bitmap = (UINT64_C(1) << (n - m)) - 1;
	nl->next = o->next;
	pm_persist(ps, nl, sizeof(*nl));
	pm_smo_pause("phast_pm LNode split");
	/* the commit: from here the chain holds the new LNode, and o's range ends at its low */
	pm_store(&o->next, noff);
	pm_persist(ps, &o->next, sizeof(o->next));
	pm_store(&o->bitmap, live_bits_below(o, &keys[m]));
	pm_persist(ps, o, PM_CACHELINE);

	memmove(&in->lhigh[j + 1], &in->lhigh[j], sizeof(phast_key) * (in->nleaves - j));
	memmove(&in->shadow[j + 1], &in->shadow[j], sizeof(uint64_t) * (in->nleaves - j));
	memmove(&in->leaf[j + 1], &in->leaf[j], sizeof(uint64_t) * (in->nleaves - j));
	in->lhigh[j] = keys[m];
	in->shadow[j] = o->bitmap;
	in->shadow[j + 1] = nl->bitmap;
	in->leaf[j + 1] = noff;
	in->nleaves++;
	pm_fetch_add(&phast_desc_of(t)->splits, 1);
	return PM_OK;
}

/*
 * Recovery of one LNode (README.md: Crash protocol): slots at or above the
 * next LNode's low were moved by a split that a crash interrupted after its
 * commit; drop them, and recompute the fingerprints.  Returns whether a
 * split was finished.
 */
bool
phast_repair_lnode(phast_tree *t, phast_lnode *l, const phast_key *high)
{
	uint64_t	keep = 0;
	bool		changed = false;

	for (int i = 0; i < PHAST_LNODE_CAP; i++)
	{
		phast_key	k = {l->slot[i].key, l->slot[i].rest & ~PHAST_DEAD};
		uint8_t		fp = phast_fingerprint(&k);

		if (!(l->bitmap & (UINT64_C(1) << i)))
			continue;
		if (pm_key_cmp(&k, high) < 0)
			keep |= UINT64_C(1) << i;
		if (l->fp[i] != fp)
		{
			l->fp[i] = fp;
			changed = true;
		}
	}
	if (keep != l->bitmap || changed)
	{
		bool		repaired = keep != l->bitmap;

		l->bitmap = keep;
		pm_persist(&t->pool->persist, l, PM_CACHELINE);
		return repaired;
	}
	return false;
}
