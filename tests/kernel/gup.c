/*
 * KTAP suite `gup`: pin counting, the has-pinned flag, partial pins, FOLL_LONGTERM migration,
 * unmapping while other CPUs walk, large-page pin counts. Each case builds its own mm.
 */
#include "kernel/ktest.h"
#include "kernel/smp.h"
#include "kernel/string.h"
#include "kernel/timer.h"
#include "kernel/trap.h"
#include "mm/mm.h"
#include "mm/gup.h"
#include "mm/fail_page_alloc.h"

#define BASE (1ull << 32)
#define NPAGES 64

static struct page *pages_buf[NPAGES * 8];

/* The case's address space, kept in t->priv so that the suite's exit hook destroys it if the
 * case ends early (a failed KT_ASSERT); put_mm() destroys it at the case's own end. */
static struct mm_struct *new_mm(struct ktest *t, u64 len, bool huge, bool populate)
{
	struct mm_struct *mm = mm_create(mm_node());

	KT_ASSERT_NOT_NULL(t, mm);
	t->priv = mm;
	KT_ASSERT_EQ(t, mm_mmap_anon(mm, BASE, len, true, huge, populate), 0);
	return mm;
}

static void put_mm(struct ktest *t, struct mm_struct *mm)
{
	mm_destroy(mm);
	t->priv = NULL;
}

static void gup_exit(struct ktest *t)
{
	if (t->priv)
		put_mm(t, t->priv);
}

/* Pins and unpins balance: acquired - released rises by N during the pin, back to 0 after. */
static void gup_pin_unpin_balance(struct ktest *t)
{
	struct mm_struct *mm = new_mm(t, NPAGES * PAGE_SIZE, false, true);
	struct gup_totals before, during, after;

	long n;

	gup_read_totals(&before);
	n = pin_user_pages_fast(mm, BASE, NPAGES, FOLL_WRITE, pages_buf);
	KT_EXPECT_EQ(t, n, NPAGES);
	gup_read_totals(&during);
	KT_EXPECT_EQ(t, during.pins_acquired - before.pins_acquired, (u64)MAX(n, 0l));
	if (n > 0)
		unpin_user_pages(pages_buf, (unsigned long)n);
	gup_read_totals(&after);
	KT_EXPECT_EQ(t, after.pins_acquired - after.pins_released,
		     before.pins_acquired - before.pins_released);
	put_mm(t, mm);
}

/* page_maybe_dma_pinned(): true while pinned (refcount + 1024), false after; a GET is not a pin. */
static void gup_maybe_pinned_after_pin(struct ktest *t)
{
	struct mm_struct *mm = new_mm(t, PAGE_SIZE, false, true);
	struct page *p;

	KT_ASSERT_EQ(t, get_user_pages_fast(mm, BASE, 1, 0, &p), 1);
	KT_EXPECT_FALSE(t, page_maybe_dma_pinned(p));
	KT_EXPECT_EQ(t, page_count(p), 2);
	put_user_pages(&p, 1);
	KT_ASSERT_EQ(t, pin_user_pages_fast(mm, BASE, 1, 0, &p), 1);
	KT_EXPECT_TRUE(t, page_maybe_dma_pinned(p));
	KT_EXPECT_EQ(t, page_count(p), 1 + GUP_PIN_COUNTING_BIAS);
	unpin_user_page(p);
	KT_EXPECT_FALSE(t, page_maybe_dma_pinned(p));
	KT_EXPECT_EQ(t, page_count(p), 1);
	put_mm(t, mm);
}

/* FOLL_GET and FOLL_PIN together are refused: with one WARN when pin_user_pages_fast() is
 * given FOLL_GET (a caller bug), quietly by get_user_pages_fast(); so are LONGTERM gets and
 * unaligned starts. */
