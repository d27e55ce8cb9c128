/*
 * fbr_search.c
 *	  Lock-free reads: window search, the leaf lookup of delete, and the
 *	  best-first KNN iterator (README: "Readers").
 */
#include "fbr_internal.h"

#include <stdlib.h>

/* ---------- a small open-addressing set of items ---------- */

/* Items whose coordinates past dims are 0, so that equal ones are equal bytes. */
typedef struct item_set
{
	fbr_item   *slot;
	bool	   *used;
	size_t		cap;			/* power of two */
	size_t		n;
	int			dims;
} item_set;

/* The hash of the words that mean something: a 2-D entry's 40 bytes, not all 72. */
static uint64_t
item_hash(const fbr_item *it, int dims)
{
	uint64_t	words[FBR_SLOT_WORDS(FBR_MAX_DIMS)];

	memcpy(words, it->box.min, dims * sizeof(double));
	memcpy(words + dims, it->box.max, dims * sizeof(double));
	words[2 * dims] = it->payload;
	return pm_fnv1a64(words, FBR_SLOT_WORDS(dims) * sizeof(uint64_t));
}

/* Place it in a set that has room and does not hold it. */
static void
item_set_place(item_set *s, const fbr_item *it)
{
	size_t		i;

	for (i = item_hash(it, s->dims) & (s->cap - 1); s->used[i]; i = (i + 1) & (s->cap - 1))
		;
	s->used[i] = true;
	s->slot[i] = *it;
	s->n++;
}

static bool
item_set_grow(item_set *s)
{
	item_set	bigger = {0};

	bigger.dims = s->dims;
	bigger.cap = s->cap ? s->cap * 2 : 64;
	bigger.slot = malloc(bigger.cap * sizeof(fbr_item));
	bigger.used = calloc(bigger.cap, sizeof(bool));
	if (bigger.slot == NULL || bigger.used == NULL)
	{
		free(bigger.slot);
		free(bigger.used);
		return false;
	}
	for (size_t i = 0; i < s->cap; i++)
		if (s->used[i])
			item_set_place(&bigger, &s->slot[i]);
	free(s->slot);
	free(s->used);
	*s = bigger;
	return true;
}

/* 1: added; 0: it was there already; -1: out of memory (the set is unchanged). */
static int
item_set_add(item_set *s, const fbr_item *it)
{
	if (s->cap > 0)
		for (size_t i = item_hash(it, s->dims) & (s->cap - 1); s->used[i]; i = (i + 1) & (s->cap - 1))
			if (memcmp(&s->slot[i], it, sizeof(*it)) == 0)
				return 0;
	if ((s->n + 1) * 2 > s->cap && !item_set_grow(s))
		return -1;
	item_set_place(s, it);
	return 1;
}

static void
item_set_free(item_set *s)
{
	free(s->slot);
	free(s->used);
}

/* ---------- results ---------- */

/*
 * Only the first dims coordinates of a result are written (a 2-D result
 * copies 40 bytes, not the 72 of an item).  New room is zeroed, so the rest
 * reads 0 unless the caller put something there.
 */
bool
fbr_results_add(fbr_results *r, const fbr_item *it, int dims)
{
	if (r->n == r->cap)
	{
		size_t		cap = r->cap ? r->cap * 2 : 256;
		fbr_item   *items = realloc(r->items, cap * sizeof(fbr_item));

		if (items == NULL)
			return false;
		memset(items + r->cap, 0, (cap - r->cap) * sizeof(fbr_item));
		r->items = items;
		r->cap = cap;
	}
	fbr_item_copy(&r->items[r->n++], it, dims);
	return true;
}

void
fbr_results_free(fbr_results *r)
{
	free(r->items);
	memset(r, 0, sizeof(*r));
}

/* ---------- window search and the leaf lookup of delete ---------- */

/*
 * Both are one depth-first walk (the paper's Alg. 3 with re-validation,
 * digest GAP-5; README: "Readers").  The window search walks every child
 * its consistent function accepts and appends the leaf matches; the lookup
 * of delete walks the children whose box contains the entry's and stops at
 * the first leaf holding it.
 */
