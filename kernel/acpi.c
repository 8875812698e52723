/*
 * Pure ACPI parser: finds the MADT from an RSDP and lists CPUs and I/O APICs, and the clocks the
 * FADT and HPET tables describe (kernel/acpi.h).
 * It reads memory only through the caller's map callback and writes only *out; it neither
 * prints nor allocates. Table layouts follow ACPI 6.5 sections 5.2.5-5.2.12.
 */
#include "kernel/acpi.h"

#define SDT_HEADER_LEN 36	/* signature, length, revision, checksum, OEM ids, creator */
#define MADT_FIXED_LEN 44	/* header + local APIC address + flags */
#define SDT_MAX_LEN (1u << 20)	/* sanity cap: no real MADT/XSDT comes near 1 MiB */

#define MADT_LAPIC 0
#define MADT_IOAPIC 1
#define MADT_ISO 2
#define MADT_LAPIC_NMI 4
#define MADT_LAPIC_OVERRIDE 5
#define MADT_X2APIC 9
#define MADT_X2APIC_NMI 10
#define MADT_CPU_ENABLED 0x1u	/* bit 1 "online capable" = hot-pluggable later: not now */

#define FADT_PM_TMR_BLK 76	/* u32 I/O port of the PM timer (0: see X_PM_TMR_BLK) */
#define FADT_PM_TMR_LEN 91	/* u8, 4 when there is a PM timer */
#define FADT_FLAGS 112		/* u32; the ACPI 1.0 FADT ends right after it */
#define FADT_TMR_VAL_EXT (1u << 8)
#define FADT_X_PM_TMR_BLK 208	/* generic address structure (12 bytes), ACPI 2.0+ */
#define HPET_TABLE_BASE 40	/* generic address structure of the HPET's registers */
#define GAS_SPACE_MEMORY 0
#define GAS_SPACE_IO 1

/* Little-endian loads byte by byte: tables are not aligned for us. */
static u32 rd16(const u8 *p) { return p[0] | (u32)p[1] << 8; }
static u32 rd32(const u8 *p) { return rd16(p) | rd16(p + 2) << 16; }
static u64 rd64(const u8 *p) { return rd32(p) | (u64)rd32(p + 4) << 32; }

static u8 checksum(const u8 *p, size_t len)
{
	u8 sum = 0;

	while (len--)
		sum += *p++;
	return sum;
}

static bool sig_is(const u8 *p, const char *sig, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != (u8)sig[i])
			return false;
	return true;
}

/* ---- error messages without a printf (the host and the kernel both link this file) ---- */

static void err_put(char *error, const char *s)
{
	size_t n = 0;

	while (n < ACPI_ERROR_LEN - 1 && error[n])
		n++;
	while (*s && n < ACPI_ERROR_LEN - 1)
		error[n++] = *s++;
	error[n] = 0;
}

void acpi_err_hex(char *error, u64 v)
{
	char buf[19] = "0x";
	int i, len = 0;

	for (i = 60; i > 0 && !((v >> i) & 0xf); i -= 4)
		;
	for (; i >= 0; i -= 4)
		buf[2 + len++] = "0123456789abcdef"[(v >> i) & 0xf];
	buf[2 + len] = 0;
	err_put(error, buf);
}

int acpi_fail(char *error, int status, const char *table, const char *what, u64 pa)
{
	if (!error)
		return status;
	error[0] = 0;
	err_put(error, table);
	err_put(error, ": ");
	err_put(error, what);
	err_put(error, " (at ");
	acpi_err_hex(error, pa);
	err_put(error, ")");
	return status;
}

void acpi_err_append(char *error, const char *s)
{
	err_put(error, s);
}

/* Set out->error to "<table>: <what> (at <pa>)" and return status. */
static int fail(struct acpi_madt_info *out, int status, const char *table, const char *what,
		u64 pa)
{
	return acpi_fail(out ? out->error : NULL, status, table, what, pa);
}

static int check_rsdp(const void *buf, size_t len, char *error)
{
	const u8 *p = buf;
	u32 full;

	if (!p || len < ACPI_RSDP_V1_LEN || !sig_is(p, "RSD PTR ", 8))
		return acpi_fail(error, ACPI_ERR_BAD_TABLE, "RSDP", "bad signature or too short", 0);
	if (checksum(p, ACPI_RSDP_V1_LEN))
		return acpi_fail(error, ACPI_ERR_CHECKSUM, "RSDP", "bad checksum", 0);
	if (p[15] < 2)
		return ACPI_OK;
	if (len < 24)	/* the v2 length field itself is past the end (found by fuzzing) */
		return acpi_fail(error, ACPI_ERR_BAD_TABLE, "RSDP", "v2 RSDP truncated", (u32)len);
	full = rd32(p + 20);
	if (full < ACPI_RSDP_V2_LEN || full > len)
		return acpi_fail(error, ACPI_ERR_BAD_TABLE, "RSDP", "bad v2 length", full);
	if (checksum(p, full))
		return acpi_fail(error, ACPI_ERR_CHECKSUM, "RSDP", "bad extended checksum", 0);
	return ACPI_OK;
}

