/*
 * Time: the calibrated cycle counter (arch_cycles(), the TSC on x86), short delays, and the
 * periodic per-CPU tick with hooks run in interrupt context. Generic part in kernel/timer.c;
 * calibration and the tick source are arch code (arch/x86_64/timer.c).
 */
#ifndef KERNEL_TIMER_H
#define KERNEL_TIMER_H

#include "kernel/compiler.h"

#define TIMER_HZ 100		/* periodic ticks per second on every CPU, unless timer.hz= */
#define TIMER_MAX_HOOKS 8

/*
 * The tick rate in force (timer.hz=, 1..1000, default TIMER_HZ). Under TCG every tick of every
 * vCPU is work for the host: 1024 CPUs at 100 Hz are 102,400 interrupts a second, which two
 * host cores cannot deliver while also running the guest, so make test-big lowers it.
 */
extern unsigned int timer_hz;

/* arch_cycles() per millisecond, measured at boot; 0 until the timer is calibrated. */
extern u64 cycles_khz;
/* arch_cycles() at kmain() entry: the zero of "ms from kernel entry" (kernel/main.c). */
extern u64 boot_tsc_start;
/* The clock cycles_khz was measured against, for messages ("HPET"); NULL until then. */
extern const char *cycles_reference;

u64 cycles_to_ns(u64 cycles);
u64 cycles_to_us(u64 cycles);
u64 us_to_cycles(u64 us);
/* Busy-wait (calibrated cycle counter): for short hardware delays, not for waiting on CPUs. */
void udelay(u64 us);
void mdelay(u64 ms);

/* Timer interrupts taken by cpu since it came online. */
u64 timer_ticks(unsigned int cpu);

/*
 * A tick hook runs on every online CPU at every tick, in interrupt context (interrupts off,
 * on that CPU's stack), with the CPU's index. Add returns 0, or -1 if all TIMER_MAX_HOOKS
 * slots are taken. Remove returns once no CPU can still be running the hook (each online CPU
 * has finished a tick since), so its data may be freed afterwards; call it with interrupts
 * on, and not from a hook.
 */
typedef void (*tick_hook_fn)(unsigned int cpu);
int timer_add_tick_hook(tick_hook_fn fn);
void timer_remove_tick_hook(tick_hook_fn fn);

/* Called by the arch tick interrupt on each CPU. */
void timer_tick(void);

#endif
