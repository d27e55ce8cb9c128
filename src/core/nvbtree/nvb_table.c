/*
 * nvb_table.c
 *	  The meta block, the node-ID mapping table, id allocation, the lock
 *	  table in the DRAM tier, formatting and the first use of a pool.
 */
#include "nvb_internal.h"

#include "recon.h"

pm_errcode
nvb_corrupt(const nvb_tree *t, pm_error *err, const char *what, uint32_t id)
{
	return pm_error_set(err, PM_ERR_CORRUPT, 0, "pool file \"%s\": NVB-tree node %u: %s",
						t->pool->path, id, what);
}

/* The meta block of a formatted pool, checked before anything it names is followed. */
pm_errcode
nvb_meta_check(pm_pool *pool, nvb_meta **meta, pm_error *err)
{
	uint64_t	off = pm_pool_root(pool, 0);
	nvb_meta   *m;

	if (!pm_alloc_block_in_pool(pool, off, NVB_META_SIZE))
		return pm_error_set(err, PM_ERR_CORRUPT, 0, "pool file \"%s\" has no NVB-tree meta block",
							pool->path);
	m = pm_pool_addr(pool, off);
	if (m->magic != NVB_META_MAGIC)
		return pm_error_set(err, PM_ERR_CORRUPT, 0, "pool file \"%s\" holds no NVB-tree",
							pool->path);
	if (m->version != NVB_VERSION && m->version != NVB_VERSION_WIDE)
		return pm_error_set(err, PM_ERR_VERSION, 0,
							"pool file \"%s\" holds an NVB-tree of version %u, not %u or %u",
							pool->path, m->version, NVB_VERSION, NVB_VERSION_WIDE);
	if (m->host_len > NVB_META_HOST_MAX || pm_load(&m->next_id) > NVB_MAX_ID + 1 ||
		pm_load(&m->root) == NVB_NO_ID || pm_load(&m->root) >= pm_load(&m->next_id))
		return pm_error_set(err, PM_ERR_CORRUPT, 0,
							"pool file \"%s\": the NVB-tree meta block does not validate",
							pool->path);
	*meta = m;
	return PM_OK;
}

pm_errcode
nvb_meta_host(pm_pool *pool, bool *wide, const uint8_t **host, uint32_t *host_len,
			  pm_error *err)
{
	nvb_meta   *m;
	pm_errcode	rc = nvb_meta_check(pool, &m, err);

	if (rc != PM_OK)
		return rc;
	*wide = m->version == NVB_VERSION_WIDE;
	*host = m->host;
	*host_len = m->host_len;
	return PM_OK;
}

/* The word of the mapping table that holds id's node, or NULL. */
static uint64_t *
table_word(const nvb_tree *t, uint32_t id)
{
	nvb_meta   *m = nvb_meta_of(t);
	uint64_t	seg;

	if (id == NVB_NO_ID || id > NVB_MAX_ID)
		return NULL;
	seg = pm_load(&m->dir[id / NVB_SEG_IDS]);
	if (!pm_alloc_block_in_pool(t->pool, seg, NVB_SEG_IDS * sizeof(uint64_t)))
		return NULL;
	return (uint64_t *) pm_pool_addr(t->pool, seg) + id % NVB_SEG_IDS;
}

/*
 * The node id maps to now, or NULL: an id not yet used, or
 * an offset that names no block of the pool.  Callers check the node
 * (nvb_node_ok) before following it.
 */
nvb_node *
nvb_node_get(const nvb_tree *t, uint32_t id, uint64_t *off)
{
	uint64_t   *w = table_word(t, id);
	uint64_t	o;

	if (w == NULL)
		return NULL;
	o = pm_load(w);
	if (!pm_alloc_block_in_pool(t->pool, o, t->node_size))
		return NULL;
	if (off != NULL)
		*off = o;
	return pm_pool_addr(t->pool, o);
}

/*
 * Map id to the node at off (0: free it), persisted: the commit of every
 * node replacement, which parent and left sibling see at once.
 */
void
nvb_table_set(const nvb_tree *t, uint32_t id, uint64_t off)
{
	uint64_t   *w = table_word(t, id);

	pm_assert(w != NULL);
	pm_store(w, off);
	nvb_persist(t, w, sizeof(*w));
}

/*
 * Whether n is a node the caller may read as id's (at level, unless level
 * is negative): its identity, its slots inside its block (a narrow tree's
 * as many as its level has), a root slot and cursor inside them, and
 * (wide) its fences' records.
 */
