/*
 * libFuzzer target for the boot's firmware input through the code that consumes it, not just
 * the parsers (acpi_fuzz.c, acpi_numa_fuzz.c and multiboot_fuzz.c do those). The input is a
 * small program (the encoding is below) that generates what a boot loader and a firmware
 * hand over: a multiboot2 information block (memory map, command line, the RSDP) and ACPI
 * tables (MADT, SRAT, SLIT, HPET), every checksum right unless the program damages a table.
 * Then kmain's own steps run on the host shim, in kmain's order: multiboot2_parse(),
 * cmdline_fit_boot(), the command line's numa= and smp.maxcpus=, numa_init() (node setup and
 * its printout), acpi_parse_madt() and smp_number_cpus() (CPU enumeration), mm_init()
 * (memblock, the nodes' RAM, the section-to-node split, zones) and numa_cpus_init().
 *
 * Besides ASan, UBSan and libFuzzer's -timeout (a boot that never ends), each input must
 * keep these promises, whatever the tables say (check_*() below; a broken one prints
 * "boot_fuzz: <promise>: <what>" and the console, and aborts):
 *  - RAM: every page of usable RAM the loader's map gives is in a node, or a line that
 *    says it is dropped ("ignored", "not used", "cannot") covers it (its range, or KiB or
 *    MiB figures); no node holds a page the map does not give as usable RAM; mm_init()
 *    fails only with a line that says why;
 *  - nodes: every memblock region is in a node below nr_node_ids(), a memory section's RAM
 *    is of one node, the zones count exactly memblock's RAM; a topology from the SRAT gets
 *    one printed line per node, whose MiB and distances are the topology's;
 *  - CPUs: at most MAX_CPUS numbered (arrays of exactly MAX_CPUS: ASan sees one more), the
 *    boot CPU first, no APIC ID twice, each from the MADT; every CPU's node below
 *    nr_node_ids();
 *  - command line: what is kept is the loader's line cut at the end of a word, the longest
 *    such cut that fits, and a cut is said in exactly one line;
 *  - rejections: a rejected SRAT or SLIT is exactly one line that names the table, and the
 *    machine is then one node.
 *
 * Encoding (little-endian). Four header bytes: flags (bit 0: the CPU is in x2APIC mode; bit 1:
 * ACPI 2.0, an XSDT; bit 2: no ACPI tag from the loader; bit 3: SRAT revision 1, else 3),
 * then the boot CPU's APIC ID (24 bits). Then records, an op byte and its operands; a
 * record cut short by the end of the input reads zeros. An address or length is 5 bytes,
 * s and v: v << (s & 31), plus 0x400 if s & 0x20 (not page aligned), negated (counted
 * down from 2^64) if s & 0x40, with bit 60 set if s & 0x80 (far up, 16 hex digits).
 *   0 map entry:   base, length, type, count, gap (u16 pages): count + 1 entries, each gap
 *                  pages after the previous one's end
 *   1 SRAT memory: base, length, domain, flags, count, gap (an address: entries may spread
 *                  over the whole address space), domain step (entry i is in domain +
 *                  i * step mod 8: the nodes a machine has)
 *   2 SRAT CPU:    x2APIC (bit 0), APIC ID (u32), domain, flags, count (u16), ID step, domain
 *                  step (as above)
 *   3 SLIT:        n (% 17 localities), mode, then the matrix: mode bit 0, its upper
 *                  triangle (mirrored, 10 on the diagonal); else all n * n bytes
 *   4 MADT CPU:    x2APIC (bit 0), APIC ID (u32), flags, count (u16), ID step
 *   5 MADT other:  kind, value (u64): 0 the header's LAPIC address, 1 a LAPIC address
 *                  override entry, 2 an NMI entry (UID, LINT, x2APIC in bytes 0-2), 3 flags
 *   6 words:       count, length, the word's bytes: count + 1 copies, space separated
 *   7 option:      which, value (u32): numa=off/on/0/1/yes/x, or smp.maxcpus=value
 *   8 damage:      table (RSDP, RSDT/XSDT, MADT, SRAT, SLIT, HPET), offset (u16), byte, bit
 *                  0: fix the checksum after
 *   9 HPET:        the HPET table, its base address
 *  10 SRAT by map: nodes (% 8 + 1), flags: the usable entries of the map so far shared out in
 *                  order, the first ones to domain 0, the next to 1, ...; an SRAT range per
 *                  domain from its first entry's start to its last one's end (as firmware
 *                  that gives each node a share of the RAM it found)
 */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include "kernel/acpi.h"
#include "kernel/bootinfo.h"
#include "kernel/cmdline.h"
#include "kernel/numa.h"
#include "kernel/panic.h"
#include "kernel/printk.h"
#include "kernel/smp.h"
#include "mm/arch_mm.h"
#include "mm/memblock.h"
#include "mm/mm.h"
#include "mm/mm_test.h"
#include "mm/mmzone.h"
#include "tests/host/shim/shim.h"

#define HOST_PHYS (8ull << 30)		/* all of it below 4 GiB is "mappable" ACPI space */
#define ACPI_AT 0x80000ull		/* where the tables go, up to ACPI_END */
#define ACPI_END 0xff000ull
#define MAX_ENTRIES 2200		/* of a table; more are not generated */
#define MAP_MAX 600			/* loader map entries generated (the kernel keeps 256) */
#define LINE_MAX_GEN 9000		/* command line bytes generated */
#define U64_MAX (~0ull)

enum { T_RSDP, T_ROOT, T_MADT, T_SRAT, T_SLIT, T_HPET, NR_TABLES };

/* A table being generated: its bytes (header first) and where it goes. */
struct table {
	u8 *b;
	u32 len, cap;
	u64 pa;
	bool present;
};

