/*
 * KTAP suite mm_numa: nodes, zonelists and per-CPU lists across nodes. Most cases build a
 * private machine of 2-4 nodes over memory borrowed from the kernel (each node in its own
 * 128 MiB section), with a CPU-to-node map of their own, so they run on every boot; the
 * kernel's own nodes (make run NUMA=...) are checked where the boot has them. Host versions
 * of the races: tests/host/test_numa.c.
 */
#include "tests/ktest/ktest.h"
#include "kernel/bootinfo.h"
#include "kernel/smp.h"
#include "kernel/string.h"
#include "kernel/timer.h"
#include "mm/mm_test.h"
#include "mm/memblock.h"

#define TM_NODES 4		/* at most, per private machine */
#define TM_BLOCKS 2		/* order-10 blocks per node with memory: 8 MiB */
#define TM_MAX_TRIES 512	/* blocks looked at to find distinct sections: 2 GiB */

static const enum pcp_lock_model models[] = { PCP_LOCK_IRQOFF, PCP_LOCK_IRQSAVE,
					      PCP_LOCK_TRYLOCK };

/* ---- a private machine over borrowed memory ---- */

static struct {
	struct mm_machine m;
	struct pglist_data nodes[TM_NODES];
	struct memblock mb;
	struct page *backing[TM_NODES][TM_BLOCKS];
	u8 cpu_node[MAX_CPUS];
	bool live;
} tm;

static void tm_free_backing(void)
{
	for (int n = 0; n < TM_NODES; n++)
		for (int b = 0; b < TM_BLOCKS; b++)
			if (tm.backing[n][b]) {
				__free_pages(tm.backing[n][b], MAX_ORDER);
				tm.backing[n][b] = NULL;
			}
}

/* Poisoning off on every kernel node while borrowing (on restores what mm.poison set). */
static void kernel_poison(bool on)
{
	static bool saved[MAX_NUMA_NODES];
	struct mm_machine *m = mm_machine();

	for (unsigned int nid = 0; nid < m->nr_nodes; nid++) {
		if (!on)
			saved[nid] = m->node[nid]->poison;
		m->node[nid]->poison = on && saved[nid];
	}
}

/* The node a block of section s goes to: the node that has s if it wants more blocks, else
 * the first node with memory that has no section yet; -1 if none. */
static int node_for_section(unsigned int nr, const bool *has_mem, const unsigned long *sec,
			    const unsigned int *have, unsigned long s)
{
	for (unsigned int nid = 0; nid < nr; nid++)
		if (has_mem[nid] && have[nid] && sec[nid] == s)
			return have[nid] < TM_BLOCKS ? (int)nid : -1;
	for (unsigned int nid = 0; nid < nr; nid++)
		if (has_mem[nid] && !have[nid])
			return (int)nid;
	return -1;
}

/*
 * Borrow TM_BLOCKS order-10 blocks for each node that has memory (has_mem[nid]), every node
 * from a different 128 MiB section (a section's memory belongs to one node). Blocks looked
 * at and not kept go back at once. False if the kernel's memory did not allow it.
 */
static bool tm_borrow(unsigned int nr, const bool *has_mem)
{
	static struct page *tried[TM_MAX_TRIES];
	unsigned long sec[TM_NODES] = { 0 };
	unsigned int have[TM_NODES] = { 0 }, n, want = 0, done = 0;

	for (unsigned int nid = 0; nid < nr; nid++)
		want += has_mem[nid];
	kernel_poison(false);	/* 4 MiB filled and checked per block tried: seconds under TCG */
	for (n = 0; n < TM_MAX_TRIES && done < want; n++) {
		struct page *p = alloc_pages(GFP_KERNEL | __GFP_NOWARN, MAX_ORDER);
		unsigned long s;
		int nid;

		if (!(tried[n] = p))
			break;
		s = page_to_pfn(p) >> PFN_SECTION_SHIFT;
		nid = node_for_section(nr, has_mem, sec, have, s);
		if (nid < 0)
			continue;
		sec[nid] = s;
		tm.backing[nid][have[nid]++] = p;
		tried[n] = NULL;
		done += have[nid] == TM_BLOCKS;
	}
	while (n--)
		if (tried[n])
			__free_pages(tried[n], MAX_ORDER);
	kernel_poison(true);
	if (done == want)
		return true;
	tm_free_backing();
	return false;
}

