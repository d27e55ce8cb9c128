/*
 * ord_batch.c
 *	  The memory of batches (OrdBatch): a batch of an index with wide keys
 *	  holds copies of their records, made by the read that fills it.  Two
 *	  contexts take turns, because a read goes on from the previous batch's
 *	  fence, which lives in the previous read's copies.
 */
#include "ord.h"

#include "utils/memutils.h"

/* Set up b for reads of index (records only if its keys can be wide). */
void
ord_batch_init(OrdBatch *b, Relation index)
{
	b->n = 0;
	b->records = b->previous = NULL;
	if (ord_index_wide(index))
	{
		b->records = AllocSetContextCreate(CurrentMemoryContext, "pm_index batch records",
										   ALLOCSET_SMALL_SIZES);
		b->previous = AllocSetContextCreate(CurrentMemoryContext, "pm_index batch records",
											ALLOCSET_SMALL_SIZES);
	}
}

/*
 * Before a read into b (OrdOps.read_range): the context for its copies,
 * emptied; the one of the previous read stays until the next.
 */
void
ord_batch_next_records(OrdBatch *b)
{
	MemoryContext swap = b->previous;

	b->previous = b->records;
	b->records = swap;
	MemoryContextReset(b->records);
}

/* A copy of a record in the memory context cxt (the core's nbt_copy_fn too). */
const pm_key_rec *
ord_copy_record(void *cxt, const pm_key_rec *rec)
{
	pm_key_rec *copy = MemoryContextAlloc(cxt, pm_key_rec_size(rec));

	memcpy(copy, rec, pm_key_rec_size(rec));
	return copy;
}

/* Copy k's record (if it has one) into cxt. */
void
ord_key_copy(OrdKey *k, MemoryContext cxt)
{
	if (pm_rest_is_wide(k->rest))
	{
		const pm_key_rec *copy = ord_copy_record(cxt, pm_key_rec_of(NULL, k->rest));

		k->rest = (k->rest & ~PM_REST_ADDR) | (uintptr_t) copy;
	}
}

/* dst becomes a copy of src that does not depend on src's records (both set up by ord_batch_init). */
void
ord_batch_copy(OrdBatch *dst, const OrdBatch *src)
{
	MemoryContext records = dst->records;
	MemoryContext previous = dst->previous;

	memcpy(dst, src, sizeof(OrdBatch));
	dst->records = records;
	dst->previous = previous;
	if (records == NULL)
		return;
	MemoryContextReset(records);
	for (int i = 0; i < dst->n; i++)
		ord_key_copy(&dst->e[i], records);
	ord_key_copy(&dst->low, records);
	ord_key_copy(&dst->high, records);
}

void
ord_batch_free(OrdBatch *b)
{
	if (b->records != NULL)
	{
		MemoryContextDelete(b->records);
		MemoryContextDelete(b->previous);
	}
}

/*
 * The key just above k, where a backward read that takes k as its last
 * entry starts (an exclusive bound).
 */
OrdKey
ord_key_above(const OrdKey *k)
{
	if (pm_rest_is_wide(k->rest))
		return ord_key_make(k->key, k->rest | PM_REST_ABOVE);
	if (k->rest == UINT64_MAX)
	{
		/*
		 * above every entry of the key: a range's end is never past the NULL
		 * key's
		 */
		Assert(k->key < UINT64_MAX);
		return ord_key_make(k->key + 1, 0);
	}
	return ord_key_make(k->key, k->rest + 1);
}
