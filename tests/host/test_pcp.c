/*
 * Host tests of the per-CPU page lists (mm/pcp.c): indexing, sizing, free and refill rules,
 * bulk allocation, the lock debug checks, each instance's own lock model, an unbalanced
 * zone_pcp_enable(); and what needs the host's tools: drains that must wait for another CPU
 * stopped at an exact point, interrupts-off slow paths, mm_verify() on a held list,
 * zone_pcp_disable() against refills under --pct. The races written once for host and
 * kernel are in tests/kernel/mm_pcp_private.c.
 */
#include <stdlib.h>
#include <setjmp.h>
#include <string.h>
#include "tests/host/harness.h"
#include "tests/kernel/pcp_check.h"
#include "kernel/lockdep.h"
#include "kernel/smp.h"
#include "tests/lab/pcp_bulk.h"

static const enum pcp_lock_model models[] = { PCP_LOCK_IRQOFF, PCP_LOCK_IRQSAVE,
					      PCP_LOCK_TRYLOCK };

/* A single-zone node of `mib` MiB in DMA32 with nr_cpus per-CPU lists in lock model
 * `model`, pcp values for nr_cpus online CPUs. */
static struct pglist_data *pcp_node_model(unsigned long mib, unsigned int nr_cpus,
					  enum pcp_lock_model model)
{
	const struct mem_region map[] = { { 16 * MiB, mib * MiB, MEM_USABLE } };
	struct pglist_data *pgdat = test_node_create_model(map, ARRAY_SIZE(map), nr_cpus, model);

	if (pgdat)
		zone_pcp_update(pgdat, nr_cpus);
	return pgdat;
}

static struct pglist_data *pcp_node(unsigned long mib, unsigned int nr_cpus)
{
	return pcp_node_model(mib, nr_cpus, pcp_lock_default);
}

static struct per_cpu_pages *this_pcp(struct pglist_data *pgdat)
{
	return &pgdat->node_zones[ZONE_DMA32].pcp[arch_cpu_id()];
}

/* order_to_pindex and pindex_to_order round-trip for orders 0..3 and pageblock order, and
 * every (type, order <= 3) pair has its own list: 3 x 4 + 1 = 13 lists. */
static void pcp_order_to_pindex_roundtrip(struct ktest *t)
{
	bool used[NR_PCP_LISTS] = { false };

	KT_EXPECT_EQ(t, NR_PCP_LISTS, 13);
	for (int mt = 0; mt < MIGRATE_PCPTYPES; mt++)
		for (unsigned int o = 0; o <= PAGE_ALLOC_COSTLY_ORDER; o++) {
			unsigned int p = order_to_pindex(mt, o);

			KT_EXPECT_TRUE(t, p < NR_LOWORDER_PCP_LISTS && !used[p]);
			used[p] = true;
			KT_EXPECT_EQ(t, pindex_to_order(p), o);
		}
	KT_EXPECT_EQ(t, order_to_pindex(MIGRATE_MOVABLE, pageblock_order), NR_LOWORDER_PCP_LISTS);
	KT_EXPECT_EQ(t, pindex_to_order(NR_LOWORDER_PCP_LISTS), pageblock_order);
	KT_EXPECT_TRUE(t, pcp_allowed_order(3) && pcp_allowed_order(pageblock_order) &&
		       !pcp_allowed_order(4));
}

/*
 * batch = rounddown_pow_of_two(b + b/2) - 1 with b = min(managed >> 10, 256) / 4:
 * a 4 GiB zone gives 63, 512 MiB gives 31, a tiny zone 1. high = max(low / cpus, 4 batch):
 * the worked example, 512 MiB and 4 CPUs with low = 905, gives 226.
 */
static void pcp_batch_high_sizing(struct ktest *t)
{
	struct zone z = { 0 };

	z.managed_pages = (4ul << 30) >> PAGE_SHIFT;
	KT_EXPECT_EQ(t, zone_batchsize(&z), 63);
	z.managed_pages = (512ul << 20) >> PAGE_SHIFT;
	KT_EXPECT_EQ(t, zone_batchsize(&z), 31);
	z.managed_pages = 100;
	KT_EXPECT_EQ(t, zone_batchsize(&z), 1);
	z._watermark[WMARK_LOW] = 905;
	KT_EXPECT_EQ(t, zone_highsize(&z, 31, 4), 226);
	KT_EXPECT_EQ(t, zone_highsize(&z, 31, 40), 124);
}

/* The boot pageset (high 0, batch 1, as after zone_pcp_disable) keeps nothing: every free
 * goes on to the buddy lists at once, and a refill takes one block. */
static void pcp_boot_pageset_frees_to_buddy(struct ktest *t)
{
	struct pglist_data *pgdat = pcp_node(64, 4);
	struct zone *zone;
	struct page *page;

	KT_ASSERT_TRUE(t, pgdat);
	zone = &pgdat->node_zones[ZONE_DMA32];
	zone_pcp_disable(zone);
	KT_EXPECT_EQ(t, this_pcp(pgdat)->high, 0);
	KT_EXPECT_EQ(t, this_pcp(pgdat)->batch, 1);
	page = alloc_pages_node(pgdat, GFP_KERNEL, 0);
	KT_ASSERT_TRUE(t, page);
	KT_EXPECT_EQ(t, this_pcp(pgdat)->count, 0);
	__free_pages(page, 0);
	KT_EXPECT_EQ(t, this_pcp(pgdat)->count, 0);
	KT_EXPECT_EQ(t, zone_pcp_count(zone), 0);
	zone_pcp_enable(zone);
	KT_EXPECT_EQ(t, this_pcp(pgdat)->high, zone->pageset_high);
	KT_EXPECT_EQ(t, mm_verify(pgdat), 0);
	test_node_destroy(pgdat);
}

/* An empty list refills max(batch >> order, 2) blocks under one zone->lock hold (batch 15
 * for a 256 MiB zone: 15, 7, 3, 2 blocks for orders 0..3); the page freed last is the next
 * one allocated (LIFO) and counts as a hit. */
