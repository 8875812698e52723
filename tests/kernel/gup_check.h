/*
 * What the pinning tests of both platforms share (the kernel's gup.c and gup_private.c, the
 * host's tests/host/test_gup.c): counting the pages an address space maps.
 */
#ifndef TESTS_KERNEL_GUP_CHECK_H
#define TESTS_KERNEL_GUP_CHECK_H

#include "mm/gup.h"

/* Pages present in [start, start + nr pages) by a lockless walk (taken and released). */
static inline long mapped_pages(struct mm_struct *mm, u64 start, unsigned long nr)
{
	struct page *p[64];
	long total = 0;

	for (unsigned long i = 0; i < nr; i += 64) {
		long n = get_user_pages_fast(mm, start + i * PAGE_SIZE, MIN(64ul, nr - i),
					     FOLL_FAST_ONLY, p);

		if (n <= 0)
			break;
		put_user_pages(p, (unsigned long)n);
		total += n;
	}
	return total;
}

#endif
