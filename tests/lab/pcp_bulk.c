/*
 * alloc_pages_bulk_node() (tests/lab/pcp_bulk.h): Linux's __alloc_pages_bulk() in the lab,
 * over the white-box window of mm/mm_test.h. Unlike Linux's it counts no NUMA statistics.
 */
#include "tests/lab/pcp_bulk.h"
#include "mm/mm_test.h"
#include "mm/fail_page_alloc.h"

/* The first zone of pgdat's own, highest first, that gfp allows and that can give nr pages
 * above its low watermark and reserve (Linux's __alloc_pages_bulk() stays on the local node
 * too, and asks zone_watermark_fast() for mark + nr). */
static struct zone *bulk_zone(struct pglist_data *pgdat, gfp_t gfp, unsigned int nr)
{
	enum zone_type high = (gfp & __GFP_DMA) ? ZONE_DMA :
			      (gfp & __GFP_DMA32) ? ZONE_DMA32 : ZONE_NORMAL;

	for (int z = (int)high; z >= 0; z--) {
		struct zone *zone = &pgdat->node_zones[z];

		if (zone_populated(zone) && zone_free_pages(zone) >
		    zone->_watermark[WMARK_LOW] + nr + zone->lowmem_reserve[high])
			return zone;
	}
	return NULL;
}

unsigned int alloc_pages_bulk_node(struct pglist_data *pgdat, gfp_t gfp, unsigned int nr,
				   struct page **pages)
{
	unsigned int i = 0, filled = 0, missing = 0;
	int mt = gfp_migratetype(gfp);
	struct per_cpu_pages *pcp = NULL;
	struct zone *zone = NULL;
	unsigned long flags = 0;

	for (unsigned int k = 0; k < nr; k++)
		missing += !pages[k];
	if (missing > 1 && pcp_enabled && !should_fail_alloc_page(gfp, 0) &&
	    (zone = bulk_zone(pgdat, gfp, missing)))
		pcp = pcp_lock_this_cpu(zone, &flags);
	for (; pcp && i < nr; i++) {
		if (pages[i])
			continue;
		pages[i] = __rmqueue_pcplist(zone, 0, mt, pcp, &pcp->lists[order_to_pindex(mt, 0)]);
		if (!pages[i])
			break;
		prep_new_block(pages[i], 0, gfp);
		filled++;
	}
	if (pcp)
		pcp_unlock_this_cpu(zone, pcp, flags);
	for (i = 0; !filled && i < nr; i++)
		if (!pages[i]) {
			filled = !!(pages[i] = alloc_pages_node(pgdat, gfp, 0));
			break;
		}
	for (i = 0, filled = 0; i < nr; i++)
		filled += !!pages[i];
	return filled;
}
