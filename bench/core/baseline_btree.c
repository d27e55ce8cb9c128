/*
 * baseline_btree.c
 *	  A DRAM-only B+-tree of (key, rest) entries under one global
 *	  pthread reader-writer lock: the reference point of bench_ycsb, not a
 *	  competitor (see baseline_btree.h).
 *
 * Kept as short as a B+-tree gets, so that a reader can check it at sight:
 * every operation takes the one lock for its whole duration; nodes are
 * sorted arrays searched by binary search; a full node splits in half on
 * the way back up from an insert.  Deletes never merge or free nodes: an
 * emptied leaf simply stays in the tree and the leaf chain (PostgreSQL's own
 * nbtree likewise leaves empty pages to VACUUM), which keeps every
 * separator a valid bound and the code free of rebalancing.
 *
 * Invariant of an inner node with n children: every entry under
 * children[i] is < separators[i] <= every entry under children[i + 1].
 */
#include "baseline_btree.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Entries per leaf and children per inner node; a leaf is about 1 KiB. */
#define BASELINE_FANOUT 64

typedef struct baseline_node
{
	bool		is_leaf;
	int			n;				/* entries (leaf) or children (inner node) */
} baseline_node;

typedef struct baseline_leaf
{
	baseline_node hdr;
	struct baseline_leaf *next; /* right sibling, for scans */
	/* one spare slot: an insert goes in first, then an overfull leaf splits */
	baseline_entry entries[BASELINE_FANOUT + 1];
} baseline_leaf;

typedef struct baseline_inner
{
	baseline_node hdr;
	baseline_entry separators[BASELINE_FANOUT];
	baseline_node *children[BASELINE_FANOUT + 1];
} baseline_inner;

struct baseline_btree
{
	pthread_rwlock_t lock;
	baseline_node *root;
};

/* Its own comparator: the reference shares no code with the structures it is compared with. */
static int
entry_cmp(const baseline_entry *a, const baseline_entry *b)
{
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	if (a->rest != b->rest)
		return a->rest < b->rest ? -1 : 1;
	return 0;
}

static void *
alloc_or_die(size_t size)
{
	void	   *p = calloc(1, size);

	if (p == NULL)
	{
		fprintf(stderr, "baseline_btree: out of memory\n");
		exit(1);
	}
	return p;
}

static baseline_leaf *
new_leaf(void)
{
	baseline_leaf *leaf = alloc_or_die(sizeof(baseline_leaf));

	leaf->hdr.is_leaf = true;
	return leaf;
}

