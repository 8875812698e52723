/*
 * Cross-CPU function calls and the AP idle loop (kernel/smp.h). Each CPU has a ring of
 * pending calls; a sender queues a pointer to its call descriptor and sends the call IPI.
 * Finding and starting CPUs is arch code (arch/x86_64/smp.c).
 *
 * A descriptor counts the targets that have not finished it yet: a target decrements the
 * count after fn returns and never touches the descriptor again, so the descriptor is
 * reusable (or its stack frame gone) as soon as the count is 0. A waiter with interrupts on
 * sleeps in hlt and the last target wakes it; with interrupts off it polls.
 */
#include "kernel/smp.h"
#include "kernel/acpi.h"
#include "kernel/panic.h"
#include "kernel/printk.h"
#include "kernel/cmdline.h"
#include "kernel/timer.h"
#include "kernel/string.h"
#include "mm/mm.h"

/* One smp_run_on_all(): lives on the initiator's stack until remaining reaches 0. */
struct smp_work {
	smp_call_fn fn;
	void *arg;
	unsigned int initiator;
	u32 remaining;			/* remote CPUs that have not returned from fn */
	u64 not_started[CPU_MASK_WORDS];	/* for the timeout message */
};

static struct cpu boot_cpu_area;
struct cpu *cpu_areas[MAX_CPUS] = { &boot_cpu_area };
unsigned int nr_cpu_ids = 1;
unsigned int nr_cpus = 1;
static spinlock_t run_lock = SPINLOCK_INIT("smp_run_on_all");

/* ---- numbering the firmware's CPUs ------------------------------------------------------------ */

static unsigned int max_cpus = MAX_CPUS;
CMDLINE_UINT("smp.maxcpus", max_cpus, "start at most this many CPUs (1: boot CPU only)");

unsigned int smp_number_cpus(const struct acpi_madt_info *madt, u32 bsp_apic_id,
			     u32 max_apic_id, u32 *apic_ids, u8 *nmi_lints)
{
	unsigned int limit = MIN(max_cpus, (unsigned int)MAX_CPUS), n = 1, over = 0, bad_id = 0;
	bool bsp_listed = false;

	for (unsigned int i = 0; i < madt->nr_cpus; i++) {
		u32 id = madt->cpus[i].apic_id, lints = acpi_nmi_lints(madt, madt->cpus[i].uid);

		if (id == bsp_apic_id) {
			bsp_listed = true;
			nmi_lints[0] = (u8)lints;
		} else if (id > max_apic_id) {
			bad_id++;
		} else if (n >= limit) {
			over++;		/* the arrays hold MAX_CPUS, whatever smp.maxcpus says */
		} else {
			apic_ids[n] = id;
			nmi_lints[n++] = (u8)lints;
		}
	}
	if (!bsp_listed)
		pr_warn("smp: the boot CPU (APIC id %u) is not in the MADT\n", bsp_apic_id);
	if (bad_id)
		pr_warn("smp: %u CPUs not started: APIC id > 254 without x2APIC\n", bad_id);
	if (over)
		pr_warn("smp: %u CPUs not started: at most %u (smp.maxcpus=%u, MAX_CPUS %u)\n", over,
			MAX(limit, 1u), max_cpus, MAX_CPUS);
	apic_ids[0] = bsp_apic_id;
	return n;
}

/* ---- per-CPU memory: for the CPUs there are, not for MAX_CPUS -------------------------------- */

static unsigned int bytes_order(size_t bytes)
{
	unsigned int order = 0;

	while ((PAGE_SIZE << order) < bytes)
		order++;
	return order;
}

void *cpu_array_alloc(size_t size)
{
	size_t bytes = size * nr_cpu_ids;
	struct page *page;

	if (bytes_order(bytes) > MAX_ORDER)
		return NULL;
	page = alloc_pages(GFP_KERNEL, bytes_order(bytes));
	if (!page)
		return NULL;
	memset(page_address(page), 0, bytes);
	return page_address(page);
}

void cpu_array_free(void *array, size_t size)
{
	if (array)
		__free_pages(virt_to_page(mm_node(), array), bytes_order(size * nr_cpu_ids));
}

int smp_alloc_cpu_areas(void)
{
	struct cpu *areas;

	if (nr_cpu_ids < 2)
		return 0;
	areas = cpu_array_alloc(sizeof(struct cpu));	/* slot 0 unused: CPU 0's is static */
	if (!areas)
		return -1;
	for (unsigned int cpu = 1; cpu < nr_cpu_ids; cpu++)
		cpu_areas[cpu] = &areas[cpu];
	return 0;
}

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
		if (smp_load_acquire(&m[i]))
			return false;
	return true;
}

static unsigned int call_timeout_ms;
CMDLINE_UINT("smp.call_timeout_ms", call_timeout_ms,
	     "panic when a cross-CPU call is unanswered this long (0: 20 s + 200 ms per CPU)");

