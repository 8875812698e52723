/*
 * Physical memory data structures: struct page, pageblocks, free areas, zones, nodes, and the
 * per-CPU page lists. Shared by the mm/ sources and the tests; the public API is in mm/mm.h.
 * Not the early allocator (mm/memblock.h) and not page tables (arch/x86_64/mmu.c).
 *
 * Lock ordering in mm (outermost first; each lock is described once, in its struct):
 *
 *   mm_struct.mmap_lock       (reader/writer, mm/vm.h: faults and gup's slow path read it,
 *                             mmap and munmap write it; keeps a fault's VMA and tables)
 *     mm_struct.lock          (entries removed or replaced: munmap, FOLL_LONGTERM migration)
 *       mm_machine.pcp_drain_lock (drains of other CPUs' lists, mm/pcp.c; a 2nd drain
 *                             waits its turn; faults and migration allocate under the
 *                             two above)
 *         per_cpu_pages.lock  (one per zone per CPU; its owner only ever trylocks it)
 *           zone.lock         (IRQ-safe: always spin_lock_irqsave)
 *   zone.pcp_batch_high_lock  (pageset updates; a leaf, held only for high/batch writes)
 *
 * No function takes two zone locks, or two pcp locks, at once. Nothing that may spin on a
 * pcp lock (a drain) runs in interrupt context: the interrupted code may hold this CPU's
 * pcp lock (trylock model). Interrupt handlers only ever trylock it.
 */
#ifndef MM_MMZONE_H
#define MM_MMZONE_H

#include "kernel/compiler.h"
#include "kernel/arch.h"
#include "kernel/list.h"
#include "kernel/spinlock.h"
#include "kernel/numa.h"

struct memblock;

/* Orders 0..MAX_ORDER inclusive, as Linux v6.4: the largest block is 2^10 pages = 4 MiB. */
#define MAX_ORDER 10
#define NR_ORDERS (MAX_ORDER + 1)
#define MAX_ORDER_NR_PAGES (1ul << MAX_ORDER)
#define PAGE_ALLOC_COSTLY_ORDER 3

/* A pageblock (2 MiB) is the unit that carries a migratetype. */
#define pageblock_order 9
#define pageblock_nr_pages (1ul << pageblock_order)

enum migratetype {
	MIGRATE_UNMOVABLE,
	MIGRATE_MOVABLE,
	MIGRATE_RECLAIMABLE,
	MIGRATE_PCPTYPES,	/* the types with per-CPU lists: all of them here */
	MIGRATE_TYPES = MIGRATE_PCPTYPES,
};

enum zone_type {
	ZONE_DMA,		/* physical 0 .. 16 MiB (ISA DMA) */
	ZONE_DMA32,		/* 16 MiB .. 4 GiB (32-bit DMA) */
	ZONE_NORMAL,		/* 4 GiB .. */
	MAX_NR_ZONES,
};
#define ZONE_DMA_END_PFN (16ul << (20 - PAGE_SHIFT))
#define ZONE_DMA32_END_PFN (4ul << (30 - PAGE_SHIFT))

/*
 * Sparse memory map: physical memory is cut into 128 MiB sections, and only sections that
 * contain RAM get an array of struct page. Holes (the PCI hole below 4 GiB, gaps between
 * firmware regions) cost nothing. A section is larger than a MAX_ORDER block, so a block and
 * its buddy always share a section (see find_buddy_page_pfn()).
 */
#define SECTION_SIZE_BITS 27
#define PFN_SECTION_SHIFT (SECTION_SIZE_BITS - PAGE_SHIFT)
#define PAGES_PER_SECTION (1ul << PFN_SECTION_SHIFT)
#define PAGEBLOCKS_PER_SECTION (PAGES_PER_SECTION / pageblock_nr_pages)
/* page->pfn is 32 bits: 2^32 frames of 4 KiB = 16 TiB of physical address space. */
#define MAX_PHYSMEM_BITS 44

