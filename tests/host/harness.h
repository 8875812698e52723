/*
 * The host test harness: test tables, EXPECT macros, and private allocator instances over
 * the simulated physical memory. Tests print nothing when they pass; on failure the test's
 * console output is shown.
 */
#ifndef HOST_HARNESS_H
#define HOST_HARNESS_H

#include "mm/mm_test.h"
#include "mm/memblock.h"
#include "kernel/printk.h"
#include "kernel/bootinfo.h"
#include "tests/host/shim/shim.h"

struct host_test {
	const char *name;
	void (*fn)(void);
	bool concurrent;	/* runs in the -fsanitize=thread build too */
};

#define MiB (1ull << 20)
#define GiB (1ull << 30)

void host_fail(const char *file, int line, const char *fmt, ...) __printf(3, 4);
/* A test that provokes "BUG: Bad page state" reports on purpose sets this; in any other
 * test such a report is a failure (the allocator found a page in a state it must not be). */
extern bool host_bad_pages_expected;
/* Report the test as skipped (with a reason, e.g. "no race: ...") unless it also failed; the
 * caller returns. A race test calls it when its race window was never entered. */
void host_skip(const char *fmt, ...) __printf(1, 2);

#define EXPECT(cond)                                                                    \
	do {                                                                            \
		if (!(cond))                                                            \
			host_fail(__FILE__, __LINE__, "expected %s", #cond);            \
	} while (0)
#define EXPECT_EQ(a, b)                                                                 \
	do {                                                                            \
		long long _a = (long long)(a), _b = (long long)(b);                     \
		if (_a != _b)                                                           \
			host_fail(__FILE__, __LINE__, "%s == %s: %lld != %lld", #a, #b, _a, \
				  _b);                                                  \
	} while (0)
/* Stop the test here if cond is false (later steps would only crash). */
#define ASSERT(cond)                                                                    \
	do {                                                                            \
		if (!(cond)) {                                                          \
			host_fail(__FILE__, __LINE__, "assertion %s", #cond);           \
			return;                                                         \
		}                                                                       \
	} while (0)

/* A private allocator instance built from a memory map, as mm_init() builds the kernel's. */
struct test_node {
	struct pglist_data pgdat;
	struct memblock mb;
};

/* Build an instance over map (usable entries; other types cut out). NULL on failure. */
struct pglist_data *test_node_create(const struct mem_region *map, unsigned int n,
				     unsigned int nr_cpus);
void test_node_destroy(struct pglist_data *pgdat);
/* Allocate order-`order` blocks with gfp until NULL; store up to max in pages[]; return n. */
unsigned long alloc_until_null(struct pglist_data *pgdat, gfp_t gfp, unsigned int order,
			       struct page **pages, unsigned long max);
void free_all(struct page **pages, unsigned long n, unsigned int order);

/* Run fn(arg_i) on n threads that act as CPUs 0..n-1, and wait for all. */
void run_on_cpus(unsigned int n, void *(*fn)(void *), void *args, size_t arg_size);

/* tests/host/preempt.c: host_preempt_arm(ns) stops this CPU thread ns from now, wherever
 * it is, until *progress changes (the others made a step) or 0.2 ms pass, as a descheduled
 * vCPU. Between start and stop, which returns how many stops there were. */
void host_preempt_start(const u64 *progress);
void host_preempt_arm(unsigned long delay_ns);
unsigned long host_preempt_stop(void);

extern const struct host_test memblock_tests[], buddy_tests[], concurrent_tests[],
	pcp_tests[], gup_tests[], fail_page_alloc_tests[], lockdep_tests[], numa_tests[];
/* tests/host/bench_host.c: order-0 pair microbenchmark (mmtest --bench buddy|pcp [pairs]). */
int host_bench(int argc, char **argv);
/* tests/host/test_gup.c: the gup_test benchmark on host threads (mmtest --gup-bench). */
int gup_host_bench(int argc, char **argv);

#endif