bool
nvb_node_ok(const nvb_tree *t, const nvb_node *n, uint32_t id, int level)
{
	int			cap;

	if (n == NULL || n->magic != NVB_NODE_MAGIC || n->id != id || n->level >= NVB_MAX_LEVEL ||
		(level >= 0 && n->level != level))
		return false;
	cap = nvb_cap(n);
	if (t->wide ? cap < 1 || cap > NVB_CAP_MAX || nvb_slots_end(n->level, cap) > t->node_size :
		cap != (n->level == 0 ? NVB_LEAF_CAP : NVB_INNER_CAP))
		return false;
	return (n->root == NVB_NONE || n->root < cap) && n->count <= cap &&
		nvb_key_ok(t, n, &n->low) && nvb_key_ok(t, n, &n->high);
}

/* A handle's view of its pool's tree: wide or narrow (narrow when the meta block does not validate). */
static void
set_kind(nvb_tree *t)
{
	nvb_meta   *m;
	pm_error	err;

	t->wide = nvb_meta_check(t->pool, &m, &err) == PM_OK && m->version == NVB_VERSION_WIDE;
	t->node_size = t->wide ? NVB_WIDE_NODE_SIZE : NVB_NODE_SIZE;
}

/*
 * A new id, its mapping-table segment made if it is the segment's first.
 * The counter is persisted before the id is used, so no id is handed out
 * twice across a crash; an id a crash leaves unused is lost.
 */
pm_errcode
nvb_id_new(nvb_tree *t, uint32_t *id, pm_error *err)
{
	nvb_meta   *m = nvb_meta_of(t);
	uint64_t	next = pm_fetch_add(&m->next_id, 1);
	uint64_t   *dir;

	if (next > NVB_MAX_ID)
	{
		/* the counter stays within what the meta block's check accepts */
		pm_fetch_add(&m->next_id, (uint64_t) -1);
		return pm_error_set(err, PM_ERR_LIMIT, 0,
							"pool file \"%s\": the NVB-tree has %llu nodes, its most",
							t->pool->path, (unsigned long long) NVB_MAX_ID);
	}
	nvb_persist(t, &m->next_id, sizeof(m->next_id));
	dir = &m->dir[next / NVB_SEG_IDS];
	if (pm_load(dir) == 0)
	{
		uint64_t	seg = pm_alloc_block(&t->pm, NVB_SEG_IDS * sizeof(uint64_t), err);
		uint64_t	expected = 0;

		if (seg == 0)
			return err->code;
		memset(pm_pool_addr(t->pool, seg), 0, NVB_SEG_IDS * sizeof(uint64_t));
		nvb_persist(t, pm_pool_addr(t->pool, seg), NVB_SEG_IDS * sizeof(uint64_t));
		if (!pm_cas(dir, &expected, seg))
			pm_free_block(&t->pm, seg, err);
	}

	/*
	 * Whoever made the segment, its directory word is durable before the id
	 * is used: a table word in it is a commit.
	 */
	nvb_persist(t, dir, sizeof(*dir));
	*id = (uint32_t) next;
	return PM_OK;
}

void
nvb_lock(const nvb_tree *t, uint32_t id)
{
	nvb_stripe *st = nvb_stripe_of(t, id);
	unsigned	attempt = 0;

	for (;;)
	{
		uint32_t	expected = 0;

		if (pm_load_relaxed(&st->lock) == 0 && pm_cas(&st->lock, &expected, 1))
			return;
		pm_spin_delay(attempt++);
	}
}

void
nvb_unlock(const nvb_tree *t, uint32_t id)
{
	pm_store(&nvb_stripe_of(t, id)->lock, 0);
}

pm_errcode
nvb_format(pm_pool *pool, bool wide, const void *host, uint32_t host_len, pm_error *err)
{
	nvb_tree	t;
	nvb_meta   *m;
	uint64_t	meta_off,
				leaf_off;
	uint32_t	id;
	pm_errcode	rc;

	if (host_len > NVB_META_HOST_MAX)
		return pm_error_set(err, PM_ERR_INVALID, 0, "NVB-tree host data of %u bytes", host_len);
	memset(&t, 0, sizeof(t));
	t.pool = pool;
	t.wide = wide;
	t.node_size = wide ? NVB_WIDE_NODE_SIZE : NVB_NODE_SIZE;
	pm_alloc_attach_pool(&t.pm, pool);
	meta_off = pm_alloc_block(&t.pm, NVB_META_SIZE, err);
	if (meta_off == 0)
		return err->code;
	m = pm_pool_addr(pool, meta_off);
	memset(m, 0, sizeof(*m));
	m->magic = NVB_META_MAGIC;
	m->version = wide ? NVB_VERSION_WIDE : NVB_VERSION;
	m->host_len = host_len;
	if (host_len > 0)
		memcpy(m->host, host, host_len);
	m->next_id = 1;
	nvb_persist(&t, m, sizeof(*m));
	pm_pool_set_root(pool, 0, meta_off);

	if ((rc = nvb_id_new(&t, &id, err)) != PM_OK ||
		(rc = nvb_node_new(&t, id, 0, &PM_KEY_MIN, &PM_KEY_MAX, NVB_NO_ID, NVB_NO_ID, NULL, NULL,
						   0, NULL, false, &leaf_off, err)) != PM_OK)
		return rc;
	nvb_table_set(&t, id, leaf_off);
	pm_store(&m->root, (uint64_t) id);
	nvb_persist(&t, &m->root, sizeof(m->root));
	return PM_OK;
}

