/*
 * pmi_build.c
 *	  ambuild and ambuildempty of every access method.
 *
 * A build makes the pool first, then the metapage naming it, so that a pool
 * never outlives its relfilenode; the access method fills the pool from the
 * heap (PmiAmOps.build) and attaches its structure when it is ready to load
 * it, which also takes the registry slot whose number is the epoch space of
 * blocks freed later.  The slot is published ready at the end.  A WAL-logged
 * index's pool, and then its entries, go into WAL (pmi_wal.c).
 */
#include "pm_index.h"

#include "utils/rel.h"

/* A batch of the new structure's entries into WAL. */
static int
log_batch(void *arg, const void *entries, int n)
{
	PmiBuild   *b = arg;

	pmi_log_build_entries(b->index, b->ops, b->pool, entries, n);
	return 0;
}

/*
 * A WAL-logged index's build in WAL, once the pool holds it: a standby
 * inserts the entries into its own empty pool, a node's worth per record.
 */
static void
log_build(PmiBuild *b)
{
	pm_error	err;

	if (!RelationNeedsWAL(b->index))
		return;
	(void) b->ops->foreach_batch(b->index, b->state, log_batch, b, &err);
}

/* the structure's handles over the new pool, for loading it */
void *
pmi_build_attach(PmiBuild *b)
{
	Assert(b->slotno < 0);
	b->slotno = pmi_registry_attach(pmi_index_rnode(b->index), b->ops, &b->generation);
	pmi_tier_fresh_log(b->slotno);
	b->state = palloc0(b->ops->state_size);
	b->ops->attach(b->state, b->pool, b->slotno, b->generation, 0);
	return b->state;
}

IndexBuildResult *
pmi_build(Relation heap, Relation index, IndexInfo *ii)
{
	const PmiAmOps *ops = pmi_index_am(index);
	IndexBuildResult *result = palloc(sizeof(IndexBuildResult));
	PmiBuild	b = {0};
	uint64		dram_root;

	b.index = index;
	b.ops = ops;
	b.fillfactor = pmi_reloption(index, ops, PMI_FILLFACTOR);
	b.slotno = -1;
	b.pool = pmi_create_pool(index, ops);
	PG_TRY();
	{
		pmi_log_create(index, ops, b.pool);
		pmi_write_metapage(index, MAIN_FORKNUM, ops, b.pool->hdr->uuid);
		dram_root = ops->build(heap, index, ii, &b);
		if (b.slotno < 0)
			(void) pmi_build_attach(&b);
		log_build(&b);
	}
	PG_CATCH();
	{
		pm_pool_close(b.pool);
		PG_RE_THROW();
	}
	PG_END_TRY();
	pm_pool_close(b.pool);
	pmi_publish_ready(b.slotno, dram_root);
	result->heap_tuples = b.heap_tuples;
	result->index_tuples = b.index_tuples;
	return result;
}

/* Unlogged index: the init fork's metapage names no pool; first use makes one. */
void
pmi_buildempty(Relation index)
{
	static const uint8 no_pool[16];

	pmi_write_metapage(index, INIT_FORKNUM, pmi_index_am(index), no_pool);
}
