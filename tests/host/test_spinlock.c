/*
 * Host tests of the spinlock's own rules (kernel/spinlock.c, kernel/spinlock.h), on locks of
 * their own: who the owner is, what the statistics count, what a misuse reports, and that
 * lockdep looks before the wait. The lock word's memory ordering is TSan's to check (the
 * concurrent mm tests); the allocator's use of these locks is tests/host/test_pcp.c's.
 */
#include <setjmp.h>
#include <string.h>
#include "tests/host/harness.h"
#include "kernel/lockdep.h"
#include "kernel/smp.h"

#define NR_TEST_CPUS 8
#define SECOND_NS 1000000000ull		/* host arch_cycles() are nanoseconds */

/* Wait until *flag is set or ns have passed; true if it was set. */
static bool wait_flag(const int *flag, u64 ns)
{
	u64 end = arch_cycles() + ns;

	while (!smp_load_acquire(flag) && arch_cycles() < end)
		arch_cpu_relax();
	return smp_load_acquire(flag);
}

/* ---- the debug checks ---- */

/* An IRQ-safe lock taken with interrupts on prints a warning (and taints); taken with
 * spin_lock_irqsave() it does not. */
static void spin_lock_irqsafe_irqs_on_warns(struct ktest *t)
{
	static spinlock_t l;
	unsigned long warns = taint_count(TAINT_WARN), flags;

	spin_lock_init(&l, "irqsafe_test", SPIN_IRQSAFE);
	flags = spin_lock_irqsave(&l);
	spin_unlock_irqrestore(&l, flags);
	KT_EXPECT_EQ(t, taint_count(TAINT_WARN), warns);
	ktest_expect_taint(TAINT_WARN);
	spin_lock(&l);		/* interrupts on: the misuse */
	spin_unlock(&l);
	KT_EXPECT_EQ(t, taint_count(TAINT_WARN), warns + 1);
	KT_EXPECT_TRUE(t, host_console_contains("IRQ-safe lock taken with interrupts on"));
}

struct recursion {
	spinlock_t lock;
	int outcome;		/* 1: the second spin_lock panicked, 2: it returned */
	bool freed;		/* cpu1 had to free the lock word to end a hang */
	char msg[256];		/* the panic message (host_panic_msg is per thread) */
};

/* cpu0 takes its lock twice; cpu1 frees the lock word if cpu0 still spins after 2 s, so a
 * check that is missing fails the test instead of hanging it. */
static void *recursion_cpu(void *p)
{
	struct recursion *r = *(struct recursion **)p;
	jmp_buf jb;

	if (arch_cpu_id() == 1) {
		if (!wait_flag(&r->outcome, 2 * SECOND_NS)) {
			r->freed = true;
			arch_spin_unlock(&r->lock);
		}
		return NULL;
	}
	spin_lock(&r->lock);
	if (!setjmp(jb)) {
		host_panic_jmp = &jb;
		spin_lock(&r->lock);
		smp_store_release(&r->outcome, 2);
	} else {
		snprintf(r->msg, sizeof(r->msg), "%s", host_panic_msg);
		smp_store_release(&r->outcome, 1);
	}
	host_panic_jmp = NULL;
	spin_unlock(&r->lock);
	return NULL;
}

/* A CPU that takes a lock it already holds panics naming the lock, after lockdep's report,
 * instead of spinning on itself forever. */
static void spin_lock_recursion_panics(struct ktest *t)
{
	KT_SKIP_UNLESS_DEBUG_VM(t, "no lock validator (CONFIG_LOCKDEP)");
	static struct recursion r;
	struct recursion *args[2] = { &r, &r };
	struct lockdep_expect e;

	memset(&r, 0, sizeof(r));
	spin_lock_init(&r.lock, "recursion_test", 0);
	lockdep_expect_begin(&e);
	run_on_cpus(2, recursion_cpu, args, sizeof(args[0]));
	KT_EXPECT_EQ(t, lockdep_expect_end(&e), LOCKDEP_RECURSION);
	printk("second spin_lock: %s; %s\n", r.outcome == 1 ? "panicked" : "RETURNED",
	       r.freed ? "cpu1 had to free the lock word after 2 s" : r.msg);
	KT_EXPECT_EQ(t, r.outcome, 1);
	KT_EXPECT_FALSE(t, r.freed);
	KT_EXPECT_TRUE(t, strstr(r.msg, "spinlock recursion: cpu0 already holds 'recursion_test'"));
}