static void pcp_refill_size_per_order_and_lifo(struct ktest *t)
{
	struct pglist_data *pgdat = pcp_node(256, 4);
	struct per_cpu_pages *pcp;
	struct pcp_stats st;

	KT_ASSERT_TRUE(t, pgdat);
	pcp = this_pcp(pgdat);
	KT_EXPECT_EQ(t, pcp->batch, 15);
	for (unsigned int o = 0; o <= PAGE_ALLOC_COSTLY_ORDER; o++) {
		int before = pcp->count, refill = MAX(15 >> o, 2);
		struct page *page = alloc_pages_node(pgdat, GFP_KERNEL, o), *again;

		KT_ASSERT_TRUE(t, page);
		KT_EXPECT_EQ(t, pcp->count - before, (refill - 1) << o);
		__free_pages(page, o);
		again = alloc_pages_node(pgdat, GFP_KERNEL, o);
		KT_EXPECT_TRUE(t, again == page);
		__free_pages(again, o);
	}
	pcp_stats_sum(pgdat, 0, &st);
	KT_EXPECT_EQ(t, st.refill, 4);
	KT_EXPECT_EQ(t, st.alloc_hit, 4);
	drain_cpu_pages(pgdat->machine, arch_cpu_id());
	KT_EXPECT_EQ(t, pcp->count, 0);
	KT_EXPECT_EQ(t, mm_verify(pgdat), 0);
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
static void pcp_spill_grows_then_allocation_halves(struct ktest *t)
{
	struct pglist_data *pgdat = pcp_node(256, 4);
	static struct page *pages[4000];
	int spills[8] = { 0 }, nspill = 0, batch;
	struct per_cpu_pages *pcp;
	unsigned long i = 0, n;
	struct page *one;

	KT_ASSERT_TRUE(t, pgdat);
	pcp = this_pcp(pgdat);
	batch = pcp->batch;
	n = alloc_until_null(pgdat, GFP_KERNEL, 0, pages, ARRAY_SIZE(pages));
	KT_ASSERT_TRUE(t, n == ARRAY_SIZE(pages));
	drain_cpu_pages(pgdat->machine, arch_cpu_id());
	pcp->high = 16 * batch;
	pcp->free_factor = 0;
	while (nspill < 5 && i < n) {
		int s = free_and_measure_spill(pcp, pages[i++]);

		if (s)
			spills[nspill++] = s;
	}
	KT_ASSERT_EQ(t, nspill, 5);
	KT_EXPECT_EQ(t, spills[0], batch);
	KT_EXPECT_EQ(t, spills[1], 2 * batch);
	KT_EXPECT_EQ(t, spills[2], 4 * batch);
	KT_EXPECT_EQ(t, spills[3], 8 * batch);
	KT_EXPECT_EQ(t, spills[4], 15 * batch);
	KT_EXPECT_EQ(t, pcp->free_factor, 4);
	one = alloc_pages_node(pgdat, GFP_KERNEL, 0);
	KT_EXPECT_EQ(t, pcp->free_factor, 2);
	while (i < n) {
		int s = free_and_measure_spill(pcp, pages[i++]);

		if (s) {
			KT_EXPECT_EQ(t, s, 4 * batch);
			break;
		}
	}
	__free_pages(one, 0);
	free_all(pages + i, n - i, 0);
	drain_cpu_pages(pgdat->machine, arch_cpu_id());
	KT_EXPECT_EQ(t, mm_verify(pgdat), 0);
	test_node_destroy(pgdat);
}

/*
 * free_high: an order-1..3 free while frees dominate (free_factor > 0) empties the whole
 * pcp; right after an allocation (free_factor halved to 0) it does not.
 */
static void pcp_free_high_drains_whole_list(struct ktest *t)
{
	struct pglist_data *pgdat = pcp_node(256, 4);
	struct page *o0[3], *o1a, *o1b;
	struct per_cpu_pages *pcp;

	KT_ASSERT_TRUE(t, pgdat);
	pcp = this_pcp(pgdat);
	for (int k = 0; k < 3; k++)
		o0[k] = alloc_pages_node(pgdat, GFP_KERNEL, 0);
	o1a = alloc_pages_node(pgdat, GFP_KERNEL, 1);
	o1b = alloc_pages_node(pgdat, GFP_KERNEL, 1);
	KT_ASSERT_TRUE(t, o0[0] && o0[1] && o0[2] && o1a && o1b);
	KT_EXPECT_EQ(t, pcp->free_factor, 0);
	__free_pages(o1a, 1);			/* free_factor 0: stays on the list */
	KT_EXPECT_TRUE(t, pcp->count > 0 && PagePcp(o1a));
	pcp->free_factor = 1;			/* as after a spill with no allocation since */
	for (int k = 0; k < 3; k++)
		__free_pages(o0[k], 0);
	__free_pages(o1b, 1);			/* high-order free with free_factor > 0 */
	KT_EXPECT_EQ(t, pcp->count, 0);
	KT_EXPECT_TRUE(t, !PagePcp(o1a) && !PagePcp(o1b));
	KT_EXPECT_EQ(t, mm_verify(pgdat), 0);
	test_node_destroy(pgdat);
}

/* alloc_pages_bulk fills only the empty slots, with distinct pages, taking the pcp once;
 * when this CPU's pcp is busy it still returns one page through the buddy lists. */
static void pcp_alloc_pages_bulk_fills_array(struct ktest *t)
{
	struct pglist_data *pgdat = pcp_node(256, 4);
	struct page *pages[100] = { NULL }, *first;
	struct per_cpu_pages *held;
	unsigned long free, flags;
	unsigned int got;

	KT_ASSERT_TRUE(t, pgdat);
	free = node_free_pages(pgdat);
	first = pages[7] = alloc_pages_node(pgdat, GFP_KERNEL, 0);
	got = alloc_pages_bulk_node(pgdat, GFP_KERNEL, 100, pages);
	KT_EXPECT_EQ(t, got, 100);
	KT_EXPECT_TRUE(t, pages[7] == first);
	for (int a = 0; a < 100; a++)
		for (int b = a + 1; b < 100; b++)
			if (pages[a] == pages[b])
				KT_EXPECT_TRUE(t, pages[a] != pages[b]);
	free_all(pages, 100, 0);
	memset(pages, 0, sizeof(pages));
	held = pcp_lock_this_cpu(&pgdat->node_zones[ZONE_DMA32], &flags);
	KT_ASSERT_TRUE(t, held);
	KT_EXPECT_EQ(t, alloc_pages_bulk_node(pgdat, GFP_KERNEL, 100, pages), 1);
	pcp_unlock_this_cpu(&pgdat->node_zones[ZONE_DMA32], held, flags);
	free_all(pages, 1, 0);
	drain_all_pages_machine(pgdat->machine);
	KT_EXPECT_EQ(t, node_free_pages(pgdat), free);
	KT_EXPECT_EQ(t, mm_verify(pgdat), 0);
	test_node_destroy(pgdat);
}

/*
 * The lock debug checks as mm relies on them: zone->lock is IRQ-safe, so taking it with
 * interrupts on warns; taking this CPU's pcp lock twice (a spinning re-entry instead of a
 * trylock) is reported by lockdep as recursion, then panics with a message naming the lock
 * instead of hanging. Both misuses run in lockdep expect scopes, which forget them after.
 */
static void pcp_lock_debug_checks(struct ktest *t)
{
	struct pglist_data *pgdat;
	struct lockdep_expect e;
	struct zone *zone;
	unsigned long warnings = taint_count(TAINT_WARN);
	jmp_buf jb;

	KT_SKIP_UNLESS_DEBUG_VM(t, "no spinlock debug checks");
	pgdat = pcp_node(16, 4);
	KT_ASSERT_TRUE(t, pgdat);
	zone = &pgdat->node_zones[ZONE_DMA32];
	ktest_expect_taint(TAINT_WARN);		/* the one below */
	lockdep_expect_begin(&e);
	spin_lock(&zone->lock);			/* interrupts on: the bug under test */
	spin_unlock(&zone->lock);
	lockdep_expect_end(&e);			/* (inconsistent only if it ran in an IRQ before) */
	KT_EXPECT_EQ(t, taint_count(TAINT_WARN), warnings + 1);
	KT_EXPECT_TRUE(t, host_console_contains("IRQ-safe lock taken with interrupts on"));
	lockdep_expect_begin(&e);
	spin_lock(&zone->pcp[0].lock);
	if (!setjmp(jb)) {
		host_panic_jmp = &jb;
		spin_lock(&zone->pcp[0].lock);	/* recursion: must panic, not spin */
		KT_EXPECT_TRUE(t, !"spin_lock recursion returned");
	}
	host_panic_jmp = NULL;
	KT_EXPECT_TRUE(t, strstr(host_panic_msg, "spinlock recursion") != NULL);
	spin_unlock(&zone->pcp[0].lock);
	KT_EXPECT_EQ(t, lockdep_expect_end(&e), LOCKDEP_RECURSION);
	KT_EXPECT_TRUE(t, host_console_contains("possible recursive locking of "
						"'&zone->pcp[cpu].lock'"));
	KT_EXPECT_EQ(t, mm_verify(pgdat), 0);
	test_node_destroy(pgdat);
}

/* ---- drains that must wait for another CPU ---- */

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
		while (smp_load_acquire(&d->step) < 2)
			arch_cpu_relax();
		d->returned_early = wait_flag_us(&d->zone_done, 200000);
		d->global_waited = !smp_load_acquire(&d->global_done);
		smp_store_release(&d->release, 1);
		break;
	case 1:
		wait_flag_us(&d->step, 60000000);
		drain_all_pages_machine(d->pgdat->machine);
		smp_store_release(&d->global_done, 1);
		break;
	case 2: {
		struct per_cpu_pages *pcp;
		unsigned long flags;

		fill_own_list(d->pgdat);
		__atomic_add_fetch(&d->filled, 1, __ATOMIC_ACQ_REL);
		while (smp_load_acquire(&d->filled) < 2)
			arch_cpu_relax();
		pcp = pcp_lock_this_cpu(zone, &flags);
		smp_store_release(&d->step, 1);
		udelay(20000);	/* cpu1's drain is now waiting for this pcp */
		smp_store_release(&d->step, 2);
		while (!smp_load_acquire(&d->release))
			__atomic_thread_fence(__ATOMIC_SEQ_CST);	/* no interrupts while held */
		pcp_unlock_this_cpu(zone, pcp, flags);
		break;
	}
	case 3:
		fill_own_list(d->pgdat);
		__atomic_add_fetch(&d->filled, 1, __ATOMIC_ACQ_REL);
		while (smp_load_acquire(&d->step) < 2)
			arch_cpu_relax();
		zone_pcp_disable(zone);
		d->left = zone_pcp_count(zone);
		smp_store_release(&d->zone_done, 1);
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
static void zone_pcp_disable_waits_for_running_drain(struct ktest *t)
{
	for (unsigned int m = 0; m < ARRAY_SIZE(models); m++) {
		bool overlapped = false;

		for (int attempt = 0; attempt < 3 && !overlapped; attempt++) {
			struct pglist_data *pgdat = pcp_node_model(64, 4, models[m]);
			struct zone *zone;
			struct drain_race d = { .pgdat = pgdat };
			struct drain_race *args[4] = { &d, &d, &d, &d };
			unsigned long free;

			KT_ASSERT_TRUE(t, pgdat);
			zone = &pgdat->node_zones[ZONE_DMA32];
			free = node_free_pages(pgdat);
			run_on_cpus(4, drain_race_cpu, args, sizeof(args[0]));
			overlapped = d.global_waited;
			printk("[%s] attempt %d: global drain %s, zone_pcp_disable returned %s, "
			       "%lu pages listed after it\n", pcp_lock_model_name(models[m]), attempt,
			       d.global_waited ? "held up" : "not held up",
			       d.returned_early ? "EARLY" : "after it", d.left);
			KT_EXPECT_TRUE(t, !d.returned_early);
			KT_EXPECT_EQ(t, d.left, 0);
			zone_pcp_enable(zone);
			drain_all_pages_machine(pgdat->machine);
			KT_EXPECT_EQ(t, node_free_pages(pgdat), free);
			KT_EXPECT_EQ(t, mm_verify(pgdat), 0);
			test_node_destroy(pgdat);
		}
		/* else the global drain never held the lock: nothing tested */
		KT_EXPECT_TRUE(t, overlapped);
	}
}

/* ---- a zone_pcp_update() waiting for pcp_batch_high_lock while a disable takes it ---- */

struct update_queue {
	struct pglist_data *pgdat;
	int step;		/* 1: cpu0 holds DMA32's pcp_batch_high_lock; 2: let go (atomic) */
	int in_stall, disabled;	/* atomic */
	bool waiting;		/* cpu1 was inside its spin_lock() of it when the stall came */
};

/* An IPI on cpu1 while its zone_pcp_update() waits for the lock cpu0 holds (lockdep lists a
 * lock from before the wait for it): stay until cpu2's zone_pcp_disable() is done, 1 s at most. */
static void update_stall(void *arg)
{
	struct update_queue *q = arg;

	q->waiting = lockdep_held_depth() == 1;
	smp_store_release(&q->in_stall, 1);
	wait_flag_us(&q->disabled, 1000000);
}

/* cpu0 holds the lock until cpu1's update waits for it and is stalled there; then cpu2
 * disables the zone, taking the lock first; then cpu1's update gets it. */
static void *update_queue_cpu(void *p)
{
	struct update_queue *q = *(struct update_queue **)p;
	struct zone *zone = &q->pgdat->node_zones[ZONE_DMA32];

	if (arch_cpu_id() == 0) {
		spin_lock(&zone->pcp_batch_high_lock);
		smp_store_release(&q->step, 1);
		udelay(20000);	/* cpu1's update is now waiting for the lock */
		smp_call_function_single(1, update_stall, q, false);
		wait_flag_us(&q->in_stall, 1000000);
		spin_unlock(&zone->pcp_batch_high_lock);
		smp_store_release(&q->step, 2);
	} else if (arch_cpu_id() == 1) {
		wait_flag_us(&q->step, 60000000);
		zone_pcp_update(q->pgdat, 3);
	} else {
		while (smp_load_acquire(&q->step) < 2)
			arch_cpu_relax();
		zone_pcp_disable(zone);
		smp_store_release(&q->disabled, 1);
	}
	return NULL;
}

/* One attempt; false if cpu1 was not waiting for the lock when stalled (nothing tested). */
static bool update_queue_attempt(struct ktest *t)
{
	struct pglist_data *pgdat = pcp_node_model(64, 4, PCP_LOCK_TRYLOCK);
	struct update_queue q = { .pgdat = pgdat }, *args[3] = { &q, &q, &q };
	struct zone *zone;

	KT_ASSERT_TRUE(t, pgdat);
	zone = &pgdat->node_zones[ZONE_DMA32];
	run_on_cpus(3, update_queue_cpu, args, sizeof(args[0]));
	printk("update %s waiting for the lock when the disable took it; depth %d\n",
	       q.waiting ? "was" : "was NOT", zone->pcp_disable_depth);
	KT_EXPECT_EQ(t, zone->pcp_disable_depth, 1);
	for (unsigned int cpu = 0; cpu < pgdat->nr_cpus; cpu++)
		if (zone->pcp[cpu].high != 0 || zone->pcp[cpu].batch != 1)
			KT_FAIL(t, "cpu%u: high %d batch %d in a disabled zone", cpu,
				zone->pcp[cpu].high, zone->pcp[cpu].batch);
	zone_pcp_enable(zone);
	KT_EXPECT_EQ(t, zone->pcp[0].high, zone->pageset_high);
	KT_EXPECT_EQ(t, mm_verify(pgdat), 0);
	test_node_destroy(pgdat);
	return q.waiting;
}

/*
 * zone_pcp_update() reads the disable depth under pcp_batch_high_lock, with its writes: an
 * update that waits for the lock while a zone_pcp_disable() takes it and disables the zone
 * must then leave every pcp at high 0, batch 1 (depth > 0 means exactly that). Window: the
 * update was inside its wait for the lock when the disable took it (asserted; 3 attempts).
 */
static void zone_pcp_update_waiting_behind_disable(struct ktest *t)
{
	bool waited = false;

	KT_SKIP_UNLESS_DEBUG_VM(t, "the window is seen through lockdep's held locks");
	for (int attempt = 0; attempt < 3 && !waited; attempt++)
		waited = update_queue_attempt(t);
	KT_EXPECT_TRUE(t, waited);
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
		smp_store_release(&a->ready, 1);
		wait_flag_us(&a->done, 60000000);	/* interrupts on: takes calls meanwhile */
		return NULL;
	}
	wait_flag_us(&a->ready, 60000000);
	a->count_before = READ_ONCE(pcp1->count);
	{
		unsigned long flags = arch_irq_save();

		a->got = alloc_until_null(a->pgdat, GFP_KERNEL, 0, a->pages,
					  node_free_pages(a->pgdat));
		arch_irq_restore(flags);
	}
	a->count_after = READ_ONCE(pcp1->count);
	smp_store_release(&a->done, 1);
	return NULL;
}

