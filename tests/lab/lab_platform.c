/*
 * The kernel's side of tests/lab/lab_platform.h: a private allocator instance over MAX_ORDER
 * blocks taken from the kernel's own allocator (given back when it is destroyed), the online
 * CPUs through smp_run_on_all().
 */
#include "tests/lab/lab_platform.h"
#include "mm/memblock.h"
#include "kernel/bootinfo.h"
#include "kernel/timer.h"

static struct memblock lab_mb;
static struct pglist_data lab_node;
static struct page *lab_backing[LAB_NODE_MAX_BLOCKS];
static bool lab_live;		/* lab_node is registered: lab_node_exit() cleans up */

static void lab_free_backing(void)
{
	for (int i = 0; i < LAB_NODE_MAX_BLOCKS; i++)
		if (lab_backing[i]) {
			__free_pages(lab_backing[i], MAX_ORDER);
			lab_backing[i] = NULL;
		}
}

static struct pglist_data *node_create(unsigned int nr_blocks, bool pcp, unsigned int nr_pcps,
				       enum pcp_lock_model model)
{
	struct mem_region map[LAB_NODE_MAX_BLOCKS];

	if (lab_live || !nr_blocks || nr_blocks > LAB_NODE_MAX_BLOCKS)
		return NULL;
	memblock_init(&lab_mb, ~0ull);
	for (unsigned int i = 0; i < nr_blocks; i++) {
		lab_backing[i] = alloc_pages(GFP_KERNEL | __GFP_NOWARN, MAX_ORDER);
		if (!lab_backing[i]) {
			lab_free_backing();
			return NULL;
		}
		map[i] = (struct mem_region){ page_to_phys(lab_backing[i]),
					      MAX_ORDER_NR_PAGES << PAGE_SHIFT, MEM_USABLE };
	}
	memblock_add_mmap(&lab_mb, map, nr_blocks);
	if (pgdat_init(&lab_node, &lab_mb, "private", nr_pcps, model)) {
		lab_free_backing();
		return NULL;
	}
	if (pcp)
		zone_pcp_update(&lab_node, nr_cpus_online());
	for (int z = 0; !pcp && z < MAX_NR_ZONES; z++)
		zone_pcp_disable(&lab_node.node_zones[z]);
	lab_live = true;
	return &lab_node;
}

struct pglist_data *lab_node_create(unsigned int nr_blocks, bool pcp)
{
	return node_create(nr_blocks, pcp, nr_cpu_ids, pcp_lock_default);
}

struct pglist_data *lab_node_create_model(unsigned int nr_blocks, enum pcp_lock_model model)
{
	return node_create(nr_blocks, true, nr_cpu_ids, model);
}

struct pglist_data *lab_node_create_pcps(unsigned int nr_blocks, unsigned int nr_pcps)
{
	return node_create(nr_blocks, true, MAX(nr_pcps, nr_cpu_ids), pcp_lock_default);
}

void lab_node_destroy(struct pglist_data *pgdat)
{
	pgdat_destroy(pgdat);
	lab_free_backing();
	lab_live = false;
}

void lab_node_exit(struct ktest *t)
{
	if (lab_live)
		lab_node_destroy(&lab_node);
}

unsigned int lab_nr_cpus(void)
{
	return nr_cpus_online();
}

void lab_run_on_cpus(smp_call_fn fn, void *arg)
{
	smp_run_on_all(fn, arg);
}

bool lab_deterministic(void)
{
	return false;
}

static void (*lab_tick_fn)(void);

static void lab_tick(unsigned int cpu)
{
	void (*fn)(void) = READ_ONCE(lab_tick_fn);

	if (fn)
		fn();
}

int lab_set_tick(void (*fn)(void))
{
	if (!fn) {
		timer_remove_tick_hook(lab_tick);	/* waits for every CPU's next tick */
		WRITE_ONCE(lab_tick_fn, NULL);
		return 0;
	}
	WRITE_ONCE(lab_tick_fn, fn);
	return timer_add_tick_hook(lab_tick);
}
