/*
 * Host test runner: runs the ktest suites linked in (tests/host/test_*.c; all cases, or only
 * the KTEST_CASE_CONCURRENT ones with -c), each case on fresh simulated RAM, prints KTAP and
 * ends with "N passed, N failed, N skipped". -v shows the console; -t SECONDS is the per-case
 * watchdog (a hung case is reported as failed, not waited for). --pct runs concurrent cases
 * under the deterministic scheduler (usage()). The checks themselves are ktest's portable
 * core (tests/ktest/ktest_check.c), as in the kernel.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include "tests/host/harness.h"
#include "tests/lab/lab_platform.h"
#include "kernel/lockdep.h"
#include "kernel/panic.h"

/* The suites, bracketed by the linker as in the kernel (linker.ld there, ld's default here). */
extern const struct ktest_suite *const __start_ktest_suites[];
extern const struct ktest_suite *const __stop_ktest_suites[];
#define for_each_suite(s)                                                  \
	for (const struct ktest_suite *const *s = __start_ktest_suites; \
	     s < __stop_ktest_suites; s++)

static struct pglist_data *node_create(const struct mem_region *map, unsigned int n,
				       unsigned int nr_cpus, bool deferred,
				       enum pcp_lock_model model)
{
	struct test_node *tn = calloc(1, sizeof(*tn));

	memblock_init(&tn->mb, host_boot_map_limit);
	memblock_add_mmap(&tn->mb, map, n);
	memblock_reserve(&tn->mb, 0, PAGE_SIZE);	/* as firmware's page 0 in the kernel */
	if ((deferred ? pgdat_init_deferred : pgdat_init)(&tn->pgdat, &tn->mb, "test", nr_cpus,
							  model)) {
		free(tn);
		return NULL;
	}
	return &tn->pgdat;
}

struct pglist_data *test_node_create(const struct mem_region *map, unsigned int n,
				     unsigned int nr_cpus)
{
	return node_create(map, n, nr_cpus, false, pcp_lock_default);
}

struct pglist_data *test_node_create_model(const struct mem_region *map, unsigned int n,
					   unsigned int nr_cpus, enum pcp_lock_model model)
{
	return node_create(map, n, nr_cpus, false, model);
}

struct pglist_data *test_node_create_deferred(const struct mem_region *map, unsigned int n,
					      unsigned int nr_cpus)
{
	return node_create(map, n, nr_cpus, true, pcp_lock_default);
}

void test_node_destroy(struct pglist_data *pgdat)
{
	pgdat_destroy(pgdat);
	free(container_of(pgdat, struct test_node, pgdat));
}

/* ---- tests/lab/lab_platform.h on the host: [16 MiB, + n blocks) of RAM, 8 CPU threads ---- */

#define LAB_HOST_CPUS 8

static struct pglist_data *lab_live;

static struct pglist_data *lab_node(unsigned int nr_blocks, bool pcp, unsigned int nr_pcps,
				    enum pcp_lock_model model)
{
	const struct mem_region map[] = {
		{ 16 * MiB, (u64)nr_blocks * (MAX_ORDER_NR_PAGES << PAGE_SHIFT), MEM_USABLE },
	};

	if (lab_live || !nr_blocks || nr_blocks > LAB_NODE_MAX_BLOCKS)
		return NULL;
	lab_live = test_node_create_model(map, ARRAY_SIZE(map), nr_pcps, model);
	if (lab_live && pcp)
		zone_pcp_update(lab_live, LAB_HOST_CPUS);
	for (int z = 0; lab_live && !pcp && z < MAX_NR_ZONES; z++)
		zone_pcp_disable(&lab_live->node_zones[z]);
	return lab_live;
}

struct pglist_data *lab_node_create(unsigned int nr_blocks, bool pcp)
{
	return lab_node(nr_blocks, pcp, LAB_HOST_CPUS, pcp_lock_default);
}

struct pglist_data *lab_node_create_model(unsigned int nr_blocks, enum pcp_lock_model model)
{
	return lab_node(nr_blocks, true, LAB_HOST_CPUS, model);
}

struct pglist_data *lab_node_create_pcps(unsigned int nr_blocks, unsigned int nr_pcps)
{
	return lab_node(nr_blocks, true, MAX(nr_pcps, (unsigned int)LAB_HOST_CPUS),
			pcp_lock_default);
}

void lab_node_destroy(struct pglist_data *pgdat)
{
	test_node_destroy(pgdat);
	lab_live = NULL;
}

void lab_node_exit(struct ktest *t)
{
	if (lab_live)
		lab_node_destroy(lab_live);
}

unsigned int lab_nr_cpus(void)
{
	return LAB_HOST_CPUS;
}

struct lab_call {
	smp_call_fn fn;
	void *arg;
};

