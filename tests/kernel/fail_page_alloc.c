/*
 * KTAP suite fail_page_alloc: the injection's own rules (Linux's interval, probability, space
 * and times, the filters, the seed), then the allocation-heavy paths run with 10% of
 * allocations failed on purpose, each checking that nothing is lost: the exact free page
 * count, mm_verify(), balanced pins, and that failures were actually injected.
 */
#include "tests/ktest/ktest.h"
#include "kernel/smp.h"
#include "kernel/string.h"
#include "kernel/timer.h"
#include "mm/mm_test.h"
#include "mm/fail_page_alloc.h"
#include "mm/gup.h"
#include "tests/lab/gup_test.h"
#include "tests/kernel/churn.h"
#include "tests/lab/pcp_bulk.h"

#define BASE (1ull << 32)
#define ATTEMPTS 2048
#define GFP_QUIET (GFP_KERNEL | __GFP_NOWARN)
/* CPUs that pin at once: every long-term pin's TLB shootdown waits for every CPU. Under TCG
 * on a loaded 2-core host, 40 CPUs took 26 s for a sixth of this case's rounds; 8 CPUs take
 * 6 s for all of it. */
#define PIN_CPUS 8

static struct fault_attr saved;

/* Each case starts with injection off (a boot `fail_page_alloc=` too) and sets its own. */
static int fpa_init(struct ktest *t)
{
	fail_page_alloc_get(&saved);
	fail_page_alloc_configure(NULL);
	return 0;
}

/* Put the boot settings back (off, or on with its seed), whatever the case did or where it
 * stopped. */
static void fpa_exit(struct ktest *t)
{
	fail_page_alloc_configure(&saved);
}

/* probability% of every allocation, no limit, from the case's seed (repeats with seed=). */
static struct fault_attr percent(struct ktest *t, unsigned int probability)
{
	return (struct fault_attr){ .interval = 1, .probability = probability, .times = -1,
				    .seed = t->seed };
}

static void inject(struct ktest *t, const struct fault_attr *a)
{
	if (fail_page_alloc_configure(a))
		KT_SKIP(t, "fail_page_alloc is not built in (DEBUG_VM=0)");
}

static u64 injected(void)
{
	struct fail_page_alloc_stats s;

	fail_page_alloc_read_stats(&s);
	return s.failed;
}

/* n alloc+free attempts on this CPU; bit i of fails[] is set if attempt i failed. */
static unsigned int attempts(gfp_t gfp, unsigned int order, unsigned int n, u64 *fails)
{
	unsigned int failed = 0;

	for (unsigned int i = 0; i < n; i++) {
		struct page *p = alloc_pages(gfp, order);

		if (fails && !p)
			fails[i / 64] |= 1ull << (i % 64);
		failed += !p;
		if (p)
			__free_pages(p, order);
	}
	return failed;
}

/* The checks every scenario ends with: all of memory back, consistent, and failures seen. */
static void expect_nothing_lost(struct ktest *t, unsigned long free_before, u64 injected_before)
{
	drain_all_pages_machine(mm_machine());
	KT_EXPECT_EQ(t, nr_free_pages(), free_before);
	KT_EXPECT_EQ(t, mm_verify_machine(mm_machine()), 0ul);
	if (injected() == injected_before)
		KT_FAIL(t, "no allocation was failed: the failure paths were not tested");
}

static unsigned long free_now(void)
{
	drain_all_pages_machine(mm_machine());
	return nr_free_pages();
}

/* ---- the rules ---- */

