/*
 * gup_test: times get/pin calls over a range, checks the result untimed, times the release.
 * A faithful copy of the kernel side of Linux's gup_test ioctl, without the ioctl.
 */
#include "tests/lab/gup_test.h"
#include "tests/c2c/c2c_mark.h"

const char *gup_test_cmd_name(enum gup_test_cmd cmd)
{
	switch (cmd) {
	case GUP_FAST_BENCHMARK: return "GUP_FAST_BENCHMARK";
	case PIN_FAST_BENCHMARK: return "PIN_FAST_BENCHMARK";
	case PIN_LONGTERM_BENCHMARK: return "PIN_LONGTERM_BENCHMARK";
	}
	return "?";
}

static long gup_test_call(struct mm_struct *mm, const struct gup_test *gt, u64 addr,
			  unsigned long nr, struct page **pages)
{
	switch (gt->cmd) {
	case GUP_FAST_BENCHMARK:
		return get_user_pages_fast(mm, addr, nr, gt->gup_flags, pages);
	case PIN_FAST_BENCHMARK:
		return pin_user_pages_fast(mm, addr, nr, gt->gup_flags, pages);
	case PIN_LONGTERM_BENCHMARK:
		return pin_user_pages(mm, addr, nr, gt->gup_flags | FOLL_LONGTERM, pages);
	}
	return -EINVAL;
}

/* The timed get loop; returns the number of pages taken. */
static unsigned long gup_test_get(struct mm_struct *mm, struct gup_test *gt)
{
	unsigned long total = gt->size >> PAGE_SHIFT, done = 0;
	unsigned long step = gt->nr_pages_per_call ? gt->nr_pages_per_call : total;

	while (done < total) {
		unsigned long nr = MIN(step, total - done);
		long n = gup_test_call(mm, gt, gt->addr + done * PAGE_SIZE, nr, gt->pages + done);

		if (n <= 0) {
			gt->error = n;
			break;
		}
		done += (unsigned long)n;
		if ((unsigned long)n < nr)
			break;	/* short: report the truncated size, as the selftest does */
	}
	return done;
}

/* Untimed: every page must look pinned (and be pinnable long-term for -L). */
static void gup_test_verify(struct gup_test *gt, unsigned long nr)
{
	if (gt->cmd == GUP_FAST_BENCHMARK)
		return;
	for (unsigned long i = 0; i < nr; i++) {
		struct page *head = compound_head(gt->pages[i]);

		if (!page_maybe_dma_pinned(gt->pages[i]) ||
		    (gt->cmd == PIN_LONGTERM_BENCHMARK && head->mt == MIGRATE_MOVABLE))
			gt->verify_failures++;
	}
}

int gup_test_run(struct mm_struct *mm, struct gup_test *gt)
{
	unsigned long nr;
	u64 t0, t1;

	gt->error = 0;
	gt->verify_failures = 0;
	t0 = arch_cycles();
	c2c_cpu_begin();	/* a c2c window counts the get loop (tests/bench/bench_gup.c) */
	nr = gup_test_get(mm, gt);
	c2c_cpu_end();
	t1 = arch_cycles();
	gt->get_cycles = t1 - t0;
	gt->size = (u64)nr << PAGE_SHIFT;
	gup_test_verify(gt, nr);
	t0 = arch_cycles();
	if (gt->cmd == GUP_FAST_BENCHMARK)
		put_user_pages(gt->pages, nr);
	else
		unpin_user_pages(gt->pages, nr);
	gt->put_cycles = arch_cycles() - t0;
	return nr ? 0 : -1;
}
