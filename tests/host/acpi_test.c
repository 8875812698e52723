/*
 * Host tests for the pure ACPI parsers (kernel/acpi.c, kernel/acpi_numa.c): hand-built
 * RSDP/XSDT/RSDT/MADT/SRAT/SLIT images in a fake physical memory buffer, then corruption and
 * random fuzzing under ASan/UBSan.
 * Build: cc -std=gnu11 -g -fsanitize=address,undefined -I. -Itests/host/shim \
 *        tests/host/acpi_test.c kernel/acpi.c kernel/acpi_numa.c
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kernel/acpi.h"
#include "kernel/acpi_numa.h"
#include "kernel/smp.h"	/* MAX_CPUS: the room the kernel gives the parser */

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
static const char *running;	/* the check main() is running (RUN below) */

/* A failure names the check it came in (make mutate's acpi: specs name checks), then the
 * function that found it, which may be a helper. */
#define EXPECT(cond)                                                                 \
	do {                                                                         \
		checks++;                                                            \
		if (!(cond)) {                                                       \
			failures++;                                                  \
			fprintf(stderr, "%s:%d: %s: expected %s (in %s)\n", __FILE__,   \
				__LINE__, running, #cond, __func__);                 \
		}                                                                    \
	} while (0)
#define RUN(check) (running = #check, check())

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

static void madt_lapic_nmi(u8 uid, u16 flags, u8 lint)
{
	u8 *e = mem + MADT_PA + madt_len;

	e[0] = 4, e[1] = 6, e[2] = uid, e[3] = (u8)flags, e[4] = (u8)(flags >> 8), e[5] = lint;
	madt_len += 6;
}

static void madt_x2apic_nmi(u32 uid, u16 flags, u8 lint)
{
	u8 *e = mem + MADT_PA + madt_len;

	memset(e, 0, 12);
	e[0] = 10, e[1] = 12, e[2] = (u8)flags, e[3] = (u8)(flags >> 8);
	put32(e + 4, uid);
	e[8] = lint;
	madt_len += 12;
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

/*
 * A machine with n enabled CPUs (APIC IDs 0..n-1), one I/O APIC, ACPI 2.0 tables, laid out
 * as QEMU does: IDs below 255 as type 0 entries, the rest as type 9, then LINT1 as NMI for
 * all processors (type 4, and type 10 too once there are x2APIC entries).
 */
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
	madt_lapic_nmi(0xff, 0, 1);
	if (n > 255)
		madt_x2apic_nmi(ACPI_UID_ALL, 0, 1);
	madt_done();
}

static int parse(struct acpi_madt_info *info)
{
	return acpi_parse_madt(mem + RSDP_PA, ACPI_RSDP_V2_LEN, map, NULL, info);
}

static struct acpi_cpu cpu_room[MAX_CPUS];
static struct acpi_madt_info info = { .cpus = cpu_room, .max_cpus = MAX_CPUS };

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

/* 300 CPUs, as QEMU lists them: all recorded, IDs from 255 up from type 9 entries. */
static void acpi_parse_madt_300_cpus_x2apic_above_254(void)
{
	build_machine(2, 300);
	EXPECT(parse(&info) == ACPI_OK);
	EXPECT(info.nr_cpus == 300 && info.nr_cpus_enabled == 300);
	EXPECT(info.cpus[254].apic_id == 254 && !info.cpus[254].from_x2apic_entry);
	EXPECT(info.cpus[255].apic_id == 255 && info.cpus[255].from_x2apic_entry);
	EXPECT(info.cpus[299].apic_id == 299 && info.nr_x2apic_cpus == 45);
}

/* MAX_CPUS + 100 CPUs: the first MAX_CPUS are recorded (the caller's room), all counted. */
static void acpi_parse_madt_caps_at_max_cpus(void)
{
	build_machine(2, MAX_CPUS + 100);
	EXPECT(parse(&info) == ACPI_OK);
	EXPECT(info.nr_cpus == MAX_CPUS && info.nr_cpus_enabled == MAX_CPUS + 100);
	EXPECT(info.cpus[MAX_CPUS - 1].apic_id == MAX_CPUS - 1);
	EXPECT(info.nr_x2apic_cpus == MAX_CPUS - 255);
}

/* The caller's room is what caps: 3 slots for 5 CPUs record 3. */
static void acpi_parse_madt_caps_at_callers_room(void)
{
	struct acpi_cpu room[3];
	struct acpi_madt_info small = { .cpus = room, .max_cpus = 3 };

	build_machine(2, 5);
	EXPECT(parse(&small) == ACPI_OK);
	EXPECT(small.cpus == room && small.max_cpus == 3);
	EXPECT(small.nr_cpus == 3 && small.nr_cpus_enabled == 5 && room[2].apic_id == 2);
}

/*
 * Sparse 32-bit x2APIC IDs are kept whole; the broadcast IDs (0xff in a type 0 entry,
 * 0xffffffff in a type 9) are no CPU and are counted as invalid.
 */
static void acpi_parse_madt_sparse_x2apic_ids(void)
{
	build_machine(2, 0);
	madt_begin();
	madt_lapic(0, 0, 1);
	madt_lapic(1, 0xff, 1);
	madt_x2apic(0x100, 1, 2);
	madt_x2apic(0x10000, 1, 3);
	madt_x2apic(0xfffffffe, 1, 4);
	madt_x2apic(0xffffffff, 1, 5);
	madt_done();
	EXPECT(parse(&info) == ACPI_OK);
	EXPECT(info.nr_cpus == 4 && info.nr_invalid_ids == 2 && info.nr_x2apic_cpus == 3);
	EXPECT(info.cpus[1].apic_id == 0x100 && info.cpus[2].apic_id == 0x10000);
	EXPECT(info.cpus[3].apic_id == 0xfffffffe && info.cpus[3].uid == 4);
}

/*
 * Local APIC NMI entries: type 4 (8-bit UID, 0xff = all) and type 10 (32-bit UID, all ones =
 * all) name the LINT pin that carries NMI; acpi_nmi_lints() gives a processor's pins. A LINT
 * other than 0 or 1, and entries past ACPI_MAX_NMIS, are counted and ignored; a type 10 entry
 * shorter than 12 bytes is skipped.
 */
static void acpi_parse_madt_nmi_entries(void)
{
	static const u8 short_x2nmi[8] = { 10, 8, 0, 0, 7, 0, 0, 0 };

	build_machine(2, 0);
	madt_begin();
	madt_lapic(0, 0, 1);
	madt_x2apic(300, 1, 7);
	madt_lapic_nmi(0xff, 0x5, 1);
	madt_x2apic_nmi(7, 0, 0);
	madt_x2apic_nmi(8, 0, 2);
	madt_raw(short_x2nmi, sizeof(short_x2nmi));
	madt_done();
	EXPECT(parse(&info) == ACPI_OK);
	EXPECT(info.nr_nmis == 2 && info.nr_nmis_ignored == 1);
	EXPECT(info.nmis[0].uid == ACPI_UID_ALL && info.nmis[0].lint == 1);
	EXPECT(info.nmis[0].flags == 0x5 && !info.nmis[0].from_x2apic_entry);
	EXPECT(info.nmis[1].uid == 7 && info.nmis[1].lint == 0 && info.nmis[1].from_x2apic_entry);
	EXPECT(acpi_nmi_lints(&info, 7) == 3 && acpi_nmi_lints(&info, 0) == 2);

	build_machine(2, 0);
	madt_begin();
	madt_lapic(0, 0, 1);
	for (u32 uid = 0; uid < ACPI_MAX_NMIS + 3; uid++)
		madt_x2apic_nmi(uid, 0, 1);
	madt_done();
	EXPECT(parse(&info) == ACPI_OK);
	EXPECT(info.nr_nmis == ACPI_MAX_NMIS && info.nr_nmis_ignored == 3);
	EXPECT(acpi_nmi_lints(&info, ACPI_MAX_NMIS - 1) == 2 && acpi_nmi_lints(&info, 99) == 0);
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
		build_machine(rand() % 3, (unsigned int)rand() % 300);
		for (int k = 1 + rand() % 4; k > 0; k--) {
			u64 pa = targets[rand() % 6] + (u64)(rand() % 96);

			mem[pa] = (u8)rand();
		}
		if (rand() & 1)	/* re-sign so corruption gets past the checksums */
			finish_sdt(MADT_PA), finish_sdt(XSDT_PA), finish_sdt(FADT_PA),
				finish_sdt(HPET_PA);
		if (parse(&info) == ACPI_OK) {
			ok++;
			EXPECT(info.nr_cpus <= info.max_cpus && info.nr_nmis <= ACPI_MAX_NMIS);
		} else {
			EXPECT(info.error[0] != 0);
		}
	}
	EXPECT(ok > 0);
}

