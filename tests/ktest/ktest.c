/*
 * ktest's kernel runner: selects cases with the `test=` filter, runs them one at a time on the
 * calling CPU under a trap recovery point and a watchdog, prints KTAP version 1, and exits
 * QEMU with a pass/fail status (ktest_finish). The portable core (checks, filter, case state,
 * random numbers) is tests/ktest/ktest_check.c, which the host runner (tests/host/harness.c)
 * links too; suites are in tests/kernel/ and tests/host/.
 *
 * Output, as `kunit.py parse` expects it (suites are subtests, indented two spaces):
 *
 *	KTAP version 1
 *	# ktest: seed=123 filter="*" (repeat with seed=123)
 *	1..2
 *	  KTAP version 1
 *	  # Subtest: boot
 *	  1..3
 *	    # boot_cpus_online_equals_smp: EXPECTATION FAILED at tests/kernel/boot_smp.c:29
 *	    # Expected nr_cpus_online() == expect_cpus, but nr_cpus_online() == 4 (0x4), ...
 *	  not ok 1 boot_cpus_online_equals_smp
 *	  ok 2 boot_apic_ids_unique
 *	  ok 3 boot_timer_ticks_on_every_cpu # SKIP the timer is not calibrated
 *	  # boot: 1 passed, 1 failed, 1 skipped in 25 ms
 *	not ok 1 boot
 *	...
 *	# ktest: 1 passed, 1 failed, 1 skipped
 *	EXIT: STATUS=35
 */
#include "tests/ktest/ktest.h"
#include "kernel/lockdep.h"
#include "kernel/panic.h"
#include "kernel/arch.h"
#include "kernel/cmdline.h"
#include "kernel/printk.h"
#include "kernel/smp.h"
#include "kernel/string.h"
#include "kernel/timer.h"
#include "kernel/trap.h"
#include <arch/console.h>
#include "mm/fail_page_alloc.h"

/* isa-debug-exit values: QEMU exits with (v << 1) | 1, so 33 = pass, 35 = fail. */
#define KTEST_EXIT_PASS 0x10
#define KTEST_EXIT_FAIL 0x11

extern const struct ktest_suite *const __start_ktest_suites[];
extern const struct ktest_suite *const __stop_ktest_suites[];

static char ktest_filter[256];
CMDLINE_STRING("test", ktest_filter,
	       "comma-separated globs of suite.case to run, '-glob' excludes (default: all)");
static u64 ktest_seed;
static bool ktest_seed_given;
static int set_seed(const char *val);
CMDLINE_FUNC("seed", set_seed, "random seed for the tests (default: the TSC; always printed)");
static bool ktest_noexit;
CMDLINE_BOOL("ktest.noexit", ktest_noexit, "stay up (idle) after the tests instead of exiting QEMU");
static unsigned int ktest_timeout_s = 120;
CMDLINE_UINT("ktest.timeout", ktest_timeout_s,
	     "seconds one case may run before the run stops as failed (0: no limit; default 120)");

static int set_seed(const char *val)
{
	if (!val || !cmdline_parse_u64(val, strlen(val), &ktest_seed))
		return -1;
	ktest_seed_given = true;
	return 0;
}

/* FNV-1a of "suite.case" mixed with the run seed: the case's seed, independent of order. */
static u64 case_seed(const char *suite, const char *tcase)
{
	u64 h = 0xcbf29ce484222325ull, s;

	for (const char *p = suite; *p; p++)
		h = (h ^ (u8)*p) * 0x100000001b3ull;
	h = (h ^ '.') * 0x100000001b3ull;
	for (const char *p = tcase; *p; p++)
		h = (h ^ (u8)*p) * 0x100000001b3ull;
	s = h ^ ktest_seed;
	return ktest_splitmix64(&s);
}

/* ---- running one case ------------------------------------------------------------------ */

/* The case itself, after the suite's init hook (which fails the case if it fails). */
static void ktest_exec_body(struct ktest *t, const struct ktest_suite *s,
			    const struct ktest_case *c)
{
	if (s && s->init && s->init(t))
		KT_FAIL(t, "suite init failed");
	else
		c->run(t);
}

/*
 * After the case: put this CPU's recovery chain back to what it was before (armed). An abort
 * (KT_ASSERT, KT_SKIP) leaves our own point trap on it, which is expected; a point the case
 * armed and never ended is a bug in the case, and said so.
 */
static void ktest_disarm(struct ktest *t, struct trap_recovery *trap, struct trap_recovery *armed)
{
	struct trap_recovery *now = this_cpu()->recovery;

	if (now == armed)
		return;
	if (now != trap)
		ktest_printf(t, "the case ended inside a trap_recover_begin() region: disarmed");
	WRITE_ONCE(this_cpu()->recovery, armed);
}

