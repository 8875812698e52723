/*
 * Boot-time setup of an allocator instance (a node) from memblock: direct map beyond 4 GiB,
 * sparse memory map, zones, watermarks, lowmem_reserve, hand-over of free memory to the
 * buddy lists; mm_init() builds the kernel's instance. Run-time allocation: page_alloc.c.
 */
#include "mm/internal.h"
#include "mm/memblock.h"
#include "mm/fail_page_alloc.h"
#include "mm/arch_mm.h"
#include "kernel/bootinfo.h"
#include "kernel/cmdline.h"
#include "kernel/math.h"
#include "kernel/string.h"

static const char *const zone_names[MAX_NR_ZONES] = { "DMA", "DMA32", "Normal" };
static const unsigned long zone_end_pfns[MAX_NR_ZONES] = { ZONE_DMA_END_PFN, ZONE_DMA32_END_PFN,
							   ~0ul };
/* Zone lock names for reports and lockstat: node 0's are the zones' names. */
#define NODE_ZONE_LOCK_NAMES(n) { "node" #n " DMA", "node" #n " DMA32", "node" #n " Normal" }
static const char *const zone_lock_names[MAX_NUMA_NODES][MAX_NR_ZONES] = {
	{ "DMA", "DMA32", "Normal" }, NODE_ZONE_LOCK_NAMES(1), NODE_ZONE_LOCK_NAMES(2),
	NODE_ZONE_LOCK_NAMES(3), NODE_ZONE_LOCK_NAMES(4), NODE_ZONE_LOCK_NAMES(5),
	NODE_ZONE_LOCK_NAMES(6), NODE_ZONE_LOCK_NAMES(7),
};
BUILD_BUG_ON(MAX_NUMA_NODES != 8);
/* lowmem_reserve ratios, as Linux's sysctl_lowmem_reserve_ratio defaults. */
static const unsigned long lowmem_reserve_ratio[MAX_NR_ZONES] = { 256, 256, 32 };

/* Zone boundaries must be MAX_ORDER aligned so that no buddy block straddles two zones. */
BUILD_BUG_ON(ZONE_DMA_END_PFN % MAX_ORDER_NR_PAGES || ZONE_DMA32_END_PFN % MAX_ORDER_NR_PAGES);
/* A section holds whole MAX_ORDER blocks, so buddies share a memory-map array. */
BUILD_BUG_ON(PFN_SECTION_SHIFT < MAX_ORDER);
BUILD_BUG_ON(sizeof(struct page) != 32);

/*
 * Give the machine's nodes consecutive free node_data[] slots, nid order (the kernel's,
 * registered first, get 0 .. nr_nodes - 1: page->nid is then the NUMA node id). Tests may
 * register at the same time: each slot is claimed atomically and a partial claim undone.
 */
static int machine_register(struct mm_machine *m)
{
	for (unsigned int first = 0; first + m->nr_nodes <= MAX_NUMNODES; first++) {
		unsigned int got = 0;

		while (got < m->nr_nodes) {
			struct pglist_data *expected = NULL;

			if (!__atomic_compare_exchange_n(&node_data[first + got], &expected,
							 m->node[got], false, __ATOMIC_ACQ_REL,
							 __ATOMIC_RELAXED))
				break;
			m->node[got]->node_id = (int)(first + got);
			got++;
		}
		if (got == m->nr_nodes)
			return (int)first;
		while (got--)
			smp_store_release(&node_data[first + got], NULL);
	}
	printk("mm: %s: no room for %u more nodes (MAX_NUMNODES %d)\n", m->name, m->nr_nodes,
	       MAX_NUMNODES);
	return -1;
}

void mm_machine_destroy(struct mm_machine *m)
{
	for (unsigned int nid = 0; nid < m->nr_nodes; nid++)
		smp_store_release(&node_data[m->node[nid]->node_id], NULL);
}

void pgdat_destroy(struct pglist_data *pgdat)
{
	mm_machine_destroy(pgdat->machine);
}

/*
 * RAM above the boot direct map gets mapped now (page tables from memblock); RAM that
 * cannot be mapped, or lies beyond what a struct page can number, is dropped with a message.
 */
