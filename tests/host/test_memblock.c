/* Host tests of mm/memblock.c: building RAM tables from bad memory maps, and allocating. */
#include <string.h>
#include "tests/host/harness.h"

static void expect_regions(struct ktest *t, const struct memblock_type *type,
			   const struct memblock_region *want, unsigned int n)
{
	KT_EXPECT_EQ(t, type->cnt, n);
	for (unsigned int i = 0; i < n && i < type->cnt; i++) {
		KT_EXPECT_EQ(t, type->regions[i].base, want[i].base);
		KT_EXPECT_EQ(t, type->regions[i].size, want[i].size);
	}
}

/*
 * Unsorted, overlapping and touching usable entries:
 *   [8M, 12M) [1M, 3M) [2M, 5M) [5M, 6M)  ->  [1M, 6M) [8M, 12M)
 * Expect two sorted, merged regions and nothing rejected.
 */
static void memblock_add_mmap_unsorted_overlapping(struct ktest *t)
{
	const struct mem_region map[] = {
		{ 8 * MiB, 4 * MiB, MEM_USABLE }, { 1 * MiB, 2 * MiB, MEM_USABLE },
		{ 2 * MiB, 3 * MiB, MEM_USABLE }, { 5 * MiB, 1 * MiB, MEM_USABLE },
	};
	const struct memblock_region want[] = { { 1 * MiB, 5 * MiB, 0 }, { 8 * MiB, 4 * MiB, 0 } };
	struct memblock mb;

	memblock_init(&mb, 4 * GiB);
	memblock_add_mmap(&mb, map, ARRAY_SIZE(map));
	expect_regions(t, &mb.memory, want, ARRAY_SIZE(want));
	KT_EXPECT_EQ(t, mb.rejected, 0);
}

/*
 * Zero-length, unaligned and sub-page entries: [1M+100, 2M-1) shrinks to [1M+4K, 2M-4K);
 * zero-length and "less than a page" entries are rejected with a message.
 */
static void memblock_add_mmap_zero_length_unaligned(struct ktest *t)
{
	const struct mem_region map[] = {
		{ 1 * MiB + 100, 1 * MiB - 101, MEM_USABLE }, { 4 * MiB, 0, MEM_USABLE },
		{ 6 * MiB + 10, 4000, MEM_USABLE },
	};
	const struct memblock_region want[] = { { 1 * MiB + 4096, 1 * MiB - 8192, 0 } };
	struct memblock mb;

	memblock_init(&mb, 4 * GiB);
	memblock_add_mmap(&mb, map, ARRAY_SIZE(map));
	expect_regions(t, &mb.memory, want, ARRAY_SIZE(want));
	KT_EXPECT_EQ(t, mb.rejected, 3);
	KT_EXPECT_TRUE(t, host_console_contains("zero length"));
	KT_EXPECT_TRUE(t, host_console_contains("holds no whole page"));
}

/*
 * A reserved entry listed before the usable one it overlaps still wins:
 *   reserved [4M, 5M+1), usable [0, 16M)  ->  [0, 4M) [5M+4K, 16M)
 */
static void memblock_add_mmap_reserved_wins_overlap(struct ktest *t)
{
	const struct mem_region map[] = {
		{ 4 * MiB, 1 * MiB + 1, MEM_RESERVED }, { 0, 16 * MiB, MEM_USABLE },
		{ 15 * MiB, 2 * MiB, MEM_ACPI_NVS },
	};
	const struct memblock_region want[] = { { 0, 4 * MiB, 0 },
						{ 5 * MiB + 4096, 10 * MiB - 4096, 0 } };
	struct memblock mb;

	memblock_init(&mb, 4 * GiB);
	memblock_add_mmap(&mb, map, ARRAY_SIZE(map));
	expect_regions(t, &mb.memory, want, ARRAY_SIZE(want));
}

/* An entry whose end wraps past 2^64 is clamped, not taken as tiny. Expect one region
 * from 1 GiB to the top page. */
static void memblock_add_mmap_wrapping_entry(struct ktest *t)
{
	const struct mem_region map[] = { { 1 * GiB, ~0ull, MEM_USABLE } };
	struct memblock mb;

	memblock_init(&mb, 4 * GiB);
	memblock_add_mmap(&mb, map, ARRAY_SIZE(map));
	KT_EXPECT_EQ(t, mb.memory.cnt, 1);
	KT_EXPECT_EQ(t, mb.memory.regions[0].base, 1 * GiB);
	KT_EXPECT_EQ(t, mb.memory.regions[0].base + mb.memory.regions[0].size, ~0ull - 4095);
	KT_EXPECT_EQ(t, mb.rejected, 1);
}

/*
 * Free ranges skip reservations: memory [1M, 8M), reserved [2M, 3M) and [3M, 4M+1):
 * expect free [1M, 2M) then [4M+4K, 8M).
 */
static void memblock_next_free_skips_reserved(struct ktest *t)
{
	struct memblock mb;
	u64 cursor = 0, s, e;

	memblock_init(&mb, 4 * GiB);
	memblock_add(&mb, 1 * MiB, 7 * MiB);
	memblock_reserve(&mb, 2 * MiB, 1 * MiB);
	memblock_reserve(&mb, 3 * MiB, 1 * MiB + 1);
	KT_EXPECT_EQ(t, mb.reserved.cnt, 1);
	KT_ASSERT_TRUE(t, memblock_next_free(&mb, &cursor, &s, &e));
	KT_EXPECT_EQ(t, s, 1 * MiB);
	KT_EXPECT_EQ(t, e, 2 * MiB);
	KT_ASSERT_TRUE(t, memblock_next_free(&mb, &cursor, &s, &e));
	KT_EXPECT_EQ(t, s, 4 * MiB + 4096);
	KT_EXPECT_EQ(t, e, 8 * MiB);
	KT_EXPECT_TRUE(t, !memblock_next_free(&mb, &cursor, &s, &e));
}

