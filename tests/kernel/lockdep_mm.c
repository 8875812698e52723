/*
 * KTAP suite lockdep_mm: the page allocator's locking under the validator, in patterns the
 * ordinary suites rarely reach. An interrupt-context GFP_ATOMIC allocation under memory
 * pressure must not take a per-CPU list lock with a plain spin_lock (in the trylock model
 * that lock is held with interrupts on by the CPU's own fast paths).
 */
#include "tests/ktest/ktest.h"
#include "kernel/lockdep.h"
#include "kernel/list.h"
#include "kernel/smp.h"
#include "mm/mm_test.h"
#include "mm/memblock.h"
#include "kernel/bootinfo.h"

#define PRESSURE_BLOCKS 4	/* order-10 blocks: a 16 MiB private instance */
static struct memblock pressure_mb;
static struct pglist_data pressure_node;
static struct page *pressure_backing[PRESSURE_BLOCKS];

/* An allocator instance over a few MAX_ORDER blocks of the kernel's memory (its pcp locks
 * are of the kernel's pcp class: one spin_lock_init site). NULL if memory is short. */
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
	if (pgdat_init(&pressure_node, &pressure_mb, "pressure", MM_MAX_CPUS))
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

/* From another CPU's call IPI (interrupt context): one GFP_ATOMIC page. */
struct irq_alloc {
	struct pglist_data *pgdat;
	struct page *page;
	unsigned int in_irq;
	u64 drain_retries;	/* the node's slow-path drain-and-retry rounds during it */
};

static void atomic_alloc_in_irq(void *arg)
{
	struct irq_alloc *r = arg;
	u64 before = READ_ONCE(r->pgdat->drain_retries);

	r->in_irq = arch_in_irq();
	r->page = alloc_pages_node(r->pgdat, GFP_ATOMIC | __GFP_NOWARN, 0);
	r->drain_retries = READ_ONCE(r->pgdat->drain_retries) - before;
}

static unsigned int other_cpu(struct ktest *t)
{
	for_each_online_cpu(cpu)
		if (cpu != arch_cpu_id())
			return cpu;
	ktest_skip(t, "needs a second online CPU to interrupt");
}

/*
 * Trylock model: this CPU uses its list with interrupts on (HARDIRQ-ON-W on the pcp class),
 * takes every page GFP_ATOMIC may have, then interrupts another, idle CPU whose GFP_ATOMIC
 * allocation fails the watermarks and reaches the slow path. Nothing is held there, so
 * nothing deadlocks; the validator must still see no plain spin_lock of a pcp lock in the
 * interrupt (a drain there deadlocks when the interrupted task holds that lock). Expects
 * no report.
 */
static void lockdep_mm_atomic_alloc_in_irq_under_pressure(struct ktest *t)
{
	enum pcp_lock_model old_model = pcp_lock_model;
	struct irq_alloc r = { &pressure_node, NULL, 0, 0 };
	struct lockdep_expect e;
	struct page *page, *next;
	unsigned long held = 0;
	struct list_head pages = LIST_HEAD_INIT(pages);
	bool created;

	if (!lockdep_enabled())
		ktest_skip(t, "lockdep is off");
	created = pressure_node_create() != NULL;
	if (!created) {
		pressure_node_destroy(false);
		ktest_skip(t, "not enough free memory for a 16 MiB instance");
	}
	pcp_switch_lock_model("trylock");
	lockdep_expect_begin(&e);
	while ((page = alloc_pages_node(&pressure_node, GFP_ATOMIC | __GFP_NOWARN, 0))) {
		list_add(&page->lru, &pages);
		held++;
	}
	smp_call_function_single(other_cpu(t), atomic_alloc_in_irq, &r, true);
	KT_EXPECT_STREQ(t, lockdep_rule_name(lockdep_expect_end(&e)), "none");
	if (r.page)
		list_add(&r.page->lru, &pages);
	list_for_each_entry_safe(page, next, &pages, lru)
		__free_pages(page, 0);
	ktest_printf(t, "held %lu pages; the interrupt's allocation %s after %llu drain-and-retry "
		     "rounds", held, r.page ? "succeeded" : "failed",
		     (unsigned long long)r.drain_retries);
	pressure_node_destroy(true);
	pcp_switch_lock_model(pcp_lock_model_name(old_model));
	KT_EXPECT_GT(t, r.in_irq, 0u);
	KT_EXPECT_GT(t, held, 0ul);
	KT_EXPECT_GT(t, r.drain_retries, 0ull);	/* it did reach the slow path's drain */
}

static const struct ktest_case lockdep_mm_cases[] = {
	KTEST_CASE(lockdep_mm_atomic_alloc_in_irq_under_pressure),
};
KTEST_SUITE(lockdep_mm, lockdep_mm_cases);
