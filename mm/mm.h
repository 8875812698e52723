/*
 * The page allocator's public API: gfp flags, alloc_pages/__free_pages, get_page/put_page,
 * node setup, checks and dumps. Data structures are in mm/mmzone.h. Not a byte allocator.
 */
#ifndef MM_MM_H
#define MM_MM_H

#include "kernel/panic.h"
#include "mm/mmzone.h"

struct memblock;
struct boot_info;

/* ---- gfp flags: where a page may come from and how hard to try ---- */
typedef unsigned int gfp_t;

#define __GFP_DMA		0x01u	/* only ZONE_DMA */
#define __GFP_DMA32		0x02u	/* ZONE_DMA32 or below */
#define __GFP_MOVABLE		0x04u	/* migratetype MOVABLE */
#define __GFP_RECLAIMABLE	0x08u	/* migratetype RECLAIMABLE */
#define __GFP_HIGH		0x10u	/* important: may dip to half the min watermark */
#define __GFP_DIRECT_RECLAIM	0x20u	/* may wait for other CPUs (remote pcp drains) */
#define __GFP_ZERO		0x40u	/* return zeroed pages */
#define __GFP_MEMALLOC		0x80u	/* ignore watermarks (tests, emergency) */
#define __GFP_NOWARN		0x100u	/* no message on failure */
#define __GFP_THISNODE		0x200u	/* only the node asked for: no fallback to others */

/* The migratetype gfp asks for: its two mobility bits are the type, as in Linux (asking for
 * both is a bug). */
#define GFP_MOVABLE_MASK (__GFP_MOVABLE | __GFP_RECLAIMABLE)
#define GFP_MOVABLE_SHIFT 2
BUILD_BUG_ON(__GFP_MOVABLE >> GFP_MOVABLE_SHIFT != MIGRATE_MOVABLE ||
	     __GFP_RECLAIMABLE >> GFP_MOVABLE_SHIFT != MIGRATE_RECLAIMABLE);

static inline int gfp_migratetype(gfp_t gfp)
{
	VM_BUG_ON((gfp & GFP_MOVABLE_MASK) == GFP_MOVABLE_MASK);
	return (int)((gfp & GFP_MOVABLE_MASK) >> GFP_MOVABLE_SHIFT);
}

#define GFP_KERNEL	(__GFP_DIRECT_RECLAIM)
#define GFP_ATOMIC	(__GFP_HIGH)	/* never waits: usable with IRQs off / in IRQ handlers */
#define GFP_NOWAIT	(0u)
#define GFP_USER	(GFP_KERNEL | __GFP_MOVABLE)
#define GFP_DMA32	(GFP_KERNEL | __GFP_DMA32)
#define GFP_DMA		(GFP_KERNEL | __GFP_DMA)

/* ---- allocation and freeing ---- */

/*
 * 2^order contiguous pages, or NULL: from pgdat's zonelist (mm/mmzone.h), i.e. its own zones
 * (Normal -> DMA32 -> DMA), then the other nodes' of its machine, nearest first; with
 * __GFP_THISNODE, its own zones only.
 */
struct page *alloc_pages_node(struct pglist_data *pgdat, gfp_t gfp, unsigned int order);
/* Free 2^order pages from alloc_pages*(): drops a reference, frees on the last one. */
void __free_pages(struct page *page, unsigned int order);

static inline void get_page(struct page *page)
{
	int old = __atomic_fetch_add(&page->refcount, 1, __ATOMIC_RELAXED);

	(void)old;
	VM_BUG_ON(old <= 0);
}

/* Drop a reference; the last put frees the block at the order it was allocated with. */
void put_page(struct page *page);

/* ---- nodes ---- */

/* The kernel's machine: its nodes as the firmware describes them (kernel/numa.h). */
struct mm_machine *mm_machine(void);
/* The kernel's node nid (its node_data[] index is its node number). */
#define NODE_DATA(nid) (node_data[nid])
/* The node this CPU allocates from first: its own, or, if its node has no memory, the
 * nearest one with memory (Linux's numa_mem_id()). */
struct pglist_data *mm_node(void);
/* The node of pgdat's machine this CPU belongs to (pgdat itself in a one-node machine). */
struct pglist_data *local_node(const struct pglist_data *pgdat);
/* The node id of cpu's node in machine m (its only node's in a one-node machine). */
unsigned int machine_cpu_nid(const struct mm_machine *m, unsigned int cpu);

/* Allocation on this CPU's node, falling back by distance: Linux's default policy. */
static inline struct page *alloc_pages(gfp_t gfp, unsigned int order)
{
	return alloc_pages_node(NODE_DATA(numa_node_id()), gfp, order);
}
static inline struct page *alloc_page(gfp_t gfp)
{
	return alloc_pages(gfp, 0);
}
static inline void __free_page(struct page *page)
{
	__free_pages(page, 0);
}

/* ---- setup (mm/mm_init.c; the constructors of private instances are in mm/mm_test.h) ---- */

