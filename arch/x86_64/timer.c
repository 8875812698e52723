/*
 * Tick source and clock calibration: the TSC and the LAPIC timer are measured against a
 * reference counter of known frequency (the HPET, else the ACPI PM timer, else the 8254 PIT),
 * checked against a second one; then every CPU runs its LAPIC timer periodically at timer_hz.
 * The first measuring window is opened before mm_init() and closed just before the APs start,
 * so the boot CPU's other work fills most of it. The generic side is kernel/timer.c.
 */
#include "kernel/smp.h"
#include "kernel/timer.h"
#include "kernel/acpi.h"
#include "kernel/bootinfo.h"
#include "kernel/cmdline.h"
#include "kernel/panic.h"
#include "kernel/printk.h"
#include "kernel/string.h"
#include "cpu.h"
#include "io.h"

#define PIT_HZ 1193182u
#define PM_TIMER_HZ 3579545u
#define HPET_CAP 0x000		/* bits 63:32: counter period in femtoseconds */
#define HPET_CAP_REV_ID 0xffu	/* bits 7:0: the implementation's revision, never 0 */
#define HPET_CONFIG 0x010	/* bit 0: ENABLE_CNF, the main counter runs */
#define HPET_CONFIG_ENABLE 1u
#define HPET_MMIO_LEN 1024	/* the register block, aligned to its size */
#define HPET_COUNTER 0x0f0	/* main counter, low 32 bits */
#define HPET_MAX_PERIOD_FS 100000000u	/* 100 ns: the spec's slowest HPET */
#define HPET_MIN_PERIOD_FS 1000000u	/* 1 ns: keeps the rate below 2^32 Hz (mul_div) */
#define APIC_DIV_16 0x3u

#define WINDOW_MS 20u		/* first window length; doubled while the bound is too wide */
#define SHORT_MS 2u		/* the window that vouches for a long first one */
#define WINDOW_MAX_MS 320u	/* longest window (the PIT's is its 55 ms countdown) */
#define GOAL_PPM 100u		/* a window is good when its error bound is this or better */
#define SAMPLE_TRIES 8u		/* bracketed reads per sample: the tightest is kept */
#define ATTEMPTS 4u		/* windows, while each was void or its bound too wide */
#define CHECK_PPM 1000u		/* two references agree within this plus both bounds */
#define MOVE_TRIES 100000u	/* reads a counter gets to show it runs at all */

static u32 lapic_count_per_tick;	/* LAPIC timer initial count (divide by 16) for 1/HZ s */
static bool verbose;
static char ref_name[16];
CMDLINE_BOOL("timer.verbose", verbose, "print every calibration window and its TSC brackets");
CMDLINE_STRING("timer.ref", ref_name, "calibrate against hpet, pmtimer or pit (default: "
	       "the first present of these, checked against the next)");
static unsigned int test_wrap;
CMDLINE_UINT("timer.test_wrap", test_wrap, "fault injection: the first window lasts 1.5 "
	     "wraps of an N-bit counter (N = 12..30) and sees only N bits of the reference; "
	     "the boot panics if that is not caught");

/*
 * A reference: a counter of known frequency read in one short access. read() returns false
 * when this read cannot be used (the PIT counted past the end of its countdown).
 */
struct refclock {
	const char *name, *key;
	u64 hz;
	u32 mask;		/* counter width: it wraps at mask + 1 */
	u32 max_counts;		/* a window must stay shorter than this */
	bool (*read)(u32 *count);
	bool present;
};

static volatile u32 *hpet_regs;
static u16 pm_timer_port;

static bool hpet_read(u32 *count)
{
	*count = hpet_regs[HPET_COUNTER / 4];
	return true;
}

static bool pm_timer_read(u32 *count)
{
	*count = inl(pm_timer_port);
	return true;
}

/*
 * PIT channel 2 counts down from 0xffff once (mode 0); its OUT pin, port 0x61 bit 5, rises at
 * the end and stays up, so a count read while OUT is still low is from this countdown.
 */
