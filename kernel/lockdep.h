/*
 * lockdep: a small lock validator after Linux's (kernel/locking/lockdep.c). It watches every
 * spinlock and rwlock acquisition in debug builds and reports a locking pattern that CAN
 * deadlock the first time it is seen, even if this run did not deadlock. Implemented in
 * kernel/lockdep.c; what it checks and how to read a report: docs/lockdep.md. Not a lock:
 * spinlock.c and rwlock.c call it.
 */
#ifndef KERNEL_LOCKDEP_H
#define KERNEL_LOCKDEP_H

#include "kernel/compiler.h"

/* Debug builds validate locking; release builds (DEBUG_VM=0, `make bench`) leave it out. */
#ifndef CONFIG_LOCKDEP
#define CONFIG_LOCKDEP CONFIG_DEBUG_VM
#endif

/* A place in the source where a lock was initialised or taken, and the lock expression. */
struct lock_site {
	const char *file;
	int line;
	const char *expr;	/* e.g. "&zone->lock": names the class of a spin_lock_init() */
};
#define LOCK_SITE(expr)                                                                 \
	({                                                                              \
		static const struct lock_site __lock_site = { __FILE__, __LINE__, expr };\
		&__lock_site;                                                           \
	})

/* What a report says was broken (docs/lockdep.md explains each). */
enum lockdep_rule {
	LOCKDEP_NONE = 0,
	LOCKDEP_INCONSISTENT,	/* a class taken in interrupts and also with interrupts on */
	LOCKDEP_IRQ_INVERSION,	/* an irq-safe class held while taking an irq-unsafe one */
	LOCKDEP_CIRCULAR,	/* A then B here, B then A (maybe via others) elsewhere */
	LOCKDEP_RECURSION,	/* a class taken again by a CPU that already holds it */
	LOCKDEP_UNINITIALISED,	/* a lock taken that was never initialised (zeroed memory) */
	LOCKDEP_OVERFLOW,	/* a fixed table ran out: the validator gives up */
};

struct spinlock;

#if CONFIG_LOCKDEP
#define LOCKDEP_MAX_DEPTH 48	/* locks one CPU holds at once, interrupts included (Linux's) */

/* One lock a CPU holds (or is about to spin for). */
struct held_lock {
	struct spinlock *lock;
	const struct lock_site *site;
	u8 cls;
	bool trylock;
	bool irqs_on;		/* interrupts were on while it was held */
	u8 irq_ctx;		/* arch_in_irq() when taken: locks of different contexts never nest */
};

/*
 * The validator's state of one CPU, kept in that CPU's struct cpu (kernel/smp.h) so that it
 * exists for the CPUs present, not for MAX_CPUS. Touched only by that CPU with interrupts off;
 * its fields are kernel/lockdep.c's alone.
 */
struct lockdep_cpu {
	unsigned int depth;
	bool busy;		/* lockdep runs here: the locks it takes (printk) are not checked */
	u64 checked;		/* acquisitions validated */
	struct held_lock held[LOCKDEP_MAX_DEPTH];
} __cacheline_aligned;

/* Called by kernel/spinlock.c: before spinning (spin_lock), after success (trylock). */
void lockdep_init_lock(struct spinlock *lock, const struct lock_site *init_site);
void lockdep_acquire(struct spinlock *lock, const struct lock_site *site, bool trylock);
void lockdep_release(struct spinlock *lock);
#endif

/* True while the validator runs: not after a report, nor with `lockdep=0`. */
bool lockdep_enabled(void);
/* Stop validating for good, without a report (panic() calls it). */
void lockdep_off(void);
/* Reports that were not expected by a test (each fails the running case). */
unsigned long lockdep_report_count(void);
/* How many locks this CPU holds, as lockdep sees it; and dropping entries above depth,
 * for code that abandoned held locks by a longjmp (ktest aborts, host panic tests). */
unsigned int lockdep_held_depth(void);
void lockdep_truncate_held(unsigned int depth);
/* One paragraph for the end-of-run summary. */
void lockdep_print_summary(void);

/*
 * Tests that plant a bad locking pattern on purpose wrap it in an expect scope:
 *
 *	struct lockdep_expect e;
 *	lockdep_expect_begin(&e);
 *	... take locks in the wrong order ...
 *	KT_EXPECT_EQ(t, lockdep_expect_end(&e), LOCKDEP_CIRCULAR);
 *
 * Inside the scope the first report is printed as KTAP diagnostics ("# " lines), captured
 * in e and not counted as a failure, and the validator stays on. lockdep_expect_end() then
 * puts the class usage and dependency graph back as they were at begin (what the test
 * planted is forgotten), drops locks this CPU abandoned in the scope, and returns the rule.
 * The scope takes the reports of the CPU that opened it; a test whose pattern is completed
 * on other CPUs (their interrupt handlers, its worker threads) names each of them with
 * lockdep_expect_cpu() first. Any other CPU's report meanwhile is a real one: counted,
 * printed as such, and the validator turns off. One scope at a time, from thread context.
 */
struct lockdep_expect {
	enum lockdep_rule rule;		/* the first report's rule, LOCKDEP_NONE if none */
	char first[32], second[32];	/* its classes: safe/unsafe, held/taken; for
					 * recursion second is empty */
	char headline[128];		/* its WARNING line, after "WARNING: lockdep: " */
	unsigned int more;		/* reports after the first, not printed */
	unsigned int held_depth;	/* private: this CPU's held locks at begin */
};
void lockdep_expect_begin(struct lockdep_expect *e);
void lockdep_expect_cpu(struct lockdep_expect *e, unsigned int cpu);
enum lockdep_rule lockdep_expect_end(struct lockdep_expect *e);
const char *lockdep_rule_name(enum lockdep_rule rule);

#endif
