/*
 * Tick source and clock calibration: the TSC and the LAPIC timer are both measured against
 * the 8254 PIT (a fixed 1.193182 MHz), then every CPU runs its LAPIC timer periodically at
 * TIMER_HZ. The generic side (delays, tick hooks) is kernel/timer.c.
 */
#include "kernel/smp.h"
#include "kernel/timer.h"
#include "kernel/panic.h"
#include "kernel/printk.h"
#include "cpu.h"
#include "io.h"

#define PIT_HZ 1193182u
#define CAL_MS 10u			/* one calibration window */
#define CAL_RUNS 3u			/* keep the shortest: the least disturbed by the host */
#define PIT_GIVE_UP_CYCLES (1ull << 33)	/* ~1-8 s at any TSC rate: no PIT there */
#define APIC_DIV_16 0x3u

static u32 lapic_count_per_tick;	/* LAPIC timer initial count (divide by 16) for 1/HZ s */

/* Channel 2, mode 0 (interrupt on terminal count), gate on, speaker off. */
static void pit_start(u16 count)
{
	outb(0x61, (inb(0x61) & ~0x02) | 0x01);
	outb(0x43, 0xb0);
	outb(0x42, count & 0xff);
	outb(0x42, count >> 8);
}

/*
 * One window of CAL_MS: start the TSC reading and a free-running LAPIC count, then the PIT;
 * wait for the PIT output to rise; read both. Any delay (the host descheduling this vCPU)
 * can only lengthen what the TSC and LAPIC saw, never shorten it, so the shortest of
 * several windows is the most accurate. Returns false if the PIT never answered.
 */
static bool calibrate_once(u64 *tsc_delta, u32 *lapic_delta)
{
	u64 t0, t1;
	u32 cur;

	apic_write(APIC_TIMER_DIV, APIC_DIV_16);
	apic_write(APIC_LVT_TIMER, APIC_LVT_MASKED);
	t0 = arch_cycles();
	apic_write(APIC_TIMER_INIT, 0xffffffffu);
	pit_start((u16)(PIT_HZ * CAL_MS / 1000));
	do {
		t1 = arch_cycles();
		if (t1 - t0 > PIT_GIVE_UP_CYCLES)
			return false;
	} while (!(inb(0x61) & 0x20));
	cur = apic_read(APIC_TIMER_CUR);
	apic_write(APIC_TIMER_INIT, 0);
	*tsc_delta = t1 - t0;
	*lapic_delta = 0xffffffffu - cur;
	return true;
}

void timer_calibrate(void)
{
	u64 best_tsc = ~0ull, tsc;
	u32 best_lapic = 0, lapic;

	for (unsigned int i = 0; i < CAL_RUNS; i++) {
		if (!calibrate_once(&tsc, &lapic))
			panic("timer: no answer from the PIT (port 0x61 bit 5): cannot calibrate");
		if (tsc < best_tsc)
			best_tsc = tsc, best_lapic = lapic;
	}
	cycles_khz = best_tsc / CAL_MS;
	lapic_count_per_tick = (u32)((u64)best_lapic * 1000 / CAL_MS / TIMER_HZ);
	if (!cycles_khz || !lapic_count_per_tick)
		panic("timer: calibration measured nothing (TSC %llu, LAPIC %u)",
		      (unsigned long long)best_tsc, best_lapic);
	printk("timer: TSC %llu kHz, LAPIC timer %llu kHz (bus / 16), %u Hz tick on every CPU "
	       "(against the PIT, best of %u x %u ms)\n", (unsigned long long)cycles_khz,
	       (unsigned long long)best_lapic / CAL_MS, TIMER_HZ, CAL_RUNS, CAL_MS);
}

void timer_start_cpu(void)
{
	BUG_ON(!lapic_count_per_tick);
	apic_write(APIC_TIMER_DIV, APIC_DIV_16);
	apic_write(APIC_LVT_TIMER, APIC_TIMER_PERIODIC | VEC_TIMER);
	apic_write(APIC_TIMER_INIT, lapic_count_per_tick);
}

void timer_interrupt(void)
{
	timer_tick();
}