static bool pit_read(u32 *count)
{
	u32 lo, hi;

	outb(0x43, 0x80);	/* latch channel 2 */
	lo = inb(0x42);
	hi = inb(0x42);
	*count = 0xffff - (lo | hi << 8);
	return !(inb(0x61) & 0x20);
}

static void pit_start(void)
{
	outb(0x61, (inb(0x61) & ~0x02) | 0x01);	/* gate on, speaker off */
	outb(0x43, 0xb0);			/* channel 2, low then high byte, mode 0 */
	outb(0x42, 0xff);
	outb(0x42, 0xff);
}

enum { REF_HPET, REF_PM_TIMER, REF_PIT, NR_REFS };

static struct refclock refs[NR_REFS] = {
	[REF_HPET] = { .name = "HPET", .key = "hpet", .mask = 0xffffffffu, .read = hpet_read },
	[REF_PM_TIMER] = { .name = "ACPI PM timer", .key = "pmtimer", .hz = PM_TIMER_HZ,
			   .read = pm_timer_read },
	[REF_PIT] = { .name = "PIT", .key = "pit", .hz = PIT_HZ, .mask = 0xffff,
		      .max_counts = 0xffff - PIT_HZ / 1000, .read = pit_read },
};

/* Does the counter move within MOVE_TRIES reads? (A missing device reads as a constant.) */
static bool counter_moves(struct refclock *rc)
{
	u32 first, now;

	if (rc == &refs[REF_PIT])
		pit_start();
	rc->read(&first);
	for (unsigned int i = 0; i < MOVE_TRIES; i++) {
		rc->read(&now);
		if ((now ^ first) & rc->mask)
			return true;
	}
	return false;
}

/*
 * The HPET the table points at, if there is one there: nothing is written at the address
 * before it is known to be an HPET, as in Linux's hpet_enable(). The address must be a
 * device's (boot_mmio_problem(): not usable RAM, below the 4 GiB the direct map covers),
 * the configuration register must not read as all ones (nothing decodes there), the
 * capabilities must give a revision (the spec's REV_ID is never 0) and a period within the
 * spec's. Only then is the main counter enabled, if firmware left it off; if it does not
 * count, the configuration goes back as it was.
 */
static void hpet_probe(u64 phys)
{
	const char *why = phys ? boot_mmio_problem(&boot_info, phys, HPET_MMIO_LEN, 4ull << 30) : "";
	u32 cap, period, config;

	if (why) {
		if (phys)
			pr_warn("timer: the HPET table's address 0x%llx is %s: no HPET\n",
				(unsigned long long)phys, why);
		return;
	}
	hpet_regs = arch_phys_to_virt(phys);
	config = hpet_regs[HPET_CONFIG / 4];
	cap = hpet_regs[HPET_CAP / 4];
	period = hpet_regs[HPET_CAP / 4 + 1];
	if (config == ~0u || !(cap & HPET_CAP_REV_ID) || period < HPET_MIN_PERIOD_FS ||
	    period > HPET_MAX_PERIOD_FS) {
		pr_warn("timer: no HPET at 0x%llx (the HPET table's address): configuration 0x%x, "
			"revision %u, period %u fs\n", (unsigned long long)phys, config,
			cap & HPET_CAP_REV_ID, period);
		return;
	}
	refs[REF_HPET].hz = 1000000000000000ull / period;
	refs[REF_HPET].max_counts = (u32)MIN(refs[REF_HPET].hz * 2, 0xffffffffull);
	hpet_regs[HPET_CONFIG / 4] = config | HPET_CONFIG_ENABLE;
	refs[REF_HPET].present = counter_moves(&refs[REF_HPET]);
	if (!refs[REF_HPET].present)
		hpet_regs[HPET_CONFIG / 4] = config;
}

static void find_refs(const struct acpi_clocks *clocks)
{
	hpet_probe(clocks->hpet_phys);
	if (clocks->pm_timer_port) {
		pm_timer_port = clocks->pm_timer_port;
		refs[REF_PM_TIMER].mask = clocks->pm_timer_32bit ? 0xffffffffu : 0xffffffu;
		refs[REF_PM_TIMER].max_counts = PM_TIMER_HZ * 2;
		refs[REF_PM_TIMER].present = counter_moves(&refs[REF_PM_TIMER]);
	}
	refs[REF_PIT].present = counter_moves(&refs[REF_PIT]);
}