/*
 * A GFP_KERNEL allocation made with interrupts off runs out of memory: its slow path drains
 * nothing. A remote drain would wait for the other CPUs (by IPI in the irqoff model: two
 * CPUs doing this with interrupts off would wait for each other forever), and even a local
 * one may spin on a pcp lock held by the code this CPU interrupted. So cpu1's pages stay on
 * its list and no drain round is counted. Each model.
 */
static void alloc_pages_slowpath_irqs_off_does_not_drain(struct ktest *t)
{
	for (unsigned int m = 0; m < ARRAY_SIZE(models); m++) {
		struct pglist_data *pgdat = pcp_node_model(32, 2, models[m]);
		struct irqs_off_alloc a = { .pgdat = pgdat };
		struct irqs_off_alloc *args[2] = { &a, &a };
		unsigned long nfree;

		KT_ASSERT_TRUE(t, pgdat);
		nfree = node_free_pages(pgdat);
		a.pages = calloc(nfree, sizeof(struct page *));
		run_on_cpus(2, irqs_off_alloc_cpu, args, sizeof(args[0]));
		printk("[%s] %lu pages with interrupts off, %llu slow-path rounds; cpu1's list "
		       "%d pages before, %d after\n", pcp_lock_model_name(models[m]), a.got,
		       (unsigned long long)pgdat->drain_retries, a.count_before, a.count_after);
		KT_EXPECT_TRUE(t, a.count_before > 0);
		KT_EXPECT_EQ(t, a.count_after, a.count_before);
		KT_EXPECT_EQ(t, pgdat->drain_retries, 0);
		free_all(a.pages, a.got, 0);
		free(a.pages);
		drain_all_pages_machine(pgdat->machine);
		KT_EXPECT_EQ(t, node_free_pages(pgdat), nfree);
		KT_EXPECT_EQ(t, mm_verify(pgdat), 0);
		test_node_destroy(pgdat);
	}
}

