/*
 * KTAP suite mm_deferred: the deferred memory-map init (mm/mm_init.c) on real CPUs. The boot
 * node must be complete and exactly accounted for; a private node over kernel memory is then
 * finished by every CPU at once (smp_run_on_all), alone, while other CPUs allocate from it,
 * over a previous boot's memory map, and while a CPU steals the pageblocks it hands over.
 * Host versions with more cases: tests/host/test_deferred.c.
 */
#include "tests/ktest/ktest.h"
#include "kernel/bootinfo.h"
#include "kernel/smp.h"
#include "kernel/string.h"
#include "kernel/timer.h"
#include "mm/mm_test.h"
#include "mm/memblock.h"
#include "mm/fail_page_alloc.h"
#include "tests/kernel/deferred_check.h"

#define DEF_BLOCKS 32		/* private node: 32 MAX_ORDER blocks, 128 MiB */
#define ALLOCATORS 2		/* CPUs 0..1 allocate in deferred_grow_zone_races_workers */
#define HELD_MAX 2048

/*
 * The boot machine, every node: nothing is left deferred in any zone, and every managed page
 * was handed over exactly once, at boot (mm_init), on demand, or by the CPUs after bring-up.
 */
static void deferred_init_boot_nodes_complete(struct ktest *t)
{
	const struct mm_machine *m = mm_machine();

	for (unsigned int nid = 0; nid < m->nr_nodes; nid++) {
		struct pglist_data *pgdat = m->node[nid];

		for (int z = 0; z < MAX_NR_ZONES; z++) {
			KT_EXPECT_FALSE(t, zone_has_deferred(&pgdat->node_zones[z]));
			KT_EXPECT_EQ(t, pgdat->node_zones[z].deferred_free, 0ul);
		}
		KT_EXPECT_EQ(t, pgdat->deferred_early + pgdat->deferred_grown +
				pgdat->deferred_workers, (u64)node_managed_pages(pgdat));
		KT_EXPECT_EQ(t, mm_verify(pgdat), 0ul);
		ktest_printf(t, "%s: managed %lu pages: %llu before SMP bring-up, %llu grown on "
			     "demand, %llu by the CPUs afterwards (%llu of %llu chunks by other "
			     "nodes' CPUs)", pgdat->name, node_managed_pages(pgdat),
			     (unsigned long long)pgdat->deferred_early,
			     (unsigned long long)pgdat->deferred_grown,
			     (unsigned long long)pgdat->deferred_workers,
			     (unsigned long long)pgdat->deferred_chunks_remote,
			     (unsigned long long)pgdat->deferred_chunks);
	}
}

static struct memblock def_mb;
static struct pglist_data def_node;
static struct page *def_backing[DEF_BLOCKS];

static void def_release_backing(void)
{
	for (int i = 0; i < DEF_BLOCKS; i++) {
		if (def_backing[i])
			__free_pages(def_backing[i], MAX_ORDER);
		def_backing[i] = NULL;
	}
}

/* The private node's RAM: the backing blocks; this_boot adds the reservations a previous
 * boot did not have (deferred_reserve_this_boot(): three per block, of memblock's 128). */
static void def_memblock(bool this_boot)
{
	struct mem_region map[DEF_BLOCKS];

	for (int i = 0; i < DEF_BLOCKS; i++)
		map[i] = (struct mem_region){ page_to_phys(def_backing[i]),
					      MAX_ORDER_NR_PAGES << PAGE_SHIFT, MEM_USABLE };
	memblock_init(&def_mb, ~0ull);
	memblock_add_mmap(&def_mb, map, DEF_BLOCKS);
	for (int i = 0; this_boot && i < DEF_BLOCKS; i++)
		deferred_reserve_this_boot(&def_mb, map[i].base, map[i].length);
}

/* DEF_BLOCKS blocks of the kernel's memory as a memory map, or false if there is not
 * enough free memory (small -m). Scaffolding: fail_page_alloc= does not fail them. */
