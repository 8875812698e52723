/*
 * KTAP suite mm_buddy: the buddy allocator on real memory in QEMU, on the kernel's nodes
 * (-m 128M, 2G, 6G give one, two, three zones). Scenarios on a private instance, which the
 * host runs too, are in mm_private.c; finer host-only ones in tests/host/test_buddy.c.
 */
#include "tests/ktest/ktest.h"
#include "kernel/bootinfo.h"
#include "kernel/string.h"
#include "mm/mm_test.h"
#include "mm/memblock.h"
#include "kernel/smp.h"

/* Everything, ignoring watermarks; may drain every CPU's lists when it runs out. */
#define GFP_ALL (__GFP_MEMALLOC | __GFP_NOWARN | __GFP_DIRECT_RECLAIM)

/* Every node built at boot is consistent; report what each holds (free pages, overhead). */
static void mm_boot_node_consistent(struct ktest *t)
{
	struct mm_machine *m = mm_machine();

	KT_ASSERT_GT(t, machine_managed_pages(m), 0ul);
	for (unsigned int nid = 0; nid < m->nr_nodes; nid++) {
		struct pglist_data *pgdat = m->node[nid];
		unsigned long managed = node_managed_pages(pgdat);

		KT_EXPECT_EQ(t, mm_verify(pgdat), 0ul);
		ktest_printf(t, "%s: free pages at boot %lu (%lu MiB) of %lu managed; memory map "
			     "%lu KiB = %lu KiB per GiB of RAM (struct page %zu bytes)", pgdat->name,
			     node_free_pages(pgdat), node_free_pages(pgdat) >> (20 - PAGE_SHIFT),
			     managed, pgdat->memmap_bytes >> 10,
			     (unsigned long)sizeof(struct page) << 8, sizeof(struct page));
		for (int z = 0; z < MAX_NR_ZONES; z++) {
			struct zone *zone = &pgdat->node_zones[z];

			ktest_printf(t, "zone %-6s managed %8lu free %8lu min %6lu low %6lu high %6lu",
				     zone->name, zone->managed_pages, zone_free_pages(zone),
				     zone->_watermark[WMARK_MIN], zone->_watermark[WMARK_LOW],
				     zone->_watermark[WMARK_HIGH]);
		}
	}
}

static bool boot_ram_above(u64 addr)
{
	for (unsigned int i = 0; i < boot_info.nr_mmap; i++)
		if (boot_info.mmap[i].type == MEM_USABLE &&
		    boot_info.mmap[i].base + boot_info.mmap[i].length > addr)
			return true;
	return false;
}

/* Every order 0..10 comes back naturally aligned, inside its zone, and freeing it restores
 * the node's free count. */
static void mm_alloc_every_order_aligned(struct ktest *t)
{
	struct pglist_data *pgdat = mm_node();

	for (unsigned int o = 0; o <= MAX_ORDER; o++) {
		unsigned long before = node_free_pages(pgdat);
		struct page *page = alloc_pages(GFP_KERNEL, o);

		KT_ASSERT_NOT_NULL(t, page);
		KT_EXPECT_EQ(t, page_to_pfn(page) & ((1ul << o) - 1), 0ul);
		KT_EXPECT_TRUE(t, zone_spans_pfn(page_zone(page), page_to_pfn(page) + (1ul << o) - 1));
		__free_pages(page, o);
		KT_EXPECT_EQ(t, node_free_pages(pgdat), before);
	}
	KT_EXPECT_EQ(t, mm_verify(pgdat), 0ul);
}

/* gfp zone flags: GFP_DMA below 16 MiB, GFP_DMA32 below 4 GiB; plain GFP_KERNEL from NORMAL
 * when there is RAM above 4 GiB (-m 6G). */
