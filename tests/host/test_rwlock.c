/*
 * Host tests of the reader/writer spinlock (kernel/rwlock.c), pthreads as CPUs: readers
 * share it, a writer excludes everyone, a writer gets in while readers keep it busy, and
 * lockdep sees its misuse. Its user, mmap_lock, is tested in gup_private
 * (handle_mm_fault_vs_munmap_*).
 */
#include <stdio.h>
#include <string.h>
#include "tests/host/harness.h"
#include "kernel/rwlock.h"
#include "kernel/lockdep.h"
#include "mm/gup.h"

#define RW_CPUS 8
#define RW_LOOPS 3000
#define RW_WRITES 50
#define RW_STARVE_SECONDS 5

struct rw_test {
	rwlock_t lock;
	int readers, writers;	/* inside now (atomic) */
	u64 value;		/* plain: written by writers only, under the lock */
	int max_readers;	/* most readers inside at once: the lock was shared */
	u64 bad;		/* a reader beside a writer, two writers, a value that moved */
	u64 writes, reads;
	int writer_done;
	bool starved;
	u64 deadline;
};

static void rw_note_readers(struct rw_test *r, int n)
{
	int max = __atomic_load_n(&r->max_readers, __ATOMIC_RELAXED);

	while (n > max && !__atomic_compare_exchange_n(&r->max_readers, &max, n, false,
						       __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

/* One read section: no writer inside, and the value does not move under us. */
static void rw_read_section(struct rw_test *r, unsigned int us)
{
	u64 v;

	read_lock(&r->lock);
	rw_note_readers(r, __atomic_add_fetch(&r->readers, 1, __ATOMIC_ACQ_REL));
	v = r->value;
	if (__atomic_load_n(&r->writers, __ATOMIC_ACQUIRE))
		__atomic_fetch_add(&r->bad, 1, __ATOMIC_RELAXED);
	host_race_delay(us);
	if (r->value != v)
		__atomic_fetch_add(&r->bad, 1, __ATOMIC_RELAXED);
	__atomic_fetch_sub(&r->readers, 1, __ATOMIC_ACQ_REL);
	__atomic_fetch_add(&r->reads, 1, __ATOMIC_RELAXED);
	read_unlock(&r->lock);
}

/* One write section: alone, no reader inside. */
static void rw_write_section(struct rw_test *r)
{
	write_lock(&r->lock);
	if (__atomic_add_fetch(&r->writers, 1, __ATOMIC_ACQ_REL) != 1 ||
	    __atomic_load_n(&r->readers, __ATOMIC_ACQUIRE))
		__atomic_fetch_add(&r->bad, 1, __ATOMIC_RELAXED);
	r->value++;
	host_race_delay(2);
	__atomic_fetch_sub(&r->writers, 1, __ATOMIC_ACQ_REL);
	r->writes++;
	write_unlock(&r->lock);
}

static void *rw_share_cpu(void *p)
{
	struct rw_test *r = *(struct rw_test **)p;
	unsigned int loops = host_pct_on() ? 20 : RW_LOOPS;

	for (unsigned int i = 0; i < loops; i++) {
		if ((i + arch_cpu_id()) % 4 == 0)
			rw_write_section(r);
		else
			rw_read_section(r, 5);
	}
	return NULL;
}

/*
 * 8 CPUs, each a quarter writes and three quarters reads: two readers were inside at once
 * (the lock is shared: the window), and never a reader beside a writer, two writers at once,
 * or a value that a writer moved under a reader; every write counted (the plain value and
 * counter are written only under the lock: TSan sees any write that is not).
 */
static void rwlock_readers_share_writer_excludes(struct ktest *t)
{
	static struct rw_test r;
	struct rw_test *args[RW_CPUS];

	memset(&r, 0, sizeof(r));
	rwlock_init(&r.lock, "test_rwlock");
	for (int i = 0; i < RW_CPUS; i++)
		args[i] = &r;
	run_on_cpus(RW_CPUS, rw_share_cpu, args, sizeof(args[0]));
	printf("  %llu reads, %llu writes; at most %d readers inside at once\n",
	       (unsigned long long)r.reads, (unsigned long long)r.writes, r.max_readers);
	KT_EXPECT_EQ(t, r.bad, 0);
	KT_EXPECT_EQ(t, r.value, r.writes);
	KT_EXPECT_EQ(t, r.lock.cnts, 0);
	KT_EXPECT_GE(t, r.max_readers, 2);	/* else sharing was not exercised */
}

/* CPU 0 writes once the readers overlap; the others read until it is done (or give up). */
static void *rw_starve_cpu(void *p)
{
	struct rw_test *r = *(struct rw_test **)p;

	if (arch_cpu_id() == 0) {
		while (__atomic_load_n(&r->max_readers, __ATOMIC_ACQUIRE) < 2 &&
		       arch_cycles() < r->deadline)
			arch_cpu_relax();	/* the readers overlap before we come */
		for (int i = 0; i < RW_WRITES; i++)
			rw_write_section(r);
		smp_store_release(&r->writer_done, 1);
		return NULL;
	}
	for (unsigned int i = 0; !smp_load_acquire(&r->writer_done); i++) {
		if (host_pct_on() ? i == 30 : arch_cycles() > r->deadline) {
			WRITE_ONCE(r->starved, !host_pct_on());
			break;
		}
		rw_read_section(r, 20);
	}
	return NULL;
}

/*
 * CPU 0 writes RW_WRITES times while 7 readers keep the lock read-held, overlapping, without
 * a pause: writers go first, so the readers inside drain and the writer gets in each time.
 * A readers-first lock (a writer waits for the count to reach 0) starves it: the readers
 * give up after RW_STARVE_SECONDS (instead of hanging the run) and say so. Under --pct
 * (where a low-priority writer waits for the scheduler, not the lock) each reader stops
 * after 30 sections, and the test checks only that the lock excluded and let through.
 */
static void rwlock_writer_not_starved_by_readers(struct ktest *t)
{
	static struct rw_test r;
	struct rw_test *args[RW_CPUS];

	memset(&r, 0, sizeof(r));
	rwlock_init(&r.lock, "test_rwlock");
	r.deadline = arch_cycles() + (u64)RW_STARVE_SECONDS * 1000000000ull;
	for (int i = 0; i < RW_CPUS; i++)
		args[i] = &r;
	run_on_cpus(RW_CPUS, rw_starve_cpu, args, sizeof(args[0]));
	printf("  %llu writes among %llu reads; at most %d readers inside at once%s\n",
	       (unsigned long long)r.writes, (unsigned long long)r.reads, r.max_readers,
	       r.starved ? "; the writer was STARVED (readers gave up)" : "");
	KT_EXPECT_FALSE(t, r.starved);
	KT_EXPECT_EQ(t, r.writes, RW_WRITES);
	KT_EXPECT_EQ(t, r.bad, 0);
	KT_EXPECT_GE(t, r.max_readers, 2);	/* else the readers never kept it busy */
}

/* A CPU that takes a read it holds is reported as recursion: with a writer waiting between
 * the two (writers go first), the second read would never come. */
static void rwlock_read_recursion_reported(struct ktest *t)
{
	KT_SKIP_UNLESS_DEBUG_VM(t, "no lock validator (CONFIG_LOCKDEP)");
	static rwlock_t rw;
	struct lockdep_expect e;

	rwlock_init(&rw, "test_rwlock_rec");
	lockdep_expect_begin(&e);
	read_lock(&rw);
	read_lock(&rw);		/* no writer here, so it does not hang: the report is the point */
	read_unlock(&rw);
	read_unlock(&rw);
	KT_EXPECT_EQ(t, lockdep_expect_end(&e), LOCKDEP_RECURSION);
	KT_EXPECT_EQ(t, rw.cnts, 0);
}

/* The order is mmap_lock -> mm->lock (mm/mmzone.h's tree): a gup slow path teaches lockdep
 * that, then taking mmap_lock inside mm->lock is reported as a possible deadlock. */
static void mmap_lock_inside_mm_lock_reported(struct ktest *t)
{
	KT_SKIP_UNLESS_DEBUG_VM(t, "no lock validator (CONFIG_LOCKDEP)");
	const struct mem_region map[] = { { 16 * MiB, 64 * MiB, MEM_USABLE } };
	struct pglist_data *pgdat = test_node_create(map, ARRAY_SIZE(map), 1);
	struct mm_struct *mm = pgdat ? mm_create(pgdat) : NULL;
	struct lockdep_expect e;
	struct page *p;

	KT_ASSERT_TRUE(t, mm);
	KT_ASSERT_EQ(t, mm_mmap_anon(mm, 1ull << 32, PAGE_SIZE, true, false, false), 0);
	lockdep_expect_begin(&e);
	KT_EXPECT_EQ(t, pin_user_pages(mm, 1ull << 32, 1, 0, &p), 1);	/* mmap_lock, mm->lock */
	spin_lock(&mm->lock);
	read_lock(&mm->mmap_lock);
	read_unlock(&mm->mmap_lock);
	spin_unlock(&mm->lock);
	KT_EXPECT_EQ(t, lockdep_expect_end(&e), LOCKDEP_CIRCULAR);
	KT_EXPECT_TRUE(t, !strcmp(e.first, "&mm->lock") && !strcmp(e.second, "&mm->mmap_lock"));
	unpin_user_page(p);
	mm_destroy(mm);
	KT_EXPECT_EQ(t, mm_verify(pgdat), 0);
	test_node_destroy(pgdat);
}

static const struct ktest_case rwlock_cases[] = {
	KTEST_CASE(rwlock_read_recursion_reported),
	KTEST_CASE(mmap_lock_inside_mm_lock_reported),
	KTEST_CASE_CONCURRENT(rwlock_readers_share_writer_excludes),
	KTEST_CASE_CONCURRENT(rwlock_writer_not_starved_by_readers),
};
KTEST_SUITE(host_rwlock, rwlock_cases);
