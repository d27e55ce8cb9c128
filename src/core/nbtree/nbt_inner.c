/*
 * nbt_inner.c
 *	  Inner nodes: optimistic version locks, B-link descent, separator
 *	  insertion with splits and root growth.
 *
 * Writers lock one node at a time (a version word, odd while locked) and
 * move up the tree after releasing the child, as in Lehman and Yao's B-link
 * tree: the right-sibling pointer and high fence keep every key reachable
 * while a split has not reached the parent yet.  Readers never lock: they
 * read the version, the node, and the version again, and retry from the
 * root if it changed.  A writer is never blocked by a reader.
 */
#include "nbt_internal.h"

#include <string.h>

static inline uint64_t
read_begin(nbt_inner *n)
{
	uint64_t	v;

	for (unsigned attempt = 0; ((v = pm_load(&n->version)) & 1) != 0; attempt++)
		pm_spin_delay(attempt);
	return v;
}

static inline bool
read_valid(nbt_inner *n, uint64_t v)
{
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return pm_load_relaxed(&n->version) == v;
}

static inline void
write_lock(nbt_inner *n)
{
	for (unsigned attempt = 0;; attempt++)
	{
		uint64_t	v = pm_load(&n->version);

		if ((v & 1) == 0 && pm_cas(&n->version, &v, v + 1))
			return;
		pm_spin_delay(attempt);
	}
}

static inline void
write_unlock(nbt_inner *n)
{
	pm_store(&n->version, pm_load_relaxed(&n->version) + 1);
}

/*
 * Start loading a node's separator keys and children at once: the binary
 * search below would otherwise take one dependent cache miss per probe, and
 * the child it picks one more.
 */
static inline void
prefetch_node(const nbt_inner *n)
{
	for (int i = 0; i < NBT_INNER_CAP; i += 8)
	{
		__builtin_prefetch(&n->key[i]);
		__builtin_prefetch(&n->child[i]);
	}
}

/*
 * Start loading a whole KV block: which slot a lookup reads (fingerprints)
 * or an insert claims (num) is known only once the leaf is read.
 */
static inline void
prefetch_kv(const nbt_tree *t, uint64_t off)
{
	const char *kv = (const char *) nbt_kv_at(t, off);

	for (size_t line = 0; line < sizeof(nbt_kv); line += 64)
		__builtin_prefetch(kv + line);
}

/*
 * Index of the child covering sk: -1 for child0, else an entry.  The last
 * separator below sk.key is found by a binary search without branches on
 * the data (they mispredict half the time, which cost more than the node's
 * cache misses); entries with key equal to sk.key, which only duplicates
 * make, are then stepped over by their rest.
 */
static int
search_node(const nbt_tree *t, nbt_inner *n, const nbt_skey *sk, uint32_t count)
{
	const uint64_t *base = n->key;
	uint32_t	len = count;
	int			found;

	if (count == 0)
		return -1;
	while (len > 1)
	{
		uint32_t	half = len / 2;

		base = pm_load_relaxed(&base[half]) < sk->key ? base + half : base;
		len -= half;
	}
	found = (int) (base - n->key) + (pm_load_relaxed(base) < sk->key) - 1;
	while ((uint32_t) (found + 1) < count && pm_load_relaxed(&n->key[found + 1]) == sk->key)
	{
		nbt_skey	sep = {sk->key, pm_load_relaxed(&n->rest[found + 1])};

		if (nbt_cmp(t, &sep, sk) > 0)
			break;
		found++;
	}
	return found;
}

static inline uint64_t
child_at(nbt_inner *n, int i)
{
	return i < 0 ? pm_load_relaxed(&n->child0) : pm_load_relaxed(&n->child[i]);
}

/* The child (not the word) of entry i of a node at level. */
static inline uint64_t
child_off_at(nbt_inner *n, uint32_t level, int i)
{
	return nbt_child_of_word(level, child_at(n, i));
}

