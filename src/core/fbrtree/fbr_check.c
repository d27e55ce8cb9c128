/*
 * fbr_check.c
 *	  Structure checker and statistics.
 */
#include "fbr_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct check_state
{
	fbr_tree   *t;
	bool		checking;
	uint64_t	leaf_depth;		/* 0: no leaf seen yet */
	uint64_t	reached;		/* nodes walked */
	fbr_stats	st;
	uint64_t   *seen;
	size_t		nseen,
				seen_cap;
	char		why[300];
	bool		failed;
} check_state;

static void fail(check_state *cs, const char *fmt,...) __attribute__((format(printf, 2, 3)));

static void
fail(check_state *cs, const char *fmt,...)
{
	va_list		ap;

	if (cs->failed)
		return;
	cs->failed = true;
	va_start(ap, fmt);
	vsnprintf(cs->why, sizeof(cs->why), fmt, ap);
	va_end(ap);
}

static bool
box_valid(const fbr_box *b, int dims)
{
	for (int d = 0; d < dims; d++)
		if (!(b->min[d] <= b->max[d]))
			return false;
	return true;
}

const char *
fbr_box_text(char *buf, size_t len, const fbr_box *b, int dims)
{
	size_t		used = 0;

	for (int d = 0; d < 2 * dims && used < len; d++)
		used += snprintf(buf + used, len - used, "%s%g", d == 0 ? "(" : d == dims ? ", " : " ",
						 d < dims ? b->min[d] : b->max[d - dims]);
	if (used < len)
		snprintf(buf + used, len - used, ")");
	return buf;
}

static void
walk_node(check_state *cs, uint64_t off, uint64_t depth, const fbr_box *bound)
{
	fbr_node   *n;
	uint64_t	m;
	int			count;

	if (cs->failed)
		return;
	/* whether checking or counting, nothing outside the pool is read and the walk ends */
	if (!fbr_node_offset_ok(cs->t, off))
		fail(cs, "offset %llu is not a node block", (unsigned long long) off);
	else if (depth > FBR_MAX_DEPTH || ++cs->reached > fbr_reach_limit(cs->t))
		fail(cs, "node %llu is reached through a cycle of child offsets", (unsigned long long) off);
	if (cs->failed)
		return;
	n = fbr_node_at(cs->t, off);
	m = pm_load(&n->meta);
	count = fbr_count(m);
	if (cs->checking)
	{
		if (cs->nseen == cs->seen_cap)
		{
			size_t		cap = cs->seen_cap ? cs->seen_cap * 2 : 1024;
			uint64_t   *s = realloc(cs->seen, cap * sizeof(uint64_t));

			if (s == NULL)
			{
				fail(cs, "out of memory");
				return;
			}
			cs->seen = s;
			cs->seen_cap = cap;
		}
		cs->seen[cs->nseen++] = off;
		if (fbr_version(m) == 0)
			fail(cs, "node %llu has version 0 (split or merge unfinished)", (unsigned long long) off);
		else if (pm_load(&n->lock) != FBR_UNLOCKED)
			fail(cs, "node %llu is locked (word %llu)", (unsigned long long) off,
				 (unsigned long long) pm_load(&n->lock));
		else if (!fbr_is_leaf(m) && count == 0)
			fail(cs, "inner node %llu has no entries", (unsigned long long) off);
		else if ((fbr_bits(m) & ~fbr_slots_mask(cs->t)) != 0)
			fail(cs, "node %llu has bits set beyond its %d slots", (unsigned long long) off, cs->t->cap);
		if (cs->failed)
			return;
	}
	if (fbr_is_leaf(m))
	{
		cs->st.leaves++;
		cs->st.entries += count;
		if (cs->leaf_depth == 0)
			cs->leaf_depth = depth;
		else if (cs->checking && cs->leaf_depth != depth)
			fail(cs, "leaf %llu at depth %llu, another at depth %llu", (unsigned long long) off,
				 (unsigned long long) depth, (unsigned long long) cs->leaf_depth);
	}
	else
		cs->st.inner_nodes++;
	for (uint64_t bits = fbr_bits(m) & fbr_slots_mask(cs->t); bits && !cs->failed; bits &= bits - 1)
	{
		int			s = __builtin_ctzll(bits);
		int			dims = cs->t->dims;
		fbr_item	e;
		char		eb[200],
					bb[200];

		fbr_slot_read(n, s, dims, &e);
		if (cs->checking && !box_valid(&e.box, dims))
			fail(cs, "node %llu slot %d has an inverted box", (unsigned long long) off, s);
		else if (cs->checking && bound != NULL && !fbr_box_contains(bound, &e.box, dims))
			fail(cs, "node %llu slot %d: box %s is outside its parent entry's %s",
				 (unsigned long long) off, s, fbr_box_text(eb, sizeof(eb), &e.box, dims),
				 fbr_box_text(bb, sizeof(bb), bound, dims));
		else if (!fbr_is_leaf(m))
		{
			if (!fbr_node_offset_ok(cs->t, e.payload))
				fail(cs, "node %llu slot %d: child offset %llu is not a node block",
					 (unsigned long long) off, s, (unsigned long long) e.payload);
			else
				walk_node(cs, e.payload, depth + 1, &e.box);
		}
	}
}