/* Everything one input generates. */
struct gen {
	const u8 *p;
	size_t n;
	u8 flags;
	u32 bsp;
	struct table t[NR_TABLES];
	struct mem_region map[MAP_MAX];
	unsigned int nr_map;
	char line[LINE_MAX_GEN + 1];	/* the loader's command line, as generated */
	size_t line_len;
	struct { u8 table, val, fix; u16 off; } damage[16];
	unsigned int nr_damage;
};

static struct gen g;

static u64 clamped_end(u64 base, u64 len)
{
	return len > U64_MAX - base ? U64_MAX : base + len;
}

/* ---- reading the program ---- */

static u64 take(unsigned int bytes)
{
	u64 v = 0;

	for (unsigned int i = 0; i < bytes; i++, g.n ? (g.p++, g.n--) : 0)
		v |= (u64)(g.n ? *g.p : 0) << (8 * i);
	return v;
}

static u64 take_addr(void)
{
	u8 s = (u8)take(1);
	u64 v = take(4) << (s & 31);

	v += (s & 0x20) ? 0x400 : 0;
	v = (s & 0x40) ? 0 - v : v;
	return (s & 0x80) ? v | 1ull << 60 : v;
}

/* ---- building tables ---- */

static void put(struct table *t, const void *src, u32 len)
{
	if (t->len + len > t->cap) {
		t->cap = MAX(2 * t->cap, t->len + len + 64);
		t->b = realloc(t->b, t->cap);
	}
	memcpy(t->b + t->len, src, len);
	t->len += len;
}

static void put32(u8 *p, u32 v) { memcpy(p, &v, 4); }
static void put64(u8 *p, u64 v) { memcpy(p, &v, 8); }

/* A fresh table: the standard 36-byte header (length and checksum set by finish()), then
 * fixed bytes of the table's own (zeroed). */
static void begin(struct table *t, const char *sig, u8 rev, u32 fixed)
{
	u8 h[64] = { 0 };

	t->len = 0;
	t->present = true;
	memcpy(h, sig, 4);
	h[8] = rev;
	memcpy(h + 10, "FUZZ  ", 6);
	put(t, h, fixed);
}

static void fix_checksum(u8 *b, u32 len, u32 at)
{
	u8 sum = 0;

	b[at] = 0;
	for (u32 i = 0; i < len; i++)
		sum += b[i];
	b[at] = (u8)-sum;
}

static unsigned int entries(const struct table *t, u32 fixed, u32 esz)
{
	return t->present ? (t->len - fixed) / esz : 0;
}

static void op_map(void)
{
	u64 base = take_addr(), len = take_addr();
	u32 type = (u32)take(1);
	unsigned int count = (unsigned int)take(1) + 1;
	u64 gap = take(2) << 12;

	for (unsigned int i = 0; i < count && g.nr_map < MAP_MAX; i++) {
		g.map[g.nr_map++] = (struct mem_region){ base, len, type };
		base += len + gap;
	}
}

static void op_srat_mem(void)
{
	u64 base = take_addr(), len = take_addr();
	u8 dom = (u8)take(1), flags = (u8)take(1);
	unsigned int count = (unsigned int)take(1) + 1;
	u64 gap = take_addr();
	u8 step = (u8)take(1);

	if (!g.t[T_SRAT].present)
		begin(&g.t[T_SRAT], "SRAT", (g.flags & 8) ? 1 : 3, 48);
	for (unsigned int i = 0; i < count && entries(&g.t[T_SRAT], 48, 16) < MAX_ENTRIES; i++) {
		u8 e[40] = { 1, 40 };

		put32(e + 2, dom + (i * step) % ACPI_NUMA_MAX_NODES);
		put64(e + 8, base);
		put64(e + 16, len);
		put32(e + 28, flags);
		put(&g.t[T_SRAT], e, sizeof(e));
		base += len + gap;
	}
}

static void op_srat_cpu(void)
{
	bool x2 = take(1) & 1;
	u32 id = (u32)take(4);
	u8 dom = (u8)take(1), flags = (u8)take(1);
	unsigned int count = (unsigned int)take(2) % MAX_ENTRIES + 1;
	u8 id_step = (u8)take(1), dom_step = (u8)take(1);

	if (!g.t[T_SRAT].present)
		begin(&g.t[T_SRAT], "SRAT", (g.flags & 8) ? 1 : 3, 48);
	for (unsigned int i = 0; i < count && entries(&g.t[T_SRAT], 48, 16) < MAX_ENTRIES; i++) {
		u8 e[24] = { x2 ? 2 : 0, x2 ? 24 : 16 };
		u32 pxm = dom + (i * dom_step) % ACPI_NUMA_MAX_NODES, apic = id + i * id_step;

		if (x2) {
			put32(e + 4, pxm);
			put32(e + 8, apic);
			put32(e + 12, flags);
		} else {
			e[2] = (u8)pxm;
			e[3] = (u8)apic;
			put32(e + 4, flags);
		}
		put(&g.t[T_SRAT], e, e[1]);
	}
}

static void op_slit(void)
{
	unsigned int n = (unsigned int)take(1) % 17;
	u8 mode = (u8)take(1), m[16 * 16];

	for (unsigned int a = 0; a < n; a++)
		for (unsigned int b = 0; b < n; b++) {
			if (!(mode & 1))
				m[a * n + b] = (u8)take(1);
			else if (a == b)
				m[a * n + b] = 10;
			else if (b > a)
				m[a * n + b] = (u8)take(1);
			else
				m[a * n + b] = m[b * n + a];
		}
	begin(&g.t[T_SLIT], "SLIT", 1, 44);
	put64(g.t[T_SLIT].b + 36, n);
	put(&g.t[T_SLIT], m, n * n);
}

static void begin_madt(void)
{
	if (!g.t[T_MADT].present) {
		begin(&g.t[T_MADT], "APIC", 3, 44);
		put32(g.t[T_MADT].b + 36, 0xfee00000u);
		put32(g.t[T_MADT].b + 40, 1);
	}
}