/*
 * Run c with two ways back here: KT_ASSERT and KT_SKIP jump to jmp (__builtin_longjmp, from
 * ktest_abort and ktest_skip), and a CPU exception inside the case is caught by a kernel/trap.h
 * recovery point armed around it, which ends the case as failed (nothing is printed from the
 * trap: the fault may have happened inside printk). The suite's exit hook runs either way.
 * Interrupts are put back as they were, since an exception entry disables them, and so is
 * this CPU's recovery chain (ktest_disarm).
 */
static void ktest_exec_recover(struct ktest *t, const struct ktest_suite *s,
			       const struct ktest_case *c)
{
	void *jmp[5];
	struct trap_recovery trap;
	struct trap_recovery *armed = this_cpu()->recovery;
	unsigned long flags = arch_irq_save();

	arch_irq_restore(flags);
	t->abort_ctx = jmp;
	if (__builtin_setjmp(jmp) == 0) {
		if (trap_recover_begin(&trap)) {
			ktest_exec_body(t, s, c);
			trap_recover_end(&trap);
		} else {
			t->trapped = true;
			t->trap_vector = trap.vector;
			t->trap_ip = trap.ip;
			t->status = KTEST_FAIL;
		}
	}
	arch_irq_disable();
	arch_irq_restore(flags);
	ktest_disarm(t, &trap, armed);
	if (t->trapped)
		ktest_printf(t, "EXCEPTION: vector %llu at ip 0x%llx ended the case",
			     (unsigned long long)t->trap_vector, (unsigned long long)t->trap_ip);
	if (s && s->exit)
		s->exit(t);
	t->abort_ctx = NULL;
}

/* Fail t for something the runner saw (its diagnostic line already printed). */
static void ktest_fail_case(struct ktest *t)
{
	t->status = KTEST_FAIL;
	t->nr_failed_checks++;
}

/*
 * ktest_exec_recover(), and verdicts on what the kernel reported meanwhile, wherever it came
 * from: a lock validator report (kernel/lockdep.h) no expect scope captured, and a "BUG: Bad
 * page state" or WARN_ON the case did not announce (kernel/panic.h's taints). Locks an abort
 * left behind are dropped from this CPU's held locks.
 */
static void ktest_exec(struct ktest *t, const struct ktest_suite *s, const struct ktest_case *c)
{
	unsigned long reports = lockdep_report_count();
	unsigned int held = lockdep_held_depth();
	struct ktest_taints taints;

	ktest_taints_begin(&taints);
	ktest_exec_recover(t, s, c);
	lockdep_truncate_held(held);
	if (lockdep_report_count() != reports) {
		ktest_printf(t, "lockdep reported a possible deadlock during this case (the "
			     "WARNING: lockdep report above)");
		ktest_fail_case(t);
	}
	ktest_taints_end(t, &taints);
}

void ktest_run_nested(struct ktest *t, const struct ktest_case *c, struct ktest *out)
{
	ktest_case_init(out, t->suite_name, c, t->depth + 1, case_seed(t->suite_name, c->name));
	ktest_printf(t, "nested case %s: start (its failures are checked, not counted)", c->name);
	ktest_exec(out, NULL, c);
	ktest_printf(t, "nested case %s: %s%s", c->name,
		     out->status == KTEST_PASS ? "pass" :
		     out->status == KTEST_SKIP ? "skip" : "fail",
		     out->trapped ? " (exception)" : "");
}

/* ---- the watchdog: a case that runs too long ends the run, named, as a failure ---------- */

/*
 * Which top-level case is running, for the watchdog. The deadline is in arch_cycles() units,
 * 0 when no case runs. Written by the test CPU, read by tick hooks on every CPU.
 */
static struct {
	u64 deadline;
	const char *suite, *tcase;
	unsigned int suite_number, case_number;
	bool fired;
} watch;

/*
 * A tick hook on every CPU: the first CPU to see the deadline passed finishes the KTAP for
 * the running case as "not ok ... # TIMEOUT" and exits QEMU as failed. Any CPU can notice,
 * so a case that hangs with interrupts off on its own CPU is still caught when there are
 * others. The console lock is bypassed: the hung CPU may hold it.
 */