/*
 * memblock_alloc is top-down below alloc_limit, aligned, zeroed and reserved: memory
 * [1M, 64M), limit 32M. Expect 30M for a 2M-aligned 1 MiB block (the highest 2M-aligned
 * start that fits below 32M), then a page just below the limit, in the gap above it.
 */
static void memblock_alloc_top_down_below_limit(struct ktest *t)
{
	struct memblock mb;
	u64 a, b;

	memblock_init(&mb, 32 * MiB);
	memblock_add(&mb, 1 * MiB, 63 * MiB);
	a = memblock_alloc(&mb, 1 * MiB, 2 * MiB);
	b = memblock_alloc(&mb, 4096, 4096);
	KT_EXPECT_EQ(t, a, 30 * MiB);
	KT_EXPECT_EQ(t, b, 32 * MiB - 4096);
	KT_EXPECT_TRUE(t, memblock_is_reserved(&mb, a) && memblock_is_reserved(&mb, b));
	KT_EXPECT_EQ(t, *(u64 *)arch_phys_to_virt(a), 0);
	KT_EXPECT_EQ(t, memblock_alloc(&mb, 64 * MiB, 4096), 0);
}

/*
 * memblock_alloc() zeroes what it returns whatever was there (a warm reset leaves the last
 * boot's data in RAM); memblock_alloc_raw(), for memory the caller writes whole, does not.
 * The 1 MiB at 30M, then the page below the 32M limit, both filled with 0xdb first.
 */
static void memblock_alloc_zeroes_old_contents(struct ktest *t)
{
	struct memblock mb;
	u64 a, b;
	unsigned long nonzero = 0;

	memblock_init(&mb, 32 * MiB);
	memblock_add(&mb, 1 * MiB, 63 * MiB);
	memset(arch_phys_to_virt(30 * MiB), 0xdb, MiB);
	memset(arch_phys_to_virt(32 * MiB - 4096), 0xdb, 4096);
	a = memblock_alloc(&mb, 1 * MiB, 2 * MiB);
	b = memblock_alloc_raw(&mb, 4096, 4096);
	KT_ASSERT_EQ(t, a, 30 * MiB);
	KT_ASSERT_EQ(t, b, 32 * MiB - 4096);
	for (u64 off = 0; off < MiB; off++)
		nonzero += ((u8 *)arch_phys_to_virt(a))[off] != 0;
	KT_EXPECT_EQ(t, nonzero, 0ul);
	KT_EXPECT_EQ(t, *(u8 *)arch_phys_to_virt(b), 0xdb);
}

/*
 * After memblock_set_bottom_up(16M): memory [1M, 20M) and [24M, 64M), 17M-18M reserved,
 * limit 32M. A 1 MiB block comes from 16M (the lowest fit above the floor), the next from
 * 18M (over the reservation); 2 MiB no longer fits in [19M, 20M) and comes from 24M; raw
 * allocations skip the zeroing. With nothing left above the floor below the limit, a block
 * comes top-down from below the floor.
 */
static void memblock_alloc_bottom_up_from_floor(struct ktest *t)
{
	struct memblock mb;

	memblock_init(&mb, 32 * MiB);
	memblock_add(&mb, 1 * MiB, 19 * MiB);
	memblock_add(&mb, 24 * MiB, 40 * MiB);
	memblock_reserve(&mb, 17 * MiB, 1 * MiB);
	memblock_set_bottom_up(&mb, 16 * MiB);
	KT_EXPECT_EQ(t, memblock_alloc(&mb, 1 * MiB, 4096), 16 * MiB);
	KT_EXPECT_EQ(t, memblock_alloc_raw(&mb, 1 * MiB, 4096), 18 * MiB);
	KT_EXPECT_EQ(t, memblock_alloc(&mb, 2 * MiB, 4096), 24 * MiB);
	KT_EXPECT_EQ(t, memblock_alloc(&mb, 6 * MiB, 4096), 26 * MiB);
	KT_EXPECT_EQ(t, memblock_alloc(&mb, 1 * MiB, 4096), 19 * MiB);
	KT_EXPECT_EQ(t, memblock_alloc(&mb, 1 * MiB, 4096), 15 * MiB);
}

/* The region table has a fixed size: 200 disjoint entries fill it; the excess is dropped
 * with a message and nothing crashes. */
static void memblock_add_table_full(struct ktest *t)
{
	struct memblock mb;

	memblock_init(&mb, 4 * GiB);
	for (u64 i = 0; i < 200; i++)
		memblock_add(&mb, i * 2 * MiB, MiB);
	KT_EXPECT_EQ(t, mb.memory.cnt, MEMBLOCK_MAX_REGIONS);
	KT_EXPECT_TRUE(t, host_console_contains("table full"));
}

static const struct ktest_case memblock_cases[] = {
	KTEST_CASE(memblock_add_mmap_unsorted_overlapping),
	KTEST_CASE(memblock_add_mmap_zero_length_unaligned),
	KTEST_CASE(memblock_add_mmap_reserved_wins_overlap),
	KTEST_CASE(memblock_add_mmap_wrapping_entry),
	KTEST_CASE(memblock_next_free_skips_reserved),
	KTEST_CASE(memblock_alloc_top_down_below_limit),
	KTEST_CASE(memblock_alloc_zeroes_old_contents),
	KTEST_CASE(memblock_alloc_bottom_up_from_floor),
	KTEST_CASE(memblock_add_table_full),
};
KTEST_SUITE(host_memblock, memblock_cases);
