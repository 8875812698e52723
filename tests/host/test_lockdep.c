/*
 * lockdep on the host: the validator (kernel/lockdep.c) watches every spinlock of the mm
 * code under pthreads too, so a host test fails when it sees a pattern that can deadlock.
 * These tests plant two such patterns on locks of their own, in expect scopes, across
 * threads that never actually wait for each other, and check what was reported; one plants
 * mm's own lock tree (mm/mmzone.h) after the mm code has taken its locks.
 */
#include "tests/host/harness.h"
#include "kernel/lockdep.h"
#include "kernel/smp.h"
#include "mm/mm_test.h"
#include "mm/gup.h"
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static spinlock_t lock_a, lock_b, lock_irq;
static int step;	/* sequences the two threads: nobody ever spins on a held lock */

static void wait_step(int n)
{
	while (smp_load_acquire(&step) < n)
		arch_cpu_relax();	/* also takes this CPU's simulated interrupts */
}

static void next_step(void)
{
	__atomic_fetch_add(&step, 1, __ATOMIC_RELEASE);
}

/* CPU 0 takes A then B; afterwards CPU 1 takes B then A. */
static void *order_cpu(void *arg)
{
	spinlock_t *first = arch_cpu_id() ? &lock_b : &lock_a;
	spinlock_t *second = arch_cpu_id() ? &lock_a : &lock_b;

	wait_step((int)arch_cpu_id());
	spin_lock(first);
	spin_lock(second);
	spin_unlock(second);
	spin_unlock(first);
	next_step();
	return NULL;
}

/* Two CPUs, opposite orders, at different times: no deadlock happens, lockdep reports the
 * cycle when CPU 1 closes it. */
static void lockdep_host_order_inversion_reported(struct ktest *t)
{
	struct lockdep_expect e;

	spin_lock_init(&lock_a, "host_a", 0);
	spin_lock_init(&lock_b, "host_b", 0);
	step = 0;
	lockdep_expect_begin(&e);
	lockdep_expect_cpu(&e, 1);	/* CPU 1 closes the cycle */
	run_on_cpus(2, order_cpu, NULL, 0);
	KT_EXPECT_EQ(t, lockdep_expect_end(&e), LOCKDEP_CIRCULAR);
	KT_EXPECT_TRUE(t, !strcmp(e.first, "&lock_b") && !strcmp(e.second, "&lock_a"));
	KT_EXPECT_TRUE(t, host_console_contains("possible circular locking dependency"));
}

/*
 * In a child process (a real report turns the validator off for good): a scope opened on
 * CPU 0, CPU 1 not named, CPU 1 closes a cycle. Returns a bit per thing not as expected:
 * the scope captured it (1), it was not counted (2), the validator stayed on (4), it was not
 * printed as a real report (8).
 */
static int other_cpu_report_in_child(void)
{
	unsigned long reports = lockdep_report_count();
	struct lockdep_expect e;
	enum lockdep_rule rule;

	spin_lock_init(&lock_a, "host_a", 0);
	spin_lock_init(&lock_b, "host_b", 0);
	step = 0;
	lockdep_expect_begin(&e);
	run_on_cpus(2, order_cpu, NULL, 0);
	rule = lockdep_expect_end(&e);
	return (rule != LOCKDEP_NONE) | (lockdep_report_count() != reports + 1) << 1 |
	       lockdep_enabled() << 2 |
	       !host_console_contains("turning off the locking correctness validator") << 3;
}

/*
 * An expect scope takes the reports of the CPU that opened it and of the CPUs it names, not
 * those of any CPU that happens to report while it is open: a real deadlock pattern on
 * another CPU must be counted, printed as a real report, and turn the validator off. Before,
 * the scope captured it (the test that held it open could even pass on it) and it went
 * unreported.
 */
