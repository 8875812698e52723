/*
 * KTAP suite mm_pcp: the per-CPU list rules on the kernel's own boot node, on this CPU, in
 * the boot's lock model (pcp.lock=): batch and high sizes, refill and spill sizes,
 * free_high, the boot pageset. The races (stress with timer-interrupt allocations, remote
 * drains, IRQ re-entry, an interrupt on an exhausted node, disable/enable/update,
 * zone_pcp_disable() against a refill) are written once for kernel and host in
 * mm_pcp_private.c; host-only cases are in tests/host/test_pcp.c.
 */
#include "tests/ktest/ktest.h"
#include "kernel/string.h"
#include "mm/mm_test.h"

/* This CPU's list of the boot node's DMA32 zone. */
static struct per_cpu_pages *dma32_pcp(void)
{
	return &mm_node()->node_zones[ZONE_DMA32].pcp[arch_cpu_id()];
}

/* ---- batch and high rules, on this CPU ---- */

/*
 * Refill sizes: an empty list takes max(batch >> order, 2) blocks for orders 0..3, or one
 * block when batch is 1 (a zone so small that its batch is 1, e.g. -m 64M).
 */
static void check_refill_sizes(struct ktest *t, struct zone *zone, struct per_cpu_pages *pcp)
{
	for (unsigned int o = 0; o <= PAGE_ALLOC_COSTLY_ORDER; o++) {
		int refill = pcp->batch > 1 ? MAX(pcp->batch >> o, 2) : 1;
		struct page *p;

		drain_local_pages(zone);
		p = alloc_pages(GFP_DMA32, o);
		KT_ASSERT_NOT_NULL(t, p);
		KT_EXPECT_EQ(t, pcp->count, (refill - 1) << o);
		__free_pages(p, o);
	}
}

/* Free pages[] one by one with high = 16 batch from an empty list; record the first three
 * spill sizes. Returns how many pages were freed. */
static unsigned int measure_spills(struct per_cpu_pages *pcp, struct page **pages,
				   unsigned int n, int *spills)
{
	unsigned int i;
	int ns = 0;

	pcp->high = 16 * pcp->batch;
	pcp->free_factor = 0;
	for (i = 0; i < n && ns < 3; i++) {
		int before = pcp->count;

		__free_pages(pages[i], 0);
		if (before + 1 != pcp->count)
			spills[ns++] = before + 1 - pcp->count;
	}
	return i;
}

/*
 * Sizes follow the formulas (batch 63 for a zone of 1 GiB or more, high >= 4
 * batch); an empty list refills max(batch >> order, 2) blocks; frees without allocations
 * spill batch, 2 batch, 4 batch; one allocation halves free_factor; free_high drains all;
 * the boot pageset (zone_pcp_disable) sends every free to buddy.
 */
static void mm_pcp_batch_high_rules(struct ktest *t)
{
	struct zone *zone = &mm_node()->node_zones[ZONE_DMA32];
	struct per_cpu_pages *pcp = dma32_pcp();
	static struct page *pages[1500];
	int batch = pcp->batch, high = pcp->high, spills[3] = { 0 };
	unsigned int i;
	struct page *p;

	KT_EXPECT_EQ(t, batch, zone_batchsize(zone));
	if (zone->managed_pages >= (1ul << (30 - PAGE_SHIFT)))
		KT_EXPECT_EQ(t, batch, 63);
	KT_EXPECT_GE(t, high, 4 * batch);
	check_refill_sizes(t, zone, pcp);
	for (i = 0; i < ARRAY_SIZE(pages); i++) {
		if (!(pages[i] = alloc_pages(GFP_DMA32, 0))) {
			KT_FAIL(t, "allocation %u of %zu failed", i + 1, ARRAY_SIZE(pages));
			while (i--)
				__free_pages(pages[i], 0);
			ktest_abort(t);
		}
	}
	drain_local_pages(zone);
	i = measure_spills(pcp, pages, ARRAY_SIZE(pages), spills);
	KT_EXPECT_EQ(t, spills[0], batch);
	KT_EXPECT_EQ(t, spills[1], 2 * batch);
	KT_EXPECT_EQ(t, spills[2], 4 * batch);
	p = alloc_pages(GFP_DMA32, 0);
	KT_EXPECT_EQ(t, pcp->free_factor, 1);	/* 3, halved */
	if (p)
		__free_pages(p, 0);
	p = alloc_pages(GFP_DMA32, 1);
	pcp->free_factor = 1;
	if (p)
		__free_pages(p, 1);		/* free_high: the whole list goes */
	KT_EXPECT_EQ(t, pcp->count, 0);
	pcp->high = high;
	for (; i < ARRAY_SIZE(pages); i++)
		__free_pages(pages[i], 0);
	zone_pcp_disable(zone);
	p = alloc_pages(GFP_DMA32, 0);
	KT_EXPECT_NOT_NULL(t, p);
	if (p)
		__free_pages(p, 0);
	KT_EXPECT_EQ(t, pcp->count, 0);		/* boot pageset: straight to buddy */
	zone_pcp_enable(zone);
	ktest_printf(t, "DMA32 [%s]: batch %d high %d; spills %d, %d, %d",
		     pcp_lock_model_name(zone->pcp_lock), batch, high, spills[0], spills[1],
		     spills[2]);
	KT_EXPECT_EQ(t, mm_verify_machine(mm_machine()), 0ul);
}

static bool saved_enabled;

/* The suite tests the lists themselves: turn them on (pcp.enable=0 boots) for each case. */
static int mm_pcp_init(struct ktest *t)
{
	saved_enabled = pcp_enabled;
	pcp_enabled = true;
	return 0;
}

static void mm_pcp_exit(struct ktest *t)
{
	pcp_enabled = saved_enabled;
}

static const struct ktest_case mm_pcp_cases[] = {
	KTEST_CASE_NOFAIL(mm_pcp_batch_high_rules, "counts pages on the list after each call"),
};
KTEST_SUITE(mm_pcp, mm_pcp_cases, .init = mm_pcp_init, .exit = mm_pcp_exit);
