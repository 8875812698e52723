/* x86-64 side of the kernel/arch.h contract: the small inline accessors generic code calls
 * (the asm that only arch/x86_64 needs stays in its own files: apic.c, gdt.c, trap.c, ...). */
#ifndef ARCH_X86_64_ARCH_OPS_H
#define ARCH_X86_64_ARCH_OPS_H

#include "kernel/compiler.h"

/* Virtual layout: the direct map of all physical memory, and the kernel image at -2 GiB. */
#define DIRECT_MAP_BASE 0xffff800000000000ull
#define KERNEL_VMA 0xffffffff80000000ull

/*
 * The first bytes of every CPU's per-CPU area, which GS base points at. Offsets are fixed
 * because arch_cpu_id() reads them with %gs-relative loads.
 */
struct arch_cpu_head {
	struct arch_cpu_head *self;	/* %gs:0 */
	u32 cpu_id;			/* %gs:8, 0 .. nr_cpus-1 */
	u32 apic_id;			/* %gs:12 */
	u32 hardirq_depth;		/* %gs:16, interrupt handlers running (trap_dispatch) */
};

/* A 32-bit load clears the register's upper half: the 64-bit output tells the compiler so,
 * and it need not zero-extend the id again to index an array with it. */
static __always_inline unsigned int arch_cpu_id(void)
{
	unsigned long id;

	__asm__ __volatile__("movl %%gs:8, %k0" : "=r"(id));
	if (id > 0xffffffffu)
		__builtin_unreachable();
	return (unsigned int)id;
}

/* Interrupt handlers (not exceptions) now running on this CPU: 0 in thread context. */
static __always_inline unsigned int arch_in_irq(void)
{
	unsigned int depth;

	__asm__ __volatile__("movl %%gs:16, %0" : "=r"(depth));
	return depth;
}

static __always_inline unsigned long arch_irq_save(void)
{
	unsigned long flags;

	__asm__ __volatile__("pushfq; popq %0; cli" : "=r"(flags) : : "memory");
	return flags;
}

static __always_inline void arch_irq_restore(unsigned long flags)
{
	if (flags & (1ul << 9))
		__asm__ __volatile__("sti" ::: "memory");
}

static __always_inline void arch_irq_disable(void)
{
	__asm__ __volatile__("cli" ::: "memory");
}

static __always_inline void arch_irq_enable(void)
{
	__asm__ __volatile__("sti" ::: "memory");
}

static __always_inline bool arch_irqs_disabled(void)
{
	unsigned long flags;

	__asm__ __volatile__("pushfq; popq %0" : "=r"(flags));
	return !(flags & (1ul << 9));
}

/* Were interrupts disabled in a state that arch_irq_save() returned? */
static __always_inline bool arch_irqs_disabled_flags(unsigned long flags)
{
	return !(flags & (1ul << 9));
}

static __always_inline void arch_cpu_relax(void)
{
	__asm__ __volatile__("pause" ::: "memory");
}

/* Interrupts and other CPUs can come in at any instruction on real hardware: nothing to do. */
static __always_inline void arch_interleave_point(void)
{
}

static __always_inline u64 arch_cycles(void)
{
	u32 lo, hi;

	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((u64)hi << 32) | lo;
}

static __always_inline void *arch_phys_to_virt(u64 pa)
{
	return (void *)(uintptr_t)(pa + DIRECT_MAP_BASE);
}

/* Accepts direct-map and kernel-image addresses. */
static __always_inline u64 arch_virt_to_phys(const void *va)
{
	u64 v = (u64)(uintptr_t)va;

	return v >= KERNEL_VMA ? v - KERNEL_VMA : v - DIRECT_MAP_BASE;
}

/* Flush this CPU's TLB (non-global entries): the local half of a TLB shootdown. */
static __always_inline void arch_flush_tlb_local(void)
{
	unsigned long cr3;

	__asm__ __volatile__("mov %%cr3, %0; mov %0, %%cr3" : "=r"(cr3) : : "memory");
}

/* Enable interrupts and halt until one arrives, atomically (sti's one-instruction shadow). */
static __always_inline void arch_wait_for_interrupt(void)
{
	__asm__ __volatile__("sti; hlt" ::: "memory");
}

#endif
