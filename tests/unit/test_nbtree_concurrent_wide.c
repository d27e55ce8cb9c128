/*
 * test_nbtree_concurrent_wide.c
 *	  test_nbtree_concurrent.c on wide entries (nbt_wide_shim.h).
 */
#define NBT_TEST_WIDE
#include "test_nbtree_concurrent.c"