/* 10%: about 205 of 2048 calls fail; the same seed fails the same calls, another does not. */
static void fail_page_alloc_same_seed_same_failures(struct ktest *t)
{
	static u64 first[ATTEMPTS / 64], again[ATTEMPTS / 64], other[ATTEMPTS / 64];
	struct fault_attr a = percent(t, 10);
	unsigned int n;

	memset(first, 0, sizeof(first));
	memset(again, 0, sizeof(again));
	memset(other, 0, sizeof(other));
	inject(t, &a);
	n = attempts(GFP_QUIET, 0, ATTEMPTS, first);
	inject(t, &a);
	attempts(GFP_QUIET, 0, ATTEMPTS, again);
	a.seed++;
	inject(t, &a);
	attempts(GFP_QUIET, 0, ATTEMPTS, other);
	fail_page_alloc_configure(NULL);
	ktest_printf(t, "%u of %u allocations failed at 10%%", n, ATTEMPTS);
	KT_EXPECT_GE(t, n, ATTEMPTS * 5 / 100);		/* 7 standard deviations each way */
	KT_EXPECT_LE(t, n, ATTEMPTS * 15 / 100);
	KT_EXPECT_EQ(t, memcmp(first, again, sizeof(first)), 0);
	KT_EXPECT_NE(t, memcmp(first, other, sizeof(first)), 0);
}

/*
 * Linux's order of tests with interval 4, probability 100, space 8, times 5 (order 0):
 * calls 1-7 use up space (8 > 1 ... 2 > 1), then every 4th eligible call fails (calls 11,
 * 15, 19, 23, 27) until times is used up; nothing fails after that.
 */
static void fail_page_alloc_space_interval_times(struct ktest *t)
{
	struct fault_attr a = { .interval = 4, .probability = 100, .space = 8, .times = 5,
				.seed = t->seed };
	u64 fails[1] = { 0 }, want = 0;

	for (unsigned int call = 11; call <= 27; call += 4)
		want |= 1ull << (call - 1);
	inject(t, &a);
	KT_EXPECT_EQ(t, attempts(GFP_QUIET, 0, 64, fails), 5u);
	fail_page_alloc_get(&a);
	fail_page_alloc_configure(NULL);
	KT_EXPECT_EQ(t, fails[0], want);
	KT_EXPECT_EQ(t, a.times, 0l);
	KT_EXPECT_EQ(t, a.space, 1l);
}

/* min_order, ignore_gfp_wait: what the filters let through is never failed. */
static void fail_page_alloc_filters_order_and_wait(struct ktest *t)
{
	struct fault_attr a = percent(t, 100);

	a.min_order = 2;
	inject(t, &a);
	KT_EXPECT_EQ(t, attempts(GFP_QUIET, 0, 16, NULL), 0u);
	KT_EXPECT_EQ(t, attempts(GFP_QUIET, 1, 16, NULL), 0u);
	KT_EXPECT_EQ(t, attempts(GFP_QUIET, 2, 16, NULL), 16u);
	KT_EXPECT_EQ(t, attempts(GFP_QUIET, MAX_ORDER, 4, NULL), 4u);
	a = percent(t, 100);
	a.ignore_gfp_wait = true;
	inject(t, &a);
	KT_EXPECT_EQ(t, attempts(GFP_QUIET, 0, 16, NULL), 0u);
	KT_EXPECT_EQ(t, attempts(GFP_ATOMIC | __GFP_NOWARN, 0, 16, NULL), 16u);
	KT_EXPECT_EQ(t, attempts(GFP_NOWAIT | __GFP_NOWARN, 3, 16, NULL), 16u);
	fail_page_alloc_pause();
	KT_EXPECT_EQ(t, attempts(GFP_ATOMIC | __GFP_NOWARN, 0, 16, NULL), 0u);
	fail_page_alloc_resume();
	fail_page_alloc_configure(NULL);
}

static struct {
	int ticks;		/* this CPU's ticks that tried (atomic) */
	int failed;		/* of them, failed */
	unsigned int cpu;
} irq_try;

static void irq_try_hook(unsigned int cpu)
{
	struct page *p;

	if (cpu != READ_ONCE(irq_try.cpu) || READ_ONCE(irq_try.ticks) >= 8)
		return;
	p = alloc_pages(GFP_ATOMIC | __GFP_NOWARN, 0);
	if (p)
		__free_pages(p, 0);
	else
		__atomic_fetch_add(&irq_try.failed, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&irq_try.ticks, 1, __ATOMIC_RELEASE);
}

