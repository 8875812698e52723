/*
 * Crash self-tests, `panic.test=<kind>` on the command line: the kernel must end each in
 * exactly one PANIC report and exit status 255 (tests/matrix.py's panic-* rows check it).
 * Five kinds crash after bring-up (lab_main() calls panic_selftest() first); `starting`
 * crashes an AP during bring-up through the kernel's cpu_starting_hook(). Not kernel code:
 * the kernel's panic() and trap handling are kernel/panic.c and arch/x86_64/trap.c.
 */
#include "tests/lab/panic_test.h"
#include "kernel/cmdline.h"
#include "kernel/panic.h"
#include "kernel/printk.h"
#include "kernel/smp.h"
#include "kernel/string.h"

static char panic_test[16];
CMDLINE_STRING("panic.test", panic_test,
	       "crash on purpose: all|fault|remote|nohang|overflow after boot, starting while "
	       "the last AP starts (one report)");

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
 * panic.test=starting: the last AP panics in the middle of bring-up, from the kernel's
 * cpu_starting_hook() (kernel/smp.h): not online yet, interrupts off, while the boot CPU
 * waits for the APs and others are still in the trampoline.
 */
void cpu_starting_hook(unsigned int cpu)
{
	if (!strcmp(panic_test, "starting") && cpu == nr_cpus - 1)
		panic("panic.test=starting: cpu%u panics as it starts, before it is online", cpu);
}

/*
 * Each kind must end in exactly one PANIC report and exit status 255:
 * all: every CPU panics at once; fault: every CPU takes a page fault at once;
 * remote: the last CPU faults inside an IPI call; nohang: a CPU with interrupts off
 * ignores an smp_call_function_single (the panic names it after the call timeout);
 * overflow: the last CPU overflows its stack into the guard page (a double fault, reported
 * from the #DF stack). starting crashed during bring-up (above), unless there was no AP.
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
