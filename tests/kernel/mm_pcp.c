/*
 * KTAP suite mm_pcp: the per-CPU lists on every CPU at once (-smp 40) under each locking
 * model: stress with timer-interrupt allocations, IRQ re-entry, remote drains, batch/high
 * rules, exhaustion with drain-and-retry, zone_pcp_disable() against refills in flight.
 * Each race test counts its race window and skips, saying so, if it was never entered.
 * Host versions: tests/host/test_pcp.c.
 */
#include "tests/ktest/ktest.h"
#include "tests/lab/lab_platform.h"
#include "tests/kernel/mm_exhaust.h"
#include "tests/kernel/pcp_check.h"
#include "tests/bench/bench.h"
#include "kernel/smp.h"
#include "kernel/timer.h"
#include "kernel/string.h"
#include "mm/mm_test.h"
#include "mm/memblock.h"
#include "kernel/bootinfo.h"

static const enum pcp_lock_model models[] = { PCP_LOCK_IRQOFF, PCP_LOCK_IRQSAVE,
					      PCP_LOCK_TRYLOCK };

/* Switch models with every list empty and nobody inside an operation (between runs). */
static void set_model(enum pcp_lock_model m)
{
	pcp_switch_lock_model(pcp_lock_model_name(m));
}

/* Empty every pcp for good (zone_pcp_disable: high 0, then a forced drain of every CPU), check
 * they are empty, and re-enable. Returns the pages still listed (must be 0). */
static unsigned long forced_drain(void)
{
	struct mm_machine *m = mm_machine();
	unsigned long left = 0;

	for (unsigned int nid = 0; nid < m->nr_nodes; nid++)
		for (int z = 0; z < MAX_NR_ZONES; z++)
			zone_pcp_disable(&m->node[nid]->node_zones[z]);
	for (unsigned int nid = 0; nid < m->nr_nodes; nid++)
		for (int z = 0; z < MAX_NR_ZONES; z++)
			left += zone_pcp_count(&m->node[nid]->node_zones[z]);
	for (unsigned int nid = 0; nid < m->nr_nodes; nid++)
		for (int z = 0; z < MAX_NR_ZONES; z++)
			zone_pcp_enable(&m->node[nid]->node_zones[z]);
	return left;
}

static void print_counters(struct ktest *t, const char *what)
{
	struct pcp_stats st;

	pcp_stats_sum_machine(mm_machine(), -1, &st);
	pcp_stats_report(t, what, &st);
}

static void reset_counters(void)
{
	pcp_stats_reset(mm_machine());
}

/* ---- test 1: stress, with allocations from the timer interrupt ---- */

struct churn {
	unsigned int ops;
	bool drainers;			/* odd CPUs drain instead of churning (test 3) */
	bool until_raced;		/* churn on (up to 10 x ops) until the test raced */
	int raced;			/* the test's race window was entered (atomic) */
	int churning;			/* CPUs still churning (atomic) */
	u64 overlapped;			/* sampled operations begun while another CPU was in one */
	u64 zone_contended0;		/* zone->lock contended acquisitions at the start */
	struct churn_cpu *cpu;		/* [nr_cpu_ids]: churn_start() */
};
static struct churn *tick_churn;

/* One CPU's part of a churn run, on its own line (written by that CPU, read by all). */
struct churn_cpu {
	int busy;			/* inside an allocation or free now (test 1's window) */
	u64 irq_allocs;			/* alloc+free pairs from its timer interrupt */
	u64 irq_in_hold;		/* ticks that came while it held its own pcp */
	u64 pcp_contended0;		/* contended acquisitions of its pcps at the start */
} __cacheline_aligned;

/* Is another online CPU inside an allocation or free right now? */
static bool another_cpu_busy(struct churn *c, unsigned int me)
{
	for_each_online_cpu(cpu)
		if (cpu != me && READ_ONCE(c->cpu[cpu].busy))
			return true;
	return false;
}

static bool holds_own_pcp(unsigned int cpu)
{
	for (int z = 0; z < MAX_NR_ZONES; z++) {
		struct zone *zone = &mm_node()->node_zones[z];

		if (zone->pcp && spin_is_held_by_me(&zone->pcp[cpu].lock))
			return true;
	}
	return false;
}

