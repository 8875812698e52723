/*
 * What the per-CPU list tests of both platforms share (the kernel's mm_pcp.c and
 * mm_pcp_private.c, the host's tests/host/test_pcp.c): the counters line, a bounded wait for
 * a flag, and the counting and checking of zone_pcp_disable/enable/update from several CPUs
 * at once (whose two cases differ in how they widen the window: a stall IPI in the kernel, a
 * host preemption signal on the host).
 */
#ifndef TESTS_KERNEL_PCP_CHECK_H
#define TESTS_KERNEL_PCP_CHECK_H

#include "tests/ktest/ktest.h"
#include "kernel/timer.h"
#include "mm/mm_test.h"

/* One line of a test's pcp counters (summed by the caller), for the current lock model. */
static inline void pcp_stats_report(struct ktest *t, const char *what, const struct pcp_stats *st)
{
	ktest_printf(t, "%s [%s]: hits alloc %llu free %llu, refills %llu, spills %llu, trylock "
		     "fails alloc %llu free %llu, drained %llu, ipi drains %llu", what,
		     pcp_lock_model_name(pcp_lock_model), (unsigned long long)st->alloc_hit,
		     (unsigned long long)st->free_hit, (unsigned long long)st->refill,
		     (unsigned long long)st->spill, (unsigned long long)st->trylock_fail_alloc,
		     (unsigned long long)st->trylock_fail_free, (unsigned long long)st->drained,
		     (unsigned long long)st->ipi_drain);
}

/* Wait for an atomic flag to become non-zero, at most us microseconds; true if it did. */
static inline bool wait_flag_us(int *flag, u64 us)
{
	u64 end = arch_cycles() + us_to_cycles(us);

	while (!smp_load_acquire(flag))
		if (arch_cycles() > end)
			return false;
		else
			arch_cpu_relax();
	return true;
}

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
