/*
 * zone_pcp_disable/enable/update from several CPUs at once: what the kernel's
 * mm_pcp_disable_enable_update_concurrent (mm_pcp.c) and the host's
 * pcp_disable_enable_update_concurrent (tests/host/test_pcp.c) both count and check. They
 * differ in how they widen the window (a stall IPI; a host preemption signal).
 */
#ifndef TESTS_KERNEL_PCP_TOGGLE_H
#define TESTS_KERNEL_PCP_TOGGLE_H

#include "mm/mm_test.h"

struct pcp_toggle_calls {
	int in_disable, in_enable;	/* calls in progress (atomic); updates count as enables */
	u64 overlaps;			/* calls that began while a conflicting one ran (atomic) */
};

/* Count entering a call of one kind (mine) while one of the other kind is in progress. */
static inline void pcp_toggle_enter(struct pcp_toggle_calls *tc, int *mine, int *other)
{
	__atomic_add_fetch(mine, 1, __ATOMIC_ACQ_REL);
	if (smp_load_acquire(other))
		__atomic_add_fetch(&tc->overlaps, 1, __ATOMIC_RELAXED);
}

/* While some CPU holds the zone disabled, every pcp must be at high 0, batch 1. */
static inline bool zone_pcps_disabled(struct zone *zone)
{
	for (unsigned int cpu = 0; cpu < zone->node->nr_cpus; cpu++)
		if (READ_ONCE(zone->pcp[cpu].high) != 0 || READ_ONCE(zone->pcp[cpu].batch) != 1)
			return false;
	return true;
}

#endif
