/*
 * Pinning pages of an address space (FOLL_PIN) and taking plain references (FOLL_GET), as
 * Linux's get_user_pages family: a lockless fast walk with IRQs off, a slow path under
 * mmap_lock and mm->lock, FOLL_LONGTERM migration, and the has-pinned flag written once
 * (mm/gup.c).
 */
#ifndef MM_GUP_H
#define MM_GUP_H

#include "mm/vm.h"
#include "mm/mmzone.h"

#define FOLL_WRITE	0x01u	/* the caller will write: the mapping must be writable */
#define FOLL_GET	0x02u	/* take a reference (+1); release with put_page() */
#define FOLL_PIN	0x04u	/* take a pin (+GUP_PIN_COUNTING_BIAS); release with unpin_user_page() */
#define FOLL_LONGTERM	0x08u	/* a pin held indefinitely: never on a MOVABLE page */
#define FOLL_FAST_ONLY	0x10u	/* do not fall back to the slow path */

/*
 * An order-0 page is pinned by adding 1024 to its reference count, so a pin can be told from
 * ordinary references without any extra field: page_maybe_dma_pinned() is refcount >= 1024.
 * That test has false positives (1024 plain references look like a pin) but never false
 * negatives. A large page (order > 0) instead keeps an exact pin count in page[1] and
 * takes one reference per pin.
 */
#define GUP_PIN_COUNTING_BIAS 1024

/*
 * A large data page (mm/vm.c maps 2 MiB pages) is one allocated block: its tails record their
 * distance from the head in compound_off (set when the page is faulted in), and page[1]
 * holds the exact pin count. Order-0 pages are their own head. The head's lru belongs to
 * mm/vm.c while the page is mapped: the page table deposited with a 2 MiB leaf, then
 * munmap's queue of references to drop after its shootdown; empty otherwise.
 */
static inline struct page *compound_head(struct page *page)
{
	return page - READ_ONCE(page->compound_off);
}

static inline u32 *compound_pincount_ptr(struct page *head)
{
	return &head[1].compound_pincount;
}

/* Mark a freshly allocated block of 2^order pages as one data page (head first). */
static inline void prep_compound_page(struct page *head, unsigned int order)
{
	WRITE_ONCE(head->compound_off, 0);
	INIT_LIST_HEAD(&head->lru);
	for (unsigned long i = 1; i < (1ul << order); i++)
		WRITE_ONCE(head[i].compound_off, (u16)i);
	if (order)
		*compound_pincount_ptr(head) = 0;
}

/* Only stable while a reference is held (the allocator writes order at allocation). */
static inline bool page_is_large(const struct page *head)
{
	return READ_ONCE(head->order) > 0;
}

bool page_maybe_dma_pinned(struct page *page);
/* Exact pin count of a large page's head (0 for order-0 pages). */
u32 page_pincount(struct page *page);

/*
 * Linux 292648ac5cf1 ("mm: gup: allow FOLL_PIN to scale in SMP"): "every-pin" is the code
 * before it (write the flag on every pin call), "if-clear" the code after (read it, and
 * write it only when it is clear: check, then set, so CPUs racing on their first pin may
 * each write it once).
 */
enum gup_has_pinned_mode { GUP_HAS_PINNED_IF_CLEAR, GUP_HAS_PINNED_EVERY_PIN };
extern enum gup_has_pinned_mode gup_has_pinned_mode;
int gup_set_has_pinned_mode(const char *name);	/* "if-clear" | "every-pin": 0, or -1 */

/*
 * Pin or get nr_pages pages from start. Fast walk first; what it could not take goes to the
 * slow path (which faults pages in inside VMAs) unless FOLL_FAST_ONLY. Returns the number of
 * pages taken (maybe fewer than asked: the caller releases them), or a negative errno:
 * -EINVAL (bad flags: FOLL_GET with FOLL_PIN, or neither), -EFAULT (nothing mapped at start),
 * -ENOMEM, -EBUSY (longterm migration failed).
 */
long pin_user_pages_fast(struct mm_struct *mm, u64 start, unsigned long nr_pages,
			 unsigned int gup_flags, struct page **pages);
long get_user_pages_fast(struct mm_struct *mm, u64 start, unsigned long nr_pages,
			 unsigned int gup_flags, struct page **pages);
/* Slow path only (mmap_lock and mm->lock taken inside): Linux's pin_user_pages(). */
long pin_user_pages(struct mm_struct *mm, u64 start, unsigned long nr_pages,
		    unsigned int gup_flags, struct page **pages);

void unpin_user_page(struct page *page);
void unpin_user_pages(struct page **pages, unsigned long nr_pages);
/* Release pages taken with FOLL_GET. */
void put_user_pages(struct page **pages, unsigned long nr_pages);

/*
 * Race testing (CONFIG_DEBUG_VM builds): when set, the lockless walk calls the hook at these
 * points, interrupts off as the walk has them, so that a test can make another CPU act at
 * exactly that moment (unmap the range while a walker is inside) instead of hoping the two
 * meet. NULL, and never called, in normal runs; the kernel never sets it.
 */
enum gup_race_point {
	GUP_RACE_PTE_TABLE,	/* the pmd entry is read, the page table below it not yet */
	GUP_RACE_GRAB,		/* a pte is read and checked, its page not yet grabbed */
};
extern void (*gup_fast_race_hook)(enum gup_race_point point, struct mm_struct *mm, u64 addr);

/* Pins taken and released over all CPUs: equal when nothing is pinned. */
struct gup_totals {
	u64 pins_acquired, pins_released, longterm_migrated, fast_fallbacks;
};
void gup_read_totals(struct gup_totals *t);

#endif