static void ktest_watchdog(unsigned int cpu)
{
	u64 deadline = READ_ONCE(watch.deadline);

	if (!deadline || (s64)(arch_cycles() - deadline) < 0)
		return;
	if (__atomic_exchange_n(&watch.fired, true, __ATOMIC_ACQ_REL))
		return;
	printk_emergency();
	printk("\n    # %s: TIMEOUT: still running after %u s (ktest.timeout=), seen by cpu%u; "
	       "%llu ms since kernel entry (TSC %llu kHz, against the %s)\n", watch.tcase,
	       ktest_timeout_s, cpu,
	       (unsigned long long)(cycles_to_us(arch_cycles() - boot_tsc_start) / 1000),
	       (unsigned long long)cycles_khz, cycles_reference ? cycles_reference : "?");
	printk("  not ok %u %s # TIMEOUT\nnot ok %u %s\n", watch.case_number, watch.tcase,
	       watch.suite_number, watch.suite);
	printk("# ktest: stopped: %s.%s did not finish\n", watch.suite, watch.tcase);
	ktest_exit(false);
}

static void watch_case(const struct ktest *t, unsigned int suite_number, unsigned int n)
{
	if (!ktest_timeout_s || !cycles_khz)
		return;
	watch.suite = t->suite_name;
	watch.tcase = t->case_name;
	watch.suite_number = suite_number;
	watch.case_number = n;
	WRITE_ONCE(watch.deadline, arch_cycles() + cycles_khz * 1000 * ktest_timeout_s);
}

static void unwatch_case(void)
{
	WRITE_ONCE(watch.deadline, 0);
}

/* ---- suites and the KTAP stream ---------------------------------------------------------- */

static unsigned int selected_cases(const struct ktest_suite *s)
{
	unsigned int n = 0;

	for (size_t i = 0; i < s->nr_cases; i++)
		n += ktest_filter_match(ktest_filter, s->name, s->cases[i].name);
	return n;
}

static void print_result(unsigned int n, const struct ktest *t)
{
	if (t->status == KTEST_SKIP)
		printk("  ok %u %s # SKIP %s\n", n, t->case_name, t->skip_reason);
	else
		printk("  %s %u %s\n", t->status == KTEST_PASS ? "ok" : "not ok", n, t->case_name);
}

/* One suite as a KTAP subtest; returns true if none of its cases failed. */
/* A case slower than this gets a "took N ms" line, to point at what makes a run slow. */
#define KTEST_SLOW_CASE_MS 1000

/* One case of a suite: run, time, print its result line. */
static enum ktest_status run_case(const struct ktest_suite *s, const struct ktest_case *c,
				  unsigned int suite_number, unsigned int n)
{
	struct ktest t;
	u64 t0 = arch_cycles(), ms;

	ktest_case_init(&t, s->name, c, 0, case_seed(s->name, c->name));
	fail_page_alloc_reseed(s->name, c->name);
	if (c->nofail) {
		if (fail_page_alloc_enabled())
			ktest_printf(&t, "%s: fail_page_alloc paused: %s", c->name, c->nofail);
		fail_page_alloc_pause();
	}
	watch_case(&t, suite_number, n);
	ktest_exec(&t, s, c);
	unwatch_case();
	if (c->nofail)
		fail_page_alloc_resume();
	ms = cycles_to_us(arch_cycles() - t0) / 1000;
	if (ms >= KTEST_SLOW_CASE_MS)
		ktest_printf(&t, "%s: took %llu ms", c->name, (unsigned long long)ms);
	print_result(n, &t);
	return t.status;
}

/* One suite as a KTAP subtest, with a "# name: ... in N ms" line before its result. */
static bool run_suite(const struct ktest_suite *s, unsigned int number, struct ktest_totals *tot)
{
	unsigned int n = 0, count[3] = { 0, 0, 0 };	/* by enum ktest_status */
	u64 t0 = arch_cycles();

	printk("  KTAP version 1\n  # Subtest: %s\n  1..%u\n", s->name, selected_cases(s));
	for (size_t i = 0; i < s->nr_cases; i++)
		if (ktest_filter_match(ktest_filter, s->name, s->cases[i].name))
			count[run_case(s, &s->cases[i], number, ++n)]++;
	tot->passed += count[KTEST_PASS];
	tot->failed += count[KTEST_FAIL];
	tot->skipped += count[KTEST_SKIP];
	printk("  # %s: %u passed, %u failed, %u skipped in %llu ms\n", s->name, count[KTEST_PASS],
	       count[KTEST_FAIL], count[KTEST_SKIP],
	       (unsigned long long)cycles_to_us(arch_cycles() - t0) / 1000);
	printk("%s %u %s\n", count[KTEST_FAIL] ? "not ok" : "ok", number, s->name);
	return count[KTEST_FAIL] == 0;
}

/*
 * The kernel's idea of time since kmain, at the start and the end of the tests. The runner
 * compares the difference with its own wall clock: a mis-calibrated TSC (a busy host can
 * skew calibration) makes every timeout and delay in the kernel wrong, and this shows it.
 */