/* page->flags bits */
#define PG_reserved	0x01	/* never given to the allocator (firmware, kernel image, memmap) */
#define PG_buddy	0x02	/* head of a free block on a zone free list; page->order is its order */
#define PG_pcp		0x04	/* on a per-CPU list; page->order is its order, page->mt its list */
#define PG_poisoned	0x08	/* contents filled with PAGE_POISON when freed: verify on allocation */
#define PG_seen		0x10	/* mm_verify() scratch mark, clear outside mm_verify() */
#define PAGE_POISON 0xaa

/*
 * struct page: one per 4 KiB frame of every present section, 32 bytes, so the memory map
 * costs 32/4096 = 0.78 % of RAM: 8 MiB per GiB (Linux's struct page is 64 bytes: 16 MiB/GiB).
 * It is small because it holds only what the allocator needs: no mapping, index or memcg.
 *
 * Who may write what:
 *   free (PG_buddy head):  zone->lock; lru is on zone->free_area[order].free_list[mt]
 *   per-CPU (PG_pcp):      the owning pcp->lock; lru is on pcp->lists[]
 *   allocated:             refcount atomically by anyone holding a reference; lru, private
 *                          belong to the owner
 *   pfn, nid, zone:        set once at node init
 */
struct page {
	union {
		struct list_head lru;	/* free list, pcp list, or the owner's */
		u32 compound_pincount;	/* page[1] of an allocated large data page: exact pins
					 * (mm/gup.h); tails are never on a list while allocated */
	};
	s32 refcount;		/* 0 free; 1 after alloc; atomic; reserved pages hold 1 forever */
	u32 pfn;		/* this frame's number (the map is sparse: no base to subtract) */
	u8 flags;		/* PG_* above; changed under the lock that owns the page's state */
	u8 order;		/* free/pcp: block order; allocated head: the order it was allocated at */
	u8 mt;			/* free/pcp: list's migratetype; allocated: migratetype asked for */
	u8 nid;			/* node_data[] index: which allocator instance owns this frame */
	u8 zone;		/* enum zone_type */
	u8 _unused;		/* spare, keeps the size at 32 */
	u16 compound_off;	/* data pages mapped by mm/vm.c: index from the head (0 = head) */
};

struct mem_section {
	/* (uintptr_t)memmap - section_start_pfn * sizeof(struct page), or 0 if no RAM here */
	uintptr_t memmap_enc;
	/* node_data[] index of the node owning every page of this section (memory map and RAM:
	 * a section never holds memory of two nodes, mm_init.c) */
	u8 nid;
};

struct free_area {
	struct list_head free_list[MIGRATE_TYPES];	/* heads of free blocks of this order */
	unsigned long nr_free;				/* blocks on all of the lists */
};

enum zone_watermarks { WMARK_MIN, WMARK_LOW, WMARK_HIGH, NR_WMARK };

/* ---- per-CPU page lists (mm/pcp.c) ---- */

/* Lists per migratetype for orders 0..3, plus one shared list for pageblock order (THP). */
#define NR_LOWORDER_PCP_LISTS (MIGRATE_PCPTYPES * (PAGE_ALLOC_COSTLY_ORDER + 1))
#define NR_PCP_LISTS (NR_LOWORDER_PCP_LISTS + 1)
#define BOOT_PAGESET_HIGH 0
#define BOOT_PAGESET_BATCH 1
#define PCP_BATCH_SCALE_MAX 5	/* drain chunk: batch << 5; free_factor limit (v6.7 constant) */

/*
 * How a CPU's per-CPU lists are protected: one of Linux's three designs, chosen when an
 * allocator instance is created (the kernel's: `pcp.lock=`) and never changed while it
 * lives. mm/pcp.h has each one's take and release, pcp_lock() and pcp_unlock().
 */
enum pcp_lock_model {
	PCP_LOCK_IRQOFF,	/* up to 5.19: interrupts off, no lock; remote drains by IPI */
	PCP_LOCK_IRQSAVE,	/* 6.0, 6.1: the pcp's spinlock, tried with interrupts off */
	PCP_LOCK_TRYLOCK,	/* 6.2+: the spinlock tried, interrupts on (the default) */
};

