/*
 * Host tests of the per-CPU page lists (mm/pcp.c): indexing, sizing, free and refill rules,
 * bulk allocation; and, with 8 CPU threads under each locking model (also under TSan),
 * stress, IRQ re-entry, remote drains, exhaustion.
 */
#include <stdlib.h>
#include <setjmp.h>
#include <string.h>
#include "tests/host/harness.h"
#include "kernel/smp.h"

#define NR_PCP_TEST_CPUS 8

static const enum pcp_lock_model models[] = { PCP_LOCK_IRQOFF, PCP_LOCK_IRQSAVE,
					      PCP_LOCK_TRYLOCK };

/* A single-zone node of `mib` MiB in DMA32 with nr_cpus per-CPU lists, pcp values for
 * nr_cpus online CPUs. */
static struct pglist_data *pcp_node(unsigned long mib, unsigned int nr_cpus)
{
	const struct mem_region map[] = { { 16 * MiB, mib * MiB, MEM_USABLE } };
	struct pglist_data *pgdat = test_node_create(map, ARRAY_SIZE(map), nr_cpus);

	if (pgdat)
		zone_pcp_update(pgdat, nr_cpus);
	return pgdat;
}

static struct per_cpu_pages *this_pcp(struct pglist_data *pgdat)
{
	return &pgdat->node_zones[ZONE_DMA32].pcp[arch_cpu_id()];
}

/* order_to_pindex and pindex_to_order round-trip for orders 0..3 and pageblock order, and
 * every (type, order <= 3) pair has its own list: 3 x 4 + 1 = 13 lists. */
static void pcp_order_to_pindex_roundtrip(void)
{
	bool used[NR_PCP_LISTS] = { false };

	EXPECT_EQ(NR_PCP_LISTS, 13);
	for (int mt = 0; mt < MIGRATE_PCPTYPES; mt++)
		for (unsigned int o = 0; o <= PAGE_ALLOC_COSTLY_ORDER; o++) {
			unsigned int p = order_to_pindex(mt, o);

			EXPECT(p < NR_LOWORDER_PCP_LISTS && !used[p]);
			used[p] = true;
			EXPECT_EQ(pindex_to_order(p), o);
		}
	EXPECT_EQ(order_to_pindex(MIGRATE_MOVABLE, pageblock_order), NR_LOWORDER_PCP_LISTS);
	EXPECT_EQ(pindex_to_order(NR_LOWORDER_PCP_LISTS), pageblock_order);
	EXPECT(pcp_allowed_order(3) && pcp_allowed_order(pageblock_order) && !pcp_allowed_order(4));
}

/*
 * batch = rounddown_pow_of_two(b + b/2) - 1 with b = min(managed >> 10, 256) / 4:
 * a 4 GiB zone gives 63, 512 MiB gives 31, a tiny zone 1. high = max(low / cpus, 4 batch):
 * the worked example, 512 MiB and 4 CPUs with low = 905, gives 226.
 */
static void pcp_batch_high_sizing(void)
{
	struct zone z = { 0 };

	z.managed_pages = (4ul << 30) >> PAGE_SHIFT;
	EXPECT_EQ(zone_batchsize(&z), 63);
	z.managed_pages = (512ul << 20) >> PAGE_SHIFT;
	EXPECT_EQ(zone_batchsize(&z), 31);
	z.managed_pages = 100;
	EXPECT_EQ(zone_batchsize(&z), 1);
	z._watermark[WMARK_LOW] = 905;
	EXPECT_EQ(zone_highsize(&z, 31, 4), 226);
	EXPECT_EQ(zone_highsize(&z, 31, 40), 124);
}

/* The boot pageset (high 0, batch 1, as after zone_pcp_disable) keeps nothing: every free
 * goes on to the buddy lists at once, and a refill takes one block. */
static void pcp_boot_pageset_frees_to_buddy(void)
{
	struct pglist_data *pgdat = pcp_node(64, 4);
	struct zone *zone;
	struct page *page;

	ASSERT(pgdat);
	zone = &pgdat->node_zones[ZONE_DMA32];
	zone_pcp_disable(zone);
	EXPECT_EQ(this_pcp(pgdat)->high, 0);
	EXPECT_EQ(this_pcp(pgdat)->batch, 1);
	page = alloc_pages_node(pgdat, GFP_KERNEL, 0);
	ASSERT(page);
	EXPECT_EQ(this_pcp(pgdat)->count, 0);
	__free_pages(page, 0);
	EXPECT_EQ(this_pcp(pgdat)->count, 0);
	EXPECT_EQ(zone_pcp_count(zone), 0);
	zone_pcp_enable(zone);
	EXPECT_EQ(this_pcp(pgdat)->high, zone->pageset_high);
	EXPECT_EQ(mm_verify(pgdat), 0);
	test_node_destroy(pgdat);
}

/* An empty list refills max(batch >> order, 2) blocks under one zone->lock hold (batch 15
 * for a 256 MiB zone: 15, 7, 3, 2 blocks for orders 0..3); the page freed last is the next
 * one allocated (LIFO) and counts as a hit. */
