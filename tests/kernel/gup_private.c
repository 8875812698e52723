/*
 * KTAP suite gup_private: pin accounting in an address space on a private instance
 * (tests/lab/lab_platform.h), one source for both platforms: built into the kernel and into
 * the host binaries (ThreadSanitizer and the deterministic scheduler run the CPU race).
 * The kernel-only pinning cases are in gup.c, the host-only ones in tests/host/test_gup.c.
 */
#include "tests/ktest/ktest.h"
#include "tests/lab/lab_platform.h"
#include "mm/gup.h"

#define BASE (1ull << 32)
#define NPAGES 64
#define GUP_BLOCKS 4

static struct page *pages_buf[NPAGES];

/* The case's address space over a private instance, kept in t->priv so that the suite's
 * exit hook destroys both if the case ends early (a failed KT_ASSERT). */
static struct mm_struct *new_mm(struct ktest *t)
{
	struct pglist_data *pgdat = lab_node_create(GUP_BLOCKS, true);
	struct mm_struct *mm;

	KT_ASSERT_NOT_NULL(t, pgdat);
	mm = mm_create(pgdat);
	KT_ASSERT_NOT_NULL(t, mm);
	t->priv = mm;
	KT_ASSERT_EQ(t, mm_mmap_anon(mm, BASE, NPAGES * PAGE_SIZE, true, false, true), 0);
	return mm;
}

/* Destroy the mm; every page of the instance must be back (mm_verify), then the instance. */
static void put_mm(struct ktest *t, struct mm_struct *mm)
{
	struct pglist_data *pgdat = mm->node;

	mm_destroy(mm);
	t->priv = NULL;
	drain_all_pages_node(pgdat);
	KT_EXPECT_EQ(t, mm_verify(pgdat), 0ul);
	lab_node_destroy(pgdat);
}

static void gup_private_exit(struct ktest *t)
{
	if (t->priv) {
		mm_destroy(t->priv);
		t->priv = NULL;
	}
	lab_node_exit(t);
}

/* Pins and unpins balance: acquired - released rises by N during the pin, back to 0 after;
 * page_maybe_dma_pinned() is true while pinned, false after. */
static void gup_pin_unpin_balance(struct ktest *t)
{
	struct mm_struct *mm = new_mm(t);
	struct gup_totals before, during, after;
	long n;

	gup_read_totals(&before);
	n = pin_user_pages_fast(mm, BASE, NPAGES, FOLL_WRITE, pages_buf);
	KT_ASSERT_EQ(t, n, (long)NPAGES);
	KT_EXPECT_TRUE(t, page_maybe_dma_pinned(pages_buf[5]));
	gup_read_totals(&during);
	KT_EXPECT_EQ(t, during.pins_acquired - before.pins_acquired, (u64)n);
	unpin_user_pages(pages_buf, (unsigned long)n);
	gup_read_totals(&after);
	KT_EXPECT_EQ(t, after.pins_acquired - after.pins_released,
		     before.pins_acquired - before.pins_released);
	KT_EXPECT_FALSE(t, page_maybe_dma_pinned(pages_buf[5]));
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

/* Every CPU pins (and unpins) pins times at once in the has-pinned mode `mode`; returns how
 * many times mm->flags was written. */
static u64 count_flag_writes(struct ktest *t, const char *mode, unsigned int pins)
{
	enum gup_has_pinned_mode saved = gup_has_pinned_mode;
	struct once_ctx c = { .mm = new_mm(t), .pins_per_cpu = pins };
	u64 writes;

	gup_set_has_pinned_mode(mode);
	lab_run_on_cpus(pin_loop_cpu, &c);
	gup_has_pinned_mode = saved;
	writes = MM_STAT(c.mm, flag_writes);
	KT_EXPECT_EQ(t, c.failures, 0ull);
	KT_EXPECT_TRUE(t, READ_ONCE(c.mm->flags) & (1ul << MMF_HAS_PINNED));
	put_mm(t, c.mm);
	return writes;
}

/*
 * Linux 292648ac5cf1 ("mm: gup: allow FOLL_PIN to scale in SMP") made the flag write
 * conditional, not unique: N CPUs x M pins write mm->flags at least once and at most once
 * per CPU in `once` mode (CPUs that race on their first pin may all see the bit clear), and
 * N x M times in `always` mode.
 */
static void gup_has_pinned_written_once(struct ktest *t)
{
	unsigned int pins = 200;
	u64 once = count_flag_writes(t, "once", pins);
	u64 always = count_flag_writes(t, "always", pins);

	ktest_printf(t, "%u CPUs x %u pins: flag writes once=%llu always=%llu", lab_nr_cpus(),
		     pins, (unsigned long long)once, (unsigned long long)always);
	KT_EXPECT_GE(t, once, 1ull);
	KT_EXPECT_LE(t, once, (u64)lab_nr_cpus());
	KT_EXPECT_EQ(t, always, (u64)lab_nr_cpus() * pins);
}

static const struct ktest_case gup_private_cases[] = {
	KTEST_CASE_NOFAIL(gup_pin_unpin_balance, "pins exactly 64 faulted pages"),
	KTEST_CASE_CONCURRENT_NOFAIL(gup_has_pinned_written_once,
				     "counts pins of a populated range"),
};
KTEST_SUITE(gup_private, gup_private_cases, .exit = gup_private_exit);
