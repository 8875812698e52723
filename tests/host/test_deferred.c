/*
 * Deferred memory-map init (mm/mm_init.c) on the host: a node built with only its first
 * chunks, then grown on demand by allocations and/or finished by pthreads acting as CPUs.
 * Each test compares with the same node built at once, or checks exact counts and mm_verify().
 */
#include <stdlib.h>
#include <string.h>
#include "tests/host/harness.h"
#include "tests/kernel/deferred_check.h"

#define NR_WORKERS 4

/* Firmware-like: low 640K, RAM to 512 MiB with an ACPI hole, 256 MiB above 4 GiB. */
static const struct mem_region deferred_map[] = {
	{ 0, 0x9fc00, MEM_USABLE },
	{ 1 * MiB, 511 * MiB, MEM_USABLE },
	{ 200 * MiB + 4096, 64 * 1024, MEM_ACPI_RECLAIMABLE },
	{ 4 * GiB, 256 * MiB, MEM_USABLE },
};

struct zone_snapshot {
	unsigned long managed, free, nr_free[NR_ORDERS], wmark[NR_WMARK], reserve[MAX_NR_ZONES];
	int batch, high;
};

static void snapshot(struct pglist_data *pgdat, struct zone_snapshot snap[MAX_NR_ZONES])
{
	for (int z = 0; z < MAX_NR_ZONES; z++) {
		struct zone *zone = &pgdat->node_zones[z];

		snap[z] = (struct zone_snapshot){ .managed = zone->managed_pages,
						  .free = zone_free_pages(zone),
						  .batch = zone->pageset_batch,
						  .high = zone->pageset_high };
		for (unsigned int o = 0; o <= MAX_ORDER; o++)
			snap[z].nr_free[o] = zone->free_area[o].nr_free;
		memcpy(snap[z].wmark, zone->_watermark, sizeof(snap[z].wmark));
		memcpy(snap[z].reserve, zone->lowmem_reserve, sizeof(snap[z].reserve));
	}
}

struct worker_arg {
	struct pglist_data *pgdat;
	unsigned int *waiting;		/* threads not yet at the start line */
};

static void *worker_cpu(void *p)
{
	struct worker_arg *a = p;

	__atomic_fetch_sub(a->waiting, 1, __ATOMIC_ACQ_REL);
	while (smp_load_acquire(a->waiting))
		arch_cpu_relax();
	deferred_init_memmap(a->pgdat);
	return NULL;
}

/* NR_WORKERS threads finish the deferred init, starting together (so that their first
 * claims collide), then deferred_init_done(). */
static void finish_on_threads(struct pglist_data *pgdat)
{
	struct worker_arg args[NR_WORKERS];
	unsigned int waiting = NR_WORKERS;

	for (unsigned int i = 0; i < NR_WORKERS; i++)
		args[i] = (struct worker_arg){ pgdat, &waiting };
	run_on_cpus(NR_WORKERS, worker_cpu, args, sizeof(args[0]));
	deferred_init_done(pgdat->machine);
}

/* Sizing the limits again for the pages managed now changes nothing (they are final). */
static void expect_limits_final(struct ktest *t, struct pglist_data *pgdat)
{
	struct zone_snapshot before[MAX_NR_ZONES], after[MAX_NR_ZONES];

	snapshot(pgdat, before);
	setup_per_zone_wmarks(pgdat);
	setup_lowmem_reserve(pgdat);
	zone_pcp_update(pgdat, pgdat->machine->nr_cpus);
	snapshot(pgdat, after);
	KT_EXPECT_TRUE(t, !memcmp(before, after, sizeof(before)));
}

/*
 * Built at once, or deferred (garbage in every unwritten struct page) and finished by 4
 * threads: the same managed and free pages per zone, the same free blocks per order, the same
 * watermarks, reserves and pageset sizes, sized for the whole node; every struct page
 * written; mm_verify clean.
 */
