/*
 * Checks of a node whose memory map is initialised late (mm/mm_init.c's deferred init), for
 * the kernel's suite mm_deferred.c and the host's tests/host/test_deferred.c: make the
 * unwritten struct pages look like RAM that nobody wrote, or like a previous boot's memory
 * map; steal pageblocks while the init runs; afterwards find any struct page still unwritten
 * and any reserved page inside a free block.
 */
#ifndef TESTS_KERNEL_DEFERRED_CHECK_H
#define TESTS_KERNEL_DEFERRED_CHECK_H

#include "tests/ktest/ktest.h"
#include "mm/mm_test.h"
#include "mm/memblock.h"
#include "mm/fail_page_alloc.h"
#include "kernel/string.h"

#define DEFERRED_GARBAGE 0xdb	/* what a struct page holds before it is written */

/* Fill every struct page of pgdat that the deferred init has not written yet with garbage. */
static inline void deferred_scribble(struct pglist_data *pgdat)
{
	for (int z = 0; z < MAX_NR_ZONES; z++) {
		struct zone *zone = &pgdat->node_zones[z];

		for (unsigned long pfn = zone->deferred_pfn; pfn < zone->deferred_end_pfn; pfn++)
			if (pfn_in_node(pgdat, pfn))
				memset(pfn_to_page(pgdat, pfn), DEFERRED_GARBAGE, sizeof(struct page));
	}
}

/* Struct pages of pgdat's present sections with a wrong pfn, node or zone, or a state other
 * than free or reserved (call it with nothing allocated): 0 once the init is complete. */
static inline unsigned long deferred_count_unwritten(struct pglist_data *pgdat)
{
	unsigned long bad = 0;

	for (unsigned long pfn = 0; pfn < pgdat->nr_sections * PAGES_PER_SECTION; pfn++) {
		unsigned int z = pfn < ZONE_DMA_END_PFN ? ZONE_DMA :
				 pfn < ZONE_DMA32_END_PFN ? ZONE_DMA32 : ZONE_NORMAL;
		struct page *page;

		if (!pfn_in_node(pgdat, pfn))
			continue;
		page = pfn_to_page(pgdat, pfn);
		bad += page->pfn != pfn || page->nid != pgdat->nid || page->zone != z ||
		       (READ_ONCE(page->flags) & ~(PG_reserved | PG_buddy | PG_poisoned)) ||
		       page_count(page) != !!(READ_ONCE(page->flags) & PG_reserved);
	}
	return bad;
}

/* ---- a previous boot's memory map ---- */

/*
 * This boot's reservations that the previous boot did not have (a kexec'd kernel's image,
 * initrd and boot tables land elsewhere each time): in every MAX_ORDER block of
 * [base, base + size), three single pages that cut it into four free ranges of many orders
 * (pages [0, 256), [257, 640), [641, 896), [897, 1024)). Each of the first three ends in a
 * block of order 8 or 7 whose buddy starts at the reserved page: the struct page a merge
 * reads there must be this boot's (reserved), not the previous boot's (often a free head
 * of just that order).
 */
static inline void deferred_reserve_this_boot(struct memblock *mb, u64 base, u64 size)
{
	static const u16 cut[] = { 256, 640, 896 };
	const u64 block = MAX_ORDER_NR_PAGES << PAGE_SHIFT;

	for (u64 b = ALIGN_UP(base, block); b + block <= base + size; b += block)
		for (unsigned int i = 0; i < ARRAY_SIZE(cut); i++)
			memblock_reserve(mb, b + ((u64)cut[i] << PAGE_SHIFT), PAGE_SIZE);
}

/*
 * The previous boot, on prev: a node built at once over the same RAM without this boot's
 * reservations, used as a kernel uses memory: every page allocated in blocks of random
 * order (order o one time in 2^(o+1): most single pages; half of them movable), one block in
 * four kept, the others freed (the buddy lists merge them into free blocks of every order;
 * the per-CPU lists keep what they hold, as at a reset). held has room for max blocks.
 * Scaffolding: under fail_page_alloc= no allocation of it fails on purpose.
 */
static inline void deferred_previous_boot(struct ktest *t, struct pglist_data *prev,
					  struct page **held, unsigned long max)
{
	unsigned long n = 0;

