/*
 * Host tests of address spaces at the edges of their API (mm/vm.c, and gup's slow path over
 * them): munmap of part of a 2 MiB page, munmap that must split a region with the VMA table
 * full, faults and pins in a huge region that munmap has cut, a long-term pin whose own
 * fault loses its install. Pthreads as CPUs where two must meet.
 */
#include <stdlib.h>
#include <string.h>
#include "tests/host/harness.h"
#include "mm/gup.h"
#include "tests/kernel/gup_check.h"

#define BASE (1ull << 32)
#define HUGE (2ull << 20)
#define HUGE_PAGES (HUGE / PAGE_SIZE)

static struct pglist_data *vm_node(unsigned int cpus)
{
	const struct mem_region map[] = { { 16 * MiB, 256 * MiB, MEM_USABLE } };

	return test_node_create(map, ARRAY_SIZE(map), cpus);
}

/* The page mapped at addr now (a lockless walk, its reference dropped), or NULL. */
static struct page *page_at(struct mm_struct *mm, u64 addr)
{
	struct page *p;

	if (get_user_pages_fast(mm, addr, 1, FOLL_FAST_ONLY, &p) != 1)
		return NULL;
	put_user_pages(&p, 1);
	return p;
}

/* Fill each 4 KiB page of [start, start + nr pages) with its index (mod 256) + 1. */
static void fill_pages(struct mm_struct *mm, u64 start, unsigned long nr)
{
	for (unsigned long i = 0; i < nr; i++)
		memset(page_address(page_at(mm, start + i * PAGE_SIZE)), (int)(i % 256) + 1,
		       PAGE_SIZE);
}

/* Pages of [start, start + nr) still mapped with the data fill_pages() wrote (holes skipped:
 * counted only if mapped). */
static unsigned long pages_with_data(struct mm_struct *mm, u64 start, unsigned long nr)
{
	unsigned long n = 0;

	for (unsigned long i = 0; i < nr; i++) {
		struct page *p = page_at(mm, start + i * PAGE_SIZE);
		const u8 *d = p ? page_address(p) : NULL;

		n += d && d[0] == (u8)(i % 256 + 1) && d[PAGE_SIZE - 1] == (u8)(i % 256 + 1);
	}
	return n;
}

/* mm_destroy(), then every page of the node must be back, and mm_verify() clean. */
static void destroy_and_check(struct ktest *t, struct mm_struct *mm, unsigned long free0)
{
	struct pglist_data *pgdat = mm->node;

	mm_destroy(mm);
	drain_all_pages_machine(pgdat->machine);
	KT_EXPECT_EQ(t, node_free_pages(pgdat), free0);
	KT_EXPECT_EQ(t, mm_verify(pgdat), 0ul);
	test_node_destroy(pgdat);
}

/* ---- munmap of part of a 2 MiB page: the leaf is split (__split_huge_pmd) ---- */

/*
 * A populated 2 MiB region, one 4 KiB page unmapped in its middle: the other 511 stay mapped
 * to the same pages of the 2 MiB block with their data, rss is 511, the region is two VMAs
 * around the hole, the hole maps nothing and faults -EFAULT. Before: the whole leaf went
 * (rss 0, the data of 511 pages lost).
 */
static void mm_munmap_4k_of_2m_page_keeps_the_rest(struct ktest *t)
{
	struct pglist_data *pgdat = vm_node(1);
	unsigned long free0 = node_free_pages(pgdat);
	struct mm_struct *mm = mm_create(pgdat);
	u64 hole = BASE + 8 * PAGE_SIZE;
	struct page *head;
	unsigned long same = 0;

	KT_ASSERT_EQ(t, mm_mmap_anon(mm, BASE, HUGE, true, true, true), 0);
	head = page_at(mm, BASE);
	KT_ASSERT_TRUE(t, head);
	fill_pages(mm, BASE, HUGE_PAGES);
	KT_EXPECT_EQ(t, mm_munmap(mm, hole, PAGE_SIZE), 0);
	KT_EXPECT_EQ(t, mm->rss, (long)HUGE_PAGES - 1);
	KT_EXPECT_EQ(t, pages_with_data(mm, BASE, HUGE_PAGES), HUGE_PAGES - 1);
	for (unsigned long i = 0; i < HUGE_PAGES; i++)
		same += page_at(mm, BASE + i * PAGE_SIZE) == head + i;
	KT_EXPECT_EQ(t, same, HUGE_PAGES - 1);
	KT_EXPECT_TRUE(t, !page_at(mm, hole));
	KT_EXPECT_EQ(t, handle_mm_fault(mm, hole), -EFAULT);
	KT_EXPECT_EQ(t, mm->nr_vmas, 2u);
	KT_EXPECT_TRUE(t, mm->vmas[0].start == BASE && mm->vmas[0].end == hole);
	KT_EXPECT_TRUE(t, mm->vmas[1].start == hole + PAGE_SIZE && mm->vmas[1].end == BASE + HUGE);
	destroy_and_check(t, mm, free0);
}