static void *lab_cpu(void *p)
{
	const struct lab_call *c = p;

	c->fn(c->arg);
	return NULL;
}

void lab_run_on_cpus(smp_call_fn fn, void *arg)
{
	struct lab_call calls[LAB_HOST_CPUS];

	for (unsigned int i = 0; i < LAB_HOST_CPUS; i++)
		calls[i] = (struct lab_call){ fn, arg };
	run_on_cpus(LAB_HOST_CPUS, lab_cpu, calls, sizeof(calls[0]));
}

bool lab_deterministic(void)
{
	return host_pct_on();
}

int lab_set_tick(void (*fn)(void))
{
	host_set_tick(fn, fn ? 256 : 0);	/* the CPU threads have returned: none is in it */
	return 0;
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
	unsigned int *running;		/* threads of the set still in fn */
};

/*
 * A CPU thread: online, fn, then idle (kernel/smp.c's calls still reach it, as an AP in
 * smp_idle_loop) until every thread of its set has returned from fn, so that no CPU goes
 * offline while another may still send it a call; then offline.
 */
static void *cpu_thread_main(void *p)
{
	struct cpu_thread *t = p;
	void *ret;

	host_cpu_id = t->cpu;
	host_cpu_online(true);
	if (host_pct_on())
		host_pct_enter(t->cpu);	/* deterministic mode: one thread at a time from here */
	ret = t->fn(t->arg);
	if (__atomic_sub_fetch(t->running, 1, __ATOMIC_ACQ_REL) == 0) {
		for (unsigned int cpu = 0; cpu < nr_cpus; cpu++)
			arch_send_wake_ipi(cpu);
	}
	while (__atomic_load_n(t->running, __ATOMIC_ACQUIRE)) {
		arch_irq_disable();
		if (__atomic_load_n(t->running, __ATOMIC_ACQUIRE))
			arch_wait_for_interrupt();
		arch_irq_enable();
	}
	host_cpu_online(false);
	if (host_pct_on())
		host_pct_exit();
	return ret;
}

bool host_panics(void (*fn)(void *), void *arg)
{
	volatile bool panicked = false;
	jmp_buf jb;

	if (!setjmp(jb)) {
		host_panic_jmp = &jb;
		fn(arg);
	} else {
		panicked = true;
	}
	host_panic_jmp = NULL;
	return panicked;
}

void run_on_cpus(unsigned int n, void *(*fn)(void *), void *args, size_t arg_size)
{
	struct cpu_thread *t = calloc(n, sizeof(*t));
	unsigned int running = n;

	nr_cpus = MAX(n, 1u);	/* kernel/smp.c looks for online CPUs below it */
	if (host_pct_on())
		host_pct_group(n);
	else
		host_set_noise(true);
	for (unsigned int i = 0; i < n; i++) {
		t[i] = (struct cpu_thread){ .cpu = i, .fn = fn, .arg = (char *)args + i * arg_size,
					    .running = &running };
		pthread_create(&t[i].tid, NULL, cpu_thread_main, &t[i]);
	}
	for (unsigned int i = 0; i < n; i++)
		pthread_join(t[i].tid, NULL);
	host_set_noise(false);
	nr_cpus = 1;
	free(t);
}

/* The watchdog: a test still running after this many seconds is a hang (a deadlock, a
 * livelock): report it as failed, with its console, and stop; the later tests do not run. */
static unsigned int case_timeout = 300;	/* -t; a case may set its own (host_watchdog()) */
static unsigned int test_timeout;
static const char *volatile running_test;	/* the running case's name */
static char last_skip_reason[96];	/* of the last case run_one() ran (a copy: its
					 * struct ktest is gone when it is printed) */

void host_watchdog(unsigned int seconds)
{
	test_timeout = seconds;
	alarm(seconds);
}

static void watchdog_fired(int sig)
{
	static volatile sig_atomic_t fired;

	(void)sig;
	if (fired++)
		_exit(1);	/* the report itself hung (console lock held): just stop */
	alarm(5);
	printf("  not ok %s # TIMEOUT: still running after %u s (hung?)\n--- console of %s ---\n",
	       running_test, test_timeout, running_test);
	host_console_dump();
	printf("--- end of console ---\n0 passed, 1 failed, 0 skipped\n");
	fflush(stdout);
	_exit(1);
}

/* A per-case seed: the case's name hashed (FNV-1a), so a case's numbers do not depend on
 * which others ran. */
static u64 host_case_seed(const char *name)
{
	u64 h = 0xcbf29ce484222325ull;

	for (const char *p = name; *p; p++)
		h = (h ^ (u8)*p) * 0x100000001b3ull;
	return ktest_splitmix64(&h);
}