typedef struct walk
{
	fbr_tree   *t;
	fbr_consistent_fn consistent;	/* search: the test and the results */
	void	   *arg;
	fbr_results *out;
	bool		may_dup;		/* a node was read twice or mid-split/merge */
	bool		oom;
	const fbr_item *want;		/* lookup: the entry, and the path to its leaf */
	uint64_t   *path;
	int			depth;			/* the leaf's level once found, else -1 */
} walk;

/*
 * The children the walk of an inner node has walked, each with the word
 * its walk ended with.  A child beyond the cap is not recorded: it is
 * walked again after every re-read of its parent.
 */
typedef struct walked
{
	int			n;
	uint64_t	off[4 * FBR_CAP];
	uint64_t	meta[4 * FBR_CAP];
} walked;

static int
walked_find(const walked *d, uint64_t child)
{
	for (int i = 0; i < d->n; i++)
		if (d->off[i] == child)
			return i;
	return -1;
}

/* The leaf's matches (search), or whether it holds the entry (lookup). */
static void
walk_leaf(walk *w, const fbr_item *items, int count, int level)
{
	if (w->want != NULL)
	{
		for (int i = 0; i < count; i++)
			if (fbr_item_equal(&items[i], w->want, w->t->dims))
			{
				w->depth = level;
				return;
			}
		return;
	}
	for (int i = 0; i < count; i++)
		if (w->consistent(w->arg, &items[i].box, true) && !fbr_results_add(w->out, &items[i], w->t->dims))
			w->oom = true;
}

/* Unchanged since its walk ended with word meta: the same word, and not dead. */
static bool
walked_unchanged(const walk *w, uint64_t child, uint64_t meta)
{
	const fbr_node *c = fbr_node_at(w->t, child);

	return pm_load(&c->meta) == meta && pm_load(&c->lock) != FBR_DEAD;
}

/*
 * Walk a node; returns the word its walk ended with.  An inner node's word
 * is read again after its children: if it changed (a child split or merged
 * meanwhile, or the node itself split), the node is read again and the
 * accepted children are walked that are new, or changed since their walk
 * ended (another word: a merge's receiver took in the victim's children, a
 * parent a split's sibling; or dead), until the word stays put.  A split
 * commits the parent (step 4) before shrinking the child (step 6), so a
 * walk that saw the child shrunk finds the sibling here.  A dead node's own
 * word is frozen: its walk ends, and its parent, whose word the unlink
 * changed (or which is dead too, up to the root pointer), takes over.  The
 * first read holds each child once, so nothing is looked up in `done`
 * then: a walk without concurrent change costs what it did before.
 */
static uint64_t
walk_node(walk *w, uint64_t off, int level)
{
	fbr_node   *n = fbr_node_at(w->t, off);
	fbr_item	items[FBR_CAP];
	walked		done;
	const fbr_item *want = w->want;
	int			count;
	uint64_t	m = fbr_read_node(w->t, n, items, NULL, &count);

	if (w->out != NULL)
		w->out->nodes_visited++;
	if (fbr_version(m) == 0)
		w->may_dup = true;
	if (w->path != NULL)
		w->path[level] = off;
	if (fbr_is_leaf(m))
	{
		walk_leaf(w, items, count, level);
		return m;
	}
	done.n = 0;
	for (bool reread = false;; reread = true)
	{
		for (int i = 0; i < count; i++)
		{
			uint64_t	child = items[i].payload;
			int			k = reread ? walked_find(&done, child) : -1;
			uint64_t	end;

			if (!(want != NULL ? fbr_box_contains(&items[i].box, &want->box, w->t->dims) :
				  w->consistent(w->arg, &items[i].box, false)) ||
				(k >= 0 && walked_unchanged(w, child, done.meta[k])))
				continue;
			end = walk_node(w, child, level + 1);
			if (w->depth >= 0)
				return m;
			if (k >= 0)
				done.meta[k] = end;
			else if (done.n < 4 * FBR_CAP)
			{
				done.off[done.n] = child;
				done.meta[done.n++] = end;
			}
		}
		if (pm_load(&n->meta) == m)
			return m;
		w->may_dup = true;
		m = fbr_read_node(w->t, n, items, NULL, &count);
	}
}