/*
 * A split 2 MiB page is one block that each 4 KiB entry holds a reference on: unmapping its
 * pages one by one frees nothing until the last goes, which frees the whole block (and its
 * page table).
 */
static void mm_munmap_2m_page_piece_by_piece_frees_it_once(struct ktest *t)
{
	struct pglist_data *pgdat = vm_node(1);
	unsigned long free0 = node_free_pages(pgdat), empty, mapped, freed_early = 0;
	struct mm_struct *mm = mm_create(pgdat);

	empty = node_free_pages(pgdat);
	KT_ASSERT_EQ(t, mm_mmap_anon(mm, BASE, HUGE, true, true, true), 0);
	mapped = node_free_pages(pgdat);
	for (unsigned long i = 0, lo = 0, hi = HUGE_PAGES; i < HUGE_PAGES; i++) {
		u64 addr = BASE + (i % 2 ? --hi : lo++) * PAGE_SIZE;	/* from both ends in */

		KT_ASSERT_EQ(t, mm_munmap(mm, addr, PAGE_SIZE), 0);
		if (i + 1 < HUGE_PAGES)
			freed_early += node_free_pages(pgdat) != mapped;
	}
	KT_EXPECT_EQ(t, freed_early, 0ul);
	KT_EXPECT_EQ(t, mm->rss, 0l);
	KT_EXPECT_EQ(t, mm->nr_vmas, 0u);
	KT_EXPECT_EQ(t, mm->nr_pt_pages, 1l);
	KT_EXPECT_EQ(t, node_free_pages(pgdat), empty);
	destroy_and_check(t, mm, free0);
}

/*
 * One munmap over a split 2 MiB page's entries with an order-0 page's between them (pages 0
 * and 2 left of the 2 MiB page, a 4 KiB region mapped at page 1): every page it held is
 * freed, the 2 MiB block once, and every page table. (The others go one munmap each: each
 * of these clears one entry of the 2 MiB page.)
 */
static void mm_munmap_split_2m_page_and_4k_page_together(struct ktest *t)
{
	struct pglist_data *pgdat = vm_node(1);
	unsigned long free0 = node_free_pages(pgdat), empty;
	struct mm_struct *mm = mm_create(pgdat);

	empty = node_free_pages(pgdat);
	KT_ASSERT_EQ(t, mm_mmap_anon(mm, BASE, HUGE, true, true, true), 0);
	KT_ASSERT_EQ(t, mm_munmap(mm, BASE + PAGE_SIZE, PAGE_SIZE), 0);
	for (unsigned long i = HUGE_PAGES - 1; i >= 3; i--)
		KT_ASSERT_EQ(t, mm_munmap(mm, BASE + i * PAGE_SIZE, PAGE_SIZE), 0);
	KT_ASSERT_EQ(t, mm_mmap_anon(mm, BASE + PAGE_SIZE, PAGE_SIZE, true, false, true), 0);
	KT_EXPECT_EQ(t, mm->rss, 3l);
	KT_EXPECT_EQ(t, compound_head(page_at(mm, BASE + PAGE_SIZE))->order, 0);
	KT_EXPECT_EQ(t, mm_munmap(mm, BASE, 3 * PAGE_SIZE), 0);
	KT_EXPECT_EQ(t, mm->rss, 0l);
	KT_EXPECT_EQ(t, mm->nr_pt_pages, 1l);
	KT_EXPECT_EQ(t, node_free_pages(pgdat), empty);
	destroy_and_check(t, mm, free0);
}

