/* The end-of-run summary (tests/lab/summary.c). */
#ifndef LAB_SUMMARY_H
#define LAB_SUMMARY_H

#include "kernel/numa.h"

struct ktest_totals;

struct run_summary {
	unsigned long free_before;	/* free pages, per-CPU lists drained, before the tests */
	unsigned long node_free_before[MAX_NUMA_NODES];	/* the same, per node */
};

void summary_begin(struct run_summary *s);
/* tests: what ktest_run_all() counted; failed: the cases failed, plus a report outside any. */
void summary_print(const struct run_summary *s, const struct ktest_totals *tests,
		   unsigned int failed);

#endif
