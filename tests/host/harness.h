/*
 * The host test harness: runs ktest suites (tests/ktest/ktest.h: the same KTEST_SUITE,
 * KT_EXPECT_*, KT_ASSERT_*, KT_SKIP as in the kernel) on pthreads as CPUs, and builds private
 * allocator instances over the simulated physical memory. A passing case prints its KTAP
 * line only; a failing one shows its console.
 */
#ifndef HOST_HARNESS_H
#define HOST_HARNESS_H

#include "tests/ktest/ktest.h"
#include "mm/mm_test.h"
#include "mm/memblock.h"
#include "kernel/printk.h"
#include "kernel/bootinfo.h"
#include "tests/host/shim/shim.h"

#define MiB (1ull << 20)
#define GiB (1ull << 30)

/* A private allocator instance built from a memory map, as mm_init() builds the kernel's. */
struct test_node {
	struct pglist_data pgdat;
	struct memblock mb;
};

/* Build an instance over map (usable entries; other types cut out). NULL on failure. */
struct pglist_data *test_node_create(const struct mem_region *map, unsigned int n,
				     unsigned int nr_cpus);
/* The same in lock model `model` (the one above: pcp_lock_default, trylock unless a test
 * set it). */
struct pglist_data *test_node_create_model(const struct mem_region *map, unsigned int n,
					   unsigned int nr_cpus, enum pcp_lock_model model);
/* The same with only the first chunks initialised (pgdat_init_deferred()): the caller runs
 * deferred_init_memmap() and deferred_init_done(), or lets allocations grow it. */
struct pglist_data *test_node_create_deferred(const struct mem_region *map, unsigned int n,
					      unsigned int nr_cpus);
void test_node_destroy(struct pglist_data *pgdat);
/* Allocate order-`order` blocks with gfp until NULL; store up to max in pages[]; return n. */
unsigned long alloc_until_null(struct pglist_data *pgdat, gfp_t gfp, unsigned int order,
			       struct page **pages, unsigned long max);
void free_all(struct page **pages, unsigned long n, unsigned int order);

/* Run fn(arg_i) on n threads that act as CPUs 0..n-1, and wait for all. */
void run_on_cpus(unsigned int n, void *(*fn)(void *), void *args, size_t arg_size);
/* The running case is a hang (reported failed, and the run stops) unless it ends within
 * seconds from now: for a case whose bug is an endless loop, sooner than mmtest -t's 300. */
void host_watchdog(unsigned int seconds);
/* Run fn(arg) on this thread with panic() caught: true if it panicked (host_panic_msg says
 * why). What fn held when it panicked stays held. */
bool host_panics(void (*fn)(void *), void *arg);

/* tests/host/preempt.c: host_preempt_arm(ns) stops this CPU thread ns from now, wherever
 * it is, until *progress changes (the others made a step) or 0.2 ms pass, as a descheduled
 * vCPU. Between start and stop, which returns how many stops there were. */
void host_preempt_start(const u64 *progress);
void host_preempt_arm(unsigned long delay_ns);
unsigned long host_preempt_stop(void);

/* tests/host/bench_host.c: order-0 pair microbenchmark (mmtest --bench buddy|pcp [pairs]). */
int host_bench(int argc, char **argv);
/* tests/gen/gen_main.c: the mm API generator (mmtest --gen). */
int gen_main(int argc, char **argv);
/* tests/host/test_gup.c: the gup_test benchmark on host threads (mmtest --gup-bench). */
int gup_host_bench(int argc, char **argv);
/* tests/host/fn_trace.c: the functions a scenario runs (mmtest --fn-trace, fntrace builds). */
int fn_trace_main(int argc, char **argv);

#endif
