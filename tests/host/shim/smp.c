/*
 * Host version of kernel/smp.h's cross-CPU calls: a mailbox per CPU thread, polled whenever
 * its simulated interrupts are enabled (interrupt-restore points, spin waits and the
 * interleave points inside critical sections); a call to a thread that is not running is
 * refused (-1), as for an offline CPU.
 */
#include <pthread.h>
#include <stdlib.h>
#include "kernel/smp.h"
#include "mm/mm_test.h"
#include "tests/host/shim/shim.h"

/* Every CPU thread index below MAX_CPUS has an area and mm's per-CPU slots from the start. */
static struct cpu host_cpus[MAX_CPUS];
struct cpu *cpu_areas[MAX_CPUS];
unsigned int nr_cpu_ids = MAX_CPUS;
unsigned int nr_cpus;

__attribute__((constructor)) static void host_cpus_init(void)
{
	for (unsigned int i = 0; i < MAX_CPUS; i++)
		cpu_areas[i] = &host_cpus[i];
	gup_percpu_set(calloc(MAX_CPUS, gup_percpu_size()), MAX_CPUS);
	fail_page_alloc_percpu_set(calloc(MAX_CPUS, fail_page_alloc_percpu_size() + 1), MAX_CPUS);
}

struct host_call {
	smp_call_fn fn;
	void *arg;
	int done;
	struct host_call *next;
};

static struct mailbox {
	pthread_mutex_t lock;
	bool live;
	struct host_call *head;
} mailbox[MAX_CPUS];

static pthread_once_t mailbox_once = PTHREAD_ONCE_INIT;

static void mailbox_init(void)
{
	for (unsigned int i = 0; i < MAX_CPUS; i++)
		pthread_mutex_init(&mailbox[i].lock, NULL);
}

unsigned int host_irq_depth(void)
{
	return cpu_ptr(host_cpu_id)->irq_depth;
}

/* Run everything queued for this CPU, as its call IPI handler would (interrupts off). */
static void run_calls(struct mailbox *mb)
{
	for (;;) {
		struct host_call *c;

		pthread_mutex_lock(&mb->lock);
		c = mb->head;
		if (c) {
			__atomic_store_n(&mb->head, c->next, __ATOMIC_RELAXED);
			__atomic_fetch_sub(&host_interleave_armed, 1, __ATOMIC_RELAXED);
		}
		pthread_mutex_unlock(&mb->lock);
		if (!c)
			return;
		host_irqs_off = 1;
		cpu_ptr(host_cpu_id)->irq_depth++;	/* interrupt context, as the IPI handler's */
		c->fn(c->arg);
		cpu_ptr(host_cpu_id)->irq_depth--;
		host_irqs_off = 0;
		__atomic_store_n(&c->done, 1, __ATOMIC_RELEASE);
	}
}

void host_irq_poll(void)
{
	struct mailbox *mb = &mailbox[host_cpu_id];

	if (host_irqs_off)
		return;
	if (__atomic_load_n(&mb->head, __ATOMIC_RELAXED))
		run_calls(mb);
	host_tick_poll();
}

void host_cpu_set_live(bool live)
{
	struct mailbox *mb = &mailbox[host_cpu_id];

	pthread_once(&mailbox_once, mailbox_init);
	pthread_mutex_lock(&mb->lock);
	mb->live = live;
	__atomic_store_n(&cpu_ptr(host_cpu_id)->online, live, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&mb->lock);
	if (!live) {
		unsigned long flags = host_irqs_off;

		host_irqs_off = 0;
		run_calls(mb);	/* calls queued before we went offline still run */
		host_irqs_off = flags;
	}
}

int smp_call_function_single(unsigned int cpu, smp_call_fn fn, void *arg, bool wait)
{
	struct host_call *c, call = { .fn = fn, .arg = arg };
	struct mailbox *mb = &mailbox[cpu];

	pthread_once(&mailbox_once, mailbox_init);
	if (cpu == host_cpu_id) {
		unsigned long flags = host_irqs_off;

		host_irqs_off = 1;
		fn(arg);
		host_irqs_off = flags;
		return 0;
	}
	c = wait ? &call : NULL;
	if (!c)
		return -1;	/* fire-and-forget calls are not needed by mm tests */
	pthread_mutex_lock(&mb->lock);
	if (!mb->live) {
		pthread_mutex_unlock(&mb->lock);
		return -1;
	}
	c->next = mb->head;
	__atomic_store_n(&mb->head, c, __ATOMIC_RELAXED);
	__atomic_fetch_add(&host_interleave_armed, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&mb->lock);
	while (!__atomic_load_n(&c->done, __ATOMIC_ACQUIRE))
		arch_cpu_relax();	/* polls our own mailbox: no deadlock between callers */
	return 0;
}

/* Every running CPU thread except the caller; with this shim, only waiting calls. */
void smp_call_function_all(smp_call_fn fn, void *arg, bool wait)
{
	for (unsigned int cpu = 0; cpu < MAX_CPUS; cpu++)
		if (cpu != host_cpu_id && __atomic_load_n(&cpu_ptr(cpu)->online, __ATOMIC_RELAXED))
			smp_call_function_single(cpu, fn, arg, true);
	(void)wait;
}

/*
 * Every running CPU thread and the caller at once: the others take it from their mailbox
 * (so, unlike the kernel, with their simulated interrupts off); returns when all are done.
 */
void smp_run_on_all(smp_call_fn fn, void *arg)
{
	static struct host_call calls[MAX_CPUS];
	static pthread_mutex_t run_lock = PTHREAD_MUTEX_INITIALIZER;
	bool queued[MAX_CPUS] = { false };

	pthread_once(&mailbox_once, mailbox_init);
	pthread_mutex_lock(&run_lock);
	for (unsigned int cpu = 0; cpu < MAX_CPUS; cpu++) {
		struct mailbox *mb = &mailbox[cpu];

		if (cpu == host_cpu_id)
			continue;
		calls[cpu] = (struct host_call){ .fn = fn, .arg = arg };
		pthread_mutex_lock(&mb->lock);
		if ((queued[cpu] = mb->live)) {
			calls[cpu].next = mb->head;
			__atomic_store_n(&mb->head, &calls[cpu], __ATOMIC_RELAXED);
		}
		pthread_mutex_unlock(&mb->lock);
	}
	fn(arg);
	for (unsigned int cpu = 0; cpu < MAX_CPUS; cpu++)
		while (queued[cpu] && !__atomic_load_n(&calls[cpu].done, __ATOMIC_ACQUIRE))
			arch_cpu_relax();
	pthread_mutex_unlock(&run_lock);
}

unsigned int nr_cpus_online(void)
{
	unsigned int n = 0;

	for (unsigned int cpu = 0; cpu < MAX_CPUS; cpu++)
		n += __atomic_load_n(&cpu_ptr(cpu)->online, __ATOMIC_RELAXED);
	return n;
}
