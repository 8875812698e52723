/*
 * `bench=meminit`: the deferred memory-map init (mm/mm_init.c) on 1, 2, 4, ... CPUs within
 * one boot. A private node over memory taken from the kernel is built deferred and finished
 * by the first N CPUs, again and again, the CPU counts interleaved round by round so that a
 * busy host slows them all alike. After a warm-up round the host has faulted in the node's
 * memory map, so what is timed is the guest's own work (the boot-time figure, first touch
 * included, is the `mm: deferred init:` line). Not a test: tests/kernel/mm_deferred.c.
 */
#include "tests/bench/bench.h"
#include "kernel/cmdline.h"
#include "kernel/printk.h"
#include "kernel/smp.h"
#include "kernel/timer.h"
#include "kernel/bootinfo.h"
#include "mm/mm_test.h"
#include "mm/memblock.h"

#define MEMINIT_MAX_BLOCKS 2048		/* 8 GiB of MAX_ORDER blocks */
#define MEMINIT_MAX_ROUNDS 16
#define MEMINIT_MAX_POINTS 10

static unsigned int meminit_mb = 1024;
CMDLINE_UINT("meminit.mb", meminit_mb, "meminit bench: MiB of memory for the private node");
static unsigned int meminit_rounds = 7;
CMDLINE_UINT("meminit.rounds", meminit_rounds, "meminit bench: timed rounds per CPU count");
static unsigned int meminit_warmup;
CMDLINE_UINT("meminit.warmup", meminit_warmup, "meminit bench: CPUs of the warm-up round, the "
	     "first write of the node's memory map (0: all)");

static struct page *mi_backing[MEMINIT_MAX_BLOCKS];
static struct mem_region mi_map[MEMINIT_MAX_BLOCKS];
static unsigned int mi_blocks;
static struct memblock mi_mb;
static struct pglist_data mi_node;

struct mi_run {
	unsigned int workers;		/* CPUs 0..workers-1 take chunks */
};

static void mi_worker(void *arg)
{
	const struct mi_run *r = arg;

	if (arch_cpu_id() < r->workers)
		deferred_init_memmap(&mi_node);
}

/* One build-and-finish of the node on `workers` CPUs; returns the cycles of the finish, or
 * 0 if the node could not be built or came out with the wrong free count. */
static u64 mi_round(unsigned int workers, unsigned long *pages)
{
	struct mi_run r = { workers };
	unsigned long total;
	u64 t0, t1;

	memblock_init(&mi_mb, ~0ull);
	memblock_add_mmap(&mi_mb, mi_map, mi_blocks);
	memblock_set_bottom_up(&mi_mb, mi_map[0].base);	/* the same memory map every round */
	if (pgdat_init_deferred(&mi_node, &mi_mb, "meminit", nr_cpu_ids,
				pcp_lock_default))
		return 0;
	total = node_free_pages(&mi_node) + node_deferred_pages(&mi_node);
	*pages = node_deferred_pages(&mi_node);
	t0 = arch_cycles();
	smp_run_on_all(mi_worker, &r);
	deferred_init_done(mi_node.machine);
	t1 = arch_cycles();
	if (node_free_pages(&mi_node) != total) {
		printk("bench meminit: %lu pages free after the init, %lu expected\n",
		       node_free_pages(&mi_node), total);
		t1 = t0;
	}
	pgdat_destroy(&mi_node);
	return t1 - t0;
}

/* Take meminit.mb of MAX_ORDER blocks from the kernel, as a memory map, lowest first. */
static void mi_take_memory(void)
{
	unsigned int want = MIN(meminit_mb / 4, MEMINIT_MAX_BLOCKS);

	for (mi_blocks = 0; mi_blocks < want; mi_blocks++) {
		struct page *p = alloc_pages(GFP_KERNEL | __GFP_NOWARN, MAX_ORDER);

		if (!p)
			break;
		mi_backing[mi_blocks] = p;
		mi_map[mi_blocks] = (struct mem_region){ page_to_phys(p),
							 MAX_ORDER_NR_PAGES << PAGE_SHIFT,
							 MEM_USABLE };
	}
	for (unsigned int i = 1; i < mi_blocks; i++)	/* insertion sort by address */
		for (unsigned int j = i; j && mi_map[j - 1].base > mi_map[j].base; j--) {
			struct mem_region t = mi_map[j];

			mi_map[j] = mi_map[j - 1];
			mi_map[j - 1] = t;
		}
}

