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

#define REENTRY_BLOCKS 4
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

/* The zone an order-0 GFP_KERNEL allocation from pgdat comes from (one taken and freed). */
static struct zone *alloc_zone(struct pglist_data *pgdat)
{
	struct page *probe = alloc_pages_node(pgdat, GFP_KERNEL, 0);
	struct zone *zone = probe ? page_zone(probe) : NULL;

	if (probe)
		__free_pages(probe, 0);
	drain_all_pages_node(pgdat);
	return zone;
}

/* ---- an interrupt on a CPU that holds its own list ---- */

struct reentry {
	struct pglist_data *pgdat;
	struct zone *zone;
	int phase;		/* 1 while CPU 0 holds its pcp, 2 after (atomic) */
	int sent;		/* the sender is about to call (atomic) */
	int done;		/* handler finished (atomic) */
	bool ran_while_held, alloc_ok;
	int count_before, count_in_handler;
};

/* The "interrupt handler": allocate and free one page on the interrupted CPU. */
static void reentry_handler(void *arg)
{
	struct reentry *r = arg;
	struct page *page = alloc_pages_node(r->pgdat, GFP_ATOMIC, 0);

	r->ran_while_held = smp_load_acquire(&r->phase) == 1;
	r->alloc_ok = page != NULL;
	if (page)
		__free_pages(page, 0);
	r->count_in_handler = r->zone->pcp[arch_cpu_id()].count;
	smp_store_release(&r->done, 1);
}

/*
 * CPU 0 holds its own pcp; CPU 1 sends it the handler as a cross-CPU call. With interrupts
 * on (trylock model) CPU 0 takes the call while it waits; otherwise it keeps holding 1 ms
 * after the call was sent (the IPI pending meanwhile), then releases and takes the call.
 */
static void reentry_fn(void *arg)
{
	struct reentry *r = arg;

	if (arch_cpu_id() == 0) {
		bool trylock = READ_ONCE(pcp_lock_model) == PCP_LOCK_TRYLOCK;
		struct pcp_hold hold;
		struct per_cpu_pages *pcp = pcp_lock_this_cpu(r->zone, &hold);

		r->count_before = pcp->count;
		smp_store_release(&r->phase, 1);
		while (trylock ? !smp_load_acquire(&r->done) : !smp_load_acquire(&r->sent))
			arch_cpu_relax();	/* takes the call here if interrupts are on */
		udelay(1000);
		smp_store_release(&r->phase, 2);
		pcp_unlock_this_cpu(pcp, &hold);
		while (!smp_load_acquire(&r->done))
			arch_cpu_relax();
	} else if (arch_cpu_id() == 1) {
		while (!smp_load_acquire(&r->phase))
			arch_cpu_relax();
		smp_store_release(&r->sent, 1);
		smp_call_function_single(0, reentry_handler, r, true);
	}
}

/*
 * Each model: an interrupt on a CPU that holds its own pcp allocates and frees. trylock: the
 * handler runs during the hold, both its trylocks fail, it goes through the buddy lists,
 * the pcp count is unchanged (fallback counters 1 and 1). irqsave/irqoff: the hold has
 * interrupts off, so the handler runs after the release, through the pcp (no fallback).
 * The window (the handler during the hold, trylock) is asserted, not hoped for.
 */
static void pcp_irq_reentry_all_models(struct ktest *t)
{
	static struct reentry r;

	if (lab_nr_cpus() < 2 || arch_cpu_id() != 0)
		KT_SKIP(t, "needs 2 CPUs, run from cpu0");
	for (unsigned int m = 0; m < ARRAY_SIZE(models); m++) {
		struct pglist_data *pgdat = lab_node_create(REENTRY_BLOCKS, true);
		bool trylock = models[m] == PCP_LOCK_TRYLOCK;
		struct pcp_stats st;

		KT_ASSERT_NOT_NULL(t, pgdat);
		lab_set_lock_model(models[m]);
		memset(&r, 0, sizeof(r));
		r.pgdat = pgdat;
		r.zone = alloc_zone(pgdat);
		KT_ASSERT_NOT_NULL(t, r.zone);
		pcp_stats_reset(pgdat->machine);
		lab_run_on_cpus(reentry_fn, &r);
		pcp_stats_sum(pgdat, 0, &st);
		KT_EXPECT_TRUE(t, r.alloc_ok);
		KT_EXPECT_EQ(t, r.ran_while_held, trylock);
		KT_EXPECT_EQ(t, st.trylock_fail_alloc, (u64)trylock);
		KT_EXPECT_EQ(t, st.trylock_fail_free, (u64)trylock);
		if (trylock)
			KT_EXPECT_EQ(t, r.count_in_handler, r.count_before);
		ktest_printf(t, "[%s] handler ran %s the hold; trylock fails alloc %llu free %llu",
			     pcp_lock_model_name(pcp_lock_model), r.ran_while_held ? "during" :
			     "after", (unsigned long long)st.trylock_fail_alloc,
			     (unsigned long long)st.trylock_fail_free);
		drain_all_pages_node(pgdat);
		KT_EXPECT_EQ(t, mm_verify(pgdat), 0ul);
		lab_node_destroy(pgdat);
	}
	lab_set_lock_model(PCP_LOCK_TRYLOCK);
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

/*
 * cpu1 allocates an order-1 block: order 0 would first try the fast path, which takes the
 * same pcp lock for a moment, finds the list empty and lets go before the refill takes it
 * again; cpu0 could see that first hold, and the drain could pass between the two (on a
 * loaded host it did: a correct kernel failed). Order 1 takes the lock once, for the refill.
 */
#define REFILL_ORDER 1

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
		r->page = alloc_pages_node(r->pgdat, GFP_KERNEL | __GFP_NOWARN, REFILL_ORDER);
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
	unsigned long free;
	struct pcp_stats st;
	bool overlapped;

	if (!pgdat)
		KT_SKIP(t, "needs %d free blocks of 4 MiB for its private instance", REFILL_BLOCKS);
	memset(r, 0, sizeof(*r));
	r->pgdat = pgdat;
	r->zone = alloc_zone(pgdat);	/* the zone GFP_KERNEL refills from; every list empty */
	KT_ASSERT_NOT_NULL(t, r->zone);
	free = node_free_pages(pgdat);
	lab_run_on_cpus(refill_race_fn, r);
	if (!smp_load_acquire(&r->allocating) || !smp_load_acquire(&r->drained)) {
		/* CPU 1 or 2 is not there (smp.test_no_sipi=2 leaves cpu2 offline): no race */
		if (r->page)
			__free_pages(r->page, REFILL_ORDER);
		if (smp_load_acquire(&r->drained))
			zone_pcp_enable(r->zone);
		lab_node_destroy(pgdat);
		KT_SKIP(t, "needs CPUs 0, 1 and 2 online: cpu%d took no part",
			smp_load_acquire(&r->allocating) ? 2 : 1);
	}
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
		__free_pages(r->page, REFILL_ORDER);
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
	KTEST_CASE_CONCURRENT_NOFAIL(pcp_irq_reentry_all_models,
				     "the handler's one allocation must succeed"),
	KTEST_CASE_CONCURRENT_NOFAIL(zone_pcp_disable_waits_for_refill_in_flight,
				     "the refilling allocation must reach its refill"),
};
KTEST_SUITE(mm_pcp_private, mm_pcp_private_cases, .init = mm_pcp_private_init,
	    .exit = mm_pcp_private_exit);
