/*
 * Boot tests: the foundation every other suite stands on. Every CPU QEMU was given is online,
 * with a unique APIC ID and its own per-CPU area; each one runs a function sent by IPI and
 * takes timer interrupts. (A CPU exception inside a test is covered by the ktest suite.)
 * The runner passes `expect_cpus=N` with N = QEMU's -smp.
 */
#include "tests/ktest/ktest.h"
#include "kernel/cmdline.h"
#include "kernel/smp.h"
#include "kernel/string.h"
#include "kernel/timer.h"

static unsigned int expect_cpus;
CMDLINE_UINT("expect_cpus", expect_cpus, "CPUs the boot tests expect online (the runner passes -smp)");

/* Per-CPU observations written by the CPUs themselves; each slot by its own CPU only. */
static struct cpu *seen_area[MAX_CPUS];
static unsigned int seen_id[MAX_CPUS];
static unsigned int hits[MAX_CPUS];

/*
 * Every CPU QEMU was given came online: as many as expect_cpus (the runner passes one less
 * when it keeps a CPU from starting on purpose, smp.test_no_sipi=).
 */
static void boot_cpus_online_equals_smp(struct ktest *t)
{
	if (!expect_cpus)
		KT_SKIP(t, "no expect_cpus= on the command line");
	KT_EXPECT_EQ(t, nr_cpus_online(), expect_cpus);
	if (nr_cpus_online() != expect_cpus)
		for (unsigned int c = 0; c < nr_cpus; c++)
			if (!cpu_online(c))
				ktest_printf(t, "cpu%u (APIC id %u) is not online", c,
					     cpu_ptr(c)->arch.apic_id);
}

/* No two online CPUs share an APIC ID, and each CPU's index is its slot in cpu_areas[]. */
static void boot_apic_ids_unique(struct ktest *t)
{
	for_each_online_cpu(a) {
		KT_EXPECT_EQ(t, cpu_ptr(a)->arch.cpu_id, a);
		for (unsigned int b = a + 1; b < nr_cpus; b++)
			if (cpu_online(b) && cpu_ptr(a)->arch.apic_id == cpu_ptr(b)->arch.apic_id)
				KT_FAIL(t, "cpu%u and cpu%u both have APIC id %u", a, b,
					cpu_ptr(a)->arch.apic_id);
	}
}

static void record_area(void *arg)
{
	unsigned int id = arch_cpu_id();

	seen_area[id] = this_cpu();
	seen_id[id] = this_cpu()->arch.cpu_id;
}

/*
 * Each CPU, asked through its own GS base, finds its own area: cpu_ptr(i), self-pointing, and
 * the areas are distinct and do not overlap.
 */
static void boot_percpu_areas_distinct(struct ktest *t)
{
	memset(seen_area, 0, sizeof(seen_area));
	smp_run_on_all(record_area, NULL);
	for_each_online_cpu(c) {
		KT_EXPECT_PTR_EQ(t, seen_area[c], cpu_ptr(c));
		KT_EXPECT_EQ(t, seen_id[c], c);
		KT_EXPECT_PTR_EQ(t, cpu_ptr(c)->arch.self, &cpu_ptr(c)->arch);
	}
	for_each_online_cpu(c) {
		for (unsigned int d = c + 1; d < nr_cpus; d++) {
			uintptr_t x = (uintptr_t)seen_area[c], y = (uintptr_t)seen_area[d];

			if (cpu_online(d) && (x > y ? x - y : y - x) < sizeof(struct cpu))
				KT_FAIL(t, "cpu%u and cpu%u per-CPU areas overlap (%p, %p)", c, d,
					seen_area[c], seen_area[d]);
		}
	}
}

static void count_hit(void *arg)
{
	hits[arch_cpu_id()]++;
}

/* smp_call_function_all(wait) runs the function once on every other CPU, not on the caller. */
static void boot_ipi_call_reaches_every_cpu(struct ktest *t)
{
	unsigned int self = arch_cpu_id();

	memset(hits, 0, sizeof(hits));
	smp_call_function_all(count_hit, NULL, true);
	for_each_online_cpu(c) {
		unsigned int want = c == self ? 0 : 1;

		if (READ_ONCE(hits[c]) != want)
			KT_FAIL(t, "cpu%u ran the IPI function %u times, expected %u", c,
				READ_ONCE(hits[c]), want);
	}
}

static void record_id(void *arg)
{
	*(unsigned int *)arg = arch_cpu_id();
}

/* smp_call_function_single(cpu, wait) runs on exactly that CPU, for every CPU in turn. */
static void boot_ipi_call_single_runs_on_target(struct ktest *t)
{
	for_each_online_cpu(c) {
		unsigned int ran_on = ~0u;

		KT_ASSERT_EQ(t, smp_call_function_single(c, record_id, &ran_on, true), 0);
		if (ran_on != c)
			KT_FAIL(t, "call for cpu%u ran on cpu%u", c, ran_on);
	}
}

/* Every online CPU takes at least 2 timer interrupts within 5 s (timer.hz=100: 500 expected;
 * make test-big's lowest, 4 Hz: 20). */
static void boot_timer_ticks_on_every_cpu(struct ktest *t)
{
	static u64 start[MAX_CPUS];
	unsigned int missing = 0;

	if (!cycles_khz)
		KT_SKIP(t, "the timer is not calibrated");
	for_each_online_cpu(c)
		start[c] = timer_ticks(c);
	for (unsigned int ms = 0; ms < 5000; ms += 10) {
		missing = 0;
		for_each_online_cpu(c)
			missing += timer_ticks(c) < start[c] + 2;
		if (!missing)
			break;
		mdelay(10);
	}
	for_each_online_cpu(c)
		if (timer_ticks(c) < start[c] + 2)
			KT_FAIL(t, "cpu%u: %llu ticks in 5 s", c,
				(unsigned long long)(timer_ticks(c) - start[c]));
	KT_EXPECT_EQ(t, missing, 0u);
}

static const struct ktest_case boot_cases[] = {
	KTEST_CASE(boot_cpus_online_equals_smp),
	KTEST_CASE(boot_apic_ids_unique),
	KTEST_CASE(boot_percpu_areas_distinct),
	KTEST_CASE(boot_ipi_call_reaches_every_cpu),
	KTEST_CASE(boot_ipi_call_single_runs_on_target),
	KTEST_CASE(boot_timer_ticks_on_every_cpu),
};
KTEST_SUITE(boot, boot_cases);
