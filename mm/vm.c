/*
 * Address spaces: creating page tables, faulting pages in (mmap_lock held for read), unmapping
 * (held for write) with a TLB shootdown before any page or page table is freed. The rules
 * are in struct mm_struct (mm/vm.h).
 */
#include "mm/vm.h"
#include "mm/mm.h"
#include "mm/gup.h"
#include "kernel/smp.h"
#include "kernel/string.h"
#include "kernel/printk.h"

#define HUGE_ORDER pageblock_order	/* a 2 MiB page: one level-2 leaf */
#define HUGE_SIZE PT_LEVEL_SIZE(2)

static pte_t *pt_table(pte_t e)
{
	return arch_phys_to_virt((u64)pte_pfn(e) << PAGE_SHIFT);
}

/* An entry above the leaves that points at a table (not a 2 MiB leaf, not one being moved). */
static bool pte_is_table(pte_t e)
{
	return pte_present(e) && !pte_huge(e);
}

static unsigned int order_for_bytes(size_t bytes)
{
	unsigned int order = 0;

	while ((PAGE_SIZE << order) < bytes)
		order++;
	return order;
}

struct mm_struct *mm_create(struct pglist_data *node)
{
	BUILD_BUG_ON(sizeof(struct mm_struct) > PAGE_SIZE);
	struct page *mm_page = alloc_pages_node(node, GFP_KERNEL | __GFP_ZERO, 0);
	struct page *pgd = alloc_pages_node(node, GFP_KERNEL | __GFP_ZERO, 0);
	unsigned int stats_order = order_for_bytes(node->nr_cpus * sizeof(struct mm_cpu_stats));
	struct page *stats = alloc_pages_node(node, GFP_KERNEL | __GFP_ZERO, stats_order);
	struct mm_struct *mm;

	if (!mm_page || !pgd || !stats) {
		if (mm_page)
			__free_pages(mm_page, 0);
		if (pgd)
			__free_pages(pgd, 0);
		if (stats)
			__free_pages(stats, stats_order);
		return NULL;
	}
	mm = page_address(mm_page);
	mm->node = node;
	mm->pgd = page_address(pgd);
	mm->stats = page_address(stats);
	mm->stats_page = stats;
	mm->stats_order = stats_order;
	mm->nr_pt_pages = 1;
	rwlock_init(&mm->mmap_lock, "mmap_lock");
	spin_lock_init(&mm->lock, "mm", 0);
	return mm;
}

void mm_destroy(struct mm_struct *mm)
{
	struct pglist_data *node = mm->node;

	mm_munmap(mm, 0, USER_VA_END);
	VM_BUG_ON(mm->rss != 0 || mm->nr_pt_pages != 1);
	__free_pages(virt_to_page(node, mm->pgd), 0);
	__free_pages(mm->stats_page, mm->stats_order);
	__free_pages(virt_to_page(node, mm), 0);
}

u64 mm_sum_stat(const struct mm_struct *mm, size_t offset)
{
	u64 sum = 0;

	for (unsigned int cpu = 0; cpu < mm->node->nr_cpus; cpu++)
		sum += READ_ONCE(*(const u64 *)((const char *)&mm->stats[cpu] + offset));
	return sum;
}

/* ---- VMAs: changed with mmap_lock held for write, read with it held ---- */

/* The VMA holding addr, or NULL. Stays put while mmap_lock is held. */
static const struct vm_area *__mm_find_vma(const struct mm_struct *mm, u64 addr)
{
	assert_rwlock_locked(&mm->mmap_lock);
	for (unsigned int i = 0; i < mm->nr_vmas; i++)
		if (addr >= mm->vmas[i].start && addr < mm->vmas[i].end)
			return &mm->vmas[i];
	return NULL;
}

static bool __mm_range_free(const struct mm_struct *mm, u64 start, u64 end)
{
	for (unsigned int i = 0; i < mm->nr_vmas; i++)
		if (start < mm->vmas[i].end && mm->vmas[i].start < end)
			return false;
	return true;
}

