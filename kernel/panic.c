/*
 * panic() and WARN_ON(): exactly one fatal report per boot. The first CPU to panic stops
 * all others (arch: NMI), prints without the console lock, and leaves QEMU with a crash
 * status; a CPU that panics second just stops. Declarations: kernel/panic.h, kernel/trap.h.
 */
#include "kernel/panic.h"
#include "kernel/lockdep.h"
#include "kernel/trap.h"
#include "kernel/smp.h"
#include "kernel/printk.h"
#include <arch/console.h>

#define NO_CPU 0xffffffffu
#define WARN_SITES 64		/* call sites remembered for "print once" */

static u32 panic_cpu = NO_CPU;
static unsigned long taints[NR_TAINT_FLAGS];
static struct { const char *file; int line; } warned[WARN_SITES];
static spinlock_t warn_lock = SPINLOCK_INIT("warn_sites");

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
	lockdep_off();		/* locks a stopped CPU holds are never released */
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
	add_taint(TAINT_WARN);
	if (!first_warning_at(file, line))
		return;
	printk("WARNING: cpu%u: WARN_ON(%s) at %s:%d\n", arch_cpu_id(), cond, file, line);
	arch_dump_stack();
}

void add_taint(enum taint_flag flag)
{
	__atomic_add_fetch(&taints[flag], 1, __ATOMIC_RELAXED);
}

unsigned long taint_count(enum taint_flag flag)
{
	return READ_ONCE(taints[flag]);
}
