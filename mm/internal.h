/*
 * mm/ internal definitions shared by the mm/ sources; not an API, and included by nothing
 * outside mm/ (tests/check_boundary.py). What tests may reach is mm/mm_test.h, which the
 * mm/ files that define its functions include, so that each definition is checked against
 * its declaration.
 */
#ifndef MM_INTERNAL_H
#define MM_INTERNAL_H

#include "mm/mm.h"
#include "kernel/panic.h"
#include "kernel/printk.h"

static inline u8 page_flags(const struct page *page)
{
	return READ_ONCE(page->flags);
}

/* Set/clear flag bits of a page whose state the caller owns (by the lock documented in
 * struct page): only the owner writes, so load + store is enough. */
static inline void __set_page_flag(struct page *page, u8 f)
{
	WRITE_ONCE(page->flags, (u8)(page_flags(page) | f));
}

static inline void __clear_page_flag(struct page *page, u8 f)
{
	WRITE_ONCE(page->flags, (u8)(page_flags(page) & ~f));
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
	struct pglist_data *pgdat;	/* the node asked for (the zonelist's owner) */
	struct zonelist *zonelist;	/* its fallback list, or its own zones (__GFP_THISNODE) */
	struct zoneref *preferred_zoneref;	/* first entry gfp allows: where NUMA hits are */
	enum zone_type highest_zoneidx;	/* highest zone gfp allows; entries above it are skipped */
	int migratetype;
};

static inline unsigned long wmark_pages(const struct zone *z, unsigned int alloc_flags)
{
	return z->_watermark[alloc_flags & ALLOC_WMARK_MASK];
}

/* ---- page_alloc.c ---- */

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
bool check_new_block(struct page *page, unsigned int order);
__returns_nonnull struct page *prep_new_block(struct page *page, unsigned int order, gfp_t gfp);

/*
 * May a block just taken off a free list (PG_buddy or PG_pcp already cleared) be handed out?
 * Every page must be unused: refcount 0, no flag but PG_poisoned. If one is not, someone
 * still uses a page after freeing it: it is reported, and the caller discards the block,
 * leaving it off every list as it is (leaked until that user frees it), and takes another,
 * as Linux does (check_new_pages()). Order 0 is checked here, larger blocks out of line.
 */
static inline bool check_new_pages(struct page *page, unsigned int order)
{
	if (likely(!order && !(page_flags(page) & ~PG_poisoned) && !page_count(page)))
		return true;
	return check_new_block(page, order);
}

/* An allocated block's head: its order, the migratetype asked for, its first reference. */
static inline void set_page_allocated(struct page *page, unsigned int order, gfp_t gfp)
{
	page->order = (u8)order;
	WRITE_ONCE(page->mt, (u8)gfp_migratetype(gfp));
	WRITE_ONCE(page->refcount, 1);
}

/*
 * Final touches on a checked block just taken from a free or per-CPU list; returns it.
 * Every page leaves as a plain, unpinned block: compound_off 0 (mm/gup.h reads it to find a
 * head: every free page says 0, free_block_ok() sees to it) and, for a large block, a zero
 * pin count in page[1] (its lru is unused while the block is allocated). An order-0 block
 * leaves every list already carrying order 0 and the migratetype asked for (its list's:
 * free_unref_page_commit(), __rmqueue(); mm_verify() checks listed ones), so a clean one
 * (no poison to check, no zeroing asked for) needs only its first reference; the rest is
 * prep_new_block().
 */
static inline struct page *prep_new_page(struct page *page, unsigned int order, gfp_t gfp)
{
	if (unlikely(order || page->flags || (gfp & __GFP_ZERO)))	/* ours now: a plain read */
		return prep_new_block(page, order, gfp);
	WRITE_ONCE(page->refcount, 1);
	return page;
}

/*
 * NUMA statistics of one allocation from zone, as Linux's zone_statistics(): a hit if the
 * zone is on the node the zonelist preferred, else a miss here and a "foreign" on the
 * preferred zone; pcp is this CPU's of zone, whose counters they are. One increment in the
 * common case, after any pcp hold (an interrupt on this CPU may count in between: each is
 * one add to memory). Whether the CPU was local to the zone is not counted here: the
 * counters are per (zone, CPU), so it is known when they are summed.
 */
static inline void zone_statistics(struct zone *preferred, struct zone *zone,
				   struct per_cpu_pages *pcp)
{
	if (likely(zone->node == preferred->node)) {
		__count_pcp_event(pcp, numa_hit, 1);
		return;
	}
	__count_pcp_event(pcp, numa_miss, 1);
	__count_pcp_event(&preferred->pcp[pcp - zone->pcp], numa_foreign, 1);
}

/* ---- page_alloc.c: the per-CPU lists' traffic with the buddy lists ---- */

/* Give count base pages of pcp back to the buddy lists (whole blocks, from the coldest,
 * starting with list pindex); caller holds pcp (mm/pcp.h pcp_lock()). */
void free_pcppages_bulk(struct zone *zone, int count, struct per_cpu_pages *pcp, int pindex);

/* ---- pcp.c ---- */

/* Allocate the per-CPU lists of every zone from mb, with the boot pageset values, in the
 * machine's lock model. */
int pcp_node_init(struct pglist_data *pgdat, struct memblock *mb);
/* The CPUs among the first nr_cpus that share node pgdat's zones' high (zone_pcp_update()). */
unsigned int node_split_cpus(const struct pglist_data *pgdat, unsigned int nr_cpus);

/* ---- numa.c ---- */

/* Both zonelists of every node of m (after every node has its free pages). */
void build_all_zonelists(struct mm_machine *m);
/* fn(node) summed over every node of machine m. */
unsigned long machine_sum(const struct mm_machine *m, unsigned long (*fn)(struct pglist_data *));
unsigned long machine_memmap_bytes(const struct mm_machine *m);

/* ---- debug.c ---- */

__printf(2, 3) void bad_page(const struct page *page, const char *fmt, ...);
void poison_pages(struct page *page, unsigned int nr);
void check_poison_pages(struct page *page, unsigned int nr);
/* Mark 2^order pages at page PG_seen; report any already seen. Returns problems. */
unsigned long verify_mark_block(const char *where, struct page *page, unsigned int order);

/* ---- mm_init.c ---- */

/* Initialise deferred chunks of zone until 2^order more pages are free; false if none was
 * left. For the allocator, when zone_has_deferred(zone). */
bool deferred_grow_zone(struct zone *zone, unsigned int order);

#endif