/*
 * Descend to the node at stop_level whose range covers sk (stop_level 0:
 * the leaf the tree routes sk to).  Returns its DRAM offset.  A leaf's KV
 * block, which every caller goes on to read or write, starts loading as the
 * parent names it, in parallel with the leaf.
 *
 * start, if not 0, is a level-1 node to begin at instead of the root, and
 * stop_level must be 0: the caller knows sk is not below the node's low end
 * (a key it routed is not above sk; a node's low end never changes, inner
 * nodes are never freed while the tree is attached).  If sk lies at or past
 * the node's high fence, the descent starts over from the root rather than
 * walk a level of siblings.  *level1, if not NULL, gets the level-1 node
 * the leaf was read from.
 */
static inline uint64_t
descend(nbt_tree *t, const nbt_skey *sk, uint32_t stop_level, uint64_t start,
		uint64_t *level1)
{
	nbt_droot  *dr = nbt_droot_at(t);

restart:
	{
		uint64_t	off = start != 0 ? start : pm_load(&dr->root);

		for (;;)
		{
			nbt_inner  *n = nbt_inner_at(t, off);
			uint64_t	v;
			uint32_t	level;
			uint32_t	count;
			nbt_skey	high;
			uint64_t	sibling;
			bool		move_right;
			uint64_t	next = 0;

			prefetch_node(n);
			v = read_begin(n);
			level = pm_load_relaxed(&n->level);
			count = pm_load_relaxed(&n->count);
			high = nbt_skey_load(&n->high);
			sibling = pm_load_relaxed(&n->sibling);
			move_right = nbt_cmp(t, sk, &high) >= 0 && sibling != 0;
			if (count > NBT_INNER_CAP)
				count = NBT_INNER_CAP;	/* torn read; validation below fails */
			if (!move_right && level > stop_level)
			{
				next = child_at(n, search_node(t, n, sk, count));
				if (level == 1)
				{
					/* a leaf's word (a restart below only wastes the prefetch) */
					prefetch_kv(t, nbt_kv_hint_of_word(next));
					next = nbt_leaf_of_word(next);
				}
			}
			if (!read_valid(n, v))
				goto restart;
			if (move_right && off == start)
			{
				start = 0;		/* past the hinted node: from the root */
				goto restart;
			}
			if (move_right)
				off = sibling;
			else if (level <= stop_level)
				return off;
			else if (level == 1)
			{
				if (level1 != NULL)
					*level1 = off;
				return next;	/* a leaf */
			}
			else
				off = next;
		}
	}
}

uint64_t
nbt_descend(nbt_tree *t, const nbt_skey *sk, uint32_t stop_level)
{
	return descend(t, sk, stop_level, 0, NULL);
}

uint64_t
nbt_descend_from(nbt_tree *t, const nbt_skey *sk, uint64_t start, uint64_t *level1)
{
	return descend(t, sk, 0, start, level1);
}

uint64_t
nbt_inner_new(nbt_tree *t, uint32_t level, pm_error *err)
{
	uint64_t	off = pm_alloc_block(t->dram, sizeof(nbt_inner), err);
	nbt_inner  *n;

	if (off == 0)
		return 0;
	n = nbt_inner_at(t, off);
	memset(n, 0, sizeof(*n));
	n->level = level;
	n->high = PM_KEY_MAX;
	pm_fetch_add(&nbt_droot_at(t)->inner_nodes, 1);
	return off;
}

/* Lock the node at level covering sk, moving right past concurrent splits. */
static nbt_inner *
lock_covering(nbt_tree *t, const nbt_skey *sk, uint32_t level, uint64_t *off_out)
{
	uint64_t	off = nbt_descend(t, sk, level);

	for (;;)
	{
		nbt_inner  *n = nbt_inner_at(t, off);
		nbt_skey	high;

		write_lock(n);
		high = n->high;
		if (nbt_cmp(t, sk, &high) < 0 || n->sibling == 0)
		{
			*off_out = off;
			return n;
		}
		off = n->sibling;
		write_unlock(n);
	}
}

