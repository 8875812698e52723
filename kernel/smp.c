/*
 * Cross-CPU function calls and the AP idle loop (kernel/smp.h). Each CPU has a ring of
 * pending calls; a sender queues a pointer to its call descriptor and sends the call IPI.
 * Finding and starting CPUs is arch code (arch/x86_64/smp.c).
 *
 * A descriptor carries a bitmap of target CPUs that have not finished it yet: a target
 * clears its bit after fn returns and never touches the descriptor again, so the descriptor
 * is reusable (or its stack frame gone) as soon as the bitmap is empty.
 */
#include "kernel/smp.h"
#include "kernel/panic.h"
#include "kernel/printk.h"
#include "kernel/timer.h"

#define ASYNC_CALLS_PER_CPU 8	/* descriptors for calls nobody waits for, per sender */

struct smp_call {
	smp_call_fn fn;
	void *arg;
	u64 pending[CPU_MASK_WORDS];	/* targets still to finish fn */
};

/* One smp_run_on_all(): lives on the initiator's stack until remaining reaches 0. */
struct smp_work {
	smp_call_fn fn;
	void *arg;
	unsigned int initiator;
	u32 remaining;			/* remote CPUs that have not returned from fn */
	u64 not_started[CPU_MASK_WORDS];	/* for the timeout message */
};

struct cpu cpus[MAX_CPUS];
unsigned int nr_cpus = 1;
static struct smp_call async_calls[MAX_CPUS][ASYNC_CALLS_PER_CPU];
static spinlock_t run_lock = { .owner_cpu = SPIN_NO_OWNER, .name = "smp_run_on_all" };

unsigned int nr_cpus_online(void)
{
	unsigned int n = 0;

	for_each_online_cpu(c)
		n++;
	return n;
}

/* ---- CPU bitmaps ---------------------------------------------------------------------------- */

static void mask_set(u64 *m, unsigned int cpu)
{
	__atomic_fetch_or(&m[cpu / 64], 1ull << (cpu % 64), __ATOMIC_RELAXED);
}

static void mask_clear(u64 *m, unsigned int cpu)
{
	__atomic_fetch_and(&m[cpu / 64], ~(1ull << (cpu % 64)), __ATOMIC_RELEASE);
}

static bool mask_empty(const u64 *m)
{
	for (unsigned int i = 0; i < CPU_MASK_WORDS; i++)
		if (__atomic_load_n(&m[i], __ATOMIC_ACQUIRE))
			return false;
	return true;
}

/* panic() listing the CPUs still set in m: the ones that did not answer. */
static __noreturn void panic_no_answer(const u64 *m, const char *what)
{
	char list[160];
	size_t len = 0;

	list[0] = 0;
	for (unsigned int cpu = 0; cpu < MAX_CPUS && len < sizeof(list) - 16; cpu++)
		if (__atomic_load_n(&m[cpu / 64], __ATOMIC_RELAXED) & (1ull << (cpu % 64)))
			len += (size_t)snprintf(list + len, sizeof(list) - len, " cpu%u", cpu);
	panic("smp: %s: no answer within %u ms from%s", what, SMP_CALL_TIMEOUT_MS, list);
}

/* ---- the per-CPU call queue ------------------------------------------------------------------ */

static struct smp_call *dequeue(struct cpu *c)
{
	unsigned long flags = spin_lock_irqsave(&c->call_lock);
	struct smp_call *call = NULL;

	if (c->call_head != c->call_tail)
		call = c->call_ring[c->call_head++ % SMP_CALL_RING];
	spin_unlock_irqrestore(&c->call_lock, flags);
	return call;
}

/* Run everything queued for this CPU. Interrupts are off (IPI handler or a wait loop). */
static void run_queue(void)
{
	struct cpu *c = this_cpu();
	struct smp_call *call;

	while ((call = dequeue(c))) {
		call->fn(call->arg);
		mask_clear(call->pending, c->arch.cpu_id);	/* last touch of *call */
	}
}

void smp_call_interrupt(void)
{
	run_queue();
}

/*
 * One step of any wait on other CPUs: run calls queued for us first, so two CPUs that wait
 * on each other (even with interrupts off) still make progress. Panics past the deadline.
 */
static void wait_step(u64 deadline, const u64 *waiting_for, const char *what)
{
	unsigned long flags = arch_irq_save();

	run_queue();
	arch_irq_restore(flags);
	arch_cpu_relax();
	if ((s64)(arch_cycles() - deadline) > 0)
		panic_no_answer(waiting_for, what);
}

static u64 call_deadline(void)
{
	return arch_cycles() + us_to_cycles(SMP_CALL_TIMEOUT_MS * 1000ull);
}

static void enqueue(unsigned int target, struct smp_call *call)
{
	struct cpu *t = cpu_ptr(target);
	u64 deadline = call_deadline();

	for (;;) {
		unsigned long flags = spin_lock_irqsave(&t->call_lock);
		bool queued = t->call_tail - t->call_head < SMP_CALL_RING;

		if (queued)
			t->call_ring[t->call_tail++ % SMP_CALL_RING] = call;
		spin_unlock_irqrestore(&t->call_lock, flags);
		if (queued)
			break;
		wait_step(deadline, call->pending, "call queue full");
	}
	arch_send_call_ipi(target);
}

