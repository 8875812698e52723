/*
 * KTAP suite mm_pcp_private: per-CPU list races on a private instance (tests/lab/lab_platform.h),
 * one source for both platforms: built into the kernel (memory borrowed from its allocator,
 * its online CPUs) and into the host binaries (pthread CPUs, under ASan/UBSan and TSan).
 * Each case builds an instance per lock model it compares (the model is the instance's for
 * its life). Stress with tick interrupts, remote drains, IRQ re-entry, an interrupt on an
 * exhausted node, zone_pcp_disable() against a refill, disable/enable/update at once, a
 * one-CPU drain against a drain of every CPU. The batch/high rules on the kernel's own nodes are in mm_pcp.c, the host-only cases
 * (preemption signals, exact interleavings, --pct) in tests/host/test_pcp.c.
 */
#include "tests/ktest/ktest.h"
#include "tests/lab/lab_platform.h"
#include "kernel/string.h"
#include "kernel/timer.h"
#include "tests/kernel/pcp_check.h"
#include "tests/kernel/churn.h"
#include "tests/kernel/mm_exhaust.h"

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
	pcp_enabled = saved_enabled;
}

/* The zone an order-0 GFP_KERNEL allocation from pgdat comes from (one taken and freed). */
static struct zone *alloc_zone(struct pglist_data *pgdat)
{
	struct page *probe = alloc_pages_node(pgdat, GFP_KERNEL, 0);
	struct zone *zone = probe ? page_zone(probe) : NULL;

	if (probe)
		__free_pages(probe, 0);
	drain_all_pages_machine(pgdat->machine);
	return zone;
}

/* A fresh instance of REENTRY_BLOCKS with lists on, in model m; *zone: where its order-0
 * GFP_KERNEL allocations come from; *free (if asked): its free pages, every list empty. */
static struct pglist_data *model_node(struct ktest *t, enum pcp_lock_model m, struct zone **zone,
				      unsigned long *free)
{
	struct pglist_data *pgdat = lab_node_create_model(REENTRY_BLOCKS, m);

	KT_ASSERT_NOT_NULL(t, pgdat);
	*zone = alloc_zone(pgdat);
	KT_ASSERT_NOT_NULL(t, *zone);
	if (free)
		*free = node_free_pages(pgdat);
	return pgdat;
}

/* One line of a test's pcp counters (summed by the caller) on an instance in model m. */
static void pcp_stats_report(struct ktest *t, const char *what, enum pcp_lock_model m,
			     const struct pcp_stats *st)
{
	ktest_printf(t, "%s [%s]: hits alloc %llu free %llu, refills %llu, spills %llu, trylock "
		     "fails alloc %llu free %llu, drained %llu, ipi drains %llu", what,
		     pcp_lock_model_name(m), (unsigned long long)st->alloc_hit,
		     (unsigned long long)st->free_hit, (unsigned long long)st->refill,
		     (unsigned long long)st->spill, (unsigned long long)st->trylock_fail_alloc,
		     (unsigned long long)st->trylock_fail_free, (unsigned long long)st->drained,
		     (unsigned long long)st->ipi_drain);
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
	u64 drains;		/* drain-and-retry rounds during the handler */
};

/* The "interrupt handler": allocate and free one page on the interrupted CPU. */
static void reentry_handler(void *arg)
{
	struct reentry *r = arg;
	u64 drains = READ_ONCE(r->pgdat->drain_retries);
	struct page *page = alloc_pages_node(r->pgdat, GFP_ATOMIC | __GFP_NOWARN, 0);

	r->drains = READ_ONCE(r->pgdat->drain_retries) - drains;
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
		bool trylock = r->zone->pcp_lock == PCP_LOCK_TRYLOCK;
		unsigned long flags;
		struct per_cpu_pages *pcp = pcp_lock_this_cpu(r->zone, &flags);

		r->count_before = pcp->count;
		smp_store_release(&r->phase, 1);
		while (trylock ? !smp_load_acquire(&r->done) : !smp_load_acquire(&r->sent))
			arch_cpu_relax();	/* takes the call here if interrupts are on */
		udelay(1000);
		smp_store_release(&r->phase, 2);
		pcp_unlock_this_cpu(r->zone, pcp, flags);
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
		bool trylock = models[m] == PCP_LOCK_TRYLOCK;
		struct pglist_data *pgdat;
		struct pcp_stats st;

		memset(&r, 0, sizeof(r));
		r.pgdat = pgdat = model_node(t, models[m], &r.zone, NULL);
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
			     pcp_lock_model_name(models[m]), r.ran_while_held ? "during" :
			     "after", (unsigned long long)st.trylock_fail_alloc,
			     (unsigned long long)st.trylock_fail_free);
		drain_all_pages_machine(pgdat->machine);
		KT_EXPECT_EQ(t, mm_verify(pgdat), 0ul);
		lab_node_destroy(pgdat);
	}
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

/* cpu1's allocation: order 1, so that the refill is of a list no earlier test touched. */
#define REFILL_ORDER 1

/*
 * cpu1 is inside its refill: with cpu0 holding the zone's lock, someone began to wait for it
 * (zone->lock's contended count, which a waiter adds to as its wait begins). Only cpu1
 * allocates from this private instance, and with every list empty its only way to that lock
 * is the refill, which __rmqueue_pcplist() does under the pcp hold of rmqueue_pcplist(): one
 * hold per allocation, so in every model cpu1 is then inside it, its count still 0. 5 s at
 * most for cpu1 to get there.
 */