/*
 * A private machine of nr nodes: node nid gets 8 MiB of borrowed memory if has_mem[nid],
 * none otherwise; distances dist (NULL: 10 / 20); CPU c sits on node cpu_node(c). Its pcps
 * are sized for the CPUs online, in lock model `model`. NULL (and the case skipped by the
 * caller) if the kernel cannot lend the memory.
 */
static struct mm_machine *tm_create_model(unsigned int nr, const bool *has_mem,
					  const u8 (*dist)[MAX_NUMA_NODES],
					  unsigned int (*cpu_node)(unsigned int cpu),
					  enum pcp_lock_model model)
{
	struct pglist_data *nodes[TM_NODES];
	struct mem_region map[TM_NODES * TM_BLOCKS];
	unsigned int n = 0;

	if (!tm_borrow(nr, has_mem))
		return NULL;
	memblock_init(&tm.mb, ~0ull);
	for (unsigned int nid = 0; nid < nr; nid++)
		for (int b = 0; has_mem[nid] && b < TM_BLOCKS; b++)
			map[n++] = (struct mem_region){ page_to_phys(tm.backing[nid][b]),
							MAX_ORDER_NR_PAGES << PAGE_SHIFT,
							MEM_USABLE };
	memblock_add_mmap(&tm.mb, map, n);
	for (unsigned int nid = 0; nid < nr; nid++) {
		for (int b = 0; has_mem[nid] && b < TM_BLOCKS; b++)
			memblock_set_node(&tm.mb, page_to_phys(tm.backing[nid][b]),
					  MAX_ORDER_NR_PAGES << PAGE_SHIFT, (int)nid);
		nodes[nid] = &tm.nodes[nid];
	}
	for (unsigned int c = 0; c < MAX_CPUS; c++)
		tm.cpu_node[c] = (u8)cpu_node(c);
	if (mm_machine_init(&tm.m, nodes, nr, &tm.mb, "t", nr_cpus, dist, tm.cpu_node, model)) {
		tm_free_backing();
		return NULL;
	}
	for (unsigned int nid = 0; nid < nr; nid++)
		zone_pcp_update(tm.m.node[nid], nr_cpus_online());
	tm.live = true;
	return &tm.m;
}

/* The same in the boot's lock model. */
static struct mm_machine *tm_create(unsigned int nr, const bool *has_mem,
				    const u8 (*dist)[MAX_NUMA_NODES],
				    unsigned int (*cpu_node)(unsigned int cpu))
{
	return tm_create_model(nr, has_mem, dist, cpu_node, pcp_lock_default);
}

static void tm_destroy(void)
{
	if (!tm.live)
		return;
	mm_machine_destroy(&tm.m);
	tm_free_backing();
	tm.live = false;
}

/* A case that ended early gives its machine back here. */
static void mm_numa_exit(struct ktest *t)
{
	(void)t;
	tm_destroy();
}

static unsigned int all_on_node0(unsigned int cpu) { (void)cpu; return 0; }
static unsigned int all_on_node1(unsigned int cpu) { (void)cpu; return 1; }
static unsigned int even_odd(unsigned int cpu) { return cpu & 1; }

/* The zone of pgdat that has memory (private nodes have one: borrowed blocks sit in one). */
static struct zone *only_zone(struct pglist_data *pgdat)
{
	for (int z = MAX_NR_ZONES - 1; z >= 0; z--)
		if (zone_populated(&pgdat->node_zones[z]))
			return &pgdat->node_zones[z];
	return NULL;
}

/* Free pages of every node of m into free[], per-CPU lists drained first: exact. */
static void node_counts(struct mm_machine *m, unsigned long *free)
{
	drain_all_pages_machine(m);
	for (unsigned int nid = 0; nid < m->nr_nodes; nid++)
		free[nid] = node_free_pages(m->node[nid]);
}

static void expect_counts(struct ktest *t, struct mm_machine *m, const unsigned long *before)
{
	unsigned long now[TM_NODES > MAX_NUMA_NODES ? TM_NODES : MAX_NUMA_NODES];

	node_counts(m, now);
	for (unsigned int nid = 0; nid < m->nr_nodes; nid++)
		KT_EXPECT_EQ(t, now[nid], before[nid]);
	KT_EXPECT_EQ(t, mm_verify_machine(m), 0ul);
}