struct slowpath_drain {
	struct pglist_data *pgdat;
	struct page **pages;
	unsigned long n, nmax;
	int step;		/* atomic: 1 node exhausted, 2 16 pages on cpu2's list, 3 cpu0
				 * holds its pcp, 4 cpu3 is in its drain of cpu0 */
	int done;		/* atomic: cpu1's allocation returned */
	bool drain_held;	/* cpu1 saw pcp_drain_lock held before it allocated */
	bool drained_in_window;	/* cpu1 began its drain while cpu0 still held cpu3 up */
	unsigned long parked;	/* pages on cpu2's list when cpu1 allocated */
	struct page *got;
};

#define SLOWPATH_PARKED 16

/* cpu0 holds its pcp so that cpu3's drain of it (drain_cpu_pages(), which holds
 * pcp_drain_lock) waits; cpu1, with every free page of the node on cpu2's list, allocates;
 * cpu0 lets go 20 ms after cpu1 began its slow-path drain (2 s at most). */
static void *slowpath_drain_cpu(void *p)
{
	struct slowpath_drain *d = *(struct slowpath_drain **)p;
	struct zone *zone = &d->pgdat->node_zones[ZONE_DMA32];
	struct mm_machine *m = d->pgdat->machine;
	const gfp_t gfp = GFP_KERNEL | __GFP_MEMALLOC | __GFP_NOWARN;

	switch (arch_cpu_id()) {
	case 0: {
		u64 retries, end;
		struct per_cpu_pages *pcp;
		unsigned long flags;

		while (smp_load_acquire(&d->step) < 2)
			arch_cpu_relax();
		retries = READ_ONCE(d->pgdat->drain_retries);
		pcp = pcp_lock_this_cpu(zone, &flags);
		smp_store_release(&d->step, 3);
		end = arch_cycles() + us_to_cycles(2000000);
		while (READ_ONCE(d->pgdat->drain_retries) == retries && !smp_load_acquire(&d->done)
		       && arch_cycles() < end)
			__atomic_thread_fence(__ATOMIC_SEQ_CST);	/* no interrupts while held */
		d->drained_in_window = READ_ONCE(d->pgdat->drain_retries) != retries;
		end = arch_cycles() + us_to_cycles(20000);
		while (!smp_load_acquire(&d->done) && arch_cycles() < end)
			__atomic_thread_fence(__ATOMIC_SEQ_CST);
		pcp_unlock_this_cpu(zone, pcp, flags);
		break;
	}
	case 1:
		d->n = alloc_until_null(d->pgdat, gfp, 0, d->pages, d->nmax);
		smp_store_release(&d->step, 1);
		while (smp_load_acquire(&d->step) < 4)
			arch_cpu_relax();
		for (u64 end = arch_cycles() + us_to_cycles(2000000);
		     !(d->drain_held = READ_ONCE(m->pcp_drain_lock.locked)) && arch_cycles() < end;)
			arch_cpu_relax();
		d->parked = (unsigned long)READ_ONCE(zone->pcp[2].count);
		d->got = alloc_pages_node(d->pgdat, gfp, 0);
		smp_store_release(&d->done, 1);
		break;
	case 2:
		while (smp_load_acquire(&d->step) < 1)
			arch_cpu_relax();
		for (int i = 0; i < SLOWPATH_PARKED; i++)
			__free_pages(d->pages[--d->n], 0);
		smp_store_release(&d->step, 2);
		break;
	case 3:
		while (smp_load_acquire(&d->step) < 3)
			arch_cpu_relax();
		smp_store_release(&d->step, 4);
		drain_cpu_pages(m, 0);
		break;
	}
	return NULL;
}

