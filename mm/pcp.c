/*
 * Per-CPU page lists: placeholder until issue 4 lands. Every order-0..3 free and
 * allocation goes straight to the buddy lists.
 */
#include "mm/internal.h"
#include "mm/memblock.h"

enum pcp_lock_model pcp_lock_model = PCP_LOCK_TRYLOCK;
bool pcp_enabled = false;

int pcp_node_init(struct pglist_data *pgdat, struct memblock *mb)
{
	return 0;
}

void free_unref_page(struct page *page, unsigned int order)
{
	free_one_page(page_zone(page), page, order, get_pageblock_migratetype(page));
}

struct page *rmqueue_pcplist(struct zone *zone, unsigned int order, int mt)
{
	return NULL;
}

unsigned long pcp_verify_zone(struct zone *zone, unsigned long *pages)
{
	return 0;
}

unsigned long zone_pcp_count(struct zone *zone)
{
	return 0;
}

void drain_local_pages_node(struct pglist_data *pgdat) {}
void drain_all_pages_node(struct pglist_data *pgdat) {}
void zone_pcp_update(struct pglist_data *pgdat, unsigned int nr_cpus) {}
void zone_pcp_disable(struct zone *zone) {}
void zone_pcp_enable(struct zone *zone) {}