/* The node sequence of pgdat's fallback zonelist, as indices in its machine (consecutive zones
 * of one node once). */
static unsigned int zonelist_nodes(struct ktest *t, struct pglist_data *pgdat, int *order)
{
	unsigned int n = 0;

	for (struct zoneref *z = pgdat->node_zonelists[ZONELIST_FALLBACK]._zonerefs; z->zone;
	     z++) {
		if (n && order[n - 1] == (int)node_index(z->zone->node)) {
			KT_EXPECT_LT(t, z->zone_idx, z[-1].zone_idx);	/* Normal..DMA */
			continue;
		}
		order[n++] = (int)node_index(z->zone->node);
	}
	return n;
}

/* ===== Test cases ===== */

/*
 * Zonelists follow each node's own row of the distance table, nearest first, a node's zones
 * from the highest down. A private machine of 4 nodes with an asymmetric table (node 0 sees
 * node 1 at 40, node 1 sees node 0 at 30): expect orders 0 2 3 1 / 1 3 0 2 / 2 1 3 0 /
 * 3 0 1 2. Then the kernel's nodes: nearest first, ties to the lower node number, only
 * nodes with memory, and each node's own zones first when it has memory.
 */
static void numa_zonelist_follows_distance(struct ktest *t)
{
	static const u8 dist[MAX_NUMA_NODES][MAX_NUMA_NODES] = {
		{ 10, 40, 20, 30 }, { 30, 10, 40, 20 }, { 40, 20, 10, 30 }, { 20, 30, 40, 10 } };
	static const int want[4][4] = { { 0, 2, 3, 1 }, { 1, 3, 0, 2 }, { 2, 1, 3, 0 },
					{ 3, 0, 1, 2 } };
	static const bool mem[4] = { true, true, true, true };
	struct mm_machine *k = mm_machine(), *m = tm_create(4, mem, dist, all_on_node0);
	int order[MAX_NUMA_NODES];

	if (!m)
		KT_SKIP(t, "needs 4 x 8 MiB of free memory in 4 distinct 128 MiB sections");
	for (unsigned int nid = 0; nid < 4; nid++) {
		KT_ASSERT_EQ(t, zonelist_nodes(t, m->node[nid], order), 4u);
		for (int i = 0; i < 4; i++)
			KT_EXPECT_EQ(t, order[i], want[nid][i]);
		show_zonelist(m->node[nid]);
	}
	tm_destroy();
	for (unsigned int nid = 0; nid < k->nr_nodes; nid++) {
		unsigned int n = zonelist_nodes(t, k->node[nid], order), with_mem = 0;

		for (unsigned int b = 0; b < k->nr_nodes; b++)
			with_mem += node_managed_pages(k->node[b]) != 0;
		KT_EXPECT_EQ(t, n, with_mem);
		if (node_managed_pages(k->node[nid]))
			KT_EXPECT_EQ(t, order[0], (int)nid);
		for (unsigned int i = 1; i < n; i++)	/* (distance, nid) ascending after itself */
			if (order[i - 1] != (int)nid)
				KT_EXPECT_TRUE(t, k->distance[nid][order[i - 1]] <
						  k->distance[nid][order[i]] ||
						  (k->distance[nid][order[i - 1]] ==
						   k->distance[nid][order[i]] &&
						   order[i - 1] < order[i]));
		show_zonelist(k->node[nid]);
	}
}

struct local_alloc {
	int got[MAX_CPUS];		/* node of the page each CPU got, -1: none */
	int want[MAX_CPUS];		/* mm_node() on that CPU */
	u64 hits[MAX_CPUS];		/* its numa_hit on that zone went up by this */
};

static void alloc_local_fn(void *arg)
{
	struct local_alloc *a = arg;
	unsigned int cpu = arch_cpu_id();
	struct page *page;
	u64 before;

	a->want[cpu] = mm_node()->nid;
	page = alloc_pages(GFP_KERNEL | __GFP_NOWARN, 0);
	a->got[cpu] = page ? page->nid : -1;
	if (!page)
		return;
	before = pcp_stats_of(&page_zone(page)->pcp[cpu])->numa_hit;
	__free_pages(page, 0);
	page = alloc_pages(GFP_KERNEL | __GFP_NOWARN, 0);
	if (page) {
		a->hits[cpu] = pcp_stats_of(&page_zone(page)->pcp[cpu])->numa_hit - before;
		__free_pages(page, 0);
	}
}