static void gup_bad_flags_rejected(struct ktest *t)
{
	struct mm_struct *mm = new_mm(t, PAGE_SIZE, false, true);
	unsigned long warns = warn_count();
	struct page *p;

	ktest_printf(t, "expect a WARN from mm/gup.c: pin_user_pages_fast(FOLL_GET), FOLL_GET and "
		     "FOLL_PIN together, on purpose");
	KT_EXPECT_EQ(t, pin_user_pages_fast(mm, BASE, 1, FOLL_GET, &p), -EINVAL);
	KT_EXPECT_EQ(t, get_user_pages_fast(mm, BASE, 1, FOLL_PIN, &p), -EINVAL);
	KT_EXPECT_EQ(t, warn_count() - warns, 1ul);
	KT_EXPECT_EQ(t, get_user_pages_fast(mm, BASE, 1, FOLL_LONGTERM, &p), -EINVAL);
	KT_EXPECT_EQ(t, pin_user_pages_fast(mm, BASE + 1, 1, 0, &p), -EINVAL);
	put_mm(t, mm);
}

/* A range half inside a VMA: the pin returns the count it got (8), not an error. */
static void gup_partial_range_returns_count(struct ktest *t)
{
	struct mm_struct *mm = new_mm(t, 8 * PAGE_SIZE, false, false);
	long n = pin_user_pages_fast(mm, BASE, 16, FOLL_WRITE, pages_buf);

	KT_EXPECT_EQ(t, n, 8);	/* the slow path faulted the 8 in; the rest has no VMA */
	if (n > 0)
		unpin_user_pages(pages_buf, (unsigned long)n);
	KT_EXPECT_EQ(t, pin_user_pages_fast(mm, BASE + 8 * PAGE_SIZE, 1, 0, pages_buf), -EFAULT);
	put_mm(t, mm);
}

struct once_ctx {
	struct mm_struct *mm;
	unsigned int pins_per_cpu;
	u64 failures;
};

static void pin_loop_cpu(void *arg)
{
	struct once_ctx *c = arg;
	struct page *p;

	for (unsigned int i = 0; i < c->pins_per_cpu; i++) {
		if (pin_user_pages_fast(c->mm, BASE + (i % NPAGES) * PAGE_SIZE, 1, 0, &p) != 1) {
			__atomic_fetch_add(&c->failures, 1, __ATOMIC_RELAXED);
			continue;
		}
		unpin_user_page(p);
	}
}

static u64 count_flag_writes(struct ktest *t, const char *mode, unsigned int pins)
{
	enum gup_has_pinned_mode saved = gup_has_pinned_mode;
	struct once_ctx c = { .mm = new_mm(t, NPAGES * PAGE_SIZE, false, true), .pins_per_cpu = pins };
	u64 writes;

	gup_set_has_pinned_mode(mode);
	smp_run_on_all(pin_loop_cpu, &c);
	gup_has_pinned_mode = saved;
	writes = MM_STAT(c.mm, flag_writes);
	KT_EXPECT_EQ(t, c.failures, 0);
	KT_EXPECT_TRUE(t, READ_ONCE(c.mm->flags) & (1ul << MMF_HAS_PINNED));
	put_mm(t, c.mm);
	return writes;
}

/* The seed: N CPUs x M pins write mm->flags once in `once` mode, N x M times in `always`. */
static void gup_has_pinned_written_once(struct ktest *t)
{
	unsigned int pins = 200;
	u64 once = count_flag_writes(t, "once", pins);
	u64 always = count_flag_writes(t, "always", pins);

	ktest_printf(t, "%u CPUs x %u pins: flag writes once=%llu always=%llu", nr_cpus_online(),
		     pins, (unsigned long long)once, (unsigned long long)always);
	KT_EXPECT_EQ(t, once, 1);
	KT_EXPECT_EQ(t, always, (u64)nr_cpus_online() * pins);
}