static void deferred_init_matches_eager_build(struct ktest *t)
{
	struct zone_snapshot eager[MAX_NR_ZONES], deferred[MAX_NR_ZONES];
	struct pglist_data *pgdat = test_node_create(deferred_map, ARRAY_SIZE(deferred_map), 4);

	KT_ASSERT_TRUE(t, pgdat);
	expect_limits_final(t, pgdat);
	snapshot(pgdat, eager);
	test_node_destroy(pgdat);
	host_phys_reset();
	pgdat = test_node_create_deferred(deferred_map, ARRAY_SIZE(deferred_map), NR_WORKERS);
	KT_ASSERT_TRUE(t, pgdat);
	KT_EXPECT_TRUE(t, node_deferred_pages(pgdat) > node_free_pages(pgdat));
	deferred_scribble(pgdat);
	finish_on_threads(pgdat);
	expect_limits_final(t, pgdat);
	snapshot(pgdat, deferred);
	for (int z = 0; z < MAX_NR_ZONES; z++) {
		KT_EXPECT_EQ(t, deferred[z].managed, eager[z].managed);
		KT_EXPECT_EQ(t, deferred[z].free, eager[z].free);
		for (unsigned int o = 0; o <= MAX_ORDER; o++)
			KT_EXPECT_EQ(t, deferred[z].nr_free[o], eager[z].nr_free[o]);
		for (int w = 0; w < NR_WMARK; w++)
			KT_EXPECT_EQ(t, deferred[z].wmark[w], eager[z].wmark[w]);
		for (int j = 0; j < MAX_NR_ZONES; j++)
			KT_EXPECT_EQ(t, deferred[z].reserve[j], eager[z].reserve[j]);
		KT_EXPECT_EQ(t, deferred[z].batch, eager[z].batch);
		KT_EXPECT_EQ(t, deferred[z].high, eager[z].high);
		KT_EXPECT_TRUE(t, !zone_has_deferred(&pgdat->node_zones[z]));
	}
	KT_EXPECT_EQ(t, node_deferred_pages(pgdat), 0);
	KT_EXPECT_EQ(t, pgdat->deferred_early + pgdat->deferred_workers, node_managed_pages(pgdat));
	KT_EXPECT_EQ(t, deferred_count_unwritten(pgdat), 0);
	KT_EXPECT_EQ(t, mm_verify(pgdat), 0);
	test_node_destroy(pgdat);
}

/*
 * Many small rounds of the same (a 256 MiB node, 4 threads, 64 chunks): two threads
 * claiming one chunk, or losing one, shows up as a wrong count or an mm_verify problem
 * (or a VM_BUG_ON in the hand-over) within a few rounds; one round alone rarely races.
 */
static void deferred_init_memmap_threads_rounds(struct ktest *t)
{
	const struct mem_region map[] = { { 1 * MiB, 255 * MiB, MEM_USABLE } };
	unsigned long total = 0;

	for (unsigned int round = 0; round < 40; round++) {
		struct pglist_data *pgdat =
			test_node_create_deferred(map, ARRAY_SIZE(map), NR_WORKERS);
		unsigned long problems, free;

		KT_ASSERT_TRUE(t, pgdat);
		if (!round)
			total = node_free_pages(pgdat) + node_deferred_pages(pgdat);
		KT_EXPECT_EQ(t, node_free_pages(pgdat) + node_deferred_pages(pgdat), total);
		deferred_scribble(pgdat);
		finish_on_threads(pgdat);
		problems = mm_verify(pgdat) + deferred_count_unwritten(pgdat);
		free = node_free_pages(pgdat);
		test_node_destroy(pgdat);
		KT_EXPECT_EQ(t, free, total);
		KT_EXPECT_EQ(t, problems, 0);
		if (free != total || problems)
			return;
	}
}

/*
 * No deferred init at all: allocating every page (__GFP_MEMALLOC, order 0) grows the zones
 * chunk by chunk and gets exactly the free pages the node will have; mm_verify is clean
 * with everything allocated and after freeing; the cursor always stops on a MAX_ORDER
 * boundary; deferred_init_memmap() then finds nothing left to do.
 */