/*
 * Every free page of the node is on cpu2's list (16 of them) and a drain of one CPU's lists
 * (cpu3's drain_cpu_pages() of cpu0) is running, held up by cpu0's hold of its pcp, when
 * cpu1's GFP_KERNEL allocation finds nothing: its slow path's drain of every CPU must wait
 * for the running one and then drain cpu2 itself, and the allocation succeed. (At d900eef
 * it saw pcp_drain_lock taken, returned at once - "the running one does the work", which
 * never looks at cpu2 - and the allocation failed with 16 pages listed.) Each model; the
 * window (cpu1's drain began while the other drain held the lock) is asserted.
 */
static void alloc_pages_slowpath_waits_for_running_drain(struct ktest *t)
{
	for (unsigned int m = 0; m < ARRAY_SIZE(models); m++) {
		struct pglist_data *pgdat = pcp_node_model(64, 4, models[m]);
		struct slowpath_drain d = { .pgdat = pgdat };
		struct slowpath_drain *args[4] = { &d, &d, &d, &d };
		unsigned long nfree;

		KT_ASSERT_TRUE(t, pgdat);
		nfree = node_free_pages(pgdat);
		d.nmax = nfree + SLOWPATH_PARKED;
		d.pages = calloc(d.nmax, sizeof(*d.pages));
		run_on_cpus(4, slowpath_drain_cpu, args, sizeof(args[0]));
		printk("[%s] %lu pages on cpu2's list, the other drain %s: allocation %s, its "
		       "drain %s\n", pcp_lock_model_name(models[m]), d.parked,
		       d.drain_held ? "running" : "NOT SEEN", d.got ? "succeeded" : "FAILED",
		       d.drained_in_window ? "began while the other was held up" :
		       "NEVER BEGAN while the other was held up");
		KT_EXPECT_EQ(t, d.parked, SLOWPATH_PARKED);
		KT_EXPECT_TRUE(t, d.drain_held);
		KT_EXPECT_TRUE(t, d.drained_in_window);
		KT_EXPECT_TRUE(t, d.got != NULL);
		if (d.got)
			__free_pages(d.got, 0);
		free_all(d.pages, d.n, 0);
		free(d.pages);
		drain_all_pages_machine(pgdat->machine);
		KT_EXPECT_EQ(t, node_free_pages(pgdat), nfree);
		KT_EXPECT_EQ(t, mm_verify(pgdat), 0);
		test_node_destroy(pgdat);
	}
}