static bool def_take_backing(void)
{
	bool ok = true;

	fail_page_alloc_pause();
	for (int i = 0; ok && i < DEF_BLOCKS; i++) {
		def_backing[i] = alloc_pages(GFP_KERNEL | __GFP_NOWARN, MAX_ORDER);
		ok = def_backing[i] != NULL;
	}
	fail_page_alloc_resume();
	if (!ok) {
		def_release_backing();
		return false;
	}
	def_memblock(false);
	return true;
}

struct def_run {
	struct pglist_data *pgdat;
	unsigned int allocators;		/* CPUs 0..allocators-1 allocate, the rest init */
	unsigned int nr_allocators;		/* how many of those are online */
	unsigned long chunks[MAX_CPUS];		/* by each worker */
	unsigned int workers_left, allocating, workers_waiting;
	u64 grown_at_start, grown_at_end;	/* the node's grown chunks when the workers
						 * were released and when the last finished */
	unsigned long grown_inside;		/* ... while a worker held an unwritten chunk */
	bool held_first[MAX_CPUS];		/* the worker has held its first chunk */
	struct page *held[ALLOCATORS][HELD_MAX];
	unsigned long nr_held[ALLOCATORS];
};

/* Allocate orders 0..3 and keep them until the workers are done. */
static void def_allocate(struct def_run *r, unsigned int cpu)
{
	__atomic_fetch_add(&r->allocating, 1, __ATOMIC_RELEASE);
	while (smp_load_acquire(&r->workers_left) && r->nr_held[cpu] < HELD_MAX) {
		struct page *page = alloc_pages_node(r->pgdat, GFP_KERNEL | __GFP_NOWARN,
						     r->nr_held[cpu] % 4);

		if (!page)
			break;
		r->held[cpu][r->nr_held[cpu]++] = page;
	}
}

static void def_run_cpu(void *arg)
{
	struct def_run *r = arg;
	unsigned int cpu = arch_cpu_id();

	if (cpu < r->allocators) {
		def_allocate(r, cpu);
		return;
	}
	/* Start together, so that the first claims collide (and after the allocators). */
	if (__atomic_sub_fetch(&r->workers_waiting, 1, __ATOMIC_ACQ_REL) == 0)
		r->grown_at_start = smp_load_acquire(&r->pgdat->deferred_grown_chunks);
	while (smp_load_acquire(&r->allocating) < r->nr_allocators ||
	       smp_load_acquire(&r->workers_waiting))
		arch_cpu_relax();
	r->chunks[cpu] = deferred_init_memmap(r->pgdat);
	if (__atomic_sub_fetch(&r->workers_left, 1, __ATOMIC_ACQ_REL) == 0)
		r->grown_at_end = smp_load_acquire(&r->pgdat->deferred_grown_chunks);
}

static struct def_run def_runs;

#define DEF_HOLD_MS 2000	/* longest a worker holds its first chunk for a grow */

/*
 * deferred_init_race_hook: a worker has claimed its first chunk and written none of it.
 * Hold it until an allocating CPU has grown a zone of the node (claimed the next chunk
 * from the same cursor, written it and merged its blocks beside ours), or DEF_HOLD_MS.
 */
static void def_hold_first_chunk(struct zone *zone, unsigned long spfn)
{
	struct def_run *r = &def_runs;
	unsigned int cpu = arch_cpu_id();
	u64 before, end;

	if (zone->node != r->pgdat || cpu < r->allocators || r->held_first[cpu])
		return;
	r->held_first[cpu] = true;
	before = smp_load_acquire(&r->pgdat->deferred_grown_chunks);
	end = arch_cycles() + us_to_cycles(DEF_HOLD_MS * 1000ull);
	while (arch_cycles() < end) {
		u64 now = smp_load_acquire(&r->pgdat->deferred_grown_chunks);

		if (now != before) {
			__atomic_fetch_add(&r->grown_inside, now - before, __ATOMIC_RELAXED);
			return;
		}
		arch_cpu_relax();
	}
}

/* Build the private node deferred, run it on every CPU, check and report; false if the
 * node could not be built (the case is then skipped). */
