/*
 * test_nbtree_model_order.c
 *	  test_nbtree_model.c on wide entries whose records order by a host
 *	  order that memcmp does not agree with (nbt_wide_shim.h).
 */
#define NBT_TEST_WIDE
#define NBT_TEST_HOST_ORDER
#include "test_nbtree_model.c"
