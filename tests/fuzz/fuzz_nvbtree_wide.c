/*
 * fuzz_nvbtree_wide.c
 *	  fuzz_nvbtree.c on a wide tree of wide entries.
 */
#define FUZZ_NVB_WIDE
#include "fuzz_nvbtree.c"
