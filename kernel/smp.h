/*
 * CPUs: the per-CPU areas, which CPUs are online, and cross-CPU function calls (kernel/smp.c).
 * Bring-up itself is arch code (arch/x86_64/smp.c); this header is the generic view of it.
 */
#ifndef KERNEL_SMP_H
#define KERNEL_SMP_H

#include "kernel/arch.h"
#include "kernel/spinlock.h"

struct acpi_madt_info;

/*
 * The most CPUs the kernel starts, and the one CPU limit of every file (mm/, tests, ACPI
 * parsing). Nothing big is sized by it: per-CPU data is allocated for the nr_cpu_ids CPUs the
 * firmware lists, so a 4-CPU boot pays for 4. What is sized by it: cpu_areas[] (pointers),
 * CPU masks (MAX_CPUS bits) and a few per-CPU words of arch bring-up state.
 */
#define MAX_CPUS 1024
#define SMP_CALL_RING 32	/* queued calls per target CPU before senders wait */
#define SMP_ASYNC_CALLS 8	/* descriptors for calls nobody waits for, per sender */
#define CPU_MASK_WORDS (MAX_CPUS / 64)

typedef void (*smp_call_fn)(void *arg);
struct smp_work;
struct trap_recovery;

/* A cross-CPU call (kernel/smp.c); async ones live in their sender's struct cpu. */
struct smp_call {
	smp_call_fn fn;
	void *arg;
	u32 remaining;			/* targets still to finish fn; 0 = descriptor free */
	u32 waiter;			/* 1 + CPU sleeping in hlt until remaining is 0, or 0 */
	u64 pending[CPU_MASK_WORDS];	/* which targets those are (for the timeout message) */
};

/*
 * One CPU's area. GS base points at it (arch.self), so arch_cpu_id() is one %gs load. CPU 0's
 * is static (it is needed before there is an allocator); the others are allocated for the CPUs
 * the firmware lists (smp_alloc_cpu_areas). Fields are written only by their own CPU unless a
 * comment says otherwise.
 */
struct cpu {
	struct arch_cpu_head arch;	/* first: self, cpu_id, apic_id (arch/arch_ops.h) */
	bool online;			/* set by the CPU itself, read by anyone */
	void *stack_top;		/* top of the kernel stack it runs on */
	unsigned int irq_depth;		/* interrupt/exception handlers now running on it */
	u64 ticks;			/* timer interrupts taken (kernel/timer.h) */
	u64 hooks_gen_seen;		/* tick-hook generation its last tick started in */
	u64 ipis;			/* call-function and wake IPIs taken */
	struct trap_recovery *recovery;	/* innermost armed kernel/trap.h recovery point */

	/* Calls queued for this CPU by others: a ring under call_lock (IRQ-safe). */
	spinlock_t call_lock;
	u32 call_head, call_tail;	/* head: next to run, tail: next free; u32 wrap;
					 * written under call_lock, peeked at without it */
	struct smp_call *call_ring[SMP_CALL_RING];

	struct smp_work *work;		/* smp_run_on_all() job for the idle loop; set by sender */
	bool in_run;			/* inside an smp_run_on_all() fn */
	struct smp_call async_calls[SMP_ASYNC_CALLS];	/* its own calls nobody waits for */
#if CONFIG_LOCKDEP
	struct lockdep_cpu lockdep;	/* the locks it holds, as the validator sees them */
#endif
} __cacheline_aligned;

/* cpu_areas[cpu] for cpu < nr_cpu_ids once smp_alloc_cpu_areas() ran (cpu 0: from the start). */
extern struct cpu *cpu_areas[MAX_CPUS];
/*
 * CPU indices the firmware lists (Linux's nr_cpu_ids): 0 .. nr_cpu_ids - 1, known before mm
 * starts (arch_smp_prepare), so mm sizes its per-CPU lists for them and nothing more.
 */
extern unsigned int nr_cpu_ids;
/* CPU indices in use: 0 .. nr_cpus - 1. All are online unless bring-up failed for one. */
extern unsigned int nr_cpus;

static inline struct cpu *cpu_ptr(unsigned int cpu) { return cpu_areas[cpu]; }
static inline struct cpu *this_cpu(void) { return cpu_ptr(arch_cpu_id()); }
static inline bool cpu_online(unsigned int cpu)
{
	return cpu < MAX_CPUS && cpu_areas[cpu] && READ_ONCE(cpu_areas[cpu]->online);
}
unsigned int nr_cpus_online(void);
#define for_each_online_cpu(c) \
	for (unsigned int c = 0; c < nr_cpus; c++) if (cpu_online(c))

/*
 * Number the firmware's CPUs for bring-up (arch_smp_prepare()): index 0 is the boot CPU
 * (bsp_apic_id), the MADT's others follow in its order, at most smp.maxcpus and never more
 * than MAX_CPUS in all (a larger smp.maxcpus changes nothing, as in Linux); an APIC
 * ID above max_apic_id (0xfe without x2APIC) cannot be started and is left out. Fills
 * apic_ids[] and nmi_lints[] (each of MAX_CPUS entries) and returns how many CPUs it
 * numbered, saying which it left out and why.
 */
unsigned int smp_number_cpus(const struct acpi_madt_info *madt, u32 bsp_apic_id,
			     u32 max_apic_id, u32 *apic_ids, u8 *nmi_lints);

/*
 * Give CPUs 1 .. nr_cpu_ids - 1 their areas, zeroed, in one allocation from mm (after mm_init).
 * Returns 0, or -1 if memory ran out (then only CPU 0 has one).
 */
int smp_alloc_cpu_areas(void);
/* nr_cpu_ids elements of size bytes, zeroed, from mm (one block); NULL if out of memory.
 * For per-CPU arrays of tests and benchmarks: cpu_array_free() gives it back. */
void *cpu_array_alloc(size_t size);
void cpu_array_free(void *array, size_t size);

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
/* Find the CPUs (ACPI MADT) and number them: sets nr_cpu_ids. Before mm_init, after cmdline. */
void arch_smp_prepare(void);
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
/*
 * For the boot tests (tests/kernel/boot_smp.c), which check the rule bring-up keeps: a CPU
 * runs on its own index's state, and a CPU with no pending index touches none.
 * arch_cpu_check_own_state(): does the calling CPU run on what belongs to arch_cpu_id() (x86:
 * the APIC id its local APIC reports, GS base, GDT, TSS, stack)? 0, or -1 with why.
 * arch_smp_start_again(): start once more a CPU the BSP gave up on, which must find its index
 * taken and halt untouched; 0 once it halted so, -1 if it did not or cpu is not one.
 */
int arch_cpu_check_own_state(char *why, size_t len);
int arch_smp_start_again(unsigned int cpu);

/* Physical address of the AP trampoline page below 1 MiB, 0 if none (reserve it in mm). */
extern u64 smp_trampoline_phys;

#endif