/* ---- one window: the TSC and the LAPIC timer over a stretch of reference time --------- */

struct sample {
	u64 tsc;	/* TSC halfway through the bracket that read the reference */
	u64 err;	/* half that bracket, rounded up: the read happened within tsc +- err */
	u32 count;	/* the reference counter */
	u32 lapic;	/* the LAPIC timer's current count, read inside the same bracket */
};

/*
 * Read the reference between two TSC reads, SAMPLE_TRIES times, and keep the tightest bracket.
 * Under TCG every clock here is the host's, read when the instruction runs, so the vCPU thread
 * being descheduled (or waiting for QEMU's big lock) between the two TSC reads only widens the
 * bracket: the bound stays true, and one quick try out of the lot makes it tight.
 */
static bool take_sample(const struct refclock *rc, struct sample *s)
{
	s->err = ~0ull;
	for (unsigned int i = 0; i < SAMPLE_TRIES; i++) {
		u64 t0 = arch_cycles(), t1;
		u32 count, lapic;

		if (!rc->read(&count))
			return false;
		lapic = apic_read(APIC_TIMER_CUR);
		t1 = arch_cycles();
		if ((t1 - t0 + 1) / 2 < s->err)
			*s = (struct sample){ t0 + (t1 - t0) / 2, (t1 - t0 + 1) / 2, count, lapic };
	}
	return true;
}

struct rate {
	u64 tsc_khz;
	u64 lapic_hz;
	u64 ppm;		/* bound on the TSC rate's error: both brackets and one count */
	u64 window_us;
	bool valid;
};

/* a * b / c without overflow for b < 2^32 and c <= 2^32 (a * b alone may not fit). */
static u64 mul_div(u64 a, u64 b, u64 c)
{
	return a / c * b + a % c * b / c;
}

static struct rate rate_between(const struct refclock *rc, const struct sample *a,
				const struct sample *b)
{
	u64 counts = (b->count - a->count) & rc->mask, cycles = b->tsc - a->tsc;

	if (!counts || !cycles || counts > rc->max_counts || !b->lapic)	/* LAPIC ran out */
		return (struct rate){ .valid = false };
	return (struct rate){
		.tsc_khz = (mul_div(cycles, rc->hz, counts) + 500) / 1000,
		.lapic_hz = mul_div(a->lapic - b->lapic, rc->hz, counts),
		.ppm = (a->err + b->err) * 1000000 / cycles + 1000000 / counts + 1,
		.window_us = mul_div(counts, 1000000, rc->hz),
		.valid = true,
	};
}

static void print_window(const struct refclock *rc, const struct sample *a,
			 const struct sample *b, const struct rate *r)
{
	if (!verbose)
		return;
	printk("timer: %5llu us of %s: TSC brackets %llu + %llu cycles, %llu kHz +-%llu ppm, "
	       "LAPIC %llu Hz\n", (unsigned long long)r->window_us, rc->name,
	       (unsigned long long)a->err * 2, (unsigned long long)b->err * 2,
	       (unsigned long long)r->tsc_khz, (unsigned long long)r->ppm,
	       (unsigned long long)r->lapic_hz);
}

#define GIVE_UP_CYCLES (1ull << 33)	/* ~1-8 s at any TSC rate: the counter stopped */

/* Poll rc until target counts have passed since s; false if a read was void or it stalled. */
static bool wait_counts(const struct refclock *rc, const struct sample *s, u64 target)
{
	u32 now;

	do {
		if (!rc->read(&now) || arch_cycles() - s->tsc > GIVE_UP_CYCLES)
			return false;
	} while (((now - s->count) & rc->mask) < target);
	return true;
}

static void lapic_free_run(u32 initial)
{
	apic_write(APIC_TIMER_DIV, APIC_DIV_16);
	apic_write(APIC_LVT_TIMER, APIC_LVT_MASKED);
	apic_write(APIC_TIMER_INIT, initial);
}

