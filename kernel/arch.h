/*
 * The contract between generic code (kernel/, mm/) and an architecture: every arch_* below
 * must exist. x86-64 implements it in arch/x86_64/include/arch/arch_ops.h; the host test
 * harness implements it with pthreads in tests/host/shim/arch/arch_ops.h. Generic code
 * includes this file and never tests which architecture it is built for.
 *
 *   unsigned int arch_cpu_id(void)        index of the running CPU, 0 .. nr_cpus-1
 *   unsigned long arch_irq_save(void)     disable interrupts, return the previous state
 *   void arch_irq_restore(unsigned long)  put back a state from arch_irq_save()
 *   void arch_irq_disable(void), arch_irq_enable(void)
 *   bool arch_irqs_disabled(void)
 *   bool arch_irqs_disabled_flags(unsigned long flags)  ... in a state from arch_irq_save()
 *   unsigned int arch_in_irq(void)        interrupt handlers running on this CPU (0: thread
 *                                         context; exceptions do not count); lockdep's
 *                                         "in hard-irq context"
 *   void arch_cpu_relax(void)             body of every spin-wait loop (x86: pause)
 *   void arch_interleave_point(void)      a point inside a critical section (lock, unlock,
 *                                         list and page-table operations, racy accesses)
 *                                         where another CPU or an interrupt may come in.
 *                                         Nothing on x86, where that can happen at every
 *                                         instruction; the host shim, whose threads only
 *                                         take simulated interrupts where it lets them,
 *                                         delivers them here and may switch threads here
 *   u64  arch_cycles(void)                a fast monotonic per-CPU cycle counter (x86: TSC)
 *   void *arch_phys_to_virt(u64 pa)       direct-map address of physical address pa
 *   u64  arch_virt_to_phys(const void *)  inverse of arch_phys_to_virt for direct-map addresses
 *   void arch_wait_for_interrupt(void)    sleep until an interrupt (x86: sti; hlt)
 *   void arch_flush_tlb_local(void)       flush this CPU's TLB (the local half of a shootdown)
 */
#ifndef KERNEL_ARCH_H
#define KERNEL_ARCH_H

#include "kernel/compiler.h"
#include <arch/arch_ops.h>

#define PAGE_SHIFT 12
#define PAGE_SIZE (1ul << PAGE_SHIFT)
#define PAGE_MASK (~(PAGE_SIZE - 1))

#endif