static void deferred_grow_zone_exhausts_node(struct ktest *t)
{
	struct pglist_data *pgdat =
		test_node_create_deferred(deferred_map, ARRAY_SIZE(deferred_map), 4);
	unsigned long total, n;
	struct page **pages;

	KT_ASSERT_TRUE(t, pgdat);
	total = node_free_pages(pgdat) + node_deferred_pages(pgdat);
	pages = calloc(total + 1, sizeof(*pages));
	n = alloc_until_null(pgdat, __GFP_MEMALLOC, 0, pages, total + 1);
	KT_EXPECT_EQ(t, n, total);
	KT_EXPECT_EQ(t, node_deferred_pages(pgdat), 0);
	KT_EXPECT_EQ(t, pgdat->deferred_early + pgdat->deferred_grown, total);
	KT_EXPECT_TRUE(t, pgdat->deferred_grown_chunks > 100);
	for (int z = 0; z < MAX_NR_ZONES; z++) {
		struct zone *zone = &pgdat->node_zones[z];

		KT_EXPECT_TRUE(t, !zone_has_deferred(zone));
		KT_EXPECT_TRUE(t, zone->deferred_pfn % MAX_ORDER_NR_PAGES == 0 ||
		       zone->deferred_pfn == zone->deferred_end_pfn);
	}
	KT_EXPECT_EQ(t, mm_verify(pgdat), 0);
	free_all(pages, n, 0);
	drain_all_pages_machine(pgdat->machine);
	KT_EXPECT_EQ(t, node_free_pages(pgdat), total);
	KT_EXPECT_EQ(t, deferred_init_memmap(pgdat), 0);
	deferred_init_done(pgdat->machine);
	KT_EXPECT_EQ(t, mm_verify(pgdat), 0);
	free(pages);
	test_node_destroy(pgdat);
}

/*
 * Before the deferred init: ordinary GFP_KERNEL allocations (watermarks on) of 24 MAX_ORDER
 * blocks, far more than the first chunks hold, all succeed; each grow leaves the cursor on a
 * MAX_ORDER boundary. Then the deferred init finishes the rest and the counts are exact.
 */
static void deferred_grow_zone_max_order_with_watermarks(struct ktest *t)
{
	struct pglist_data *pgdat =
		test_node_create_deferred(deferred_map, ARRAY_SIZE(deferred_map), 4);
	struct page *pages[24];
	unsigned long total, early;

	KT_ASSERT_TRUE(t, pgdat);
	total = node_free_pages(pgdat) + node_deferred_pages(pgdat);
	early = node_free_pages(pgdat);
	KT_EXPECT_TRUE(t, early < ARRAY_SIZE(pages) * MAX_ORDER_NR_PAGES);
	for (unsigned int i = 0; i < ARRAY_SIZE(pages); i++) {
		pages[i] = alloc_pages_node(pgdat, GFP_KERNEL, MAX_ORDER);
		KT_EXPECT_TRUE(t, pages[i] != NULL);
		for (int z = 0; z < MAX_NR_ZONES; z++)
			KT_EXPECT_EQ(t, pgdat->node_zones[z].deferred_pfn % MAX_ORDER_NR_PAGES, 0);
	}
	KT_EXPECT_TRUE(t, pgdat->deferred_grown_chunks >= ARRAY_SIZE(pages) - early / MAX_ORDER_NR_PAGES);
	KT_EXPECT_EQ(t, mm_verify(pgdat), 0);
	finish_on_threads(pgdat);
	for (unsigned int i = 0; i < ARRAY_SIZE(pages); i++)
		if (pages[i])
			__free_pages(pages[i], MAX_ORDER);
	drain_all_pages_machine(pgdat->machine);
	KT_EXPECT_EQ(t, node_free_pages(pgdat), total);
	KT_EXPECT_EQ(t, pgdat->deferred_early + pgdat->deferred_grown + pgdat->deferred_workers, total);
	KT_EXPECT_EQ(t, mm_verify(pgdat), 0);
	test_node_destroy(pgdat);
}

/*
 * Growth goes to the zone that was asked for: GFP_DMA32 allocations beyond DMA32's first
 * chunks grow DMA32 and leave Normal's cursor alone; GFP_KERNEL ones grow Normal (the
 * preferred zone) instead of falling back to DMA32.
 */
