/* Kernel page tables (arch/x86_64/paging.c): the direct map and the protected kernel image. */
#ifndef ARCH_PAGING_H
#define ARCH_PAGING_H

#include "kernel/compiler.h"

struct boot_info;

#define PTE_P (1ull << 0)	/* present */
#define PTE_W (1ull << 1)	/* writable */
#define PTE_U (1ull << 2)	/* user */
#define PTE_PCD (1ull << 4)	/* cache disable */
#define PTE_A (1ull << 5)	/* accessed */
#define PTE_D (1ull << 6)	/* dirty */
#define PTE_PS (1ull << 7)	/* large page (in a PD or PDPT entry) */
#define PTE_G (1ull << 8)	/* global */
#define PTE_NX (1ull << 63)	/* no execute (only when EFER.NXE is on) */
#define PTE_ADDR_MASK 0x000ffffffffff000ull

/* Largest physical address the direct map may cover; RAM above it is left out (with a message). */
#define DIRECT_MAP_MAX_PHYS (64ull << 30)

/* Build the kernel page tables from the memory map and switch the BSP to them. */
void arch_paging_init(const struct boot_info *bi);
/* Physical address of the kernel PML4 (for CR3 on APs once they are in long mode). */
u64 arch_kernel_cr3(void);
/* End of the direct map: RAM at or above this physical address is not mapped. */
u64 arch_direct_map_end(void);
/* Virtual area of the per-CPU stacks of CPUs 1 and up (arch/x86_64/gdt.c): its own PML4 slot. */
#define CPU_STACK_AREA 0xffffc00000000000ull
/*
 * Map the 4 KiB page at physical pa at kernel address va (RW, NX, global), taking missing
 * page-table pages from alloc_table (a zeroed page's physical address, or 0). Only for
 * addresses no CPU has used yet (no TLB shootdown). Returns 0, or -1 if alloc_table failed.
 */
int arch_map_kernel_page(void *va, u64 pa, u64 (*alloc_table)(void));
/* Unmap one 4 KiB page of the kernel image (a stack guard). Local TLB only: call before other
 * CPUs can have it cached. Returns 0, or -1 if va is not a 4 KiB kernel-image page. */
int arch_unmap_kernel_page(void *va);
/* The leaf page-table entry flags for va (0 if not mapped), for protection tests. */
u64 arch_kernel_pte_flags(const void *va);

#endif