/* Separator pos lies strictly between its neighbours and below the node's high fence. */
static inline bool
sep_in_order(const nbt_tree *t, const nbt_inner *n, int pos)
{
	nbt_skey	sep = nbt_inner_sep(n, pos);
	nbt_skey	left = pos > 0 ? nbt_inner_sep(n, pos - 1) : PM_KEY_MIN;
	nbt_skey	right = pos + 1 < (int) n->count ? nbt_inner_sep(n, pos + 1) : n->high;

	return (pos == 0 || nbt_cmp(t, &left, &sep) < 0) && nbt_cmp(t, &sep, &right) < 0;
}

/* Insert (sep, child) into a locked node that has room. */
static void
insert_entry(const nbt_tree *t, nbt_inner *n, const nbt_skey *sep, uint64_t child)
{
	int			pos = search_node(t, n, sep, n->count) + 1;
	size_t		tail = (n->count - pos) * sizeof(uint64_t);

	pm_assert(n->count < NBT_INNER_CAP);
	memmove(&n->key[pos + 1], &n->key[pos], tail);
	memmove(&n->rest[pos + 1], &n->rest[pos], tail);
	memmove(&n->child[pos + 1], &n->child[pos], tail);
	nbt_inner_set(n, pos, sep, child);
	n->count++;
	pm_assert(sep_in_order(t, n, pos));
}

/* Remove entry pos (a separator and the child right of it) from a locked node. */
static void
remove_entry(nbt_inner *n, int pos)
{
	size_t		tail = (n->count - pos - 1) * sizeof(uint64_t);

	memmove(&n->key[pos], &n->key[pos + 1], tail);
	memmove(&n->rest[pos], &n->rest[pos + 1], tail);
	memmove(&n->child[pos], &n->child[pos + 1], tail);
	n->count--;
}

/*
 * Where to split the locked, full node n: entry mid goes up, child[mid]
 * starts the new right node.  The middle, unless that parts a leaf from a
 * right sibling its merge may still absorb: the merge's parent update needs
 * both in one node.  Such pairs never share a leaf, so mid + 1 is free then.
 */
static uint32_t
split_point(nbt_tree *t, nbt_inner *n)
{
	uint32_t	mid = n->count / 2;

	if (n->level == 1 && nbt_merge_may_join(t, nbt_leaf_of_word(n->child[mid - 1]),
											nbt_leaf_of_word(n->child[mid])))
		mid++;
	return mid;
}

/*
 * Insert (sep, child) into the locked node n (at off); split it if full and
 * carry the new separator upward.  Releases n's lock.
 */
static pm_errcode
insert_sep(nbt_tree *t, nbt_inner *n, uint64_t off, nbt_skey sep, uint64_t child,
		   pm_error *err)
{
	nbt_droot  *dr = nbt_droot_at(t);

	for (;;)
	{
		uint64_t	right_off;
		nbt_inner  *right;
		uint32_t	mid;
		nbt_skey	up;
		uint64_t	word = nbt_word_of_child(t, n->level, child);

		if (n->count < NBT_INNER_CAP)
		{
			insert_entry(t, n, &sep, word);
			write_unlock(n);
			return PM_OK;
		}

		/* split: the upper half moves to a new right sibling */
		right_off = nbt_inner_new(t, n->level, err);
		if (right_off == 0)
		{
			write_unlock(n);
			return err->code;
		}
		right = nbt_inner_at(t, right_off);
		mid = split_point(t, n);
		up = nbt_inner_sep(n, mid);
		right->child0 = n->child[mid];
		right->count = n->count - mid - 1;
		memcpy(right->key, &n->key[mid + 1], right->count * sizeof(uint64_t));
		memcpy(right->rest, &n->rest[mid + 1], right->count * sizeof(uint64_t));
		memcpy(right->child, &n->child[mid + 1], right->count * sizeof(uint64_t));
		right->high = n->high;
		right->sibling = n->sibling;
		/* readers see none of this until the unlock: they validate the version */
		n->count = mid;
		n->high = up;
		n->sibling = right_off;
		if (nbt_cmp(t, &sep, &up) < 0)
			insert_entry(t, n, &sep, word);
		else
			insert_entry(t, right, &sep, word);

		if (pm_load(&dr->root) == off)
		{
			/* n is the root: grow the tree under n's lock */
			uint64_t	root_off = nbt_inner_new(t, n->level + 1, err);
			nbt_inner  *root;

			if (root_off == 0)
			{
				/* the tree stays correct through the sibling link; only taller later */
				write_unlock(n);
				return err->code;
			}
			root = nbt_inner_at(t, root_off);
			root->child0 = off;
			nbt_inner_set(root, 0, &up, right_off);
			root->count = 1;
			pm_store(&dr->root, root_off);
			write_unlock(n);
			return PM_OK;
		}
		write_unlock(n);
		n = lock_covering(t, &up, n->level + 1, &off);
		sep = up;
		child = right_off;
	}
}