static void pcp_refill_size_per_order_and_lifo(void)
{
	struct pglist_data *pgdat = pcp_node(256, 4);
	struct per_cpu_pages *pcp;
	struct pcp_stats st;

	ASSERT(pgdat);
	pcp = this_pcp(pgdat);
	EXPECT_EQ(pcp->batch, 15);
	for (unsigned int o = 0; o <= PAGE_ALLOC_COSTLY_ORDER; o++) {
		int before = pcp->count, refill = MAX(15 >> o, 2);
		struct page *page = alloc_pages_node(pgdat, GFP_KERNEL, o), *again;

		ASSERT(page);
		EXPECT_EQ(pcp->count - before, (refill - 1) << o);
		__free_pages(page, o);
		again = alloc_pages_node(pgdat, GFP_KERNEL, o);
		EXPECT(again == page);
		__free_pages(again, o);
	}
	pcp_stats_sum(pgdat, 0, &st);
	EXPECT_EQ(st.refill, 4);
	EXPECT_EQ(st.alloc_hit, 4);
	drain_local_pages_node(pgdat);
	EXPECT_EQ(pcp->count, 0);
	EXPECT_EQ(mm_verify(pgdat), 0);
	test_node_destroy(pgdat);
}

/* Free one page and return how many pages the pcp spilled to buddy doing so. */
static int free_and_measure_spill(struct per_cpu_pages *pcp, struct page *page)
{
	int before = pcp->count;

	__free_pages(page, 0);
	return before + 1 - pcp->count;
}

/*
 * Frees without allocations grow the spill: with high = 16 batch, the spills are batch,
 * 2 batch, 4 batch, 8 batch, then clamped to high - batch. One allocation halves
 * free_factor (4 -> 2), so the next spill is 4 batch again.
 */
static void pcp_spill_grows_then_allocation_halves(void)
{
	struct pglist_data *pgdat = pcp_node(256, 4);
	static struct page *pages[4000];
	int spills[8], nspill = 0, batch;
	struct per_cpu_pages *pcp;
	unsigned long i = 0, n;
	struct page *one;

	ASSERT(pgdat);
	pcp = this_pcp(pgdat);
	batch = pcp->batch;
	n = alloc_until_null(pgdat, GFP_KERNEL, 0, pages, ARRAY_SIZE(pages));
	ASSERT(n == ARRAY_SIZE(pages));
	drain_local_pages_node(pgdat);
	pcp->high = 16 * batch;
	pcp->free_factor = 0;
	while (nspill < 5 && i < n) {
		int s = free_and_measure_spill(pcp, pages[i++]);

		if (s)
			spills[nspill++] = s;
	}
	EXPECT_EQ(spills[0], batch);
	EXPECT_EQ(spills[1], 2 * batch);
	EXPECT_EQ(spills[2], 4 * batch);
	EXPECT_EQ(spills[3], 8 * batch);
	EXPECT_EQ(spills[4], 15 * batch);
	EXPECT_EQ(pcp->free_factor, 4);
	one = alloc_pages_node(pgdat, GFP_KERNEL, 0);
	EXPECT_EQ(pcp->free_factor, 2);
	while (i < n) {
		int s = free_and_measure_spill(pcp, pages[i++]);

		if (s) {
			EXPECT_EQ(s, 4 * batch);
			break;
		}
	}
	__free_pages(one, 0);
	free_all(pages + i, n - i, 0);
	drain_local_pages_node(pgdat);
	EXPECT_EQ(mm_verify(pgdat), 0);
	test_node_destroy(pgdat);
}

/*
 * free_high: an order-1..3 free while frees dominate (free_factor > 0) empties the whole
 * pcp; right after an allocation (free_factor halved to 0) it does not.
 */
static void pcp_free_high_drains_whole_list(void)
{
	struct pglist_data *pgdat = pcp_node(256, 4);
	struct page *o0[3], *o1a, *o1b;
	struct per_cpu_pages *pcp;

	ASSERT(pgdat);
	pcp = this_pcp(pgdat);
	for (int k = 0; k < 3; k++)
		o0[k] = alloc_pages_node(pgdat, GFP_KERNEL, 0);
	o1a = alloc_pages_node(pgdat, GFP_KERNEL, 1);
	o1b = alloc_pages_node(pgdat, GFP_KERNEL, 1);
	ASSERT(o0[0] && o0[1] && o0[2] && o1a && o1b);
	EXPECT_EQ(pcp->free_factor, 0);
	__free_pages(o1a, 1);			/* free_factor 0: stays on the list */
	EXPECT(pcp->count > 0 && PagePcp(o1a));
	pcp->free_factor = 1;			/* as after a spill with no allocation since */
	for (int k = 0; k < 3; k++)
		__free_pages(o0[k], 0);
	__free_pages(o1b, 1);			/* high-order free with free_factor > 0 */
	EXPECT_EQ(pcp->count, 0);
	EXPECT(!PagePcp(o1a) && !PagePcp(o1b));
	EXPECT_EQ(mm_verify(pgdat), 0);
	test_node_destroy(pgdat);
}