static int
u64_cmp(const void *a, const void *b)
{
	uint64_t	x = *(const uint64_t *) a,
				y = *(const uint64_t *) b;

	return x < y ? -1 : x > y;
}

static void
run(fbr_tree *t, check_state *cs)
{
	fbr_meta   *meta;

	cs->t = t;
	if (!fbr_meta_block_ok(t) || (meta = fbr_meta_block(t))->magic != FBR_META_MAGIC)
	{
		fail(cs, "no fbrtree meta block");
		return;
	}
	if (cs->checking && fbr_meta_dims(meta) == 0)
	{
		fail(cs, "meta block of format %llu with dims field %llu", (unsigned long long) meta->format,
			 (unsigned long long) meta->dims);
		return;
	}
	if (cs->checking && (fbr_meta_dims(meta) != t->dims || fbr_cap_for(t->dims) != t->cap))
	{
		fail(cs, "the handle has %d dims and %d entries per node, the meta block says %d dims",
			 t->dims, t->cap, fbr_meta_dims(meta));
		return;
	}
	walk_node(cs, fbr_root(t), 1, NULL);
	cs->st.height = cs->leaf_depth;
	cs->st.pm_bytes = (cs->st.leaves + cs->st.inner_nodes) * FBR_NODE_SIZE +
		pm_alloc_class_size(sizeof(fbr_meta));
	cs->st.splits = pm_load(&meta->splits);
	cs->st.root_splits = pm_load(&meta->root_splits);
	cs->st.merges = pm_load(&meta->merges);
	cs->st.root_collapses = pm_load(&meta->root_collapses);
}

const char *
fbr_check(fbr_tree *t, fbr_stats *st)
{
	static char why[300];
	check_state cs = {0};

	cs.checking = true;
	run(t, &cs);
	if (!cs.failed)
	{
		qsort(cs.seen, cs.nseen, sizeof(uint64_t), u64_cmp);
		for (size_t i = 1; i < cs.nseen && !cs.failed; i++)
			if (cs.seen[i] == cs.seen[i - 1])
				fail(&cs, "node %llu is reached twice", (unsigned long long) cs.seen[i]);
	}
	free(cs.seen);
	if (st != NULL)
		*st = cs.st;
	if (!cs.failed)
		return NULL;
	snprintf(why, sizeof(why), "%s", cs.why);
	return why;
}

void
fbr_get_stats(fbr_tree *t, fbr_stats *st)
{
	check_state cs = {0};

	run(t, &cs);
	*st = cs.st;
}