static void op_madt_cpu(void)
{
	bool x2 = take(1) & 1;
	u32 id = (u32)take(4);
	u8 flags = (u8)take(1);
	unsigned int count = (unsigned int)take(2) % MAX_ENTRIES + 1;
	u8 step = (u8)take(1);

	begin_madt();
	for (unsigned int i = 0; i < count && entries(&g.t[T_MADT], 44, 8) < MAX_ENTRIES; i++) {
		u8 e[16] = { x2 ? 9 : 0, x2 ? 16 : 8 };
		u32 uid = entries(&g.t[T_MADT], 44, 8), apic = id + i * step;

		if (x2) {
			put32(e + 4, apic);
			put32(e + 8, flags);
			put32(e + 12, uid);
		} else {
			e[2] = (u8)uid;
			e[3] = (u8)apic;
			put32(e + 4, flags);
		}
		put(&g.t[T_MADT], e, e[1]);
	}
}

static void op_madt_other(void)
{
	u8 kind = (u8)take(1);
	u64 v = take(8);
	u8 e[12] = { 0 };

	begin_madt();
	switch (kind % 4) {
	case 0:
		put32(g.t[T_MADT].b + 36, (u32)v);
		break;
	case 1:
		e[0] = 5;
		e[1] = 12;
		put64(e + 4, v);
		put(&g.t[T_MADT], e, 12);
		break;
	case 2:
		if ((v >> 16) & 1) {
			e[0] = 10;
			e[1] = 12;
			put32(e + 4, (u8)v);
			e[8] = (u8)(v >> 8);
			put(&g.t[T_MADT], e, 12);
		} else {
			e[0] = 4;
			e[1] = 6;
			e[2] = (u8)v;
			e[5] = (u8)(v >> 8);
			put(&g.t[T_MADT], e, 6);
		}
		break;
	default:
		put32(g.t[T_MADT].b + 40, (u32)v);
		break;
	}
}

static void add_word(const char *w, size_t len)
{
	if (g.line_len && g.line_len < LINE_MAX_GEN)
		g.line[g.line_len++] = ' ';
	len = MIN(len, LINE_MAX_GEN - g.line_len);
	memcpy(g.line + g.line_len, w, len);
	g.line_len += len;
	g.line[g.line_len] = '\0';
}

static void op_words(void)
{
	unsigned int count = (unsigned int)take(1) + 1, len = (unsigned int)take(1);
	char w[256];

	for (unsigned int i = 0; i < len; i++)
		w[i] = (char)take(1);
	for (unsigned int i = 0; i < count; i++)
		add_word(w, len);
}

static void op_option(void)
{
	static const char *const numa[] = { "off", "on", "0", "1", "yes", "x" };
	u8 which = (u8)take(1);
	u32 v = (u32)take(4);
	char w[40];

	if (which & 1)
		snprintf(w, sizeof(w), "smp.maxcpus=%u", v);
	else
		snprintf(w, sizeof(w), "numa=%s", numa[v % 6]);
	add_word(w, strlen(w));
}

static void op_damage(void)
{
	u8 table = (u8)take(1);
	u16 off = (u16)take(2);
	u8 val = (u8)take(1), fix = (u8)take(1);

	if (g.nr_damage < ARRAY_SIZE(g.damage))
		g.damage[g.nr_damage++] = (typeof(g.damage[0])){ table % NR_TABLES, val, fix, off };
}

static void op_hpet(void)
{
	u64 base = take_addr();

	begin(&g.t[T_HPET], "HPET", 1, 56);
	put64(g.t[T_HPET].b + 44, base);	/* GAS at 40: memory space, 64 bits, the address */
	g.t[T_HPET].b[41] = 64;
}

static void op_srat_by_map(void)
{
	unsigned int nodes = (unsigned int)take(1) % ACPI_NUMA_MAX_NODES + 1, usable = 0, k = 0;
	u8 flags = (u8)take(1);
	u64 lo[ACPI_NUMA_MAX_NODES], hi[ACPI_NUMA_MAX_NODES] = { 0 };

	for (unsigned int i = 0; i < g.nr_map; i++)
		usable += g.map[i].type == MEM_USABLE;
	for (unsigned int i = 0; i < g.nr_map; i++) {
		unsigned int n;

		if (g.map[i].type != MEM_USABLE)
			continue;
		n = k++ * nodes / usable;
		lo[n] = hi[n] ? MIN(lo[n], g.map[i].base) : g.map[i].base;
		hi[n] = MAX(hi[n], clamped_end(g.map[i].base, g.map[i].length));
	}
	if (!g.t[T_SRAT].present)
		begin(&g.t[T_SRAT], "SRAT", (g.flags & 8) ? 1 : 3, 48);
	for (unsigned int n = 0; n < nodes; n++) {
		u8 e[40] = { 1, 40 };

		if (hi[n] <= lo[n])
			continue;
		put32(e + 2, n);
		put64(e + 8, lo[n]);
		put64(e + 16, hi[n] - lo[n]);
		put32(e + 28, flags);
		put(&g.t[T_SRAT], e, sizeof(e));
	}
}

static void generate(const u8 *data, size_t size)
{
	for (unsigned int i = 0; i < NR_TABLES; i++)
		g.t[i].present = false;
	g.p = data;
	g.n = size;
	g.nr_map = g.line_len = g.nr_damage = 0;
	g.line[0] = '\0';
	g.flags = (u8)take(1);
	g.bsp = (u32)take(3);
	while (g.n) {
		static void (*const ops[])(void) = { op_map, op_srat_mem, op_srat_cpu, op_slit,
						     op_madt_cpu, op_madt_other, op_words,
						     op_option, op_damage, op_hpet,
						     op_srat_by_map };

		ops[take(1) % ARRAY_SIZE(ops)]();
	}
}

/* ---- laying the tables out in physical memory, and the multiboot2 information ---- */

