/*
 * KTAP suite mm_private: the buddy allocator on a private instance (tests/lab/lab_platform.h),
 * one source for both platforms: built into the kernel (memory borrowed from the kernel's
 * allocator) and into the host binaries (simulated RAM, under ASan/UBSan too). Scenarios on
 * the kernel's own nodes are in mm_buddy.c, finer host-only ones in tests/host/test_buddy.c.
 */
#include "tests/ktest/ktest.h"
#include "tests/kernel/mm_exhaust.h"
#include "tests/lab/lab_platform.h"
#include "kernel/list.h"
#include "kernel/string.h"

/* Everything, ignoring watermarks; may drain every CPU's lists when it runs out. */
#define GFP_ALL (__GFP_MEMALLOC | __GFP_NOWARN | __GFP_DIRECT_RECLAIM)
#define PRIV_BLOCKS 2

static struct zone *priv_zone(struct pglist_data *pgdat)
{
	for (int z = 0; z < MAX_NR_ZONES; z++)
		if (pgdat->node_zones[z].free_area[MAX_ORDER].nr_free)
			return &pgdat->node_zones[z];
	return NULL;
}

/* Take every free block below MAX_ORDER of zone at its own order (no splits), onto the tail
 * of held: only whole MAX_ORDER blocks stay free. */
static void take_small_blocks(struct zone *zone, struct list_head *held)
{
	for (unsigned int o = 0; o < MAX_ORDER; o++)
		while (zone->free_area[o].nr_free) {
			struct page *page = alloc_pages_node(zone->node, GFP_ALL | __GFP_MOVABLE, o);

			if (!page)
				return;
			list_add_tail(&page->lru, held);
		}
}

/*
 * With only whole order-10 blocks free, allocating order o splits one: one more free block
 * at each order o..9, one fewer at 10, and the block's first page comes back; freeing it
 * merges everything back. Every order 0..10.
 */
static void mm_private_split_merge_every_order(struct ktest *t)
{
	struct pglist_data *pgdat = lab_node_create(PRIV_BLOCKS, false);
	unsigned long base;
	struct list_head held;
	struct page *page, *tmp;
	struct zone *zone;

	KT_ASSERT_NOT_NULL(t, pgdat);
	zone = priv_zone(pgdat);
	KT_ASSERT_NOT_NULL(t, zone);
	INIT_LIST_HEAD(&held);
	take_small_blocks(zone, &held);
	base = zone->free_area[MAX_ORDER].nr_free;
	KT_EXPECT_GE(t, base, 1ul);
	for (unsigned int o = 0; o <= MAX_ORDER; o++) {
		page = alloc_pages_node(pgdat, GFP_ALL | __GFP_MOVABLE, o);
		KT_ASSERT_NOT_NULL(t, page);
		KT_EXPECT_EQ(t, page_to_pfn(page) & (MAX_ORDER_NR_PAGES - 1), 0ul);
		for (unsigned int j = 0; j < MAX_ORDER; j++)
			KT_EXPECT_EQ(t, zone->free_area[j].nr_free, (unsigned long)(j >= o));
		KT_EXPECT_EQ(t, zone->free_area[MAX_ORDER].nr_free, base - 1);
		__free_pages(page, o);
		for (unsigned int j = 0; j < MAX_ORDER; j++)
			KT_EXPECT_EQ(t, zone->free_area[j].nr_free, 0ul);
		KT_EXPECT_EQ(t, zone->free_area[MAX_ORDER].nr_free, base);
	}
	/* Smallest first: a larger block's buddy may then be a smaller free block, with which a
	 * merge that does not check the buddy's order would wrongly join it. */
	list_for_each_entry_safe(page, tmp, &held, lru)
		__free_pages(page, page->order);
	KT_EXPECT_EQ(t, mm_verify(pgdat), 0ul);
	lab_node_destroy(pgdat);
}

/* Allocate order 0 until NULL (ignoring watermarks): exactly the free pages come out and
 * then none are left; freeing them restores the free count and every per-order count. */
static void mm_private_exhaustion_restores_counts(struct ktest *t)
{
	struct pglist_data *pgdat = lab_node_create(PRIV_BLOCKS, false);
	unsigned long before[NR_ORDERS], free, n = 0;
	struct list_head held;
	struct page *page, *tmp;
	struct zone *zone;

	KT_ASSERT_NOT_NULL(t, pgdat);
	zone = priv_zone(pgdat);
	KT_ASSERT_NOT_NULL(t, zone);
	free = node_free_pages(pgdat);
	for (unsigned int o = 0; o <= MAX_ORDER; o++)
		before[o] = zone->free_area[o].nr_free;
	INIT_LIST_HEAD(&held);
	while ((page = alloc_pages_node(pgdat, GFP_ALL | __GFP_MOVABLE, 0))) {
		list_add(&page->lru, &held);
		n++;
	}
	KT_EXPECT_EQ(t, n, free);
	KT_EXPECT_EQ(t, node_free_pages(pgdat), 0ul);
	KT_EXPECT_NULL(t, alloc_pages_node(pgdat, GFP_ALL | __GFP_MOVABLE, 0));
	KT_EXPECT_EQ(t, mm_verify(pgdat), 0ul);
	list_for_each_entry_safe(page, tmp, &held, lru)
		__free_pages(page, 0);
	KT_EXPECT_EQ(t, node_free_pages(pgdat), free);
	for (unsigned int o = 0; o <= MAX_ORDER; o++)
		KT_EXPECT_EQ(t, zone->free_area[o].nr_free, before[o]);
	KT_EXPECT_EQ(t, mm_verify(pgdat), 0ul);
	lab_node_destroy(pgdat);
}

