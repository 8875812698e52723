/*
 * Spinlocks for many vCPUs on few host cores, with debug checks and xv6-style statistics.
 * Not a sleeping lock: there is no scheduler. Implemented in kernel/spinlock.c.
 *
 * API (Linux names): spin_lock / spin_unlock, spin_trylock, spin_lock_irqsave /
 * spin_unlock_irqrestore, spin_trylock_irqsave. A lock initialised with SPIN_IRQSAFE must be
 * taken with interrupts disabled; taking it with interrupts on prints a warning.
 *
 * With CONFIG_LOCKDEP (debug builds) every acquisition is checked by the lock validator
 * (kernel/lockdep.h): the API names are macros that pass the caller's file:line along. A
 * lock's class is its spin_lock_init() call site, or for a statically initialised lock
 * (SPINLOCK_INIT) the lock itself. Release builds compile the validator out entirely.
 */
#ifndef KERNEL_SPINLOCK_H
#define KERNEL_SPINLOCK_H

#include "kernel/compiler.h"
#include "kernel/arch.h"
#include "kernel/lockdep.h"

#define SPIN_NO_OWNER 0xffffu
#define SPIN_IRQSAFE 0x1u	/* must be held with IRQs off (e.g. zone->lock) */
#define SPIN_HOLDTIME 0x2u	/* time every hold (two cycle-counter reads; max_hold_cycles) */

/*
 * Lock statistics, in every lock, behind their own switch (Linux keeps its CONFIG_LOCK_STAT
 * figures in lockdep's class data instead): on by default in every build, because the
 * benchmarks and boot reports read zone->lock's contention; -DCONFIG_LOCK_STAT=0 leaves a
 * lock 16 bytes. The holder updates acquisitions, spins and the hold times with plain
 * arithmetic (it is alone); contended and trylock_failed are counted atomically by the CPUs
 * that found the lock held, as they find it (Linux's lock_contended()), so that a holder can
 * see that someone waits for it.
 */
#ifndef CONFIG_LOCK_STAT
#define CONFIG_LOCK_STAT 1
#endif
struct lock_stats {
	u64 acquisitions;	/* successful lock + trylock */
	u64 contended;		/* acquisitions that had to wait: counted when the wait begins */
	u64 spins;		/* wait-loop iterations, summed over all waiters */
	u64 trylock_failed;	/* trylocks that found it held */
	u64 max_hold_cycles;	/* longest hold, arch_cycles() units (SPIN_HOLDTIME locks only) */
	u64 acquired_at;	/* arch_cycles() at the current acquisition (SPIN_HOLDTIME) */
};

typedef struct spinlock {
	u32 locked;		/* 0 free, 1 held: the only word waiters spin on */
	u16 owner_cpu;		/* debug: holder's CPU or SPIN_NO_OWNER */
	u8 flags;		/* SPIN_IRQSAFE, SPIN_HOLDTIME */
	u8 dep_class;		/* lockdep class index, 0 until known (kernel/lockdep.c) */
	const char *name;
#if CONFIG_LOCK_STAT
	struct lock_stats stats;
#endif
} spinlock_t;

/* A lock's statistics, to read (all zero without CONFIG_LOCK_STAT). */
#if CONFIG_LOCK_STAT
#define lock_stat(lock) ((const struct lock_stats *)&(lock)->stats)
#else
extern const struct lock_stats lock_stats_none;
#define lock_stat(lock) ((void)(lock), &lock_stats_none)
#endif

/* A statically initialised lock; lockdep gives it a class of its own at first use. */
#define SPINLOCK_INIT(lockname) { .owner_cpu = SPIN_NO_OWNER, .name = lockname }

/*
 * The real functions take the call site (kernel/lockdep.h) in lockdep builds only, so a
 * release build pays nothing: LOCKDEP_SITE_ARG(lock) expands to ", site" or to nothing.
 */
#if CONFIG_LOCKDEP
#define LOCKDEP_SITE_ARG(lock) , LOCK_SITE(#lock)
#define LOCKDEP_SITE_PARAM , const struct lock_site *site
#else
#define LOCKDEP_SITE_ARG(lock)
#define LOCKDEP_SITE_PARAM
#endif

/* For the lock implementations (kernel/spinlock.c, kernel/rwlock.c), inside a function that
 * takes LOCKDEP_SITE_PARAM: tell the validator, pass the site on; nothing in release builds. */
#if CONFIG_LOCKDEP
#define lockdep_acquire_at(lock, trylock) lockdep_acquire(lock, site, trylock)
#define LOCKDEP_SITE_PASS , site
#else
#define lockdep_acquire_at(lock, trylock) do { } while (0)
#define lockdep_release(lock) do { } while (0)
#define LOCKDEP_SITE_PASS
#endif

void spin_lock_init_at(spinlock_t *lock, const char *name, unsigned int flags LOCKDEP_SITE_PARAM);
void spin_lock_at(spinlock_t *lock LOCKDEP_SITE_PARAM);
bool spin_trylock_at(spinlock_t *lock LOCKDEP_SITE_PARAM);
unsigned long spin_lock_irqsave_at(spinlock_t *lock LOCKDEP_SITE_PARAM);
bool spin_trylock_irqsave_at(spinlock_t *lock, unsigned long *flags LOCKDEP_SITE_PARAM);
void spin_unlock(spinlock_t *lock);
void spin_unlock_irqrestore(spinlock_t *lock, unsigned long flags);

#define spin_lock_init(lock, name, flags)                                               \
	spin_lock_init_at(lock, name, flags LOCKDEP_SITE_ARG(lock))
#define spin_lock(lock) spin_lock_at(lock LOCKDEP_SITE_ARG(lock))
#define spin_trylock(lock) spin_trylock_at(lock LOCKDEP_SITE_ARG(lock))
#define spin_lock_irqsave(lock) spin_lock_irqsave_at(lock LOCKDEP_SITE_ARG(lock))
#define spin_trylock_irqsave(lock, flags)                                               \
	spin_trylock_irqsave_at(lock, flags LOCKDEP_SITE_ARG(lock))

/*
 * The lock word alone, as Linux's arch_spin_trylock() / arch_spin_lock() / arch_spin_unlock():
 * no owner, no statistics, no checks. The functions above are built on these. A per-CPU
 * list's lock is taken with them directly in release builds (mm/pcp.h pcp_spin_trylock());
 * one hold is always taken and released through the same layer.
 */
static inline bool arch_spin_trylock(spinlock_t *lock)
{
	return !__atomic_exchange_n(&lock->locked, 1, __ATOMIC_ACQUIRE);
}

static inline void arch_spin_lock(spinlock_t *lock)
{
	while (!arch_spin_trylock(lock))
		do	/* a plain read, so that waiters share the line instead of bouncing it */
			arch_cpu_relax();
		while (READ_ONCE(lock->locked));
}

static inline void arch_spin_unlock(spinlock_t *lock)
{
	smp_store_release(&lock->locked, 0);
}

/* True if this CPU holds the lock (debug: uses owner_cpu). */
bool spin_is_held_by_me(const spinlock_t *lock);
#define assert_spin_locked(l) VM_BUG_ON(!spin_is_held_by_me(l))

/* Long-lived kernel locks can be registered to appear in lockstat_print_top(). */
void lockstat_register(spinlock_t *lock);
void lockstat_reset(spinlock_t *lock);
void lockstat_print_top(unsigned int n);

#endif
