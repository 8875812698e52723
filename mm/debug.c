/*
 * Checking the page allocator: bad_page() reports, poisoning of free pages, mm_verify(),
 * the per-CPU list counters, and /proc-style dumps (buddyinfo, zoneinfo, pagetypeinfo,
 * pcpinfo). No allocation logic here.
 */
#include "mm/pcp.h"
#include "mm/mm_test.h"
#include "kernel/string.h"

static const char *const migratetype_names[MIGRATE_TYPES] = { "Unmovable", "Movable",
							       "Reclaimable" };

/* Report a page in a state it must not be in; count it; carry on (the caller decides
 * whether the page is used, skipped or leaked). */
void bad_page(const struct page *page, const char *fmt, ...)
{
	char reason[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	printk("BUG: Bad page state: pfn 0x%lx (phys 0x%llx) node %u zone %u flags 0x%x "
	       "refcount %d order %u mt %u: %s\n",
	       (unsigned long)page->pfn, (unsigned long long)page_to_phys(page), page->nid,
	       page->zone, page_flags(page), page_count(page), page->order, page->mt, reason);
	__atomic_fetch_add(&page_pgdat(page)->bad_pages, 1, __ATOMIC_RELAXED);
	add_taint(TAINT_BAD_PAGE);
}

/* ---- poisoning: fill on free, verify on allocation (catches writes after free) ---- */

void poison_pages(struct page *page, unsigned int nr)
{
	for (unsigned int i = 0; i < nr; i++) {
		memset(page_address(page + i), PAGE_POISON, PAGE_SIZE);
		__set_page_flag(page + i, PG_poisoned);
	}
}

static void check_poison_page(struct page *page)
{
	const u64 *w = page_address(page);
	const u64 pattern = 0x0101010101010101ull * PAGE_POISON;

	for (unsigned int i = 0; i < PAGE_SIZE / sizeof(u64); i++) {
		if (likely(w[i] == pattern))
			continue;
		for (unsigned int b = 0; b < 8; b++) {
			u8 v = ((const u8 *)&w[i])[b];

			if (v != PAGE_POISON) {
				bad_page(page, "use after free: byte at offset %u is 0x%x, poison 0x%x",
					 i * 8 + b, v, PAGE_POISON);
				return;
			}
		}
	}
}

void check_poison_pages(struct page *page, unsigned int nr)
{
	for (unsigned int i = 0; i < nr; i++) {
		if (!(page_flags(page + i) & PG_poisoned))
			continue;
		check_poison_page(page + i);
		__clear_page_flag(page + i, PG_poisoned);
	}
}

/* ---- mm_verify ---- */

#define verify_fail(...) (printk("mm_verify: " __VA_ARGS__), 1ul)

unsigned long verify_mark_block(const char *where, struct page *page, unsigned int order)
{
	unsigned long errors = 0;

	for (unsigned long i = 0; i < (1ul << order); i++) {
		struct page *p = page + i;

		if (page_flags(p) & PG_seen)
			errors += verify_fail("pfn 0x%lx in two places (second: %s)\n",
					      (unsigned long)p->pfn, where);
		if (i && (page_count(p) || (page_flags(p) & (PG_buddy | PG_pcp | PG_reserved))))
			errors += verify_fail("pfn 0x%lx: tail of a free order-%u block (%s) has "
					      "flags 0x%x refcount %d\n", (unsigned long)p->pfn,
					      order, where, page_flags(p), page_count(p));
		if (READ_ONCE(p->compound_off))
			errors += verify_fail("pfn 0x%lx: free (%s) with compound_off %u: not its "
					      "own head\n", (unsigned long)p->pfn, where,
					      READ_ONCE(p->compound_off));
		__set_page_flag(p, PG_seen);
	}
	return errors;
}

/*
 * Marks are set only where verify_span() clears them: pfns of zone below end (the deferred
 * init's cursor, read under zone->lock), with struct pages of zone's node. A listed block
 * anywhere else is reported by its caller and left unmarked.
 */
static bool verify_in_span(struct zone *zone, unsigned long end, unsigned long pfn,
			   unsigned long nr)
{
	return pfn >= zone->zone_start_pfn && pfn < end && nr <= end - pfn &&
	       pfn_in_node(zone->node, pfn) && pfn_in_node(zone->node, pfn + nr - 1);
}

static unsigned long verify_free_block(struct zone *zone, unsigned long end, struct page *page,
				       unsigned int o, int mt)
{
	unsigned long errors = 0, pfn = page->pfn;

	if (!PageBuddy(page) || page->order != o || page->mt != mt || page_count(page))
		errors += verify_fail("%s free_list[%u][%s]: pfn 0x%lx has flags 0x%x order %u "
				      "mt %u refcount %d\n", zone->name, o, migratetype_names[mt],
				      pfn, page_flags(page), page->order, page->mt,
				      page_count(page));
	if (pfn & ((1ul << o) - 1))
		errors += verify_fail("%s: free block pfn 0x%lx not aligned to order %u\n",
				      zone->name, pfn, o);
	if (!verify_in_span(zone, end, pfn, 1ul << o) || page_zone(page) != zone)
		return errors + verify_fail("%s: free block pfn 0x%lx order %u (node %u zone %u) "
					    "outside the zone of node %d\n", zone->name, pfn, o,
					    page->nid, page->zone, zone->node->nid);
	return errors + verify_mark_block("buddy", page, o);
}

/* Every block on every free list: right flags, order, alignment, zone; counters agree. */
static unsigned long verify_free_lists(struct zone *zone, unsigned long end, unsigned long *free)
{
	unsigned long errors = 0;

	for (unsigned int o = 0; o <= MAX_ORDER; o++) {
		unsigned long blocks = 0;

		for (int mt = 0; mt < MIGRATE_TYPES; mt++) {
			struct page *page;

			list_for_each_entry(page, &zone->free_area[o].free_list[mt], lru) {
				if (++blocks > zone->spanned_pages)
					return errors + verify_fail("%s: free list loops\n",
								    zone->name);
				errors += verify_free_block(zone, end, page, o, mt);
				*free += 1ul << o;
			}
		}
		if (blocks != zone->free_area[o].nr_free)
			errors += verify_fail("%s order %u: nr_free %lu but %lu blocks listed\n",
					      zone->name, o, zone->free_area[o].nr_free, blocks);
	}
	if (*free != zone_free_pages(zone))
		errors += verify_fail("%s: free_pages %ld but %lu pages on free lists\n",
				      zone->name, zone->free_pages, *free);
	return errors;
}

/* One pfn not marked seen: it must be reserved or the head of an allocated block. Returns
 * how many pfns it accounts for (a whole allocated block, below end). */
static unsigned long verify_unlisted(struct zone *zone, unsigned long end, struct page *page,
				     unsigned long *alloc, unsigned long *errors)
{
	unsigned long nr;

	if (page_flags(page) & PG_reserved)
		return 1;
	if (page_count(page) <= 0 || (page_flags(page) & (PG_buddy | PG_pcp))) {
		*errors += verify_fail("%s: pfn 0x%lx lost: flags 0x%x refcount %d, on no list\n",
				       zone->name, (unsigned long)page->pfn, page_flags(page),
				       page_count(page));
		return 1;
	}
	nr = 1ul << MIN(page->order, MAX_ORDER);
	for (unsigned long i = 1; i < nr && page->pfn + i < end; i++) {
		struct page *t = page + i;

		if (page_count(t) || (page_flags(t) & (PG_buddy | PG_pcp | PG_reserved | PG_seen)))
			*errors += verify_fail("%s: pfn 0x%lx inside allocated order-%u block at "
					       "0x%lx has flags 0x%x refcount %d\n", zone->name,
					       (unsigned long)t->pfn, page->order,
					       (unsigned long)page->pfn, page_flags(t),
					       page_count(t));
		if (page_flags(t) & PG_seen)	/* listed too: reported, and its mark goes */
			__clear_page_flag(t, PG_seen);
	}
	*alloc += nr;
	return nr;
}

/* Second pass over the zone's span: clear marks, account for everything unlisted. Struct
 * pages the deferred init has not written yet are not looked at: those from end (the
 * cursor) up (and verify_zone() does not come here while a claimed chunk below it is being
 * written). */
static unsigned long verify_span(struct zone *zone, unsigned long end, unsigned long *alloc)
{
	struct pglist_data *pgdat = zone->node;
	unsigned long errors = 0, pfn = zone->zone_start_pfn;

	while (pfn < end) {
		struct page *page;

		if (!pfn_in_node(pgdat, pfn)) {	/* no RAM, or another node's section */
			pfn = ALIGN_UP(pfn + 1, PAGES_PER_SECTION);
			continue;
		}
		page = pfn_to_page(pgdat, pfn);
		if (page_flags(page) & PG_seen) {
			__clear_page_flag(page, PG_seen);
			pfn++;
			continue;
		}
		pfn += verify_unlisted(zone, end, page, alloc, &errors);
	}
	return errors;
}

static unsigned long verify_pcp_list(struct zone *zone, unsigned long end, unsigned int cpu,
				     unsigned int pindex, unsigned long *pages)
{
	unsigned int order = pindex_to_order(pindex);
	unsigned long errors = 0, n = 0;
	struct page *page;

	list_for_each_entry(page, &zone->pcp[cpu].lists[pindex], lru) {
		if (++n > zone->spanned_pages)
			return errors + 1 + (printk("mm_verify: cpu%u pcp list %u loops\n", cpu,
						    pindex), 0);
		bool in_span = verify_in_span(zone, end, page->pfn, 1ul << order);

		if (!PagePcp(page) || PageBuddy(page) || page->order != order || page_count(page) ||
		    (pindex < NR_LOWORDER_PCP_LISTS && page->mt != pindex % MIGRATE_PCPTYPES) ||
		    (page->pfn & ((1u << order) - 1)) || !in_span || page_zone(page) != zone) {
			printk("mm_verify: %s cpu%u pcp list %u: pfn 0x%lx flags 0x%x order %u mt "
			       "%u refcount %d\n", zone->name, cpu, pindex, (unsigned long)page->pfn,
			       page_flags(page), page->order, page->mt, page_count(page));
			errors++;
		}
		if (in_span)
			errors += verify_mark_block("pcp", page, order);
		*pages += 1ul << order;
	}
	return errors;
}

/* One CPU's lists, held as their model protects them: their pages and count. */
static unsigned long verify_pcp(struct zone *zone, unsigned long end, unsigned int cpu,
			       unsigned long *pages)
{
	unsigned long errors = 0, before = *pages;
	struct per_cpu_pages *pcp = &zone->pcp[cpu];

	for (unsigned int i = 0; i < NR_PCP_LISTS; i++)
		errors += verify_pcp_list(zone, end, cpu, i, pages);
	if (*pages - before != (unsigned long)pcp->count) {
		printk("mm_verify: %s cpu%u pcp count %d but %lu pages listed\n", zone->name, cpu,
		       pcp->count, *pages - before);
		errors++;
	}
	return errors;
}

/*
 * mm_verify() part: every page on every CPU's lists of zone, and each count. mm_verify()
 * needs the allocator quiet. Each pcp is still held as its model protects it, without
 * waiting (the caller may itself have interrupted a holder): a held lock is reported as a
 * pcp operation in flight. irqoff: interrupts off shields only this CPU's own lists; the
 * others rely on the quiet rule alone.
 */
static unsigned long pcp_verify_zone(struct zone *zone, unsigned long end, unsigned long *pages)
{
	unsigned long errors = 0;

	for (unsigned int cpu = 0; zone->pcp && cpu < zone->node->nr_cpus; cpu++) {
		struct per_cpu_pages *pcp = &zone->pcp[cpu];
		unsigned long flags = 0;	/* the trylock model leaves it alone */

		if (!pcp_lock(zone, pcp, PCP_TRY, &flags)) {
			printk("mm_verify: %s cpu%u pcp busy: a pcp operation is in flight, the "
			       "allocator is not quiet\n", zone->name, cpu);
			errors++;
			continue;
		}
		errors += verify_pcp(zone, end, cpu, pages);
		pcp_unlock(zone, pcp, flags);
	}
	return errors;
}

/*
 * The free lists and the per-CPU lists mark each page they hold PG_seen; the span walk then
 * clears every mark and accounts for the rest. Every page marked is one the walk visits
 * (verify_in_span()), and a zone the walk may not visit (a chunk of the deferred init being
 * written) is reported before anything is marked: no return leaves a mark behind, which
 * the allocator would take for a free page in use.
 */
static unsigned long verify_zone(struct zone *zone)
{
	unsigned long errors, flags, free = 0, pcp = 0, alloc = 0, end;
	unsigned int busy;

	flags = spin_lock_irqsave(&zone->lock);
	busy = zone->deferred_busy;
	end = MIN(zone_end_pfn(zone), zone->deferred_pfn);
	errors = busy ? 0 : verify_free_lists(zone, end, &free);
	spin_unlock_irqrestore(&zone->lock, flags);
	if (busy)	/* claimed chunks, below the cursor, not all written: no span walk */
		return verify_fail("%s: %u chunks of the deferred init are being written; "
				   "mm_verify needs a quiet node\n", zone->name, busy);
	errors += pcp_verify_zone(zone, end, &pcp);
	errors += verify_span(zone, end, &alloc);
	if (free + pcp + alloc != zone->managed_pages)
		errors += verify_fail("%s: managed %lu != free %lu + pcp %lu + allocated %lu\n",
				      zone->name, zone->managed_pages, free, pcp, alloc);
	return errors;
}

unsigned long mm_verify(struct pglist_data *pgdat)
{
	unsigned long errors = 0;

	for (int z = 0; z < MAX_NR_ZONES; z++)
		if (pgdat->node_zones[z].spanned_pages)
			errors += verify_zone(&pgdat->node_zones[z]);
	if (errors)
		printk("mm_verify: %s: %lu problems\n", pgdat->name, errors);
	return errors;
}

/* ---- counters and dumps ---- */

unsigned long zone_pcp_count(struct zone *zone)
{
	unsigned long n = 0;

	for (unsigned int cpu = 0; zone->pcp && cpu < zone->node->nr_cpus; cpu++)
		n += (unsigned long)READ_ONCE(zone->pcp[cpu].count);
	return n;
}

/* Add every counter of s to sum's: struct pcp_stats is u64 counters only (the padding too,
 * always 0). */
static void pcp_stats_add(struct pcp_stats *sum, const struct pcp_stats *s)
{
	const u64 *from = (const u64 *)s;
	u64 *to = (u64 *)sum;

	BUILD_BUG_ON(sizeof(*s) % sizeof(u64));
	for (size_t i = 0; i < sizeof(*s) / sizeof(u64); i++)
		to[i] += READ_ONCE(from[i]);
}

static void node_pcp_stats_add(struct pglist_data *pgdat, int cpu, struct pcp_stats *sum)
{
	for (int z = 0; z < MAX_NR_ZONES; z++) {
		struct zone *zone = &pgdat->node_zones[z];

		for (unsigned int c = 0; zone->pcp && c < pgdat->nr_cpus; c++)
			if (cpu < 0 || c == (unsigned int)cpu)
				pcp_stats_add(sum, pcp_stats_of(&zone->pcp[c]));
	}
}

void pcp_stats_reset(const struct mm_machine *m)
{
	for (unsigned int nid = 0; nid < m->nr_nodes; nid++)
		for (int z = 0; z < MAX_NR_ZONES; z++) {
			struct zone *zone = &m->node[nid]->node_zones[z];

			for (unsigned int c = 0; CONFIG_PCP_STATS && zone->pcp && c < m->nr_cpus; c++) {
				struct pcp_stats *s = (struct pcp_stats *)pcp_stats_of(&zone->pcp[c]);

				*s = (struct pcp_stats){ .numa_hit = s->numa_hit,
							 .numa_miss = s->numa_miss,
							 .numa_foreign = s->numa_foreign,
							 .remote_home = s->remote_home };
			}
		}
}

void pcp_stats_sum(struct pglist_data *pgdat, int cpu, struct pcp_stats *sum)
{
	memset(sum, 0, sizeof(*sum));
	node_pcp_stats_add(pgdat, cpu, sum);
}

void pcp_stats_sum_machine(const struct mm_machine *m, int cpu, struct pcp_stats *sum)
{
	memset(sum, 0, sizeof(*sum));
	for (unsigned int nid = 0; nid < m->nr_nodes; nid++)
		node_pcp_stats_add(m->node[nid], cpu, sum);
}

/* Per CPU: pages on each list (non-empty CPUs only), then the event counters. */
void show_pcpinfo(struct pglist_data *pgdat)
{
	printk("pcp: lock model %s, %s; per CPU: zone count high batch free_factor | lists "
	       "(order0 U M R, order1 ..., order3, pageblock)\n",
	       pcp_lock_model_name(pgdat->machine->pcp_lock), pcp_enabled ? "enabled" : "disabled");
	for (unsigned int cpu = 0; cpu < pgdat->nr_cpus; cpu++) {
		struct pcp_stats st;

		for (int z = 0; z < MAX_NR_ZONES; z++) {
			struct per_cpu_pages *pcp = &pgdat->node_zones[z].pcp[cpu];
			char line[160];
			int len = 0;

			if (!pgdat->node_zones[z].pcp || !READ_ONCE(pcp->count))
				continue;
			for (int i = 0; i < NR_PCP_LISTS; i++) {
				unsigned long n = 0;
				struct list_head *pos;

				list_for_each(pos, &pcp->lists[i])
					n++;
				len += scnprintf(line + len, sizeof(line) - (size_t)len, " %lu", n);
			}
			printk("cpu%-3u %-6s %5d %5d %4d %2d |%s\n", cpu, pgdat->node_zones[z].name,
			       pcp->count, pcp->high, pcp->batch, pcp->free_factor, line);
		}
		pcp_stats_sum(pgdat, (int)cpu, &st);
		if (st.alloc_hit || st.free_hit || st.trylock_fail_alloc || st.trylock_fail_free)
			printk("cpu%-3u hits alloc %llu free %llu refill %llu spill %llu trylock-fail "
			       "alloc %llu free %llu drained %llu ipi-drains %llu\n", cpu,
			       (unsigned long long)st.alloc_hit, (unsigned long long)st.free_hit,
			       (unsigned long long)st.refill, (unsigned long long)st.spill,
			       (unsigned long long)st.trylock_fail_alloc,
			       (unsigned long long)st.trylock_fail_free,
			       (unsigned long long)st.drained, (unsigned long long)st.ipi_drain);
	}
}

unsigned long node_free_pages(struct pglist_data *pgdat)
{
	unsigned long n = 0;

	for (int z = 0; z < MAX_NR_ZONES; z++)
		n += zone_free_pages(&pgdat->node_zones[z]) + zone_pcp_count(&pgdat->node_zones[z]);
	return n;
}

unsigned long node_managed_pages(struct pglist_data *pgdat)
{
	unsigned long n = 0;

	for (int z = 0; z < MAX_NR_ZONES; z++)
		n += pgdat->node_zones[z].managed_pages;
	return n;
}

/* Like /proc/buddyinfo: free blocks per order, per zone. */
void show_buddyinfo(struct pglist_data *pgdat)
{
	for (int z = 0; z < MAX_NR_ZONES; z++) {
		struct zone *zone = &pgdat->node_zones[z];
		char line[256];
		int len;

		if (!zone_populated(zone))
			continue;
		len = scnprintf(line, sizeof(line), "Node %d, zone %8s", pgdat->nid, zone->name);
		for (unsigned int o = 0; o <= MAX_ORDER; o++)
			len += scnprintf(line + len, sizeof(line) - (size_t)len, " %6lu",
					 READ_ONCE(zone->free_area[o].nr_free));
		printk("%s\n", line);
	}
}

/* Like /proc/zoneinfo, the allocator's part of it. */
void show_zoneinfo(struct pglist_data *pgdat)
{
	for (int z = 0; z < MAX_NR_ZONES; z++) {
		struct zone *zone = &pgdat->node_zones[z];

		printk("Node %d, zone %8s\n  pages free     %lu\n        min      %lu\n"
		       "        low      %lu\n        high     %lu\n        spanned  %lu\n"
		       "        present  %lu\n        managed  %lu\n"
		       "        protection: (%lu, %lu, %lu)\n  start_pfn:     %lu\n"
		       "  pagesets: high %d batch %d, %lu pages on per-CPU lists\n",
		       pgdat->nid, zone->name, zone_free_pages(zone), zone->_watermark[WMARK_MIN],
		       zone->_watermark[WMARK_LOW], zone->_watermark[WMARK_HIGH],
		       zone->spanned_pages, zone->present_pages, zone->managed_pages,
		       zone->lowmem_reserve[0], zone->lowmem_reserve[1], zone->lowmem_reserve[2],
		       zone->zone_start_pfn, zone->pageset_high, zone->pageset_batch,
		       zone_pcp_count(zone));
	}
}

static void show_free_per_type(struct zone *zone, int mt)
{
	char line[256];
	int len = scnprintf(line, sizeof(line), "Node %4d, zone %8s, type %12s",
			    zone->node->nid, zone->name, migratetype_names[mt]);

	for (unsigned int o = 0; o <= MAX_ORDER; o++) {
		unsigned long n = 0;
		struct list_head *pos;

		list_for_each(pos, &zone->free_area[o].free_list[mt])
			n++;
		len += scnprintf(line + len, sizeof(line) - (size_t)len, " %6lu", n);
	}
	printk("%s\n", line);
}

static void show_blocks_per_type(struct zone *zone)
{
	unsigned long count[MIGRATE_TYPES] = { 0 };

	for (unsigned long pfn = zone->zone_start_pfn; pfn < zone_end_pfn(zone);
	     pfn += pageblock_nr_pages)
		if (pfn_in_node(zone->node, pfn))
			count[get_pageblock_migratetype(pfn_to_page(zone->node, pfn))]++;
	printk("Node %d, zone %8s %12lu %12lu %12lu\n", zone->node->nid, zone->name,
	       count[MIGRATE_UNMOVABLE], count[MIGRATE_MOVABLE], count[MIGRATE_RECLAIMABLE]);
}

/* Like /proc/pagetypeinfo: free blocks per order and type, and pageblocks per type. */
void show_pagetypeinfo(struct pglist_data *pgdat)
{
	printk("Page block order: %d\nPages per block:  %lu\n", pageblock_order, pageblock_nr_pages);
	printk("Free pages count per migrate type at order 0..%d:\n", MAX_ORDER);
	for (int z = 0; z < MAX_NR_ZONES; z++) {
		struct zone *zone = &pgdat->node_zones[z];
		unsigned long flags;

		if (!zone_populated(zone))
			continue;
		flags = spin_lock_irqsave(&zone->lock);
		for (int mt = 0; mt < MIGRATE_TYPES; mt++)
			show_free_per_type(zone, mt);
		spin_unlock_irqrestore(&zone->lock, flags);
	}
	printk("Number of blocks type     %12s %12s %12s\n", migratetype_names[0],
	       migratetype_names[1], migratetype_names[2]);
	for (int z = 0; z < MAX_NR_ZONES; z++)
		if (zone_populated(&pgdat->node_zones[z]))
			show_blocks_per_type(&pgdat->node_zones[z]);
}
