/*
 * `bench=pcp`: order-0 alloc+free pairs per second on 1, 2, 4, ... CPUs with per-CPU lists
 * on and off, and single-CPU cycles per pair in the boot's lock model (pcp.lock=) and
 * through the buddy lists alone. Poisoning off while measuring; CONFIG_DEBUG_VM checks stay
 * as built.
 */
#include "tests/bench/bench.h"
#include "kernel/cmdline.h"
#include "kernel/printk.h"
#include "kernel/smp.h"
#include "kernel/timer.h"
#include "kernel/string.h"
#include "mm/mm_test.h"

static unsigned int bench_pairs = 20000;
CMDLINE_UINT("pcp.bench_pairs", bench_pairs, "bench=pcp: alloc+free pairs per CPU per run");

/* One side of an alloc+free pair; a failed allocation has nothing to free. */
static inline void free_if_allocated(struct page *page)
{
	if (likely(page))
		__free_pages(page, 0);
}

struct tput {
	unsigned int ncpu;
	int arrived;			/* barrier (atomic) */
	u64 start[MAX_CPUS], end[MAX_CPUS];	/* TSC (synchronised across CPUs) */
};

/* Every CPU below ncpu: wait for the others, then time bench_pairs order-0 pairs. */
static void tput_fn(void *arg)
{
	struct tput *t = arg;
	unsigned int cpu = arch_cpu_id();
	u64 start;

	if (cpu >= t->ncpu)
		return;
	__atomic_add_fetch(&t->arrived, 1, __ATOMIC_ACQ_REL);
	while (smp_load_acquire(&t->arrived) < (int)t->ncpu)
		arch_cpu_relax();
	start = arch_cycles();
	for (unsigned int i = 0; i < bench_pairs; i++)
		free_if_allocated(alloc_pages(GFP_KERNEL, 0));
	t->end[cpu] = arch_cycles();
	t->start[cpu] = start;
}

/*
 * Pairs per second with ncpu CPUs working: all pairs over the wall time from the first
 * CPU's start to the last CPU's end (not the slowest CPU's own time: vCPUs on few host
 * cores take turns, and each one's own time would leave the waiting out).
 */
static u64 throughput(unsigned int ncpu)
{
	static struct tput t;
	u64 first = ~0ull, last = 0;

	memset(&t, 0, sizeof(t));
	t.ncpu = ncpu;
	smp_run_on_all(tput_fn, &t);
	for (unsigned int c = 0; c < ncpu; c++) {
		first = MIN(first, t.start[c]);
		last = MAX(last, t.end[c]);
	}
	return (u64)ncpu * bench_pairs * cycles_khz * 1000 / MAX(last - first, 1ull);
}

/* Cycles per order-0 pair on this CPU alone: best of 3 runs of bench_pairs. */
static u64 pair_cycles(void)
{
	u64 best = ~0ull;

	for (int r = 0; r < 3; r++) {
		u64 start = arch_cycles();

		for (unsigned int i = 0; i < bench_pairs; i++)
			free_if_allocated(alloc_pages(GFP_KERNEL, 0));
		best = MIN(best, (arch_cycles() - start) / bench_pairs);
	}
	return best;
}

/* The lists on or off (pcp_enabled: a bypass, set here with every list empty). */
static void bench_set(bool pcp_on)
{
	drain_all_pages_machine(mm_machine());
	pcp_enabled = pcp_on;
}

/* Single-CPU cycles per pair with the lists, then through the buddy lists alone. */
static void bench_pair_costs(const char *model)
{
	char extra[64];
	u64 c;

	bench_set(true);
	c = pair_cycles() * 1000;
	printk("pcp bench: 1 CPU, %-7s: %llu cycles per order-0 alloc+free\n", model,
	       (unsigned long long)(c / 1000));
	snprintf(extra, sizeof(extra), "\"model\":\"%s\"", model);
	bench_emit("pcp", "pair_cycles", "cycles", false, &c, 1, extra);
	bench_set(false);
	c = pair_cycles() * 1000;
	printk("pcp bench: 1 CPU, buddy lists only: %llu cycles per pair\n",
	       (unsigned long long)(c / 1000));
	bench_emit("pcp", "pair_cycles", "cycles", false, &c, 1, "\"model\":\"buddy\"");
}

/* Pairs per second on 1, 2, 4, ... CPUs (up to those online), pcp on and off. */
static void bench_throughput(const char *model)
{
	static const unsigned int counts[] = { 1, 2, 4, 8, 16, 40, 64, 128, 255 };
	char extra[64];

	for (unsigned int i = 0; i < ARRAY_SIZE(counts) && counts[i] <= nr_cpus_online(); i++) {
		u64 on, off;

		bench_set(true);
		on = throughput(counts[i]);
		bench_set(false);
		off = throughput(counts[i]);
		printk("pcp bench: %3u CPUs: %9llu pairs/s with pcp, %9llu without, ratio %llu.%02llu\n",
		       counts[i], (unsigned long long)on, (unsigned long long)off,
		       (unsigned long long)(on / MAX(off, 1ull)),
		       (unsigned long long)(on * 100 / MAX(off, 1ull) % 100));
		snprintf(extra, sizeof(extra), "\"cpus\":%u,\"pcp\":true,\"model\":\"%s\"",
			 counts[i], model);
		on *= 1000;
		bench_emit("pcp", "pairs_per_s", "pairs/s", true, &on, 1, extra);
		snprintf(extra, sizeof(extra), "\"cpus\":%u,\"pcp\":false", counts[i]);
		off *= 1000;
		bench_emit("pcp", "pairs_per_s", "pairs/s", true, &off, 1, extra);
	}
}

static void pcp_bench(void)
{
	struct mm_machine *m = mm_machine();
	const char *model = pcp_lock_model_name(m->pcp_lock);
	bool saved_on = pcp_enabled, poison = m->node[0]->poison;

	for (unsigned int nid = 0; nid < m->nr_nodes; nid++)
		m->node[nid]->poison = false;
	printk("pcp bench: %u pairs per CPU, DEBUG_VM %d, %u CPUs online, model %s\n",
	       bench_pairs, CONFIG_DEBUG_VM, nr_cpus_online(), model);
	bench_pair_costs(model);
	bench_throughput(model);
	bench_set(saved_on);
	for (unsigned int nid = 0; nid < m->nr_nodes; nid++)
		m->node[nid]->poison = poison;
}
BENCH_REGISTER(pcp, pcp_bench, "order-0 alloc+free: pairs/s per CPU count with pcp on/off, "
	       "cycles per pair in this boot's lock model");