struct foreign_unlock {
	spinlock_t lock;
	int held, done;
	bool panicked, still_held;
	char msg[256];
};

/* cpu1 holds the lock; cpu0 calls spin_unlock() on it. */
static void *foreign_unlock_cpu(void *p)
{
	struct foreign_unlock *u = *(struct foreign_unlock **)p;
	jmp_buf jb;

	if (arch_cpu_id() == 1) {
		spin_lock(&u->lock);
		smp_store_release(&u->held, 1);
		wait_flag(&u->done, 10 * SECOND_NS);
		u->still_held = spin_is_held_by_me(&u->lock);
		if (u->still_held)
			spin_unlock(&u->lock);
		return NULL;
	}
	wait_flag(&u->held, 10 * SECOND_NS);
	if (!setjmp(jb)) {
		host_panic_jmp = &jb;
		spin_unlock(&u->lock);
	} else {
		u->panicked = true;
		snprintf(u->msg, sizeof(u->msg), "%s", host_panic_msg);
	}
	host_panic_jmp = NULL;
	smp_store_release(&u->done, 1);
	return NULL;
}

/* spin_unlock() by a CPU that does not hold the lock panics, naming both CPUs, and leaves
 * the owner's hold alone. */
static void spin_unlock_by_other_cpu_panics(struct ktest *t)
{
	static struct foreign_unlock u;
	struct foreign_unlock *args[2] = { &u, &u };

	memset(&u, 0, sizeof(u));
	spin_lock_init(&u.lock, "foreign_unlock", 0);
	run_on_cpus(2, foreign_unlock_cpu, args, sizeof(args[0]));
	printk("spin_unlock by cpu0 of cpu1's lock: %s\n", u.panicked ? u.msg : "RETURNED");
	KT_EXPECT_TRUE(t, u.panicked);
	KT_EXPECT_TRUE(t, strstr(u.msg, "spin_unlock of 'foreign_unlock' by cpu0, owner is cpu1"));
	KT_EXPECT_TRUE(t, u.still_held);
}

/* ---- owner and statistics ---- */

struct owner_run {
	spinlock_t lock;
	unsigned long iterations;
	unsigned long not_owner;	/* holds in which the holder was not the owner (atomic) */
	unsigned long counter;		/* protected by lock */
	int started;
};

static struct owner_run *owner_ticked;
static unsigned long owner_ticks, owner_stale;	/* atomic */

/* An interrupt wherever one can come (tests/host/shim/sched.c's tick): if the lock names
 * this CPU as its owner, this CPU must hold it. */
static void owner_tick(void)
{
	spinlock_t *l = &owner_ticked->lock;

	__atomic_fetch_add(&owner_ticks, 1, __ATOMIC_RELAXED);
	if (READ_ONCE(l->owner_cpu) == arch_cpu_id() && !READ_ONCE(l->locked))
		__atomic_fetch_add(&owner_stale, 1, __ATOMIC_RELAXED);
}

static void *owner_cpu(void *p)
{
	struct owner_run *o = *(struct owner_run **)p;

	__atomic_fetch_add(&o->started, 1, __ATOMIC_RELAXED);
	while (smp_load_acquire(&o->started) < NR_TEST_CPUS)	/* all at once */
		arch_cpu_relax();
	for (unsigned long i = 0; i < o->iterations; i++) {
		spin_lock(&o->lock);
		if (!spin_is_held_by_me(&o->lock)) {
			__atomic_fetch_add(&o->not_owner, 1, __ATOMIC_RELAXED);
			WRITE_ONCE(o->lock.owner_cpu, (u16)arch_cpu_id());	/* so unlock works */
		}
		o->counter++;
		spin_unlock(&o->lock);
	}
	return NULL;
}

/* 8 CPUs take one lock in turn: inside, the holder is always the recorded owner (a late
 * clear of owner_cpu by the previous holder would erase it), an interrupt never finds the
 * lock free with its own CPU still named owner (owner_cpu is cleared before the release),
 * and no increment is lost. Race window: contended acquisitions (a CPU waited while another
 * held it). */
