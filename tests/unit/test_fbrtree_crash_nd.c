/*
 * test_fbrtree_crash_nd.c
 *	  test_fbrtree_crash.c on a tree of 4-D boxes (28 entries per node).
 */
#define FBR_CRASH_DIMS	4
#include "test_fbrtree_crash.c"
