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

#define GFP_KERNEL	(__GFP_DIRECT_RECLAIM)
#define GFP_ATOMIC	(__GFP_HIGH)	/* never waits: usable with IRQs off / in IRQ handlers */
#define GFP_NOWAIT	(0u)
#define GFP_USER	(GFP_KERNEL | __GFP_MOVABLE)
#define GFP_DMA32	(GFP_KERNEL | __GFP_DMA32)
#define GFP_DMA		(GFP_KERNEL | __GFP_DMA)

/* ---- allocation and freeing ---- */

/* 2^order contiguous pages from pgdat's zones (fallback NORMAL -> DMA32 -> DMA), or NULL. */
struct page *alloc_pages_node(struct pglist_data *pgdat, gfp_t gfp, unsigned int order);
/* Free 2^order pages from alloc_pages*(): drops a reference, frees on the last one. */
void __free_pages(struct page *page, unsigned int order);
/* Fill the NULL entries of pages[nr] with order-0 pages under one pcp lock hold; returns
 * how many entries are non-NULL afterwards. */
unsigned int alloc_pages_bulk_node(struct pglist_data *pgdat, gfp_t gfp, unsigned int nr,
				   struct page **pages);

static inline void get_page(struct page *page)
{
	int old = __atomic_fetch_add(&page->refcount, 1, __ATOMIC_RELAXED);

	(void)old;
	VM_BUG_ON(old <= 0);
}

/* Drop a reference; the last put frees the block at the order it was allocated with. */
void put_page(struct page *page);

/* The kernel's own allocator instance, set up by mm_init() from the boot memory map. */
struct pglist_data *mm_node(void);
static inline struct page *alloc_pages(gfp_t gfp, unsigned int order)
{
	return alloc_pages_node(mm_node(), gfp, order);
}
static inline struct page *alloc_page(gfp_t gfp)
{
	return alloc_pages(gfp, 0);
}
static inline void __free_page(struct page *page)
{
	__free_pages(page, 0);
}

/* ---- setup (mm/mm_init.c) ---- */

/*
 * Build allocator instance pgdat over the RAM in mb: map memory above the boot direct map,
 * allocate the memory map, size zones and watermarks, give every unreserved page to the
 * buddy lists. Returns 0, or -1 if there is no usable memory (with a message).
 */
int pgdat_init(struct pglist_data *pgdat, struct memblock *mb, const char *name,
	       unsigned int nr_cpus);
/* Unregister a test instance (its memory belongs to the caller). */
void pgdat_destroy(struct pglist_data *pgdat);
/* The kernel's global instance from the multiboot memory map; returns pgdat_init()'s result. */
int mm_init(const struct boot_info *bi);
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

/* ---- per-CPU lists (mm/pcp.c) ---- */

enum pcp_lock_model {
	PCP_LOCK_IRQOFF,	/* pre-6.0: IRQs off, no lock; remote drain by IPI to the owner */
	PCP_LOCK_IRQSAVE,	/* 6.0: spinlock with IRQs saved and disabled */
	PCP_LOCK_TRYLOCK,	/* 6.2+: IRQs stay on; the trylock handles IRQ re-entry (default) */
};
extern enum pcp_lock_model pcp_lock_model;
extern bool pcp_enabled;

/* This CPU's lists; not from an interrupt handler (it may spin on this CPU's pcp lock). */
void drain_local_pages(struct zone *zone);	/* zone NULL: every zone of mm_node() */
void drain_local_pages_node(struct pglist_data *pgdat);
/* Drains from this CPU that may wait: interrupts on. A global one returns if another runs. */
void drain_all_pages(struct zone *zone);	/* zone NULL: every zone of mm_node() */
void drain_all_pages_node(struct pglist_data *pgdat);
void drain_cpu_pages(struct pglist_data *pgdat, unsigned int cpu);	/* one CPU's lists */
/* Memory-offline style: high 0, batch 1, every CPU drained (waits); nests. Interrupts on. */
void zone_pcp_disable(struct zone *zone);
void zone_pcp_enable(struct zone *zone);
/* kmain, after SMP bring-up: zone_pcp_update(mm_node(), CPUs online), and a summary line. */
void mm_cpus_online(void);
/* Recompute batch/high for nr_cpus online CPUs (call when CPUs come online). */
void zone_pcp_update(struct pglist_data *pgdat, unsigned int nr_cpus);
/* Parse "pcp.lock=irqoff|irqsave|trylock" / "pcp.enable=0|1" style values; 0 or -1. */
int pcp_set_lock_model(const char *name);
/* Drain every list of every node, then switch (at run time, other CPUs idle, after any
 * running drain); 0, or -1 for a bad name. Interrupts on. */
int pcp_switch_lock_model(const char *name);
const char *pcp_lock_model_name(enum pcp_lock_model m);

#endif