/* alloc_pages_bulk fills only the empty slots, with distinct pages, taking the pcp once;
 * when this CPU's pcp is busy it still returns one page through the buddy lists. */
static void pcp_alloc_pages_bulk_fills_array(void)
{
	struct pglist_data *pgdat = pcp_node(256, 4);
	struct page *pages[100] = { NULL }, *first;
	struct per_cpu_pages *held;
	unsigned long flags, free;
	unsigned int got;

	ASSERT(pgdat);
	free = node_free_pages(pgdat);
	first = pages[7] = alloc_pages_node(pgdat, GFP_KERNEL, 0);
	got = alloc_pages_bulk_node(pgdat, GFP_KERNEL, 100, pages);
	EXPECT_EQ(got, 100);
	EXPECT(pages[7] == first);
	for (int a = 0; a < 100; a++)
		for (int b = a + 1; b < 100; b++)
			if (pages[a] == pages[b])
				EXPECT(pages[a] != pages[b]);
	free_all(pages, 100, 0);
	memset(pages, 0, sizeof(pages));
	held = pcp_lock_this_cpu(&pgdat->node_zones[ZONE_DMA32], &flags);
	ASSERT(held);
	EXPECT_EQ(alloc_pages_bulk_node(pgdat, GFP_KERNEL, 100, pages), 1);
	pcp_unlock_this_cpu(held, flags);
	free_all(pages, 1, 0);
	drain_all_pages_node(pgdat);
	EXPECT_EQ(node_free_pages(pgdat), free);
	EXPECT_EQ(mm_verify(pgdat), 0);
	test_node_destroy(pgdat);
}

/*
 * The lock debug checks as mm relies on them: zone->lock is IRQ-safe, so taking it with
 * interrupts on warns; taking this CPU's pcp lock twice (a spinning re-entry instead of a
 * trylock) panics with a message naming the lock instead of hanging.
 */
static void pcp_lock_debug_checks(void)
{
	struct pglist_data *pgdat = pcp_node(16, 4);
	struct zone *zone;
	unsigned long warnings = host_warnings;
	jmp_buf jb;

	ASSERT(pgdat);
	zone = &pgdat->node_zones[ZONE_DMA32];
	spin_lock(&zone->lock);			/* interrupts on: the bug under test */
	spin_unlock(&zone->lock);
	EXPECT_EQ(host_warnings, warnings + 1);
	EXPECT(host_console_contains("IRQ-safe lock taken with interrupts on"));
	spin_lock(&zone->pcp[0].lock);
	if (!setjmp(jb)) {
		host_panic_jmp = &jb;
		spin_lock(&zone->pcp[0].lock);	/* recursion: must panic, not spin */
		EXPECT(!"spin_lock recursion returned");
	}
	host_panic_jmp = NULL;
	EXPECT(strstr(host_panic_msg, "spinlock recursion") != NULL);
	spin_unlock(&zone->pcp[0].lock);
	host_warnings = warnings;
	EXPECT_EQ(mm_verify(pgdat), 0);
	test_node_destroy(pgdat);
}

/* ---- concurrent tests, once per locking model ---- */

struct pcp_cpu_arg {
	struct pglist_data *pgdat;
	unsigned int seed;
	unsigned long ops;
	bool drainer;
	int *churning;		/* CPUs still churning; drainers stop at 0 */
	struct page **pages;
	unsigned long max, n;
};

/* Random orders 0..3 with a few larger, at most 32 blocks held; polls for "interrupts". */
static void *pcp_churn_cpu(void *p)
{
	struct pcp_cpu_arg *a = p;
	struct page *held[32];
	u8 orders[32];
	unsigned int n = 0;

	for (unsigned long i = 0; i < a->ops; i++) {
		unsigned int r = (unsigned int)rand_r(&a->seed);

		host_irq_poll();
		if (n < 32 && (n == 0 || (r & 1))) {
			unsigned int o = (r >> 8) % 16 == 0 ? (r >> 12) % 6 : (r >> 12) % 4;

			held[n] = alloc_pages_node(a->pgdat, ((r & 2) ? GFP_USER : GFP_KERNEL) |
							     __GFP_NOWARN, o);
			if (held[n])
				orders[n++] = (u8)o;
		} else {
			unsigned int k = (r >> 4) % n;

			__free_pages(held[k], orders[k]);
			held[k] = held[--n];
			orders[k] = orders[n];
		}
	}
	while (n--)
		__free_pages(held[n], orders[n]);
	return NULL;
}

static void report_counters(struct pglist_data *pgdat, const char *what)
{
	struct pcp_stats st;

	pcp_stats_sum(pgdat, -1, &st);
	printk("%s [%s]: hits alloc %llu free %llu, refills %llu, spills %llu, trylock fails "
	       "alloc %llu free %llu, drained %llu, ipi drains %llu\n", what,
	       pcp_lock_model_name(pcp_lock_model), (unsigned long long)st.alloc_hit,
	       (unsigned long long)st.free_hit, (unsigned long long)st.refill,
	       (unsigned long long)st.spill, (unsigned long long)st.trylock_fail_alloc,
	       (unsigned long long)st.trylock_fail_free, (unsigned long long)st.drained,
	       (unsigned long long)st.ipi_drain);
}