static bool def_run_all(struct ktest *t, struct def_run *r, unsigned int allocators)
{
	unsigned long total, lo = ~0ul, hi = 0, chunks = 0;

	if (!def_take_backing())
		return false;
	if (pgdat_init_deferred(&def_node, &def_mb, "deferred", nr_cpu_ids, pcp_lock_default)) {
		def_release_backing();
		return false;
	}
	total = node_free_pages(&def_node) + node_deferred_pages(&def_node);
	deferred_scribble(&def_node);
	memset(r, 0, sizeof(*r));
	r->pgdat = &def_node;
	r->allocators = allocators;
	for_each_online_cpu(cpu) {
		r->nr_allocators += cpu < allocators;
		r->workers_left += cpu >= allocators;
	}
	r->workers_waiting = r->workers_left;
	if (allocators)
		smp_store_release(&deferred_init_race_hook, def_hold_first_chunk);
	smp_run_on_all(def_run_cpu, r);
	smp_store_release(&deferred_init_race_hook, NULL);
	deferred_init_done(def_node.machine);
	for_each_online_cpu(cpu) {
		if (cpu < allocators)
			continue;
		chunks += r->chunks[cpu];
		lo = MIN(lo, r->chunks[cpu]);
		hi = MAX(hi, r->chunks[cpu]);
	}
	ktest_printf(t, "%lu pages deferred of %lu: %lu chunks on %u CPUs (%lu-%lu each), %llu "
		     "pages grown on demand by %u allocating CPUs, %lu chunks of it while workers ran, "
		     "%lu while a worker held an unwritten chunk",
		     total - (unsigned long)def_node.deferred_early, total, chunks,
		     nr_cpus_online() - r->nr_allocators, lo, hi,
		     (unsigned long long)def_node.deferred_grown, r->nr_allocators,
		     (unsigned long)(r->grown_at_end - r->grown_at_start), r->grown_inside);
	KT_EXPECT_EQ(t, def_node.deferred_early + def_node.deferred_grown +
			def_node.deferred_workers, (u64)total);
	for (unsigned int a = 0; a < allocators; a++)
		for (unsigned long k = 0; k < r->nr_held[a]; k++)
			__free_pages(r->held[a][k], k % 4);
	drain_all_pages_machine(def_node.machine);
	KT_EXPECT_EQ(t, deferred_count_unwritten(&def_node), 0ul);
	KT_EXPECT_EQ(t, node_free_pages(&def_node), total);
	KT_EXPECT_EQ(t, mm_verify(&def_node), 0ul);
	KT_EXPECT_EQ(t, def_node.bad_pages, 0ull);
	pgdat_destroy(&def_node);
	def_release_backing();
	return true;
}

/*
 * A private node of 128 MiB built with only its first chunks (every other struct page filled
 * with garbage), finished by every CPU at once: all struct pages written, every free page
 * on the lists exactly once (free count = the node's total, mm_verify clean).
 */
static void deferred_init_memmap_every_cpu(struct ktest *t)
{
	if (!def_run_all(t, &def_runs, 0))
		KT_SKIP(t, "not enough free memory for a %d MiB private node", DEF_BLOCKS * 4);
}

/*
 * The same while CPUs 0 and 1 allocate from the node with watermarks on, growing its zones
 * on demand from the cursors the other CPUs are taking chunks from; each worker holds its
 * first claimed chunk, unwritten, until a zone has grown (deferred_init_race_hook). The
 * race must have been exercised (chunks grown while a worker held one); then the counts are
 * exact as above.
 */
static void deferred_grow_zone_races_workers(struct ktest *t)
{
	KT_SKIP_UNLESS_DEBUG_VM(t, "no deferred_init_race_hook to hold a chunk unwritten");
	if (nr_cpus_online() < ALLOCATORS + 1)
		KT_SKIP(t, "needs %d CPUs: %d allocating and at least one initialising",
			ALLOCATORS + 1, ALLOCATORS);
	if (!def_run_all(t, &def_runs, ALLOCATORS))
		KT_SKIP(t, "not enough free memory for a %d MiB private node", DEF_BLOCKS * 4);
	if (!def_runs.grown_inside)
		KT_SKIP(t, "the race was not exercised: no chunk was grown on demand while a "
			"worker held an unwritten chunk (tested nothing)");
}

