/*
 * `bench=gup`: the gup_test benchmark (Linux's tools/testing/selftests/mm/gup_test.c; its core
 * is tests/lab/gup_test.c) on all CPUs at once, in both has-pinned modes (`gup.has_pinned=`,
 * mm/gup.c), printing the selftest's per-thread lines and the mean with relative stddev, as
 * in the message of Linux 292648ac5cf1 ("mm: gup: allow FOLL_PIN to scale in SMP"):
 * "Old kernel: 477729.97 (+- 3.79%)".
 */
#include "tests/bench/bench.h"
#include "tests/bench/c2c.h"
#include "kernel/cmdline.h"
#include "kernel/printk.h"
#include "kernel/smp.h"
#include "kernel/timer.h"
#include "kernel/string.h"
#include "mm/mm.h"
#include "tests/lab/gup_test.h"

#define GUP_BENCH_BASE (1ull << 32)	/* where the test range is mapped */
#define GUP_BENCH_MAX_REPEATS 16

static char gup_cmd[4] = "a";
static unsigned int gup_size_mb = 128, gup_threads, gup_nr = 1, gup_repeats = 1;
static char gup_modes[8] = "both";
CMDLINE_STRING("gup.cmd", gup_cmd, "gup bench: a = pin-fast, u = get-fast, L = pin-longterm");
CMDLINE_UINT("gup.size_mb", gup_size_mb, "gup bench: size of the range in MiB (-m)");
CMDLINE_UINT("gup.threads", gup_threads, "gup bench: CPUs pinning the same range (-j), 0 = all");
CMDLINE_UINT("gup.nr", gup_nr, "gup bench: pages per call (-n), 0 = the whole range");
CMDLINE_UINT("gup.repeats", gup_repeats, "gup bench: repeats per thread (-r)");
CMDLINE_STRING("gup.modes", gup_modes, "gup bench: both, or only the current gup.has_pinned mode");

struct gup_bench_run {
	struct mm_struct *mm;
	enum gup_test_cmd cmd;
	unsigned int threads, repeats;
	struct page ***pages;		/* [nr_cpu_ids]: each thread's pages[] array */
	unsigned int pages_order;
	u64 *get_us, *put_us;		/* [threads * repeats], thread-major */
	u64 verify_failures, truncated;
};

static struct gup_bench_run gup_run;

static void gup_bench_cpu(void *arg)
{
	struct gup_bench_run *run = arg;
	unsigned int cpu = arch_cpu_id();

	if (cpu >= run->threads) {
		c2c_cpu_begin();	/* in the window, with nothing to do */
		c2c_cpu_end();
		return;
	}
	for (unsigned int r = 0; r < run->repeats; r++) {
		struct gup_test gt = {
			.cmd = run->cmd, .addr = GUP_BENCH_BASE, .size = (u64)gup_size_mb << 20,
			.nr_pages_per_call = gup_nr, .gup_flags = FOLL_WRITE, .pages = run->pages[cpu],
		};
		gup_test_run(run->mm, &gt);
		run->get_us[cpu * run->repeats + r] = cycles_to_us(gt.get_cycles);
		run->put_us[cpu * run->repeats + r] = cycles_to_us(gt.put_cycles);
		__atomic_fetch_add(&run->verify_failures, gt.verify_failures, __ATOMIC_RELAXED);
		if (gt.size != (u64)gup_size_mb << 20)
			__atomic_fetch_add(&run->truncated, 1, __ATOMIC_RELAXED);
	}
}

/* Per-CPU arrays for the CPUs there are: thread pages[] pointers, then get and put times. */
#define GUP_RUN_CPU_BYTES (sizeof(struct page **) + 2 * GUP_BENCH_MAX_REPEATS * sizeof(u64))

static int gup_bench_setup(struct gup_bench_run *run)
{
	unsigned long nr_pages = ((u64)gup_size_mb << 20) >> PAGE_SHIFT;
	void *arrays = cpu_array_alloc(GUP_RUN_CPU_BYTES);

	if (!arrays)
		return -1;
	run->pages = arrays;
	run->get_us = (u64 *)(run->pages + nr_cpu_ids);
	run->put_us = run->get_us + nr_cpu_ids * GUP_BENCH_MAX_REPEATS;

	run->pages_order = 0;
	while ((PAGE_SIZE << run->pages_order) < nr_pages * sizeof(struct page *))
		run->pages_order++;
	for (unsigned int t = 0; t < run->threads; t++) {
		struct page *p = alloc_pages(GFP_KERNEL, run->pages_order);
		if (!p)
			return -1;
		run->pages[t] = page_address(p);
	}
	run->mm = mm_create(mm_node());
	if (!run->mm)
		return -1;
	/* The selftest's pre-fault: every page is present before the timed loop. */
	return mm_mmap_anon(run->mm, GUP_BENCH_BASE, (u64)gup_size_mb << 20, true, false, true);
}

static void gup_bench_teardown(struct gup_bench_run *run)
{
	if (run->mm)
		mm_destroy(run->mm);
	for (unsigned int t = 0; run->pages && t < run->threads; t++)
		if (run->pages[t])
			__free_pages(virt_to_page(mm_node(), run->pages[t]), run->pages_order);
	cpu_array_free(run->pages, GUP_RUN_CPU_BYTES);
}