/*
 * On every CPU at once, alloc_pages() takes a page of the CPU's own node, or, when the
 * CPU's node has no memory, of the nearest node that has (mm_node()), and counts one
 * numa_hit for that CPU in that zone. On a boot without NUMA: node 0 everywhere.
 */
static void numa_alloc_local_by_default(struct ktest *t)
{
	static struct local_alloc a;
	unsigned int far = 0;

	memset(&a, 0xff, sizeof(a.got));
	smp_run_on_all(alloc_local_fn, &a);
	for_each_online_cpu(cpu) {
		KT_EXPECT_EQ(t, a.got[cpu], a.want[cpu]);
		KT_EXPECT_EQ(t, a.hits[cpu], 1ull);
		if (a.want[cpu] != cpu_to_node(cpu)) {
			if (!far++)
				ktest_printf(t, "cpu%u, on memoryless node %d, allocates from node "
					     "%d (the nearest with memory)", cpu, cpu_to_node(cpu),
					     a.want[cpu]);
			KT_EXPECT_EQ(t, node_managed_pages(NODE_DATA(cpu_to_node(cpu))), 0ul);
		}
	}
	ktest_printf(t, "%u CPUs on %u node(s), %u of them on a node without memory",
		     nr_cpus_online(), mm_machine()->nr_nodes, far);
}

/*
 * Exhausting a node falls back to the next: a private machine of 2 nodes, this CPU on node
 * 0. GFP_KERNEL allocations take node 0 until it is at its low watermark, then node 1.
 * Expect numa_hit on node 0 for the first ones, numa_miss on node 1 and numa_foreign on node
 * 0 for the others, all counted for this CPU; everything back, exactly, per node, after.
 */
static void numa_exhaust_node_falls_back(struct ktest *t)
{
	static const bool mem[2] = { true, true };
	static struct page *held[8192];
	struct mm_machine *m = mm_machine(), *pm = tm_create(2, mem, NULL, all_on_node0);
	unsigned long before[2], n = 0, local = 0, remote = 0;
	struct numa_stats z0a, z1a, z0b, z1b;
	struct zone *z0, *z1;

	(void)m;
	if (!pm)
		KT_SKIP(t, "needs 2 x 8 MiB of free memory in 2 distinct 128 MiB sections");
	z0 = only_zone(pm->node[0]);
	z1 = only_zone(pm->node[1]);
	node_counts(pm, before);
	zone_numa_stats(z0, &z0a);
	zone_numa_stats(z1, &z1a);
	while (n < ARRAY_SIZE(held) &&
	       (held[n] = alloc_pages_node(pm->node[0], GFP_KERNEL | __GFP_NOWARN, 0))) {
		if (page_pgdat(held[n++]) == pm->node[0]) {
			KT_ASSERT_EQ(t, remote, 0ul);	/* node 0 first, all of it */
			local++;
		} else if (++remote == 200) {
			break;
		}
	}
	zone_numa_stats(z0, &z0b);
	zone_numa_stats(z1, &z1b);
	KT_EXPECT_EQ(t, remote, 200ul);
	KT_EXPECT_LE(t, zone_free_pages(z0), z0->_watermark[WMARK_LOW]);
	KT_EXPECT_EQ(t, z0b.numa_hit - z0a.numa_hit, (u64)local);
	KT_EXPECT_EQ(t, z1b.numa_miss - z1a.numa_miss, (u64)remote);
	KT_EXPECT_EQ(t, z0b.numa_foreign - z0a.numa_foreign, (u64)remote);
	KT_EXPECT_EQ(t, z1b.numa_hit - z1a.numa_hit, 0ull);
	KT_EXPECT_EQ(t, z1b.other_node - z1a.other_node, (u64)remote);	/* this CPU: node 0 */
	ktest_printf(t, "%lu pages from node 0 (then at its low watermark, %lu free), then %lu "
		     "from node 1: numa_miss %llu on node 1, numa_foreign %llu on node 0", local,
		     zone_free_pages(z0), remote, (unsigned long long)(z1b.numa_miss - z1a.numa_miss),
		     (unsigned long long)(z0b.numa_foreign - z0a.numa_foreign));
	while (n--)
		__free_pages(held[n], 0);
	expect_counts(t, pm, before);
	tm_destroy();
}