	fail_page_alloc_pause();
	while (n < max) {
		gfp_t gfp = (ktest_rand(t) & 1 ? GFP_USER : GFP_KERNEL) | __GFP_MEMALLOC |
			    __GFP_NOWARN;
		unsigned int order = (unsigned int)__builtin_ctzll(ktest_rand(t) |
								   1ull << MAX_ORDER);
		struct page *page = alloc_pages_node(prev, gfp, order);

		if (!page)
			page = alloc_pages_node(prev, gfp, 0);
		if (!page)
			break;
		held[n++] = page;
	}
	for (unsigned long i = 0; i < n; i++)
		if (ktest_rand(t) % 4)
			__free_pages(held[i], held[i]->order);
	fail_page_alloc_resume();
}

/* Copy prev's struct pages of pfns [start, start + nr) out, old[pfn - start] (zero where it
 * has no memory map): what the RAM under its memory map holds when the machine resets. */
static inline void deferred_save_memmap(struct pglist_data *prev, struct page *old,
					unsigned long start, unsigned long nr)
{
	for (unsigned long pfn = start; pfn < start + nr; pfn++)
		old[pfn - start] = pfn_in_node(prev, pfn) ? *pfn_to_page(prev, pfn) :
							    (struct page){ 0 };
}

/* What the list links of a stale struct page point at (deferred_scribble_previous_boot()). */
static struct list_head deferred_stale_link = { &deferred_stale_link, &deferred_stale_link };

/*
 * Make every struct page of pgdat that the deferred init has not written hold what the
 * previous boot left there (old, by pfn from start, as deferred_save_memmap() saved it),
 * as a warm reset or kexec leaves RAM: free heads with PG_buddy and their order, allocated
 * blocks with a reference, tails. Only the list links are replaced: the old ones point into
 * memory this boot owns, and following one would crash the test instead of failing it;
 * these point at deferred_stale_link, a list of its own, which no written struct page
 * does (so a test can tell a struct page nobody wrote yet). Returns how many free heads it
 * wrote.
 */
static inline unsigned long deferred_scribble_previous_boot(struct pglist_data *pgdat,
							    const struct page *old,
							    unsigned long start, unsigned long nr)
{
	unsigned long heads = 0;

	for (int z = 0; z < MAX_NR_ZONES; z++) {
		struct zone *zone = &pgdat->node_zones[z];

		for (unsigned long pfn = zone->deferred_pfn; pfn < zone->deferred_end_pfn; pfn++) {
			struct page *page;

			if (!pfn_in_node(pgdat, pfn) || pfn < start || pfn - start >= nr)
				continue;
			page = pfn_to_page(pgdat, pfn);
			*page = old[pfn - start];
			page->lru = (struct list_head){ &deferred_stale_link, &deferred_stale_link };
			heads += !!PageBuddy(page);
		}
	}
	return heads;
}

/* Pages of the block [pfn, pfn + 2^order) that are not free RAM in mb (a hole or a
 * reservation). */
static inline unsigned long deferred_block_not_free(const struct memblock *mb, unsigned long pfn,
						    unsigned int order)
{
	u64 cursor = (u64)pfn << PAGE_SHIFT, end = (u64)(pfn + (1ul << order)) << PAGE_SHIFT;
	u64 s, e, free = 0;

	while (memblock_next_free(mb, &cursor, &s, &e) && s < end)
		free += MIN(e, end) - s;
	return (1ul << order) - (unsigned long)(free >> PAGE_SHIFT);
}

/* Pages inside free blocks of pgdat's buddy lists that its memblock does not call free RAM:
 * 0 in a correct node. Each zone under its lock; a list that loops counts one. */
static inline unsigned long deferred_count_reserved_in_free(struct pglist_data *pgdat)
{
	unsigned long bad = 0;

	for (int z = 0; z < MAX_NR_ZONES; z++) {
		struct zone *zone = &pgdat->node_zones[z];
		unsigned long flags = spin_lock_irqsave(&zone->lock);

		for (unsigned int o = 0; o <= MAX_ORDER; o++)
			for (int mt = 0; mt < MIGRATE_TYPES; mt++) {
				unsigned long n = 0;
				struct page *page;

				list_for_each_entry(page, &zone->free_area[o].free_list[mt], lru) {
					if (++n > zone->spanned_pages) {
						bad++;
						break;
					}
					bad += deferred_block_not_free(pgdat->mb, page->pfn, o);
				}
			}
		spin_unlock_irqrestore(&zone->lock, flags);
	}
	return bad;
}

