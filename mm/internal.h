/* mm/ internal definitions shared by the mm/ sources (and white-box tests); not an API. */
#ifndef MM_INTERNAL_H
#define MM_INTERNAL_H

#include "mm/mm.h"
#include "kernel/panic.h"
#include "kernel/printk.h"

/*
 * Fields that one CPU writes under a lock while another reads them without it (racy peeks
 * that tolerate stale values: free counts, pcp counts, page flags during pageblock scans).
 * Relaxed atomics: the same instructions as plain accesses on x86, but not a data race.
 */
#define READ_RACY(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define WRITE_RACY(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)

static inline u8 page_flags(const struct page *page)
{
	return READ_RACY(page->flags);
}

/* Set/clear flag bits of a page whose state the caller owns (by the lock documented in
 * struct page): only the owner writes, so load + store is enough. */
static inline void __set_page_flag(struct page *page, u8 f)
{
	WRITE_RACY(page->flags, (u8)(page_flags(page) | f));
}

static inline void __clear_page_flag(struct page *page, u8 f)
{
	WRITE_RACY(page->flags, (u8)(page_flags(page) & ~f));
}

/* ---- allocation context ---- */

#define ALLOC_WMARK_MIN		WMARK_MIN
#define ALLOC_WMARK_LOW		WMARK_LOW
#define ALLOC_WMARK_HIGH	WMARK_HIGH
#define ALLOC_WMARK_MASK	0x03u
#define ALLOC_NO_WATERMARKS	0x04u	/* __GFP_MEMALLOC */
#define ALLOC_MIN_RESERVE	0x08u	/* __GFP_HIGH: min watermark halved */
#define ALLOC_NON_BLOCK		0x10u	/* caller cannot wait: another quarter off with MIN_RESERVE */

struct alloc_context {
	struct pglist_data *pgdat;
	enum zone_type highest_zoneidx;	/* highest zone gfp allows; zonelist is it down to DMA */
	int migratetype;
};

static inline unsigned long wmark_pages(const struct zone *z, unsigned int alloc_flags)
{
	return z->_watermark[alloc_flags & ALLOC_WMARK_MASK];
}

/* ---- page_alloc.c ---- */

int get_pageblock_migratetype(const struct page *page);
void set_pageblock_migratetype(struct page *page, int mt);
void __mod_zone_freepages(struct zone *zone, long delta);
void __free_one_page(struct page *page, unsigned long pfn, struct zone *zone,
		     unsigned int order, int mt);
void free_one_page(struct zone *zone, struct page *page, unsigned int order, int mt);
struct page *__rmqueue(struct zone *zone, unsigned int order, int mt);
struct page *rmqueue_buddy(struct zone *zone, unsigned int order, int mt);
bool __zone_watermark_ok(struct zone *z, unsigned int order, unsigned long mark,
			 enum zone_type highest_zoneidx, unsigned int alloc_flags, long free);
bool zone_watermark_ok(struct zone *z, unsigned int order, unsigned long mark,
		       enum zone_type highest_zoneidx, unsigned int alloc_flags);
void prep_new_page(struct page *page, unsigned int order, gfp_t gfp);
bool free_pages_prepare(struct page *page, unsigned int *order);
int gfp_migratetype(gfp_t gfp);

/* ---- pcp.c ---- */

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

/* Allocate the per-CPU lists of every zone from mb, with the boot pageset values. */
int pcp_node_init(struct pglist_data *pgdat, struct memblock *mb);
void free_unref_page(struct page *page, unsigned int order);
struct page *rmqueue_pcplist(struct zone *zone, unsigned int order, int mt);
/* mm_verify() helper: walk zone's pcp lists, marking pages PG_seen; returns problems. */
unsigned long pcp_verify_zone(struct zone *zone, unsigned long *pages);
unsigned long zone_pcp_count(struct zone *zone);
int zone_batchsize(const struct zone *zone);
/* Sum of the pcp event counters of one CPU (cpu >= 0) or all CPUs (cpu < 0). */
void pcp_stats_sum(struct pglist_data *pgdat, int cpu, struct pcp_stats *sum);
/* For tests: hold this CPU's pcp of zone as a fast path does (NULL if busy). */
struct per_cpu_pages *pcp_lock_this_cpu(struct zone *zone, unsigned long *flags);
void pcp_unlock_this_cpu(struct per_cpu_pages *pcp, unsigned long flags);
int zone_highsize(const struct zone *zone, int batch, unsigned int nr_cpus);

/* ---- debug.c ---- */

__printf(2, 3) void bad_page(const struct page *page, const char *fmt, ...);
void poison_pages(struct page *page, unsigned int nr);
void check_poison_pages(struct page *page, unsigned int nr);
/* Mark 2^order pages at page PG_seen; report any already seen. Returns problems. */
unsigned long verify_mark_block(const char *where, struct page *page, unsigned int order);

/* ---- mm_init.c ---- */

unsigned long int_sqrt(unsigned long x);

#endif