/* Tick hook: an order-0 GFP_ATOMIC alloc + free in interrupt context on every CPU, counting
 * the ticks that interrupted their CPU inside its own pcp lock. */
static void tick_alloc_hook(unsigned int cpu)
{
	struct churn *c = READ_ONCE(tick_churn);
	struct page *page;

	if (!c)
		return;
	c->cpu[cpu].irq_in_hold += holds_own_pcp(cpu);
	if (!(page = alloc_pages(GFP_ATOMIC | __GFP_NOWARN, 0)))
		return;
	__free_pages(page, 0);
	c->cpu[cpu].irq_allocs++;
}

static u64 zone_lock_contended(void)
{
	u64 n = 0;

	for (int z = 0; z < MAX_NR_ZONES; z++)
		n += READ_ONCE(mm_node()->node_zones[z].lock.stats.contended);
	return n;
}

static u64 pcp_locks_contended(unsigned int cpu)
{
	u64 n = 0;

	for (int z = 0; z < MAX_NR_ZONES; z++)
		if (mm_node()->node_zones[z].pcp)
			n += READ_ONCE(mm_node()->node_zones[z].pcp[cpu].lock.stats.contended);
	return n;
}

/*
 * Times cpu's lists met a remote drain: its operations found the list held by a drainer
 * (trylock failed), a drainer had to wait for cpu to let go of its list (a contended
 * acquisition of cpu's pcp lock), or (irqoff) cpu ran a drain by IPI.
 */
static u64 met_remote_drain(struct churn *c, unsigned int cpu)
{
	u64 n = pcp_locks_contended(cpu) - c->cpu[cpu].pcp_contended0;

	for (int z = 0; z < MAX_NR_ZONES; z++) {
		const struct pcp_stats *st = &mm_node()->node_zones[z].pcp[cpu].stats;

		if (mm_node()->node_zones[z].pcp)
			n += READ_ONCE(st->trylock_fail_alloc) + READ_ONCE(st->trylock_fail_free) +
			     READ_ONCE(st->ipi_drain);
	}
	return n;
}

/* Has the test been in its race window yet (checked every 64 operations)? Test 3: a remote
 * drain met this CPU's list. Test 1: an operation began while another CPU was inside one
 * (with more than one CPU), and (trylock) a tick came inside this CPU's pcp hold. */
static bool churn_raced(struct churn *c, unsigned int cpu, unsigned int i)
{
	if (READ_ONCE(c->raced))
		return true;
	if (i % 64)
		return false;
	if (c->drainers ? met_remote_drain(c, cpu) > 0 :
	    (READ_ONCE(c->overlapped) || nr_cpus_online() < 2) &&
	    (READ_ONCE(pcp_lock_model) != PCP_LOCK_TRYLOCK || READ_ONCE(c->cpu[cpu].irq_in_hold)))
		WRITE_ONCE(c->raced, 1);
	return READ_ONCE(c->raced);
}

/* A fresh churn run of ops operations per CPU over the per-CPU block cpu[nr_cpu_ids] (the
 * test's, from cpu_array_alloc()), counting its race windows from now. */
static void churn_start(struct churn *c, struct churn_cpu *cpu, unsigned int ops)
{
	memset(c, 0, sizeof(*c));
	memset(cpu, 0, nr_cpu_ids * sizeof(*cpu));
	c->cpu = cpu;
	c->ops = ops;
	c->until_raced = true;
	c->zone_contended0 = zone_lock_contended();
	for_each_online_cpu(i)
		cpu[i].pcp_contended0 = pcp_locks_contended(i);
}

