/*
 * The contract between generic code (kernel/, mm/) and an architecture: the prototypes below
 * are declared here, before the architecture's header is included, so an implementation
 * whose signature differs, or that is missing, fails to build. x86-64 implements them in
 * arch/x86_64/include/arch/arch_ops.h (inline) and arch/x86_64/serial.c; the host test
 * harness with pthreads in tests/host/shim/arch/arch_ops.h and tests/host/shim/shim.c.
 * Generic code includes this file and never tests which architecture it is built for.
 */
#ifndef KERNEL_ARCH_H
#define KERNEL_ARCH_H

#include "kernel/compiler.h"

/* Index of the running CPU, 0 .. nr_cpus-1. */
static inline unsigned int arch_cpu_id(void);
/* Disable interrupts and return the previous state; put back a state from arch_irq_save(). */
static inline unsigned long arch_irq_save(void);
static inline void arch_irq_restore(unsigned long flags);
static inline void arch_irq_disable(void);
static inline void arch_irq_enable(void);
static inline bool arch_irqs_disabled(void);
/* ... in a state from arch_irq_save(). */
static inline bool arch_irqs_disabled_flags(unsigned long flags);
/* Interrupt handlers running on this CPU (0: thread context; exceptions do not count):
 * lockdep's "in hard-irq context". */
static inline unsigned int arch_in_irq(void);
/* The body of every spin-wait loop (x86: pause). */
static inline void arch_cpu_relax(void);
/*
 * A point inside a critical section (lock, unlock, list and page-table operations,
 * READ_ONCE/WRITE_ONCE) where another CPU or an interrupt may come in. Nothing on x86, where
 * that can happen at every instruction; the host shim, whose threads only take simulated
 * interrupts where it lets them, delivers them here and may switch threads here.
 */
static inline void arch_interleave_point(void);
/* A fast monotonic per-CPU cycle counter (x86: TSC). */
static inline u64 arch_cycles(void);
/* Direct-map address of physical address pa, and back (direct-map addresses only). */
static inline void *arch_phys_to_virt(u64 pa);
static inline u64 arch_virt_to_phys(const void *va);
/* Sleep until an interrupt (x86: sti; hlt). */
static inline void arch_wait_for_interrupt(void);
/* Flush this CPU's TLB: the local half of a shootdown. */
static inline void arch_flush_tlb_local(void);
/* Write len bytes to the console, as they are (kernel/printk.c serializes the callers). */
void arch_console_write(const char *s, size_t len);
/* Append the machine's second command line, if it has one (x86: the QEMU fw_cfg file
 * "opt/smpmm/cmdline"), to buf (len bytes so far, counted even past cap), as much as fits in
 * cap bytes with the NUL; returns the length the whole line has (cap or more: it was cut). */
size_t arch_fwcfg_cmdline(char *buf, size_t len, size_t cap);

#include <arch/arch_ops.h>

#define PAGE_SHIFT 12
#define PAGE_SIZE (1ul << PAGE_SHIFT)
#define PAGE_MASK (~(PAGE_SIZE - 1))

#endif