static void deferred_grow_zone_grows_the_zone_asked_for(struct ktest *t)
{
	struct pglist_data *pgdat =
		test_node_create_deferred(deferred_map, ARRAY_SIZE(deferred_map), 4);
	struct zone *dma32, *normal;
	unsigned long dma32_pfn, normal_pfn, n = 4 * MAX_ORDER_NR_PAGES;
	struct page **pages = calloc(2 * n, sizeof(*pages));

	KT_ASSERT_TRUE(t, pgdat);
	dma32 = &pgdat->node_zones[ZONE_DMA32];
	normal = &pgdat->node_zones[ZONE_NORMAL];
	dma32_pfn = dma32->deferred_pfn;
	normal_pfn = normal->deferred_pfn;
	KT_EXPECT_EQ(t, alloc_until_null(pgdat, GFP_DMA32, 0, pages, n), n);
	KT_EXPECT_TRUE(t, dma32->deferred_pfn > dma32_pfn);
	KT_EXPECT_EQ(t, normal->deferred_pfn, normal_pfn);
	dma32_pfn = dma32->deferred_pfn;
	KT_EXPECT_EQ(t, alloc_until_null(pgdat, GFP_KERNEL, 0, pages + n, n), n);
	KT_EXPECT_TRUE(t, normal->deferred_pfn > normal_pfn);
	KT_EXPECT_EQ(t, dma32->deferred_pfn, dma32_pfn);
	for (unsigned long i = 0; i < 2 * n; i++)
		KT_EXPECT_TRUE(t, pages[i] && page_zone(pages[i]) == (i < n ? dma32 : normal));
	free_all(pages, 2 * n, 0);
	finish_on_threads(pgdat);
	KT_EXPECT_EQ(t, mm_verify(pgdat), 0);
	free(pages);
	test_node_destroy(pgdat);
}

/* ---- several nodes ---- */

#define NUMA_CPUS 8		/* 0..3 on node 0, 4..7 on node 1; node 2 has none */

struct numa_arg {
	struct mm_machine *m;
	unsigned int *waiting;
};

/* deferred_init_cpu() on every CPU thread, starting together. */
static void *numa_worker(void *p)
{
	struct numa_arg *a = p;

	__atomic_fetch_sub(a->waiting, 1, __ATOMIC_ACQ_REL);
	while (smp_load_acquire(a->waiting))
		arch_cpu_relax();
	deferred_init_cpu(a->m, arch_cpu_id());
	return NULL;
}

/*
 * Three nodes, interleaved by sections: node 0 [256M, 512M) and [768M, 1G), node 1
 * [512M, 768M) (inside node 0's span), node 2 [1G, 1280M) with no CPU. Built deferred, then
 * finished by 8 CPU threads of nodes 0 and 1, each its own node first: every struct page of
 * every node written once and by its own node (the right nid), no node's section claimed by
 * another's init, exact free counts per node, mm_verify clean; node 2's memory map was all
 * done by other nodes' CPUs.
 */
static void deferred_init_numa_interleaved_nodes(struct ktest *t)
{
	static struct mm_machine m;
	static struct pglist_data nodes[3];
	static struct memblock mb;
	struct pglist_data *np[3] = { &nodes[0], &nodes[1], &nodes[2] };
	u8 cpu_node[NUMA_CPUS] = { 0, 0, 0, 0, 1, 1, 1, 1 };
	struct numa_arg args[NUMA_CPUS];
	unsigned int waiting = NUMA_CPUS;
	unsigned long total[3];

	memblock_init(&mb, host_boot_map_limit);
	memblock_reserve(&mb, 0, PAGE_SIZE);
	memblock_add(&mb, 256 * MiB, 1024 * MiB);
	memblock_set_node(&mb, 256 * MiB, 256 * MiB, 0);
	memblock_set_node(&mb, 512 * MiB, 256 * MiB, 1);
	memblock_set_node(&mb, 768 * MiB, 256 * MiB, 0);
	memblock_set_node(&mb, 1024 * MiB, 256 * MiB, 2);
	KT_ASSERT_TRUE(t, !mm_machine_init_deferred(&m, np, 3, &mb, "d", NUMA_CPUS, NULL, cpu_node,
						   pcp_lock_default));
	for (unsigned int nid = 0; nid < 3; nid++) {
		total[nid] = node_free_pages(&nodes[nid]) + node_deferred_pages(&nodes[nid]);
		KT_EXPECT_TRUE(t, node_deferred_pages(&nodes[nid]) > 0);
		deferred_scribble(&nodes[nid]);
	}
	KT_EXPECT_EQ(t, nodes[0].node_start_pfn, (256 * MiB) >> PAGE_SHIFT);
	KT_EXPECT_EQ(t, nodes[0].node_end_pfn, (1024 * MiB) >> PAGE_SHIFT);
	for (unsigned int i = 0; i < NUMA_CPUS; i++)
		args[i] = (struct numa_arg){ &m, &waiting };
	run_on_cpus(NUMA_CPUS, numa_worker, args, sizeof(args[0]));
	deferred_init_done(&m);
	for (unsigned int nid = 0; nid < 3; nid++) {
		struct pglist_data *pgdat = &nodes[nid];

		drain_all_pages_machine(pgdat->machine);
		KT_EXPECT_EQ(t, node_deferred_pages(pgdat), 0);
		KT_EXPECT_EQ(t, node_free_pages(pgdat), total[nid]);
		KT_EXPECT_EQ(t, pgdat->deferred_early + pgdat->deferred_grown + pgdat->deferred_workers,
			  total[nid]);
		KT_EXPECT_EQ(t, deferred_count_unwritten(pgdat), 0);
		KT_EXPECT_EQ(t, mm_verify(pgdat), 0);
		printk("node %u: %lu pages, %llu chunks, %llu by other nodes' CPUs\n", nid,
		       total[nid], (unsigned long long)pgdat->deferred_chunks,
		       (unsigned long long)pgdat->deferred_chunks_remote);
	}
	KT_EXPECT_TRUE(t, nodes[2].deferred_chunks > 0);
	KT_EXPECT_EQ(t, nodes[2].deferred_chunks_remote, nodes[2].deferred_chunks);
	mm_machine_destroy(&m);
}

