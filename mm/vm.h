/*
 * Address spaces for the pinning code and the fault benchmark: struct mm_struct with its own
 * 4-level page table, anonymous regions (VMAs), page faults, unmapping. Not the kernel's own
 * page tables (arch/x86_64/paging.c), and never loaded into CR3: gup walks them in software.
 */
#ifndef MM_VM_H
#define MM_VM_H

#include "kernel/compiler.h"
#include "kernel/errno.h"
#include "kernel/spinlock.h"
#include "kernel/rwlock.h"
#include "kernel/list.h"
#include <arch/pgtable.h>

struct pglist_data;
struct page;

#define MM_MAX_VMAS 16
#define MMF_HAS_PINNED 28	/* bit in mm->flags: FOLL_PIN has run on this mm; never cleared */

struct vm_area {
	u64 start, end;		/* [start, end), page aligned */
	bool writable;
	bool huge;		/* populated with 2 MiB pages (order 9), mapped by level-2 leaves,
				 * where a whole aligned 2 MiB fits (after munmap cut it, the
				 * rest gets 4 KiB pages, as Linux's THP fallback; so does a
				 * fault that finds no free 2 MiB block) */
};

/* Per-CPU counters of one address space, each CPU on its own cache line. */
struct mm_cpu_stats {
	u64 flag_writes;	/* writes (atomic RMWs) to mm->flags */
	u64 faults;		/* pages faulted in */
	u64 fast_pages;		/* pages taken by the lockless walk */
	u64 slow_pages;		/* pages taken under mm->lock */
	u64 poison_reads;	/* page-table entries read that held the free-page poison */
	u64 migration_waits;	/* faults that found their page being migrated, and waited */
	u64 thp_fallbacks;	/* 2 MiB faults that found no free 2 MiB block and mapped a
				 * 4 KiB page (Linux's thp_fault_fallback) */
} __cacheline_aligned;

/*
 * Locking rules:
 *   flags is written with atomic RMWs by any CPU and read without locks. Alone on its cache
 *   line, so the has-pinned write (or its absence) is all that touches that line.
 *   mmap_lock keeps a fault's VMA and the page tables it walks alive until it has installed
 *   its page, the rule Linux gets from mmap_lock: held for read by every fault from its VMA
 *   lookup to its install and by gup's slow path, for write by mmap and munmap, the only
 *   writers of vmas[] and nr_vmas and the only ones that free a page table. So munmap waits
 *   for the faults in its range to finish, then finds and removes what they installed; a
 *   fault that comes after finds no VMA. Alone on its line (every fault writes it). Taken
 *   with IRQs on: a waiter still answers the TLB shootdown that a holder may be sending.
 *   lock (inside mmap_lock) serialises every change that removes or replaces a page-table
 *   entry: unmap (mmap_lock held for write) and FOLL_LONGTERM migration (held for read).
 *   Taken with IRQs on, like mmap_lock.
 *   A leaf entry is one of: empty (0), present, or a migration entry (arch/pgtable.h).
 *   - empty -> present: faults, mmap_lock held for read, with cmpxchg; the loser frees its page.
 *   - present -> empty: unmap, under both locks, then a TLB shootdown before anything is freed.
 *   - present -> migration -> present (old or new page): migration, under lock, with a
 *     shootdown in between. Only the migrator writes over a migration entry, so it never
 *     overwrites a fault's page; a fault that finds one waits until it is gone, with IRQs on
 *     (the migrator holds mmap_lock for read too, so a writer waiting cannot stop it).
 *     Migration entries exist only while their migrator holds lock.
 *   - 2 MiB leaf -> table of 4 KiB entries mapping the same pages: munmap of part of it,
 *     under both locks (mmap_lock for write). The table was deposited with the leaf.
 *   Page tables are installed (empty -> table) by faults with cmpxchg; munmap detaches them,
 *   holding mmap_lock for write (so no fault is inside one), and frees them after the
 *   shootdown. No walk goes through a 2 MiB leaf as if it were a table. The lockless walk
 *   (mm/gup.c) takes neither lock: it runs with IRQs off and so holds up that shootdown.
 */
struct mm_struct {
	unsigned long flags __cacheline_aligned;	/* MMF_* bits */
	rwlock_t mmap_lock __cacheline_aligned;

	struct pglist_data *node __cacheline_aligned;	/* its machine's pages: faults take
							 * them from the faulting CPU's node */
	pte_t *pgd;			/* top-level table, direct-map address */
	struct mm_cpu_stats *stats;	/* [node->nr_cpus] */
	struct page *stats_page;
	unsigned int stats_order;