/*
 * A drain of a list that one chunk (batch << 5 pages) empties is one hold of its lock:
 * drain_pages_zone() subtracts what it drained and stops at 0, as Linux's 66eca1021a42 loop
 * does, instead of taking the lock again to read the 0 it left. 8 or more pages on this
 * CPU's list, drain_local_pages(): expect all drained, the lock acquired once (trylock and
 * irqsave; irqoff takes no lock; counted by debug builds, whose pcp locks keep statistics).
 * (At d900eef: twice.)
 */
static void drain_pages_zone_one_hold_per_chunk(struct ktest *t)
{
	for (unsigned int m = 0; m < ARRAY_SIZE(models); m++) {
		struct pglist_data *pgdat = pcp_node_model(64, 4, models[m]);
		struct per_cpu_pages *pcp;
		struct pcp_stats a, b;
		u64 taken;
		int n;

		KT_ASSERT_TRUE(t, pgdat);
		pcp = this_pcp(pgdat);
		fill_own_list(pgdat);
		n = pcp->count;
		KT_ASSERT_TRUE(t, n >= 8 && n <= pcp->batch << PCP_BATCH_SCALE_MAX);
		pcp_stats_sum(pgdat, 0, &a);
		taken = pcp->lock.stats.acquisitions;
		drain_local_pages(&pgdat->node_zones[ZONE_DMA32]);
		taken = pcp->lock.stats.acquisitions - taken;
		pcp_stats_sum(pgdat, 0, &b);
		printk("[%s] %d pages drained in %llu holds of the lock\n",
		       pcp_lock_model_name(models[m]), n, (unsigned long long)taken);
		KT_EXPECT_EQ(t, pcp->count, 0);
		KT_EXPECT_EQ(t, b.drained - a.drained, (u64)n);
		if (CONFIG_DEBUG_VM)	/* release builds take pcp locks by the word alone */
			KT_EXPECT_EQ(t, taken, models[m] == PCP_LOCK_IRQOFF ? 0 : 1);
		KT_EXPECT_EQ(t, mm_verify(pgdat), 0);
		test_node_destroy(pgdat);
	}
}

/*
 * A machine's pagesets are sized for its own CPUs from the start: a node of 4 CPUs has high
 * = the zone's low watermark shared by 4, before any zone_pcp_update() of the caller's.
 * (At d900eef mm_machine_init() sized them for 1 CPU, zone_pcp_update(node, 1): each of the
 * 4 lists could hold the whole low watermark.)
 */
static void pcp_high_split_among_machine_cpus_at_init(struct ktest *t)
{
	const struct mem_region map[] = { { 16 * MiB, 256 * MiB, MEM_USABLE } };
	struct pglist_data *pgdat = test_node_create_model(map, ARRAY_SIZE(map), 4,
							   PCP_LOCK_TRYLOCK);
	struct zone *zone;

	KT_ASSERT_TRUE(t, pgdat);
	zone = &pgdat->node_zones[ZONE_DMA32];
	ktest_printf(t, "batch %d, high %d (for 1 CPU: %d)", zone->pageset_batch,
		     zone->pageset_high, zone_highsize(zone, zone->pageset_batch, 1));
	KT_EXPECT_EQ(t, zone->pageset_high, zone_highsize(zone, zone->pageset_batch, 4));
	KT_EXPECT_TRUE(t, zone->pageset_high < zone_highsize(zone, zone->pageset_batch, 1));
	KT_EXPECT_EQ(t, this_pcp(pgdat)->high, zone->pageset_high);
	test_node_destroy(pgdat);
}

/* ---- small rules ---- */

/*
 * The lock model is the instance's: three instances alive at once, one per model, and one
 * made without a model (pcp_lock_default). Every zone with lists carries its machine's
 * model, and a hold of this CPU's pcp does what that model says, whatever the others are:
 * irqoff turns interrupts off and leaves the lock word alone, irqsave takes the lock with
 * interrupts off, trylock takes it with interrupts on; the release gives back exactly that.
 */