/* ---- concurrent: workers and allocations at once ---- */

#define RACE_CPUS 6		/* 0..3 run the deferred init, 4..5 allocate */
#define RACE_HELD 6000
#define RACE_WAIT_MS 2000	/* longest a worker holds its first chunk for a grow */

struct race_arg {
	struct pglist_data *pgdat;
	unsigned int cpu;
	unsigned long *allocating;		/* allocators that have started */
	unsigned long *workers_left;		/* workers not yet finished */
	struct page **held;
	unsigned long n;
};

/* Chunks grown while a worker held a claimed chunk it had not written (the race window),
 * and the workers that have held theirs. */
static unsigned long race_grown_inside, race_held_first[RACE_CPUS];

/*
 * deferred_init_race_hook: a worker has claimed its first chunk and not written it yet.
 * Hold it until some allocator has grown a zone (claimed the next chunk from the same
 * cursor, written it and merged its blocks beside ours), or RACE_WAIT_MS.
 */
static void race_hold_first_chunk(struct zone *zone, unsigned long spfn)
{
	struct pglist_data *pgdat = zone->node;
	unsigned int cpu = arch_cpu_id();
	u64 before;

	if (cpu >= NR_WORKERS || race_held_first[cpu]++)
		return;
	before = smp_load_acquire(&pgdat->deferred_grown_chunks);
	for (int ms = 0; ms < RACE_WAIT_MS; ms++) {
		u64 now = smp_load_acquire(&pgdat->deferred_grown_chunks);

		if (now != before) {
			__atomic_fetch_add(&race_grown_inside, now - before, __ATOMIC_RELAXED);
			return;
		}
		host_race_delay(1000);	/* a scheduling point under --pct */
	}
}

/* Orders MAX_ORDER and 0 in turn: with the workers holding their first chunks, the
 * allocators use the first chunks up within a few allocations and then must grow. */
static unsigned int race_order(unsigned long n)
{
	return n % 2 ? 0 : MAX_ORDER;
}

static void *race_cpu(void *p)
{
	struct race_arg *a = p;

	if (a->cpu < NR_WORKERS) {
		while (smp_load_acquire(a->allocating) < RACE_CPUS - NR_WORKERS)
			arch_cpu_relax();
		deferred_init_memmap(a->pgdat);
		__atomic_fetch_sub(a->workers_left, 1, __ATOMIC_RELEASE);
		return NULL;
	}
	/* Allocate (and keep) until the workers are done. */
	__atomic_fetch_add(a->allocating, 1, __ATOMIC_RELEASE);
	while (smp_load_acquire(a->workers_left) && a->n < RACE_HELD) {
		struct page *page = alloc_pages_node(a->pgdat, GFP_KERNEL | __GFP_NOWARN,
						     race_order(a->n));

		if (!page)
			break;
		a->held[a->n++] = page;
	}
	return NULL;
}