/*
 * From the root.  The root's parent is the meta block: after a root split
 * or collapse meanwhile, the new root is walked too.
 */
static void
walk_tree(walk *w)
{
	uint64_t	root = fbr_root(w->t);

	walk_node(w, root, 0);
	while (w->depth < 0 && fbr_root(w->t) != root)
	{
		root = fbr_root(w->t);
		w->may_dup = true;
		walk_node(w, root, 0);
	}
}

static int
item_cmp(const void *a, const void *b)
{
	const fbr_item *x = a,
			   *y = b;

	if (x->payload != y->payload)
		return x->payload < y->payload ? -1 : 1;
	return memcmp(&x->box, &y->box, sizeof(fbr_box));
}

/*
 * A node is walked twice only after a re-read or while it has version 0;
 * only then are the results sorted and deduplicated.
 */
pm_errcode
fbr_search(fbr_tree *t, fbr_consistent_fn consistent, void *arg, fbr_results *out,
		   pm_error *err)
{
	walk		w = {t, consistent, arg, out, false, false, NULL, NULL, -1};
	size_t		first = out->n;

	out->nodes_visited = 0;
	pm_epoch_enter(t->epoch);
	walk_tree(&w);
	pm_epoch_exit(t->epoch);
	if (w.oom)
		return pm_error_set(err, PM_ERR_NOMEM, 0, "pool file \"%s\": out of memory for search results",
							t->pool->path);
	if (w.may_dup && out->n - first > 1)
	{
		size_t		d = first + 1;

		/* item_cmp compares bytes */
		for (size_t i = first; i < out->n; i++)
			fbr_box_clear_tail(&out->items[i].box, t->dims);
		qsort(out->items + first, out->n - first, sizeof(fbr_item), item_cmp);
		for (size_t i = first + 1; i < out->n; i++)
			if (item_cmp(&out->items[i], &out->items[d - 1]) != 0)
				out->items[d++] = out->items[i];
		out->n = d;
	}
	return PM_OK;
}

/* The caller is in an epoch. */
bool
fbr_find_leaf(fbr_tree *t, const fbr_item *item, uint64_t *path, int *depth)
{
	walk		w = {t, NULL, NULL, NULL, false, false, item, path, -1};

	walk_tree(&w);
	*depth = w.depth;
	return w.depth >= 0;
}

/* ---------- KNN: best-first ---------- */

/*
 * An element of the queue: small, so that the heap moves little (a leaf
 * entry waits in the entry store, whose slots are reused once popped).
 */
typedef struct knn_elem
{
	double		dist;
	uint64_t	ref;			/* node: its offset; leaf entry: its slot in the entry store */
	int			parent;			/* node: its parent's visit record; -1: the root */
	bool		is_node;
} knn_elem;

/* A read of an inner node: its word as last read, and who its parent was. */
typedef struct knn_visit
{
	uint64_t	off;
	uint64_t	meta;
	int			parent;
} knn_visit;

/* Node offset (never 0) -> the metadata word it had when last read. */
typedef struct node_map
{
	uint64_t   *off;
	uint64_t   *meta;
	size_t		cap;			/* power of two */
	size_t		n;
} node_map;

static size_t
node_map_find(const node_map *m, uint64_t off)
{
	size_t		i;

	for (i = (size_t) (off * UINT64_C(0x9e3779b97f4a7c15) >> 32) & (m->cap - 1);
		 m->off[i] != 0 && m->off[i] != off; i = (i + 1) & (m->cap - 1))
		;
	return i;
}

/* False: the node was never read. */
static bool
node_map_get(const node_map *m, uint64_t off, uint64_t *meta)
{
	size_t		i;

	if (m->cap == 0)
		return false;
	i = node_map_find(m, off);
	if (m->off[i] == 0)
		return false;
	*meta = m->meta[i];
	return true;
}