static void pcp_lock_model_fixed_per_instance(struct ktest *t)
{
	struct pglist_data *node[ARRAY_SIZE(models)], *dflt = pcp_node(16, 1);

	KT_ASSERT_TRUE(t, dflt);
	KT_EXPECT_EQ(t, dflt->machine->pcp_lock, pcp_lock_default);
	for (unsigned int m = 0; m < ARRAY_SIZE(models); m++) {
		const struct mem_region map[] = { { (48 + 32 * m) * MiB, 16 * MiB, MEM_USABLE } };

		node[m] = test_node_create_model(map, ARRAY_SIZE(map), 1, models[m]);
		KT_ASSERT_TRUE(t, node[m]);
		KT_EXPECT_EQ(t, node[m]->machine->pcp_lock, models[m]);
		for (int z = 0; z < MAX_NR_ZONES; z++)
			if (node[m]->node_zones[z].pcp)
				KT_EXPECT_EQ(t, node[m]->node_zones[z].pcp_lock, models[m]);
	}
	for (unsigned int m = 0; m < ARRAY_SIZE(models); m++) {
		struct zone *zone = &node[m]->node_zones[ZONE_DMA32];
		bool irqs_off, locked;
		unsigned long flags;
		struct per_cpu_pages *pcp = pcp_lock_this_cpu(zone, &flags);

		KT_ASSERT_TRUE(t, pcp);
		irqs_off = arch_irqs_disabled();
		locked = READ_ONCE(pcp->lock.locked) != 0;
		printk("[%s] held: interrupts %s, lock word %s\n", pcp_lock_model_name(models[m]),
		       irqs_off ? "off" : "on", locked ? "taken" : "free");
		KT_EXPECT_EQ(t, irqs_off, models[m] != PCP_LOCK_TRYLOCK);
		KT_EXPECT_EQ(t, locked, models[m] != PCP_LOCK_IRQOFF);
		pcp_unlock_this_cpu(zone, pcp, flags);
		KT_EXPECT_TRUE(t, !arch_irqs_disabled() && !READ_ONCE(pcp->lock.locked));
		host_irqs_off = 0;
	}
	for (unsigned int m = 0; m < ARRAY_SIZE(models); m++) {
		KT_EXPECT_EQ(t, mm_verify(node[m]), 0);
		test_node_destroy(node[m]);
	}
	test_node_destroy(dflt);
}

static void zone_pcp_enable_cb(void *zone)
{
	zone_pcp_enable(zone);
}

/*
 * zone_pcp_enable() with no zone_pcp_disable() to undo is a bug (VM_BUG_ON): it panics and
 * changes nothing, so the next disable and enable still bring the lists back to their
 * computed high and batch (an unchecked one takes the depth to -1, after which every enable
 * leaves them at high 0).
 */
static void zone_pcp_enable_without_disable_panics(struct ktest *t)
{
	struct pglist_data *pgdat;
	struct zone *zone;
	bool panicked;

	KT_SKIP_UNLESS_DEBUG_VM(t, "no VM_BUG_ON");
	pgdat = pcp_node(16, 1);
	KT_ASSERT_TRUE(t, pgdat);
	zone = &pgdat->node_zones[ZONE_DMA32];
	panicked = host_panics(zone_pcp_enable_cb, zone);
	if (panicked)
		spin_unlock(&zone->pcp_batch_high_lock);	/* the panic came with it held */
	KT_EXPECT_TRUE(t, panicked);
	KT_EXPECT_TRUE(t, strstr(host_panic_msg, "pcp_disable_depth") != NULL);
	KT_EXPECT_EQ(t, zone->pcp_disable_depth, 0);
	zone_pcp_disable(zone);
	zone_pcp_enable(zone);
	KT_EXPECT_EQ(t, this_pcp(pgdat)->high, zone->pageset_high);
	KT_EXPECT_EQ(t, mm_verify(pgdat), 0);
	test_node_destroy(pgdat);
}

static unsigned long verify_catching_panic(struct pglist_data *pgdat, bool *panicked)
{
	jmp_buf jb;
	unsigned long problems = 0;

	*panicked = false;
	if (!setjmp(jb)) {
		host_panic_jmp = &jb;
		problems = mm_verify(pgdat);
	} else {
		*panicked = true;
	}
	host_panic_jmp = NULL;
	return problems;
}

/*
 * mm_verify() needs a quiet allocator; called while this CPU itself holds its pcp (as from
 * an interrupt that arrived inside a fast path), it must report that pcp as busy, in every
 * model that has a lock, and not spin on the lock (a "spinlock recursion" panic).
 */
static void mm_verify_reports_busy_pcp(struct ktest *t)
{
	for (unsigned int m = 0; m < ARRAY_SIZE(models); m++) {
		struct pglist_data *pgdat = pcp_node_model(16, 2, models[m]);
		struct zone *zone;
		unsigned long problems, flags;
		struct per_cpu_pages *pcp;
		bool panicked;

		KT_ASSERT_TRUE(t, pgdat);
		zone = &pgdat->node_zones[ZONE_DMA32];
		pcp = pcp_lock_this_cpu(zone, &flags);
		KT_ASSERT_TRUE(t, pcp);
		problems = verify_catching_panic(pgdat, &panicked);
		if (panicked)
			printk("[%s] mm_verify panicked: %s\n", pcp_lock_model_name(models[m]),
			       host_panic_msg);
		KT_EXPECT_TRUE(t, !panicked);
		if (models[m] != PCP_LOCK_IRQOFF)
			KT_EXPECT_TRUE(t, problems > 0 && host_console_contains("busy"));
		pcp_unlock_this_cpu(zone, pcp, flags);	/* a panic came before verify took it */
		host_irqs_off = 0;
		KT_EXPECT_EQ(t, mm_verify(pgdat), 0);
		test_node_destroy(pgdat);
	}
}

/* ---- zone_pcp_disable() against refills, every interleaving a seed away (mmtest --pct) ---- */

struct refill_interleave {
	struct zone *zone;
	unsigned int rounds;
	int seq;		/* odd while cpu0 is inside zone_pcp_disable() */
	int refilling;		/* cpu1 rounds left (atomic) */
	unsigned long overlapped;	/* cpu1 allocations that refilled while a disable ran */
	unsigned long left;		/* pages on a list right after zone_pcp_disable() */
};

