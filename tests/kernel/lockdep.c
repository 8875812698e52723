/*
 * KTAP suite lockdep: plants each locking bug the validator (kernel/lockdep.c) knows, on
 * locks of the test's own classes, inside an expect scope, and checks the report it gives;
 * checks that the trylock rule keeps the legal v6.2 pcp pattern quiet, and that the
 * validator's own bookkeeping (held locks, expect scopes) keeps its rules. Nothing here
 * deadlocks: the validator reports what could. One source for both platforms: built into the
 * kernel and into the host binaries (tests/lab/lab_platform.h gives the second CPU).
 */
#include "tests/ktest/ktest.h"
#include "tests/lab/lab_platform.h"
#include "kernel/lockdep.h"
#include "kernel/spinlock.h"
#include "kernel/smp.h"

#ifndef LOCKDEP_MAX_DEPTH
#define LOCKDEP_MAX_DEPTH 48	/* release builds have no validator (the suite skips) */
#endif

static spinlock_t lock_a, lock_b, lock_c, lock_pair[2], lock_deep[LOCKDEP_MAX_DEPTH + 1];

/* Every case needs the validator on. */
static int lockdep_suite_init(struct ktest *t)
{
	if (!lockdep_enabled())
		ktest_skip(t, "lockdep is off (release build, lockdep=0, or an earlier report)");
	return 0;
}

/*
 * The cases that take a lock in an interrupt run their scenario on the calling CPU inside
 * lab_run_on_cpus(): the other CPUs are then online and idle, and take the call IPIs it
 * sends (kernel: every online CPU; host: 8 CPU threads). No KT_ASSERT in there.
 */
struct on_this_cpu {
	struct ktest *t;
	void (*fn)(struct ktest *t);
	unsigned int cpu;
};

static void run_if_caller(void *arg)
{
	struct on_this_cpu *r = arg;

	if (arch_cpu_id() != r->cpu)
		return;
	while (nr_cpus_online() < lab_nr_cpus())	/* host: the threads are starting */
		arch_cpu_relax();
	r->fn(r->t);
}

static void with_other_cpus(struct ktest *t, void (*fn)(struct ktest *t))
{
	struct on_this_cpu r = { t, fn, arch_cpu_id() };

	if (lab_nr_cpus() < 2)
		ktest_skip(t, "needs a second online CPU to send an interrupt to");
	lab_run_on_cpus(run_if_caller, &r);
}

static unsigned int other_cpu(void)
{
	for_each_online_cpu(cpu)
		if (cpu != arch_cpu_id())
			return cpu;
	return arch_cpu_id();	/* (with_other_cpus() made sure there is one) */
}

/* Run on another CPU from its call IPI: lock, note the interrupt nesting, unlock. */
struct irq_lock {
	spinlock_t *lock;
	bool trylock;
	unsigned int in_irq;	/* arch_in_irq() seen inside: must be > 0 */
};

static void lock_in_irq(void *arg)
{
	struct irq_lock *r = arg;

	r->in_irq = arch_in_irq();
	if (!r->trylock)
		spin_lock(r->lock);
	else if (!spin_trylock(r->lock))
		return;
	spin_unlock(r->lock);
}

/* The other CPU's report, if its acquisition completes the pattern, is the scope e's. */
static void take_in_irq(struct ktest *t, struct lockdep_expect *e, spinlock_t *lock, bool trylock)
{
	struct irq_lock r = { lock, trylock, 0 };

	lockdep_expect_cpu(e, other_cpu());
	KT_EXPECT_EQ(t, smp_call_function_single(other_cpu(), lock_in_irq, &r, true), 0);
	KT_EXPECT_GT(t, r.in_irq, 0u);	/* the IPI handler is interrupt context */
}

static void expect_report(struct ktest *t, struct lockdep_expect *e, enum lockdep_rule rule,
			  const char *first, const char *second)
{
	KT_EXPECT_STREQ(t, lockdep_rule_name(lockdep_expect_end(e)), lockdep_rule_name(rule));
	KT_EXPECT_STREQ(t, e->first, first);
	KT_EXPECT_STREQ(t, e->second, second);
	KT_EXPECT_EQ(t, e->more, 0u);
}

/* A then B on one path, B then A on another: a possible ABBA deadlock, reported when the
 * second order is first seen, though this CPU never waited. */
static void lockdep_order_inversion_reported(struct ktest *t)
{
	struct lockdep_expect e;

	spin_lock_init(&lock_a, "lockdep_a", 0);
	spin_lock_init(&lock_b, "lockdep_b", 0);
	lockdep_expect_begin(&e);
	spin_lock(&lock_a);
	spin_lock(&lock_b);
	spin_unlock(&lock_b);
	spin_unlock(&lock_a);
	spin_lock(&lock_b);
	spin_lock(&lock_a);
	spin_unlock(&lock_a);
	spin_unlock(&lock_b);
	expect_report(t, &e, LOCKDEP_CIRCULAR, "&lock_b", "&lock_a");
}

