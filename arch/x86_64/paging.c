/*
 * Kernel page tables: replaces the boot tables (boot/boot.asm) with a direct map of RAM and
 * a kernel image mapped with per-section protections. Not user address spaces (mm/).
 *
 *   0xffff800000000000 + pa   direct map: 0-4 GiB whole (MMIO too) + RAM above 4 GiB, RW, NX;
 *                             its alias of the kernel's text and rodata R, NX, 4 KiB pages
 *   0xffffc00000000000        per-CPU stacks of CPUs 1 and up, 4 KiB pages, guards unmapped (gdt.c)
 *   0xffffffff80000000 + pa   kernel image: .text RX, .rodata R NX, .data/.bss RW NX, 4 KiB pages
 * Nothing is mapped at low addresses any more, so a NULL dereference faults.
 */
#include "kernel/arch.h"
#include "kernel/bootinfo.h"
#include "kernel/panic.h"
#include "kernel/printk.h"
#include "kernel/string.h"
#include <arch/paging.h>
#include "io.h"

#define PT_ENTRIES 512
#define PT_POOL_PAGES 160	/* 64 GiB direct map (64 PDs) + image PTs + upper levels */
#define SZ_2M (2ull << 20)
#define SZ_4G (4ull << 30)

static u64 pt_pool[PT_POOL_PAGES][PT_ENTRIES] __aligned(PAGE_SIZE);
static unsigned int pt_pool_used;
static u64 *kernel_pml4;
static u64 direct_map_end = SZ_4G;
static u64 pte_nx;		/* PTE_NX if the CPU has NX, else 0 */

extern char __text_start[], __text_end[], __rodata_start[], __rodata_end[];
extern char __data_start[], __bss_end[];
extern char bsp_stack_guard[];	/* arch/x86_64/entry64.asm */

static u64 *pt_alloc(void)
{
	if (pt_pool_used == PT_POOL_PAGES)
		panic("paging: page-table pool exhausted (%u pages)", PT_POOL_PAGES);
	return pt_pool[pt_pool_used++];	/* .bss: already zero */
}

static u64 pt_phys(const u64 *table)
{
	return arch_virt_to_phys(table);
}

/* The table that entry idx of `table` points to, allocating it if absent. */
static u64 *pt_next(u64 *table, unsigned int idx)
{
	if (!(table[idx] & PTE_P))
		table[idx] = pt_phys(pt_alloc()) | PTE_P | PTE_W;
	BUG_ON(table[idx] & PTE_PS);
	return arch_phys_to_virt(table[idx] & PTE_ADDR_MASK);
}

static unsigned int pt_index(u64 va, int level)	/* level 4 = PML4 ... 1 = PT */
{
	return (va >> (12 + 9 * (level - 1))) & (PT_ENTRIES - 1);
}

static void map_2m(u64 va, u64 pa, u64 flags)
{
	u64 *pdpt = pt_next(kernel_pml4, pt_index(va, 4));
	u64 *pd = pt_next(pdpt, pt_index(va, 3));

	pd[pt_index(va, 2)] = pa | flags | PTE_PS | PTE_P;
}

static void map_4k(u64 va, u64 pa, u64 flags)
{
	u64 *pdpt = pt_next(kernel_pml4, pt_index(va, 4));
	u64 *pd = pt_next(pdpt, pt_index(va, 3));
	u64 *pt = pt_next(pd, pt_index(va, 2));

	pt[pt_index(va, 1)] = pa | flags | PTE_P;
}

static void map_direct_range(u64 start, u64 end)
{
	for (u64 pa = ALIGN_DOWN(start, SZ_2M); pa < end; pa += SZ_2M)
		map_2m(DIRECT_MAP_BASE + pa, pa, PTE_W | PTE_G | pte_nx);
}

/* 0-4 GiB whole, then each RAM region above 4 GiB up to DIRECT_MAP_MAX_PHYS. */
static void map_direct(const struct boot_info *bi)
{
	map_direct_range(0, SZ_4G);
	for (unsigned int i = 0; i < bi->nr_mmap; i++) {
		const struct mem_region *r = &bi->mmap[i];
		u64 end = r->base + r->length;

		if (r->type == MEM_RESERVED || r->type == MEM_BAD || end <= SZ_4G || end < r->base)
			continue;
		if (end > DIRECT_MAP_MAX_PHYS) {
			printk("paging: RAM above %llu GiB is not mapped (region ends at 0x%llx)\n",
			       (unsigned long long)(DIRECT_MAP_MAX_PHYS >> 30), (unsigned long long)end);
			end = DIRECT_MAP_MAX_PHYS;
		}
		if (r->base >= end)
			continue;
		map_direct_range(MAX(r->base, SZ_4G), end);
		direct_map_end = MAX(direct_map_end, ALIGN_UP(end, SZ_2M));
	}
}

