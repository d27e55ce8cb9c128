/*
 * ord_pending.c
 *	  A node's batch as scans and unique checks read it: the structure's
 *	  entries with those of a tiered index's operation log that are not
 *	  applied yet merged in (pmi_tier.c).
 *
 * The log's records are copied before the structure is read, so a record
 * applied in between is in both, and the copy of an entry the batch holds
 * is dropped (an entry is its own identity).  A record belongs to the
 * batch whose fences [low, high) hold its entry; batches follow one another
 * by their fences, so each waiting entry is merged into one batch of a
 * scan, whichever participant of a parallel scan reads it.  A batch that
 * the merge makes longer than a batch holds gives up its far end and moves
 * its fence there: the next read goes on from it.
 */
#include "ord.h"

#include "utils/memutils.h"

/* The waiting entries in a range, decoded, their records in cxt. */
typedef struct OrdPending
{
	const pm_key_order *order;
	const OrdKey *lo;
	const OrdKey *hi;
	MemoryContext cxt;			/* NULL until a record is seen */
	OrdKey	   *e;
	int			n;
	int			size;
} OrdPending;

/* PmiTierRecordFn: keep an entry that lies in [lo, hi]. */
static void
collect_pending(void *arg, const PmiNote *note, const char *entry, Size len)
{
	OrdPending *p = arg;
	MemoryContext old;
	OrdKey		k;
	pm_error	err;

	if (p->cxt == NULL)
	{
		p->cxt = AllocSetContextCreate(CurrentMemoryContext, "pm_index waiting entries",
									   ALLOCSET_SMALL_SIZES);
		p->size = 64;
		p->e = MemoryContextAlloc(p->cxt, sizeof(OrdKey) * p->size);
	}
	old = MemoryContextSwitchTo(p->cxt);
	if (ord_logged_entry(entry, len, &k, &err) != PM_OK)
		pmi_report_core_error(ERROR, &err, NULL);
	if (pm_key_cmp_by(p->order, &k, p->lo) >= 0 && pm_key_cmp_by(p->order, &k, p->hi) <= 0)
	{
		if (p->n == p->size)
		{
			p->size *= 2;
			p->e = repalloc_huge(p->e, sizeof(OrdKey) * p->size);
		}
		p->e[p->n++] = k;
	}
	MemoryContextSwitchTo(old);
}

static int
cmp_entries(const void *a, const void *b, void *order)
{
	return pm_key_cmp_by(order, a, b);
}

/* Whether k lies within the batch's fences [low, high). */
static bool
within_fences(const pm_key_order *order, const OrdBatch *b, const OrdKey *k)
{
	return pm_key_cmp_by(order, k, &b->low) >= 0 &&
		(pm_key_is_max(&b->high) || pm_key_cmp_by(order, k, &b->high) < 0);
}

/*
 * Merge the sorted waiting entries p into batch b, dropping those it holds.
 * If that makes more than a batch holds, keep those nearest the read's
 * start (the lowest forward, the highest backward) and move the far fence
 * to the first entry given up.
 */
static void
merge_pending(const pm_key_order *order, const OrdPending *p, bool backward, OrdBatch *b)
{
	OrdKey	   *merged = palloc(sizeof(OrdKey) * (b->n + p->n));
	int			n = 0,
				i = 0,
				j = 0;

	while (j < p->n && !within_fences(order, b, &p->e[j]))
		j++;
	while (i < b->n || (j < p->n && within_fences(order, b, &p->e[j])))
	{
		int			c;

		if (j >= p->n || !within_fences(order, b, &p->e[j]))
			c = -1;
		else if (i >= b->n)
			c = 1;
		else
			c = pm_key_cmp_by(order, &b->e[i], &p->e[j]);
		if (c <= 0)
		{
			merged[n++] = b->e[i++];
			j += c == 0;		/* applied since it was copied */
		}
		else
		{
			merged[n] = p->e[j++];
			ord_key_copy(&merged[n++], b->records);
		}
	}
	if (n > ORD_BATCH_MAX)
	{
		if (backward)
		{
			memmove(merged, merged + (n - ORD_BATCH_MAX), sizeof(OrdKey) * ORD_BATCH_MAX);
			b->low = merged[0];
		}
		else
			b->high = merged[ORD_BATCH_MAX];
		n = ORD_BATCH_MAX;
	}
	memcpy(b->e, merged, sizeof(OrdKey) * n);
	b->n = n;
	pfree(merged);
}

/*
 * OrdOps.read_range of index, whose handle is h (the node covering from, keeping the
 * entries in [lo, hi]) with the entries waiting in its operation log merged
 * in.
 */
void
ord_read_batch(Relation index, PmiIndex *h, const pm_key_order *order, const OrdKey *from,
			   bool backward, const OrdKey *lo, const OrdKey *hi, OrdBatch *b)
{
	const OrdOps *ops = &ord_am(h->ops)->ord;
	OrdPending	p = {order, lo, hi};

	pmi_tier_foreach_pending(h, collect_pending, &p);
	ops->read_range(index, h->am_state, from, backward, lo, hi, b);

	/*
	 * A fence cut at from names from's record, which lives in the previous
	 * read's copies: the read after next would find it reset.
	 */
	if (b->records != NULL)
	{
		ord_key_copy(&b->low, b->records);
		ord_key_copy(&b->high, b->records);
	}
	if (p.n > 0)
	{
		qsort_arg(p.e, p.n, sizeof(OrdKey), cmp_entries, (void *) order);
		merge_pending(order, &p, backward, b);
	}
	if (p.cxt != NULL)
		MemoryContextDelete(p.cxt);
}
