/*
 * Host tests of fail_page_alloc (mm/fail_page_alloc.c): the boot syntax, Linux's rules for
 * interval, space and times, the seed, interrupt-context filtering, and pthread "CPUs"
 * allocating, faulting and pinning with 10% of allocations failed, losing nothing.
 */
#include <setjmp.h>
#include <string.h>
#include "tests/host/harness.h"
#include "tests/kernel/churn.h"
#include "mm/fail_page_alloc.h"
#include "mm/gup.h"
#include "kernel/smp.h"

#define BASE (1ull << 32)
#define FAIL_CPUS 4

static struct pglist_data *fail_node(void)
{
	const struct mem_region map[] = { { 16 * MiB, 256 * MiB, MEM_USABLE } };

	return test_node_create(map, ARRAY_SIZE(map), FAIL_CPUS);
}

static struct fault_attr percent(unsigned int probability, u64 seed)
{
	return (struct fault_attr){ .interval = 1, .probability = probability, .times = -1,
				    .seed = seed };
}

static u64 injected(void)
{
	struct fail_page_alloc_stats s;

	fail_page_alloc_read_stats(&s);
	return s.failed;
}

/* n alloc+free attempts of order 0; bit i of *fails is set if attempt i (< 64) failed. */
static unsigned int attempts(struct pglist_data *pgdat, gfp_t gfp, unsigned int n, u64 *fails)
{
	unsigned int failed = 0;

	for (unsigned int i = 0; i < n; i++) {
		struct page *p = alloc_pages_node(pgdat, gfp | __GFP_NOWARN, 0);

		if (!p && fails && i < 64)
			*fails |= 1ull << i;
		failed += !p;
		if (p)
			__free_pages(p, 0);
	}
	return failed;
}

/* The boot syntax: four comma-separated numbers, times -1 for no limit, nothing else. */
static void fail_host_parse_boot_syntax(struct ktest *t)
{
	struct fault_attr a = { 0 };
	static const char *const bad[] = { "", "1,10,0", "1,10,0,-1,5", "1,101,0,-1", "1,10,-1,-1",
					   "1,10,0,-2", "-1,10,0,-1", "1,10,0,x", "1 ,10,0,-1" };

	KT_EXPECT_EQ(t, fault_attr_parse("4,25,8,5", &a), 0);
	KT_EXPECT_EQ(t, a.interval, 4);
	KT_EXPECT_EQ(t, a.probability, 25);
	KT_EXPECT_EQ(t, a.space, 8);
	KT_EXPECT_EQ(t, a.times, 5);
	KT_EXPECT_EQ(t, fault_attr_parse("1,10,0,-1", &a), 0);
	KT_EXPECT_EQ(t, a.times, -1);
	for (unsigned int i = 0; i < ARRAY_SIZE(bad); i++)
		if (fault_attr_parse(bad[i], &a))
			continue;
		else
			KT_FAIL(t, "'%s' was accepted", bad[i]);
	KT_EXPECT_EQ(t, a.interval, 1);	/* a bad string leaves the settings alone */
}

/* interval 4, probability 100, space 8, times 5: calls 1-7 use up space, then calls 11, 15,
 * 19, 23 and 27 fail, and nothing after them. */
static void fail_host_space_interval_times(struct ktest *t)
{
	struct pglist_data *pgdat = fail_node();
	struct fault_attr a = { .interval = 4, .probability = 100, .space = 8, .times = 5 };
	unsigned long before = node_free_pages(pgdat);
	u64 fails = 0, want = 0;

	for (unsigned int call = 11; call <= 27; call += 4)
		want |= 1ull << (call - 1);
	fail_page_alloc_configure(&a);
	KT_EXPECT_EQ(t, attempts(pgdat, GFP_KERNEL, 64, &fails), 5);
	fail_page_alloc_get(&a);
	fail_page_alloc_configure(NULL);
	KT_EXPECT_EQ(t, fails, want);
	KT_EXPECT_EQ(t, a.times, 0);
	KT_EXPECT_EQ(t, a.space, 1);
	drain_all_pages_machine(pgdat->machine);
	KT_EXPECT_EQ(t, node_free_pages(pgdat), before);
	test_node_destroy(pgdat);
}

