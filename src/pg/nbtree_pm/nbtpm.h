/*
 * nbtpm.h
 *	  The nbtree_pm index access method: the NBTree of src/core/nbtree as an
 *	  ordered access method (src/pg/ordered: build, insert, scans, cost,
 *	  validation), with its own handler, its PmiAmOps and OrdOps (index) and
 *	  its structure check.
 */
#ifndef NBTPM_H
#define NBTPM_H

#include "ordered/ord.h"

#include "nbtree.h"

#define NBTPM_DEFAULT_FILLFACTOR 90

/* nbtpm_index.c: nbtree_pm's PmiAmOps and OrdOps */
extern const OrdAm nbtpm_am;

/* A handle's tree (its am_state). */
static inline nbt_tree *
nbtpm_tree(PmiIndex *h)
{
	return (nbt_tree *) h->am_state;
}

/* nbtpm_check.c */
extern int64 nbtpm_check_structure(Relation index, void *state);
extern void nbtpm_shape(PmiIndex *h, PmiShape *shape);

/* nbtpm_handler.c */
extern bytea *nbtpm_options(Datum reloptions, bool validate);

#endif							/* NBTPM_H */