/* The case with KT_ASSERT's and KT_SKIP's way back (as the kernel's runner, minus traps). */
static void exec_case(struct ktest *t, const struct ktest_suite *s, const struct ktest_case *c)
{
	void *jmp[5];

	t->abort_ctx = jmp;
	if (__builtin_setjmp(jmp) == 0) {
		if (s->init && s->init(t))
			KT_FAIL(t, "suite init failed");
		else
			c->run(t);
	}
	if (s->exit)
		s->exit(t);
	t->abort_ctx = NULL;
}

/* Run case n of s on fresh simulated RAM; quiet: print only a failure, with its console. */
static enum ktest_status run_one(const struct ktest_suite *s, const struct ktest_case *c,
				 unsigned int n, bool quiet)
{
	struct ktest t;
	struct ktest_taints taints;
	unsigned long reports;

	running_test = c->name;
	host_watchdog(case_timeout);
	host_console_reset();
	host_phys_reset();
	host_cpu_id = 0;
	host_irqs_off = 0;
	ktest_taints_begin(&taints);
	reports = lockdep_report_count();
	ktest_case_init(&t, s->name, c, 0, host_case_seed(c->name));
	exec_case(&t, s, c);
	alarm(0);
	ktest_taints_end(&t, &taints);	/* an unannounced bad page or WARN_ON fails it */
	if (lockdep_report_count() != reports)
		KT_FAIL(&t, "lockdep reported a possible deadlock (see the console)");
	if (t.status == KTEST_FAIL) {
		printf("  not ok %u %s\n", n, c->name);
		if (!quiet || host_verbose) {
			printf("--- console of %s ---\n", c->name);
			host_console_dump();
			printf("--- end of console ---\n");
		}
	} else if (!quiet) {
		printf("  ok %u %s%s%s\n", n, c->name, t.status == KTEST_SKIP ? " # SKIP " : "",
		       t.status == KTEST_SKIP ? t.skip_reason : "");
	}
	snprintf(last_skip_reason, sizeof(last_skip_reason), "%s",
		 t.status == KTEST_SKIP ? t.skip_reason : "");
	return t.status;
}

/* By name, as `mmtest FILTER` always did: FILTER is part of the case's or the suite's name. */
static bool selected(const struct ktest_suite *s, const struct ktest_case *c, const char *filter,
		     bool only_concurrent)
{
	return (!filter || strstr(c->name, filter) || strstr(s->name, filter)) &&
	       (!only_concurrent || c->concurrent);
}

static unsigned int selected_cases(const struct ktest_suite *s, const char *filter,
				   bool only_concurrent)
{
	unsigned int n = 0;

	for (size_t i = 0; i < s->nr_cases; i++)
		n += selected(s, &s->cases[i], filter, only_concurrent);
	return n;
}

struct pct_args {
	u64 seed, steps;
	unsigned int depth, runs;
};

static enum ktest_status pct_run(const struct ktest_suite *s, const struct ktest_case *c,
				 u64 seed, unsigned int depth, u64 k, u64 *steps)
{
	enum ktest_status r;
	u64 switches;

	host_pct_begin(seed, depth, k);
	r = run_one(s, c, 1, true);
	host_pct_end(steps, &switches);
	printf("pct %s seed=%llu: %s (%llu steps, %llu switches)%s%s\n", c->name,
	       (unsigned long long)seed,
	       r == KTEST_FAIL ? "FAILED" : r == KTEST_SKIP ? "no race" : "ok",
	       (unsigned long long)*steps, (unsigned long long)switches,
	       r == KTEST_SKIP ? ": " : "", r == KTEST_SKIP ? last_skip_reason : "");
	return r;
}

/*
 * Deterministic mode: each selected concurrent test `runs` times, seeds seed, seed + 1, ...
 * k (steps per run, for the change points) is measured by one run without change points
 * unless --steps gives it. A failing seed replays exactly with the printed command.
 */
/* One concurrent case, a->runs times; returns true if some run failed. */
static bool pct_case(const struct pct_args *a, const struct ktest_suite *s,
		     const struct ktest_case *c)
{
	unsigned int caught = 0, raced = 0;
	u64 steps = a->steps, first = 0, warm;

	/* Always a first run without change points: it measures k unless --steps gave it, and
	 * it warms what the first run of a case in a process does once (lockdep learning its
	 * lock classes and orders), so that the runs after it, and a replay, start alike. */
	pct_run(s, c, a->seed, 1, 0, &warm);
	if (!steps) {
		steps = warm;
		printf("pct %s: k = %llu steps (measured with seed %llu, depth 1)\n", c->name,
		       (unsigned long long)steps, (unsigned long long)a->seed);
	}
	for (unsigned int r = 0; r < a->runs; r++) {
		u64 seed = a->seed + r, n;
		enum ktest_status res = pct_run(s, c, seed, a->depth, steps, &n);

		raced += res != KTEST_SKIP;
		if (res == KTEST_FAIL && !caught)
			first = seed;
		caught += res == KTEST_FAIL;
	}
	printf("pct %s: failed %u of %u runs (%u raced), depth %u, k %llu\n", c->name, caught,
	       a->runs, raced, a->depth, (unsigned long long)steps);
	if (caught)
		printf("pct %s: replay the first failure with: mmtest --pct %llu --depth %u "
		       "--steps %llu --runs 1 %s\n", c->name, (unsigned long long)first, a->depth,
		       (unsigned long long)steps, c->name);
	return caught > 0;
}