/* ---- after a warm reset: a previous boot's memory map ---- */

#define DEF_PAGES (DEF_BLOCKS * MAX_ORDER_NR_PAGES)
#define DEF_OLD_ORDER 8		/* DEF_PAGES struct pages: 1 MiB */
#define DEF_HELD_ORDER 6	/* DEF_PAGES pointers: 256 KiB */
BUILD_BUG_ON(DEF_PAGES * sizeof(struct page) != PAGE_SIZE << DEF_OLD_ORDER);
BUILD_BUG_ON(DEF_PAGES * sizeof(struct page *) != PAGE_SIZE << DEF_HELD_ORDER);

static struct page *def_old_pages, *def_held_pages;
static struct page *def_old;		/* the previous boot's struct pages, block by block */
static struct page **def_held;		/* blocks a test holds */

static void def_release_bufs(void)
{
	if (def_old_pages)
		__free_pages(def_old_pages, DEF_OLD_ORDER);
	if (def_held_pages)
		__free_pages(def_held_pages, DEF_HELD_ORDER);
	def_old_pages = def_held_pages = NULL;
}

/* The backing blocks and the two buffers above, from the kernel; false if short. */
static bool def_take_all(void)
{
	fail_page_alloc_pause();
	def_old_pages = alloc_pages(GFP_KERNEL | __GFP_NOWARN, DEF_OLD_ORDER);
	def_held_pages = alloc_pages(GFP_KERNEL | __GFP_NOWARN, DEF_HELD_ORDER);
	fail_page_alloc_resume();
	if (!def_old_pages || !def_held_pages || !def_take_backing()) {
		def_release_bufs();
		return false;
	}
	def_old = page_address(def_old_pages);
	def_held = page_address(def_held_pages);
	return true;
}

static void def_release_all(void)
{
	pgdat_destroy(&def_node);
	def_release_backing();
	def_release_bufs();
}

static unsigned long def_block_pfn(int i)
{
	return page_to_phys(def_backing[i]) >> PAGE_SHIFT;
}

/*
 * The private node as it comes up after a warm reset or kexec: the previous boot (built at
 * once without this boot's reservations, used by deferred_previous_boot()) leaves its memory
 * map in RAM, and this boot's node, deferred, has it in every struct page not written yet.
 * False if a node could not be built; *heads: the stale free heads.
 */
static bool def_after_warm_reset(struct ktest *t, unsigned long *heads)
{
	int prev_nid;

	def_memblock(false);
	if (pgdat_init(&def_node, &def_mb, "deferred", nr_cpu_ids, pcp_lock_default))
		return false;
	prev_nid = def_node.nid;
	deferred_previous_boot(t, &def_node, def_held, DEF_PAGES);
	for (int i = 0; i < DEF_BLOCKS; i++)
		deferred_save_memmap(&def_node, def_old + i * MAX_ORDER_NR_PAGES, def_block_pfn(i),
				     MAX_ORDER_NR_PAGES);
	pgdat_destroy(&def_node);
	def_memblock(true);
	if (pgdat_init_deferred(&def_node, &def_mb, "deferred", nr_cpu_ids, pcp_lock_default))
		return false;
	KT_EXPECT_EQ(t, def_node.nid, prev_nid);	/* the same machine: the same node */
	*heads = 0;
	for (int i = 0; i < DEF_BLOCKS; i++)
		*heads += deferred_scribble_previous_boot(&def_node, def_old + i * MAX_ORDER_NR_PAGES,
							  def_block_pfn(i), MAX_ORDER_NR_PAGES);
	return true;
}

static void def_init_cpu(void *arg)
{
	deferred_init_memmap(arg);
}

/*
 * The private node after a warm reset (above), finished by every CPU at once: no struct page
 * the previous boot left is read. The same free blocks per order and free pages as the node
 * built at once with this boot's reservations, mm_verify clean, no reserved page inside a
 * free block, every struct page written.
 */
