/*
 * Host tests of the boot's firmware input through the code that consumes it (tests/fuzz/
 * boot_fuzz.c generates such input; these are the cases it found, written out): node setup
 * from SRAT and SLIT and its printout (kernel/numa.c), the section-to-node split
 * (mm/mm_init.c), CPU numbering with smp.maxcpus (kernel/smp.c), the memory map past what
 * boot_info keeps and the queries arch code asks of it (kernel/multiboot.c), mm_init() with
 * no memory. The tables are built in the simulated physical memory, checksummed.
 */
#include <string.h>
#include "tests/host/harness.h"
#include "kernel/acpi.h"
#include "kernel/cmdline.h"
#include "kernel/numa.h"
#include "kernel/smp.h"
#include "mm/mm.h"

/* ---- a firmware of one test: ACPI tables from FW_BASE on, an RSDT listing them ---- */

#define FW_BASE 0x20000ull		/* below 1 MiB, in no test's RAM that memblock hands out */
#define FW_MAX_TABLES 4

struct fw {
	u64 pa[FW_MAX_TABLES];
	unsigned int n;
	u64 next;
};

static void put32(u8 *p, u32 v) { memcpy(p, &v, 4); }
static void put64(u8 *p, u64 v) { memcpy(p, &v, 8); }

static void checksum_at(u8 *p, u32 len, u32 at)
{
	u8 sum = 0;

	p[at] = 0;
	for (u32 i = 0; i < len; i++)
		sum += p[i];
	p[at] = (u8)-sum;
}

/* A zeroed table of len bytes with its header: signature, length, revision, OEM ID. */
static u8 *fw_table(struct fw *f, const char *sig, u32 len, u8 rev)
{
	u8 *t;

	if (!f->next)
		f->next = FW_BASE + 0x1000;
	t = arch_phys_to_virt(f->next);
	memset(t, 0, len);
	memcpy(t, sig, 4);
	put32(t + 4, len);
	t[8] = rev;
	memcpy(t + 10, "SMPMM ", 6);
	f->pa[f->n++] = f->next;
	f->next = ALIGN_UP(f->next + len, 16);
	return t;
}

/* The RSDT over the tables, every checksum, and bi's RSDP (ACPI 1.0, as the loader's tag). */
static void fw_finish(struct fw *f, struct boot_info *bi)
{
	u8 *rsdt = arch_phys_to_virt(FW_BASE);

	memset(rsdt, 0, 36 + 4 * f->n);
	memcpy(rsdt, "RSDT", 4);
	put32(rsdt + 4, 36 + 4 * f->n);
	rsdt[8] = 1;
	for (unsigned int i = 0; i < f->n; i++) {
		u8 *t = arch_phys_to_virt(f->pa[i]);
		u32 len;

		memcpy(&len, t + 4, 4);
		checksum_at(t, len, 9);
		put32(rsdt + 36 + 4 * i, (u32)f->pa[i]);
	}
	checksum_at(rsdt, 36 + 4 * f->n, 9);
	memset(bi->rsdp_copy, 0, sizeof(bi->rsdp_copy));
	memcpy(bi->rsdp_copy, "RSD PTR ", 8);
	memcpy(bi->rsdp_copy + 9, "SMPMM ", 6);
	put32(bi->rsdp_copy + 16, (u32)FW_BASE);
	checksum_at(bi->rsdp_copy, 20, 8);
	bi->rsdp_present = true;
	bi->rsdp_revision = 0;
}

/* SRAT entries: memory affinity (40 bytes), processor local APIC affinity (16 bytes). */
static void srat_memory(u8 *e, u32 pxm, u64 base, u64 size, bool hotpluggable)
{
	e[0] = 1;
	e[1] = 40;
	put32(e + 2, pxm);
	put64(e + 8, base);
	put64(e + 16, size);
	put32(e + 28, 1 | (hotpluggable ? 2 : 0));
}

static void srat_cpu(u8 *e, u8 pxm, u8 apic_id)
{
	e[0] = 0;
	e[1] = 16;
	e[2] = pxm;
	e[3] = apic_id;
	put32(e + 4, 1);
}

/* A boot_info whose map is RAM [0, ram) and nothing else. */
static void one_ram_map(struct boot_info *bi, u64 ram)
{
	memset(bi, 0, sizeof(*bi));
	bi->mmap[0] = (struct mem_region){ 0, ram, MEM_USABLE };
	bi->nr_mmap = 1;
}

