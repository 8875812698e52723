/*
 * `bench=numa` (make run NUMA=2 at -smp 40, or make bench BENCH_ONLY=numa): every CPU at
 * once, three patterns, each in bench_windows() windows: local (alloc_pages() and free on
 * the CPU's own node), remote (allocate from the other node, free it here: every free is a
 * remote one), and hand-off (a CPU of node 0 allocates, a CPU of node 1 frees: node 0's
 * pages park on node 1's CPUs until a spill or a drain sends them home). It counts where
 * pages came from and how they went home. QEMU's TCG gives every guest access the same cost,
 * so remote memory is not slower here: the rates differ only by what the software does.
 */
#include "tests/bench/bench.h"
#include "kernel/cmdline.h"
#include "kernel/printk.h"
#include "kernel/smp.h"
#include "kernel/string.h"
#include "kernel/timer.h"
#include "mm/mm.h"
#include "mm/mm_test.h"

#define NUMA_HELD 8		/* pages a CPU holds between its allocations and frees */
#define HANDOFF_SLOTS 64	/* pages handed over at a time: the hand-shake is per 64 */

static unsigned int numa_pairs = 20000;
CMDLINE_UINT("bench.numa_pairs", numa_pairs, "numa bench: alloc+free pairs per CPU per window");

enum numa_pattern { LOCAL, REMOTE, HANDOFF, NR_PATTERNS };
static const char *const pattern_names[] = { "local", "remote", "handoff" };

struct numa_run {
	enum numa_pattern pattern;
	unsigned int pairs;
	u64 start[MAX_CPUS], end[MAX_CPUS];
	u64 failures;
	/* hand-off: CPU c of node 0 fills box[c], its partner on node 1 empties it */
	struct handoff_box {
		struct page *page[HANDOFF_SLOTS];
		int full;		/* atomic: the producer filled it, the consumer may take */
	} *box;				/* [nr_cpu_ids]: cpu_array_alloc() */
};

/* The first CPU of node nid at or after the rank-th one (CPUs of a node in order). */
static int nth_cpu_of_node(int nid, unsigned int rank)
{
	for_each_online_cpu(c)
		if (cpu_to_node(c) == nid && !rank--)
			return (int)c;
	return -1;
}

static unsigned int node_rank(unsigned int cpu)
{
	unsigned int rank = 0;

	for (unsigned int c = 0; c < cpu; c++)
		rank += cpu_online(c) && cpu_to_node(c) == cpu_to_node(cpu);
	return rank;
}

static void pairs_from(struct numa_run *run, struct pglist_data *from)
{
	gfp_t gfp = GFP_KERNEL | __GFP_NOWARN | (from ? __GFP_THISNODE : 0);
	struct page *held[NUMA_HELD];

	for (unsigned int done = 0; done < run->pairs; done += NUMA_HELD) {
		for (unsigned int i = 0; i < NUMA_HELD; i++)
			if (!(held[i] = from ? alloc_pages_node(from, gfp, 0) : alloc_pages(gfp, 0)))
				__atomic_fetch_add(&run->failures, 1, __ATOMIC_RELAXED);
		for (unsigned int i = 0; i < NUMA_HELD; i++)
			if (held[i])
				__free_pages(held[i], 0);
	}
}

/* Node 0's CPU fills its box with local pages; its partner on node 1 frees them. */
static void handoff(struct numa_run *run, unsigned int cpu)
{
	unsigned int rank = node_rank(cpu);
	bool producer = cpu_to_node(cpu) == 0;
	int partner = producer ? nth_cpu_of_node(1, rank) : nth_cpu_of_node(0, rank);
	struct handoff_box *box = &run->box[producer ? cpu : (unsigned int)MAX(partner, 0)];

	if (partner < 0)
		return;	/* more CPUs on one node than the other: no partner */
	for (unsigned int done = 0; done < run->pairs; done += HANDOFF_SLOTS) {
		while (smp_load_acquire(&box->full) == producer)
			arch_cpu_relax();
		for (unsigned int i = 0; i < HANDOFF_SLOTS; i++) {
			if (producer && !(box->page[i] = alloc_pages(GFP_KERNEL | __GFP_NOWARN, 0)))
				__atomic_fetch_add(&run->failures, 1, __ATOMIC_RELAXED);
			else if (!producer && box->page[i])
				__free_pages(box->page[i], 0);
		}
		smp_store_release(&box->full, producer);
	}
}

