/*
 * Reader/writer spinlock: one counter word that readers add to, and a spinlock that writers
 * take turns on (Linux's qrwlock without its queue: a FIFO hands over only when the waiter
 * whose turn it is runs, and on 2 host cores it often does not; kernel/spinlock.c).
 */
#include "kernel/rwlock.h"
#include "kernel/arch.h"
#include "kernel/panic.h"

void rwlock_init_at(rwlock_t *rw, const char *name LOCKDEP_SITE_PARAM)
{
	rw->cnts = 0;
	spin_lock_init_at(&rw->wait_lock, name, 0 LOCKDEP_SITE_PASS);
}

/*
 * cnts = RW_WRITER bit + RW_READER per reader. A reader adds RW_READER; if the writer bit was
 * clear it is in, and no writer can get in until it subtracts again (a writer waits for
 * cnts == RW_WRITER). If the bit was set, a writer holds the lock or waits for the readers
 * inside: the reader takes its count back and waits for the bit to clear, so a writer waits
 * only for the readers that were in before it came, never for ones that came after.
 * Acquire on the add, release on the subtract: what a writer wrote is seen by the readers
 * after it, and what readers read is read before the next writer writes.
 */
void read_lock_at(rwlock_t *rw LOCKDEP_SITE_PARAM)
{
	lockdep_acquire_at(&rw->wait_lock, false);
	while (__atomic_fetch_add(&rw->cnts, RW_READER, __ATOMIC_ACQUIRE) & RW_WRITER) {
		__atomic_fetch_sub(&rw->cnts, RW_READER, __ATOMIC_RELAXED);
		while (__atomic_load_n(&rw->cnts, __ATOMIC_RELAXED) & RW_WRITER)
			arch_cpu_relax();	/* interrupts as the caller has them */
	}
	arch_interleave_point();	/* inside: an interrupt or another CPU may come in now */
}

void read_unlock(rwlock_t *rw)
{
	arch_interleave_point();
	VM_BUG_ON(__atomic_load_n(&rw->cnts, __ATOMIC_RELAXED) < RW_READER);
	lockdep_release(&rw->wait_lock);
	__atomic_fetch_sub(&rw->cnts, RW_READER, __ATOMIC_RELEASE);
}

/* Writers take turns on wait_lock; the one holding it sets the bit (new readers now back
 * off) and waits for the readers already inside. */
void write_lock_at(rwlock_t *rw LOCKDEP_SITE_PARAM)
{
	spin_lock_at(&rw->wait_lock LOCKDEP_SITE_PASS);
	__atomic_fetch_or(&rw->cnts, RW_WRITER, __ATOMIC_RELAXED);
	while (__atomic_load_n(&rw->cnts, __ATOMIC_ACQUIRE) != RW_WRITER)
		arch_cpu_relax();
	arch_interleave_point();
}

/* Clear the bit before letting the next writer in: it sets the bit again itself. */
void write_unlock(rwlock_t *rw)
{
	assert_write_locked(rw);
	__atomic_fetch_and(&rw->cnts, ~RW_WRITER, __ATOMIC_RELEASE);
	spin_unlock(&rw->wait_lock);
}