static void deferred_init_memmap_over_previous_boot(struct ktest *t)
{
	unsigned long eager[NR_ORDERS] = { 0 }, got[NR_ORDERS] = { 0 }, total, heads = 0;

	if (!def_take_all())
		KT_SKIP(t, "not enough free memory for a %d MiB private node", DEF_BLOCKS * 4);
	def_memblock(true);
	if (pgdat_init(&def_node, &def_mb, "deferred", nr_cpu_ids, pcp_lock_default)) {
		def_release_backing();
		def_release_bufs();
		KT_FAIL(t, "the private node could not be built");
		return;
	}
	for (int z = 0; z < MAX_NR_ZONES; z++)
		for (unsigned int o = 0; o <= MAX_ORDER; o++)
			eager[o] += def_node.node_zones[z].free_area[o].nr_free;
	total = node_free_pages(&def_node);
	pgdat_destroy(&def_node);
	if (!def_after_warm_reset(t, &heads)) {
		def_release_backing();
		def_release_bufs();
		KT_FAIL(t, "the private node could not be built");
		return;
	}
	smp_run_on_all(def_init_cpu, &def_node);
	deferred_init_done(def_node.machine);
	for (int z = 0; z < MAX_NR_ZONES; z++)
		for (unsigned int o = 0; o <= MAX_ORDER; o++)
			got[o] += def_node.node_zones[z].free_area[o].nr_free;
	ktest_printf(t, "%lu stale free heads in the unwritten memory map; %lu pages free on %u "
		     "CPUs, %lu built at once", heads, node_free_pages(&def_node), nr_cpus_online(),
		     total);
	KT_EXPECT_TRUE(t, heads > 100);		/* the previous boot left free blocks there */
	for (unsigned int o = 0; o <= MAX_ORDER; o++)
		KT_EXPECT_EQ(t, got[o], eager[o]);
	KT_EXPECT_EQ(t, node_free_pages(&def_node), total);
	KT_EXPECT_EQ(t, mm_verify(&def_node), 0ul);
	KT_EXPECT_EQ(t, deferred_count_reserved_in_free(&def_node), 0ul);
	KT_EXPECT_EQ(t, deferred_count_unwritten(&def_node), 0ul);
	def_release_all();
}

/* ---- pageblock steals while the init runs ---- */

struct def_steal_run {
	unsigned int stealer;		/* the CPU that steals; the others initialise */
	unsigned long passes;		/* deferred_steal_all() calls it has made */
	unsigned int workers_left;
	struct deferred_steals s;
	unsigned long n;		/* blocks in def_held */
};

static struct def_steal_run def_steals;

static void def_steal_cpu(void *arg)
{
	struct def_steal_run *r = arg;

	if (arch_cpu_id() != r->stealer) {
		deferred_init_memmap(&def_node);
		__atomic_sub_fetch(&r->workers_left, 1, __ATOMIC_RELEASE);
		return;
	}
	while (smp_load_acquire(&r->workers_left)) {
		deferred_steal_all(&def_node, &r->s, true, def_held, &r->n, DEF_PAGES);
		smp_store_release(&r->passes, r->passes + 1);
		arch_cpu_relax();
	}
}

#define DEF_STEAL_WAIT_MS 200	/* longest a worker waits for the stealer at a claim */

/*
 * deferred_init_race_hook: a worker has claimed a chunk and written none of it. Wait until
 * the stealing CPU has made two passes since (or DEF_STEAL_WAIT_MS): it has then taken what
 * the chunks before handed over, with this one claimed. Without it a stealer whose vCPU the
 * host deschedules for a few ms finds the init over when it comes back.
 */
static void def_wait_for_stealer(struct zone *zone, unsigned long spfn)
{
	struct def_steal_run *r = &def_steals;
	unsigned long seen = smp_load_acquire(&r->passes);
	u64 end = arch_cycles() + us_to_cycles(DEF_STEAL_WAIT_MS * 1000ull);

	if (zone->node != &def_node)
		return;
	while (smp_load_acquire(&r->passes) < seen + 2 && arch_cycles() < end)
		arch_cpu_relax();
}