/* Orders with a per-CPU list: 0..PAGE_ALLOC_COSTLY_ORDER and pageblock order. */
static inline bool pcp_allowed_order(unsigned int order)
{
	return order <= PAGE_ALLOC_COSTLY_ORDER || order == pageblock_order;
}

/*
 * List index for (migratetype, order): lists 0..11 are orders 0..3 times the three types
 * (index 3 * order + mt), list 12 is pageblock order (any type).
 */
static inline unsigned int order_to_pindex(int mt, unsigned int order)
{
	if (order > PAGE_ALLOC_COSTLY_ORDER)
		return NR_LOWORDER_PCP_LISTS;
	return (MIGRATE_PCPTYPES * order) + (unsigned int)mt;
}

static inline unsigned int pindex_to_order(unsigned int pindex)
{
	return pindex >= NR_LOWORDER_PCP_LISTS ? pageblock_order : pindex / MIGRATE_PCPTYPES;
}

/*
 * Per-CPU event counters of one zone, summed on read: Linux keeps the like of them apart
 * from struct per_cpu_pages (the NUMA ones in per_cpu_zonestats, the rest as vm events); here
 * they follow Linux's fields of the pcp, behind their own switch, CONFIG_PCP_STATS (on by
 * default: the tests, the summary and the benchmarks read them). Who writes what: the list
 * events (alloc_hit, free_hit, refill, spill, drained, remote_home) under the pcp's hold, by
 * whoever holds it (a remote drainer too); the rest (numa_*, trylock_fail_*, ipi_drain) by
 * the CPU they belong to alone, outside any hold, as Linux counts its per-CPU events (an
 * interrupt on that CPU may count in between: each count is one add to memory). Two cache
 * lines: what a hit counts is last, in the second, so that it ends struct per_cpu_pages
 * (which the unpadded build of the false-sharing exercise then puts beside the next CPU's
 * lock: docs/exercises.md). The NUMA counters are Linux's per-zone ones (numa_hit,
 * numa_miss, numa_foreign; local_node and other_node follow from the CPU's node when they
 * are read: zone_numa_stats()); they count every allocation from the zone, per-CPU list or
 * not.
 */
struct pcp_stats {
	u64 refill;		/* refills from the buddy lists (rmqueue_bulk calls) */
	u64 spill;		/* spills to them from the free path (free_unref_page_commit) */
	u64 numa_miss;		/* allocated here although another node was preferred */
	u64 numa_foreign;	/* preferred here, but allocated on another node (this zone was
				 * the zonelist's first) */
	u64 drained;		/* pages removed by drains (local or remote) */
	u64 trylock_fail_alloc;	/* trylock failed: allocation went to buddy */
	u64 trylock_fail_free;	/* trylock failed: free went to buddy */
	u64 ipi_drain;		/* drains run in IPI context (irqoff model) */
	u64 remote_home;	/* pages of this zone a CPU of another node had on its list, sent
				 * back to the zone's buddy lists (spill or drain) */
	u64 _pad[4];
	u64 alloc_hit;		/* allocations served from the list as it was (no refill) */
	u64 free_hit;		/* frees put on the list */
	u64 numa_hit;		/* allocated here, on the node the allocation preferred */
};
BUILD_BUG_ON(sizeof(struct pcp_stats) != 2 * CACHELINE_SIZE);

#ifndef CONFIG_PCP_STATS
#define CONFIG_PCP_STATS 1
#endif

/*
 * The padding of struct per_cpu_pages below, as one switch: 1 (the default) gives every
 * CPU's pcp cache lines of its own; a build with -DCONFIG_PCP_PADDING=0 packs them, so that
 * neighbouring CPUs' pcps share lines (what false sharing costs).
 */
#ifndef CONFIG_PCP_PADDING
#define CONFIG_PCP_PADDING 1
#endif
#if CONFIG_PCP_PADDING
#define __pcp_padded __cacheline_aligned
#else
#define __pcp_padded
#endif

