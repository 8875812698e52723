/*
 * Surviving a CPU exception on purpose (tests, probes) and the shared fatal-report protocol
 * used by panic() and the exception handler. Arch-neutral; the x86 side is arch/x86_64/trap.c.
 *
 * Recovery, like setjmp/longjmp:
 *
 *	struct trap_recovery r;
 *
 *	if (trap_recover_begin(&r)) {
 *		risky();			// a fault here jumps back to the if, returning false
 *		trap_recover_end(&r);
 *	} else {
 *		printk("vector %u at %llx\n", r.vector, r.ip);	// disarmed already
 *	}
 *
 * Recovery points nest and are per CPU. A fault is recovered only if it happens on the CPU
 * that armed the point, in the same interrupt context (not inside a nested interrupt
 * handler, whose LAPIC in-service state a jump would leak). NMIs and machine checks are never
 * recovered. Interrupts come back as they were at trap_recover_begin().
 */
#ifndef KERNEL_TRAP_H
#define KERNEL_TRAP_H

#include "kernel/compiler.h"
#include <arch/setjmp.h>

struct trap_recovery {
	struct arch_jmp_buf jb;
	struct trap_recovery *prev;	/* the enclosing recovery point on this CPU */
	unsigned int irq_depth;		/* interrupt nesting when armed */
	/* Filled in when a trap jumped back: */
	unsigned int vector;		/* exception number (x86: 14 = page fault) */
	u64 error_code;
	u64 ip;				/* instruction that faulted */
	u64 fault_addr;			/* page faults: the address (CR2) */
};

#define trap_recover_begin(r) \
	(arch_setjmp(&(r)->jb) == 0 ? (trap_recovery_arm(r), true) : false)
void trap_recovery_arm(struct trap_recovery *r);
void trap_recover_end(struct trap_recovery *r);

/*
 * Fatal reports: panic_begin() makes this CPU the only one that reports (others that get
 * here stop for good), stops the other CPUs and unlocks the console; the caller prints its
 * report; panic_end() prints the exit line and leaves QEMU with status PANIC_EXIT_CODE.
 */
#define PANIC_EXIT_CODE 0x7f	/* QEMU exit status (0x7f << 1) | 1 = 255 */
void panic_begin(void);
__noreturn void panic_end(void);
/* True once some CPU has started a panic report. */
bool panic_in_progress(void);

#endif