static void node_map_memory(struct memblock *mb)
{
	u64 boot = arch_direct_map_boot_limit();
	u64 max = MIN(arch_direct_map_max(), 1ull << MAX_PHYSMEM_BITS);
	struct memblock_type mem;

	if (memblock_end_of_ram(mb) > max) {
		printk("mm: RAM above 0x%llx cannot be mapped: ignored\n", (unsigned long long)max);
		memblock_remove(mb, max, ~0ull - max);
	}
	mem = mb->memory;	/* a snapshot: removal below changes the table */
	for (unsigned int i = 0; i < mem.cnt; i++) {
		u64 s = MAX(mem.regions[i].base, boot);
		u64 e = mem.regions[i].base + mem.regions[i].size;

		if (s >= e || !arch_map_direct(mb, s, e - s))
			continue;
		printk("mm: cannot map [0x%llx-0x%llx) into the direct map: ignored\n",
		       (unsigned long long)s, (unsigned long long)e);
		memblock_remove(mb, s, e - s);
	}
}

/* The node of the first RAM in [base, end), or -1 if there is none. */
static int range_first_nid(const struct memblock *mb, u64 base, u64 end)
{
	for (unsigned int i = 0; i < mb->memory.cnt; i++) {
		const struct memblock_region *r = &mb->memory.regions[i];

		if (r->base < end && r->base + r->size > base)
			return r->nid;
	}
	return -1;
}

/*
 * A section's memory map belongs to one node, and so must its RAM: RAM of a second node in
 * a section (a node boundary not on a 128 MiB line) joins the node of the section's first
 * RAM, with a message. Then a MAX_ORDER block, which never crosses a section, never crosses
 * a node either, and buddies are always of one node.
 */
static void sections_of_one_node(struct memblock *mb)
{
	for (unsigned int i = 1; i < mb->memory.cnt; i++) {
		const struct memblock_region *prev = &mb->memory.regions[i - 1];
		const struct memblock_region *r = &mb->memory.regions[i];
		u64 sec_end = ALIGN_UP(r->base + 1, 1ull << SECTION_SIZE_BITS), end;

		if (r->nid == prev->nid ||
		    (r->base >> SECTION_SIZE_BITS) != ((prev->base + prev->size - 1) >>
						      SECTION_SIZE_BITS))
			continue;
		end = MIN(sec_end, r->base + r->size);
		printk("mm: [0x%llx-0x%llx) of node %d goes to node %d: one memory section "
		       "(128 MiB) holds memory of one node\n", (unsigned long long)r->base,
		       (unsigned long long)end, r->nid, prev->nid);
		memblock_set_node(mb, r->base, end - r->base, prev->nid);
		i = 0;	/* the table changed: look again from the start */
	}
}

/* The machine's section table, and for each section with RAM a memory map from the memory
 * of the node that owns it (the section's own node when it has room). */
static int machine_alloc_memmap(struct mm_machine *m, struct memblock *mb)
{
	unsigned long end_pfn = memblock_end_of_ram(mb) >> PAGE_SHIFT;
	u64 phys;

	m->nr_sections = DIV_ROUND_UP(end_pfn, PAGES_PER_SECTION);
	phys = memblock_alloc(mb, m->nr_sections * sizeof(struct mem_section), CACHELINE_SIZE);
	if (!phys)
		return -1;
	m->sections = arch_phys_to_virt(phys);
	for (unsigned long s = 0; s < m->nr_sections; s++) {
		u64 base = (u64)s << SECTION_SIZE_BITS, size = 1ull << SECTION_SIZE_BITS;
		int nid = range_first_nid(mb, base, base + size);

		if (nid < 0)
			continue;
		phys = memblock_alloc_node(mb, PAGES_PER_SECTION * sizeof(struct page), PAGE_SIZE,
					   m->nr_nodes > 1 ? nid : -1);
		if (!phys) {
			printk("mm: no memory for the memory map of [0x%llx-0x%llx): ignored\n",
			       (unsigned long long)base, (unsigned long long)(base + size));
			memblock_remove(mb, base, size);
			continue;
		}
		m->node[nid]->memmap_bytes += PAGES_PER_SECTION * sizeof(struct page);
		m->sections[s].nid = (u8)m->node[nid]->node_id;
		m->sections[s].memmap_enc = (uintptr_t)arch_phys_to_virt(phys) -
					    (s << PFN_SECTION_SHIFT) * sizeof(struct page);
	}
	for (unsigned int nid = 0; nid < m->nr_nodes; nid++) {
		m->node[nid]->sections = m->sections;
		m->node[nid]->nr_sections = m->nr_sections;
	}
	return 0;
}

