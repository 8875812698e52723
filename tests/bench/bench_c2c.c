/*
 * `bench=c2c_pages` and `bench=c2c_drain`: the page allocator's experiments for the c2c
 * plugin (docs/c2c.md), each point in its own window: order-0 pairs on 1..40 CPUs with the
 * per-CPU lists on and off, and a drain of every CPU's lists in each lock model. Without
 * the plugin they run and print their windows, and measure nothing.
 */
#include "tests/bench/bench.h"
#include "tests/bench/c2c.h"
#include "tests/lab/lab_platform.h"
#include "kernel/arch.h"
#include "kernel/cmdline.h"
#include "kernel/printk.h"
#include "kernel/smp.h"
#include "mm/mm_test.h"

static unsigned int c2c_pairs = 2000;
static char c2c_cpus[64] = "1,2,4,8,16,24,32,40";
CMDLINE_UINT("c2c.pairs", c2c_pairs, "c2c_pages: order-0 alloc+free pairs per CPU per window");
CMDLINE_STRING("c2c.cpus", c2c_cpus, "c2c_pages: CPU counts, e.g. 1,40 (default 1,2,4,...,40)");

#define C2C_HELD 8		/* pages each CPU holds between its allocs and frees (bench=scaling's) */
#define DRAIN_BLOCKS LAB_NODE_MAX_BLOCKS	/* a drain instance: 64 MiB */

/* ---- order-0 pairs: what the lists save ---- */

struct pairs_run {
	unsigned int cpus, pairs;
	int arrived;		/* c2c_barrier() */
};

/* bench=scaling's loop: allocate 8 pages, free them, until `pairs` pairs are done. */
static void pairs_loop(unsigned int pairs)
{
	struct page *held[C2C_HELD];

	for (unsigned int done = 0; done < pairs; done += C2C_HELD) {
		for (unsigned int i = 0; i < C2C_HELD; i++)
			held[i] = alloc_pages(GFP_KERNEL | __GFP_NOWARN, 0);
		for (unsigned int i = 0; i < C2C_HELD; i++)
			if (held[i])
				__free_pages(held[i], 0);
	}
}

/* One round first, not counted, and a barrier: the lists are refilled there and every
 * line is where the loop keeps it, so that the count is the steady state's (with the lists
 * on, a pair then never leaves its CPU's list). */
static void pairs_cpu(void *arg)
{
	struct pairs_run *run = arg;
	unsigned int pairs = arch_cpu_id() < run->cpus ? run->pairs : 0;

	c2c_cpu_begin();
	c2c_cpu_uncounted();
	pairs_loop(MIN(pairs, (unsigned int)C2C_HELD));
	c2c_barrier(&run->arrived);
	c2c_cpu_counted();
	pairs_loop(pairs);
	c2c_cpu_end();
}

static void pairs_series(bool lists)
{
	char json[128], n[12];
	bool saved = pcp_enabled;

	drain_all_pages_machine(mm_machine());
	WRITE_ONCE(pcp_enabled, lists);
	for (unsigned int cpus = 1; cpus <= nr_cpus_online(); cpus++) {
		struct pairs_run run = { .cpus = cpus, .pairs = c2c_pairs / C2C_HELD * C2C_HELD };

		snprintf(n, sizeof(n), "%u", cpus);
		if (!bench_list_has(c2c_cpus, n))
			continue;
		snprintf(json, sizeof(json), "\"lists\":%s,\"active\":%u,\"op\":\"pair\",\"ops\":%u,"
			 "\"model\":\"%s\"", lists ? "true" : "false", cpus, cpus * run.pairs,
			 pcp_lock_model_name(mm_machine()->pcp_lock));
		c2c_window(lists ? "pairs lists on" : "pairs lists off", json, pairs_cpu, &run);
	}
	drain_all_pages_machine(mm_machine());
	WRITE_ONCE(pcp_enabled, saved);
}

