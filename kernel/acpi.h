/*
 * ACPI table parser: RSDP -> XSDT/RSDT -> MADT, every checksum checked. A pure function of the
 * bytes it is shown through a map callback (kernel/acpi.c): no global state, no printing, so the
 * host can fuzz it. It finds CPUs, interrupt controllers and the reference clocks (FADT, HPET
 * tables); it is not an AML interpreter.
 */
#ifndef KERNEL_ACPI_H
#define KERNEL_ACPI_H

#include "kernel/compiler.h"

#define ACPI_MAX_IOAPICS 16
#define ACPI_MAX_NMIS 16	/* local APIC NMI entries recorded; more are counted */
#define ACPI_UID_ALL 0xffffffffu	/* an NMI entry for every processor (0xff in type 4) */
#define ACPI_RSDP_V1_LEN 20
#define ACPI_RSDP_V2_LEN 36
#define ACPI_ERROR_LEN 96	/* room for an error message, with its NUL */

/*
 * Map len bytes at physical address pa and return a pointer to them, or NULL if that range is
 * not valid memory. The kernel passes the direct map; the host test passes a bounds-checked
 * buffer. Every table byte the parser reads goes through this, so a wild pointer in a table
 * becomes an error, not a crash.
 */
typedef const void *(*acpi_map_fn)(void *ctx, u64 pa, u64 len);

enum acpi_status {
	ACPI_OK = 0,
	ACPI_ERR_NO_RSDP = -1,		/* no valid RSDP anywhere */
	ACPI_ERR_NO_MADT = -2,		/* RSDT/XSDT lists no "APIC" table */
	ACPI_ERR_CHECKSUM = -3,		/* a table's checksum is wrong (message names it) */
	ACPI_ERR_BAD_TABLE = -4,	/* bad signature, length or pointer (message names it) */
	ACPI_ERR_NO_TABLE = -5,		/* RSDT/XSDT lists no table of that signature */
	ACPI_ERR_INVALID = -6,		/* well-formed tables that contradict themselves */
};

struct acpi_cpu {
	u32 apic_id;		/* local APIC ID (8 bits from type 0, 32 bits from type 9) */
	u32 uid;		/* ACPI processor UID */
	bool from_x2apic_entry;	/* listed as a type 9 (local x2APIC) entry */
};

/* A local APIC NMI entry (type 4, or type 10 for x2APIC): which LINT pin carries NMI. */
struct acpi_lapic_nmi {
	u32 uid;		/* ACPI processor UID, or ACPI_UID_ALL */
	u16 flags;		/* MPS INTI flags: polarity (bits 1:0), trigger mode (3:2) */
	u8 lint;		/* 0: LINT0, 1: LINT1 */
	bool from_x2apic_entry;	/* listed as a type 10 (local x2APIC NMI) entry */
};

struct acpi_ioapic {
	u32 id;
	u32 phys;		/* MMIO base */
	u32 gsi_base;
};

/*
 * Clocks of known frequency for calibrating the TSC (arch/x86_64/timer.c), found on the way to
 * the MADT. A table that is missing, damaged or too short leaves its clock 0 (absent): it is
 * never an error of the parse.
 */
struct acpi_clocks {
	u64 hpet_phys;		/* "HPET" table: registers in memory space; 0 if none */
	u16 pm_timer_port;	/* "FACP" (FADT): PM timer I/O port (3.579545 MHz); 0 if none */
	bool pm_timer_32bit;	/* FADT flag TMR_VAL_EXT: 32-bit counter, else 24-bit */
};

/*
 * What the MADT says, plus where it came from. Filled by acpi_parse_madt(), except cpus and
 * max_cpus: the caller's array for the CPUs (the kernel's holds MAX_CPUS), set before the call.
 */
