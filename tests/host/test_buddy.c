/*
 * Host tests of the buddy allocator (mm/page_alloc.c, mm_init.c, debug.c) on private
 * instances: split and merge, alignment, exhaustion, watermarks, zone and migratetype
 * fallback, lowmem_reserve, and bad input. mm_verify() runs at the end of each.
 */
#include <stdlib.h>
#include <string.h>
#include "tests/host/harness.h"
#include "kernel/math.h"

#define GFP_TEST_MOVABLE (__GFP_MOVABLE | __GFP_MEMALLOC | __GFP_NOWARN)

/* Send every order-0..3 free of pgdat straight to the buddy lists (no per-CPU lists), so
 * free-list counts are exact. */
static void buddy_only(struct pglist_data *pgdat)
{
	for (int z = 0; z < MAX_NR_ZONES; z++)
		zone_pcp_disable(&pgdat->node_zones[z]);
}

/* Random orders until memory runs out: every block is naturally aligned (pfn multiple of
 * 2^order) and inside a zone; freeing all of them restores every count. The allocations may
 * wait (__GFP_DIRECT_RECLAIM), so the last blocks on this CPU's lists are drained and taken
 * too: nothing stays free. */
static void alloc_pages_alignment_random_orders(struct ktest *t)
{
	const struct mem_region map[] = { { 1 * MiB, 79 * MiB, MEM_USABLE } };
	struct pglist_data *pgdat = test_node_create(map, ARRAY_SIZE(map), 4);
	static struct page *pages[40000];
	static u8 orders[40000];
	unsigned long n = 0, before;

	KT_ASSERT_TRUE(t, pgdat);
	before = node_free_pages(pgdat);
	srand(1);
	while (n < ARRAY_SIZE(pages)) {
		unsigned int o = (unsigned int)rand() % (MAX_ORDER + 1);
		struct page *page = alloc_pages_node(pgdat, GFP_TEST_MOVABLE | GFP_KERNEL, o);

		if (!page && !(page = alloc_pages_node(pgdat, GFP_TEST_MOVABLE | GFP_KERNEL, o = 0)))
			break;
		KT_EXPECT_EQ(t, page_to_pfn(page) & ((1ul << o) - 1), 0);
		KT_EXPECT_TRUE(t, zone_spans_pfn(page_zone(page),
						 page_to_pfn(page) + (1ul << o) - 1));
		pages[n] = page;
		orders[n++] = (u8)o;
	}
	KT_EXPECT_EQ(t, node_free_pages(pgdat), 0);
	for (unsigned long i = 0; i < n; i++)
		__free_pages(pages[i], orders[i]);
	KT_EXPECT_EQ(t, node_free_pages(pgdat), before);
	KT_EXPECT_EQ(t, mm_verify(pgdat), 0);
	test_node_destroy(pgdat);
}

/* int_sqrt and the published min_free_kbytes examples: 512 MiB -> 2896 kB, 1 GiB -> 4096. */
static void int_sqrt_min_free_kbytes_examples(struct ktest *t)
{
	KT_EXPECT_EQ(t, int_sqrt(0), 0);
	KT_EXPECT_EQ(t, int_sqrt(15), 3);
	KT_EXPECT_EQ(t, int_sqrt(16), 4);
	KT_EXPECT_EQ(t, int_sqrt(512 * 1024 * 16), 2896);
	KT_EXPECT_EQ(t, int_sqrt(1024 * 1024 * 16), 4096);
	KT_EXPECT_EQ(t, int_sqrt(~0ul), 0xfffffffful);
}

/*
 * One DMA32 zone of 1 GiB at [1G, 2G). Metadata: 8 MiB of memory map, one page of section
 * table, and per zone one page of per-CPU lists with their counters (4 x 512 bytes):
 * 2048 + 1 + 3 = 2052 pages, so managed = 262144 - 2052 = 260092 pages = 1040368 kB;
 * min_free_kbytes = isqrt(16 * 1040368) = 4079 -> min 1019 pages;
 * delta = max(1019 / 4, 260092 * 10 / 10000) = 260 -> low 1279, high 1539.
 * Then: GFP_KERNEL allocations stop with exactly min pages free, GFP_ATOMIC ones at
 * min - min/2 - (min - min/2)/4 = 383, and __GFP_MEMALLOC ones at 0.
 */