/*
 * A remote free lands on the freeing CPU's list for the page's zone and comes home on a
 * drain of that zone (not of the CPU's node). Private machine of 2 nodes, this CPU on node
 * 0; a page of node 1 (__GFP_THISNODE). Each lock model.
 */
static void numa_remote_free_parks_then_drains_home(struct ktest *t)
{
	static const bool mem[2] = { true, true };
	unsigned int cpu = arch_cpu_id();
	unsigned long before[2];
	struct mm_machine *pm;
	struct zone *z1;

	if (!pcp_enabled)
		KT_SKIP(t, "pcp.enable=0: a free goes straight to its node's buddy lists");
	for (unsigned int i = 0; i < ARRAY_SIZE(models); i++) {
		struct numa_stats a, b, c;
		unsigned long buddy;
		struct page *page;

		if (!(pm = tm_create_model(2, mem, NULL, all_on_node0, models[i])))
			KT_SKIP(t, "needs 2 x 8 MiB of free memory in 2 distinct 128 MiB sections");
		z1 = only_zone(pm->node[1]);
		node_counts(pm, before);
		page = alloc_pages_node(pm->node[1], GFP_KERNEL | __GFP_THISNODE, 0);
		KT_ASSERT_NOT_NULL(t, page);
		KT_EXPECT_PTR_EQ(t, page_pgdat(page), pm->node[1]);
		drain_all_pages(z1);	/* the refill's other pages go home now */
		buddy = zone_free_pages(z1);
		zone_numa_stats(z1, &a);
		__free_pages(page, 0);
		/* now: on this CPU's list for node 1's zone, still node 1's page */
		KT_EXPECT_TRUE(t, PagePcp(page));
		KT_EXPECT_EQ(t, z1->pcp[cpu].count, 1);
		KT_EXPECT_EQ(t, zone_free_pages(z1), buddy);
		KT_EXPECT_EQ(t, node_free_pages(pm->node[1]), before[1]);
		drain_all_pages(only_zone(pm->node[0]));	/* this CPU's node: not where it is */
		KT_EXPECT_EQ(t, z1->pcp[cpu].count, 1);
		zone_numa_stats(z1, &b);
		drain_all_pages(z1);			/* the page's zone: home */
		zone_numa_stats(z1, &c);
		KT_EXPECT_EQ(t, z1->pcp[cpu].count, 0);
		KT_EXPECT_EQ(t, zone_free_pages(z1), buddy + 1);
		KT_EXPECT_EQ(t, page->nid, pm->node[1]->nid);
		KT_EXPECT_EQ(t, b.remote_free - a.remote_free, 1ull);
		KT_EXPECT_EQ(t, c.remote_home - b.remote_home, 1ull);
		expect_counts(t, pm, before);
		ktest_printf(t, "[%s] cpu%u (node 0) freed a node 1 page: parked on its list for "
			     "node 1's %s, home after drain_all_pages(that zone)",
			     pcp_lock_model_name(models[i]), cpu, z1->name);
		tm_destroy();
	}
}

/*
 * A memoryless node: private machine of node 0 (memory), node 1 (CPUs, no memory), node 2
 * (memory), node 1 nearer to node 2 (15) than to node 0 (20); this CPU on node 1. Expect its
 * allocations from node 2 (numa_hit there: node 2's zone heads node 1's zonelist), counted
 * other_node; __GFP_THISNODE on node 1 fails; node 1 is in no zonelist.
 */