/* One mode: run, print the per-thread lines and the summary; returns the mean get time. */
static u64 gup_bench_mode(const char *mode, u64 *flag_writes)
{
	struct gup_bench_run *run = &gup_run;
	unsigned int n;
	u64 mean_get, mean_put;
	char extra[160];

	*run = (struct gup_bench_run){ .threads = gup_threads ? MIN(gup_threads, nr_cpus) : nr_cpus,
				       .repeats = CLAMP(gup_repeats, 1u, GUP_BENCH_MAX_REPEATS) };
	run->cmd = gup_cmd[0] == 'u' ? GUP_FAST_BENCHMARK :
		   gup_cmd[0] == 'L' ? PIN_LONGTERM_BENCHMARK : PIN_FAST_BENCHMARK;
	gup_set_has_pinned_mode(mode);
	if (gup_bench_setup(run)) {
		printk("gup: out of memory setting up %u MiB x %u threads\n", gup_size_mb, run->threads);
		gup_bench_teardown(run);
		return 0;
	}
	snprintf(extra, sizeof(extra), "\"mode\":\"%s\",\"op\":\"pin\",\"ops\":%llu", mode,
		 (unsigned long long)run->threads * run->repeats * (((u64)gup_size_mb << 20) >> PAGE_SHIFT));
	c2c_object_type("mm_struct", "struct mm_struct", run->mm, sizeof(*run->mm));
	c2c_node_objects(mm_node());
	c2c_window(mode[0] == 'i' ? "gup if-clear" : "gup every-pin", extra, gup_bench_cpu, run);
	n = run->threads * run->repeats;
	for (unsigned int i = 0; i < n; i++)
		printk("  cpu%-3u %s: Time: get:%llu put:%llu us\n", i / run->repeats,
		       gup_test_cmd_name(run->cmd), (unsigned long long)run->get_us[i],
		       (unsigned long long)run->put_us[i]);
	mean_get = bench_mean(run->get_us, n);
	mean_put = bench_mean(run->put_us, n);
	*flag_writes = MM_STAT(run->mm, flag_writes);
	printk("gup: has_pinned=%-6s get %llu us (+- %llu.%02llu%%)  put %llu us (+- %llu.%02llu%%)  "
	       "mm->flags writes %llu  verify failures %llu  truncated %llu\n", mode,
	       (unsigned long long)mean_get, (unsigned long long)bench_rel_stddev_centi(run->get_us, n) / 100,
	       (unsigned long long)bench_rel_stddev_centi(run->get_us, n) % 100, (unsigned long long)mean_put,
	       (unsigned long long)bench_rel_stddev_centi(run->put_us, n) / 100,
	       (unsigned long long)bench_rel_stddev_centi(run->put_us, n) % 100,
	       (unsigned long long)*flag_writes, (unsigned long long)run->verify_failures,
	       (unsigned long long)run->truncated);
	snprintf(extra, sizeof(extra), "\"mode\":\"%s\",\"cmd\":\"%s\",\"size_mb\":%u,\"threads\":%u,"
		 "\"flag_writes\":%llu", mode, gup_cmd, gup_size_mb, run->threads,
		 (unsigned long long)*flag_writes);
	for (unsigned int i = 0; i < n; i++) {	/* to milli-units in place: no MAX_CPUS array */
		run->get_us[i] *= 1000;
		run->put_us[i] *= 1000;
	}
	bench_emit("gup", mode[0] == 'i' ? "get_us_if_clear" : "get_us_every_pin", "us", false,
		   run->get_us, n, extra);
	bench_emit("gup", mode[0] == 'i' ? "put_us_if_clear" : "put_us_every_pin", "us", false,
		   run->put_us, n, extra);
	gup_bench_teardown(run);
	return mean_get;
}

static void gup_bench(void)
{
	enum gup_has_pinned_mode saved = gup_has_pinned_mode;
	u64 w_if_clear = 0, w_every = 0, if_clear = 0, every = 0;
	bool both = !strcmp(gup_modes, "both");

	printk("gup: %s -m %u -j %u -n %u -r %u (all threads on the same range)\n",
	       gup_cmd, gup_size_mb, gup_threads ? gup_threads : nr_cpus, gup_nr, gup_repeats);
	if (both || saved == GUP_HAS_PINNED_EVERY_PIN)
		every = gup_bench_mode("every-pin", &w_every);
	if (both || saved == GUP_HAS_PINNED_IF_CLEAR)
		if_clear = gup_bench_mode("if-clear", &w_if_clear);
	gup_has_pinned_mode = saved;
	if (both && if_clear)
		printk("gup: every-pin/if-clear get-time ratio %llu.%02llu; flag writes: every-pin "
		       "%llu, if-clear %llu\n", (unsigned long long)(every / if_clear),
		       (unsigned long long)(every * 100 / if_clear % 100),
		       (unsigned long long)w_every, (unsigned long long)w_if_clear);
}
BENCH_REGISTER(gup, gup_bench, "gup_test: pin/get the same range from every CPU, has_pinned every-pin vs if-clear");
