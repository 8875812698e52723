/*
 * Host tests of pinning (mm/gup.c, mm/vm.c) with pthreads as CPUs, and `--gup-bench`: the
 * gup_test loop on real host cores, where the has-pinned cache-line bouncing is real.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>
#include <unistd.h>
#include "tests/host/harness.h"
#include "mm/gup.h"
#include "tests/lab/gup_test.h"
#include "tests/kernel/gup_check.h"

#define BASE (1ull << 32)
#define GUP_TEST_CPUS 8

static struct pglist_data *gup_node(unsigned int cpus)
{
	const struct mem_region map[] = { { 16 * MiB, 256 * MiB, MEM_USABLE } };

	return test_node_create(map, ARRAY_SIZE(map), cpus);
}

/* FOLL_LONGTERM moves MOVABLE pages to UNMOVABLE copies; the data survives. */
static void gup_host_longterm_migrates(struct ktest *t)
{
	struct pglist_data *pgdat = gup_node(1);
	struct mm_struct *mm = mm_create(pgdat);
	struct page *pages[16], *p;

	KT_ASSERT_TRUE(t, mm_mmap_anon(mm, BASE, 16 * PAGE_SIZE, true, false, true) == 0);
	for (int i = 0; i < 16; i++) {
		KT_ASSERT_TRUE(t, get_user_pages_fast(mm, BASE + i * PAGE_SIZE, 1, 0, &p) == 1);
		memset(page_address(p), i + 1, PAGE_SIZE);
		put_user_pages(&p, 1);
	}
	KT_EXPECT_EQ(t, pin_user_pages_fast(mm, BASE, 16, FOLL_LONGTERM, pages), 16);
	for (int i = 0; i < 16; i++) {
		KT_EXPECT_TRUE(t, pages[i]->mt != MIGRATE_MOVABLE);
		KT_EXPECT_EQ(t, ((u8 *)page_address(pages[i]))[100], i + 1);
	}
	unpin_user_pages(pages, 16);
	mm_destroy(mm);
	KT_EXPECT_EQ(t, mm_verify(pgdat), 0);
	test_node_destroy(pgdat);
}

#define HELD_PAGES 80

struct longterm_arg {
	struct mm_struct *mm;
	struct page **pages;
	long ret;
	int done;
};

static void *longterm_pin_thread(void *p)
{
	struct longterm_arg *a = p;

	host_cpu_id = 0;
	a->ret = pin_user_pages(a->mm, BASE, HELD_PAGES, FOLL_LONGTERM, a->pages);
	smp_store_release(&a->done, 1);
	return NULL;
}

/* pin_user_pages() in a thread: its result, or the process ends if it is still running
 * after 10 s (it would hold mm->lock forever, so nothing after it could run). */
static long longterm_pin_or_die(struct ktest *t, struct mm_struct *mm, struct page **pages)
{
	struct longterm_arg a = { mm, pages, 0, 0 };
	u64 deadline = arch_cycles() + 10000000000ull;
	pthread_t tid;

	pthread_create(&tid, NULL, longterm_pin_thread, &a);
	while (!smp_load_acquire(&a.done)) {
		if (arch_cycles() > deadline) {
			KT_FAIL(t, "pin_user_pages(FOLL_LONGTERM) of %d held "
				  "pages still running after 10 s (livelock under mm->lock)",
				  HELD_PAGES);
			printf("not ok gup_host_longterm_held_pages_busy (stopping: mm->lock is held)\n");
			exit(1);
		}
		usleep(1000);
	}
	pthread_join(tid, NULL);
	return a.ret;
}

/*
 * 80 MOVABLE pages, each held by a FOLL_GET reference, cannot move: a FOLL_LONGTERM pin of
 * them ends (bounded retries, not a livelock over the same 64) with -EBUSY, pins nothing,
 * leaves every page where it was and leaks no copy. Once released, the same pin moves all.
 */
