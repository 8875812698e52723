/*
 * Host tests of the allocator's NUMA side (mm/numa.c, the node setup in mm/mm_init.c,
 * memblock's node ranges): private machines of several nodes over the simulated physical
 * memory, and, with 8 CPU threads on two nodes under each locking model (also under TSan),
 * remote frees racing with drains of every node. KTAP versions: tests/kernel/mm_numa.c.
 */
#include <stdlib.h>
#include <string.h>
#include "tests/host/harness.h"
#include "kernel/smp.h"

#define NUMA_TEST_CPUS 8

static const enum pcp_lock_model models[] = { PCP_LOCK_IRQOFF, PCP_LOCK_IRQSAVE,
					      PCP_LOCK_TRYLOCK };

/* A machine of up to 4 nodes, each node nid with size[nid] MiB at 256 MiB + nid * 256 MiB
 * (its own sections) or none (size 0); CPU c on node cpu_node[c]. */
struct test_machine {
	struct mm_machine m;
	struct pglist_data nodes[4];
	struct memblock mb;
	u8 cpu_node[MAX_CPUS];
};

static struct mm_machine *machine_create_model(struct test_machine *tm, unsigned int nr,
					       const unsigned int *size_mib,
					       const u8 (*dist)[MAX_NUMA_NODES],
					       const u8 *cpu_node, enum pcp_lock_model model)
{
	struct pglist_data *nodes[4];

	memset(tm, 0, sizeof(*tm));
	memblock_init(&tm->mb, host_boot_map_limit);
	memblock_reserve(&tm->mb, 0, PAGE_SIZE);
	for (unsigned int nid = 0; nid < nr; nid++) {
		u64 base = 256 * MiB * (nid + 1);

		if (size_mib[nid]) {
			memblock_add(&tm->mb, base, size_mib[nid] * MiB);
			memblock_set_node(&tm->mb, base, size_mib[nid] * MiB, (int)nid);
		}
		nodes[nid] = &tm->nodes[nid];
	}
	for (unsigned int c = 0; c < NUMA_TEST_CPUS; c++)
		tm->cpu_node[c] = cpu_node ? cpu_node[c] : 0;
	if (mm_machine_init(&tm->m, nodes, nr, &tm->mb, "t", NUMA_TEST_CPUS, dist, tm->cpu_node,
			    model))
		return NULL;
	for (unsigned int nid = 0; nid < nr; nid++)
		zone_pcp_update(tm->m.node[nid], NUMA_TEST_CPUS);
	return &tm->m;
}

static struct mm_machine *machine_create(struct test_machine *tm, unsigned int nr,
					 const unsigned int *size_mib,
					 const u8 (*dist)[MAX_NUMA_NODES], const u8 *cpu_node)
{
	return machine_create_model(tm, nr, size_mib, dist, cpu_node, pcp_lock_default);
}

static void node_counts(struct mm_machine *m, unsigned long *free)
{
	drain_all_pages_machine(m);
	for (unsigned int nid = 0; nid < m->nr_nodes; nid++)
		free[nid] = node_free_pages(m->node[nid]);
}

/* The node sequence of pgdat's fallback zonelist, as indices in its machine. */
static unsigned int zonelist_nodes(struct pglist_data *pgdat, int *order)
{
	unsigned int n = 0;

	for (struct zoneref *z = pgdat->node_zonelists[ZONELIST_FALLBACK]._zonerefs; z->zone; z++)
		if (!n || order[n - 1] != (int)node_index(z->zone->node))
			order[n++] = (int)node_index(z->zone->node);
	return n;
}

/*
 * memblock keeps each range's node: [0, 64M) node 0, then [32M, 48M) given to node 1 splits
 * it in three; giving it back to node 0 merges them again; touching ranges of two nodes
 * never merge.
 *   [0 ---- 32M)[32M -- 48M)[48M -- 64M)    nodes 0 | 1 | 0
 */
