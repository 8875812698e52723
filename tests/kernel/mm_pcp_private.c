/*
 * KTAP suite mm_pcp_private: per-CPU list races on a private instance (tests/lab/lab_platform.h),
 * one source for both platforms: built into the kernel (memory borrowed from its allocator,
 * its online CPUs) and into the host binaries (pthread CPUs, under ASan/UBSan and TSan).
 * The cases on the kernel's own nodes are in mm_pcp.c, the host-only ones in
 * tests/host/test_pcp.c.
 */
#include "tests/ktest/ktest.h"
#include "tests/lab/lab_platform.h"
#include "kernel/string.h"
#include "kernel/timer.h"
#include "tests/kernel/pcp_check.h"

#define REFILL_BLOCKS 16	/* 64 MiB: a batch of 3 (32 MiB gives 1: no list left to drain) */

static const enum pcp_lock_model models[] = { PCP_LOCK_IRQOFF, PCP_LOCK_IRQSAVE,
					      PCP_LOCK_TRYLOCK };

static bool saved_enabled;

/* The suite tests the lists themselves: on for each case, also in a pcp.enable=0 boot. */
static int mm_pcp_private_init(struct ktest *t)
{
	saved_enabled = pcp_enabled;
	pcp_enabled = true;
	return 0;
}

static void mm_pcp_private_exit(struct ktest *t)
{
	lab_node_exit(t);
	lab_set_lock_model(PCP_LOCK_TRYLOCK);
	pcp_enabled = saved_enabled;
}

/* ---- zone_pcp_disable() against a refill in flight (Linux 66eca1021a42) ---- */

struct refill_race {
	struct pglist_data *pgdat;
	struct zone *zone;	/* where cpu1's allocation refills from */
	int step;		/* atomic: 1 cpu1 may allocate, 2 cpu2 may disable */
	int allocating;		/* atomic: cpu1 is calling alloc_pages_node() */
	int drained;		/* atomic: zone_pcp_disable() returned */
	bool in_refill;		/* cpu0 saw cpu1 stopped inside its refill */
	bool returned_early;	/* ... and zone_pcp_disable() returned before it went on */
	unsigned long left;	/* pages listed right after it returned */
	struct page *page;
};

/* cpu1 is inside its refill: it holds its own pcp lock (irqsave, trylock) while cpu0 holds
 * zone->lock, so it can only be spinning on that; with irqoff there is no pcp lock to see,
 * so allow it 20 ms once it called alloc_pages_node(). */
static bool cpu1_in_refill(struct refill_race *r)
{
	const spinlock_t *lock = &r->zone->pcp[1].lock;

	if (READ_ONCE(pcp_lock_model) == PCP_LOCK_IRQOFF) {
		if (wait_flag_us(&r->allocating, 5000000))
			udelay(20000);
		return smp_load_acquire(&r->allocating);
	}
	for (u64 end = arch_cycles() + us_to_cycles(5000000); arch_cycles() < end; arch_cpu_relax())
		if (READ_ONCE(lock->locked) && READ_ONCE(lock->owner_cpu) == 1)
			return true;
	return false;
}

/*
 * cpu0 holds the zone's lock; cpu1 allocates from its empty list, so it takes its pcp and
 * stops inside the refill, spinning on zone->lock with its count still 0; once cpu0 sees it
 * there, cpu2 calls zone_pcp_disable(). cpu0 lets go after 200 ms, or as soon as that
 * returned. The others idle (their lists are empty). (A fixed 20 ms for cpu1 to get there
 * was not always enough on a loaded host: the drain then came first, found nothing to wait
 * for, and the test failed correct code.)
 */
static void refill_race_fn(void *arg)
{
	struct refill_race *r = arg;

	switch (arch_cpu_id()) {
	case 0: {
		unsigned long flags = spin_lock_irqsave(&r->zone->lock);

		smp_store_release(&r->step, 1);
		r->in_refill = cpu1_in_refill(r);
		smp_store_release(&r->step, 2);
		r->returned_early = wait_flag_us(&r->drained, 200000) && r->in_refill;
		spin_unlock_irqrestore(&r->zone->lock, flags);
		break;
	}
	case 1:
		wait_flag_us(&r->step, 60000000);
		smp_store_release(&r->allocating, 1);
		r->page = alloc_pages_node(r->pgdat, GFP_KERNEL | __GFP_NOWARN, 0);
		break;
	case 2:
		while (smp_load_acquire(&r->step) < 2)
			arch_cpu_relax();
		zone_pcp_disable(r->zone);
		r->left = zone_pcp_count(r->zone);
		smp_store_release(&r->drained, 1);
		break;
	}
}