/* C held with interrupts on here, and taken in an interrupt handler on another CPU: an
 * interrupt arriving while C is held here would spin on it forever. */
static void irq_unsafe_use(struct ktest *t)
{
	struct lockdep_expect e;

	spin_lock_init(&lock_c, "lockdep_c", 0);
	lockdep_expect_begin(&e);
	spin_lock(&lock_c);		/* interrupts on: HARDIRQ-ON-W */
	spin_unlock(&lock_c);
	take_in_irq(t, &e, &lock_c, false);	/* IN-HARDIRQ-W: inconsistent */
	expect_report(t, &e, LOCKDEP_INCONSISTENT, "&lock_c", "&lock_c");
}

static void lockdep_irq_unsafe_use_reported(struct ktest *t)
{
	with_other_cpus(t, irq_unsafe_use);
}

/* Two locks of one class, nested: reported as recursion (their order is undefined). */
static void lockdep_recursion_reported(struct ktest *t)
{
	struct lockdep_expect e;

	for (int i = 0; i < 2; i++)
		spin_lock_init(&lock_pair[i], "lockdep_pair", 0);
	lockdep_expect_begin(&e);
	spin_lock(&lock_pair[0]);
	spin_lock(&lock_pair[1]);
	spin_unlock(&lock_pair[1]);
	spin_unlock(&lock_pair[0]);
	expect_report(t, &e, LOCKDEP_RECURSION, "&lock_pair[i]", "");
}

/* A is irq-safe (taken in an interrupt), B irq-unsafe (held with interrupts on); taking B
 * while holding A lets a CPU holding B wait, in an interrupt, for one that holds A. */
static void irq_inversion(struct ktest *t)
{
	struct lockdep_expect e;
	unsigned long flags;

	spin_lock_init(&lock_a, "lockdep_safe", 0);
	spin_lock_init(&lock_b, "lockdep_unsafe", 0);
	lockdep_expect_begin(&e);
	take_in_irq(t, &e, &lock_a, false);	/* A: IN-HARDIRQ-W */
	spin_lock(&lock_b);		/* B: HARDIRQ-ON-W */
	spin_unlock(&lock_b);
	flags = spin_lock_irqsave(&lock_a);
	spin_lock(&lock_b);		/* A -> B: safe -> unsafe */
	spin_unlock(&lock_b);
	spin_unlock_irqrestore(&lock_a, flags);
	expect_report(t, &e, LOCKDEP_IRQ_INVERSION, "&lock_a", "&lock_b");
}

static void lockdep_irq_inversion_reported(struct ktest *t)
{
	with_other_cpus(t, irq_inversion);
}

/* The v6.2 pcp rule: held with interrupts on, but only ever trylocked in interrupts: legal,
 * since an interrupt that finds it held fails its trylock instead of spinning. */
static void trylock_in_irq(struct ktest *t)
{
	struct lockdep_expect e;
	bool got;

	spin_lock_init(&lock_c, "lockdep_trylocked", 0);
	lockdep_expect_begin(&e);
	got = spin_trylock(&lock_c);	/* interrupts on: HARDIRQ-ON-W */
	KT_EXPECT_TRUE(t, got);
	if (got)
		spin_unlock(&lock_c);
	take_in_irq(t, &e, &lock_c, true);
	expect_report(t, &e, LOCKDEP_NONE, "", "");
}

static void lockdep_trylock_in_irq_not_reported(struct ktest *t)
{
	with_other_cpus(t, trylock_in_irq);
}

/* A trylock adds no dependency (it cannot wait): A then trylock B, then B then A, is no
 * cycle. The plain acquisition nested in the trylocked one does add B -> A. */
static void lockdep_trylock_adds_no_dependency(struct ktest *t)
{
	struct lockdep_expect e;

	spin_lock_init(&lock_a, "lockdep_try_a", 0);
	spin_lock_init(&lock_b, "lockdep_try_b", 0);
	lockdep_expect_begin(&e);
	spin_lock(&lock_a);
	KT_ASSERT_TRUE(t, spin_trylock(&lock_b));
	spin_unlock(&lock_b);
	spin_unlock(&lock_a);
	KT_ASSERT_TRUE(t, spin_trylock(&lock_b));
	spin_lock(&lock_a);		/* B -> A from the trylocked B */
	spin_unlock(&lock_a);
	spin_unlock(&lock_b);
	expect_report(t, &e, LOCKDEP_NONE, "", "");
}

/*
 * Below a trylocked lock the plain acquisition under it has edges too: A (plain), trylock B,
 * then C gives B -> C and A -> C (Linux's check_prevs_add()). So C then A is a cycle.
 */