static void memblock_set_node_splits_and_merges(struct ktest *t)
{
	struct memblock mb;

	memblock_init(&mb, 4 * GiB);
	memblock_add(&mb, 0, 64 * MiB);
	KT_EXPECT_EQ(t, memblock_set_node(&mb, 32 * MiB, 16 * MiB, 1), 0);
	KT_ASSERT_TRUE(t, mb.memory.cnt == 3);
	KT_EXPECT_TRUE(t, mb.memory.regions[1].base == 32 * MiB && mb.memory.regions[1].nid == 1);
	KT_EXPECT_TRUE(t, mb.memory.regions[2].nid == 0 && memblock_nid(&mb, 50 * MiB) == 0);
	KT_EXPECT_EQ(t, memblock_nid(&mb, 40 * MiB), 1);
	KT_EXPECT_EQ(t, memblock_nid(&mb, 100 * MiB), -1);
	memblock_remove(&mb, 36 * MiB, 4 * MiB);	/* cuts keep the node */
	KT_EXPECT_EQ(t, memblock_nid(&mb, 44 * MiB), 1);
	memblock_set_node(&mb, 0, 64 * MiB, 0);
	KT_EXPECT_EQ(t, mb.memory.cnt, 2);		/* [0, 36M) [40M, 64M): the hole stays */
	KT_EXPECT_TRUE(t, memblock_nid(&mb, 44 * MiB) == 0 &&
		       mb.memory.regions[0].size == 36 * MiB);
}

/* memblock_alloc_node() takes node 1's memory when it has room, else any node's. */
static void memblock_alloc_node_prefers_node(struct ktest *t)
{
	struct memblock mb;
	u64 a, b;

	memblock_init(&mb, host_boot_map_limit);
	memblock_add(&mb, 256 * MiB, 8 * MiB);
	memblock_add(&mb, 512 * MiB, 8 * MiB);
	memblock_set_node(&mb, 512 * MiB, 8 * MiB, 1);
	a = memblock_alloc_node(&mb, 4 * MiB, PAGE_SIZE, 1);
	KT_EXPECT_TRUE(t, a >= 512 * MiB && a < 520 * MiB);
	b = memblock_alloc_node(&mb, 6 * MiB, PAGE_SIZE, 1);	/* no room left on node 1 */
	KT_EXPECT_TRUE(t, b >= 256 * MiB && b < 264 * MiB);
}

/*
 * Four nodes, an asymmetric distance table: each node's zonelist follows its own row
 * (node 0 sees node 1 at 40, node 1 sees node 0 at 30). Expect 0 2 3 1 / 1 3 0 2 /
 * 2 1 3 0 / 3 0 1 2, every node's memory map and per-CPU lists in its own memory.
 */
static void numa_zonelist_follows_own_row(struct ktest *t)
{
	static const u8 dist[MAX_NUMA_NODES][MAX_NUMA_NODES] = {
		{ 10, 40, 20, 30 }, { 30, 10, 40, 20 }, { 40, 20, 10, 30 }, { 20, 30, 40, 10 } };
	static const int want[4][4] = { { 0, 2, 3, 1 }, { 1, 3, 0, 2 }, { 2, 1, 3, 0 },
					{ 3, 0, 1, 2 } };
	static const unsigned int size[4] = { 32, 32, 32, 32 };
	static struct test_machine tm;
	struct mm_machine *m = machine_create(&tm, 4, size, dist, NULL);
	int order[MAX_NUMA_NODES];

	KT_ASSERT_TRUE(t, m);
	for (unsigned int nid = 0; nid < 4; nid++) {
		struct zone *zone = &m->node[nid]->node_zones[ZONE_DMA32];
		u64 pcp_phys = arch_virt_to_phys(zone->pcp);

		KT_ASSERT_TRUE(t, zonelist_nodes(m->node[nid], order) == 4);
		for (int i = 0; i < 4; i++)
			KT_EXPECT_EQ(t, order[i], want[nid][i]);
		KT_EXPECT_TRUE(t, pcp_phys >= 256 * MiB * (nid + 1) &&
			       pcp_phys < 256 * MiB * (nid + 1) + 32 * MiB);
		KT_EXPECT_EQ(t, m->node[nid]->memmap_bytes,
			     PAGES_PER_SECTION * sizeof(struct page));
	}
	KT_EXPECT_EQ(t, mm_verify_machine(m), 0);
	mm_machine_destroy(m);
}

/*
 * Ties: node 0 sees nodes 1, 2 and 3 all at 20, node 3 sees 2 and 1 at 30 and node 0 at 20.
 * Between nodes at one distance the lower node number comes first: expect 0 1 2 3 and
 * 3 0 1 2.
 */