static void ktest_print_clock(void)
{
	if (cycles_khz)
		printk("# ktest: clock: %llu ms since kernel entry (TSC %llu kHz, against the %s)\n",
		       (unsigned long long)(cycles_to_us(arch_cycles() - boot_tsc_start) / 1000),
		       (unsigned long long)cycles_khz, cycles_reference ? cycles_reference : "?");
}

static unsigned int selected_suites(void)
{
	unsigned int n = 0;

	for (const struct ktest_suite *const *s = __start_ktest_suites; s < __stop_ktest_suites; s++)
		n += selected_cases(*s) > 0;
	return n;
}

__noreturn void ktest_exit(bool pass)
{
	u8 code = pass ? KTEST_EXIT_PASS : KTEST_EXIT_FAIL;

	printk("EXIT: STATUS=%d\n", (code << 1) | 1);
	arch_exit_qemu(code);
}

static unsigned int ktest_last_run_selected;

/*
 * The filter selects nothing: for its first glob whose suite part (before the dot) is a plain
 * word naming no suite, the nearest suite name (a typo such as bot.* for boot.*), then for a
 * plain case name in a suite that exists, the nearest case. Prints "; did you mean X?" or
 * nothing.
 */
static size_t upto(const char *p, const char *stops)
{
	size_t n = 0;

	while (p[n] && !strchr(stops, p[n]))
		n++;
	return n;
}

static void print_filter_suggestion(void)
{
	for (const char *p = ktest_filter; *p && strcmp(ktest_filter, "none"); ) {
		size_t len = upto(p, ","), slen = upto(p, ".,");
		const struct ktest_suite *suite = NULL;
		struct cmdline_suggest sug;

		if (*p == '-' || upto(p, "*?") < slen) {
			p += len + (p[len] == ',');
			continue;
		}
		cmdline_suggest_init(&sug, p, slen);
		for (const struct ktest_suite *const *s = __start_ktest_suites;
		     s < __stop_ktest_suites; s++) {
			if (strlen((*s)->name) == slen && !strncmp((*s)->name, p, slen))
				suite = *s;
			cmdline_suggest_try(&sug, (*s)->name);
		}
		if (!suite && sug.best) {	/* the nearest suite, then the glob's rest */
			char rest[64] = "";

			memcpy(rest, p + slen, MIN(len - slen, sizeof(rest) - 1));
			printk("# ktest: did you mean %s%s?\n", sug.best, rest);
			return;
		}
		if (suite && slen < len && upto(p + slen + 1, "*?,") == len - slen - 1) {
			cmdline_suggest_init(&sug, p + slen + 1, len - slen - 1);
			for (size_t i = 0; i < suite->nr_cases; i++)
				cmdline_suggest_try(&sug, suite->cases[i].name);
			if (sug.best) {
				printk("# ktest: did you mean %s.%s?\n", suite->name, sug.best);
				return;
			}
		}
		p += len + (p[len] == ',');
	}
}

const char *ktest_filter_text(void)
{
	return ktest_filter[0] ? ktest_filter : "*";
}

unsigned int ktest_run_all(struct ktest_totals *out)
{
	struct ktest_totals tot = { 0, 0, 0 };
	unsigned int nr_suites = selected_suites(), number = 0;

	if (!ktest_seed_given)
		ktest_seed = arch_cycles();
	printk("KTAP version 1\n# ktest: seed=%llu filter=\"%s\" (repeat with seed=%llu)\n",
	       (unsigned long long)ktest_seed, ktest_filter_text(),
	       (unsigned long long)ktest_seed);
	ktest_print_clock();
	printk("1..%u\n", nr_suites);
	if (ktest_timeout_s && cycles_khz && timer_add_tick_hook(ktest_watchdog))
		printk("# ktest: no free tick hook: no per-case timeout\n");
	for (const struct ktest_suite *const *s = __start_ktest_suites; s < __stop_ktest_suites; s++)
		if (selected_cases(*s))
			run_suite(*s, ++number, &tot);
	if (!nr_suites) {
		printk("# ktest: the filter \"%s\" selects no test\n", ktest_filter);
		print_filter_suggestion();
	}
	printk("# ktest: %u passed, %u failed, %u skipped\n", tot.passed, tot.failed, tot.skipped);
	ktest_print_clock();
	ktest_last_run_selected = nr_suites;
	if (out)
		*out = tot;
	return tot.failed;
}

void ktest_finish(unsigned int failed, bool other_work_ran)
{
	if (!ktest_noexit)
		ktest_exit(failed == 0 && (ktest_last_run_selected > 0 || other_work_ran));
}