/*
 * A window: rc (and ck, if any) sampled at its start, with the LAPIC timer counting down
 * freely from there. Only its end points matter, not what happens in between: the boot CPU
 * opens the first one before mm_init() and closes it just before the APs start, so the
 * calibration mostly overlaps work that had to be done anyway (timer_calibrate_begin()).
 */
struct window {
	const struct refclock *rc, *ck;
	struct sample s0, c0;
	bool ok, ck_ok;		/* the start samples are good */
};

static void window_open(struct window *w, const struct refclock *rc, const struct refclock *ck)
{
	w->rc = rc;
	w->ck = ck;
	lapic_free_run(0xffffffffu);
	if (rc == &refs[REF_PIT] || ck == &refs[REF_PIT])
		pit_start();
	w->ok = take_sample(rc, &w->s0);
	w->ck_ok = w->ok && ck && take_sample(ck, &w->c0);
}

/*
 * Close w: sample rc (and ck) once ms of rc's time have passed since the start (at once if
 * they have). While the error bound is wider than goal_ppm, the end is sampled again after
 * twice as long: the same end-point error over a longer window. Stops at WINDOW_MAX_MS or
 * rc->max_counts. Returns rc's tightest rate, and in *check ck's over the same stretch
 * (invalid if none).
 */
static struct rate window_close(struct window *w, unsigned int ms, u64 goal_ppm,
				struct rate *check)
{
	const struct refclock *rc = w->rc;
	u64 target = rc->hz * ms / 1000;
	u64 limit = MIN(rc->hz * WINDOW_MAX_MS / 1000, (u64)rc->max_counts);
	struct rate best = { .valid = false };
	struct sample s1, c1;

	*check = best;
	for (; w->ok && target <= limit; target *= 2) {
		struct rate r;
		bool ck_end;

		if (!wait_counts(rc, &w->s0, target))
			break;
		ck_end = w->ck_ok && take_sample(w->ck, &c1);
		if (!take_sample(rc, &s1))
			break;
		r = rate_between(rc, &w->s0, &s1);
		print_window(rc, &w->s0, &s1, &r);
		if (r.valid && (!best.valid || r.ppm < best.ppm)) {
			best = r;
			check->valid = false;
			if (ck_end)
				*check = rate_between(w->ck, &w->c0, &c1);
		}
		if (best.valid && best.ppm <= goal_ppm)
			break;
	}
	lapic_free_run(0);
	return best;
}

static struct rate measure(const struct refclock *rc, const struct refclock *ck,
			   struct rate *check)
{
	struct window w;

	window_open(&w, rc, ck);
	return window_close(&w, WINDOW_MS, GOAL_PPM, check);
}

/* ---- choosing the references, and the result ------------------------------------------ */

/* timer.ref= if it names a present clock, else the first present; the check: the next one. */
static void pick_refs(const struct refclock **rc, const struct refclock **ck)
{
	*rc = *ck = NULL;
	for (unsigned int i = 0; i < NR_REFS && ref_name[0]; i++)
		if (refs[i].present && !strcmp(ref_name, refs[i].key))
			*rc = &refs[i];
	if (ref_name[0] && !*rc)
		pr_warn("timer: timer.ref=%s: no such clock here (hpet, pmtimer, pit): default\n",
			ref_name);
	for (unsigned int i = 0; i < NR_REFS; i++) {
		if (!refs[i].present || &refs[i] == *rc)
			continue;
		if (!*rc)
			*rc = &refs[i];
		else if (!*ck)
			*ck = &refs[i];
	}
	if (!*rc)
		panic("timer: no reference clock: no HPET or PM timer in ACPI, and the PIT "
		      "(channel 2) does not count: cannot calibrate");
}

/* Best of up to ATTEMPTS windows against rc; *check: ck's over the same window. */
static struct rate calibrate_against(const struct refclock *rc, const struct refclock *ck,
				     struct rate *check)
{
	struct rate r = { .valid = false };