/* RAM pages of node nid in pfns [lo, hi). */
static unsigned long memblock_pages_in(const struct memblock *mb, int nid, unsigned long lo,
				       unsigned long hi)
{
	unsigned long n = 0;

	for (unsigned int i = 0; i < mb->memory.cnt; i++) {
		if (mb->memory.regions[i].nid != nid)
			continue;
		unsigned long s = mb->memory.regions[i].base >> PAGE_SHIFT;
		unsigned long e = s + (mb->memory.regions[i].size >> PAGE_SHIFT);

		if (MIN(e, hi) > MAX(s, lo))
			n += MIN(e, hi) - MAX(s, lo);
	}
	return n;
}

static void zones_init(struct pglist_data *pgdat, const struct memblock *mb)
{
	for (int z = 0; z < MAX_NR_ZONES; z++) {
		struct zone *zone = &pgdat->node_zones[z];
		unsigned long lo = MAX(z ? zone_end_pfns[z - 1] : 0, pgdat->node_start_pfn);
		unsigned long hi = MIN(zone_end_pfns[z], pgdat->node_end_pfn);

		zone->node = pgdat;
		zone->name = zone_names[z];
		zone->idx = (enum zone_type)z;
		zone->zone_start_pfn = lo;
		zone->spanned_pages = hi > lo ? hi - lo : 0;
		zone->present_pages = hi > lo ? memblock_pages_in(mb, pgdat->nid, lo, hi) : 0;
		spin_lock_init(&zone->lock, zone_lock_names[pgdat->nid][z],
			       SPIN_IRQSAFE | SPIN_HOLDTIME);
		for (unsigned int o = 0; o <= MAX_ORDER; o++)
			for (int mt = 0; mt < MIGRATE_TYPES; mt++)
				INIT_LIST_HEAD(&zone->free_area[o].free_list[mt]);
	}
}

static enum zone_type pfn_zone_idx(unsigned long pfn)
{
	int z = 0;

	while (pfn >= zone_end_pfns[z])
		z++;
	return (enum zone_type)z;
}

/* Every struct page of the node's sections starts reserved, holding one reference; every
 * pageblock MOVABLE. */
static void memmap_init(struct pglist_data *pgdat)
{
	for (unsigned long s = 0; s < pgdat->nr_sections; s++) {
		unsigned long pfn = s << PFN_SECTION_SHIFT;
		struct page *map;

		if (!pfn_in_node(pgdat, pfn))
			continue;
		map = pfn_to_page(pgdat, pfn);
		for (unsigned long i = 0; i < PAGES_PER_SECTION; i++) {
			map[i] = (struct page){ .refcount = 1, .pfn = (u32)(pfn + i),
						.flags = PG_reserved, .nid = (u8)pgdat->node_id,
						.zone = (u8)pfn_zone_idx(pfn + i) };
			INIT_LIST_HEAD(&map[i].lru);
		}
		memset(pgdat->sections[s].pageblock_mt, MIGRATE_MOVABLE, PAGEBLOCKS_PER_SECTION);
	}
}