/* Back to the host's one node, for the next case. */
static void numa_reset(void)
{
	u8 node0 = 0;

	numa_set_topology(1, NULL, &node0, 1);
}

/* ---- node setup and its printout (kernel/numa.c) ---- */

/* The bounded append print_nodes() is built on: once the buffer is full, each further
 * piece adds nothing, and the length never passes size - 1 (snprintf's return would). */
static void scnprintf_append_stays_in_buffer(struct ktest *t)
{
	char buf[16 + 8];
	size_t len = 0;

	memset(buf, 0x5a, sizeof(buf));
	for (int i = 0; i < 10; i++)
		len += (size_t)scnprintf(buf + len, 16 - len, " %d", 1000 + i);
	KT_EXPECT_EQ(t, len, (size_t)15);
	KT_EXPECT_STREQ(t, buf, " 1000 1001 1002");
	for (size_t i = 16; i < sizeof(buf); i++)
		KT_EXPECT_EQ(t, buf[i], (char)0x5a);
	KT_EXPECT_EQ(t, scnprintf(buf, 0, "x"), 0);
	KT_EXPECT_EQ(t, scnprintf(buf, 4, "%s", "ab"), 2);
}

/*
 * Eight nodes (the most there can be); node 0 with its RAM in two touching ranges (merged
 * into one) and four ranges far above it whose addresses take 16 hex digits each (the third
 * hot-pluggable); distances of three digits: node 0's line is longer than print_nodes()
 * has room for. Expected: the line stays in its buffer (ASan: it ran 15 bytes past it when
 * it was built with snprintf's return), ends with every distance, says it left a range
 * out, and its MiB count all of node 0's present memory, printed or not (2 GiB + 3 x 1 GiB,
 * the last not printed; the hot-pluggable one is not present).
 */
static void numa_print_nodes_long_line_bounded(struct ktest *t)
{
	static struct boot_info bi;
	static const u64 high[] = { 0x1000000000000000ull, 0x2000000000000000ull,
				    0x3000000000000000ull, 0x4000000000000000ull };
	struct fw f = { .n = 0 };
	u8 *srat = fw_table(&f, "SRAT", 48 + 6 * 40 + 7 * 16, 3), *slit;

	srat_memory(srat + 48, 0, 0, 16 * MiB, false);
	srat_memory(srat + 88, 0, 16 * MiB, 2 * GiB - 16 * MiB, false);
	for (unsigned int i = 0; i < 4; i++)
		srat_memory(srat + 128 + 40 * i, 0, high[i], 1 * GiB, i == 2);
	for (u8 pxm = 1; pxm < 8; pxm++)
		srat_cpu(srat + 288 + 16 * (pxm - 1), pxm, pxm);
	slit = fw_table(&f, "SLIT", 44 + 64, 1);
	put64(slit + 36, 8);
	for (int a = 0; a < 8; a++)
		for (int b = 0; b < 8; b++)
			slit[44 + 8 * a + b] = a == b ? 10 : (u8)(150 + a + b);
	one_ram_map(&bi, 2 * GiB);
	fw_finish(&f, &bi);
	numa_init(&bi);
	KT_EXPECT_TRUE(t, numa_topology.from_firmware);
	KT_EXPECT_EQ(t, nr_node_ids(), 8u);
	KT_EXPECT_TRUE(t, host_console_contains("numa: node 0: 5120 MiB: [0x0-0x80000000) "
						"[0x1000000000000000-0x1000000040000000) "
						"[0x2000000000000000-0x2000000040000000) "
						"[0x3000000000000000-0x3000000040000000) hot-pluggable "
						"and 1 more; distances 10 151 152 153 154 155 156 157\n"));
	KT_EXPECT_TRUE(t, host_console_contains("numa: node 7: 0 MiB (memoryless); distances 157 "
						"158 159 160 161 162 163 10\n"));
	numa_reset();
}

/* A node's range listed twice: it holds 1 GiB once, not twice. Expected: 1 GiB of the
 * 2 GiB of RAM is in no node, so the SRAT is wrong and the machine runs as one node, with
 * all its RAM, said in one line (as Linux's numa_meminfo_cover_memory()). */