/* TCG runs all vCPUs on a few host cores: allow each CPU a share of the wait. */
static unsigned int smp_call_timeout_ms(void)
{
	return call_timeout_ms ? call_timeout_ms : SMP_CALL_TIMEOUT_MS + 200 * nr_cpus;
}

static u64 call_deadline(void)
{
	return arch_cycles() + us_to_cycles(smp_call_timeout_ms() * 1000ull);
}

/*
 * The deadline passed: panic() listing the CPUs still set in m, the ones that did not answer.
 * If they all answered meanwhile (the deadline raced with the last one), return instead.
 */
static void panic_no_answer(const u64 *m, const char *what)
{
	u64 snap[CPU_MASK_WORDS];
	char list[160];
	size_t len = 0;

	for (unsigned int i = 0; i < CPU_MASK_WORDS; i++)
		snap[i] = smp_load_acquire(&m[i]);
	if (mask_empty(snap))
		return;
	list[0] = 0;
	for (unsigned int cpu = 0; cpu < nr_cpus && len < sizeof(list) - 16; cpu++)
		if (snap[cpu / 64] & (1ull << (cpu % 64)))
			len += (size_t)scnprintf(list + len, sizeof(list) - len, " cpu%u", cpu);
	panic("smp: %s: no answer within %u ms from%s", what, smp_call_timeout_ms(), list);
}

/* ---- the per-CPU call queue ------------------------------------------------------------------ */

static struct smp_call *dequeue(struct cpu *c)
{
	unsigned long flags = spin_lock_irqsave(&c->call_lock);
	struct smp_call *call = NULL;

	if (c->call_head != c->call_tail) {
		call = c->call_ring[c->call_head % SMP_CALL_RING];
		WRITE_ONCE(c->call_head, c->call_head + 1);	/* wait_step() peeks at both */
	}
	spin_unlock_irqrestore(&c->call_lock, flags);
	return call;
}

