/*
 * KTAP suite gup_private: pin accounting, and unmapping while other CPUs walk (whole runs,
 * and one walk stopped at each race point), in an address
 * space on a private instance (tests/lab/lab_platform.h), one source for both platforms:
 * built into the kernel and into the host binaries (ThreadSanitizer and the deterministic
 * scheduler run the CPU races).
 * The kernel-only pinning cases are in gup.c, the host-only ones in tests/host/test_gup.c.
 */
#include "tests/ktest/ktest.h"
#include "tests/lab/lab_platform.h"
#include "kernel/string.h"
#include "kernel/timer.h"
#include "mm/fail_page_alloc.h"
#include "mm/gup.h"
#include "tests/kernel/gup_check.h"

#define BASE (1ull << 32)
#define NPAGES 64
#define GUP_BLOCKS 4
#define RACE_BLOCKS 2		/* gup_unmap_vs_fast_walk: runs on 64 MiB machines too */

static struct page *pages_buf[NPAGES];
static unsigned long free_at_start;	/* the instance's free pages before the case's mm */

/* A private instance whose freed pages are poisoned whatever mm.poison= says: the races here
 * find a read of a freed page table by the poison in its entries (mm/gup.c poison_reads). */
static struct pglist_data *poisoned_node(unsigned int nr_blocks)
{
	struct pglist_data *pgdat = lab_node_create(nr_blocks, true);

	if (pgdat)
		pgdat->poison = true;
	return pgdat;
}

/* The case's address space over a private instance, npages mapped and populated at BASE,
 * kept in t->priv so that the suite's exit hook destroys both if the case ends early (a
 * failed KT_ASSERT). */
static struct mm_struct *new_mm(struct ktest *t, unsigned long npages)
{
	struct pglist_data *pgdat = poisoned_node(GUP_BLOCKS);
	struct mm_struct *mm;

	KT_ASSERT_NOT_NULL(t, pgdat);
	free_at_start = node_free_pages(pgdat);
	mm = mm_create(pgdat);
	KT_ASSERT_NOT_NULL(t, mm);
	t->priv = mm;
	KT_ASSERT_EQ(t, mm_mmap_anon(mm, BASE, npages * PAGE_SIZE, true, false, true), 0);
	return mm;
}

/* Destroy the mm; every page of the instance must be back (the exact free count, mm_verify),
 * then the instance. */
static void put_mm(struct ktest *t, struct mm_struct *mm)
{
	struct pglist_data *pgdat = mm->node;

	mm_destroy(mm);
	t->priv = NULL;
	drain_all_pages_machine(pgdat->machine);
	KT_EXPECT_EQ(t, node_free_pages(pgdat), free_at_start);
	KT_EXPECT_EQ(t, mm_verify(pgdat), 0ul);
	lab_node_destroy(pgdat);
}

/* put_mm(), unless rounds of a race case left the mm wrong: mm_destroy() would then BUG on
 * the rss left, so the instance is dropped whole. */
static void put_mm_unless_bad(struct ktest *t, struct mm_struct *mm, unsigned int bad_rounds)
{
	if (!bad_rounds) {
		put_mm(t, mm);
		return;
	}
	t->priv = NULL;
	lab_node_destroy(mm->node);
}

/* What the race case running now passed to its gup_fast_race_hook (run_hooked()). */
static void *hook_ctx;

static void gup_private_exit(struct ktest *t)
{
	smp_store_release(&gup_fast_race_hook, NULL);	/* a race case ended early */
	smp_store_release(&fault_race_hook, NULL);
	WRITE_ONCE(hook_ctx, NULL);
	if (t->priv) {
		mm_destroy(t->priv);
		t->priv = NULL;
	}
	lab_node_exit(t);
}

/* Run fn on every CPU with hook set at gup_fast_race_hook, ctx its context meanwhile. */
static void run_hooked(void (*hook)(enum gup_race_point point, struct mm_struct *mm, u64 addr),
		       smp_call_fn fn, void *ctx)
{
	WRITE_ONCE(hook_ctx, ctx);
	smp_store_release(&gup_fast_race_hook, hook);
	lab_run_on_cpus(fn, ctx);
	smp_store_release(&gup_fast_race_hook, NULL);
	WRITE_ONCE(hook_ctx, NULL);
}

/* The same with hook at fault_race_hook. */
static void run_fault_hooked(void (*hook)(struct mm_struct *mm, u64 addr), smp_call_fn fn,
			     void *ctx)
{
	WRITE_ONCE(hook_ctx, ctx);
	smp_store_release(&fault_race_hook, hook);
	lab_run_on_cpus(fn, ctx);
	smp_store_release(&fault_race_hook, NULL);
	WRITE_ONCE(hook_ctx, NULL);
}

/* Pins and unpins balance: acquired - released rises by N during the pin, back to 0 after;
 * page_maybe_dma_pinned() is true while pinned, false after. */
static void gup_pin_unpin_balance(struct ktest *t)
{
	struct mm_struct *mm = new_mm(t, NPAGES);
	struct gup_totals before, during, after;
	long n;

	gup_read_totals(&before);
	n = pin_user_pages_fast(mm, BASE, NPAGES, FOLL_WRITE, pages_buf);
	KT_ASSERT_EQ(t, n, (long)NPAGES);
	KT_EXPECT_TRUE(t, page_maybe_dma_pinned(pages_buf[5]));
	gup_read_totals(&during);
	KT_EXPECT_EQ(t, during.pins_acquired - before.pins_acquired, (u64)n);
	unpin_user_pages(pages_buf, (unsigned long)n);
	gup_read_totals(&after);
	KT_EXPECT_EQ(t, after.pins_acquired - after.pins_released,
		     before.pins_acquired - before.pins_released);
	KT_EXPECT_FALSE(t, page_maybe_dma_pinned(pages_buf[5]));
	put_mm(t, mm);
}

struct once_ctx {
	struct mm_struct *mm;
	unsigned int pins_per_cpu;
	u64 failures;
};

static void pin_loop_cpu(void *arg)
{
	struct once_ctx *c = arg;
	struct page *p;

	for (unsigned int i = 0; i < c->pins_per_cpu; i++) {
		if (pin_user_pages_fast(c->mm, BASE + (i % NPAGES) * PAGE_SIZE, 1, 0, &p) != 1) {
			__atomic_fetch_add(&c->failures, 1, __ATOMIC_RELAXED);
			continue;
		}
		unpin_user_page(p);
	}
}

/* Every CPU pins (and unpins) pins times at once in the has-pinned mode `mode`; returns how
 * many times mm->flags was written. */
