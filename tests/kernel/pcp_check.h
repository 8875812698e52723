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

/* Calls of zone_pcp_disable/enable/update from several CPUs, counted (all atomic). */
struct pcp_toggle_calls {
	int in_disable, in_enable;	/* calls in progress; updates count as enables */
	u64 overlaps;			/* calls that began while a conflicting one ran */
	u64 disables, updates;		/* calls done */
};

/* Count entering a call of one kind (mine) while one of the other kind is in progress. */
static inline void pcp_toggle_enter(struct pcp_toggle_calls *tc, int *mine, int *other)
{
	__atomic_add_fetch(mine, 1, __ATOMIC_ACQ_REL);
	if (smp_load_acquire(other))
		__atomic_add_fetch(&tc->overlaps, 1, __ATOMIC_RELAXED);
}

/*
 * One toggler's round: disable the zone's pcps, call while_disabled(arg) (the check), then
 * before_enable(arg) if there is one (a window widener), and enable them again.
 */
static inline void pcp_toggle_round(struct pcp_toggle_calls *tc, struct zone *zone,
				    void (*while_disabled)(void *), void (*before_enable)(void *),
				    void *arg)
{
	pcp_toggle_enter(tc, &tc->in_disable, &tc->in_enable);
	zone_pcp_disable(zone);
	__atomic_sub_fetch(&tc->in_disable, 1, __ATOMIC_RELEASE);
	__atomic_add_fetch(&tc->disables, 1, __ATOMIC_RELEASE);
	while_disabled(arg);
	pcp_toggle_enter(tc, &tc->in_enable, &tc->in_disable);
	if (before_enable)
		before_enable(arg);
	zone_pcp_enable(zone);
	__atomic_sub_fetch(&tc->in_enable, 1, __ATOMIC_RELEASE);
}

/* One updater's call: before(arg) if there is one, then recompute high and batch of pgdat
 * for nr_cpus CPUs, as a CPU coming online does. */
static inline void pcp_toggle_update(struct pcp_toggle_calls *tc, struct pglist_data *pgdat,
				     unsigned int nr_cpus, void (*before)(void *), void *arg)
{
	pcp_toggle_enter(tc, &tc->in_enable, &tc->in_disable);
	if (before)
		before(arg);
	zone_pcp_update(pgdat, nr_cpus);
	__atomic_sub_fetch(&tc->in_enable, 1, __ATOMIC_RELEASE);
	__atomic_add_fetch(&tc->updates, 1, __ATOMIC_RELEASE);
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