/* Pages on cpu's pcp, read under its lock as a drainer takes it. */
static int pcp_count_locked(struct zone *zone, unsigned int cpu)
{
	struct per_cpu_pages *pcp = &zone->pcp[cpu];
	unsigned long flags = spin_lock_irqsave(&pcp->lock);
	int count = pcp->count;

	spin_unlock_irqrestore(&pcp->lock, flags);
	return count;
}

/* cpu0: disable, look at both lists under their locks, enable, until cpu1 is done. cpu1:
 * allocate a page from its empty list (a refill from count 0), give everything back, again. */
static void *refill_interleave_cpu(void *p)
{
	struct refill_interleave *ri = *(struct refill_interleave **)p;
	struct pglist_data *pgdat = ri->zone->node;

	if (arch_cpu_id() == 0) {
		while (smp_load_acquire(&ri->refilling)) {
			__atomic_fetch_add(&ri->seq, 1, __ATOMIC_ACQ_REL);
			zone_pcp_disable(ri->zone);
			__atomic_fetch_add(&ri->seq, 1, __ATOMIC_ACQ_REL);
			for (unsigned int c = 0; c < 2; c++)
				ri->left += (unsigned long)pcp_count_locked(ri->zone, c);
			zone_pcp_enable(ri->zone);
			arch_cpu_relax();
		}
		return NULL;
	}
	for (unsigned int r = 0; r < ri->rounds; r++) {
		const struct pcp_stats *st = pcp_stats_of(&ri->zone->pcp[1]);
		u64 refills = st->refill;	/* only this CPU writes its refill count */
		int seq = smp_load_acquire(&ri->seq);
		struct page *page = alloc_pages_node(pgdat, GFP_KERNEL, 0);

		if (st->refill != refills && ((seq & 1) ||
					      smp_load_acquire(&ri->seq) != seq))
			ri->overlapped++;
		drain_cpu_pages(pgdat->machine, arch_cpu_id());
		if (page)
			__free_pages(page, 0);
		drain_cpu_pages(pgdat->machine, arch_cpu_id());
		__atomic_sub_fetch(&ri->refilling, 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

/*
 * The Linux 66eca1021a42 race without help: cpu1 refills its empty list over and over while
 * cpu0 calls zone_pcp_disable() and then finds every list empty under its lock. No hook and
 * no timing: free-running it races now and then (zone_pcp_disable_waits_for_refill_in_flight
 * forces the race instead); under `mmtest --pct` each seed is one interleaving, and the
 * seeds that put cpu0's drain inside cpu1's refill find the drain-before-the-lock bug.
 * Race window: cpu1 allocations that refilled while a zone_pcp_disable() ran.
 */
static void zone_pcp_disable_vs_refill_interleavings(struct ktest *t)
{
	static const enum pcp_lock_model remote_models[] = { PCP_LOCK_IRQSAVE, PCP_LOCK_TRYLOCK };
	unsigned long overlapped = 0;

	for (unsigned int m = 0; m < ARRAY_SIZE(remote_models); m++) {
		struct pglist_data *pgdat = pcp_node_model(256, 2, remote_models[m]);
		struct refill_interleave ri = { .rounds = host_pct_on() ? 6 : 400 };
		struct refill_interleave *args[2] = { &ri, &ri };
		unsigned long free;

		KT_ASSERT_TRUE(t, pgdat);
		ri.zone = &pgdat->node_zones[ZONE_DMA32];
		ri.refilling = (int)ri.rounds;
		free = node_free_pages(pgdat);
		run_on_cpus(2, refill_interleave_cpu, args, sizeof(args[0]));
		printk("refill interleavings [%s]: %lu refills while a zone_pcp_disable() ran, %lu "
		       "pages on the lists right after one\n", pcp_lock_model_name(remote_models[m]),
		       ri.overlapped, ri.left);
		KT_EXPECT_EQ(t, ri.left, 0);
		overlapped += ri.overlapped;
		drain_all_pages_machine(pgdat->machine);
		KT_EXPECT_EQ(t, node_free_pages(pgdat), free);
		KT_EXPECT_EQ(t, mm_verify(pgdat), 0);
		test_node_destroy(pgdat);
	}
	if (!overlapped)
		KT_SKIP(t, "no race: no refill ran while a zone_pcp_disable() did");
}

static const struct ktest_case pcp_cases[] = {
	KTEST_CASE(pcp_order_to_pindex_roundtrip),
	KTEST_CASE(pcp_batch_high_sizing),
	KTEST_CASE(pcp_boot_pageset_frees_to_buddy),
	KTEST_CASE(pcp_refill_size_per_order_and_lifo),
	KTEST_CASE(pcp_spill_grows_then_allocation_halves),
	KTEST_CASE(pcp_free_high_drains_whole_list),
	KTEST_CASE(pcp_alloc_pages_bulk_fills_array),
	KTEST_CASE(pcp_lock_debug_checks),
	KTEST_CASE(drain_pages_zone_one_hold_per_chunk),
	KTEST_CASE(pcp_high_split_among_machine_cpus_at_init),
	KTEST_CASE_CONCURRENT(zone_pcp_disable_vs_refill_interleavings),
	KTEST_CASE_CONCURRENT(zone_pcp_disable_waits_for_running_drain),
	KTEST_CASE_CONCURRENT(zone_pcp_update_waiting_behind_disable),
	KTEST_CASE_CONCURRENT(alloc_pages_slowpath_irqs_off_does_not_drain),
	KTEST_CASE_CONCURRENT(alloc_pages_slowpath_waits_for_running_drain),
	KTEST_CASE(pcp_lock_model_fixed_per_instance),
	KTEST_CASE(zone_pcp_enable_without_disable_panics),
	KTEST_CASE(mm_verify_reports_busy_pcp),
};
KTEST_SUITE(host_pcp, pcp_cases);
