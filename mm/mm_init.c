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
#include "kernel/string.h"

static const char *const zone_names[MAX_NR_ZONES] = { "DMA", "DMA32", "Normal" };
static const unsigned long zone_end_pfns[MAX_NR_ZONES] = { ZONE_DMA_END_PFN, ZONE_DMA32_END_PFN,
							   ~0ul };
/* lowmem_reserve ratios, as Linux's sysctl_lowmem_reserve_ratio defaults. */
static const unsigned long lowmem_reserve_ratio[MAX_NR_ZONES] = { 256, 256, 32 };

/* Zone boundaries must be MAX_ORDER aligned so that no buddy block straddles two zones. */
BUILD_BUG_ON(ZONE_DMA_END_PFN % MAX_ORDER_NR_PAGES || ZONE_DMA32_END_PFN % MAX_ORDER_NR_PAGES);
/* A section holds whole MAX_ORDER blocks, so buddies share a memory-map array. */
BUILD_BUG_ON(PFN_SECTION_SHIFT < MAX_ORDER);
BUILD_BUG_ON(sizeof(struct page) != 32);

/* Floor of the square root, by bits (no division, no floating point). */
unsigned long int_sqrt(unsigned long x)
{
	unsigned long r = 0, bit = 1ul << (sizeof(long) * 8 - 2);

	while (bit > x)
		bit >>= 2;
	while (bit) {
		if (x >= r + bit) {
			x -= r + bit;
			r = (r >> 1) + bit;
		} else {
			r >>= 1;
		}
		bit >>= 2;
	}
	return r;
}

