/*
 * `bench=pcp_cost`: what the per-CPU lists cost as CPUs grow, on the kernel's own node: per
 * zone, high and batch as sized for the CPUs online, how many pages all lists together may
 * hold (sum of high) against the zone's size and watermarks, then drain_all_pages() timed on
 * lists filled by every CPU and on empty ones, and how many CPUs a drain touches. Numbers, not
 * a test: make test-big prints them; docs/pcp.md explains them.
 */
#include "tests/bench/bench.h"
#include "kernel/printk.h"
#include "kernel/smp.h"
#include "kernel/timer.h"
#include "kernel/string.h"
#include "mm/mm_test.h"

/* Linux's per-CPU high at percpu_pagelist_high_fraction = 8: v6.7 auto-tuning's high_max. */
static unsigned long high_max_v67(const struct zone *zone, unsigned int cpus)
{
	return MAX(zone->managed_pages / 8 / MAX(cpus, 1u), 4ul * (unsigned long)zone->pageset_batch);
}

/* One zone's sizing line and its machine-readable twin (tests/big_report.py reads PCPCOST). */
static void report_zone(struct zone *zone, unsigned int cpus)
{
	unsigned long low = zone->_watermark[WMARK_LOW], sum = (unsigned long)zone->pageset_high * cpus;
	unsigned long hmax = high_max_v67(zone, cpus);

	printk("pcp_cost: %-6s %8lu pages, watermarks min %lu low %lu high %lu; batch %d, high %d "
	       "per CPU (low / %u CPUs = %lu, floor 4 batches %d): all lists may hold %lu pages = "
	       "%lu.%lu%% of the zone, %lu.%02lu x its low watermark\n", zone->name,
	       zone->managed_pages, zone->_watermark[WMARK_MIN], low, zone->_watermark[WMARK_HIGH],
	       zone->pageset_batch, zone->pageset_high, cpus, low / cpus, 4 * zone->pageset_batch,
	       sum, sum * 100 / zone->managed_pages, sum * 1000 / zone->managed_pages % 10,
	       sum / MAX(low, 1ul), sum * 100 / MAX(low, 1ul) % 100);
	printk("PCPCOST {\"cpus\":%u,\"zone\":\"%s\",\"managed\":%lu,\"min\":%lu,\"low\":%lu,"
	       "\"high_wmark\":%lu,\"batch\":%d,\"high\":%d,\"sum_high\":%lu,\"high_max_v67\":%lu,"
	       "\"sum_high_max_v67\":%lu}\n", cpus, zone->name, zone->managed_pages,
	       zone->_watermark[WMARK_MIN], low, zone->_watermark[WMARK_HIGH], zone->pageset_batch,
	       zone->pageset_high, sum, hmax, hmax * cpus);
}

/* Each CPU fills its lists of DMA32 and NORMAL: allocate `high` pages of each, free them all.
 * The frees spill at high, so each list ends between high - batch and high pages. */
static void fill_fn(void *arg)
{
	static const gfp_t gfps[] = { GFP_DMA32, GFP_KERNEL };

	for (unsigned int i = 0; i < ARRAY_SIZE(gfps); i++) {
		struct zone *zone = &mm_node()->node_zones[i ? ZONE_NORMAL : ZONE_DMA32];
		struct page *page, *tmp;
		struct list_head held = LIST_HEAD_INIT(held);

		for (int n = 0; zone_populated(zone) && n < zone->pageset_high; n++) {
			page = alloc_pages(gfps[i] | __GFP_NOWARN, 0);
			if (!page)
				break;
			list_add(&page->lru, &held);
		}
		list_for_each_entry_safe(page, tmp, &held, lru)
			__free_pages(page, 0);
	}
}

static unsigned int cpus_with_pages(unsigned long *pages)
{
	unsigned int cpus = 0;

	*pages = 0;
	for (unsigned int cpu = 0; cpu < nr_cpus; cpu++) {
		unsigned long n = 0;

		for (int z = 0; z < MAX_NR_ZONES; z++)
			if (mm_node()->node_zones[z].pcp)
				n += (unsigned long)READ_ONCE(mm_node()->node_zones[z].pcp[cpu].count);
		cpus += n > 0;
		*pages += n;
	}
	return cpus;
}

/* drain_all_pages_machine(mm_machine()) on CPU 0 with the other CPUs idle: microseconds. */
static u64 timed_drain(void)
{
	u64 t0 = arch_cycles();

	drain_all_pages_machine(mm_machine());
	return cycles_to_us(arch_cycles() - t0);
}

/* Fill every CPU's lists, then drain them all from here, in the boot's lock model. */
static void measure_drain(unsigned int online)
{
	const char *model = pcp_lock_model_name(mm_machine()->pcp_lock);
	struct pcp_stats before, after;
	unsigned long pages, left;
	unsigned int full;
	u64 us, empty_us, disable_us;

	smp_run_on_all(fill_fn, NULL);
	full = cpus_with_pages(&pages);
	pcp_stats_sum(mm_node(), -1, &before);
	us = timed_drain();
	pcp_stats_sum(mm_node(), -1, &after);
	cpus_with_pages(&left);
	empty_us = timed_drain();
	smp_run_on_all(fill_fn, NULL);
	disable_us = arch_cycles();
	zone_pcp_disable(&mm_node()->node_zones[ZONE_DMA32]);	/* force: every CPU */
	disable_us = cycles_to_us(arch_cycles() - disable_us);
	zone_pcp_enable(&mm_node()->node_zones[ZONE_DMA32]);
	drain_all_pages_machine(mm_machine());
	printk("pcp_cost: [%s] %u of %u CPUs filled their lists: %lu pages (%lu MiB) held; "
	       "drain_all_pages() drained those %u CPUs (%llu by IPI) in %llu us, %lu pages left; "
	       "with every list empty it peeks %u CPUs and drains none in %llu us; "
	       "zone_pcp_disable(DMA32) drains all %u in %llu us\n", model, full, online, pages,
	       pages >> (20 - PAGE_SHIFT), full,
	       (unsigned long long)(after.ipi_drain - before.ipi_drain), (unsigned long long)us,
	       left, online, (unsigned long long)empty_us, online, (unsigned long long)disable_us);
	printk("PCPDRAIN {\"cpus\":%u,\"model\":\"%s\",\"filled_cpus\":%u,\"pages\":%lu,"
	       "\"drain_us\":%llu,\"ipis\":%llu,\"left\":%lu,\"empty_drain_us\":%llu,"
	       "\"disable_us\":%llu}\n", online, model, full, pages, (unsigned long long)us,
	       (unsigned long long)(after.ipi_drain - before.ipi_drain), left,
	       (unsigned long long)empty_us, (unsigned long long)disable_us);
}

static void pcp_cost_bench(void)
{
	unsigned int online = nr_cpus_online();

	printk("pcp_cost: %u CPUs online, %lu MiB managed; high = max(low watermark / CPUs, "
	       "4 * batch), Linux v6.4 zone_highsize() (b92ca18e8ca5) with one node: every CPU is "
	       "local to every zone\n", online, node_managed_pages(mm_node()) >> (20 - PAGE_SHIFT));
	for (int z = 0; z < MAX_NR_ZONES; z++)
		if (zone_populated(&mm_node()->node_zones[z]))
			report_zone(&mm_node()->node_zones[z], online);
	measure_drain(online);	/* pcp.lock=irqoff shows the IPI drains */
}
BENCH_REGISTER(pcp_cost, pcp_cost_bench,
	       "per-CPU list sizing (sum of high vs watermarks) and drain_all_pages() cost at this CPU count");
