/*
 * Tests of the SMP plumbing the stress suites stand on (kernel/smp.h, kernel/trap.h,
 * kernel/timer.h): cross-CPU calls under concurrency and with interrupts off, async call
 * floods, smp_run_on_all, trap recovery on every CPU, tick hooks and clock agreement.
 */
#include "tests/ktest/ktest.h"
#include "tests/lab/lab_platform.h"
#include "kernel/printk.h"
#include "kernel/smp.h"
#include "kernel/string.h"
#include "kernel/timer.h"
#include "kernel/trap.h"

static u32 hits[MAX_CPUS];
static u32 total_hits;

static void hit(void *arg)
{
	__atomic_add_fetch(&hits[arch_cpu_id()], 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&total_hits, 1, __ATOMIC_RELAXED);
}

static void reset_hits(void)
{
	memset(hits, 0, sizeof(hits));
	WRITE_ONCE(total_hits, 0);
}

/* Wait up to 5 s for total_hits to reach want; returns what it reached. */
static u32 wait_total_hits(u32 want)
{
	for (unsigned int ms = 0; ms < 5000 && READ_ONCE(total_hits) < want;
	     ms++)
		mdelay(1);
	return READ_ONCE(total_hits);
}

/* Without wait, a call to all others still runs exactly once on each of them. */
static void smp_call_all_nowait_runs_once_each(struct ktest *t)
{
	reset_hits();
	smp_call_function_all(hit, NULL, false);
	KT_EXPECT_EQ(t, wait_total_hits(nr_cpus_online() - 1), nr_cpus_online() - 1);
	for_each_online_cpu(c)
		KT_EXPECT_EQ(t, READ_ONCE(hits[c]), c == arch_cpu_id() ? 0u : 1u);
}

/*
 * The online CPU farthest from this one: the highest-numbered other CPU that is online. Not
 * simply nr_cpus - 1, which may be a CPU that never started (smp.test_no_sipi=). This CPU
 * itself if it is the only one online.
 */
static unsigned int far_online_cpu(void)
{
	for (unsigned int c = nr_cpus; c-- > 0;)
		if (c != arch_cpu_id() && cpu_online(c))
			return c;
	return arch_cpu_id();
}

/* 1000 async calls to one CPU (more than its ring and our descriptor pool) all run. */
static void smp_call_single_nowait_flood(struct ktest *t)
{
	unsigned int target = far_online_cpu();

	if (nr_cpus_online() < 2)
		KT_SKIP(t, "needs 2 CPUs");
	reset_hits();
	for (unsigned int i = 0; i < 1000; i++)
		KT_ASSERT_EQ(t, smp_call_function_single(target, hit, NULL, false), 0);
	KT_EXPECT_EQ(t, wait_total_hits(1000), 1000u);
	KT_EXPECT_EQ(t, READ_ONCE(hits[target]), 1000u);
}

/*
 * 200 waited calls to the farthest online CPU, then 20 waited calls to all: each ran exactly
 * as often. Prints the mean round trip (TCG: emulated IPIs and vCPU wake-ups, not hardware
 * cost).
 */
static void smp_call_wait_round_trip(struct ktest *t)
{
	unsigned int target = far_online_cpu();
	u64 t0;

	if (nr_cpus_online() < 2)
		KT_SKIP(t, "needs 2 CPUs");
	reset_hits();
	t0 = arch_cycles();
	for (int i = 0; i < 200; i++)
		smp_call_function_single(target, hit, NULL, true);
	ktest_printf(t, "single, wait: %llu us per call",
		     (unsigned long long)cycles_to_us(arch_cycles() - t0) / 200);
	t0 = arch_cycles();
	for (int i = 0; i < 20; i++)
		smp_call_function_all(hit, NULL, true);
	ktest_printf(t, "all %u others, wait: %llu us per call", nr_cpus_online() - 1,
		     (unsigned long long)cycles_to_us(arch_cycles() - t0) / 20);
	KT_EXPECT_EQ(t, READ_ONCE(hits[target]), 220u);
	KT_EXPECT_EQ(t, total_hits, 200u + 20u * (nr_cpus_online() - 1));
}

