/*
 * Host tests for the pure ACPI parser (kernel/acpi.c): hand-built RSDP/XSDT/RSDT/MADT images in
 * a fake physical memory buffer, then corruption and random fuzzing under ASan/UBSan.
 * Build: cc -std=gnu11 -g -fsanitize=address,undefined -I. tests/host/acpi_test.c kernel/acpi.c
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kernel/acpi.h"

#define MEM_SIZE (2u << 20)	/* fake physical memory: 0 .. 2 MiB */
#define RSDP_PA 0xe0010
#define XSDT_PA 0x100000
#define RSDT_PA 0x101000
#define MADT_PA 0x102000
#define FADT_PA 0x120000	/* past the 64 KiB madt_begin() clears */
#define HPET_PA 0x121000
#define FADT_LEN 244		/* ACPI 2.0+ */

static u8 *mem;
static int failures, checks;

#define EXPECT(cond)                                                                 \
	do {                                                                         \
		checks++;                                                            \
		if (!(cond)) {                                                       \
			failures++;                                                  \
			fprintf(stderr, "%s:%d: %s: expected %s\n", __FILE__, __LINE__, \
				__func__, #cond);                                    \
		}                                                                    \
	} while (0)

/* The map callback: bounds-checked view of mem, NULL outside it (as a wild pointer would be). */
static const void *map(void *ctx, u64 pa, u64 len)
{
	(void)ctx;
	if (pa >= MEM_SIZE || len > MEM_SIZE - pa)
		return NULL;
	return mem + pa;
}

static void put32(u8 *p, u32 v) { for (int i = 0; i < 4; i++) p[i] = (u8)(v >> (8 * i)); }
static void put64(u8 *p, u64 v) { put32(p, (u32)v); put32(p + 4, (u32)(v >> 32)); }

static void fix_checksum(u8 *p, size_t len, size_t at)
{
	u8 sum = 0;

	p[at] = 0;
	for (size_t i = 0; i < len; i++)
		sum += p[i];
	p[at] = (u8)-sum;
}

static void sdt_header(u8 *t, const char *sig, u32 len)
{
	memcpy(t, sig, 4);
	put32(t + 4, len);
	t[8] = 1;
	memcpy(t + 10, "SMPMMT", 6);
}

/* Recompute a table's checksum over its length field (clamped: the fuzzer corrupts it). */
static void finish_sdt(u64 pa)
{
	u64 len = mem[pa + 4] | mem[pa + 5] << 8 | mem[pa + 6] << 16;

	fix_checksum(mem + pa, len < MEM_SIZE - pa ? len : MEM_SIZE - pa, 9);
}

static void write_rsdp(int revision)
{
	u8 *r = mem + RSDP_PA;

	memcpy(r, "RSD PTR ", 8);
	memcpy(r + 9, "SMPMM ", 6);
	r[15] = (u8)revision;
	put32(r + 16, RSDT_PA);
	put32(r + 20, 36);
	put64(r + 24, revision >= 2 ? XSDT_PA : 0);
	fix_checksum(r, 20, 8);
	fix_checksum(r, 36, 32);
}

/* QEMU q35's clocks: a PM timer at port 0x608 (24-bit), the HPET at 0xfed00000. */
static void write_clock_tables(void)
{
	sdt_header(mem + FADT_PA, "FACP", FADT_LEN);
	put32(mem + FADT_PA + 76, 0x608);
	mem[FADT_PA + 91] = 4;
	finish_sdt(FADT_PA);
	sdt_header(mem + HPET_PA, "HPET", 56);
	put64(mem + HPET_PA + 44, 0xfed00000);
	finish_sdt(HPET_PA);
}

/* XSDT and RSDT both list a FADT, the MADT, then the HPET table (so walks must skip some). */
static void write_sdts(void)
{
	write_clock_tables();
	sdt_header(mem + XSDT_PA, "XSDT", 36 + 24);
	put64(mem + XSDT_PA + 36, FADT_PA);
	put64(mem + XSDT_PA + 44, MADT_PA);
	put64(mem + XSDT_PA + 52, HPET_PA);
	finish_sdt(XSDT_PA);
	sdt_header(mem + RSDT_PA, "RSDT", 36 + 12);
	put32(mem + RSDT_PA + 36, FADT_PA);
	put32(mem + RSDT_PA + 40, MADT_PA);
	put32(mem + RSDT_PA + 44, HPET_PA);
	finish_sdt(RSDT_PA);
}

/* MADT builder: entries appended at madt_len, checksum fixed by madt_done(). */
static u32 madt_len;

static void madt_begin(void)
{
	memset(mem + MADT_PA, 0, 0x10000);
	madt_len = 44;
	put32(mem + MADT_PA + 36, 0xfee00000);
	put32(mem + MADT_PA + 40, 1);
}

static void madt_lapic(u8 uid, u8 apic_id, u32 flags)
{
	u8 *e = mem + MADT_PA + madt_len;

	e[0] = 0, e[1] = 8, e[2] = uid, e[3] = apic_id;
	put32(e + 4, flags);
	madt_len += 8;
}

static void madt_x2apic(u32 apic_id, u32 flags, u32 uid)
{
	u8 *e = mem + MADT_PA + madt_len;

	memset(e, 0, 16);
	e[0] = 9, e[1] = 16;
	put32(e + 4, apic_id);
	put32(e + 8, flags);
	put32(e + 12, uid);
	madt_len += 16;
}

static void madt_raw(const u8 *bytes, u8 len)
{
	memcpy(mem + MADT_PA + madt_len, bytes, len);
	madt_len += len;
}

static void madt_done(void)
{
	sdt_header(mem + MADT_PA, "APIC", madt_len);
	finish_sdt(MADT_PA);
}

/* A machine with n enabled CPUs (APIC IDs 0..n-1), one I/O APIC, ACPI 2.0 tables. */
static void build_machine(int revision, unsigned int n)
{
	static const u8 ioapic[12] = { 1, 12, 0, 0, 0x00, 0x00, 0xc0, 0xfe, 0, 0, 0, 0 };

	memset(mem, 0, MEM_SIZE);
	write_rsdp(revision);
	write_sdts();
	madt_begin();
	for (unsigned int i = 0; i < n; i++) {
		if (i < 255)
			madt_lapic((u8)i, (u8)i, 1);
		else
			madt_x2apic(i, 1, i);
	}
	madt_raw(ioapic, sizeof(ioapic));
	madt_done();
}

static int parse(struct acpi_madt_info *info)
{
	return acpi_parse_madt(mem + RSDP_PA, ACPI_RSDP_V2_LEN, map, NULL, info);
}

static struct acpi_madt_info info;

/* ACPI 2.0: the XSDT is used; 4 CPUs and the I/O APIC are found. */
static void acpi_parse_madt_xsdt_four_cpus(void)
{
	build_machine(2, 4);
	EXPECT(parse(&info) == ACPI_OK);
	EXPECT(info.used_xsdt);
	EXPECT(info.nr_cpus == 4 && info.nr_cpus_enabled == 4);
	EXPECT(info.cpus[3].apic_id == 3 && !info.cpus[3].from_x2apic_entry);
	EXPECT(info.nr_ioapics == 1 && info.ioapics[0].phys == 0xfec00000);
	EXPECT(info.lapic_phys == 0xfee00000 && !info.lapic_override);
	EXPECT(info.pcat_compat);
	EXPECT(strcmp(info.oem_id, "SMPMM ") == 0);
}

/* ACPI 1.0 RSDP (revision 0, 20 bytes): the RSDT is used. */
static void acpi_parse_madt_rsdt_v1(void)
{
	build_machine(0, 2);
	EXPECT(acpi_parse_madt(mem + RSDP_PA, ACPI_RSDP_V1_LEN, map, NULL, &info) == ACPI_OK);
	EXPECT(!info.used_xsdt && info.nr_cpus == 2);
}

/* Entries with Enabled clear are skipped, including "online capable" (hot-plug) ones. */
static void acpi_parse_madt_skips_disabled(void)
{
	build_machine(2, 0);
	madt_begin();
	madt_lapic(0, 0, 1);
	madt_lapic(1, 1, 0);
	madt_lapic(2, 2, 2);	/* online capable, not enabled */
	madt_x2apic(7, 0, 7);
	madt_lapic(3, 5, 3);
	madt_done();
	EXPECT(parse(&info) == ACPI_OK);
	EXPECT(info.nr_cpus == 2 && info.cpus[1].apic_id == 5);
	EXPECT(info.nr_cpus_disabled == 3);
}

/* Type 9 entries carry 32-bit IDs; an ID listed twice (type 0 and 9) is recorded once. */
static void acpi_parse_madt_x2apic_entries(void)
{
	build_machine(2, 0);
	madt_begin();
	madt_lapic(0, 0, 1);
	madt_x2apic(0, 1, 0);
	madt_x2apic(0x12345, 1, 9);
	madt_done();
	EXPECT(parse(&info) == ACPI_OK);
	EXPECT(info.nr_cpus == 2 && info.nr_duplicates == 1);
	EXPECT(info.cpus[1].apic_id == 0x12345 && info.cpus[1].from_x2apic_entry);
	EXPECT(info.cpus[1].uid == 9);
}

/* 300 CPUs: the first 256 are recorded, all 300 are counted. */
static void acpi_parse_madt_caps_at_256(void)
{
	build_machine(2, 300);
	EXPECT(parse(&info) == ACPI_OK);
	EXPECT(info.nr_cpus == ACPI_MAX_CPUS && info.nr_cpus_enabled == 300);
	EXPECT(info.cpus[255].apic_id == 255 && info.cpus[255].from_x2apic_entry);
}

/* A type 5 entry overrides the 32-bit local APIC address. */
static void acpi_parse_madt_lapic_override(void)
{
	u8 ovr[12] = { 5, 12, 0, 0 };

	build_machine(2, 0);
	madt_begin();
	madt_lapic(0, 0, 1);
	put64(ovr + 4, 0x1234567000ull);
	madt_raw(ovr, sizeof(ovr));
	madt_done();
	EXPECT(parse(&info) == ACPI_OK);
	EXPECT(info.lapic_override && info.lapic_phys == 0x1234567000ull);
}

/* Each bad checksum is an error naming its table. */
static void acpi_parse_madt_bad_checksums(void)
{
	static const struct { u64 pa; const char *name; int status; } cases[] = {
		{ RSDP_PA + 12, "RSDP", ACPI_ERR_CHECKSUM },	/* OEM id byte */
		{ RSDP_PA + 33, "RSDP", ACPI_ERR_CHECKSUM },	/* reserved: extended sum only */
		{ XSDT_PA + 20, "XSDT", ACPI_ERR_CHECKSUM },
		{ MADT_PA + 50, "MADT", ACPI_ERR_CHECKSUM },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		build_machine(2, 4);
		mem[cases[i].pa] ^= 0x40;
		EXPECT(parse(&info) == cases[i].status);
		EXPECT(strstr(info.error, cases[i].name) && strstr(info.error, "checksum"));
	}
}

/* No RSDP signature: ACPI_ERR_BAD_TABLE; an XSDT without MADT: ACPI_ERR_NO_MADT. */
static void acpi_parse_madt_missing_tables(void)
{
	build_machine(2, 4);
	mem[RSDP_PA] = 'X';
	EXPECT(parse(&info) == ACPI_ERR_BAD_TABLE);
	build_machine(2, 4);
	put64(mem + XSDT_PA + 44, FADT_PA);
	finish_sdt(XSDT_PA);
	EXPECT(parse(&info) == ACPI_ERR_NO_MADT && strstr(info.error, "XSDT"));
}

/* Pointers outside memory and impossible lengths are errors, never reads out of bounds. */
static void acpi_parse_madt_wild_pointers(void)
{
	static const u8 zero_len[2] = { 0x7f, 0 };

	build_machine(2, 4);
	put64(mem + XSDT_PA + 44, 0xdead00000000ull);
	finish_sdt(XSDT_PA);
	EXPECT(parse(&info) == ACPI_ERR_BAD_TABLE && strstr(info.error, "unmapped"));
	build_machine(2, 4);
	put32(mem + MADT_PA + 4, 0x7fffffff);
	EXPECT(parse(&info) == ACPI_ERR_BAD_TABLE && strstr(info.error, "MADT"));
	build_machine(2, 0);
	madt_begin();
	madt_raw(zero_len, 2);	/* would loop forever if accepted */
	madt_done();
	EXPECT(parse(&info) == ACPI_ERR_BAD_TABLE && strstr(info.error, "entry length"));
}

/* The FADT's PM timer and the HPET table's base are found, through the XSDT and the RSDT. */
static void acpi_parse_madt_finds_clocks(void)
{
	build_machine(2, 1);
	EXPECT(parse(&info) == ACPI_OK);
	EXPECT(info.clocks.pm_timer_port == 0x608 && !info.clocks.pm_timer_32bit);
	EXPECT(info.clocks.hpet_phys == 0xfed00000);
	build_machine(0, 1);
	put32(mem + FADT_PA + 112, 1u << 8);	/* TMR_VAL_EXT */
	finish_sdt(FADT_PA);
	EXPECT(acpi_parse_madt(mem + RSDP_PA, ACPI_RSDP_V1_LEN, map, NULL, &info) == ACPI_OK);
	EXPECT(!info.used_xsdt && info.clocks.pm_timer_32bit && info.clocks.hpet_phys);
}

/* PM_TMR_BLK 0 falls back to an I/O-space X_PM_TMR_BLK; a memory-space one is not a port. */
static void acpi_parse_madt_x_pm_timer(void)
{
	build_machine(2, 1);
	put32(mem + FADT_PA + 76, 0);
	mem[FADT_PA + 208] = 1;			/* system I/O */
	put64(mem + FADT_PA + 212, 0xb008);
	finish_sdt(FADT_PA);
	EXPECT(parse(&info) == ACPI_OK && info.clocks.pm_timer_port == 0xb008);
	mem[FADT_PA + 208] = 0;			/* system memory */
	finish_sdt(FADT_PA);
	EXPECT(parse(&info) == ACPI_OK && info.clocks.pm_timer_port == 0);
}

/* A damaged or short clock table only loses its clock: the MADT is still parsed. */
static void acpi_parse_madt_bad_clock_tables(void)
{
	build_machine(2, 3);
	mem[FADT_PA + 30] ^= 1;			/* checksum now wrong */
	put32(mem + HPET_PA + 4, 40);		/* too short for the base address */
	finish_sdt(HPET_PA);
	EXPECT(parse(&info) == ACPI_OK && info.nr_cpus == 3);
	EXPECT(info.clocks.pm_timer_port == 0 && info.clocks.hpet_phys == 0);
	build_machine(2, 3);
	put32(mem + FADT_PA + 4, 100);		/* an ACPI 1.0 FADT ends at 116 */
	finish_sdt(FADT_PA);
	EXPECT(parse(&info) == ACPI_OK && info.clocks.pm_timer_port == 0);
}

/* The BIOS-area scan finds the RSDP in 0xe0000-0xfffff, then prefers one in the EBDA. */
static void acpi_scan_rsdp_finds_bios_and_ebda(void)
{
	build_machine(2, 1);
	EXPECT(acpi_scan_rsdp(map, NULL) == RSDP_PA);
	memcpy(mem + 0x9fc40, mem + RSDP_PA, 36);
	mem[0x40e] = 0xc0, mem[0x40f] = 0x9f;	/* EBDA segment 0x9fc0 */
	EXPECT(acpi_scan_rsdp(map, NULL) == 0x9fc40);
	memset(mem, 0, MEM_SIZE);
	EXPECT(acpi_scan_rsdp(map, NULL) == 0);
}

/* Random corruption of valid tables: any result is fine, a crash or sanitizer report is not. */
static void acpi_parse_madt_fuzz(void)
{
	static const u64 targets[] = { RSDP_PA, XSDT_PA, RSDT_PA, MADT_PA, FADT_PA + 64,
				       HPET_PA };
	unsigned int ok = 0;

	srand(1);
	for (int iter = 0; iter < 20000; iter++) {
		build_machine(rand() % 3, (unsigned int)rand() % 40);
		for (int k = 1 + rand() % 4; k > 0; k--) {
			u64 pa = targets[rand() % 6] + (u64)(rand() % 96);

			mem[pa] = (u8)rand();
		}
		if (rand() & 1)	/* re-sign so corruption gets past the checksums */
			finish_sdt(MADT_PA), finish_sdt(XSDT_PA), finish_sdt(FADT_PA),
				finish_sdt(HPET_PA);
		if (parse(&info) == ACPI_OK) {
			ok++;
			EXPECT(info.nr_cpus <= ACPI_MAX_CPUS);
		} else {
			EXPECT(info.error[0] != 0);
		}
	}
	EXPECT(ok > 0);
}

int main(void)
{
	mem = calloc(1, MEM_SIZE);
	acpi_parse_madt_xsdt_four_cpus();
	acpi_parse_madt_rsdt_v1();
	acpi_parse_madt_skips_disabled();
	acpi_parse_madt_x2apic_entries();
	acpi_parse_madt_caps_at_256();
	acpi_parse_madt_lapic_override();
	acpi_parse_madt_bad_checksums();
	acpi_parse_madt_missing_tables();
	acpi_parse_madt_wild_pointers();
	acpi_parse_madt_finds_clocks();
	acpi_parse_madt_x_pm_timer();
	acpi_parse_madt_bad_clock_tables();
	acpi_scan_rsdp_finds_bios_and_ebda();
	acpi_parse_madt_fuzz();
	free(mem);
	printf("acpi_test: %d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