/* False: out of memory. */
static bool
node_map_put(node_map *m, uint64_t off, uint64_t meta)
{
	size_t		i;

	if ((m->n + 1) * 2 > m->cap)
	{
		node_map	bigger = {0};

		bigger.cap = m->cap ? m->cap * 2 : 64;
		bigger.off = calloc(bigger.cap, sizeof(uint64_t));
		bigger.meta = malloc(bigger.cap * sizeof(uint64_t));
		if (bigger.off == NULL || bigger.meta == NULL)
		{
			free(bigger.off);
			free(bigger.meta);
			return false;
		}
		for (size_t j = 0; j < m->cap; j++)
			if (m->off[j] != 0)
			{
				i = node_map_find(&bigger, m->off[j]);
				bigger.off[i] = m->off[j];
				bigger.meta[i] = m->meta[j];
				bigger.n++;
			}
		free(m->off);
		free(m->meta);
		*m = bigger;
	}
	i = node_map_find(m, off);
	if (m->off[i] == 0)
	{
		m->off[i] = off;
		m->n++;
	}
	m->meta[i] = meta;
	return true;
}

static void
node_map_free(node_map *m)
{
	free(m->off);
	free(m->meta);
}

struct fbr_knn
{
	fbr_tree   *t;
	fbr_consistent_fn consistent;
	void	   *carg;
	fbr_distance_fn distance;
	void	   *darg;
	knn_elem   *heap;
	size_t		n;
	size_t		cap;
	fbr_item   *entries;		/* leaf entries queued; a free slot's payload links the next one */
	size_t		nentries;
	size_t		entries_cap;
	uint64_t	free_entry;		/* first free slot + 1, or 0 */
	knn_visit  *visit;
	size_t		nvisit;
	size_t		visit_cap;
	node_map	read;			/* every node read, with its word as last read */
	item_set	returned;
	uint64_t	root_seen;		/* the root pointer as last read */
	double		frontier;		/* key of the last element popped: nothing is pushed below it */
	pm_error	failure;		/* code PM_OK until something failed; then sticky */
};

/* Out of memory: the scan cannot go on (its queue would miss something). */
static void
knn_fail(fbr_knn *k, const char *what)
{
	if (k->failure.code == PM_OK)
		pm_error_set(&k->failure, PM_ERR_NOMEM, 0,
					 "pool file \"%s\": out of memory for the %s of a nearest-neighbour scan",
					 k->t->pool->path, what);
}

static void
heap_push(fbr_knn *k, const knn_elem *e)
{
	size_t		i;

	if (k->n == k->cap)
	{
		size_t		cap = k->cap * 2;
		knn_elem   *h = realloc(k->heap, cap * sizeof(knn_elem));

		if (h == NULL)
		{
			knn_fail(k, "queue");
			return;
		}
		k->heap = h;
		k->cap = cap;
	}
	/* ties: leaf entries first, so a result is not held back by a node */
	for (i = k->n++; i > 0; i = (i - 1) / 2)
	{
		knn_elem   *p = &k->heap[(i - 1) / 2];

		if (p->dist < e->dist || (p->dist == e->dist && (!p->is_node || e->is_node)))
			break;
		k->heap[i] = *p;
	}
	k->heap[i] = *e;
}

static knn_elem
heap_pop(fbr_knn *k)
{
	knn_elem	top = k->heap[0];
	knn_elem	last = k->heap[--k->n];
	size_t		i = 0;

	for (;;)
	{
		size_t		c = 2 * i + 1;

		if (c >= k->n)
			break;
		if (c + 1 < k->n && (k->heap[c + 1].dist < k->heap[c].dist ||
							 (k->heap[c + 1].dist == k->heap[c].dist && !k->heap[c + 1].is_node && k->heap[c].is_node)))
			c++;
		if (last.dist < k->heap[c].dist ||
			(last.dist == k->heap[c].dist && (!last.is_node || k->heap[c].is_node)))
			break;
		k->heap[i] = k->heap[c];
		i = c;
	}
	k->heap[i] = last;
	return top;
}

