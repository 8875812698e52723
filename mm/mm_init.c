/*
 * Boot-time setup of a machine's nodes from memblock: direct map beyond 4 GiB, sparse memory
 * map, zones, watermarks, lowmem_reserve, hand-over of free memory to the buddy lists, most
 * of it deferred until every CPU can help; mm_init() and mm_deferred_init() build the
 * kernel's machine. Run-time allocation: page_alloc.c.
 */
#include "mm/internal.h"
#include "mm/mm_test.h"
#include "mm/memblock.h"
#include "mm/fail_page_alloc.h"
#include "mm/arch_mm.h"
#include "kernel/bootinfo.h"
#include "kernel/cmdline.h"
#include "kernel/math.h"
#include "kernel/string.h"
#include "kernel/smp.h"
#include "kernel/timer.h"

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
			m->node[got]->nid = (int)(first + got);
			got++;
		}
		if (got == m->nr_nodes) {
			m->first_nid = first;
			return (int)first;
		}
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
		smp_store_release(&node_data[m->node[nid]->nid], NULL);
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
 * a node either, and buddies are always of one node. Moving the head of a region that runs
 * on past the section splits it, which needs a slot in memblock's table; with the table
 * full that RAM cannot change node and is dropped instead, with a message (as Linux gives up
 * a node when memblock_set_node() fails), so every pass ends.
 */
static void sections_of_one_node(struct memblock *mb)
{
	for (unsigned int i = 1; i < mb->memory.cnt; i++) {
		const struct memblock_region *prev = &mb->memory.regions[i - 1];
		const struct memblock_region *r = &mb->memory.regions[i];
		u64 sec_end = ALIGN_UP(r->base + 1, 1ull << SECTION_SIZE_BITS), base = r->base, end;
		int from = r->nid, to = prev->nid;

		if (r->nid == prev->nid ||
		    (r->base >> SECTION_SIZE_BITS) != ((prev->base + prev->size - 1) >>
						      SECTION_SIZE_BITS))
			continue;
		end = MIN(sec_end, r->base + r->size);
		printk("mm: [0x%llx-0x%llx) of node %d goes to node %d: one memory section "
		       "(128 MiB) holds memory of one node\n", (unsigned long long)base,
		       (unsigned long long)end, from, to);
		if (memblock_set_node(mb, base, end - base, to)) {
			printk("mm: [0x%llx-0x%llx) cannot change node (memblock table full): "
			       "ignored\n", (unsigned long long)base, (unsigned long long)end);
			memblock_remove(mb, base, end - base);
		}
		i = 0;	/* the table changed: look again from the start */
	}
}

/* The machine's section table and pageblock types, and for each section with RAM a memory
 * map from the memory of the node that owns it (the section's own node when it has room);
 * every pageblock starts MOVABLE. */