/* LONGTERM pins move every MOVABLE page to an UNMOVABLE one and keep the data. */
static void gup_longterm_migrates_movable(struct ktest *t)
{
	struct mm_struct *mm = new_mm(t, NPAGES * PAGE_SIZE, false, true);
	struct gup_totals before, after;
	struct page *p;
	long n;

	for (unsigned int i = 0; i < NPAGES; i++) {	/* write a pattern through a GET */
		KT_ASSERT_EQ(t, get_user_pages_fast(mm, BASE + i * PAGE_SIZE, 1, 0, &p), 1);
		KT_EXPECT_EQ(t, p->mt, MIGRATE_MOVABLE);
		memset(page_address(p), (int)(i + 1), PAGE_SIZE);
		put_user_pages(&p, 1);
	}
	gup_read_totals(&before);
	n = pin_user_pages(mm, BASE, NPAGES, FOLL_LONGTERM | FOLL_WRITE, pages_buf);
	KT_EXPECT_EQ(t, n, NPAGES);
	gup_read_totals(&after);
	KT_EXPECT_EQ(t, after.longterm_migrated - before.longterm_migrated, (u64)NPAGES);
	for (long i = 0; i < n; i++) {
		const u8 *d = page_address(pages_buf[i]);
		KT_EXPECT_NE(t, pages_buf[i]->mt, MIGRATE_MOVABLE);
		KT_EXPECT_TRUE(t, d[0] == (u8)(i + 1) && d[PAGE_SIZE - 1] == (u8)(i + 1));
	}
	/* The fast path now takes them: they are pinnable. */
	if (n > 0)
		unpin_user_pages(pages_buf, (unsigned long)n);
	n = pin_user_pages_fast(mm, BASE, NPAGES, FOLL_LONGTERM | FOLL_FAST_ONLY, pages_buf);
	KT_EXPECT_EQ(t, n, NPAGES);
	if (n > 0)
		unpin_user_pages(pages_buf, (unsigned long)n);
	put_mm(t, mm);
}

/* A 2 MiB page keeps an exact pin count on its head and one reference per pin. */
static void gup_large_page_exact_pincount(struct ktest *t)
{
	struct mm_struct *mm = new_mm(t, 2ull << 20, true, true);
	long n = pin_user_pages_fast(mm, BASE + 3 * PAGE_SIZE, 3, 0, pages_buf);
	struct page *head;

	if (n != 3) {
		KT_FAIL(t, "pinned %ld of 3 pages", n);
		if (n > 0)
			unpin_user_pages(pages_buf, (unsigned long)n);
		ktest_abort(t);
	}
	head = compound_head(pages_buf[0]);
	KT_EXPECT_PTR_EQ(t, compound_head(pages_buf[2]), head);
	KT_EXPECT_EQ(t, page_pincount(head), 3u);
	KT_EXPECT_EQ(t, page_count(head), 4);
	KT_EXPECT_TRUE(t, page_maybe_dma_pinned(pages_buf[1]));
	unpin_user_pages(pages_buf, 3);
	KT_EXPECT_EQ(t, page_pincount(head), 0u);
	KT_EXPECT_FALSE(t, page_maybe_dma_pinned(pages_buf[1]));
	put_mm(t, mm);
}

struct race_ctx {
	struct mm_struct *mm;
	volatile bool stop;
	u64 walks, pinned, bad;
};

static void race_walker(void *arg)
{
	struct race_ctx *c = arg;
	struct page *p[8];

	if (arch_cpu_id() == 0)
		return;
	while (!READ_ONCE(c->stop)) {
		long n = pin_user_pages_fast(c->mm, BASE, 8, FOLL_FAST_ONLY, p);

		__atomic_fetch_add(&c->walks, 1, __ATOMIC_RELAXED);
		for (long i = 0; i < n; i++) {
			if (page_count(p[i]) < GUP_PIN_COUNTING_BIAS || p[i]->mt != MIGRATE_MOVABLE)
				__atomic_fetch_add(&c->bad, 1, __ATOMIC_RELAXED);
		}
		if (n > 0) {
			__atomic_fetch_add(&c->pinned, (u64)n, __ATOMIC_RELAXED);
			unpin_user_pages(p, (unsigned long)n);
		}
	}
}