static void watermarks_linux_formula_and_limits(struct ktest *t)
{
	const struct mem_region map[] = { { 1 * GiB, 1 * GiB, MEM_USABLE } };
	struct pglist_data *pgdat = test_node_create(map, ARRAY_SIZE(map), 4);
	static struct page *pages[270000];
	struct zone *zone;
	unsigned long n = 0;

	KT_ASSERT_TRUE(t, pgdat);
	buddy_only(pgdat);
	zone = &pgdat->node_zones[ZONE_DMA32];
	KT_EXPECT_EQ(t, zone->managed_pages, 260092);
	KT_EXPECT_EQ(t, pgdat->min_free_kbytes, 4079);
	KT_EXPECT_EQ(t, zone->_watermark[WMARK_MIN], 1019);
	KT_EXPECT_EQ(t, zone->_watermark[WMARK_LOW], 1279);
	KT_EXPECT_EQ(t, zone->_watermark[WMARK_HIGH], 1539);
	n += alloc_until_null(pgdat, GFP_KERNEL, 0, pages + n, ARRAY_SIZE(pages) - n);
	KT_EXPECT_EQ(t, zone_free_pages(zone), 1019);
	n += alloc_until_null(pgdat, GFP_ATOMIC, 0, pages + n, ARRAY_SIZE(pages) - n);
	KT_EXPECT_EQ(t, zone_free_pages(zone), 383);
	n += alloc_until_null(pgdat, __GFP_MEMALLOC, 0, pages + n, ARRAY_SIZE(pages) - n);
	KT_EXPECT_EQ(t, zone_free_pages(zone), 0);
	KT_EXPECT_EQ(t, n, 260092);
	free_all(pages, n, 0);
	KT_EXPECT_EQ(t, zone_free_pages(zone), 260092);
	KT_EXPECT_EQ(t, mm_verify(pgdat), 0);
	test_node_destroy(pgdat);
}

/* The three-zone machine used below: DMA [1M, 16M), DMA32 [16M, 272M), NORMAL [4G, 4G+256M).
 * The NORMAL part is above the boot direct map, so arch_map_direct() must map it. */
static struct pglist_data *three_zone_node(struct ktest *t)
{
	const struct mem_region map[] = { { 4 * GiB, 256 * MiB, MEM_USABLE },
					  { 1 * MiB, 271 * MiB, MEM_USABLE } };
	unsigned long calls = host_map_direct_calls;
	struct pglist_data *pgdat = test_node_create(map, ARRAY_SIZE(map), 4);

	KT_EXPECT_EQ(t, host_map_direct_calls, calls + 1);
	return pgdat;
}

static unsigned long zone_min_plus_reserve(struct zone *zone, enum zone_type highest)
{
	return zone->_watermark[WMARK_MIN] + zone->lowmem_reserve[highest];
}

/*
 * Zone fallback and lowmem_reserve. GFP_KERNEL takes NORMAL first, then DMA32, then DMA,
 * and stops when each zone is at min + lowmem_reserve[NORMAL]. GFP_DMA32 then never gets a
 * NORMAL page and goes down to DMA32's min and DMA's min + lowmem_reserve[DMA32]. GFP_DMA
 * finally takes DMA to its min. The reserves follow managed(upper zones) / 256.
 */
