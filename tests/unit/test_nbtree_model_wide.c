/*
 * test_nbtree_model_wide.c
 *	  test_nbtree_model.c on wide entries (nbt_wide_shim.h).
 */
#define NBT_TEST_WIDE
#include "test_nbtree_model.c"