static int mm_populate(struct mm_struct *mm, u64 start, u64 end);

int mm_mmap_anon(struct mm_struct *mm, u64 start, u64 len, bool writable, bool huge, bool populate)
{
	u64 step = huge ? HUGE_SIZE : PAGE_SIZE, end = start + len;
	int err = 0;

	if (!len || !IS_ALIGNED(start, step) || !IS_ALIGNED(len, step) || end > USER_VA_END ||
	    end < start)
		return -EINVAL;
	write_lock(&mm->mmap_lock);
	if (mm->nr_vmas == MM_MAX_VMAS || !__mm_range_free(mm, start, end)) {
		write_unlock(&mm->mmap_lock);
		return -EINVAL;
	}
	mm->vmas[mm->nr_vmas++] = (struct vm_area){ start, end, writable, huge };
	write_unlock(&mm->mmap_lock);
	if (populate)
		err = mm_populate(mm, start, end);
	return err;
}

/*
 * Remove [start, end) from the VMA table, trimming or splitting regions that overlap it. A
 * hole inside one region splits it in two, which takes a second entry: with the table full
 * that is -ENOMEM, returned before anything changed (Linux's munmap refuses a split past
 * max_map_count the same way, before it touches a VMA).
 */
static int __mm_remove_vmas(struct mm_struct *mm, u64 start, u64 end)
{
	assert_write_locked(&mm->mmap_lock);
	for (unsigned int i = 0; i < mm->nr_vmas && mm->nr_vmas == MM_MAX_VMAS; i++)
		if (mm->vmas[i].start < start && end < mm->vmas[i].end)
			return -ENOMEM;
	for (unsigned int i = 0; i < mm->nr_vmas;) {
		struct vm_area *v = &mm->vmas[i];

		if (end <= v->start || v->end <= start) {
			i++;
			continue;
		}
		if (start <= v->start && v->end <= end) {	/* wholly inside: drop it */
			*v = mm->vmas[--mm->nr_vmas];
			continue;
		}
		if (v->start < start && end < v->end) {	/* hole in the middle: split */
			VM_BUG_ON(mm->nr_vmas == MM_MAX_VMAS);
			mm->vmas[mm->nr_vmas++] = (struct vm_area){ end, v->end, v->writable, v->huge };
			v->end = start;
		} else if (v->start < start) {
			v->end = start;
		} else {
			v->start = end;
		}
		i++;
	}
	return 0;
}

/* ---- faults: mmap_lock held for read; entries installed with cmpxchg ---- */

/* A zeroed page-table page from the faulting CPU's node of mm's machine. */
static struct page *pt_alloc(struct mm_struct *mm)
{
	return alloc_pages_node(local_node(mm->node), GFP_KERNEL | __GFP_ZERO, 0);
}

/*
 * The entry of *slot, above the leaves, with a zeroed table installed there if it was empty:
 * a table entry, or a 2 MiB leaf (present, or a migration entry), which the caller must not
 * walk through as a table: the page it looks for is that leaf's. 0: out of memory.
 */
