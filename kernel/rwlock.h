/*
 * Reader/writer spinlocks: any number of readers or one writer, for what is read far more
 * often than it is changed (an address space's VMAs: mm_struct.mmap_lock, mm/vm.h). Not a
 * sleeping lock, and not for interrupt context. Implemented in kernel/rwlock.c.
 *
 * API (Linux names): rwlock_init, read_lock / read_unlock, write_lock / write_unlock.
 * Writers go first: once one waits, new readers wait too, so forty CPUs that keep reading
 * cannot starve it. Waiters spin with interrupts as the caller has them (on, where a holder
 * may wait for a cross-CPU call). With CONFIG_LOCKDEP, reads and writes of a lock are
 * checked as one class, so a CPU that takes a read it already holds is reported as recursion:
 * with a writer waiting between the two, that read never comes.
 */
#ifndef KERNEL_RWLOCK_H
#define KERNEL_RWLOCK_H

#include "kernel/spinlock.h"

#define RW_WRITER 1u		/* cnts: a writer holds the lock, or waits for readers to leave */
#define RW_READER 2u		/* cnts: one reader inside (or one about to back off) */

typedef struct rwlock {
	u32 cnts;		/* RW_WRITER | readers * RW_READER: the word readers touch */
	spinlock_t wait_lock;	/* held by the writer from before it waits until it unlocks, so
				 * writers take turns (unfairly, as every spinlock here); and
				 * lockdep's name for the whole lock */
} rwlock_t;

void rwlock_init_at(rwlock_t *rw, const char *name LOCKDEP_SITE_PARAM);
void read_lock_at(rwlock_t *rw LOCKDEP_SITE_PARAM);
void write_lock_at(rwlock_t *rw LOCKDEP_SITE_PARAM);
void read_unlock(rwlock_t *rw);
void write_unlock(rwlock_t *rw);

#define rwlock_init(rw, name) rwlock_init_at(rw, name LOCKDEP_SITE_ARG(rw))
#define read_lock(rw) read_lock_at(rw LOCKDEP_SITE_ARG(rw))
#define write_lock(rw) write_lock_at(rw LOCKDEP_SITE_ARG(rw))

/* Held by someone, read or write (a reader backing off can make it look held a moment). */
static inline bool rwlock_is_locked(const rwlock_t *rw)
{
	return __atomic_load_n(&rw->cnts, __ATOMIC_RELAXED) != 0;
}

/* This CPU holds it for write (debug: the writer owns wait_lock). */
static inline bool write_lock_is_held_by_me(const rwlock_t *rw)
{
	return spin_is_held_by_me(&rw->wait_lock);
}

#define assert_rwlock_locked(rw) VM_BUG_ON(!rwlock_is_locked(rw))
#define assert_write_locked(rw) VM_BUG_ON(!write_lock_is_held_by_me(rw))

#endif
