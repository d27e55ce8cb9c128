/*
 * phast_ops.c
 *	  Insert (write-lock-free commit), delete, compaction and the lock-free
 *	  validated LNode read (README.md: Operations).
 */
#include "phast_internal.h"

#include <stdlib.h>
#include <string.h>

static inline void
enter(phast_tree *t)
{
	if (t->epoch != NULL)
		pm_epoch_enter(t->epoch);
}

static inline void
leave(phast_tree *t)
{
	if (t->epoch != NULL)
		pm_epoch_exit(t->epoch);
}

/*
 * Lock the INode whose range holds k in shared mode (moving right past
 * INodes a split shrank meanwhile); returns its offset.
 */
static uint64_t
lock_covering(phast_tree *t, const phast_key *k)
{
	uint64_t	off = phast_find_inode(t, k);

	for (;;)
	{
		phast_inode *in = phast_inode_at(t, off);

		phast_lock_shared(in);
		if (pm_key_cmp(k, &in->high) < 0)
			return off;
		phast_unlock_shared(in);
		off = pm_load(&in->next[0]);
	}
}

/* The live slot of l that holds k, or -1. */
static int
find_slot(const phast_lnode *l, const phast_key *k)
{
	uint64_t	bm = pm_load(&l->bitmap);
	uint8_t		fp = phast_fingerprint(k);

	for (uint64_t b = bm; b != 0; b &= b - 1)
	{
		int			i = __builtin_ctzll(b);
		phast_key	s;

		if (l->fp[i] == fp && phast_slot_live(l, bm, i, &s) && pm_key_cmp(&s, k) == 0)
			return i;
	}
	return -1;
}

/*
 * The write-lock-free commit (the paper's WFCI): claim a slot in the DRAM
 * shadow bitmap, write and persist the entry, then commit it with a CAS on
 * the PM bitmap and persist that line (with the slot's fingerprint).  Two
 * persists.  False if the LNode is full.
 */
static bool
commit_into(phast_tree *t, phast_inode *in, int j, const phast_key *k)
{
	phast_lnode *l = phast_lnode_at(t, in->leaf[j]);
	const pm_persister *ps = &t->pool->persist;
	uint64_t	claimed = pm_load(&in->shadow[j]);
	uint64_t	bit;
	uint64_t	bm;
	int			pos;

	do
	{
		if (claimed == PHAST_FULL_BITMAP)
			return false;
		pos = __builtin_ctzll(~claimed);
	} while (!pm_cas(&in->shadow[j], &claimed, claimed | (UINT64_C(1) << pos)));
	bit = UINT64_C(1) << pos;
	pm_store_relaxed(&l->slot[pos].key, k->key);
	pm_store(&l->slot[pos].rest, k->rest);
	pm_persist(ps, &l->slot[pos], sizeof(phast_key));
	l->fp[pos] = phast_fingerprint(k);
	bm = pm_load(&l->bitmap);
	while (!pm_cas(&l->bitmap, &bm, bm | bit))
		;
	pm_persist(ps, l, PM_CACHELINE);
	return true;
}

/*
 * A full LNode: take its INode exclusively and make room (split the INode
 * first if it has no room for another LNode).  A writer already there is
 * making room itself; then only wait for it.
 */
static pm_errcode
make_room(phast_tree *t, uint64_t ioff, const phast_key *k, pm_error *err)
{
	phast_inode *in = phast_inode_at(t, ioff);
	pm_errcode	rc = PM_OK;
	int			j;

	if (!phast_lock_exclusive(in))
		return PM_OK;
	if (pm_key_cmp(k, &in->high) < 0)
	{
		j = phast_inode_slot(in, k);
		if (in->shadow[j] == PHAST_FULL_BITMAP)
		{
			if (in->nleaves == PHAST_INODE_CAP)
				rc = phast_split_inode(t, ioff, err);
			else
				rc = phast_split_lnode(t, ioff, j, err);
		}
	}
	phast_unlock_exclusive(in);
	return rc;
}

pm_errcode
phast_insert(phast_tree *t, const phast_key *k, pm_error *err)
{
	if (k->rest == 0 || k->rest > PHAST_REST_MAX)
		return pm_error_set(err, PM_ERR_INVALID, 0, "an entry's rest must be 1..2^49-1");
	for (;;)
	{
		uint64_t	ioff;
		phast_inode *in;
		int			j;
		bool		done;
		pm_errcode	rc;

		enter(t);
		ioff = lock_covering(t, k);
		in = phast_inode_at(t, ioff);
		j = phast_inode_slot(in, k);
		done = find_slot(phast_lnode_at(t, in->leaf[j]), k) >= 0 || commit_into(t, in, j, k);
		phast_unlock_shared(in);
		if (done)
		{
			leave(t);
			return PM_OK;
		}
		rc = make_room(t, ioff, k, err);
		leave(t);
		if (rc != PM_OK)
			return rc;
	}
}