static void spin_lock_holder_is_owner(struct ktest *t)
{
	static struct owner_run o;
	struct owner_run *args[NR_TEST_CPUS];

	memset(&o, 0, sizeof(o));
	spin_lock_init(&o.lock, "owner_test", 0);
	o.iterations = host_pct_on() ? 200 : 10000;
	for (unsigned int i = 0; i < NR_TEST_CPUS; i++)
		args[i] = &o;
	owner_ticked = &o;
	owner_ticks = owner_stale = 0;
	host_set_tick(owner_tick, 3);
	run_on_cpus(NR_TEST_CPUS, owner_cpu, args, sizeof(args[0]));
	host_set_tick(NULL, 0);
	printk("%lu holds, %llu contended, %lu with the holder not the owner; %lu interrupts, "
	       "%lu found the lock free naming their CPU\n", o.counter,
	       (unsigned long long)o.lock.stats.contended, o.not_owner, owner_ticks, owner_stale);
	KT_EXPECT_EQ(t, o.not_owner, 0ul);
	KT_EXPECT_EQ(t, owner_stale, 0ul);
	KT_EXPECT_GT(t, owner_ticks, 0ul);
	KT_EXPECT_EQ(t, o.counter, NR_TEST_CPUS * o.iterations);
	KT_EXPECT_EQ(t, o.lock.stats.acquisitions, (u64)(NR_TEST_CPUS * o.iterations));
	KT_EXPECT_EQ(t, o.lock.owner_cpu, SPIN_NO_OWNER);
	if (!o.lock.stats.contended)
		KT_SKIP(t, "no race: no CPU ever waited for the lock");
}

struct tryfail_run {
	spinlock_t lock;
	unsigned long tries;
	int held, finished, trying, overlaps;
};