/*
 * A node's key is the distance to its box, raised to the frontier (the key
 * last popped).  Nothing enters the queue below the frontier, so keys pop in
 * non-decreasing order whatever the tree does meanwhile: a child read while
 * an insert enlarges its box, a sibling a split created, a node found again
 * by re-validation, a new root, may all lie closer than what was already
 * returned, but anything there that the scan still owes its caller (an
 * entry committed before the scan began) is at least as far as the
 * frontier (README: "KNN").
 */
static void
push_node(fbr_knn *k, const fbr_item *entry, int parent)
{
	knn_elem	e;

	if (k->consistent != NULL && !k->consistent(k->carg, &entry->box, false))
		return;
	e.dist = k->distance(k->darg, &entry->box, false);
	if (!(e.dist >= k->frontier))
		e.dist = k->frontier;
	e.ref = entry->payload;
	e.parent = parent;
	e.is_node = true;
	heap_push(k, &e);
}

static void
push_root(fbr_knn *k)
{
	knn_elem	e = {k->frontier, fbr_root(k->t), -1, true};

	k->root_seen = e.ref;
	heap_push(k, &e);
}

/* Queue a leaf entry at distance dist (0 past dims: the set of entries returned compares bytes). */
static void
push_entry(fbr_knn *k, const fbr_item *entry, double dist)
{
	knn_elem	e = {dist, 0, -1, false};

	if (k->free_entry != 0)
	{
		e.ref = k->free_entry - 1;
		k->free_entry = k->entries[e.ref].payload;
	}
	else
	{
		if (k->nentries == k->entries_cap)
		{
			size_t		cap = k->entries_cap ? k->entries_cap * 2 : 256;
			fbr_item   *en = realloc(k->entries, cap * sizeof(fbr_item));

			if (en == NULL)
			{
				knn_fail(k, "queue");
				return;
			}
			/* 0 past dims for good: fbr_item_copy writes only the dims */
			memset(en + k->entries_cap, 0, (cap - k->entries_cap) * sizeof(fbr_item));
			k->entries = en;
			k->entries_cap = cap;
		}
		e.ref = k->nentries++;
	}
	fbr_item_copy(&k->entries[e.ref], entry, k->t->dims);
	heap_push(k, &e);
}

fbr_knn *
fbr_knn_begin(fbr_tree *t, fbr_consistent_fn consistent, void *carg,
			  fbr_distance_fn distance, void *darg, pm_error *err)
{
	fbr_knn    *k = calloc(1, sizeof(fbr_knn));

	if (k != NULL)
	{
		k->cap = 256;
		k->heap = malloc(k->cap * sizeof(knn_elem));
	}
	if (k == NULL || k->heap == NULL)
	{
		free(k);
		pm_error_set(err, PM_ERR_NOMEM, 0, "pool file \"%s\": out of memory for a nearest-neighbour scan",
					 t->pool->path);
		return NULL;
	}
	k->t = t;
	k->returned.dims = t->dims;
	k->consistent = consistent;
	k->carg = carg;
	k->distance = distance;
	k->darg = darg;
	pm_epoch_enter(t->epoch);
	push_root(k);
	return k;
}

static int
add_visit(fbr_knn *k, uint64_t off, uint64_t meta, int parent)
{
	if (k->nvisit == k->visit_cap)
	{
		size_t		cap = k->visit_cap ? k->visit_cap * 2 : 64;
		knn_visit  *v = realloc(k->visit, cap * sizeof(knn_visit));

		if (v == NULL)
		{
			knn_fail(k, "visit records");
			return -1;
		}
		k->visit = v;
		k->visit_cap = cap;
	}
	k->visit[k->nvisit] = (knn_visit) {off, meta, parent};
	return (int) k->nvisit++;
}