/* One attempt in the current model; true if cpu1's refill overlapped the drain. */
static bool refill_attempt(struct ktest *t, struct refill_race *r, int attempt)
{
	struct pglist_data *pgdat = lab_node_create(REFILL_BLOCKS, true);
	struct page *probe;
	unsigned long free;
	struct pcp_stats st;
	bool overlapped;

	if (!pgdat)
		KT_SKIP(t, "needs %d free blocks of 4 MiB for its private instance", REFILL_BLOCKS);
	probe = alloc_pages_node(pgdat, GFP_KERNEL, 0);	/* the zone GFP_KERNEL refills from */
	KT_ASSERT_NOT_NULL(t, probe);
	memset(r, 0, sizeof(*r));
	r->pgdat = pgdat;
	r->zone = page_zone(probe);
	__free_pages(probe, 0);
	drain_all_pages_node(pgdat);	/* every list empty, cpu1's too */
	free = node_free_pages(pgdat);
	lab_run_on_cpus(refill_race_fn, r);
	pcp_stats_sum(pgdat, 1, &st);
	overlapped = r->in_refill && (st.drained > 0 || r->returned_early || r->left);
	ktest_printf(t, "[%s] attempt %d: cpu1 %s inside its refill; the drain returned %s it, "
		     "%lu pages listed after it, %llu drained from cpu1",
		     pcp_lock_model_name(pcp_lock_model), attempt,
		     r->in_refill ? "seen" : "NOT SEEN", r->returned_early ? "DURING" : "after",
		     r->left, (unsigned long long)st.drained);
	KT_EXPECT_FALSE(t, r->returned_early);
	KT_EXPECT_EQ(t, r->left, 0ul);
	KT_EXPECT_EQ(t, zone_pcp_count(r->zone), 0ul);
	KT_EXPECT_NOT_NULL(t, r->page);
	if (r->page)
		__free_pages(r->page, 0);
	zone_pcp_enable(r->zone);
	drain_all_pages_node(pgdat);
	KT_EXPECT_EQ(t, node_free_pages(pgdat), free);
	KT_EXPECT_EQ(t, mm_verify(pgdat), 0ul);
	lab_node_destroy(pgdat);
	return overlapped;
}

/*
 * Each model: zone_pcp_disable() while another CPU is inside a refill (holding its pcp, its
 * count not yet raised) must wait for that CPU and then empty what the refill brought: no
 * page is listed anywhere when it returns. Linux before 66eca1021a42 ("mm: page_alloc: fix
 * pcp->count race between drain_pages_zone() vs __rmqueue_pcplist()") read the count before
 * taking the lock, saw 0, skipped the CPU and returned with the refill's pages listed (memory
 * offlining then looped forever). Race window: cpu1 was seen inside its refill when the
 * drain began, and the drain found it (drained pages from cpu1, or returned during the
 * refill); up to 3 attempts per model, then a skip naming the model.
 */
static void zone_pcp_disable_waits_for_refill_in_flight(struct ktest *t)
{
	static struct refill_race r;
	const char *no_race = NULL;

	if (lab_nr_cpus() < 3 || arch_cpu_id() != 0)
		KT_SKIP(t, "needs CPUs 0, 1 and 2, run from cpu0");
	for (unsigned int m = 0; m < ARRAY_SIZE(models); m++) {
		bool overlapped = false;

		lab_set_lock_model(models[m]);
		for (int attempt = 0; attempt < 3 && !overlapped; attempt++)
			overlapped = refill_attempt(t, &r, attempt);
		if (!overlapped)
			no_race = pcp_lock_model_name(models[m]);
	}
	lab_set_lock_model(PCP_LOCK_TRYLOCK);
	if (no_race)
		KT_SKIP(t, "no race [%s]: the drain never met cpu1's refill in 3 attempts", no_race);
}

static const struct ktest_case mm_pcp_private_cases[] = {
	KTEST_CASE_CONCURRENT_NOFAIL(zone_pcp_disable_waits_for_refill_in_flight,
				     "the refilling allocation must reach its refill"),
};
KTEST_SUITE(mm_pcp_private, mm_pcp_private_cases, .init = mm_pcp_private_init,
	    .exit = mm_pcp_private_exit);