static void alloc_pages_zone_fallback_lowmem_reserve(struct ktest *t)
{
	struct pglist_data *pgdat = three_zone_node(t);
	static struct page *pages[200000];
	struct zone *dma, *dma32, *normal;
	unsigned long n, m, k;

	KT_ASSERT_TRUE(t, pgdat);
	buddy_only(pgdat);
	dma = &pgdat->node_zones[ZONE_DMA];
	dma32 = &pgdat->node_zones[ZONE_DMA32];
	normal = &pgdat->node_zones[ZONE_NORMAL];
	KT_EXPECT_EQ(t, normal->managed_pages, 65536);
	KT_EXPECT_EQ(t, dma->lowmem_reserve[ZONE_DMA32], dma32->managed_pages / 256);
	KT_EXPECT_EQ(t, dma->lowmem_reserve[ZONE_NORMAL],
		  (dma32->managed_pages + normal->managed_pages) / 256);
	KT_EXPECT_EQ(t, dma32->lowmem_reserve[ZONE_NORMAL], normal->managed_pages / 256);
	KT_EXPECT_EQ(t, normal->lowmem_reserve[ZONE_NORMAL], 0);

	n = alloc_until_null(pgdat, GFP_KERNEL, 0, pages, ARRAY_SIZE(pages));
	KT_EXPECT_TRUE(t, pages[0]->zone == ZONE_NORMAL);
	KT_EXPECT_EQ(t, zone_free_pages(normal), zone_min_plus_reserve(normal, ZONE_NORMAL));
	KT_EXPECT_EQ(t, zone_free_pages(dma32), zone_min_plus_reserve(dma32, ZONE_NORMAL));
	KT_EXPECT_EQ(t, zone_free_pages(dma), zone_min_plus_reserve(dma, ZONE_NORMAL));

	m = alloc_until_null(pgdat, GFP_DMA32, 0, pages + n, ARRAY_SIZE(pages) - n);
	KT_EXPECT_TRUE(t, m > 0);
	for (unsigned long i = n; i < n + m; i++)
		KT_EXPECT_TRUE(t, pages[i]->zone != ZONE_NORMAL);
	KT_EXPECT_EQ(t, zone_free_pages(dma32), zone_min_plus_reserve(dma32, ZONE_DMA32));
	KT_EXPECT_EQ(t, zone_free_pages(dma), zone_min_plus_reserve(dma, ZONE_DMA32));

	k = alloc_until_null(pgdat, GFP_DMA, 0, pages + n + m, ARRAY_SIZE(pages) - n - m);
	for (unsigned long i = n + m; i < n + m + k; i++)
		KT_EXPECT_TRUE(t, pages[i]->zone == ZONE_DMA);
	KT_EXPECT_EQ(t, zone_free_pages(dma), dma->_watermark[WMARK_MIN]);
	free_all(pages, n + m + k, 0);
	KT_EXPECT_EQ(t, mm_verify(pgdat), 0);
	test_node_destroy(pgdat);
}

/*
 * Every pageblock starts MOVABLE. The first UNMOVABLE allocation falls back, steals the
 * largest block (order 10 = two pageblocks, which change type), and the next UNMOVABLE
 * allocation is served from the stolen block without another fallback. A MOVABLE
 * allocation does not land in the stolen pageblocks.
 */
static void alloc_pages_migratetype_fallback_steals(struct ktest *t)
{
	const struct mem_region map[] = { { 16 * MiB, 64 * MiB, MEM_USABLE } };
	struct pglist_data *pgdat = test_node_create(map, ARRAY_SIZE(map), 4);
	struct page *a, *b, *m;
	struct zone *zone;

	KT_ASSERT_TRUE(t, pgdat);
	buddy_only(pgdat);
	zone = &pgdat->node_zones[ZONE_DMA32];
	KT_EXPECT_EQ(t, zone->stat_fallback, 0);
	a = alloc_pages_node(pgdat, GFP_KERNEL, 0);
	KT_ASSERT_TRUE(t, a);
	KT_EXPECT_EQ(t, get_pageblock_migratetype(a), MIGRATE_UNMOVABLE);
	KT_EXPECT_EQ(t, zone->stat_fallback, 1);
	KT_EXPECT_EQ(t, zone->stat_steal_block, 2);
	b = alloc_pages_node(pgdat, GFP_KERNEL, 0);
	KT_ASSERT_TRUE(t, b);
	KT_EXPECT_EQ(t, zone->stat_fallback, 1);
	KT_EXPECT_EQ(t, page_to_pfn(b) >> MAX_ORDER, page_to_pfn(a) >> MAX_ORDER);
	m = alloc_pages_node(pgdat, GFP_USER, 0);
	KT_ASSERT_TRUE(t, m);
	KT_EXPECT_EQ(t, get_pageblock_migratetype(m), MIGRATE_MOVABLE);
	KT_EXPECT_TRUE(t, page_to_pfn(m) >> MAX_ORDER != page_to_pfn(a) >> MAX_ORDER);
	__free_pages(a, 0);
	__free_pages(b, 0);
	__free_pages(m, 0);
	KT_EXPECT_EQ(t, mm_verify(pgdat), 0);
	test_node_destroy(pgdat);
}