static void numa_srat_range_listed_twice_counted_once(struct ktest *t)
{
	static struct boot_info bi;
	struct fw f = { .n = 0 };
	u8 *srat = fw_table(&f, "SRAT", 48 + 2 * 40, 3);

	srat_memory(srat + 48, 0, 0, 1 * GiB, false);
	srat_memory(srat + 88, 0, 0, 1 * GiB, false);
	one_ram_map(&bi, 2 * GiB);
	fw_finish(&f, &bi);
	numa_init(&bi);
	KT_EXPECT_FALSE(t, numa_topology.from_firmware);
	KT_EXPECT_TRUE(t, host_console_contains("numa: 1048576 KiB of RAM lie in no SRAT range: "
						"ignoring SRAT and SLIT, one node"));
	KT_EXPECT_EQ(t, numa_phys_to_node(1536 * MiB), 0);

	/* The same with the second listing hot-pluggable: not merged, still counted once. */
	host_console_reset();
	srat_memory(srat + 88, 0, 0, 1 * GiB, true);
	fw_finish(&f, &bi);
	numa_init(&bi);
	KT_EXPECT_FALSE(t, numa_topology.from_firmware);
	KT_EXPECT_TRUE(t, host_console_contains("numa: 1048576 KiB of RAM lie in no SRAT range"));
	numa_reset();
}

/* Overlapping and touching ranges of one node become one (Linux's numa_cleanup_meminfo());
 * a hot-pluggable range next to them stays apart, and out of the node's MiB. */
static void numa_srat_ranges_of_a_node_merged(struct ktest *t)
{
	static struct boot_info bi;
	struct fw f = { .n = 0 };
	u8 *srat = fw_table(&f, "SRAT", 48 + 4 * 40, 3);

	srat_memory(srat + 48, 0, 512 * MiB, 1 * GiB, false);
	srat_memory(srat + 88, 0, 0, 1 * GiB, false);
	srat_memory(srat + 128, 0, 1536 * MiB, 512 * MiB, false);	/* touches the first */
	srat_memory(srat + 168, 0, 2 * GiB, 1 * GiB, true);
	one_ram_map(&bi, 2 * GiB);
	fw_finish(&f, &bi);
	numa_init(&bi);
	KT_EXPECT_TRUE(t, numa_topology.from_firmware);
	KT_EXPECT_EQ(t, numa_topology.nr_memblks, 2u);
	KT_EXPECT_TRUE(t, host_console_contains("4 memory ranges"));
	KT_EXPECT_TRUE(t, host_console_contains("numa: 2 SRAT memory ranges overlap or touch "
						"another of their node: merged into it"));
	KT_EXPECT_TRUE(t, host_console_contains("numa: node 0: 2048 MiB: [0x0-0x80000000) "
						"[0x80000000-0xc0000000) hot-pluggable; distances 10\n"));
	numa_reset();
}

/* A node boundary inside a page: the page is in neither node (memblock counts RAM in whole
 * pages, and so do the nodes: mm_init()), and the 4 KiB are said, so that nothing is
 * dropped unsaid. */
static void numa_srat_boundary_inside_a_page_said(struct ktest *t)
{
	static struct boot_info bi;
	struct fw f = { .n = 0 };
	u8 *srat = fw_table(&f, "SRAT", 48 + 2 * 40, 3);

	srat_memory(srat + 48, 0, 0, 1 * GiB + 0x800, false);
	srat_memory(srat + 88, 1, 1 * GiB + 0x800, 1 * GiB - 0x800, false);
	one_ram_map(&bi, 2 * GiB);
	fw_finish(&f, &bi);
	numa_init(&bi);
	KT_EXPECT_TRUE(t, numa_topology.from_firmware);
	KT_EXPECT_TRUE(t, host_console_contains("numa: 4 KiB of RAM lie in no node: not used"));
	KT_ASSERT_EQ(t, mm_init(&bi), 0);
	KT_EXPECT_EQ(t, memblock_nid(mm_node()->mb, 1 * GiB), -1);
	KT_EXPECT_EQ(t, memblock_nid(mm_node()->mb, 1 * GiB - 1), 0);
	KT_EXPECT_EQ(t, memblock_nid(mm_node()->mb, 1 * GiB + PAGE_SIZE), 1);
	for (unsigned int i = 0; i < mm_node()->mb->memory.cnt; i++)
		KT_EXPECT_EQ(t, mm_node()->mb->memory.regions[i].base % PAGE_SIZE, 0ull);
	mm_machine_destroy(mm_machine());
	numa_reset();
}

