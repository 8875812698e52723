/*
 * CPUs: the per-CPU areas, which CPUs are online, and cross-CPU function calls (kernel/smp.c).
 * Bring-up itself is arch code (arch/x86_64/smp.c); this header is the generic view of it.
 */
#ifndef KERNEL_SMP_H
#define KERNEL_SMP_H

#include "kernel/arch.h"
#include "kernel/spinlock.h"

#define MAX_CPUS 256
#define SMP_CALL_RING 32	/* queued calls per target CPU before senders wait */
#define CPU_MASK_WORDS (MAX_CPUS / 64)

typedef void (*smp_call_fn)(void *arg);
struct smp_call;
struct smp_work;
struct trap_recovery;

/*
 * One CPU's area. GS base points at it (arch.self), so arch_cpu_id() and this_cpu() are one
 * %gs load. Fields are written only by their own CPU unless a comment says otherwise.
 */
struct cpu {
	struct arch_cpu_head arch;	/* first: self, cpu_id, apic_id (arch/arch_ops.h) */
	bool online;			/* set by the CPU itself, read by anyone */
	void *stack_top;		/* top of the kernel stack it runs on */
	unsigned int irq_depth;		/* interrupt/exception handlers now running on it */
	u64 ticks;			/* timer interrupts taken (kernel/timer.h) */
	u64 ipis;			/* call-function and wake IPIs taken */
	struct trap_recovery *recovery;	/* innermost armed kernel/trap.h recovery point */

	/* Calls queued for this CPU by others: a ring under call_lock (IRQ-safe). */
	spinlock_t call_lock;
	u32 call_head, call_tail;	/* head: next to run, tail: next free; u32 wrap */
	struct smp_call *call_ring[SMP_CALL_RING];

	struct smp_work *work;		/* smp_run_on_all() job for the idle loop; set by sender */
} __cacheline_aligned;

extern struct cpu cpus[MAX_CPUS];
/* CPU indices in use: 0 .. nr_cpus - 1. All are online unless bring-up failed for one. */
extern unsigned int nr_cpus;

static inline struct cpu *this_cpu(void) { return &cpus[arch_cpu_id()]; }
static inline struct cpu *cpu_ptr(unsigned int cpu) { return &cpus[cpu]; }
static inline bool cpu_online(unsigned int cpu)
{
	return cpu < MAX_CPUS && READ_ONCE(cpus[cpu].online);
}
unsigned int nr_cpus_online(void);
#define for_each_online_cpu(c) \
	for (unsigned int c = 0; c < nr_cpus; c++) if (cpu_online(c))

/* ---- cross-CPU calls ---------------------------------------------------------------------- */

/*
 * Run fn(arg) on cpu in interrupt context (interrupts off, from the call IPI); if cpu is the
 * caller, run it here with interrupts off. With wait, return after fn has returned; without,
 * return once it is queued. Returns 0, or -1 if cpu is not online. A target that does not run
 * the call within SMP_CALL_TIMEOUT_MS + 200 ms per CPU (TCG shares few host cores among all
 * vCPUs) is a panic naming it. Callable with interrupts off (it then polls its own queue
 * while waiting); with interrupts on, a waiting caller sleeps in hlt until woken.
 */
int smp_call_function_single(unsigned int cpu, smp_call_fn fn, void *arg, bool wait);
/* Same, on every online CPU EXCEPT the caller (Linux's smp_call_function). */
void smp_call_function_all(smp_call_fn fn, void *arg, bool wait);
/*
 * Run fn(arg) on every online CPU INCLUDING the caller, all at once, in thread context with
 * interrupts on (remote CPUs run it from their idle loop), and return when every CPU has
 * returned from it. One run at a time (callers are serialised); not from interrupt context
 * and not from inside fn. A CPU that does not start fn within the call timeout is a panic.
 */
void smp_run_on_all(smp_call_fn fn, void *arg);
#define SMP_CALL_TIMEOUT_MS 20000

/* Called by the arch call-IPI handler: run everything queued for this CPU. */
void smp_call_interrupt(void);
/* An AP's life after bring-up: sleep in hlt, wake for IPIs and smp_run_on_all jobs. */
__noreturn void smp_idle_loop(void);

/*
 * Bring-up hook, called by the arch on each AP as it starts: its descriptor tables, local
 * APIC and timer are set up, interrupts are off, and it is not online yet (Linux runs its
 * CPUHP_AP_*_STARTING callbacks at this point, notify_cpu_starting()). The kernel has nothing
 * to do there: kernel/smp.c's weak default is empty. Code linked in beside the kernel may
 * replace it (the lab's panic.test=starting crashes an AP there on purpose,
 * tests/lab/panic_test.c).
 */
void cpu_starting_hook(unsigned int cpu);

/* ---- implemented by the arch (arch/x86_64/smp.c) for the code above ---------------------- */

/* Early per-CPU setup of the boot CPU (descriptor tables, GS base): first thing in kmain. */
void arch_early_cpu_init(void);
/* Find the CPUs (ACPI), start the local APIC and timer, bring up every AP; sti on return. */
void arch_smp_init(void);
void arch_send_call_ipi(unsigned int cpu);
void arch_send_wake_ipi(unsigned int cpu);
/* panic(): stop every other online CPU (NMI) and wait briefly until they have stopped. */
void arch_stop_other_cpus(void);
/* Stop this CPU for good: interrupts off, hlt forever. */
__noreturn void arch_halt_forever(void);
/* Print the caller's frame-pointer backtrace. */
void arch_dump_stack(void);

/* Physical address of the AP trampoline page below 1 MiB, 0 if none (reserve it in mm). */
extern u64 smp_trampoline_phys;

#endif