static struct pglist_data *small_node(void)
{
	const struct mem_region map[] = { { 1 * MiB, 31 * MiB, MEM_USABLE } };

	return test_node_create(map, ARRAY_SIZE(map), 4);
}

/* Freeing a page twice: the second free, and a put_page() of the same free page, each
 * report "double free" naming the pfn, and change nothing (free count as after the first
 * free). */
static void free_pages_double_free_reported(struct ktest *t)
{
	struct pglist_data *pgdat;
	struct page *page;
	unsigned long free;
	char pfn[32];

	KT_SKIP_UNLESS_DEBUG_VM(t, "no double-free check");
	pgdat = small_node();
	ktest_expect_taint(TAINT_BAD_PAGE);	/* provoked on purpose below */
	KT_ASSERT_TRUE(t, pgdat);
	page = alloc_pages_node(pgdat, GFP_KERNEL, 0);
	KT_ASSERT_TRUE(t, page);
	__free_pages(page, 0);
	free = node_free_pages(pgdat);
	__free_pages(page, 0);
	put_page(page);
	snprintf(pfn, sizeof(pfn), "pfn 0x%lx ", page_to_pfn(page));
	KT_EXPECT_TRUE(t, host_console_contains("double free"));
	KT_EXPECT_TRUE(t, host_console_contains(pfn));
	KT_EXPECT_EQ(t, pgdat->bad_pages, 2);
	KT_EXPECT_EQ(t, node_free_pages(pgdat), free);
	KT_EXPECT_EQ(t, mm_verify(pgdat), 0);
	test_node_destroy(pgdat);
}

static void get_page_cb(void *page)
{
	get_page(page);
}

/* get_page() on a free page (count 0) is a bug (VM_BUG_ON in mm/mm.h): it panics. The page
 * sits on a free list; a reference to it would be handed out again with the page. */
static void get_page_of_free_page_panics(struct ktest *t)
{
	struct pglist_data *pgdat;
	struct page *page;

	KT_SKIP_UNLESS_DEBUG_VM(t, "no VM_BUG_ON");
	pgdat = small_node();
	KT_ASSERT_TRUE(t, pgdat);
	page = alloc_pages_node(pgdat, GFP_KERNEL, 0);
	KT_ASSERT_TRUE(t, page);
	__free_pages(page, 0);
	KT_EXPECT_TRUE(t, host_panics(get_page_cb, page));
	KT_EXPECT_TRUE(t, strstr(host_panic_msg, "old <= 0") != NULL);
	WRITE_ONCE(page->refcount, 0);	/* the count went up before the check: back to free */
	KT_EXPECT_EQ(t, mm_verify(pgdat), 0);
	test_node_destroy(pgdat);
}

/* Freeing with the wrong order (2 instead of 0, then 0 instead of 3): reported, and the
 * block is freed at the order it was allocated with, so no page is lost or doubled. */