static int node_register(struct pglist_data *pgdat)
{
	for (int i = 0; i < MAX_NUMNODES; i++) {
		struct pglist_data *expected = NULL;

		if (__atomic_compare_exchange_n(&node_data[i], &expected, pgdat, false,
						__ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
			return i;
	}
	printk("mm: more than %d allocator instances\n", MAX_NUMNODES);
	return -1;
}

void pgdat_destroy(struct pglist_data *pgdat)
{
	__atomic_store_n(&node_data[pgdat->node_id], NULL, __ATOMIC_RELEASE);
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

static bool range_has_ram(const struct memblock *mb, u64 base, u64 end)
{
	for (unsigned int i = 0; i < mb->memory.cnt; i++) {
		const struct memblock_region *r = &mb->memory.regions[i];

		if (r->base < end && r->base + r->size > base)
			return true;
	}
	return false;
}

/* The section table, and a memory map for each section that holds RAM. */
static int node_alloc_memmap(struct pglist_data *pgdat, struct memblock *mb)
{
	unsigned long end_pfn = memblock_end_of_ram(mb) >> PAGE_SHIFT;
	u64 phys;

	pgdat->nr_sections = DIV_ROUND_UP(end_pfn, PAGES_PER_SECTION);
	phys = memblock_alloc(mb, pgdat->nr_sections * sizeof(struct mem_section), CACHELINE_SIZE);
	if (!phys)
		return -1;
	pgdat->sections = arch_phys_to_virt(phys);
	for (unsigned long s = 0; s < pgdat->nr_sections; s++) {
		u64 base = (u64)s << SECTION_SIZE_BITS, size = 1ull << SECTION_SIZE_BITS;

		if (!range_has_ram(mb, base, base + size))
			continue;
		phys = memblock_alloc(mb, PAGES_PER_SECTION * sizeof(struct page), PAGE_SIZE);
		if (!phys) {
			printk("mm: no memory for the memory map of [0x%llx-0x%llx): ignored\n",
			       (unsigned long long)base, (unsigned long long)(base + size));
			memblock_remove(mb, base, size);
			continue;
		}
		pgdat->memmap_bytes += PAGES_PER_SECTION * sizeof(struct page);
		pgdat->sections[s].memmap_enc = (uintptr_t)arch_phys_to_virt(phys) -
						 (s << PFN_SECTION_SHIFT) * sizeof(struct page);
	}
	return 0;
}

static unsigned long memblock_pages_in(const struct memblock *mb, unsigned long lo,
				       unsigned long hi)
{
	unsigned long n = 0;

	for (unsigned int i = 0; i < mb->memory.cnt; i++) {
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
		zone->present_pages = hi > lo ? memblock_pages_in(mb, lo, hi) : 0;
		spin_lock_init(&zone->lock, zone_names[z], SPIN_IRQSAFE | SPIN_HOLDTIME);
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

/* Every struct page starts reserved, holding one reference; every pageblock MOVABLE. */
static void memmap_init(struct pglist_data *pgdat)
{
	for (unsigned long s = 0; s < pgdat->nr_sections; s++) {
		unsigned long pfn = s << PFN_SECTION_SHIFT;
		struct page *map;

		if (!pgdat->sections[s].memmap_enc)
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
 * [128, 262144] (1 GiB of RAM gives 4096 kB). Each zone's min is its share of that in
 * proportion to its managed pages; low = min + delta and high = min + 2 delta, with
 * delta = max(min / 4, managed * 10 / 10000) (watermark_scale_factor 10).
 */
void setup_per_zone_wmarks(struct pglist_data *pgdat)
{
	unsigned long lowmem = node_managed_pages(pgdat), kbytes, pages_min;

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

int pgdat_init(struct pglist_data *pgdat, struct memblock *mb, const char *name,
	       unsigned int nr_cpus)
{
	u64 cursor = 0, s, e;

	memset(pgdat, 0, sizeof(*pgdat));
	pgdat->name = name;
	pgdat->nr_cpus = nr_cpus;
	pgdat->poison = CONFIG_DEBUG_VM;
	node_map_memory(mb);
	if (!mb->memory.cnt || (pgdat->node_id = node_register(pgdat)) < 0) {
		printk("mm: %s: no usable memory\n", name);
		return -1;
	}
	if (node_alloc_memmap(pgdat, mb) || pcp_node_init(pgdat, mb) || !mb->memory.cnt) {
		printk("mm: %s: no memory for the memory map\n", name);
		pgdat_destroy(pgdat);
		return -1;
	}
	pgdat->node_start_pfn = mb->memory.regions[0].base >> PAGE_SHIFT;
	pgdat->node_end_pfn = memblock_end_of_ram(mb) >> PAGE_SHIFT;
	zones_init(pgdat, mb);
	memmap_init(pgdat);
	while (memblock_next_free(mb, &cursor, &s, &e))
		free_range(pgdat, s >> PAGE_SHIFT, e >> PAGE_SHIFT);
	setup_per_zone_wmarks(pgdat);
	setup_lowmem_reserve(pgdat);
	zone_pcp_update(pgdat, 1);
	return 0;
}

/* ---- the kernel's instance ---- */

static struct memblock boot_memblock;
static struct pglist_data node0;
static bool mm_dump;
CMDLINE_BOOL("mm.dump", mm_dump, "print memblock, buddyinfo, zoneinfo and pagetypeinfo at boot");
static bool mm_poison = CONFIG_DEBUG_VM;
CMDLINE_BOOL("mm.poison", mm_poison, "fill freed pages with 0xaa and check them on allocation");

struct pglist_data *mm_node(void)
{
	return &node0;
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

int mm_init(const struct boot_info *bi)
{
	struct pglist_data *pgdat = &node0;
	int ret;

	memblock_init(&boot_memblock, arch_direct_map_boot_limit());
	memblock_add_mmap(&boot_memblock, bi->mmap, bi->nr_mmap);
	reserve_boot_ranges(&boot_memblock, bi);
	if (mm_dump)
		memblock_dump(&boot_memblock);
	ret = pgdat_init(pgdat, &boot_memblock, "node0", MM_MAX_CPUS);
	if (ret)
		return ret;
	pgdat->poison = mm_poison;
	for (int z = 0; z < MAX_NR_ZONES; z++)
		lockstat_register(&pgdat->node_zones[z].lock);
	printk("mm: %lu MiB managed, %lu pages free, memory map %lu KiB (%zu bytes per page)\n",
	       node_managed_pages(pgdat) >> (20 - PAGE_SHIFT), node_free_pages(pgdat),
	       pgdat->memmap_bytes >> 10, sizeof(struct page));
	fail_page_alloc_boot();
	return 0;
}

void mm_boot_dump(void)
{
	if (!mm_dump)
		return;
	show_buddyinfo(&node0);
	show_zoneinfo(&node0);
	show_pagetypeinfo(&node0);
}
