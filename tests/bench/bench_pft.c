/*
 * `bench=pft`: a Page Fault Test (Christoph Lameter's pft, as mmtests ran it). For each CPU
 * count, every CPU faults in its share of one anonymous region of one address space: each
 * fault allocates a zeroed MOVABLE order-0 page and maps it. Reported per iteration:
 *   faults/sec = pages / wall time (first start to last end), the aggregate rate;
 *   faults/cpu = pages / CPU time (the sum of every CPU's own time), per-CPU efficiency.
 * Repeated pft.iterations times per point, in the boot's PCP lock model (pcp.lock=: bench.py
 * boots once per model); tests/bench summarises them as mmtests does (harmonic mean, stddev,
 * CoeffVar) and compares the models. With pft.c2c=1 each iteration is a c2c window
 * (tests/c2c, docs/c2c.md): under the plugin the coherence model times every CPU's faults
 * on a modelled machine (tests/c2c/run.py's PFT table); without it, it costs four NOPs.
 */
#include "tests/bench/bench.h"
#include "tests/bench/c2c.h"
#include "kernel/cmdline.h"
#include "kernel/printk.h"
#include "kernel/smp.h"
#include "kernel/timer.h"
#include "mm/mm.h"
#include "mm/vm.h"
#include "kernel/string.h"

#define PFT_BASE (1ull << 33)
#define PFT_MAX_ITER 64

static unsigned int pft_size_mb = 128, pft_iterations = 30, pft_c2c;
static char pft_cpus[64] = "1,2,4,8,16,24,32,40";
CMDLINE_UINT("pft.size_mb", pft_size_mb, "pft bench: size of the region faulted in per iteration (MiB)");
CMDLINE_UINT("pft.iterations", pft_iterations, "pft bench: iterations per CPU count (mmtests: 30)");
CMDLINE_STRING("pft.cpus", pft_cpus, "pft bench: CPU counts (mmtests on 8 CPUs: 1,3,5,7,8)");
CMDLINE_UINT("pft.c2c", pft_c2c, "pft bench: each iteration in a c2c window, for the coherence model (tests/c2c)");

struct pft_run {
	struct mm_struct *mm;
	unsigned int cpus;
	u64 pages_per_cpu;
	u64 start[MAX_CPUS], end[MAX_CPUS];
	u64 errors;
};

static void pft_cpu(void *arg)
{
	struct pft_run *run = arg;
	unsigned int cpu = arch_cpu_id();
	u64 base = PFT_BASE + (u64)cpu * run->pages_per_cpu * PAGE_SIZE;

	c2c_cpu_begin();	/* every CPU, in a window or not (then a NOP) */
	if (cpu >= run->cpus) {
		c2c_cpu_end();
		return;
	}
	run->start[cpu] = arch_cycles();
	for (u64 i = 0; i < run->pages_per_cpu; i++)
		if (handle_mm_fault(run->mm, base + i * PAGE_SIZE))
			__atomic_fetch_add(&run->errors, 1, __ATOMIC_RELAXED);
	run->end[cpu] = arch_cycles();
	c2c_cpu_end();
}

/* One iteration: returns 0 and faults/sec and faults/cpu (x1000), or -1 on failure. */
static int pft_iteration(unsigned int cpus, u64 *per_sec, u64 *per_cpu)
{
	static struct pft_run run;
	u64 pages = ((u64)pft_size_mb << 20) >> PAGE_SHIFT, first = ~0ull, last = 0, cpu_us = 0;

	run = (struct pft_run){ .cpus = cpus, .pages_per_cpu = pages / cpus };
	if (!(run.mm = mm_create(mm_node())) ||
	    mm_mmap_anon(run.mm, PFT_BASE, run.pages_per_cpu * cpus * PAGE_SIZE, true, false, false)) {
		if (run.mm)
			mm_destroy(run.mm);
		return -1;
	}
	if (pft_c2c) {
		char json[128];

		snprintf(json, sizeof(json), "\"model\":\"%s\",\"threads\":%u,\"op\":\"fault\",\"ops\":%llu",
			 pcp_lock_model_name(mm_machine()->pcp_lock), cpus,
			 (unsigned long long)(run.pages_per_cpu * cpus));
		c2c_window("pft", json, pft_cpu, &run);
	} else {
		smp_run_on_all(pft_cpu, &run);
	}
	for (unsigned int c = 0; c < cpus; c++) {
		first = MIN(first, run.start[c]);
		last = MAX(last, run.end[c]);
		cpu_us += cycles_to_us(run.end[c] - run.start[c]);
	}
	pages = run.pages_per_cpu * cpus;
	*per_sec = pages * 1000000ull * 1000 / MAX(cycles_to_us(last - first), 1ull);
	*per_cpu = pages * 1000000ull * 1000 / MAX(cpu_us, 1ull);
	mm_destroy(run.mm);
	return run.errors ? -1 : 0;
}

static void pft_point(const char *model, unsigned int cpus)
{
	static u64 per_sec[PFT_MAX_ITER], per_cpu[PFT_MAX_ITER];
	unsigned int n = CLAMP(pft_iterations, 1u, (unsigned int)PFT_MAX_ITER), ok = 0;
	char metric[48], extra[64];

	for (unsigned int i = 0; i < n; i++)
		ok += pft_iteration(cpus, &per_sec[ok], &per_cpu[ok]) == 0;
	printk("pft: %-8s %2u CPUs: %9llu faults/sec %9llu faults/cpu (mean of %u, +- %llu.%02llu%%)\n",
	       model, cpus, (unsigned long long)(bench_mean(per_sec, ok) / 1000),
	       (unsigned long long)(bench_mean(per_cpu, ok) / 1000), ok,
	       (unsigned long long)bench_rel_stddev_centi(per_sec, ok) / 100,
	       (unsigned long long)bench_rel_stddev_centi(per_sec, ok) % 100);
	snprintf(extra, sizeof(extra), "\"model\":\"%s\",\"cpus\":%u", model, cpus);
	snprintf(metric, sizeof(metric), "%s.faults/sec-%u", model, cpus);
	bench_emit("pft", metric, "faults/s", true, per_sec, ok, extra);
	snprintf(metric, sizeof(metric), "%s.faults/cpu-%u", model, cpus);
	bench_emit("pft", metric, "faults/cpu-s", true, per_cpu, ok, extra);
}

static void pft_bench(void)
{
	const char *model = pcp_lock_model_name(mm_machine()->pcp_lock);
	char n[12];

	for (unsigned int cpus = 1; cpus <= nr_cpus_online(); cpus++) {
		snprintf(n, sizeof(n), "%u", cpus);
		if (bench_list_has(pft_cpus, n))
			pft_point(model, cpus);
	}
}
BENCH_REGISTER(pft, pft_bench, "page fault test: faults/sec and faults/cpu per CPU count, this boot's PCP model");