static u64 count_flag_writes(struct ktest *t, const char *mode, unsigned int pins)
{
	enum gup_has_pinned_mode saved = gup_has_pinned_mode;
	struct once_ctx c = { .mm = new_mm(t, NPAGES), .pins_per_cpu = pins };
	u64 writes;

	gup_set_has_pinned_mode(mode);
	lab_run_on_cpus(pin_loop_cpu, &c);
	gup_has_pinned_mode = saved;
	writes = MM_STAT(c.mm, flag_writes);
	KT_EXPECT_EQ(t, c.failures, 0ull);
	KT_EXPECT_TRUE(t, READ_ONCE(c.mm->flags) & (1ul << MMF_HAS_PINNED));
	put_mm(t, c.mm);
	return writes;
}

/*
 * Linux 292648ac5cf1 ("mm: gup: allow FOLL_PIN to scale in SMP") made the flag write
 * conditional, not unique: N CPUs x M pins write mm->flags at least once and at most once
 * per CPU in `if-clear` mode (CPUs that race on their first pin may all see the bit clear),
 * and N x M times in `every-pin` mode.
 */
static void gup_has_pinned_written_if_clear(struct ktest *t)
{
	unsigned int pins = 200;
	u64 once = count_flag_writes(t, "if-clear", pins);
	u64 always = count_flag_writes(t, "every-pin", pins);

	ktest_printf(t, "%u CPUs x %u pins: flag writes if-clear=%llu every-pin=%llu", lab_nr_cpus(),
		     pins, (unsigned long long)once, (unsigned long long)always);
	KT_EXPECT_GE(t, once, 1ull);
	KT_EXPECT_LE(t, once, (u64)lab_nr_cpus());
	KT_EXPECT_EQ(t, always, (u64)lab_nr_cpus() * pins);
}

/*
 * 1100 plain references look like a pin to page_maybe_dma_pinned() (a false positive it is
 * allowed), but __free_pages() must not refuse them: the last of 1101 frees the page, and
 * no bad page is reported.
 */
static void gup_free_pages_many_refs(struct ktest *t)
{
	struct pglist_data *pgdat = lab_node_create(GUP_BLOCKS, true);
	unsigned long free_before;
	struct page *page;

	KT_ASSERT_NOT_NULL(t, pgdat);
	free_before = node_free_pages(pgdat);
	page = alloc_pages_node(pgdat, GFP_KERNEL, 0);
	KT_ASSERT_NOT_NULL(t, page);
	for (int i = 0; i < 1100; i++)
		get_page(page);
	KT_EXPECT_TRUE(t, page_maybe_dma_pinned(page));
	for (int i = 0; i < 1101; i++)
		__free_pages(page, 0);
	KT_EXPECT_EQ(t, pgdat->bad_pages, 0ull);
	drain_all_pages_machine(pgdat->machine);
	KT_EXPECT_EQ(t, node_free_pages(pgdat), free_before);
	KT_EXPECT_EQ(t, mm_verify(pgdat), 0ul);
	lab_node_destroy(pgdat);
}

/* ---- unmapping while other CPUs walk (the page-table free protocol) ---- */

struct race_ctx {
	struct mm_struct *mm;
	bool stop;		/* READ_ONCE/WRITE_ONCE */
	u64 max_walks;		/* per walker: bounded in a deterministic run */
	int walkers;		/* walkers not finished (atomic) */
	int seq;		/* odd while CPU 0 is inside mm_munmap() */
	int in_window;		/* walkers between a pmd read and the reads of its table */
	u64 rounds, walks, pinned, bad, in_unmap;
	u64 cpu_walks[MAX_CPUS];
	u64 seen[MAX_CPUS];	/* the unmapper's snapshot of cpu_walks */
};

/*
 * gup_fast_race_hook at GUP_RACE_PTE_TABLE: a walker has read a pmd entry and not yet the
 * page table under it. Widen that window until an mm_munmap() that overlaps it has
 * returned, at most 2 ms (with interrupts off, as gup-fast walks, the unmap's shootdown
 * waits for us), and count the overlap. With interrupts on we take the shootdown here, so
 * an unmap under way may finish without us: wait for it, up to a second.
 */
static void pmd_window_hook(enum gup_race_point point, struct mm_struct *mm, u64 addr)
{
	struct race_ctx *c = READ_ONCE(hook_ctx);
	int seq, done;

	if (!c || point != GUP_RACE_PTE_TABLE || mm != c->mm)
		return;
	seq = smp_load_acquire(&c->seq);
	done = (seq | 1) + 1;	/* seq once the unmap running or next to start has returned */
	__atomic_fetch_add(&c->in_window, 1, __ATOMIC_ACQ_REL);
	for (int i = 0; i < 40 && smp_load_acquire(&c->seq) < done; i++)
		udelay(50);
	for (int i = 0; i < 20000 && !arch_irqs_disabled() &&	/* an unmap not waiting for us */
			(smp_load_acquire(&c->seq) & 1); i++)
		udelay(50);
	__atomic_fetch_sub(&c->in_window, 1, __ATOMIC_ACQ_REL);
	if ((seq & 1) || smp_load_acquire(&c->seq) != seq)
		__atomic_fetch_add(&c->in_unmap, 1, __ATOMIC_RELAXED);
}

/*
 * Every CPU but 0: pin the 8 pages with the lockless walk only, check each page, unpin;
 * until told to stop or, in a deterministic run, after max_walks walks (a walker that never
 * waits would otherwise keep a lower-priority unmapper from ever running).
 */