static void numa_zonelist_tie_lower_node_first(struct ktest *t)
{
	static const u8 dist[MAX_NUMA_NODES][MAX_NUMA_NODES] = {
		{ 10, 20, 20, 20 }, { 20, 10, 20, 20 }, { 20, 20, 10, 30 }, { 20, 30, 30, 10 } };
	static const unsigned int size[4] = { 32, 32, 32, 32 };
	static struct test_machine tm;
	struct mm_machine *m = machine_create(&tm, 4, size, dist, NULL);
	int order[MAX_NUMA_NODES];

	KT_ASSERT_TRUE(t, m);
	KT_ASSERT_TRUE(t, zonelist_nodes(m->node[0], order) == 4);
	for (int i = 0; i < 4; i++)
		KT_EXPECT_EQ(t, order[i], i);
	KT_ASSERT_TRUE(t, zonelist_nodes(m->node[3], order) == 4);
	for (int i = 0; i < 4; i++)
		KT_EXPECT_EQ(t, order[i], (3 + i) % 4);
	mm_machine_destroy(m);
}

/*
 * A node boundary inside a 128 MiB section: node 1's first 16 MiB share a section with
 * node 0's memory, so they join node 0 (a section's memory map and RAM belong to one
 * node), with a message; then no buddy block crosses a node and exhaustion counts match.
 *   [256M ........ 368M)[368M .. 384M | 384M ....... 448M)
 *        node 0            node 1 -> 0     node 1
 */
static void numa_section_holds_one_node(struct ktest *t)
{
	static struct test_machine tm;
	struct pglist_data *nodes[2] = { &tm.nodes[0], &tm.nodes[1] };
	struct mm_machine *m = &tm.m;
	unsigned long free1;

	memset(&tm, 0, sizeof(tm));
	memblock_init(&tm.mb, host_boot_map_limit);
	memblock_add(&tm.mb, 256 * MiB, 192 * MiB);
	memblock_set_node(&tm.mb, 368 * MiB, 80 * MiB, 1);
	KT_ASSERT_TRUE(t, mm_machine_init(m, nodes, 2, &tm.mb, "t", 1, NULL, NULL,
					  pcp_lock_default) == 0);
	KT_EXPECT_TRUE(t, host_console_contains("goes to node 0"));
	free1 = node_free_pages(m->node[1]);
	KT_EXPECT_TRUE(t, free1 > 60 * MiB / PAGE_SIZE && free1 <= 64 * MiB / PAGE_SIZE);
	KT_EXPECT_EQ(t, node_managed_pages(m->node[0]) + node_managed_pages(m->node[1]),
		  machine_managed_pages(m));
	KT_EXPECT_EQ(t, m->node[1]->node_start_pfn, (384 * MiB) >> PAGE_SHIFT);
	KT_EXPECT_EQ(t, mm_verify_machine(m), 0);
	mm_machine_destroy(m);
}

/* ---- remote frees racing with drains, 8 CPU threads on 2 nodes ---- */

struct remote_race {
	struct mm_machine *m;
	unsigned int ops;
	int draining;			/* the drainer has begun (atomic): churners wait for it */
	int churning;			/* churner threads still running (atomic) */
	u64 moved;			/* pages found on another node than they came from */
	u64 drains_with_pages;		/* drains that found remote pages on some list (atomic) */
};

struct remote_arg {
	struct remote_race *r;
	u64 frees;
};

