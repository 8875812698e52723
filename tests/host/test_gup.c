/*
 * Host tests of pinning (mm/gup.c, mm/vm.c) with pthreads as CPUs, and `--gup-bench`: the
 * gup_test loop on real host cores, where the has-pinned cache-line bouncing is real.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>
#include "tests/host/harness.h"
#include "mm/gup.h"
#include "mm/gup_test.h"

#define BASE (1ull << 32)
#define GUP_TEST_CPUS 8

static struct pglist_data *gup_node(unsigned int cpus)
{
	const struct mem_region map[] = { { 16 * MiB, 256 * MiB, MEM_USABLE } };

	return test_node_create(map, ARRAY_SIZE(map), cpus);
}

/* Pin 32 pages and unpin them: acquired - released goes up by 32 and back. */
static void gup_host_pin_unpin_balance(void)
{
	struct pglist_data *pgdat = gup_node(1);
	struct mm_struct *mm = mm_create(pgdat);
	struct gup_totals a, b, c;
	struct page *pages[32];

	ASSERT(mm && mm_mmap_anon(mm, BASE, 32 * PAGE_SIZE, true, false, true) == 0);
	gup_read_totals(&a);
	EXPECT_EQ(pin_user_pages_fast(mm, BASE, 32, FOLL_WRITE, pages), 32);
	EXPECT(page_maybe_dma_pinned(pages[5]));
	gup_read_totals(&b);
	EXPECT_EQ(b.pins_acquired - a.pins_acquired, 32);
	unpin_user_pages(pages, 32);
	gup_read_totals(&c);
	EXPECT_EQ(c.pins_acquired - c.pins_released, a.pins_acquired - a.pins_released);
	EXPECT(!page_maybe_dma_pinned(pages[5]));
	mm_destroy(mm);
	EXPECT_EQ(mm_verify(pgdat), 0);
	test_node_destroy(pgdat);
}

struct pin_arg {
	struct mm_struct *mm;
	unsigned int pins;
	unsigned long failures;
};

static void *pin_loop(void *p)
{
	struct pin_arg *a = p;
	struct page *page;

	for (unsigned int i = 0; i < a->pins; i++) {
		if (pin_user_pages_fast(a->mm, BASE + (i % 16) * PAGE_SIZE, 1, 0, &page) != 1) {
			a->failures++;
			continue;
		}
		unpin_user_page(page);
	}
	return NULL;
}

static u64 flag_writes_for(const char *mode, unsigned int cpus, unsigned int pins)
{
	struct pglist_data *pgdat = gup_node(cpus);
	struct mm_struct *mm = mm_create(pgdat);
	struct pin_arg args[GUP_TEST_CPUS];
	u64 writes;

	gup_set_has_pinned_mode(mode);
	mm_mmap_anon(mm, BASE, 16 * PAGE_SIZE, true, false, true);
	for (unsigned int i = 0; i < cpus; i++)
		args[i] = (struct pin_arg){ mm, pins, 0 };
	run_on_cpus(cpus, pin_loop, args, sizeof(args[0]));
	for (unsigned int i = 0; i < cpus; i++)
		EXPECT_EQ(args[i].failures, 0);
	writes = MM_STAT(mm, flag_writes);
	gup_set_has_pinned_mode("once");
	mm_destroy(mm);
	test_node_destroy(pgdat);
	return writes;
}

/* 8 threads x 500 pins write mm->flags exactly once in `once` mode, 4000 times in `always`. */
static void gup_host_has_pinned_written_once(void)
{
	EXPECT_EQ(flag_writes_for("once", GUP_TEST_CPUS, 500), 1);
	EXPECT_EQ(flag_writes_for("always", GUP_TEST_CPUS, 500), GUP_TEST_CPUS * 500);
}

struct race_arg {
	struct mm_struct *mm;
	int *stop;
	unsigned long pinned;
};

static void *race_thread(void *p)
{
	struct race_arg *a = p;
	struct page *pages[8];

	if (arch_cpu_id() == 0) {
		for (int r = 0; r < 200; r++) {
			mm_munmap(a->mm, BASE, 2 * MiB);
			mm_mmap_anon(a->mm, BASE, 8 * PAGE_SIZE, true, false, true);
		}
		__atomic_store_n(a->stop, 1, __ATOMIC_RELEASE);
		return NULL;
	}
	while (!__atomic_load_n(a->stop, __ATOMIC_ACQUIRE)) {
		long n = pin_user_pages_fast(a->mm, BASE, 8, FOLL_FAST_ONLY, pages);

		if (n > 0) {
			a->pinned += (unsigned long)n;
			unpin_user_pages(pages, (unsigned long)n);
		}
	}
	return NULL;
}

/* One thread unmaps (freeing page tables) while the others walk: no poisoned entry is read. */
static void gup_host_unmap_vs_fast_walk(void)
{
	struct pglist_data *pgdat = gup_node(4);
	struct mm_struct *mm = mm_create(pgdat);
	struct race_arg args[4];
	int stop = 0;

	ASSERT(mm_mmap_anon(mm, BASE, 8 * PAGE_SIZE, true, false, true) == 0);
	for (int i = 0; i < 4; i++)
		args[i] = (struct race_arg){ mm, &stop, 0 };
	run_on_cpus(4, race_thread, args, sizeof(args[0]));
	EXPECT_EQ(MM_STAT(mm, poison_reads), 0);
	mm_destroy(mm);
	EXPECT_EQ(mm_verify(pgdat), 0);
	test_node_destroy(pgdat);
}

