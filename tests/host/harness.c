/*
 * Host test runner: runs the test tables (all, or only the concurrent ones with -c), one
 * fresh simulated RAM per test, and ends with "N passed, N failed, N skipped". -v shows the
 * console; -t SECONDS is the per-test watchdog (a hung test is reported as failed, not waited
 * for). --pct runs concurrent tests under the deterministic scheduler (usage()).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include "tests/host/harness.h"
#include "kernel/lockdep.h"

static unsigned int failures_in_test;
bool host_bad_pages_expected;
static bool skipped_in_test;
static char skip_reason[256];

void host_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("    FAIL %s:%d: ", file, line);
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	__atomic_fetch_add(&failures_in_test, 1, __ATOMIC_RELAXED);
}

void host_skip(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(skip_reason, sizeof(skip_reason), fmt, ap);
	va_end(ap);
	skipped_in_test = true;
}

struct pglist_data *test_node_create(const struct mem_region *map, unsigned int n,
				     unsigned int nr_cpus)
{
	struct test_node *tn = calloc(1, sizeof(*tn));

	memblock_init(&tn->mb, host_boot_map_limit);
	memblock_add_mmap(&tn->mb, map, n);
	memblock_reserve(&tn->mb, 0, PAGE_SIZE);	/* as firmware's page 0 in the kernel */
	if (pgdat_init(&tn->pgdat, &tn->mb, "test", nr_cpus)) {
		free(tn);
		return NULL;
	}
	return &tn->pgdat;
}

void test_node_destroy(struct pglist_data *pgdat)
{
	pgdat_destroy(pgdat);
	free(container_of(pgdat, struct test_node, pgdat));
}

unsigned long alloc_until_null(struct pglist_data *pgdat, gfp_t gfp, unsigned int order,
			       struct page **pages, unsigned long max)
{
	unsigned long n = 0;
	struct page *page;

	while (n < max && (page = alloc_pages_node(pgdat, gfp | __GFP_NOWARN, order)))
		pages[n++] = page;
	return n;
}

void free_all(struct page **pages, unsigned long n, unsigned int order)
{
	for (unsigned long i = 0; i < n; i++)
		__free_pages(pages[i], order);
}

struct cpu_thread {
	pthread_t tid;
	unsigned int cpu;
	void *(*fn)(void *);
	void *arg;
};

static void *cpu_thread_main(void *p)
{
	struct cpu_thread *t = p;
	void *ret;

	host_cpu_id = t->cpu;
	host_cpu_set_live(true);
	if (host_pct_on())
		host_pct_enter(t->cpu);	/* deterministic mode: one thread at a time from here */
	ret = t->fn(t->arg);
	host_cpu_set_live(false);
	if (host_pct_on())
		host_pct_exit();
	return ret;
}

void run_on_cpus(unsigned int n, void *(*fn)(void *), void *args, size_t arg_size)
{
	struct cpu_thread *t = calloc(n, sizeof(*t));

	if (host_pct_on())
		host_pct_group(n);
	else
		host_set_noise(true);
	for (unsigned int i = 0; i < n; i++) {
		t[i] = (struct cpu_thread){ .cpu = i, .fn = fn, .arg = (char *)args + i * arg_size };
		pthread_create(&t[i].tid, NULL, cpu_thread_main, &t[i]);
	}
	for (unsigned int i = 0; i < n; i++)
		pthread_join(t[i].tid, NULL);
	host_set_noise(false);
	free(t);
}

static const struct host_test *const test_tables[] = { memblock_tests, buddy_tests, pcp_tests,
						       concurrent_tests, gup_tests,
						       fail_page_alloc_tests, lockdep_tests,
						       numa_tests };

/* The watchdog: a test still running after this many seconds is a hang (a deadlock, a
 * livelock): report it as failed, with its console, and stop; the later tests do not run. */
static unsigned int test_timeout = 300;
static const char *volatile running_test;

