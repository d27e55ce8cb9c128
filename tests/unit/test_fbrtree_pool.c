/*
 * test_fbrtree_pool.c
 *	  Several trees in one pool, as the PostgreSQL glue keeps them (a spatial
 *	  tree at pool root 0, a host block at root 1, a side tree at root 2),
 *	  and a tree of 4-D boxes at root 4: the trees work side by side, and
 *	  after a simulated crash that leaked a block, recovering each tree and
 *	  rebuilding the allocator from all of them keeps every node of each, the
 *	  host's block, and frees the leak.  A child offset that leaves the pool
 *	  or makes a cycle is reported as corruption.
 *
 *	  Then the meta block's formats: a 2-D tree is format 1 with a zero
 *	  dims field and 40-byte slots (xmin, ymin, xmax, ymax, payload), the
 *	  layout of builds that know only 2-D trees, and such a tree written by
 *	  hand reads as 2-D; a 3-D tree is format 2 with dims 3; fbr_format
 *	  refuses 1 and 5 dims; a meta block whose format and dims field do not
 *	  agree is refused by fbr_check and fbr_recover.
 */
#include "fbr_harness.h"
#include "fbr_internal.h"

#define ROOT_SIDE	2
#define ROOT_HOST	1
#define ROOT_4D		4			/* root 3 names the operation log (tips/olog.h) */
#define ROOT_OLD	4

static bool
everything(void *arg, const fbr_box *box, bool is_leaf)
{
	(void) arg;
	(void) box;
	(void) is_leaf;
	return true;
}

/*
 * A damaged pool: the root's first child offset replaced by bad; recovery
 * must report corruption, not follow it.  The offset is put back.
 */
static bool
recovery_refuses_child(fbr_tree *t, uint64_t bad)
{
	fbr_node   *root = fbr_node_at(t, fbr_root(t));
	int			s = __builtin_ctzll(fbr_bits(root->meta));
	uint64_t   *payload = &fbr_slot(root, s, t->dims)[2 * t->dims];
	uint64_t	saved = *payload;
	uint64_t	repaired;
	pm_error	err;
	pm_errcode	rc;

	*payload = bad;
	rc = fbr_recover(t, false, &repaired, &err);
	*payload = saved;
	return rc == PM_ERR_CORRUPT;
}

static size_t
count_entries(fbr_tree *t)
{
	fbr_results r = {0};
	pm_error	err;
	size_t		n = 0;

	if (fbr_search(t, everything, NULL, &r, &err) == PM_OK)
		n = r.n;
	fbr_results_free(&r);
	return n;
}

/* ---------- meta block formats ---------- */

/* Format 1: the layout of a 2-D tree, written by hand below. */
typedef struct old_entry
{
	double		xmin,
				ymin,
				xmax,
				ymax;
	uint64_t	payload;
} old_entry;

typedef struct old_node
{
	uint64_t	meta,
				lock,
				aux;
	old_entry	e[50];
} old_node;

typedef struct old_meta
{
	uint64_t	magic,
				format,
				root,
				splits,
				root_splits,
				merges,
				root_collapses,
				pad;
} old_meta;

/* Every entry of t, by payload (payloads are 0..n-1): false if one is missing or repeats. */
static bool
holds_exactly(fbr_tree *t, const fbr_item *want, int n)
{
	fbr_results r = {0};
	pm_error	err;
	bool		ok = fbr_search(t, everything, NULL, &r, &err) == PM_OK && r.n == (size_t) n;

	if (ok && r.n > 1)
		qsort(r.items, r.n, sizeof(fbr_item), payload_cmp);
	for (size_t i = 0; ok && i < r.n; i++)
		ok = item_same(&r.items[i], &want[i], t->dims);
	fbr_results_free(&r);
	return ok;
}

