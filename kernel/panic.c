/*
 * panic() and WARN_ON(): exactly one fatal report per boot. The first CPU to panic stops
 * all others (arch: NMI), prints without the console lock, and leaves QEMU with a crash
 * status; a CPU that panics second just stops. Declarations: kernel/panic.h, kernel/trap.h.
 */
#include "kernel/panic.h"
#include "kernel/trap.h"
#include "kernel/smp.h"
#include "kernel/printk.h"
#include "kernel/cmdline.h"
#include "kernel/string.h"
#include <arch/console.h>

#define NO_CPU 0xffffffffu
#define WARN_SITES 64		/* call sites remembered for "print once" */

static u32 panic_cpu = NO_CPU;
static unsigned long nr_warnings;
static struct { const char *file; int line; } warned[WARN_SITES];
static spinlock_t warn_lock = { .owner_cpu = SPIN_NO_OWNER, .name = "warn_sites" };

bool panic_in_progress(void)
{
	return READ_ONCE(panic_cpu) != NO_CPU;
}

void panic_begin(void)
{
	u32 self, owner = NO_CPU;

	arch_irq_disable();
	self = arch_cpu_id();
	if (!__atomic_compare_exchange_n(&panic_cpu, &owner, self, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		if (owner != self)
			arch_halt_forever();	/* someone else reports; and will stop us anyway */
		printk_emergency();
		printk("\nPANIC: cpu%u: recursive fault while reporting a panic\n", self);
		panic_end();
	}
	arch_stop_other_cpus();
	printk_emergency();
}

__noreturn void panic_end(void)
{
	printk("EXIT: STATUS=%d\n", (PANIC_EXIT_CODE << 1) | 1);
	arch_exit_qemu(PANIC_EXIT_CODE);
}

__noreturn void panic(const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	panic_begin();
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	printk("\nPANIC: cpu%u: %s\n", arch_cpu_id(), msg);
	arch_dump_stack();
	panic_end();
}

/* True the first time (file, line) is seen; after WARN_SITES distinct sites, always true. */
static bool first_warning_at(const char *file, int line)
{
	unsigned long flags = spin_lock_irqsave(&warn_lock);
	bool first = true;
	unsigned int i;

	for (i = 0; i < WARN_SITES && warned[i].file; i++) {
		if (warned[i].file == file && warned[i].line == line) {
			first = false;
			break;
		}
	}
	if (first && i < WARN_SITES) {
		warned[i].file = file;
		warned[i].line = line;
	}
	spin_unlock_irqrestore(&warn_lock, flags);
	return first;
}

void warn_slowpath(const char *file, int line, const char *cond)
{
	__atomic_add_fetch(&nr_warnings, 1, __ATOMIC_RELAXED);
	if (!first_warning_at(file, line))
		return;
	printk("WARNING: cpu%u: WARN_ON(%s) at %s:%d\n", arch_cpu_id(), cond, file, line);
	arch_dump_stack();
}

unsigned long warn_count(void)
{
	return __atomic_load_n(&nr_warnings, __ATOMIC_RELAXED);
}

/* ---- crash self-tests: panic.test=<kind> on the command line, run after SMP bring-up ---- */

static char panic_test[16];
CMDLINE_STRING("panic.test", panic_test,
	       "crash on purpose after boot: all|fault|remote|nohang|overflow (one report)");

static void panic_everywhere(void *arg)
{
	panic("panic.test=all: panic on every CPU at once");
}

static void fault_everywhere(void *arg)
{
	*(volatile u64 *)arg = 1;	/* NULL: not mapped */
}

/* Interrupts off, forever: the CPU never runs its call queue. */
static void spin_irqs_off(void *arg)
{
	arch_irq_disable();
	for (;;)
		arch_cpu_relax();
}

static void nothing(void *arg)
{
}

/* Recursion bounded only by *arg (~0): runs into the guard page below the stack. */
static __noinline void recurse(void *arg)
{
	volatile unsigned long pad[32];

	pad[0] = *(unsigned long *)arg - 1;
	if (pad[0])
		recurse((void *)&pad[0]);
	pad[1] = 2;	/* not a tail call */
}

/*
 * Each kind must end in exactly one PANIC report and exit status 255:
 * all: every CPU panics at once; fault: every CPU takes a page fault at once;
 * remote: the last CPU faults inside an IPI call; nohang: a CPU with interrupts off
 * ignores an smp_call_function_single (the panic names it after the call timeout);
 * overflow: the last CPU overflows its stack into the guard page (a double fault, reported
 * from the #DF stack).
 */
void panic_selftest(void)
{
	unsigned int last = nr_cpus - 1;

	if (!panic_test[0])
		return;
	printk("panic.test=%s: crashing on purpose\n", panic_test);
	if (!strcmp(panic_test, "all")) {
		smp_run_on_all(panic_everywhere, NULL);
	} else if (!strcmp(panic_test, "fault")) {
		smp_run_on_all(fault_everywhere, NULL);
	} else if (!strcmp(panic_test, "remote")) {
		smp_call_function_single(last, fault_everywhere, NULL, true);
	} else if (!strcmp(panic_test, "overflow")) {
		smp_call_function_single(last, recurse, &(unsigned long){ ~0ul }, true);
	} else if (!strcmp(panic_test, "nohang") && last > 0) {
		smp_call_function_single(last, spin_irqs_off, NULL, false);
		smp_call_function_single(last, nothing, NULL, true);
	}
	panic("panic.test=%s: unknown kind, or it did not crash", panic_test);
}