	spinlock_t lock;
	/* Under mmap_lock (written only with it held for write): */
	struct vm_area vmas[MM_MAX_VMAS];
	unsigned int nr_vmas;
	/* Atomic: */
	long nr_pt_pages;		/* page-table pages, the top level included */
	long rss;			/* data pages mapped */
};

/* A new, empty address space whose pages come from node; NULL if out of memory. */
struct mm_struct *mm_create(struct pglist_data *node);
/* Unmap everything, free the page tables and the mm. */
void mm_destroy(struct mm_struct *mm);

/*
 * Add an anonymous region; populate: fault every page in now (gup_test's pre-fault). 0 or
 * -errno; after -ENOMEM the region stays, populated up to the failed page (later faults and
 * pins fill it in; munmap or mm_destroy frees it).
 */
int mm_mmap_anon(struct mm_struct *mm, u64 start, u64 len, bool writable, bool huge, bool populate);
/*
 * Remove mappings in [start, start+len) and the VMAs there; frees pages and empty tables.
 * A 2 MiB page the range covers in part is split (its other 4 KiB pages stay mapped, with
 * their data). 0, or -EINVAL (start not page aligned, len 0, the range past USER_VA_END;
 * len is rounded up to pages) or -ENOMEM (a region would be split in two with the VMA table
 * full): on an error nothing has changed. As Linux's munmap().
 */
int mm_munmap(struct mm_struct *mm, u64 start, u64 len);

/*
 * Fault in one page at addr: allocate a zeroed MOVABLE page (order 9 in a huge VMA) and
 * install it with cmpxchg. 0 (also if another CPU won the race), -EFAULT outside any VMA,
 * -ENOMEM. Takes mmap_lock for read (a munmap of the range waits until the page is in); if
 * the page there is being migrated, waits until it is back. IRQs must be on.
 */
int handle_mm_fault(struct mm_struct *mm, u64 addr);
/*
 * handle_mm_fault() with mmap_lock (read) and mm->lock held (the gup slow path), allocating
 * with gfp: a long-term pin faults pages in without __GFP_MOVABLE (Linux's PF_MEMALLOC_PIN),
 * so they need no move.
 */
int __handle_mm_fault(struct mm_struct *mm, u64 addr, unsigned int gfp);

/*
 * Race testing (CONFIG_DEBUG_VM builds), as gup_fast_race_hook (mm/gup.h): when set, a fault
 * calls it with its VMA found, its page allocated and not yet installed (mmap_lock held for
 * read, IRQs on), so that a test can munmap the range from another CPU at that moment. NULL,
 * and never called, in normal runs; the kernel never sets it.
 */
extern void (*fault_race_hook)(struct mm_struct *mm, u64 addr);

/* Under mm->lock: the leaf entry for addr and its level (1, or 2 for a huge leaf), or NULL. */
pte_t *__mm_find_leaf(struct mm_struct *mm, u64 addr, int *level);
/* FOLL_LONGTERM migration (mm/gup.c), under mm->lock: a 2 MiB page's copy takes over the page
 * table deposited with the old one (for its split; mm/vm.c). */
void pgtable_trans_huge_move(struct page *from, struct page *to);
/* Send a TLB shootdown to every CPU and wait until each has answered. IRQs must be on. */
void mm_tlb_shootdown(struct mm_struct *mm);

static inline struct mm_cpu_stats *mm_this_cpu_stats(struct mm_struct *mm);

/*
 * Page-table entries are read and written as single atomic words: lockless walkers race
 * with faults (cmpxchg) and unmaps, and must see either the old or the new entry. A read is
 * an acquire so that what was written before the entry was installed (the zeroed table
 * below it, the page's struct page) is seen by whoever follows it.
 */
static inline pte_t ptep_get(pte_t *p)
{
	arch_interleave_point();
	return smp_load_acquire(p);
}

static inline void set_pte(pte_t *p, pte_t e)
{
	arch_interleave_point();
	smp_store_release(p, e);
}
u64 mm_sum_stat(const struct mm_struct *mm, size_t offset);
#define MM_STAT(mm, field) mm_sum_stat(mm, offsetof(struct mm_cpu_stats, field))

#include "kernel/arch.h"
static inline struct mm_cpu_stats *mm_this_cpu_stats(struct mm_struct *mm)
{
	return &mm->stats[arch_cpu_id()];
}

#endif