/* CPU 1 drains every node; the others allocate from the other node and free themselves. */
static void *remote_race_cpu(void *p)
{
	struct remote_arg *a = p;
	struct remote_race *r = a->r;
	unsigned int cpu = arch_cpu_id();
	struct pglist_data *to =
		r->m->node[(machine_cpu_nid(r->m, cpu) - r->m->first_nid + 1) % 2];
	struct page *held[16];
	unsigned int n = 0;
	u64 seed = 0x9e3779b97f4a7c15ull * (cpu + 1);

	if (cpu == 1) {
		smp_store_release(&r->draining, 1);
		while (smp_load_acquire(&r->churning)) {
			unsigned long before = 0;

			for (unsigned int nid = 0; nid < 2; nid++)
				before += zone_pcp_count(&r->m->node[nid]->node_zones[ZONE_DMA32]);
			drain_all_pages_machine(r->m);
			if (before)
				__atomic_add_fetch(&r->drains_with_pages, 1, __ATOMIC_RELAXED);
		}
		return NULL;
	}
	while (!smp_load_acquire(&r->draining))	/* a drainer started late would drain nothing */
		arch_cpu_relax();
	for (unsigned int i = 0; i < r->ops || n; i++) {
		seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
		if (i < r->ops && n < 16 && (n == 0 || (seed & 1))) {
			held[n] = alloc_pages_node(to, GFP_KERNEL | __GFP_THISNODE | __GFP_NOWARN,
						   (unsigned int)(seed >> 8) % 2);
			n += held[n] != NULL;
			continue;
		}
		n--;
		__atomic_add_fetch(&r->moved, held[n]->nid != to->nid, __ATOMIC_RELAXED);
		__free_pages(held[n], held[n]->order);
		a->frees++;
	}
	__atomic_sub_fetch(&r->churning, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Once the churn is over, each CPU but the drainer frees one page of the other node: it
 * parks on the CPU's own list for that node's zone, for the zone drains below to find. */
static void *park_remote_page_cpu(void *p)
{
	struct remote_arg *a = p;
	unsigned int cpu = arch_cpu_id();
	struct pglist_data *to =
		a->r->m->node[(machine_cpu_nid(a->r->m, cpu) - a->r->m->first_nid + 1) % 2];
	struct page *page;

	if (cpu == 1)
		return NULL;
	page = alloc_pages_node(to, GFP_KERNEL | __GFP_THISNODE | __GFP_NOWARN, 0);
	if (page)
		__free_pages(page, 0);
	return NULL;
}

/* Pages of node nid's zone on the lists of CPUs of the other node. */
static unsigned long parked_remote(struct mm_machine *m, unsigned int nid)
{
	struct zone *zone = &m->node[nid]->node_zones[ZONE_DMA32];
	unsigned long n = 0;

	for (unsigned int cpu = 0; cpu < m->nr_cpus; cpu++)
		if (machine_cpu_nid(m, cpu) != (unsigned int)m->node[nid]->nid)
			n += (unsigned long)READ_ONCE(zone->pcp[cpu].count);
	return n;
}

/*
 * Even CPUs on node 0, odd on node 1; every free is a remote one (the page parks on the
 * freeing CPU's list for the other node's zone) while CPU 1 drains every CPU's lists of
 * every node. Each lock model: afterwards, with a remote page parked on each churner's list
 * (so that a zone drain that skips other nodes' CPUs leaves some behind), every list is
 * empty once the zones are disabled, each node has exactly its free pages back, no page
 * changed node, mm_verify passes, and the drainer found remote pages on the lists while
 * the churners ran (else: nothing tested).
 */
static void numa_remote_free_vs_drain(struct ktest *t)
{
	static const unsigned int size[2] = { 64, 64 };
	static const u8 even_odd[NUMA_TEST_CPUS] = { 0, 1, 0, 1, 0, 1, 0, 1 };
	static struct test_machine tm;

	for (unsigned int i = 0; i < ARRAY_SIZE(models); i++) {
		struct mm_machine *m = machine_create_model(&tm, 2, size, NULL, even_odd, models[i]);
		struct remote_race r = { .m = m, .ops = 4000, .churning = NUMA_TEST_CPUS - 1 };
		struct remote_arg args[NUMA_TEST_CPUS];
		unsigned long before[2], after[2], left = 0;
		u64 frees = 0;

		KT_ASSERT_TRUE(t, m);
		node_counts(m, before);
		for (unsigned int c = 0; c < NUMA_TEST_CPUS; c++)
			args[c] = (struct remote_arg){ &r, 0 };
		run_on_cpus(NUMA_TEST_CPUS, remote_race_cpu, args, sizeof(args[0]));
		for (unsigned int c = 0; c < NUMA_TEST_CPUS; c++)
			frees += args[c].frees;
		run_on_cpus(NUMA_TEST_CPUS, park_remote_page_cpu, args, sizeof(args[0]));
		KT_EXPECT_TRUE(t, parked_remote(m, 0) > 0 && parked_remote(m, 1) > 0);
		for (unsigned int nid = 0; nid < 2; nid++)
			zone_pcp_disable(&m->node[nid]->node_zones[ZONE_DMA32]);
		for (unsigned int nid = 0; nid < 2; nid++) {
			left += zone_pcp_count(&m->node[nid]->node_zones[ZONE_DMA32]);
			zone_pcp_enable(&m->node[nid]->node_zones[ZONE_DMA32]);
		}
		node_counts(m, after);
		KT_EXPECT_EQ(t, left, 0);
		KT_EXPECT_EQ(t, after[0], before[0]);
		KT_EXPECT_EQ(t, after[1], before[1]);
		KT_EXPECT_EQ(t, r.moved, 0);
		KT_EXPECT_TRUE(t, frees >= (NUMA_TEST_CPUS - 1) * 1000);
		KT_EXPECT_TRUE(t, r.drains_with_pages > 0);
		KT_EXPECT_EQ(t, mm_verify_machine(m), 0);
		mm_machine_destroy(m);
	}
}

/*
 * The one-thread, deterministic form of the rule the race above stresses: CPU 0 (node 0)
 * frees a page of node 1; it parks on CPU 0's list for node 1's zone, and
 * drain_all_pages(that zone) must reach CPU 0 although CPU 0 is not on node 1. Expect the
 * list empty after it and node 1's free count whole again, in each lock model.
 */
static void numa_zone_drain_reaches_other_node_cpu(struct ktest *t)
{
	static const unsigned int size[2] = { 16, 16 };
	static const u8 even_odd[NUMA_TEST_CPUS] = { 0, 1, 0, 1, 0, 1, 0, 1 };
	static struct test_machine tm;

	for (unsigned int i = 0; i < ARRAY_SIZE(models); i++) {
		struct mm_machine *m = machine_create_model(&tm, 2, size, NULL, even_odd, models[i]);
		unsigned long home[2];
		struct page *page;
		struct zone *z1;

		KT_ASSERT_TRUE(t, m);
		z1 = &m->node[1]->node_zones[ZONE_DMA32];
		node_counts(m, home);
		page = alloc_pages_node(m->node[1], GFP_KERNEL | __GFP_THISNODE, 0);
		KT_ASSERT_NOT_NULL(t, page);
		__free_pages(page, 0);
		KT_EXPECT_TRUE(t, z1->pcp[0].count > 0);	/* parked on CPU 0, node 0 */
		drain_all_pages(z1);
		KT_EXPECT_EQ(t, z1->pcp[0].count, 0);
		KT_EXPECT_EQ(t, node_free_pages(m->node[1]), home[1]);
		KT_EXPECT_EQ(t, mm_verify_machine(m), 0);
		mm_machine_destroy(m);
	}
}

/*
 * remote_home counts the pages of a zone that a CPU of another node sends home, not the
 * spills that send them: node 0's zone is disabled (high 0, batch 1: every free spills one
 * block), and this CPU, of node 1, frees an order-3 block of node 0 through its list. Expect
 * remote_free +1 (one free), remote_home +8 (the block's pages), nothing left listed. Each
 * model. (At d900eef remote_home grew by nr_pcp_free()'s request, 1.)
 */
static void numa_remote_home_counts_pages_sent_home(struct ktest *t)
{
	static const unsigned int size[2] = { 16, 16 };
	static const u8 on_node1[MAX_CPUS] = { [0 ... MAX_CPUS - 1] = 1 };
	static struct test_machine tm;

	for (unsigned int i = 0; i < ARRAY_SIZE(models); i++) {
		struct mm_machine *m = machine_create_model(&tm, 2, size, NULL, on_node1, models[i]);
		struct numa_stats a, b;
		struct page *page;
		struct zone *z0;

		KT_ASSERT_TRUE(t, m);
		z0 = &m->node[0]->node_zones[ZONE_DMA32];
		page = alloc_pages_node(m->node[0], GFP_KERNEL | __GFP_THISNODE, 3);
		KT_ASSERT_TRUE(t, page && page_zone(page) == z0);
		zone_pcp_disable(z0);
		zone_numa_stats(z0, &a);
		__free_pages(page, 3);
		zone_numa_stats(z0, &b);
		printk("[%s] remote_free +%llu, remote_home +%llu for one order-3 block\n",
		       pcp_lock_model_name(models[i]),
		       (unsigned long long)(b.remote_free - a.remote_free),
		       (unsigned long long)(b.remote_home - a.remote_home));
		KT_EXPECT_EQ(t, b.remote_free - a.remote_free, 1);
		KT_EXPECT_EQ(t, b.remote_home - a.remote_home, 8);
		KT_EXPECT_EQ(t, zone_pcp_count(z0), 0);
		zone_pcp_enable(z0);
		KT_EXPECT_EQ(t, mm_verify_machine(m), 0);
		mm_machine_destroy(m);
	}
}

/* Pages allocated on node 0 until 100 came from node 1, and how many came from each. */
struct node0_exhaustion {
	struct mm_machine *m;
	struct page *held[8192];
	unsigned long n, local, remote;
};

static void exhaust_node0(struct node0_exhaustion *x)
{
	struct pglist_data *node0 = x->m->node[0];

	while (x->remote < 100 &&
	       (x->held[x->n] = alloc_pages_node(node0, GFP_KERNEL | __GFP_NOWARN, 0))) {
		if (page_pgdat(x->held[x->n++]) == node0)
			x->local += !x->remote;
		else
			x->remote++;
	}
}

/*
 * Exhausting node 0 from a CPU of node 0 falls back to node 1: numa_hit on node 0 until its
 * low watermark, then numa_miss on node 1 and numa_foreign on node 0, exactly one per
 * allocation; other_node counts node 1's allocations (the CPU is on node 0).
 */
static void numa_exhaustion_counts_miss_and_foreign(struct ktest *t)
{
	static const unsigned int size[2] = { 16, 16 };
	static struct test_machine tm;
	static struct node0_exhaustion x;
	struct mm_machine *m = machine_create(&tm, 2, size, NULL, NULL);
	struct zone *z0, *z1;
	struct numa_stats s0, s1;
	unsigned long before[2], after[2];

	KT_ASSERT_TRUE(t, m);
	z0 = &m->node[0]->node_zones[ZONE_DMA32];
	z1 = &m->node[1]->node_zones[ZONE_DMA32];
	node_counts(m, before);
	x = (struct node0_exhaustion){ .m = m };
	exhaust_node0(&x);
	KT_EXPECT_EQ(t, x.remote, 100);
	KT_EXPECT_EQ(t, x.local + x.remote, x.n);
	zone_numa_stats(z0, &s0);
	zone_numa_stats(z1, &s1);
	KT_EXPECT_EQ(t, s0.numa_hit, x.local);
	KT_EXPECT_EQ(t, s0.numa_foreign, x.remote);
	KT_EXPECT_EQ(t, s1.numa_miss, x.remote);
	KT_EXPECT_EQ(t, s1.other_node, x.remote);
	KT_EXPECT_EQ(t, s0.local_node, x.local);
	KT_EXPECT_TRUE(t, zone_free_pages(z0) <= z0->_watermark[WMARK_LOW]);
	free_all(x.held, x.n, 0);
	node_counts(m, after);
	KT_EXPECT_EQ(t, after[0], before[0]);
	KT_EXPECT_EQ(t, after[1], before[1]);
	KT_EXPECT_EQ(t, mm_verify_machine(m), 0);
	mm_machine_destroy(m);
}

static void *exhaust_node0_on_cpu3(void *p)
{
	if (arch_cpu_id() == 3)
		exhaust_node0(*(struct node0_exhaustion **)p);
	return NULL;
}

/*
 * The per-CPU statistics are their CPU's (mm/mmzone.h, struct pcp_stats): CPU 3 exhausts
 * node 0 into node 1 while CPUs 0-2 idle, and every hit, miss and foreign of it is on CPU 3's
 * counters of the zone it concerns (numa_foreign on node 0's zone, the preferred one), none on
 * another CPU's.
 */
static void zone_statistics_counted_on_allocating_cpu(struct ktest *t)
{
	static const unsigned int size[2] = { 16, 16 };
	static struct test_machine tm;
	static struct node0_exhaustion x;
	struct node0_exhaustion *args[4] = { &x, &x, &x, &x };
	struct mm_machine *m = machine_create(&tm, 2, size, NULL, NULL);

	KT_ASSERT_TRUE(t, m);
	x = (struct node0_exhaustion){ .m = m };
	run_on_cpus(4, exhaust_node0_on_cpu3, args, sizeof(args[0]));
	KT_EXPECT_EQ(t, x.remote, 100);
	for (unsigned int cpu = 0; cpu < NUMA_TEST_CPUS; cpu++) {
		struct pcp_stats s0, s1;
		bool mine = cpu == 3;

		pcp_stats_sum(m->node[0], (int)cpu, &s0);
		pcp_stats_sum(m->node[1], (int)cpu, &s1);
		printk("cpu%u: node 0 hit %llu foreign %llu, node 1 miss %llu\n", cpu,
		       (unsigned long long)s0.numa_hit, (unsigned long long)s0.numa_foreign,
		       (unsigned long long)s1.numa_miss);
		KT_EXPECT_EQ(t, s0.numa_hit, mine ? x.local : 0);
		KT_EXPECT_EQ(t, s0.numa_foreign, mine ? x.remote : 0);
		KT_EXPECT_EQ(t, s1.numa_miss, mine ? x.remote : 0);
	}
	free_all(x.held, x.n, 0);
	drain_all_pages_machine(m);
	KT_EXPECT_EQ(t, mm_verify_machine(m), 0);
	mm_machine_destroy(m);
}

/*
 * A memoryless node's CPU allocates order 0 from the first zone of its zonelist, node 0's,
 * off its list there: the hit counts as node 0's numa_hit (other_node: the CPU is on node
 * 1). But __GFP_THISNODE on the memoryless node must fail, even with a page of node 0 on
 * this CPU's list where a hit would find it. Expect: the page just freed, counted; then NULL.
 */
static void alloc_pages_memoryless_node_fast_hit_thisnode_fails(struct ktest *t)
{
	static const unsigned int size[2] = { 16, 0 };
	static const u8 on_node1[MAX_CPUS] = { [0 ... MAX_CPUS - 1] = 1 };
	static struct test_machine tm;
	struct mm_machine *m = machine_create(&tm, 2, size, NULL, on_node1);
	struct numa_stats a, b;
	struct page *page, *again;
	struct zone *z0;

	KT_ASSERT_TRUE(t, m);
	z0 = &m->node[0]->node_zones[ZONE_DMA32];
	KT_ASSERT_TRUE(t, m->node[1]->node_zonelists[ZONELIST_FALLBACK]._zonerefs[0].zone == z0);
	page = alloc_pages_node(m->node[1], GFP_KERNEL, 0);
	KT_ASSERT_TRUE(t, page && page_pgdat(page) == m->node[0]);
	__free_pages(page, 0);
	KT_ASSERT_TRUE(t, READ_ONCE(z0->pcp[arch_cpu_id()].count) > 0);	/* else nothing is tested */
	zone_numa_stats(z0, &a);
	again = alloc_pages_node(m->node[1], GFP_KERNEL, 0);
	zone_numa_stats(z0, &b);
	KT_EXPECT_TRUE(t, again == page);		/* LIFO: the page just freed, off the list */
	KT_EXPECT_EQ(t, b.numa_hit - a.numa_hit, 1);
	KT_EXPECT_EQ(t, b.other_node - a.other_node, 1);
	if (again)
		__free_pages(again, 0);
	KT_ASSERT_TRUE(t, READ_ONCE(z0->pcp[arch_cpu_id()].count) > 0);
	KT_EXPECT_TRUE(t, !alloc_pages_node(m->node[1], GFP_KERNEL | __GFP_THISNODE | __GFP_NOWARN, 0));
	drain_all_pages_machine(m);
	KT_EXPECT_EQ(t, mm_verify_machine(m), 0);
	mm_machine_destroy(m);
}

static const struct ktest_case numa_cases[] = {
	KTEST_CASE(memblock_set_node_splits_and_merges),
	KTEST_CASE(memblock_alloc_node_prefers_node),
	KTEST_CASE(numa_zonelist_follows_own_row),
	KTEST_CASE(numa_zonelist_tie_lower_node_first),
	KTEST_CASE(numa_section_holds_one_node),
	KTEST_CASE(numa_exhaustion_counts_miss_and_foreign),
	KTEST_CASE(zone_statistics_counted_on_allocating_cpu),
	KTEST_CASE(numa_zone_drain_reaches_other_node_cpu),
	KTEST_CASE(numa_remote_home_counts_pages_sent_home),
	KTEST_CASE(alloc_pages_memoryless_node_fast_hit_thisnode_fails),
	KTEST_CASE_CONCURRENT(numa_remote_free_vs_drain),
};
KTEST_SUITE(host_numa, numa_cases);