static void gup_host_longterm_held_pages_busy(struct ktest *t)
{
	struct pglist_data *pgdat = gup_node(1);
	unsigned long free_before = node_free_pages(pgdat);
	struct mm_struct *mm = mm_create(pgdat);
	struct page *held[HELD_PAGES], *pinned[HELD_PAGES];
	struct gup_totals a, b;
	unsigned long free_mapped;

	KT_ASSERT_TRUE(t, mm_mmap_anon(mm, BASE, HELD_PAGES * PAGE_SIZE, true, false, true) == 0);
	KT_ASSERT_TRUE(t, get_user_pages_fast(mm, BASE, HELD_PAGES, 0, held) == HELD_PAGES);
	free_mapped = node_free_pages(pgdat);
	gup_read_totals(&a);
	KT_EXPECT_EQ(t, longterm_pin_or_die(t, mm, pinned), -EBUSY);
	gup_read_totals(&b);
	KT_EXPECT_EQ(t, b.pins_acquired - a.pins_acquired, 0);
	KT_EXPECT_EQ(t, b.longterm_migrated - a.longterm_migrated, 0);
	for (int i = 0; i < HELD_PAGES; i++) {
		KT_EXPECT_EQ(t, page_count(held[i]), 2);	/* the mapping's and ours */
		KT_EXPECT_TRUE(t, held[i]->mt == MIGRATE_MOVABLE);
	}
	KT_EXPECT_EQ(t, node_free_pages(pgdat), free_mapped);	/* no copy leaked */
	put_user_pages(held, HELD_PAGES);
	KT_EXPECT_EQ(t, longterm_pin_or_die(t, mm, pinned), HELD_PAGES);
	gup_read_totals(&a);
	KT_EXPECT_EQ(t, a.longterm_migrated - b.longterm_migrated, HELD_PAGES);
	unpin_user_pages(pinned, HELD_PAGES);
	KT_EXPECT_EQ(t, mapped_pages(mm, BASE, HELD_PAGES), HELD_PAGES);
	mm_destroy(mm);
	KT_EXPECT_EQ(t, node_free_pages(pgdat), free_before);
	KT_EXPECT_EQ(t, mm_verify(pgdat), 0);
	test_node_destroy(pgdat);
}

/*
 * 2^21 pins of one order-0 page would take its 32-bit count past INT_MAX (1 + 2^21 x 1024):
 * the last one is refused with -ENOMEM and a warning; all the others unpin cleanly.
 */
static void gup_host_pin_count_overflow(struct ktest *t)
{
	struct pglist_data *pgdat = gup_node(1);
	unsigned long free_before = node_free_pages(pgdat), warnings = taint_count(TAINT_WARN);
	struct mm_struct *mm = mm_create(pgdat);
	const long max_pins = (long)(0x7fffffff - 1) / GUP_PIN_COUNTING_BIAS;	/* 2^21 - 1 */
	struct page *page = NULL, *p;
	long pinned = 0;

	KT_ASSERT_TRUE(t, mm_mmap_anon(mm, BASE, PAGE_SIZE, true, false, true) == 0);
	while (pinned < max_pins && pin_user_pages_fast(mm, BASE, 1, 0, &p) == 1) {
		page = p;
		pinned++;
	}
	KT_EXPECT_EQ(t, pinned, max_pins);
	KT_EXPECT_EQ(t, taint_count(TAINT_WARN), warnings);
	ktest_expect_taint(TAINT_WARN);		/* the overflow, on purpose */
	KT_EXPECT_EQ(t, pin_user_pages_fast(mm, BASE, 1, 0, &p), -ENOMEM);
	/* the fast path refuses, then the slow path */
	KT_EXPECT_EQ(t, taint_count(TAINT_WARN) - warnings, 2);
	KT_EXPECT_TRUE(t, host_console_contains("page_ref_would_overflow"));
	KT_ASSERT_TRUE(t, page);
	KT_EXPECT_EQ(t, page_count(page), 1 + max_pins * GUP_PIN_COUNTING_BIAS);
	while (pinned--)
		unpin_user_page(page);
	KT_EXPECT_EQ(t, page_count(page), 1);
	KT_EXPECT_TRUE(t, !page_maybe_dma_pinned(page));
	mm_destroy(mm);
	KT_EXPECT_EQ(t, node_free_pages(pgdat), free_before);
	KT_EXPECT_EQ(t, pgdat->bad_pages, 0);
	test_node_destroy(pgdat);
}

#define VMA_ROUNDS 2000

struct vma_race {
	struct mm_struct *mm;
	int go, done;			/* round CPU 1 may start; round it finished */
	int changing;			/* CPU 1 is inside its munmap or mmap */
	unsigned long lookups, overlapped, errors;
};

