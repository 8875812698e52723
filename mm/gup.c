/*
 * get_user_pages / pin_user_pages: take references or pins on the pages behind an address
 * range. The fast path walks the page tables with IRQs off and no lock; the slow path takes
 * mmap_lock (read) and mm->lock, faults pages in and migrates MOVABLE pages away from
 * FOLL_LONGTERM pins.
 */
#include "mm/gup.h"
#include "mm/mm.h"
#include "kernel/cmdline.h"
#include "kernel/string.h"

#define PTE_POISON_VALUE (0x0101010101010101ull * PAGE_POISON)
#define HUGE_SIZE PT_LEVEL_SIZE(2)
#define PAGE_REF_MAX __INT32_MAX__	/* page->refcount is an s32 */

/* Per-CPU pin accounting, each CPU on its own line: acquired == released when idle. */
struct gup_cpu_totals {
	u64 acquired, released, migrated, fallbacks;
} __cacheline_aligned;
static struct gup_cpu_totals *gup_totals;	/* [nr_gup_cpus]: gup_percpu_set() */
static unsigned int nr_gup_cpus;

enum gup_has_pinned_mode gup_has_pinned_mode = GUP_HAS_PINNED_IF_CLEAR;

static struct gup_cpu_totals *this_cpu_totals(void)
{
	VM_BUG_ON(arch_cpu_id() >= nr_gup_cpus);
	return &gup_totals[arch_cpu_id()];
}

size_t gup_percpu_size(void)
{
	return sizeof(struct gup_cpu_totals);
}

void gup_percpu_set(void *mem, unsigned int nr_cpus)
{
	if (gup_totals)
		return;	/* the first caller's (see mm/mm_test.h) */
	gup_totals = mem;
	nr_gup_cpus = nr_cpus;
}

int gup_set_has_pinned_mode(const char *name)
{
	if (!strcmp(name, "if-clear"))
		gup_has_pinned_mode = GUP_HAS_PINNED_IF_CLEAR;
	else if (!strcmp(name, "every-pin"))
		gup_has_pinned_mode = GUP_HAS_PINNED_EVERY_PIN;
	else
		return -1;
	return 0;
}

static int set_has_pinned(const char *val)
{
	return val ? gup_set_has_pinned_mode(val) : -1;
}
CMDLINE_FUNC("gup.has_pinned", set_has_pinned,
	     "if-clear|every-pin: set the has-pinned flag only when a read finds it clear (Linux "
	     "292648ac5cf1), or on every pin call (before it)");

/*
 * Linux 292648ac5cf1 ("mm: gup: allow FOLL_PIN to scale in SMP"): before it, every pin call
 * stored the flag, so N CPUs pinning in one mm all wrote the same cache line, which then
 * bounced between them. Reading first costs a shared read; the line stays clean in every
 * cache. The write is conditional, not unique (check, then set, hence "if-clear"): CPUs that
 * all read the bit clear on their first pin each set it (at most once per CPU), which is
 * harmless, since setting a set bit changes nothing, and rare, since it stops as soon as the
 * bit is visible. Nothing in smpmm reads the flag: Linux's reader is fork(), which copies a
 * page that may be DMA-pinned instead of sharing it (page_needs_cow_for_dma(), only in an
 * mm with the flag set); smpmm has no fork (docs/pinning.md).
 */
static void mm_set_has_pinned_flag(struct mm_struct *mm)
{
	if (gup_has_pinned_mode == GUP_HAS_PINNED_IF_CLEAR &&
	    (READ_ONCE(mm->flags) & (1ul << MMF_HAS_PINNED)))
		return;
	__atomic_fetch_or(&mm->flags, 1ul << MMF_HAS_PINNED, __ATOMIC_RELAXED);
	mm_this_cpu_stats(mm)->flag_writes++;
}

/* ---- references and pins ---- */