static void finish_tables(void)
{
	struct table *root = &g.t[T_ROOT], *rsdp = &g.t[T_RSDP];
	bool xsdt = g.flags & 2;
	u64 pa = ACPI_AT;

	begin(root, xsdt ? "XSDT" : "RSDT", 1, 36);
	for (unsigned int i = 0; i < NR_TABLES; i++)
		g.t[i].pa = 0;
	for (unsigned int i = T_MADT; i < NR_TABLES; i++) {
		u8 ptr[8] = { 0 };

		if (!g.t[i].present || pa + g.t[i].len > ACPI_END - 0x4000)
			continue;
		g.t[i].pa = pa;
		pa = ALIGN_UP(pa + g.t[i].len, 16);
		put64(ptr, g.t[i].pa);
		put(root, ptr, xsdt ? 8 : 4);
	}
	root->pa = pa;
	begin(rsdp, "RSD ", 0, xsdt ? 36 : 20);
	memcpy(rsdp->b, "RSD PTR ", 8);		/* then the checksum, the OEM ID */
	memcpy(rsdp->b + 9, "FUZZ  ", 6);
	rsdp->b[15] = xsdt ? 2 : 0;
	put32(rsdp->b + 16, (u32)root->pa);
	for (unsigned int i = T_ROOT; i < NR_TABLES; i++) {
		struct table *t = &g.t[i];

		if (t->present) {
			put32(t->b + 4, t->len);
			fix_checksum(t->b, t->len, 9);
		}
	}
	if (xsdt) {
		put32(rsdp->b + 20, 36);
		put64(rsdp->b + 24, root->pa);
	}
	fix_checksum(rsdp->b, 20, 8);
	if (xsdt)
		fix_checksum(rsdp->b, 36, 32);
	for (unsigned int i = 0; i < g.nr_damage; i++) {
		struct table *t = &g.t[g.damage[i].table];

		if (!t->present || !t->len)
			continue;
		t->b[g.damage[i].off % t->len] = g.damage[i].val;
		if (g.damage[i].fix & 1)
			fix_checksum(t->b, i == T_RSDP ? 20 : t->len, i == T_RSDP ? 8 : 9);
	}
	for (unsigned int i = T_ROOT; i < NR_TABLES; i++)
		if (g.t[i].present && g.t[i].pa)
			memcpy(arch_phys_to_virt(g.t[i].pa), g.t[i].b, g.t[i].len);
}

static void tag(u8 *mbi, size_t *off, u32 type, const void *body, u32 len)
{
	u32 size = 8 + len;

	memcpy(mbi + *off, &type, 4);
	memcpy(mbi + *off + 4, &size, 4);
	if (len)
		memcpy(mbi + *off + 8, body, len);
	*off += ALIGN_UP((size_t)size, (size_t)8);
}

/* The multiboot2 information block, exactly its size on the heap (ASan sees overreads). */
static u8 *build_mbi(size_t *size)
{
	size_t cap = 64 + g.line_len + 16 + 16 + 24 * g.nr_map + 64, off = 8;
	u8 *mbi = calloc(1, cap), *mm = malloc(8 + 24 * g.nr_map);
	u32 total;

	tag(mbi, &off, 1, g.line, (u32)g.line_len + 1);
	put32(mm, 24);
	put32(mm + 4, 0);
	for (unsigned int i = 0; i < g.nr_map; i++) {
		memset(mm + 8 + 24 * i, 0, 24);
		put64(mm + 8 + 24 * i, g.map[i].base);
		put64(mm + 16 + 24 * i, g.map[i].length);
		put32(mm + 24 + 24 * i, g.map[i].type);
	}
	tag(mbi, &off, 6, mm, 8 + 24 * g.nr_map);
	if (!(g.flags & 4))
		tag(mbi, &off, (g.flags & 2) ? 15 : 14, g.t[T_RSDP].b, (g.flags & 2) ? 36 : 20);
	tag(mbi, &off, 0, NULL, 0);
	total = (u32)off;
	memcpy(mbi, &total, 4);
	free(mm);
	*size = off;
	return realloc(mbi, off);
}

/* ---- the promises ---- */

/*
 * Keep-going mode (BOOT_FUZZ_FOUND=DIR; make fuzz sets it): each check that fails is written
 * to DIR once (its message, the console, the input, the seconds since BOOT_FUZZ_T0, a line
 * in DIR/found.log) and fuzzing goes on with the next input. Otherwise a broken promise
 * aborts, and libFuzzer keeps the input as a crash.
 */
static const char *found_dir;
static bool machine_up;			/* mm_init() registered the kernel's machine */
static unsigned long taints;		/* WARN_ONs before this input */
static jmp_buf next_input;
static const u8 *cur_data;
static size_t cur_size;

static void write_file(const char *path, const char *mode, const void *p, size_t n)
{
	FILE *f = fopen(path, mode);

	if (f) {
		fwrite(p, 1, n, f);
		fclose(f);
	}
}

/*
 * Record a finding of check `key`, then go on to the next input: each check's first, then at
 * most one a minute (other causes of the same broken promise get their chance), 20 in all.
 * The files themselves are the count, so that libFuzzer's -fork jobs share it.
 */
static void keep_going(const char *key, const char *msg)
{
	char path[512], line[700];
	unsigned long hash = 5381;
	unsigned int n = 0;
	size_t dropped;
	const char *console = host_console_text(&dropped), *t0 = getenv("BOOT_FUZZ_T0");
	long now = (long)time(NULL), secs = t0 ? now - atol(t0) : -1, last = 0;
	struct stat st;

	for (const char *c = key; *c; c++)
		hash = hash * 33 + (unsigned char)*c;
	hash &= 0xffffffffu;
	for (;; n++) {
		snprintf(path, sizeof(path), "%s/%08lx-%02u.txt", found_dir, hash, n);
		if (stat(path, &st))
			break;
		last = (long)st.st_mtime;
	}
	if (n >= 20 || (n && now - last < 60))
		longjmp(next_input, 1);
	n = (unsigned int)snprintf(line, sizeof(line), "%lds %08lx %s\n", secs, hash, msg);
	write_file(path, "w", line, n);
	write_file(path, "a", console, strlen(console));
	strcpy(path + strlen(path) - 3, "input");
	write_file(path, "w", cur_data, cur_size);
	snprintf(path, sizeof(path), "%s/found.log", found_dir);
	write_file(path, "a", line, n);
	fprintf(stderr, "%s", line);
	longjmp(next_input, 1);
}

