/*
 * KTAP suite lockdep_mm: the page allocator's locking under the validator, in patterns the
 * ordinary suites rarely reach: bug (a) of dffc0ff, a GFP_ATOMIC allocation in an interrupt
 * on an exhausted node that drained (a plain spin_lock of this CPU's pcp lock in an
 * interrupt, held with interrupts on by the CPU's own fast paths in the trylock model).
 * The host twin: tests/host/test_lockdep.c.
 */
#include "tests/ktest/ktest.h"
#include "kernel/lockdep.h"
#include "kernel/list.h"
#include "kernel/smp.h"
#include "mm/mm_test.h"
#include "mm/memblock.h"
#include "kernel/bootinfo.h"

#define PRESSURE_BLOCKS 4	/* order-10 blocks: a 16 MiB private instance */
#define PCP_CLASS "&zone->pcp[cpu].lock"	/* mm/pcp.c's spin_lock_init() expression */
static struct memblock pressure_mb;
static struct pglist_data pressure_node;
static struct page *pressure_backing[PRESSURE_BLOCKS];

/* An allocator instance over a few MAX_ORDER blocks of the kernel's memory, in the trylock
 * model (its pcp locks are of the kernel's pcp class: one spin_lock_init site). NULL if
 * memory is short. */
static struct pglist_data *pressure_node_create(void)
{
	struct mem_region map[PRESSURE_BLOCKS];

	memblock_init(&pressure_mb, ~0ull);
	for (int i = 0; i < PRESSURE_BLOCKS; i++) {
		pressure_backing[i] = alloc_pages(GFP_KERNEL | __GFP_NOWARN, MAX_ORDER);
		if (!pressure_backing[i])
			return NULL;
		map[i] = (struct mem_region){ page_to_phys(pressure_backing[i]),
					      MAX_ORDER_NR_PAGES << PAGE_SHIFT, MEM_USABLE };
	}
	memblock_add_mmap(&pressure_mb, map, PRESSURE_BLOCKS);
	if (pgdat_init(&pressure_node, &pressure_mb, "pressure", nr_cpu_ids, PCP_LOCK_TRYLOCK))
		return NULL;
	zone_pcp_update(&pressure_node, nr_cpus_online());
	return &pressure_node;
}

static void pressure_node_destroy(bool created)
{
	if (created)
		pgdat_destroy(&pressure_node);
	for (int i = 0; i < PRESSURE_BLOCKS; i++) {
		if (pressure_backing[i])
			__free_pages(pressure_backing[i], MAX_ORDER);
		pressure_backing[i] = NULL;
	}
}

/* Each case: the validator on, a second CPU, a pressure node (what init set up, exit gives
 * back: it runs after a skip in init too). */
static bool pressure_created;

static int lockdep_mm_init(struct ktest *t)
{
	if (!lockdep_enabled())
		ktest_skip(t, "lockdep is off (release build, lockdep=0, or an earlier report)");
	if (nr_cpus_online() < 2)
		ktest_skip(t, "needs a second online CPU to interrupt");
	pressure_created = pressure_node_create() != NULL;
	if (!pressure_created)
		ktest_skip(t, "not enough free memory for a 16 MiB instance");
	return 0;
}

static void lockdep_mm_exit(struct ktest *t)
{
	(void)t;
	pressure_node_destroy(pressure_created);
	pressure_created = false;
}

static unsigned int other_cpu(void)
{
	for_each_online_cpu(cpu)
		if (cpu != arch_cpu_id())
			return cpu;
	return arch_cpu_id();	/* not reached: init skips with one CPU */
}

/* From another CPU's call IPI (interrupt context): one GFP_ATOMIC page. */
struct irq_alloc {
	struct page *page;
	unsigned int in_irq;
	u64 drains, fails;	/* the node's drain rounds and failed allocations during it */
};

static void atomic_alloc_in_irq(void *arg)
{
	struct irq_alloc *r = arg;
	u64 drains = READ_ONCE(pressure_node.drain_retries);
	u64 fails = READ_ONCE(pressure_node.alloc_fail);

	r->in_irq = arch_in_irq();
	r->page = alloc_pages_node(&pressure_node, GFP_ATOMIC | __GFP_NOWARN, 0);
	r->drains = READ_ONCE(pressure_node.drain_retries) - drains;
	r->fails = READ_ONCE(pressure_node.alloc_fail) - fails;
}

