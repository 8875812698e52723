/* Windows for the c2c plugin: tests/bench/c2c.h. */
#include "tests/bench/c2c.h"
#include "kernel/arch.h"
#include "kernel/cmdline.h"
#include "kernel/printk.h"
#include "kernel/smp.h"
#include "mm/mm.h"

static unsigned int c2c_windows;	/* the plugin numbers windows the same way, from 1 */
/*
 * c2c.phase=N: every CPU spins N * its number of pauses before its part of each window.
 * The guest's CPUs then reach the window at another phase of single-threaded QEMU's
 * round-robin, and where the model's counts depend on the order the guest's CPUs really
 * took a lock (the lists-off pairs), a few phases give the spread (docs/c2c.md).
 */
static unsigned int c2c_phase;
CMDLINE_UINT("c2c.phase", c2c_phase, "c2c windows: each CPU spins this many pauses times its number first");

struct phased {
	smp_call_fn fn;
	void *arg;
};

static void phased_call(void *p)
{
	const struct phased *ph = p;

	for (unsigned int i = c2c_phase * arch_cpu_id(); i; i--)
		arch_cpu_relax();
	ph->fn(ph->arg);
}

unsigned int c2c_window(const char *name, const char *json, smp_call_fn fn, void *arg)
{
	unsigned int n = ++c2c_windows;
	struct phased ph = { fn, arg };

	printk("C2C {\"window\":%u,\"name\":\"%s\",\"cpus\":%u%s%s}\n", n, name, nr_cpus_online(),
	       json ? "," : "", json ? json : "");
	c2c_window_begin();
	smp_run_on_all(c2c_phase ? phased_call : fn, c2c_phase ? (void *)&ph : arg);
	c2c_window_end();
	return n;
}

void c2c_barrier(int *arrived)
{
	int cpus = (int)nr_cpus_online();

	__atomic_add_fetch(arrived, 1, __ATOMIC_ACQ_REL);
	while (smp_load_acquire(arrived) < cpus)
		arch_cpu_relax();
	c2c_cpu_sync();
}

void c2c_window_result(unsigned int window, const char *json)
{
	printk("C2C {\"window\":%u,%s}\n", window, json);
}

void c2c_object(const char *name, const void *addr, unsigned long size)
{
	printk("C2C {\"object\":\"%s\",\"phys\":%llu,\"size\":%lu}\n", name,
	       (unsigned long long)arch_virt_to_phys(addr), size);
}

void c2c_object_type(const char *name, const char *type, const void *addr, unsigned long size)
{
	printk("C2C {\"object\":\"%s\",\"type\":\"%s\",\"phys\":%llu,\"size\":%lu}\n", name, type,
	       (unsigned long long)arch_virt_to_phys(addr), size);
}

/* The names by which the report finds a node's lines: zones, their locks, free lists and
 * per-CPU lists, and the memory map. */
void c2c_node_objects(struct pglist_data *pgdat)
{
	char name[48];

	for (int z = 0; z < MAX_NR_ZONES; z++) {
		struct zone *zone = &pgdat->node_zones[z];

		if (!zone_populated(zone))
			continue;
		snprintf(name, sizeof(name), "%s zone %s", pgdat->name, zone->name);
		c2c_object_type(name, "struct zone", zone, sizeof(*zone));
		snprintf(name, sizeof(name), "%s zone %s ->lock", pgdat->name, zone->name);
		c2c_object_type(name, "spinlock_t", &zone->lock, sizeof(zone->lock));
		snprintf(name, sizeof(name), "%s zone %s ->free_area", pgdat->name, zone->name);
		c2c_object_type(name, "struct free_area", zone->free_area, sizeof(zone->free_area));
		snprintf(name, sizeof(name), "%s zone %s ->pcp[]", pgdat->name, zone->name);
		c2c_object_type(name, "struct per_cpu_pages", zone->pcp, pgdat->nr_cpus * sizeof(*zone->pcp));
	}
	for (unsigned long pfn = pgdat->node_start_pfn & ~(PAGES_PER_SECTION - 1);
	     pfn < pgdat->node_end_pfn; pfn += PAGES_PER_SECTION)
		if (pfn_in_node(pgdat, pfn))
			c2c_object_type("struct page", "struct page", pfn_to_page(pgdat, pfn),
					PAGES_PER_SECTION * sizeof(struct page));
}