static void lockdep_expect_scope_leaves_other_cpus_reports(struct ktest *t)
{
	int status = -1;
	pid_t pid = fork();

	KT_ASSERT_TRUE(t, pid >= 0);
	if (pid == 0)
		_exit(other_cpu_report_in_child());
	KT_ASSERT_EQ(t, waitpid(pid, &status, 0), pid);
	ktest_printf(t, "child: %s %d", WIFEXITED(status) ? "exit" : "signal",
		     WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
	KT_EXPECT_TRUE(t, WIFEXITED(status));
	KT_EXPECT_EQ(t, WEXITSTATUS(status) & 1, 0);	/* not captured */
	KT_EXPECT_EQ(t, WEXITSTATUS(status) & 2, 0);	/* counted */
	KT_EXPECT_EQ(t, WEXITSTATUS(status) & 4, 0);	/* the validator turned off */
	KT_EXPECT_EQ(t, WEXITSTATUS(status) & 8, 0);	/* printed as a real report */
}

static void irq_takes_lock(void *arg)
{
	struct ktest *t = arg;

	KT_EXPECT_TRUE(t, arch_in_irq() > 0);
	spin_lock(&lock_irq);
	spin_unlock(&lock_irq);
}

/* CPU 0 holds the lock with interrupts on, then idles with interrupts on; CPU 1 sends it a
 * cross-CPU call (its simulated interrupt) that takes the same lock. */
static void *irq_cpu(void *arg)
{
	struct ktest *t = *(struct ktest **)arg;

	if (arch_cpu_id() == 0) {
		spin_lock(&lock_irq);
		spin_unlock(&lock_irq);
		next_step();
		wait_step(2);
	} else {
		wait_step(1);
		KT_EXPECT_EQ(t, smp_call_function_single(0, irq_takes_lock, t, true), 0);
		next_step();
	}
	return NULL;
}

static void lockdep_host_irq_unsafe_use_reported(struct ktest *t)
{
	struct ktest *args[2] = { t, t };
	struct lockdep_expect e;

	spin_lock_init(&lock_irq, "host_irq", 0);
	step = 0;
	lockdep_expect_begin(&e);
	run_on_cpus(2, irq_cpu, args, sizeof(args[0]));
	KT_EXPECT_EQ(t, lockdep_expect_end(&e), LOCKDEP_INCONSISTENT);
	KT_EXPECT_TRUE(t, host_console_contains("inconsistent {HARDIRQ-ON-W} -> {IN-HARDIRQ-W} "
						"usage"));
}

/* A zeroed lock (never initialised: freed or wiped memory) is reported, not given a class
 * of its own; the validator stays on in the scope, and the lock still works. */
static void lockdep_host_uninitialised_lock_reported(struct ktest *t)
{
	static spinlock_t zeroed;
	struct lockdep_expect e;

	memset(&zeroed, 0, sizeof(zeroed));
	lockdep_expect_begin(&e);
	spin_lock(&zeroed);
	spin_unlock(&zeroed);
	KT_EXPECT_EQ(t, lockdep_expect_end(&e), LOCKDEP_UNINITIALISED);
	KT_EXPECT_TRUE(t, host_console_contains("taken without spin_lock_init()"));
	KT_EXPECT_TRUE(t, lockdep_enabled());
}

/* ---- bug (a)'s pattern: a GFP_ATOMIC allocation in an interrupt on an exhausted node ---- */

struct atomic_irq {
	struct ktest *t;
	struct pglist_data *pgdat;
	struct page **pages;		/* CPU 0's allocations */
	unsigned long held;
	struct page *got;		/* the interrupt's allocation */
	unsigned int in_irq;
	u64 drains, fails;		/* the node's drain rounds and failed allocations in it */
};

static void atomic_alloc_in_irq(void *arg)
{
	struct atomic_irq *a = arg;
	u64 drains = a->pgdat->drain_retries, fails = a->pgdat->alloc_fail;

	a->in_irq = arch_in_irq();
	a->got = alloc_pages_node(a->pgdat, GFP_ATOMIC | __GFP_NOWARN, 0);
	a->drains = a->pgdat->drain_retries - drains;
	a->fails = a->pgdat->alloc_fail - fails;
}

/* CPU 0 takes every page GFP_ATOMIC may have (its pcp lock trylocked with interrupts on:
 * HARDIRQ-ON-W), then idles with interrupts on; CPU 1 interrupts it with a call whose
 * GFP_ATOMIC allocation fails the watermarks and enters the slow path. */
static void *atomic_irq_cpu(void *arg)
{
	struct atomic_irq *a = *(struct atomic_irq **)arg;
	struct ktest *t = a->t;

	if (arch_cpu_id() == 0) {
		a->held = alloc_until_null(a->pgdat, GFP_ATOMIC | __GFP_NOWARN, 0, a->pages,
					   node_free_pages(a->pgdat));
		next_step();
		wait_step(2);
	} else {
		wait_step(1);
		KT_EXPECT_EQ(t, smp_call_function_single(0, atomic_alloc_in_irq, a, true), 0);
		next_step();
	}
	return NULL;
}

/*
 * Trylock model. The slow path of an allocation that cannot wait must not drain: a drain
 * takes this CPU's pcp lock with a spinning spin_lock, which in an interrupt deadlocks when
 * the interrupted code holds it. Here nobody holds it, so a drain would not hang: only the
 * validator can tell, by "inconsistent {HARDIRQ-ON-W} -> {IN-HARDIRQ-W}" on the pcp class.
 * Expects no report and a clean failure (NULL). The host twin of lockdep_mm's kernel case;
 * make mutate's drain-in-interrupt mutant is killed here.
 */
static void lockdep_host_atomic_alloc_in_irq_under_pressure(struct ktest *t)
{
	const struct mem_region map[] = { { 16 * MiB, 16 * MiB, MEM_USABLE } };
	struct pglist_data *pgdat = test_node_create_model(map, ARRAY_SIZE(map), 2,
							   PCP_LOCK_TRYLOCK);
	struct atomic_irq a = { .t = t, .pgdat = pgdat };
	struct atomic_irq *args[2] = { &a, &a };
	struct lockdep_expect e;

	KT_ASSERT_TRUE(t, pgdat);
	zone_pcp_update(pgdat, 2);
	a.pages = calloc(node_free_pages(pgdat), sizeof(*a.pages));
	step = 0;
	lockdep_expect_begin(&e);
	run_on_cpus(2, atomic_irq_cpu, args, sizeof(args[0]));
	KT_EXPECT_EQ(t, lockdep_expect_end(&e), LOCKDEP_NONE);
	printk("held %lu pages; the interrupt's GFP_ATOMIC allocation %s, %llu drain rounds\n",
	       a.held, a.got ? "succeeded" : "failed", (unsigned long long)a.drains);
	KT_EXPECT_TRUE(t, a.held > 0);
	KT_EXPECT_TRUE(t, a.in_irq > 0);
	KT_EXPECT_TRUE(t, a.got == NULL);
	KT_EXPECT_EQ(t, a.fails, 1);	/* it did reach the slow path, and gave up there */
	free_all(a.pages, a.held, 0);
	free(a.pages);
	drain_all_pages_machine(pgdat->machine);
	KT_EXPECT_EQ(t, mm_verify(pgdat), 0);
	test_node_destroy(pgdat);
}

#define TREE_BASE (1ull << 32)
#define TREE_PAGES 64

/*
 * Every mm path that nests locks, once, on a one-CPU trylock instance: faults (mmap_lock),
 * a long-term pin (mmap_lock, mm->lock, migration and its allocations), allocations and
 * frees that refill and spill (pcp lock, zone->lock), a drain of every CPU (pcp_drain_lock),
 * zone_pcp_disable/enable/update (pcp_batch_high_lock), munmap (mmap_lock, mm->lock). Checks
 * that each of them ran.
 */
static void mm_lock_paths(struct ktest *t, struct pglist_data *pgdat, struct mm_struct *mm)
{
	struct zone *zone = &pgdat->node_zones[ZONE_DMA32];
	static struct page *pages[4000];
	struct gup_totals a, b;
	struct pcp_stats st;
	unsigned long n;

	gup_read_totals(&a);
	KT_ASSERT_EQ(t, mm_mmap_anon(mm, TREE_BASE, TREE_PAGES * PAGE_SIZE, true, false, true), 0);
	KT_ASSERT_EQ(t, pin_user_pages(mm, TREE_BASE, TREE_PAGES, FOLL_LONGTERM, pages), TREE_PAGES);
	unpin_user_pages(pages, TREE_PAGES);
	gup_read_totals(&b);
	KT_EXPECT_EQ(t, b.longterm_migrated - a.longterm_migrated, TREE_PAGES);
	n = alloc_until_null(pgdat, GFP_KERNEL, 0, pages, ARRAY_SIZE(pages));
	free_all(pages, n, 0);
	drain_all_pages_machine(pgdat->machine);
	zone_pcp_disable(zone);
	zone_pcp_enable(zone);
	zone_pcp_update(pgdat, 1);
	mm_munmap(mm, TREE_BASE, TREE_PAGES * PAGE_SIZE);
	pcp_stats_sum(pgdat, -1, &st);
	printk("paths: %lu pages allocated, %llu refills, %llu spills, %llu pages drained\n", n,
	       (unsigned long long)st.refill, (unsigned long long)st.spill,
	       (unsigned long long)st.drained);
	KT_EXPECT_TRUE(t, st.refill > 0 && st.spill > 0 && st.drained > 0);
}

/*
 * The tree of mm/mmzone.h, outermost first, each lock taken while the ones above it are
 * held; pcp_batch_high_lock, a leaf (nothing is taken under it), under the innermost lock
 * that is held with interrupts on, a pcp lock: a leaf may be taken under anything. (Drains
 * take pcp_drain_lock with spin_lock, so its edges are checked like the others'.)
 */
static void take_lock_tree(struct mm_struct *mm, struct zone *zone)
{
	struct per_cpu_pages *pcp = &zone->pcp[arch_cpu_id()];
	unsigned long flags;

	read_lock(&mm->mmap_lock);
	spin_lock(&mm->lock);
	spin_lock(&zone->node->machine->pcp_drain_lock);
	spin_lock(&pcp->lock);
	spin_lock(&zone->pcp_batch_high_lock);
	spin_unlock(&zone->pcp_batch_high_lock);
	flags = spin_lock_irqsave(&zone->lock);
	spin_unlock_irqrestore(&zone->lock, flags);
	spin_unlock(&pcp->lock);
	spin_unlock(&zone->node->machine->pcp_drain_lock);
	spin_unlock(&mm->lock);
	read_unlock(&mm->mmap_lock);
}

/*
 * The lock order mm/mmzone.h writes down is the one the code keeps: after every mm path has
 * run (mm_lock_paths()), the test takes the tree's locks in the tree's order itself, in an
 * expect scope. A pair the code took the other way round (pcp_batch_high_lock held across a
 * drain, mm->lock before mmap_lock, a drain under a pcp lock) closes a cycle there: expects
 * no report.
 */
static void mm_locks_follow_the_lock_tree(struct ktest *t)
{
	const struct mem_region map[] = { { 16 * MiB, 32 * MiB, MEM_USABLE } };
	struct pglist_data *pgdat = test_node_create_model(map, ARRAY_SIZE(map), 1,
							   PCP_LOCK_TRYLOCK);
	struct lockdep_expect e;
	struct mm_struct *mm;

	KT_ASSERT_TRUE(t, pgdat);
	zone_pcp_update(pgdat, 1);
	mm = mm_create(pgdat);
	KT_ASSERT_TRUE(t, mm);
	mm_lock_paths(t, pgdat, mm);
	KT_ASSERT_TRUE(t, lockdep_enabled());	/* (no earlier report turned it off) */
	lockdep_expect_begin(&e);
	take_lock_tree(mm, &pgdat->node_zones[ZONE_DMA32]);
	KT_EXPECT_EQ(t, lockdep_expect_end(&e), LOCKDEP_NONE);
	mm_destroy(mm);
	drain_all_pages_machine(pgdat->machine);
	KT_EXPECT_EQ(t, mm_verify(pgdat), 0);
	test_node_destroy(pgdat);
}

#define FIRST_USE_CPUS 8
static spinlock_t first_use[FIRST_USE_CPUS] = {
	SPINLOCK_INIT("first_use0"), SPINLOCK_INIT("first_use1"), SPINLOCK_INIT("first_use2"),
	SPINLOCK_INIT("first_use3"), SPINLOCK_INIT("first_use4"), SPINLOCK_INIT("first_use5"),
	SPINLOCK_INIT("first_use6"), SPINLOCK_INIT("first_use7"),
};
static int first_use_ready;

/* Each CPU takes its own statically initialised lock for the first time, all at once. */
static void *first_use_cpu(void *arg)
{
	spinlock_t *l = &first_use[arch_cpu_id()];

	__atomic_fetch_add(&first_use_ready, 1, __ATOMIC_RELAXED);
	while (__atomic_load_n(&first_use_ready, __ATOMIC_RELAXED) < FIRST_USE_CPUS)
		arch_cpu_relax();
	spin_lock(l);
	spin_unlock(l);
	return NULL;
}

/*
 * A static lock gets its class at first use, under the validator's graph lock: 8 CPUs using
 * 8 new locks at once get 8 distinct classes (TSan checks the table is not raced on). Window:
 * the classes were new in this run (a second run in one process finds them known).
 */
static void lockdep_host_first_use_on_every_cpu_at_once(struct ktest *t)
{
	bool fresh = !first_use[0].dep_class;
	unsigned int distinct = 0;

	first_use_ready = 0;
	run_on_cpus(FIRST_USE_CPUS, first_use_cpu, NULL, 0);
	for (unsigned int i = 0; i < FIRST_USE_CPUS; i++) {
		bool unique = first_use[i].dep_class != 0;

		for (unsigned int j = 0; j < i; j++)
			unique &= first_use[j].dep_class != first_use[i].dep_class;
		distinct += unique;
	}
	KT_EXPECT_EQ(t, distinct, FIRST_USE_CPUS);
	if (!fresh)
		KT_SKIP(t, "no race: the classes were registered by an earlier run");
}

static const struct ktest_case lockdep_cases[] = {
	KTEST_CASE_CONCURRENT(lockdep_host_order_inversion_reported),
	KTEST_CASE_CONCURRENT(lockdep_host_irq_unsafe_use_reported),
	KTEST_CASE(lockdep_host_uninitialised_lock_reported),
	KTEST_CASE(lockdep_expect_scope_leaves_other_cpus_reports),
	KTEST_CASE_CONCURRENT(lockdep_host_atomic_alloc_in_irq_under_pressure),
	KTEST_CASE_CONCURRENT(lockdep_host_first_use_on_every_cpu_at_once),
	KTEST_CASE(mm_locks_follow_the_lock_tree),
};
/* The validator is a debug build's (CONFIG_LOCKDEP follows CONFIG_DEBUG_VM). */
static int lockdep_suite_init(struct ktest *t)
{
	KT_SKIP_UNLESS_DEBUG_VM(t, "no lock validator (CONFIG_LOCKDEP)");
	return 0;
}
KTEST_SUITE(host_lockdep, lockdep_cases, .init = lockdep_suite_init);
