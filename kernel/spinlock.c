/*
 * Test-and-test-and-set spinlock with pause. Chosen over FIFO locks (ticket, MCS) because
 * vCPUs are host threads that get descheduled: with a FIFO lock the next owner may be a vCPU
 * that is not running, and every running waiter must wait for it. Here any running waiter can
 * take a freed lock. The price is unfairness, which nothing in this kernel depends on.
 * Measured with `bench=locks` (tests/bench/bench_locks.c; docs/results.md): with 4 or more
 * vCPUs on 2 host cores a ticket lock manages 9-38 thousand acquisitions/s, TTAS 0.2-1.6
 * million. Taking a free lock is one exclusive access of its line, its xchg (spin_lock_at()):
 * one transfer when another CPU had the line, no upgrade (the c2c plugin's count, docs/c2c.md
 * section 9).
 */
#include "kernel/spinlock.h"
#include "kernel/arch.h"
#include "kernel/panic.h"
#include "kernel/printk.h"

void spin_lock_init_at(spinlock_t *lock, const char *name, unsigned int flags LOCKDEP_SITE_PARAM)
{
	lock->locked = 0;
	lock->owner_cpu = SPIN_NO_OWNER;
	lock->flags = (u8)flags;
	lock->dep_class = 0;
	lock->name = name;
	lockstat_reset(lock);
#if CONFIG_LOCKDEP
	lockdep_init_lock(lock, site);
#endif
}

/* owner_cpu is only ever this CPU's id if this CPU wrote it (it is cleared before release). */
bool spin_is_held_by_me(const spinlock_t *lock)
{
	return READ_ONCE(lock->locked) &&
	       READ_ONCE(lock->owner_cpu) == arch_cpu_id();
}

static inline bool spin_looks_locked(spinlock_t *lock)
{
	return READ_ONCE(lock->locked);
}

/* Called with the lock just acquired: record owner and statistics. */
static inline void __spin_acquired(spinlock_t *lock, u64 spins)
{
	WRITE_ONCE(lock->owner_cpu, (u16)arch_cpu_id());
#if CONFIG_LOCK_STAT
	lock->stats.acquisitions++;
	lock->stats.spins += spins;
	if (lock->flags & SPIN_HOLDTIME)
		lock->stats.acquired_at = arch_cycles();
#endif
}

/* A waiter (or a failed trylock) found the lock held: counted at once, by the one who found
 * it, so that the holder can see it. */
#if CONFIG_LOCK_STAT
#define lock_stat_count(lock, item) __atomic_fetch_add(&(lock)->stats.item, 1, __ATOMIC_RELAXED)
#else
#define lock_stat_count(lock, item) do { } while (0)
#endif

/*
 * The xchg found the lock held: wait for it (Linux's queued_spin_lock_slowpath()). Here, and
 * only here, come the checks that read the lock before it is ours: lockdep, before the wait,
 * as Linux's looks before it, so that a deadlock is reported, not just hung in; and the
 * recursion check, since a lock this CPU holds is held (release builds have no lockdep to
 * report it first). Waiters spin on a plain read, sharing the line instead of bouncing it.
 * Returns the turns spun.
 */
static u64 spin_lock_slowpath(spinlock_t *lock LOCKDEP_SITE_PARAM)
{
	u64 spins = 0;

	lockdep_acquire_at(lock, false);
	if (unlikely(spin_is_held_by_me(lock)))
		panic("spinlock recursion: cpu%u already holds '%s'", arch_cpu_id(), lock->name);
	lock_stat_count(lock, contended);
	do {
		do {
			arch_cpu_relax();
			spins++;
		} while (spin_looks_locked(lock));
	} while (!arch_spin_trylock(lock));
	return spins;
}

/*
 * The xchg first, as Linux's queued_spin_lock() does its cmpxchg first: taking a free lock
 * is one exclusive access of its line (one transfer if another CPU had it), and what follows
 * (owner, statistics, lockdep's look at the lock's class, the IRQ-safety check) reads and
 * writes a line this CPU already holds. A read of the line before the xchg would cost a
 * second access (the read brings it shared, the xchg upgrades it): the conflict layer's
 * handoff cases count one transfer and no upgrade per acquisition (tests/c2c/conflict.py).
 * So lockdep hears of a free lock just after the xchg (Linux's lock_acquire() comes before
 * its first try, in debug builds, which read the lock's class there): nothing waits on this
 * path, and a CPU that would wait tells lockdep before it does, in the slow path.
 */
void spin_lock_at(spinlock_t *lock LOCKDEP_SITE_PARAM)
{
	u64 spins = 0;

	if (likely(arch_spin_trylock(lock)))
		lockdep_acquire_at(lock, false);
	else
		spins = spin_lock_slowpath(lock LOCKDEP_SITE_PASS);
	__spin_acquired(lock, spins);
	if (unlikely(!arch_irqs_disabled() && (lock->flags & SPIN_IRQSAFE)))
		warn_slowpath(__FILE__, __LINE__, "IRQ-safe lock taken with interrupts on");
	arch_interleave_point();	/* inside: an interrupt or another CPU may come in now */
}