/* CPU 0: re-create our VMA (so it is last in the table), let CPU 1 go, and fault it until
 * CPU 1 is done: each fault looks the VMA up without a lock. */
static void vma_race_faulter(struct vma_race *r)
{
	for (int round = 1; round <= VMA_ROUNDS; round++) {
		mm_munmap(r->mm, BASE, PAGE_SIZE);
		if (mm_mmap_anon(r->mm, BASE, PAGE_SIZE, true, false, false))
			__atomic_fetch_add(&r->errors, 1, __ATOMIC_RELAXED);
		smp_store_release(&r->go, round);
		for (unsigned int i = 0; smp_load_acquire(&r->done) < round; i++) {
			bool before = smp_load_acquire(&r->changing);

			if (handle_mm_fault(r->mm, BASE))
				__atomic_fetch_add(&r->errors, 1, __ATOMIC_RELAXED);
			r->lookups++;
			r->overlapped += before && smp_load_acquire(&r->changing);
			if (i % 16 == 15)
				arch_cpu_relax();	/* takes CPU 1's shootdown; lets it run */
		}
	}
}

/* CPU 1, each round: unmap a VMA of its own, which moves the last VMA (CPU 0's) into its
 * slot, and map it again. */
static void *vma_race_cpu(void *p)
{
	struct vma_race *r = *(struct vma_race **)p;
	u64 addr = BASE + 2 * MiB;

	if (arch_cpu_id() == 0) {
		vma_race_faulter(r);
		return NULL;
	}
	for (int round = 1; round <= VMA_ROUNDS; round++) {
		while (smp_load_acquire(&r->go) < round)
			arch_cpu_relax();
		smp_store_release(&r->changing, 1);
		mm_munmap(r->mm, addr, PAGE_SIZE);
		if (mm_mmap_anon(r->mm, addr, PAGE_SIZE, true, false, false))
			__atomic_fetch_add(&r->errors, 1, __ATOMIC_RELAXED);
		smp_store_release(&r->changing, 0);
		smp_store_release(&r->done, round);
	}
	return NULL;
}

/*
 * CPU 0 faults its VMA while CPU 1's munmaps move it around the VMA table, 2000 rounds:
 * every lookup must still find it (no -EFAULT). The window: lookups made while CPU 1 was
 * inside munmap or mmap. The table is read with mmap_lock held for read, and changed with
 * it held for write; in the TSan build, plain reads and writes of the table without it
 * (the lockless lookup before the sequence count, or any change made without the lock)
 * are reported as a race.
 */
static void gup_host_fault_finds_vma_being_moved(struct ktest *t)
{
	struct pglist_data *pgdat = gup_node(2);
	unsigned long free_before = node_free_pages(pgdat);
	struct mm_struct *mm = mm_create(pgdat);
	struct vma_race r = { .mm = mm }, *args[2] = { &r, &r };

	KT_ASSERT_TRUE(t, mm_mmap_anon(mm, BASE + 2 * MiB, PAGE_SIZE, true, false, false) == 0);
	run_on_cpus(2, vma_race_cpu, args, sizeof(args[0]));
	printf("  %lu VMA lookups, %lu while the other CPU was changing the table\n", r.lookups,
	       r.overlapped);
	KT_EXPECT_TRUE(t, r.overlapped > 0);	/* else the race was not exercised */
	KT_EXPECT_EQ(t, r.errors, 0);
	mm_destroy(mm);
	KT_EXPECT_EQ(t, node_free_pages(pgdat), free_before);
	KT_EXPECT_EQ(t, mm_verify(pgdat), 0);
	test_node_destroy(pgdat);
}

/* FOLL_LONGTERM over a page someone else has pinned: that page cannot move, so migration
 * must leave it mapped where it is (the earlier pin keeps seeing what the mm sees), and the
 * long-term pin of it fails instead of landing on a copy. The other pages still move. */