/*
 * A pin on one 4 KiB page of a 2 MiB page outlives its split and its unmapping: the block
 * stays allocated, with the exact pin count, until the unpin frees it (every page table is
 * freed with the last mapping).
 */
static void mm_munmap_split_2m_page_keeps_pins(struct ktest *t)
{
	struct pglist_data *pgdat = vm_node(1);
	unsigned long free0 = node_free_pages(pgdat), empty;
	struct mm_struct *mm = mm_create(pgdat);
	struct page *pinned;

	empty = node_free_pages(pgdat);
	KT_ASSERT_EQ(t, mm_mmap_anon(mm, BASE, HUGE, true, true, true), 0);
	KT_ASSERT_EQ(t, pin_user_pages_fast(mm, BASE + 5 * PAGE_SIZE, 1, FOLL_WRITE, &pinned), 1);
	KT_EXPECT_EQ(t, mm_munmap(mm, BASE, PAGE_SIZE), 0);
	KT_EXPECT_EQ(t, page_pincount(pinned), 1u);
	KT_EXPECT_EQ(t, mm_munmap(mm, BASE + PAGE_SIZE, HUGE - PAGE_SIZE), 0);
	KT_EXPECT_EQ(t, mm->rss, 0l);
	KT_EXPECT_EQ(t, page_pincount(pinned), 1u);
	KT_EXPECT_TRUE(t, page_maybe_dma_pinned(pinned));
	KT_EXPECT_EQ(t, node_free_pages(pgdat), empty - HUGE_PAGES);	/* all but the block */
	unpin_user_page(pinned);
	destroy_and_check(t, mm, free0);
}

/*
 * A huge region cut by munmap before anything was faulted ([BASE + 4 KiB, BASE + 2 MiB)):
 * no whole 2 MiB fits, so a fault gets a 4 KiB page; a 4 KiB region mapped at BASE later
 * faults into the same page table. Before: the fault put a 2 MiB leaf over BASE too (which no
 * VMA covered), rss 512, and BASE's fault took that leaf for a page table, writing a PTE into
 * the user's data.
 */
static void handle_mm_fault_cut_huge_vma_gets_4k_pages(struct ktest *t)
{
	struct pglist_data *pgdat = vm_node(1);
	unsigned long free0 = node_free_pages(pgdat);
	struct mm_struct *mm = mm_create(pgdat);
	struct page *p;

	KT_ASSERT_EQ(t, mm_mmap_anon(mm, BASE, HUGE, true, true, false), 0);
	KT_EXPECT_EQ(t, mm_munmap(mm, BASE, PAGE_SIZE), 0);
	KT_EXPECT_EQ(t, handle_mm_fault(mm, BASE + 8 * PAGE_SIZE), 0);
	KT_EXPECT_EQ(t, mm->rss, 1l);
	KT_EXPECT_TRUE(t, !page_at(mm, BASE));
	p = page_at(mm, BASE + 8 * PAGE_SIZE);
	KT_ASSERT_TRUE(t, p);
	KT_EXPECT_EQ(t, compound_head(p)->order, 0);
	memset(page_address(p), 0x5a, PAGE_SIZE);
	KT_EXPECT_EQ(t, mm_mmap_anon(mm, BASE, PAGE_SIZE, true, false, true), 0);
	KT_EXPECT_EQ(t, mm->rss, 2l);
	KT_EXPECT_EQ(t, mapped_pages(mm, BASE, 1), 1);
	KT_EXPECT_EQ(t, ((u8 *)page_address(p))[0], 0x5a);
	KT_EXPECT_EQ(t, ((u8 *)page_address(page_at(mm, BASE)))[0], 0);
	destroy_and_check(t, mm, free0);
}

/*
 * The slow path's fault in a cut huge region whose 2 MiB is a page table (a 4 KiB region at
 * BASE has one there): pin_user_pages() gets a real, zeroed 4 KiB page, the one now mapped.
 * Before: the fault "found" the slot taken (by the table) and returned 0, and
 * __gup_slow_one() read the empty 4 KiB entry it then found as pfn 0 and pinned that.
 */