static void race_walker(struct race_ctx *c)
{
	unsigned int me = arch_cpu_id();
	struct page *p[8];

	while (!READ_ONCE(c->stop) && smp_load_acquire(&c->cpu_walks[me]) < c->max_walks) {
		long n = pin_user_pages_fast(c->mm, BASE, 8, FOLL_FAST_ONLY, p);

		for (long i = 0; i < n; i++) {
			if (page_count(p[i]) < GUP_PIN_COUNTING_BIAS || p[i]->mt != MIGRATE_MOVABLE)
				__atomic_fetch_add(&c->bad, 1, __ATOMIC_RELAXED);
		}
		if (n > 0) {
			__atomic_fetch_add(&c->pinned, (u64)n, __ATOMIC_RELAXED);
			unpin_user_pages(p, (unsigned long)n);
		}
		__atomic_fetch_add(&c->walks, 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(&c->cpu_walks[me], 1, __ATOMIC_RELEASE);
		arch_cpu_relax();
	}
	__atomic_fetch_sub(&c->walkers, 1, __ATOMIC_RELEASE);
}

/* Spin until cond, or until `until` (a cycle count, evaluated once) has passed, or no
 * walker is left; in a deterministic run (lab_deterministic()) time does not count, so that
 * a seed replays. */
#define wait_until(c, cond, until)					\
	do {								\
		u64 until_ = lab_deterministic() ? ~0ull : (until);	\
									\
		while (!(cond) && arch_cycles() < until_ &&		\
		       smp_load_acquire(&(c)->walkers))			\
			arch_cpu_relax();				\
	} while (0)

/*
 * CPU 0, each round: map and populate 8 pages, wait until a walker has pinned and one sits
 * in its window, unmap (freeing the page tables), then wait until every walker has finished
 * two walks: one begun before the unmap must not have read a freed table, and the tables
 * stay free (poisoned) until then. Rounds go on for `rounds`, or 2 seconds if that comes
 * first (at least 3): each shootdown waits for every CPU, which under TCG at -smp 40 is slow.
 */
static void race_unmapper(struct race_ctx *c, unsigned int rounds)
{
	u64 deadline = arch_cycles() + us_to_cycles(2000000), step = us_to_cycles(200000), until;

	for (unsigned int r = 0; r < rounds && smp_load_acquire(&c->walkers) &&
	     (r < 3 || arch_cycles() < deadline || lab_deterministic()); r++) {
		u64 pinned = READ_ONCE(c->pinned);

		mm_mmap_anon(c->mm, BASE, 8 * PAGE_SIZE, true, false, true);
		wait_until(c, READ_ONCE(c->pinned) > pinned, arch_cycles() + step);
		wait_until(c, smp_load_acquire(&c->in_window), arch_cycles() + step);
		__atomic_fetch_add(&c->seq, 1, __ATOMIC_ACQ_REL);
		mm_munmap(c->mm, BASE, 2ull << 20);	/* frees the page tables too */
		__atomic_fetch_add(&c->seq, 1, __ATOMIC_ACQ_REL);
		for_each_online_cpu(cpu)
			c->seen[cpu] = smp_load_acquire(&c->cpu_walks[cpu]);
		until = arch_cycles() + step;	/* one limit for all: 39 walkers at -smp 40 */
		for_each_online_cpu(cpu)
			if (cpu)
				wait_until(c, smp_load_acquire(&c->cpu_walks[cpu]) >=
					   c->seen[cpu] + 2, until);
		c->rounds++;
	}
	WRITE_ONCE(c->stop, true);
}

static void race_cpu(void *arg)
{
	if (arch_cpu_id() == 0)
		race_unmapper(arg, lab_deterministic() ? 10 : 300);
	else
		race_walker(arg);
}

/*
 * CPU 0 unmaps (freeing page tables) up to 300 times (10 in a deterministic run) while
 * every other CPU walks with gup-fast: no freed page table is ever read (poisoned entries),
 * no bad page is pinned (refcount, migratetype), pins balance. The walk window (pmd read ->
 * table read) is widened at gup_fast_race_hook; the test counts walks that sat in it during
 * an unmap, and pages pinned. Such walks keep the shootdown waiting (interrupts off);
 * without the shootdown, or with interrupts on, they read freed tables. Runs with
 * fail_page_alloc too: a remap that cannot fault every page in leaves the walkers fewer
 * pages, which changes nothing that is checked. (gup_fast_unmap_while_walker_reads_table
 * stops one walk there on purpose instead.)
 */
static void gup_unmap_vs_fast_walk(struct ktest *t)
{
	static struct race_ctx c;
	struct pglist_data *pgdat;
	struct gup_totals before, after;

	KT_SKIP_UNLESS_DEBUG_VM(t, "no gup-fast race hook to widen the walk window");
	if (lab_nr_cpus() < 2 || arch_cpu_id() != 0)
		KT_SKIP(t, "needs 2 CPUs, run from cpu0");
	memset(&c, 0, sizeof(c));
	c.max_walks = lab_deterministic() ? 400 : ~0ull;
	c.walkers = (int)lab_nr_cpus() - 1;
	fail_page_alloc_pause();	/* the instance and address space are not what is tested */
	pgdat = poisoned_node(RACE_BLOCKS);
	free_at_start = pgdat ? node_free_pages(pgdat) : 0;
	c.mm = pgdat ? mm_create(pgdat) : NULL;
	fail_page_alloc_resume();
	if (!pgdat)
		KT_SKIP(t, "needs %d free blocks of 4 MiB for its private instance", RACE_BLOCKS);
	KT_ASSERT_NOT_NULL(t, c.mm);
	t->priv = c.mm;
	gup_read_totals(&before);
	run_hooked(pmd_window_hook, race_cpu, &c);
	ktest_printf(t, "%llu rounds, %llu lockless walks, %llu pages pinned, %llu walks in their "
		     "window during an unmap, poison reads %llu", (unsigned long long)c.rounds,
		     (unsigned long long)c.walks, (unsigned long long)c.pinned,
		     (unsigned long long)c.in_unmap,
		     (unsigned long long)MM_STAT(c.mm, poison_reads));
	KT_EXPECT_EQ(t, MM_STAT(c.mm, poison_reads), 0);
	KT_EXPECT_EQ(t, c.bad, 0);
	gup_read_totals(&after);
	KT_EXPECT_EQ(t, after.pins_acquired - after.pins_released,
		     before.pins_acquired - before.pins_released);
	put_mm(t, c.mm);
	if (!c.pinned || !c.in_unmap)
		KT_SKIP(t, "no race: %llu pages pinned, %llu walks in their window during an unmap",
			(unsigned long long)c.pinned, (unsigned long long)c.in_unmap);
}

/* ---- a walker stopped at a race point while another CPU unmaps or migrates the page ---- */

/* What the other CPU does to the page the walker is taking. */
enum walk_race_act {
	WALK_RACE_UNMAP,	/* mm_munmap() of its 2 MiB: the entry and its table go */
	WALK_RACE_MIGRATE,	/* a FOLL_LONGTERM pin: the MOVABLE page moves to a copy */
};

struct walk_race {
	struct mm_struct *mm;
	enum gup_race_point point;
	enum walk_race_act act;
	unsigned int actor;		/* the CPU that unmaps or migrates; CPU 0 walks */
	pte_t *slot, mapped;		/* BASE's pte and its value before */
	int go, hooked, done;		/* atomic; done: the actor's call has returned */
	bool changed_in_window;		/* the entry changed while the walker waited */
	bool done_in_window;		/* ... and the actor even returned, before the walk was over */
	long got, longterm_got;
	struct page *page, *longterm;
};

/* A wait of at most us microseconds: each call is one look; a deterministic run
 * (lab_deterministic()) counts looks instead of time, so that a seed replays. */
static bool wait_more(u64 *end, unsigned int us)
{
	if (!*end)
		*end = lab_deterministic() ? 1 : arch_cycles() + us_to_cycles(us);
	if (lab_deterministic())
		return (*end)++ < 2000;
	return arch_cycles() < *end;
}

/* On the walker, at the race point (interrupts off): let the actor go, wait until it has
 * changed the entry (5 s at most), then up to 200 ms more to see whether it can finish. */
static void walk_race_hook(enum gup_race_point point, struct mm_struct *mm, u64 addr)
{
	struct walk_race *w = READ_ONCE(hook_ctx);
	u64 end = 0;

	if (!w || mm != w->mm || point != w->point ||
	    __atomic_exchange_n(&w->hooked, 1, __ATOMIC_ACQ_REL))
		return;
	smp_store_release(&w->go, 1);
	while (ptep_get(w->slot) == w->mapped && wait_more(&end, 5000000))
		arch_cpu_relax();
	w->changed_in_window = ptep_get(w->slot) != w->mapped;
	end = 0;
	while (!smp_load_acquire(&w->done) && wait_more(&end, 200000))
		arch_cpu_relax();
	w->done_in_window = smp_load_acquire(&w->done);
}

static void walk_race_cpu(void *arg)
{
	struct walk_race *w = arg;

	if (arch_cpu_id() == 0) {
		w->got = pin_user_pages_fast(w->mm, BASE, 1, FOLL_FAST_ONLY, &w->page);
		smp_store_release(&w->go, 1);	/* if the hook never ran */
	} else if (arch_cpu_id() == w->actor) {
		while (!smp_load_acquire(&w->go))
			arch_cpu_relax();
		if (w->act == WALK_RACE_UNMAP)
			mm_munmap(w->mm, BASE, 2ull << 20);	/* the page table goes too */
		else
			w->longterm_got = pin_user_pages(w->mm, BASE, 1, FOLL_LONGTERM, &w->longterm);
		smp_store_release(&w->done, 1);
	}
}

/* A migration moved BASE's page, data and all, to an UNMOVABLE copy pinned long-term. */
static void walk_race_check_migrated(struct ktest *t, struct walk_race *w, struct page *old)
{
	KT_EXPECT_EQ(t, w->longterm_got, 1);
	if (w->longterm_got != 1)
		return;
	KT_EXPECT_TRUE(t, w->longterm != old && w->longterm->mt != MIGRATE_MOVABLE);
	KT_EXPECT_EQ(t, ((u8 *)page_address(w->longterm))[100], 0x5a);
	unpin_user_page(w->longterm);
}

/*
 * CPU 0 pins BASE with gup-fast and stops at `point`; another CPU unmaps it, or migrates it
 * for a long-term pin. Whatever the point, the actor can change the entry but cannot finish
 * before the walk is over (its TLB shootdown IPI waits for the walker's interrupts), no freed
 * page table is read, and the walk returns nothing: the entry was gone before the walk was
 * done with it.
 */
static void gup_fast_walk_race(struct ktest *t, enum gup_race_point point, enum walk_race_act act)
{
	static struct walk_race w;
	struct gup_totals a, b;
	struct page *old;
	int level;

	KT_SKIP_UNLESS_DEBUG_VM(t, "no gup-fast race hook");
	if (lab_nr_cpus() < 2 || arch_cpu_id() != 0)
		KT_SKIP(t, "needs 2 CPUs, run from cpu0");
	memset(&w, 0, sizeof(w));
	w.mm = new_mm(t, 1);
	w.point = point;
	w.act = act;
	w.actor = 1;
	spin_lock(&w.mm->lock);
	w.slot = __mm_find_leaf(w.mm, BASE, &level);
	spin_unlock(&w.mm->lock);
	KT_ASSERT_TRUE(t, w.slot && level == 1);
	w.mapped = ptep_get(w.slot);
	old = pfn_to_page(w.mm->node, pte_pfn(w.mapped));
	memset(page_address(old), 0x5a, PAGE_SIZE);	/* what a migration must carry over */
	gup_read_totals(&a);
	run_hooked(walk_race_hook, walk_race_cpu, &w);
	ktest_printf(t, "hook %s, entry %s, %s (cpu%u) %s the walk; walk returned %ld, "
		     "poison reads %llu", w.hooked ? "ran" : "NOT RUN",
		     w.changed_in_window ? "changed in the window" : "NOT CHANGED",
		     act == WALK_RACE_UNMAP ? "unmap" : "long-term migration", w.actor,
		     w.done_in_window ? "RETURNED DURING" : "waited for", w.got,
		     (unsigned long long)MM_STAT(w.mm, poison_reads));
	KT_EXPECT_TRUE(t, w.hooked && w.changed_in_window);	/* the window was exercised */
	KT_EXPECT_FALSE(t, w.done_in_window);
	KT_EXPECT_EQ(t, MM_STAT(w.mm, poison_reads), 0);
	KT_EXPECT_LE(t, w.got, 0);
	if (w.got > 0)
		unpin_user_pages(&w.page, (unsigned long)w.got);
	if (act == WALK_RACE_MIGRATE)
		walk_race_check_migrated(t, &w, old);
	gup_read_totals(&b);
	KT_EXPECT_EQ(t, b.pins_acquired - b.pins_released, a.pins_acquired - a.pins_released);
	put_mm(t, w.mm);
}

/* The walker has read the pmd entry and is about to read the page table below it when the
 * unmap starts: the table must still be there (not freed, not poisoned) when it does. */
static void gup_fast_unmap_while_walker_reads_table(struct ktest *t)
{
	gup_fast_walk_race(t, GUP_RACE_PTE_TABLE, WALK_RACE_UNMAP);
}

/* The walker has read a pte and is about to grab its page when the unmap clears the entry:
 * the grab succeeds (the page is not freed before the shootdown), and the re-check of the
 * entry must make the walker let go of it. */
static void gup_fast_unmap_while_walker_grabs_page(struct ktest *t)
{
	gup_fast_walk_race(t, GUP_RACE_GRAB, WALK_RACE_UNMAP);
}

/*
 * The walker has read a pte of a MOVABLE page and is about to grab it when a FOLL_LONGTERM
 * pin on another CPU starts migrating that page: the migration entry goes in, but the copy
 * must not be committed (nor the old page freed) until the walk is over, since until then
 * the walker may still take the old page (the commit's "nobody else holds it" is only true
 * once every walker that read the old entry is done: the shootdown). The walker then finds
 * the entry changed and lets go; the long-term pin gets the copy, with the data.
 */
static void gup_fast_migration_while_walker_grabs_page(struct ktest *t)
{
	gup_fast_walk_race(t, GUP_RACE_GRAB, WALK_RACE_MIGRATE);
}

/* ---- munmap of an empty range while a fault installs in the same page table ---- */

#define TABLE_MAX_ROUNDS 40000
#define TABLE_WANTED 500	/* faults that saw the window: enough */

struct table_race {
	struct mm_struct *mm;
	int go, started, done;		/* round CPU 1 may start, has started, finished */
	unsigned int rounds;
	u64 overlapped, errors;
};

static void wait_for_round(int *what, int round)
{
	while (smp_load_acquire(what) < round)
		arch_cpu_relax();	/* answers the other CPU's shootdown */
}

/* One round on CPU 0: unmap our page and fault it back in as CPU 1 starts a munmap in the
 * same table; count it if CPU 1's munmap began during the fault (the race window). */
static void table_race_round(struct table_race *r, int round)
{
	struct page *p;
	bool began;

	mm_munmap(r->mm, BASE, PAGE_SIZE);
	if (mm_mmap_anon(r->mm, BASE, PAGE_SIZE, true, false, false))
		__atomic_fetch_add(&r->errors, 1, __ATOMIC_RELAXED);
	smp_store_release(&r->go, round);
	began = smp_load_acquire(&r->started) == round;
	if (handle_mm_fault(r->mm, BASE))
		__atomic_fetch_add(&r->errors, 1, __ATOMIC_RELAXED);
	if (!began && smp_load_acquire(&r->started) == round)
		r->overlapped++;
	wait_for_round(&r->done, round);
	if (get_user_pages_fast(r->mm, BASE, 1, FOLL_FAST_ONLY, &p) != 1)
		__atomic_fetch_add(&r->errors, 1, __ATOMIC_RELAXED);	/* the fault lost its page */
	else
		put_user_pages(&p, 1);
}

/*
 * CPU 0 faults until TABLE_WANTED faults saw the window, or TABLE_MAX_ROUNDS rounds, or 2 s
 * (50 rounds in a deterministic run); CPU 1 unmaps an empty range of the table each round.
 */
static void table_race_cpu(void *arg)
{
	struct table_race *r = arg;
	u64 deadline = arch_cycles() + us_to_cycles(2000000);
	int round;

	if (arch_cpu_id() == 0) {
		for (round = 1; round <= (lab_deterministic() ? 50 : TABLE_MAX_ROUNDS) &&
		     r->overlapped < TABLE_WANTED &&
		     (lab_deterministic() || arch_cycles() < deadline); round++)
			table_race_round(r, round);
		r->rounds = (unsigned int)round - 1;
		smp_store_release(&r->go, -1);
		return;
	}
	if (arch_cpu_id() != 1)
		return;
	for (round = 1;; round++) {
		while (smp_load_acquire(&r->go) < round)
			if (smp_load_acquire(&r->go) < 0)
				return;
			else
				arch_cpu_relax();
		smp_store_release(&r->started, round);
		mm_munmap(r->mm, BASE + 64 * PAGE_SIZE, PAGE_SIZE);
		smp_store_release(&r->done, round);
	}
}

/*
 * CPU 0 unmaps its one-page VMA and faults it back in while CPU 1 unmaps an empty range of
 * the same page table: the fault may be between its walk to the table and its install, and
 * the munmap must neither free that table under it (it waits for the fault's mmap_lock
 * read; and a table a VMA still reaches is kept) nor lose its page. Every fault keeps its
 * page, nothing is read from a freed table, and every page comes back. Skipped if no munmap
 * began during a fault (CPUs that never ran at once: on a loaded host two threads often
 * share a core).
 */
static void gup_munmap_keeps_table_of_other_vma(struct ktest *t)
{
	static struct table_race r;

	if (lab_nr_cpus() < 2 || arch_cpu_id() != 0)
		KT_SKIP(t, "needs 2 CPUs, run from cpu0");
	memset(&r, 0, sizeof(r));
	r.mm = new_mm(t, 1);
	lab_run_on_cpus(table_race_cpu, &r);
	ktest_printf(t, "%llu of %u faults saw CPU 1 begin a munmap in their page table",
		     (unsigned long long)r.overlapped, r.rounds);
	KT_EXPECT_EQ(t, r.errors, 0ull);
	KT_EXPECT_EQ(t, r.mm->rss, 1l);
	KT_EXPECT_EQ(t, MM_STAT(r.mm, poison_reads), 0);
	put_mm(t, r.mm);
	if (!r.overlapped)	/* CPUs 0 and 1 never ran at once: nothing was tested */
		KT_SKIP(t, "race window never opened: no munmap began during a fault");
}

/* ---- faults of a VMA that munmap removes meanwhile (mmap_lock) ---- */

#define FM_ROUNDS 40
#define FM_BLOCKS 8		/* 32 MiB: every faulter may hold a 2 MiB page at once, */
#define FM_HUGE_FAULTERS 8	/* if there are at most 8 of them */
#define FM_SMALL_PAGES 64	/* the 4 KiB VMA; a one-page neighbour keeps its page table */
#define FM_NEIGHBOUR (BASE + (1ull << 20))

struct fault_munmap_race {
	struct mm_struct *mm;
	bool huge;
	int faulters;		/* the first `faulters` CPUs other than 0 to arrive fault */
	int arrived;		/* CPUs other than 0 that arrived (atomic): a CPU's rank */
	u64 len;		/* the VMA faulted and unmapped each round, at BASE */
	long rss_after;		/* rss once it is gone: the neighbour's page, or 0 */
	unsigned long free_base;	/* free pages with the VMA gone */
	int round;		/* the round whose VMA is mapped; -1: no more */
	int unmapping, unmapped;	/* the round whose munmap has begun, has returned */
	int in_window;		/* faults between their page allocation and install now */
	int holder;		/* the round whose window a fault holds open */
	int done;		/* faulters that finished their rounds, summed (atomic) */
	unsigned int rounds, bad_rounds;
	u64 faults, efaults, enomem, errors;	/* the faulters' results (atomic) */
	u64 in_munmap;		/* faults that were inside their install while munmap ran */
	u64 returned_inside;	/* munmaps that returned while such a fault was inside */
	long bad_rss;		/* the first bad round's */
	long bad_mapped;
	unsigned long bad_free, bad_verify;
};

/*
 * fault_race_hook: a fault has found its VMA and allocated its page, and has not installed
 * it. The first of each round holds its window open until a munmap of the VMA has begun,
 * then up to 20 ms more to see whether that munmap can return before the install (it must
 * not: it waits for our mmap_lock read). Counted: faults whose window a munmap overlapped.
 */
static void fault_window_hook(struct mm_struct *mm, u64 addr)
{
	struct fault_munmap_race *r = READ_ONCE(hook_ctx);
	int round;
	u64 end = 0;

	if (!r || mm != r->mm)
		return;
	round = smp_load_acquire(&r->round);
	__atomic_fetch_add(&r->in_window, 1, __ATOMIC_ACQ_REL);
	if (__atomic_exchange_n(&r->holder, round, __ATOMIC_ACQ_REL) != round) {
		while (smp_load_acquire(&r->unmapping) < round && wait_more(&end, 200000))
			arch_cpu_relax();	/* takes the shootdown, if one comes */
		end = 0;
		while (smp_load_acquire(&r->unmapped) < round && wait_more(&end, 20000))
			arch_cpu_relax();
	}
	if (smp_load_acquire(&r->unmapping) >= round)
		__atomic_fetch_add(&r->in_munmap, 1, __ATOMIC_RELAXED);
	if (smp_load_acquire(&r->unmapped) >= round)
		__atomic_fetch_add(&r->returned_inside, 1, __ATOMIC_RELAXED);
	__atomic_fetch_sub(&r->in_window, 1, __ATOMIC_ACQ_REL);
}

/* One fault's result, counted. */
static int fault_counted(struct fault_munmap_race *r, u64 addr)
{
	int err = handle_mm_fault(r->mm, addr);

	__atomic_fetch_add(err == 0 ? &r->faults : err == -EFAULT ? &r->efaults :
			   err == -ENOMEM ? &r->enomem : &r->errors, 1, __ATOMIC_RELAXED);
	return err;
}

/* A faulter's wait for round `round` to begin (*roundp reaching it); false once the rounds
 * are over (-1). */
static bool round_begun(int *roundp, int round)
{
	while (smp_load_acquire(roundp) < round && smp_load_acquire(roundp) >= 0)
		arch_cpu_relax();
	return smp_load_acquire(roundp) >= 0;
}

/*
 * Faulters, each round: fault the VMA's pages (each CPU from its own
 * offset) until one finds no VMA or the munmap has returned. In a deterministic run at most
 * 16 faults, then wait: faulters that never wait would keep a lower-priority unmapper from
 * ever running.
 */
static void fm_faulter(struct fault_munmap_race *r)
{
	unsigned long nr = r->huge ? 1 : r->len >> PAGE_SHIFT, i = arch_cpu_id() * 8;

	for (int round = 1;; round++) {
		unsigned int n = 0;

		if (!round_begun(&r->round, round))
			return;
		while (smp_load_acquire(&r->unmapped) < round && (!lab_deterministic() || n++ < 16) &&
		       fault_counted(r, BASE + (i++ % nr) * PAGE_SIZE) != -EFAULT)
			arch_cpu_relax();	/* lets the unmapper run */
		while (smp_load_acquire(&r->unmapped) < round)
			arch_cpu_relax();
		__atomic_fetch_add(&r->done, 1, __ATOMIC_RELEASE);
	}
}

/* Pages present in [start, start + nr pages), each looked up on its own (holes allowed). */
static long present_pages(struct mm_struct *mm, u64 start, unsigned long nr)
{
	long n = 0;

	for (unsigned long i = 0; i < nr; i++)
		n += mapped_pages(mm, start + i * PAGE_SIZE, 1);
	return n;
}

/* After a round: the VMA's pages and tables all gone, nothing else changed. */
static void fm_check_round(struct fault_munmap_race *r)
{
	long rss = READ_ONCE(r->mm->rss);
	long mapped = present_pages(r->mm, BASE, r->len >> PAGE_SHIFT);
	unsigned long free = node_free_pages(r->mm->node), verify = mm_verify(r->mm->node);

	if (rss == r->rss_after && !mapped && free == r->free_base && !verify)
		return;
	if (!r->bad_rounds++) {
		r->bad_rss = rss;
		r->bad_mapped = mapped;
		r->bad_free = free;
		r->bad_verify = verify;
	}
}

/*
 * CPU 0, each round: map the VMA, wait until a fault is inside its install, munmap it, wait
 * for the faulters, check. Up to FM_ROUNDS rounds or 2 s (at least 3; 3 in a deterministic
 * run).
 */
static void fm_unmapper(struct fault_munmap_race *r)
{
	u64 deadline = arch_cycles() + us_to_cycles(2000000);
	int round;

	for (round = 1; round <= (lab_deterministic() ? 3 : FM_ROUNDS) &&
	     (round <= 3 || lab_deterministic() || arch_cycles() < deadline); round++) {
		u64 end = 0;

		if (mm_mmap_anon(r->mm, BASE, r->len, true, r->huge, false))
			__atomic_fetch_add(&r->errors, 1, __ATOMIC_RELAXED);
		smp_store_release(&r->round, round);
		while (!smp_load_acquire(&r->in_window) && wait_more(&end, 200000))
			arch_cpu_relax();
		smp_store_release(&r->unmapping, round);
		mm_munmap(r->mm, BASE, r->len);
		smp_store_release(&r->unmapped, round);
		while (smp_load_acquire(&r->done) < round * r->faulters)
			arch_cpu_relax();
		fm_check_round(r);
	}
	r->rounds = (unsigned int)round - 1;
	smp_store_release(&r->round, -1);
}

/* CPU 0 unmaps; faulters are ranked by arrival, not by CPU number: the online CPUs need
 * not be 0..n-1 (a CPU that never started leaves a hole). */
static void fm_cpu(void *arg)
{
	struct fault_munmap_race *r = arg;

	if (arch_cpu_id() == 0)
		fm_unmapper(r);
	else if (__atomic_fetch_add(&r->arrived, 1, __ATOMIC_RELAXED) < r->faulters)
		fm_faulter(r);
}

/*
 * Every CPU but 0 (at most 8 with 2 MiB pages) faults a VMA that CPU 0 unmaps meanwhile,
 * round after round; one fault a round holds its install open at fault_race_hook until the
 * munmap has begun. munmap must wait for the faults inside (mmap_lock) and then remove what
 * they installed: after each round rss is exactly the neighbour's, nothing is mapped in the
 * range, the free pages are those of before the round, mm_verify() finds nothing. The old
 * lockless fault installed into a table munmap had detached (rss 512 with no VMA: a leaked
 * 2 MiB page) or freed, or (4 KiB, the table kept by a neighbour) left a mapping with no VMA.
 */
static void fault_vs_munmap(struct ktest *t, bool huge)
{
	static struct fault_munmap_race r;
	struct pglist_data *pgdat;

	KT_SKIP_UNLESS_DEBUG_VM(t, "no fault_race_hook to hold an install open");
	if (lab_nr_cpus() < 2 || arch_cpu_id() != 0)
		KT_SKIP(t, "needs 2 CPUs, run from cpu0");
	memset(&r, 0, sizeof(r));
	r.huge = huge;
	r.faulters = (int)(huge ? MIN(lab_nr_cpus() - 1, FM_HUGE_FAULTERS) : lab_nr_cpus() - 1);
	r.len = huge ? PT_LEVEL_SIZE(2) : FM_SMALL_PAGES * PAGE_SIZE;
	if (!(pgdat = lab_node_create(FM_BLOCKS, true)))
		KT_SKIP(t, "needs %d free blocks of 4 MiB for its private instance", FM_BLOCKS);
	free_at_start = node_free_pages(pgdat);
	r.mm = mm_create(pgdat);
	KT_ASSERT_NOT_NULL(t, r.mm);
	t->priv = r.mm;
	if (!huge)	/* keeps the page table of the VMA raced over */
		KT_ASSERT_EQ(t, mm_mmap_anon(r.mm, FM_NEIGHBOUR, PAGE_SIZE, true, false, true), 0);
	r.rss_after = huge ? 0 : 1;
	r.free_base = node_free_pages(pgdat);
	run_fault_hooked(fault_window_hook, fm_cpu, &r);
	ktest_printf(t, "%u rounds of a %s VMA: %llu faults in, %llu found no VMA, %llu out of "
		     "memory; %llu were inside their install while munmap ran, %llu munmaps "
		     "returned before such an install", r.rounds, huge ? "2 MiB" : "64-page",
		     (unsigned long long)r.faults, (unsigned long long)r.efaults,
		     (unsigned long long)r.enomem, (unsigned long long)r.in_munmap,
		     (unsigned long long)r.returned_inside);
	if (r.bad_rounds)
		ktest_printf(t, "%u rounds left it wrong; the first: rss %ld (want %ld), %ld pages "
			     "mapped with no VMA, free pages %lu (want %lu), mm_verify %lu problems",
			     r.bad_rounds, r.bad_rss, r.rss_after, r.bad_mapped, r.bad_free,
			     r.free_base, r.bad_verify);
	KT_EXPECT_GT(t, r.in_munmap, 0ull);	/* the race window was exercised */
	KT_EXPECT_EQ(t, r.returned_inside, 0ull);
	KT_EXPECT_EQ(t, r.bad_rounds, 0u);
	KT_EXPECT_EQ(t, r.errors, 0ull);
	put_mm_unless_bad(t, r.mm, r.bad_rounds);
}

/* A 2 MiB VMA: the fault's page is one order-9 block, its leaf in a table munmap frees. */
static void handle_mm_fault_vs_munmap_2m_vma(struct ktest *t)
{
	fault_vs_munmap(t, true);
}

/* A 64-page VMA whose page table a neighbour keeps: a late install would be a mapping
 * with no VMA. */
static void handle_mm_fault_vs_munmap_4k_vma(struct ktest *t)
{
	fault_vs_munmap(t, false);
}

/* ---- one empty page faulted by every CPU at once: one install wins ---- */

#define SAME_ROUNDS 16

struct same_fault {
	struct mm_struct *mm;
	int faulters;		/* the first `faulters` CPUs other than 0 to arrive fault */
	int arrived;		/* CPUs other than 0 that arrived (atomic): a CPU's rank */
	int round;		/* the round whose page is being faulted; -1: no more */
	int hooked;		/* faults that reached fault_race_hook, all rounds (atomic) */
	int done;		/* faults returned, all rounds (atomic) */
	unsigned long free_base;	/* free pages with only the neighbour mapped */
	unsigned int rounds, bad_rounds;
	u64 lost, errors;	/* faults whose page was allocated for an entry another got */
	long bad_rss;
	unsigned long bad_free;
};

/* fault_race_hook: hold each fault, its page allocated and not installed, until every
 * faulter of the round holds one too (200 ms at most), so that all race to install. */
static void same_fault_hook(struct mm_struct *mm, u64 addr)
{
	struct same_fault *s = READ_ONCE(hook_ctx);
	int want;
	u64 end = 0;

	if (!s || mm != s->mm)
		return;
	want = smp_load_acquire(&s->round) * s->faulters;
	__atomic_fetch_add(&s->hooked, 1, __ATOMIC_ACQ_REL);
	while (smp_load_acquire(&s->hooked) < want && wait_more(&end, 200000))
		arch_cpu_relax();
}

/* CPU 0's round: map the page, let the faulters go, wait for them; then rss must count one
 * page more than the neighbour's, and once it is unmapped every loser's page is free again. */
static void same_fault_round(struct same_fault *s, int round)
{
	int hooked = smp_load_acquire(&s->hooked);
	long rss;
	unsigned long free;

	if (mm_mmap_anon(s->mm, BASE, PAGE_SIZE, true, false, false))
		__atomic_fetch_add(&s->errors, 1, __ATOMIC_RELAXED);
	smp_store_release(&s->round, round);
	while (smp_load_acquire(&s->done) < round * s->faulters)
		arch_cpu_relax();
	s->lost += (u64)(smp_load_acquire(&s->hooked) - hooked - 1);
	rss = READ_ONCE(s->mm->rss);
	mm_munmap(s->mm, BASE, PAGE_SIZE);
	free = node_free_pages(s->mm->node);
	if ((rss != 2 || free != s->free_base) && !s->bad_rounds++) {
		s->bad_rss = rss;
		s->bad_free = free;
	}
}

/* CPU 0 runs the rounds; the faulters, ranked by arrival, fault BASE once a round. */
static void same_fault_cpu(void *arg)
{
	struct same_fault *s = arg;

	if (arch_cpu_id() == 0) {
		for (s->rounds = 1; s->rounds <= (lab_deterministic() ? 3u : SAME_ROUNDS); s->rounds++)
			same_fault_round(s, (int)s->rounds);
		s->rounds--;
		smp_store_release(&s->round, -1);
		return;
	}
	if (__atomic_fetch_add(&s->arrived, 1, __ATOMIC_RELAXED) >= s->faulters)
		return;
	for (int round = 1; round_begun(&s->round, round); round++) {
		if (handle_mm_fault(s->mm, BASE))
			__atomic_fetch_add(&s->errors, 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(&s->done, 1, __ATOMIC_RELEASE);
	}
}

/*
 * empty -> present is a cmpxchg, and the loser frees its page (mm/vm.h): every CPU but 0
 * faults the same empty page at once, round after round, each held at fault_race_hook with
 * its page allocated until all are, so all but one lose. After each round rss counts one
 * page (and the neighbour's, which keeps the page table), and once it is unmapped the free
 * pages are exactly those of before. Window: faults that lost (asserted > 0).
 */
static void handle_mm_fault_same_page_on_every_cpu(struct ktest *t)
{
	static struct same_fault s;
	struct pglist_data *pgdat;

	KT_SKIP_UNLESS_DEBUG_VM(t, "no fault_race_hook to line the faults up");
	if (lab_nr_cpus() < 3 || arch_cpu_id() != 0)
		KT_SKIP(t, "needs 3 CPUs, run from cpu0");
	memset(&s, 0, sizeof(s));
	s.faulters = (int)lab_nr_cpus() - 1;
	if (!(pgdat = lab_node_create(GUP_BLOCKS, true)))
		KT_SKIP(t, "needs %d free blocks of 4 MiB for its private instance", GUP_BLOCKS);
	free_at_start = node_free_pages(pgdat);
	s.mm = mm_create(pgdat);
	KT_ASSERT_NOT_NULL(t, s.mm);
	t->priv = s.mm;
	KT_ASSERT_EQ(t, mm_mmap_anon(s.mm, FM_NEIGHBOUR, PAGE_SIZE, true, false, true), 0);
	s.free_base = node_free_pages(pgdat);
	run_fault_hooked(same_fault_hook, same_fault_cpu, &s);
	ktest_printf(t, "%u rounds of %d faults of one page: %llu lost the install", s.rounds,
		     s.faulters, (unsigned long long)s.lost);
	if (s.bad_rounds)
		ktest_printf(t, "%u rounds left it wrong; the first: rss %ld (want 2), free pages "
			     "%lu (want %lu)", s.bad_rounds, s.bad_rss, s.bad_free, s.free_base);
	KT_EXPECT_GT(t, s.lost, 0ull);	/* the race window was exercised */
	KT_EXPECT_EQ(t, s.bad_rounds, 0u);
	KT_EXPECT_EQ(t, s.errors, 0ull);
	put_mm_unless_bad(t, s.mm, s.bad_rounds);
}

/* ---- FOLL_LONGTERM migration while other CPUs fault the pages being moved ---- */

#define RACE_CHUNK 64		/* pages migrated per round */
#define RACE_ROUNDS 32

struct migrate_race {
	struct mm_struct *mm;
	int round;		/* the chunk being migrated; -1 when done */
	unsigned int rounds;
	u64 faults, errors;
};

/* CPU 0: long-term pin (so migrate) one chunk of MOVABLE pages per round, for up to 2 s (4
 * rounds in a deterministic run). */
static void migrate_race_pinner(struct migrate_race *r)
{
	u64 deadline = arch_cycles() + us_to_cycles(2000000);
	struct page *pages[RACE_CHUNK];
	int round;

	for (round = 0; round < (lab_deterministic() ? 4 : RACE_ROUNDS) &&
	     (round < 3 || lab_deterministic() || arch_cycles() < deadline); round++) {
		u64 start = BASE + (u64)round * RACE_CHUNK * PAGE_SIZE;

		smp_store_release(&r->round, round);
		if (pin_user_pages(r->mm, start, RACE_CHUNK, FOLL_LONGTERM, pages) != RACE_CHUNK) {
			__atomic_fetch_add(&r->errors, 1, __ATOMIC_RELAXED);
			continue;
		}
		unpin_user_pages(pages, RACE_CHUNK);
	}
	r->rounds = (unsigned int)round;
	smp_store_release(&r->round, -1);
}

/*
 * Other CPUs: fault every page of the current chunk, over and over (all are mapped). In a
 * deterministic run only twice a round, then wait for the next: faulters that never wait
 * would keep a lower-priority pinner from ever running.
 */
static void migrate_race_cpu(void *arg)
{
	struct migrate_race *r = arg;
	int round, last = -1, times = 0;

	if (arch_cpu_id() == 0) {
		migrate_race_pinner(r);
		return;
	}
	while ((round = smp_load_acquire(&r->round)) >= 0) {
		u64 start = BASE + (u64)round * RACE_CHUNK * PAGE_SIZE;

		times = round == last ? times + 1 : 0;
		last = round;
		if (lab_deterministic() && times >= 2) {
			arch_cpu_relax();
			continue;
		}
		for (int i = 0; i < RACE_CHUNK; i++)
			if (handle_mm_fault(r->mm, start + (u64)i * PAGE_SIZE))
				__atomic_fetch_add(&r->errors, 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(&r->faults, RACE_CHUNK, __ATOMIC_RELAXED);
		arch_cpu_relax();	/* a spin wait: the host takes the migrator's shootdown */
	}
}

/*
 * FOLL_LONGTERM migration of up to 32 chunks of 64 pages on CPU 0 while every other CPU
 * faults the chunk being migrated: a fault that finds its page being moved waits (counted:
 * the race window; none is a skip) and installs nothing, so rss stays equal to the pages
 * mapped, every page is still mapped, and none is lost.
 */
static void gup_migration_vs_faults(struct ktest *t)
{
	static struct migrate_race r;
	const unsigned long nr = (unsigned long)RACE_ROUNDS * RACE_CHUNK;
	struct gup_totals a, b;
	u64 waits;

	if (lab_nr_cpus() < 2 || arch_cpu_id() != 0)
		KT_SKIP(t, "needs 2 CPUs, run from cpu0");
	memset(&r, 0, sizeof(r));
	r.mm = new_mm(t, nr);
	gup_read_totals(&a);
	lab_run_on_cpus(migrate_race_cpu, &r);
	gup_read_totals(&b);
	waits = MM_STAT(r.mm, migration_waits);
	ktest_printf(t, "%u chunks of %d pages migrated while %u CPUs faulted them: %llu faults, "
		     "%llu found their page being moved and waited", r.rounds, RACE_CHUNK,
		     lab_nr_cpus() - 1, (unsigned long long)r.faults, (unsigned long long)waits);
	KT_EXPECT_EQ(t, r.errors, 0ull);
	KT_EXPECT_EQ(t, b.longterm_migrated - a.longterm_migrated, (u64)r.rounds * RACE_CHUNK);
	KT_EXPECT_EQ(t, (unsigned long)r.mm->rss, nr);
	KT_EXPECT_EQ(t, mapped_pages(r.mm, BASE, nr), (long)nr);
	put_mm(t, r.mm);
	if (!waits)	/* no fault met a page being moved: nothing was tested */
		KT_SKIP(t, "no race: no fault found its page being moved");
}

static const struct ktest_case gup_private_cases[] = {
	KTEST_CASE_NOFAIL(gup_pin_unpin_balance, "pins exactly 64 faulted pages"),
	KTEST_CASE_CONCURRENT_NOFAIL(gup_has_pinned_written_if_clear,
				     "counts pins of a populated range"),
	KTEST_CASE_NOFAIL(gup_free_pages_many_refs, "checks free pages exactly"),
	KTEST_CASE_CONCURRENT(gup_unmap_vs_fast_walk),
	KTEST_CASE_CONCURRENT_NOFAIL(gup_migration_vs_faults, "checks rss and free pages exactly"),
	KTEST_CASE_CONCURRENT_NOFAIL(gup_munmap_keeps_table_of_other_vma,
				     "checks rss and free pages exactly"),
	KTEST_CASE_CONCURRENT_NOFAIL(gup_fast_unmap_while_walker_reads_table,
				     "needs its one page faulted in"),
	KTEST_CASE_CONCURRENT_NOFAIL(gup_fast_unmap_while_walker_grabs_page,
				     "needs its one page faulted in"),
	KTEST_CASE_CONCURRENT_NOFAIL(gup_fast_migration_while_walker_grabs_page,
				     "needs its one page faulted in, and its copy"),
	KTEST_CASE_CONCURRENT_NOFAIL(handle_mm_fault_vs_munmap_2m_vma,
				     "checks rss and free pages exactly each round"),
	KTEST_CASE_CONCURRENT_NOFAIL(handle_mm_fault_vs_munmap_4k_vma,
				     "checks rss and free pages exactly each round"),
	KTEST_CASE_CONCURRENT_NOFAIL(handle_mm_fault_same_page_on_every_cpu,
				     "checks rss and free pages exactly each round"),
};
KTEST_SUITE(gup_private, gup_private_cases, .exit = gup_private_exit);
