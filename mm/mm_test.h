/*
 * The white-box window into mm/: what the lab (tests/) may reach inside the page allocator
 * beyond the API of mm/mm.h, as Linux exposes internals to KUnit with VISIBLE_IF_KUNIT.
 * Declared here; the tests include this file, and so do the mm/ files that define what it
 * declares, so that each definition is checked against its declaration. Not an API: nothing
 * in boot/, arch/ or kernel/ may use it (tests/check_boundary.py).
 */
#ifndef MM_MM_TEST_H
#define MM_MM_TEST_H

#include "mm/mm.h"

/* ---- mm_init.c: private allocator instances ---- */

/*
 * Build machine m of nr_nodes nodes (nodes[nid], registered in node_data[] at consecutive
 * slots) over the RAM in mb, whose regions say their node (memblock_set_node(); all 0 for
 * one node): map memory above the boot direct map, one section table for all, each node's
 * memory map and per-CPU lists from its own memory, zones, watermarks, the buddy lists,
 * and zonelists ordered by distance (distance[a][b]; NULL: 10 / 20). cpu_node[cpu] is the
 * node of each of nr_cpus CPUs (NULL: all on node 0). pcp_lock: the lock model of every
 * per-CPU list, for the machine's life. Returns 0, or -1 with a message.
 */
int mm_machine_init(struct mm_machine *m, struct pglist_data *const *nodes,
		    unsigned int nr_nodes, struct memblock *mb, const char *name,
		    unsigned int nr_cpus, const u8 (*distance)[MAX_NUMA_NODES], const u8 *cpu_node,
		    enum pcp_lock_model pcp_lock);
/* Unregister a test machine's nodes (their memory belongs to the caller). */
void mm_machine_destroy(struct mm_machine *m);
/* A machine of one node, pgdat, over all the RAM in mb (mm_machine_init()). */
int pgdat_init(struct pglist_data *pgdat, struct memblock *mb, const char *name,
	       unsigned int nr_cpus, enum pcp_lock_model pcp_lock);
/*
 * The same two, but each node's memory map is written only in its first chunks of each
 * zone, and only those go to the buddy lists (mm_init.c explains the deferred init);
 * allocations grow a zone on demand. mb must stay as it is until deferred_init_done().
 * mm_machine_init() is mm_machine_init_deferred(), deferred_init_memmap() of every node and
 * deferred_init_done() on the calling CPU.
 */
int mm_machine_init_deferred(struct mm_machine *m, struct pglist_data *const *nodes,
			     unsigned int nr_nodes, struct memblock *mb, const char *name,
			     unsigned int nr_cpus, const u8 (*distance)[MAX_NUMA_NODES],
			     const u8 *cpu_node, enum pcp_lock_model pcp_lock);
int pgdat_init_deferred(struct pglist_data *pgdat, struct memblock *mb, const char *name,
			unsigned int nr_cpus, enum pcp_lock_model pcp_lock);
/* Unregister a test instance: pgdat's machine (its memory belongs to the caller). */
void pgdat_destroy(struct pglist_data *pgdat);
/* Initialise and free chunks of node pgdat's deferred memory map until none is left; any
 * number of CPUs may run it at once. Returns the chunks this caller did. */
unsigned long deferred_init_memmap(struct pglist_data *pgdat);
/* One CPU's share of the whole machine: deferred_init_memmap() of cpu's own node, then of
 * the other nodes (mm_init.c says in which order and why). Returns the chunks it did. */
unsigned long deferred_init_cpu(struct mm_machine *m, unsigned int cpu);
/* Once every deferred_init_memmap() has returned: warn if a page is missing, then size the
 * watermarks, reserves and pagesets of every node for all of its memory. */
void deferred_init_done(struct mm_machine *m);
/* The model an instance gets when its creator has no other choice: the boot's pcp.lock= (the
 * kernel's machine was built with it). */
extern enum pcp_lock_model pcp_lock_default;

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

/* Hold this CPU's pcp of zone as a hit path does, in the zone's model (NULL if busy), to
 * race it in tests; flags: the interrupt state to give back. */
struct per_cpu_pages *pcp_lock_this_cpu(struct zone *zone, unsigned long *flags);
void pcp_unlock_this_cpu(struct zone *zone, struct per_cpu_pages *pcp, unsigned long flags);

/* ---- page_alloc.c: what a batch allocation under one hold needs (tests/lab/pcp_bulk.c) ---- */

/* The head of list, this CPU's list of zone for (mt, order), refilled from the buddy lists if
 * empty; NULL if they have none. pcp held (pcp_lock_this_cpu()). */
struct page *__rmqueue_pcplist(struct zone *zone, unsigned int order, int mt,
			       struct per_cpu_pages *pcp, struct list_head *list);
/* A block taken off a list made ready to hand out for gfp: poison checked, first reference,
 * zeroed if asked (mm/internal.h prep_new_page(), which also declares it). */
__returns_nonnull struct page *prep_new_block(struct page *page, unsigned int order, gfp_t gfp);

/* ---- debug.c: the per-CPU list counters, read racily (summary, soak, monitor, tests) ---- */

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
