/*
 * Host test runner: runs the test tables (all, or only the concurrent ones with -c), one
 * fresh simulated RAM per test, and ends with "N passed, N failed". -v shows the console;
 * -t SECONDS is the per-test watchdog (a hung test is reported as failed, not waited for).
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
	ret = t->fn(t->arg);
	host_cpu_set_live(false);
	return ret;
}

void run_on_cpus(unsigned int n, void *(*fn)(void *), void *args, size_t arg_size)
{
	struct cpu_thread *t = calloc(n, sizeof(*t));

	for (unsigned int i = 0; i < n; i++) {
		t[i] = (struct cpu_thread){ .cpu = i, .fn = fn, .arg = (char *)args + i * arg_size };
		pthread_create(&t[i].tid, NULL, cpu_thread_main, &t[i]);
	}
	for (unsigned int i = 0; i < n; i++)
		pthread_join(t[i].tid, NULL);
	free(t);
}

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
	printf("--- end of console ---\n0 passed, 1 failed\n");
	fflush(stdout);
	_exit(1);
}

static bool run_one(const struct host_test *t, const char *filter)
{
	unsigned long reports;

	if (filter && !strstr(t->name, filter))
		return true;
	running_test = t->name;
	alarm(test_timeout);
	host_console_reset();
	host_phys_reset();
	host_cpu_id = 0;
	host_irqs_off = 0;
	failures_in_test = 0;
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
		printf("not ok %s\n--- console of %s ---\n", t->name, t->name);
		host_console_dump();
		printf("--- end of console ---\n");
		return false;
	}
	printf("ok %s\n", t->name);
	return true;
}

int main(int argc, char **argv)
{
	const struct host_test *tables[] = { memblock_tests, buddy_tests, pcp_tests,
					     concurrent_tests, gup_tests, fail_page_alloc_tests,
					     lockdep_tests };
	bool only_concurrent = false;
	const char *filter = NULL;
	unsigned int passed = 0, failed = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--bench")) {
			host_phys_init(4 * GiB + 512 * MiB);
			return host_bench(argc - i - 1, argv + i + 1);
		}
		if (!strcmp(argv[i], "--gup-bench")) {
			host_phys_init(4 * GiB + 512 * MiB);
			return gup_host_bench(argc - i - 1, argv + i + 1);
		}
		if (!strcmp(argv[i], "-c"))
			only_concurrent = true;
		else if (!strcmp(argv[i], "-v"))
			host_verbose = true;
		else if (!strcmp(argv[i], "-t") && i + 1 < argc)
			test_timeout = (unsigned int)atoi(argv[++i]);
		else
			filter = argv[i];
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	sigaction(SIGALRM, &(struct sigaction){ .sa_handler = watchdog_fired,
						.sa_flags = SA_NODEFER }, NULL);
	host_phys_init(4 * GiB + 512 * MiB);
	for (unsigned int k = 0; k < ARRAY_SIZE(tables); k++)
		for (const struct host_test *t = tables[k]; t->name; t++) {
			if (only_concurrent && !t->concurrent)
				continue;
			if (run_one(t, filter))
				passed += !filter || strstr(t->name, filter);
			else
				failed++;
		}
	printf("%u passed, %u failed\n", passed, failed);
	return failed ? 1 : 0;
}
