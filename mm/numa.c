/*
 * The NUMA side of the page allocator: zonelists ordered by distance (Linux's
 * build_zonelists()), which node a CPU allocates from, sums over a machine's nodes, and the
 * NUMA statistics. The topology comes from kernel/numa.c (the kernel's machine) or a test.
 * Node setup is mm_init.c's; allocation itself, page_alloc.c's.
 */
#include "mm/internal.h"
#include "kernel/string.h"

/* The index in m->node[] of cpu's node (cpu_node[] says; an out-of-range one is node 0's). */
static unsigned int cpu_node_index(const struct mm_machine *m, unsigned int cpu)
{
	unsigned int i = m->cpu_node ? m->cpu_node[cpu] : 0;

	return i < m->nr_nodes ? i : 0;
}

unsigned int machine_cpu_nid(const struct mm_machine *m, unsigned int cpu)
{
	return m->first_nid + cpu_node_index(m, cpu);
}

struct pglist_data *local_node(const struct pglist_data *pgdat)
{
	const struct mm_machine *m = pgdat->machine;

	return m->node[cpu_node_index(m, arch_cpu_id())];
}

/*
 * The order in which node nid falls back to the others: itself, then the rest nearest
 * first, the lower node number first between two at the same distance. (Linux's
 * find_next_best_node() also spreads ties over nodes, preferring nodes without CPUs and
 * ones fewer lists start with; for a few nodes the plain order is easier to predict.)
 */
static unsigned int fallback_distance(const struct mm_machine *m, unsigned int nid,
				      unsigned int to)
{
	return to == nid ? 0 : m->distance[nid][to];
}

static unsigned int node_order(const struct mm_machine *m, unsigned int nid,
			       unsigned int order[MAX_NUMA_NODES])
{
	bool used[MAX_NUMA_NODES] = { false };
	unsigned int n;

	for (n = 0; n < m->nr_nodes; n++) {
		int best = -1;

		for (unsigned int b = 0; b < m->nr_nodes; b++)
			if (!used[b] && (best < 0 || fallback_distance(m, nid, b) <
						     fallback_distance(m, nid, (unsigned int)best)))
				best = (int)b;
		used[best] = true;
		order[n] = (unsigned int)best;
	}
	return n;
}

/* Append pgdat's zones with memory, highest first; returns the new length. */
static unsigned int add_node_zones(struct zonelist *zl, unsigned int n,
				   struct pglist_data *pgdat)
{
	for (int z = MAX_NR_ZONES - 1; z >= 0; z--) {
		struct zone *zone = &pgdat->node_zones[z];

		if (zone_populated(zone))
			zl->_zonerefs[n++] = (struct zoneref){ zone, z };
	}
	return n;
}

/*
 * Both zonelists of node nid (see struct zonelist): the fallback list walks the nodes in
 * node_order() and each node's zones from Normal down to DMA, so an allocation exhausts a
 * nearer node's zones before it takes any zone of a farther one (Linux's node ordering).
 */
static void build_zonelists(struct mm_machine *m, unsigned int nid)
{
	struct pglist_data *pgdat = m->node[nid];
	struct zonelist *fb = &pgdat->node_zonelists[ZONELIST_FALLBACK];
	struct zonelist *own = &pgdat->node_zonelists[ZONELIST_NOFALLBACK];
	unsigned int order[MAX_NUMA_NODES], nr = node_order(m, nid, order), n = 0;

	for (unsigned int i = 0; i < nr; i++)
		n = add_node_zones(fb, n, m->node[order[i]]);
	fb->_zonerefs[n] = (struct zoneref){ NULL, 0 };
	own->_zonerefs[add_node_zones(own, 0, pgdat)] = (struct zoneref){ NULL, 0 };
	pgdat->mem_node = fb->_zonerefs[0].zone ? fb->_zonerefs[0].zone->node : pgdat;
}

void build_all_zonelists(struct mm_machine *m)
{
	for (unsigned int nid = 0; nid < m->nr_nodes; nid++)
		build_zonelists(m, nid);
}

/* ---- sums over a machine ---- */

unsigned long machine_sum(const struct mm_machine *m, unsigned long (*fn)(struct pglist_data *))
{
	unsigned long n = 0;

	for (unsigned int i = 0; i < m->nr_nodes; i++)
		n += fn(m->node[i]);
	return n;
}

unsigned long machine_free_pages(const struct mm_machine *m)
{
	return machine_sum(m, node_free_pages);
}