/*
 * Four threads run the deferred init while two others allocate blocks of order 10 and 0
 * with watermarks on, growing zones on demand from the same cursors; each worker holds its
 * first claimed chunk, unwritten, until a grow has happened (deferred_init_race_hook). The
 * race must have happened (chunks grown inside that window; else a skip that says so);
 * every free page is accounted for once: the free count is the node's total, mm_verify is
 * clean.
 */
static void deferred_init_races_allocations(struct ktest *t)
{
	struct pglist_data *pgdat;
	unsigned long workers_left = NR_WORKERS, allocating = 0, total;
	struct race_arg args[RACE_CPUS];

	KT_SKIP_UNLESS_DEBUG_VM(t, "no deferred_init_race_hook to hold a chunk unwritten");
	pgdat = test_node_create_deferred(deferred_map, ARRAY_SIZE(deferred_map), RACE_CPUS);
	KT_ASSERT_TRUE(t, pgdat);
	total = node_free_pages(pgdat) + node_deferred_pages(pgdat);
	race_grown_inside = 0;
	memset(race_held_first, 0, sizeof(race_held_first));
	for (unsigned int i = 0; i < RACE_CPUS; i++)
		args[i] = (struct race_arg){ .pgdat = pgdat, .cpu = i, .allocating = &allocating,
					     .workers_left = &workers_left,
					     .held = calloc(RACE_HELD, sizeof(struct page *)) };
	smp_store_release(&deferred_init_race_hook, race_hold_first_chunk);
	run_on_cpus(RACE_CPUS, race_cpu, args, sizeof(args[0]));
	smp_store_release(&deferred_init_race_hook, NULL);
	deferred_init_done(pgdat->machine);
	printk("deferred init race: %lu chunks grown on demand while a worker held a claimed, "
	       "unwritten chunk; %llu pages by %d workers, %llu grown in all\n",
	       race_grown_inside, (unsigned long long)pgdat->deferred_workers, NR_WORKERS,
	       (unsigned long long)pgdat->deferred_grown);
	KT_EXPECT_EQ(t, pgdat->deferred_early + pgdat->deferred_grown + pgdat->deferred_workers, total);
	for (unsigned int i = NR_WORKERS; i < RACE_CPUS; i++)
		for (unsigned long k = 0; k < args[i].n; k++)
			__free_pages(args[i].held[k], race_order(k));
	drain_all_pages_machine(pgdat->machine);
	KT_EXPECT_EQ(t, node_free_pages(pgdat), total);
	KT_EXPECT_EQ(t, mm_verify(pgdat), 0);
	KT_EXPECT_EQ(t, pgdat->bad_pages, 0);
	for (unsigned int i = 0; i < RACE_CPUS; i++)
		free(args[i].held);
	test_node_destroy(pgdat);
	if (!race_grown_inside)	/* e.g. under --pct, the allocators grew it all first */
		KT_SKIP(t, "no race: no zone grew while a worker held an unwritten chunk");
}

/* ---- over a previous boot's memory map ---- */

#define PREV_BASE (16 * MiB)
#define PREV_SIZE (64 * MiB)		/* DMA32's first 16 chunks */
#define PREV_START_PFN (PREV_BASE >> PAGE_SHIFT)
#define PREV_PAGES (PREV_SIZE >> PAGE_SHIFT)

/* A node over [PREV_BASE, + PREV_SIZE): built at once or deferred, with this boot's
 * reservations (deferred_reserve_this_boot()) or, for the previous boot, without. */
static struct pglist_data *prev_node_create(bool deferred, bool this_boot, unsigned int nr_cpus)
{
	struct test_node *tn = calloc(1, sizeof(*tn));

	memblock_init(&tn->mb, host_boot_map_limit);
	memblock_add(&tn->mb, PREV_BASE, PREV_SIZE);
	if (this_boot)	/* not in the first chunk, which is initialised before any test code */
		deferred_reserve_this_boot(&tn->mb, PREV_BASE + 4 * MiB, PREV_SIZE - 4 * MiB);
	if ((deferred ? pgdat_init_deferred : pgdat_init)(&tn->pgdat, &tn->mb, "test", nr_cpus,
							   pcp_lock_default)) {
		free(tn);
		return NULL;
	}
	return &tn->pgdat;
}