/* Test 1, every model: 8 CPUs x 5000 random operations; then a forced drain (zone_pcp_disable)
 * empties every pcp, each page is in one place and the free count is as before. */
static void pcp_stress_random_orders_all_models(void)
{
	for (unsigned int m = 0; m < ARRAY_SIZE(models); m++) {
		struct pglist_data *pgdat = pcp_node(64, NR_PCP_TEST_CPUS);
		struct pcp_cpu_arg args[NR_PCP_TEST_CPUS];
		unsigned long free;

		ASSERT(pgdat);
		pcp_lock_model = models[m];
		free = node_free_pages(pgdat);
		for (unsigned int i = 0; i < NR_PCP_TEST_CPUS; i++)
			args[i] = (struct pcp_cpu_arg){ .pgdat = pgdat, .seed = i + 7, .ops = 5000 };
		run_on_cpus(NR_PCP_TEST_CPUS, pcp_churn_cpu, args, sizeof(args[0]));
		report_counters(pgdat, "stress");
		zone_pcp_disable(&pgdat->node_zones[ZONE_DMA32]);
		EXPECT_EQ(zone_pcp_count(&pgdat->node_zones[ZONE_DMA32]), 0);
		EXPECT_EQ(node_free_pages(pgdat), free);
		EXPECT_EQ(mm_verify(pgdat), 0);
		test_node_destroy(pgdat);
	}
	pcp_lock_model = PCP_LOCK_TRYLOCK;
}

struct reentry {
	struct pglist_data *pgdat;
	int phase;			/* 0 start, 1 cpu0 holds its pcp, 2 released (atomic) */
	int sent;			/* cpu1 is sending the call (atomic) */
	bool ran_while_held;
	bool alloc_ok;
	int count_in_handler;
};

/* The "interrupt handler": allocate and free one page on the interrupted CPU. */
static void reentry_handler(void *p)
{
	struct reentry *r = p;
	struct page *page = alloc_pages_node(r->pgdat, GFP_ATOMIC, 0);

	r->ran_while_held = __atomic_load_n(&r->phase, __ATOMIC_ACQUIRE) == 1;
	r->alloc_ok = page != NULL;
	if (page)
		__free_pages(page, 0);
	r->count_in_handler = this_pcp(r->pgdat)->count;
}

/*
 * CPU 0 holds its own pcp; CPU 1 sends it the handler as a cross-CPU call. With interrupts
 * on (trylock model) CPU 0 takes the call while it waits; otherwise it keeps holding a while
 * after the call was sent, then releases and takes the call.
 */
static void *reentry_cpu(void *p)
{
	struct reentry *r = *(struct reentry **)p;
	struct zone *zone = &r->pgdat->node_zones[ZONE_DMA32];

	if (arch_cpu_id() == 0) {
		unsigned long flags;
		struct per_cpu_pages *pcp = pcp_lock_this_cpu(zone, &flags);

		__atomic_store_n(&r->phase, 1, __ATOMIC_RELEASE);
		while (pcp_lock_model == PCP_LOCK_TRYLOCK ? !r->alloc_ok :
		       !__atomic_load_n(&r->sent, __ATOMIC_ACQUIRE))
			arch_cpu_relax();	/* takes the call here if interrupts are on */
		for (int i = 0; i < 200; i++)
			arch_cpu_relax();
		__atomic_store_n(&r->phase, 2, __ATOMIC_RELEASE);
		pcp_unlock_this_cpu(pcp, flags);
		while (!r->alloc_ok)
			host_irq_poll();
	} else {
		while (!__atomic_load_n(&r->phase, __ATOMIC_ACQUIRE))
			arch_cpu_relax();
		__atomic_store_n(&r->sent, 1, __ATOMIC_RELEASE);
		smp_call_function_single(0, reentry_handler, r, true);
	}
	return NULL;
}

/*
 * Test 2, every model: an interrupt on a CPU that holds its own pcp. With trylock it runs
 * at once, its trylocks fail and it allocates and frees through the buddy lists (pcp count
 * unchanged, fallback counters 1 and 1). With irqsave/irqoff interrupts are off while the
 * pcp is held, so it runs after the release and uses the pcp normally (no fallback).
 */
static void pcp_irq_reentry_all_models(void)
{
	for (unsigned int m = 0; m < ARRAY_SIZE(models); m++) {
		struct pglist_data *pgdat = pcp_node(64, 2);
		struct reentry r = { .pgdat = pgdat };
		struct reentry *args[2] = { &r, &r };
		struct pcp_stats st;
		bool trylock = models[m] == PCP_LOCK_TRYLOCK;

		ASSERT(pgdat);
		pcp_lock_model = models[m];
		run_on_cpus(2, reentry_cpu, args, sizeof(args[0]));
		pcp_stats_sum(pgdat, 0, &st);
		EXPECT(r.alloc_ok);
		EXPECT_EQ(r.ran_while_held, trylock);
		EXPECT_EQ(st.trylock_fail_alloc, trylock);
		EXPECT_EQ(st.trylock_fail_free, trylock);
		if (trylock)
			EXPECT_EQ(r.count_in_handler, 0);
		report_counters(pgdat, "irq re-entry");
		drain_all_pages_node(pgdat);
		EXPECT_EQ(mm_verify(pgdat), 0);
		test_node_destroy(pgdat);
	}
	pcp_lock_model = PCP_LOCK_TRYLOCK;
}