static void numa_cpu(void *arg)
{
	struct numa_run *run = arg;
	unsigned int cpu = arch_cpu_id();
	int other = (cpu_to_node(cpu) + 1) % (int)mm_machine()->nr_nodes;

	run->start[cpu] = arch_cycles();
	if (run->pattern == LOCAL)
		pairs_from(run, NULL);
	else if (run->pattern == REMOTE)
		pairs_from(run, NODE_DATA(other));
	else
		handoff(run, cpu);
	run->end[cpu] = arch_cycles();
}

static void machine_numa_stats(struct numa_stats *sum)
{
	struct mm_machine *m = mm_machine();

	*sum = (struct numa_stats){ 0 };
	for (unsigned int nid = 0; nid < m->nr_nodes; nid++) {
		struct numa_stats s;

		node_numa_stats(m->node[nid], &s);
		sum->local_node += s.local_node;
		sum->other_node += s.other_node;
		sum->remote_free += s.remote_free;
		sum->remote_home += s.remote_home;
	}
}

/* Pages that CPUs hold on their lists for zones of other nodes. */
static unsigned long remote_parked(void)
{
	struct mm_machine *m = mm_machine();
	unsigned long n = 0;

	for (unsigned int nid = 0; nid < m->nr_nodes; nid++)
		for (int z = 0; z < MAX_NR_ZONES; z++) {
			struct zone *zone = &m->node[nid]->node_zones[z];

			for (unsigned int c = 0; zone->pcp && c < nr_cpus; c++)
				if (cpu_to_node(c) != (int)nid)
					n += (unsigned long)READ_ONCE(zone->pcp[c].count);
		}
	return n;
}

/* What one window did: its rate and its counts (deltas of the machine's NUMA counters). */
struct numa_window {
	u64 rate_milli, local, other, remote_free, home_during, parked, home_drain;
};

static struct numa_window numa_window(enum numa_pattern pattern)
{
	static struct numa_run run;
	struct numa_stats a, b, c;
	struct numa_window w;
	u64 first = ~0ull, last = 0, pairs = 0;

	memset(&run, 0, sizeof(run));
	run.box = cpu_array_alloc(sizeof(*run.box));	/* before the counts are read */
	if (!run.box) {
		printk("numa bench: no memory for %u hand-off boxes\n", nr_cpu_ids);
		return (struct numa_window){ 0 };
	}
	drain_all_pages_machine(mm_machine());
	run.pattern = pattern;
	run.pairs = MAX(numa_pairs, 100u);
	machine_numa_stats(&a);
	smp_run_on_all(numa_cpu, &run);
	machine_numa_stats(&b);
	w.parked = remote_parked();
	drain_all_pages_machine(mm_machine());
	machine_numa_stats(&c);
	cpu_array_free(run.box, sizeof(*run.box));
	for_each_online_cpu(cpu) {
		if (!run.end[cpu])
			continue;
		first = MIN(first, run.start[cpu]);
		last = MAX(last, run.end[cpu]);
		if (pattern != HANDOFF || (cpu_to_node(cpu) == 0 &&
					   nth_cpu_of_node(1, node_rank(cpu)) >= 0))
			pairs += run.pairs;	/* a hand-off pair: node 0 allocates, 1 frees */
	}
	w.rate_milli = pairs * 1000000ull * 1000 / MAX(cycles_to_us(last - first), 1ull);
	w.local = b.local_node - a.local_node;
	w.other = b.other_node - a.other_node;
	w.remote_free = b.remote_free - a.remote_free;
	w.home_during = b.remote_home - a.remote_home;
	w.home_drain = c.remote_home - b.remote_home;
	if (run.failures)
		printk("numa bench: %s: %llu allocations failed\n", pattern_names[pattern],
		       (unsigned long long)run.failures);
	return w;
}