/*
 * This boot's node, deferred, its unwritten struct pages holding the previous boot's
 * memory map (deferred_previous_boot() over the same RAM, then a warm reset: old keeps it,
 * by pfn); NULL if a node could not be built. *heads: the stale free heads written.
 */
static struct pglist_data *node_after_warm_reset(struct ktest *t, struct page *old,
						 unsigned long *heads)
{
	struct page **held = calloc(PREV_PAGES, sizeof(*held));
	struct pglist_data *pgdat = prev_node_create(false, false, 1);
	int prev_nid;

	if (!pgdat) {
		free(held);
		return NULL;
	}
	prev_nid = pgdat->nid;
	deferred_previous_boot(t, pgdat, held, PREV_PAGES);
	deferred_save_memmap(pgdat, old, PREV_START_PFN, PREV_PAGES);
	test_node_destroy(pgdat);	/* its blocks in use stay so in the copy */
	free(held);
	pgdat = prev_node_create(true, true, NR_WORKERS);
	if (!pgdat)
		return NULL;
	KT_EXPECT_EQ(t, pgdat->nid, prev_nid);	/* the same machine: the same node */
	*heads = deferred_scribble_previous_boot(pgdat, old, PREV_START_PFN, PREV_PAGES);
	return pgdat;
}

/*
 * After a warm reset or kexec the RAM under the memory map still holds the previous boot's
 * (free heads with PG_buddy and their order, allocated blocks, tails), and this boot
 * reserves pages the previous one had free, cutting chunks into several free ranges. The
 * deferred init, finished by 4 threads, must read none of it: the same free blocks per
 * order and the same free pages as the node built at once (a merge with a stale head would
 * make a bigger block, or count one twice), mm_verify clean, no reserved page inside a free
 * block, every struct page written.
 */
static void deferred_init_memmap_over_previous_boot(struct ktest *t)
{
	struct zone_snapshot eager[MAX_NR_ZONES], deferred[MAX_NR_ZONES];
	struct page *old = calloc(PREV_PAGES, sizeof(*old));
	struct pglist_data *pgdat = prev_node_create(false, true, NR_WORKERS);
	unsigned long heads = 0, total;

	KT_ASSERT_TRUE(t, pgdat);
	snapshot(pgdat, eager);
	total = node_free_pages(pgdat);
	test_node_destroy(pgdat);
	pgdat = node_after_warm_reset(t, old, &heads);
	KT_ASSERT_TRUE(t, pgdat);
	KT_EXPECT_TRUE(t, heads > 100);		/* the previous boot left free blocks there */
	finish_on_threads(pgdat);
	snapshot(pgdat, deferred);
	ktest_printf(t, "%lu stale free heads in the unwritten memory map; %lu pages free, "
		     "%lu built at once", heads, node_free_pages(pgdat), total);
	for (int z = 0; z < MAX_NR_ZONES; z++) {
		KT_EXPECT_EQ(t, deferred[z].free, eager[z].free);
		for (unsigned int o = 0; o <= MAX_ORDER; o++)
			KT_EXPECT_EQ(t, deferred[z].nr_free[o], eager[z].nr_free[o]);
	}
	KT_EXPECT_EQ(t, node_free_pages(pgdat), total);
	KT_EXPECT_EQ(t, mm_verify(pgdat), 0);
	KT_EXPECT_EQ(t, deferred_count_reserved_in_free(pgdat), 0);
	KT_EXPECT_EQ(t, deferred_count_unwritten(pgdat), 0);
	test_node_destroy(pgdat);
	free(old);
}

/* ---- pageblock steals while the init runs ---- */

static struct steal_run {
	struct pglist_data *pgdat;
	spinlock_t lock;		/* one stealer at a time: it protects the rest */
	struct deferred_steals s;
	struct page **held;
	unsigned long n;
} steal_run;

/* The tick on the worker threads: an interrupt that takes every free block with UNMOVABLE
 * allocations while a chunk is being written. */