static void numa_memoryless_node_allocates_nearest(struct ktest *t)
{
	static const u8 dist[MAX_NUMA_NODES][MAX_NUMA_NODES] = {
		{ 10, 20, 30 }, { 20, 10, 15 }, { 30, 15, 10 } };
	static const bool mem[3] = { true, false, true };
	struct mm_machine *pm = tm_create(3, mem, dist, all_on_node1);
	unsigned long before[3];
	struct numa_stats a, b;
	struct page *page;
	int order[MAX_NUMA_NODES];

	if (!pm)
		KT_SKIP(t, "needs 2 x 8 MiB of free memory in 2 distinct 128 MiB sections");
	node_counts(pm, before);
	KT_EXPECT_EQ(t, before[1], 0ul);
	KT_EXPECT_PTR_EQ(t, local_node(pm->node[0]), pm->node[1]);
	KT_EXPECT_PTR_EQ(t, pm->node[1]->mem_node, pm->node[2]);
	KT_ASSERT_EQ(t, zonelist_nodes(t, pm->node[1], order), 2u);
	KT_EXPECT_EQ(t, order[0], 2);
	KT_EXPECT_EQ(t, order[1], 0);
	KT_EXPECT_EQ(t, zonelist_nodes(t, pm->node[0], order), 2u);	/* 0, 2: not 1 */
	zone_numa_stats(only_zone(pm->node[2]), &a);
	page = alloc_pages_node(local_node(pm->node[0]), GFP_KERNEL, 0);
	zone_numa_stats(only_zone(pm->node[2]), &b);
	KT_ASSERT_NOT_NULL(t, page);
	KT_EXPECT_PTR_EQ(t, page_pgdat(page), pm->node[2]);
	KT_EXPECT_EQ(t, b.numa_hit - a.numa_hit, 1ull);
	KT_EXPECT_EQ(t, b.other_node - a.other_node, 1ull);
	KT_EXPECT_NULL(t, alloc_pages_node(pm->node[1], GFP_KERNEL | __GFP_THISNODE |
					   __GFP_NOWARN, 0));
	__free_pages(page, 0);
	expect_counts(t, pm, before);
	tm_destroy();
}

/*
 * A CPU-less node: private machine of node 0 (every CPU) and node 1 (memory only). Node 1's
 * lists split its low watermark over every online CPU (no CPU is its own), as Linux's
 * zone_highsize(); it is reached by fallback and by asking for it, and every allocation
 * from it counts other_node.
 */
static void numa_cpuless_node_reached_by_fallback(struct ktest *t)
{
	static const bool mem[2] = { true, true };
	struct mm_machine *pm = tm_create(2, mem, NULL, all_on_node0);
	unsigned long before[2];
	struct numa_stats a, b;
	struct page *page;
	struct zone *z1;
	int order[MAX_NUMA_NODES];

	if (!pm)
		KT_SKIP(t, "needs 2 x 8 MiB of free memory in 2 distinct 128 MiB sections");
	z1 = only_zone(pm->node[1]);
	node_counts(pm, before);
	KT_EXPECT_EQ(t, z1->pageset_high,
		     MAX((int)(z1->_watermark[WMARK_LOW] / nr_cpus_online()), 4 * z1->pageset_batch));
	KT_ASSERT_EQ(t, zonelist_nodes(t, pm->node[0], order), 2u);
	KT_EXPECT_EQ(t, order[1], 1);
	zone_numa_stats(z1, &a);
	page = alloc_pages_node(pm->node[1], GFP_KERNEL | __GFP_THISNODE, 0);
	zone_numa_stats(z1, &b);
	KT_ASSERT_NOT_NULL(t, page);
	KT_EXPECT_EQ(t, b.other_node - a.other_node, 1ull);
	KT_EXPECT_EQ(t, b.local_node - a.local_node, 0ull);
	__free_pages(page, 0);
	expect_counts(t, pm, before);
	tm_destroy();
	for (unsigned int nid = 0; nid < mm_machine()->nr_nodes; nid++) {	/* kernel's */
		struct pglist_data *pgdat = NODE_DATA(nid);
		bool cpuless = true;

		for_each_online_cpu(c)
			cpuless &= cpu_to_node(c) != (int)nid;
		for (int z = 0; cpuless && z < MAX_NR_ZONES; z++)
			if (zone_populated(&pgdat->node_zones[z])) {
				struct zone *zone = &pgdat->node_zones[z];

				KT_EXPECT_EQ(t, zone->pageset_high,
					     MAX((int)(zone->_watermark[WMARK_LOW] /
						       nr_cpus_online()), 4 * zone->pageset_batch));
				ktest_printf(t, "the kernel's %s has no CPU: %s high %d over all %u "
					     "CPUs", pgdat->name, zone->name, zone->pageset_high,
					     nr_cpus_online());
			}
	}
}