int acpi_check_rsdp(const void *buf, size_t len, struct acpi_madt_info *out)
{
	return check_rsdp(buf, len, out ? out->error : NULL);
}

/* Check every 16-byte boundary of [base, base + len) for a valid RSDP. */
static u64 scan_range(acpi_map_fn map, void *ctx, u64 base, u64 len)
{
	for (u64 pa = base; pa + ACPI_RSDP_V1_LEN <= base + len; pa += 16) {
		const u8 *p = map(ctx, pa, ACPI_RSDP_V1_LEN);
		size_t full = ACPI_RSDP_V1_LEN;

		if (!p || !sig_is(p, "RSD PTR ", 8))
			continue;
		if (p[15] >= 2) {
			full = ACPI_RSDP_V2_LEN;
			p = map(ctx, pa, full);
		}
		if (p && acpi_check_rsdp(p, full, NULL) == ACPI_OK)
			return pa;
	}
	return 0;
}

u64 acpi_scan_rsdp(acpi_map_fn map, void *ctx)
{
	const u8 *seg = map(ctx, 0x40e, 2);
	u64 ebda = seg ? (u64)rd16(seg) << 4 : 0;
	u64 pa = 0;

	if (ebda >= 0x80000 && ebda < 0xa0000)	/* where an EBDA can be */
		pa = scan_range(map, ctx, ebda, 1024);
	return pa ? pa : scan_range(map, ctx, 0xe0000, 0x20000);
}

/*
 * Map and validate a whole system description table at pa with signature sig (NULL: any).
 * On success *table points at its header and the return value is ACPI_OK.
 */
static int map_sdt(acpi_map_fn map, void *ctx, u64 pa, const char *name, const char *sig,
		   const u8 **table, char *error)
{
	const u8 *h = pa ? map(ctx, pa, SDT_HEADER_LEN) : NULL;
	u32 len;

	if (!h)
		return acpi_fail(error, ACPI_ERR_BAD_TABLE, name, "pointer to unmapped memory", pa);
	if (sig && !sig_is(h, sig, 4))
		return acpi_fail(error, ACPI_ERR_BAD_TABLE, name, "bad signature", pa);
	len = rd32(h + 4);
	if (len < SDT_HEADER_LEN || len > SDT_MAX_LEN)
		return acpi_fail(error, ACPI_ERR_BAD_TABLE, name, "bad length", pa);
	h = map(ctx, pa, len);
	if (!h)
		return acpi_fail(error, ACPI_ERR_BAD_TABLE, name, "table runs into unmapped memory",
				 pa);
	if (checksum(h, len))
		return acpi_fail(error, ACPI_ERR_CHECKSUM, name, "bad checksum", pa);
	*table = h;
	return ACPI_OK;
}

/* Walk the RSDT (4-byte entries) or XSDT (8-byte entries) for the first table called sig:
 * its address, ACPI_ERR_NO_TABLE if none is listed, or an entry pointing nowhere. */
static int find_listed(const u8 *sdt, bool xsdt, acpi_map_fn map, void *ctx, const char *sig,
		       u64 *table_pa, char *error)
{
	unsigned int esz = xsdt ? 8 : 4;
	u32 n = (rd32(sdt + 4) - SDT_HEADER_LEN) / esz;

	for (u32 i = 0; i < n; i++) {
		const u8 *e = sdt + SDT_HEADER_LEN + i * esz;
		u64 pa = xsdt ? rd64(e) : rd32(e);
		const u8 *h = pa ? map(ctx, pa, SDT_HEADER_LEN) : NULL;

		if (!h)
			return acpi_fail(error, ACPI_ERR_BAD_TABLE, xsdt ? "XSDT" : "RSDT",
					 "entry points to unmapped memory", pa);
		if (sig_is(h, sig, 4)) {
			*table_pa = pa;
			return ACPI_OK;
		}
	}
	return ACPI_ERR_NO_TABLE;
}

/* The RSDT or XSDT the RSDP in rsdp[] points to, mapped and checked. */
static int map_root(const u8 *rsdp, acpi_map_fn map, void *ctx, const u8 **sdt, bool *xsdt,
		    char *error)
{
	u64 pa;

	*xsdt = rsdp[15] >= 2 && rd64(rsdp + 24);
	pa = *xsdt ? rd64(rsdp + 24) : rd32(rsdp + 16);
	return map_sdt(map, ctx, pa, *xsdt ? "XSDT" : "RSDT", *xsdt ? "XSDT" : "RSDT", sdt, error);
}