static void *drain_or_churn_cpu(void *p)
{
	struct pcp_cpu_arg *a = p;

	if (!a->drainer) {
		pcp_churn_cpu(p);
		__atomic_sub_fetch(a->churning, 1, __ATOMIC_RELEASE);
		return NULL;
	}
	while (__atomic_load_n(a->churning, __ATOMIC_ACQUIRE)) {
		drain_all_pages_node(a->pgdat);
		host_irq_poll();
	}
	return NULL;
}

/* Test 3, every model: 4 CPUs churn while 4 drain every CPU's pcps in a loop; afterwards
 * zone_pcp_disable() leaves every pcp empty and nothing is lost. */
static void pcp_remote_drain_under_fire_all_models(void)
{
	for (unsigned int m = 0; m < ARRAY_SIZE(models); m++) {
		struct pglist_data *pgdat = pcp_node(64, NR_PCP_TEST_CPUS);
		struct pcp_cpu_arg args[NR_PCP_TEST_CPUS];
		int churning = NR_PCP_TEST_CPUS / 2;
		unsigned long free;

		ASSERT(pgdat);
		pcp_lock_model = models[m];
		free = node_free_pages(pgdat);
		for (unsigned int i = 0; i < NR_PCP_TEST_CPUS; i++)
			args[i] = (struct pcp_cpu_arg){ .pgdat = pgdat, .seed = i + 3, .ops = 4000,
							.drainer = i % 2, .churning = &churning };
		run_on_cpus(NR_PCP_TEST_CPUS, drain_or_churn_cpu, args, sizeof(args[0]));
		report_counters(pgdat, "remote drain");
		zone_pcp_disable(&pgdat->node_zones[ZONE_DMA32]);
		for (unsigned int c = 0; c < NR_PCP_TEST_CPUS; c++)
			EXPECT_EQ(pgdat->node_zones[ZONE_DMA32].pcp[c].count, 0);
		EXPECT_EQ(node_free_pages(pgdat), free);
		EXPECT_EQ(mm_verify(pgdat), 0);
		test_node_destroy(pgdat);
	}
	pcp_lock_model = PCP_LOCK_TRYLOCK;
}

static void *exhaust_pcp_cpu(void *p)
{
	struct pcp_cpu_arg *a = p;

	a->n = alloc_until_null(a->pgdat, GFP_KERNEL | __GFP_MEMALLOC, 0, a->pages, a->max);
	return NULL;
}

/* Test 5, every model: all CPUs allocate until NULL at once; the last pages sit on other
 * CPUs' lists until the failing allocation drains them (drain-and-retry), so together they
 * get every free page; freeing everything restores the count exactly. */
static void pcp_exhaustion_all_cpus_all_models(void)
{
	for (unsigned int m = 0; m < ARRAY_SIZE(models); m++) {
		struct pglist_data *pgdat = pcp_node(32, NR_PCP_TEST_CPUS);
		struct pcp_cpu_arg args[NR_PCP_TEST_CPUS];
		unsigned long nfree, total = 0;

		ASSERT(pgdat);
		pcp_lock_model = models[m];
		nfree = node_free_pages(pgdat);
		for (unsigned int i = 0; i < NR_PCP_TEST_CPUS; i++)
			args[i] = (struct pcp_cpu_arg){ .pgdat = pgdat, .max = nfree,
							.pages = calloc(nfree, sizeof(void *)) };
		run_on_cpus(NR_PCP_TEST_CPUS, exhaust_pcp_cpu, args, sizeof(args[0]));
		for (unsigned int i = 0; i < NR_PCP_TEST_CPUS; i++)
			total += args[i].n;
		EXPECT_EQ(total, nfree);
		EXPECT(pgdat->drain_retries > 0);
		printk("exhaustion [%s]: %lu pages on %u CPUs, %llu drain-and-retry rounds\n",
		       pcp_lock_model_name(pcp_lock_model), total, NR_PCP_TEST_CPUS,
		       (unsigned long long)pgdat->drain_retries);
		for (unsigned int i = 0; i < NR_PCP_TEST_CPUS; i++) {
			free_all(args[i].pages, args[i].n, 0);
			free(args[i].pages);
		}
		drain_all_pages_node(pgdat);
		EXPECT_EQ(node_free_pages(pgdat), nfree);
		EXPECT_EQ(mm_verify(pgdat), 0);
		test_node_destroy(pgdat);
	}
	pcp_lock_model = PCP_LOCK_TRYLOCK;
}

/* ---- drains that must wait for another CPU ---- */

