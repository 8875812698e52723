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
#include "kernel/string.h"
#include "tests/ktest/ktest.h"

/* Free pages of every node, per-CPU lists drained first (so the count is exact); the total. */
static unsigned long free_pages_drained(unsigned long node_free[MAX_NUMA_NODES])
{
	struct mm_machine *m = mm_machine();

	drain_all_pages_machine(mm_machine());
	for (unsigned int nid = 0; nid < m->nr_nodes; nid++)
		node_free[nid] = node_free_pages(m->node[nid]);
	return machine_free_pages(m);
}

void summary_begin(struct run_summary *s)
{
	s->free_before = free_pages_drained(s->node_free_before);
}

static void summary_zone_locks(u64 *acquired, u64 *contended)
{
	struct mm_machine *m = mm_machine();

	*acquired = *contended = 0;
	for (unsigned int nid = 0; nid < m->nr_nodes; nid++)
		for (int z = 0; z < MAX_NR_ZONES; z++) {
			struct zone *zone = &m->node[nid]->node_zones[z];

			*acquired += READ_ONCE(lock_stat(&zone->lock)->acquisitions);
			*contended += READ_ONCE(lock_stat(&zone->lock)->contended);
		}
}

/* "equal", "N pages LOST" or "N pages more than before": free pages after against before. */
static void free_difference(char *buf, size_t size, unsigned long before, unsigned long after)
{
	if (after == before)
		snprintf(buf, size, "equal");
	else if (after < before)
		snprintf(buf, size, "%lu pages LOST", before - after);
	else
		snprintf(buf, size, "%lu pages more than before", after - before);
}

/* One line: how many cases ran and how they ended; a filter that selects none says so. */
static void summary_tests(const struct ktest_totals *tests, unsigned int failed)
{
	unsigned int ran = tests->passed + tests->failed + tests->skipped;
	const char *filter = ktest_filter_text();

	if (!ran && !strcmp(filter, "none"))
		printk("tests:   none (test=none)\n");
	else if (!ran)
		printk("tests:   NONE RAN: the filter test=%s selects no test\n", filter);
	else if (failed)
		printk("tests:   SOME FAILED (%u failed cases of %u)\n", failed, ran);
	else
		printk("tests:   all passed (%u cases, %u skipped)\n", ran, tests->skipped);
}

/* With more than one node: each node's free pages before and after, its NUMA counters. */
static void summary_nodes(const struct run_summary *s, const unsigned long *node_free)
{
	struct mm_machine *m = mm_machine();

	for (unsigned int nid = 0; m->nr_nodes > 1 && nid < m->nr_nodes; nid++) {
		struct pglist_data *pgdat = m->node[nid];
		struct numa_stats st;

		node_numa_stats(pgdat, &st);
		char diff[48];

		free_difference(diff, sizeof(diff), s->node_free_before[nid], node_free[nid]);
		printk("         %s: %lu free pages before, %lu after (%s); numa_hit %llu numa_miss %llu "
		       "numa_foreign %llu local_node %llu other_node %llu\n", pgdat->name,
		       s->node_free_before[nid], node_free[nid], diff,
		       (unsigned long long)st.numa_hit, (unsigned long long)st.numa_miss,
		       (unsigned long long)st.numa_foreign, (unsigned long long)st.local_node,
		       (unsigned long long)st.other_node);
	}
}

void summary_print(const struct run_summary *s, const struct ktest_totals *tests,
		   unsigned int failed)
{
	unsigned long node_free[MAX_NUMA_NODES], free_after = free_pages_drained(node_free);
	unsigned long problems = mm_verify_machine(mm_machine());
	struct pcp_stats pcp;
	struct gup_totals pins;
	struct fail_page_alloc_stats injected;
	u64 acquired, contended;
	char lost[48] = "";

	pcp_stats_sum_machine(mm_machine(), -1, &pcp);
	gup_read_totals(&pins);
	summary_zone_locks(&acquired, &contended);
	printk("\n==== smpmm summary ====\n");
	printk("CPUs:    %u of %u online\n", nr_cpus_online(), nr_cpus);
	summary_tests(tests, failed);
	printk("per-CPU lists (%s): %llu allocations and %llu frees served without zone->lock;\n"
	       "         %llu refills and %llu spills moved pages in batches; %llu trylock failures\n"
	       "         fell back to the buddy lists; %llu pages drained\n",
	       pcp_lock_model_name(mm_machine()->pcp_lock), (unsigned long long)pcp.alloc_hit,
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
	if (free_after != s->free_before) {		/* ": N pages LOST" */
		memcpy(lost, ": ", 3);
		free_difference(lost + 2, sizeof(lost) - 2, s->free_before, free_after);
	}
	printk("memory:  %lu free pages before the tests, %lu after%s; mm_verify: %lu problems%s\n",
	       s->free_before, free_after, lost, problems,
	       free_after == s->free_before && !problems ? " -> nothing lost" : "");
	summary_nodes(s, node_free);
	fail_page_alloc_read_stats(&injected);
	if (fail_page_alloc_enabled() || injected.failed)
		fail_page_alloc_print_stats("faults:  ");
	lockdep_print_summary();
}
