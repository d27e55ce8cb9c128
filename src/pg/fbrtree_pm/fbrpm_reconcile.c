/*
 * fbrpm_reconcile.c
 *	  Crash reconciliation with the heap for fbrtree_pm (the protocol:
 *	  src/pg/pmi_reconcile.c).  A note in the pool's ring holds the entry's
 *	  payload and its box's centre in float4 (fbrpm_note_key); the entry is
 *	  found again by a window search around that centre (the side tree: at
 *	  the TID) and removed if its heap tuple is gone or changed.  If the ring
 *	  overflowed, every entry is checked.
 */
#include "fbrpm.h"

#include "miscadmin.h"

typedef struct Reconcile
{
	PmiHeapCheck heap;
	FbrpmOpclass oc;
	fbr_tree   *spatial;
	fbr_tree   *side;
	int64		checked;
	int64		removed;
} Reconcile;

typedef struct EntryMatch
{
	const FbrpmOpclass *oc;
	const fbr_item *item;
	ItemPointer tid;
} EntryMatch;

/* Would the heap tuple's value make this very entry? */
static bool
value_matches(void *arg, Datum value, bool isnull)
{
	EntryMatch *m = arg;
	fbr_item	now;

	fbrpm_entry(m->oc, value, isnull, m->tid, &now);
	return now.payload == m->item->payload && fbr_box_equal(&now.box, &m->item->box);
}

static void
reconcile_entry(Reconcile *r, const fbr_item *item)
{
	ItemPointerData tid;
	EntryMatch	m = {&r->oc, item, &tid};

	r->checked++;
	fbrpm_payload_tid(item->payload, &tid);
	if (!pmi_heap_item_current(&r->heap, &tid, value_matches, &m) &&
		fbrpm_delete(r->heap.index, r->spatial, r->side, item))
		r->removed++;
}

static bool
in_window(void *arg, const fbr_box *box, bool is_leaf)
{
	return fbr_box_overlaps(arg, box);
}

typedef struct NoteVisit
{
	Reconcile  *r;
	fbr_results *found;
} NoteVisit;

static void
visit_note(void *ctx, uint64_t key, uint64_t payload)
{
	NoteVisit  *v = ctx;
	fbr_box		window;
	bool		side = (payload & FBRPM_PAYLOAD_SIDE) != 0;
	pm_error	err;

	CHECK_FOR_INTERRUPTS();
	if (side)
	{
		ItemPointerData tid;

		fbrpm_payload_tid(payload, &tid);
		fbrpm_side_box(&tid, &window);
	}
	else
		fbrpm_note_window(key, &window);
	v->found->n = 0;
	if (fbr_search(side ? v->r->side : v->r->spatial, in_window, &window, v->found, &err) != PM_OK)
		pmi_report(&err, v->r->heap.index);
	for (size_t i = 0; i < v->found->n; i++)
		if (v->found->items[i].payload == payload)
			reconcile_entry(v->r, &v->found->items[i]);
}

void
fbrpm_reconcile(Relation index, pm_pool *pool, fbr_tree *spatial, fbr_tree *side)
{
	Reconcile	r = {0};
	pm_recon   *ring = pmi_recon_ring(pool);
	fbr_results *found = palloc0(sizeof(fbr_results));	/* survives a longjmp */

	fbrpm_opclass(index, &r.oc);
	r.spatial = spatial;
	r.side = side;
	pmi_heap_check_begin(&r.heap, index);
	PG_TRY();
	{
		if (ring != NULL)
		{
			NoteVisit	v = {&r, found};

			pm_recon_foreach(pool, ring, visit_note, &v);
		}
		else
		{
			fbrpm_list_entries(index, spatial, side, found);
			for (size_t i = 0; i < found->n; i++)
			{
				if ((i & 1023) == 0)
					CHECK_FOR_INTERRUPTS();
				reconcile_entry(&r, &found->items[i]);
			}
		}
	}
	PG_FINALLY();
	{
		fbr_results_free(found);
	}
	PG_END_TRY();
	pmi_heap_check_end(&r.heap);
	pmi_reconcile_done(index, pool, ring == NULL, r.checked, r.removed);
}