static void free_pages_wrong_order_reported(struct ktest *t)
{
	struct pglist_data *pgdat;
	struct page *p0, *p3;
	unsigned long free;

	KT_SKIP_UNLESS_DEBUG_VM(t, "no free-order check");
	pgdat = small_node();
	ktest_expect_taint(TAINT_BAD_PAGE);	/* provoked on purpose below */
	KT_ASSERT_TRUE(t, pgdat);
	free = node_free_pages(pgdat);
	p0 = alloc_pages_node(pgdat, GFP_KERNEL, 0);
	p3 = alloc_pages_node(pgdat, GFP_KERNEL, 3);
	KT_ASSERT_TRUE(t, p0 && p3);
	__free_pages(p0, 2);
	__free_pages(p3, 0);
	KT_EXPECT_TRUE(t, host_console_contains("freed with order 2, allocated with order 0"));
	KT_EXPECT_TRUE(t, host_console_contains("freed with order 0, allocated with order 3"));
	KT_EXPECT_EQ(t, pgdat->bad_pages, 2);
	KT_EXPECT_EQ(t, node_free_pages(pgdat), free);
	KT_EXPECT_EQ(t, mm_verify(pgdat), 0);
	test_node_destroy(pgdat);
}

/* Freeing a reserved page (the memory map's own memory) is refused with a report. */
static void free_pages_reserved_page_reported(struct ktest *t)
{
	struct pglist_data *pgdat;
	struct page *reserved;
	unsigned long free;

	KT_SKIP_UNLESS_DEBUG_VM(t, "no reserved-page check at free");
	pgdat = small_node();
	ktest_expect_taint(TAINT_BAD_PAGE);	/* provoked on purpose below */
	KT_ASSERT_TRUE(t, pgdat);
	free = node_free_pages(pgdat);
	reserved = pfn_to_page(pgdat, pgdat->node_end_pfn - 1);	/* memblock allocs are top-down */
	KT_ASSERT_TRUE(t, PageReserved(reserved));
	__free_pages(reserved, 0);
	put_page(reserved);
	KT_EXPECT_TRUE(t, host_console_contains("freeing a reserved page"));
	KT_EXPECT_EQ(t, pgdat->bad_pages, 2);
	KT_EXPECT_TRUE(t, PageReserved(reserved) && page_count(reserved) == 1);
	KT_EXPECT_EQ(t, node_free_pages(pgdat), free);
	KT_EXPECT_EQ(t, mm_verify(pgdat), 0);
	test_node_destroy(pgdat);
}

/* A write into a freed page is caught when the page is next allocated (poisoning, which
 * the node gets here whatever mm.poison= says: release builds default it off). */
static void alloc_pages_poison_catches_use_after_free(struct ktest *t)
{
	struct pglist_data *pgdat = small_node();
	struct page *page, *again;

	ktest_expect_taint(TAINT_BAD_PAGE);	/* provoked on purpose below */
	KT_ASSERT_TRUE(t, pgdat);
	pgdat->poison = true;
	buddy_only(pgdat);
	page = alloc_pages_node(pgdat, GFP_KERNEL, 0);
	KT_ASSERT_TRUE(t, page);
	__free_pages(page, 0);
	((u8 *)page_address(page))[100] = 0x42;	/* the bug under test */
	again = alloc_pages_node(pgdat, GFP_KERNEL, 0);	/* LIFO: the same page comes back */
	KT_EXPECT_TRUE(t, again == page);
	KT_EXPECT_TRUE(t, host_console_contains("use after free: byte at offset 100 is 0x42"));
	KT_EXPECT_EQ(t, pgdat->bad_pages, 1);
	__free_pages(again, 0);
	KT_EXPECT_EQ(t, mm_verify(pgdat), 0);
	test_node_destroy(pgdat);
}

/* get_page/put_page: the block survives while references remain, and the last put frees
 * all 2^order pages. __GFP_ZERO pages read as zero even after poisoning. */
