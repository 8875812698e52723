/*
 * The lab's entry (kernel/lab.h): what the kernel hands over to once every CPU is online.
 * In order: the crash self-tests if `panic.test=` asks (they do not return), the KTAP tests
 * with the summary around them, the soak, the benchmarks, the monitor, then QEMU's exit.
 * Everything here uses the kernel through its headers (and mm/mm_test.h); none of it is in a
 * bare kernel (`make LAB=0`).
 */
#include "kernel/lab.h"
#include "kernel/arch.h"
#include "kernel/printk.h"
#include "kernel/lockdep.h"
#include "tests/ktest/ktest.h"
#include "tests/bench/bench.h"
#include "tests/lab/monitor.h"
#include "tests/lab/panic_test.h"
#include "tests/lab/soak.h"
#include "tests/lab/summary.h"

__noreturn void lab_main(void)
{
	struct run_summary summary;
	struct ktest_totals tests;
	unsigned int failed, ran;
	int soaked;

	panic_selftest();
	summary_begin(&summary);
	failed = ktest_run_all(&tests);
	failed += !failed && lockdep_report_count();	/* a report outside any case */
	summary_print(&summary, &tests, failed);
	soaked = soak_run();
	failed += soaked == 1;
	ran = bench_run_selected() + (soaked >= 0);
	if (monitor_enabled)
		monitor_run();	/* `shell`: a prompt on the serial port until `exit` */
	ktest_finish(failed, ran > 0);
	printk("smpmm: tests done, idling (ktest.noexit)\n");
	for (;;)
		arch_wait_for_interrupt();
}