static void watchdog_fired(int sig)
{
	static volatile sig_atomic_t fired;

	(void)sig;
	if (fired++)
		_exit(1);	/* the report itself hung (console lock held): just stop */
	alarm(5);
	printf("not ok %s # TIMEOUT: still running after %u s (hung?)\n--- console of %s ---\n",
	       running_test, test_timeout, running_test);
	host_console_dump();
	printf("--- end of console ---\n0 passed, 1 failed, 0 skipped\n");
	fflush(stdout);
	_exit(1);
}

enum result { PASSED, FAILED, SKIPPED };

/* Run one test on fresh simulated RAM; quiet: print only the failed checks, if any. */
static enum result run_one(const struct host_test *t, bool quiet)
{
	unsigned long reports;

	running_test = t->name;
	alarm(test_timeout);
	host_console_reset();
	host_phys_reset();
	host_cpu_id = 0;
	host_irqs_off = 0;
	failures_in_test = 0;
	skipped_in_test = false;
	host_bad_page_reports = 0;
	host_bad_pages_expected = false;
	reports = lockdep_report_count();
	t->fn();
	alarm(0);
	if (host_bad_page_reports && !host_bad_pages_expected)
		host_fail(__FILE__, __LINE__, "%lu unexpected 'BUG: Bad page state' reports",
			  host_bad_page_reports);
	if (lockdep_report_count() != reports)
		host_fail(__FILE__, __LINE__, "lockdep reported a possible deadlock (see the console)");
	if (failures_in_test) {
		printf("not ok %s\n", t->name);
		if (!quiet || host_verbose) {
			printf("--- console of %s ---\n", t->name);
			host_console_dump();
			printf("--- end of console ---\n");
		}
		return FAILED;
	}
	if (skipped_in_test) {
		if (!quiet)
			printf("ok %s # skipped: %s\n", t->name, skip_reason);
		return SKIPPED;
	}
	if (!quiet)
		printf("ok %s\n", t->name);
	return PASSED;
}

static bool selected(const struct host_test *t, const char *filter, bool only_concurrent)
{
	return (!filter || strstr(t->name, filter)) && (!only_concurrent || t->concurrent);
}

struct pct_args {
	u64 seed, steps;
	unsigned int depth, runs;
};

static enum result pct_run(const struct host_test *t, u64 seed, unsigned int depth, u64 k,
			   u64 *steps)
{
	enum result r;
	u64 switches;

	host_pct_begin(seed, depth, k);
	r = run_one(t, true);
	host_pct_end(steps, &switches);
	printf("pct %s seed=%llu: %s (%llu steps, %llu switches)%s%s\n", t->name,
	       (unsigned long long)seed, r == FAILED ? "FAILED" : r == SKIPPED ? "no race" : "ok",
	       (unsigned long long)*steps, (unsigned long long)switches,
	       r == SKIPPED ? ": " : "", r == SKIPPED ? skip_reason : "");
	return r;
}

/*
 * Deterministic mode: each selected concurrent test `runs` times, seeds seed, seed + 1, ...
 * k (steps per run, for the change points) is measured by one run without change points
 * unless --steps gives it. A failing seed replays exactly with the printed command.
 */