/*
 * In the level-1 node covering low, replace old_child by new_child.  Then,
 * if old_child's SMO absorbed its right sibling, that sibling's entry goes,
 * or names right_child instead; else if right_child, (sep, right_child) is
 * inserted after new_child.  A no-op if old_child is no longer there
 * (another helper of the same SMO did it).
 */
pm_errcode
nbt_replace_child(nbt_tree *t, const nbt_skey *low, uint64_t old_child, uint64_t new_child,
				  const nbt_skey *sep, uint64_t right_child, uint64_t absorbed, pm_error *err)
{
	uint64_t	off;
	nbt_inner  *n = lock_covering(t, low, 1, &off);
	int			i = search_node(t, n, low, n->count);

	if (child_off_at(n, 1, i) != old_child)
	{
		write_unlock(n);
		return PM_OK;
	}
	if (i < 0)
		n->child0 = nbt_word_of_child(t, 1, new_child);
	else
		n->child[i] = nbt_word_of_child(t, 1, new_child);
	if (absorbed != 0)
	{
		/* nbt_request_merge and split_point keep the pair in one node */
		if (i + 1 >= (int) n->count || child_off_at(n, 1, i + 1) != absorbed)
		{
			write_unlock(n);
			return pm_error_set(err, PM_ERR_CORRUPT, 0,
								"nbtree: a merged leaf is not its left sibling's neighbour in the parent");
		}
		if (right_child != 0)
			nbt_inner_set(n, i + 1, sep, nbt_word_of_child(t, 1, right_child));
		else
			remove_entry(n, i + 1);
		write_unlock(n);
		return PM_OK;
	}
	if (right_child == 0)
	{
		write_unlock(n);
		return PM_OK;
	}
	return insert_sep(t, n, off, *sep, right_child, err);
}

/*
 * Ask the SMO of leaf x to absorb its right sibling y (README: "Merge").
 * Only while both are neighbours in one level-1 node: that node's lock
 * keeps this stable here, and split_point keeps it so until the merge's
 * parent update.  Sets x's SMO bit; the caller then runs the SMO.  False if
 * they are not such neighbours or x's SMO already runs without a merge.
 */
bool
nbt_request_merge(nbt_tree *t, uint64_t x_off, uint64_t y_off)
{
	nbt_leaf   *x = nbt_leaf_at(t, x_off);
	uint64_t	off;
	nbt_inner  *n = lock_covering(t, &x->low, 1, &off);
	int			i = search_node(t, n, &x->low, n->count);
	uint64_t	expected = 0;
	bool		ok;

	ok = child_off_at(n, 1, i) == x_off && i + 1 < (int) n->count &&
		child_off_at(n, 1, i + 1) == y_off &&
		pm_load(&x->next) == y_off && pm_cas(&x->merge_right, &expected, y_off);
	if (ok)
		pm_fetch_or(&x->bitmap, NBT_SMO_BIT);
	write_unlock(n);
	return ok;
}