/* Double free, wrong order, freeing a reserved page and a write after free are each
 * reported (bad_pages counts them) and lose nothing. */
static void mm_private_bad_input_reported(struct ktest *t)
{
	struct pglist_data *pgdat;
	struct page *p, *q, *reserved;
	unsigned long free;

	KT_SKIP_UNLESS_DEBUG_VM(t, "no page-state checks at free");
	pgdat = lab_node_create(PRIV_BLOCKS, false);
	KT_ASSERT_NOT_NULL(t, pgdat);
	pgdat->poison = true;
	free = node_free_pages(pgdat);
	p = alloc_pages_node(pgdat, GFP_KERNEL, 0);
	q = alloc_pages_node(pgdat, GFP_KERNEL, 2);
	KT_ASSERT_NOT_NULL(t, p);
	KT_ASSERT_NOT_NULL(t, q);
	KT_ASSERT_EQ(t, pgdat->bad_pages, 0ull);
	ktest_printf(t, "expect 4 'BUG: Bad page state' reports from mm/page_alloc.c and "
		     "mm/debug.c, on purpose: wrong order, double free, reserved page, use after free");
	ktest_expect_taint(TAINT_BAD_PAGE);
	__free_pages(q, 0);			/* wrong order: freed as order 2 */
	__free_pages(p, 0);
	__free_pages(p, 0);			/* double free */
	reserved = pfn_to_page(pgdat, pgdat->node_end_pfn - 1);
	__free_pages(reserved, 0);		/* reserved: the memory map's own page */
	KT_EXPECT_EQ(t, pgdat->bad_pages, 3ull);
	((u8 *)page_address(p))[7] = 1;		/* use after free */
	q = alloc_pages_node(pgdat, GFP_KERNEL, 0);
	KT_EXPECT_PTR_EQ(t, q, p);
	KT_EXPECT_EQ(t, pgdat->bad_pages, 4ull);
	__free_pages(q, 0);
	KT_EXPECT_EQ(t, node_free_pages(pgdat), free);
	KT_EXPECT_EQ(t, mm_verify(pgdat), 0ul);
	lab_node_destroy(pgdat);
}

/* ---- every CPU at once, through the per-CPU lists ---- */

#define EXHAUST_BLOCKS 8

static const enum pcp_lock_model models[] = { PCP_LOCK_IRQOFF, PCP_LOCK_IRQSAVE,
					      PCP_LOCK_TRYLOCK };

/*
 * Each lock model: every CPU allocates order-0 pages from a 32 MiB instance until NULL,
 * all at once. The last free pages sit on other CPUs' lists until a failing allocation
 * drains them and retries (drain-and-retry), so together the CPUs get every free page; then
 * all free, and the count is exactly restored. No CPU hangs.
 */
static void mm_private_pcp_exhaustion_all_cpus(struct ktest *t)
{
	static struct exhaust e;

	for (unsigned int m = 0; m < ARRAY_SIZE(models); m++) {
		struct pglist_data *pgdat = lab_node_create_model(EXHAUST_BLOCKS, models[m]);
		unsigned long before, total = 0;
		u64 retries;

		if (!pgdat)
			KT_SKIP(t, "needs %d free blocks of 4 MiB for its private instance",
				EXHAUST_BLOCKS);
		memset(&e, 0, sizeof(e));
		e.pgdat = pgdat;
		before = node_free_pages(pgdat);
		retries = pgdat->drain_retries;
		lab_run_on_cpus(exhaust_fn, &e);
		for (unsigned int c = 0; c < MAX_CPUS; c++)
			total += e.got[c];
		KT_EXPECT_EQ(t, total, before);
		KT_EXPECT_GT(t, pgdat->drain_retries, retries);
		lab_run_on_cpus(release_fn, &e);
		drain_all_pages_machine(pgdat->machine);
		KT_EXPECT_EQ(t, node_free_pages(pgdat), before);
		KT_EXPECT_EQ(t, mm_verify(pgdat), 0ul);
		ktest_printf(t, "[%s] %lu pages on %u CPUs, %llu drain-and-retry rounds",
			     pcp_lock_model_name(models[m]), total, lab_nr_cpus(),
			     (unsigned long long)(pgdat->drain_retries - retries));
		lab_node_destroy(pgdat);
	}
}

static const struct ktest_case mm_private_cases[] = {
	KTEST_CASE_NOFAIL(mm_private_split_merge_every_order, "counts free blocks per order"),
	KTEST_CASE_NOFAIL(mm_private_exhaustion_restores_counts,
			  "counts every page up to the first NULL"),
	KTEST_CASE_NOFAIL(mm_private_bad_input_reported, "expects the freed page back next"),
	KTEST_CASE_CONCURRENT_NOFAIL(mm_private_pcp_exhaustion_all_cpus, "every page counted"),
};
KTEST_SUITE(mm_private, mm_private_cases, .exit = lab_node_exit);