static void mm_gfp_zone_limits(struct ktest *t)
{
	struct page *dma = alloc_pages(GFP_DMA, 0), *dma32 = alloc_pages(GFP_DMA32, 0);
	struct page *any = alloc_pages(GFP_KERNEL, 0);

	KT_EXPECT_NOT_NULL(t, dma32);
	KT_EXPECT_NOT_NULL(t, any);
	if (dma32)
		KT_EXPECT_LT(t, page_to_phys(dma32), 4ull << 30);
	if (dma)
		KT_EXPECT_LT(t, page_to_phys(dma), 16ull << 20);
	else
		ktest_printf(t, "no free DMA page (the kernel image fills most of 0-16 MiB)");
	if (any && boot_ram_above(4ull << 30))
		KT_EXPECT_EQ(t, any->zone, ZONE_NORMAL);
	if (dma)
		__free_pages(dma, 0);
	if (dma32)
		__free_pages(dma32, 0);
	if (any)
		__free_pages(any, 0);
}

/* Take everything (largest blocks first, ignoring watermarks), chained through page->lru,
 * until NULL at every order: every node runs dry, this CPU's first (its zonelist order);
 * then free all. Every node's free count is restored exactly. */
static void mm_exhaustion_restores_counts(struct ktest *t)
{
	struct mm_machine *m = mm_machine();
	unsigned long before[MAX_NUMA_NODES], total = nr_free_pages(), got = 0;
	struct list_head held;
	struct page *page, *tmp;

	for (unsigned int nid = 0; nid < m->nr_nodes; nid++)
		before[nid] = node_free_pages(m->node[nid]);
	INIT_LIST_HEAD(&held);
	for (int o = MAX_ORDER; o >= 0; o--)
		while ((page = alloc_pages(GFP_ALL, (unsigned int)o))) {
			list_add(&page->lru, &held);
			got += 1ul << o;
		}
	KT_EXPECT_EQ(t, got, total);
	for (unsigned int nid = 0; nid < m->nr_nodes; nid++)
		KT_EXPECT_EQ(t, node_free_pages(m->node[nid]), 0ul);
	KT_EXPECT_NULL(t, alloc_pages(GFP_ALL, 0));
	KT_EXPECT_EQ(t, mm_verify_machine(m), 0ul);
	list_for_each_entry_safe(page, tmp, &held, lru)
		__free_pages(page, page->order);
	drain_all_pages_machine(mm_machine());
	for (unsigned int nid = 0; nid < m->nr_nodes; nid++)
		KT_EXPECT_EQ(t, node_free_pages(m->node[nid]), before[nid]);
	KT_EXPECT_EQ(t, mm_verify_machine(m), 0ul);
	ktest_printf(t, "allocated and freed %lu pages on %u node(s)", got, m->nr_nodes);
}

/* Cost of an order-0 alloc+free pair through the buddy lists alone (per-CPU lists off,
 * poisoning off), on the kernel's node: cycles per pair, from the TSC. */
static void mm_bench_buddy_order0_pair(struct ktest *t)
{
	struct pglist_data *pgdat = mm_node();
	const unsigned int n = 100000;
	bool poison = pgdat->poison, pcp = pcp_enabled;
	u64 start, best = ~0ull;

	pgdat->poison = false;
	drain_all_pages_machine(pgdat->machine);
	pcp_enabled = false;
	for (int round = 0; round < 3; round++) {
		start = arch_cycles();
		for (unsigned int i = 0; i < n; i++) {
			struct page *page = alloc_pages(GFP_KERNEL, 0);

			if (likely(page))
				__free_pages(page, 0);
		}
		best = MIN(best, (arch_cycles() - start) / n);
	}
	pcp_enabled = pcp;
	pgdat->poison = poison;
	ktest_printf(t, "buddy only: order-0 alloc+free pair %llu cycles (best of 3 x %u)",
		     (unsigned long long)best, n);
	KT_EXPECT_EQ(t, mm_verify(pgdat), 0ul);
}

static const struct ktest_case mm_buddy_cases[] = {
	KTEST_CASE(mm_boot_node_consistent),
	KTEST_CASE_NOFAIL(mm_alloc_every_order_aligned, "one block of each order must come"),
	KTEST_CASE_NOFAIL(mm_gfp_zone_limits, "checks where one page of each zone comes from"),
	KTEST_CASE_NOFAIL(mm_exhaustion_restores_counts, "counts every page up to the first NULL"),
	KTEST_CASE_NOFAIL(mm_bench_buddy_order0_pair, "a timing: no failures mixed in"),
};
KTEST_SUITE(mm_buddy, mm_buddy_cases);