/*
 * One per (zone, CPU): Linux v6.1's fields in Linux's order (its NUMA-only expire aside),
 * then this CPU's counters of this zone (struct pcp_stats, CONFIG_PCP_STATS), each part
 * cache-line aligned so that CPUs never share a line: with the spinlock's statistics
 * (CONFIG_LOCK_STAT) 64 + 16 + 13 list heads of 16 bytes = 288 bytes, 5 lines; the
 * counters 2 more, 448 bytes (Linux's pcp, without lock statistics, is 256 bytes).
 */
struct per_cpu_pages {
	/*
	 * lock protects count, free_factor and lists. The owning CPU only ever trylocks it;
	 * drains take it from any CPU. In the irqoff model it is not used: the owner runs with
	 * interrupts off and other CPUs ask it by IPI. high and batch are written under
	 * zone->pcp_batch_high_lock, not this lock (WRITE_ONCE), and read once per use.
	 */
	spinlock_t lock;
	int count;		/* pages (in base pages) on all lists */
	int high;		/* spill when count >= high (0: every free spills) */
	int batch;		/* refill/spill chunk */
	short free_factor;	/* batch-free scaling shift: ++ on spill, >>= 1 on alloc */
	struct list_head lists[NR_PCP_LISTS];
#if CONFIG_PCP_STATS
	struct pcp_stats stats __pcp_padded;	/* this CPU's counters of this zone */
#endif
} __pcp_padded;

/* Count an event of pcp's (Linux's __count_vm_event()); nothing without CONFIG_PCP_STATS. */
#if CONFIG_PCP_STATS
#define __count_pcp_event(pcp, item, n)	((pcp)->stats.item += (n))
#define pcp_stats_of(pcp)		((const struct pcp_stats *)&(pcp)->stats)
#else
#define __count_pcp_event(pcp, item, n)	do { (void)(pcp); } while (0)
extern const struct pcp_stats pcp_no_stats;	/* all zero (mm/pcp.c) */
#define pcp_stats_of(pcp)		((void)(pcp), &pcp_no_stats)
#endif

/*
 * A zone: a physically contiguous range of a node with its own free lists.
 *
 * Locking rules:
 *   The fields above lock are written only during node init (and watermark setup, before
 *   any allocation, and again when the deferred init is done) and are read without locks;
 *   except managed_pages, which grows under lock while the deferred init hands pages over,
 *   and the pageset fields, written under pcp_batch_high_lock (below).
 *   lock protects free_area[] (the lists and nr_free), free_pages, the deferred-init cursor
 *   and the pageblock migratetypes of the zone's sections. It is IRQ-safe: always taken
 *   with interrupts off, because an interrupt on the same CPU may fail its pcp trylock and
 *   come here. free_pages and managed_pages are read without the lock by watermark checks
 *   and counters, which tolerate staleness.
 */
struct zone {
	/* Read-mostly fields, in Linux's order */
	unsigned long _watermark[NR_WMARK];
	unsigned long lowmem_reserve[MAX_NR_ZONES]; /* kept free from allocs that could use zone[j] */
	struct pglist_data *node;	/* Linux's zone_pgdat */
	/* Per-CPU pages (mm/pcp.c); pcp[cpu], each is cache-line aligned. */
	struct per_cpu_pages *pcp;
	/* Their lock model: the machine's (a copy, on the line the hit paths read anyway). */
	enum pcp_lock_model pcp_lock;
	/*
	 * pcp_batch_high_lock serialises pageset updates (zone_pcp_update, zone_pcp_disable,
	 * zone_pcp_enable): it protects pageset_high, pageset_batch, pcp_disable_depth and
	 * the writes of high and batch into every pcp, which happen together with the depth
	 * change, so that depth > 0 always means every pcp is at high 0, batch 1. Held only
	 * for those writes (never across a drain or a wait), so a waiter always gets it soon;
	 * never taken in interrupt context. Linux holds a mutex (pcp_batch_high_lock) from
	 * zone_pcp_disable() to zone_pcp_enable(); without sleeping locks a second disabler
	 * would spin for the whole disabled period, so here disables nest instead.
	 */
	int pageset_high, pageset_batch;	/* values copied into every pcp while enabled */
	int pcp_disable_depth;			/* zone_pcp_disable() calls not yet undone */
	spinlock_t pcp_batch_high_lock;
	unsigned long zone_start_pfn;	/* first pfn of the zone's range */
	unsigned long managed_pages;	/* pages handed to the buddy allocator so far */
	unsigned long spanned_pages;	/* length of the range, holes included */
	unsigned long present_pages;	/* RAM pages in the range */
	unsigned long deferred_end_pfn;	/* end of the pfns this zone's deferred init covers */
	const char *name;
	enum zone_type idx;