static void steal_tick(void)
{
	struct steal_run *r = &steal_run;
	unsigned long flags = spin_lock_irqsave(&r->lock);

	deferred_steal_all(r->pgdat, &r->s, true, r->held, &r->n, PREV_PAGES);
	spin_unlock_irqrestore(&r->lock, flags);
}

/*
 * UNMOVABLE allocations in interrupts (a tick on the 4 worker threads wherever one turns
 * interrupts on, while a chunk is being written) take every block the deferred init has
 * handed over, so each must fall back to MOVABLE and steal a pageblock just handed over,
 * beside a chunk still being written: whole, or by walking it (move_freepages_block()). The
 * window (a chunk claimed and not finished before and after the steal) must have been hit.
 * The node is the one after a warm reset above (stale memory map, chunks cut by
 * reservations). No steal may reach a struct page not yet written (none of its pageblock
 * still stale), and afterwards, everything freed: the free pages are the node's total,
 * mm_verify is clean, no reserved page is free, every struct page is written, no bad page.
 */
static void deferred_init_memmap_races_pageblock_steals(struct ktest *t)
{
	struct page *old = calloc(PREV_PAGES, sizeof(*old));
	struct steal_run *r = &steal_run;
	unsigned long heads = 0, total, early;
	struct pglist_data *pgdat = node_after_warm_reset(t, old, &heads);

	KT_ASSERT_TRUE(t, pgdat);
	total = node_free_pages(pgdat) + node_deferred_pages(pgdat);
	for (int z = 0; z < MAX_NR_ZONES; z++)
		zone_pcp_disable(&pgdat->node_zones[z]);
	deferred_no_watermarks(pgdat);
	*r = (struct steal_run){ .pgdat = pgdat, .held = calloc(PREV_PAGES, sizeof(*r->held)) };
	spin_lock_init(&r->lock, "steal_run", SPIN_IRQSAFE);
	deferred_steal_all(pgdat, &r->s, false, r->held, &r->n, PREV_PAGES);	/* the early chunks */
	early = r->s.steals;
	host_set_tick(steal_tick, 1);
	finish_on_threads(pgdat);
	host_set_tick(NULL, 0);
	ktest_printf(t, "%lu UNMOVABLE allocations, %lu stole a pageblock (%lu before the "
		     "workers, %lu walking it), %lu of them while a chunk was being written; %lu "
		     "stole a pageblock with a struct page not written yet", r->s.allocs,
		     r->s.steals, early, r->s.walks, r->s.in_window, r->s.stale);
	KT_EXPECT_TRUE(t, r->s.in_window > 0);
	KT_EXPECT_EQ(t, r->s.stale, 0);
	for (unsigned long i = 0; i < r->n; i++)
		__free_pages(r->held[i], r->held[i]->order);
	for (int z = 0; z < MAX_NR_ZONES; z++)
		zone_pcp_enable(&pgdat->node_zones[z]);
	drain_all_pages_machine(pgdat->machine);
	KT_EXPECT_EQ(t, node_free_pages(pgdat), total);
	KT_EXPECT_EQ(t, mm_verify(pgdat), 0);
	KT_EXPECT_EQ(t, deferred_count_reserved_in_free(pgdat), 0);
	KT_EXPECT_EQ(t, deferred_count_unwritten(pgdat), 0);
	KT_EXPECT_EQ(t, pgdat->bad_pages, 0);
	test_node_destroy(pgdat);
	free(r->held);
	free(old);
}

static const struct ktest_case deferred_cases[] = {
	KTEST_CASE_CONCURRENT(deferred_init_matches_eager_build),
	KTEST_CASE_CONCURRENT(deferred_init_memmap_threads_rounds),
	KTEST_CASE(deferred_grow_zone_exhausts_node),
	KTEST_CASE_CONCURRENT(deferred_grow_zone_max_order_with_watermarks),
	KTEST_CASE(deferred_grow_zone_grows_the_zone_asked_for),
	KTEST_CASE_CONCURRENT(deferred_init_numa_interleaved_nodes),
	KTEST_CASE_CONCURRENT(deferred_init_races_allocations),
	KTEST_CASE_CONCURRENT(deferred_init_memmap_over_previous_boot),
	KTEST_CASE_CONCURRENT(deferred_init_memmap_races_pageblock_steals),
};
KTEST_SUITE(host_deferred, deferred_cases);