static bool cpu1_in_refill(struct refill_race *r, u64 contended_before)
{
	for (u64 end = arch_cycles() + us_to_cycles(5000000); arch_cycles() < end; arch_cpu_relax())
		if (READ_ONCE(lock_stat(&r->zone->lock)->contended) != contended_before)
			return true;
	return false;
}

/*
 * cpu0 holds the zone's lock; cpu1 allocates from its empty list, so it takes its pcp and
 * stops inside the refill, waiting for zone->lock with its count still 0; once cpu0 sees it
 * there, cpu2 calls zone_pcp_disable(). cpu0 lets go after 200 ms, or as soon as that
 * returned. The others idle (their lists are empty).
 */
static void refill_race_fn(void *arg)
{
	struct refill_race *r = arg;

	switch (arch_cpu_id()) {
	case 0: {
		unsigned long flags = spin_lock_irqsave(&r->zone->lock);
		u64 contended = READ_ONCE(lock_stat(&r->zone->lock)->contended);

		smp_store_release(&r->step, 1);
		r->in_refill = cpu1_in_refill(r, contended);
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

/* One run in model m. */
static void refill_attempt(struct ktest *t, struct refill_race *r, enum pcp_lock_model m)
{
	struct pglist_data *pgdat = lab_node_create_model(REFILL_BLOCKS, m);
	unsigned long free;
	struct pcp_stats st;

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
	ktest_printf(t, "[%s] cpu1 %s inside its refill; the drain returned %s it, %lu pages "
		     "listed after it, %llu drained from cpu1", pcp_lock_model_name(m),
		     r->in_refill ? "seen" : "NOT SEEN", r->returned_early ? "DURING" : "after",
		     r->left, (unsigned long long)st.drained);
	KT_EXPECT_TRUE(t, r->in_refill);	/* the window */
	KT_EXPECT_GT(t, st.drained, 0ull);	/* the drain met the refill's pages */
	KT_EXPECT_FALSE(t, r->returned_early);
	KT_EXPECT_EQ(t, r->left, 0ul);
	KT_EXPECT_EQ(t, zone_pcp_count(r->zone), 0ul);
	KT_EXPECT_NOT_NULL(t, r->page);
	if (r->page)
		__free_pages(r->page, REFILL_ORDER);
	zone_pcp_enable(r->zone);
	drain_all_pages_machine(pgdat->machine);
	KT_EXPECT_EQ(t, node_free_pages(pgdat), free);
	KT_EXPECT_EQ(t, mm_verify(pgdat), 0ul);
	lab_node_destroy(pgdat);
}

/*
 * Each model: zone_pcp_disable() while another CPU is inside a refill (holding its pcp, its
 * count not yet raised) must wait for that CPU and then empty what the refill brought: no
 * page is listed anywhere when it returns. Linux before 66eca1021a42 ("mm: page_alloc: fix
 * pcp->count race between drain_pages_zone() vs __rmqueue_pcplist()") read the count before
 * taking the lock, saw 0, skipped the CPU and returned with the refill's pages listed (memory
 * offlining then looped forever). The window (cpu1 inside its refill when the drain began)
 * is seen for certain, and asserted; so is the drain meeting the refill's pages.
 */
static void zone_pcp_disable_waits_for_refill_in_flight(struct ktest *t)
{
	static struct refill_race r;

	if (lab_nr_cpus() < 3 || arch_cpu_id() != 0)
		KT_SKIP(t, "needs CPUs 0, 1 and 2, run from cpu0");
	if (!CONFIG_LOCK_STAT)
		KT_SKIP(t, "the window is seen through zone->lock's statistics (CONFIG_LOCK_STAT)");
	for (unsigned int m = 0; m < ARRAY_SIZE(models); m++)
		refill_attempt(t, &r, models[m]);
}

/* Empty every list of pgdat for good (zone_pcp_disable: high 0, then a forced drain of every
 * CPU), count what is still listed (must be 0), and re-enable them. */
static unsigned long node_forced_drain(struct pglist_data *pgdat)
{
	unsigned long left = 0;

	for (int z = 0; z < MAX_NR_ZONES; z++)
		zone_pcp_disable(&pgdat->node_zones[z]);
	for (int z = 0; z < MAX_NR_ZONES; z++)
		left += zone_pcp_count(&pgdat->node_zones[z]);
	for (int z = 0; z < MAX_NR_ZONES; z++)
		zone_pcp_enable(&pgdat->node_zones[z]);
	return left;
}

/* ---- churn: random allocations and frees on every CPU (stress, remote drains) ---- */

#define CHURN_BLOCKS 16		/* 64 MiB */
#define CHURN_LONGER 20		/* a churner goes on up to 20 x its operations until it raced
				 * (not when deterministic: each run is one interleaving) */

/* One CPU's part of a churn run, on its own line (written by that CPU, read by all). */
struct churn_cpu {
	int busy;			/* inside an allocation or free now */
	bool churner;			/* it churned (the others drained) */
	u64 irq_allocs;			/* alloc+free pairs from its tick */
	u64 irq_in_hold;		/* ticks that came while it held its own pcp */
} __cacheline_aligned;

struct churn_run {
	struct pglist_data *pgdat;	/* a fresh instance: every counter starts at 0 */
	unsigned int ops;		/* operations per churner, at least */
	bool drainers;			/* every other CPU drains every list instead */
	int tickets;			/* roles by arrival, 0, 1, ...: odd ones drain (atomic) */
	int churning;			/* churners still at it (atomic) */
	u64 overlapped;			/* sampled operations begun while another CPU was in one */
	struct churn_cpu cpu[MAX_CPUS];
};
static struct churn_run churn;
static struct churn_run *tick_churn;	/* the stress test's, while its tick is set */

/* Contended acquisitions of every zone->lock of pgdat: CPUs that met inside the buddy lists.
 * (Counted under the lock: read it after the run.) */
static u64 zone_lock_contended(struct pglist_data *pgdat)
{
	u64 n = 0;

	for (int z = 0; z < MAX_NR_ZONES; z++)
		n += lock_stat(&pgdat->node_zones[z].lock)->contended;
	return n;
}

/*
 * Times cpu's lists met a remote drain: its operations found the list held by a drainer
 * (trylock failed: nothing else takes another CPU's list), or (irqoff) cpu ran a drain by
 * IPI; only cpu writes these, so it may read them while the others run. After the run
 * (contention): also the times a drainer had to wait for cpu to let go of its list (a
 * contended acquisition of cpu's pcp lock, counted by the drainer under that lock).
 */
static u64 met_remote_drain(struct pglist_data *pgdat, unsigned int cpu, bool contention)
{
	u64 n = 0;

	for (int z = 0; z < MAX_NR_ZONES; z++) {
		const struct zone *zone = &pgdat->node_zones[z];

		if (!zone->pcp)
			continue;
		if (contention)
			n += lock_stat(&zone->pcp[cpu].lock)->contended;
		n += READ_ONCE(pcp_stats_of(&zone->pcp[cpu])->trylock_fail_alloc) +
		     READ_ONCE(pcp_stats_of(&zone->pcp[cpu])->trylock_fail_free) +
		     READ_ONCE(pcp_stats_of(&zone->pcp[cpu])->ipi_drain);
	}
	return n;
}

/* Did this tick come while its CPU held its own pcp lock? Debug builds record the owner;
 * release builds do not, so there: the lock word of its own pcp while no drain of the
 * instance runs (a drain, from a failed allocation's slow path, is the only other taker). */
static bool holds_own_pcp(struct pglist_data *pgdat, unsigned int cpu)
{
	bool draining = READ_ONCE(pgdat->machine->pcp_drain_lock.locked);

	for (int z = 0; z < MAX_NR_ZONES; z++) {
		struct zone *zone = &pgdat->node_zones[z];
		const spinlock_t *lock = zone->pcp ? &zone->pcp[cpu].lock : NULL;

		if (lock && (CONFIG_DEBUG_VM ? spin_is_held_by_me(lock) :
			     READ_ONCE(lock->locked) && !draining))
			return true;
	}
	return false;
}

/* The stress test's tick: an order-0 GFP_ATOMIC alloc + free in interrupt context, counting
 * the ticks that interrupted their CPU inside its own pcp lock. */
static void churn_tick(void)
{
	struct churn_run *c = READ_ONCE(tick_churn);
	unsigned int cpu = arch_cpu_id();
	struct page *page;

	if (!c)
		return;
	c->cpu[cpu].irq_in_hold += holds_own_pcp(c->pgdat, cpu);
	if (!(page = alloc_pages_node(c->pgdat, GFP_ATOMIC | __GFP_NOWARN, 0)))
		return;
	__free_pages(page, 0);
	c->cpu[cpu].irq_allocs++;
}

/* Is another CPU inside an allocation or free right now? */
static bool another_cpu_busy(struct churn_run *c, unsigned int me)
{
	for_each_online_cpu(cpu)
		if (cpu != me && READ_ONCE(c->cpu[cpu].busy))
			return true;
	return false;
}

/*
 * Has this churner been in its race window yet (checked every 64 operations)? With drainers:
 * a remote drain met its lists. Stress: operations began while another CPU was in one (with
 * more than one CPU), and (trylock) a tick came inside its pcp hold. (zone->lock contention,
 * which the stress test also asserts, can only be read after the run.)
 */
static bool churn_raced(struct churn_run *c, unsigned int cpu)
{
	if (c->drainers)
		return met_remote_drain(c->pgdat, cpu, false) > 0;
	return (lab_nr_cpus() < 2 || READ_ONCE(c->overlapped)) &&
	       (c->pgdat->machine->pcp_lock != PCP_LOCK_TRYLOCK ||
		READ_ONCE(c->cpu[cpu].irq_in_hold));
}

/* churn.h's walk (orders 0..3 with a few up to 5, GFP_KERNEL or GFP_USER, at most CHURN_HELD
 * blocks held) on c->pgdat: c->ops operations, then on until churn_raced() (at most
 * CHURN_LONGER x as many). */
static void churn_cpu(struct churn_run *c)
{
	unsigned int cpu = arch_cpu_id(), longer = lab_deterministic() ? 1 : CHURN_LONGER;
	struct churn ch = { .x = 0x9e3779b97f4a7c15ull * (cpu + 1), .high_orders = true };

	for (unsigned int i = 0; i < c->ops || (i < longer * c->ops &&
			(i % 64 || !churn_raced(c, cpu))); i++) {
		WRITE_ONCE(c->cpu[cpu].busy, 1);
		if (i % 64 == 0 && another_cpu_busy(c, cpu))	/* a sample */
			__atomic_fetch_add(&c->overlapped, 1, __ATOMIC_RELAXED);
		churn_step(&ch, c->pgdat, GFP_KERNEL, GFP_USER);
		WRITE_ONCE(c->cpu[cpu].busy, 0);
	}
	churn_release(&ch);
}

/* Each CPU: churn, or (odd tickets, with drainers) drain every list of the instance until
 * the churners are done (a few drains when deterministic: each is hundreds of steps). */
static void churn_fn(void *arg)
{
	struct churn_run *c = arg;
	int ticket = __atomic_fetch_add(&c->tickets, 1, __ATOMIC_RELAXED);

	if (c->drainers && (ticket & 1)) {
		for (unsigned int r = 0; smp_load_acquire(&c->churning) &&
					 (!lab_deterministic() || r < 8); r++) {
			drain_all_pages_machine(c->pgdat->machine);
			arch_cpu_relax();
		}
		return;
	}
	c->cpu[arch_cpu_id()].churner = true;
	churn_cpu(c);
	__atomic_sub_fetch(&c->churning, 1, __ATOMIC_RELEASE);
}

/* A fresh instance for a churn run in model m (NULL if its memory cannot be had), and c
 * reset for it: ops operations per churner, half the CPUs draining if drainers. */
static struct pglist_data *churn_begin(struct churn_run *c, enum pcp_lock_model m,
				       unsigned int ops, bool drainers)
{
	struct pglist_data *pgdat;

	fail_page_alloc_pause();	/* the scaffolding must not fail, only the churn */
	pgdat = lab_node_create_model(CHURN_BLOCKS, m);
	fail_page_alloc_resume();
	if (!pgdat)
		return NULL;
	memset(c, 0, sizeof(*c));
	c->pgdat = pgdat;
	c->ops = lab_deterministic() ? ops / 15 : ops;
	c->drainers = drainers;
	c->churning = drainers ? (int)(lab_nr_cpus() + 1) / 2 : (int)lab_nr_cpus();
	return pgdat;
}

/* After a churn run: every list emptied for good, nothing lost, every page in one place. */
static void churn_end(struct ktest *t, struct churn_run *c, unsigned long free)
{
	KT_EXPECT_EQ(t, node_forced_drain(c->pgdat), 0ul);
	KT_EXPECT_EQ(t, node_free_pages(c->pgdat), free);
	KT_EXPECT_EQ(t, mm_verify(c->pgdat), 0ul);
	lab_node_destroy(c->pgdat);
}

static void churn_counters(struct ktest *t, struct pglist_data *pgdat, const char *what,
			   struct pcp_stats *st)
{
	pcp_stats_sum(pgdat, -1, st);
	pcp_stats_report(t, what, pgdat->machine->pcp_lock, st);
}

/* The stress test's windows after a run: CPUs met in the allocator and inside a zone->lock
 * (with more than one CPU), and (trylock) a tick came inside a pcp hold. */
struct stress_seen {
	u64 irq, in_hold, contended;
};

static bool stress_raced(struct churn_run *c, enum pcp_lock_model m, struct stress_seen *s)
{
	s->irq = s->in_hold = 0;
	s->contended = zone_lock_contended(c->pgdat);
	for (unsigned int cpu = 0; cpu < MAX_CPUS; cpu++) {
		s->irq += c->cpu[cpu].irq_allocs;
		s->in_hold += c->cpu[cpu].irq_in_hold;
	}
	return (lab_nr_cpus() < 2 || (c->overlapped && s->contended)) &&
	       (m != PCP_LOCK_TRYLOCK || s->in_hold);
}

/* Churn rounds with the tick on until stress_raced() (at most 10 rounds; 1 deterministic). */
static unsigned int stress_rounds(struct ktest *t, struct churn_run *c, enum pcp_lock_model m,
				  struct stress_seen *s)
{
	unsigned int round = 0;

	WRITE_ONCE(tick_churn, c);
	KT_ASSERT_EQ(t, lab_set_tick(churn_tick), 0);
	do {
		c->tickets = 0;
		c->churning = (int)lab_nr_cpus();
		lab_run_on_cpus(churn_fn, c);
	} while (++round < (lab_deterministic() ? 1 : 10) && !stress_raced(c, m, s));
	lab_set_tick(NULL);
	WRITE_ONCE(tick_churn, NULL);
	stress_raced(c, m, s);
	return round;
}

/*
 * Each model: every CPU does 1500 random operations (orders 0-5) on a 64 MiB instance while
 * a timer tick allocates and frees in interrupt context on every CPU; then a forced drain
 * empties every list, each page is in one place and the free count is as before. Race
 * windows: operations began while another CPU was inside one (sampled), CPUs met inside a
 * zone->lock (contended acquisitions), and with trylock, ticks came while their CPU held its
 * own pcp lock; each CPU churns on (up to 20 x longer) until the first and last happened,
 * and the CPUs churn again (up to 10 rounds) until all did. With irqsave a tick inside a pcp
 * hold must never happen: the lock is held with interrupts off.
 */
static void pcp_stress_random_orders_all_models(struct ktest *t)
{
	const char *no_race = NULL;

	for (unsigned int m = 0; m < ARRAY_SIZE(models); m++) {
		struct pglist_data *pgdat = churn_begin(&churn, models[m], 1500, false);
		struct stress_seen s;
		struct pcp_stats st;
		unsigned long free;
		unsigned int rounds;

		if (!pgdat)
			KT_SKIP(t, "needs %d free blocks of 4 MiB for its private instance",
				CHURN_BLOCKS);
		free = node_free_pages(pgdat);
		rounds = stress_rounds(t, &churn, models[m], &s);
		churn_counters(t, pgdat, "stress", &st);
		ktest_printf(t, "  %u rounds: %llu alloc+free pairs from the timer interrupt, %llu "
			     "ticks inside their CPU's pcp hold; %llu sampled operations begun while "
			     "another CPU was in one, zone->lock contended %llu times", rounds,
			     (unsigned long long)s.irq, (unsigned long long)s.in_hold,
			     (unsigned long long)churn.overlapped, (unsigned long long)s.contended);
		if (models[m] == PCP_LOCK_IRQSAVE)
			KT_EXPECT_EQ(t, s.in_hold, 0ull);
		if (!stress_raced(&churn, models[m], &s))
			no_race = pcp_lock_model_name(models[m]);
		if (models[m] == PCP_LOCK_TRYLOCK)
			show_pcpinfo(pgdat);	/* what the CPUs hold before the drain */
		churn_end(t, &churn, free);
	}
	if (no_race)
		KT_SKIP(t, "no race [%s]: no two CPUs in the allocator or in a zone->lock at once, "
			"or (trylock) no tick inside a pcp hold", no_race);
}

/*
 * Each model: half the CPUs churn (1500 operations each) while the other half drain every
 * CPU's lists in a loop; then a forced drain leaves every list empty and nothing is lost.
 * Race window: a churner's lists met a drain (met_remote_drain()) and drains found pages;
 * each churner goes on (up to 20 x longer) until its own lists met one.
 */
static void pcp_remote_drain_under_fire_all_models(struct ktest *t)
{
	const char *no_race = NULL;

	if (lab_nr_cpus() < 2)
		KT_SKIP(t, "needs 2 CPUs: one churns, one drains it");
	for (unsigned int m = 0; m < ARRAY_SIZE(models); m++) {
		struct pglist_data *pgdat = churn_begin(&churn, models[m], 1500, true);
		struct pcp_stats st;
		unsigned long free;
		u64 met = 0;

		if (!pgdat)
			KT_SKIP(t, "needs %d free blocks of 4 MiB for its private instance",
				CHURN_BLOCKS);
		free = node_free_pages(pgdat);
		lab_run_on_cpus(churn_fn, &churn);
		for (unsigned int cpu = 0; cpu < MAX_CPUS; cpu++)
			met += churn.cpu[cpu].churner ? met_remote_drain(pgdat, cpu, true) : 0;
		churn_counters(t, pgdat, "remote drain", &st);
		ktest_printf(t, "  %llu churner operations met a drain of their own list",
			     (unsigned long long)met);
		if (!met || !st.drained)
			no_race = pcp_lock_model_name(models[m]);
		churn_end(t, &churn, free);
	}
	if (no_race)
		KT_SKIP(t, "no race [%s]: no churner operation met a remote drain", no_race);
}

/* ---- an interrupt that allocates from an exhausted node ---- */

/*
 * Each model: CPU 0 takes every page of a private node (reserves too), then an interrupt on
 * CPU 0 allocates GFP_ATOMIC from it while CPU 0 holds its own pcp (reentry_fn(): during the
 * hold with trylock, after it otherwise). The allocation may fail or succeed, but must not
 * drain: Linux drains only in direct reclaim, which an interrupt never enters; dffc0ff
 * drained there, and with trylock spun on the list its own CPU held ("spinlock recursion").
 * Afterwards the free count is exactly restored and mm_verify() passes.
 */
static void pcp_irq_alloc_exhausted_no_drain_all_models(struct ktest *t)
{
	static struct exhaust e;
	static struct reentry r;

	if (lab_nr_cpus() < 2 || arch_cpu_id() != 0)
		KT_SKIP(t, "needs 2 CPUs, run from cpu0");
	for (unsigned int m = 0; m < ARRAY_SIZE(models); m++) {
		struct pglist_data *pgdat;
		unsigned long before;

		memset(&r, 0, sizeof(r));
		r.pgdat = pgdat = model_node(t, models[m], &r.zone, &before);
		memset(&e, 0, sizeof(e));
		e.pgdat = pgdat;
		exhaust_fn(&e);
		KT_EXPECT_EQ(t, node_free_pages(pgdat), 0ul);
		lab_run_on_cpus(reentry_fn, &r);
		KT_EXPECT_EQ(t, r.drains, 0ull);
		KT_EXPECT_EQ(t, r.ran_while_held, models[m] == PCP_LOCK_TRYLOCK);
		ktest_printf(t, "[%s] interrupt ran %s the hold, its allocation %s, %llu drains",
			     pcp_lock_model_name(models[m]), r.ran_while_held ? "during" : "after",
			     r.alloc_ok ? "succeeded" : "failed", (unsigned long long)r.drains);
		release_fn(&e);
		drain_all_pages_machine(pgdat->machine);
		KT_EXPECT_EQ(t, node_free_pages(pgdat), before);
		KT_EXPECT_EQ(t, mm_verify(pgdat), 0ul);
		lab_node_destroy(pgdat);
	}
}

/* ---- zone_pcp_disable/enable/update from several CPUs at once ---- */

/* Calls of zone_pcp_disable/enable/update from several CPUs, counted (all atomic). */
struct pcp_toggle_calls {
	int in_disable, in_enable;	/* calls in progress; updates count as enables */
	u64 overlaps;			/* calls that began while a conflicting one ran */
	u64 disables, updates;		/* calls done */
};

/* Count entering a call of one kind (mine) while one of the other kind is in progress. */
static void pcp_toggle_enter(struct pcp_toggle_calls *tc, int *mine, int *other)
{
	__atomic_add_fetch(mine, 1, __ATOMIC_ACQ_REL);
	if (smp_load_acquire(other))
		__atomic_add_fetch(&tc->overlaps, 1, __ATOMIC_RELAXED);
}

/* One toggler's round: disable the zone's lists, call while_disabled(arg) (the check), and
 * enable them again. */
static void pcp_toggle_round(struct pcp_toggle_calls *tc, struct zone *zone,
			     void (*while_disabled)(void *), void *arg)
{
	pcp_toggle_enter(tc, &tc->in_disable, &tc->in_enable);
	zone_pcp_disable(zone);
	__atomic_sub_fetch(&tc->in_disable, 1, __ATOMIC_RELEASE);
	__atomic_add_fetch(&tc->disables, 1, __ATOMIC_RELEASE);
	while_disabled(arg);
	pcp_toggle_enter(tc, &tc->in_enable, &tc->in_disable);
	zone_pcp_enable(zone);
	__atomic_sub_fetch(&tc->in_enable, 1, __ATOMIC_RELEASE);
}

/* One updater's call: recompute high and batch of pgdat for nr_cpus CPUs, as a CPU coming
 * online does. */
static void pcp_toggle_update(struct pcp_toggle_calls *tc, struct pglist_data *pgdat,
			      unsigned int nr_cpus)
{
	pcp_toggle_enter(tc, &tc->in_enable, &tc->in_disable);
	zone_pcp_update(pgdat, nr_cpus);
	__atomic_sub_fetch(&tc->in_enable, 1, __ATOMIC_RELEASE);
	__atomic_add_fetch(&tc->updates, 1, __ATOMIC_RELEASE);
}

/* While some CPU holds the zone disabled, every pcp must be at high 0, batch 1. */
static bool zone_pcps_disabled(struct zone *zone)
{
	for (unsigned int cpu = 0; cpu < zone->node->nr_cpus; cpu++)
		if (READ_ONCE(zone->pcp[cpu].high) != 0 || READ_ONCE(zone->pcp[cpu].batch) != 1)
			return false;
	return true;
}

#define TOGGLE_BLOCKS 4
#define TOGGLE_PCPS 4096	/* long high/batch write loops: wider windows (deterministic:
				 * 64, as each write is a step there) */

struct toggle {
	struct zone *zone;		/* of a private node with TOGGLE_PCPS lists per zone */
	struct pcp_toggle_calls calls;
	int tickets;			/* roles by arrival: 0 and 2 toggle, 1 updates (atomic) */
	int updater;			/* its CPU, + 1 once known (atomic) */
	int togglers;			/* togglers still at it (atomic) */
	u64 stalls;			/* stall IPIs taken (atomic) */
	u64 live_while_disabled;	/* a pcp with high != 0 or batch != 1 seen while disabled */
};

/* Wait until cond(arg) or us microseconds have passed; when deterministic, 64 steps. */
static void wait_until(bool (*cond)(void *), void *arg, u64 us)
{
	u64 until = arch_cycles() + us_to_cycles(us);

	for (unsigned int i = 0; !cond(arg); i++) {
		if (lab_deterministic() ? i >= 64 : arch_cycles() > until)
			return;
		arch_cpu_relax();
	}
}

struct toggle_wait {
	struct toggle *tg;
	u64 disables, updates;		/* counts when the wait began */
};

static bool disable_done(void *arg)
{
	struct toggle_wait *w = arg;

	return READ_ONCE(w->tg->calls.disables) != w->disables;
}

/*
 * A stall IPI stops the updater wherever it is, as a host descheduling a vCPU would, until a
 * disable has finished or 1 ms has passed. Sent just before a disable, it often finds the
 * updater inside its high/batch writes, having read a depth of 0: the window.
 */
static void stall_ipi(void *arg)
{
	struct toggle *tg = arg;
	struct toggle_wait w = { .tg = tg, .disables = READ_ONCE(tg->calls.disables) };

	__atomic_add_fetch(&tg->stalls, 1, __ATOMIC_RELAXED);
	wait_until(disable_done, &w, 1000);
}

static bool pcps_live_or_update_done(void *arg)
{
	struct toggle_wait *w = arg;

	if (!zone_pcps_disabled(w->tg->zone)) {
		__atomic_add_fetch(&w->tg->live_while_disabled, 1, __ATOMIC_RELAXED);
		return true;
	}
	return READ_ONCE(w->tg->calls.updates) >= w->updates + 2;
}

/* While disabled, check until the updater has finished a call begun meanwhile (or 2 ms). */
static void check_while_disabled(void *arg)
{
	struct toggle *tg = arg;
	struct toggle_wait w = { .tg = tg, .updates = READ_ONCE(tg->calls.updates) };

	wait_until(pcps_live_or_update_done, &w, 2000);
}

/* A toggler's round: stall the updater, disable, check, enable, stay enabled a while. */
static void toggle_round(struct toggle *tg, u64 *seed)
{
	int updater = smp_load_acquire(&tg->updater);

	if (updater)
		smp_call_function_single(updater - 1, stall_ipi, tg, false);
	pcp_toggle_round(&tg->calls, tg->zone, check_while_disabled, tg);
	udelay(ktest_splitmix64(seed) % 500);
}

/* Tickets 0 and 2 toggle 200 rounds each; ticket 1 recomputes high and batch until they are
 * done; the other CPUs idle. */
static void toggle_fn(void *arg)
{
	struct toggle *tg = arg;
	int ticket = __atomic_fetch_add(&tg->tickets, 1, __ATOMIC_RELAXED);
	u64 seed = 0x9e3779b97f4a7c15ull * (ticket + 1);

	if (ticket == 1) {
		smp_store_release(&tg->updater, (int)arch_cpu_id() + 1);
		while (smp_load_acquire(&tg->togglers)) {
			pcp_toggle_update(&tg->calls, tg->zone->node, lab_nr_cpus());
			arch_cpu_relax();	/* a wait loop: --pct lets the togglers run */
		}
	} else if (ticket == 0 || ticket == 2) {
		for (int r = 0; r < (lab_deterministic() ? 10 : 200); r++)
			toggle_round(tg, &seed);
		__atomic_sub_fetch(&tg->togglers, 1, __ATOMIC_RELEASE);
	}
}

/*
 * Two CPUs disable and re-enable the lists of a private node's zone (4096 lists) 200 times
 * each while a third recomputes high and batch, as memory offlining and CPU hotplug would.
 * Whenever a CPU has the zone disabled, every list must be at high 0, batch 1 (Linux
 * serialises all of this with pcp_batch_high_lock); afterwards the zone is enabled with its
 * computed values. Fails if no call overlapped a conflicting one: then it tested nothing.
 */
static void pcp_disable_enable_update_concurrent(struct ktest *t)
{
	static struct toggle tg;
	struct pglist_data *pgdat;
	struct zone *zone;

	if (lab_nr_cpus() < 2)
		KT_SKIP(t, "needs 2 CPUs");
	if (!(pgdat = lab_node_create_pcps(TOGGLE_BLOCKS, lab_deterministic() ? 64 : TOGGLE_PCPS)))
		KT_SKIP(t, "needs %d free blocks of 4 MiB for its private instance", TOGGLE_BLOCKS);
	memset(&tg, 0, sizeof(tg));
	tg.zone = alloc_zone(pgdat);
	KT_ASSERT_NOT_NULL(t, tg.zone);
	tg.togglers = lab_nr_cpus() > 2 ? 2 : 1;
	zone = tg.zone;
	lab_run_on_cpus(toggle_fn, &tg);
	ktest_printf(t, "%llu calls overlapped a conflicting one (%llu stall IPIs, %llu disables, "
		     "%llu updates); %llu times a pcp was live while its zone was disabled",
		     (unsigned long long)tg.calls.overlaps, (unsigned long long)tg.stalls,
		     (unsigned long long)tg.calls.disables, (unsigned long long)tg.calls.updates,
		     (unsigned long long)tg.live_while_disabled);
	KT_EXPECT_GT(t, tg.calls.overlaps, 0ull);
	KT_EXPECT_EQ(t, tg.live_while_disabled, 0ull);
	KT_EXPECT_EQ(t, zone->pcp_disable_depth, 0);
	for (unsigned int cpu = 0; cpu < pgdat->nr_cpus; cpu++)
		if (zone->pcp[cpu].high != zone->pageset_high ||
		    zone->pcp[cpu].batch != zone->pageset_batch) {
			KT_FAIL(t, "cpu%u: high %d batch %d, zone says %d %d", cpu,
				zone->pcp[cpu].high, zone->pcp[cpu].batch, zone->pageset_high,
				zone->pageset_batch);
			break;
		}
	KT_EXPECT_EQ(t, mm_verify(pgdat), 0ul);
	lab_node_destroy(pgdat);
}

/* ---- a drain of one CPU while another CPU drains every CPU ---- */

/* Roles by arrival (holder, drainer, one-CPU drainer), not by CPU id: a CPU that never came
 * up (smp.test_no_sipi) leaves a gap in the numbering. */
struct drain_cpu_race {
	struct pglist_data *pgdat;
	struct zone *zone;	/* whose lists the holder and the one-CPU drainer fill */
	int tickets;		/* atomic */
	unsigned int role_cpu[3];	/* holder, drainer, one-CPU drainer */
	int phase;		/* 1: holder holds its pcp; 2: drainer is draining; 3: drain_cpu */
	int drain_done;		/* the drainer's drain returned (atomic) */
	bool window;		/* drain_cpu_pages() began while that drain was held up */
	bool timed_out;		/* a role waited 10 s for the one before it: the case failed */
	int own_left;		/* pages on the one-CPU drainer's list after its drain */
};

/* Put 4 order-0 pages on this CPU's list of the zone. */
static void fill_own_pcp(struct drain_cpu_race *r)
{
	struct page *p[4];

	for (int i = 0; i < 4; i++)
		p[i] = alloc_pages_node(r->pgdat, GFP_KERNEL, 0);
	for (int i = 0; i < 4; i++)
		if (p[i])
			__free_pages(p[i], 0);
}

/* Wait (at most 10 s: every wait has a way out) until the race reaches phase. */
static void wait_phase(struct drain_cpu_race *r, int phase)
{
	u64 deadline = arch_cycles() + us_to_cycles(10000000);

	while (smp_load_acquire(&r->phase) < phase) {
		if (arch_cycles() > deadline) {
			WRITE_ONCE(r->timed_out, true);
			return;
		}
		arch_cpu_relax();
	}
}

/* The holder: hold its own (non-empty) pcp until the one-CPU drain has begun, and 2 ms more. */
static void drain_cpu_race_holder(struct drain_cpu_race *r)
{
	struct per_cpu_pages *pcp;
	unsigned long flags;

	fill_own_pcp(r);
	pcp = pcp_lock_this_cpu(r->zone, &flags);
	smp_store_release(&r->phase, 1);
	wait_phase(r, 3);
	udelay(2000);
	if (pcp)
		pcp_unlock_this_cpu(r->zone, pcp, flags);
}

static void drain_cpu_race_fn(void *arg)
{
	struct drain_cpu_race *r = arg;
	int role = __atomic_fetch_add(&r->tickets, 1, __ATOMIC_RELAXED);

	if (role < 3)
		r->role_cpu[role] = arch_cpu_id();
	if (role == 0) {
		drain_cpu_race_holder(r);
	} else if (role == 1) {
		wait_phase(r, 1);
		smp_store_release(&r->phase, 2);
		drain_all_pages_machine(r->pgdat->machine);	/* held up by the holder */
		smp_store_release(&r->drain_done, 1);
	} else if (role == 2) {
		fill_own_pcp(r);
		wait_phase(r, 2);
		udelay(500);	/* the drainer takes pcp_drain_lock meanwhile */
		r->window = !smp_load_acquire(&r->drain_done);
		smp_store_release(&r->phase, 3);
		drain_cpu_pages(r->pgdat->machine, arch_cpu_id());
		r->own_left = r->zone->pcp[arch_cpu_id()].count;
	}
}

/*
 * Each model: the drainer drains every CPU's lists and is held up by the holder, which holds
 * its own (non-empty) pcp; meanwhile a third CPU drains its own lists with drain_cpu_pages()
 * (the monitor's `drain CPU`). That promises the CPU's lists empty when it returns, so it
 * must wait for the running drain rather than give up as a second drain of every CPU may:
 * its list, filled before, is empty after. Window: it began while the drain was held up
 * (asserted).
 */
static void pcp_drain_cpu_waits_for_drain_all_models(struct ktest *t)
{
	static struct drain_cpu_race r;

	if (lab_nr_cpus() < 3)
		KT_SKIP(t, "needs 3 CPUs");
	for (unsigned int m = 0; m < ARRAY_SIZE(models); m++) {
		unsigned long free;

		memset(&r, 0, sizeof(r));
		r.pgdat = model_node(t, models[m], &r.zone, &free);
		lab_run_on_cpus(drain_cpu_race_fn, &r);
		KT_ASSERT_FALSE(t, r.timed_out);
		ktest_printf(t, "[%s] drain_cpu_pages() %s a drain held up by cpu%u; cpu%u's list "
			     "after it: %d pages", pcp_lock_model_name(models[m]),
			     r.window ? "began during" : "missed", r.role_cpu[0], r.role_cpu[2],
			     r.own_left);
		KT_EXPECT_TRUE(t, r.window);
		KT_EXPECT_EQ(t, r.own_left, 0);
		KT_EXPECT_EQ(t, node_free_pages(r.pgdat), free);
		KT_EXPECT_EQ(t, mm_verify(r.pgdat), 0ul);
		lab_node_destroy(r.pgdat);
	}
}

static const struct ktest_case mm_pcp_private_cases[] = {
	KTEST_CASE_CONCURRENT_NOFAIL(pcp_irq_reentry_all_models,
				     "the handler's one allocation must succeed"),
	KTEST_CASE_CONCURRENT_NOFAIL(zone_pcp_disable_waits_for_refill_in_flight,
				     "the refilling allocation must reach its refill"),
	KTEST_CASE_CONCURRENT(pcp_stress_random_orders_all_models),
	KTEST_CASE_CONCURRENT(pcp_remote_drain_under_fire_all_models),
	KTEST_CASE_CONCURRENT_NOFAIL(pcp_irq_alloc_exhausted_no_drain_all_models,
				     "takes every page of its instance"),
	KTEST_CASE_CONCURRENT_NOFAIL(pcp_disable_enable_update_concurrent,
				     "builds an instance of 4096 lists per zone"),
	KTEST_CASE_CONCURRENT_NOFAIL(pcp_drain_cpu_waits_for_drain_all_models,
				     "fills two CPUs' lists before the race"),
};
KTEST_SUITE(mm_pcp_private, mm_pcp_private_cases, .init = mm_pcp_private_init,
	    .exit = mm_pcp_private_exit);
