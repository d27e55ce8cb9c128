/*
 * test_nvbtree_concurrent_wide.c
 *	  test_nvbtree_concurrent.c's free-running rounds on a wide tree and
 *	  wide entries (nvb_wide_shim.h).
 */
#define NVB_TEST_WIDE
#include "test_nvbtree_concurrent.c"