/*
 * The reference count is 32 bits and a pin of an order-0 page adds 1024, so 2^21 pins of one
 * page would wrap it: the page would then look free (refusing every later pin) and its next
 * put would look like a double free. Refuse, with a warning, what would take the count past
 * PAGE_REF_MAX, as Linux refuses a pin once the count has gone negative (try_grab_folio(),
 * after Linus Torvalds' "mm: prevent get_user_pages() from overflowing page refcount").
 */
static bool page_ref_would_overflow(int old, int refs)
{
	return old > PAGE_REF_MAX - refs;
}

/*
 * Add refs unless the count is zero (the page is being freed: -EAGAIN) or would overflow
 * (-ENOMEM, with a warning). A sequentially consistent RMW: a full barrier on success.
 */
static int page_ref_try_add(struct page *page, int refs)
{
	int old = READ_ONCE(page->refcount);

	do {
		if (old <= 0)
			return -EAGAIN;
		if (WARN_ON(page_ref_would_overflow(old, refs)))
			return -ENOMEM;
	} while (!__atomic_compare_exchange_n(&page->refcount, &old, old + refs, true,
					      __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
	return 0;
}

/*
 * Take refs references or pins on page's head: 0, -EAGAIN if the page is being freed,
 * -ENOMEM if its count would overflow. One plain reference comes first: until we hold it
 * the page may be freed and reused as part of a block of another order, so its head and
 * order are read again once they cannot change.
 */
static int try_grab_page(struct page *page, int refs, unsigned int flags)
{
	struct page *head = compound_head(page);
	int more, err;

	if ((err = page_ref_try_add(head, 1)))
		return err;
	if (unlikely(compound_head(page) != head)) {
		put_page(head);
		return -EAGAIN;
	}
	if ((flags & FOLL_GET) || page_is_large(head))
		more = refs - 1;
	else
		more = refs * GUP_PIN_COUNTING_BIAS - 1;
	if (more && (err = page_ref_try_add(head, more))) {
		put_page(head);
		return err;
	}
	/*
	 * Pin, then re-check the entry: a full barrier between the two, pairing with "clear the
	 * entry, then check the references" in migration. A pin's last atomic is a sequentially
	 * consistent RMW, which is that barrier (on x86 any locked instruction is; Linux:
	 * smp_mb__after_atomic()): the count's for an order-0 page, the pin count's for a large one.
	 */
	if (flags & FOLL_PIN) {
		if (page_is_large(head))
			__atomic_fetch_add(compound_pincount_ptr(head), (u32)refs, __ATOMIC_SEQ_CST);
		this_cpu_totals()->acquired += (u64)refs;
	}
	return 0;
}

/* Drop what try_grab_page() took; the last reference frees the page. */
static void gup_put_page(struct page *page, int refs, unsigned int flags)
{
	struct page *head = compound_head(page);
	int drop = refs;

	if (flags & FOLL_PIN) {
		if (page_is_large(head))
			__atomic_fetch_sub(compound_pincount_ptr(head), (u32)refs, __ATOMIC_RELAXED);
		else
			drop = refs * GUP_PIN_COUNTING_BIAS;
		this_cpu_totals()->released += (u64)refs;
	}
	/* Keep one reference for put_page(), which frees on the last one. */
	if (drop > 1)
		__atomic_fetch_sub(&head->refcount, drop - 1, __ATOMIC_RELEASE);
	put_page(head);
}

bool page_maybe_dma_pinned(struct page *page)
{
	struct page *head = compound_head(page);

	if (page_is_large(head))
		return READ_ONCE(*(compound_pincount_ptr(head))) > 0;
	return (unsigned int)page_count(head) >= GUP_PIN_COUNTING_BIAS;
}

u32 page_pincount(struct page *page)
{
	struct page *head = compound_head(page);

	return page_is_large(head) ? READ_ONCE(*(compound_pincount_ptr(head))) : 0;
}

/* A longterm pin must not sit on a page that was allocated MOVABLE (it could never move). */
static bool page_longterm_pinnable(struct page *page)
{
	return compound_head(page)->mt != MIGRATE_MOVABLE;
}

void unpin_user_page(struct page *page)
{
	gup_put_page(page, 1, FOLL_PIN);
}

void unpin_user_pages(struct page **pages, unsigned long nr_pages)
{
	for (unsigned long i = 0; i < nr_pages; i++)
		unpin_user_page(pages[i]);
}

void put_user_pages(struct page **pages, unsigned long nr_pages)
{
	for (unsigned long i = 0; i < nr_pages; i++)
		gup_put_page(pages[i], 1, FOLL_GET);
}

void gup_read_totals(struct gup_totals *t)
{
	*t = (struct gup_totals){ 0 };
	for (unsigned int cpu = 0; cpu < nr_gup_cpus; cpu++) {
		t->pins_acquired += READ_ONCE(gup_totals[cpu].acquired);
		t->pins_released += READ_ONCE(gup_totals[cpu].released);
		t->longterm_migrated += READ_ONCE(gup_totals[cpu].migrated);
		t->fast_fallbacks += READ_ONCE(gup_totals[cpu].fallbacks);
	}
}

/* ---- the lockless walk (IRQs off) ---- */

void (*gup_fast_race_hook)(enum gup_race_point point, struct mm_struct *mm, u64 addr);

static inline void gup_race_point(enum gup_race_point point, struct mm_struct *mm, u64 addr)
{
	void (*hook)(enum gup_race_point, struct mm_struct *, u64);

	if (!CONFIG_DEBUG_VM)
		return;
	hook = smp_load_acquire(&gup_fast_race_hook);
	if (unlikely(hook))
		hook(point, mm, addr);
}

/* An entry holding the free-page poison was read from a freed page table: count it. */
static bool pte_is_poison(struct mm_struct *mm, pte_t e)
{
	if (likely(e != PTE_POISON_VALUE))
		return false;
	mm_this_cpu_stats(mm)->poison_reads++;
	return true;
}

/* Can the fast walk take the page behind this leaf entry? */
static bool gup_leaf_ok(struct mm_struct *mm, pte_t e, unsigned int flags)
{
	if (pte_is_poison(mm, e) || !pte_present(e) || pte_special(e) ||
	    ((flags & FOLL_WRITE) && !pte_write(e)))
		return false;
	if (!pfn_valid(mm->node, pte_pfn(e)))
		return false;
	return !(flags & FOLL_LONGTERM) || page_longterm_pinnable(pfn_to_page(mm->node, pte_pfn(e)));
}

/* The 4 KiB entries of one page table, [addr, end). Returns the number of pages taken. */
static long gup_pte_range(struct mm_struct *mm, pte_t pmd, pte_t *pmdp, u64 addr, u64 end,
			  unsigned int flags, struct page **pages)
{
	pte_t *ptep = (pte_t *)arch_phys_to_virt((u64)pte_pfn(pmd) << PAGE_SHIFT) +
		      pt_index_of(addr, 1);
	long n = 0;

	gup_race_point(GUP_RACE_PTE_TABLE, mm, addr);
	for (; addr < end; addr += PAGE_SIZE, ptep++) {
		pte_t pte = ptep_get(ptep);
		struct page *page;

		if (!gup_leaf_ok(mm, pte, flags))
			break;
		page = pfn_to_page(mm->node, pte_pfn(pte));
		gup_race_point(GUP_RACE_GRAB, mm, addr);
		if (try_grab_page(page, 1, flags))
			break;
		/* Grabbed, then re-check: if either entry changed, an unmap raced with us. */
		if (ptep_get(pmdp) != pmd || ptep_get(ptep) != pte) {
			gup_put_page(page, 1, flags);
			break;
		}
		pages[n++] = page;
	}
	return n;
}

/* A 2 MiB leaf: grab all the needed subpages at once on the head, then re-check. */
static long gup_huge_pmd(struct mm_struct *mm, pte_t pmd, pte_t *pmdp, u64 addr, u64 end,
			 unsigned int flags, struct page **pages)
{
	struct page *head = pfn_to_page(mm->node, pte_pfn(pmd));
	unsigned long idx = (addr & (HUGE_SIZE - 1)) >> PAGE_SHIFT;
	int refs = (int)((end - addr) >> PAGE_SHIFT);

	if (!gup_leaf_ok(mm, pmd, flags) || try_grab_page(head, refs, flags))
		return 0;
	if (ptep_get(pmdp) != pmd) {
		gup_put_page(head, refs, flags);
		return 0;
	}
	for (int i = 0; i < refs; i++)
		pages[i] = head + idx + (unsigned long)i;
	return refs;
}

/* Read each upper level once; NULL (stop) on anything not present. */
static pte_t *gup_walk_to_pmd(struct mm_struct *mm, u64 addr, pte_t *pmd)
{
	pte_t *table = mm->pgd;

	for (int level = PT_LEVELS; level >= 2; level--) {
		pte_t *slot = &table[pt_index_of(addr, level)];
		pte_t e = ptep_get(slot);

		if (pte_is_poison(mm, e) || !pte_present(e))
			return NULL;
		if (level == 2) {
			*pmd = e;
			return slot;
		}
		table = arch_phys_to_virt((u64)pte_pfn(e) << PAGE_SHIFT);
	}
	return NULL;
}

static long gup_fast_walk(struct mm_struct *mm, u64 start, unsigned long nr, unsigned int flags,
			  struct page **pages)
{
	u64 addr = start, end = start + nr * PAGE_SIZE;
	long got = 0;

	while (addr < end) {
		u64 next = MIN(ALIGN_DOWN(addr, HUGE_SIZE) + HUGE_SIZE, end);
		pte_t pmd, *pmdp = gup_walk_to_pmd(mm, addr, &pmd);
		long n;

		if (!pmdp)
			break;
		n = pte_huge(pmd) ? gup_huge_pmd(mm, pmd, pmdp, addr, next, flags, pages + got)
				  : gup_pte_range(mm, pmd, pmdp, addr, next, flags, pages + got);
		got += n;
		if (addr + (u64)n * PAGE_SIZE != next)
			break;
		addr = next;
	}
	return got;
}

/*
 * Interrupts are off for the whole walk: page tables are freed only after a TLB shootdown
 * IPI has been answered by every CPU (mm_munmap), and this CPU cannot answer until the walk
 * is over, so no table it reads can be freed and reused under it.
 */
static long gup_fast(struct mm_struct *mm, u64 start, unsigned long nr, unsigned int flags,
		     struct page **pages)
{
	unsigned long irq = arch_irq_save();
	long n = gup_fast_walk(mm, start, nr, flags, pages);

	arch_irq_restore(irq);
	mm_this_cpu_stats(mm)->fast_pages += (u64)n;
	return n;
}

/* ---- FOLL_LONGTERM migration (mmap_lock for read, mm->lock) ---- */

/*
 * FOLL_LONGTERM migration replaces the MOVABLE pages mapped in a range with UNMOVABLE
 * copies, MIGRATE_BATCH pages at a time:
 *   prepare: allocate a copy of each page and replace its entry with a migration entry
 *            (arch/pgtable.h): not present, so the lockless walk stops there, and a fault
 *            waits for it to go (mm/vm.c) instead of installing a page of its own;
 *   one TLB shootdown: every lockless walker that could have read the old entry is done,
 *            so the page's reference count can no longer grow behind our back;
 *   commit:  a page that nobody else holds is copied and its entry points at the copy; a
 *            held one (a pin, or a reference taken before the shootdown) cannot move, and
 *            its old entry is put back.
 * A 4 KiB entry of a split 2 MiB page (mm/vm.c) moves alone, to an order-0 copy: it drops
 * its reference on the 2 MiB page, which is freed when its last entry has gone.
 * Only the migrator replaces a migration entry, under mm->lock, so commit may store over it.
 * One pass goes once through the range, so held pages cannot stop it from reaching the rest.
 * Held pages are tried again by the next pass, MIGRATE_PASSES in all (Linux's
 * migrate_pages() tries a busy page 10 times, NR_MAX_MIGRATE_PAGES_RETRY); a page still
 * MOVABLE after that is not pinned, and the caller gets -EBUSY for it.
 */
struct migration {
	pte_t *slot;
	pte_t old_e;
	int level;
	unsigned int order;	/* of the copy: 9 for a 2 MiB leaf, else 0 */
	struct page *new;
};

#define MIGRATE_BATCH 64
#define MIGRATE_PASSES 3

/* Start migrating the leaf *slot maps: false if there is nothing to move (or no memory). */
static bool __migrate_prepare_one(struct mm_struct *mm, pte_t *slot, int level,
				  struct migration *m, int *err)
{
	pte_t e = ptep_get(slot);
	struct page *old, *new;
	unsigned int order;

	if (!pte_present(e))
		return false;
	old = pfn_to_page(mm->node, pte_pfn(e));
	if (page_longterm_pinnable(old))
		return false;
	order = level == 2 ? old->order : 0;
	/* The copy stays on the page's node (Linux: alloc_migration_target(), .nid = the
	 * folio's node): pinning moves a page out of the movable type, never off its node. */
	if (!(new = alloc_pages_node(page_pgdat(old), GFP_KERNEL, order))) {
		*err = -ENOMEM;
		return false;
	}
	prep_compound_page(new, order);
	*m = (struct migration){ slot, e, level, order, new };
	set_pte(slot, mk_migration_entry(e));
	return true;
}

/* Prepare up to MIGRATE_BATCH pages from *addr on; *addr ends past the last one looked at. */
static unsigned int __migrate_prepare(struct mm_struct *mm, u64 *addr, u64 end,
				      struct migration *m, int *err)
{
	unsigned int n = 0;

	while (*addr < end && n < MIGRATE_BATCH && !*err) {
		int level = 1;
		pte_t *slot = __mm_find_leaf(mm, *addr, &level);

		if (slot && __migrate_prepare_one(mm, slot, level, &m[n], err))
			n++;
		if (!*err)
			*addr = level == 2 ? ALIGN_DOWN(*addr, HUGE_SIZE) + HUGE_SIZE : *addr + PAGE_SIZE;
	}
	return n;
}

/*
 * The references that the mappings of head's block hold, all in this mm (nothing else maps
 * a data page): 1 for an order-0 page or a 2 MiB leaf; for a split 2 MiB page, one per entry
 * of its page table (m->slot's) that still maps one of its pages, migration entries too.
 */
static int __migrate_mapped_refs(struct migration *m, struct page *head)
{
	pte_t *table = (pte_t *)ALIGN_DOWN((uintptr_t)m->slot, PAGE_SIZE);
	unsigned long first = page_to_pfn(head), nr = 1ul << head->order;
	int refs = 0;

	if (m->level == 2 || !page_is_large(head))
		return 1;
	for (unsigned int i = 0; i < PTRS_PER_TABLE; i++) {
		pte_t e = ptep_get(&table[i]);

		refs += (pte_present(e) || is_migration_entry(e)) && pte_pfn(e) - first < nr;
	}
	return refs;
}

/*
 * Finish one prepared page: true if it moved, false if someone holds it. Its count is
 * checked, not frozen: Linux freezes a count (folio_ref_freeze()) where a lookup can still
 * find the page and take a reference during the copy (the page cache); an anonymous page
 * it only checks (folio_migrate_mapping()), as here. Once its entry is a migration entry and
 * the shootdown is over, nothing can reach the page: every lockless walker that read the old
 * entry has finished (and let go, on its re-check), a slow-path gup waits for mm->lock, and
 * a fault waits for the entry. So the count cannot grow under the copy, but for a split
 * 2 MiB page's: a walker may still take its block through another of its entries, for
 * another of its 4 KiB pages, which does not move.
 */
static bool __migrate_commit(struct mm_struct *mm, struct migration *m)
{
	struct page *old = pfn_to_page(mm->node, pte_pfn(m->old_e)), *head = compound_head(old);
	int refs = __migrate_mapped_refs(m, head);

	VM_BUG_ON(ptep_get(m->slot) != mk_migration_entry(m->old_e));
	if (page_count(head) != refs) {	/* someone else holds it: it cannot move */
		set_pte(m->slot, m->old_e);
		__free_pages(m->new, m->order);
		return false;
	}
	memcpy(page_address(m->new), page_address(old), PAGE_SIZE << m->order);
	VM_BUG_ON(refs == 1 && page_count(head) != 1);	/* nothing reached it during the copy */
	if (m->level == 2)
		pgtable_trans_huge_move(old, m->new);
	set_pte(m->slot, mk_leaf_entry(page_to_pfn(m->new), pte_write(m->old_e), m->level == 2));
	put_page(head);
	this_cpu_totals()->migrated++;
	return true;
}

/* One pass over [start, end): 0 or -ENOMEM; *busy counts the pages that could not move. */
static int __migrate_pass(struct mm_struct *mm, u64 start, u64 end, unsigned int *busy)
{
	struct migration m[MIGRATE_BATCH];
	u64 addr = start;
	unsigned int n;
	int err = 0;

	while ((n = __migrate_prepare(mm, &addr, end, m, &err))) {
		mm_tlb_shootdown(mm);
		for (unsigned int i = 0; i < n; i++)
			*busy += !__migrate_commit(mm, &m[i]);
	}
	return err;
}

/* Move what is MOVABLE in nr pages from start: 0 when nothing is left, -EBUSY, -ENOMEM. */
static int __migrate_for_longterm(struct mm_struct *mm, u64 start, unsigned long nr)
{
	u64 end = start + nr * PAGE_SIZE;

	assert_rwlock_locked(&mm->mmap_lock);
	assert_spin_locked(&mm->lock);
	for (unsigned int pass = 0; pass < MIGRATE_PASSES; pass++) {
		unsigned int busy = 0;
		int err = __migrate_pass(mm, start, end, &busy);

		if (err || !busy)
			return err;
	}
	return -EBUSY;
}

/* ---- the slow path (mmap_lock for read, mm->lock) ---- */

/*
 * Take one page at addr under both locks, faulting it in until a present leaf maps it (as
 * Linux's follow_page_mask()/faultin_page() loop): a fault that returns 0 may have found the
 * slot taken, so the leaf is looked up again, and an empty slot is never read as a page.
 * -EAGAIN: FOLL_LONGTERM found a MOVABLE page, one that a plain fault installed after the
 * migration pass (a fault of ours that lost its install to it, say).
 */
static int __gup_slow_one(struct mm_struct *mm, u64 addr, unsigned int flags, struct page **out)
{
	gfp_t gfp = (flags & FOLL_LONGTERM) ? GFP_KERNEL : GFP_USER;
	int level, err;
	pte_t *slot, e;
	struct page *page;

	while (!(slot = __mm_find_leaf(mm, addr, &level)) || !pte_present(e = ptep_get(slot)))
		if ((err = __handle_mm_fault(mm, addr, gfp)))
			return err;
	if ((flags & FOLL_WRITE) && !pte_write(e))
		return -EFAULT;
	page = pfn_to_page(mm->node, pte_pfn(e));
	if ((flags & FOLL_LONGTERM) && !page_longterm_pinnable(page))
		return -EAGAIN;
	if (level == 2)
		page += (addr & (HUGE_SIZE - 1)) >> PAGE_SHIFT;
	/* Mapped, so not being freed: only an overflow (-ENOMEM) can refuse it. */
	if ((err = try_grab_page(page, 1, flags)))
		return err;
	*out = page;
	return 0;
}

/*
 * FOLL_LONGTERM first moves what is MOVABLE in the range, then pins. A MOVABLE page found
 * while pinning was installed after the pass (plain faults hold only mmap_lock for read):
 * the pass runs again from that page, as Linux's __gup_longterm_locked() retries on
 * -EAGAIN. Each retry moves that page for good (an installed page stays until a munmap,
 * which waits for us), so the retries end; a pass that could not move everything ends them
 * with its error.
 */
static long gup_slow(struct mm_struct *mm, u64 start, unsigned long nr, unsigned int flags,
		     struct page **pages)
{
	unsigned long i = 0;
	int err, migrate_err = 0;

	VM_BUG_ON(arch_irqs_disabled());	/* waiters must answer the holders' shootdowns */
	read_lock(&mm->mmap_lock);	/* the VMAs, for the faults */
	spin_lock(&mm->lock);
	do {
		if (flags & FOLL_LONGTERM)
			migrate_err = __migrate_for_longterm(mm, start + i * PAGE_SIZE, nr - i);
		for (err = 0; i < nr; i++)
			if ((err = __gup_slow_one(mm, start + i * PAGE_SIZE, flags, &pages[i])))
				break;
	} while (err == -EAGAIN && !migrate_err);
	spin_unlock(&mm->lock);
	read_unlock(&mm->mmap_lock);
	mm_this_cpu_stats(mm)->slow_pages += i;
	if (err == -EAGAIN)
		err = migrate_err;	/* say why the page did not move: -EBUSY, -ENOMEM */
	return i ? (long)i : err;
}

/* ---- entry points ---- */

static long gup_check_args(u64 start, unsigned long nr, unsigned int flags)
{
	if (WARN_ON((flags & FOLL_GET) && (flags & FOLL_PIN)))
		return -EINVAL;
	if (!(flags & (FOLL_GET | FOLL_PIN)) || ((flags & FOLL_LONGTERM) && !(flags & FOLL_PIN)))
		return -EINVAL;
	if (!nr || !IS_ALIGNED(start, PAGE_SIZE) || start >= USER_VA_END ||
	    nr > (USER_VA_END - start) >> PAGE_SHIFT)
		return -EINVAL;
	return 0;
}

static long internal_gup_fast(struct mm_struct *mm, u64 start, unsigned long nr,
			      unsigned int flags, struct page **pages)
{
	long err = gup_check_args(start, nr, flags), n, r;

	if (err)
		return err;
	if (flags & FOLL_PIN)
		mm_set_has_pinned_flag(mm);
	n = gup_fast(mm, start, nr, flags, pages);
	if ((unsigned long)n == nr || (flags & FOLL_FAST_ONLY))
		return n ? n : -EFAULT;
	this_cpu_totals()->fallbacks++;
	r = gup_slow(mm, start + (u64)n * PAGE_SIZE, nr - (unsigned long)n, flags, pages + n);
	if (r < 0)
		return n ? n : r;	/* partial success is a count, never an error */
	return n + r;
}

long pin_user_pages_fast(struct mm_struct *mm, u64 start, unsigned long nr_pages,
			 unsigned int gup_flags, struct page **pages)
{
	return internal_gup_fast(mm, start, nr_pages, gup_flags | FOLL_PIN, pages);
}

long get_user_pages_fast(struct mm_struct *mm, u64 start, unsigned long nr_pages,
			 unsigned int gup_flags, struct page **pages)
{
	if (gup_flags & (FOLL_PIN | FOLL_LONGTERM))
		return -EINVAL;	/* pins only through pin_user_pages*() */
	return internal_gup_fast(mm, start, nr_pages, gup_flags | FOLL_GET, pages);
}

long pin_user_pages(struct mm_struct *mm, u64 start, unsigned long nr_pages,
		    unsigned int gup_flags, struct page **pages)
{
	long err = gup_check_args(start, nr_pages, gup_flags | FOLL_PIN);

	if (err)
		return err;
	mm_set_has_pinned_flag(mm);
	return gup_slow(mm, start, nr_pages, gup_flags | FOLL_PIN, pages);
}