struct acpi_madt_info {
	struct acpi_cpu *cpus;	/* caller's: enabled CPUs, MADT order, duplicates dropped */
	unsigned int max_cpus;	/* caller's: room in cpus[]; entries past it are counted */
	u64 lapic_phys;		/* local APIC MMIO base: header field or type 5 override */
	bool lapic_override;	/* a type 5 entry replaced the 32-bit header address */
	bool pcat_compat;	/* MADT flags bit 0: legacy 8259 PICs present (must be masked) */
	bool used_xsdt;		/* found through the XSDT (ACPI >= 2.0), else through the RSDT */
	u8 rsdp_revision;
	char oem_id[7];		/* from the RSDP, NUL-terminated */
	unsigned int nr_cpus;		/* recorded in cpus[] (<= max_cpus) */
	unsigned int nr_cpus_enabled;	/* enabled entries seen, including those past the cap */
	unsigned int nr_cpus_disabled;	/* entries with the Enabled flag clear (skipped) */
	unsigned int nr_duplicates;	/* enabled entries repeating an APIC ID (skipped) */
	unsigned int nr_invalid_ids;	/* APIC ID 0xff in type 0, 0xffffffff in type 9 (skipped) */
	unsigned int nr_x2apic_cpus;	/* recorded CPUs that came from type 9 entries */
	struct acpi_lapic_nmi nmis[ACPI_MAX_NMIS];
	unsigned int nr_nmis;
	unsigned int nr_nmis_ignored;	/* past ACPI_MAX_NMIS, or a LINT other than 0 and 1 */
	struct acpi_ioapic ioapics[ACPI_MAX_IOAPICS];
	unsigned int nr_ioapics;
	unsigned int nr_overrides;	/* type 2 interrupt source overrides (counted only) */
	struct acpi_clocks clocks;	/* the FADT's PM timer, the HPET table's base */
	char error[ACPI_ERROR_LEN];	/* on failure: what went wrong, naming the table */
};

/*
 * Validate an RSDP held in buf (len bytes): signature, v1 checksum over 20 bytes and, for
 * revision >= 2, the length field and the extended checksum over all of it.
 * Returns ACPI_OK, ACPI_ERR_BAD_TABLE or ACPI_ERR_CHECKSUM with out->error set (out may be NULL).
 */
int acpi_check_rsdp(const void *buf, size_t len, struct acpi_madt_info *out);

/*
 * Look for the RSDP where BIOSes put it: the first KiB of the EBDA (segment at 0x40e), then
 * 0xe0000-0xfffff, on 16-byte boundaries. Returns its physical address, or 0 if none is valid.
 */
u64 acpi_scan_rsdp(acpi_map_fn map, void *ctx);

/*
 * Parse the MADT reached from the RSDP in rsdp[0..rsdp_len), and the FADT and HPET tables for
 * out->clocks (filled even when the MADT is missing or bad). Fills *out (zeroed first, but for
 * cpus and max_cpus). Returns ACPI_OK or a negative enum acpi_status with out->error
 * describing the fault.
 */
int acpi_parse_madt(const void *rsdp, size_t rsdp_len, acpi_map_fn map, void *ctx,
		    struct acpi_madt_info *out);

/* A system description table found by acpi_find_table(): its bytes and where they are. */
struct acpi_table {
	const void *data;	/* the header, then the body: len bytes */
	u32 len;
	u64 pa;			/* physical address, for messages */
};

/*
 * Find the first table with signature sig (4 characters) that the RSDT/XSDT of the RSDP in
 * rsdp[0..rsdp_len) lists, and check its length and checksum. On ACPI_OK, *t describes it.
 * ACPI_ERR_NO_TABLE if none is listed (error then empty); any other status with
 * error[ACPI_ERROR_LEN] describing the fault.
 */
int acpi_find_table(const void *rsdp, size_t rsdp_len, acpi_map_fn map, void *ctx,
		    const char *sig, struct acpi_table *t, char *error);

/* Error messages without a printf, for the table parsers (kernel/acpi.c, kernel/acpi_numa.c):
 * acpi_fail() sets error to "<table>: <what> (at <pa>)" and returns status (error may be
 * NULL); the others append to it. */
int acpi_fail(char *error, int status, const char *table, const char *what, u64 pa);
void acpi_err_append(char *error, const char *s);
void acpi_err_hex(char *error, u64 v);

/* The LINT pins (bit 0: LINT0, bit 1: LINT1) the MADT makes NMI for the processor uid. */
unsigned int acpi_nmi_lints(const struct acpi_madt_info *info, u32 uid);

#endif