/* Wait for an atomic flag to become non-zero, at most ns nanoseconds; true if it did. */
static bool wait_flag(int *flag, u64 ns)
{
	u64 end = arch_cycles() + ns;

	while (!__atomic_load_n(flag, __ATOMIC_ACQUIRE))
		if (arch_cycles() > end)
			return false;
		else
			arch_cpu_relax();
	return true;
}

static void spin_ns(u64 ns)
{
	u64 end = arch_cycles() + ns;

	while (arch_cycles() < end)
		arch_cpu_relax();
}

#define MS 1000000ull	/* host arch_cycles() counts nanoseconds */

struct refill_race {
	struct pglist_data *pgdat;
	int step;		/* atomic: 1 the owner may allocate, 2 the drainer may disable */
	int drained;		/* atomic: zone_pcp_disable returned */
	bool returned_early;	/* ... while the owner's refill was still held up */
	unsigned long left;	/* pages listed right after it returned */
	struct page *page;
};

/*
 * cpu0 holds zone->lock; cpu1 allocates on an empty list, so it takes its pcp and stops in
 * the refill, waiting for zone->lock with its count still 0; cpu2 then calls
 * zone_pcp_disable(). cpu0 lets go after 200 ms (or when the drain returned).
 */
static void *refill_race_cpu(void *p)
{
	struct refill_race *r = *(struct refill_race **)p;
	struct zone *zone = &r->pgdat->node_zones[ZONE_DMA32];

	switch (arch_cpu_id()) {
	case 0: {
		unsigned long flags = spin_lock_irqsave(&zone->lock);

		__atomic_store_n(&r->step, 1, __ATOMIC_RELEASE);
		spin_ns(20 * MS);	/* cpu1 is now spinning on zone->lock inside its refill */
		__atomic_store_n(&r->step, 2, __ATOMIC_RELEASE);
		r->returned_early = wait_flag(&r->drained, 200 * MS);
		spin_unlock_irqrestore(&zone->lock, flags);
		break;
	}
	case 1:
		wait_flag(&r->step, 60000 * MS);
		r->page = alloc_pages_node(r->pgdat, GFP_KERNEL, 0);
		break;
	case 2:
		while (__atomic_load_n(&r->step, __ATOMIC_ACQUIRE) < 2)
			arch_cpu_relax();
		zone_pcp_disable(zone);
		r->left = zone_pcp_count(zone);
		__atomic_store_n(&r->drained, 1, __ATOMIC_RELEASE);
		break;
	}
	return NULL;
}

/*
 * zone_pcp_disable() while another CPU is inside a refill (holding its pcp, its count not yet
 * raised): the forced drain must wait for that CPU, then empty what the refill brought, so
 * that no page is listed anywhere when it returns. Linux before 66eca1021a42 ("mm:
 * page_alloc: fix pcp->count race between drain_pages_zone() vs __rmqueue_pcplist()") read
 * the count before taking the lock, saw 0, skipped the CPU and returned with the refill's
 * pages listed (memory offlining then looped forever). Each model; up to 3 attempts for the
 * refill to really overlap the drain (the drain finds pages on cpu1), which the test asserts.
 */
static void zone_pcp_disable_waits_for_refill_in_flight(void)
{
	for (unsigned int m = 0; m < ARRAY_SIZE(models); m++) {
		bool overlapped = false;

		pcp_lock_model = models[m];
		for (int attempt = 0; attempt < 3 && !overlapped; attempt++) {
			struct pglist_data *pgdat = pcp_node(256, 3);
			struct zone *zone;
			struct refill_race r = { .pgdat = pgdat };
			struct refill_race *args[3] = { &r, &r, &r };
			unsigned long free;
			struct pcp_stats st;

			ASSERT(pgdat);
			zone = &pgdat->node_zones[ZONE_DMA32];
			free = node_free_pages(pgdat);
			run_on_cpus(3, refill_race_cpu, args, sizeof(args[0]));
			pcp_stats_sum(pgdat, 1, &st);
			overlapped = st.drained > 0 || r.returned_early || r.left;
			printk("[%s] attempt %d: drain returned %s the refill, %lu pages listed after "
			       "it, %llu drained from cpu1\n", pcp_lock_model_name(models[m]), attempt,
			       r.returned_early ? "DURING" : "after", r.left,
			       (unsigned long long)st.drained);
			EXPECT(!r.returned_early);
			EXPECT_EQ(r.left, 0);
			EXPECT_EQ(zone_pcp_count(zone), 0);
			EXPECT(r.page);
			if (r.page)
				__free_pages(r.page, 0);
			zone_pcp_enable(zone);
			drain_all_pages_node(pgdat);
			EXPECT_EQ(node_free_pages(pgdat), free);
			EXPECT_EQ(mm_verify(pgdat), 0);
			test_node_destroy(pgdat);
		}
		EXPECT(overlapped);	/* else the refill never overlapped a drain: nothing tested */
	}
	pcp_lock_model = PCP_LOCK_TRYLOCK;
}