static pte_t pt_get_or_alloc(struct mm_struct *mm, pte_t *slot)
{
	pte_t old = smp_load_acquire(slot), e;
	struct page *page;

	if (old)
		return old;
	if (!(page = pt_alloc(mm)))
		return 0;
	e = mk_table_entry(page_to_pfn(page));
	if (__atomic_compare_exchange_n(slot, &old, e, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		__atomic_fetch_add(&mm->nr_pt_pages, 1, __ATOMIC_RELAXED);
		return e;
	}
	__free_pages(page, 0);	/* another CPU installed one first */
	return old;
}

/*
 * A 2 MiB leaf carries the page table its split will need (munmap of part of it), allocated
 * with it at the fault and counted in nr_pt_pages from then on, so that a split never has to
 * allocate and never fails: Linux's pgtable_trans_huge_deposit()/withdraw(). It waits on the
 * 2 MiB page's own lru (the head's; mm/gup.h), which nothing else uses while it is mapped.
 */
static void pgtable_trans_huge_deposit(struct page *head, struct page *table)
{
	list_add(&table->lru, &head->lru);
}

static struct page *pgtable_trans_huge_withdraw(struct page *head)
{
	struct page *table = list_first_entry(&head->lru, struct page, lru);

	VM_BUG_ON(list_empty(&head->lru));
	list_del(&table->lru);
	return table;
}

void pgtable_trans_huge_move(struct page *from, struct page *to)
{
	pgtable_trans_huge_deposit(to, pgtable_trans_huge_withdraw(from));
}

/* A freshly allocated data page of the given order, its tails marked for compound_head(),
 * from the faulting CPU's node of mm's machine, as Linux's default (local) policy. */
static struct page *fault_alloc(struct mm_struct *mm, gfp_t gfp, unsigned int order)
{
	struct page *page = alloc_pages_node(local_node(mm->node), gfp | __GFP_ZERO, order);

	if (page)
		prep_compound_page(page, order);
	return page;
}

/*
 * A fault found the page being moved by FOLL_LONGTERM migration (mm/gup.c): wait until the
 * migrator, who holds mm->lock, replaces the migration entry, as Linux's
 * migration_entry_wait(). Interrupts must be on: the migrator's TLB shootdown waits for us.
 * We hold mmap_lock for read, and so does the migrator: a munmap waiting to write stops
 * neither of us.
 */
static void migration_entry_wait(struct mm_struct *mm, pte_t *slot, pte_t e)
{
	VM_BUG_ON(arch_irqs_disabled() || spin_is_held_by_me(&mm->lock));
	mm_this_cpu_stats(mm)->migration_waits++;
	while (ptep_get(slot) == e)
		arch_cpu_relax();
}

void (*fault_race_hook)(struct mm_struct *mm, u64 addr);

static inline void fault_race_point(struct mm_struct *mm, u64 addr)
{
	void (*hook)(struct mm_struct *, u64);

	if (!CONFIG_DEBUG_VM)
		return;
	hook = smp_load_acquire(&fault_race_hook);
	if (unlikely(hook))
		hook(mm, addr);
}

/* __fault_install() of a 2 MiB leaf found no free 2 MiB block: map a 4 KiB page instead. */
#define FAULT_FALLBACK 1

/*
 * Install a fresh page in the empty leaf *slot (a 2 MiB one, with its deposited table, at
 * level 2); 0 also if the slot is taken: another CPU got there first, or a 2 MiB leaf above
 * maps addr already. FAULT_FALLBACK if no 2 MiB page could be had (Linux's
 * VM_FAULT_FALLBACK); -ENOMEM if a 4 KiB page, or the 2 MiB page's table, could not.
 */
static int __fault_install(struct mm_struct *mm, u64 addr, pte_t *slot,
			   const struct vm_area *vma, gfp_t gfp, int leaf)
{
	unsigned int order = leaf == 2 ? HUGE_ORDER : 0;
	pte_t old = ptep_get(slot);
	struct page *page, *deposit = NULL;

	if (is_migration_entry(old))
		migration_entry_wait(mm, slot, old);
	if (old)
		return 0;	/* present (or it is once migration is done) */
	if (!(page = fault_alloc(mm, gfp, order))) {
		if (leaf != 2)
			return -ENOMEM;
		mm_this_cpu_stats(mm)->thp_fallbacks++;
		return FAULT_FALLBACK;
	}
	if (leaf == 2 && !(deposit = pt_alloc(mm))) {
		__free_pages(page, order);
		return -ENOMEM;
	}
	if (deposit)	/* before the install publishes the page: a migrator may move it then */
		pgtable_trans_huge_deposit(page, deposit);
	fault_race_point(mm, addr);
	if (!__atomic_compare_exchange_n(slot, &old, mk_leaf_entry(page_to_pfn(page), vma->writable,
				leaf == 2), false, __ATOMIC_RELEASE, __ATOMIC_ACQUIRE)) {
		__free_pages(page, order);	/* another fault won (and maybe migration began) */
		if (deposit)
			__free_pages(deposit, 0);
		if (is_migration_entry(old))
			migration_entry_wait(mm, slot, old);
		return 0;
	}
	if (deposit)
		__atomic_fetch_add(&mm->nr_pt_pages, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&mm->rss, 1l << order, __ATOMIC_RELAXED);
	mm_this_cpu_stats(mm)->faults++;
	return 0;
}

/*
 * A 2 MiB leaf may map addr: its VMA is huge and holds the whole aligned 2 MiB around it
 * (Linux's transhuge_vma_suitable()). A huge VMA that munmap has cut gets 4 KiB pages where
 * no 2 MiB fits, as Linux falls back.
 */
static bool vma_huge_fits(const struct vm_area *vma, u64 addr)
{
	u64 haddr = ALIGN_DOWN(addr, HUGE_SIZE);

	return vma->huge && haddr >= vma->start && haddr + HUGE_SIZE <= vma->end;
}

/*
 * mmap_lock held for read from the VMA lookup to the install: the VMA, and every table on
 * the way down, stay until the page is in (munmap waits to write). The walk never goes
 * through a leaf: an empty level-2 entry where a 2 MiB leaf fits gets one, or, when no free
 * 2 MiB block is left, a table and a 4 KiB page (Linux's __handle_mm_fault(): a huge
 * fault's VM_FAULT_FALLBACK goes on to handle_pte_fault()); a 2 MiB leaf found on the way (a
 * migration entry included) already maps addr; anything else is a table to go down.
 */
static int __do_fault(struct mm_struct *mm, u64 addr, gfp_t gfp)
{
	const struct vm_area *vma = __mm_find_vma(mm, addr);
	pte_t *table = mm->pgd;

	if (!vma)
		return -EFAULT;
	for (int level = PT_LEVELS; level > 1; level--) {
		pte_t *slot = &table[pt_index_of(addr, level)], e;

		if (level == 2 && vma_huge_fits(vma, addr) && !ptep_get(slot)) {
			int ret = __fault_install(mm, addr, slot, vma, gfp, 2);

			if (ret != FAULT_FALLBACK)
				return ret;
		}
		if (!(e = pt_get_or_alloc(mm, slot)))
			return -ENOMEM;
		if (!pte_is_table(e))
			return __fault_install(mm, addr, slot, vma, gfp, level);
		table = pt_table(e);
	}
	return __fault_install(mm, addr, &table[pt_index_of(addr, 1)], vma, gfp, 1);
}

int handle_mm_fault(struct mm_struct *mm, u64 addr)
{
	int err;

	VM_BUG_ON(arch_irqs_disabled());
	read_lock(&mm->mmap_lock);
	err = __do_fault(mm, addr, GFP_USER);
	read_unlock(&mm->mmap_lock);
	return err;
}

/*
 * Fault in every page of [start, end), as Linux's populate (__mm_populate() ->
 * __get_user_pages(), mmap_lock held for read throughout): after each fault, a look at the
 * leaf under mm->lock (follow_page_mask()'s page-table lock) gives the step, 2 MiB over a
 * 2 MiB leaf, 4 KiB elsewhere (a 4 KiB region, or a 2 MiB fault that fell back).
 */
static int mm_populate(struct mm_struct *mm, u64 start, u64 end)
{
	u64 size = PAGE_SIZE;
	int err = 0, level;

	VM_BUG_ON(arch_irqs_disabled());
	read_lock(&mm->mmap_lock);
	for (u64 addr = start; addr < end; addr = ALIGN_DOWN(addr, size) + size) {
		if ((err = __do_fault(mm, addr, GFP_USER)))
			break;
		spin_lock(&mm->lock);
		size = __mm_find_leaf(mm, addr, &level) ? PT_LEVEL_SIZE(level) : PAGE_SIZE;
		spin_unlock(&mm->lock);
	}
	read_unlock(&mm->mmap_lock);
	return err;
}

int __handle_mm_fault(struct mm_struct *mm, u64 addr, gfp_t gfp)
{
	assert_rwlock_locked(&mm->mmap_lock);
	assert_spin_locked(&mm->lock);
	return __do_fault(mm, addr, gfp);
}

pte_t *__mm_find_leaf(struct mm_struct *mm, u64 addr, int *level)
{
	pte_t *table = mm->pgd;

	assert_spin_locked(&mm->lock);
	for (int l = PT_LEVELS; l > 1; l--) {
		pte_t e = ptep_get(&table[pt_index_of(addr, l)]);

		if (!pte_present(e))
			return NULL;
		if (l == 2 && pte_huge(e)) {
			*level = 2;
			return &table[pt_index_of(addr, 2)];
		}
		table = pt_table(e);
	}
	*level = 1;
	return &table[pt_index_of(addr, 1)];
}

/* ---- unmapping ---- */

struct zap_lists {
	struct list_head data;		/* data pages whose mapping reference is to be dropped */
	struct list_head tables;	/* page-table pages to free */
};

static bool pt_table_empty(const pte_t *table)
{
	for (unsigned int i = 0; i < PTRS_PER_TABLE; i++)
		if (ptep_get((pte_t *)&table[i]))
			return false;
	return true;
}

/*
 * Split the 2 MiB leaf e at *pmd into a table of 512 4 KiB entries that map the same pages,
 * as Linux's __split_huge_pmd_locked(), so that munmap of part of it clears only that part
 * and the rest stays mapped with its data. The table is the one deposited with the leaf
 * (the split never allocates, never fails). The 2 MiB page stays one block, and each entry
 * holds a reference on it: the block is freed when its last entry goes. rss does not
 * change. A lockless walker that read the old leaf sees it changed when it re-checks, and
 * lets go. No fault is inside (mmap_lock held for write), no migration (mm->lock).
 */
static pte_t __split_huge_pmd(struct mm_struct *mm, pte_t *pmd, pte_t e)
{
	struct page *head = pfn_to_page(mm->node, pte_pfn(e));
	struct page *table = pgtable_trans_huge_withdraw(head);
	pte_t *ptes = page_address(table), entry = mk_table_entry(page_to_pfn(table));

	assert_write_locked(&mm->mmap_lock);
	assert_spin_locked(&mm->lock);
	for (unsigned int i = 0; i < PTRS_PER_TABLE; i++)
		ptes[i] = mk_leaf_entry(page_to_pfn(head) + i, pte_write(e), false);
	__atomic_fetch_add(&head->refcount, PTRS_PER_TABLE - 1, __ATOMIC_RELAXED);
	set_pte(pmd, entry);	/* a release: whoever reaches the table sees its entries */
	return entry;
}

/*
 * Clear the leaf e at *slot and queue the reference it held, to be dropped after the
 * shootdown: a 2 MiB leaf's page (its deposited table is queued to be freed) or a 4 KiB
 * entry's. Entries of a split 2 MiB page each hold a reference on its head, which is queued
 * once: the entries after the first drop theirs at once, which cannot free it, since the
 * queued reference holds it until the shootdown is over.
 */
static void zap_leaf(struct mm_struct *mm, pte_t *slot, pte_t e, int level, struct zap_lists *z)
{
	struct page *head = compound_head(pfn_to_page(mm->node, pte_pfn(e)));

	set_pte(slot, 0);
	if (level == 2)
		list_add_tail(&pgtable_trans_huge_withdraw(head)->lru, &z->tables);
	__atomic_fetch_sub(&mm->rss, level == 1 ? 1l : 1l << HUGE_ORDER, __ATOMIC_RELAXED);
	if (list_empty(&head->lru))
		list_add_tail(&head->lru, &z->data);
	else
		put_page(head);		/* queued already, by an earlier entry */
}

/*
 * Clear the entries of `table` (at `level`) covering [start, end); queue what they pointed to.
 * A 2 MiB leaf that the range covers in part is split first (Linux's zap_pmd_range()).
 */
static void zap_table(struct mm_struct *mm, pte_t *table, int level, u64 base, u64 start, u64 end,
		      struct zap_lists *z)
{
	u64 size = PT_LEVEL_SIZE(level);

	for (unsigned int i = 0; i < PTRS_PER_TABLE; i++) {
		u64 lo = base + i * size, hi = lo + size;
		pte_t e = ptep_get(&table[i]);

		if (hi <= start || lo >= end || !pte_present(e))
			continue;
		if (pte_huge(e) && (lo < start || end < hi))
			e = __split_huge_pmd(mm, &table[i], e);
		if (level == 1 || pte_huge(e)) {
			zap_leaf(mm, &table[i], e, level, z);
			continue;
		}
		pte_t *child = pt_table(e);
		zap_table(mm, child, level - 1, lo, start, end, z);
		/* No fault is inside it (mmap_lock is held for write), but one that a VMA still
		 * reaches is kept, as Linux's free_pgtables() keeps its neighbours' tables. */
		if (pt_table_empty(child) && __mm_range_free(mm, lo, hi)) {
			set_pte(&table[i], 0);
			list_add_tail(&virt_to_page(mm->node, child)->lru, &z->tables);
		}
	}
}

static void mm_tlb_flush_ipi(void *arg)
{
	(void)arg;
	arch_flush_tlb_local();
}

void mm_tlb_shootdown(struct mm_struct *mm)
{
	VM_BUG_ON(arch_irqs_disabled());
	(void)mm;
	arch_flush_tlb_local();
	smp_call_function_all(mm_tlb_flush_ipi, NULL, true);
}

int mm_munmap(struct mm_struct *mm, u64 start, u64 len)
{
	struct zap_lists z;
	struct page *page, *next;
	u64 end;
	int err;

	if (!IS_ALIGNED(start, PAGE_SIZE) || start > USER_VA_END || len > USER_VA_END - start ||
	    !len)
		return -EINVAL;
	end = start + ALIGN_UP(len, PAGE_SIZE);
	INIT_LIST_HEAD(&z.data);
	INIT_LIST_HEAD(&z.tables);
	write_lock(&mm->mmap_lock);	/* waits for the faults in flight to install */
	if ((err = __mm_remove_vmas(mm, start, end))) {
		write_unlock(&mm->mmap_lock);
		return err;
	}
	spin_lock(&mm->lock);
	zap_table(mm, mm->pgd, PT_LEVELS, 0, start, end, &z);
	/* Entries are gone; CPUs still walking with IRQs off hold up this shootdown. */
	mm_tlb_shootdown(mm);
	spin_unlock(&mm->lock);
	/* Still under mmap_lock for write (Linux frees in tlb_finish_mmu(), under it too): the
	 * next munmap of what is left of a split 2 MiB page finds its head off our queue. */
	list_for_each_entry_safe(page, next, &z.data, lru) {
		list_del(&page->lru);
		INIT_LIST_HEAD(&page->lru);	/* still mapped if this is not the last put */
		put_page(page);
	}
	list_for_each_entry_safe(page, next, &z.tables, lru) {
		list_del(&page->lru);
		__atomic_fetch_sub(&mm->nr_pt_pages, 1, __ATOMIC_RELAXED);
		__free_pages(page, 0);
	}
	write_unlock(&mm->mmap_lock);
	return 0;
}