/* The same seed fails the same calls; another seed others; about 10% of 2000 either way. */
static void fail_host_seed_repeats(struct ktest *t)
{
	struct pglist_data *pgdat = fail_node();
	u64 f1 = 0, f2 = 0, f3 = 0;
	struct fault_attr a = percent(50, 42);
	unsigned int n;

	fail_page_alloc_configure(&a);
	attempts(pgdat, GFP_KERNEL, 64, &f1);
	fail_page_alloc_configure(&a);
	attempts(pgdat, GFP_KERNEL, 64, &f2);
	a.seed = 43;
	fail_page_alloc_configure(&a);
	attempts(pgdat, GFP_KERNEL, 64, &f3);
	a = percent(10, 7);
	fail_page_alloc_configure(&a);
	n = attempts(pgdat, GFP_KERNEL, 2000, NULL);
	fail_page_alloc_configure(NULL);
	KT_EXPECT_TRUE(t, f1 != 0);
	KT_EXPECT_EQ(t, f1, f2);
	KT_EXPECT_TRUE(t, f1 != f3);
	KT_EXPECT_TRUE(t, n >= 100 && n <= 300);
	test_node_destroy(pgdat);
}

struct irq_arg {
	struct pglist_data *pgdat;
	unsigned int failed;
};

static void alloc_in_irq(void *p)
{
	struct irq_arg *a = p;

	a->failed += attempts(a->pgdat, GFP_ATOMIC, 16, NULL);
}

struct two_cpus {
	struct irq_arg *irq;
	int ready;
	unsigned int own_failed;
};

/* CPU 1 stays live, taking calls, until CPU 0 has sent its; CPU 0 allocates in its own
 * (task) context, then calls CPU 1, whose "interrupt" allocates. */
static void *irq_only_cpu(void *p)
{
	struct two_cpus *s = (struct two_cpus *)p - host_cpu_id;

	if (host_cpu_id == 1) {
		smp_store_release(&s->ready, 1);
		while (smp_load_acquire(&s->ready) != 2)
			arch_cpu_relax();
		return NULL;
	}
	while (!smp_load_acquire(&s->ready))
		arch_cpu_relax();
	s->own_failed = attempts(s->irq->pgdat, GFP_ATOMIC, 16, NULL);
	smp_call_function_single(1, alloc_in_irq, s->irq, true);
	smp_store_release(&s->ready, 2);
	return NULL;
}

/* irq_only at 100%: the task-context calls all succeed, the cross-CPU call's all fail. */
static void fail_host_irq_only(struct ktest *t)
{
	struct pglist_data *pgdat = fail_node();
	struct irq_arg irq = { pgdat, 0 };
	struct two_cpus s[2];
	struct fault_attr a = percent(100, 1);

	s[0] = (struct two_cpus){ &irq, 0, 0 };
	a.irq_only = true;
	fail_page_alloc_configure(&a);
	run_on_cpus(2, irq_only_cpu, s, sizeof(s[0]));
	fail_page_alloc_configure(NULL);
	KT_EXPECT_EQ(t, s[0].own_failed, 0);
	KT_EXPECT_EQ(t, irq.failed, 16);
	test_node_destroy(pgdat);
}

struct churn_arg {
	struct pglist_data *pgdat;
	struct mm_struct *mm;
	u64 seed;
	unsigned long failed, pinned, short_pins, bad;
};

/* Random orders 0-3 held up to 32 at a time, then pins of random pieces of the shared mm
 * (every 4th long-term: migration copies); everything is given back at the end. */
static void *churn_and_pin(void *p)
{
	struct churn_arg *a = p;
	struct page *pages[16];
	struct churn c = { .x = a->seed };
	u64 x;

	for (unsigned int i = 0; i < 3000; i++)
		a->failed += churn_step(&c, a->pgdat, GFP_KERNEL, GFP_KERNEL) < 0;
	churn_release(&c);
	x = c.x;
	for (unsigned int round = 0; round < 40; round++) {
		unsigned int flags = FOLL_WRITE | (round % 4 == 3 ? FOLL_LONGTERM : 0);
		long got;

		x = x * 6364136223846793005ull + 1442695040888963407ull;
		got = pin_user_pages_fast(a->mm, BASE + ((x >> 33) % 240) * PAGE_SIZE, 16, flags,
					  pages);
		a->short_pins += got < 16;
		for (long i = 0; i < got; i++)
			a->bad += !page_maybe_dma_pinned(pages[i]) ||
				  ((flags & FOLL_LONGTERM) && compound_head(pages[i])->mt == MIGRATE_MOVABLE);
		if (got > 0) {
			a->pinned += (unsigned long)got;
			unpin_user_pages(pages, (unsigned long)got);
		}
	}
	return NULL;
}