	*check = r;
	for (unsigned int i = 0; i < ATTEMPTS && !(r.valid && r.ppm <= GOAL_PPM); i++) {
		struct rate c, x = measure(rc, ck, &c);

		if (x.valid && (!r.valid || x.ppm < r.ppm))
			r = x, *check = c;
	}
	return r;
}

/* How far apart two rates are, in ppm of the first. */
static u64 hz_apart(u64 a, u64 b)
{
	return (a > b ? a - b : b - a) * 1000000 / a;
}

/* How far apart two TSC rates are, in ppm of the first's. */
static u64 ppm_apart(const struct rate *a, const struct rate *b)
{
	return hz_apart(a->tsc_khz, b->tsc_khz);
}

/* Two clocks agree if their rates are within CHECK_PPM of each other plus both bounds. */
static bool rates_agree(const struct rate *a, const struct rate *b)
{
	return a->valid && b->valid && ppm_apart(a, b) <= CHECK_PPM + a->ppm + b->ppm;
}

/*
 * rc and ck disagree: one of them is wrong (a bad HPET period, a PM timer narrower than the
 * FADT says). A third clock, if there is one, decides; without one rc is kept. The loser
 * ends up in *ck, so the check line names it.
 */
static void referee(const struct refclock **rc, const struct refclock **ck, struct rate *r,
		    struct rate *check)
{
	const struct refclock *third = NULL, *tmp;
	struct rate t, unused, x;
	bool swap;

	for (unsigned int i = 0; i < NR_REFS && !third; i++)
		if (refs[i].present && &refs[i] != *rc && &refs[i] != *ck)
			third = &refs[i];
	if (!third)
		return;
	t = calibrate_against(third, NULL, &unused);
	swap = rates_agree(&t, check) && !rates_agree(&t, r);
	pr_warn("timer: the %s and the %s disagree; the %s gives TSC %llu kHz, siding with "
		"the %s\n", (*rc)->name, (*ck)->name, third->name,
		(unsigned long long)t.tsc_khz, swap ? (*ck)->name : (*rc)->name);
	if (swap) {
		x = *r, *r = *check, *check = x;
		tmp = *rc, *rc = *ck, *ck = tmp;
	}
}

static void report_check(const struct refclock *rc, const struct refclock *ck,
			 const struct rate *r, const struct rate *check)
{
	if (!ck)
		printk("timer: no second clock to check the %s against\n", rc->name);
	else if (!check->valid)
		pr_warn("timer: the %s could not check the result (its window was void)\n",
			ck->name);
	else if (rates_agree(r, check))
		printk("timer: checked against the %s (by it the TSC runs at %llu kHz +-%llu ppm): "
		       "%llu ppm apart\n", ck->name, (unsigned long long)check->tsc_khz,
		       (unsigned long long)check->ppm, (unsigned long long)ppm_apart(r, check));
	else
		pr_warn("timer: the %s DISAGREES: TSC %llu kHz by it, %llu ppm apart (more than "
			"%llu): one of the two clocks is wrong; using the %s\n", ck->name,
			(unsigned long long)check->tsc_khz,
			(unsigned long long)ppm_apart(r, check),
			(unsigned long long)(CHECK_PPM + r->ppm + check->ppm), rc->name);
}

/* The first window: opened by timer_calibrate_begin(), closed by timer_calibrate(). */
static struct window first;

void timer_calibrate_begin(const struct acpi_clocks *clocks)
{
	const struct refclock *rc, *ck;

	find_refs(clocks);
	pick_refs(&rc, &ck);
	window_open(&first, rc, ck);
}

/*
 * The first window may be long: mm_init() of a big machine takes seconds, longer than the
 * reference counter takes to wrap (4.7 s for a 24-bit PM timer, 43 s for the HPET's low 32
 * bits at 100 MHz), which does not show in its end points. It holds if the check clock, which
 * wraps at another period, agrees with it; else if a short window taken now agrees with its
 * rates (within CHECK_PPM and the two bounds), and then the short window's check stands in
 * for its own.
 */