/*
 * Unmap and remap `rounds` times, or for 2 seconds if that comes first (at least 3 rounds):
 * each unmap's shootdown waits for every CPU, which under TCG at -smp 40 on a busy host can
 * take a second.
 */
static void race_unmapper(struct race_ctx *c, unsigned int rounds)
{
	u64 deadline = arch_cycles() + us_to_cycles(2000000);

	for (unsigned int r = 0; r < rounds && (r < 3 || arch_cycles() < deadline); r++) {
		mm_munmap(c->mm, BASE, 2ull << 20);	/* frees the page table too */
		mm_mmap_anon(c->mm, BASE, 8 * PAGE_SIZE, true, false, true);
		udelay(500);	/* let the walkers find it mapped */
	}
	WRITE_ONCE(c->stop, true);
}

static void race_cpu(void *arg)
{
	if (arch_cpu_id() == 0)
		race_unmapper(arg, 300);
	else
		race_walker(arg);
}

/* CPU 0 unmaps (freeing page tables) up to 300 times while every other CPU walks: no freed
 * page table is ever read. Runs with fail_page_alloc too: a remap that cannot fault every
 * page in leaves the walkers fewer pages, which changes nothing that is checked. */
static void gup_unmap_vs_fast_walk(struct ktest *t)
{
	struct race_ctx c;
	struct gup_totals tot;

	fail_page_alloc_pause();	/* the address space itself is not what is tested */
	c = (struct race_ctx){ .mm = mm_create(mm_node()) };
	fail_page_alloc_resume();
	KT_ASSERT_NOT_NULL(t, c.mm);
	t->priv = c.mm;
	KT_ASSERT_EQ(t, mm_mmap_anon(c.mm, BASE, 8 * PAGE_SIZE, true, false, false), 0);
	if (nr_cpus_online() < 2)
		KT_SKIP(t, "needs 2 CPUs");
	for (unsigned int i = 0; i < 8; i++)
		handle_mm_fault(c.mm, BASE + i * PAGE_SIZE);	/* -ENOMEM: one page fewer */
	smp_run_on_all(race_cpu, &c);
	ktest_printf(t, "%llu lockless walks, %llu pages pinned, poison reads %llu",
		     (unsigned long long)c.walks, (unsigned long long)c.pinned,
		     (unsigned long long)MM_STAT(c.mm, poison_reads));
	KT_EXPECT_EQ(t, MM_STAT(c.mm, poison_reads), 0);
	KT_EXPECT_EQ(t, c.bad, 0);
	gup_read_totals(&tot);
	KT_EXPECT_EQ(t, tot.pins_acquired, tot.pins_released);
	put_mm(t, c.mm);
	KT_EXPECT_EQ(t, mm_verify(mm_node()), 0);
}

/* Most cases check exact counts of pages they fault in; the fail_page_alloc suite runs the
 * same paths with failures injected. */
static const struct ktest_case gup_cases[] = {
	KTEST_CASE_NOFAIL(gup_pin_unpin_balance, "pins exactly 64 faulted pages"),
	KTEST_CASE_NOFAIL(gup_maybe_pinned_after_pin, "needs its one page faulted in"),
	KTEST_CASE_NOFAIL(gup_bad_flags_rejected, "needs its one page faulted in"),
	KTEST_CASE_NOFAIL(gup_partial_range_returns_count, "expects all 8 pages of the VMA"),
	KTEST_CASE_NOFAIL(gup_has_pinned_written_once, "counts pins of a populated range"),
	KTEST_CASE_NOFAIL(gup_longterm_migrates_movable, "expects all 64 pages migrated"),
	KTEST_CASE_NOFAIL(gup_large_page_exact_pincount, "needs its 2 MiB page"),
	KTEST_CASE(gup_unmap_vs_fast_walk),
};
KTEST_SUITE(gup, gup_cases, .exit = gup_exit);