/*
 * Four CPUs allocate random orders, then fault in and pin (some long-term) pieces of one
 * unpopulated mapping, with 10% of allocations failed: every CPU saw failures, pins balance,
 * every page returned was pinned, and after unmapping the free count is exact.
 */
static void fail_host_concurrent_nothing_lost(struct ktest *t)
{
	struct pglist_data *pgdat = fail_node();
	struct mm_struct *mm = mm_create(pgdat);
	struct churn_arg args[FAIL_CPUS];
	struct fault_attr a = percent(10, 12345);
	unsigned long before, pinned = 0, short_pins = 0;
	struct gup_totals g0, g1;
	u64 inj = injected();

	KT_ASSERT_TRUE(t, mm && mm_mmap_anon(mm, BASE, 256 * PAGE_SIZE, true, false, false) == 0);
	drain_all_pages_machine(pgdat->machine);
	before = node_free_pages(pgdat);
	gup_read_totals(&g0);
	for (unsigned int i = 0; i < FAIL_CPUS; i++)
		args[i] = (struct churn_arg){ pgdat, mm, 0x9e3779b97f4a7c15ull * (i + 1), 0, 0, 0, 0 };
	fail_page_alloc_configure(&a);
	run_on_cpus(FAIL_CPUS, churn_and_pin, args, sizeof(args[0]));
	fail_page_alloc_configure(NULL);
	gup_read_totals(&g1);
	for (unsigned int i = 0; i < FAIL_CPUS; i++) {
		KT_EXPECT_TRUE(t, args[i].failed > 0);
		KT_EXPECT_EQ(t, args[i].bad, 0);
		pinned += args[i].pinned;
		short_pins += args[i].short_pins;
	}
	KT_EXPECT_TRUE(t, short_pins > 0);
	/* Balanced; more taken than returned if a lockless walk put a pin back (an entry
	 * changed under it). */
	KT_EXPECT_EQ(t, g1.pins_acquired - g0.pins_acquired, g1.pins_released - g0.pins_released);
	KT_EXPECT_TRUE(t, g1.pins_acquired - g0.pins_acquired >= pinned);
	KT_EXPECT_TRUE(t, g1.longterm_migrated > g0.longterm_migrated);
	KT_EXPECT_TRUE(t, injected() > inj);
	mm_munmap(mm, BASE, 256 * PAGE_SIZE);
	drain_all_pages_machine(pgdat->machine);
	KT_EXPECT_EQ(t, node_free_pages(pgdat), before);
	KT_EXPECT_EQ(t, mm_verify(pgdat), 0);
	mm_destroy(mm);
	test_node_destroy(pgdat);
}

/* mm_create() (three allocations) and a populated mapping with a huge VMA, 200 times at 10%:
 * some fail at each step, all give back what they took. */
static void fail_host_mm_create_nothing_lost(struct ktest *t)
{
	struct pglist_data *pgdat = fail_node();
	struct fault_attr a = percent(10, 99);
	unsigned long before = node_free_pages(pgdat), no_mm = 0, no_populate = 0;

	fail_page_alloc_configure(&a);
	for (int round = 0; round < 200; round++) {
		struct mm_struct *mm = mm_create(pgdat);

		if (!mm) {
			no_mm++;
			continue;
		}
		no_populate += mm_mmap_anon(mm, BASE, 64 * PAGE_SIZE, true, false, true) != 0;
		no_populate += mm_mmap_anon(mm, BASE + (1ull << 30), 2 * MiB, true, true, true) != 0;
		mm_destroy(mm);
	}
	fail_page_alloc_configure(NULL);
	KT_EXPECT_TRUE(t, no_mm > 0);
	KT_EXPECT_TRUE(t, no_populate > 0);
	drain_all_pages_machine(pgdat->machine);
	KT_EXPECT_EQ(t, node_free_pages(pgdat), before);
	KT_EXPECT_EQ(t, mm_verify(pgdat), 0);
	test_node_destroy(pgdat);
}

struct limit_arg {
	struct pglist_data *pgdat;
	unsigned int calls;
	unsigned int *inside;		/* CPUs inside alloc_pages_node() now (atomic) */
	bool in_call;			/* this CPU is inside one of its own calls */
	unsigned long failed, ok, overlapped;	/* the CPU's calls and its interrupts' */
	unsigned long nested;		/* interrupts that allocated inside one of its calls */
};

static struct limit_arg *limit_args;	/* [FAIL_CPUS], while limit_check() runs */

