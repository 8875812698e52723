/*
 * Generic time keeping on top of the arch's calibrated cycle counter and periodic tick:
 * cycle conversions, delays, per-CPU tick counts and tick hooks (kernel/timer.h).
 */
#include "kernel/timer.h"
#include "kernel/smp.h"
#include "kernel/panic.h"
#include "kernel/printk.h"
#include "kernel/cmdline.h"

u64 cycles_khz;
const char *cycles_reference;
unsigned int timer_hz = TIMER_HZ;
CMDLINE_UINT("timer.hz", timer_hz, "periodic ticks per second on every CPU (1..1000, default 100)");
static tick_hook_fn tick_hooks[TIMER_MAX_HOOKS];	/* NULL = free slot */
static spinlock_t hooks_lock = SPINLOCK_INIT("tick_hooks");
static u64 hooks_gen;	/* bumped after every removal (under hooks_lock) */

/* c / khz ms = c * 10^6 / khz ns, split so that nothing overflows 64 bits (khz < 2^32). */
u64 cycles_to_ns(u64 cycles)
{
	u64 khz = READ_ONCE(cycles_khz);

	BUG_ON(!khz);
	return cycles / khz * 1000000 + cycles % khz * 1000000 / khz;
}

u64 cycles_to_us(u64 cycles)
{
	return cycles_to_ns(cycles) / 1000;
}

u64 us_to_cycles(u64 us)
{
	BUG_ON(!cycles_khz);
	return us / 1000 * cycles_khz + us % 1000 * cycles_khz / 1000;
}

void udelay(u64 us)
{
	u64 end = arch_cycles() + us_to_cycles(us);

	while ((s64)(arch_cycles() - end) < 0)
		arch_cpu_relax();
}

void mdelay(u64 ms)
{
	udelay(ms * 1000);
}

u64 timer_ticks(unsigned int cpu)
{
	return READ_ONCE(cpu_ptr(cpu)->ticks);
}

/*
 * Hooks first, then the tick count: a count that moved means that CPU's earlier hooks ended.
 * The hook generation is read before the table: a tick that read generation g after a
 * removal bumped it to g cannot have seen the removed hook, and it publishes g when done.
 */
void timer_tick(void)
{
	struct cpu *c = this_cpu();
	u64 gen = smp_load_acquire(&hooks_gen);

	for (unsigned int i = 0; i < TIMER_MAX_HOOKS; i++) {
		tick_hook_fn fn = smp_load_acquire(&tick_hooks[i]);

		if (fn)
			fn(c->arch.cpu_id);
	}
	smp_store_release(&c->ticks, c->ticks + 1);
	smp_store_release(&c->hooks_gen_seen, gen);
}

int timer_add_tick_hook(tick_hook_fn fn)
{
	unsigned long flags = spin_lock_irqsave(&hooks_lock);
	int ret = -1;

	for (unsigned int i = 0; i < TIMER_MAX_HOOKS && ret; i++) {
		if (!tick_hooks[i]) {
			smp_store_release(&tick_hooks[i], fn);
			ret = 0;
		}
	}
	spin_unlock_irqrestore(&hooks_lock, flags);
	return ret;
}

/* Wait until every online CPU has completed a tick that began after generation gen. */
static void wait_for_tick_everywhere(u64 gen)
{
	u64 deadline = arch_cycles() + us_to_cycles(10ull * 1000 * 1000);

	for_each_online_cpu(cpu) {
		while (smp_load_acquire(&cpu_ptr(cpu)->hooks_gen_seen) < gen) {
			if ((s64)(arch_cycles() - deadline) > 0)
				panic("timer: cpu%u took no tick for 10 s (interrupts off?)", cpu);
			arch_cpu_relax();
		}
	}
}

void timer_remove_tick_hook(tick_hook_fn fn)
{
	unsigned long flags;
	u64 gen;

	WARN_ON(arch_irqs_disabled());
	flags = spin_lock_irqsave(&hooks_lock);
	for (unsigned int i = 0; i < TIMER_MAX_HOOKS; i++)
		if (tick_hooks[i] == fn)
			smp_store_release(&tick_hooks[i], NULL);
	gen = __atomic_add_fetch(&hooks_gen, 1, __ATOMIC_ACQ_REL);
	spin_unlock_irqrestore(&hooks_lock, flags);
	wait_for_tick_everywhere(gen);
}
