/*
 * A batch of order-0 pages under one per-CPU list hold, as Linux's alloc_pages_bulk(): the
 * lab's, built on mm/mm_test.h (no kernel code needs a batch; tests, the fuzzer and the
 * fault-injection suite exercise one). Not an allocator of its own: the pages come off this
 * CPU's list by mm/page_alloc.c's __rmqueue_pcplist().
 */
#ifndef TESTS_LAB_PCP_BULK_H
#define TESTS_LAB_PCP_BULK_H

#include "mm/mm.h"

/*
 * Fill the NULL entries of pages[nr] with order-0 pages of pgdat's own zones under one hold
 * of this CPU's list (refilled from the buddy lists as needed); returns how many entries are
 * non-NULL afterwards. If the list is busy, no zone has room for all of them above its low
 * watermark, fail_page_alloc fails the batch (as Linux's), or nothing came, one ordinary
 * allocation fills one entry instead.
 */
unsigned int alloc_pages_bulk_node(struct pglist_data *pgdat, gfp_t gfp, unsigned int nr,
				   struct page **pages);

#endif