/* ---- remote frees on every CPU while others drain ---- */

struct remote_churn {
	struct mm_machine *m;
	unsigned int ops;
	int draining;			/* the drainer has begun (atomic): churners wait for it */
	int churning;			/* CPUs still churning (atomic) */
	u64 frees[MAX_CPUS];		/* remote frees done by each CPU */
	u64 moved[MAX_CPUS];		/* pages found on another node than they came from */
	u64 drains_during;		/* drains that ran while some CPU churned (atomic) */
};

/* The node after cpu's own in m that has memory (cpu's own if it is the only one). */
static struct pglist_data *other_node(struct mm_machine *m, unsigned int cpu)
{
	unsigned int own = machine_cpu_nid(m, cpu) - m->first_nid;	/* its index */

	for (unsigned int i = 1; i <= m->nr_nodes; i++) {
		struct pglist_data *pgdat = m->node[(own + i) % m->nr_nodes];

		if (node_managed_pages(pgdat))
			return pgdat;
	}
	return m->node[own];
}

/* Allocate from the other node, free on this CPU (a remote free), hold up to 32. */
static void remote_churn_cpu(struct remote_churn *rc)
{
	struct pglist_data *to = other_node(rc->m, arch_cpu_id());
	struct page *held[32];
	unsigned int n = 0;
	u64 seed = 0x9e3779b97f4a7c15ull * (arch_cpu_id() + 1);

	for (unsigned int i = 0; i < rc->ops; i++) {
		seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
		if (n < 32 && (n == 0 || (seed & 1))) {
			held[n] = alloc_pages_node(to, GFP_KERNEL | __GFP_THISNODE | __GFP_NOWARN,
						   (unsigned int)(seed >> 8) % 2);
			n += held[n] != NULL;
			continue;
		}
		n--;
		rc->moved[arch_cpu_id()] += held[n]->nid != to->nid;
		__free_pages(held[n], held[n]->order);
		rc->frees[arch_cpu_id()]++;
	}
	while (n--) {
		rc->moved[arch_cpu_id()] += held[n]->nid != to->nid;
		__free_pages(held[n], held[n]->order);
		rc->frees[arch_cpu_id()]++;
	}
}

static void remote_churn_fn(void *arg)
{
	struct remote_churn *rc = arg;

	if (arch_cpu_id() == 1) {	/* the drainer */
		smp_store_release(&rc->draining, 1);
		while (smp_load_acquire(&rc->churning)) {
			drain_all_pages_machine(rc->m);
			__atomic_add_fetch(&rc->drains_during, 1, __ATOMIC_RELAXED);
		}
		return;
	}
	/* A drainer the host scheduled late would drain nothing: wait for it (10 s at most). */
	for (u64 end = arch_cycles() + us_to_cycles(10000000);
	     !smp_load_acquire(&rc->draining) && arch_cycles() < end;)
		arch_cpu_relax();
	remote_churn_cpu(rc);
	__atomic_sub_fetch(&rc->churning, 1, __ATOMIC_RELEASE);
}

/* Every zone of m at high 0, drained on every CPU (as memory offlining), then back. */
static unsigned long forced_drain(struct mm_machine *m)
{
	unsigned long left = 0;

	for (unsigned int nid = 0; nid < m->nr_nodes; nid++)
		for (int z = 0; z < MAX_NR_ZONES; z++)
			zone_pcp_disable(&m->node[nid]->node_zones[z]);
	for (unsigned int nid = 0; nid < m->nr_nodes; nid++)
		for (int z = 0; z < MAX_NR_ZONES; z++) {
			left += zone_pcp_count(&m->node[nid]->node_zones[z]);
			zone_pcp_enable(&m->node[nid]->node_zones[z]);
		}
	return left;
}

/*
 * All CPUs but CPU 1 allocate order 0-1 blocks from another node and free them themselves
 * (every free a remote one: the page parks on the freeing CPU's list for its zone) while
 * CPU 1 drains every CPU's lists of every node in a loop. Then every list is emptied and
 * each node has exactly its free pages back, no page ever changed node, mm_verify passes.
 */
