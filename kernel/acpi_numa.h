/*
 * ACPI SRAT and SLIT parser: which memory ranges and which CPUs (by APIC ID) belong to which
 * NUMA node, and how far the nodes are from each other. Pure, like kernel/acpi.c: it reads
 * tables only through the caller's map callback, writes only *out, never prints, so the host
 * tests and fuzzes it. What the kernel makes of it is kernel/numa.c.
 */
#ifndef KERNEL_ACPI_NUMA_H
#define KERNEL_ACPI_NUMA_H

#include "kernel/acpi.h"

#define ACPI_NUMA_MAX_NODES 8		/* proximity domains; more is an invalid table */
#define ACPI_NUMA_MAX_MEMBLKS 64	/* enabled memory ranges; more is an invalid table */
#define ACPI_NUMA_MAX_CPUS 1024		/* CPU entries recorded; more are counted */
#define ACPI_LOCAL_DISTANCE 10		/* SLIT: a node to itself */
#define ACPI_REMOTE_DISTANCE 20		/* between nodes when there is no SLIT (Linux's default) */

/* A processor affinity entry (SRAT type 0 or 2) with the Enabled flag set. */
struct acpi_numa_cpu {
	u32 apic_id;
	u8 node;		/* node id (below), not the proximity domain */
	bool from_x2apic_entry;	/* type 2 (local x2APIC affinity) */
};

/* A memory affinity entry (SRAT type 1) with the Enabled flag set and a nonzero length. */
struct acpi_numa_memblk {
	u64 base, size;
	u8 node;
	bool hotpluggable;	/* flags bit 1: may be added or removed later */
	bool nonvolatile;	/* flags bit 2 */
};

/*
 * What SRAT and SLIT say. Node ids are dense, 0 .. nr_nodes - 1, numbered in the order their
 * proximity domain first appears in the SRAT (as Linux numbers them); pxm[] maps back.
 */
struct acpi_numa_info {
	u8 srat_revision;
	unsigned int nr_nodes;
	u32 pxm[ACPI_NUMA_MAX_NODES];		/* node id -> proximity domain */
	struct acpi_numa_cpu cpus[ACPI_NUMA_MAX_CPUS];
	unsigned int nr_cpus;		/* recorded in cpus[] */
	unsigned int nr_cpus_dropped;	/* enabled entries past ACPI_NUMA_MAX_CPUS (not recorded) */
	unsigned int nr_cpus_disabled;	/* processor entries with Enabled clear (skipped) */
	unsigned int nr_cpu_duplicates;	/* an APIC ID listed again for the same node (skipped) */
	struct acpi_numa_memblk mem[ACPI_NUMA_MAX_MEMBLKS];
	unsigned int nr_mem;
	unsigned int nr_mem_disabled;	/* memory entries with Enabled clear or no length (skipped;
					 * QEMU pads the table with such entries) */
	unsigned int nr_mem_hotpluggable;
	unsigned int nr_other_entries;	/* entry types this parser does not use (GICC, ...) */
	bool has_slit;			/* distance[] came from a SLIT, else 10 / 20 */
	u64 slit_localities;
	u8 distance[ACPI_NUMA_MAX_NODES][ACPI_NUMA_MAX_NODES];	/* by node id */
	char error[ACPI_ERROR_LEN];	/* on failure: what went wrong, naming the table */
};

/*
 * Parse an SRAT found by acpi_find_table() (length and checksum checked). Fills the node,
 * CPU and memory parts of *out (zeroed first) and sets the default distances. Rejects, with
 * out->error saying why: malformed entries (ACPI_ERR_BAD_TABLE), and, as ACPI_ERR_INVALID,
 * more than ACPI_NUMA_MAX_NODES proximity domains or ACPI_NUMA_MAX_MEMBLKS ranges, a range
 * wrapping past 2^64, ranges of two nodes that overlap, one APIC ID in two nodes.
 */
int acpi_parse_srat(const struct acpi_table *srat, struct acpi_numa_info *out);

/*
 * Parse a SLIT after the SRAT: distance[][] for every pair of out's nodes. ACPI_ERR_INVALID
 * for a diagonal other than 10, another entry of 10 or less, an asymmetric matrix, or a
 * node whose proximity domain the matrix does not cover (a node id out of range).
 */
int acpi_parse_slit(const struct acpi_table *slit, struct acpi_numa_info *out);

/*
 * Both, from the RSDP in rsdp[0..rsdp_len): ACPI_ERR_NO_TABLE if there is no SRAT (one
 * node); no SLIT leaves the default distances. Any other error: out->error says why.
 */
int acpi_parse_numa(const void *rsdp, size_t rsdp_len, acpi_map_fn map, void *ctx,
		    struct acpi_numa_info *out);

#endif