/* ---- the section-to-node split (mm/mm_init.c) ---- */

/*
 * memblock's table full (MEMBLOCK_MAX_REGIONS), and node 1's RAM starting inside node 0's
 * last section and running past it: its head must join node 0 (a section holds one node's
 * memory), which would split the region and needs a slot there is not. Expected: the
 * machine is built within 10 s (host_watchdog(): it was an endless loop), that head is
 * dropped with a line saying so, and no section holds two nodes' RAM.
 */
static void sections_of_one_node_table_full_ends(struct ktest *t)
{
	static struct mm_machine m;
	static struct pglist_data nodes[2];
	static struct memblock mb;
	struct pglist_data *np[2] = { &nodes[0], &nodes[1] };
	u8 cpu_node[4] = { 0, 0, 1, 1 };
	u64 head = 64 * MiB;	/* node 1 from here: inside section 0 [0, 128 MiB) */

	memblock_init(&mb, host_boot_map_limit);
	for (unsigned int i = 0; i < MEMBLOCK_MAX_REGIONS - 1; i++)
		memblock_add(&mb, 32 * MiB + i * 64 * 1024, 32 * 1024);
	memblock_add(&mb, head, 192 * MiB);
	memblock_set_node(&mb, head, 192 * MiB, 1);
	KT_ASSERT_EQ(t, mb.memory.cnt, MEMBLOCK_MAX_REGIONS);
	host_watchdog(10);
	KT_ASSERT_EQ(t, mm_machine_init(&m, np, 2, &mb, "full", 4, NULL, cpu_node,
					pcp_lock_default), 0);
	KT_EXPECT_TRUE(t, host_console_contains("mm: [0x4000000-0x8000000) cannot change node "
						"(memblock table full): ignored"));
	KT_EXPECT_EQ(t, memblock_nid(&mb, head), -1);
	KT_EXPECT_EQ(t, memblock_nid(&mb, 128 * MiB), 1);
	for (unsigned int i = 1; i < mb.memory.cnt; i++) {
		const struct memblock_region *a = &mb.memory.regions[i - 1], *b = a + 1;

		if (a->nid != b->nid)
			KT_EXPECT_NE(t, (a->base + a->size - 1) >> SECTION_SIZE_BITS,
				     b->base >> SECTION_SIZE_BITS);
	}
	KT_EXPECT_EQ(t, mm_verify(m.node[0]), 0);
	mm_machine_destroy(&m);
}

/* A cut that would split a region when memblock's table is full removes the rest of the
 * region too, and says so: RAM the map reserves is never left as RAM. */
static void memblock_remove_table_full_removes_more(struct ktest *t)
{
	static struct memblock mb;

	memblock_init(&mb, 4 * GiB);
	for (unsigned int i = 0; i < MEMBLOCK_MAX_REGIONS - 1; i++)
		memblock_add(&mb, i * 2 * MiB, MiB);
	memblock_add(&mb, 1 * GiB, 64 * MiB);
	memblock_remove(&mb, 1 * GiB + 8 * MiB, 4096);
	KT_EXPECT_EQ(t, mb.memory.cnt, MEMBLOCK_MAX_REGIONS);
	KT_EXPECT_EQ(t, memblock_nid(&mb, 1 * GiB + 8 * MiB), -1);
	KT_EXPECT_EQ(t, memblock_nid(&mb, 1 * GiB + 8 * MiB - 4096), 0);
	KT_EXPECT_EQ(t, memblock_nid(&mb, 1 * GiB + 32 * MiB), -1);
	KT_EXPECT_TRUE(t, host_console_contains("memblock: memory table full, cannot split "
						"[0x40000000-0x44000000) around [0x40800000-0x40801000): "
						"[0x40801000-0x44000000) ignored too"));
}

/* ---- CPU numbering (kernel/smp.c) ---- */

/*
 * smp.maxcpus above MAX_CPUS, and an MADT of MAX_CPUS CPUs that does not list the boot CPU:
 * with the boot CPU, one more than the arrays hold. Expected: MAX_CPUS numbered, the boot
 * CPU first, the one left out said (apic_ids[] is exactly MAX_CPUS long: ASan sees more).
 */
