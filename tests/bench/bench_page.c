/*
 * `bench=page` and `bench=scaling`: the cost of an alloc+free pair on one CPU (Jesper
 * Brouer's page_bench, per order) and alloc+free throughput as CPUs are added, with
 * zone->lock contention, in the boot's PCP lock model (pcp.lock=: tests/bench/bench.py boots
 * once per model), and with the lists off. Under QEMU -icount shift=0 one guest instruction
 * is one nanosecond, so the ns figures are instruction counts (bench.py labels them).
 */
#include "tests/bench/bench.h"
#include "kernel/cmdline.h"
#include "kernel/printk.h"
#include "kernel/smp.h"
#include "kernel/timer.h"
#include "mm/mm.h"
#include "mm/mm_test.h"

#define SCALING_HELD 8		/* pages each CPU holds between its allocs and frees */

static unsigned int page_bench_loops = 20000, scaling_pairs = 20000;
static char scaling_cpus[64] = "1,2,4,8,16,24,32,40", scaling_models[64] = "all";
CMDLINE_UINT("bench.page_loops", page_bench_loops, "page bench: alloc+free pairs per measurement (window)");
CMDLINE_UINT("bench.scaling_pairs", scaling_pairs, "scaling bench: alloc+free pairs per CPU per window");
CMDLINE_STRING("bench.scaling_cpus", scaling_cpus, "scaling bench: CPU counts, e.g. 1,40 (default 1,2,4,...,40)");
CMDLINE_STRING("bench.scaling_models", scaling_models, "scaling bench: which of this boot's model (pcp.lock=) and nopcp to run: e.g. trylock,nopcp, or all");

static bool page_nopcp = true;
CMDLINE_BOOL("bench.page_nopcp", page_nopcp, "page bench: also measure with the lists off (pcp.enable=0)");

/* The lists on or off (pcp_enabled: a bypass, switched here with every list empty). */
static void pcp_set_enabled(bool enabled)
{
	drain_all_pages_machine(mm_machine());
	WRITE_ONCE(pcp_enabled, enabled);
}

static const char *boot_model(void)
{
	return pcp_lock_model_name(mm_machine()->pcp_lock);
}

/* ---- page_bench: one CPU ---- */

/* Pairs that always hit the per-CPU list: the page freed is the next one allocated. A failed
 * allocation (there is nothing to free) still counts as a pair: it is rare, and said. */
static u64 pairs_hot(unsigned int order, unsigned int loops)
{
	struct page *p = alloc_pages(GFP_KERNEL, order);
	unsigned int failed = 0;
	u64 t0;

	if (!p)
		return 0;
	__free_pages(p, order);
	t0 = arch_cycles();
	for (unsigned int i = 0; i < loops; i++) {
		p = alloc_pages(GFP_KERNEL | __GFP_NOWARN, order);
		if (likely(p))
			__free_pages(p, order);
		else
			failed++;
	}
	t0 = arch_cycles() - t0;
	if (failed)
		printk("page_bench: order %u: %u of %u allocations failed\n", order, failed, loops);
	return t0;
}

/* Allocate 4 x batch blocks, then free them: lists refill and spill every batch pages. */
static u64 pairs_batched(unsigned int order, unsigned int loops)
{
	static struct page *held[256];
	unsigned int batch = MIN(4u * (unsigned int)READ_ONCE(mm_node()->node_zones[ZONE_DMA32].pageset_batch),
				 (unsigned int)ARRAY_SIZE(held));
	u64 t0 = arch_cycles();

	batch = MAX(batch, 4u);
	for (unsigned int done = 0; done < loops; done += batch) {
		for (unsigned int i = 0; i < batch; i++)
			held[i] = alloc_pages(GFP_KERNEL, order);
		for (unsigned int i = 0; i < batch; i++)
			if (held[i])
				__free_pages(held[i], order);
	}
	return arch_cycles() - t0;
}

/* One page_bench figure: the same measurement in bench_windows() windows, one sample each. */
static void page_bench_point(const char *model, const char *what, unsigned int order,
			     u64 (*pairs)(unsigned int order, unsigned int loops), unsigned int loops)
{
	unsigned int nwin = bench_windows();
	u64 ns_milli[BENCH_MAX_WINDOWS], cyc_milli[BENCH_MAX_WINDOWS];
	char metric[64], extra[96];

	for (unsigned int w = 0; w < nwin; w++) {
		u64 cycles = pairs(order, loops);

		ns_milli[w] = cycles_to_ns(cycles) * 1000 / loops;
		cyc_milli[w] = cycles * 1000 / loops;
	}
	printk("page_bench: %-8s %-10s order %u: %6llu.%01llu cycles %6llu.%01llu ns per alloc+free pair"
	       " (mean of %u windows, +- %llu.%02llu%%)\n", model, what, order,
	       (unsigned long long)(bench_mean(cyc_milli, nwin) / 1000),
	       (unsigned long long)(bench_mean(cyc_milli, nwin) % 1000 / 100),
	       (unsigned long long)(bench_mean(ns_milli, nwin) / 1000),
	       (unsigned long long)(bench_mean(ns_milli, nwin) % 1000 / 100), nwin,
	       (unsigned long long)(bench_rel_stddev_centi(ns_milli, nwin) / 100),
	       (unsigned long long)(bench_rel_stddev_centi(ns_milli, nwin) % 100));
	snprintf(extra, sizeof(extra), "\"model\":\"%s\",\"case\":\"%s\",\"order\":%u", model, what, order);
	snprintf(metric, sizeof(metric), "%s.%s.o%u.cycles", model, what, order);
	bench_emit("page", metric, "cycles/pair", false, cyc_milli, nwin, extra);
	snprintf(metric, sizeof(metric), "%s.%s.o%u.ns", model, what, order);
	bench_emit("page", metric, "ns/pair", false, ns_milli, nwin, extra);
}