static void c2c_pages(void)
{
	for (unsigned int nid = 0; nid < mm_machine()->nr_nodes; nid++)
		c2c_node_objects(mm_machine()->node[nid]);
	pairs_series(true);
	pairs_series(false);
}
BENCH_REGISTER(c2c_pages, c2c_pages, "c2c: order-0 pairs on 1..40 CPUs, per-CPU lists on and off (a window each)");

/* ---- a drain of every CPU's lists, per lock model ---- */

struct drain_run {
	struct pglist_data *pgdat;
	struct zone *zone;
	int arrived;			/* CPUs whose lists are full (atomic) */
	unsigned long pages;		/* on the lists when the drain began */
	int done __aligned(64);		/* the drainer has finished (atomic) */
};

/* Fill this CPU's list of the instance's zone to about `high`: allocate, then free. */
static void fill_list(struct drain_run *run)
{
	struct list_head held = LIST_HEAD_INIT(held);
	struct page *page, *tmp;

	for (int n = 0; n < run->zone->pageset_high; n++) {
		page = alloc_pages_node(run->pgdat, GFP_KERNEL | __GFP_NOWARN, 0);
		if (!page)
			break;
		list_add(&page->lru, &held);
	}
	list_for_each_entry_safe(page, tmp, &held, lru)
		__free_pages(page, 0);
}

/* Every CPU fills its list (not counted: the lines are then in their owners' caches), then
 * CPU 0 drains them all while the others wait in the window, interrupts on (an irqoff drain
 * runs on each of them, from its IPI, inside their pause loop: docs/c2c.md, section 6). */
static void drain_cpu(void *arg)
{
	struct drain_run *run = arg;
	bool drainer = arch_cpu_id() == 0;

	c2c_cpu_begin();
	c2c_cpu_uncounted();
	fill_list(run);
	c2c_barrier(&run->arrived);
	if (drainer)
		run->pages = zone_pcp_count(run->zone);
	c2c_cpu_counted();
	if (drainer) {
		drain_all_pages(run->zone);
		smp_store_release(&run->done, 1);
	}
	while (!smp_load_acquire(&run->done))
		arch_cpu_relax();
	c2c_cpu_end();
}

static void drain_model(enum pcp_lock_model model)
{
	struct drain_run run = { .pgdat = lab_node_create_model(DRAIN_BLOCKS, model) };
	struct page *probe;
	char json[128];
	unsigned int w;

	if (!run.pgdat) {
		printk("c2c_drain: no memory for a %u-block instance\n", DRAIN_BLOCKS);
		return;
	}
	probe = alloc_pages_node(run.pgdat, GFP_KERNEL, 0);
	run.zone = probe ? page_zone(probe) : NULL;
	if (probe)
		__free_pages(probe, 0);
	if (run.zone) {
		c2c_node_objects(run.pgdat);
		c2c_object_type("the bench's barrier and done flag", "struct drain_run", &run, sizeof(run));
		snprintf(json, sizeof(json), "\"model\":\"%s\",\"op\":\"cpu drained\",\"ops\":%u",
			 pcp_lock_model_name(model), nr_cpus_online());
		w = c2c_window("drain all CPUs", json, drain_cpu, &run);
		snprintf(json, sizeof(json), "\"pages\":%lu", run.pages);
		c2c_window_result(w, json);
	}
	lab_node_destroy(run.pgdat);
}

static void c2c_drain(void)
{
	static const enum pcp_lock_model models[] = { PCP_LOCK_TRYLOCK, PCP_LOCK_IRQSAVE, PCP_LOCK_IRQOFF };

	for (unsigned int i = 0; i < ARRAY_SIZE(models); i++)
		drain_model(models[i]);
}
BENCH_REGISTER(c2c_drain, c2c_drain, "c2c: CPU 0 drains every CPU's filled lists, in each lock model (a window each)");