static void pin_user_pages_cut_huge_vma_over_page_table(struct ktest *t)
{
	struct pglist_data *pgdat = vm_node(1);
	unsigned long free0 = node_free_pages(pgdat);
	struct mm_struct *mm = mm_create(pgdat);
	struct page *p = NULL;

	KT_ASSERT_EQ(t, mm_mmap_anon(mm, BASE, HUGE, true, true, false), 0);
	KT_ASSERT_EQ(t, mm_munmap(mm, BASE, PAGE_SIZE), 0);
	KT_ASSERT_EQ(t, mm_mmap_anon(mm, BASE, PAGE_SIZE, true, false, true), 0);
	KT_ASSERT_EQ(t, pin_user_pages(mm, BASE + 2 * PAGE_SIZE, 1, 0, &p), 1);
	KT_EXPECT_TRUE(t, p && page_to_pfn(p) != 0);
	KT_EXPECT_TRUE(t, p && p == page_at(mm, BASE + 2 * PAGE_SIZE));
	KT_EXPECT_EQ(t, mm->rss, 2l);
	if (p && page_to_pfn(p) != 0)
		unpin_user_page(p);
	destroy_and_check(t, mm, free0);
}

/*
 * FOLL_LONGTERM over a split 2 MiB page: its 4 KiB pages move one by one to UNMOVABLE
 * order-0 copies with their data; rss does not change; the 2 MiB block is freed when its
 * last entry has moved or gone.
 */
static void pin_user_pages_longterm_split_2m_page(struct ktest *t)
{
	struct pglist_data *pgdat = vm_node(1);
	unsigned long free0 = node_free_pages(pgdat), moved = 0;
	struct mm_struct *mm = mm_create(pgdat);
	struct page *pages[HUGE_PAGES - 1];
	struct gup_totals a, b;

	KT_ASSERT_EQ(t, mm_mmap_anon(mm, BASE, HUGE, true, true, true), 0);
	fill_pages(mm, BASE, HUGE_PAGES);
	KT_ASSERT_EQ(t, mm_munmap(mm, BASE, PAGE_SIZE), 0);
	gup_read_totals(&a);
	KT_ASSERT_EQ(t, pin_user_pages(mm, BASE + PAGE_SIZE, HUGE_PAGES - 1, FOLL_LONGTERM, pages),
		     (long)HUGE_PAGES - 1);
	gup_read_totals(&b);
	for (unsigned long i = 0; i < HUGE_PAGES - 1; i++)
		moved += pages[i]->mt != MIGRATE_MOVABLE && pages[i]->order == 0 &&
			 pages[i] == page_at(mm, BASE + (i + 1) * PAGE_SIZE);
	KT_EXPECT_EQ(t, moved, HUGE_PAGES - 1);
	KT_EXPECT_EQ(t, b.longterm_migrated - a.longterm_migrated, HUGE_PAGES - 1);
	KT_EXPECT_EQ(t, pages_with_data(mm, BASE + PAGE_SIZE, HUGE_PAGES - 1), 0ul);
	for (unsigned long i = 0; i < HUGE_PAGES - 1; i++)	/* data moved with each page */
		moved -= ((u8 *)page_address(pages[i]))[0] == (u8)((i + 1) % 256 + 1);
	KT_EXPECT_EQ(t, moved, 0ul);
	KT_EXPECT_EQ(t, mm->rss, (long)HUGE_PAGES - 1);
	unpin_user_pages(pages, HUGE_PAGES - 1);
	destroy_and_check(t, mm, free0);
}

/*
 * A 2 MiB leaf moved by FOLL_LONGTERM takes its deposited page table along: munmap of part
 * of the copy splits it with that table.
 */
static void mm_munmap_part_of_migrated_2m_page(struct ktest *t)
{
	struct pglist_data *pgdat = vm_node(1);
	unsigned long free0 = node_free_pages(pgdat);
	struct mm_struct *mm = mm_create(pgdat);
	struct page *p;

	KT_ASSERT_EQ(t, mm_mmap_anon(mm, BASE, HUGE, true, true, true), 0);
	fill_pages(mm, BASE, HUGE_PAGES);
	KT_ASSERT_EQ(t, pin_user_pages(mm, BASE, 1, FOLL_LONGTERM, &p), 1);
	KT_EXPECT_TRUE(t, compound_head(p)->mt != MIGRATE_MOVABLE);
	unpin_user_page(p);
	KT_EXPECT_EQ(t, mm_munmap(mm, BASE + HUGE - PAGE_SIZE, PAGE_SIZE), 0);
	KT_EXPECT_EQ(t, mm->rss, (long)HUGE_PAGES - 1);
	KT_EXPECT_EQ(t, pages_with_data(mm, BASE, HUGE_PAGES), HUGE_PAGES - 1);
	destroy_and_check(t, mm, free0);
}

