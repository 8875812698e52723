/*
 * Concurrent host tests: pthreads act as CPUs (thread-local CPU id) hammering one allocator
 * instance. Run in the -fsanitize=thread build too. Each ends with a drain, mm_verify() and
 * an exact free-count check, and says whether the CPUs actually met (its race window).
 */
#include <stdlib.h>
#include "tests/host/harness.h"
#include "kernel/smp.h"

#define NR_TEST_CPUS 8
#define HELD_MAX 64

struct stress_arg {
	struct pglist_data *pgdat;
	unsigned int seed;
	unsigned long ops;
	unsigned long allocs, fails;
};

/* Random orders 0..3 (sometimes up to 6), random mix of alloc and free, at most HELD_MAX
 * blocks held; everything freed at the end. */
static void *stress_cpu(void *p)
{
	struct stress_arg *a = p;
	struct page *held[HELD_MAX];
	u8 orders[HELD_MAX];
	unsigned int n = 0;

	for (unsigned long i = 0; i < a->ops; i++) {
		unsigned int r = (unsigned int)rand_r(&a->seed);

		if (n < HELD_MAX && (n == 0 || (r & 1))) {
			unsigned int o = (r >> 8) % 16 == 0 ? (r >> 12) % 7 : (r >> 12) % 4;
			gfp_t gfp = (r & 2) ? GFP_KERNEL : GFP_USER;

			held[n] = alloc_pages_node(a->pgdat, gfp | __GFP_NOWARN, o);
			if (!held[n]) {
				a->fails++;
				continue;
			}
			orders[n++] = (u8)o;
			a->allocs++;
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

/* 8 CPUs x 10000 random operations on a 64 MiB node: afterwards every page is accounted
 * for once and the free count is exactly what it was. Race window: CPUs that met inside the
 * buddy lists (contended zone->lock acquisitions). */
static void alloc_pages_concurrent_random_orders(struct ktest *t)
{
	const struct mem_region map[] = { { 16 * MiB, 64 * MiB, MEM_USABLE } };
	struct pglist_data *pgdat = test_node_create(map, ARRAY_SIZE(map), NR_TEST_CPUS);
	struct stress_arg args[NR_TEST_CPUS];
	unsigned long free;
	u64 contended;

	KT_ASSERT_TRUE(t, pgdat);
	free = node_free_pages(pgdat);
	for (unsigned int i = 0; i < NR_TEST_CPUS; i++)
		args[i] = (struct stress_arg){ .pgdat = pgdat, .seed = i + 1, .ops = 10000 };
	run_on_cpus(NR_TEST_CPUS, stress_cpu, args, sizeof(args[0]));
	contended = lock_stat(&pgdat->node_zones[ZONE_DMA32].lock)->contended;
	printk("random orders: zone->lock contended %llu times\n", (unsigned long long)contended);
	drain_all_pages_machine(pgdat->machine);
	KT_EXPECT_EQ(t, node_free_pages(pgdat), free);
	KT_EXPECT_EQ(t, pgdat->bad_pages, 0);
	KT_EXPECT_EQ(t, mm_verify(pgdat), 0);
	test_node_destroy(pgdat);
	if (!contended)
		KT_SKIP(t, "no race: the CPUs never met inside zone->lock");
}

struct exhaust_arg {
	struct pglist_data *pgdat;
	struct page **pages;
	unsigned long max, n;
};

static void *exhaust_cpu(void *p)
{
	struct exhaust_arg *a = p;

	a->n = alloc_until_null(a->pgdat, GFP_KERNEL | __GFP_MEMALLOC, 0, a->pages, a->max);
	return NULL;
}

/* All CPUs allocate until NULL at once: together they get every free page (none twice,
 * mm_verify), nobody hangs; freeing restores the free count exactly. Race window: failing
 * allocations that drained the other CPUs' lists and retried (GFP_KERNEL: they may wait, so
 * they drain; an atomic allocation would not). */
static void alloc_pages_concurrent_exhaustion(struct ktest *t)
{
	const struct mem_region map[] = { { 16 * MiB, 32 * MiB, MEM_USABLE } };
	struct pglist_data *pgdat = test_node_create(map, ARRAY_SIZE(map), NR_TEST_CPUS);
	struct exhaust_arg args[NR_TEST_CPUS];
	unsigned long nfree, total = 0;

	KT_ASSERT_TRUE(t, pgdat);
	nfree = node_free_pages(pgdat);
	for (unsigned int i = 0; i < NR_TEST_CPUS; i++)
		args[i] = (struct exhaust_arg){ .pgdat = pgdat, .max = nfree,
						.pages = calloc(nfree, sizeof(struct page *)) };
	run_on_cpus(NR_TEST_CPUS, exhaust_cpu, args, sizeof(args[0]));
	for (unsigned int i = 0; i < NR_TEST_CPUS; i++)
		total += args[i].n;
	KT_EXPECT_EQ(t, total, nfree);
	KT_EXPECT_TRUE(t, pgdat->drain_retries > 0);
	KT_EXPECT_EQ(t, node_free_pages(pgdat), 0);
	KT_EXPECT_EQ(t, mm_verify(pgdat), 0);
	for (unsigned int i = 0; i < NR_TEST_CPUS; i++) {
		free_all(args[i].pages, args[i].n, 0);
		free(args[i].pages);
	}
	drain_all_pages_machine(pgdat->machine);
	KT_EXPECT_EQ(t, node_free_pages(pgdat), nfree);
	KT_EXPECT_EQ(t, mm_verify(pgdat), 0);
	test_node_destroy(pgdat);
}

/* ---- the harness: where a simulated interrupt can arrive ---- */

struct irq_inside {
	spinlock_t lock;
	int holding;		/* cpu0 holds the lock (atomic) */
	int ran;		/* the call ran (atomic) */
	bool ran_inside;	/* ... while cpu0 still held the lock */
	unsigned long points;	/* interleave points cpu0 passed while holding */
};

static void irq_inside_handler(void *p)
{
	struct irq_inside *ii = p;

	ii->ran_inside = smp_load_acquire(&ii->holding);
	smp_store_release(&ii->ran, 1);
}

/* cpu0 holds a lock and works on a list under it (no spin, no interrupt-restore point) until
 * the call ran, or 10 s went by; cpu1 sends it the call. */
static void *irq_inside_cpu(void *p)
{
	struct irq_inside *ii = *(struct irq_inside **)p;

	if (arch_cpu_id() == 0) {
		struct list_head head, node;

		u64 end = arch_cycles() + 10000000000ull;	/* host cycles are nanoseconds */

		INIT_LIST_HEAD(&head);
		spin_lock(&ii->lock);
		smp_store_release(&ii->holding, 1);
		while (!smp_load_acquire(&ii->ran) && arch_cycles() < end) {
			list_add(&node, &head);
			list_del(&node);
			ii->points += 2;
		}
		smp_store_release(&ii->holding, 0);
		spin_unlock(&ii->lock);
		return NULL;
	}
	while (!smp_load_acquire(&ii->holding))
		arch_cpu_relax();
	smp_call_function_single(0, irq_inside_handler, ii, true);
	return NULL;
}

/*
 * The host shim delivers a simulated interrupt where hardware could: inside a critical
 * section (at its list operations, here), not only where interrupts are turned back on or a
 * CPU spins. A cross-CPU call to a CPU that holds a spinlock with interrupts on runs before
 * the unlock. (With interrupts off it would wait: gup-fast's protection.)
 */
static void host_irq_arrives_inside_critical_section(struct ktest *t)
{
	struct irq_inside ii = { 0 };
	struct irq_inside *args[2] = { &ii, &ii };

	if (host_pct_on()) {	/* one thread at a time: cpu0 would never let cpu1 call */
		KT_SKIP(t, "not under --pct");
		return;
	}
	spin_lock_init(&ii.lock, "irq_inside", 0);
	run_on_cpus(2, irq_inside_cpu, args, sizeof(args[0]));
	printk("the call ran %s the critical section, after %lu interleave points in it\n",
	       ii.ran_inside ? "inside" : "AFTER", ii.points);
	KT_EXPECT_TRUE(t, ii.ran);
	KT_EXPECT_TRUE(t, ii.ran_inside);
}

static const struct ktest_case concurrent_cases[] = {
	KTEST_CASE_CONCURRENT(alloc_pages_concurrent_random_orders),
	KTEST_CASE_CONCURRENT(alloc_pages_concurrent_exhaustion),
	KTEST_CASE_CONCURRENT(host_irq_arrives_inside_critical_section),
};
KTEST_SUITE(host_concurrent, concurrent_cases);