static void broken(const char *promise, const char *fmt, ...) __printf(2, 3);

static void broken(const char *promise, const char *fmt, ...)
{
	char msg[600], key[300];
	va_list ap;
	size_t dropped;
	int n = snprintf(msg, sizeof(msg), "boot_fuzz: %s: ", promise);

	va_start(ap, fmt);
	vsnprintf(msg + n, sizeof(msg) - (size_t)n, fmt, ap);
	va_end(ap);
	if (found_dir) {
		snprintf(key, sizeof(key), "%s: %s", promise, fmt);
		keep_going(key, msg);
	}
	fprintf(stderr, "--- console ---\n%s--- end of console ---\n%s\n",
		host_console_text(&dropped), msg);
	abort();
}

/* Lines of the console containing s. */
static unsigned int lines_with(const char *s)
{
	size_t dropped;
	const char *p = host_console_text(&dropped);
	unsigned int n = 0;

	while ((p = strstr(p, s))) {
		n++;
		p = strchr(p, '\n');
		if (!p)
			break;
	}
	return n;
}

/* Intervals: the reference model of the RAM the map gives (memblock.h's rules: usable RAM
 * shrunk inward to whole pages, anything else taking every page it touches, end clamped at
 * 2^64), as a sorted list of disjoint [s, e). */
struct ivl { u64 s, e; };
struct ivls { struct ivl v[2 * MAP_MAX + 8]; unsigned int n; };

static void ivl_add(struct ivls *r, u64 s, u64 e)
{
	struct ivls out = { .n = 0 };
	unsigned int i = 0;

	if (s >= e)
		return;
	while (i < r->n && r->v[i].e < s)
		out.v[out.n++] = r->v[i++];
	while (i < r->n && r->v[i].s <= e) {
		s = MIN(s, r->v[i].s);
		e = MAX(e, r->v[i].e);
		i++;
	}
	out.v[out.n++] = (struct ivl){ s, e };
	while (i < r->n)
		out.v[out.n++] = r->v[i++];
	*r = out;
}

static void ivl_cut(struct ivls *r, u64 s, u64 e)
{
	struct ivls out = { .n = 0 };

	for (unsigned int i = 0; i < r->n; i++) {
		if (r->v[i].e <= s || r->v[i].s >= e) {
			out.v[out.n++] = r->v[i];
			continue;
		}
		if (r->v[i].s < s)
			out.v[out.n++] = (struct ivl){ r->v[i].s, s };
		if (r->v[i].e > e)
			out.v[out.n++] = (struct ivl){ e, r->v[i].e };
	}
	*r = out;
}

static u64 ivl_bytes(const struct ivls *r, u64 lo, u64 hi)
{
	u64 n = 0;

	for (unsigned int i = 0; i < r->n; i++)
		if (MIN(r->v[i].e, hi) > MAX(r->v[i].s, lo))
			n += MIN(r->v[i].e, hi) - MAX(r->v[i].s, lo);
	return n;
}

static void model_ram(struct ivls *ram, const struct mem_region *map, unsigned int n)
{
	ram->n = 0;
	for (unsigned int i = 0; i < n; i++) {
		const struct mem_region *m = &map[i];

		if (m->type == MEM_USABLE && m->length && m->base <= U64_MAX - (PAGE_SIZE - 1))
			ivl_add(ram, ALIGN_UP(m->base, PAGE_SIZE),
				ALIGN_DOWN(clamped_end(m->base, m->length), PAGE_SIZE));
	}
	for (unsigned int i = 0; i < n; i++) {
		const struct mem_region *m = &map[i];
		u64 e = clamped_end(m->base, m->length);

		if (m->type != MEM_USABLE && m->length)
			ivl_cut(ram, ALIGN_DOWN(m->base, PAGE_SIZE),
				e > U64_MAX - (PAGE_SIZE - 1) ? U64_MAX : ALIGN_UP(e, PAGE_SIZE));
	}
}

static bool has_drop_word(const char *line, size_t len)
{
	static const char *const words[] = { "ignored", "not used", "cannot", "dropped" };
	char buf[600];

	len = MIN(len, sizeof(buf) - 1);
	memcpy(buf, line, len);
	buf[len] = '\0';
	for (unsigned int i = 0; i < ARRAY_SIZE(words); i++)
		if (strstr(buf, words[i]))
			return true;
	return false;
}

/* Bytes the console says were dropped: each "[0xA-0xB)" and "N KiB" or "N MiB" on a line
 * with a word that says so. Generous (a range said twice counts twice): a lower bound on
 * what must be found in the nodes, not an exact ledger. */
static u64 reported_drops(void)
{
	size_t dropped;
	const char *text = host_console_text(&dropped), *nl;
	u64 sum = 0;

	for (const char *l = text; *l; l = nl + 1) {
		unsigned long long a, b;
		const char *p;

		nl = strchr(l, '\n');
		if (!nl)
			break;
		if (!has_drop_word(l, (size_t)(nl - l)))
			continue;
		for (p = l; p < nl; p++) {
			u64 n = 0;

			if (p[0] == '[' && sscanf(p, "[0x%llx-0x%llx)", &a, &b) == 2 && b > a)
				n = b - a;
			else if (p > l && p[-1] == ' ' && sscanf(p, "%llu KiB", &a) == 1 &&
				 strstr(p, " KiB") && strstr(p, " KiB") < nl)
				n = a >= 1ull << 54 ? U64_MAX : a << 10;
			else if (p > l && p[-1] == ' ' && sscanf(p, "%llu MiB", &a) == 1 &&
				 strstr(p, " MiB") && strstr(p, " MiB") < nl)
				n = a >= 1ull << 44 ? U64_MAX : a << 20;
			sum = n > U64_MAX - sum ? U64_MAX : sum + n;
			while (p < nl && *p != ' ')
				p++;
		}
	}
	return sum;
}