/* A tick on any CPU: one GFP_ATOMIC page, as an interrupt handler may take in the middle of
 * its CPU's own allocation (between reading times or space and taking one). */
static void limit_tick(void)
{
	struct limit_arg *a = &limit_args[arch_cpu_id()];
	struct page *page = alloc_pages_node(a->pgdat, GFP_ATOMIC | __GFP_NOWARN, 0);

	a->nested += a->in_call;
	a->failed += !page;
	a->ok += !!page;
	if (page)
		__free_pages(page, 0);
}

/* `calls` order-0 allocations, each freed at once; counts NULLs, and calls that began while
 * another CPU was inside one. */
static void *limit_cpu(void *p)
{
	struct limit_arg *a = p;

	for (unsigned int i = 0; i < a->calls; i++) {
		struct page *page;

		a->overlapped += __atomic_add_fetch(a->inside, 1, __ATOMIC_RELAXED) > 1;
		a->in_call = true;
		page = alloc_pages_node(a->pgdat, GFP_KERNEL | __GFP_NOWARN, 0);
		a->in_call = false;
		__atomic_fetch_sub(a->inside, 1, __ATOMIC_RELAXED);
		a->failed += !page;
		a->ok += !!page;
		if (page)
			__free_pages(page, 0);
	}
	return NULL;
}

/*
 * Four CPUs making `calls` order-0 allocations each at once under setting a, with a tick
 * that allocates at every 5th interrupts-on point of each: exactly `limit` allocations of all
 * of them fail (times) or go through (space), mm_verify is clean. Race windows: calls begun
 * while another CPU was inside one, and interrupts that allocated inside their CPU's call.
 */
static void limit_check(struct ktest *t, const struct fault_attr *a, unsigned int calls,
			bool times, unsigned long limit)
{
	struct pglist_data *pgdat = fail_node();
	struct limit_arg args[FAIL_CPUS];
	unsigned long failed = 0, ok = 0, overlapped = 0, nested = 0;
	unsigned int inside = 0;

	KT_ASSERT_TRUE(t, pgdat);
	for (unsigned int i = 0; i < FAIL_CPUS; i++)
		args[i] = (struct limit_arg){ .pgdat = pgdat, .calls = calls, .inside = &inside };
	limit_args = args;
	fail_page_alloc_configure(a);
	host_set_tick(limit_tick, 5);
	run_on_cpus(FAIL_CPUS, limit_cpu, args, sizeof(args[0]));
	host_set_tick(NULL, 0);
	fail_page_alloc_configure(NULL);
	for (unsigned int i = 0; i < FAIL_CPUS; i++) {
		failed += args[i].failed;
		ok += args[i].ok;
		overlapped += args[i].overlapped;
		nested += args[i].nested;
	}
	printk("%lu failed, %lu went through; %lu calls overlapped another CPU's, %lu interrupts "
	       "allocated inside their CPU's call\n", failed, ok, overlapped, nested);
	KT_EXPECT_EQ(t, times ? failed : ok, limit);
	KT_EXPECT_GE(t, failed + ok, FAIL_CPUS * calls);
	KT_EXPECT_EQ(t, mm_verify(pgdat), 0);
	test_node_destroy(pgdat);
	if (!overlapped || !nested)
		KT_SKIP(t, "no race: no two allocations overlapped, or no interrupt came inside one");
}

/* times is shared by every CPU (and interrupt) and never overrun: at 100% with times 2000,
 * exactly 2000 allocations fail. */
static void fail_host_times_exact_on_all_cpus(struct ktest *t)
{
	struct fault_attr a = { .interval = 1, .probability = 100, .times = 2000, .seed = 5 };

	if (host_pct_on())
		a.times = 100;
	limit_check(t, &a, host_pct_on() ? 60 : 1500, true, (unsigned long)a.times);
}

/* space is shared too: with space 2001 exactly the first 2000 order-0 allocations go through,
 * every later one fails (100%). */
static void fail_host_space_exact_on_all_cpus(struct ktest *t)
{
	struct fault_attr a = { .interval = 1, .probability = 100, .space = 2001, .times = -1,
				.seed = 6 };

	if (host_pct_on())
		a.space = 101;
	limit_check(t, &a, host_pct_on() ? 60 : 1500, false, (unsigned long)a.space - 1);
}

