/*
 * nvbtpm.h
 *	  The nvbtree_pm index access method: the NVB-tree of src/core/nvbtree
 *	  as an ordered access method (src/pg/ordered: build, insert, scans,
 *	  cost, validation), with its own handler, its PmiAmOps and OrdOps
 *	  (index) and its structure check.
 */
#ifndef NVBTPM_H
#define NVBTPM_H

#include "ordered/ord.h"

#include "nvbtree.h"

#define NVBTPM_DEFAULT_FILLFACTOR 90

/* nvbtpm_index.c: nvbtree_pm's PmiAmOps and OrdOps */
extern const OrdAm nvbtpm_am;

/* A handle's tree (its am_state). */
static inline nvb_tree *
nvbtpm_tree(PmiIndex *h)
{
	return (nvb_tree *) h->am_state;
}

/* nvbtpm_check.c */
extern int64 nvbtpm_check_structure(Relation index, void *state);
extern void nvbtpm_shape(PmiIndex *h, PmiShape *shape);

/* nvbtpm_handler.c */
extern bytea *nvbtpm_options(Datum reloptions, bool validate);

#endif							/* NVBTPM_H */