/* Struct pages of page's pageblock that still hold the previous boot's (nobody wrote them). */
static inline unsigned long deferred_pageblock_stale(const struct page *page)
{
	const struct page *start = page - (page->pfn & (pageblock_nr_pages - 1));
	unsigned long n = 0;

	for (unsigned long i = 0; i < pageblock_nr_pages; i++)
		n += READ_ONCE(start[i].lru.next) == &deferred_stale_link;
	return n;
}

/* ---- pageblock steals while the init runs ---- */

/* UNMOVABLE allocations; those that stole a pageblock (stat_steal_block moved); of those,
 * the ones with a chunk of the node claimed and not finished before and after them (the
 * window), and the ones by a block smaller than a pageblock, which walk the pageblock
 * around it (move_freepages_block()). */
struct deferred_steals {
	unsigned long allocs, steals, in_window, walks;
	unsigned long stale;	/* steals whose pageblock held an unwritten struct page */
};

/* Chunks of pgdat claimed and not finished, and pageblocks stolen so far: each zone read
 * under its lock. */
static inline unsigned long deferred_busy_chunks(struct pglist_data *pgdat, u64 *stolen)
{
	unsigned long busy = 0;

	*stolen = 0;
	for (int z = 0; z < MAX_NR_ZONES; z++) {
		struct zone *zone = &pgdat->node_zones[z];
		unsigned long flags = spin_lock_irqsave(&zone->lock);

		busy += zone->deferred_busy;
		*stolen += zone->stat_steal_block;
		spin_unlock_irqrestore(&zone->lock, flags);
	}
	return busy;
}

/*
 * Watermarks of pgdat at zero (as min_free_kbytes = 0 would make them), until
 * deferred_init_done() sizes them again: an allocation then takes the last free page
 * instead of growing the zone first (it grows below the low watermark).
 */
static inline void deferred_no_watermarks(struct pglist_data *pgdat)
{
	for (int z = 0; z < MAX_NR_ZONES; z++)
		memset(pgdat->node_zones[z]._watermark, 0, sizeof(pgdat->node_zones[z]._watermark));
}

/* The largest order of a free block on pgdat's buddy lists (racy), or -1 if none is free. */
static inline int deferred_largest_free(const struct pglist_data *pgdat)
{
	for (int o = MAX_ORDER; o >= 0; o--)
		for (int z = 0; z < MAX_NR_ZONES; z++)
			if (READ_ONCE(pgdat->node_zones[z].free_area[o].nr_free))
				return o;
	return -1;
}

/*
 * Take every free block of pgdat's buddy lists, largest first, with UNMOVABLE allocations
 * (no watermarks), into held[*n ..< max), counted in s; in_window: only while a chunk is
 * being written, the window of the race (stop when none is). Nothing is free afterwards, so
 * the next allocation must fall back to MOVABLE and steal, from what the deferred init hands
 * over next: a MAX_ORDER block whole, or a smaller block with the walk of its pageblock
 * (move_freepages_block()), beside a chunk being written. Call it with pgdat's per-CPU lists
 * off (zone_pcp_disable()), its watermarks at zero (deferred_no_watermarks()) and from one
 * CPU at a time: then each allocation finds the block it asks for (one that fails, or one
 * below a watermark, would grow the zone instead), and the steal counter moves only for
 * ours. Blocks are freed with their recorded order (page->order). After a steal whose
 * pageblock held a struct page still stale (deferred_pageblock_stale()) it steals no more:
 * the free lists may be broken from there on, and the test is failed already.
 */
static inline void deferred_steal_all(struct pglist_data *pgdat, struct deferred_steals *s,
				      bool in_window, struct page **held, unsigned long *n,
				      unsigned long max)
{
	int order;

	while (!s->stale && *n < max && (order = deferred_largest_free(pgdat)) >= 0) {
		u64 stolen0, stolen1;
		unsigned long busy0 = deferred_busy_chunks(pgdat, &stolen0), busy1;
		struct page *page;

		if (in_window && !busy0)
			return;
		page = alloc_pages_node(pgdat, GFP_ATOMIC | __GFP_MEMALLOC | __GFP_NOWARN,
					(unsigned int)order);
		busy1 = deferred_busy_chunks(pgdat, &stolen1);
		if (!page)
			return;
		held[(*n)++] = page;
		s->allocs++;
		if (stolen1 != stolen0) {
			s->steals++;
			s->in_window += busy0 && busy1;
			s->walks += order < pageblock_order;
			s->stale += deferred_pageblock_stale(page) > 0;
		}
	}
}

#endif