unsigned long machine_managed_pages(const struct mm_machine *m)
{
	return machine_sum(m, node_managed_pages);
}

static unsigned long node_memmap_bytes(struct pglist_data *pgdat)
{
	return pgdat->memmap_bytes;
}

unsigned long machine_memmap_bytes(const struct mm_machine *m)
{
	return machine_sum(m, node_memmap_bytes);
}

unsigned long mm_verify_machine(const struct mm_machine *m)
{
	return machine_sum(m, mm_verify);
}

/* ---- NUMA statistics ---- */

/*
 * Sum zone's per-CPU NUMA counters. An allocation is local_node if the CPU that made it is
 * on the zone's node, else other_node (Linux's rule: a CPU of a memoryless node allocates
 * other_node, even on a hit); the counters are per (zone, CPU), so no allocation pays for
 * telling them apart. Frees are counted the same way: remote_free are frees through the
 * per-CPU lists by CPUs of other nodes, which park the page on the freeing CPU's list for
 * this zone until a spill or a drain sends it home (remote_home).
 */
void zone_numa_stats(const struct zone *zone, struct numa_stats *out)
{
	const struct mm_machine *m = zone->node->machine;

	memset(out, 0, sizeof(*out));
	for (unsigned int cpu = 0; zone->pcp && cpu < m->nr_cpus; cpu++) {
		const struct pcp_stats *s = pcp_stats_of(&zone->pcp[cpu]);
		u64 allocs = READ_ONCE(s->numa_hit) + READ_ONCE(s->numa_miss);
		bool local = machine_cpu_nid(m, cpu) == (unsigned int)zone->node->nid;

		out->numa_hit += READ_ONCE(s->numa_hit);
		out->numa_miss += READ_ONCE(s->numa_miss);
		out->numa_foreign += READ_ONCE(s->numa_foreign);
		out->remote_home += READ_ONCE(s->remote_home);
		if (local) {
			out->local_node += allocs;
		} else {
			out->other_node += allocs;
			out->remote_free += READ_ONCE(s->free_hit) + READ_ONCE(s->trylock_fail_free);
		}
	}
}

void node_numa_stats(const struct pglist_data *pgdat, struct numa_stats *out)
{
	memset(out, 0, sizeof(*out));
	for (int z = 0; z < MAX_NR_ZONES; z++) {
		struct numa_stats zs;

		zone_numa_stats(&pgdat->node_zones[z], &zs);
		out->numa_hit += zs.numa_hit;
		out->numa_miss += zs.numa_miss;
		out->numa_foreign += zs.numa_foreign;
		out->local_node += zs.local_node;
		out->other_node += zs.other_node;
		out->remote_free += zs.remote_free;
		out->remote_home += zs.remote_home;
	}
}

/* Linux's per-node numastat, one line per node, and the zonelist each node starts from. */
void show_numastat(const struct mm_machine *m)
{
	printk("numastat: %-8s %10s %10s %12s %10s %10s %11s %11s\n", "node", "numa_hit",
	       "numa_miss", "numa_foreign", "local_node", "other_node", "remote_free",
	       "remote_home");
	for (unsigned int nid = 0; nid < m->nr_nodes; nid++) {
		struct numa_stats st;

		node_numa_stats(m->node[nid], &st);
		printk("numastat: %-8s %10llu %10llu %12llu %10llu %10llu %11llu %11llu\n",
		       m->node[nid]->name, (unsigned long long)st.numa_hit,
		       (unsigned long long)st.numa_miss, (unsigned long long)st.numa_foreign,
		       (unsigned long long)st.local_node, (unsigned long long)st.other_node,
		       (unsigned long long)st.remote_free, (unsigned long long)st.remote_home);
	}
}

/* "node1 Normal, node1 DMA32, node0 DMA32, node0 DMA": one node's fallback order. */
void show_zonelist(const struct pglist_data *pgdat)
{
	char line[400];
	int len = 0;

	for (const struct zoneref *z = pgdat->node_zonelists[ZONELIST_FALLBACK]._zonerefs;
	     z->zone && len < (int)sizeof(line) - 32; z++)
		len += scnprintf(line + len, sizeof(line) - (size_t)len, "%s%s %s",
				 len ? ", " : "", z->zone->node->name, z->zone->name);
	printk("zonelist %s: %s\n", pgdat->name, len ? line : "(no memory anywhere)");
}