static void remote_churn_run(struct ktest *t, struct mm_machine *m, const char *what)
{
	static struct remote_churn rc;
	unsigned long before[MAX_NUMA_NODES], left;
	struct numa_stats st = { 0 };
	u64 frees = 0, moved = 0;

	node_counts(m, before);
	for (unsigned int nid = 0; nid < m->nr_nodes; nid++) {
		struct numa_stats ns;

		node_numa_stats(m->node[nid], &ns);
		st.remote_free -= ns.remote_free;
		st.remote_home -= ns.remote_home;
	}
	memset(&rc, 0, sizeof(rc));
	rc.m = m;
	rc.ops = 3000;
	rc.churning = (int)nr_cpus_online() - 1;
	smp_run_on_all(remote_churn_fn, &rc);
	for (unsigned int c = 0; c < MAX_CPUS; c++) {
		frees += rc.frees[c];
		moved += rc.moved[c];
	}
	for (unsigned int nid = 0; nid < m->nr_nodes; nid++) {
		struct numa_stats ns;

		node_numa_stats(m->node[nid], &ns);
		st.remote_free += ns.remote_free;
		st.remote_home += ns.remote_home;
	}
	left = forced_drain(m);
	KT_EXPECT_EQ(t, left, 0ul);
	KT_EXPECT_EQ(t, moved, 0ull);
	expect_counts(t, m, before);
	ktest_printf(t, "%s: %llu remote frees on %u CPUs during %llu drains of every node; "
		     "remote_free %llu, remote_home %llu (pages sent home by spills and drains)",
		     what, (unsigned long long)frees, nr_cpus_online() - 1,
		     (unsigned long long)rc.drains_during, (unsigned long long)st.remote_free,
		     (unsigned long long)st.remote_home);
	if (!rc.drains_during || !st.remote_home)
		KT_FAIL(t, "no drain ran during the frees, or none sent a page home: nothing "
			"was tested");
}

/* On a private 2-node machine (even CPUs node 0, odd node 1), each lock model; then on the
 * kernel's nodes when the boot has two with memory. */
static void numa_remote_free_under_drains(struct ktest *t)
{
	static const bool mem[2] = { true, true };
	struct mm_machine *pm;
	unsigned int with_mem = 0;

	if (nr_cpus_online() < 3)
		KT_SKIP(t, "needs 3 CPUs: churners and a drainer");
	if (!pcp_enabled)
		KT_SKIP(t, "pcp.enable=0: no per-CPU lists for remote pages to park on");
	for (unsigned int i = 0; i < ARRAY_SIZE(models); i++) {
		if (!(pm = tm_create_model(2, mem, NULL, even_odd, models[i])))
			KT_SKIP(t, "needs 2 x 8 MiB of free memory in 2 distinct 128 MiB sections");
		remote_churn_run(t, pm, pcp_lock_model_name(models[i]));
		tm_destroy();
	}
	for (unsigned int nid = 0; nid < mm_machine()->nr_nodes; nid++)
		with_mem += node_managed_pages(NODE_DATA(nid)) != 0;
	if (with_mem >= 2)
		remote_churn_run(t, mm_machine(), "the kernel's nodes");
	else
		ktest_printf(t, "the kernel has %u node(s) with memory: its part needs NUMA=2",
			     with_mem);
}

static const struct ktest_case mm_numa_cases[] = {
	KTEST_CASE_NOFAIL(numa_zonelist_follows_distance, "borrows 32 MiB for its machine"),
	KTEST_CASE_NOFAIL(numa_alloc_local_by_default, "one page per CPU must come"),
	KTEST_CASE_NOFAIL(numa_exhaust_node_falls_back, "counts every page to the watermark"),
	KTEST_CASE_NOFAIL(numa_remote_free_parks_then_drains_home, "follows one page"),
	KTEST_CASE_NOFAIL(numa_memoryless_node_allocates_nearest, "follows one page"),
	KTEST_CASE_NOFAIL(numa_cpuless_node_reached_by_fallback, "follows one page"),
	KTEST_CASE_NOFAIL(numa_remote_free_under_drains, "exact free counts per node"),
};
KTEST_SUITE(mm_numa, mm_numa_cases, .exit = mm_numa_exit);