/* A free async descriptor of this CPU (all its targets done), waiting for one if needed. */
static struct smp_call *async_call_get(void)
{
	struct smp_call *pool = async_calls[arch_cpu_id()];
	u64 deadline = call_deadline();

	for (;;) {
		for (unsigned int i = 0; i < ASYNC_CALLS_PER_CPU; i++)
			if (mask_empty(pool[i].pending))
				return &pool[i];
		wait_step(deadline, pool[0].pending, "async call descriptors all busy");
	}
}

/*
 * Queue fn on every CPU in targets (already in call->pending) and, if wait, wait for all.
 * Interrupts are off from taking an async descriptor to having queued it, so an interrupt
 * handler on this CPU cannot take the same one.
 */
static void call_many(struct smp_call *call, bool wait)
{
	u64 deadline;

	for (unsigned int cpu = 0; cpu < nr_cpus; cpu++)
		if (__atomic_load_n(&call->pending[cpu / 64], __ATOMIC_RELAXED) & (1ull << (cpu % 64)))
			enqueue(cpu, call);
	if (!wait)
		return;
	deadline = call_deadline();
	while (!mask_empty(call->pending))
		wait_step(deadline, call->pending, "smp_call_function");
}

int smp_call_function_single(unsigned int cpu, smp_call_fn fn, void *arg, bool wait)
{
	struct smp_call on_stack = { fn, arg, { 0 } }, *call = &on_stack;
	unsigned long flags;

	if (!cpu_online(cpu))
		return -1;
	flags = arch_irq_save();
	if (cpu == arch_cpu_id()) {
		fn(arg);
	} else {
		if (!wait) {
			call = async_call_get();
			*call = on_stack;
		}
		mask_set(call->pending, cpu);
		call_many(call, wait);
	}
	arch_irq_restore(flags);
	return 0;
}

void smp_call_function_all(smp_call_fn fn, void *arg, bool wait)
{
	struct smp_call on_stack = { fn, arg, { 0 } }, *call = &on_stack;
	unsigned int self = arch_cpu_id();
	unsigned long flags = arch_irq_save();

	if (!wait) {
		call = async_call_get();
		*call = on_stack;
	}
	for_each_online_cpu(cpu)
		if (cpu != self)
			mask_set(call->pending, cpu);
	call_many(call, wait);
	arch_irq_restore(flags);
}

/* ---- smp_run_on_all and the idle loop ---------------------------------------------------- */

static void run_work(struct smp_work *w)
{
	unsigned int self = arch_cpu_id(), initiator = w->initiator;

	mask_clear(w->not_started, self);
	w->fn(w->arg);
	if (__atomic_sub_fetch(&w->remaining, 1, __ATOMIC_ACQ_REL) == 0)	/* last touch of *w */
		arch_send_wake_ipi(initiator);
}

/* Wait for the remote CPUs of w: in hlt if interrupts are on (woken by the last one). */
static void run_wait(struct smp_work *w, bool irqs_on)
{
	u64 start_deadline = call_deadline();

	while (__atomic_load_n(&w->remaining, __ATOMIC_ACQUIRE)) {
		if (!mask_empty(w->not_started) && (s64)(arch_cycles() - start_deadline) > 0)
			panic_no_answer(w->not_started, "smp_run_on_all: CPUs did not start");
		if (!irqs_on) {
			wait_step(~0ull >> 1, w->not_started, "smp_run_on_all");
			continue;
		}
		arch_irq_disable();
		if (__atomic_load_n(&w->remaining, __ATOMIC_ACQUIRE))
			arch_wait_for_interrupt();	/* our tick or the last finisher wakes us */
		arch_irq_enable();
	}
}

void smp_run_on_all(smp_call_fn fn, void *arg)
{
	struct smp_work w = { fn, arg, arch_cpu_id(), 0, { 0 } };
	bool irqs_on = !arch_irqs_disabled();

	BUG_ON(this_cpu()->irq_depth);
	spin_lock(&run_lock);
	for_each_online_cpu(cpu) {
		if (cpu != w.initiator) {
			mask_set(w.not_started, cpu);
			w.remaining++;
		}
	}
	for_each_online_cpu(cpu) {
		if (cpu != w.initiator) {
			__atomic_store_n(&cpu_ptr(cpu)->work, &w, __ATOMIC_RELEASE);
			arch_send_wake_ipi(cpu);
		}
	}
	fn(arg);
	run_wait(&w, irqs_on);
	spin_unlock(&run_lock);
}

__noreturn void smp_idle_loop(void)
{
	struct cpu *c = this_cpu();

	for (;;) {
		struct smp_work *w;

		arch_irq_disable();
		w = __atomic_exchange_n(&c->work, NULL, __ATOMIC_ACQUIRE);
		if (!w) {
			arch_wait_for_interrupt();	/* sti; hlt: no wake-up is lost */
			continue;
		}
		arch_irq_enable();
		run_work(w);
	}
}
