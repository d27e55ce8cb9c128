/*
 * test_nvbtree_model_order.c
 *	  test_nvbtree_model.c on a wide tree whose records order by a host
 *	  order that memcmp does not agree with (nvb_wide_shim.h).
 */
#define NVB_TEST_WIDE
#define NVB_TEST_HOST_ORDER
#include "test_nvbtree_model.c"
