/*
 * phast_build.c
 *	  Attach, the rebuild of the DRAM layer from the Master array (one
 *	  partition per call, so several processes or threads can share it),
 *	  allocator recovery, release, statistics and the structure check.
 */
#include "phast_internal.h"
#include "recon.h"

#include <stdio.h>
#include <string.h>

void
phast_attach(phast_tree *t, pm_pool *pool, pm_alloc *dram, pm_epoch_handle *epoch,
			 uint32_t space_dram, uint64_t dram_root)
{
	memset(t, 0, sizeof(*t));
	t->pool = pool;
	pm_alloc_attach_pool(&t->pm, pool);
	t->dram = dram;
	t->epoch = epoch;
	t->space_dram = space_dram;
	t->dram_root = dram_root;
}

static pm_errcode
check_meta(pm_pool *pool, phast_meta **out, pm_error *err)
{
	uint64_t	off = pm_pool_root(pool, 0);
	phast_meta *m;

	if (off == 0 || !pm_pool_has_range(pool, off, sizeof(phast_meta)))
		return pm_error_set(err, PM_ERR_CORRUPT, 0, "pool \"%s\" has no PhaST meta block", pool->path);
	m = pm_pool_addr(pool, off);
	if (m->magic != PHAST_META_MAGIC)
		return pm_error_set(err, PM_ERR_CORRUPT, 0, "pool \"%s\" does not hold a PhaST structure", pool->path);
	if (m->version != PHAST_VERSION)
		return pm_error_set(err, PM_ERR_VERSION, 0, "PhaST structure in pool \"%s\" has format version %u, not %u",
							pool->path, m->version, PHAST_VERSION);
	/*
	 * The partitioning the format made (a power of two of partitions, the
	 * bits that choose one, a prefix within its bits): else a key's
	 * partition could lie outside the descriptor's.
	 */
	if (m->nparts < 1 || m->nparts > PHAST_MAX_PARTS || m->part_bits >= 32 ||
		(UINT32_C(1) << m->part_bits) != m->nparts || m->prefix_bits > 64 - m->part_bits ||
		(m->part_bits == 0 && m->prefix_bits != 0) ||
		(m->prefix_bits < 64 && m->prefix >> m->prefix_bits != 0))
		return pm_error_set(err, PM_ERR_CORRUPT, 0, "PhaST meta block of pool \"%s\" is damaged", pool->path);
	for (uint32_t p = 0; p < m->nparts; p++)
	{
		phast_key	low = {phast_part_low(m->prefix_bits, m->part_bits, m->prefix, (int) p), 0};

		if (!phast_lnode_offset_ok(pool, m->master[p]))
			return pm_error_set(err, PM_ERR_CORRUPT, 0,
								"PhaST meta block of pool \"%s\": partition %u starts at offset %llu, no LNode",
								pool->path, p, (unsigned long long) m->master[p]);
		/* a read walks its partition's INodes until one ends above its key: they must */
		if (pm_key_cmp(&((phast_lnode *) pm_pool_addr(pool, m->master[p]))->low, &low) != 0)
			return pm_error_set(err, PM_ERR_CORRUPT, 0,
								"PhaST chain of pool \"%s\": partition %u does not start at its low key",
								pool->path, p);
	}
	*out = m;
	return PM_OK;
}

int
phast_partitions(phast_tree *t)
{
	return (int) phast_desc_of(t)->nparts;
}

pm_errcode
phast_rebuild_begin(phast_tree *t, pm_error *err)
{
	phast_meta *m;
	phast_desc *d;
	pm_errcode	rc = check_meta(t->pool, &m, err);

	if (rc != PM_OK)
		return rc;
	t->dram_root = pm_alloc_block(t->dram, sizeof(phast_desc), err);
	if (t->dram_root == 0)
		return err->code;
	d = phast_desc_of(t);
	memset(d, 0, sizeof(*d));
	d->nparts = m->nparts;
	d->prefix_bits = m->prefix_bits;
	d->part_bits = m->part_bits;
	d->prefix = m->prefix;
	return PM_OK;
}

/* The key where partition p's chain ends: the next partition's first LNode's low. */
static phast_key
part_end(phast_tree *t, const phast_meta *m, int p)
{
	if (p + 1 < (int) m->nparts)
		return phast_lnode_at(t, m->master[p + 1])->low;
	return PM_KEY_MAX;
}