/* The median of n samples (n <= MEMINIT_MAX_ROUNDS), by sorting a copy. */
static u64 mi_median(const u64 *v, unsigned int n)
{
	u64 s[MEMINIT_MAX_ROUNDS];

	for (unsigned int i = 0; i < n; i++) {
		unsigned int j = i;

		for (; j && s[j - 1] > v[i]; j--)
			s[j] = s[j - 1];
		s[j] = v[i];
	}
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

static void mi_report(unsigned int workers, const u64 *ms_milli, unsigned int n,
		      unsigned long pages, u64 base_best, u64 base_median)
{
	u64 best = ~0ull, worst = 0, med = mi_median(ms_milli, n);
	char metric[32], extra[96];

	for (unsigned int i = 0; i < n; i++) {
		best = MIN(best, ms_milli[i]);
		worst = MAX(worst, ms_milli[i]);
	}
	printk("bench meminit: %2u CPUs: %lu pages, median %lu.%03lu ms (best %lu.%03lu, worst "
	       "%lu.%03lu; +-%lu.%02lu%%); speed-up over 1 CPU %lu.%02lux (medians), %lu.%02lux "
	       "(best of %u)\n",
	       workers, pages, med / 1000, med % 1000, best / 1000, best % 1000, worst / 1000,
	       worst % 1000, bench_rel_stddev_centi(ms_milli, n) / 100,
	       bench_rel_stddev_centi(ms_milli, n) % 100, base_median / med,
	       (base_median * 100 / med) % 100, base_best / best, (base_best * 100 / best) % 100,
	       n);
	snprintf(metric, sizeof(metric), "deferred_ms-%u", workers);
	snprintf(extra, sizeof(extra), "\"cpus\":%u,\"pages\":%lu", workers, pages);
	bench_emit("meminit", metric, "ms", false, ms_milli, n, extra);
}

static void meminit_bench(void)
{
	static u64 ms[MEMINIT_MAX_POINTS][MEMINIT_MAX_ROUNDS];
	unsigned int points[MEMINIT_MAX_POINTS], np = 0, rounds = MIN(meminit_rounds,
								      MEMINIT_MAX_ROUNDS);
	unsigned long pages = 0;
	u64 base_best = ~0ull, warm_us;
	unsigned int warm;

	for (unsigned int w = 1; w < nr_cpus_online() && np + 1 < MEMINIT_MAX_POINTS; w *= 2)
		points[np++] = w;
	points[np++] = nr_cpus_online();
	mi_take_memory();
	printk("bench meminit: a %u MiB private node, %u rounds of %u CPU counts, interleaved\n",
	       mi_blocks * 4, rounds, np);
	warm = meminit_warmup ? MIN(meminit_warmup, nr_cpus_online()) : nr_cpus_online();
	warm_us = mi_blocks ? cycles_to_us(mi_round(warm, &pages)) : 0;	/* first writes */
	if (!warm_us)
		printk("bench meminit: could not build the private node\n");
	else
		printk("bench meminit: warm-up, the first write of the node's memory map: %lu pages "
		       "in %lu.%03lu ms on %u CPUs\n", pages, (unsigned long)(warm_us / 1000),
		       (unsigned long)(warm_us % 1000), warm);
	for (unsigned int r = 0; r < rounds && mi_blocks; r++)
		for (unsigned int k = 0; k < np; k++) {
			unsigned int i = (k + r) % np;	/* rotate the order each round */

			ms[i][r] = cycles_to_us(mi_round(points[i], &pages));
		}
	for (unsigned int r = 0; r < rounds; r++)
		base_best = MIN(base_best, ms[0][r]);
	for (unsigned int i = 0; i < np && mi_blocks; i++)
		mi_report(points[i], ms[i], rounds, pages, base_best, mi_median(ms[0], rounds));
	for (unsigned int i = 0; i < mi_blocks; i++)
		__free_pages(mi_backing[i], MAX_ORDER);
}
BENCH_REGISTER(meminit, meminit_bench,
	       "deferred memory-map init of a private node on 1, 2, 4, ... CPUs (meminit.mb, "
	       "meminit.rounds)");