/* ===== SRAT and SLIT (kernel/acpi_numa.c) ===== */

#define SRAT_PA 0x104000
#define SLIT_PA 0x106000

/* List the SRAT and/or SLIT after the FADT and MADT in both root tables. */
static void list_numa_tables(bool srat, bool slit)
{
	u32 n = 2;

	write_sdts();
	if (srat) {
		put64(mem + XSDT_PA + 36 + 8 * n, SRAT_PA);
		put32(mem + RSDT_PA + 36 + 4 * n++, SRAT_PA);
	}
	if (slit) {
		put64(mem + XSDT_PA + 36 + 8 * n, SLIT_PA);
		put32(mem + RSDT_PA + 36 + 4 * n++, SLIT_PA);
	}
	sdt_header(mem + XSDT_PA, "XSDT", 36 + 8 * n);
	finish_sdt(XSDT_PA);
	sdt_header(mem + RSDT_PA, "RSDT", 36 + 4 * n);
	finish_sdt(RSDT_PA);
}

/* SRAT builder, as the MADT's: srat_begin(revision), entries, srat_done(). */
static u32 srat_len;
static u8 srat_rev;

static void srat_begin(u8 revision)
{
	memset(mem + SRAT_PA, 0, 0x2000);
	srat_len = 48;
	srat_rev = revision;
	put32(mem + SRAT_PA + 36, 1);
}