static void smp_number_cpus_maxcpus_above_max_cpus(struct ktest *t)
{
	static struct acpi_cpu cpus[MAX_CPUS];
	static u32 ids[MAX_CPUS];
	static u8 lints[MAX_CPUS];
	struct acpi_madt_info madt = { .cpus = cpus, .max_cpus = MAX_CPUS, .nr_cpus = MAX_CPUS };

	for (u32 i = 0; i < MAX_CPUS; i++)
		cpus[i] = (struct acpi_cpu){ .apic_id = 1 + i, .uid = i, .from_x2apic_entry = true };
	cmdline_init("smp.maxcpus=4096");
	KT_EXPECT_EQ(t, smp_number_cpus(&madt, 0, 0xfffffffeu, ids, lints), (unsigned int)MAX_CPUS);
	KT_EXPECT_EQ(t, ids[0], 0u);
	KT_EXPECT_EQ(t, ids[MAX_CPUS - 1], (u32)MAX_CPUS - 1);
	KT_EXPECT_TRUE(t, host_console_contains("smp: 1 CPUs not started: at most 1024 "
						"(smp.maxcpus=4096, MAX_CPUS 1024)"));
	cmdline_init("smp.maxcpus=2");
	KT_EXPECT_EQ(t, smp_number_cpus(&madt, 0, 0xfffffffeu, ids, lints), 2u);
	cmdline_init("smp.maxcpus=1024");
}

/* ---- the loader's memory map (kernel/multiboot.c) ---- */

/* A multiboot2 information block with one memory map tag of n entries (24 bytes each). */
static size_t mbi_with_map(u8 *mbi, const struct mem_region *map, unsigned int n)
{
	u32 size = 16 + 24 * n, total = 8 + ALIGN_UP(size, 8u) + 8;

	memset(mbi, 0, total);
	put32(mbi, total);
	put32(mbi + 8, 6);
	put32(mbi + 12, size);
	put32(mbi + 16, 24);
	for (unsigned int i = 0; i < n; i++) {
		put64(mbi + 24 + 24 * i, map[i].base);
		put64(mbi + 32 + 24 * i, map[i].length);
		put32(mbi + 40 + 24 * i, map[i].type);
	}
	return total;
}

/*
 * 300 entries, more than boot_info keeps: 200 of usable RAM, 2 MiB each end to end, then
 * 100 reserved pages inside them. Expected: every reservation is kept (the last usable
 * entries give way to them), the usable RAM left out is counted, mm_init() says what was
 * ignored, and no reserved page is RAM.
 */
static void multiboot_map_past_max_keeps_reservations(struct ktest *t)
{
	static struct mem_region map[300];
	static u8 mbi[16 + 24 * 300 + 16];
	static struct boot_info bi;
	unsigned int reserved = 0;
	const char *err;

	for (unsigned int i = 0; i < 200; i++)
		map[i] = (struct mem_region){ 256 * MiB + i * 2 * MiB, 2 * MiB, MEM_USABLE };
	for (unsigned int i = 0; i < 100; i++)
		map[200 + i] = (struct mem_region){ 256 * MiB + i * 4 * MiB, 4096, MEM_RESERVED };
	memset(&bi, 0, sizeof(bi));
	KT_ASSERT_EQ(t, multiboot2_parse(mbi, mbi_with_map(mbi, map, 300), &bi, &err), 0);
	KT_EXPECT_EQ(t, bi.nr_mmap, (unsigned int)BOOT_MMAP_MAX);
	KT_EXPECT_EQ(t, bi.nr_mmap_dropped, 300u - BOOT_MMAP_MAX);
	KT_EXPECT_EQ(t, bi.nr_mmap_dropped_reserved, 0u);
	KT_EXPECT_EQ(t, bi.mmap_dropped_usable, (u64)(300 - BOOT_MMAP_MAX) * 2 * MiB);
	for (unsigned int i = 0; i < bi.nr_mmap; i++)
		reserved += bi.mmap[i].type == MEM_RESERVED;
	KT_EXPECT_EQ(t, reserved, 100u);
	KT_ASSERT_EQ(t, mm_init(&bi), 0);
	KT_EXPECT_TRUE(t, host_console_contains("memblock: the loader's memory map has 44 entries "
						"more than the 256 kept: 90112 KiB of usable RAM "
						"in them ignored\n"));
	for (unsigned int i = 0; i < 100; i++)
		KT_EXPECT_EQ(t, memblock_nid(mm_node()->mb, 256 * MiB + i * 4 * MiB), -1);
	KT_EXPECT_EQ(t, memblock_nid(mm_node()->mb, 256 * MiB + 4096), 0);
	pgdat_destroy(mm_node());
}