static void
formats(const char *dir, pm_epoch_domain *dom)
{
	char		path[4096];
	fbr_harness h;
	pm_pool    *pool;
	pm_error	err;
	fbr_tree	t;
	fbr_item	want[300];
	uint64_t	seed = 7;
	uint64_t	repaired;
	fbr_stats	st;
	const char *why;
	bool		ok;

	snprintf(path, sizeof(path), "%s/formats", dir);
	pool = fbr_harness_pool(path, PM_MODE_EADR, 1ull << 26);
	fbr_harness_attach(&h, pool, dom, 2);

	tap_ok(fbr_format(pool, 5, 1, &err) == PM_ERR_INVALID && fbr_format(pool, 5, 5, &err) == PM_ERR_INVALID &&
		   pm_pool_root(pool, 5) == 0,
		   "fbr_format refuses 1 and 5 dimensions (%s) and writes nothing", err.msg);

	/* a 2-D tree is format 1: zero dims field, 40-byte slots */
	ok = sizeof(old_node) == FBR_NODE_BYTES && h.tree.dims == 2 && h.tree.cap == 50;
	for (int i = 0; i < 30; i++)
	{
		want[i].box = random_box(&seed, false);
		want[i].payload = (uint64_t) i;
		ok = ok && fbr_insert(&h.tree, &want[i], &err) == PM_OK;
	}
	{
		const old_meta *m = pm_pool_addr(pool, pm_pool_root(pool, FBR_TEST_ROOT));
		const old_node *n = pm_pool_addr(pool, m->root);
		int			matched = 0;

		ok = ok && m->format == 1 && m->pad == 0 && fbr_count(n->meta) == 30;
		for (uint64_t bits = fbr_bits(n->meta); ok && bits; bits &= bits - 1)
		{
			const old_entry *e = &n->e[__builtin_ctzll(bits)];
			const fbr_box *b = &want[e->payload].box;

			matched += e->payload < 30 && e->xmin == b->min[0] && e->ymin == b->min[1] &&
				e->xmax == b->max[0] && e->ymax == b->max[1];
		}
		tap_ok(ok && matched == 30,
			   "a 2-D tree's meta block is format 1 with a zero dims field, and its slots are "
			   "(xmin, ymin, xmax, ymax, payload) at 40 bytes (%d of 30 entries found so)", matched);
	}

	/* a tree written by hand in that layout reads as 2-D, checks, and grows */
	{
		uint64_t	meta_off = pm_alloc_block(&h.tree.pm, sizeof(old_meta), &err);
		uint64_t	node_off = pm_alloc_block(&h.tree.pm, FBR_NODE_SIZE, &err);
		old_meta   *m = pm_pool_addr(pool, meta_off);
		old_node   *n = pm_pool_addr(pool, node_off);

		memset(n, 0, sizeof(*n));
		for (int i = 0; i < 40; i++)
		{
			fbr_box		b = random_box(&seed, true);

			n->e[i] = (old_entry) {b.min[0], b.min[1], b.max[0], b.max[1], (uint64_t) i};
			want[i].box = b;
			want[i].payload = (uint64_t) i;
		}
		n->meta = fbr_make_meta(true, 1, (UINT64_C(1) << 40) - 1);
		*m = (old_meta) {FBR_META_MAGIC, 1, node_off, 0, 0, 0, 0, 0};
		pm_pool_set_root(pool, ROOT_OLD, meta_off);
		fbr_attach(&t, pool, ROOT_OLD, &h.epoch, SPACE_PM, 0);
		why = fbr_check(&t, &st);
		ok = t.dims == 2 && t.cap == 50 && why == NULL && st.entries == 40 && holds_exactly(&t, want, 40);
		for (int i = 40; i < 300 && ok; i++)
		{
			want[i].box = random_box(&seed, true);
			want[i].payload = (uint64_t) i;
			ok = fbr_insert(&t, &want[i], &err) == PM_OK;
		}
		why = fbr_check(&t, &st);
		tap_ok(ok && why == NULL && st.leaves > 1 && holds_exactly(&t, want, 300) &&
			   fbr_recover(&t, false, &repaired, &err) == PM_OK,
			   "a format-1 tree written in that layout by hand attaches as 2-D with 50 entries per "
			   "node, checks (%s), holds its 40 entries, takes 260 more (%llu leaves) and recovers",
			   why ? why : "ok", (unsigned long long) st.leaves);
	}

	/* 3-D and 4-D: format 2, the dims in the meta block, 36 and 28 entries per node */
	{
		fbr_tree	t3,
					t4;
		const fbr_meta *m3;
		const fbr_meta *m4;
		fbr_stats	st36,
					st37;

		ok = fbr_format(pool, 6, 3, &err) == PM_OK && fbr_format(pool, 7, 4, &err) == PM_OK;
		fbr_attach(&t3, pool, 6, &h.epoch, SPACE_PM, 0);
		fbr_attach(&t4, pool, 7, &h.epoch, SPACE_PM, 0);
		m3 = pm_pool_addr(pool, pm_pool_root(pool, 6));
		m4 = pm_pool_addr(pool, pm_pool_root(pool, 7));
		for (int i = 0; i < 37 && ok; i++)
		{
			want[i].box = random_box_nd(&seed, false, 3);
			want[i].payload = (uint64_t) i;
			ok = fbr_insert(&t3, &want[i], &err) == PM_OK;
			if (i == 35)
				fbr_get_stats(&t3, &st36);
		}
		fbr_get_stats(&t3, &st37);
		tap_ok(ok && m3->format == 2 && m3->dims == 3 && m4->format == 2 && m4->dims == 4 &&
			   t3.dims == 3 && t3.cap == 36 && t4.dims == 4 && t4.cap == 28 &&
			   st36.leaves == 1 && st37.leaves == 2 && holds_exactly(&t3, want, 37),
			   "3-D and 4-D trees: format 2 with dims 3 and 4, 36 and 28 entries per node (a 3-D "
			   "leaf splits at the 37th entry)");

		/* a node with a bit past its slots (they would reach past its block) is damage */
		{
			fbr_node   *root = fbr_node_at(&t3, fbr_root(&t3));
			uint64_t	saved = root->meta;
			pm_errcode	rc;

			root->meta |= UINT64_C(1) << 36;
			why = fbr_check(&t3, NULL);
			rc = fbr_recover(&t3, false, &repaired, &err);
			root->meta = saved;
			tap_ok(why != NULL && rc == PM_ERR_CORRUPT && fbr_check(&t3, NULL) == NULL,
				   "a 3-D node with bit 36 set is damage to fbr_check (%s) and fbr_recover",
				   why ? why : "passed");
		}
	}

	/* a meta block whose format and dims field disagree, or of a later format, is refused */
	{
		fbr_meta   *m = pm_pool_addr(pool, pm_pool_root(pool, 6));
		static const uint64_t bad[][2] = {{2, 2}, {2, 5}, {2, 0}, {1, 3}, {3, 3}};
		int			refused = 0;

		fbr_attach(&t, pool, 6, &h.epoch, SPACE_PM, 0);
		for (int i = 0; i < 5; i++)
		{
			pm_errcode	rc;

			m->format = bad[i][0];
			m->dims = bad[i][1];
			why = fbr_check(&t, NULL);
			rc = fbr_recover(&t, false, &repaired, &err);
			refused += why != NULL && rc == (bad[i][0] == 3 ? PM_ERR_VERSION : PM_ERR_CORRUPT);
		}
		m->format = 2;
		m->dims = 3;
		tap_ok(refused == 5 && fbr_check(&t, NULL) == NULL && fbr_recover(&t, false, &repaired, &err) == PM_OK,
			   "fbr_check and fbr_recover refuse a meta block of format 2 with dims 2, 5 or 0, of "
			   "format 1 with dims 3, and of format 3 (%d of 5); put back, it checks", refused);
	}
	pm_epoch_drain(&h.epoch);
	pm_epoch_unregister(&h.epoch);
	pm_pool_close(pool);
}