static void srat_cpu(u32 pxm, u8 apic_id, u32 flags)
{
	u8 *e = mem + SRAT_PA + srat_len;

	e[0] = 0, e[1] = 16, e[2] = (u8)pxm, e[3] = apic_id;
	put32(e + 4, flags);
	e[9] = (u8)(pxm >> 8), e[10] = (u8)(pxm >> 16), e[11] = (u8)(pxm >> 24);
	srat_len += 16;
}

static void srat_x2apic(u32 pxm, u32 apic_id, u32 flags)
{
	u8 *e = mem + SRAT_PA + srat_len;

	e[0] = 2, e[1] = 24;
	put32(e + 4, pxm);
	put32(e + 8, apic_id);
	put32(e + 12, flags);
	srat_len += 24;
}

static void srat_mem(u32 pxm, u64 base, u64 size, u32 flags)
{
	u8 *e = mem + SRAT_PA + srat_len;

	e[0] = 1, e[1] = 40;
	put32(e + 2, pxm);
	put64(e + 8, base);
	put64(e + 16, size);
	put32(e + 28, flags);
	srat_len += 40;
}

static void srat_done(void)
{
	sdt_header(mem + SRAT_PA, "SRAT", srat_len);
	mem[SRAT_PA + 8] = srat_rev;
	finish_sdt(SRAT_PA);
}

/* A SLIT of n localities from a row-major matrix. */
static void slit_write(u64 n, const u8 *matrix)
{
	memset(mem + SLIT_PA, 0, 0x1000);
	put64(mem + SLIT_PA + 36, n);
	memcpy(mem + SLIT_PA + 44, matrix, n * n);
	sdt_header(mem + SLIT_PA, "SLIT", (u32)(44 + n * n));
	finish_sdt(SLIT_PA);
}

static const u8 slit_2[4] = { 10, 20, 20, 10 };

/*
 * The tables QEMU 7.2 writes for -smp 4 -m 2G with two nodes of 1 GiB and two CPUs each:
 * type 0 CPU entries, memory 0-640K and 1M-1G in domain 0, 1G-2G in domain 1, then zeroed
 * (disabled) memory entries padding to nodes + 2, and a 2x2 SLIT.
 */
static void build_qemu_two_nodes(void)
{
	build_machine(2, 4);
	srat_begin(1);
	for (u8 cpu = 0; cpu < 4; cpu++)
		srat_cpu(cpu / 2, cpu, 1);
	srat_mem(0, 0, 640 << 10, 1);
	srat_mem(0, 1 << 20, (1 << 30) - (1 << 20), 1);
	srat_mem(1, 1 << 30, 1 << 30, 1);
	srat_mem(0, 0, 0, 0);
	srat_done();
	slit_write(2, slit_2);
	list_numa_tables(true, true);
}