/* FOLL_LONGTERM moves MOVABLE pages to UNMOVABLE copies; the data survives. */
static void gup_host_longterm_migrates(void)
{
	struct pglist_data *pgdat = gup_node(1);
	struct mm_struct *mm = mm_create(pgdat);
	struct page *pages[16], *p;

	ASSERT(mm_mmap_anon(mm, BASE, 16 * PAGE_SIZE, true, false, true) == 0);
	for (int i = 0; i < 16; i++) {
		ASSERT(get_user_pages_fast(mm, BASE + i * PAGE_SIZE, 1, 0, &p) == 1);
		memset(page_address(p), i + 1, PAGE_SIZE);
		put_user_pages(&p, 1);
	}
	EXPECT_EQ(pin_user_pages_fast(mm, BASE, 16, FOLL_LONGTERM, pages), 16);
	for (int i = 0; i < 16; i++) {
		EXPECT(pages[i]->mt != MIGRATE_MOVABLE);
		EXPECT_EQ(((u8 *)page_address(pages[i]))[100], i + 1);
	}
	unpin_user_pages(pages, 16);
	mm_destroy(mm);
	EXPECT_EQ(mm_verify(pgdat), 0);
	test_node_destroy(pgdat);
}

const struct host_test gup_tests[] = {
	{ "gup_host_pin_unpin_balance", gup_host_pin_unpin_balance, false },
	{ "gup_host_has_pinned_written_once", gup_host_has_pinned_written_once, true },
	{ "gup_host_unmap_vs_fast_walk", gup_host_unmap_vs_fast_walk, true },
	{ "gup_host_longterm_migrates", gup_host_longterm_migrates, false },
	{ NULL, NULL, false },
};

/* ---- --gup-bench: gup_test -a on real host threads ---- */

struct bench_arg {
	struct mm_struct *mm;
	u64 size;
	pthread_barrier_t *start;
	u64 get_ns;
};

static void *bench_thread(void *p)
{
	struct bench_arg *a = p;
	struct gup_test gt = { .cmd = PIN_FAST_BENCHMARK, .addr = BASE, .size = a->size,
			       .nr_pages_per_call = 1, .gup_flags = FOLL_WRITE };

	gt.pages = malloc((a->size >> PAGE_SHIFT) * sizeof(struct page *));
	pthread_barrier_wait(a->start);
	gup_test_run(a->mm, &gt);
	a->get_ns = gt.get_cycles;	/* arch_cycles() is CLOCK_MONOTONIC ns on the host */
	free(gt.pages);
	return NULL;
}

static double bench_mode(const char *mode, unsigned int threads, u64 size, double *rsd)
{
	struct pglist_data *pgdat = gup_node(threads);
	struct mm_struct *mm = mm_create(pgdat);
	struct bench_arg args[64];
	pthread_barrier_t start;
	double sum = 0, sq = 0;

	gup_set_has_pinned_mode(mode);
	mm_mmap_anon(mm, BASE, size, true, false, true);
	pthread_barrier_init(&start, NULL, threads);
	for (unsigned int i = 0; i < threads; i++)
		args[i] = (struct bench_arg){ mm, size, &start, 0 };
	run_on_cpus(threads, bench_thread, args, sizeof(args[0]));
	for (unsigned int i = 0; i < threads; i++) {
		printf("  %s thread %u: PIN_FAST_BENCHMARK: Time: get:%llu us\n", mode, i,
		       (unsigned long long)(args[i].get_ns / 1000));
		sum += (double)args[i].get_ns / 1000;
		sq += ((double)args[i].get_ns / 1000) * ((double)args[i].get_ns / 1000);
	}
	*rsd = threads > 1 ? 100.0 * sqrt((sq - sum * sum / threads) / (threads - 1)) /
		(sum / threads) : 0;
	printf("  %s: flag writes %llu\n", mode, (unsigned long long)MM_STAT(mm, flag_writes));
	gup_set_has_pinned_mode("once");
	mm_destroy(mm);
	test_node_destroy(pgdat);
	pthread_barrier_destroy(&start);
	return sum / threads;
}

/* usage: mmtest --gup-bench [threads] [size_mb] [rounds] */
int gup_host_bench(int argc, char **argv)
{
	unsigned int threads = argc > 0 ? (unsigned int)atoi(argv[0]) : 2;
	u64 size = (argc > 1 ? (u64)atoi(argv[1]) : 64) << 20;
	int rounds = argc > 2 ? atoi(argv[2]) : 5;
	double always = 0, once = 0, rsd;

	printf("gup host bench: -a -m %llu -j %u, %d rounds per mode\n",
	       (unsigned long long)(size >> 20), threads, rounds);
	for (int r = 0; r < rounds; r++) {
		double a = bench_mode("always", threads, size, &rsd);
		printf("always round %d: mean get %.0f us (+- %.2f%%)\n", r, a, rsd);
		double o = bench_mode("once", threads, size, &rsd);
		printf("once   round %d: mean get %.0f us (+- %.2f%%)\n", r, o, rsd);
		always += a;
		once += o;
	}
	printf("gup host bench: always %.0f us, once %.0f us, always/once %.2fx\n",
	       always / rounds, once / rounds, always / once);
	return 0;
}