/* RAM of a that is not in b, in bytes. */
static u64 ivl_minus(const struct ivls *a, const struct ivls *b)
{
	u64 n = 0;

	for (unsigned int i = 0; i < a->n; i++)
		n += a->v[i].e - a->v[i].s - ivl_bytes(b, a->v[i].s, a->v[i].e);
	return n;
}

/* The map as parsed (bi.mmap) against the loader's: RAM lost on the way is reported, and
 * no RAM is gained, unless the console says reservations were left out. */
static void check_parsed_map(const struct ivls *loader, const struct ivls *parsed)
{
	u64 lost = ivl_minus(loader, parsed), gained = ivl_minus(parsed, loader);

	if (lost > reported_drops())
		broken("map", "the parsed map lost %llu KiB of the loader's usable RAM, and the "
		       "console says %llu KiB were dropped", (unsigned long long)lost >> 10,
		       (unsigned long long)reported_drops() >> 10);
	if (gained && !lines_with("reservations"))
		broken("map", "the parsed map has %llu KiB of usable RAM the loader's map reserves",
		       (unsigned long long)gained >> 10);
}

/* The machine mm_init() built against the parsed map's RAM: see the header. */
static void check_ram(const struct ivls *ram, const struct mm_machine *m)
{
	const struct memblock *mb = m->node[0]->mb;
	u64 limit = MIN(arch_direct_map_max(), 1ull << MAX_PHYSMEM_BITS), in_nodes = 0, zones = 0;
	u64 want = ivl_bytes(ram, 0, limit), reported;

	for (unsigned int i = 0; i < mb->memory.cnt; i++) {
		const struct memblock_region *r = &mb->memory.regions[i], *p = r - 1;

		if (r->nid < 0 || r->nid >= (int)nr_node_ids())
			broken("nodes", "memblock region [0x%llx-0x%llx) is in node %d of %u",
			       (unsigned long long)r->base, (unsigned long long)(r->base + r->size),
			       r->nid, nr_node_ids());
		if (ivl_bytes(ram, r->base, r->base + r->size) != r->size)
			broken("RAM", "node %d holds [0x%llx-0x%llx), not all usable RAM in the map",
			       r->nid, (unsigned long long)r->base,
			       (unsigned long long)(r->base + r->size));
		if (i && p->nid != r->nid && (r->base >> SECTION_SIZE_BITS) ==
						 ((p->base + p->size - 1) >> SECTION_SIZE_BITS))
			broken("nodes", "section 0x%llx holds RAM of nodes %d and %d",
			       (unsigned long long)r->base >> SECTION_SIZE_BITS, p->nid, r->nid);
		in_nodes += r->size;
	}
	for (unsigned int nid = 0; nid < m->nr_nodes; nid++)
		for (int z = 0; z < MAX_NR_ZONES; z++)
			zones += (u64)m->node[nid]->node_zones[z].present_pages << PAGE_SHIFT;
	if (zones != in_nodes)
		broken("nodes", "the zones count %llu KiB, memblock %llu KiB",
		       (unsigned long long)zones >> 10, (unsigned long long)in_nodes >> 10);
	reported = reported_drops();
	if (want > in_nodes && want - in_nodes > reported)
		broken("RAM", "%llu KiB of the map's usable RAM is in no node, and the console "
		       "says %llu KiB were dropped", (unsigned long long)(want - in_nodes) >> 10,
		       (unsigned long long)reported >> 10);
}