	/* Write-intensive fields of the allocator, on lines of their own (Linux's ZONE_PADDING);
	 * the lock on one line, the free lists from the next. */
	spinlock_t lock __cacheline_aligned;
	/* Protected by lock: */
	struct free_area free_area[NR_ORDERS] __cacheline_aligned;
	long free_pages;
	u64 stat_steal_block;		/* pageblocks whose migratetype changed by stealing */
	u64 stat_fallback;		/* allocations served from another migratetype */
	/*
	 * Deferred memory-map init (mm_init.c): the struct pages of [deferred_pfn,
	 * deferred_end_pfn) are not written yet, and nothing may read them. Chunks are claimed
	 * from deferred_pfn upwards under lock (read racily by zone_has_deferred()); a claimed
	 * chunk belongs to its claimer, which writes all its struct pages before it puts any
	 * of its pages on the lists (mm_init.c says why). deferred_free counts the free pages
	 * not handed over yet: managed_pages + deferred_free is constant. deferred_busy counts
	 * chunks claimed and not finished (struct pages being written, below deferred_pfn).
	 */
	unsigned long deferred_pfn;
	unsigned long deferred_free;
	unsigned int deferred_busy;
} __cacheline_aligned;

/*
 * Zonelists, as Linux's: the zones an allocation may use, in the order it tries them. A
 * node's fallback list holds its own zones first (highest first: Normal, DMA32, DMA), then
 * every other node's, nearest node first (build_zonelists(), mm/numa.c); its no-fallback
 * list only its own (__GFP_THISNODE). Only zones with memory are listed, so a memoryless
 * node's fallback list starts at its nearest node with memory. An allocation that may use
 * zones up to Z skips entries above Z. Built at node init, read without locks.
 */
enum { ZONELIST_FALLBACK, ZONELIST_NOFALLBACK, MAX_ZONELISTS };
#define MAX_ZONES_PER_ZONELIST (MAX_NUMA_NODES * MAX_NR_ZONES)

struct zoneref {
	struct zone *zone;		/* NULL ends the list */
	int zone_idx;			/* zone->idx, kept here so the walk reads one line */
};

struct zonelist {
	struct zoneref _zonerefs[MAX_ZONES_PER_ZONELIST + 1];
};

/* The first entry of zonelist at or below highest (its end if none is): Linux's
 * first_zones_zonelist(). */
static inline struct zoneref *first_zones_zonelist(struct zonelist *zonelist,
						   enum zone_type highest)
{
	struct zoneref *z = zonelist->_zonerefs;

	while (z->zone && z->zone_idx > (int)highest)
		z++;
	return z;
}

/*
 * A machine: the nodes that share one section table (any of them finds the struct page of
 * any pfn of the others), fall back to each other through their zonelists, and divide the
 * CPUs among themselves. The kernel's comes from the firmware (kernel/numa.h, mm_machine());
 * a test may build a private one, of one node or several, over memory it owns. Written at
 * init only.
 */
