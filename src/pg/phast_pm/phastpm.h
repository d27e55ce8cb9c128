/*
 * phastpm.h
 *	  The phast_pm index access method: the PhaST skiplist of src/core/phast
 *	  as an ordered access method (src/pg/ordered: build, insert, scans, cost,
 *	  validation), with its own handler, its PmiAmOps and OrdOps (index) and
 *	  its structure check.
 */
#ifndef PHASTPM_H
#define PHASTPM_H

#include "ordered/ord.h"

#include "phast.h"

#define PHASTPM_DEFAULT_FILLFACTOR 75

/* phastpm_index.c: phast_pm's PmiAmOps and OrdOps */
extern const OrdAm phastpm_am;

/* A handle's structure (its am_state). */
static inline phast_tree *
phastpm_tree(PmiIndex *h)
{
	return (phast_tree *) h->am_state;
}

/* phastpm_check.c */
extern int64 phastpm_check_structure(Relation index, void *state);
extern void phastpm_shape(PmiIndex *h, PmiShape *shape);

/* phastpm_handler.c */
extern bytea *phastpm_options(Datum reloptions, bool validate);

#endif							/* PHASTPM_H */
