/*
 * Host (Linux userspace) side of the kernel/arch.h contract, for the test harness only:
 * a CPU is a pthread with a thread-local id, "interrupts disabled" is a per-thread flag,
 * and physical memory is one big mmap'd region (tests/host/shim/shim.c).
 */
#ifndef HOST_ARCH_OPS_H
#define HOST_ARCH_OPS_H

#include "kernel/compiler.h"
#include <time.h>

/* As on x86-64 (kernel/smp.h embeds it); the harness never reads it. */
struct arch_cpu_head {
	struct arch_cpu_head *self;
	u32 cpu_id;
	u32 apic_id;
	u32 hardirq_depth;
};

extern __thread unsigned int host_cpu_id;
extern __thread unsigned long host_irqs_off;	/* 1 while "interrupts" are disabled */
extern u8 *host_phys_base;			/* physical address 0 */
extern u64 host_phys_size;

/* Run pending simulated interrupts (call IPI, a test's tick) of this thread, if enabled. */
void host_irq_poll(void);
/* hlt: wait for an IPI (or 1 ms), taking it (tests/host/shim/cpu.c). */
void host_halt(void);
/*
 * Nonzero while some thread may have something to do at an interleave point: a pending
 * call IPI, a test's tick handler, or the deterministic scheduler (tests/host/shim/
 * sched.c). Zero otherwise, so that a point costs one load when nothing is going on.
 */
extern int host_interleave_armed;
/* tests/host/shim/sched.c: the slow paths of arch_interleave_point() and arch_cpu_relax(). */
void host_interleave(void);
void host_spin_wait(void);

static inline unsigned int arch_cpu_id(void)
{
	return host_cpu_id;
}

static inline unsigned long arch_irq_save(void)
{
	unsigned long flags = host_irqs_off;

	host_irqs_off = 1;
	return flags;
}

static inline void arch_irq_restore(unsigned long flags)
{
	host_irqs_off = flags;
	if (!flags)
		host_irq_poll();
}

static inline void arch_irq_disable(void)
{
	host_irqs_off = 1;
}

static inline void arch_irq_enable(void)
{
	host_irqs_off = 0;
	host_irq_poll();
}

static inline bool arch_irqs_disabled_flags(unsigned long flags)
{
	return flags != 0;
}

/* The call IPI (kernel/smp.c's calls, taken by tests/host/shim/cpu.c) and a test's tick are
 * the interrupt handlers: this CPU's irq_depth, which both count. */
unsigned int host_irq_depth(void);

static inline unsigned int arch_in_irq(void)
{
	return host_irq_depth();
}

static inline bool arch_irqs_disabled(void)
{
	return host_irqs_off != 0;
}

/*
 * Threads outnumber host cores: give the lock holder a chance to run. A spinning CPU with
 * interrupts on takes them, as real hardware would. In deterministic mode a spin is a
 * scheduling point that lets every other thread go first (sched.c).
 */
static inline void arch_cpu_relax(void)
{
	host_spin_wait();
}

/*
 * Inside critical sections (lock, unlock, list and page-table operations, racy accesses):
 * pending simulated interrupts run here if this thread's interrupts are on, and in
 * deterministic mode the scheduler may switch threads here.
 */
static inline void arch_interleave_point(void)
{
	if (__atomic_load_n(&host_interleave_armed, __ATOMIC_RELAXED))
		host_interleave();
}

static inline u64 arch_cycles(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (u64)ts.tv_sec * 1000000000ull + (u64)ts.tv_nsec;
}

static inline void *arch_phys_to_virt(u64 pa)
{
	return host_phys_base + pa;
}

static inline u64 arch_virt_to_phys(const void *va)
{
	return (u64)((const u8 *)va - host_phys_base);
}

/* The host has no TLB to flush: simulated page tables are only walked in software. */
static inline void arch_flush_tlb_local(void)
{
}

/* sti; hlt: interrupts on, then sleep until one comes (a CPU thread idles here). */
static inline void arch_wait_for_interrupt(void)
{
	host_irqs_off = 0;
	host_halt();
}

#endif