struct mm_machine {
	unsigned int nr_nodes;
	struct pglist_data *node[MAX_NUMA_NODES];	/* by index: node[nid - first_nid] */
	u8 distance[MAX_NUMA_NODES][MAX_NUMA_NODES];	/* by index; SLIT units: 10 local */
	unsigned int first_nid;		/* node[i]->nid == first_nid + i: consecutive ids */
	const u8 *cpu_node;		/* [cpu] = its node's index i in node[]; NULL: 0 */
	unsigned int nr_cpus;		/* CPUs with a pcp in every zone of every node */
	struct mem_section *sections;	/* [nr_sections], from pfn 0, shared by the nodes */
	unsigned long nr_sections;
	/* The migratetype of every pageblock, one byte each, from pfn 0: [pfn >> pageblock_order]
	 * (Linux keeps them per section, or per zone without sparsemem). Written under the zone
	 * lock of the pageblock's zone; read racily by free paths. */
	u8 *pageblock_mt;
	const char *name;
	enum pcp_lock_model pcp_lock;	/* every zone's lists, for the machine's life */
	/*
	 * pcp_drain_lock serialises drains of other CPUs' lists (mm/pcp.c __drain_all_pages(),
	 * drain_cpu_pages()). Waiters spin with interrupts on: in the irqoff model the holder
	 * waits for their answer to its IPI.
	 */
	spinlock_t pcp_drain_lock;
};

/*
 * A node: the memory close to some CPUs, with its own zones, watermarks, memory map,
 * per-CPU lists and statistics. Its one number is its node id, nid: its slot in
 * node_data[], which pages record (page->nid). The kernel's nodes are 0 .. n-1 (the
 * firmware's numbers); a test machine's nodes take the next free slots, consecutive ones.
 */
struct pglist_data {
	struct zone node_zones[MAX_NR_ZONES];
	struct zonelist node_zonelists[MAX_ZONELISTS];
	unsigned long node_start_pfn;		/* first pfn with RAM */
	unsigned long node_end_pfn;		/* one past the last pfn with RAM */
	int nid;				/* the node id: node_data[nid] == this, page->nid */
	struct mm_machine *machine;
	struct mm_machine own_machine;		/* the machine, when this node is one alone
						 * (pgdat_init()) */
	struct pglist_data *mem_node;		/* itself, or if it has no memory, the node its
						 * fallback zonelist starts with (mm_node()) */
	char name[16];				/* "node1"; a test's: what it was called */
	struct mem_section *sections;		/* the machine's: [nr_sections], from pfn 0 */
	unsigned long nr_sections;
	u8 *pageblock_mt;			/* the machine's (struct mm_machine) */
	bool poison;				/* fill freed pages, check on allocation */
	unsigned long min_free_kbytes;
	unsigned int nr_cpus;			/* CPUs with a pcp in every zone */
	unsigned long memmap_bytes;		/* this node's memory map, for the overhead report */
	/* What the node was built from: its free ranges are read by the deferred init. */
	const struct memblock *mb;
	/* Statistics, atomic: */
	u64 deferred_early;			/* free pages handed over at node init */
	u64 deferred_grown;			/* ... by deferred_grow_zone(), on demand */
	u64 deferred_grown_chunks;		/* chunks it initialised */
	u64 deferred_workers;			/* ... by deferred_init_memmap() */
	u64 deferred_chunks;			/* chunks deferred_init_memmap() initialised */
	u64 deferred_chunks_remote;		/* ... of them by other nodes' CPUs */
	u64 bad_pages;				/* bad_page() reports */
	u64 alloc_fail;				/* allocations that returned NULL */
	u64 drain_retries;			/* slow-path drain-and-retry rounds */
};

/* Node ids: every node alive at once, the kernel's and the lab's private ones (a machine has
 * at most MAX_NUMA_NODES, kernel/numa.h: what the firmware may describe). */
#define MAX_NUMNODES 16
extern struct pglist_data *node_data[MAX_NUMNODES];

/* Where node pgdat sits in its machine's own tables (node[], distance[][], the cpu_node
 * values and its memblock's region nids): its nid less the machine's first. */
static inline unsigned int node_index(const struct pglist_data *pgdat)
{
	return (unsigned int)pgdat->nid - pgdat->machine->first_nid;
}