/*
 * The direct map's alias of the kernel's text and rodata is read-only, like the image's own
 * mapping: else arch_phys_to_virt() of a text page would be a writable window onto the code.
 * Linux keeps every alias of them read-only (arch/x86/mm/pat/set_memory.c: a change to the
 * kernel text's mapping is made to its direct-map alias too, and static_protections() keeps
 * .rodata read-only "using the pfn", whatever the alias). Each 2 MiB page of the direct map
 * that holds some of [start, end) becomes a table of 4 KiB pages: read-only inside the range,
 * read-write outside (the rest of the image, the boot code, page tables), all NX.
 */
static void protect_direct_alias(u64 start, u64 end)
{
	for (u64 base = ALIGN_DOWN(start, SZ_2M); base < end; base += SZ_2M) {
		u64 va = DIRECT_MAP_BASE + base, *pt = pt_alloc();
		u64 *pd = pt_next(pt_next(kernel_pml4, pt_index(va, 4)), pt_index(va, 3));

		for (unsigned int i = 0; i < PT_ENTRIES; i++) {
			u64 pa = base + (u64)i * PAGE_SIZE;

			pt[i] = pa | PTE_P | PTE_G | pte_nx | (pa >= start && pa < end ? 0 : PTE_W);
		}
		pd[pt_index(va, 2)] = pt_phys(pt) | PTE_P | PTE_W;
	}
}

static void map_image_range(const char *start, const char *end, u64 flags)
{
	for (u64 va = (u64)(uintptr_t)start; va < (u64)(uintptr_t)end; va += PAGE_SIZE)
		map_4k(va, va - KERNEL_VMA, flags | PTE_G);
}

void arch_paging_init(const struct boot_info *bi)
{
	u32 a, b, c, d;

	cpuid(0x80000001, 0, &a, &b, &c, &d);
	pte_nx = (d & (1u << 20)) ? PTE_NX : 0;
	kernel_pml4 = pt_alloc();
	map_direct(bi);
	protect_direct_alias(arch_virt_to_phys(__text_start), arch_virt_to_phys(__rodata_end));
	map_image_range(__text_start, __text_end, 0);
	map_image_range(__rodata_start, __rodata_end, pte_nx);
	map_image_range(__data_start, __bss_end, PTE_W | pte_nx);
	__asm__ __volatile__("mov %0, %%cr3" : : "r"(pt_phys(kernel_pml4)) : "memory");
	arch_unmap_kernel_page(bsp_stack_guard);	/* an overflow of the BSP stack now faults */
	printk("paging: direct map 0-0x%llx RW+NX (its alias of kernel text and rodata R+NX), "
	       "kernel text RX / rodata R / data RW+NX%s, %u table pages\n",
	       (unsigned long long)direct_map_end, pte_nx ? "" : " (no NX on this CPU)", pt_pool_used);
}

u64 arch_kernel_cr3(void)
{
	return pt_phys(kernel_pml4);
}

u64 arch_direct_map_end(void)
{
	return direct_map_end;
}

/* Walk to the leaf entry for va; NULL if a level is missing. *level is 1 (4K) or 2 (2M). */
static u64 *pt_lookup(u64 va, int *level)
{
	u64 *table = kernel_pml4;

	for (int l = 4; l > 1; l--) {
		u64 e = table[pt_index(va, l)];
		if (!(e & PTE_P))
			return NULL;
		if (e & PTE_PS) {
			*level = l;
			return &table[pt_index(va, l)];
		}
		table = arch_phys_to_virt(e & PTE_ADDR_MASK);
	}
	*level = 1;
	return &table[pt_index(va, 1)];
}

/* The table that entry idx of `table` points to, allocating it with alloc_table if absent. */
static u64 *pt_next_from(u64 *table, unsigned int idx, u64 (*alloc_table)(void))
{
	if (!(table[idx] & PTE_P)) {
		u64 pa = alloc_table();

		if (!pa)
			return NULL;
		table[idx] = pa | PTE_P | PTE_W;
	}
	BUG_ON(table[idx] & PTE_PS);
	return arch_phys_to_virt(table[idx] & PTE_ADDR_MASK);
}

int arch_map_kernel_page(void *va, u64 pa, u64 (*alloc_table)(void))
{
	u64 v = (u64)(uintptr_t)va, *t = kernel_pml4;

	for (int level = 4; level > 1 && t; level--)
		t = pt_next_from(t, pt_index(v, level), alloc_table);
	if (!t)
		return -1;
	t[pt_index(v, 1)] = pa | PTE_P | PTE_W | PTE_G | pte_nx;
	return 0;
}

int arch_unmap_kernel_page(void *va)
{
	int level;
	u64 *pte = pt_lookup((u64)(uintptr_t)va, &level);

	if (!pte || level != 1 || (u64)(uintptr_t)va < KERNEL_VMA)
		return -1;
	*pte = 0;
	__asm__ __volatile__("invlpg (%0)" : : "r"(va) : "memory");
	return 0;
}

u64 arch_kernel_pte_flags(const void *va)
{
	int level;
	u64 *pte = pt_lookup((u64)(uintptr_t)va, &level);

	return pte && (*pte & PTE_P) ? *pte & ~PTE_ADDR_MASK : 0;
}
