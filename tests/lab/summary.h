/* The end-of-run summary (tests/lab/summary.c). */
#ifndef LAB_SUMMARY_H
#define LAB_SUMMARY_H

#include "kernel/numa.h"

struct run_summary {
	unsigned long free_before;	/* free pages, per-CPU lists drained, before the tests */
	unsigned long node_free_before[MAX_NUMA_NODES];	/* the same, per node */
};

void summary_begin(struct run_summary *s);
void summary_print(const struct run_summary *s, unsigned int failed);

#endif