pm_errcode
phast_rebuild_partition(phast_tree *t, int p, pm_error *err)
{
	phast_meta *m = phast_meta_of(t->pool);
	phast_desc *d = phast_desc_of(t);
	uint64_t	stop = p + 1 < (int) m->nparts ? m->master[p + 1] : 0;
	uint64_t	last[PHAST_MAX_LEVEL];	/* the last INode at each level so far */
	uint64_t	ioff;
	phast_inode *in;
	uint64_t	repaired = 0;

	ioff = phast_new_inode(t, (uint32_t) p, PHAST_MAX_LEVEL, &phast_lnode_at(t, m->master[p])->low, err);
	if (ioff == 0)
		return err->code;
	d->parts[p].first = ioff;
	d->parts[p].inodes = 1;
	for (int l = 0; l < PHAST_MAX_LEVEL; l++)
		last[l] = ioff;
	in = phast_inode_at(t, ioff);
	for (uint64_t off = m->master[p]; off != stop;)
	{
		phast_lnode *l;
		phast_key	high;

		if (off == 0)
			return pm_error_set(err, PM_ERR_CORRUPT, 0,
								"PhaST chain of pool \"%s\" ends inside partition %d", t->pool->path, p);
		l = phast_lnode_at(t, off);
		if (l->next != 0 && !phast_lnode_offset_ok(t->pool, l->next))
			return pm_error_set(err, PM_ERR_CORRUPT, 0,
								"PhaST chain of pool \"%s\": the LNode at offset %llu links to offset %llu, no LNode",
								t->pool->path, (unsigned long long) off, (unsigned long long) l->next);
		if (!phast_lnode_keys_ok(l) || (l->next != 0 && !phast_lnode_keys_ok(phast_lnode_at(t, l->next))))
			return pm_error_set(err, PM_ERR_CORRUPT, 0,
								"PhaST chain of pool \"%s\": the LNode at offset %llu or its successor holds a key that is no PhaST key",
								t->pool->path, (unsigned long long) off);
		high = l->next != 0 ? phast_lnode_at(t, l->next)->low : PM_KEY_MAX;
		/* the DRAM layer's searches need increasing fences; a chain that loops has none */
		if (pm_key_cmp(&high, &l->low) <= 0)
			return pm_error_set(err, PM_ERR_CORRUPT, 0,
								"PhaST chain of pool \"%s\": the LNode at offset %llu does not start below its successor",
								t->pool->path, (unsigned long long) off);
		if (in->nleaves == PHAST_BUILD_FILL)
		{
			uint64_t	noff = phast_new_inode(t, (uint32_t) p, phast_random_level(), &l->low, err);
			phast_inode *n;

			if (noff == 0)
				return err->code;
			n = phast_inode_at(t, noff);
			in->high = l->low;
			for (uint32_t level = 0; level < n->nlevels; level++)
			{
				phast_inode_at(t, last[level])->next[level] = noff;
				last[level] = noff;
			}
			d->parts[p].inodes++;
			ioff = noff;
			in = n;
		}
		repaired += phast_repair_lnode(t, l, &high);
		in->lhigh[in->nleaves] = high;
		in->shadow[in->nleaves] = l->bitmap;
		in->leaf[in->nleaves] = off;
		in->nleaves++;
		off = l->next;
	}
	in->high = part_end(t, m, p);
	pm_fetch_add(&d->repaired, repaired);
	return phast_build_cache(t, p, err);
}

/* Mark the meta block, the host's roots and every LNode of the chain. */
static pm_errcode
phast_mark_reachable(pm_pool *pool, pm_alloc *a, pm_error *err)
{
	phast_meta *m;
	pm_errcode	rc = check_meta(pool, &m, err);

	if (rc != PM_OK)
		return rc;
	rc = pm_recon_mark_roots(a, pool, err);
	/* a chain that loops marks a block twice, which pm_alloc_mark refuses */
	for (uint64_t off = m->master[0]; off != 0 && rc == PM_OK;
		 off = ((phast_lnode *) pm_pool_addr(pool, off))->next)
		if (!phast_lnode_offset_ok(pool, off))
			rc = pm_error_set(err, PM_ERR_CORRUPT, 0, "PhaST chain of pool \"%s\" links to offset %llu, no LNode",
							  pool->path, (unsigned long long) off);
		else
			rc = pm_alloc_mark(a, off, err);
	return rc;
}

pm_errcode
phast_rebuild_end(phast_tree *t, bool recover_alloc, pm_error *err)
{
	phast_desc *d = phast_desc_of(t);
	pm_errcode	rc;

	/* level 0 runs through every partition in key order */
	for (uint32_t p = 0; p + 1 < d->nparts; p++)
	{
		uint64_t	cur = d->parts[p].first;

		while (phast_inode_at(t, cur)->next[0] != 0)
			cur = phast_inode_at(t, cur)->next[0];
		phast_inode_at(t, cur)->next[0] = d->parts[p + 1].first;
	}
	if (!recover_alloc)
		return PM_OK;
	pm_alloc_recover_begin(&t->pm);
	rc = phast_mark_reachable(t->pool, &t->pm, err);
	if (rc == PM_OK)
		pm_alloc_recover_end(&t->pm);
	return rc;
}