/* ---- munmap with the VMA table full ---- */

/*
 * MM_MAX_VMAS regions; a munmap of a hole inside the first needs a 17th: -ENOMEM, with
 * nothing changed (regions, rss, every page and its data), as Linux's munmap past
 * max_map_count. Once a slot is free the same munmap works, and the page past the hole is
 * still mapped, inside its VMA. Before: the region was cut at the hole but only the hole
 * unmapped: its tail stayed mapped with no VMA (faults there -EFAULT, gup still pinned it).
 */
static void mm_munmap_split_with_vma_table_full_fails(struct ktest *t)
{
	struct pglist_data *pgdat = vm_node(1);
	unsigned long free0 = node_free_pages(pgdat);
	struct mm_struct *mm = mm_create(pgdat);
	u64 hole = BASE + 4 * PAGE_SIZE, tail = BASE + 8 * PAGE_SIZE;
	struct vm_area before[MM_MAX_VMAS];

	KT_ASSERT_EQ(t, mm_mmap_anon(mm, BASE, 16 * PAGE_SIZE, true, false, true), 0);
	for (unsigned int i = 1; i < MM_MAX_VMAS; i++)
		KT_ASSERT_EQ(t, mm_mmap_anon(mm, BASE + i * HUGE, PAGE_SIZE, true, false, false), 0);
	fill_pages(mm, BASE, 16);
	memcpy(before, mm->vmas, sizeof(before));
	KT_EXPECT_EQ(t, mm_munmap(mm, hole, PAGE_SIZE), -ENOMEM);
	KT_EXPECT_EQ(t, mm->nr_vmas, (unsigned int)MM_MAX_VMAS);
	KT_EXPECT_EQ(t, memcmp(before, mm->vmas, sizeof(before)), 0);
	KT_EXPECT_EQ(t, mm->rss, 16l);
	KT_EXPECT_EQ(t, pages_with_data(mm, BASE, 16), 16ul);
	KT_EXPECT_EQ(t, handle_mm_fault(mm, tail), 0);
	KT_EXPECT_EQ(t, mm_munmap(mm, BASE + HUGE, PAGE_SIZE), 0);	/* a free slot */
	KT_EXPECT_EQ(t, mm_munmap(mm, hole, PAGE_SIZE), 0);
	KT_EXPECT_EQ(t, mm->rss, 15l);
	KT_EXPECT_EQ(t, handle_mm_fault(mm, tail), 0);
	KT_EXPECT_EQ(t, pages_with_data(mm, BASE, 16), 15ul);
	KT_EXPECT_EQ(t, handle_mm_fault(mm, hole), -EFAULT);
	destroy_and_check(t, mm, free0);
}

/*
 * munmap's arguments, as Linux checks them: start not page aligned, len 0, a range past the
 * end of user space: -EINVAL, nothing unmapped. len is rounded up to whole pages.
 */
static void mm_munmap_bad_range_rejected(struct ktest *t)
{
	struct pglist_data *pgdat = vm_node(1);
	unsigned long free0 = node_free_pages(pgdat);
	struct mm_struct *mm = mm_create(pgdat);

	KT_ASSERT_EQ(t, mm_mmap_anon(mm, BASE, 4 * PAGE_SIZE, true, false, true), 0);
	KT_EXPECT_EQ(t, mm_munmap(mm, BASE + 1, PAGE_SIZE), -EINVAL);
	KT_EXPECT_EQ(t, mm_munmap(mm, BASE, 0), -EINVAL);
	KT_EXPECT_EQ(t, mm_munmap(mm, BASE, USER_VA_END), -EINVAL);
	KT_EXPECT_EQ(t, mm_munmap(mm, USER_VA_END + PAGE_SIZE, PAGE_SIZE), -EINVAL);
	KT_EXPECT_EQ(t, mm->rss, 4l);
	KT_EXPECT_EQ(t, mm_munmap(mm, BASE, 1), 0);	/* one whole page */
	KT_EXPECT_EQ(t, mm->rss, 3l);
	KT_EXPECT_EQ(t, mapped_pages(mm, BASE + PAGE_SIZE, 3), 3);
	destroy_and_check(t, mm, free0);
}

