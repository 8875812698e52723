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
#define CAL_RUNS 11u			/* odd, for the median (see timer_calibrate) */
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
 * wait for the PIT output to rise; read both. Returns false if the PIT never answered.
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

/* Sort a few values in place (insertion sort) and return the middle one. */
static u64 median(u64 *v, unsigned int n)
{
	for (unsigned int i = 1; i < n; i++)
		for (unsigned int j = i; j > 0 && v[j - 1] > v[j]; j--) {
			u64 tmp = v[j];

			v[j] = v[j - 1];
			v[j - 1] = tmp;
		}
	return v[n / 2];
}

/*
 * Under TCG on a loaded host a window is disturbed in two ways. The vCPU thread can be
 * descheduled between starting a clock and reading it: that only lengthens a window. And
 * the guest TSC is the host TSC of whichever host core the thread is on, which QEMU keeps
 * from going backwards when the thread moves to a core whose TSC lags: that shortens a
 * window. The LAPIC timer and the PIT both run on QEMU's virtual clock, so the LAPIC rate
 * is only ever overestimated: keep its smallest value. The TSC can be wrong either way:
 * keep its median, which ignores up to CAL_RUNS / 2 disturbed windows.
 */
void timer_calibrate(void)
{
	u64 tsc[CAL_RUNS], tsc_mid, lapic_min = ~0ull;
	u32 lapic;

	for (unsigned int i = 0; i < CAL_RUNS; i++) {
		if (!calibrate_once(&tsc[i], &lapic))
			panic("timer: no answer from the PIT (port 0x61 bit 5): cannot calibrate");
		lapic_min = MIN(lapic_min, (u64)lapic);
	}
	tsc_mid = median(tsc, CAL_RUNS);
	cycles_khz = tsc_mid / CAL_MS;
	lapic_count_per_tick = (u32)(lapic_min * 1000 / CAL_MS / TIMER_HZ);
	if (!cycles_khz || !lapic_count_per_tick)
		panic("timer: calibration measured nothing (TSC %llu, LAPIC %llu)",
		      (unsigned long long)tsc_mid, (unsigned long long)lapic_min);
	printk("timer: TSC %llu kHz (median), LAPIC timer %llu kHz (bus / 16, minimum), %u Hz "
	       "tick on every CPU; against the PIT, %u x %u ms\n", (unsigned long long)cycles_khz,
	       (unsigned long long)lapic_min / CAL_MS, TIMER_HZ, CAL_RUNS, CAL_MS);
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