struct drain_race {
	struct pglist_data *pgdat;
	int filled;		/* atomic: cpu2 and cpu3 have pages on their lists */
	int step;		/* atomic: 1 cpu2 holds its pcp, 2 the global drain runs */
	int release;		/* atomic: cpu2 may let go */
	int global_done, zone_done;	/* atomic */
	bool returned_early;	/* zone_pcp_disable returned while cpu2 still held its pcp */
	bool global_waited;	/* the global drain was still running when cpu2 let go */
	unsigned long left;	/* pages listed right after zone_pcp_disable returned */
};

/* Put 8 order-0 pages on this CPU's list (freed pages stay there: high is far above 8). */
static void fill_own_list(struct pglist_data *pgdat)
{
	struct page *pages[8];
	unsigned long n = alloc_until_null(pgdat, GFP_KERNEL, 0, pages, ARRAY_SIZE(pages));

	free_all(pages, n, 0);
}

/*
 * cpu2 holds its own pcp (as an allocation does); cpu1 starts a global drain, which stops
 * at cpu2; cpu3 then calls zone_pcp_disable(); cpu0 tells cpu2 to let go after 200 ms (or
 * once zone_pcp_disable returned).
 */
static void *drain_race_cpu(void *p)
{
	struct drain_race *d = *(struct drain_race **)p;
	struct zone *zone = &d->pgdat->node_zones[ZONE_DMA32];

	switch (arch_cpu_id()) {
	case 0:
		while (__atomic_load_n(&d->step, __ATOMIC_ACQUIRE) < 2)
			arch_cpu_relax();
		d->returned_early = wait_flag(&d->zone_done, 200 * MS);
		d->global_waited = !__atomic_load_n(&d->global_done, __ATOMIC_ACQUIRE);
		__atomic_store_n(&d->release, 1, __ATOMIC_RELEASE);
		break;
	case 1:
		wait_flag(&d->step, 60000 * MS);
		drain_all_pages_node(d->pgdat);
		__atomic_store_n(&d->global_done, 1, __ATOMIC_RELEASE);
		break;
	case 2: {
		struct per_cpu_pages *pcp;
		unsigned long flags;

		fill_own_list(d->pgdat);
		__atomic_add_fetch(&d->filled, 1, __ATOMIC_ACQ_REL);
		while (__atomic_load_n(&d->filled, __ATOMIC_ACQUIRE) < 2)
			arch_cpu_relax();
		pcp = pcp_lock_this_cpu(zone, &flags);
		__atomic_store_n(&d->step, 1, __ATOMIC_RELEASE);
		spin_ns(20 * MS);	/* cpu1's drain is now waiting for this pcp */
		__atomic_store_n(&d->step, 2, __ATOMIC_RELEASE);
		while (!__atomic_load_n(&d->release, __ATOMIC_ACQUIRE))
			__atomic_thread_fence(__ATOMIC_SEQ_CST);	/* no interrupts while held */
		pcp_unlock_this_cpu(pcp, flags);
		break;
	}
	case 3:
		fill_own_list(d->pgdat);
		__atomic_add_fetch(&d->filled, 1, __ATOMIC_ACQ_REL);
		while (__atomic_load_n(&d->step, __ATOMIC_ACQUIRE) < 2)
			arch_cpu_relax();
		zone_pcp_disable(zone);
		d->left = zone_pcp_count(zone);
		__atomic_store_n(&d->zone_done, 1, __ATOMIC_RELEASE);
		break;
	}
	return NULL;
}

/*
 * zone_pcp_disable() while a global drain is already running and held up by a busy CPU:
 * the zone drain must wait for the global one (their lock) and then drain every CPU itself,
 * so that nothing is listed when it returns. A second *global* drain may just return (the
 * running one does the work), a zone drain may not: its caller relies on the lists being
 * empty. Each model; up to 3 attempts for the global drain to be running when
 * zone_pcp_disable() starts, which the test asserts.
 */
static void zone_pcp_disable_waits_for_running_drain(void)
{
	for (unsigned int m = 0; m < ARRAY_SIZE(models); m++) {
		bool overlapped = false;

		pcp_lock_model = models[m];
		for (int attempt = 0; attempt < 3 && !overlapped; attempt++) {
			struct pglist_data *pgdat = pcp_node(64, 4);
			struct zone *zone;
			struct drain_race d = { .pgdat = pgdat };
			struct drain_race *args[4] = { &d, &d, &d, &d };
			unsigned long free;

			ASSERT(pgdat);
			zone = &pgdat->node_zones[ZONE_DMA32];
			free = node_free_pages(pgdat);
			run_on_cpus(4, drain_race_cpu, args, sizeof(args[0]));
			overlapped = d.global_waited;
			printk("[%s] attempt %d: global drain %s, zone_pcp_disable returned %s, "
			       "%lu pages listed after it\n", pcp_lock_model_name(models[m]), attempt,
			       d.global_waited ? "held up" : "not held up",
			       d.returned_early ? "EARLY" : "after it", d.left);
			EXPECT(!d.returned_early);
			EXPECT_EQ(d.left, 0);
			zone_pcp_enable(zone);
			drain_all_pages_node(pgdat);
			EXPECT_EQ(node_free_pages(pgdat), free);
			EXPECT_EQ(mm_verify(pgdat), 0);
			test_node_destroy(pgdat);
		}
		EXPECT(overlapped);	/* else the global drain never held the lock: nothing tested */
	}
	pcp_lock_model = PCP_LOCK_TRYLOCK;
}

