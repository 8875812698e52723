/* Host tests of the per-CPU page lists (mm/pcp.c). */
#include "tests/host/harness.h"

const struct host_test pcp_tests[] = {
	{ NULL, NULL, false },
};