static u64 xorshift(u64 *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void churn_cpu(struct churn *c)
{
	struct page *held[32];
	u8 orders[32];
	unsigned int n = 0;
	u64 seed = 0x9e3779b97f4a7c15ull * (arch_cpu_id() + 1);

	for (unsigned int i = 0; i < c->ops || (c->until_raced && i < 10 * c->ops &&
						!churn_raced(c, arch_cpu_id(), i)); i++) {
		u64 r = xorshift(&seed);

		WRITE_ONCE(c->cpu[arch_cpu_id()].busy, 1);
		if (i % 64 == 0 && another_cpu_busy(c, arch_cpu_id()))	/* a sample */
			__atomic_fetch_add(&c->overlapped, 1, __ATOMIC_RELAXED);
		if (n < 32 && (n == 0 || (r & 1))) {
			unsigned int o = (unsigned int)((r >> 8) % 4);

			held[n] = alloc_pages(((r & 2) ? GFP_USER : GFP_KERNEL) | __GFP_NOWARN, o);
			if (held[n])
				orders[n++] = (u8)o;
		} else {
			unsigned int k = (unsigned int)((r >> 4) % n);

			__free_pages(held[k], orders[k]);
			held[k] = held[--n];
			orders[k] = orders[n];
		}
		WRITE_ONCE(c->cpu[arch_cpu_id()].busy, 0);
	}
	while (n--)
		__free_pages(held[n], orders[n]);
}

static void churn_or_drain_fn(void *arg)
{
	struct churn *c = arg;

	if (c->drainers && (arch_cpu_id() & 1)) {
		while (smp_load_acquire(&c->churning))
			drain_all_pages(NULL);	/* every zone of every node */
		return;
	}
	churn_cpu(c);
	__atomic_sub_fetch(&c->churning, 1, __ATOMIC_RELEASE);
}

/* Churners are the online CPUs with an even index (all of them without drainers); count
 * them as they are, since an offline CPU leaves a gap in the numbering. */
static void run_churn(struct ktest *t, struct churn *c, bool drainers)
{
	int churners = 0;

	c->drainers = drainers && nr_cpus_online() > 1;
	for_each_online_cpu(cpu)
		churners += !c->drainers || !(cpu & 1);
	c->churning = churners;
	smp_run_on_all(churn_or_drain_fn, c);
}

/*
 * Test 1 (each model): every CPU does 1500 random order-0..3 operations while the timer
 * tick allocates and frees in interrupt context; then a forced drain empties every pcp,
 * mm_verify passes and the free count is exactly as before. Race windows: operations begun
 * while another CPU was inside one (zone->lock contention is printed too); with trylock,
 * ticks that came while their CPU held its own pcp; the CPUs churn on (up to 10 times
 * longer) until both happened. With irqsave a tick inside a pcp hold must never happen (the
 * pcp is held with interrupts off).
 */
static void mm_pcp_stress_all_cpus(struct ktest *t)
{
	struct churn_cpu *per_cpu = lab_cpu_array_alloc(sizeof(*per_cpu));
	static struct churn c;
	unsigned long before;
	const char *no_race = NULL;

	KT_ASSERT_NOT_NULL(t, per_cpu);
	for (unsigned int m = 0; m < ARRAY_SIZE(models); m++) {
		u64 irq = 0, in_hold = 0, contended;

		set_model(models[m]);
		reset_counters();
		before = nr_free_pages();
		churn_start(&c, per_cpu, 1500);
		WRITE_ONCE(tick_churn, &c);
		KT_ASSERT_EQ(t, timer_add_tick_hook(tick_alloc_hook), 0);
		run_churn(t, &c, false);
		WRITE_ONCE(tick_churn, NULL);
		timer_remove_tick_hook(tick_alloc_hook);
		contended = zone_lock_contended() - c.zone_contended0;
		for (unsigned int cpu = 0; cpu < nr_cpu_ids; cpu++) {
			irq += per_cpu[cpu].irq_allocs;
			in_hold += per_cpu[cpu].irq_in_hold;
		}
		print_counters(t, "stress");
		ktest_printf(t, "  %llu alloc+free pairs from the timer interrupt, %llu ticks inside "
			     "their CPU's pcp hold; %llu sampled operations begun while another CPU "
			     "was in one, zone->lock contended %llu times", (unsigned long long)irq,
			     (unsigned long long)in_hold, (unsigned long long)c.overlapped,
			     (unsigned long long)contended);
		if (models[m] == PCP_LOCK_IRQSAVE)
			KT_EXPECT_EQ(t, in_hold, 0ull);
		if ((nr_cpus_online() > 1 && !c.overlapped) ||
		    (models[m] == PCP_LOCK_TRYLOCK && !in_hold))
			no_race = pcp_lock_model_name(models[m]);
		if (models[m] == PCP_LOCK_TRYLOCK) {
			show_pcpinfo(mm_node());	/* what the CPUs hold before the drain */
			lockstat_print_top(6);
		}
		KT_EXPECT_EQ(t, forced_drain(), 0ul);
		KT_EXPECT_EQ(t, nr_free_pages(), before);
		KT_EXPECT_EQ(t, mm_verify_machine(mm_machine()), 0ul);
	}
	set_model(PCP_LOCK_TRYLOCK);
	cpu_array_free(per_cpu, sizeof(*per_cpu));
	if (no_race)
		KT_SKIP(t, "no race [%s]: no two CPUs in the allocator at once, or (trylock) no tick "
			"inside a pcp hold", no_race);
}

/* This CPU's list of the boot node's DMA32 zone. */
static struct per_cpu_pages *dma32_pcp(void)
{
	return &mm_node()->node_zones[ZONE_DMA32].pcp[arch_cpu_id()];
}

/* ---- test 3: remote drains under fire ---- */

/*
 * Test 3 (each model): even CPUs churn while odd CPUs drain every CPU's lists in a loop;
 * then zone_pcp_disable() leaves every pcp empty and nothing is lost. Race window: a churner
 * and a drainer met on the churner's list (met_remote_drain); the churners go on (up to 10
 * times longer) until that happened.
 */
static void mm_pcp_remote_drain_under_fire(struct ktest *t)
{
	struct churn_cpu *per_cpu;
	static struct churn c;
	const char *no_race = NULL;

	if (nr_cpus_online() < 2)
		KT_SKIP(t, "needs 2 CPUs: one churns, one drains it");
	per_cpu = lab_cpu_array_alloc(sizeof(*per_cpu));
	KT_ASSERT_NOT_NULL(t, per_cpu);
	for (unsigned int m = 0; m < ARRAY_SIZE(models); m++) {
		unsigned long before;
		u64 met = 0;

		set_model(models[m]);
		reset_counters();
		before = nr_free_pages();
		churn_start(&c, per_cpu, 1500);
		run_churn(t, &c, true);
		for_each_online_cpu(cpu)
			met += (cpu & 1) ? 0 : met_remote_drain(&c, cpu);
		print_counters(t, "remote drain");
		ktest_printf(t, "  %llu churner operations met a drain of their own list",
			     (unsigned long long)met);
		if (!met)
			no_race = pcp_lock_model_name(models[m]);
		KT_EXPECT_EQ(t, forced_drain(), 0ul);
		KT_EXPECT_EQ(t, nr_free_pages(), before);
		KT_EXPECT_EQ(t, mm_verify_machine(mm_machine()), 0ul);
	}
	set_model(PCP_LOCK_TRYLOCK);
	cpu_array_free(per_cpu, sizeof(*per_cpu));
	if (no_race)
		KT_SKIP(t, "no race [%s]: no churner operation met a remote drain", no_race);
}

/* ---- test 4: batch and high rules, on this CPU ---- */

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
 * Test 4: sizes follow the formulas (batch 63 for a zone of 1 GiB or more, high >= 4
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

	set_model(PCP_LOCK_TRYLOCK);
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
	ktest_printf(t, "DMA32: batch %d high %d; spills %d, %d, %d", batch, high, spills[0],
		     spills[1], spills[2]);
	KT_EXPECT_EQ(t, mm_verify_machine(mm_machine()), 0ul);
}

/* ---- private instances for tests 6 and 7 (test 5, exhaustion on every CPU, is
 * mm_private.mm_private_pcp_exhaustion_all_cpus: one source with the host) ---- */

#define EXHAUST_BLOCKS 16
static struct memblock exhaust_mb;
static struct pglist_data exhaust_node;
static struct page *exhaust_backing[EXHAUST_BLOCKS];

static void exhaust_free_backing(void)
{
	for (int i = 0; i < EXHAUST_BLOCKS; i++)
		if (exhaust_backing[i]) {
			__free_pages(exhaust_backing[i], MAX_ORDER);
			exhaust_backing[i] = NULL;
		}
}

/* An allocator instance over 16 order-10 blocks of the kernel's memory, with nr_cpus pcps per
 * zone (nr_cpu_ids: one for every CPU). */
static struct pglist_data *exhaust_node_create(unsigned int nr_cpus)
{
	struct mem_region map[EXHAUST_BLOCKS];

	memblock_init(&exhaust_mb, ~0ull);
	for (int i = 0; i < EXHAUST_BLOCKS; i++) {
		if (!(exhaust_backing[i] = alloc_pages(GFP_KERNEL | __GFP_NOWARN, MAX_ORDER))) {
			exhaust_free_backing();
			return NULL;	/* not enough free memory for the instance */
		}
		map[i] = (struct mem_region){ page_to_phys(exhaust_backing[i]),
					      MAX_ORDER_NR_PAGES << PAGE_SHIFT, MEM_USABLE };
	}
	memblock_add_mmap(&exhaust_mb, map, EXHAUST_BLOCKS);
	if (pgdat_init(&exhaust_node, &exhaust_mb, "exhaust", nr_cpus)) {
		exhaust_free_backing();
		return NULL;
	}
	zone_pcp_update(&exhaust_node, nr_cpus_online());
	return &exhaust_node;
}

static void exhaust_node_destroy(void)
{
	pgdat_destroy(&exhaust_node);
	exhaust_free_backing();
}

/* ---- test 6: an allocation in interrupt context on an exhausted node ---- */

struct irq_exhaust {
	struct pglist_data *pgdat;
	struct zone *zone;		/* whose pcp CPU 0 holds */
	int sent, done;			/* the IPI is on its way; the handler returned (atomic) */
	bool ran_while_held;
	struct page *got;		/* what the handler's GFP_ATOMIC allocation returned */
	u64 drains;			/* drain-and-retry rounds during the handler */
};

static void irq_exhaust_handler(void *arg)
{
	struct irq_exhaust *x = arg;
	u64 before = READ_ONCE(x->pgdat->drain_retries);

	x->ran_while_held = spin_is_held_by_me(&x->zone->pcp[arch_cpu_id()].lock);
	x->got = alloc_pages_node(x->pgdat, GFP_ATOMIC | __GFP_NOWARN, 0);
	x->drains = READ_ONCE(x->pgdat->drain_retries) - before;
	smp_store_release(&x->done, 1);
}

/* Runs on CPU 1 (from a call IPI): interrupt CPU 0 with the handler. */
static void irq_exhaust_sender(void *arg)
{
	struct irq_exhaust *x = arg;

	smp_store_release(&x->sent, 1);
	smp_call_function_single(0, irq_exhaust_handler, x, false);
}

/*
 * The interleaving of the interrupt-context drain deadlock on real CPUs, for reuse (e.g. by
 * a lock validator): CPU 0 holds its pcp of x->zone as free_unref_page() does, and CPU 1
 * interrupts it with an IPI whose handler allocates GFP_ATOMIC from the exhausted node
 * x->pgdat. With trylock the handler runs during the hold, otherwise after it. dffc0ff
 * drains in the handler: with trylock a "spinlock recursion" panic in drain_pages_zone().
 * Returns false if CPU 0's pcp was busy.
 */
static bool irq_alloc_while_pcp_held(struct irq_exhaust *x)
{
	bool trylock = pcp_lock_model == PCP_LOCK_TRYLOCK;
	struct per_cpu_pages *pcp;
	struct pcp_hold hold;

	if (!(pcp = pcp_lock_this_cpu(x->zone, &hold)))
		return false;
	smp_call_function_single(1, irq_exhaust_sender, x, false);
	while (trylock ? !smp_load_acquire(&x->done) :
			 !smp_load_acquire(&x->sent))
		arch_cpu_relax();
	udelay(1000);	/* irqoff/irqsave: the IPI is pending meanwhile */
	pcp_unlock_this_cpu(pcp, &hold);
	while (!smp_load_acquire(&x->done))
		arch_cpu_relax();
	return true;
}

/*
 * Test 6 (each model): CPU 0 takes every page of a private node, then an interrupt on CPU 0
 * allocates GFP_ATOMIC from it while CPU 0 holds its own pcp. The allocation fails (or
 * succeeds) without draining: Linux drains only in direct reclaim, which an interrupt never
 * enters. Afterwards the free count is exactly restored and mm_verify passes.
 */
static void mm_pcp_irq_alloc_exhausted_no_drain(struct ktest *t)
{
	static struct exhaust e;
	static struct irq_exhaust x;
	struct pglist_data *pgdat;

	if (nr_cpus_online() < 2 || arch_cpu_id() != 0)
		KT_SKIP(t, "needs 2 CPUs, run from cpu0");
	if (!(pgdat = exhaust_node_create(nr_cpu_ids)))
		KT_SKIP(t, "needs %d free blocks of 4 MiB for its private instance", EXHAUST_BLOCKS);
	for (unsigned int m = 0; m < ARRAY_SIZE(models); m++) {
		unsigned long before;

		set_model(models[m]);
		memset(&e, 0, sizeof(e));
		e.pgdat = pgdat;
		before = node_free_pages(pgdat);
		exhaust_fn(&e);
		KT_EXPECT_EQ(t, node_free_pages(pgdat), 0ul);
		memset(&x, 0, sizeof(x));
		x.pgdat = pgdat;
		x.zone = page_zone(list_first_entry(&e.held[0], struct page, lru));
		KT_EXPECT_TRUE(t, irq_alloc_while_pcp_held(&x));
		KT_EXPECT_EQ(t, x.drains, 0ull);
		KT_EXPECT_EQ(t, x.ran_while_held, models[m] == PCP_LOCK_TRYLOCK);
		ktest_printf(t, "[%s] interrupt ran %s the hold, its allocation %s, %llu drains",
			     pcp_lock_model_name(models[m]), x.ran_while_held ? "during" : "after",
			     x.got ? "succeeded" : "failed", (unsigned long long)x.drains);
		if (x.got)
			__free_pages(x.got, 0);
		release_fn(&e);
		drain_all_pages_node(pgdat);
		KT_EXPECT_EQ(t, node_free_pages(pgdat), before);
		KT_EXPECT_EQ(t, mm_verify(pgdat), 0ul);
	}
	set_model(PCP_LOCK_TRYLOCK);
	exhaust_node_destroy();
}

/* ---- test 7: zone_pcp_disable/enable/update from several CPUs at once ---- */

#define TOGGLE_PCPS 4096	/* long high/batch write loops: wider windows */

struct toggle {
	struct zone *zone;		/* of a private node with TOGGLE_PCPS pcps per zone */
	struct pcp_toggle_calls calls;
	u64 stalls;			/* stall IPIs taken (atomic) */
	u64 live_while_disabled;	/* a pcp with high != 0 or batch != 1 seen while disabled */
	bool done;			/* the togglers have finished (atomic) */
};

/*
 * A stall IPI stops the updater wherever it is, as a host descheduling a vCPU would, until a
 * disable has finished or 1 ms has passed. Sent just before a disable, it often finds the
 * updater inside its high/batch writes, having read a depth of 0: the window.
 */
static void stall_ipi(void *arg)
{
	struct toggle *tg = arg;
	u64 seen = READ_ONCE(tg->calls.disables), until = arch_cycles() + us_to_cycles(1000);

	__atomic_add_fetch(&tg->stalls, 1, __ATOMIC_RELAXED);
	while (READ_ONCE(tg->calls.disables) == seen && arch_cycles() < until)
		arch_cpu_relax();
}

/* While disabled, check until the updater has finished a call begun meanwhile (or 2 ms). */
static void check_while_disabled(void *arg)
{
	struct toggle *tg = arg;
	u64 until = arch_cycles() + us_to_cycles(2000), updates = READ_ONCE(tg->calls.updates);

	do {
		if (!zone_pcps_disabled(tg->zone)) {
			__atomic_add_fetch(&tg->live_while_disabled, 1, __ATOMIC_RELAXED);
			return;
		}
	} while (READ_ONCE(tg->calls.updates) < updates + 2 && arch_cycles() < until);
}

/* A toggler's round: stall the updater, disable, check, enable, stay enabled a while. */
static void toggle_round(struct toggle *tg, u64 *seed)
{
	smp_call_function_single(1, stall_ipi, tg, false);
	pcp_toggle_round(&tg->calls, tg->zone, check_while_disabled, NULL, tg);
	udelay(xorshift(seed) % 500);
}

/* CPU 1 recomputes high and batch until CPU 0 has toggled 100 times. */
static void toggle_fn(void *arg)
{
	struct toggle *tg = arg;
	unsigned int cpu = arch_cpu_id();
	u64 seed = 0x9e3779b97f4a7c15ull * (cpu + 1);

	if (cpu == 1) {
		while (!smp_load_acquire(&tg->done))
			pcp_toggle_update(&tg->calls, tg->zone->node, nr_cpus_online(), NULL, NULL);
		return;
	}
	for (int r = 0; cpu == 0 && r < 100; r++)
		toggle_round(tg, &seed);
	if (cpu == 0)
		smp_store_release(&tg->done, true);
}

/*
 * Test 7: CPU 0 disables and re-enables the pcps of a private node's zone 100 times while
 * CPU 1 recomputes high and batch, as memory offlining and CPU hotplug would.
 * Whenever a CPU has the zone disabled, every pcp must be at high 0, batch 1; afterwards
 * the zone is enabled with its computed values. Fails if no call overlapped a conflicting
 * one.
 */
static void mm_pcp_disable_enable_update_concurrent(struct ktest *t)
{
	static struct toggle tg;
	struct pglist_data *pgdat;
	struct zone *zone;

	if (nr_cpus_online() < 2)
		KT_SKIP(t, "needs 2 CPUs");
	if (!(pgdat = exhaust_node_create(TOGGLE_PCPS)))
		KT_SKIP(t, "needs %d free blocks of 4 MiB for its private instance", EXHAUST_BLOCKS);
	memset(&tg, 0, sizeof(tg));
	for (int z = 0; z < MAX_NR_ZONES; z++)
		if (zone_populated(&pgdat->node_zones[z]))
			tg.zone = &pgdat->node_zones[z];
	zone = tg.zone;
	smp_run_on_all(toggle_fn, &tg);
	ktest_printf(t, "%llu calls overlapped a conflicting one (%llu stall IPIs, %llu updates); "
		     "%llu times a pcp was live while its zone was disabled",
		     (unsigned long long)tg.calls.overlaps, (unsigned long long)tg.stalls,
		     (unsigned long long)tg.calls.updates, (unsigned long long)tg.live_while_disabled);
	KT_EXPECT_GT(t, tg.calls.overlaps, 0ull);
	KT_EXPECT_EQ(t, tg.live_while_disabled, 0ull);
	KT_EXPECT_EQ(t, zone->pcp_disable_depth, 0);
	for (unsigned int cpu = 0; cpu < pgdat->nr_cpus; cpu++)
		if (zone->pcp[cpu].high != zone->pageset_high ||
		    zone->pcp[cpu].batch != zone->pageset_batch) {
			KT_FAIL(t, "cpu%u: high %d batch %d, zone says %d %d", cpu,
				zone->pcp[cpu].high, zone->pcp[cpu].batch, zone->pageset_high,
				zone->pageset_batch);
			break;
		}
	KT_EXPECT_EQ(t, mm_verify(pgdat), 0ul);
	exhaust_node_destroy();
}

/* ---- test 8: a model switch while another CPU drains ---- */

/*
 * Roles go to the first three online CPUs (holder, drainer, switcher), not to CPU ids 0-2:
 * a CPU that never came up (smp.test_no_sipi) leaves a gap in the numbering.
 */
struct switch_race {
	unsigned int role_cpu[3];	/* holder, drainer, switcher */
	int phase;		/* 1: holder holds its pcp; 2: drainer is draining; 3: switching */
	int drain_done;		/* the drainer's drain_all_pages returned (atomic) */
	bool window;		/* the switch began while that drain was held up by the holder */
	bool timed_out;		/* a role waited 10 s for the one before it: the case failed */
	int switcher_left;	/* pages on the switcher's DMA32 pcp after the switch */
};

static void fill_own_pcp(void)
{
	struct page *p[4];

	for (int i = 0; i < 4; i++)
		p[i] = alloc_pages(GFP_DMA32, 0);
	for (int i = 0; i < 4; i++)
		if (p[i])
			__free_pages(p[i], 0);
}

/* Wait (at most 10 s: every wait has a way out) until the race reaches phase. */
static void wait_phase(struct switch_race *r, int phase)
{
	u64 deadline = arch_cycles() + 10000 * cycles_khz;

	while (smp_load_acquire(&r->phase) < phase) {
		if (arch_cycles() > deadline) {
			WRITE_ONCE(r->timed_out, true);
			return;
		}
		arch_cpu_relax();
	}
}

/* The holder: hold its own (non-empty) pcp until the switch has begun, and 2 ms more. */
static void switch_race_holder(struct switch_race *r)
{
	struct per_cpu_pages *pcp;
	struct pcp_hold hold;

	fill_own_pcp();
	pcp = pcp_lock_this_cpu(&mm_node()->node_zones[ZONE_DMA32], &hold);
	smp_store_release(&r->phase, 1);
	wait_phase(r, 3);
	udelay(2000);
	if (pcp)
		pcp_unlock_this_cpu(pcp, &hold);
}

static void switch_race_fn(void *arg)
{
	struct switch_race *r = arg;

	if (arch_cpu_id() == r->role_cpu[0]) {
		switch_race_holder(r);
	} else if (arch_cpu_id() == r->role_cpu[1]) {
		wait_phase(r, 1);
		smp_store_release(&r->phase, 2);
		drain_all_pages(NULL);	/* every node's lists: held up by the holder */
		smp_store_release(&r->drain_done, 1);
	} else if (arch_cpu_id() == r->role_cpu[2]) {
		fill_own_pcp();
		wait_phase(r, 2);
		udelay(500);	/* the drainer takes pcp_drain_lock meanwhile */
		r->window = !smp_load_acquire(&r->drain_done);
		smp_store_release(&r->phase, 3);
		pcp_switch_lock_model(pcp_lock_model_name(pcp_lock_model));
		r->switcher_left = dma32_pcp()->count;
	}
}

/*
 * Test 8 (each model): the drainer (the second online CPU) runs drain_all_pages() and is held
 * up by the holder (the first), which holds its own pcp; meanwhile the switcher (the third)
 * switches lock models (to the same model). The switch promises every list empty when it
 * returns, so it must wait for the running drain and drain everything itself: the
 * switcher's own list, filled before, is empty after.
 */
static void mm_pcp_switch_lock_model_waits_for_drain(struct ktest *t)
{
	static struct switch_race r;

	if (nr_cpus_online() < 3)
		KT_SKIP(t, "needs 3 CPUs");
	for (unsigned int m = 0; m < ARRAY_SIZE(models); m++) {
		unsigned int roles = 0;

		set_model(models[m]);
		memset(&r, 0, sizeof(r));
		for_each_online_cpu(cpu)
			if (roles < 3)
				r.role_cpu[roles++] = cpu;
		smp_run_on_all(switch_race_fn, &r);
		KT_ASSERT_FALSE(t, r.timed_out);
		ktest_printf(t, "[%s] the switch %s a drain held up by cpu%u; cpu%u's list after it: "
			     "%d pages", pcp_lock_model_name(models[m]),
			     r.window ? "began during" : "missed", r.role_cpu[0], r.role_cpu[2],
			     r.switcher_left);
		KT_EXPECT_TRUE(t, r.window);
		KT_EXPECT_EQ(t, r.switcher_left, 0);
	}
	set_model(PCP_LOCK_TRYLOCK);
	KT_EXPECT_EQ(t, mm_verify_machine(mm_machine()), 0ul);
}

static bool saved_enabled;
static enum pcp_lock_model saved_model;

/* The suite tests the lists themselves: turn them on (pcp.enable=0 boots) for each case. */
static int mm_pcp_init(struct ktest *t)
{
	saved_enabled = pcp_enabled;
	saved_model = pcp_lock_model;
	pcp_enabled = true;
	return 0;
}

static void mm_pcp_exit(struct ktest *t)
{
	set_model(saved_model);
	pcp_enabled = saved_enabled;
}

static const struct ktest_case mm_pcp_cases[] = {
	KTEST_CASE(mm_pcp_stress_all_cpus),
	KTEST_CASE(mm_pcp_remote_drain_under_fire),
	KTEST_CASE_NOFAIL(mm_pcp_batch_high_rules, "counts pages on the list after each call"),
	KTEST_CASE_NOFAIL(mm_pcp_irq_alloc_exhausted_no_drain, "takes every page of its instance"),
	KTEST_CASE_NOFAIL(mm_pcp_disable_enable_update_concurrent,
			  "builds its instance from 16 blocks of 4 MiB"),
	KTEST_CASE_NOFAIL(mm_pcp_switch_lock_model_waits_for_drain,
			  "fills two CPUs' lists before the race"),
};
KTEST_SUITE(mm_pcp, mm_pcp_cases, .init = mm_pcp_init, .exit = mm_pcp_exit);