static void emit_counts(const char *pattern, const char *metric, const u64 *v, unsigned int n)
{
	u64 milli[BENCH_MAX_WINDOWS];
	char name[64], extra[64];

	for (unsigned int i = 0; i < n; i++)
		milli[i] = v[i] * 1000;
	snprintf(name, sizeof(name), "%s.%s", pattern, metric);
	snprintf(extra, sizeof(extra), "\"case\":\"%s\"", pattern);
	bench_emit("numa", name, "pages", false, milli, n, extra);
}

static void numa_bench_pattern(enum numa_pattern p)
{
	unsigned int nwin = bench_windows();
	u64 rate[BENCH_MAX_WINDOWS], v[6][BENCH_MAX_WINDOWS];
	static const char *const counts[6] = { "local_node", "other_node", "remote_free",
					       "home_by_spill", "parked_at_end", "home_by_drain" };
	char extra[64];

	for (unsigned int i = 0; i < nwin; i++) {
		struct numa_window w = numa_window(p);

		rate[i] = w.rate_milli;
		v[0][i] = w.local, v[1][i] = w.other, v[2][i] = w.remote_free;
		v[3][i] = w.home_during, v[4][i] = w.parked, v[5][i] = w.home_drain;
	}
	printk("numa bench: %-7s %9llu pairs/s (+- %llu.%02llu%%) on %u CPUs; per window: "
	       "local_node %llu other_node %llu, remote frees %llu, home by spill %llu, parked "
	       "at the end %llu, home by drain %llu\n", pattern_names[p],
	       (unsigned long long)(bench_mean(rate, nwin) / 1000),
	       (unsigned long long)(bench_rel_stddev_centi(rate, nwin) / 100),
	       (unsigned long long)(bench_rel_stddev_centi(rate, nwin) % 100), nr_cpus_online(),
	       (unsigned long long)bench_mean(v[0], nwin), (unsigned long long)bench_mean(v[1], nwin),
	       (unsigned long long)bench_mean(v[2], nwin), (unsigned long long)bench_mean(v[3], nwin),
	       (unsigned long long)bench_mean(v[4], nwin), (unsigned long long)bench_mean(v[5], nwin));
	snprintf(extra, sizeof(extra), "\"case\":\"%s\"", pattern_names[p]);
	bench_emit("numa", pattern_names[p], "pairs/s", true, rate, nwin, extra);
	for (int k = 0; k < 6; k++)
		emit_counts(pattern_names[p], counts[k], v[k], nwin);
}

static void numa_bench(void)
{
	struct mm_machine *m = mm_machine();

	if (m->nr_nodes < 2 || !node_managed_pages(m->node[0]) || !node_managed_pages(m->node[1])) {
		printk("numa bench: needs two nodes with memory (make run NUMA=2 ... "
		       "CMDLINE='test=none bench=numa'); this boot has %u node(s)\n", m->nr_nodes);
		return;
	}
	printk("numa bench: %u pairs per CPU per window, %u nodes, %u CPUs, lock model %s. "
	       "TCG does not model remote memory latency: rates differ only by the software's "
	       "work (lists, spills, drains)\n", MAX(numa_pairs, 100u), m->nr_nodes,
	       nr_cpus_online(), pcp_lock_model_name(m->pcp_lock));
	for (int p = 0; p < NR_PATTERNS; p++)
		numa_bench_pattern((enum numa_pattern)p);
}
BENCH_REGISTER(numa, numa_bench, "local vs remote allocation and remote-free traffic across "
	       "nodes, every CPU (needs NUMA=2)");