static struct acpi_numa_info numa;

static int parse_numa(void)
{
	return acpi_parse_numa(mem + RSDP_PA, ACPI_RSDP_V2_LEN, map, NULL, &numa);
}

/* QEMU's two-node layout: 2 nodes, 4 CPUs, 3 ranges, the padding entry skipped, SLIT read. */
static void acpi_parse_numa_qemu_two_nodes(void)
{
	build_qemu_two_nodes();
	EXPECT(parse_numa() == ACPI_OK);
	EXPECT(numa.nr_nodes == 2 && numa.pxm[0] == 0 && numa.pxm[1] == 1);
	EXPECT(numa.nr_cpus == 4 && numa.cpus[2].apic_id == 2 && numa.cpus[2].node == 1);
	EXPECT(numa.nr_mem == 3 && numa.nr_mem_disabled == 1);
	EXPECT(numa.mem[2].node == 1 && numa.mem[2].base == 1ull << 30);
	EXPECT(numa.has_slit && numa.distance[0][1] == 20 && numa.distance[1][1] == 10);
}

/* The same through an ACPI 1.0 RSDP (RSDT) finds the same tables. */
static void acpi_parse_numa_rsdt_v1(void)
{
	build_qemu_two_nodes();
	write_rsdp(0);
	EXPECT(acpi_parse_numa(mem + RSDP_PA, ACPI_RSDP_V1_LEN, map, NULL, &numa) == ACPI_OK);
	EXPECT(numa.nr_nodes == 2 && numa.has_slit);
}

/* No SRAT: ACPI_ERR_NO_TABLE and no message (the kernel runs one node). No SLIT: 10 / 20. */
static void acpi_parse_numa_missing_tables(void)
{
	build_qemu_two_nodes();
	list_numa_tables(false, true);
	EXPECT(parse_numa() == ACPI_ERR_NO_TABLE && !numa.error[0]);
	list_numa_tables(true, false);
	EXPECT(parse_numa() == ACPI_OK && !numa.has_slit);
	EXPECT(numa.distance[0][0] == 10 && numa.distance[1][0] == 20);
}

/*
 * Proximity domains need not be 0..n-1: nodes are numbered as domains first appear (7 then
 * 3), and the SLIT is read by domain. x2APIC entries carry 32-bit domains; a revision-1
 * SRAT reads only the low byte of a type 0 entry's domain, revision 2 all four.
 */
static void acpi_parse_srat_domains_renumbered(void)
{
	u8 slit8[64];

	for (int i = 0; i < 64; i++)
		slit8[i] = i / 8 == i % 8 ? 10 : (u8)(20 + i / 8 + i % 8);
	build_machine(2, 0);
	srat_begin(3);
	srat_x2apic(7, 0x100, 1);
	srat_cpu(3 | 0x100, 1, 1);	/* domain 0x103 from revision 2 on */
	srat_mem(7, 1 << 20, 1 << 20, 1);
	srat_done();
	slit_write(8, slit8);
	list_numa_tables(true, false);
	EXPECT(parse_numa() == ACPI_OK);
	EXPECT(numa.nr_nodes == 2 && numa.pxm[0] == 7 && numa.pxm[1] == 0x103);
	EXPECT(numa.cpus[0].from_x2apic_entry && numa.cpus[0].apic_id == 0x100);
	mem[SRAT_PA + 8] = 1;	/* revision 1: domain 3 */
	finish_sdt(SRAT_PA);
	list_numa_tables(true, true);
	EXPECT(parse_numa() == ACPI_OK && numa.pxm[1] == 3);
	EXPECT(numa.distance[0][1] == 20 + 7 + 3 && numa.distance[1][0] == 30);
}

/* Disabled CPUs and memory are skipped; hot-pluggable memory is kept and flagged. */
static void acpi_parse_srat_disabled_and_hotpluggable(void)
{
	build_machine(2, 0);
	srat_begin(3);
	srat_cpu(0, 0, 1);
	srat_cpu(1, 1, 0);
	srat_x2apic(1, 300, 0);
	srat_mem(0, 0, 1 << 30, 1);
	srat_mem(1, 1ull << 32, 1ull << 30, 0);
	srat_mem(1, 1ull << 33, 1ull << 30, 1 | 2);
	srat_done();
	list_numa_tables(true, false);
	EXPECT(parse_numa() == ACPI_OK);
	EXPECT(numa.nr_cpus == 1 && numa.nr_cpus_disabled == 2);
	EXPECT(numa.nr_mem == 2 && numa.nr_mem_disabled == 1 && numa.nr_mem_hotpluggable == 1);
	EXPECT(numa.mem[1].hotpluggable && numa.mem[1].node == 1 && numa.nr_nodes == 2);
}

