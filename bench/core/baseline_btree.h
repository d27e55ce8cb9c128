/*
 * baseline_btree.h
 *	  The reference point of the core micro-benchmarks: a DRAM-only B+-tree of
 *	  (key, rest) entries under one global reader-writer lock.
 *
 * It is not a competitor of NBTree: it persists nothing, survives no crash
 * and lets only one writer in at a time.  It is here so that the numbers of
 * bench/bin/bench_ycsb mean something on their own: the same entries and
 * the same operations on a structure simple enough to be trusted at sight.
 */
#ifndef PM_BASELINE_BTREE_H
#define PM_BASELINE_BTREE_H

#include <stdbool.h>
#include <stdint.h>

/* An entry; (key, rest) is its identity and its sort order, as in NBTree. */
typedef struct baseline_entry
{
	uint64_t	key;
	uint64_t	rest;
} baseline_entry;

typedef struct baseline_btree baseline_btree;

extern baseline_btree *baseline_create(void);
extern void baseline_destroy(baseline_btree *tree);

/* Insert an entry; false (and no change) if it is already there. */
extern bool baseline_insert(baseline_btree *tree, const baseline_entry *entry);

/* Delete an entry; false if it was not there. */
extern bool baseline_delete(baseline_btree *tree, const baseline_entry *entry);

/* How many entries have this key. */
extern long baseline_count_key(baseline_btree *tree, uint64_t key);

/* Copy up to limit entries >= from, in order, to out; returns how many. */
extern int	baseline_scan(baseline_btree *tree, const baseline_entry *from, int limit,
						  baseline_entry *out);

#endif							/* PM_BASELINE_BTREE_H */