static bool first_window_holds(struct rate *r, struct rate *check)
{
	const struct refclock *ck = first.ck;
	struct rate s, short_check;
	struct window w;

	if (ck && check->valid && rates_agree(r, check))
		return true;
	window_open(&w, first.rc, ck);
	s = window_close(&w, SHORT_MS, CHECK_PPM, &short_check);
	if (!rates_agree(r, &s) || hz_apart(s.lapic_hz, r->lapic_hz) > CHECK_PPM + r->ppm + s.ppm)
		return false;
	*check = short_check;
	return true;
}

/*
 * timer.test_wrap=N: make the first window wrap, as a long mm_init() would with a narrow
 * counter: wait 1.5 wraps of an N-bit counter, then let the window see only N bits of the
 * reference. Returns the mask to put back.
 */
static u32 test_wrap_begin(void)
{
	struct refclock *rc = &refs[first.rc - refs];
	u32 mask = rc->mask;

	if (!test_wrap || !first.ok)
		return mask;
	test_wrap = CLAMP(test_wrap, 12u, 30u);
	wait_counts(rc, &first.s0, 3ull << (test_wrap - 1));
	rc->mask = (1u << test_wrap) - 1;
	return mask;
}

/* Close the first window (waiting for the rest of WINDOW_MS if it is younger); fresh windows
 * if it does not hold or its bound is too wide. */
static struct rate finish_first_window(struct rate *check, unsigned int *fresh)
{
	u32 mask = test_wrap_begin();
	struct rate c, x, r = window_close(&first, WINDOW_MS, GOAL_PPM, check);

	refs[first.rc - refs].mask = mask;
	*fresh = 0;
	if (r.valid && !first_window_holds(&r, check)) {
		pr_warn("timer: a short window does not confirm the %llu ms one opened before "
			"mm_init() (a reference counter wrapped?): measuring again\n",
			(unsigned long long)r.window_us / 1000);
		r.valid = false;
	}
	if (r.valid && r.ppm <= GOAL_PPM)
		return r;
	*fresh = 1;
	x = calibrate_against(first.rc, first.ck, &c);
	if (x.valid && (!r.valid || x.ppm < r.ppm))
		r = x, *check = c;
	return r;
}

void timer_calibrate(void)
{
	const struct refclock *rc = first.rc, *ck = first.ck;
	u64 t0 = arch_cycles();
	unsigned int fresh;
	struct rate check, r = finish_first_window(&check, &fresh);

	if (test_wrap && !fresh)
		panic("timer.test_wrap=%u: the first window wrapped and was kept (TSC %llu kHz)",
		      test_wrap, (unsigned long long)r.tsc_khz);

	if (ck && check.valid && r.valid && !rates_agree(&r, &check))
		referee(&rc, &ck, &r, &check);
	timer_hz = CLAMP(timer_hz, 1u, 1000u);
	if (!r.valid || !r.tsc_khz || r.lapic_hz < timer_hz)
		panic("timer: calibration against the %s measured nothing (TSC %llu kHz, LAPIC "
		      "%llu Hz)", rc->name, (unsigned long long)r.tsc_khz,
		      (unsigned long long)r.lapic_hz);
	cycles_khz = r.tsc_khz;
	cycles_reference = rc->name;
	lapic_count_per_tick = (u32)(r.lapic_hz / timer_hz);
	printk("timer: TSC %llu kHz +-%llu ppm, LAPIC timer %llu kHz (bus / 16), %u Hz tick on "
	       "every CPU; against the %s (%llu kHz) over %llu ms%s, %llu ms of it waited for "
	       "here\n", (unsigned long long)cycles_khz, (unsigned long long)r.ppm,
	       (unsigned long long)(r.lapic_hz + 500) / 1000, timer_hz, rc->name,
	       (unsigned long long)rc->hz / 1000, (unsigned long long)r.window_us / 1000,
	       fresh ? " (windows after the first)" : " from before mm_init()",
	       (unsigned long long)cycles_to_us(arch_cycles() - t0) / 1000);
	if (r.ppm > GOAL_PPM)
		pr_warn("timer: the TSC rate is only known to +-%llu ppm (aimed at %u): every "
			"reference read was slow (a busy host)\n", (unsigned long long)r.ppm,
			GOAL_PPM);
	report_check(rc, ck, &r, &check);
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