int acpi_find_table(const void *rsdp, size_t rsdp_len, acpi_map_fn map, void *ctx,
		    const char *sig, struct acpi_table *t, char *error)
{
	const u8 *sdt, *data;
	u64 pa = 0;
	bool xsdt;
	int ret;

	error[0] = 0;
	ret = check_rsdp(rsdp, rsdp_len, error);
	if (!ret)
		ret = map_root(rsdp, map, ctx, &sdt, &xsdt, error);
	if (!ret)
		ret = find_listed(sdt, xsdt, map, ctx, sig, &pa, error);
	if (!ret)
		ret = map_sdt(map, ctx, pa, sig, sig, &data, error);
	if (ret)
		return ret;
	*t = (struct acpi_table){ data, rd32(data + 4), pa };
	return ACPI_OK;
}

/*
 * Record one enabled CPU unless its APIC ID is already known or invalid (0xff is the xAPIC
 * broadcast ID: firmware lists IDs from 255 up as type 9 entries); count past the cap.
 */
static void add_cpu(struct acpi_madt_info *out, u32 apic_id, u32 uid, bool x2)
{
	if (apic_id == (x2 ? 0xffffffffu : 0xffu)) {
		out->nr_invalid_ids++;
		return;
	}
	for (unsigned int i = 0; i < out->nr_cpus; i++) {
		if (out->cpus[i].apic_id == apic_id) {
			out->nr_duplicates++;
			return;
		}
	}
	out->nr_cpus_enabled++;
	if (out->nr_cpus >= out->max_cpus || !out->cpus)
		return;
	out->cpus[out->nr_cpus].apic_id = apic_id;
	out->cpus[out->nr_cpus].uid = uid;
	out->cpus[out->nr_cpus].from_x2apic_entry = x2;
	out->nr_cpus++;
	out->nr_x2apic_cpus += x2;
}

static void add_nmi(struct acpi_madt_info *out, u32 uid, u16 flags, u8 lint, bool x2)
{
	struct acpi_lapic_nmi *n;

	if (lint > 1 || out->nr_nmis >= ACPI_MAX_NMIS) {
		out->nr_nmis_ignored++;
		return;
	}
	n = &out->nmis[out->nr_nmis++];
	n->uid = uid;
	n->flags = flags;
	n->lint = lint;
	n->from_x2apic_entry = x2;
}

unsigned int acpi_nmi_lints(const struct acpi_madt_info *info, u32 uid)
{
	unsigned int lints = 0;

	for (unsigned int i = 0; i < info->nr_nmis; i++)
		if (info->nmis[i].uid == ACPI_UID_ALL || info->nmis[i].uid == uid)
			lints |= 1u << info->nmis[i].lint;
	return lints;
}

static void add_ioapic(struct acpi_madt_info *out, const u8 *e)
{
	struct acpi_ioapic *io;

	if (out->nr_ioapics >= ACPI_MAX_IOAPICS)
		return;
	io = &out->ioapics[out->nr_ioapics++];
	io->id = e[2];
	io->phys = rd32(e + 4);
	io->gsi_base = rd32(e + 8);
}

/* Decode one MADT entry of length len (already bounds-checked). */
static void madt_entry(struct acpi_madt_info *out, const u8 *e, u8 len)
{
	u8 type = e[0];

	if (type == MADT_LAPIC && len >= 8) {
		if (rd32(e + 4) & MADT_CPU_ENABLED)
			add_cpu(out, e[3], e[2], false);
		else
			out->nr_cpus_disabled++;
	} else if (type == MADT_X2APIC && len >= 16) {
		if (rd32(e + 8) & MADT_CPU_ENABLED)
			add_cpu(out, rd32(e + 4), rd32(e + 12), true);
		else
			out->nr_cpus_disabled++;
	} else if (type == MADT_IOAPIC && len >= 12) {
		add_ioapic(out, e);
	} else if (type == MADT_ISO && len >= 10) {
		out->nr_overrides++;
	} else if (type == MADT_LAPIC_NMI && len >= 6) {
		add_nmi(out, e[2] == 0xff ? ACPI_UID_ALL : e[2], (u16)rd16(e + 3), e[5], false);
	} else if (type == MADT_X2APIC_NMI && len >= 12) {
		add_nmi(out, rd32(e + 4), (u16)rd16(e + 2), e[8], true);
	} else if (type == MADT_LAPIC_OVERRIDE && len >= 12) {
		out->lapic_phys = rd64(e + 4);
		out->lapic_override = true;
	}
}