/* Each contradiction is ACPI_ERR_INVALID with a message naming the table and the problem. */
static void expect_invalid(const char *table, const char *what)
{
	EXPECT(parse_numa() == ACPI_ERR_INVALID);
	EXPECT(strstr(numa.error, table) && strstr(numa.error, what));
	if (!strstr(numa.error, what))
		fprintf(stderr, "  message was: %s\n", numa.error);
}

/* Ranges of two nodes overlapping: invalid. Of one node: fine (merged later). */
static void acpi_parse_srat_overlapping_ranges(void)
{
	build_qemu_two_nodes();
	srat_mem(1, (1 << 30) - (1 << 20), 2 << 20, 1);
	srat_done();
	expect_invalid("SRAT", "overlapping memory ranges: nodes 0 and 1");
	build_qemu_two_nodes();
	srat_mem(0, 1 << 29, 1 << 20, 1);
	srat_done();
	EXPECT(parse_numa() == ACPI_OK);
}

/* One APIC ID in two nodes: invalid. Twice in one node: counted, fine. */
static void acpi_parse_srat_cpu_in_two_nodes(void)
{
	build_qemu_two_nodes();
	srat_x2apic(0, 3, 1);
	srat_done();
	expect_invalid("SRAT", "a CPU in two nodes: APIC ID 3");
	build_qemu_two_nodes();
	srat_x2apic(1, 3, 1);
	srat_done();
	EXPECT(parse_numa() == ACPI_OK && numa.nr_cpu_duplicates == 1 && numa.nr_cpus == 4);
}

/* A ninth proximity domain, a range wrapping past 2^64: invalid. */
static void acpi_parse_srat_limits(void)
{
	build_qemu_two_nodes();
	for (u32 d = 2; d <= ACPI_NUMA_MAX_NODES; d++)
		srat_cpu(d, (u8)(10 + d), 1);
	srat_done();
	expect_invalid("SRAT", "more than 8 proximity domains");
	build_qemu_two_nodes();
	srat_mem(1, ~0ull - 4095, 8192, 1);
	srat_done();
	expect_invalid("SRAT", "wraps");
}

/* Entry lengths that would loop forever or read past an entry are rejected. */
static void acpi_parse_srat_bad_entry_length(void)
{
	build_qemu_two_nodes();
	mem[SRAT_PA + 48 + 1] = 0;
	finish_sdt(SRAT_PA);
	EXPECT(parse_numa() == ACPI_ERR_BAD_TABLE && strstr(numa.error, "bad entry length"));
	build_qemu_two_nodes();
	mem[SRAT_PA + 48 + 1] = 8;	/* a CPU entry is 16 bytes */
	finish_sdt(SRAT_PA);
	EXPECT(parse_numa() == ACPI_ERR_BAD_TABLE && strstr(numa.error, "entry too short"));
}

/* The SLIT rules: symmetric, 10 on the diagonal only, a row for every domain, the matrix
 * inside the table. */
static void acpi_parse_slit_rules(void)
{
	static const u8 asym[4] = { 10, 20, 30, 10 }, diag[4] = { 10, 20, 20, 11 },
			near[4] = { 10, 10, 10, 10 }, one[1] = { 10 };

	build_qemu_two_nodes();
	slit_write(2, asym);
	expect_invalid("SLIT", "asymmetric: distances 20 and 30");
	slit_write(2, diag);
	expect_invalid("SLIT", "distance of locality 1 to itself is 11");
	slit_write(2, near);
	expect_invalid("SLIT", "remote distance of 10 or less");
	slit_write(1, one);
	expect_invalid("SLIT", "node id out of range: proximity domain 1");
	slit_write(2, slit_2);
	put64(mem + SLIT_PA + 36, 3);	/* 9 entries claimed, 4 present */
	finish_sdt(SLIT_PA);
	expect_invalid("SLIT", "locality count 3");
}