/* irq_only: this CPU's task-context allocations all succeed, the ones its timer interrupt
 * makes all fail. */
static void fail_page_alloc_irq_only(struct ktest *t)
{
	struct fault_attr a = percent(t, 100);
	u64 deadline = arch_cycles() + us_to_cycles(2000000);

	a.irq_only = true;
	irq_try.ticks = irq_try.failed = 0;
	irq_try.cpu = arch_cpu_id();
	inject(t, &a);
	KT_ASSERT_EQ(t, timer_add_tick_hook(irq_try_hook), 0);
	while (smp_load_acquire(&irq_try.ticks) < 8 && arch_cycles() < deadline)
		KT_EXPECT_EQ(t, attempts(GFP_ATOMIC | __GFP_NOWARN, 0, 16, NULL), 0u);
	timer_remove_tick_hook(irq_try_hook);
	fail_page_alloc_configure(NULL);
	ktest_printf(t, "%d of %d allocations from the timer interrupt failed", irq_try.failed,
		     irq_try.ticks);
	KT_EXPECT_EQ(t, irq_try.ticks, 8);
	KT_EXPECT_EQ(t, irq_try.failed, irq_try.ticks);
}

/* ---- every path that allocates, with 10% of allocations failing ---- */

struct fault_run {
	struct mm_struct *mm;
	unsigned int pages_per_cpu;
	u64 enomem, ok;
};

static void fault_cpu(void *arg)
{
	struct fault_run *r = arg;
	u64 base = BASE + (u64)arch_cpu_id() * r->pages_per_cpu * PAGE_SIZE;

	for (unsigned int i = 0; i < r->pages_per_cpu; i++) {
		int err = handle_mm_fault(r->mm, base + i * PAGE_SIZE);

		__atomic_fetch_add(err ? &r->enomem : &r->ok, 1, __ATOMIC_RELAXED);
	}
}

/*
 * mm_create() alone 200 times (three allocations: any of them may fail, and the others must
 * be given back), then 16 times: an address space, every CPU faulting in its share of one
 * region at once (page tables racing to be installed, data pages), a huge VMA, torn down.
 */
static void fail_page_alloc_mm_create_and_faults(struct ktest *t)
{
	static struct fault_run r;
	struct fault_attr a = percent(t, 10);
	unsigned long before = free_now();
	u64 inj = injected(), no_mm = 0, huge_fail = 0;

	memset(&r, 0, sizeof(r));
	r.pages_per_cpu = MAX(2048 / nr_cpus, 16u);	/* the same work at any -smp */
	inject(t, &a);
	for (int i = 0; i < 200; i++) {
		struct mm_struct *mm = mm_create(mm_node());

		if (mm)
			mm_destroy(mm);
		else
			no_mm++;
	}
	for (int round = 0; round < 16; round++) {
		u64 ok_before = r.ok;

		if (!(r.mm = mm_create(mm_node()))) {
			no_mm++;
			continue;
		}
		if (!mm_mmap_anon(r.mm, BASE, (u64)nr_cpus * r.pages_per_cpu * PAGE_SIZE, true,
				  false, false))
			smp_run_on_all(fault_cpu, &r);
		KT_EXPECT_EQ(t, (u64)r.mm->rss, r.ok - ok_before);	/* one page per fault */
		huge_fail += mm_mmap_anon(r.mm, BASE + (1ull << 30), 2ull << 20, true, true, true) != 0;
		mm_destroy(r.mm);
	}
	fail_page_alloc_configure(NULL);
	ktest_printf(t, "216 address spaces: %llu not created; %llu faults ok, %llu -ENOMEM, "
		     "%llu huge pages not populated", (unsigned long long)no_mm,
		     (unsigned long long)r.ok, (unsigned long long)r.enomem,
		     (unsigned long long)huge_fail);
	KT_EXPECT_GT(t, no_mm, 0ull);
	KT_EXPECT_GT(t, r.enomem, 0ull);
	expect_nothing_lost(t, before, inj);
}

