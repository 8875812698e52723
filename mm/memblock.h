/*
 * memblock: the boot-time allocator. Two sorted, disjoint, page-aligned range tables, memory
 * (RAM) and reserved, built from the firmware memory map. Changed only on one CPU before
 * pgdat_init() returns; after that it is read-only, and the deferred memory-map init
 * (mm_init.c) reads its free ranges from every CPU at once until the last page is handed over.
 */
#ifndef MM_MEMBLOCK_H
#define MM_MEMBLOCK_H

#include "kernel/compiler.h"

struct mem_region;

#define MEMBLOCK_MAX_REGIONS 128

struct memblock_region {
	u64 base;
	u64 size;
	int nid;	/* memory: the NUMA node it belongs to (0 until memblock_set_node()) */
};

struct memblock_type {
	const char *name;
	unsigned int cnt;
	struct memblock_region regions[MEMBLOCK_MAX_REGIONS];	/* sorted, disjoint, merged */
};

struct memblock {
	struct memblock_type memory;	/* usable RAM, shrunk inward to whole pages */
	struct memblock_type reserved;	/* grown outward to whole pages */
	u64 alloc_limit;		/* memblock_alloc() returns memory below this only */
	u64 bottom_up_floor;		/* 0: top-down; else bottom-up from here */
	unsigned int rejected;		/* memory-map entries ignored as malformed */
};

/* Empty tables; allocations restricted to below alloc_limit (the boot direct map). */
void memblock_init(struct memblock *mb, u64 alloc_limit);
/*
 * Fill mb->memory from a firmware memory map that may be unsorted, overlapping, zero-length
 * or unaligned: usable entries are added, then every non-usable entry is cut out again, so
 * a byte claimed by both is treated as not usable. Malformed entries get a message.
 */
void memblock_add_mmap(struct memblock *mb, const struct mem_region *map, unsigned int n);
int memblock_add(struct memblock *mb, u64 base, u64 size);	/* 0, or -1: table full */
int memblock_reserve(struct memblock *mb, u64 base, u64 size);	/* 0, or -1: table full */
/* Never fails: a full table that cannot split a region around the hole removes the rest of
 * that region too, with a message (memblock.c: type_cut()). */
void memblock_remove(struct memblock *mb, u64 base, u64 size);
/* The RAM in [base, base + size) belongs to node nid (regions split as needed; neighbours
 * of the same node merge). 0, or -1: table full. */
int memblock_set_node(struct memblock *mb, u64 base, u64 size, int nid);
/* The node of the RAM region holding addr, or -1 if addr is not RAM. */
int memblock_nid(const struct memblock *mb, u64 addr);
/* Reserve and return a zeroed, align-aligned block, highest first (unless bottom-up, see
 * memblock_set_bottom_up()); 0 when none fits. */
u64 memblock_alloc(struct memblock *mb, u64 size, u64 align);
/* The same from the RAM of node nid if it has room, at any address (the caller has mapped
 * it all), else as memblock_alloc() (Linux's memblock_alloc_try_nid()); nid < 0: just
 * memblock_alloc(). */
u64 memblock_alloc_node(struct memblock *mb, u64 size, u64 align, int nid);
/* The two above, not zeroed: for memory the caller writes in full anyway (the memory map). */
u64 memblock_alloc_raw(struct memblock *mb, u64 size, u64 align);
u64 memblock_alloc_node_raw(struct memblock *mb, u64 size, u64 align, int nid);
/*
 * From now on allocate bottom-up, the lowest fitting block at or above floor, as Linux's
 * memblock_set_bottom_up(); top-down as before only if nothing above floor fits.
 */
void memblock_set_bottom_up(struct memblock *mb, u64 floor);
/*
 * Iterate free (memory minus reserved) ranges in address order: start with *cursor = 0;
 * each call stores the next range in [*start, *end) and returns false when there is none.
 */
bool memblock_next_free(const struct memblock *mb, u64 *cursor, u64 *start, u64 *end);
bool memblock_is_reserved(const struct memblock *mb, u64 addr);
u64 memblock_end_of_ram(const struct memblock *mb);
void memblock_dump(const struct memblock *mb);

#endif