/* An empty memory map: mm_init() fails, and says why (kmain then stops the boot). */
static void mm_init_no_memory_says_why(struct ktest *t)
{
	static struct boot_info bi;

	memset(&bi, 0, sizeof(bi));
	KT_EXPECT_NE(t, mm_init(&bi), 0);
	KT_EXPECT_TRUE(t, host_console_contains("mm: no memory below 0x100000000 for the per-CPU "
						"arrays"));
}

/* Device registers a firmware table places (the MADT's LAPIC, the HPET): never in usable
 * RAM, aligned, inside the direct map; 0xfee00000 on a PC map is fine. */
static void boot_mmio_problem_refuses_ram(struct ktest *t)
{
	static struct boot_info bi;

	memset(&bi, 0, sizeof(bi));
	bi.mmap[0] = (struct mem_region){ 0, 0x9fc00, MEM_USABLE };
	bi.mmap[1] = (struct mem_region){ 1 * MiB, 2 * GiB - 1 * MiB, MEM_USABLE };
	bi.mmap[2] = (struct mem_region){ 0xfee00000, 0x1000, MEM_RESERVED };
	bi.nr_mmap = 3;
	KT_EXPECT_NULL(t, boot_mmio_problem(&bi, 0xfee00000, 4096, 4 * GiB));
	KT_EXPECT_NULL(t, boot_mmio_problem(&bi, 0xfed00000, 1024, 4 * GiB));
	KT_EXPECT_STREQ(t, boot_mmio_problem(&bi, 16 * MiB, 4096, 4 * GiB), "in usable RAM");
	KT_EXPECT_STREQ(t, boot_mmio_problem(&bi, 0x9f000, 4096, 4 * GiB), "in usable RAM");
	KT_EXPECT_STREQ(t, boot_mmio_problem(&bi, 0xfee00800, 4096, 4 * GiB), "not aligned");
	KT_EXPECT_STREQ(t, boot_mmio_problem(&bi, 8 * GiB, 4096, 4 * GiB),
			"beyond the boot direct map");
	KT_EXPECT_STREQ(t, boot_mmio_problem(&bi, ~0ull & ~0xfffull, 4096, ~0ull),
			"beyond the boot direct map");
}

/* A page for the kernel's own use before memblock (the AP trampoline): usable RAM in no
 * other entry; a reservation that wraps past 2^64 still covers everything from its base. */
static void boot_ram_is_free_wrapping_reservation(struct ktest *t)
{
	static struct boot_info bi;

	memset(&bi, 0, sizeof(bi));
	bi.mmap[0] = (struct mem_region){ 0, 0xa0000, MEM_USABLE };
	bi.mmap[1] = (struct mem_region){ 0x90000, ~0ull - 0x1000, MEM_RESERVED };	/* wraps */
	bi.nr_mmap = 2;
	KT_EXPECT_TRUE(t, boot_ram_is_free(&bi, 0x8f000, 4096));
	KT_EXPECT_FALSE(t, boot_ram_is_free(&bi, 0x90000, 4096));
	KT_EXPECT_FALSE(t, boot_ram_is_free(&bi, 0x9f000, 4096));
	bi.mbi_phys = 0x8f800;
	bi.mbi_size = 0x100;
	KT_EXPECT_FALSE(t, boot_ram_is_free(&bi, 0x8f000, 4096));
}

static const struct ktest_case boot_input_cases[] = {
	KTEST_CASE(scnprintf_append_stays_in_buffer),
	KTEST_CASE(numa_print_nodes_long_line_bounded),
	KTEST_CASE(numa_srat_range_listed_twice_counted_once),
	KTEST_CASE(numa_srat_ranges_of_a_node_merged),
	KTEST_CASE(numa_srat_boundary_inside_a_page_said),
	KTEST_CASE(sections_of_one_node_table_full_ends),
	KTEST_CASE(memblock_remove_table_full_removes_more),
	KTEST_CASE(smp_number_cpus_maxcpus_above_max_cpus),
	KTEST_CASE(multiboot_map_past_max_keeps_reservations),
	KTEST_CASE(mm_init_no_memory_says_why),
	KTEST_CASE(boot_mmio_problem_refuses_ram),
	KTEST_CASE(boot_ram_is_free_wrapping_reservation),
};
KTEST_SUITE(boot_input, boot_input_cases);
