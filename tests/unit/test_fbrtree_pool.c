/*
 * test_fbrtree_pool.c
 *	  Several trees in one pool, as the PostgreSQL glue keeps them (a spatial
 *	  tree at pool root 0, a host block at root 1, a side tree at root 2):
 *	  both trees work side by side, and after a simulated crash that leaked a
 *	  block, recovering each tree and rebuilding the allocator from all of
 *	  them keeps every node of both, the host's block, and frees the leak.
 *	  A child offset that leaves the pool or makes a cycle is reported as
 *	  corruption.
 */
#include "fbr_harness.h"
#include "fbr_internal.h"

#define ROOT_SIDE	2
#define ROOT_HOST	1

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
	uint64_t	saved = root->e[s].payload;
	uint64_t	repaired;
	pm_error	err;
	pm_errcode	rc;

	root->e[s].payload = bad;
	rc = fbr_recover(t, false, &repaired, &err);
	root->e[s].payload = saved;
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

int
main(void)
{
	char	   *dir = tap_tmpdir("fbr_pool");
	char		path[4096];
	pm_epoch_domain *dom = harness_domain();
	fbr_harness h;
	fbr_tree	side;
	pm_pool    *pool;
	pm_error	err;
	uint64_t	seed = 42;
	uint64_t	host;
	uint64_t	leak;
	uint64_t	repaired;
	uint64_t	blocks = 0;
	int			n_spatial = 40000 / FBR_SCALE_DOWN;
	int			n_side = 12000 / FBR_SCALE_DOWN;
	int			deleted = 0;
	static const int roots[] = {FBR_TEST_ROOT, ROOT_SIDE};
	fbr_stats	st_spatial;
	fbr_stats	st_side;
	const char *why_spatial;
	const char *why_side;

	tap_plan(6);
	snprintf(path, sizeof(path), "%s/pool", dir);
	pool = fbr_harness_pool(path, PM_MODE_EADR, 1ull << 30);
	fbr_harness_attach(&h, pool, dom, 1);
	tap_ok(fbr_format(pool, ROOT_SIDE, &err) == PM_OK, "a second tree formats at pool root %d", ROOT_SIDE);
	fbr_attach(&side, pool, ROOT_SIDE, &h.epoch, SPACE_PM, 0);
	host = pm_alloc_block(&h.tree.pm, 4096, &err);
	pm_pool_set_root(pool, ROOT_HOST, host);

	for (int i = 0; i < n_spatial; i++)
	{
		fbr_item	it;

		it.box.xmin = grid(&seed, 0, 1000);
		it.box.ymin = grid(&seed, 0, 1000);
		it.box.xmax = it.box.xmin + grid(&seed, 0, 4);
		it.box.ymax = it.box.ymin + grid(&seed, 0, 4);
		it.payload = i;
		if (fbr_insert(&h.tree, &it, &err) != PM_OK)
			break;
	}
	for (int i = 0; i < n_side; i++)
	{
		fbr_item	it = {{i / 100, i % 100, i / 100, i % 100}, i};

		if (fbr_insert(&side, &it, &err) != PM_OK)
			break;
	}
	/* empty most of the side tree: its nodes merge while the spatial tree is untouched */
	for (int i = 0; i < n_side; i++)
	{
		fbr_item	it = {{i / 100, i % 100, i / 100, i % 100}, i};
		bool		found;

		if (i % 5 != 0 && fbr_delete(&side, &it, &found, &err) == PM_OK && found)
			deleted++;
	}
	tap_ok(count_entries(&h.tree) == (size_t) n_spatial && count_entries(&side) == (size_t) (n_side - deleted),
		   "two trees in one pool hold their own entries (%d and %d)", n_spatial, n_side - deleted);

	/* a crash: a block allocated and never linked, then recovery of each tree and the allocator */
	leak = pm_alloc_block(&h.tree.pm, 2048, &err);
	pm_epoch_drain(&h.epoch);
	tap_ok(leak != 0 &&
		   fbr_recover(&h.tree, false, &repaired, &err) == PM_OK &&
		   fbr_recover(&side, false, &repaired, &err) == PM_OK &&
		   fbr_recover_alloc(pool, roots, 2, &err) == PM_OK,
		   "both trees recover and the allocator is rebuilt from both");
	why_spatial = fbr_check(&h.tree, &st_spatial);
	why_side = fbr_check(&side, &st_side);
	pm_alloc_foreach(&h.tree.pm, count_block, &blocks);
	tap_ok(why_spatial == NULL && why_side == NULL &&
		   blocks == st_spatial.leaves + st_spatial.inner_nodes + st_side.leaves + st_side.inner_nodes + 3,
		   "after recovery both trees check (%s, %s) and the allocator holds exactly their %llu nodes, "
		   "two meta blocks and the host's block (%llu blocks): the leaked block is free",
		   why_spatial ? why_spatial : "ok", why_side ? why_side : "ok",
		   (unsigned long long) (st_spatial.leaves + st_spatial.inner_nodes + st_side.leaves + st_side.inner_nodes),
		   (unsigned long long) blocks);
	tap_ok(pm_pool_root(pool, ROOT_HOST) == host && count_entries(&h.tree) == (size_t) n_spatial &&
		   count_entries(&side) == (size_t) (n_side - deleted),
		   "the host's block and every entry of both trees survive recovery");
	tap_ok(!fbr_is_leaf(fbr_node_at(&h.tree, fbr_root(&h.tree))->meta) &&
		   recovery_refuses_child(&h.tree, (uint64_t) 0 - FBR_NODE_SIZE) &&
		   recovery_refuses_child(&h.tree, (pm_pool_size(pool) / FBR_NODE_SIZE + 1) * FBR_NODE_SIZE) &&
		   recovery_refuses_child(&h.tree, fbr_root(&h.tree)) &&
		   fbr_recover(&h.tree, false, &repaired, &err) == PM_OK && count_entries(&h.tree) == (size_t) n_spatial,
		   "recovery reports a child offset past the pool, or one that makes a cycle, as corruption; "
		   "with the offset put back it recovers the tree");

	pm_epoch_unregister(&h.epoch);
	pm_pool_close(pool);
	harness_domain_unmap(dom);
	tap_rmdir(dir);
	return tap_done();
}