void
nvb_attach(nvb_tree *t, pm_pool *pool, pm_alloc *dram, pm_epoch_handle *epoch,
		   uint32_t space_pm, uint32_t tag_pm, uint64_t dram_root)
{
	memset(t, 0, sizeof(*t));
	t->pool = pool;
	pm_alloc_attach_pool(&t->pm, pool);
	t->dram = dram;
	t->epoch = epoch;
	t->space_pm = space_pm;
	t->tag_pm = tag_pm;
	t->dram_root = dram_root;
	set_kind(t);
}

/*
 * The allocator from the mapping table: the meta block, the host's roots
 * (which checks what they name: the reconciliation ring, the operation
 * log), the spare block, the table's segments and every node a table word
 * names; no node is read.  What a crash or the epochs' limbo (shared
 * memory, gone at a restart) left allocated and unreachable becomes free,
 * and a pool whose allocator state was damaged or lost (a power failure in
 * adr mode loses the unflushed bitmap words) gets it back.  A block that
 * does not mark is damage; the allocator is then left unfinished, as the
 * next first use finds the same.
 */
static pm_errcode
recover_allocator(nvb_tree *t, nvb_meta *m, pm_error *err)
{
	uint64_t	next = pm_load(&m->next_id);
	pm_errcode	rc;

	pm_alloc_recover_begin(&t->pm);
	rc = pm_recon_mark_roots(&t->pm, t->pool, err);
	if (rc == PM_OK && pm_load(&m->spare) != 0)
		rc = pm_alloc_mark(&t->pm, pm_load(&m->spare), err);
	for (uint64_t s = 0; rc == PM_OK && s * NVB_SEG_IDS < next; s++)
	{
		uint64_t	seg = pm_load(&m->dir[s]);
		uint64_t   *w;

		if (seg == 0)
			continue;
		if (!pm_alloc_block_in_pool(t->pool, seg, NVB_SEG_IDS * sizeof(uint64_t)))
			return nvb_corrupt(t, err, "its mapping-table segment lies outside the pool",
							   (uint32_t) (s * NVB_SEG_IDS));
		rc = pm_alloc_mark(&t->pm, seg, err);
		w = pm_pool_addr(t->pool, seg);
		for (uint64_t i = 0; rc == PM_OK && i < NVB_SEG_IDS && s * NVB_SEG_IDS + i < next; i++)
			if (w[i] != 0)
				rc = pm_alloc_mark(&t->pm, w[i], err);
	}
	if (rc == PM_OK)
		pm_alloc_recover_end(&t->pm);
	return rc;
}

pm_errcode
nvb_open(nvb_tree *t, pm_error *err)
{
	nvb_meta   *m;
	nvb_locks  *locks;
	uint32_t	root;
	uint64_t	off;
	pm_errcode	rc = nvb_meta_check(t->pool, &m, err);

	if (rc != PM_OK)
		return rc;
	root = (uint32_t) pm_load(&m->root);
	if (!nvb_node_ok(t, nvb_node_get(t, root, NULL), root, -1))
		return nvb_corrupt(t, err, "the root does not validate", root);
	if ((rc = recover_allocator(t, m, err)) != PM_OK)
		return rc;
	off = pm_alloc_block(t->dram, sizeof(nvb_locks), err);
	if (off == 0)
		return err->code;
	locks = pm_alloc_addr(t->dram, off);
	memset(locks, 0, sizeof(*locks));
	locks->magic = NVB_LOCKS_MAGIC;
	t->dram_root = off;
	nvb_keep_spare(t);
	return PM_OK;
}

void
nvb_release_dram(nvb_tree *t)
{
	pm_error	err;

	if (t->dram_root != 0)
		pm_free_block(t->dram, t->dram_root, &err);
	t->dram_root = 0;
}

uint64_t
nvb_dram_bytes(const nvb_tree *t)
{
	return t->dram_root != 0 ? pm_alloc_class_size(sizeof(nvb_locks)) : 0;
}
