/*
 * The machine's NUMA topology (kernel/numa.h): from ACPI SRAT and SLIT, checked against the
 * boot memory map and the MADT, with one node as the fallback for anything inconsistent.
 * Parsing is kernel/acpi_numa.c's; the allocator's nodes are mm/'s.
 */
#include "kernel/numa.h"
#include "kernel/bootinfo.h"
#include "kernel/cmdline.h"
#include "kernel/printk.h"
#include "kernel/smp.h"
#include "kernel/string.h"

/* One node until numa_init() finds more (and on the host, where nothing calls it). */
struct numa_topology numa_topology = {
	.nr_nodes = 1,
	.distance = { { LOCAL_DISTANCE } },
	.memblks = { { 0, ~0ull, 0, false } },
	.nr_memblks = 1,
};
u8 numa_cpu_node[MAX_CPUS] __read_mostly;

static bool numa_enabled = true;
CMDLINE_BOOL("numa", numa_enabled, "0/off: one node whatever ACPI SRAT and SLIT say");

/* Kept from numa_init() for numa_cpus_init(): which APIC ID is in which node. */
static struct acpi_numa_info srat;

/* One node holding every CPU and all of physical memory, 10 to itself. */
static void one_node(void)
{
	numa_topology = (struct numa_topology){
		.nr_nodes = 1,
		.distance = { { LOCAL_DISTANCE } },
		.memblks = { { 0, ~0ull, 0, false } },
		.nr_memblks = 1,
	};
	memset(numa_cpu_node, 0, sizeof(numa_cpu_node));
}

void numa_set_topology(unsigned int nr, const u8 *distance, const u8 *cpu_node,
		       unsigned int nr_cpus)
{
	one_node();
	numa_topology.nr_nodes = nr;
	for (unsigned int a = 0; a < nr; a++)
		for (unsigned int b = 0; b < nr; b++)
			numa_topology.distance[a][b] = distance ? distance[a * nr + b] :
						       a == b ? LOCAL_DISTANCE : REMOTE_DISTANCE;
	for (unsigned int c = 0; c < nr_cpus; c++)
		numa_cpu_node[c] = cpu_node[c];
}

int numa_phys_to_node(u64 pa)
{
	for (unsigned int i = 0; i < numa_topology.nr_memblks; i++) {
		const struct numa_memblk *m = &numa_topology.memblks[i];

		if (pa >= m->base && pa - m->base < m->size)
			return m->nid;
	}
	return -1;
}

/* ACPI tables lie below 4 GiB, which the boot direct map covers whole. */
static const void *acpi_map(void *ctx, u64 pa, u64 len)
{
	(void)ctx;
	if (pa + len < pa || pa + len > (4ull << 30))
		return NULL;
	return arch_phys_to_virt(pa);
}

/* The RSDP the loader passed, or one found in the BIOS area; false if there is none. */
static bool find_rsdp(const struct boot_info *bi, u8 rsdp[ACPI_RSDP_V2_LEN], size_t *len)
{
	u64 pa;

	*len = ACPI_RSDP_V2_LEN;
	if (bi->rsdp_present) {
		memcpy(rsdp, bi->rsdp_copy, ACPI_RSDP_V2_LEN);
		*len = bi->rsdp_revision >= 2 ? ACPI_RSDP_V2_LEN : ACPI_RSDP_V1_LEN;
		return true;
	}
	pa = acpi_scan_rsdp(acpi_map, NULL);
	if (pa)
		memcpy(rsdp, acpi_map(NULL, pa, *len), *len);
	return pa != 0;
}

/* [base, end) shrunk to whole pages in *s, *e: false if that leaves none. memblock shrinks
 * usable RAM so, and a node's range too (mm/mm_init.c: assign_nodes()): a page an SRAT
 * boundary cuts through is in no node. */
static bool whole_pages(u64 base, u64 end, u64 *s, u64 *e)
{
	if (base > ~0ull - (PAGE_SIZE - 1))
		return false;
	*s = ALIGN_UP(base, PAGE_SIZE);
	*e = ALIGN_DOWN(end, PAGE_SIZE);
	return *s < *e;
}

/* How far from s the memory at s is accounted for, or s if it is not: an SRAT range holds it
 * (shrunk to whole pages), or an entry of the map that is not usable RAM (grown to whole
 * pages, as memblock cuts it out). *next: where the next of those starts, if s is not. */