static void lockdep_edge_from_plain_lock_under_trylock(struct ktest *t)
{
	struct lockdep_expect e;

	spin_lock_init(&lock_a, "lockdep_under_a", 0);
	spin_lock_init(&lock_b, "lockdep_under_b", 0);
	spin_lock_init(&lock_c, "lockdep_under_c", 0);
	lockdep_expect_begin(&e);
	spin_lock(&lock_a);
	KT_ASSERT_TRUE(t, spin_trylock(&lock_b));
	spin_lock(&lock_c);		/* B -> C, and A -> C below the trylock */
	spin_unlock(&lock_c);
	spin_unlock(&lock_b);
	spin_unlock(&lock_a);
	spin_lock(&lock_c);
	spin_lock(&lock_a);		/* C -> A closes A -> C */
	spin_unlock(&lock_a);
	spin_unlock(&lock_c);
	expect_report(t, &e, LOCKDEP_CIRCULAR, "&lock_c", "&lock_a");
}

/* A lock taken with interrupts off and then held with them on counts as held with
 * interrupts on (seen when it is released), so taking it in an interrupt is inconsistent. */
static void irqs_enabled_while_held(struct ktest *t)
{
	struct lockdep_expect e;
	unsigned long flags;

	spin_lock_init(&lock_c, "lockdep_late_on", 0);
	lockdep_expect_begin(&e);
	flags = arch_irq_save();
	spin_lock(&lock_c);		/* interrupts off */
	arch_irq_restore(flags);	/* ... and on while it is still held */
	spin_unlock(&lock_c);		/* HARDIRQ-ON-W */
	take_in_irq(t, &e, &lock_c, false);	/* IN-HARDIRQ-W: inconsistent */
	expect_report(t, &e, LOCKDEP_INCONSISTENT, "&lock_c", "&lock_c");
}

static void lockdep_irqs_enabled_while_held_reported(struct ktest *t)
{
	with_other_cpus(t, irqs_enabled_while_held);
}

/* The CPU's table of held locks has LOCKDEP_MAX_DEPTH entries: the lock that would need one
 * more is reported (the validator gives up), not written past the table. Trylocks of one
 * class: no recursion report, no dependency, only depth. */
static void lockdep_held_depth_overflow_reported(struct ktest *t)
{
	unsigned int n = LOCKDEP_MAX_DEPTH - lockdep_held_depth() + 1, got = 0;
	struct lockdep_expect e;

	KT_ASSERT_LE(t, n, (unsigned int)ARRAY_SIZE(lock_deep));
	for (unsigned int i = 0; i < n; i++)
		spin_lock_init(&lock_deep[i], "lockdep_deep", 0);
	lockdep_expect_begin(&e);
	for (unsigned int i = 0; i < n; i++)
		got += spin_trylock(&lock_deep[i]);
	KT_EXPECT_EQ(t, lockdep_held_depth(), (unsigned int)LOCKDEP_MAX_DEPTH);
	for (unsigned int i = n; i-- > 0;)
		spin_unlock(&lock_deep[i]);
	KT_EXPECT_EQ(t, got, n);
	expect_report(t, &e, LOCKDEP_OVERFLOW, "", "");
}

/* An expect scope forgets what was planted in it: A then B in one scope, B then A in the
 * next is no cycle. */
static void lockdep_expect_end_forgets_planted_pattern(struct ktest *t)
{
	struct lockdep_expect e;

	spin_lock_init(&lock_a, "lockdep_forget_a", 0);
	spin_lock_init(&lock_b, "lockdep_forget_b", 0);
	lockdep_expect_begin(&e);
	spin_lock(&lock_a);
	spin_lock(&lock_b);		/* A -> B, in this scope only */
	spin_unlock(&lock_b);
	spin_unlock(&lock_a);
	KT_EXPECT_EQ(t, lockdep_expect_end(&e), LOCKDEP_NONE);
	lockdep_expect_begin(&e);
	spin_lock(&lock_b);
	spin_lock(&lock_a);		/* B -> A: no cycle once A -> B is forgotten */
	spin_unlock(&lock_a);
	spin_unlock(&lock_b);
	expect_report(t, &e, LOCKDEP_NONE, "", "");
}

static const struct ktest_case lockdep_cases[] = {
	KTEST_CASE(lockdep_order_inversion_reported),
	KTEST_CASE(lockdep_irq_unsafe_use_reported),
	KTEST_CASE(lockdep_recursion_reported),
	KTEST_CASE(lockdep_irq_inversion_reported),
	KTEST_CASE(lockdep_trylock_in_irq_not_reported),
	KTEST_CASE(lockdep_trylock_adds_no_dependency),
	KTEST_CASE(lockdep_edge_from_plain_lock_under_trylock),
	KTEST_CASE(lockdep_irqs_enabled_while_held_reported),
	KTEST_CASE(lockdep_held_depth_overflow_reported),
	KTEST_CASE(lockdep_expect_end_forgets_planted_pattern),
};
KTEST_SUITE(lockdep, lockdep_cases, .init = lockdep_suite_init);
