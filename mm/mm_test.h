/*
 * The white-box window into mm/: what the lab (tests/) may reach inside the page allocator
 * beyond the API of mm/mm.h, as Linux exposes internals to KUnit with VISIBLE_IF_KUNIT.
 * Declared here and nowhere else; only tests/ includes this file (and mm/internal.h, so that
 * the definitions are checked against these declarations). Not an API: nothing in boot/,
 * arch/ or kernel/ may use it (tests/check_boundary.py).
 */
#ifndef MM_MM_TEST_H
#define MM_MM_TEST_H

#include "mm/mm.h"

/* ---- mm_init.c: the deferred memory-map init ---- */

/*
 * Race testing (CONFIG_DEBUG_VM builds): when set, deferred_init_chunk() calls it with a
 * chunk claimed and none of its struct pages written yet, so that a test can make another
 * CPU grow the zone (claim the next chunk from the same cursor) at exactly that moment
 * instead of hoping the two meet. NULL, and never called, in normal runs.
 */
extern void (*deferred_init_race_hook)(struct zone *zone, unsigned long spfn);

/* ---- pcp.c: per-CPU list sizing, as Linux's zone_batchsize()/zone_highsize() ---- */

int zone_batchsize(const struct zone *zone);
int zone_highsize(const struct zone *zone, int batch, unsigned int nr_cpus);

/*
 * Fill the NULL entries of pages[nr] with order-0 pages under one pcp lock hold; returns how
 * many entries are non-NULL afterwards. Linux's alloc_pages_bulk(); no kernel code here
 * needs a batch yet, so only the lab calls it (it stays exercised for when one does).
 */
unsigned int alloc_pages_bulk_node(struct pglist_data *pgdat, gfp_t gfp, unsigned int nr,
				   struct page **pages);

/* Hold this CPU's pcp of zone as a fast path does (NULL if busy), to race it in tests. */
struct per_cpu_pages *pcp_lock_this_cpu(struct zone *zone, struct pcp_hold *hold);
void pcp_unlock_this_cpu(struct per_cpu_pages *pcp, const struct pcp_hold *hold);

/* ---- pcp.c: counters, read racily (the summary, the soak, the monitor, tests) ---- */

/* Pages on the per-CPU lists of zone, all CPUs. */
unsigned long zone_pcp_count(struct zone *zone);
/* Sum of the pcp event counters of one CPU (cpu >= 0) or all CPUs (cpu < 0). */
void pcp_stats_sum(struct pglist_data *pgdat, int cpu, struct pcp_stats *sum);
/* The same over every node of a machine. */
void pcp_stats_sum_machine(const struct mm_machine *m, int cpu, struct pcp_stats *sum);
/* Zero the per-CPU list counters of every zone of m (a test's "before"); the NUMA counters
 * (numa_hit ... remote_home) run on, for the end-of-run summary. Other CPUs quiet. */
void pcp_stats_reset(const struct mm_machine *m);

/* ---- per-CPU arrays of gup.c and fail_page_alloc.c: mm_init() or the host harness ---- */

/*
 * mm's per-CPU arrays that are not per zone: pin totals (gup.c) and fault-injection streams
 * (fail_page_alloc.c), one slot per CPU index below nr_cpus, indexed by arch_cpu_id().
 * mm_init() carves them from memblock for nr_cpu_ids; the host harness gives its CPU threads
 * its own first (the first set call wins: a host test that runs mm_init() keeps them). Before
 * that no CPU allocates.
 */
size_t gup_percpu_size(void);
void gup_percpu_set(void *mem, unsigned int nr_cpus);
size_t fail_page_alloc_percpu_size(void);
void fail_page_alloc_percpu_set(void *mem, unsigned int nr_cpus);

#endif