static u64 accounted_to(u64 s, const struct boot_info *bi, const struct acpi_numa_info *info,
			u64 *next)
{
	u64 reach = s, b, e;

	for (unsigned int m = 0; m < info->nr_mem + bi->nr_mmap; m++) {
		if (m < info->nr_mem) {
			if (!whole_pages(info->mem[m].base, info->mem[m].base + info->mem[m].size,
					 &b, &e))
				continue;
		} else {
			const struct mem_region *r = &bi->mmap[m - info->nr_mem];

			if (r->type == MEM_USABLE || !r->length)
				continue;
			b = ALIGN_DOWN(r->base, PAGE_SIZE);
			e = mem_region_end(r) > ~0ull - (PAGE_SIZE - 1) ? ~0ull :
			    ALIGN_UP(mem_region_end(r), PAGE_SIZE);
		}
		if (b <= s && e > reach)
			reach = e;
		else if (b > s && b < *next)
			*next = b;
	}
	return reach;
}

/* Bytes of usable RAM in the loader's map (whole pages, as memblock adds it; an entry that
 * wraps past 2^64 counts to there) that lie in no SRAT range. Ranges may overlap (below):
 * this measures their union. */
static u64 ram_in_no_node(const struct boot_info *bi, const struct acpi_numa_info *info)
{
	u64 missing = 0, s, e;

	for (unsigned int i = 0; i < bi->nr_mmap; i++) {
		const struct mem_region *r = &bi->mmap[i];

		if (r->type != MEM_USABLE || !whole_pages(r->base, mem_region_end(r), &s, &e))
			continue;
		while (s < e) {
			u64 next = e, reach = accounted_to(s, bi, info, &next);

			if (reach > s) {
				s = MIN(reach, e);
			} else {
				missing += next - s;
				s = next;
			}
		}
	}
	return missing;
}

/*
 * Ranges of one node that overlap or touch become one, as Linux's numa_cleanup_meminfo()
 * joins a node's blocks: an SRAT may list a node's memory in pieces, or twice (the parser
 * lets it; ranges of two nodes never overlap). Only ranges alike in being hot-pluggable
 * join, so that memory that may come later is never counted as there. Returns how many
 * ranges were merged away.
 */
static unsigned int merge_node_ranges(struct acpi_numa_info *info)
{
	unsigned int merged = 0;

	for (unsigned int i = 0; i < info->nr_mem; i++) {
		struct acpi_numa_memblk *a = &info->mem[i];

		for (unsigned int j = i + 1; j < info->nr_mem; j++) {
			struct acpi_numa_memblk *b = &info->mem[j];
			u64 start = MIN(a->base, b->base);
			u64 end = MAX(a->base + a->size, b->base + b->size);

			if (a->node != b->node || a->hotpluggable != b->hotpluggable ||
			    b->base > a->base + a->size || a->base > b->base + b->size)
				continue;
			a->base = start;
			a->size = end - start;
			a->nonvolatile &= b->nonvolatile;
			memmove(b, b + 1, (--info->nr_mem - j) * sizeof(*b));	/* keep the order */
			merged++;
			j = i;	/* a grew: every other range may touch it now */
		}
	}
	return merged;
}

static void adopt(const struct acpi_numa_info *info)
{
	numa_topology = (struct numa_topology){ .nr_nodes = info->nr_nodes,
						 .nr_memblks = info->nr_mem,
						 .from_firmware = true };
	memcpy(numa_topology.distance, info->distance, sizeof(info->distance));
	for (unsigned int m = 0; m < info->nr_mem; m++)
		numa_topology.memblks[m] = (struct numa_memblk){ info->mem[m].base,
			info->mem[m].size, info->mem[m].node, info->mem[m].hotpluggable };
}

/* " [0x<16 digits>-0x<16 digits>) hot-pluggable": the longest range print_nodes() writes. */
#define RANGE_TEXT_MAX 54

/*
 * One line per node: its memory (the ranges that fit, then how many more there are) and its
 * distances to every node. Each piece is a bounded append (scnprintf()), so the line stays
 * in its buffer whatever the SRAT holds; the ranges have room of their own, the distances
 * theirs (MAX_NUMA_NODES of at most " 255").
 */