static void page_bench(void)
{
	bool saved = pcp_enabled;
	unsigned int loops = MAX(page_bench_loops, 100u);

	pcp_set_enabled(true);
	for (unsigned int order = 0; order <= PAGE_ALLOC_COSTLY_ORDER; order++) {
		page_bench_point(boot_model(), "pcp_hit", order, pairs_hot, loops);
		page_bench_point(boot_model(), "pcp_batch", order, pairs_batched, loops);
	}
	pcp_set_enabled(false);
	for (unsigned int order = 0; page_nopcp && order <= PAGE_ALLOC_COSTLY_ORDER; order++)
		page_bench_point("nopcp", "buddy", order, pairs_hot, loops);
	pcp_set_enabled(saved);
}
BENCH_REGISTER(page, page_bench, "page_bench: one CPU, cost of an alloc+free pair per order, this boot's PCP model and without PCP");

/* ---- scaling: throughput with n CPUs ---- */

struct scaling_run {
	unsigned int cpus, pairs;
	u64 start[MAX_CPUS], end[MAX_CPUS];
	u64 failures;
};

static void scaling_cpu(void *arg)
{
	struct scaling_run *run = arg;
	unsigned int cpu = arch_cpu_id();
	struct page *held[SCALING_HELD];

	if (cpu >= run->cpus)
		return;
	run->start[cpu] = arch_cycles();
	for (unsigned int done = 0; done < run->pairs; done += SCALING_HELD) {
		for (unsigned int i = 0; i < SCALING_HELD; i++)
			if (!(held[i] = alloc_pages(GFP_KERNEL | __GFP_NOWARN, 0)))
				__atomic_fetch_add(&run->failures, 1, __ATOMIC_RELAXED);
		for (unsigned int i = 0; i < SCALING_HELD; i++)
			if (held[i])
				__free_pages(held[i], 0);
	}
	run->end[cpu] = arch_cycles();
}

static u64 zone_lock_contended(void)
{
	struct mm_machine *m = mm_machine();
	u64 sum = 0;

	for (unsigned int nid = 0; nid < m->nr_nodes; nid++)
		for (int z = 0; z < MAX_NR_ZONES; z++)
			sum += READ_ONCE(lock_stat(&m->node[nid]->node_zones[z].lock)->contended);
	return sum;
}

/* One point: pairs per second (x1000) over the span from the first start to the last end. */
static u64 scaling_point(unsigned int cpus, u64 *contended)
{
	static struct scaling_run run;
	u64 first = ~0ull, last = 0, c0 = zone_lock_contended();

	run = (struct scaling_run){ .cpus = cpus, .pairs = scaling_pairs };
	smp_run_on_all(scaling_cpu, &run);
	for (unsigned int c = 0; c < cpus; c++) {
		first = MIN(first, run.start[c]);
		last = MAX(last, run.end[c]);
	}
	*contended = zone_lock_contended() - c0;
	return (u64)cpus * scaling_pairs * 1000000ull / MAX(cycles_to_us(last - first), 1ull) * 1000;
}

static void scaling_series(const char *name, bool enabled)
{
	static const unsigned int points[] = { 1, 2, 4, 8, 16, 24, 32, 40 };
	unsigned int nwin = bench_windows();
	u64 rate[BENCH_MAX_WINDOWS], contended[BENCH_MAX_WINDOWS];
	char metric[48], extra[128], cpus[12];

	if (!bench_list_has(scaling_models, name))
		return;
	pcp_set_enabled(enabled);
	for (unsigned int i = 0; i < ARRAY_SIZE(points) && points[i] <= nr_cpus_online(); i++) {
		snprintf(cpus, sizeof(cpus), "%u", points[i]);
		if (!bench_list_has(scaling_cpus, cpus))
			continue;
		for (unsigned int w = 0; w < nwin; w++)
			rate[w] = scaling_point(points[i], &contended[w]);
		printk("scaling: %-8s %2u CPUs: %9llu pairs/s (+- %llu.%02llu%%, %u windows)  "
		       "zone->lock contended %llu per window\n", name, points[i],
		       (unsigned long long)(bench_mean(rate, nwin) / 1000),
		       (unsigned long long)(bench_rel_stddev_centi(rate, nwin) / 100),
		       (unsigned long long)(bench_rel_stddev_centi(rate, nwin) % 100), nwin,
		       (unsigned long long)bench_mean(contended, nwin));
		snprintf(metric, sizeof(metric), "%s.cpus%u", name, points[i]);
		snprintf(extra, sizeof(extra), "\"model\":\"%s\",\"cpus\":%u,\"zone_lock_contended\":%llu",
			 name, points[i], (unsigned long long)bench_mean(contended, nwin));
		bench_emit("scaling", metric, "pairs/s", true, rate, nwin, extra);
	}
}

static void scaling_bench(void)
{
	bool saved = pcp_enabled;

	scaling_series(boot_model(), true);
	scaling_series("nopcp", false);
	pcp_set_enabled(saved);
}
BENCH_REGISTER(scaling, scaling_bench, "alloc+free pairs per second on 1..40 CPUs, this boot's PCP model and without PCP");