/*
 * An order above MAX_ORDER is refused before the hook is asked, as Linux's __alloc_pages()
 * refuses it before prepare_alloc_pages() -> should_fail_alloc_page(): with every call
 * armed to fail, orders MAX_ORDER + 1, + 5, 63 and the largest unsigned return NULL and
 * fail_page_alloc counts nothing, on any CPU. (At d900eef the hook ran first, counted the
 * call and wrote failed[order] past its array: order MAX_ORDER + 5 landed on the next
 * CPU's eligible count, "eligible +2, failed +0"; 1 << order is undefined from 63.) The
 * control: MAX_ORDER itself is failed on purpose, eligible +1 and failed +1.
 */
static void fail_host_order_above_max_refused_before_hook(struct ktest *t)
{
	static const unsigned int orders[] = { MAX_ORDER + 1, MAX_ORDER + 5, 63, ~0u };
	struct pglist_data *pgdat = fail_node();
	struct fault_attr a = percent(100, 1);
	struct fail_page_alloc_stats before, after;

	KT_ASSERT_TRUE(t, pgdat);
	KT_ASSERT_EQ(t, fail_page_alloc_configure(&a), 0);
	for (unsigned int i = 0; i < ARRAY_SIZE(orders); i++) {
		fail_page_alloc_read_stats(&before);
		KT_EXPECT_TRUE(t, !alloc_pages_node(pgdat, GFP_KERNEL | __GFP_NOWARN, orders[i]));
		fail_page_alloc_read_stats(&after);
		ktest_printf(t, "order %u: eligible +%llu, failed +%llu", orders[i],
			     (unsigned long long)(after.eligible - before.eligible),
			     (unsigned long long)(after.failed - before.failed));
		KT_EXPECT_EQ(t, after.eligible, before.eligible);
		KT_EXPECT_EQ(t, after.failed, before.failed);
	}
	fail_page_alloc_read_stats(&before);
	KT_EXPECT_TRUE(t, !alloc_pages_node(pgdat, GFP_KERNEL | __GFP_NOWARN, MAX_ORDER));
	fail_page_alloc_read_stats(&after);
	KT_EXPECT_EQ(t, after.eligible - before.eligible, 1);
	KT_EXPECT_EQ(t, after.failed_order[MAX_ORDER] - before.failed_order[MAX_ORDER], 1);
	fail_page_alloc_configure(NULL);
	KT_EXPECT_EQ(t, mm_verify(pgdat), 0);
	test_node_destroy(pgdat);
}

/* fail_page_alloc_resume() without a pause to undo is a bug (pauses nest): it panics. */
static void fail_host_resume_without_pause_panics(struct ktest *t)
{
	jmp_buf jb;
	volatile bool panicked = false;

	fail_page_alloc_pause();
	fail_page_alloc_resume();
	if (!setjmp(jb)) {
		host_panic_jmp = &jb;
		fail_page_alloc_resume();
	} else {
		panicked = true;
		fail_page_alloc_pause();	/* the panic left the count at -1: back to 0 */
	}
	host_panic_jmp = NULL;
	if (!panicked)
		fail_page_alloc_pause();
	KT_EXPECT_TRUE(t, panicked);
	KT_EXPECT_TRUE(t, strstr(host_panic_msg, "old <= 0") != NULL);
}

static const struct ktest_case fail_page_alloc_cases[] = {
	KTEST_CASE(fail_host_parse_boot_syntax),
	KTEST_CASE(fail_host_space_interval_times),
	KTEST_CASE(fail_host_seed_repeats),
	KTEST_CASE_CONCURRENT(fail_host_irq_only),
	KTEST_CASE_CONCURRENT(fail_host_concurrent_nothing_lost),
	KTEST_CASE(fail_host_mm_create_nothing_lost),
	KTEST_CASE_CONCURRENT(fail_host_times_exact_on_all_cpus),
	KTEST_CASE_CONCURRENT(fail_host_space_exact_on_all_cpus),
	KTEST_CASE(fail_host_resume_without_pause_panics),
	KTEST_CASE(fail_host_order_above_max_refused_before_hook),
};
/* Fault injection is a debug build's (CONFIG_FAIL_PAGE_ALLOC follows CONFIG_DEBUG_VM). */
static int fail_page_alloc_suite_init(struct ktest *t)
{
	KT_SKIP_UNLESS_DEBUG_VM(t, "no fault injection (CONFIG_FAIL_PAGE_ALLOC)");
	return 0;
}
KTEST_SUITE(host_fail_page_alloc, fail_page_alloc_cases, .init = fail_page_alloc_suite_init);