/*
 * Deterministic mode: each selected concurrent case `runs` times, seeds seed, seed + 1, ...
 * k (steps per run, for the change points) is measured by one run without change points
 * unless --steps gives it. A failing seed replays exactly with the printed command.
 */
static unsigned int pct_main(const struct pct_args *a, const char *filter)
{
	unsigned int failed_cases = 0;

	for_each_suite(s)
		for (size_t i = 0; i < (*s)->nr_cases; i++)
			if (selected(*s, &(*s)->cases[i], filter, true))
				failed_cases += pct_case(a, *s, &(*s)->cases[i]);
	return failed_cases;
}

/* One suite as a KTAP subtest; adds its results to count[] (by enum ktest_status). */
static void run_suite(const struct ktest_suite *s, unsigned int number, const char *filter,
		      bool only_concurrent, unsigned int count[3])
{
	unsigned int n = 0, mine[3] = { 0, 0, 0 };

	printf("  KTAP version 1\n  # Subtest: %s\n  1..%u\n", s->name,
	       selected_cases(s, filter, only_concurrent));
	for (size_t i = 0; i < s->nr_cases; i++)
		if (selected(s, &s->cases[i], filter, only_concurrent))
			mine[run_one(s, &s->cases[i], ++n, false)]++;
	printf("  # %s: %u passed, %u failed, %u skipped\n%s %u %s\n", s->name, mine[KTEST_PASS],
	       mine[KTEST_FAIL], mine[KTEST_SKIP], mine[KTEST_FAIL] ? "not ok" : "ok", number,
	       s->name);
	for (int k = 0; k < 3; k++)
		count[k] += mine[k];
}

static void usage(void)
{
	printf("usage: mmtest [-v] [-c] [-t SECONDS] [NAME-FILTER]\n"
	       "       mmtest --pct SEED [--depth D] [--steps K] [--runs N] [-v] NAME-FILTER\n"
	       "       mmtest --bench buddy|pcp [PAIRS]   mmtest --gup-bench [THREADS] [MB] [ROUNDS]\n"
	       "       mmtest --fn-trace drain-MODEL (the fntrace builds: docs/pcp.md's list (b))\n"
	       "--pct: the concurrent tests matching NAME-FILTER under the deterministic PCT\n"
	       "scheduler, N runs with seeds SEED, SEED+1, ...; D is the bug depth (default 3),\n"
	       "K the steps per run (default: measured by a first run).\n");
}

int main(int argc, char **argv)
{
	bool only_concurrent = false, pct = false;
	struct pct_args pa = { .depth = 3, .runs = 1 };
	const char *filter = NULL;
	unsigned int count[3] = { 0, 0, 0 };	/* by enum ktest_status */
	unsigned int nr_suites = 0, number = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--bench")) {
			host_phys_init(4 * GiB + 512 * MiB);
			return host_bench(argc - i - 1, argv + i + 1);
		}
		if (!strcmp(argv[i], "--gen")) {	/* tests/gen: the mm API generator */
			host_phys_init(4 * GiB + 512 * MiB);
			return gen_main(argc - i - 1, argv + i + 1);
		}
		if (!strcmp(argv[i], "--gup-bench")) {
			host_phys_init(4 * GiB + 512 * MiB);
			return gup_host_bench(argc - i - 1, argv + i + 1);
		}
		if (!strcmp(argv[i], "--fn-trace")) {
			host_phys_init(4 * GiB + 512 * MiB);
			return fn_trace_main(argc - i - 1, argv + i + 1);
		}
		if (!strcmp(argv[i], "-c")) {
			only_concurrent = true;
		} else if (!strcmp(argv[i], "-v")) {
			host_verbose = true;
		} else if (i + 1 < argc && !strcmp(argv[i], "-t")) {
			case_timeout = (unsigned int)atoi(argv[++i]);
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
	for_each_suite(s)
		nr_suites += selected_cases(*s, filter, only_concurrent) > 0;
	printf("KTAP version 1\n1..%u\n", nr_suites);
	for_each_suite(s)
		if (selected_cases(*s, filter, only_concurrent))
			run_suite(*s, ++number, filter, only_concurrent, count);
	printf("%u passed, %u failed, %u skipped\n", count[KTEST_PASS], count[KTEST_FAIL],
	       count[KTEST_SKIP]);
	return count[KTEST_FAIL] ? 1 : 0;
}