/* ---- gup's slow path: FOLL_LONGTERM against a plain fault, interrupts ---- */

struct longterm_race {
	struct mm_struct *mm;
	int go, done;		/* CPU 1 may fault; has installed its page */
	int held;		/* CPU 0's fault waited at its install until CPU 1's was in */
	long ret;
	struct page *page;
	u64 faults1;
};
static struct longterm_race *lt_race;

/* fault_race_hook: CPU 0's fault (the pin's, page allocated, not installed) waits until
 * CPU 1's plain fault of the same page has installed a MOVABLE page (2 s at most). */
static void longterm_race_hook(struct mm_struct *mm, u64 addr)
{
	struct longterm_race *r = READ_ONCE(lt_race);
	u64 deadline = arch_cycles() + 2000000000ull;

	if (!r || mm != r->mm || arch_cpu_id() != 0 || smp_load_acquire(&r->go))
		return;
	smp_store_release(&r->go, 1);
	while (!smp_load_acquire(&r->done) && arch_cycles() < deadline)
		arch_cpu_relax();
	WRITE_ONCE(r->held, smp_load_acquire(&r->done));
}

static void *longterm_race_cpu(void *arg)
{
	struct longterm_race *r = lt_race;
	u64 deadline = arch_cycles() + 2000000000ull;

	(void)arg;
	if (arch_cpu_id() == 0) {
		r->ret = pin_user_pages(r->mm, BASE, 1, FOLL_LONGTERM, &r->page);
		return NULL;
	}
	while (!smp_load_acquire(&r->go) && arch_cycles() < deadline)
		arch_cpu_relax();
	if (smp_load_acquire(&r->go) && handle_mm_fault(r->mm, BASE) == 0)
		r->faults1 = MM_STAT(r->mm, faults);
	smp_store_release(&r->done, 1);
	return NULL;
}

/*
 * A FOLL_LONGTERM pin of an empty page: its migration pass finds nothing, its own fault
 * (UNMOVABLE) is held before its install while CPU 1's plain fault installs a MOVABLE page
 * there, so the pin's install loses. The pin must still succeed, on an UNMOVABLE page, the
 * one mapped, by moving CPU 1's page (Linux retries: -EAGAIN from
 * check_and_migrate_movable_pages()). Before: -EBUSY, "migration could not move it", though
 * nothing held the page. Window: CPU 0's install was held until CPU 1's was in.
 */
static void pin_user_pages_longterm_loses_install_to_plain_fault(struct ktest *t)
{
	struct pglist_data *pgdat;
	struct longterm_race r = { 0 };
	struct gup_totals a, b;
	char dummy[2];

	KT_SKIP_UNLESS_DEBUG_VM(t, "no fault_race_hook to hold the pin's install");
	pgdat = vm_node(2);
	r.mm = mm_create(pgdat);
	KT_ASSERT_EQ(t, mm_mmap_anon(r.mm, BASE, PAGE_SIZE, true, false, false), 0);
	gup_read_totals(&a);
	WRITE_ONCE(lt_race, &r);
	smp_store_release(&fault_race_hook, longterm_race_hook);
	run_on_cpus(2, longterm_race_cpu, dummy, 1);
	smp_store_release(&fault_race_hook, NULL);
	WRITE_ONCE(lt_race, NULL);
	gup_read_totals(&b);
	ktest_printf(t, "pin: %ld; CPU 0's install held until CPU 1's fault was in: %s; pages "
		     "moved: %llu", r.ret, r.held ? "yes" : "no",
		     (unsigned long long)(b.longterm_migrated - a.longterm_migrated));
	KT_EXPECT_TRUE(t, r.held);	/* the race window was exercised */
	KT_EXPECT_EQ(t, r.faults1, 1ull);
	KT_EXPECT_EQ(t, r.ret, 1l);
	if (r.ret == 1) {
		KT_EXPECT_TRUE(t, r.page->mt != MIGRATE_MOVABLE);
		KT_EXPECT_TRUE(t, r.page == page_at(r.mm, BASE));
		KT_EXPECT_EQ(t, b.longterm_migrated - a.longterm_migrated, 1ull);
		unpin_user_page(r.page);
	}
	KT_EXPECT_EQ(t, r.mm->rss, 1l);
	mm_destroy(r.mm);
	KT_EXPECT_EQ(t, mm_verify(pgdat), 0ul);
	test_node_destroy(pgdat);
}