#define PIN_RANGE 256
#define PIN_CHUNK 32

struct pin_run {
	struct mm_struct *mm;
	u64 seed;
	u64 pins, short_pins, errors, bad;
	struct page *pages[PIN_CPUS][PIN_CHUNK];
};

static void pin_cpu(void *arg)
{
	struct pin_run *r = arg;
	struct page **p = r->pages[arch_cpu_id()];
	u64 x = r->seed ^ ((u64)arch_cpu_id() << 32);

	if (arch_cpu_id() >= PIN_CPUS)
		return;
	for (unsigned int round = 0; round < 24; round++) {
		unsigned int flags = FOLL_WRITE | ((round % 4 == 3) ? FOLL_LONGTERM : 0);
		u64 start;
		long n;

		x = x * 6364136223846793005ull + 1442695040888963407ull;
		start = (x >> 33) % (PIN_RANGE - PIN_CHUNK);
		n = pin_user_pages_fast(r->mm, BASE + start * PAGE_SIZE, PIN_CHUNK, flags, p);
		if (n < 0) {
			__atomic_fetch_add(&r->errors, 1, __ATOMIC_RELAXED);
			continue;
		}
		for (long i = 0; i < n; i++)
			if (!page_maybe_dma_pinned(p[i]) ||
			    ((flags & FOLL_LONGTERM) && compound_head(p[i])->mt == MIGRATE_MOVABLE))
				__atomic_fetch_add(&r->bad, 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(&r->pins, (u64)n, __ATOMIC_RELAXED);
		__atomic_fetch_add(&r->short_pins, n < PIN_CHUNK, __ATOMIC_RELAXED);
		unpin_user_pages(p, (unsigned long)n);
	}
}

/*
 * Up to 8 CPUs pin random 32-page pieces of one unpopulated range, every 4th time long-term:
 * the slow path faults pages in (page tables, data pages) and migrates MOVABLE pages to
 * copies, and any of those allocations may fail. Three rounds, with the range unmapped and
 * mapped again in between so that there is always something to fault and migrate. Pins
 * stay balanced, every page returned is pinned (and unmovable if long-term), and some
 * pins come back short or fail.
 */
static void fail_page_alloc_gup_pins_all_cpus(struct ktest *t)
{
	static struct pin_run r;
	struct fault_attr a = percent(t, 10);
	unsigned long before = free_now();
	struct gup_totals g0, g1;
	u64 inj = injected();

	memset(&r, 0, sizeof(r));
	r.seed = t->seed;
	r.mm = mm_create(mm_node());
	KT_ASSERT_NOT_NULL(t, r.mm);
	gup_read_totals(&g0);
	inject(t, &a);
	for (int phase = 0; phase < 3; phase++) {
		KT_EXPECT_EQ(t, mm_mmap_anon(r.mm, BASE, PIN_RANGE * PAGE_SIZE, true, false, false), 0);
		smp_run_on_all(pin_cpu, &r);
		mm_munmap(r.mm, BASE, PIN_RANGE * PAGE_SIZE);
	}
	mm_destroy(r.mm);
	fail_page_alloc_configure(NULL);
	gup_read_totals(&g1);
	ktest_printf(t, "%llu pages pinned, %llu pins short, %llu failed, %llu migrated",
		     (unsigned long long)r.pins, (unsigned long long)r.short_pins,
		     (unsigned long long)r.errors,
		     (unsigned long long)(g1.longterm_migrated - g0.longterm_migrated));
	/* Balanced; more taken than returned if a lockless walk took a pin and had to put it
	 * back because a migration changed the entry under it. */
	KT_EXPECT_EQ(t, g1.pins_acquired - g0.pins_acquired, g1.pins_released - g0.pins_released);
	KT_EXPECT_GE(t, g1.pins_acquired - g0.pins_acquired, r.pins);
	KT_EXPECT_EQ(t, r.bad, 0ull);
	KT_EXPECT_GT(t, r.short_pins + r.errors, 0ull);
	KT_EXPECT_GT(t, g1.longterm_migrated - g0.longterm_migrated, 0ull);
	expect_nothing_lost(t, before, inj);
}

/* gup_test's long-term pin benchmark core on a range it could only partly populate: what it
 * pins passes its own check (pinned, unmovable) and is released; nothing is lost. */
static void fail_page_alloc_gup_test_longterm(struct ktest *t)
{
	static struct page *pages[PIN_RANGE];
	struct fault_attr a = percent(t, 10);
	unsigned long before = free_now();
	u64 inj = injected(), done = 0, verify = 0, short_runs = 0;
	struct mm_struct *mm;

	mm = mm_create(mm_node());
	KT_ASSERT_NOT_NULL(t, mm);
	inject(t, &a);
	for (int run = 0; run < 8; run++) {
		struct gup_test gt = { .cmd = PIN_LONGTERM_BENCHMARK, .addr = BASE,
				       .size = PIN_RANGE * PAGE_SIZE, .nr_pages_per_call = PIN_CHUNK,
				       .gup_flags = FOLL_WRITE, .pages = pages };

		mm_mmap_anon(mm, BASE, PIN_RANGE * PAGE_SIZE, true, false, true);
		gup_test_run(mm, &gt);
		done += gt.size >> PAGE_SHIFT;
		verify += gt.verify_failures;
		short_runs += gt.size != PIN_RANGE * PAGE_SIZE;
		mm_munmap(mm, BASE, PIN_RANGE * PAGE_SIZE);
	}
	mm_destroy(mm);
	fail_page_alloc_configure(NULL);
	ktest_printf(t, "8 runs: %llu pages pinned and released, %llu runs cut short",
		     (unsigned long long)done, (unsigned long long)short_runs);
	KT_EXPECT_EQ(t, verify, 0ull);
	KT_EXPECT_GT(t, short_runs, 0ull);
	expect_nothing_lost(t, before, inj);
}

struct churn_run {
	u64 until, deadline;
	u64 task_fail, task_ok, irq_fail, irq_ok;
};

/* Half a second, and at least 150 allocations in interrupts (on 1 CPU, half a second of
 * ticks is only 50: all 50 succeed at 10% once in 200 runs), but never past the deadline. */
static bool churn_going(const struct churn_run *c)
{
	u64 now = arch_cycles();

	return now < c->deadline && (now < c->until ||
				     READ_ONCE(c->irq_ok) + READ_ONCE(c->irq_fail) < 150);
}
static struct churn_run *churn_hooked;

/* Every tick on every CPU: one GFP_ATOMIC order-0/1 allocation in interrupt context. */
static void churn_tick(unsigned int cpu)
{
	struct churn_run *c = READ_ONCE(churn_hooked);
	struct page *p;

	if (!c)
		return;
	p = alloc_pages(GFP_ATOMIC | __GFP_NOWARN, cpu & 1);
	if (p)
		__free_pages(p, cpu & 1);
	__atomic_fetch_add(p ? &c->irq_ok : &c->irq_fail, 1, __ATOMIC_RELAXED);
}

/* Random orders 0-3 held up to 32 at a time, while churn_going(); all freed at the end. */
static void churn_cpu(void *arg)
{
	struct churn_run *c = arg;
	struct churn ch = { .x = arch_cycles() ^ arch_cpu_id() };
	u64 fail = 0, ok = 0;

	while (churn_going(c)) {
		int r = churn_step(&ch, NULL, GFP_KERNEL, GFP_USER);

		fail += r < 0;
		ok += r > 0;
	}
	churn_release(&ch);
	__atomic_fetch_add(&c->task_fail, fail, __ATOMIC_RELAXED);
	__atomic_fetch_add(&c->task_ok, ok, __ATOMIC_RELAXED);
}

static void run_churn(struct ktest *t, const struct fault_attr *a, struct churn_run *c)
{
	memset(c, 0, sizeof(*c));
	inject(t, a);
	WRITE_ONCE(churn_hooked, c);
	KT_ASSERT_EQ(t, timer_add_tick_hook(churn_tick), 0);
	c->until = arch_cycles() + us_to_cycles(500000);
	c->deadline = c->until + us_to_cycles(10000000);
	smp_run_on_all(churn_cpu, c);
	WRITE_ONCE(churn_hooked, NULL);
	timer_remove_tick_hook(churn_tick);
	fail_page_alloc_configure(NULL);
	ktest_printf(t, "%s: task context %llu ok %llu failed, interrupts %llu ok %llu failed",
		     a->irq_only ? "irq_only" : "everywhere", (unsigned long long)c->task_ok,
		     (unsigned long long)c->task_fail, (unsigned long long)c->irq_ok,
		     (unsigned long long)c->irq_fail);
}

/*
 * Every CPU allocates and frees random orders for half a second while every timer tick
 * allocates in interrupt context: at 10% both fail now and then; with irq_only (at 50%)
 * only the interrupts do. Nothing is lost either way.
 */
static void fail_page_alloc_churn_task_and_irq(struct ktest *t)
{
	static struct churn_run c;
	struct fault_attr a = percent(t, 10);
	unsigned long before = free_now();
	u64 inj = injected();

	run_churn(t, &a, &c);
	KT_EXPECT_GT(t, c.task_fail, 0ull);
	KT_EXPECT_GT(t, c.irq_fail, 0ull);
	a = percent(t, 50);
	a.irq_only = true;
	run_churn(t, &a, &c);
	KT_EXPECT_EQ(t, c.task_fail, 0ull);
	KT_EXPECT_GT(t, c.irq_fail, 0ull);
	expect_nothing_lost(t, before, inj);
}

/* alloc_pages_bulk_node(): a failed batch falls back to one page at a time, which may fail
 * too; whatever it filled is freed, nothing else was taken. */
static void fail_page_alloc_bulk(struct ktest *t)
{
	static struct page *pages[64];
	struct fault_attr a = percent(t, 10);
	unsigned long before = free_now();
	u64 inj = injected(), got = 0, short_calls = 0;

	inject(t, &a);
	for (int round = 0; round < 200; round++) {
		unsigned int n;

		memset(pages, 0, sizeof(pages));
		n = alloc_pages_bulk_node(mm_node(), GFP_KERNEL, 64, pages);
		got += n;
		short_calls += n < 64;
		for (unsigned int i = 0; i < 64; i++)
			if (pages[i])
				__free_pages(pages[i], 0);
	}
	fail_page_alloc_configure(NULL);
	ktest_printf(t, "200 bulk calls of 64: %llu pages, %llu calls short",
		     (unsigned long long)got, (unsigned long long)short_calls);
	KT_EXPECT_GT(t, short_calls, 0ull);
	expect_nothing_lost(t, before, inj);
}

static const struct ktest_case fail_page_alloc_cases[] = {
	KTEST_CASE(fail_page_alloc_same_seed_same_failures),
	KTEST_CASE(fail_page_alloc_space_interval_times),
	KTEST_CASE(fail_page_alloc_filters_order_and_wait),
	KTEST_CASE(fail_page_alloc_irq_only),
	KTEST_CASE(fail_page_alloc_mm_create_and_faults),
	KTEST_CASE(fail_page_alloc_gup_pins_all_cpus),
	KTEST_CASE(fail_page_alloc_gup_test_longterm),
	KTEST_CASE(fail_page_alloc_churn_task_and_irq),
	KTEST_CASE(fail_page_alloc_bulk),
};
KTEST_SUITE(fail_page_alloc, fail_page_alloc_cases, .init = fpa_init, .exit = fpa_exit);