static void print_nodes(void)
{
	for_each_node(nid) {
		char ranges[4 * RANGE_TEXT_MAX], dist[4 * MAX_NUMA_NODES + 1] = "";
		size_t len = 0, dlen = 0;
		unsigned int more = 0;
		u64 total = 0;

		ranges[0] = '\0';
		for (unsigned int m = 0; m < numa_topology.nr_memblks; m++) {
			const struct numa_memblk *b = &numa_topology.memblks[m];

			if (b->nid != nid)
				continue;
			total += b->hotpluggable ? 0 : b->size;
			if (len + 2 * RANGE_TEXT_MAX > sizeof(ranges)) {
				more++;	/* room kept for " and N more" */
				continue;
			}
			len += scnprintf(ranges + len, sizeof(ranges) - len, " [0x%llx-0x%llx)%s",
					 (unsigned long long)b->base,
					 (unsigned long long)(b->base + b->size),
					 b->hotpluggable ? " hot-pluggable" : "");
		}
		if (more)
			scnprintf(ranges + len, sizeof(ranges) - len, " and %u more", more);
		for_each_node(to)
			dlen += scnprintf(dist + dlen, sizeof(dist) - dlen, " %u",
					  numa_topology.distance[nid][to]);
		printk("numa: node %d: %llu MiB%s%s; distances%s\n", nid,
		       (unsigned long long)(total >> 20), total ? ":" : " (memoryless)", ranges, dist);
	}
}

void numa_init(const struct boot_info *bi)
{
	u8 rsdp[ACPI_RSDP_V2_LEN];
	unsigned int listed, merged;
	u64 missing;
	size_t len;
	int ret;

	one_node();
	if (!numa_enabled) {
		printk("numa: off (numa=off): one node\n");
		return;
	}
	if (!find_rsdp(bi, rsdp, &len))
		return;	/* arch_smp_init() says so */
	ret = acpi_parse_numa(rsdp, len, acpi_map, NULL, &srat);
	if (ret == ACPI_ERR_NO_TABLE) {
		printk("numa: no SRAT: one node\n");
		return;
	}
	if (ret) {
		pr_warn("numa: %s: ignoring SRAT and SLIT, one node\n", srat.error);
		return;
	}
	listed = srat.nr_mem;
	merged = merge_node_ranges(&srat);
	missing = ram_in_no_node(bi, &srat);
	if (missing >= (1ull << 20)) {
		pr_warn("numa: %llu KiB of RAM lie in no SRAT range: ignoring SRAT and SLIT, "
			"one node\n", (unsigned long long)(missing >> 10));
		return;
	}
	adopt(&srat);
	printk("numa: SRAT rev %u: %u nodes, %u memory ranges (%u hot-pluggable, %u disabled "
	       "entries), %u CPUs; %s\n", srat.srat_revision, srat.nr_nodes, listed,
	       srat.nr_mem_hotpluggable, srat.nr_mem_disabled, srat.nr_cpus,
	       srat.has_slit ? "distances from the SLIT" : "no SLIT: distances 10 / 20");
	if (merged)
		printk("numa: %u SRAT memory ranges overlap or touch another of their node: "
		       "merged into it\n", merged);
	if (missing)
		pr_warn("numa: %llu KiB of RAM lie in no node: not used\n",
			(unsigned long long)(missing >> 10));
	print_nodes();
}

static int apic_to_node(u32 apic_id)
{
	for (unsigned int i = 0; i < srat.nr_cpus; i++)
		if (srat.cpus[i].apic_id == apic_id)
			return srat.cpus[i].node;
	return -1;
}

void numa_cpus_init(void)
{
	unsigned int unlisted = 0;

	if (!numa_topology.from_firmware)
		return;
	for (unsigned int c = 0; c < nr_cpus; c++) {
		int nid = apic_to_node(cpu_ptr(c)->arch.apic_id);

		if (nid < 0 && !unlisted++)
			pr_warn("numa: CPU %u (APIC ID %u) is in no SRAT entry: node 0\n", c,
				cpu_ptr(c)->arch.apic_id);
		numa_cpu_node[c] = (u8)(nid < 0 ? 0 : nid);
	}
	if (unlisted > 1)
		pr_warn("numa: %u CPUs in no SRAT entry, all in node 0\n", unlisted);
	for_each_node(nid) {
		unsigned int n = 0, first = 0, last = 0;

		for (unsigned int c = 0; c < nr_cpus; c++)
			if (numa_cpu_node[c] == nid) {
				first = n++ ? first : c;
				last = c;
			}
		if (!n)
			printk("numa: node %d: no CPUs (CPU-less)\n", nid);
		else
			printk("numa: node %d: %u CPUs (%u-%u%s)\n", nid, n, first, last,
			       last - first + 1 == n ? "" : ", not contiguous");
	}
}