static int parse_madt_entries(const u8 *madt, u64 pa, struct acpi_madt_info *out)
{
	u32 len = rd32(madt + 4), off = MADT_FIXED_LEN;

	if (len < MADT_FIXED_LEN)
		return fail(out, ACPI_ERR_BAD_TABLE, "MADT", "shorter than its fixed part", pa);
	out->lapic_phys = rd32(madt + 36);
	out->pcat_compat = rd32(madt + 40) & 1;
	while (off + 2 <= len) {
		u8 elen = madt[off + 1];

		if (elen < 2 || off + elen > len)
			return fail(out, ACPI_ERR_BAD_TABLE, "MADT", "bad entry length", pa + off);
		madt_entry(out, madt + off, elen);
		off += elen;
	}
	return ACPI_OK;
}

/* ---- clocks: the FADT's PM timer and the HPET table, best effort ------------------------- */

/* The first table with signature sig the RSDT/XSDT lists, mapped and checksummed; else NULL. */
static const u8 *find_table(const u8 *sdt, bool xsdt, acpi_map_fn map, void *ctx,
			    const char *sig)
{
	unsigned int esz = xsdt ? 8 : 4;
	u32 n = (rd32(sdt + 4) - SDT_HEADER_LEN) / esz;
	const u8 *table;

	for (u32 i = 0; i < n; i++) {
		const u8 *e = sdt + SDT_HEADER_LEN + i * esz;
		u64 pa = xsdt ? rd64(e) : rd32(e);
		const u8 *h = pa ? map(ctx, pa, SDT_HEADER_LEN) : NULL;

		if (h && sig_is(h, sig, 4))
			return map_sdt(map, ctx, pa, sig, sig, &table, NULL) ? NULL : table;
	}
	return NULL;
}

/* PM_TMR_BLK, or for a FADT that leaves it 0, an I/O-space X_PM_TMR_BLK below 64 KiB. */
static void parse_fadt(const u8 *fadt, struct acpi_clocks *c)
{
	u32 len = rd32(fadt + 4);
	u64 port = 0;

	if (len < FADT_FLAGS + 4)
		return;
	if (rd32(fadt + FADT_PM_TMR_BLK) && fadt[FADT_PM_TMR_LEN] == 4)
		port = rd32(fadt + FADT_PM_TMR_BLK);
	else if (len >= FADT_X_PM_TMR_BLK + 12 && fadt[FADT_X_PM_TMR_BLK] == GAS_SPACE_IO)
		port = rd64(fadt + FADT_X_PM_TMR_BLK + 4);
	if (port && port <= 0xfffc) {
		c->pm_timer_port = (u16)port;
		c->pm_timer_32bit = rd32(fadt + FADT_FLAGS) & FADT_TMR_VAL_EXT;
	}
}

static void parse_hpet(const u8 *hpet, struct acpi_clocks *c)
{
	if (rd32(hpet + 4) >= HPET_TABLE_BASE + 12 && hpet[HPET_TABLE_BASE] == GAS_SPACE_MEMORY)
		c->hpet_phys = rd64(hpet + HPET_TABLE_BASE + 4);
}

static void find_clocks(const u8 *sdt, bool xsdt, acpi_map_fn map, void *ctx,
			struct acpi_clocks *c)
{
	const u8 *fadt = find_table(sdt, xsdt, map, ctx, "FACP");
	const u8 *hpet = find_table(sdt, xsdt, map, ctx, "HPET");

	if (fadt)
		parse_fadt(fadt, c);
	if (hpet)
		parse_hpet(hpet, c);
}

int acpi_parse_madt(const void *rsdp, size_t rsdp_len, acpi_map_fn map, void *ctx,
		    struct acpi_madt_info *out)
{
	const u8 *p = rsdp, *sdt, *madt;
	u64 madt_pa = 0;
	int ret;

	*out = (struct acpi_madt_info){ .cpus = out->cpus, .max_cpus = out->max_cpus };
	ret = acpi_check_rsdp(rsdp, rsdp_len, out);
	if (ret)
		return ret;
	out->rsdp_revision = p[15];
	for (int i = 0; i < 6; i++)
		out->oem_id[i] = (char)p[9 + i];
	ret = map_root(p, map, ctx, &sdt, &out->used_xsdt, out->error);
	if (!ret)
		find_clocks(sdt, out->used_xsdt, map, ctx, &out->clocks);
	if (!ret)
		ret = find_listed(sdt, out->used_xsdt, map, ctx, "APIC", &madt_pa, out->error);
	if (ret == ACPI_ERR_NO_TABLE)
		return fail(out, ACPI_ERR_NO_MADT, out->used_xsdt ? "XSDT" : "RSDT",
			    "no MADT (APIC) table listed", 0);
	if (!ret)
		ret = map_sdt(map, ctx, madt_pa, "MADT", "APIC", &madt, out->error);
	if (!ret)
		ret = parse_madt_entries(madt, madt_pa, out);
	return ret;
}
