/*
 * KTAP suite lockdep: plants each locking bug the validator (kernel/lockdep.c) knows, on
 * locks of the test's own classes, inside an expect scope, and checks the report it gives;
 * and checks that the trylock rule keeps the legal v6.2 pcp pattern quiet. Nothing here
 * deadlocks: the validator reports what could.
 */
#include "tests/ktest/ktest.h"
#include "kernel/lockdep.h"
#include "kernel/spinlock.h"
#include "kernel/smp.h"

static spinlock_t lock_a, lock_b, lock_c, lock_pair[2];

/* Every case needs the validator on, and some need a second CPU to interrupt. */
static int lockdep_suite_init(struct ktest *t)
{
	if (!lockdep_enabled())
		ktest_skip(t, "lockdep is off (release build, lockdep=0, or an earlier report)");
	return 0;
}

static unsigned int other_cpu(struct ktest *t)
{
	for_each_online_cpu(cpu)
		if (cpu != arch_cpu_id())
			return cpu;
	ktest_skip(t, "needs a second online CPU to send an interrupt to");
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

static void take_in_irq(struct ktest *t, spinlock_t *lock, bool trylock)
{
	struct irq_lock r = { lock, trylock, 0 };

	KT_ASSERT_EQ(t, smp_call_function_single(other_cpu(t), lock_in_irq, &r, true), 0);
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
static void lockdep_irq_unsafe_use_reported(struct ktest *t)
{
	struct lockdep_expect e;

	spin_lock_init(&lock_c, "lockdep_c", 0);
	lockdep_expect_begin(&e);
	spin_lock(&lock_c);		/* interrupts on: HARDIRQ-ON-W */
	spin_unlock(&lock_c);
	take_in_irq(t, &lock_c, false);	/* IN-HARDIRQ-W: inconsistent */
	expect_report(t, &e, LOCKDEP_INCONSISTENT, "&lock_c", "&lock_c");
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
static void lockdep_irq_inversion_reported(struct ktest *t)
{
	struct lockdep_expect e;
	unsigned long flags;

	spin_lock_init(&lock_a, "lockdep_safe", 0);
	spin_lock_init(&lock_b, "lockdep_unsafe", 0);
	lockdep_expect_begin(&e);
	take_in_irq(t, &lock_a, false);	/* A: IN-HARDIRQ-W */
	spin_lock(&lock_b);		/* B: HARDIRQ-ON-W */
	spin_unlock(&lock_b);
	flags = spin_lock_irqsave(&lock_a);
	spin_lock(&lock_b);		/* A -> B: safe -> unsafe */
	spin_unlock(&lock_b);
	spin_unlock_irqrestore(&lock_a, flags);
	expect_report(t, &e, LOCKDEP_IRQ_INVERSION, "&lock_a", "&lock_b");
}

/* The v6.2 pcp rule: held with interrupts on, but only ever trylocked in interrupts: legal,
 * since an interrupt that finds it held fails its trylock instead of spinning. */
static void lockdep_trylock_in_irq_not_reported(struct ktest *t)
{
	struct lockdep_expect e;

	spin_lock_init(&lock_c, "lockdep_trylocked", 0);
	lockdep_expect_begin(&e);
	KT_ASSERT_TRUE(t, spin_trylock(&lock_c));	/* interrupts on: HARDIRQ-ON-W */
	spin_unlock(&lock_c);
	take_in_irq(t, &lock_c, true);
	expect_report(t, &e, LOCKDEP_NONE, "", "");
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

static const struct ktest_case lockdep_cases[] = {
	KTEST_CASE(lockdep_order_inversion_reported),
	KTEST_CASE(lockdep_irq_unsafe_use_reported),
	KTEST_CASE(lockdep_recursion_reported),
	KTEST_CASE(lockdep_irq_inversion_reported),
	KTEST_CASE(lockdep_trylock_in_irq_not_reported),
	KTEST_CASE(lockdep_trylock_adds_no_dependency),
};
KTEST_SUITE(lockdep, lockdep_cases, .init = lockdep_suite_init);