static int machine_alloc_memmap(struct mm_machine *m, struct memblock *mb)
{
	unsigned long end_pfn = memblock_end_of_ram(mb) >> PAGE_SHIFT;
	u64 phys;

	m->nr_sections = DIV_ROUND_UP(end_pfn, PAGES_PER_SECTION);
	phys = memblock_alloc(mb, m->nr_sections * (sizeof(struct mem_section) +
						    PAGEBLOCKS_PER_SECTION), CACHELINE_SIZE);
	if (!phys)
		return -1;
	m->sections = arch_phys_to_virt(phys);
	m->pageblock_mt = (u8 *)(m->sections + m->nr_sections);	/* right after, same block */
	for (unsigned long s = 0; s < m->nr_sections; s++) {
		u64 base = (u64)s << SECTION_SIZE_BITS, size = 1ull << SECTION_SIZE_BITS;
		int nid = range_first_nid(mb, base, base + size);

		if (nid < 0)
			continue;
		/* Not zeroed: every struct page is written once, by deferred_init_chunk(). */
		phys = memblock_alloc_node_raw(mb, PAGES_PER_SECTION * sizeof(struct page),
					       PAGE_SIZE, m->nr_nodes > 1 ? nid : -1);
		if (!phys) {
			printk("mm: no memory for the memory map of [0x%llx-0x%llx): ignored\n",
			       (unsigned long long)base, (unsigned long long)(base + size));
			memblock_remove(mb, base, size);
			continue;
		}
		m->node[nid]->memmap_bytes += PAGES_PER_SECTION * sizeof(struct page);
		m->sections[s].nid = (u8)m->node[nid]->nid;
		memset(m->pageblock_mt + s * PAGEBLOCKS_PER_SECTION, MIGRATE_MOVABLE,
		       PAGEBLOCKS_PER_SECTION);
		m->sections[s].memmap_enc = (uintptr_t)arch_phys_to_virt(phys) -
					    (s << PFN_SECTION_SHIFT) * sizeof(struct page);
	}
	for (unsigned int nid = 0; nid < m->nr_nodes; nid++) {
		m->node[nid]->sections = m->sections;
		m->node[nid]->pageblock_mt = m->pageblock_mt;
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

/* Free (RAM, not reserved) pages of node pgdat in pfns [lo, hi): of its sections only. */
static unsigned long node_free_pages_in(const struct pglist_data *pgdat, unsigned long lo,
					unsigned long hi)
{
	unsigned long n = 0;

	for (unsigned long sec = ALIGN_DOWN(lo, PAGES_PER_SECTION); sec < hi;
	     sec += PAGES_PER_SECTION) {
		u64 cursor = (u64)MAX(sec, lo) << PAGE_SHIFT, s, e;
		unsigned long end = MIN(sec + PAGES_PER_SECTION, hi);

		if (!pfn_in_node(pgdat, sec))
			continue;
		while (memblock_next_free(pgdat->mb, &cursor, &s, &e) && (s >> PAGE_SHIFT) < end)
			n += MIN(e >> PAGE_SHIFT, end) - (s >> PAGE_SHIFT);
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
		zone->present_pages = hi > lo ? memblock_pages_in(mb, (int)node_index(pgdat), lo,
								  hi) : 0;
		spin_lock_init(&zone->lock, zone_lock_names[node_index(pgdat)][z],
			       SPIN_IRQSAFE | SPIN_HOLDTIME);
		for (unsigned int o = 0; o <= MAX_ORDER; o++)
			for (int mt = 0; mt < MIGRATE_TYPES; mt++)
				INIT_LIST_HEAD(&zone->free_area[o].free_list[mt]);
	}
}

/*
 * Each zone's deferred range is its share of the node's span, widened at the node's two ends
 * to whole sections, because every struct page of a present section must be written once
 * (the pfns around the RAM become reserved pages, and a buddy lookup may read them); the
 * sections in it that belong to another node (nodes may interleave) are skipped when
 * claimed. A section holds memory of one node only (sections_of_one_node()). Called once
 * memblock has made its last allocation: deferred_free must stay exact.
 */
static void zones_init_deferred(struct pglist_data *pgdat)
{
	unsigned long node_lo = ALIGN_DOWN(pgdat->node_start_pfn, PAGES_PER_SECTION);
	unsigned long node_hi = ALIGN_UP(pgdat->node_end_pfn, PAGES_PER_SECTION);

	for (int z = 0; z < MAX_NR_ZONES; z++) {
		struct zone *zone = &pgdat->node_zones[z];
		unsigned long dlo = MAX(z ? zone_end_pfns[z - 1] : 0, node_lo);
		unsigned long dhi = MIN(zone_end_pfns[z], node_hi);

		zone->deferred_pfn = dlo;
		zone->deferred_end_pfn = MAX(dlo, dhi);
		zone->deferred_free = node_free_pages_in(pgdat, dlo, zone->deferred_end_pfn);
	}
}

/* ---- the memory map, chunk by chunk ---- */

/*
 * Deferred memory-map init, after Linux's CONFIG_DEFERRED_STRUCT_PAGE_INIT. Writing a
 * struct page for every frame (512 Ki of them for 2 GiB) is most of a node's setup, and one
 * CPU would do it all before the others are even started. So mm_machine_init_deferred()
 * writes only the first chunks of each zone of each node; the rest is claimed chunk by
 * chunk, from a cursor per zone (zone->deferred_pfn, under zone->lock), by
 * deferred_init_memmap() on every CPU once they are up, and by deferred_grow_zone() when an
 * allocation comes first.
 *
 * A chunk is one MAX_ORDER block (4 MiB of RAM, 32 KiB of memory map), aligned. Its
 * claimer writes every struct page of it first, without the lock (the chunk is its own),
 * and only then, in one hold of zone->lock, puts its free ranges on the buddy lists. That
 * order and the alignment are the memory map's lifetime rule. The allocator reads a struct
 * page only by starting from a block on its lists: the buddy lookups of a merge and its
 * merge-likely check (__free_one_page()), the pageblock walk of a steal
 * (move_freepages_block()), the split of an allocation (expand()). Each stays inside the
 * MAX_ORDER block it starts from: the buddy of a block below MAX_ORDER is in the same
 * MAX_ORDER block (find_buddy_page_pfn()), and so is a pageblock (pageblock_order <=
 * MAX_ORDER). So once any page of a chunk is on the lists, every struct page those can
 * reach from it is written, and nothing, on this CPU, another, or in an interrupt, ever
 * reads a struct page of a chunk still being written: not a merge of the chunk's own
 * first free range, not a steal of the pageblock just freed, not a merge or a steal in a
 * neighbouring chunk. It is the ordering Linux's deferred_init_maxorder() relies on: it
 * initialises the struct pages of a MAX_ORDER block in one loop and frees them in a second,
 * "because while we are freeing pages we can access pages that are ahead". The cursor hands
 * every chunk out once: no struct page is written twice, none is skipped.
 */
#define DEFERRED_CHUNK_PAGES MAX_ORDER_NR_PAGES
/* mm_machine_init_deferred() initialises each zone until it has this many free pages (or all). */
#define DEFERRED_EARLY_PAGES MAX_ORDER_NR_PAGES
BUILD_BUG_ON(DEFERRED_CHUNK_PAGES % MAX_ORDER_NR_PAGES || PAGES_PER_SECTION % DEFERRED_CHUNK_PAGES);
BUILD_BUG_ON(pageblock_order > MAX_ORDER);	/* a steal's pageblock walk stays in one chunk */

/* Write the struct pages of [spfn, epfn) (one section) once: free or reserved (one ref). */
static void memmap_init_range(struct zone *zone, unsigned long spfn, unsigned long epfn,
			      bool free)
{
	const u8 nid = (u8)zone->node->nid, zi = (u8)zone->idx;
	struct page *page = pfn_to_page(zone->node, spfn);

	for (unsigned long pfn = spfn; pfn < epfn; pfn++, page++)
		*page = (struct page){ .lru = { &page->lru, &page->lru }, .refcount = !free,
				       .pfn = (u32)pfn, .flags = free ? 0 : PG_reserved,
				       .nid = nid, .zone = zi };
}

/* Hand free pfns [spfn, epfn) to the buddy lists in the largest naturally aligned blocks. */
static void __free_range(struct zone *zone, unsigned long spfn, unsigned long epfn)
{
	assert_spin_locked(&zone->lock);
	VM_BUG_ON(epfn - spfn > zone->deferred_free);
	WRITE_ONCE(zone->managed_pages, zone->managed_pages + (epfn - spfn));
	WRITE_ONCE(zone->deferred_free, zone->deferred_free - (epfn - spfn));
	while (spfn < epfn) {
		unsigned int order = spfn ? MIN((unsigned int)__builtin_ctzl(spfn), MAX_ORDER)
					  : MAX_ORDER;

		while ((1ul << order) > epfn - spfn)
			order--;
		__free_one_page(pfn_to_page(zone->node, spfn), spfn, zone, order, MIGRATE_MOVABLE);
		spfn += 1ul << order;
	}
}

/* The next chunk of zone not yet claimed, skipping sections without a memory map and those
 * of other nodes. */
static bool __deferred_claim_chunk(struct zone *zone, unsigned long *spfn, unsigned long *epfn)
{
	unsigned long pfn = zone->deferred_pfn;

	assert_spin_locked(&zone->lock);
	while (pfn < zone->deferred_end_pfn && !pfn_in_node(zone->node, pfn))
		pfn = ALIGN_UP(pfn + 1, PAGES_PER_SECTION);
	*spfn = pfn;
	*epfn = MIN(ALIGN_DOWN(pfn, DEFERRED_CHUNK_PAGES) + DEFERRED_CHUNK_PAGES,
		    zone->deferred_end_pfn);
	WRITE_ONCE(zone->deferred_pfn, MAX(pfn, *epfn));
	if (pfn < *epfn)
		zone->deferred_busy++;
	return pfn < *epfn;
}

void (*deferred_init_race_hook)(struct zone *zone, unsigned long spfn);

static inline void deferred_race_point(struct zone *zone, unsigned long spfn)
{
	void (*hook)(struct zone *, unsigned long);

	if (!CONFIG_DEBUG_VM)
		return;
	hook = smp_load_acquire(&deferred_init_race_hook);
	if (unlikely(hook))
		hook(zone, spfn);
}

/* The chunk's next free range at or after *cursor (a physical address), clipped to epfn;
 * false when it has none left. */
static bool chunk_next_free(struct zone *zone, u64 *cursor, unsigned long epfn,
			    unsigned long *fs, unsigned long *fe)
{
	u64 s, e;

	if (!memblock_next_free(zone->node->mb, cursor, &s, &e) || (s >> PAGE_SHIFT) >= epfn)
		return false;
	*fs = s >> PAGE_SHIFT;
	*fe = MIN(e >> PAGE_SHIFT, epfn);
	return true;
}

/* Write every struct page of the chunk [spfn, epfn): its free ranges free, the rest (holes,
 * reservations) reserved. Returns the free pages. */
static unsigned long memmap_init_chunk(struct zone *zone, unsigned long spfn, unsigned long epfn)
{
	u64 cursor = (u64)spfn << PAGE_SHIFT;
	unsigned long pfn = spfn, fs, fe, nr_free = 0;

	while (chunk_next_free(zone, &cursor, epfn, &fs, &fe)) {
		memmap_init_range(zone, pfn, fs, false);
		memmap_init_range(zone, fs, fe, true);
		nr_free += fe - fs;
		pfn = fe;
	}
	memmap_init_range(zone, pfn, epfn, false);
	return nr_free;
}

/* Put the free ranges of the chunk [spfn, epfn), whose struct pages are all written
 * (memmap_init_chunk()), on the buddy lists. */
static void __free_chunk(struct zone *zone, unsigned long spfn, unsigned long epfn)
{
	u64 cursor = (u64)spfn << PAGE_SHIFT;
	unsigned long fs, fe;

	assert_spin_locked(&zone->lock);
	VM_BUG_ON(spfn % MAX_ORDER_NR_PAGES || epfn % MAX_ORDER_NR_PAGES || epfn <= spfn);
	VM_BUG_ON(pfn_to_page(zone->node, epfn - 1)->pfn != epfn - 1);	/* written to its end */
	while (chunk_next_free(zone, &cursor, epfn, &fs, &fe))
		__free_range(zone, fs, fe);
}

/*
 * Claim the next chunk of zone, write all its struct pages (without the lock: the chunk is
 * ours), then put its free memory on the buddy lists: in that order (the rule above).
 * Returns the free pages handed over, or -1 if no chunk was left.
 */
static long deferred_init_chunk(struct zone *zone)
{
	unsigned long spfn, epfn, flags, nr_free;
	bool claimed;

	flags = spin_lock_irqsave(&zone->lock);
	claimed = __deferred_claim_chunk(zone, &spfn, &epfn);
	spin_unlock_irqrestore(&zone->lock, flags);
	if (!claimed)
		return -1;
	deferred_race_point(zone, spfn);
	nr_free = memmap_init_chunk(zone, spfn, epfn);
	flags = spin_lock_irqsave(&zone->lock);
	__free_chunk(zone, spfn, epfn);
	zone->deferred_busy--;		/* written and on the lists: the chunk is the zone's */
	spin_unlock_irqrestore(&zone->lock, flags);
	return (long)nr_free;
}

/*
 * Grow zone on demand, as Linux's deferred_grow_zone(): an allocation failed, or found the
 * zone below its watermark, before the deferred init got this far. Initialise chunks until
 * at least 2^order free pages have been added (a chunk may be all reserved). Returns true
 * if any were, so that the caller tries the zone again.
 */
bool deferred_grow_zone(struct zone *zone, unsigned int order)
{
	unsigned long added = 0, chunks = 0;
	long n;

	while (added < (1ul << order) && (n = deferred_init_chunk(zone)) >= 0) {
		added += (unsigned long)n;
		chunks++;
	}
	__atomic_fetch_add(&zone->node->deferred_grown, added, __ATOMIC_RELAXED);
	__atomic_fetch_add(&zone->node->deferred_grown_chunks, chunks, __ATOMIC_RELAXED);
	return added > 0;
}

unsigned long deferred_init_memmap(struct pglist_data *pgdat)
{
	unsigned long chunks = 0, added = 0;

	for (int z = 0; z < MAX_NR_ZONES; z++) {
		long n;

		while ((n = deferred_init_chunk(&pgdat->node_zones[z])) >= 0) {
			added += (unsigned long)n;
			chunks++;
		}
	}
	__atomic_fetch_add(&pgdat->deferred_workers, added, __ATOMIC_RELAXED);
	__atomic_fetch_add(&pgdat->deferred_chunks, chunks, __ATOMIC_RELAXED);
	return chunks;
}

/*
 * Linux runs one deferred init per node, on that node's CPUs (a pgdatinit thread bound to
 * them, which splits the node's work over those CPUs): a CPU writes the memory map of its
 * own memory. Here every CPU does its own node first for the same reason, then helps each
 * other node in turn, starting with the next one (so that the CPUs of different nodes
 * spread over the rest): a node with few CPUs, or none (QEMU can give a node memory and no
 * CPU), is not left to one CPU while the others wait.
 */
unsigned long deferred_init_cpu(struct mm_machine *m, unsigned int cpu)
{
	unsigned int home = machine_cpu_nid(m, cpu) - m->first_nid;	/* its index */
	unsigned long chunks = 0;

	for (unsigned int i = 0; i < m->nr_nodes; i++) {
		struct pglist_data *pgdat = m->node[(home + i) % m->nr_nodes];
		unsigned long n = deferred_init_memmap(pgdat);

		if (i)
			__atomic_fetch_add(&pgdat->deferred_chunks_remote, n, __ATOMIC_RELAXED);
		chunks += n;
	}
	return chunks;
}

/* Before the node is in use: each zone up to DEFERRED_EARLY_PAGES free pages (a zone with
 * any free memory then has some, and goes into the zonelists). */
static void deferred_init_early(struct pglist_data *pgdat)
{
	for (int z = 0; z < MAX_NR_ZONES; z++) {
		struct zone *zone = &pgdat->node_zones[z];
		long n;

		while (zone->managed_pages < DEFERRED_EARLY_PAGES &&
		       (n = deferred_init_chunk(zone)) >= 0)
			pgdat->deferred_early += (unsigned long)n;
	}
}

unsigned long node_deferred_pages(struct pglist_data *pgdat)
{
	unsigned long n = 0;

	for (int z = 0; z < MAX_NR_ZONES; z++)
		n += READ_ONCE(pgdat->node_zones[z].deferred_free);
	return n;
}

unsigned long machine_deferred_pages(const struct mm_machine *m)
{
	return machine_sum(m, node_deferred_pages);
}

/* Has every chunk of every zone of m been claimed and finished? Under each zone's lock, so
 * that a true answer also means the struct pages written are visible here. */
static bool machine_deferred_finished(struct mm_machine *m)
{
	for (unsigned int nid = 0; nid < m->nr_nodes; nid++)
		for (int z = 0; z < MAX_NR_ZONES; z++) {
			struct zone *zone = &m->node[nid]->node_zones[z];
			unsigned long flags = spin_lock_irqsave(&zone->lock);
			bool busy = zone_has_deferred(zone) || zone->deferred_busy;

			spin_unlock_irqrestore(&zone->lock, flags);
			if (busy)
				return false;
		}
	return true;
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

/* Watermarks, reserves and pageset sizes of every node for the pages managed now (the
 * watermarks share out min_free_kbytes over the whole machine's memory), high split among
 * the machine's CPUs (the kernel's: again by mm_cpus_online(), for those that came up). */
static void machine_size_limits(struct mm_machine *m)
{
	for (unsigned int nid = 0; nid < m->nr_nodes; nid++) {
		setup_per_zone_wmarks(m->node[nid]);
		setup_lowmem_reserve(m->node[nid]);
	}
	for (unsigned int nid = 0; nid < m->nr_nodes; nid++)
		zone_pcp_update(m->node[nid], m->nr_cpus);
}

/* The node's span, from its RAM in mb (0 .. 0 for a memoryless node). */
static void node_span(struct pglist_data *pgdat, const struct memblock *mb)
{
	for (unsigned int i = 0; i < mb->memory.cnt; i++) {
		const struct memblock_region *r = &mb->memory.regions[i];

		if (r->nid != (int)node_index(pgdat))
			continue;
		if (!pgdat->node_end_pfn)
			pgdat->node_start_pfn = r->base >> PAGE_SHIFT;
		pgdat->node_end_pfn = (r->base + r->size) >> PAGE_SHIFT;
	}
}

/* Zones and per-CPU lists of one node: what it takes from memblock. */
static int node_init(struct pglist_data *pgdat, struct memblock *mb)
{
	node_span(pgdat, mb);
	zones_init(pgdat, mb);
	return pcp_node_init(pgdat, mb);
}

/* Every machine's nodes (the kernel's and the lab's private ones) poison freed pages or not
 * as the boot says: the tests run the configuration the kernel runs. */
static bool mm_poison = CONFIG_DEBUG_VM;
CMDLINE_BOOL("mm.poison", mm_poison, "fill freed pages with 0xaa and check them on allocation");

static void machine_setup(struct mm_machine *m, struct pglist_data *const *nodes,
			  unsigned int nr_nodes, struct memblock *mb, const char *name,
			  unsigned int nr_cpus, const u8 (*distance)[MAX_NUMA_NODES],
			  const u8 *cpu_node, enum pcp_lock_model pcp_lock)
{
	for (unsigned int a = 0; a < nr_nodes; a++)
		memset(nodes[a], 0, sizeof(*nodes[a]));	/* first: m may be in nodes[0] */
	*m = (struct mm_machine){ .nr_nodes = nr_nodes, .cpu_node = cpu_node, .nr_cpus = nr_cpus,
				  .name = name, .pcp_lock = pcp_lock };
	spin_lock_init(&m->pcp_drain_lock, "pcp_drain", 0);
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
		pgdat->machine = m;
		pgdat->nr_cpus = nr_cpus;
		pgdat->poison = mm_poison;
		pgdat->mb = mb;
	}
}

int mm_machine_init_deferred(struct mm_machine *m, struct pglist_data *const *nodes,
			     unsigned int nr_nodes, struct memblock *mb, const char *name,
			     unsigned int nr_cpus, const u8 (*distance)[MAX_NUMA_NODES],
			     const u8 *cpu_node, enum pcp_lock_model pcp_lock)
{
	VM_BUG_ON(!nr_nodes || nr_nodes > MAX_NUMA_NODES);
	machine_setup(m, nodes, nr_nodes, mb, name, nr_cpus, distance, cpu_node, pcp_lock);
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
	/* memblock is final now (no more allocations): the first chunks of every node */
	for (unsigned int nid = 0; nid < nr_nodes; nid++) {
		zones_init_deferred(m->node[nid]);
		deferred_init_early(m->node[nid]);
	}
	machine_size_limits(m);
	build_all_zonelists(m);
	return 0;
no_memmap:
	printk("mm: %s: no memory for the memory map\n", name);
	mm_machine_destroy(m);
	return -1;
}

void deferred_init_done(struct mm_machine *m)
{
	for (unsigned int nid = 0; nid < m->nr_nodes; nid++)
		for (int z = 0; z < MAX_NR_ZONES; z++) {
			struct zone *zone = &m->node[nid]->node_zones[z];

			WARN_ON(zone_has_deferred(zone) || zone->deferred_free);
		}
	machine_size_limits(m);
}

int mm_machine_init(struct mm_machine *m, struct pglist_data *const *nodes,
		    unsigned int nr_nodes, struct memblock *mb, const char *name,
		    unsigned int nr_cpus, const u8 (*distance)[MAX_NUMA_NODES], const u8 *cpu_node,
		    enum pcp_lock_model pcp_lock)
{
	int ret = mm_machine_init_deferred(m, nodes, nr_nodes, mb, name, nr_cpus, distance,
					   cpu_node, pcp_lock);

	if (!ret) {
		for (unsigned int nid = 0; nid < nr_nodes; nid++)
			deferred_init_memmap(m->node[nid]);
		deferred_init_done(m);
	}
	return ret;
}

/* One node: all of mb's RAM is node 0's. */
static void one_node(struct memblock *mb)
{
	for (unsigned int i = 0; i < mb->memory.cnt; i++)
		mb->memory.regions[i].nid = 0;
}

int pgdat_init(struct pglist_data *pgdat, struct memblock *mb, const char *name,
	       unsigned int nr_cpus, enum pcp_lock_model pcp_lock)
{
	one_node(mb);
	return mm_machine_init(&pgdat->own_machine, &pgdat, 1, mb, name, nr_cpus, NULL, NULL,
			       pcp_lock);
}

int pgdat_init_deferred(struct pglist_data *pgdat, struct memblock *mb, const char *name,
			unsigned int nr_cpus, enum pcp_lock_model pcp_lock)
{
	one_node(mb);
	return mm_machine_init_deferred(&pgdat->own_machine, &pgdat, 1, mb, name, nr_cpus, NULL,
					NULL, pcp_lock);
}

/* ---- the kernel's machine ---- */

static struct memblock boot_memblock;
/* Each node starts a page (struct pglist_data says why). */
static struct {
	struct pglist_data pgdat;
} __aligned(PAGE_SIZE) kernel_nodes[MAX_NUMA_NODES];
static struct mm_machine kernel_machine;
static bool mm_dump;
CMDLINE_BOOL("mm.dump", mm_dump, "print memblock, buddyinfo, zoneinfo and pagetypeinfo at boot");
static bool mm_deferred = true;
CMDLINE_BOOL("mm.deferred", mm_deferred, "build most of the memory map after SMP bring-up, on "
	     "every CPU at once (0: all of it before, on the boot CPU)");
static bool mm_bottom_up = true;
CMDLINE_BOOL("mm.bottom_up", mm_bottom_up, "boot allocations (memory map, per-CPU lists) "
	     "bottom-up from 16 MiB (0: top-down, where the boot loader ran)");
static unsigned int mm_deferred_workers;
CMDLINE_UINT("mm.deferred_workers", mm_deferred_workers,
	     "deferred memory-map init on CPUs 0..N-1 only (0: every CPU)");

static u64 mm_init_cycles;			/* mm_init(), before SMP bring-up */
/* What each CPU did in the deferred init, written by its deferred_worker(); nr_cpu_ids of
 * them, from memblock (a 4-CPU boot does not pay for MAX_CPUS). */
static struct deferred_report {
	unsigned long chunks;		/* chunks this CPU initialised */
	u64 done;			/* arch_cycles() when it returned, or 0 */
} *deferred_report;

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
 * said how much) is not used. A node's range counts in whole pages, as memblock counts RAM:
 * a page an SRAT boundary cuts through is in no node (numa_init() counted it so). */
static void assign_nodes(struct memblock *mb)
{
	const struct numa_topology *t = &numa_topology;

	memblock_set_node(mb, 0, ~0ull, MAX_NUMA_NODES);
	for (unsigned int i = 0; i < t->nr_memblks; i++) {
		const struct numa_memblk *b = &t->memblks[i];
		u64 s = ALIGN_UP(b->base, PAGE_SIZE), e = ALIGN_DOWN(b->base + b->size, PAGE_SIZE);

		if (b->base <= ~0ull - (PAGE_SIZE - 1) && s < e)
			memblock_set_node(mb, s, e - s, b->nid);
	}
	for (unsigned int i = 0; i < mb->memory.cnt; i++) {
		const struct memblock_region *r = &mb->memory.regions[i];

		if (r->nid == MAX_NUMA_NODES) {
			memblock_remove(mb, r->base, r->size);
			i--;
		}
	}
}

/* One line per node: its memory, free pages, memory map and CPUs. */
static void print_nodes(const struct mm_machine *m)
{
	for (unsigned int nid = 0; nid < m->nr_nodes; nid++) {
		struct pglist_data *pgdat = m->node[nid];

		unsigned long managed = node_managed_pages(pgdat) + node_deferred_pages(pgdat);

		printk("mm: %s: %lu MiB managed, %lu pages free now, %lu deferred, memory map "
		       "%lu KiB%s\n", pgdat->name, managed >> (20 - PAGE_SHIFT),
		       node_free_pages(pgdat), node_deferred_pages(pgdat), pgdat->memmap_bytes >> 10,
		       managed ? "" : " (memoryless: allocates from the nearest node with memory)");
	}
}

/* The per-CPU arrays of mm/mm_test.h and the deferred-init report, for nr CPUs, zeroed
 * (memblock_alloc zeroes). */
static int mm_percpu_init(struct memblock *mb, unsigned int nr)
{
	u64 gup = memblock_alloc(mb, gup_percpu_size() * nr, CACHELINE_SIZE);
	u64 fail = memblock_alloc(mb, MAX(fail_page_alloc_percpu_size(), 1ul) * nr, CACHELINE_SIZE);
	u64 report = memblock_alloc(mb, sizeof(*deferred_report) * nr, CACHELINE_SIZE);

	if (!gup || !fail || !report)
		return -1;
	deferred_report = arch_phys_to_virt(report);
	gup_percpu_set(arch_phys_to_virt(gup), nr);
	fail_page_alloc_percpu_set(arch_phys_to_virt(fail), nr);
	return 0;
}

int mm_init(const struct boot_info *bi)
{
	struct pglist_data *nodes[MAX_NUMA_NODES];
	struct mm_machine *m = &kernel_machine;
	u64 start = arch_cycles();
	int ret;

	memblock_init(&boot_memblock, arch_direct_map_boot_limit());
	memblock_add_mmap(&boot_memblock, bi->mmap, bi->nr_mmap);
	if (bi->nr_mmap_dropped)
		pr_warn("memblock: the loader's memory map has %u entries more than the %u kept: "
			"%llu KiB of usable RAM in them ignored%s\n", bi->nr_mmap_dropped,
			BOOT_MMAP_MAX, (unsigned long long)(bi->mmap_dropped_usable >> 10),
			bi->nr_mmap_dropped_reserved ? "; so are reservations among them: that "
			"memory may be handed out as free" : "");
	reserve_boot_ranges(&boot_memblock, bi);
	assign_nodes(&boot_memblock);
	/*
	 * The memory map, the per-CPU lists and the section table go bottom-up from the end of
	 * ZONE_DMA, not top-down: the top of low RAM is where the boot loader ran, and under
	 * QEMU every store to memory that still has translated code takes the slow
	 * self-modifying-code path. Writing the memory map there took 30-70x longer at 40
	 * vCPUs (docs/results.md; mm.bottom_up=0 shows it).
	 */
	if (mm_bottom_up)
		memblock_set_bottom_up(&boot_memblock, ZONE_DMA_END_PFN << PAGE_SHIFT);
	if (mm_dump)
		memblock_dump(&boot_memblock);
	ret = mm_percpu_init(&boot_memblock, nr_cpu_ids);
	if (ret)
		printk("mm: no memory below 0x%llx for the per-CPU arrays of %u CPUs (RAM in %u "
		       "ranges)\n", (unsigned long long)boot_memblock.alloc_limit, nr_cpu_ids,
		       boot_memblock.memory.cnt);
	for (unsigned int nid = 0; nid < nr_node_ids(); nid++)
		nodes[nid] = &kernel_nodes[nid].pgdat;
	if (!ret)
		ret = (mm_deferred ? mm_machine_init_deferred : mm_machine_init)(
			m, nodes, nr_node_ids(), &boot_memblock, "node", nr_cpu_ids,
			(const u8 (*)[MAX_NUMA_NODES])numa_topology.distance, numa_cpu_node,
			pcp_lock_default);
	if (ret)
		return ret;
	if (nr_node_ids() == 1)
		snprintf(kernel_nodes[0].pgdat.name, sizeof(kernel_nodes[0].pgdat.name), "node0");
	for (unsigned int nid = 0; nid < m->nr_nodes; nid++) {
		BUG_ON(m->node[nid]->nid != (int)nid);	/* NODE_DATA(nid) */
		for (int z = 0; z < MAX_NR_ZONES; z++)
			lockstat_register(&m->node[nid]->node_zones[z].lock);
	}
	mm_init_cycles = arch_cycles() - start;
	printk("mm: %lu MiB managed%s, %lu pages free now, %lu deferred%s; memory map %lu KiB "
	       "(%zu bytes per page)\n",
	       (machine_managed_pages(m) + machine_deferred_pages(m)) >> (20 - PAGE_SHIFT),
	       mm_deferred ? " once initialised" : "", machine_free_pages(m),
	       machine_deferred_pages(m), mm_deferred ? " to after SMP bring-up" : " (mm.deferred=0)",
	       machine_memmap_bytes(m) >> 10, sizeof(struct page));
	if (m->nr_nodes > 1)
		print_nodes(m);
	return 0;
}

/* Each CPU's job (from the call IPI on the others): its share of the deferred init, unless
 * mm.deferred_workers leaves it out. */
static void deferred_worker(void *arg)
{
	unsigned int cpu = arch_cpu_id();

	if (mm_deferred_workers && cpu >= mm_deferred_workers)
		return;
	WRITE_ONCE(deferred_report[cpu].chunks, deferred_init_cpu(arg, cpu));
	WRITE_ONCE(deferred_report[cpu].done, arch_cycles());
}

/* Sum of the zone locks' statistics over the machine: acquisitions, and those that had to
 * wait. */
static void zone_lock_stats(const struct mm_machine *m, u64 *acquired, u64 *contended)
{
	*acquired = *contended = 0;
	for (unsigned int nid = 0; nid < m->nr_nodes; nid++)
		for (int z = 0; z < MAX_NR_ZONES; z++) {
			const struct spinlock *lock = &m->node[nid]->node_zones[z].lock;

			*acquired += READ_ONCE(lock_stat(lock)->acquisitions);
			*contended += READ_ONCE(lock_stat(lock)->contended);
		}
}

/* "12.345" (milliseconds) for a cycle count. */
static const char *ms_str(char buf[24], u64 cycles)
{
	u64 us = cycles_to_us(cycles);

	snprintf(buf, 24, "%lu.%03lu", (unsigned long)(us / 1000), (unsigned long)(us % 1000));
	return buf;
}

/*
 * One line: pages, time and CPUs; how the chunks spread over the CPUs; when the first CPU
 * found no chunk left and when the last one finished its last chunk (the gap is a CPU that
 * was slow with its chunk, e.g. a vCPU the host took off its core); zone->lock contention.
 * With several nodes, a line per node: its chunks, and how many other nodes' CPUs did.
 */
static void print_deferred_done(const struct mm_machine *m, u64 start, u64 end, u64 acquired,
				u64 contended)
{
	unsigned long chunks = 0, lo = ~0ul, hi = 0, workers = 0, late = 0;
	u64 first = ~0ull, last = 0, pages = 0, grown = 0;
	char t[4][24];

	for (unsigned int cpu = 0; cpu < nr_cpu_ids; cpu++) {
		u64 done = READ_ONCE(deferred_report[cpu].done);
		unsigned long n = READ_ONCE(deferred_report[cpu].chunks);

		if (!done) {
			late += cpu_online(cpu) && (!mm_deferred_workers || cpu < mm_deferred_workers);
			continue;
		}
		workers++;
		chunks += n;
		lo = MIN(lo, n);
		hi = MAX(hi, n);
		first = MIN(first, done);
		last = MAX(last, done);
	}
	if (!workers)
		first = last = end;
	for (unsigned int nid = 0; nid < m->nr_nodes; nid++) {
		pages += m->node[nid]->deferred_workers;
		grown += m->node[nid]->deferred_grown;
	}
	printk("mm: deferred init: %llu pages in %s ms on %lu CPUs (%lu chunks of %lu MiB, "
	       "%lu-%lu per CPU; out of chunks at %s ms, last CPU done at %s ms; %lu CPUs not "
	       "started yet; zone->lock contended %llu of %llu times); %llu pages grown on "
	       "demand before; %lu pages free; mm_init() took %s ms\n",
	       (unsigned long long)pages, ms_str(t[0], end - start), workers, chunks,
	       DEFERRED_CHUNK_PAGES >> (20 - PAGE_SHIFT), workers ? lo : 0, hi,
	       ms_str(t[1], first - start), ms_str(t[2], last - start), late,
	       (unsigned long long)contended, (unsigned long long)acquired,
	       (unsigned long long)grown, machine_free_pages(m), ms_str(t[3], mm_init_cycles));
	for (unsigned int nid = 0; m->nr_nodes > 1 && nid < m->nr_nodes; nid++) {
		const struct pglist_data *pgdat = m->node[nid];

		printk("mm: %s: deferred init %llu pages in %llu chunks, %llu of them by other "
		       "nodes' CPUs; %lu pages free\n", pgdat->name,
		       (unsigned long long)pgdat->deferred_workers,
		       (unsigned long long)pgdat->deferred_chunks,
		       (unsigned long long)pgdat->deferred_chunks_remote,
		       node_free_pages(m->node[nid]));
	}
}

void mm_deferred_init(void)
{
	struct mm_machine *m = &kernel_machine;
	u64 start = arch_cycles(), end, acquired0, contended0, acquired, contended;
	char t[24];

	if (!mm_deferred) {
		printk("mm: no deferred init (mm.deferred=0): mm_init() built the whole memory map "
		       "on the boot CPU in %s ms, before SMP bring-up\n", ms_str(t, mm_init_cycles));
		return;
	}
	zone_lock_stats(m, &acquired0, &contended0);
	/*
	 * Not smp_run_on_all(), which waits for every CPU to have run the job: under TCG a
	 * vCPU can take a second to wake up, and one that comes after the last chunk was
	 * taken has nothing to do. The others run it from the call IPI; this CPU takes its
	 * share, then waits only for the chunks still being written.
	 */
	smp_call_function_all(deferred_worker, m, false);
	deferred_worker(m);
	while (!machine_deferred_finished(m))
		for (int i = 0; i < 1000; i++)	/* not to hammer the zone locks */
			arch_cpu_relax();
	deferred_init_done(m);
	end = arch_cycles();
	zone_lock_stats(m, &acquired, &contended);
	print_deferred_done(m, start, end, acquired - acquired0, contended - contended0);
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

/*
 * Name every pcp lock of zone for lockstat and lock reports ("pcp cpu3 DMA32", "pcp cpu3
 * node1 DMA32" on another node) and register it; names from one allocation per zone.
 */
static void pcp_lockstat_register(struct zone *zone, unsigned int nr_cpus)
{
	enum { NAME_LEN = 24 };
	unsigned int order = 0;
	struct page *page;
	char *names;

	while ((PAGE_SIZE << order) < nr_cpus * NAME_LEN)
		order++;
	page = alloc_pages_node(zone->node, GFP_KERNEL | __GFP_NOWARN, order);
	if (!page)
		return;
	names = page_address(page);
	for (unsigned int cpu = 0; cpu < nr_cpus; cpu++) {
		snprintf(names + cpu * NAME_LEN, NAME_LEN, "pcp cpu%u %s", cpu, zone->lock.name);
		zone->pcp[cpu].lock.name = names + cpu * NAME_LEN;
		lockstat_register(&zone->pcp[cpu].lock);
	}
}

/* After SMP bring-up: size every pcp of the kernel's nodes for the CPUs now online, name
 * their locks, and say so. */
void mm_cpus_online(void)
{
	struct mm_machine *m = &kernel_machine;
	struct zone *z = &mm_node()->node_zones[ZONE_DMA32];

	for (unsigned int nid = 0; nid < m->nr_nodes; nid++) {
		zone_pcp_update(m->node[nid], nr_cpus_online());
		for (int zi = 0; zi < MAX_NR_ZONES; zi++)
			if (zone_populated(&m->node[nid]->node_zones[zi]))
				pcp_lockstat_register(&m->node[nid]->node_zones[zi],
						      nr_cpus_online());
	}
	printk("pcp: %s, lock model %s; %u CPUs online: DMA32 batch %d high %d\n",
	       pcp_enabled ? "on" : "off (pcp.enable=0)", pcp_lock_model_name(m->pcp_lock),
	       nr_cpus_online(), z->pageset_batch, z->pageset_high);
	for (unsigned int nid = 0; m->nr_nodes > 1 && nid < m->nr_nodes; nid++) {
		struct pglist_data *pgdat = m->node[nid];

		show_zonelist(pgdat);
		for (int zi = 0; zi < MAX_NR_ZONES; zi++)
			if (zone_populated(&pgdat->node_zones[zi]))
				printk("pcp: %s %s: batch %d high %d (the zone's low watermark over "
				       "%u CPUs)\n", pgdat->name, pgdat->node_zones[zi].name,
				       pgdat->node_zones[zi].pageset_batch,
				       pgdat->node_zones[zi].pageset_high,
				       node_split_cpus(pgdat, nr_cpus_online()));
	}
}
