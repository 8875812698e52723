/*
 * Host tests of mm_verify() itself (mm/debug.c): whatever it finds, and whichever way it
 * returns, it leaves no PG_seen mark behind; a page marked and never cleared is a free page
 * the allocator later takes for one in use, and discards.
 */
#include <stdlib.h>
#include "tests/host/harness.h"

/* Pages of pgdat with the mm_verify() scratch mark still set. */
static unsigned long pages_marked_seen(struct pglist_data *pgdat)
{
	unsigned long n = 0;

	for (unsigned long pfn = pgdat->node_start_pfn; pfn < pgdat->node_end_pfn; pfn++)
		if (pfn_in_node(pgdat, pfn))
			n += !!(READ_ONCE(pfn_to_page(pgdat, pfn)->flags) & PG_seen);
	return n;
}

static struct pglist_data *busy_node;
static unsigned long busy_problems;
static int busy_calls;

/* deferred_init_race_hook: the first chunk is claimed, none of it written: verify now. */
static void verify_inside_first_chunk(struct zone *zone, unsigned long spfn)
{
	if (busy_calls++ == 0)
		busy_problems = mm_verify(busy_node);
}

/*
 * mm_verify() called while a chunk of the deferred init is being written reports the zone
 * busy ("mm_verify needs a quiet node") and does not walk it. It must return with no page
 * marked: before, the free lists were walked (and every free page marked) before the busy
 * check, whose return skipped the walk that clears the marks, and 1024 free pages were then
 * "free page in use" to the allocator, discarded one by one. Expected: the report, no mark
 * left, and every free page allocatable with no bad-page report.
 */
static void mm_verify_during_deferred_chunk_leaves_no_marks(struct ktest *t)
{
	const struct mem_region map[] = { { 16 * MiB, 64 * MiB, MEM_USABLE } };
	struct pglist_data *pgdat;
	unsigned long marked, nfree, got;
	struct page **pages;

	KT_SKIP_UNLESS_DEBUG_VM(t, "no deferred_init_race_hook to call it inside a chunk");
	pgdat = test_node_create_deferred(map, ARRAY_SIZE(map), 1);
	KT_ASSERT_TRUE(t, pgdat);
	busy_node = pgdat;
	busy_calls = 0;
	busy_problems = 0;
	smp_store_release(&deferred_init_race_hook, verify_inside_first_chunk);
	deferred_init_memmap(pgdat);
	smp_store_release(&deferred_init_race_hook, NULL);
	deferred_init_done(pgdat->machine);
	marked = pages_marked_seen(pgdat);
	nfree = node_free_pages(pgdat);
	pages = calloc(nfree, sizeof(*pages));
	KT_ASSERT_TRUE(t, pages);
	got = alloc_until_null(pgdat, GFP_KERNEL | __GFP_MEMALLOC | __GFP_NOWARN, 0, pages, nfree);
	ktest_printf(t, "mm_verify() inside the chunk: %lu problems; after: %lu pages still "
		     "marked, %lu of %lu free pages allocated, %llu bad pages", busy_problems,
		     marked, got, nfree, (unsigned long long)pgdat->bad_pages);
	KT_EXPECT_EQ(t, busy_calls > 0, true);	/* it ran inside the chunk */
	KT_EXPECT_TRUE(t, busy_problems > 0 && host_console_contains("being written"));
	KT_EXPECT_EQ(t, marked, 0ul);
	KT_EXPECT_EQ(t, got, nfree);
	KT_EXPECT_EQ(t, pgdat->bad_pages, 0ull);
	free_all(pages, got, 0);
	free(pages);
	KT_EXPECT_EQ(t, mm_verify(pgdat), 0ul);
	test_node_destroy(pgdat);
}

/*
 * A free block of ZONE_DMA put on a free list of ZONE_DMA32 (a corrupted list): mm_verify()
 * reports it outside the zone, and must not mark it, since DMA32's walk never visits DMA's
 * pfns to clear the mark (DMA's walk, which would, ran first). Once the block is back on its
 * own list, mm_verify() finds nothing: before, the stale mark made it "in two places".
 */
static void mm_verify_block_of_other_zone_leaves_no_mark(struct ktest *t)
{
	const struct mem_region map[] = { { 1 * MiB, 31 * MiB, MEM_USABLE } };
	struct pglist_data *pgdat = test_node_create(map, ARRAY_SIZE(map), 1);
	struct zone *dma, *dma32;
	struct list_head *home = NULL;
	struct page *block = NULL;
	unsigned int order = 0;

	KT_ASSERT_TRUE(t, pgdat);
	dma = &pgdat->node_zones[ZONE_DMA];
	dma32 = &pgdat->node_zones[ZONE_DMA32];
	for (unsigned int o = 0; o <= MAX_ORDER && !block; o++)
		for (int mt = 0; mt < MIGRATE_TYPES && !block; mt++)
			if (!list_empty(&dma->free_area[o].free_list[mt])) {
				home = &dma->free_area[o].free_list[mt];
				block = list_first_entry(home, struct page, lru);
				order = o;
			}
	KT_ASSERT_TRUE(t, block);
	list_del(&block->lru);
	list_add(&block->lru, &dma32->free_area[order].free_list[MIGRATE_MOVABLE]);
	KT_EXPECT_TRUE(t, mm_verify(pgdat) > 0);
	KT_EXPECT_TRUE(t, host_console_contains("outside the zone"));
	list_del(&block->lru);
	list_add(&block->lru, home);
	KT_EXPECT_EQ(t, pages_marked_seen(pgdat), 0ul);
	KT_EXPECT_EQ(t, mm_verify(pgdat), 0ul);
	test_node_destroy(pgdat);
}

static const struct ktest_case mm_verify_cases[] = {
	KTEST_CASE(mm_verify_during_deferred_chunk_leaves_no_marks),
	KTEST_CASE(mm_verify_block_of_other_zone_leaves_no_mark),
};
KTEST_SUITE(host_mm_verify, mm_verify_cases);
