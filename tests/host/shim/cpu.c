/*
 * The host's CPUs under the real kernel/smp.c: a per-CPU area for every thread index, which
 * threads are online, and kernel/smp.h's two IPI hooks. An IPI sets a pending bit of the
 * target CPU thread, taken when that thread has its simulated interrupts on (host_irq_poll:
 * interrupt-restore points, spin waits, interleave points, and a halt). Not a second
 * implementation of cross-CPU calls: queues, waits and timeouts are kernel/smp.c's.
 */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include "kernel/smp.h"
#include "mm/mm_test.h"
#include "tests/host/shim/shim.h"

/*
 * Every CPU thread index below MAX_CPUS has an area and mm's per-CPU slots from the start.
 * CPU 0 is online for good: it is the harness's main thread (the boot CPU) and, while a set
 * of CPU threads runs, that set's thread 0 (the main thread then waits for them).
 */
static struct cpu host_cpus[MAX_CPUS];

/* A CPU thread's interrupt lines: set by any thread, cleared by the CPU taking them. */
static struct host_irq {
	int call;			/* call IPI pending: kernel/smp.c queued calls for us */
	int wake;			/* wake IPI pending: ends a halt */
	pthread_mutex_t lock;		/* a halted thread sleeps on cv under lock */
	pthread_cond_t cv;
} host_irq[MAX_CPUS];

__attribute__((constructor)) static void host_cpus_init(void)
{
	for (unsigned int i = 0; i < MAX_CPUS; i++) {
		cpu_areas[i] = &host_cpus[i];
		host_cpus[i].arch.self = &host_cpus[i].arch;
		host_cpus[i].arch.cpu_id = i;
		spin_lock_init(&host_cpus[i].call_lock, "smp_call_queue", SPIN_IRQSAFE);
		pthread_mutex_init(&host_irq[i].lock, NULL);
		pthread_cond_init(&host_irq[i].cv, NULL);
	}
	nr_cpu_ids = MAX_CPUS;
	host_cpus[0].online = true;
	gup_percpu_set(calloc(MAX_CPUS, gup_percpu_size()), MAX_CPUS);
	fail_page_alloc_percpu_set(calloc(MAX_CPUS, fail_page_alloc_percpu_size() + 1), MAX_CPUS);
}

unsigned int host_irq_depth(void)
{
	return cpu_ptr(host_cpu_id)->irq_depth;
}

static void host_irq_kick(unsigned int cpu)
{
	host_pct_kick(cpu);
	pthread_mutex_lock(&host_irq[cpu].lock);
	pthread_cond_signal(&host_irq[cpu].cv);
	pthread_mutex_unlock(&host_irq[cpu].lock);
}

void arch_send_call_ipi(unsigned int cpu)
{
	if (!__atomic_exchange_n(&host_irq[cpu].call, 1, __ATOMIC_ACQ_REL))
		__atomic_fetch_add(&host_interleave_armed, 1, __ATOMIC_RELAXED);
	host_irq_kick(cpu);
}

void arch_send_wake_ipi(unsigned int cpu)
{
	__atomic_store_n(&host_irq[cpu].wake, 1, __ATOMIC_RELEASE);
	host_irq_kick(cpu);
}

/* This CPU's call IPI, as arch/x86_64/trap.c's handler takes it: interrupt context. */
static void host_call_ipi(void)
{
	struct cpu *c = cpu_ptr(host_cpu_id);

	host_irqs_off = 1;
	c->irq_depth++;
	c->ipis++;
	smp_call_interrupt();
	c->irq_depth--;
	host_irqs_off = 0;
}

void host_irq_poll(void)
{
	int *call = &host_irq[host_cpu_id].call;

	if (host_irqs_off)
		return;
	if (__atomic_load_n(call, __ATOMIC_RELAXED) && __atomic_exchange_n(call, 0, __ATOMIC_ACQ_REL)) {
		__atomic_fetch_sub(&host_interleave_armed, 1, __ATOMIC_RELAXED);
		host_call_ipi();
	}
	host_tick_poll();
}

/*
 * hlt with interrupts on (arch_wait_for_interrupt): sleep until an IPI arrives or 1 ms, the
 * host's stand-in for a timer tick, has passed. A wake IPI sent before we got here is not
 * lost: its bit stays set until a halt consumes it. In deterministic mode the scheduler
 * runs others until an IPI comes (host_pct_halt).
 */
void host_halt(void)
{
	struct host_irq *h = &host_irq[host_cpu_id];
	struct timespec until;

	host_irq_poll();
	if (__atomic_exchange_n(&h->wake, 0, __ATOMIC_ACQ_REL))
		return;
	if (host_pct_thread()) {
		host_pct_halt();
		return;
	}
	if (host_pct_on()) {
		host_spin_wait();	/* the harness's main thread, not scheduled: spin */
		return;
	}
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_nsec += 1000000;
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&h->lock);
	if (!__atomic_load_n(&h->wake, __ATOMIC_ACQUIRE) && !__atomic_load_n(&h->call, __ATOMIC_ACQUIRE))
		pthread_cond_timedwait(&h->cv, &h->lock, &until);
	__atomic_store_n(&h->wake, 0, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&h->lock);
	host_irq_poll();
}

void host_cpu_online(bool online)
{
	/* A wake IPI left from an earlier set must not end this thread's first halt: a --pct
	 * run replays only if it starts from the same state. */
	__atomic_store_n(&host_irq[host_cpu_id].wake, 0, __ATOMIC_RELAXED);
	if (host_cpu_id == 0)
		return;	/* always online (above) */
	__atomic_store_n(&cpu_ptr(host_cpu_id)->online, online, __ATOMIC_RELEASE);
	if (!online) {
		unsigned long flags = host_irqs_off;

		host_irqs_off = 0;
		host_irq_poll();	/* calls queued before we went offline still run */
		host_irqs_off = flags;
	}
}