/* Index of the first entry >= x. */
static int
leaf_lower_bound(const baseline_leaf *leaf, const baseline_entry *x)
{
	int			lo = 0,
				hi = leaf->hdr.n;

	while (lo < hi)
	{
		int			mid = (lo + hi) / 2;

		if (entry_cmp(&leaf->entries[mid], x) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Index of the child whose range holds x: the number of separators <= x. */
static int
child_index(const baseline_inner *inner, const baseline_entry *x)
{
	int			lo = 0,
				hi = inner->hdr.n - 1;

	while (lo < hi)
	{
		int			mid = (lo + hi) / 2;

		if (entry_cmp(&inner->separators[mid], x) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static baseline_leaf *
find_leaf(const baseline_btree *tree, const baseline_entry *x)
{
	baseline_node *node = tree->root;

	while (!node->is_leaf)
	{
		baseline_inner *inner = (baseline_inner *) node;

		node = inner->children[child_index(inner, x)];
	}
	return (baseline_leaf *) node;
}

baseline_btree *
baseline_create(void)
{
	baseline_btree *tree = alloc_or_die(sizeof(baseline_btree));

	pthread_rwlock_init(&tree->lock, NULL);
	tree->root = &new_leaf()->hdr;
	return tree;
}

static void
free_subtree(baseline_node *node)
{
	if (!node->is_leaf)
	{
		baseline_inner *inner = (baseline_inner *) node;

		for (int i = 0; i < inner->hdr.n; i++)
			free_subtree(inner->children[i]);
	}
	free(node);
}

void
baseline_destroy(baseline_btree *tree)
{
	free_subtree(tree->root);
	pthread_rwlock_destroy(&tree->lock);
	free(tree);
}

/*
 * Insert x under node.  Returns false if x is already there.  If node
 * overflows it splits: *right is the new right half and *separator the
 * least entry bound of it, for the parent to insert; else *right is NULL.
 */
static bool
insert_into(baseline_node *node, const baseline_entry *x, baseline_node **right,
			baseline_entry *separator)
{
	*right = NULL;
	if (node->is_leaf)
	{
		baseline_leaf *leaf = (baseline_leaf *) node;
		int			pos = leaf_lower_bound(leaf, x);
		baseline_leaf *sibling;
		int			keep;

		if (pos < leaf->hdr.n && entry_cmp(&leaf->entries[pos], x) == 0)
			return false;
		memmove(&leaf->entries[pos + 1], &leaf->entries[pos],
				(leaf->hdr.n - pos) * sizeof(baseline_entry));
		leaf->entries[pos] = *x;
		leaf->hdr.n++;
		if (leaf->hdr.n <= BASELINE_FANOUT)
			return true;

		keep = leaf->hdr.n / 2;
		sibling = new_leaf();
		sibling->hdr.n = leaf->hdr.n - keep;
		memcpy(sibling->entries, &leaf->entries[keep], sibling->hdr.n * sizeof(baseline_entry));
		leaf->hdr.n = keep;
		sibling->next = leaf->next;
		leaf->next = sibling;
		*right = &sibling->hdr;
		*separator = sibling->entries[0];
		return true;
	}
	else
	{
		baseline_inner *inner = (baseline_inner *) node;
		int			i = child_index(inner, x);
		int			n = inner->hdr.n;
		baseline_node *child_right;
		baseline_entry child_separator;
		baseline_inner *sibling;
		int			keep;

		if (!insert_into(inner->children[i], x, &child_right, &child_separator))
			return false;
		if (child_right == NULL)
			return true;

		/* child i split: its right half becomes child i + 1 */
		memmove(&inner->separators[i + 1], &inner->separators[i],
				(n - 1 - i) * sizeof(baseline_entry));
		memmove(&inner->children[i + 2], &inner->children[i + 1],
				(n - 1 - i) * sizeof(baseline_node *));
		inner->separators[i] = child_separator;
		inner->children[i + 1] = child_right;
		inner->hdr.n = ++n;
		if (n <= BASELINE_FANOUT)
			return true;

		/* keep children [0, keep); separators[keep - 1] moves up */
		keep = n / 2;
		sibling = alloc_or_die(sizeof(baseline_inner));
		sibling->hdr.n = n - keep;
		memcpy(sibling->children, &inner->children[keep], (n - keep) * sizeof(baseline_node *));
		memcpy(sibling->separators, &inner->separators[keep],
			   (n - keep - 1) * sizeof(baseline_entry));
		*separator = inner->separators[keep - 1];
		inner->hdr.n = keep;
		*right = &sibling->hdr;
		return true;
	}
}

bool
baseline_insert(baseline_btree *tree, const baseline_entry *entry)
{
	baseline_node *right;
	baseline_entry separator;
	bool		inserted;

	pthread_rwlock_wrlock(&tree->lock);
	inserted = insert_into(tree->root, entry, &right, &separator);
	if (right != NULL)
	{
		/* the root split: the tree grows one level */
		baseline_inner *root = alloc_or_die(sizeof(baseline_inner));

		root->hdr.n = 2;
		root->children[0] = tree->root;
		root->children[1] = right;
		root->separators[0] = separator;
		tree->root = &root->hdr;
	}
	pthread_rwlock_unlock(&tree->lock);
	return inserted;
}

bool
baseline_delete(baseline_btree *tree, const baseline_entry *entry)
{
	baseline_leaf *leaf;
	int			pos;
	bool		found;

	pthread_rwlock_wrlock(&tree->lock);
	leaf = find_leaf(tree, entry);
	pos = leaf_lower_bound(leaf, entry);
	found = pos < leaf->hdr.n && entry_cmp(&leaf->entries[pos], entry) == 0;
	if (found)
	{
		memmove(&leaf->entries[pos], &leaf->entries[pos + 1],
				(leaf->hdr.n - pos - 1) * sizeof(baseline_entry));
		leaf->hdr.n--;
	}
	pthread_rwlock_unlock(&tree->lock);
	return found;
}

/*
 * The entries >= from in order, up to limit of them, copied to out (or only
 * counted while their key is from->key, if out is NULL).  Caller holds the
 * lock.
 */
static int
collect_from(baseline_btree *tree, const baseline_entry *from, int limit, baseline_entry *out)
{
	baseline_leaf *leaf = find_leaf(tree, from);
	int			pos = leaf_lower_bound(leaf, from);
	int			n = 0;

	/* entries of later leaves are all >= from: walk the chain from here */
	for (; leaf != NULL && n < limit; leaf = leaf->next, pos = 0)
	{
		for (; pos < leaf->hdr.n && n < limit; pos++)
		{
			if (out == NULL && leaf->entries[pos].key != from->key)
				return n;
			if (out != NULL)
				out[n] = leaf->entries[pos];
			n++;
		}
	}
	return n;
}

long
baseline_count_key(baseline_btree *tree, uint64_t key)
{
	baseline_entry from = {key, 0};
	long		n;

	pthread_rwlock_rdlock(&tree->lock);
	n = collect_from(tree, &from, INT_MAX, NULL);
	pthread_rwlock_unlock(&tree->lock);
	return n;
}

int
baseline_scan(baseline_btree *tree, const baseline_entry *from, int limit, baseline_entry *out)
{
	int			n;

	pthread_rwlock_rdlock(&tree->lock);
	n = collect_from(tree, from, limit, out);
	pthread_rwlock_unlock(&tree->lock);
	return n;
}