/* A trylock never waits, so lockdep only hears of it once it has succeeded. */
bool spin_trylock_at(spinlock_t *lock LOCKDEP_SITE_PARAM)
{
	arch_interleave_point();
	if (spin_looks_locked(lock) || !arch_spin_trylock(lock)) {
		lock_stat_count(lock, trylock_failed);
		return false;
	}
	__spin_acquired(lock, 0);
	lockdep_acquire_at(lock, true);
	return true;
}

void spin_unlock(spinlock_t *lock)
{
	arch_interleave_point();
	if (unlikely(!spin_is_held_by_me(lock)))
		panic("spin_unlock of '%s' by cpu%u, owner is cpu%u", lock->name,
		      arch_cpu_id(), lock->owner_cpu);
	lockdep_release(lock);
#if CONFIG_LOCK_STAT
	if (lock->flags & SPIN_HOLDTIME) {
		u64 held = arch_cycles() - lock->stats.acquired_at;

		if (held > lock->stats.max_hold_cycles)
			lock->stats.max_hold_cycles = held;
	}
#endif
	WRITE_ONCE(lock->owner_cpu, SPIN_NO_OWNER);
	arch_spin_unlock(lock);
}

unsigned long spin_lock_irqsave_at(spinlock_t *lock LOCKDEP_SITE_PARAM)
{
	unsigned long flags = arch_irq_save();

	spin_lock_at(lock LOCKDEP_SITE_PASS);
	return flags;
}

bool spin_trylock_irqsave_at(spinlock_t *lock, unsigned long *flags LOCKDEP_SITE_PARAM)
{
	*flags = arch_irq_save();
	if (spin_trylock_at(lock LOCKDEP_SITE_PASS))
		return true;
	arch_irq_restore(*flags);
	return false;
}

void spin_unlock_irqrestore(spinlock_t *lock, unsigned long flags)
{
	spin_unlock(lock);
	arch_irq_restore(flags);
}

/* ---- statistics table ---- */

#if CONFIG_LOCK_STAT
#define LOCKSTAT_MAX 512
static spinlock_t *lockstat_table[LOCKSTAT_MAX];
static unsigned int lockstat_count;

void lockstat_reset(spinlock_t *lock)
{
	lock->stats = (struct lock_stats){ 0 };
}

void lockstat_register(spinlock_t *lock)
{
	unsigned int slot = __atomic_fetch_add(&lockstat_count, 1, __ATOMIC_RELAXED);

	if (slot < LOCKSTAT_MAX)
		lockstat_table[slot] = lock;
}

/* Which of two registered locks lockstat shows first: more waits (contended acquisitions),
 * then more trylock failures (the per-CPU list locks are trylocked, so theirs show there),
 * then more acquisitions. */
static bool lockstat_before(const spinlock_t *a, const spinlock_t *b)
{
	if (a->stats.contended != b->stats.contended)
		return a->stats.contended > b->stats.contended;
	if (a->stats.trylock_failed != b->stats.trylock_failed)
		return a->stats.trylock_failed > b->stats.trylock_failed;
	return a->stats.acquisitions > b->stats.acquisitions;
}

/* Print the n registered locks that come first by lockstat_before(). */
void lockstat_print_top(unsigned int n)
{
	unsigned int total = MIN(READ_ONCE(lockstat_count), (unsigned int)LOCKSTAT_MAX);
	bool shown[LOCKSTAT_MAX] = { false };

	printk("%-20s %12s %10s %12s %10s %12s\n", "lock", "acquired", "contended",
	       "spins", "tryfail", "maxhold-cyc");
	for (unsigned int k = 0; k < n; k++) {
		int best = -1;
		for (unsigned int i = 0; i < total; i++) {
			if (shown[i] || !lockstat_table[i])
				continue;
			if (best < 0 || lockstat_before(lockstat_table[i], lockstat_table[best]))
				best = (int)i;
		}
		if (best < 0)
			break;
		shown[best] = true;
		spinlock_t *l = lockstat_table[best];
		char hold[24] = "-";	/* not timed: no SPIN_HOLDTIME */

		if (l->flags & SPIN_HOLDTIME)
			snprintf(hold, sizeof(hold), "%llu", (unsigned long long)l->stats.max_hold_cycles);
		printk("%-20s %12llu %10llu %12llu %10llu %12s\n", l->name,
		       (unsigned long long)l->stats.acquisitions,
		       (unsigned long long)l->stats.contended,
		       (unsigned long long)l->stats.spins,
		       (unsigned long long)l->stats.trylock_failed, hold);
	}
}

#else /* !CONFIG_LOCK_STAT: nothing counted, nothing to show */

const struct lock_stats lock_stats_none;

void lockstat_reset(spinlock_t *lock)
{
}

void lockstat_register(spinlock_t *lock)
{
}

void lockstat_print_top(unsigned int n)
{
	printk("lockstat: no lock statistics in this build (CONFIG_LOCK_STAT=0)\n");
}

#endif