static void *tryfail_cpu(void *p)
{
	struct tryfail_run *r = *(struct tryfail_run **)p;

	if (arch_cpu_id() == 0) {
		spin_lock(&r->lock);
		smp_store_release(&r->held, 1);
		while (smp_load_acquire(&r->finished) < NR_TEST_CPUS - 1)
			arch_cpu_relax();
		spin_unlock(&r->lock);
		return NULL;
	}
	while (!smp_load_acquire(&r->held))
		arch_cpu_relax();
	for (unsigned long i = 0; i < r->tries; i++) {
		if (__atomic_add_fetch(&r->trying, 1, __ATOMIC_RELAXED) > 1)
			__atomic_fetch_add(&r->overlaps, 1, __ATOMIC_RELAXED);
		if (spin_trylock(&r->lock))
			spin_unlock(&r->lock);	/* cannot happen: cpu0 holds it */
		__atomic_fetch_sub(&r->trying, 1, __ATOMIC_RELAXED);
	}
	__atomic_fetch_add(&r->finished, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* cpu0 holds a lock while 7 CPUs trylock it: every failure is counted, by the failing CPUs
 * themselves (the holder's plain counters are not theirs to write). Race window: trylocks
 * begun while another CPU's was running. */
static void spin_trylock_failures_counted_exactly(struct ktest *t)
{
	static struct tryfail_run r;
	struct tryfail_run *args[NR_TEST_CPUS];

	memset(&r, 0, sizeof(r));
	spin_lock_init(&r.lock, "tryfail_test", 0);
	r.tries = host_pct_on() ? 100 : 50000;
	for (unsigned int i = 0; i < NR_TEST_CPUS; i++)
		args[i] = &r;
	run_on_cpus(NR_TEST_CPUS, tryfail_cpu, args, sizeof(args[0]));
	printk("%llu trylock failures counted of %lu; %d trylocks overlapped another\n",
	       (unsigned long long)r.lock.stats.trylock_failed, (NR_TEST_CPUS - 1) * r.tries,
	       r.overlaps);
	KT_EXPECT_EQ(t, r.lock.stats.trylock_failed, (u64)((NR_TEST_CPUS - 1) * r.tries));
	KT_EXPECT_EQ(t, r.lock.stats.acquisitions, 1ull);
	if (!r.overlaps)
		KT_SKIP(t, "no race: no two trylocks ever ran at once");
}

/* A trylock that fails leaves nothing in lockdep's held locks: the validator hears of a
 * trylock only once it succeeded. (Here this CPU's own trylock finds the lock held, as an
 * interrupt's does in the trylock model.) */
static void spin_trylock_failed_holds_nothing(struct ktest *t)
{
	KT_SKIP_UNLESS_DEBUG_VM(t, "no lock validator (CONFIG_LOCKDEP)");
	static spinlock_t l;
	unsigned int depth = lockdep_held_depth();

	spin_lock_init(&l, "tryheld_test", 0);
	spin_lock(&l);
	KT_EXPECT_EQ(t, lockdep_held_depth(), depth + 1);
	KT_EXPECT_FALSE(t, spin_trylock(&l));
	KT_EXPECT_EQ(t, lockdep_held_depth(), depth + 1);
	spin_unlock(&l);
	KT_EXPECT_EQ(t, lockdep_held_depth(), depth);
	KT_EXPECT_EQ(t, l.stats.trylock_failed, 1ull);
}

/* ---- lockdep and the wait ---- */

struct before_wait {
	spinlock_t a, b;
	struct lockdep_expect *e;
	int a_held;
	enum lockdep_rule seen;	/* e->rule as cpu1 saw it while cpu0 waited for a */
};

/* cpu1 holds a; cpu0, holding b, spins for a (b -> a against the a -> b learnt before).
 * cpu1 lets a go once the report is in, or after 2 s without one. */
static void *before_wait_cpu(void *p)
{
	struct before_wait *w = *(struct before_wait **)p;

	if (arch_cpu_id() == 1) {
		u64 end = arch_cycles() + 2 * SECOND_NS;

		spin_lock(&w->a);
		smp_store_release(&w->a_held, 1);
		while (READ_ONCE(w->e->rule) == LOCKDEP_NONE && arch_cycles() < end)
			arch_cpu_relax();
		w->seen = READ_ONCE(w->e->rule);
		spin_unlock(&w->a);
		return NULL;
	}
	while (!smp_load_acquire(&w->a_held))
		arch_cpu_relax();
	spin_lock(&w->b);
	spin_lock(&w->a);	/* closes the cycle, then waits for cpu1 */
	spin_unlock(&w->a);
	spin_unlock(&w->b);
	return NULL;
}

/* spin_lock() asks lockdep before it waits: a CPU about to spin into a possible deadlock is
 * reported while it spins, not after it got the lock (a real deadlock would never end). */
static void lockdep_report_comes_before_the_wait(struct ktest *t)
{
	KT_SKIP_UNLESS_DEBUG_VM(t, "no lock validator (CONFIG_LOCKDEP)");
	static struct before_wait w;
	struct before_wait *args[2] = { &w, &w };
	struct lockdep_expect e;

	memset(&w, 0, sizeof(w));
	spin_lock_init(&w.a, "wait_a", 0);
	spin_lock_init(&w.b, "wait_b", 0);
	w.e = &e;
	lockdep_expect_begin(&e);
	spin_lock(&w.a);	/* learn a -> b */
	spin_lock(&w.b);
	spin_unlock(&w.b);
	spin_unlock(&w.a);
	run_on_cpus(2, before_wait_cpu, args, sizeof(args[0]));
	KT_EXPECT_EQ(t, lockdep_expect_end(&e), LOCKDEP_CIRCULAR);
	printk("while cpu0 waited: %s\n", lockdep_rule_name(w.seen));
	KT_EXPECT_EQ(t, w.seen, LOCKDEP_CIRCULAR);
}

/* ---- lockstat ---- */

#define LOCKSTAT_TEST_LOCKS 600	/* more than the table's 512 */

/* Registering more locks than lockstat's table holds drops the excess: no write past the
 * table (ASan), and the top list comes only from the locks that fit (the first 512). */
static void lockstat_register_past_table_dropped(struct ktest *t)
{
	static spinlock_t locks[LOCKSTAT_TEST_LOCKS];
	static bool registered;

	if (registered)
		KT_SKIP(t, "registered in an earlier run of this process");
	registered = true;
	for (unsigned int i = 0; i < LOCKSTAT_TEST_LOCKS; i++) {
		spin_lock_init(&locks[i], i < 512 ? "lockstat_fits" : "lockstat_dropped", 0);
		locks[i].stats.contended = i + 1;
		lockstat_register(&locks[i]);
	}
	host_console_reset();
	lockstat_print_top(1);
	KT_EXPECT_TRUE(t, host_console_contains("lockstat_fits"));
	KT_EXPECT_FALSE(t, host_console_contains("lockstat_dropped"));
}

static const struct ktest_case spinlock_cases[] = {
	KTEST_CASE(spin_lock_irqsafe_irqs_on_warns),
	KTEST_CASE(spin_lock_recursion_panics),
	KTEST_CASE(spin_unlock_by_other_cpu_panics),
	KTEST_CASE_CONCURRENT(spin_lock_holder_is_owner),
	KTEST_CASE_CONCURRENT(spin_trylock_failures_counted_exactly),
	KTEST_CASE(spin_trylock_failed_holds_nothing),
	KTEST_CASE(lockdep_report_comes_before_the_wait),
	KTEST_CASE(lockstat_register_past_table_dropped),
};
KTEST_SUITE(host_spinlock, spinlock_cases);
