/*
 * fuzz_fbrtree.c
 *	  libFuzzer target: an fbrtree_pm pool a backend did not write, from its
 *	  first use after a start on.  Open it, recover both trees and the
 *	  allocator as fbrtree_pm does on first use, read the reconciliation
 *	  ring, verify, run a window search and a KNN scan, insert, delete (nodes
 *	  merge) and verify again (fuzz_common.h: the input and the valid pool).
 *
 * The valid pool is fbrtree_pm's layout: a 2-D spatial tree of 3,000 boxes
 * grown by inserts (inner nodes, splits), a side tree of 20 at root 2, and
 * the reconciliation ring.
 *
 * Build: make fuzz (clang); tests/run --only fuzz runs it for a fixed time.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "fuzz_common.h"
#include "fbrtree.h"

#include <math.h>

#define ROOT_SPATIAL	0
#define ROOT_SIDE		2
#define ENTRIES			3000

static const int meta_roots[] = {ROOT_SPATIAL, ROOT_SIDE};

/* Box i: a unit square on a 60-wide grid; payload i + 1. */
static fbr_item
item(uint64_t i)
{
	fbr_item	e;

	memset(&e, 0, sizeof(e));
	e.box.min[0] = (double) (i % 60);
	e.box.min[1] = (double) (i / 60 % 60);
	e.box.max[0] = e.box.min[0] + 1;
	e.box.max[1] = e.box.min[1] + 1;
	e.payload = i + 1;
	return e;
}

static pm_errcode
insert_items(fbr_tree *t, uint64_t from, uint64_t to, pm_error *err)
{
	for (uint64_t i = from; i < to; i++)
	{
		fbr_item	e = item(i);
		pm_errcode	rc = fbr_insert(t, &e, err);

		if (rc != PM_OK)
			return rc;
	}
	return PM_OK;
}

static pm_errcode
fill(pm_pool *pool, pm_error *err)
{
	pm_epoch_handle epoch;
	fbr_tree	spatial;
	fbr_tree	side;
	pm_errcode	rc;

	if ((rc = fbr_format(pool, ROOT_SPATIAL, 2, err)) != PM_OK ||
		(rc = fbr_format(pool, ROOT_SIDE, 2, err)) != PM_OK)
		return rc;
	fbr_attach(&spatial, pool, ROOT_SPATIAL, &epoch, FUZZ_SPACE_PM, 0);
	fbr_attach(&side, pool, ROOT_SIDE, &epoch, FUZZ_SPACE_PM, 0);
	fuzz_epoch_begin(&epoch, &spatial.pm, NULL);
	if ((rc = insert_items(&spatial, 0, ENTRIES, err)) == PM_OK)
		rc = insert_items(&side, 0, 20, err);
	fuzz_epoch_end(&epoch);
	return rc;
}

static bool
overlaps(void *arg, const fbr_box *box, bool is_leaf)
{
	(void) is_leaf;
	return fbr_box_overlaps(arg, box, 2);
}

static bool
everything(void *arg, const fbr_box *box, bool is_leaf)
{
	(void) arg;
	(void) box;
	(void) is_leaf;
	return true;
}

/* Euclidean distance from the point at arg to the box (NaN for a NaN box, as a host's may be). */
static double
distance(void *arg, const fbr_box *box, bool is_leaf)
{
	const double *p = arg;
	double		dx = fmax(fmax(box->min[0] - p[0], p[0] - box->max[0]), 0);
	double		dy = fmax(fmax(box->min[1] - p[1], p[1] - box->max[1]), 0);

	(void) is_leaf;
	if (isnan(box->min[0]) || isnan(box->max[1]))
		return NAN;
	return sqrt(dx * dx + dy * dy);
}

/* A window search, a KNN scan, inserts and deletes on one tree. */
static void
use(fbr_tree *t, uint64_t inserts)
{
	fbr_box		window = {.min = {10, 10}, .max = {30, 30}};
	double		point[2] = {20.3, 20.1};
	fbr_results r = {0};
	pm_error	err;
	fbr_knn    *k;
	bool		found;

	if (fbr_search(t, overlaps, &window, &r, &err) == PM_OK)
	{
		for (size_t i = 0; i < r.n && i < 400; i++)
			if (fbr_delete(t, &r.items[i], &found, &err) != PM_OK)
				break;
	}
	fbr_results_free(&r);
	if ((k = fbr_knn_begin(t, everything, NULL, distance, point, &err)) != NULL)
	{
		fbr_item	e;
		double		d;

		for (int i = 0; i < 50 && fbr_knn_next(k, &e, &d, &err); i++)
			;
		fbr_knn_end(k);
	}
	(void) insert_items(t, ENTRIES, ENTRIES + inserts, &err);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	pm_pool    *pool;
	pm_error	err;
	pm_epoch_handle epoch;
	fbr_tree	spatial;
	fbr_tree	side;
	fbr_stats	st;
	uint64_t	repaired;

	if (fuzz_image == NULL)
		fuzz_set_up(PM_KIND_FBRTREE, fill);
	if ((pool = fuzz_open(data, size)) == NULL)
		return 0;
	fbr_attach(&spatial, pool, ROOT_SPATIAL, &epoch, FUZZ_SPACE_PM, 0);
	fbr_attach(&side, pool, ROOT_SIDE, &epoch, FUZZ_SPACE_PM, 0);
	fuzz_epoch_begin(&epoch, &spatial.pm, NULL);
	if (fbr_recover(&spatial, false, &repaired, &err) == PM_OK &&
		fbr_recover(&side, false, &repaired, &err) == PM_OK &&
		fbr_recover_alloc(pool, meta_roots, 2, &err) == PM_OK)
	{
		(void) fuzz_read_ring(pool);
		(void) fbr_check(&spatial, &st);
		(void) fbr_check(&side, &st);
		use(&spatial, 300);
		use(&side, 60);
		(void) fbr_check(&spatial, &st);
		fbr_get_stats(&side, &st);
	}
	fuzz_epoch_end(&epoch);
	pm_pool_close(pool);
	return 0;
}