/*
 * This CPU uses its list with interrupts on (trylock: HARDIRQ-ON-W on the pcp class) and
 * takes every page GFP_ATOMIC may have; then an idle CPU's interrupt allocates GFP_ATOMIC,
 * fails the watermarks and reaches the slow path, which must give up there without a
 * drain (one would spin on the pcp lock in an interrupt). Nobody holds that lock, so a
 * drain would not hang: the validator is what would see it. Expects no report, a NULL
 * page, one failed allocation and no drain round.
 */
static void lockdep_mm_atomic_alloc_in_irq_under_pressure(struct ktest *t)
{
	struct irq_alloc r = { NULL, 0, 0, 0 };
	struct list_head pages = LIST_HEAD_INIT(pages);
	struct lockdep_expect e;
	struct page *page, *next;
	unsigned long held = 0;

	lockdep_expect_begin(&e);
	while ((page = alloc_pages_node(&pressure_node, GFP_ATOMIC | __GFP_NOWARN, 0))) {
		list_add(&page->lru, &pages);
		held++;
	}
	lockdep_expect_cpu(&e, other_cpu());
	KT_EXPECT_EQ(t, smp_call_function_single(other_cpu(), atomic_alloc_in_irq, &r, true), 0);
	KT_EXPECT_STREQ(t, lockdep_rule_name(lockdep_expect_end(&e)), "none");
	if (r.page)
		list_add(&r.page->lru, &pages);
	list_for_each_entry_safe(page, next, &pages, lru)
		__free_pages(page, 0);
	ktest_printf(t, "held %lu pages; the interrupt's GFP_ATOMIC allocation %s after %llu "
		     "drain rounds", held, r.page ? "succeeded" : "failed",
		     (unsigned long long)r.drains);
	KT_EXPECT_GT(t, r.in_irq, 0u);
	KT_EXPECT_GT(t, held, 0ul);
	KT_EXPECT_TRUE(t, r.page == NULL);
	KT_EXPECT_EQ(t, r.fails, 1ull);		/* it reached the slow path and failed there */
	KT_EXPECT_EQ(t, r.drains, 0ull);
}

/* From another CPU's call IPI: what a drain there would do, a plain spin_lock of its own
 * pcp lock (nobody holds it: the node is this suite's alone). */
static void pcp_spin_lock_in_irq(void *arg)
{
	struct per_cpu_pages *pcp = &((struct zone *)arg)->pcp[arch_cpu_id()];

	spin_lock(&pcp->lock);
	spin_unlock(&pcp->lock);
}

/*
 * Bug (a)'s pattern, planted without the hang: this CPU allocates and frees a page with
 * interrupts on (trylock: the pcp class is HARDIRQ-ON-W), then another CPU's interrupt
 * handler takes its pcp lock with spin_lock. Expects the report that the dffc0ff drain gave:
 * "inconsistent {HARDIRQ-ON-W} -> {IN-HARDIRQ-W} usage" of the pcp class, in an expect scope
 * that forgets it afterwards.
 */
static void lockdep_mm_pcp_spin_lock_in_irq_reported(struct ktest *t)
{
	struct lockdep_expect e;
	struct page *page;

	lockdep_expect_begin(&e);
	page = alloc_pages_node(&pressure_node, GFP_KERNEL, 0);
	if (page) {
		__free_pages(page, 0);
		lockdep_expect_cpu(&e, other_cpu());
		KT_EXPECT_EQ(t, smp_call_function_single(other_cpu(), pcp_spin_lock_in_irq,
							 page_zone(page), true), 0);
	}
	lockdep_expect_end(&e);
	KT_ASSERT_TRUE(t, page != NULL);
	KT_EXPECT_STREQ(t, lockdep_rule_name(e.rule), "inconsistent irq usage");
	KT_EXPECT_STREQ(t, e.headline, "inconsistent {HARDIRQ-ON-W} -> {IN-HARDIRQ-W} usage of '"
			PCP_CLASS "'");
	KT_EXPECT_STREQ(t, e.first, PCP_CLASS);
}

static const struct ktest_case lockdep_mm_cases[] = {
	KTEST_CASE_NOFAIL(lockdep_mm_atomic_alloc_in_irq_under_pressure,
			  "exhausts its node: an injected failure would leave pages behind"),
	KTEST_CASE_NOFAIL(lockdep_mm_pcp_spin_lock_in_irq_reported, "needs its one page"),
};
KTEST_SUITE(lockdep_mm, lockdep_mm_cases, .init = lockdep_mm_init, .exit = lockdep_mm_exit);
