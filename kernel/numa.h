/*
 * NUMA topology: how many nodes the machine has, which CPUs and which physical memory belong
 * to each, and how far apart they are. Read from ACPI SRAT and SLIT at boot (kernel/numa.c);
 * one node when there is no SRAT or it contradicts itself or the memory map. mm/ builds one
 * pglist_data per node from it. Not the allocator's node structures (mm/mmzone.h).
 */
#ifndef KERNEL_NUMA_H
#define KERNEL_NUMA_H

#include "kernel/acpi_numa.h"
#include "kernel/arch.h"

#define MAX_NUMA_NODES ACPI_NUMA_MAX_NODES
#define LOCAL_DISTANCE ACPI_LOCAL_DISTANCE
#define REMOTE_DISTANCE ACPI_REMOTE_DISTANCE

struct boot_info;

/* A physical range and its node (from SRAT memory affinity; the whole space with one node). */
struct numa_memblk {
	u64 base, size;
	int nid;
	bool hotpluggable;	/* SRAT says so: memory there may come and go (not modelled) */
};

/*
 * The topology. Written during boot only (numa_init(), numa_cpus_init(), or a host test's
 * numa_set_topology()), read without locks afterwards.
 */
struct numa_topology {
	unsigned int nr_nodes;			/* node ids 0 .. nr_nodes - 1 */
	u8 distance[MAX_NUMA_NODES][MAX_NUMA_NODES];	/* SLIT units: 10 = local */
	struct numa_memblk memblks[ACPI_NUMA_MAX_MEMBLKS];
	unsigned int nr_memblks;
	bool from_firmware;			/* a valid SRAT, else one node */
};

extern struct numa_topology numa_topology;
/* Node of each CPU index (numa_cpus_init(); 0 before it runs). */
extern u8 numa_cpu_node[];

static inline unsigned int nr_node_ids(void)
{
	return numa_topology.nr_nodes;
}

static inline int node_distance(int a, int b)
{
	return numa_topology.distance[a][b];
}

static inline int cpu_to_node(unsigned int cpu)
{
	return numa_cpu_node[cpu];
}

/* The node of the CPU this runs on (Linux's numa_node_id()). */
static inline int numa_node_id(void)
{
	return numa_cpu_node[arch_cpu_id()];
}

#define for_each_node(nid) for (int nid = 0; nid < (int)nr_node_ids(); nid++)

/*
 * At boot, after the command line and before mm_init(): read SRAT and SLIT, check them
 * against the memory map (RAM in no node: more than 1 MiB of it means the SRAT is wrong and
 * the machine runs as one node, as Linux does), and print the nodes' memory and distances.
 * `numa=off` on the command line: one node.
 */
void numa_init(const struct boot_info *bi);
/* After the MADT gave each CPU its APIC ID: each CPU's node, and a line per node. A CPU
 * the SRAT does not list joins node 0, with a warning. */
void numa_cpus_init(void);
/* The node of physical address pa, or -1 if it is in no node's range. */
int numa_phys_to_node(u64 pa);
/* Replace the topology (host tests, which have no firmware): nodes, distances (row-major
 * nr x nr, NULL: 10 / 20), the node of each of nr_cpus CPUs. Memory ranges are the test's. */
void numa_set_topology(unsigned int nr, const u8 *distance, const u8 *cpu_node,
		       unsigned int nr_cpus);

#endif
