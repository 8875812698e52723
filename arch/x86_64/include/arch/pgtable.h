/*
 * Page-table entry format for address spaces built by mm/vm.c: x86-64 4-level tables (PML4,
 * PDPT, PD, PT) of 512 64-bit entries. Pure bit arithmetic, so the host harness uses it too.
 * The kernel's own tables are in arch/x86_64/paging.c.
 */
#ifndef ARCH_PGTABLE_H
#define ARCH_PGTABLE_H

#include "kernel/compiler.h"

typedef u64 pte_t;	/* an entry at any level */

#define PT_LEVELS 4		/* level 4 = PML4 (top) ... level 1 = PT (leaf) */
#define PTRS_PER_TABLE 512
#define PT_LEVEL_SHIFT(level) (12 + 9 * ((level) - 1))
#define PT_LEVEL_SIZE(level) (1ull << PT_LEVEL_SHIFT(level))
#define USER_VA_END (1ull << 47)	/* lower canonical half */

#define _PTE_PRESENT (1ull << 0)
#define _PTE_WRITE (1ull << 1)
#define _PTE_USER (1ull << 2)
#define _PTE_ACCESSED (1ull << 5)
#define _PTE_DIRTY (1ull << 6)
#define _PTE_HUGE (1ull << 7)		/* a leaf above level 1 (2 MiB at level 2) */
#define _PTE_SPECIAL (1ull << 9)	/* software bit: no struct page behind it */
#define _PTE_MIGRATION (1ull << 10)	/* software bit, in a not-present leaf: page being moved */
#define _PTE_NX (1ull << 63)
#define _PTE_PFN_MASK 0x000ffffffffff000ull

static inline unsigned int pt_index_of(u64 va, int level)
{
	return (unsigned int)(va >> PT_LEVEL_SHIFT(level)) & (PTRS_PER_TABLE - 1);
}

static inline bool pte_present(pte_t e) { return e & _PTE_PRESENT; }
static inline bool pte_write(pte_t e) { return e & _PTE_WRITE; }
static inline bool pte_huge(pte_t e) { return e & _PTE_HUGE; }
static inline bool pte_special(pte_t e) { return e & _PTE_SPECIAL; }
static inline unsigned long pte_pfn(pte_t e) { return (unsigned long)((e & _PTE_PFN_MASK) >> 12); }

/* An entry that points at the next-level table in frame pfn. */
static inline pte_t mk_table_entry(unsigned long pfn)
{
	return ((u64)pfn << 12) | _PTE_PRESENT | _PTE_WRITE | _PTE_USER;
}

/* A leaf mapping frame pfn (huge: a 2 MiB leaf at level 2). */
static inline pte_t mk_leaf_entry(unsigned long pfn, bool writable, bool huge)
{
	return ((u64)pfn << 12) | _PTE_PRESENT | _PTE_USER | _PTE_ACCESSED | _PTE_NX |
	       (writable ? _PTE_WRITE | _PTE_DIRTY : 0) | (huge ? _PTE_HUGE : 0);
}

/*
 * A migration entry stands in for a leaf while its page is being moved (mm/gup.c): not
 * present, so hardware and the lockless walk ignore it, and it keeps the old entry's other
 * bits, so the migrator can put the old entry back. Linux encodes it as a swap entry.
 */
static inline pte_t mk_migration_entry(pte_t leaf)
{
	return (leaf & ~_PTE_PRESENT) | _PTE_MIGRATION;
}

static inline bool is_migration_entry(pte_t e)
{
	return !pte_present(e) && (e & _PTE_MIGRATION);
}

#endif