/*
 * GAP-5 for a best-first search: after reading a node, its ancestors are
 * checked bottom-up.  An ancestor is unchanged if its word is the one last
 * read and it is not dead: then its children as read are all still
 * reachable through it, and every move out of them since (a split's
 * sibling, a merge's receiver) would have changed it, so the walk ends.
 * Otherwise the ancestor is read again, its children are queued again
 * (nodes whose word did not change since they were read are skipped when
 * popped), and its own parent is checked.  A dead ancestor (a merge's
 * victim, an old root) counts as changed although its word is frozen: its
 * children now live under the receiver (or are the root), whose later
 * changes only the levels above can reveal.  Above the root is the meta
 * block's root pointer.
 */
static void
revalidate(fbr_knn *k, int v)
{
	while (v >= 0)
	{
		knn_visit  *vis = &k->visit[v];
		fbr_node   *n = fbr_node_at(k->t, vis->off);
		fbr_item	items[FBR_CAP];
		int			count;

		if (pm_load(&n->meta) == vis->meta && pm_load(&n->lock) != FBR_DEAD)
			return;
		vis->meta = fbr_read_node(k->t, n, items, NULL, &count);
		if (!node_map_put(&k->read, vis->off, vis->meta))
		{
			knn_fail(k, "set of nodes read");
			return;
		}
		for (int i = 0; i < count; i++)
			push_node(k, &items[i], v);
		v = vis->parent;
	}
	if (fbr_root(k->t) != k->root_seen)
		push_root(k);
}

bool
fbr_knn_next(fbr_knn *k, fbr_item *item, double *distance, pm_error *err)
{
	while (k->n > 0 && k->failure.code == PM_OK)
	{
		knn_elem	e = heap_pop(k);
		fbr_node   *node;
		fbr_item	items[FBR_CAP];
		int			count;
		int			v = -1;
		uint64_t	m;

		/* nothing enters the queue below the frontier (push_node), so keys pop in order */
		pm_assert(e.dist >= k->frontier);
		k->frontier = e.dist;
		if (!e.is_node)
		{
			fbr_item   *entry = &k->entries[e.ref];
			int			added = item_set_add(&k->returned, entry);

			if (added > 0)
			{
				*item = *entry;
				*distance = e.dist;
			}
			entry->payload = k->free_entry;
			k->free_entry = e.ref + 1;
			if (added < 0)
				knn_fail(k, "set of entries returned");
			if (added <= 0)
				continue;
			return true;
		}
		/* read already, and unchanged since: everything in it is queued */
		node = fbr_node_at(k->t, e.ref);
		if (node_map_get(&k->read, e.ref, &m) && pm_load(&node->meta) == m)
			continue;
		m = fbr_read_node(k->t, node, items, NULL, &count);
		if (!node_map_put(&k->read, e.ref, m))
		{
			knn_fail(k, "set of nodes read");
			break;
		}
		if (!fbr_is_leaf(m))
			v = add_visit(k, e.ref, m, e.parent);
		revalidate(k, e.parent);
		for (int i = 0; i < count; i++)
		{
			if (!fbr_is_leaf(m))
				push_node(k, &items[i], v);
			else if (k->consistent == NULL || k->consistent(k->carg, &items[i].box, true))
			{
				double		dist = k->distance(k->darg, &items[i].box, true);

				/*
				 * Closer than the frontier: committed after the scan began (README:
				 * "KNN"); yielding it now would break the order.
				 */
				if (dist >= k->frontier)
					push_entry(k, &items[i], dist);
			}
		}
	}
	if (k->failure.code != PM_OK)
	{
		if (err != NULL)
			*err = k->failure;
		return false;
	}
	if (err != NULL)
	{
		err->code = PM_OK;
		err->sys_errno = 0;
		err->msg[0] = '\0';
	}
	return false;
}

void
fbr_knn_end(fbr_knn *k)
{
	pm_epoch_exit(k->t->epoch);
	node_map_free(&k->read);
	item_set_free(&k->returned);
	free(k->visit);
	free(k->entries);
	free(k->heap);
	free(k);
}