/* Random corruption of valid SRAT/SLIT: any verdict is fine, a crash or a sanitizer report
 * is not; what is accepted satisfies every rule the parser promises. */
static void check_accepted_numa(void)
{
	EXPECT(numa.nr_nodes >= 1 && numa.nr_nodes <= ACPI_NUMA_MAX_NODES);
	for (unsigned int i = 0; i < numa.nr_cpus; i++)
		EXPECT(numa.cpus[i].node < numa.nr_nodes);
	for (unsigned int i = 0; i < numa.nr_mem; i++) {
		EXPECT(numa.mem[i].node < numa.nr_nodes && numa.mem[i].size);
		for (unsigned int j = 0; j < numa.nr_mem; j++)
			EXPECT(numa.mem[i].node == numa.mem[j].node ||
			       numa.mem[i].base >= numa.mem[j].base + numa.mem[j].size ||
			       numa.mem[j].base >= numa.mem[i].base + numa.mem[i].size);
	}
	for (unsigned int a = 0; a < numa.nr_nodes; a++)
		for (unsigned int b = 0; b < numa.nr_nodes; b++)
			EXPECT(numa.distance[a][b] == numa.distance[b][a] &&
			       (a == b) == (numa.distance[a][b] == 10));
}

static void acpi_parse_numa_fuzz(void)
{
	static const u64 targets[] = { SRAT_PA, SLIT_PA };
	static u8 clean[SLIT_PA + 0x1000 - SRAT_PA];
	unsigned int ok = 0, rejected = 0;

	srand(2);
	build_qemu_two_nodes();
	memcpy(clean, mem + SRAT_PA, sizeof(clean));
	for (int iter = 0; iter < 20000; iter++) {
		int ret;

		memcpy(mem + SRAT_PA, clean, sizeof(clean));	/* only these bytes change */
		for (int k = 1 + rand() % 4; k > 0; k--)
			mem[targets[rand() % 2] + (u64)(rand() % 260)] = (u8)rand();
		if (rand() & 1)
			finish_sdt(SRAT_PA), finish_sdt(SLIT_PA);
		ret = parse_numa();
		if (ret == ACPI_OK) {
			ok++;
			check_accepted_numa();
		} else {
			rejected++;
			EXPECT(numa.error[0] != 0 || ret == ACPI_ERR_NO_TABLE);
		}
	}
	EXPECT(ok > 0 && rejected > 0);
}

int main(void)
{
	mem = calloc(1, MEM_SIZE);
	RUN(acpi_parse_madt_xsdt_four_cpus);
	RUN(acpi_parse_madt_rsdt_v1);
	RUN(acpi_parse_madt_skips_disabled);
	RUN(acpi_parse_madt_x2apic_entries);
	RUN(acpi_parse_madt_300_cpus_x2apic_above_254);
	RUN(acpi_parse_madt_caps_at_max_cpus);
	RUN(acpi_parse_madt_caps_at_callers_room);
	RUN(acpi_parse_madt_sparse_x2apic_ids);
	RUN(acpi_parse_madt_nmi_entries);
	RUN(acpi_parse_madt_lapic_override);
	RUN(acpi_parse_madt_bad_checksums);
	RUN(acpi_parse_madt_missing_tables);
	RUN(acpi_parse_madt_wild_pointers);
	RUN(acpi_parse_madt_finds_clocks);
	RUN(acpi_parse_madt_x_pm_timer);
	RUN(acpi_parse_madt_bad_clock_tables);
	RUN(acpi_scan_rsdp_finds_bios_and_ebda);
	RUN(acpi_parse_madt_fuzz);
	RUN(acpi_parse_numa_qemu_two_nodes);
	RUN(acpi_parse_numa_rsdt_v1);
	RUN(acpi_parse_numa_missing_tables);
	RUN(acpi_parse_srat_domains_renumbered);
	RUN(acpi_parse_srat_disabled_and_hotpluggable);
	RUN(acpi_parse_srat_overlapping_ranges);
	RUN(acpi_parse_srat_cpu_in_two_nodes);
	RUN(acpi_parse_srat_limits);
	RUN(acpi_parse_srat_bad_entry_length);
	RUN(acpi_parse_slit_rules);
	RUN(acpi_parse_numa_fuzz);
	free(mem);
	printf("acpi_test: %d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
