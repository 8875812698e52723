/*
 * The end-of-run summary of `make run`: what the CPUs and the allocator did during the tests,
 * in a few sentences a student can check against the code. Reads counters; changes nothing
 * except draining the per-CPU lists so that free pages can be counted exactly.
 */
#include "kernel/printk.h"
#include "kernel/smp.h"
#include "tests/lab/summary.h"
#include "kernel/lockdep.h"
#include "mm/mm.h"
#include "mm/mm_test.h"
#include "mm/gup.h"
#include "mm/fail_page_alloc.h"


static unsigned long free_pages_drained(void)
{
	drain_all_pages(NULL);
	return node_free_pages(mm_node());
}

void summary_begin(struct run_summary *s)
{
	s->free_before = free_pages_drained();
}

static void summary_zone_locks(u64 *acquired, u64 *contended)
{
	*acquired = *contended = 0;
	for (int z = 0; z < MAX_NR_ZONES; z++) {
		*acquired += READ_ONCE(mm_node()->node_zones[z].lock.stats.acquisitions);
		*contended += READ_ONCE(mm_node()->node_zones[z].lock.stats.contended);
	}
}

void summary_print(const struct run_summary *s, unsigned int failed)
{
	unsigned long free_after = free_pages_drained(), problems = mm_verify(mm_node());
	struct pcp_stats pcp;
	struct gup_totals pins;
	struct fail_page_alloc_stats injected;
	u64 acquired, contended;

	pcp_stats_sum(mm_node(), -1, &pcp);
	gup_read_totals(&pins);
	summary_zone_locks(&acquired, &contended);
	printk("\n==== smpmm summary ====\n");
	printk("CPUs:    %u of %u online\n", nr_cpus_online(), nr_cpus);
	printk("tests:   %s (%u failed cases)\n", failed ? "SOME FAILED" : "all passed", failed);
	printk("per-CPU lists (%s): %llu allocations and %llu frees served without zone->lock;\n"
	       "         %llu refills and %llu spills moved pages in batches; %llu trylock failures\n"
	       "         fell back to the buddy lists; %llu pages drained\n",
	       pcp_lock_model_name(pcp_lock_model), (unsigned long long)pcp.alloc_hit,
	       (unsigned long long)pcp.free_hit, (unsigned long long)pcp.refill,
	       (unsigned long long)pcp.spill,
	       (unsigned long long)(pcp.trylock_fail_alloc + pcp.trylock_fail_free),
	       (unsigned long long)pcp.drained);
	printk("zone->lock: %llu acquisitions, %llu of them had to wait\n",
	       (unsigned long long)acquired, (unsigned long long)contended);
	printk("pins:    %llu taken, %llu released%s; %llu pages migrated for long-term pins\n",
	       (unsigned long long)pins.pins_acquired, (unsigned long long)pins.pins_released,
	       pins.pins_acquired == pins.pins_released ? " (balanced)" : " (NOT balanced)",
	       (unsigned long long)pins.longterm_migrated);
	printk("memory:  %lu free pages before the tests, %lu after; mm_verify: %lu problems%s\n",
	       s->free_before, free_after, problems,
	       free_after == s->free_before && !problems ? " -> nothing lost" : "");
	fail_page_alloc_read_stats(&injected);
	if (fail_page_alloc_enabled() || injected.failed)
		fail_page_alloc_print_stats("faults:  ");
	lockdep_print_summary();
}