/* Hand pfns [spfn, epfn) to the buddy lists in the largest naturally aligned blocks. */
static void free_range(struct pglist_data *pgdat, unsigned long spfn, unsigned long epfn)
{
	while (spfn < epfn) {
		unsigned int order = spfn ? MIN((unsigned int)__builtin_ctzl(spfn), MAX_ORDER)
					  : MAX_ORDER;
		struct page *page;
		struct zone *zone;
		unsigned long flags;

		while ((1ul << order) > epfn - spfn)
			order--;
		page = pfn_to_page(pgdat, spfn);
		zone = page_zone(page);
		for (unsigned long i = 0; i < (1ul << order); i++) {
			page[i].flags = 0;
			page[i].refcount = 0;
		}
		zone->managed_pages += 1ul << order;
		flags = spin_lock_irqsave(&zone->lock);
		__free_one_page(page, spfn, zone, order, MIGRATE_MOVABLE);
		spin_unlock_irqrestore(&zone->lock, flags);
		spfn += 1ul << order;
	}
}

/*
 * Watermarks, as Linux v6.4: min_free_kbytes = sqrt(16 * lowmem kB), clamped to
 * [128, 262144] (1 GiB of RAM gives 4096 kB), over the RAM of every node of the machine.
 * Each zone's min is its share of that in proportion to its managed pages; low = min + delta
 * and high = min + 2 delta, with delta = max(min / 4, managed * 10 / 10000)
 * (watermark_scale_factor 10).
 */
void setup_per_zone_wmarks(struct pglist_data *pgdat)
{
	unsigned long lowmem = machine_managed_pages(pgdat->machine), kbytes, pages_min;

	kbytes = lowmem * (PAGE_SIZE / 1024);
	pgdat->min_free_kbytes = CLAMP(int_sqrt(kbytes * 16), 128ul, 262144ul);
	pages_min = pgdat->min_free_kbytes >> (PAGE_SHIFT - 10);
	for (int z = 0; z < MAX_NR_ZONES; z++) {
		struct zone *zone = &pgdat->node_zones[z];
		unsigned long min = lowmem ? pages_min * zone->managed_pages / lowmem : 0;
		unsigned long delta = MAX(min / 4, zone->managed_pages * 10 / 10000);

		zone->_watermark[WMARK_MIN] = min;
		zone->_watermark[WMARK_LOW] = min + delta;
		zone->_watermark[WMARK_HIGH] = min + 2 * delta;
	}
}

/*
 * lowmem_reserve[j] of zone i (j > i) = (managed pages of zones i+1..j) / ratio[i]: an
 * allocation that could have been served by zone j must leave that many pages of zone i to
 * callers that can use nothing higher. Zero for j <= i and for empty zones.
 */
void setup_lowmem_reserve(struct pglist_data *pgdat)
{
	for (int i = 0; i < MAX_NR_ZONES; i++) {
		struct zone *zone = &pgdat->node_zones[i];
		unsigned long upper = 0;

		for (int j = 0; j < MAX_NR_ZONES; j++) {
			if (j > i)
				upper += pgdat->node_zones[j].managed_pages;
			zone->lowmem_reserve[j] = (j > i && zone->managed_pages) ?
						  upper / lowmem_reserve_ratio[i] : 0;
		}
	}
}

/* The node's span, from its RAM in mb (0 .. 0 for a memoryless node). */
static void node_span(struct pglist_data *pgdat, const struct memblock *mb)
{
	for (unsigned int i = 0; i < mb->memory.cnt; i++) {
		const struct memblock_region *r = &mb->memory.regions[i];

		if (r->nid != pgdat->nid)
			continue;
		if (!pgdat->node_end_pfn)
			pgdat->node_start_pfn = r->base >> PAGE_SHIFT;
		pgdat->node_end_pfn = (r->base + r->size) >> PAGE_SHIFT;
	}
}

/* Zones, memory map, per-CPU lists and free pages of one node. */
static int node_init(struct pglist_data *pgdat, struct memblock *mb)
{
	u64 cursor = 0, s, e;

	node_span(pgdat, mb);
	zones_init(pgdat, mb);
	if (pcp_node_init(pgdat, mb))
		return -1;
	memmap_init(pgdat);
	while (memblock_next_free(mb, &cursor, &s, &e))
		if (memblock_nid(mb, s) == pgdat->nid)
			free_range(pgdat, s >> PAGE_SHIFT, e >> PAGE_SHIFT);
	return 0;
}