/* A call to a CPU index that is not online (never started, or out of range) is refused. */
static void smp_call_single_offline_refused(struct ktest *t)
{
	reset_hits();
	if (nr_cpus < MAX_CPUS)
		KT_EXPECT_EQ(t, smp_call_function_single(nr_cpus, hit, NULL, true), -1);
	KT_EXPECT_EQ(t, smp_call_function_single(MAX_CPUS, hit, NULL, true), -1);
	KT_EXPECT_EQ(t, total_hits, 0u);
}

static void call_all_from_here(void *arg)
{
	bool irqs_off = arg != NULL;
	unsigned long flags = 0;

	if (irqs_off)
		flags = arch_irq_save();
	smp_call_function_all(hit, NULL, true);
	if (irqs_off)
		arch_irq_restore(flags);
}

/*
 * Every CPU calls every other CPU and waits, all at once: each CPU is hit n - 1 times.
 * With interrupts on, the IPIs interleave; with them off, waiting CPUs must run their own
 * queues or everyone waits for everyone.
 */
static void smp_call_all_every_cpu_at_once(struct ktest *t)
{
	for (int pass = 0; pass < 2; pass++) {
		reset_hits();
		smp_run_on_all(call_all_from_here, pass ? (void *)1 : NULL);
		for_each_online_cpu(c)
			KT_EXPECT_EQ(t, READ_ONCE(hits[c]), nr_cpus_online() - 1);
	}
}

static void check_thread_context(void *arg)
{
	u32 *bad = arg;

	if (arch_irqs_disabled() || this_cpu()->irq_depth)
		__atomic_add_fetch(bad, 1, __ATOMIC_RELAXED);
	hit(NULL);
}

/* 100 runs: each runs fn once per CPU (caller included), with interrupts on. */
static void smp_run_on_all_once_per_cpu_irqs_on(struct ktest *t)
{
	u32 bad = 0;

	reset_hits();
	for (int i = 0; i < 100; i++)
		smp_run_on_all(check_thread_context, &bad);
	for_each_online_cpu(c)
		KT_EXPECT_EQ(t, READ_ONCE(hits[c]), 100u);
	KT_EXPECT_EQ(t, bad, 0u);
}

/* Through a volatile pointer so the compiler cannot see (or reject) the bad address. */
static volatile u64 *volatile unmapped_addr = (volatile u64 *)16;

static void fault_under_recovery(void *arg)
{
	struct trap_recovery r;
	struct trap_recovery *enclosing = this_cpu()->recovery;	/* ktest's, on the test CPU */
	u32 *recovered = arg;
	unsigned long flags_before = arch_irqs_disabled();

	if (trap_recover_begin(&r)) {
		*unmapped_addr = 1;	/* not mapped: page fault */
		trap_recover_end(&r);
		return;
	}
	if (r.vector == 14 && r.fault_addr == 16 && this_cpu()->recovery == enclosing &&
	    arch_irqs_disabled() == flags_before && this_cpu()->irq_depth == 0)
		__atomic_add_fetch(recovered, 1, __ATOMIC_RELAXED);
}

/* A page fault under a recovery point comes back to it on every CPU at once, with the
 * vector, the address, interrupts and interrupt depth as they were. */
static void trap_recover_page_fault_every_cpu(struct ktest *t)
{
	u32 recovered = 0;

	smp_run_on_all(fault_under_recovery, &recovered);
	KT_EXPECT_EQ(t, recovered, nr_cpus_online());
}

/* Nested points: a fault returns to the innermost; the outer one is armed again after. */
static void trap_recover_nested_innermost_first(struct ktest *t)
{
	struct trap_recovery outer, inner;
	struct trap_recovery *enclosing = this_cpu()->recovery;	/* ktest's, around the case */
	volatile int stage = 0;

	if (trap_recover_begin(&outer)) {
		if (trap_recover_begin(&inner)) {
			__asm__ __volatile__("ud2");
			stage = 1;
		} else {
			stage = 2;
		}
		KT_EXPECT_PTR_EQ(t, this_cpu()->recovery, &outer);
		trap_recover_end(&outer);
	} else {
		stage = 3;
	}
	KT_EXPECT_EQ(t, stage, 2);
	KT_EXPECT_EQ(t, inner.vector, 6u);
	KT_EXPECT_PTR_EQ(t, this_cpu()->recovery, enclosing);
}