int
main(void)
{
	char	   *dir = tap_tmpdir("fbr_pool");
	char		path[4096];
	pm_epoch_domain *dom = harness_domain();
	fbr_harness h;
	fbr_tree	side;
	fbr_tree	t4;
	pm_pool    *pool;
	pm_error	err;
	uint64_t	seed = 42;
	uint64_t	host;
	uint64_t	leak;
	uint64_t	repaired;
	uint64_t	blocks = 0;
	int			n_spatial = 40000 / FBR_SCALE_DOWN;
	int			n_side = 12000 / FBR_SCALE_DOWN;
	int			n_4d = 20000 / FBR_SCALE_DOWN;
	int			deleted = 0,
				deleted_4d = 0;
	static const int roots[] = {FBR_TEST_ROOT, ROOT_SIDE, ROOT_4D};
	fbr_stats	st_spatial;
	fbr_stats	st_side;
	fbr_stats	st_4d;
	const char *why_spatial;
	const char *why_side;
	const char *why_4d;

	tap_plan(12);
	snprintf(path, sizeof(path), "%s/pool", dir);
	pool = fbr_harness_pool(path, PM_MODE_EADR, 1ull << 30);
	fbr_harness_attach(&h, pool, dom, 1);
	tap_ok(fbr_format(pool, ROOT_SIDE, 2, &err) == PM_OK && fbr_format(pool, ROOT_4D, 4, &err) == PM_OK,
		   "a second tree formats at pool root %d, a 4-D one at root %d", ROOT_SIDE, ROOT_4D);
	fbr_attach(&side, pool, ROOT_SIDE, &h.epoch, SPACE_PM, 0);
	fbr_attach(&t4, pool, ROOT_4D, &h.epoch, SPACE_PM, 0);
	host = pm_alloc_block(&h.tree.pm, 4096, &err);
	pm_pool_set_root(pool, ROOT_HOST, host);

	for (int i = 0; i < n_spatial; i++)
	{
		fbr_item	it;

		it.box.min[0] = grid(&seed, 0, 1000);
		it.box.min[1] = grid(&seed, 0, 1000);
		it.box.max[0] = it.box.min[0] + grid(&seed, 0, 4);
		it.box.max[1] = it.box.min[1] + grid(&seed, 0, 4);
		it.payload = i;
		if (fbr_insert(&h.tree, &it, &err) != PM_OK)
			break;
	}
	for (int i = 0; i < n_side; i++)
	{
		fbr_item	it = {box2(i / 100, i % 100, i / 100, i % 100), i};

		if (fbr_insert(&side, &it, &err) != PM_OK)
			break;
	}
	/* empty most of the side tree: its nodes merge while the spatial tree is untouched */
	for (int i = 0; i < n_side; i++)
	{
		fbr_item	it = {box2(i / 100, i % 100, i / 100, i % 100), i};
		bool		found;

		if (i % 5 != 0 && fbr_delete(&side, &it, &found, &err) == PM_OK && found)
			deleted++;
	}
	/* the 4-D tree grows, then loses half (nodes merge) */
	{
		uint64_t	s4 = 4;
		fbr_item   *all4 = malloc(sizeof(fbr_item) * n_4d);

		for (int i = 0; i < n_4d; i++)
		{
			all4[i].box = random_box_nd(&s4, true, 4);
			all4[i].payload = (uint64_t) i;
			if (fbr_insert(&t4, &all4[i], &err) != PM_OK)
				break;
		}
		for (int i = 0; i < n_4d; i += 2)
		{
			bool		found;

			if (fbr_delete(&t4, &all4[i], &found, &err) == PM_OK && found)
				deleted_4d++;
		}
		free(all4);
		fbr_get_stats(&t4, &st_4d);
	}
	tap_ok(count_entries(&h.tree) == (size_t) n_spatial && count_entries(&side) == (size_t) (n_side - deleted) &&
		   count_entries(&t4) == (size_t) (n_4d - deleted_4d) && st_4d.merges > 0,
		   "three trees in one pool hold their own entries (%d, %d and %d 4-D; %llu merges in the 4-D one)",
		   n_spatial, n_side - deleted, n_4d - deleted_4d, (unsigned long long) st_4d.merges);

	/* a crash: a block allocated and never linked, then recovery of each tree and the allocator */
	leak = pm_alloc_block(&h.tree.pm, 2048, &err);
	pm_epoch_drain(&h.epoch);
	tap_ok(leak != 0 &&
		   fbr_recover(&h.tree, false, &repaired, &err) == PM_OK &&
		   fbr_recover(&side, false, &repaired, &err) == PM_OK &&
		   fbr_recover(&t4, false, &repaired, &err) == PM_OK &&
		   fbr_recover_alloc(pool, roots, 3, &err) == PM_OK,
		   "the trees recover and the allocator is rebuilt from all three");
	why_spatial = fbr_check(&h.tree, &st_spatial);
	why_side = fbr_check(&side, &st_side);
	why_4d = fbr_check(&t4, &st_4d);
	pm_alloc_foreach(&h.tree.pm, count_block, &blocks);
	tap_ok(why_spatial == NULL && why_side == NULL && why_4d == NULL &&
		   blocks == st_spatial.leaves + st_spatial.inner_nodes + st_side.leaves + st_side.inner_nodes +
		   st_4d.leaves + st_4d.inner_nodes + 4,
		   "after recovery the trees check (%s, %s, %s) and the allocator holds exactly their %llu nodes, "
		   "three meta blocks and the host's block (%llu blocks): the leaked block is free",
		   why_spatial ? why_spatial : "ok", why_side ? why_side : "ok", why_4d ? why_4d : "ok",
		   (unsigned long long) (st_spatial.leaves + st_spatial.inner_nodes + st_side.leaves +
								 st_side.inner_nodes + st_4d.leaves + st_4d.inner_nodes),
		   (unsigned long long) blocks);
	tap_ok(pm_pool_root(pool, ROOT_HOST) == host && count_entries(&h.tree) == (size_t) n_spatial &&
		   count_entries(&side) == (size_t) (n_side - deleted) &&
		   count_entries(&t4) == (size_t) (n_4d - deleted_4d),
		   "the host's block and every entry of the trees survive recovery");
	tap_ok(!fbr_is_leaf(fbr_node_at(&h.tree, fbr_root(&h.tree))->meta) &&
		   recovery_refuses_child(&h.tree, (uint64_t) 0 - FBR_NODE_SIZE) &&
		   recovery_refuses_child(&h.tree, (pm_pool_size(pool) / FBR_NODE_SIZE + 1) * FBR_NODE_SIZE) &&
		   recovery_refuses_child(&h.tree, fbr_root(&h.tree)) &&
		   recovery_refuses_child(&t4, fbr_root(&t4)) &&
		   fbr_recover(&h.tree, false, &repaired, &err) == PM_OK && count_entries(&h.tree) == (size_t) n_spatial &&
		   fbr_recover(&t4, false, &repaired, &err) == PM_OK,
		   "recovery reports a child offset past the pool, or one that makes a cycle, as corruption; "
		   "with the offset put back it recovers the tree");

	pm_epoch_unregister(&h.epoch);
	pm_pool_close(pool);
	formats(dir, dom);
	harness_domain_unmap(dom);
	tap_rmdir(dir);
	return tap_done();
}