static void machine_setup(struct mm_machine *m, struct pglist_data *const *nodes,
			  unsigned int nr_nodes, const char *name, unsigned int nr_cpus,
			  const u8 (*distance)[MAX_NUMA_NODES], const u8 *cpu_node)
{
	for (unsigned int a = 0; a < nr_nodes; a++)
		memset(nodes[a], 0, sizeof(*nodes[a]));	/* first: m may be in nodes[0] */
	*m = (struct mm_machine){ .nr_nodes = nr_nodes, .cpu_node = cpu_node, .nr_cpus = nr_cpus,
				  .name = name };
	for (unsigned int a = 0; a < nr_nodes; a++) {
		struct pglist_data *pgdat = nodes[a];

		m->node[a] = pgdat;
		for (unsigned int b = 0; b < nr_nodes; b++)
			m->distance[a][b] = distance ? distance[a][b] :
					    a == b ? LOCAL_DISTANCE : REMOTE_DISTANCE;
		if (nr_nodes > 1)
			snprintf(pgdat->name, sizeof(pgdat->name), "%s%u", name, a);
		else
			snprintf(pgdat->name, sizeof(pgdat->name), "%s", name);
		pgdat->nid = (int)a;
		pgdat->machine = m;
		pgdat->nr_cpus = nr_cpus;
		pgdat->poison = CONFIG_DEBUG_VM;
	}
}

int mm_machine_init(struct mm_machine *m, struct pglist_data *const *nodes,
		    unsigned int nr_nodes, struct memblock *mb, const char *name,
		    unsigned int nr_cpus, const u8 (*distance)[MAX_NUMA_NODES], const u8 *cpu_node)
{
	VM_BUG_ON(!nr_nodes || nr_nodes > MAX_NUMA_NODES);
	machine_setup(m, nodes, nr_nodes, name, nr_cpus, distance, cpu_node);
	node_map_memory(mb);
	sections_of_one_node(mb);
	if (!mb->memory.cnt || machine_register(m) < 0) {
		printk("mm: %s: no usable memory\n", name);
		return -1;
	}
	if (machine_alloc_memmap(m, mb) || !mb->memory.cnt)
		goto no_memmap;
	for (unsigned int nid = 0; nid < nr_nodes; nid++)
		if (node_init(m->node[nid], mb))
			goto no_memmap;
	for (unsigned int nid = 0; nid < nr_nodes; nid++) {
		setup_per_zone_wmarks(m->node[nid]);
		setup_lowmem_reserve(m->node[nid]);
	}
	build_all_zonelists(m);
	for (unsigned int nid = 0; nid < nr_nodes; nid++)
		zone_pcp_update(m->node[nid], 1);
	return 0;
no_memmap:
	printk("mm: %s: no memory for the memory map\n", name);
	mm_machine_destroy(m);
	return -1;
}

int pgdat_init(struct pglist_data *pgdat, struct memblock *mb, const char *name,
	       unsigned int nr_cpus)
{
	for (unsigned int i = 0; i < mb->memory.cnt; i++)
		mb->memory.regions[i].nid = 0;	/* one node: all of it is node 0's */
	return mm_machine_init(&pgdat->own_machine, &pgdat, 1, mb, name, nr_cpus, NULL, NULL);
}

/* ---- the kernel's machine ---- */

static struct memblock boot_memblock;
static struct pglist_data kernel_nodes[MAX_NUMA_NODES];
static struct mm_machine kernel_machine;
static bool mm_dump;
CMDLINE_BOOL("mm.dump", mm_dump, "print memblock, buddyinfo, zoneinfo and pagetypeinfo at boot");
static bool mm_poison = CONFIG_DEBUG_VM;
CMDLINE_BOOL("mm.poison", mm_poison, "fill freed pages with 0xaa and check them on allocation");

struct mm_machine *mm_machine(void)
{
	return &kernel_machine;
}

struct pglist_data *mm_node(void)
{
	return NODE_DATA(numa_node_id())->mem_node;
}

