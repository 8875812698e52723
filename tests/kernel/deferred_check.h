/*
 * Checks of a node whose memory map is initialised late (mm/mm_init.c's deferred init), for
 * the kernel's suite mm_deferred.c and the host's tests/host/test_deferred.c: make the
 * unwritten struct pages look like RAM that nobody wrote, and afterwards find any still so.
 */
#ifndef TESTS_KERNEL_DEFERRED_CHECK_H
#define TESTS_KERNEL_DEFERRED_CHECK_H

#include "mm/mm_test.h"
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

#endif