struct irqs_off_alloc {
	struct pglist_data *pgdat;
	int ready, done;	/* atomic */
	int count_before, count_after;	/* cpu1's list */
	unsigned long got;
	struct page **pages;
};

static void *irqs_off_alloc_cpu(void *p)
{
	struct irqs_off_alloc *a = *(struct irqs_off_alloc **)p;
	struct per_cpu_pages *pcp1 = &a->pgdat->node_zones[ZONE_DMA32].pcp[1];

	if (arch_cpu_id() == 1) {
		fill_own_list(a->pgdat);
		__atomic_store_n(&a->ready, 1, __ATOMIC_RELEASE);
		wait_flag(&a->done, 60000 * MS);	/* interrupts on: takes calls meanwhile */
		return NULL;
	}
	wait_flag(&a->ready, 60000 * MS);
	a->count_before = READ_RACY(pcp1->count);
	{
		unsigned long flags = arch_irq_save();

		a->got = alloc_until_null(a->pgdat, GFP_KERNEL, 0, a->pages,
					  node_free_pages(a->pgdat));
		arch_irq_restore(flags);
	}
	a->count_after = READ_RACY(pcp1->count);
	__atomic_store_n(&a->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * A GFP_KERNEL allocation made with interrupts off runs out of memory: its slow path may
 * drain only this CPU's lists. A remote drain would wait for the other CPUs (by IPI in the
 * irqoff model: two CPUs doing this with interrupts off would wait for each other forever),
 * so cpu1's pages stay on its list, and the slow path did run (drain_retries). Each model.
 */
static void alloc_pages_slowpath_irqs_off_drains_only_own_cpu(void)
{
	for (unsigned int m = 0; m < ARRAY_SIZE(models); m++) {
		struct pglist_data *pgdat = pcp_node(32, 2);
		struct irqs_off_alloc a = { .pgdat = pgdat };
		struct irqs_off_alloc *args[2] = { &a, &a };
		unsigned long nfree;

		ASSERT(pgdat);
		pcp_lock_model = models[m];
		nfree = node_free_pages(pgdat);
		a.pages = calloc(nfree, sizeof(struct page *));
		run_on_cpus(2, irqs_off_alloc_cpu, args, sizeof(args[0]));
		printk("[%s] %lu pages with interrupts off, %llu slow-path rounds; cpu1's list "
		       "%d pages before, %d after\n", pcp_lock_model_name(models[m]), a.got,
		       (unsigned long long)pgdat->drain_retries, a.count_before, a.count_after);
		EXPECT(a.count_before > 0);
		EXPECT_EQ(a.count_after, a.count_before);
		EXPECT(pgdat->drain_retries > 0);
		free_all(a.pages, a.got, 0);
		free(a.pages);
		drain_all_pages_node(pgdat);
		EXPECT_EQ(node_free_pages(pgdat), nfree);
		EXPECT_EQ(mm_verify(pgdat), 0);
		test_node_destroy(pgdat);
	}
	pcp_lock_model = PCP_LOCK_TRYLOCK;
}

const struct host_test pcp_tests[] = {
	{ "pcp_order_to_pindex_roundtrip", pcp_order_to_pindex_roundtrip, false },
	{ "pcp_batch_high_sizing", pcp_batch_high_sizing, false },
	{ "pcp_boot_pageset_frees_to_buddy", pcp_boot_pageset_frees_to_buddy, false },
	{ "pcp_refill_size_per_order_and_lifo", pcp_refill_size_per_order_and_lifo, false },
	{ "pcp_spill_grows_then_allocation_halves", pcp_spill_grows_then_allocation_halves, false },
	{ "pcp_free_high_drains_whole_list", pcp_free_high_drains_whole_list, false },
	{ "pcp_alloc_pages_bulk_fills_array", pcp_alloc_pages_bulk_fills_array, false },
	{ "pcp_lock_debug_checks", pcp_lock_debug_checks, false },
	{ "pcp_stress_random_orders_all_models", pcp_stress_random_orders_all_models, true },
	{ "pcp_irq_reentry_all_models", pcp_irq_reentry_all_models, true },
	{ "pcp_remote_drain_under_fire_all_models", pcp_remote_drain_under_fire_all_models, true },
	{ "pcp_exhaustion_all_cpus_all_models", pcp_exhaustion_all_cpus_all_models, true },
	{ "zone_pcp_disable_waits_for_refill_in_flight",
	  zone_pcp_disable_waits_for_refill_in_flight, true },
	{ "zone_pcp_disable_waits_for_running_drain", zone_pcp_disable_waits_for_running_drain,
	  true },
	{ "alloc_pages_slowpath_irqs_off_drains_only_own_cpu",
	  alloc_pages_slowpath_irqs_off_drains_only_own_cpu, true },
	{ NULL, NULL, false },
};