pm_errcode
phast_rebuild(phast_tree *t, bool recover_alloc, pm_error *err)
{
	pm_errcode	rc = phast_rebuild_begin(t, err);

	for (int p = 0; rc == PM_OK && p < phast_partitions(t); p++)
		rc = phast_rebuild_partition(t, p, err);
	if (rc == PM_OK)
		rc = phast_rebuild_end(t, recover_alloc, err);
	return rc;
}

/* Partition by partition, so that a rebuild that failed half way is released too. */
void
phast_release_dram(phast_tree *t)
{
	phast_desc *d = phast_desc_of(t);
	pm_error	err;

	for (uint32_t p = 0; p < d->nparts; p++)
	{
		uint64_t	cur = d->parts[p].first;

		if (d->parts[p].cache != 0)
			pm_free_block(t->dram, d->parts[p].cache, &err);
		while (cur != 0 && phast_inode_at(t, cur)->part == p)
		{
			uint64_t	next = phast_inode_at(t, cur)->next[0];

			pm_free_block(t->dram, cur, &err);
			cur = next;
		}
	}
	pm_free_block(t->dram, t->dram_root, &err);
	t->dram_root = 0;
}

static uint64_t
count_live(const phast_lnode *l)
{
	uint64_t	n = 0;
	phast_key	k;

	for (int i = 0; i < PHAST_LNODE_CAP; i++)
		n += phast_slot_live(l, l->bitmap, i, &k);
	return n;
}
uint64_t
phast_dram_bytes(phast_tree *t)
{
	phast_desc *d = phast_desc_of(t);
	uint64_t	bytes = sizeof(phast_desc);

	if (t->epoch != NULL)
		pm_epoch_enter(t->epoch);
	for (uint64_t cur = pm_load(&d->parts[0].first); cur != 0;
		 cur = pm_load(&phast_inode_at(t, cur)->next[0]))
		bytes += sizeof(phast_inode);
	for (uint32_t p = 0; p < d->nparts; p++)
	{
		phast_cache *c = pm_alloc_addr(t->dram, pm_load(&d->parts[p].cache));

		bytes += pm_alloc_class_size(sizeof(phast_cache) + sizeof(phast_cache_entry) * c->n);
	}
	if (t->epoch != NULL)
		pm_epoch_exit(t->epoch);
	return bytes;
}

void
phast_get_stats(phast_tree *t, phast_stats *st)
{
	phast_desc *d = phast_desc_of(t);

	memset(st, 0, sizeof(*st));
	st->partitions = d->nparts;
	st->splits = pm_load(&d->splits);
	st->inode_splits = pm_load(&d->inode_splits);
	st->compactions = pm_load(&d->compactions);
	st->repaired = pm_load(&d->repaired);
	for (uint64_t cur = d->parts[0].first; cur != 0;)
	{
		phast_inode *in = phast_inode_at(t, cur);
		uint32_t	nleaves = pm_load_relaxed(&in->nleaves);

		st->inodes++;
		st->height = in->nlevels > st->height && in->nlevels < PHAST_MAX_LEVEL ? in->nlevels : st->height;
		for (uint32_t j = 0; j < nleaves; j++)
			st->entries += count_live(phast_lnode_at(t, pm_load_relaxed(&in->leaf[j])));
		st->lnodes += nleaves;
		cur = pm_load(&in->next[0]);
	}
	st->dram_bytes = phast_dram_bytes(t);
	st->pm_bytes = st->lnodes * sizeof(phast_lnode) + pm_alloc_class_size(sizeof(phast_meta));
}

static char problem[256];

#define FAIL(...) do { snprintf(problem, sizeof(problem), __VA_ARGS__); return problem; } while (0)