/* ---- pfn <-> page <-> physical <-> virtual ---- */

static inline struct pglist_data *page_pgdat(const struct page *page)
{
	return node_data[page->nid];
}

static inline struct zone *page_zone(const struct page *page)
{
	return &page_pgdat(page)->node_zones[(unsigned int)page->zone];
}

/* Where the migratetype of page's pageblock is kept: its machine's pageblock_mt[]. */
static inline u8 *pageblock_mt_slot(const struct page *page)
{
	return &page_pgdat(page)->pageblock_mt[page->pfn >> pageblock_order];
}

/* The migratetype of page's pageblock (include/linux/mmzone.h). Racy by design on free
 * paths (Linux reads it without the lock too); stable under zone->lock. */
static inline int get_pageblock_migratetype(const struct page *page)
{
	return READ_ONCE(*pageblock_mt_slot(page));
}

static inline unsigned long page_to_pfn(const struct page *page)
{
	return page->pfn;
}

static inline struct mem_section *pfn_to_section(const struct pglist_data *pgdat,
						 unsigned long pfn)
{
	unsigned long nr = pfn >> PFN_SECTION_SHIFT;

	return nr < pgdat->nr_sections ? &pgdat->sections[nr] : NULL;
}

/* True if pfn has a struct page in pgdat's machine (RAM or a hole in a present section). */
static inline bool pfn_valid(const struct pglist_data *pgdat, unsigned long pfn)
{
	const struct mem_section *ms = pfn_to_section(pgdat, pfn);

	return ms && ms->memmap_enc;
}

/* True if pfn has a struct page and it belongs to pgdat itself. */
static inline bool pfn_in_node(const struct pglist_data *pgdat, unsigned long pfn)
{
	const struct mem_section *ms = pfn_to_section(pgdat, pfn);

	return ms && ms->memmap_enc && ms->nid == pgdat->nid;
}

/* The caller knows pfn_valid(pfn). */
static inline struct page *pfn_to_page(const struct pglist_data *pgdat, unsigned long pfn)
{
	return (struct page *)(pgdat->sections[pfn >> PFN_SECTION_SHIFT].memmap_enc +
			       pfn * sizeof(struct page));
}

static inline u64 page_to_phys(const struct page *page)
{
	return (u64)page->pfn << PAGE_SHIFT;
}

static inline void *page_address(const struct page *page)
{
	return arch_phys_to_virt(page_to_phys(page));
}

static inline struct page *virt_to_page(const struct pglist_data *pgdat, const void *va)
{
	return pfn_to_page(pgdat, arch_virt_to_phys(va) >> PAGE_SHIFT);
}

static inline bool zone_populated(const struct zone *zone)
{
	return READ_ONCE(zone->managed_pages) != 0;
}

/* Are there struct pages in zone that the deferred init has not claimed yet? */
static inline bool zone_has_deferred(const struct zone *zone)
{
	return READ_ONCE(zone->deferred_pfn) < zone->deferred_end_pfn;
}

static inline unsigned long zone_end_pfn(const struct zone *zone)
{
	return zone->zone_start_pfn + zone->spanned_pages;
}

static inline bool zone_spans_pfn(const struct zone *zone, unsigned long pfn)
{
	return pfn >= zone->zone_start_pfn && pfn < zone_end_pfn(zone);
}

/* Flag tests may look at pages another CPU owns (a buddy candidate, a pageblock scan):
 * relaxed atomic loads, the same instruction as a plain load on x86. */
#define PageReserved(p) (READ_ONCE((p)->flags) & PG_reserved)
#define PageBuddy(p) (READ_ONCE((p)->flags) & PG_buddy)
#define PagePcp(p) (READ_ONCE((p)->flags) & PG_pcp)

static inline int page_count(const struct page *page)
{
	return READ_ONCE(page->refcount);
}

static inline unsigned long zone_free_pages(const struct zone *zone)
{
	long v = READ_ONCE(zone->free_pages);

	return v > 0 ? (unsigned long)v : 0;
}

#endif