static void put_page_frees_on_last_reference(struct ktest *t)
{
	struct pglist_data *pgdat = small_node();
	struct page *page;
	unsigned long free;
	const u8 *bytes;

	KT_ASSERT_TRUE(t, pgdat);
	buddy_only(pgdat);
	free = node_free_pages(pgdat);
	page = alloc_pages_node(pgdat, GFP_KERNEL | __GFP_ZERO, 2);
	KT_ASSERT_TRUE(t, page);
	bytes = page_address(page);
	for (unsigned long i = 0; i < 4 * PAGE_SIZE; i++)
		if (bytes[i])
			KT_EXPECT_EQ(t, bytes[i], 0);
	get_page(page);
	put_page(page);
	KT_EXPECT_EQ(t, node_free_pages(pgdat), free - 4);
	KT_EXPECT_EQ(t, page_count(page), 1);
	put_page(page);
	KT_EXPECT_EQ(t, node_free_pages(pgdat), free);
	KT_EXPECT_EQ(t, pgdat->bad_pages, 0);
	KT_EXPECT_EQ(t, mm_verify(pgdat), 0);
	test_node_destroy(pgdat);
}

/* mm_verify() is not blind: a free block that lost its PG_buddy flag is reported, and the
 * report goes away when the flag is restored. */
static void mm_verify_detects_corruption(struct ktest *t)
{
	struct pglist_data *pgdat = small_node();
	struct zone *zone;
	struct page *head;

	KT_ASSERT_TRUE(t, pgdat);
	zone = &pgdat->node_zones[ZONE_DMA32];
	KT_ASSERT_TRUE(t, zone->free_area[MAX_ORDER].nr_free);
	head = list_first_entry(&zone->free_area[MAX_ORDER].free_list[MIGRATE_MOVABLE],
				struct page, lru);
	head->flags &= (u8)~PG_buddy;
	KT_EXPECT_TRUE(t, mm_verify(pgdat) > 0);
	KT_EXPECT_TRUE(t, host_console_contains("mm_verify"));
	head->flags |= PG_buddy;
	KT_EXPECT_EQ(t, mm_verify(pgdat), 0);
	test_node_destroy(pgdat);
}

/*
 * A free page that is in use (a stale user took a reference after freeing it) is reported
 * when an allocation takes it off a free list, and then discarded, never handed out: the
 * allocation gets another page. Here the page sits at the head of this CPU's order-0 list.
 * When the stale user drops its reference the page comes back and nothing is lost.
 */
static void alloc_pages_discards_free_page_in_use_pcp(struct ktest *t)
{
	struct pglist_data *pgdat;
	struct page *stale, *got;
	unsigned long free;

	KT_SKIP_UNLESS_DEBUG_VM(t, "no check of a page leaving a per-CPU list");
	pgdat = small_node();
	KT_ASSERT_TRUE(t, pgdat);
	ktest_expect_taint(TAINT_BAD_PAGE);	/* provoked on purpose below */
	free = node_free_pages(pgdat);
	stale = alloc_pages_node(pgdat, GFP_KERNEL, 0);
	KT_ASSERT_TRUE(t, stale);
	__free_pages(stale, 0);			/* head of this CPU's list (LIFO) */
	KT_ASSERT_TRUE(t, PagePcp(stale));
	WRITE_ONCE(stale->refcount, 1);	/* the stale user */
	got = alloc_pages_node(pgdat, GFP_KERNEL, 0);
	KT_EXPECT_TRUE(t, got && got != stale);
	KT_EXPECT_EQ(t, pgdat->bad_pages, 1);
	KT_EXPECT_TRUE(t, host_console_contains("free page in use"));
	KT_EXPECT_TRUE(t, !PagePcp(stale) && page_count(stale) == 1);
	__free_pages(got, 0);
	if (got != stale)
		put_page(stale);		/* the stale user lets go */
	KT_EXPECT_EQ(t, node_free_pages(pgdat), free);
	KT_EXPECT_EQ(t, mm_verify(pgdat), 0);
	test_node_destroy(pgdat);
}

/* The same from the buddy lists: an order-4 block (no per-CPU list for that order) freed
 * and then used again sits alone on its free list; the next order-4 allocation skips it. */