static u64 *hook_calls;	/* [nr_cpu_ids] */

static void count_hook(unsigned int cpu)
{
	hook_calls[cpu]++;	/* only this CPU writes its slot, in its timer interrupt */
}

/* A tick hook runs on every online CPU; after removal it runs nowhere. */
static void timer_tick_hook_every_cpu(struct ktest *t)
{
	u64 *after = lab_cpu_array_alloc(2 * sizeof(u64));	/* the calls, then the counts after */
	unsigned int missing = 0;
	int added;

	KT_ASSERT_NOT_NULL(t, after);
	hook_calls = after + nr_cpu_ids;
	added = timer_add_tick_hook(count_hook);
	KT_EXPECT_EQ(t, added, 0);
	if (added) {
		cpu_array_free(after, 2 * sizeof(u64));
		return;
	}
	for (unsigned int ms = 0; ms < 5000; ms += 10) {
		missing = 0;
		for_each_online_cpu(c)
			missing += READ_ONCE(hook_calls[c]) < 2;
		if (!missing)
			break;
		mdelay(10);
	}
	timer_remove_tick_hook(count_hook);
	KT_EXPECT_EQ(t, missing, 0u);
	for_each_online_cpu(c)
		after[c] = READ_ONCE(hook_calls[c]);
	mdelay(50);
	for_each_online_cpu(c)
		KT_EXPECT_EQ(t, READ_ONCE(hook_calls[c]), after[c]);
	cpu_array_free(after, 2 * sizeof(u64));
}

static unsigned int slow_hook_cpu;
static int slow_hook_state;	/* 0: not run yet, 1: inside, 2: returned */

/* On one CPU, once: sit in the hook for 50 ms (its timer interrupt, interrupts off). */
static void slow_hook(unsigned int cpu)
{
	u64 end;

	if (cpu != READ_ONCE(slow_hook_cpu) || READ_ONCE(slow_hook_state))
		return;
	WRITE_ONCE(slow_hook_state, 1);
	end = arch_cycles() + us_to_cycles(50000);
	while ((s64)(arch_cycles() - end) < 0)
		arch_cpu_relax();
	smp_store_release(&slow_hook_state, 2);
}

/* timer_remove_tick_hook() returns only once no CPU can still be running the hook, so its
 * data may be freed: another CPU is inside it when the removal starts, and has left it when
 * the removal returns. Window: the hook was seen running when the removal began. */
static void timer_remove_tick_hook_waits_for_running_hook(struct ktest *t)
{
	u64 deadline = arch_cycles() + us_to_cycles(5000000);
	int state;

	if (nr_cpus_online() < 2)
		KT_SKIP(t, "needs 2 CPUs");
	WRITE_ONCE(slow_hook_cpu, far_online_cpu());
	WRITE_ONCE(slow_hook_state, 0);
	KT_ASSERT_EQ(t, timer_add_tick_hook(slow_hook), 0);
	while (!READ_ONCE(slow_hook_state) && (s64)(arch_cycles() - deadline) < 0)
		arch_cpu_relax();
	state = READ_ONCE(slow_hook_state);
	timer_remove_tick_hook(slow_hook);
	ktest_printf(t, "cpu%u was %s the hook when the removal began; %s when it returned",
		     slow_hook_cpu, state == 1 ? "inside" : "not in",
		     smp_load_acquire(&slow_hook_state) == 2 ? "out of it" : "STILL IN IT");
	KT_EXPECT_EQ(t, smp_load_acquire(&slow_hook_state), 2);
	if (state != 1)
		KT_SKIP(t, "no race: the hook was not running when the removal began");
}

static void noop_hook(unsigned int cpu)
{
}

/* The hook table has TIMER_MAX_HOOKS slots: an add to a full table fails (-1) and writes
 * nothing; after the removal there is room again. */