/* The PM chain: partition heads, increasing lows, every committed slot inside its LNode. */
static const char *
check_pm(phast_tree *t, const phast_meta *m, uint64_t *entries)
{
	int			p = 0;
	phast_key	prev_low = PM_KEY_MIN;

	*entries = 0;
	for (uint64_t off = m->master[0]; off != 0;)
	{
		const phast_lnode *l;
		phast_key	high;
		phast_key	k;

		l = phast_lnode_at(t, off);
		if (l->next != 0 && !phast_lnode_offset_ok(t->pool, l->next))
			FAIL("LNode at %llu links to offset %llu, no LNode", (unsigned long long) off,
				 (unsigned long long) l->next);
		if (!phast_lnode_keys_ok(l) || (l->next != 0 && !phast_lnode_keys_ok(phast_lnode_at(t, l->next))))
			FAIL("LNode at %llu or its successor holds a key that is no PhaST key", (unsigned long long) off);
		high = l->next ? phast_lnode_at(t, l->next)->low : PM_KEY_MAX;
		if (p < (int) m->nparts && off == m->master[p])
		{
			phast_key	want = {phast_part_low(m->prefix_bits, m->part_bits, m->prefix, p), 0};

			if (pm_key_cmp(&l->low, &want) != 0)
				FAIL("partition %d starts at (%llu,%llu), not at its low key", p,
					 (unsigned long long) l->low.key, (unsigned long long) l->low.rest);
			p++;
		}
		else if (off != m->master[0] && pm_key_cmp(&l->low, &prev_low) <= 0)
			FAIL("LNode at %llu does not start above its predecessor", (unsigned long long) off);
		for (int i = 0; i < PHAST_LNODE_CAP; i++)
		{
			if (!(l->bitmap & (UINT64_C(1) << i)))
				continue;
			k = (phast_key) {l->slot[i].key, l->slot[i].rest & ~PHAST_DEAD};
			if (pm_key_cmp(&k, &l->low) < 0 || pm_key_cmp(&k, &high) >= 0)
				FAIL("LNode at %llu holds (%llu,%llu) outside its range", (unsigned long long) off,
					 (unsigned long long) k.key, (unsigned long long) k.rest);
			if (l->fp[i] != phast_fingerprint(&k))
				FAIL("LNode at %llu has a wrong fingerprint in slot %d", (unsigned long long) off, i);
		}
		*entries += count_live(l);
		prev_low = l->low;
		off = l->next;
	}
	if (p != (int) m->nparts)
		FAIL("the chain reaches %d of %u partition heads", p, m->nparts);
	return NULL;
}

/* The DRAM layer: INodes in order, each LNode's fence and shadow bitmap as PM says. */
static const char *
check_dram(phast_tree *t, const phast_meta *m)
{
	phast_desc *d = phast_desc_of(t);
	uint64_t	expect = m->master[0];
	phast_key	low = PM_KEY_MIN;

	for (uint64_t cur = d->parts[0].first; cur != 0;)
	{
		phast_inode *in = phast_inode_at(t, cur);

		if (pm_key_cmp(&in->low, &low) != 0)
			FAIL("INode at %llu starts where its predecessor does not end", (unsigned long long) cur);
		if (in->nleaves == 0 || in->nleaves > PHAST_INODE_CAP)
			FAIL("INode at %llu holds %u LNodes", (unsigned long long) cur, in->nleaves);
		if (in->lock != 0 || (in->version & 1))
			FAIL("INode at %llu is locked", (unsigned long long) cur);
		if (pm_key_cmp(&in->lhigh[in->nleaves - 1], &in->high) != 0)
			FAIL("INode at %llu: its last LNode does not end at its high", (unsigned long long) cur);
		for (uint32_t j = 0; j < in->nleaves; j++)
		{
			const phast_lnode *l = phast_lnode_at(t, in->leaf[j]);
			phast_key	lhigh = l->next ? phast_lnode_at(t, l->next)->low : PM_KEY_MAX;

			if (in->leaf[j] != expect)
				FAIL("INode at %llu, LNode %u: not the chain's next LNode", (unsigned long long) cur, j);
			if (pm_key_cmp(&in->lhigh[j], &lhigh) != 0)
				FAIL("INode at %llu, LNode %u: its high is not the next LNode's low", (unsigned long long) cur, j);
			if (in->shadow[j] != l->bitmap)
				FAIL("INode at %llu, LNode %u: shadow bitmap %llx, PM bitmap %llx", (unsigned long long) cur, j,
					 (unsigned long long) in->shadow[j], (unsigned long long) l->bitmap);
			expect = l->next;
		}
		low = in->high;
		cur = in->next[0];
	}
	if (expect != 0)
		FAIL("the DRAM layer ends before the chain does");
	for (uint32_t p = 0; p < d->nparts; p++)
	{
		phast_cache *c = pm_alloc_addr(t->dram, d->parts[p].cache);

		for (uint32_t i = 0; i < c->n; i++)
			if (phast_inode_at(t, c->e[i].inode)->part != p ||
				pm_key_cmp(&phast_inode_at(t, c->e[i].inode)->low, &c->e[i].low) != 0 ||
				(i > 0 && pm_key_cmp(&c->e[i - 1].low, &c->e[i].low) >= 0))
				FAIL("index cache of partition %u is out of order or names a wrong INode", p);
	}
	return NULL;
}

const char *
phast_check(phast_tree *t, uint64_t *entries)
{
	phast_meta *m;
	pm_error	err;
	const char *r;

	if (check_meta(t->pool, &m, &err) != PM_OK)
	{
		snprintf(problem, sizeof(problem), "%s", err.msg);
		return problem;
	}
	r = check_pm(t, m, entries);
	return r != NULL ? r : check_dram(t, m);
}
