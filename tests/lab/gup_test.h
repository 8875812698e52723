/*
 * The gup_test benchmark core (Linux's mm/gup_test.c): one thread's timed get/pin loop over a
 * range, an untimed check of the pin state, then the timed release loop, through the public
 * gup API only. Threads, timing units and printing belong to the caller (kernel:
 * tests/bench/bench_gup.c; host: tests/host/test_gup.c).
 */
#ifndef LAB_GUP_TEST_H
#define LAB_GUP_TEST_H

#include "mm/gup.h"

enum gup_test_cmd {
	GUP_FAST_BENCHMARK = 1,		/* -u: get_user_pages_fast */
	PIN_FAST_BENCHMARK = 2,		/* -a: pin_user_pages_fast */
	PIN_LONGTERM_BENCHMARK = 3,	/* -L: pin_user_pages(FOLL_LONGTERM) */
};

struct gup_test {
	enum gup_test_cmd cmd;
	u64 addr, size;			/* in: range; out: size actually done (truncation) */
	unsigned long nr_pages_per_call;	/* -n; 0: the whole range in one call */
	unsigned int gup_flags;		/* FOLL_WRITE by default, as the selftest */
	struct page **pages;		/* caller's array, size / PAGE_SIZE entries */
	/* out: */
	u64 get_cycles, put_cycles;	/* arch_cycles() deltas of the two timed loops */
	u64 verify_failures;		/* pages not in the expected pin state after the get loop */
	long error;			/* first negative return of a get call, or 0 */
};

/* Run one thread's benchmark on mm; 0, or -1 if nothing could be taken. */
int gup_test_run(struct mm_struct *mm, struct gup_test *gt);
const char *gup_test_cmd_name(enum gup_test_cmd cmd);

#endif