/* Free pages not handed to the buddy lists yet: of one node, of a machine. */
unsigned long node_deferred_pages(struct pglist_data *pgdat);
unsigned long machine_deferred_pages(const struct mm_machine *m);
/* The kernel's machine from the multiboot memory map and kernel/numa.h's nodes, all but the
 * first chunks of each node deferred (unless mm.deferred=0); returns
 * mm_machine_init_deferred()'s result. */
int mm_init(const struct boot_info *bi);
/* kmain, once the APs are up: the deferred init on every CPU at once (an async call to the
 * others), and its report. */
void mm_deferred_init(void);
/* kmain, after the deferred init: every per-CPU list of the kernel's nodes sized for the
 * CPUs online (zone_pcp_update()), their locks named for lock reports, and a summary line. */
void mm_cpus_online(void);
/* `mm.dump`: buddyinfo, zoneinfo and pagetypeinfo of mm_node(); kmain calls it once every CPU
 * is up, so that the pagesets shown are the ones the tests use (the memblock dump comes
 * earlier, from mm_init()). */
void mm_boot_dump(void);
void setup_per_zone_wmarks(struct pglist_data *pgdat);
void setup_lowmem_reserve(struct pglist_data *pgdat);

/* ---- checks and dumps (mm/debug.c) ---- */

/*
 * Walk every pfn of pgdat and check it is in exactly one place (a free list at the right
 * order and alignment, a per-CPU list, reserved, or allocated) and that the free counters
 * agree. Prints each problem; returns the number of problems (0 = consistent). The caller
 * keeps the allocator quiet meanwhile (no concurrent alloc/free on pgdat).
 */
unsigned long mm_verify(struct pglist_data *pgdat);
void show_buddyinfo(struct pglist_data *pgdat);
void show_zoneinfo(struct pglist_data *pgdat);
void show_pagetypeinfo(struct pglist_data *pgdat);
void show_pcpinfo(struct pglist_data *pgdat);
/* Free pages in all zones (buddy + per-CPU lists). */
unsigned long node_free_pages(struct pglist_data *pgdat);
unsigned long node_managed_pages(struct pglist_data *pgdat);

/* ---- machines and NUMA statistics (mm/numa.c) ---- */

/* Sums over every node of m; mm_verify() of each (0 = consistent). */
unsigned long machine_free_pages(const struct mm_machine *m);
unsigned long machine_managed_pages(const struct mm_machine *m);
unsigned long mm_verify_machine(const struct mm_machine *m);
/* Free pages of the kernel's machine, every node (Linux's nr_free_pages()). */
static inline unsigned long nr_free_pages(void)
{
	return machine_free_pages(mm_machine());
}

/* Linux's per-zone NUMA counters summed over CPUs (mm/mmzone.h struct pcp_stats), plus the
 * remote frees that park pages on other nodes' CPUs and their way home. */
struct numa_stats {
	u64 numa_hit, numa_miss, numa_foreign;	/* preferred node: this, another, this but
						 * served elsewhere */
	u64 local_node, other_node;		/* allocating CPU on the zone's node or not */
	u64 remote_free;	/* per-CPU-list frees by CPUs of other nodes */
	u64 remote_home;	/* pages sent home from those CPUs' lists (spill or drain) */
};
void zone_numa_stats(const struct zone *zone, struct numa_stats *out);
void node_numa_stats(const struct pglist_data *pgdat, struct numa_stats *out);
/* One line per node of m: Linux's numastat columns, then remote_free and remote_home. */
void show_numastat(const struct mm_machine *m);
/* The order in which pgdat's allocations try zones: "node0 DMA32, node1 DMA32, ...". */
void show_zonelist(const struct pglist_data *pgdat);

/* ---- per-CPU lists (mm/pcp.c) ---- */

/* pcp.enable=0: no per-CPU lists, every page through zone->lock (a bypass, safe to set at any
 * time no CPU allocates: it changes no lock protocol). */
extern bool pcp_enabled;
/* "irqoff", "irqsave", "trylock" (enum pcp_lock_model, mm/mmzone.h); the parse: m, or -1. */
const char *pcp_lock_model_name(enum pcp_lock_model m);
int pcp_lock_model_parse(const char *name);

/*
 * Giving listed pages back to the buddy lists. Each may wait for pcp locks (and, irqoff
 * model, for other CPUs to answer an IPI): interrupts on, never from an interrupt handler,
 * whose interrupted code may hold this CPU's pcp lock.
 */
void drain_local_pages(struct zone *zone);		/* this CPU's lists of zone */
void drain_cpu_pages(struct mm_machine *m, unsigned int cpu);	/* cpu's, every zone of m */
/* Every CPU's lists of zone; of every zone of m (after any other drain running). */
void drain_all_pages(struct zone *zone);
void drain_all_pages_machine(struct mm_machine *m);
/* Memory-offline style: high 0, batch 1, every CPU drained (waits); nests. Interrupts on. */
void zone_pcp_disable(struct zone *zone);
void zone_pcp_enable(struct zone *zone);
/* Recompute batch/high for nr_cpus online CPUs (call when CPUs come online). */
void zone_pcp_update(struct pglist_data *pgdat, unsigned int nr_cpus);

#endif