/* Run everything queued for this CPU. Interrupts are off (IPI handler or a wait loop). */
static void run_queue(void)
{
	struct cpu *c = this_cpu();
	struct smp_call *call;

	while ((call = dequeue(c))) {
		u32 waiter;

		call->fn(call->arg);
		waiter = READ_ONCE(call->waiter);
		mask_clear(call->pending, c->arch.cpu_id);
		if (__atomic_sub_fetch(&call->remaining, 1, __ATOMIC_ACQ_REL) == 0 && waiter)
			arch_send_wake_ipi(waiter - 1);	/* after the decrement: no touching *call */
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
	struct cpu *c = this_cpu();
	unsigned long flags;

	if (READ_ONCE(c->call_head) != READ_ONCE(c->call_tail)) {
		flags = arch_irq_save();
		run_queue();
		arch_irq_restore(flags);
	}
	arch_cpu_relax();
	if ((s64)(arch_cycles() - deadline) > 0)
		panic_no_answer(waiting_for, what);
}

static void enqueue(unsigned int target, struct smp_call *call)
{
	struct cpu *t = cpu_ptr(target);
	u64 deadline = call_deadline(), who[CPU_MASK_WORDS] = { 0 };

	mask_set(who, target);
	for (;;) {
		unsigned long flags = spin_lock_irqsave(&t->call_lock);
		bool queued = t->call_tail - t->call_head < SMP_CALL_RING;

		if (queued) {
			t->call_ring[t->call_tail % SMP_CALL_RING] = call;
			WRITE_ONCE(t->call_tail, t->call_tail + 1);
		}
		spin_unlock_irqrestore(&t->call_lock, flags);
		if (queued)
			break;
		wait_step(deadline, who, "its call queue stays full");
	}
	arch_send_call_ipi(target);
}

/* A free async descriptor of this CPU (all its targets done), waiting for one if needed. */
static struct smp_call *async_call_get(void)
{
	struct smp_call *pool = this_cpu()->async_calls;
	u64 deadline = call_deadline();

	for (;;) {
		u64 busy[CPU_MASK_WORDS] = { 0 };

		for (unsigned int i = 0; i < SMP_ASYNC_CALLS; i++) {
			if (!smp_load_acquire(&pool[i].remaining))
				return &pool[i];
			for (unsigned int w = 0; w < CPU_MASK_WORDS; w++)
				busy[w] |= READ_ONCE(pool[i].pending[w]);
		}
		wait_step(deadline, busy, "all async call descriptors busy");
	}
}

/* Queue call on every CPU in call->pending (remaining already counts them). */
static void call_queue_all(struct smp_call *call)
{
	for (unsigned int cpu = 0; cpu < nr_cpus; cpu++)
		if (READ_ONCE(call->pending[cpu / 64]) & (1ull << (cpu % 64)))
			enqueue(cpu, call);
}

/* Wait until every target has run call: asleep if interrupts are on, else polling. */
static void call_wait(struct smp_call *call)
{
	bool irqs_on = !arch_irqs_disabled();
	u64 deadline = call_deadline();

	while (smp_load_acquire(&call->remaining)) {
		if (irqs_on) {
			arch_irq_disable();
			if (smp_load_acquire(&call->remaining))
				arch_wait_for_interrupt();	/* the last target or a tick wakes us */
			arch_irq_enable();
		} else {
			wait_step(deadline, call->pending, "smp_call_function");
		}
		if ((s64)(arch_cycles() - deadline) > 0)
			panic_no_answer(call->pending, "smp_call_function");
	}
}

/*
 * Fill call for targets and queue it. Without wait, call is one of this CPU's async
 * descriptors, taken with interrupts off so an interrupt handler on this CPU cannot take it
 * too. With wait and interrupts on, the last target wakes us from hlt.
 */
static void call_start(struct smp_call *call, smp_call_fn fn, void *arg, const u64 *targets,
		       bool wait)
{
	bool sleeper = wait && !arch_irqs_disabled();
	unsigned long flags = arch_irq_save();
	u32 n = 0;

	if (!wait)
		call = async_call_get();
	call->fn = fn;
	call->arg = arg;
	call->waiter = sleeper ? arch_cpu_id() + 1 : 0;
	for (unsigned int cpu = 0; cpu < nr_cpus; cpu++)	/* no libgcc: no popcount */
		n += (targets[cpu / 64] >> (cpu % 64)) & 1;
	memcpy(call->pending, targets, sizeof(call->pending));
	smp_store_release(&call->remaining, n);
	call_queue_all(call);
	arch_irq_restore(flags);
}

int smp_call_function_single(unsigned int cpu, smp_call_fn fn, void *arg, bool wait)
{
	u64 targets[CPU_MASK_WORDS] = { 0 };
	struct smp_call call;
	unsigned long flags;

	if (!cpu_online(cpu))
		return -1;
	if (cpu == arch_cpu_id()) {
		flags = arch_irq_save();
		fn(arg);
		arch_irq_restore(flags);
		return 0;
	}
	mask_set(targets, cpu);
	call_start(&call, fn, arg, targets, wait);
	if (wait)
		call_wait(&call);
	return 0;
}

void smp_call_function_all(smp_call_fn fn, void *arg, bool wait)
{
	u64 targets[CPU_MASK_WORDS] = { 0 };
	unsigned int self = arch_cpu_id();
	struct smp_call call;

	for_each_online_cpu(cpu)
		if (cpu != self)
			mask_set(targets, cpu);
	if (mask_empty(targets))
		return;
	call_start(&call, fn, arg, targets, wait);
	if (wait)
		call_wait(&call);
}

/* ---- smp_run_on_all and the idle loop ---------------------------------------------------- */

static void run_work(struct smp_work *w)
{
	unsigned int self = arch_cpu_id(), initiator = w->initiator;

	mask_clear(w->not_started, self);
	this_cpu()->in_run = true;
	w->fn(w->arg);
	this_cpu()->in_run = false;
	if (__atomic_sub_fetch(&w->remaining, 1, __ATOMIC_ACQ_REL) == 0)	/* last touch of *w */
		arch_send_wake_ipi(initiator);
}

/* Wait for the remote CPUs of w: in hlt if interrupts are on (woken by the last one). */
static void run_wait(struct smp_work *w, bool irqs_on)
{
	u64 start_deadline = call_deadline();

	while (smp_load_acquire(&w->remaining)) {
		if ((s64)(arch_cycles() - start_deadline) > 0)
			panic_no_answer(w->not_started, "smp_run_on_all: CPUs did not start");
		if (!irqs_on) {
			wait_step(~0ull >> 1, w->not_started, "smp_run_on_all");
			continue;
		}
		arch_irq_disable();
		if (smp_load_acquire(&w->remaining))
			arch_wait_for_interrupt();	/* our tick or the last finisher wakes us */
		arch_irq_enable();
	}
}

void smp_run_on_all(smp_call_fn fn, void *arg)
{
	struct smp_work w = { fn, arg, arch_cpu_id(), 0, { 0 } };
	bool irqs_on = !arch_irqs_disabled();

	BUG_ON(this_cpu()->irq_depth || this_cpu()->in_run);	/* not from IRQs or inside fn */
	/* Another CPU's run may include us: take its job while we wait for the lock. */
	while (!spin_trylock(&run_lock)) {
		struct smp_work *mine = __atomic_exchange_n(&this_cpu()->work, NULL,
							    __ATOMIC_ACQUIRE);

		if (mine)
			run_work(mine);
		arch_cpu_relax();
	}
	for_each_online_cpu(cpu) {
		if (cpu != w.initiator) {
			mask_set(w.not_started, cpu);
			w.remaining++;
		}
	}
	for_each_online_cpu(cpu) {
		if (cpu != w.initiator) {
			smp_store_release(&cpu_ptr(cpu)->work, &w);
			arch_send_wake_ipi(cpu);
		}
	}
	this_cpu()->in_run = true;
	fn(arg);
	this_cpu()->in_run = false;
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

/* Nothing happens as an AP starts; kernel/smp.h says who may replace this. */
__weak void cpu_starting_hook(unsigned int cpu)
{
}