static void pin_user_pages_longterm_leaves_pinned_page(struct ktest *t)
{
	struct pglist_data *pgdat = gup_node(1);
	struct mm_struct *mm = mm_create(pgdat);
	struct page *held, *now, *pages[4];
	long n;

	KT_ASSERT_TRUE(t, mm_mmap_anon(mm, BASE, 4 * PAGE_SIZE, true, false, true) == 0);
	KT_ASSERT_TRUE(t, pin_user_pages_fast(mm, BASE, 1, FOLL_WRITE, &held) == 1);
	KT_EXPECT_EQ(t, held->mt, MIGRATE_MOVABLE);
	memset(page_address(held), 0x5a, PAGE_SIZE);
	n = pin_user_pages(mm, BASE, 4, FOLL_LONGTERM | FOLL_WRITE, pages);
	KT_EXPECT_TRUE(t, n <= 0);		/* the first page cannot be long-term pinned */
	if (n > 0)
		unpin_user_pages(pages, (unsigned long)n);
	KT_ASSERT_TRUE(t, get_user_pages_fast(mm, BASE, 1, 0, &now) == 1);
	/* still mapped: the pin and the mm see the same page */
	KT_EXPECT_TRUE(t, now == held);
	KT_EXPECT_EQ(t, ((u8 *)page_address(now))[7], 0x5a);
	put_user_pages(&now, 1);
	KT_EXPECT_EQ(t, pin_user_pages(mm, BASE + PAGE_SIZE, 3, FOLL_LONGTERM, pages), 3);
	for (int i = 0; i < 3; i++)
		KT_EXPECT_TRUE(t, pages[i]->mt != MIGRATE_MOVABLE);
	unpin_user_pages(pages, 3);
	unpin_user_page(held);
	mm_destroy(mm);
	KT_EXPECT_EQ(t, mm_verify(pgdat), 0);
	test_node_destroy(pgdat);
}

/*
 * FOLL_GET and FOLL_PIN are exclusive (mm/gup.h): pin_user_pages_fast() given FOLL_GET is a
 * caller bug, refused with one warning; get_user_pages_fast() given FOLL_PIN is refused
 * quietly. Neither takes a reference or counts a pin.
 */
static void pin_user_pages_fast_foll_get_refused(struct ktest *t)
{
	struct pglist_data *pgdat = gup_node(1);
	struct mm_struct *mm = mm_create(pgdat);
	unsigned long warns = taint_count(TAINT_WARN);
	struct gup_totals a, b;
	struct page *page, *p = NULL;

	KT_ASSERT_TRUE(t, mm_mmap_anon(mm, BASE, PAGE_SIZE, true, false, true) == 0);
	KT_ASSERT_TRUE(t, get_user_pages_fast(mm, BASE, 1, 0, &page) == 1);
	put_user_pages(&page, 1);
	gup_read_totals(&a);
	ktest_expect_taint(TAINT_WARN);		/* the FOLL_GET pin, on purpose */
	KT_EXPECT_EQ(t, pin_user_pages_fast(mm, BASE, 1, FOLL_GET, &p), -EINVAL);
	KT_EXPECT_EQ(t, get_user_pages_fast(mm, BASE, 1, FOLL_PIN, &p), -EINVAL);
	KT_EXPECT_EQ(t, taint_count(TAINT_WARN) - warns, 1);
	gup_read_totals(&b);
	KT_EXPECT_EQ(t, b.pins_acquired - a.pins_acquired, 0);
	KT_EXPECT_EQ(t, page_count(page), 1);	/* the mapping's reference alone */
	mm_destroy(mm);
	KT_EXPECT_EQ(t, mm_verify(pgdat), 0);
	test_node_destroy(pgdat);
}

static const struct ktest_case gup_cases[] = {
	KTEST_CASE(gup_host_longterm_migrates),
	KTEST_CASE(gup_host_longterm_held_pages_busy),
	KTEST_CASE_CONCURRENT(gup_host_fault_finds_vma_being_moved),
	KTEST_CASE(gup_host_pin_count_overflow),
	KTEST_CASE(pin_user_pages_longterm_leaves_pinned_page),
	KTEST_CASE(pin_user_pages_fast_foll_get_refused),
};
KTEST_SUITE(host_gup, gup_cases);

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
	gup_set_has_pinned_mode("if-clear");
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
		double a = bench_mode("every-pin", threads, size, &rsd);
		printf("every-pin round %d: mean get %.0f us (+- %.2f%%)\n", r, a, rsd);
		double o = bench_mode("if-clear", threads, size, &rsd);
		printf("if-clear  round %d: mean get %.0f us (+- %.2f%%)\n", r, o, rsd);
		always += a;
		once += o;
	}
	printf("gup host bench: every-pin %.0f us, if-clear %.0f us, every-pin/if-clear %.2fx\n",
	       always / rounds, once / rounds, always / once);
	return 0;
}
