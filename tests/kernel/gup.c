/*
 * KTAP suite `gup`: pin counting, partial pins, FOLL_LONGTERM migration, large-page pin
 * counts. Each case builds its own mm on the kernel's node. Pin balance, the has-pinned flag
 * and unmapping while other CPUs walk (gup-fast's races), which the host runs too, are in
 * gup_private.c.
 */
#include "tests/ktest/ktest.h"
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
	unsigned long warns = taint_count(TAINT_WARN);
	struct page *p;

	ktest_printf(t, "expect a WARN from mm/gup.c: pin_user_pages_fast(FOLL_GET), FOLL_GET and "
		     "FOLL_PIN together, on purpose");
	ktest_expect_taint(TAINT_WARN);
	KT_EXPECT_EQ(t, pin_user_pages_fast(mm, BASE, 1, FOLL_GET, &p), -EINVAL);
	KT_EXPECT_EQ(t, get_user_pages_fast(mm, BASE, 1, FOLL_PIN, &p), -EINVAL);
	KT_EXPECT_EQ(t, taint_count(TAINT_WARN) - warns, 1ul);
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

#define HELD_PAGES 80

/*
 * 80 MOVABLE pages, each held by a FOLL_GET reference, cannot move: a FOLL_LONGTERM pin of
 * them ends (bounded retries, not a livelock over the same 64) with -EBUSY, pins nothing,
 * leaves every page where it was and leaks no copy. Once released, the same pin moves all.
 */
static void gup_longterm_held_pages_busy(struct ktest *t)
{
	struct mm_struct *mm = new_mm(t, HELD_PAGES * PAGE_SIZE, false, true);
	struct page **held = pages_buf, **pinned = pages_buf + HELD_PAGES;
	struct gup_totals a, b;
	unsigned long free_mapped;
	u64 start;

	KT_ASSERT_EQ(t, get_user_pages_fast(mm, BASE, HELD_PAGES, 0, held), HELD_PAGES);
	free_mapped = nr_free_pages();
	gup_read_totals(&a);
	start = arch_cycles();
	KT_EXPECT_EQ(t, pin_user_pages(mm, BASE, HELD_PAGES, FOLL_LONGTERM, pinned), -EBUSY);
	ktest_printf(t, "pin of %d held pages refused in %llu us", HELD_PAGES,
		     (unsigned long long)cycles_to_us(arch_cycles() - start));
	gup_read_totals(&b);
	KT_EXPECT_EQ(t, b.pins_acquired - a.pins_acquired, 0);
	KT_EXPECT_EQ(t, b.longterm_migrated - a.longterm_migrated, 0);
	for (unsigned int i = 0; i < HELD_PAGES; i++) {
		KT_EXPECT_EQ(t, page_count(held[i]), 2);	/* the mapping's and ours */
		KT_EXPECT_EQ(t, held[i]->mt, MIGRATE_MOVABLE);
	}
	KT_EXPECT_EQ(t, nr_free_pages(), free_mapped);	/* no copy leaked */
	put_user_pages(held, HELD_PAGES);
	KT_EXPECT_EQ(t, pin_user_pages(mm, BASE, HELD_PAGES, FOLL_LONGTERM, pinned), HELD_PAGES);
	gup_read_totals(&a);
	KT_EXPECT_EQ(t, a.longterm_migrated - b.longterm_migrated, (u64)HELD_PAGES);
	unpin_user_pages(pinned, HELD_PAGES);
	put_mm(t, mm);
}

/*
 * 2^21 pins of one order-0 page would take its 32-bit count past INT_MAX (1 + 2^21 x 1024):
 * the last one is refused with -ENOMEM and a warning (printed once, counted twice: the fast
 * path refuses it, then the slow path); all the others unpin cleanly.
 */
static void gup_pin_count_overflow(struct ktest *t)
{
	struct mm_struct *mm = new_mm(t, PAGE_SIZE, false, true);
	const long max_pins = (long)(0x7fffffff - 1) / GUP_PIN_COUNTING_BIAS;	/* 2^21 - 1 */
	unsigned long warnings = taint_count(TAINT_WARN);
	struct page *page = NULL, *p;
	long pinned = 0;

	while (pinned < max_pins && pin_user_pages_fast(mm, BASE, 1, 0, &p) == 1) {
		page = p;
		pinned++;
	}
	KT_EXPECT_EQ(t, pinned, max_pins);
	KT_EXPECT_EQ(t, taint_count(TAINT_WARN), warnings);
	ktest_printf(t, "expect a WARN from mm/gup.c: pin count overflow (page_ref_would_overflow)");
	ktest_expect_taint(TAINT_WARN);
	KT_EXPECT_EQ(t, pin_user_pages_fast(mm, BASE, 1, 0, &p), -ENOMEM);
	KT_EXPECT_EQ(t, taint_count(TAINT_WARN) - warnings, 2ul);	/* fast path, then slow path */
	KT_ASSERT_NOT_NULL(t, page);
	KT_EXPECT_EQ(t, page_count(page), 1 + max_pins * GUP_PIN_COUNTING_BIAS);
	while (pinned--)
		unpin_user_page(page);
	KT_EXPECT_EQ(t, page_count(page), 1);
	KT_EXPECT_FALSE(t, page_maybe_dma_pinned(page));
	put_mm(t, mm);
}

/* Most cases check exact counts of pages they fault in; the fail_page_alloc suite runs the
 * same paths with failures injected. */
static const struct ktest_case gup_cases[] = {
	KTEST_CASE_NOFAIL(gup_maybe_pinned_after_pin, "needs its one page faulted in"),
	KTEST_CASE_NOFAIL(gup_bad_flags_rejected, "needs its one page faulted in"),
	KTEST_CASE_NOFAIL(gup_partial_range_returns_count, "expects all 8 pages of the VMA"),
	KTEST_CASE_NOFAIL(gup_longterm_migrates_movable, "expects all 64 pages migrated"),
	KTEST_CASE_NOFAIL(gup_large_page_exact_pincount, "needs its 2 MiB page"),
	KTEST_CASE_NOFAIL(gup_longterm_held_pages_busy, "expects all 80 pages mapped and copied"),
	KTEST_CASE_NOFAIL(gup_pin_count_overflow, "needs its one page faulted in"),
};
KTEST_SUITE(gup, gup_cases, .exit = gup_exit);