pm_errcode
phast_delete(phast_tree *t, const phast_key *k, bool *found, pm_error *err)
{
	uint64_t	ioff;
	phast_inode *in;
	phast_lnode *l;
	int			i;

	(void) err;					/* a delete writes in place: nothing can fail */
	*found = false;
	if (k->rest == 0 || k->rest > PHAST_REST_MAX)
		return PM_OK;
	enter(t);
	ioff = lock_covering(t, k);
	in = phast_inode_at(t, ioff);
	l = phast_lnode_at(t, in->leaf[phast_inode_slot(in, k)]);
	i = find_slot(l, k);
	if (i >= 0)
	{
		pm_store(&l->slot[i].rest, k->rest | PHAST_DEAD);
		pm_persist(&t->pool->persist, &l->slot[i], sizeof(phast_key));
		*found = true;
	}
	phast_unlock_shared(in);
	leave(t);
	return PM_OK;
}

static int
cmp_key(const void *a, const void *b)
{
	return pm_key_cmp(a, b);
}

/* One attempt at a consistent read of the LNode covering k; false if a writer interfered. */
static bool
try_read(phast_tree *t, const phast_key *k, phast_batch *b)
{
	uint64_t	ioff = phast_find_inode(t, k);
	phast_inode *in;
	uint64_t	version;
	phast_lnode *l;
	uint64_t	bm;
	int			j;

	for (;;)
	{
		in = phast_inode_at(t, ioff);
		version = pm_load(&in->version);
		if (version & 1)
			return false;
		if (pm_key_cmp(k, &in->high) < 0)
			break;
		ioff = pm_load(&in->next[0]);
		if (pm_load(&in->version) != version || ioff == 0)
			return false;
	}
	j = phast_inode_slot(in, k);
	b->low = j > 0 ? in->lhigh[j - 1] : in->low;
	b->high = in->lhigh[j];
	l = phast_lnode_at(t, in->leaf[j]);
	bm = pm_load(&l->bitmap);
	b->n = 0;
	for (uint64_t bits = bm; bits != 0; bits &= bits - 1)
		if (phast_slot_live(l, bm, __builtin_ctzll(bits), &b->e[b->n]))
			b->n++;
	return pm_load(&in->version) == version;
}

void
phast_read_range(phast_tree *t, const phast_key *k, bool backward, const phast_key *lo,
				 const phast_key *hi, phast_batch *b)
{
	phast_key	target = backward ? pm_key_pred(k) : *k;
	int			keep = 0;

	if (backward && pm_key_is_min(k))
	{
		b->n = 0;
		b->low = b->high = PM_KEY_MIN;
		return;
	}
	enter(t);
	for (unsigned attempt = 0; !try_read(t, &target, b); attempt++)
		pm_spin_delay(attempt);
	leave(t);
	/*
	 * Keep what was asked for before sorting, which is most of a read's
	 * cost: cut at k (forward nothing below it, backward nothing from it on)
	 * and within [lo, hi] (a point lookup sorts its own entries only).
	 */
	for (int i = 0; i < b->n; i++)
		if ((backward ? pm_key_cmp(&b->e[i], k) < 0 : pm_key_cmp(&b->e[i], k) >= 0) &&
			pm_key_cmp(&b->e[i], lo) >= 0 && pm_key_cmp(&b->e[i], hi) <= 0)
			b->e[keep++] = b->e[i];
	b->n = keep;
	qsort(b->e, b->n, sizeof(phast_key), cmp_key);
	if (backward)
		b->high = *k;
	else
		b->low = *k;
}

void
phast_read_leaf(phast_tree *t, const phast_key *k, bool backward, phast_batch *b)
{
	phast_key	lo = PM_KEY_MIN;
	phast_key	hi = PM_KEY_MAX;

	phast_read_range(t, k, backward, &lo, &hi, b);
}

pm_errcode
phast_compact_leaf(phast_tree *t, const phast_key *k, bool *compacted, pm_error *err)
{
	uint64_t	ioff;
	phast_inode *in;

	(void) err;					/* compaction is in place: nothing can fail */
	*compacted = false;
	enter(t);
	ioff = lock_covering(t, k);
	in = phast_inode_at(t, ioff);
	phast_unlock_shared(in);
	if (phast_lock_exclusive(in))
	{
		if (pm_key_cmp(k, &in->high) < 0)
		{
			int			j = phast_inode_slot(in, k);
			phast_lnode *l = phast_lnode_at(t, in->leaf[j]);
			int			committed = __builtin_popcountll(l->bitmap);
			int			live = 0;
			phast_key	s;

			for (int i = 0; i < PHAST_LNODE_CAP; i++)
				live += phast_slot_live(l, l->bitmap, i, &s);
			if (live < committed)
			{
				phast_drop_dead(t, in, j);
				*compacted = true;
			}
		}
		phast_unlock_exclusive(in);
	}
	leave(t);
	return PM_OK;
}
