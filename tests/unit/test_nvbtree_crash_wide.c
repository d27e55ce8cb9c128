/*
 * test_nvbtree_crash_wide.c
 *	  test_nvbtree_crash.c on a wide tree and wide entries (nvb_wide_shim.h).
 */
#define NVB_TEST_WIDE
#include "test_nvbtree_crash.c"