static void alloc_pages_discards_free_page_in_use_buddy(struct ktest *t)
{
	struct pglist_data *pgdat = small_node();
	struct page *first, *stale, *got;
	struct zone *zone;
	unsigned long free;

	KT_ASSERT_TRUE(t, pgdat);
	ktest_expect_taint(TAINT_BAD_PAGE);	/* provoked on purpose below */
	zone = &pgdat->node_zones[ZONE_DMA32];
	free = node_free_pages(pgdat);
	first = alloc_pages_node(pgdat, GFP_KERNEL, 4);
	stale = alloc_pages_node(pgdat, GFP_KERNEL, 4);	/* the free buddy of first */
	KT_ASSERT_TRUE(t, first && stale);
	__free_pages(stale, 4);				/* cannot merge: first is allocated */
	KT_ASSERT_TRUE(t, list_first_entry(&zone->free_area[4].free_list[MIGRATE_UNMOVABLE],
					   struct page, lru) == stale);
	WRITE_ONCE(stale->refcount, 1);	/* the stale user */
	got = alloc_pages_node(pgdat, GFP_KERNEL, 4);
	KT_EXPECT_TRUE(t, got && got != stale);
	KT_EXPECT_EQ(t, pgdat->bad_pages, 1);
	KT_EXPECT_TRUE(t, !PageBuddy(stale) && page_count(stale) == 1);
	__free_pages(got, 4);
	__free_pages(first, 4);
	if (got != stale)
		put_page(stale);		/* the stale user lets go */
	KT_EXPECT_EQ(t, node_free_pages(pgdat), free);
	KT_EXPECT_EQ(t, mm_verify(pgdat), 0);
	test_node_destroy(pgdat);
}

/* Orders above MAX_ORDER fail cleanly (NULL, a message), never split garbage. */
static void alloc_pages_order_too_big(struct ktest *t)
{
	struct pglist_data *pgdat = small_node();

	KT_ASSERT_TRUE(t, pgdat);
	KT_EXPECT_TRUE(t, alloc_pages_node(pgdat, GFP_KERNEL, MAX_ORDER + 1) == NULL);
	KT_EXPECT_TRUE(t, host_console_contains("> MAX_ORDER"));
	KT_EXPECT_EQ(t, mm_verify(pgdat), 0);
	test_node_destroy(pgdat);
}

/*
 * A memory map with RAM beyond what the direct map can ever cover (past the simulated
 * 4.5 GiB) and a region that cannot hold its memory map: the unmappable RAM is dropped with
 * a message, the rest works.
 */
static void pgdat_init_ram_beyond_direct_map(struct ktest *t)
{
	const struct mem_region map[] = { { 1 * MiB, 31 * MiB, MEM_USABLE },
					  { 4 * GiB + 256 * MiB, 1 * GiB, MEM_USABLE } };
	struct pglist_data *pgdat = test_node_create(map, ARRAY_SIZE(map), 4);

	KT_ASSERT_TRUE(t, pgdat);
	KT_EXPECT_TRUE(t, host_console_contains("cannot be mapped"));
	KT_EXPECT_EQ(t, pgdat->node_end_pfn, (4 * GiB + 512 * MiB) >> PAGE_SHIFT);
	KT_EXPECT_TRUE(t, pgdat->node_zones[ZONE_NORMAL].managed_pages > 0);
	KT_EXPECT_EQ(t, mm_verify(pgdat), 0);
	test_node_destroy(pgdat);
}

/* A node with no usable memory at all is refused with a message, not a crash. */
static void pgdat_init_no_memory(struct ktest *t)
{
	const struct mem_region map[] = { { 1 * MiB, 31 * MiB, MEM_RESERVED },
					  { 8 * GiB, 1 * GiB, MEM_USABLE } };

	KT_EXPECT_TRUE(t, test_node_create(map, ARRAY_SIZE(map), 4) == NULL);
	KT_EXPECT_TRUE(t, host_console_contains("no usable memory"));
}

/*
 * The kernel's path: mm_init() from a boot_info with a firmware-like map (low 640K, a hole,
 * RAM to 2 GiB with a reserved chunk, RAM above 4 GiB, an unsorted and a zero-length entry),
 * the low 1 MiB and the kernel image reserved, then mm_deferred_init() (here on this thread
 * alone). mm_verify passes before and after the deferred part; dumps print.
 */