static void timer_add_tick_hook_full_table_refused(struct ktest *t)
{
	unsigned int added = 0;

	while (added <= TIMER_MAX_HOOKS && timer_add_tick_hook(noop_hook) == 0)
		added++;
	timer_remove_tick_hook(noop_hook);	/* every slot it took */
	ktest_printf(t, "%u of %u slots were free", added, TIMER_MAX_HOOKS);
	KT_EXPECT_LE(t, added, (unsigned int)TIMER_MAX_HOOKS);
	KT_EXPECT_GE(t, added, 1u);
	KT_EXPECT_EQ(t, timer_add_tick_hook(noop_hook), 0);
	timer_remove_tick_hook(noop_hook);
}

/*
 * The TSC and LAPIC timer rates, both measured at boot against one reference clock (arch
 * code: HPET, PM timer or PIT), agree: over 20 ticks' worth of TSC time (200 ms at timer.hz=100)
 * this CPU's LAPIC timer ticks 20 times. Of up to 10 windows, the first within 20 +-20% passes and any
 * with more than 24 fails (either rate wrong by 1.5x or more in the direction that adds
 * ticks; doubling either failed 8 boots in 8 at load 26-57; halving either gave 5-11 ticks
 * in every window, the skip below, never a pass). It cannot check the reference's
 * own frequency: that scales both rates alike (the boot's second-reference check and the
 * runner's wall-clock comparison do).
 */
static void timer_tsc_and_lapic_agree(struct ktest *t)
{
	unsigned int self = arch_cpu_id();
	char seen[64];
	size_t len = 0;

	if (arch_irqs_disabled())
		KT_SKIP(t, "interrupts are off");
	KT_EXPECT_EQ(t, cycles_to_us(us_to_cycles(123456)) / 10, 12345u);
	for (int i = 0; i < 10; i++) {
		u64 t0 = timer_ticks(self), ticks, window_ms = 20000 / timer_hz;

		mdelay(window_ms);
		ticks = timer_ticks(self) - t0;
		if (ticks >= 16 && ticks <= 24) {
			ktest_printf(t, "window %d: %llu ticks in %llu ms (20 expected)", i + 1,
				     (unsigned long long)ticks, (unsigned long long)window_ms);
			return;
		}
		if (ticks > 24) {	/* a loaded host coalesces ticks, it never adds any */
			KT_FAIL(t, "window %d: %llu ticks in %llu ms: the LAPIC timer runs fast or "
				"the TSC slow against their calibration", i + 1,
				(unsigned long long)ticks, (unsigned long long)window_ms);
			return;
		}
		len += (size_t)scnprintf(seen + len, sizeof(seen) - len, " %llu",
					 (unsigned long long)ticks);
	}
	/*
	 * Only too few ticks in every window. A slow timer does that, but so does a loaded host:
	 * a tick that falls due while QEMU's vCPU thread or its main-loop thread (which fires
	 * the LAPIC timer) waits for a host core merges with the next one. Measured at load 43-65
	 * with the right rates: windows of 11-20 ticks, every one with the vCPU stalled 7-39 ms
	 * at least once, so no window is clean enough to blame the timer. Reported, not failed.
	 */
	KT_SKIP(t, "too few ticks per 20-tick window (%u vCPUs, TSC %llu kHz):%s", nr_cpus_online(),
		(unsigned long long)cycles_khz, seen);
}

static const struct ktest_case smp_cases[] = {
	KTEST_CASE(smp_call_all_nowait_runs_once_each),
	KTEST_CASE(smp_call_single_nowait_flood),
	KTEST_CASE(smp_call_single_offline_refused),
	KTEST_CASE(smp_call_wait_round_trip),
	KTEST_CASE(smp_call_all_every_cpu_at_once),
	KTEST_CASE(smp_run_on_all_once_per_cpu_irqs_on),
	KTEST_CASE(trap_recover_page_fault_every_cpu),
	KTEST_CASE(trap_recover_nested_innermost_first),
	KTEST_CASE(timer_tick_hook_every_cpu),
	KTEST_CASE(timer_remove_tick_hook_waits_for_running_hook),
	KTEST_CASE(timer_add_tick_hook_full_table_refused),
	KTEST_CASE(timer_tsc_and_lapic_agree),
};
KTEST_SUITE(smp, smp_cases);
