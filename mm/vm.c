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

static pte_t *pt_table(pte_t e)
{
	return arch_phys_to_virt((u64)pte_pfn(e) << PAGE_SHIFT);
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

int mm_mmap_anon(struct mm_struct *mm, u64 start, u64 len, bool writable, bool huge, bool populate)
{
	u64 step = huge ? PT_LEVEL_SIZE(2) : PAGE_SIZE, end = start + len;
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
	for (u64 addr = start; populate && addr < end && !err; addr += step)
		err = handle_mm_fault(mm, addr);
	return err;
}

/* Remove [start, end) from the VMA table, trimming or splitting regions that overlap it. */
static void __mm_remove_vmas(struct mm_struct *mm, u64 start, u64 end)
{
	assert_write_locked(&mm->mmap_lock);
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
		if (v->start < start && end < v->end && mm->nr_vmas < MM_MAX_VMAS) {
			mm->vmas[mm->nr_vmas++] = (struct vm_area){ end, v->end, v->writable, v->huge };
			v->end = start;		/* hole in the middle: split */
		} else if (v->start < start) {
			v->end = start;
		} else {
			v->start = end;
		}
		i++;
	}
}

/* ---- faults: mmap_lock held for read; entries installed with cmpxchg ---- */

/* The table below *slot, installing a zeroed one if there is none. NULL: out of memory. */
static pte_t *pt_get_or_alloc(struct mm_struct *mm, pte_t *slot)
{
	pte_t old = smp_load_acquire(slot);
	struct page *page;

	if (pte_present(old))
		return pt_table(old);
	page = alloc_pages_node(local_node(mm->node), GFP_KERNEL | __GFP_ZERO, 0);
	if (!page)
		return NULL;
	old = 0;
	if (__atomic_compare_exchange_n(slot, &old, mk_table_entry(page_to_pfn(page)), false,
					__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		__atomic_fetch_add(&mm->nr_pt_pages, 1, __ATOMIC_RELAXED);
		return page_address(page);
	}
	__free_pages(page, 0);	/* another CPU installed one first */
	return pt_table(old);
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

/* Install a fresh page in the empty leaf *slot; 0 also if another CPU got there first. */
static int __fault_install(struct mm_struct *mm, u64 addr, pte_t *slot,
			   const struct vm_area *vma, gfp_t gfp, int leaf)
{
	unsigned int order = leaf == 2 ? HUGE_ORDER : 0;
	pte_t old = ptep_get(slot);
	struct page *page;

	if (is_migration_entry(old))
		migration_entry_wait(mm, slot, old);
	if (old)
		return 0;	/* present (or it is once migration is done) */
	if (!(page = fault_alloc(mm, gfp, order)))
		return -ENOMEM;
	fault_race_point(mm, addr);
	if (!__atomic_compare_exchange_n(slot, &old, mk_leaf_entry(page_to_pfn(page), vma->writable,
				leaf == 2), false, __ATOMIC_RELEASE, __ATOMIC_ACQUIRE)) {
		__free_pages(page, order);	/* another fault won (and maybe migration began) */
		if (is_migration_entry(old))
			migration_entry_wait(mm, slot, old);
		return 0;
	}
	__atomic_fetch_add(&mm->rss, 1l << order, __ATOMIC_RELAXED);
	mm_this_cpu_stats(mm)->faults++;
	return 0;
}

/* mmap_lock held for read from the VMA lookup to the install: the VMA, and every table on
 * the way down, stay until the page is in (munmap waits to write). */
static int __do_fault(struct mm_struct *mm, u64 addr, gfp_t gfp)
{
	const struct vm_area *vma = __mm_find_vma(mm, addr);
	pte_t *table = mm->pgd;
	int leaf;

	if (!vma)
		return -EFAULT;
	leaf = vma->huge ? 2 : 1;
	for (int level = PT_LEVELS; level > leaf; level--)
		if (!(table = pt_get_or_alloc(mm, &table[pt_index_of(addr, level)])))
			return -ENOMEM;
	return __fault_install(mm, addr, &table[pt_index_of(addr, leaf)], vma, gfp, leaf);
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

/* Clear the entries of `table` (at `level`) covering [start, end); queue what they pointed to. */
static void zap_table(struct mm_struct *mm, pte_t *table, int level, u64 base, u64 start, u64 end,
		      struct zap_lists *z)
{
	u64 size = PT_LEVEL_SIZE(level);

	for (unsigned int i = 0; i < PTRS_PER_TABLE; i++) {
		u64 lo = base + i * size, hi = lo + size;
		pte_t e = ptep_get(&table[i]);

		if (hi <= start || lo >= end || !pte_present(e))
			continue;
		if (level == 1 || pte_huge(e)) {
			struct page *page = pfn_to_page(mm->node, pte_pfn(e));
			set_pte(&table[i], 0);
			list_add_tail(&page->lru, &z->data);
			__atomic_fetch_sub(&mm->rss, level == 1 ? 1l : 1l << HUGE_ORDER, __ATOMIC_RELAXED);
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

void mm_munmap(struct mm_struct *mm, u64 start, u64 len)
{
	struct zap_lists z;
	struct page *page, *next;
	u64 end = MIN(start + len, USER_VA_END);

	INIT_LIST_HEAD(&z.data);
	INIT_LIST_HEAD(&z.tables);
	write_lock(&mm->mmap_lock);	/* waits for the faults in flight to install */
	__mm_remove_vmas(mm, start, end);
	spin_lock(&mm->lock);
	zap_table(mm, mm->pgd, PT_LEVELS, 0, start, end, &z);
	/* Entries are gone; CPUs still walking with IRQs off hold up this shootdown. */
	mm_tlb_shootdown(mm);
	spin_unlock(&mm->lock);
	write_unlock(&mm->mmap_lock);
	list_for_each_entry_safe(page, next, &z.data, lru) {
		list_del(&page->lru);
		put_page(page);
	}
	list_for_each_entry_safe(page, next, &z.tables, lru) {
		list_del(&page->lru);
		__atomic_fetch_sub(&mm->nr_pt_pages, 1, __ATOMIC_RELAXED);
		__free_pages(page, 0);
	}
}