/* Never hand out: the low 1 MiB (BIOS data, AP trampoline), the kernel, the boot info. */
static void reserve_boot_ranges(struct memblock *mb, const struct boot_info *bi)
{
	memblock_reserve(mb, 0, 1ull << 20);
	if (bi->kernel_phys_end > bi->kernel_phys_start)
		memblock_reserve(mb, bi->kernel_phys_start,
				 bi->kernel_phys_end - bi->kernel_phys_start);
	if (bi->mbi_size)
		memblock_reserve(mb, bi->mbi_phys, bi->mbi_size);
	if (bi->rsdp_phys)
		memblock_reserve(mb, bi->rsdp_phys, 36);
}

/* Each RAM region gets the node kernel/numa.c found for it; RAM in no node (numa_init()
 * said how much) is not used. */
static void assign_nodes(struct memblock *mb)
{
	const struct numa_topology *t = &numa_topology;

	memblock_set_node(mb, 0, ~0ull, MAX_NUMA_NODES);
	for (unsigned int i = 0; i < t->nr_memblks; i++)
		memblock_set_node(mb, t->memblks[i].base, t->memblks[i].size, t->memblks[i].nid);
	for (unsigned int i = 0; i < mb->memory.cnt; i++) {
		const struct memblock_region *r = &mb->memory.regions[i];

		if (r->nid == MAX_NUMA_NODES && !memblock_remove(mb, r->base, r->size))
			i--;
	}
}

/* One line per node: its memory, free pages, memory map and CPUs. */
static void print_nodes(const struct mm_machine *m)
{
	for (unsigned int nid = 0; nid < m->nr_nodes; nid++) {
		struct pglist_data *pgdat = m->node[nid];

		printk("mm: %s: %lu MiB managed, %lu pages free, memory map %lu KiB%s\n",
		       pgdat->name, node_managed_pages(pgdat) >> (20 - PAGE_SHIFT),
		       node_free_pages(pgdat), pgdat->memmap_bytes >> 10,
		       node_managed_pages(pgdat) ? "" : " (memoryless: allocates from the nearest "
		       "node with memory)");
	}
}

int mm_init(const struct boot_info *bi)
{
	struct pglist_data *nodes[MAX_NUMA_NODES];
	struct mm_machine *m = &kernel_machine;
	int ret;

	memblock_init(&boot_memblock, arch_direct_map_boot_limit());
	memblock_add_mmap(&boot_memblock, bi->mmap, bi->nr_mmap);
	reserve_boot_ranges(&boot_memblock, bi);
	assign_nodes(&boot_memblock);
	if (mm_dump)
		memblock_dump(&boot_memblock);
	for (unsigned int nid = 0; nid < nr_node_ids(); nid++)
		nodes[nid] = &kernel_nodes[nid];
	ret = mm_machine_init(m, nodes, nr_node_ids(), &boot_memblock, "node", MM_MAX_CPUS,
			      (const u8 (*)[MAX_NUMA_NODES])numa_topology.distance,
			      numa_cpu_node);
	if (ret)
		return ret;
	if (nr_node_ids() == 1)
		snprintf(kernel_nodes[0].name, sizeof(kernel_nodes[0].name), "node0");
	for (unsigned int nid = 0; nid < m->nr_nodes; nid++) {
		BUG_ON(m->node[nid]->node_id != (int)nid);	/* NODE_DATA(nid) */
		m->node[nid]->poison = mm_poison;
		for (int z = 0; z < MAX_NR_ZONES; z++)
			lockstat_register(&m->node[nid]->node_zones[z].lock);
	}
	printk("mm: %lu MiB managed, %lu pages free, memory map %lu KiB (%zu bytes per page)\n",
	       machine_managed_pages(m) >> (20 - PAGE_SHIFT), machine_free_pages(m),
	       machine_memmap_bytes(m) >> 10, sizeof(struct page));
	if (m->nr_nodes > 1)
		print_nodes(m);
	fail_page_alloc_boot();
	return 0;
}

void mm_boot_dump(void)
{
	if (!mm_dump)
		return;
	for (unsigned int nid = 0; nid < kernel_machine.nr_nodes; nid++) {
		show_buddyinfo(kernel_machine.node[nid]);
		show_zoneinfo(kernel_machine.node[nid]);
		show_pagetypeinfo(kernel_machine.node[nid]);
	}
	show_numastat(&kernel_machine);
}