static unsigned int pct_main(const struct pct_args *a, const char *filter)
{
	unsigned int failed_tests = 0;

	for (unsigned int k = 0; k < ARRAY_SIZE(test_tables); k++)
		for (const struct host_test *t = test_tables[k]; t->name; t++) {
			unsigned int caught = 0, raced = 0;
			u64 steps = a->steps, first = 0;

			if (!selected(t, filter, true))
				continue;
			if (!steps) {
				pct_run(t, a->seed, 1, 0, &steps);
				printf("pct %s: k = %llu steps (measured with seed %llu, depth 1)\n",
				       t->name, (unsigned long long)steps,
				       (unsigned long long)a->seed);
			}
			for (unsigned int r = 0; r < a->runs; r++) {
				u64 seed = a->seed + r, n;
				enum result res = pct_run(t, seed, a->depth, steps, &n);

				raced += res != SKIPPED;
				if (res == FAILED && !caught)
					first = seed;
				caught += res == FAILED;
			}
			printf("pct %s: failed %u of %u runs (%u raced), depth %u, k %llu\n", t->name,
			       caught, a->runs, raced, a->depth, (unsigned long long)steps);
			if (caught)
				printf("pct %s: replay the first failure with: mmtest --pct %llu --depth "
				       "%u --steps %llu --runs 1 %s\n", t->name,
				       (unsigned long long)first, a->depth, (unsigned long long)steps,
				       t->name);
			failed_tests += caught > 0;
		}
	return failed_tests;
}

static void usage(void)
{
	printf("usage: mmtest [-v] [-c] [-t SECONDS] [NAME-FILTER]\n"
	       "       mmtest --pct SEED [--depth D] [--steps K] [--runs N] [-v] NAME-FILTER\n"
	       "       mmtest --bench buddy|pcp [PAIRS]   mmtest --gup-bench [THREADS] [MB] [ROUNDS]\n"
	       "--pct: the concurrent tests matching NAME-FILTER under the deterministic PCT\n"
	       "scheduler, N runs with seeds SEED, SEED+1, ...; D is the bug depth (default 3),\n"
	       "K the steps per run (default: measured by a first run).\n");
}

int main(int argc, char **argv)
{
	bool only_concurrent = false, pct = false;
	struct pct_args pa = { .depth = 3, .runs = 1 };
	const char *filter = NULL;
	unsigned int passed = 0, failed = 0, skipped = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--bench")) {
			host_phys_init(4 * GiB + 512 * MiB);
			return host_bench(argc - i - 1, argv + i + 1);
		}
		if (!strcmp(argv[i], "--gup-bench")) {
			host_phys_init(4 * GiB + 512 * MiB);
			return gup_host_bench(argc - i - 1, argv + i + 1);
		}
		if (!strcmp(argv[i], "-c")) {
			only_concurrent = true;
		} else if (!strcmp(argv[i], "-v")) {
			host_verbose = true;
		} else if (i + 1 < argc && !strcmp(argv[i], "-t")) {
			test_timeout = (unsigned int)atoi(argv[++i]);
		} else if (i + 1 < argc && !strcmp(argv[i], "--pct")) {
			pct = true;
			pa.seed = strtoull(argv[++i], NULL, 0);
		} else if (i + 1 < argc && !strcmp(argv[i], "--depth")) {
			pa.depth = (unsigned int)strtoul(argv[++i], NULL, 0);
		} else if (i + 1 < argc && !strcmp(argv[i], "--steps")) {
			pa.steps = strtoull(argv[++i], NULL, 0);
		} else if (i + 1 < argc && !strcmp(argv[i], "--runs")) {
			pa.runs = (unsigned int)strtoul(argv[++i], NULL, 0);
		} else if (argv[i][0] == '-') {
			usage();
			return 2;
		} else {
			filter = argv[i];
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	sigaction(SIGALRM, &(struct sigaction){ .sa_handler = watchdog_fired,
						.sa_flags = SA_NODEFER }, NULL);
	host_phys_init(4 * GiB + 512 * MiB);
	if (pct)
		return pct_main(&pa, filter) ? 1 : 0;
	for (unsigned int k = 0; k < ARRAY_SIZE(test_tables); k++)
		for (const struct host_test *t = test_tables[k]; t->name; t++) {
			if (!selected(t, filter, only_concurrent))
				continue;
			switch (run_one(t, false)) {
			case PASSED: passed++; break;
			case FAILED: failed++; break;
			case SKIPPED: skipped++; break;
			}
		}
	printf("%u passed, %u failed, %u skipped\n", passed, failed, skipped);
	return failed ? 1 : 0;
}