/* A firmware topology is printed: one line per node, with its MiB and its distances. */
static void check_node_lines(void)
{
	size_t dropped;
	const char *text = host_console_text(&dropped);

	if (!numa_topology.from_firmware)
		return;
	for_each_node(nid) {
		char key[32], *p;
		unsigned long long mib, want = 0;

		snprintf(key, sizeof(key), "numa: node %d: ", nid);
		if (lines_with(key) < 1)
			broken("nodes", "no line '%s...'", key);
		p = strstr(text, key);
		for (unsigned int i = 0; i < numa_topology.nr_memblks; i++)
			if (numa_topology.memblks[i].nid == nid && !numa_topology.memblks[i].hotpluggable)
				want += numa_topology.memblks[i].size;
		if (sscanf(p + strlen(key), "%llu MiB", &mib) != 1 || mib != want >> 20)
			broken("nodes", "node %d's line gives %llu MiB, its SRAT ranges %llu", nid,
			       mib, want >> 20);
		p = strstr(p, "distances");
		if (!p || p > strchr(strstr(text, key), '\n'))
			broken("nodes", "node %d's line has no distances", nid);
		p += strlen("distances");
		for_each_node(to) {
			unsigned int d;
			int used;

			if (sscanf(p, " %u%n", &d, &used) != 1 || d != numa_topology.distance[nid][to])
				broken("nodes", "node %d's line: distance to node %d is not %u", nid,
				       to, numa_topology.distance[nid][to]);
			p += used;
		}
	}
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* What cmdline_fit_boot() kept of the loader's line L: L cut at the end of a word, said in
 * exactly one line if anything was dropped; all of L if it fits, else no shorter than the
 * longest whole-word start of L that leaves a byte to spare (the word ending exactly at
 * the limit may be dropped: the kernel cannot see the byte after it). */
static void check_cmdline(const char *kept)
{
	size_t len = strlen(kept), full = strnlen(g.line, g.line_len), best = 0;

	if (len > BOOT_CMDLINE_MAX - 1 || memcmp(kept, g.line, len))
		broken("command line", "what is kept (%zu bytes) is not the start of the loader's "
		       "line (%zu bytes)", len, full);
	for (size_t j = 1; j <= MIN(full, (size_t)BOOT_CMDLINE_MAX - 2); j++)
		if (!is_space(g.line[j - 1]) && (j == full || is_space(g.line[j])))
			best = j;
	if (full <= BOOT_CMDLINE_MAX - 1)
		best = full;
	if (len < best || (len < full && len && !is_space(g.line[len])))
		broken("command line", "kept %zu of %zu bytes, ending '%.20s', cut %s", len, full,
		       kept + (len > 20 ? len - 20 : 0), len < best ? "short of a whole word that "
		       "fits" : "in the middle of a word");
	if (lines_with("cmdline: the command line is") != (len < full))
		broken("command line", "kept %zu of %zu bytes and said so in %u lines (%s)", len,
		       full, lines_with("cmdline: the command line is"),
		       len < full ? "a cut is said once" : "nothing was cut");
}

/* The firmware's tables as numa.c and arch/x86_64/smp.c map them: below 4 GiB, direct. */
static const void *acpi_map_host(void *ctx, u64 pa, u64 len)
{
	return pa + len < pa || pa + len > (4ull << 30) ? NULL : arch_phys_to_virt(pa);
}

/* What numa_init() made of SRAT and SLIT the parser rejects: one line naming the table. */
static void check_numa_rejection(const struct boot_info *bi, bool numa_on)
{
	static struct acpi_numa_info info;
	static const char *const tables[] = { "SRAT", "SLIT", "RSDT", "XSDT", "RSDP" };
	size_t dropped;
	const char *text = host_console_text(&dropped), *l;
	int ret;

	if (!numa_on || !bi->rsdp_present)
		return;
	ret = acpi_parse_numa(bi->rsdp_copy, bi->rsdp_revision >= 2 ? ACPI_RSDP_V2_LEN :
			      ACPI_RSDP_V1_LEN, acpi_map_host, NULL, &info);
	if (ret == ACPI_OK || ret == ACPI_ERR_NO_TABLE)
		return;
	if (numa_topology.nr_nodes != 1 || lines_with("ignoring SRAT and SLIT") != 1)
		broken("rejection", "the SRAT/SLIT rejected ('%s') left %u nodes and %u lines",
		       info.error, numa_topology.nr_nodes, lines_with("ignoring SRAT and SLIT"));
	l = strstr(text, "ignoring SRAT and SLIT");
	while (l > text && l[-1] != '\n')
		l--;
	for (unsigned int i = 0; i < ARRAY_SIZE(tables); i++)
		if (strstr(l, tables[i]) && strstr(l, tables[i]) < strstr(l, "ignoring"))
			return;
	broken("rejection", "the line rejecting the SRAT/SLIT names no table");
}

/* smp_number_cpus()'s numbering of the MADT's CPUs (in arrays of exactly MAX_CPUS). */
static unsigned int check_cpus(const struct acpi_madt_info *madt, const u32 *ids)
{
	unsigned int n = nr_cpu_ids;

	if (n < 1 || n > MAX_CPUS)
		broken("CPUs", "%u CPUs numbered (MAX_CPUS %u)", n, MAX_CPUS);
	if (ids[0] != g.bsp)
		broken("CPUs", "CPU 0 has APIC ID %u, the boot CPU's is %u", ids[0], g.bsp);
	for (unsigned int c = 1; c < n; c++) {
		bool listed = false;

		for (unsigned int i = 0; i < madt->nr_cpus && !listed; i++)
			listed = madt->cpus[i].apic_id == ids[c];
		if (!listed || (!(g.flags & 1) && ids[c] > 0xfe))
			broken("CPUs", "CPU %u has APIC ID %u: %s", c, ids[c],
			       listed ? "above 254 without x2APIC" : "not in the MADT");
		for (unsigned int d = 0; d < c; d++)
			if (ids[d] == ids[c])
				broken("CPUs", "CPUs %u and %u both have APIC ID %u", d, c, ids[c]);
	}
	return n;
}

/* The queries arch code asks of the parsed map (the MADT's LAPIC address, the HPET's, the
 * AP trampoline's page): a device's registers are never in RAM, a free page always is. */
static void check_map_queries(const struct boot_info *bi, const struct acpi_madt_info *madt,
			      const struct ivls *ram)
{
	const struct { u64 pa, len; const char *what; } mmio[] = {
		{ madt->lapic_phys, PAGE_SIZE, "the MADT's LAPIC" },
		{ madt->clocks.hpet_phys, 1024, "the HPET" },
	};

	for (unsigned int i = 0; i < ARRAY_SIZE(mmio); i++)
		if (!boot_mmio_problem(bi, mmio[i].pa, mmio[i].len, 4ull << 30) &&
		    ivl_bytes(ram, mmio[i].pa, mmio[i].pa + mmio[i].len))
			broken("map queries", "%s at 0x%llx is taken as a device's, but it is RAM",
			       mmio[i].what, (unsigned long long)mmio[i].pa);
	for (u64 pa = 0; pa < (1ull << 20); pa += PAGE_SIZE)
		if (boot_ram_is_free(bi, pa, PAGE_SIZE) && ivl_bytes(ram, pa, pa + PAGE_SIZE) != PAGE_SIZE)
			broken("map queries", "page 0x%llx is taken as free RAM, but the map does not "
			       "give it as usable", (unsigned long long)pa);
}

/* ---- the boot ---- */

extern const struct cmdline_option *const __start_cmdline_options[];
extern const struct cmdline_option *const __stop_cmdline_options[];

/* The registered options this boot reads, and their values before any command line. */
static const char *const boot_option_names[] = { "numa", "smp.maxcpus" };
static const struct cmdline_option *boot_options[ARRAY_SIZE(boot_option_names)];
static u64 boot_option_defaults[ARRAY_SIZE(boot_option_names)];

static size_t option_size(const struct cmdline_option *o)
{
	return o->type == CMDLINE_T_BOOL ? sizeof(bool) : o->type == CMDLINE_T_UINT ?
	       sizeof(unsigned int) : sizeof(u64);
}

static void setup_once(void)
{
	found_dir = getenv("BOOT_FUZZ_FOUND");
	host_phys_init(HOST_PHYS);
	for (unsigned int i = 0; i < ARRAY_SIZE(boot_option_names); i++) {
		for (const struct cmdline_option *const *o = __start_cmdline_options;
		     o < __stop_cmdline_options; o++)
			if (!strcmp((*o)->name, boot_option_names[i]))
				boot_options[i] = *o;
		if (!boot_options[i])
			abort();
		memcpy(&boot_option_defaults[i], boot_options[i]->var, option_size(boot_options[i]));
	}
}

/* The command line's options the boot reads, back to their defaults, then applied. */
static void apply_options(const char *cmdline)
{
	for (unsigned int i = 0; i < ARRAY_SIZE(boot_options); i++)
		memcpy(boot_options[i]->var, &boot_option_defaults[i], option_size(boot_options[i]));
	cmdline_apply(cmdline, boot_options, ARRAY_SIZE(boot_options), NULL, NULL);
}

/* numa_cpus_init() over the numbered CPUs: each one's node below nr_node_ids(). */
static void check_cpu_nodes(const u32 *ids, unsigned int n)
{
	for (unsigned int c = 0; c < MAX_CPUS; c++)
		cpu_ptr(c)->arch.apic_id = 0;
	for (unsigned int c = 0; c < n; c++)
		cpu_ptr(c)->arch.apic_id = ids[c];
	nr_cpus = n;
	numa_cpus_init();
	for (unsigned int c = 0; c < n; c++)
		if (numa_cpu_node[c] >= nr_node_ids())
			broken("CPUs", "CPU %u is in node %u of %u", c, numa_cpu_node[c],
			       nr_node_ids());
}

/* kmain's steps from the multiboot2 information to numa_cpus_init(), checked on the way. */
static void boot(void)
{
	static struct boot_info bi;
	static struct acpi_cpu madt_cpus[MAX_CPUS];
	static struct acpi_madt_info madt;
	static struct ivls ram, loader_ram;
	static u32 ids[MAX_CPUS];	/* exactly as the kernel's: ASan sees one more */
	static u8 lints[MAX_CPUS];
	const char *err;
	size_t mbi_size;
	u8 *mbi;
	int ret;

	generate(cur_data, cur_size);
	finish_tables();
	if (getenv("BOOT_FUZZ_VERBOSE"))
		for (unsigned int i = 0; i < g.nr_map; i++)
			fprintf(stderr, "map[%u] 0x%llx +0x%llx type %u\n", i,
				(unsigned long long)g.map[i].base,
				(unsigned long long)g.map[i].length, g.map[i].type);
	mbi = build_mbi(&mbi_size);
	memset(&bi, 0, sizeof(bi));
	ret = multiboot2_parse(mbi, mbi_size, &bi, &err);
	free(mbi);
	if (ret)
		broken("multiboot", "a well-formed information block is refused: %s", err);
	cmdline_fit_boot(&bi);
	check_cmdline(bi.cmdline);
	apply_options(bi.cmdline);
	numa_init(&bi);
	check_numa_rejection(&bi, *(bool *)boot_options[0]->var);
	check_node_lines();
	madt = (struct acpi_madt_info){ .cpus = madt_cpus, .max_cpus = MAX_CPUS };
	nr_cpu_ids = 1;
	ids[0] = g.bsp;
	if (bi.rsdp_present && !acpi_parse_madt(bi.rsdp_copy, bi.rsdp_revision >= 2 ?
						ACPI_RSDP_V2_LEN : ACPI_RSDP_V1_LEN, acpi_map_host,
						NULL, &madt))
		nr_cpu_ids = smp_number_cpus(&madt, g.bsp, (g.flags & 1) ? 0xfffffffeu : 0xfeu,
					     ids, lints);
	check_cpus(&madt, ids);
	model_ram(&loader_ram, g.map, g.nr_map);
	model_ram(&ram, bi.mmap, bi.nr_mmap);
	ret = mm_init(&bi);
	if (ret && !lines_with("mm: "))
		broken("RAM", "mm_init() failed (%d) without a line that says why", ret);
	machine_up = !ret;
	if (ret)
		return;
	check_parsed_map(&loader_ram, &ram);
	check_map_queries(&bi, &madt, &ram);
	check_ram(&ram, mm_machine());
	check_cpu_nodes(ids, nr_cpu_ids);
	if (taint_count(TAINT_WARN) != taints || taint_count(TAINT_BAD_PAGE))
		broken("warnings", "a WARN_ON or a bad page");
}

int LLVMFuzzerTestOneInput(const u8 *data, size_t size)
{
	static bool ready;
	jmp_buf panic_jmp;

	if (!ready) {
		setup_once();
		ready = true;
	}
	host_phys_reset();
	host_console_reset();
	cur_data = data;
	cur_size = size;
	machine_up = false;
	taints = taint_count(TAINT_WARN);
	if (!setjmp(panic_jmp)) {
		host_panic_jmp = found_dir ? &panic_jmp : NULL;
		if (!setjmp(next_input))
			boot();
	} else {
		host_panic_jmp = NULL;
		broken("panic", "%s", host_panic_msg);	/* returns here through next_input */
	}
	host_panic_jmp = NULL;
	host_irqs_off = 0;	/* a panic or a broken promise may leave "interrupts" off */
	if (getenv("BOOT_FUZZ_VERBOSE"))
		host_console_dump();	/* what one input boots: BOOT_FUZZ_VERBOSE=1 boot_fuzz FILE */
	if (machine_up)
		mm_machine_destroy(mm_machine());
	nr_cpus = 1;
	nr_cpu_ids = MAX_CPUS;
	return 0;
}
