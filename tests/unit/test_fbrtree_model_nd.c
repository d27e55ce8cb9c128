/*
 * test_fbrtree_model_nd.c
 *	  test_fbrtree_model.c on boxes of 3 and 4 dimensions.
 */
#define FBR_TEST_ND
#include "test_fbrtree_model.c"