/* ---- a 2 MiB fault with no free 2 MiB block: 4 KiB pages (VM_FAULT_FALLBACK) ---- */

/*
 * Take every free page of the node, then give back those with an even pfn: their buddies
 * are held, so nothing merges above order 0 and no 2 MiB block is free, while half of the
 * memory is. Returns the held pages (free them with release_odd_pages()).
 */
static struct page **hold_odd_pages(struct pglist_data *pgdat, unsigned long *nr)
{
	struct page **held = malloc(node_free_pages(pgdat) * sizeof(*held)), *p;
	unsigned long n = 0;
	unsigned long all = 0;

	while ((p = alloc_pages_node(pgdat, GFP_KERNEL | __GFP_NOWARN, 0)))
		held[all++] = p;
	for (unsigned long i = 0; i < all; i++)
		if (page_to_pfn(held[i]) & 1)
			held[n++] = held[i];
		else
			__free_pages(held[i], 0);
	*nr = n;
	return held;
}

static void release_odd_pages(struct page **held, unsigned long nr)
{
	for (unsigned long i = 0; i < nr; i++)
		__free_pages(held[i], 0);
	free(held);
}

/*
 * A fault in a huge region when no 2 MiB block is free maps one zeroed 4 KiB page below a
 * fresh page table (Linux: do_huge_pmd_anonymous_page() -> VM_FAULT_FALLBACK ->
 * handle_pte_fault()), counted in thp_fallbacks; once blocks are free again, the next fault
 * in that 2 MiB still gets a 4 KiB page (the table stays: no collapse, as Linux without
 * khugepaged). Before: -ENOMEM with half of the memory free.
 */
static void handle_mm_fault_huge_without_free_block_falls_back(struct ktest *t)
{
	struct pglist_data *pgdat = vm_node(1);
	unsigned long free0 = node_free_pages(pgdat), nr_held;
	struct mm_struct *mm = mm_create(pgdat);
	struct page **held, *p, *block;

	KT_ASSERT_EQ(t, mm_mmap_anon(mm, BASE, HUGE, true, true, false), 0);
	held = hold_odd_pages(pgdat, &nr_held);
	block = alloc_pages_node(pgdat, GFP_USER | __GFP_NOWARN, pageblock_order);
	KT_ASSERT_TRUE(t, !block);	/* the setup: no free 2 MiB block */
	KT_EXPECT_TRUE(t, node_free_pages(pgdat) > free0 / 3);
	KT_EXPECT_EQ(t, handle_mm_fault(mm, BASE + 5 * PAGE_SIZE), 0);
	KT_EXPECT_EQ(t, mm->rss, 1l);
	KT_EXPECT_EQ(t, MM_STAT(mm, thp_fallbacks), 1ull);
	KT_EXPECT_TRUE(t, !page_at(mm, BASE));
	p = page_at(mm, BASE + 5 * PAGE_SIZE);
	KT_ASSERT_TRUE(t, p);
	KT_EXPECT_EQ(t, compound_head(p)->order, 0);
	KT_EXPECT_EQ(t, ((u8 *)page_address(p))[PAGE_SIZE - 1], 0);
	memset(page_address(p), 0x5a, PAGE_SIZE);
	release_odd_pages(held, nr_held);
	KT_EXPECT_EQ(t, handle_mm_fault(mm, BASE + 6 * PAGE_SIZE), 0);
	KT_EXPECT_EQ(t, mm->rss, 2l);
	KT_EXPECT_EQ(t, MM_STAT(mm, thp_fallbacks), 1ull);
	KT_EXPECT_EQ(t, compound_head(page_at(mm, BASE + 6 * PAGE_SIZE))->order, 0);
	KT_EXPECT_EQ(t, ((u8 *)page_address(p))[0], 0x5a);
	destroy_and_check(t, mm, free0);
}