static void mm_init_from_boot_info(struct ktest *t)
{
	static struct boot_info bi;
	const struct mem_region map[] = {
		{ 4 * GiB, 128 * MiB, MEM_USABLE }, { 0, 0x9fc00, MEM_USABLE },
		{ 0x9fc00, 0x400, MEM_RESERVED },   { 1 * MiB, 255 * MiB, MEM_USABLE },
		{ 200 * MiB, 64 * 1024, MEM_ACPI_RECLAIMABLE }, { 300 * MiB, 0, MEM_USABLE },
	};
	struct pglist_data *pgdat;

	memcpy(bi.mmap, map, sizeof(map));
	bi.nr_mmap = ARRAY_SIZE(map);
	bi.kernel_phys_start = 2 * MiB;
	bi.kernel_phys_end = 3 * MiB + 12345;
	KT_ASSERT_TRUE(t, mm_init(&bi) == 0);
	pgdat = mm_node();
	KT_EXPECT_TRUE(t, node_deferred_pages(pgdat) > 0);
	KT_EXPECT_EQ(t, mm_verify(pgdat), 0);
	mm_deferred_init();
	KT_EXPECT_EQ(t, node_deferred_pages(pgdat), 0);
	KT_EXPECT_TRUE(t, host_console_contains("mm: deferred init: "));
	KT_EXPECT_TRUE(t, PageReserved(pfn_to_page(pgdat, (2 * MiB) >> PAGE_SHIFT)));
	KT_EXPECT_TRUE(t, PageReserved(pfn_to_page(pgdat, (3 * MiB + 12345) >> PAGE_SHIFT)));
	KT_EXPECT_TRUE(t, PageReserved(pfn_to_page(pgdat, (200 * MiB) >> PAGE_SHIFT)));
	KT_EXPECT_TRUE(t, pgdat->node_zones[ZONE_NORMAL].managed_pages > 0);
	KT_EXPECT_TRUE(t, host_console_contains("mm: "));
	show_buddyinfo(pgdat);
	show_zoneinfo(pgdat);
	show_pagetypeinfo(pgdat);
	KT_EXPECT_TRUE(t, host_console_contains("Node 0, zone   Normal"));
	KT_EXPECT_TRUE(t, host_console_contains("Number of blocks type"));
	KT_EXPECT_EQ(t, mm_verify(pgdat), 0);
	/* Unregistered: host_phys_reset() wipes node0's pcps and memory map before the next
	 * test, whose nodes reuse that memory: a stale node0 left in node_data[] would be one
	 * more node with zeroed, never-initialised pcp locks. */
	pgdat_destroy(pgdat);
}

static const struct ktest_case buddy_cases[] = {
	KTEST_CASE(alloc_pages_alignment_random_orders),
	KTEST_CASE(int_sqrt_min_free_kbytes_examples),
	KTEST_CASE(watermarks_linux_formula_and_limits),
	KTEST_CASE(alloc_pages_zone_fallback_lowmem_reserve),
	KTEST_CASE(alloc_pages_migratetype_fallback_steals),
	KTEST_CASE(free_pages_double_free_reported),
	KTEST_CASE(get_page_of_free_page_panics),
	KTEST_CASE(free_pages_wrong_order_reported),
	KTEST_CASE(free_pages_reserved_page_reported),
	KTEST_CASE(alloc_pages_poison_catches_use_after_free),
	KTEST_CASE(alloc_pages_discards_free_page_in_use_pcp),
	KTEST_CASE(alloc_pages_discards_free_page_in_use_buddy),
	KTEST_CASE(put_page_frees_on_last_reference),
	KTEST_CASE(mm_verify_detects_corruption),
	KTEST_CASE(alloc_pages_order_too_big),
	KTEST_CASE(pgdat_init_ram_beyond_direct_map),
	KTEST_CASE(pgdat_init_no_memory),
	KTEST_CASE(mm_init_from_boot_info),
};
KTEST_SUITE(host_buddy, buddy_cases);