/*
 * The private node after a warm reset (above), finished by every CPU but this one, which
 * meanwhile takes every block they hand over with UNMOVABLE allocations while a chunk is
 * being written (each worker waits at each claim until it has looked: def_wait_for_stealer()):
 * each must fall back to MOVABLE and steal a pageblock just handed over,
 * beside a chunk still being written (whole, or walking it: move_freepages_block()). The
 * window (a chunk claimed and not finished before and after a steal) must have been hit. No
 * steal may reach a struct page not yet written (none of its pageblock still stale);
 * afterwards, everything freed: the node's total free, mm_verify clean, no reserved page
 * free, every struct page written, no bad page.
 */
static void deferred_init_memmap_races_pageblock_steals(struct ktest *t)
{
	struct def_steal_run *r = &def_steals;
	unsigned long total, heads = 0, early;

	KT_SKIP_UNLESS_DEBUG_VM(t, "no deferred_init_race_hook to hold a chunk being written");
	if (nr_cpus_online() < 2)
		KT_SKIP(t, "needs 2 CPUs: one stealing, one initialising");
	if (!def_take_all())
		KT_SKIP(t, "not enough free memory for a %d MiB private node", DEF_BLOCKS * 4);
	if (!def_after_warm_reset(t, &heads)) {
		def_release_backing();
		def_release_bufs();
		KT_FAIL(t, "the private node could not be built");
		return;
	}
	total = node_free_pages(&def_node) + node_deferred_pages(&def_node);
	for (int z = 0; z < MAX_NR_ZONES; z++)
		zone_pcp_disable(&def_node.node_zones[z]);
	deferred_no_watermarks(&def_node);
	*r = (struct def_steal_run){ .stealer = arch_cpu_id(),
				     .workers_left = nr_cpus_online() - 1 };
	deferred_steal_all(&def_node, &r->s, false, def_held, &r->n, DEF_PAGES);
	early = r->s.steals;
	smp_store_release(&deferred_init_race_hook, def_wait_for_stealer);
	smp_run_on_all(def_steal_cpu, r);
	smp_store_release(&deferred_init_race_hook, NULL);
	deferred_init_done(def_node.machine);
	ktest_printf(t, "%lu UNMOVABLE allocations on cpu%u, %lu stole a pageblock (%lu before "
		     "the %u initialising CPUs started, %lu walking it), %lu of them while a chunk "
		     "was being written; %lu stole a pageblock with a struct page not written yet",
		     r->s.allocs, r->stealer, r->s.steals, early, nr_cpus_online() - 1, r->s.walks,
		     r->s.in_window, r->s.stale);
	KT_EXPECT_TRUE(t, r->s.in_window > 0);
	KT_EXPECT_EQ(t, r->s.stale, 0ul);
	for (unsigned long i = 0; i < r->n; i++)
		__free_pages(def_held[i], def_held[i]->order);
	for (int z = 0; z < MAX_NR_ZONES; z++)
		zone_pcp_enable(&def_node.node_zones[z]);
	drain_all_pages_machine(def_node.machine);
	KT_EXPECT_EQ(t, node_free_pages(&def_node), total);
	KT_EXPECT_EQ(t, mm_verify(&def_node), 0ul);
	KT_EXPECT_EQ(t, deferred_count_reserved_in_free(&def_node), 0ul);
	KT_EXPECT_EQ(t, deferred_count_unwritten(&def_node), 0ul);
	KT_EXPECT_EQ(t, def_node.bad_pages, 0ull);
	def_release_all();
}

static const struct ktest_case mm_deferred_cases[] = {
	KTEST_CASE(deferred_init_boot_nodes_complete),
	KTEST_CASE(deferred_init_memmap_every_cpu),
	KTEST_CASE(deferred_grow_zone_races_workers),
	KTEST_CASE(deferred_init_memmap_over_previous_boot),
	KTEST_CASE(deferred_init_memmap_races_pageblock_steals),
};
KTEST_SUITE(mm_deferred, mm_deferred_cases);