/*
 * A populated huge region when no 2 MiB block is free: populate steps 4 KiB at a time where
 * its fault fell back (Linux's __get_user_pages() steps by what it found mapped), so every
 * page is mapped, with 4 KiB pages; one fallback per 2 MiB (the next faults find the table).
 * Before: populate stepped 2 MiB after each fault and returned 0 with one page of 512 mapped.
 */
static void mm_mmap_anon_populate_huge_falls_back_maps_every_page(struct ktest *t)
{
	struct pglist_data *pgdat = vm_node(1);
	unsigned long free0 = node_free_pages(pgdat), nr_held;
	struct mm_struct *mm = mm_create(pgdat);
	struct page **held = hold_odd_pages(pgdat, &nr_held), *p;

	KT_EXPECT_EQ(t, mm_mmap_anon(mm, BASE, 2 * HUGE, true, true, true), 0);
	KT_EXPECT_EQ(t, mm->rss, 2l * HUGE_PAGES);
	KT_EXPECT_EQ(t, mapped_pages(mm, BASE, 2 * HUGE_PAGES), 2 * HUGE_PAGES);
	KT_EXPECT_EQ(t, MM_STAT(mm, thp_fallbacks), 2ull);
	p = page_at(mm, BASE + HUGE + PAGE_SIZE);
	KT_EXPECT_TRUE(t, p && compound_head(p)->order == 0);
	release_odd_pages(held, nr_held);
	destroy_and_check(t, mm, free0);
}

static void pin_with_irqs_off(void *arg)
{
	struct mm_struct *mm = arg;
	struct page *p;
	unsigned long flags = arch_irq_save();

	if (pin_user_pages(mm, BASE, 1, 0, &p) == 1)
		unpin_user_page(p);
	arch_irq_restore(flags);
}

/*
 * gup's slow path waits for mmap_lock and mm->lock, whose holders may be waiting for this
 * CPU to answer a TLB shootdown: called with interrupts off it is a bug, caught at its
 * entry (Linux: might_sleep() in mmap_read_lock()), not once it deadlocks.
 */
static void pin_user_pages_irqs_off_caught(struct ktest *t)
{
	struct pglist_data *pgdat;
	struct mm_struct *mm;

	KT_SKIP_UNLESS_DEBUG_VM(t, "VM_BUG_ON is off");
	pgdat = vm_node(1);
	mm = mm_create(pgdat);
	KT_ASSERT_EQ(t, mm_mmap_anon(mm, BASE, PAGE_SIZE, true, false, true), 0);
	KT_EXPECT_TRUE(t, host_panics(pin_with_irqs_off, mm));
	KT_EXPECT_TRUE(t, strstr(host_panic_msg, "arch_irqs_disabled") != NULL);
	host_irqs_off = 0;
	KT_EXPECT_EQ(t, mm->rss, 1l);
	mm_destroy(mm);
	KT_EXPECT_EQ(t, mm_verify(pgdat), 0ul);
	test_node_destroy(pgdat);
}

static const struct ktest_case vm_cases[] = {
	KTEST_CASE(mm_munmap_4k_of_2m_page_keeps_the_rest),
	KTEST_CASE(mm_munmap_2m_page_piece_by_piece_frees_it_once),
	KTEST_CASE(mm_munmap_split_2m_page_and_4k_page_together),
	KTEST_CASE(mm_munmap_split_2m_page_keeps_pins),
	KTEST_CASE(handle_mm_fault_cut_huge_vma_gets_4k_pages),
	KTEST_CASE(pin_user_pages_cut_huge_vma_over_page_table),
	KTEST_CASE(handle_mm_fault_huge_without_free_block_falls_back),
	KTEST_CASE(mm_mmap_anon_populate_huge_falls_back_maps_every_page),
	KTEST_CASE(pin_user_pages_longterm_split_2m_page),
	KTEST_CASE(mm_munmap_part_of_migrated_2m_page),
	KTEST_CASE(mm_munmap_split_with_vma_table_full_fails),
	KTEST_CASE(mm_munmap_bad_range_rejected),
	KTEST_CASE_CONCURRENT(pin_user_pages_longterm_loses_install_to_plain_fault),
	KTEST_CASE(pin_user_pages_irqs_off_caught),
};
KTEST_SUITE(host_vm, vm_cases);
