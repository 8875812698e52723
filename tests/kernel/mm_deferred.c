/*
 * KTAP suite mm_deferred: the deferred memory-map init (mm/mm_init.c) on real CPUs. The boot
 * node must be complete and exactly accounted for; a private node over kernel memory is then
 * finished by every CPU at once (smp_run_on_all), alone and while other CPUs allocate from
 * it. Host versions with more cases: tests/host/test_deferred.c.
 */
#include "tests/ktest/ktest.h"
#include "kernel/bootinfo.h"
#include "kernel/smp.h"
#include "kernel/string.h"
#include "kernel/timer.h"
#include "mm/mm_test.h"
#include "mm/memblock.h"
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

/* DEF_BLOCKS blocks of the kernel's memory as a memory map, or false if there is not
 * enough free memory (small -m). */
static bool def_take_backing(void)
{
	struct mem_region map[DEF_BLOCKS];

	for (int i = 0; i < DEF_BLOCKS; i++) {
		def_backing[i] = alloc_pages(GFP_KERNEL | __GFP_NOWARN, MAX_ORDER);
		if (!def_backing[i]) {
			def_release_backing();
			return false;
		}
		map[i] = (struct mem_region){ page_to_phys(def_backing[i]),
					      MAX_ORDER_NR_PAGES << PAGE_SHIFT, MEM_USABLE };
	}
	memblock_init(&def_mb, ~0ull);
	memblock_add_mmap(&def_mb, map, DEF_BLOCKS);
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

static const struct ktest_case mm_deferred_cases[] = {
	KTEST_CASE(deferred_init_boot_nodes_complete),
	KTEST_CASE(deferred_init_memmap_every_cpu),
	KTEST_CASE(deferred_grow_zone_races_workers),
};
KTEST_SUITE(mm_deferred, mm_deferred_cases);
