/*
 * SRAT and SLIT parser (kernel/acpi_numa.h): NUMA nodes, their memory and CPUs, and the
 * distances between them, checked for contradictions. Table layouts: ACPI 6.5 sections
 * 5.2.16 (SRAT) and 5.2.17 (SLIT). Finding the tables is kernel/acpi.c's.
 */
#include "kernel/acpi_numa.h"

#define SRAT_FIXED_LEN 48	/* header + 4 reserved (was "table revision") + 8 reserved */
#define SLIT_FIXED_LEN 44	/* header + number of localities (8 bytes) */
#define SLIT_MAX_LOCALITIES 1024	/* 1 MiB of matrix: acpi.c's table size cap */

#define SRAT_CPU 0		/* processor local APIC/SAPIC affinity, 16 bytes */
#define SRAT_MEMORY 1		/* memory affinity, 40 bytes */
#define SRAT_X2APIC 2		/* processor local x2APIC affinity, 24 bytes */
#define SRAT_ENABLED 0x1u
#define SRAT_MEM_HOTPLUGGABLE 0x2u
#define SRAT_MEM_NONVOLATILE 0x4u

static u32 rd16(const u8 *p) { return p[0] | (u32)p[1] << 8; }
static u32 rd32(const u8 *p) { return rd16(p) | rd16(p + 2) << 16; }
static u64 rd64(const u8 *p) { return rd32(p) | (u64)rd32(p + 4) << 32; }

static void err_dec(char *error, u64 v)
{
	char buf[21];
	int i = 20;

	buf[i] = 0;
	do
		buf[--i] = (char)('0' + v % 10);
	while ((v /= 10) && i > 0);
	acpi_err_append(error, buf + i);
}

/* "<table>: <what> <a><mid><b> (at <pa>)" for messages naming two nodes or values. */
static int fail2(struct acpi_numa_info *out, const char *table, const char *what, u64 a,
		 const char *mid, u64 b, u64 pa)
{
	char *e = out->error;

	e[0] = 0;
	acpi_err_append(e, table);
	acpi_err_append(e, ": ");
	acpi_err_append(e, what);
	err_dec(e, a);
	acpi_err_append(e, mid);
	err_dec(e, b);
	acpi_err_append(e, " (at ");
	acpi_err_hex(e, pa);
	acpi_err_append(e, ")");
	return ACPI_ERR_INVALID;
}

/* The node id of proximity domain pxm, numbering a new one if needed; -1 if there is no
 * room for another. */
static int pxm_to_node(struct acpi_numa_info *out, u32 pxm)
{
	for (unsigned int n = 0; n < out->nr_nodes; n++)
		if (out->pxm[n] == pxm)
			return (int)n;
	if (out->nr_nodes == ACPI_NUMA_MAX_NODES)
		return -1;
	out->pxm[out->nr_nodes] = pxm;
	return (int)out->nr_nodes++;
}

static int add_cpu(struct acpi_numa_info *out, u32 apic_id, u32 pxm, bool x2, u64 pa)
{
	int node = pxm_to_node(out, pxm);

	if (node < 0)
		return fail2(out, "SRAT", "more than ", ACPI_NUMA_MAX_NODES,
			     " proximity domains: domain ", pxm, pa);
	for (unsigned int i = 0; i < out->nr_cpus; i++) {
		if (out->cpus[i].apic_id != apic_id)
			continue;
		if (out->cpus[i].node != node)
			return fail2(out, "SRAT", "a CPU in two nodes: APIC ID ", apic_id,
				     " also in node ", (u64)node, pa);
		out->nr_cpu_duplicates++;
		return ACPI_OK;
	}
	if (out->nr_cpus == ACPI_NUMA_MAX_CPUS) {
		out->nr_cpus_dropped++;
		return ACPI_OK;
	}
	out->cpus[out->nr_cpus++] = (struct acpi_numa_cpu){ apic_id, (u8)node, x2 };
	return ACPI_OK;
}

/* A memory affinity entry at e (40 bytes). */
static int add_memory(struct acpi_numa_info *out, const u8 *e, u64 pa)
{
	u64 base = rd64(e + 8), size = rd64(e + 16);
	u32 flags = rd32(e + 28);
	int node;

	if (!(flags & SRAT_ENABLED) || !size) {
		out->nr_mem_disabled++;
		return ACPI_OK;
	}
	if (base + size < base)
		return acpi_fail(out->error, ACPI_ERR_INVALID, "SRAT",
				 "memory range wraps past 2^64", pa);
	node = pxm_to_node(out, rd32(e + 2));
	if (node < 0)
		return fail2(out, "SRAT", "more than ", ACPI_NUMA_MAX_NODES,
			     " proximity domains: domain ", rd32(e + 2), pa);
	if (out->nr_mem == ACPI_NUMA_MAX_MEMBLKS)
		return fail2(out, "SRAT", "more than ", ACPI_NUMA_MAX_MEMBLKS,
			     " memory ranges: node ", (u64)node, pa);
	out->mem[out->nr_mem++] = (struct acpi_numa_memblk){
		base, size, (u8)node, flags & SRAT_MEM_HOTPLUGGABLE, flags & SRAT_MEM_NONVOLATILE };
	out->nr_mem_hotpluggable += !!(flags & SRAT_MEM_HOTPLUGGABLE);
	return ACPI_OK;
}

/* One entry of length len (within the table). Processor proximity domains are 8 bits in
 * SRAT revision 1, 32 bits (3 more bytes at 9..11) from revision 2 on. */
static int srat_entry(struct acpi_numa_info *out, const u8 *e, u8 len, u64 pa)
{
	static const u8 min_len[] = { [SRAT_CPU] = 16, [SRAT_MEMORY] = 40, [SRAT_X2APIC] = 24 };
	u32 pxm;

	if (e[0] > SRAT_X2APIC) {
		out->nr_other_entries++;
		return ACPI_OK;
	}
	if (len < min_len[e[0]])
		return acpi_fail(out->error, ACPI_ERR_BAD_TABLE, "SRAT", "entry too short", pa);
	if (e[0] == SRAT_MEMORY)
		return add_memory(out, e, pa);
	if (!(rd32(e + (e[0] == SRAT_CPU ? 4 : 12)) & SRAT_ENABLED)) {
		out->nr_cpus_disabled++;
		return ACPI_OK;
	}
	if (e[0] == SRAT_X2APIC)
		return add_cpu(out, rd32(e + 8), rd32(e + 4), true, pa);
	pxm = e[2];
	if (out->srat_revision >= 2)
		pxm |= (u32)e[9] << 8 | (u32)e[10] << 16 | (u32)e[11] << 24;
	return add_cpu(out, e[3], pxm, false, pa);
}

/* Ranges of the same node may overlap (they are merged later); of two nodes, never. */
static int check_overlaps(struct acpi_numa_info *out)
{
	for (unsigned int i = 0; i < out->nr_mem; i++) {
		const struct acpi_numa_memblk *a = &out->mem[i];

		for (unsigned int j = i + 1; j < out->nr_mem; j++) {
			const struct acpi_numa_memblk *b = &out->mem[j];

			if (a->node != b->node && a->base < b->base + b->size &&
			    b->base < a->base + a->size)
				return fail2(out, "SRAT", "overlapping memory ranges: nodes ",
					     a->node, " and ", b->node,
					     a->base > b->base ? a->base : b->base);
		}
	}
	return ACPI_OK;
}

static void default_distances(struct acpi_numa_info *out)
{
	for (unsigned int a = 0; a < ACPI_NUMA_MAX_NODES; a++)
		for (unsigned int b = 0; b < ACPI_NUMA_MAX_NODES; b++)
			out->distance[a][b] = a == b ? ACPI_LOCAL_DISTANCE : ACPI_REMOTE_DISTANCE;
}

int acpi_parse_srat(const struct acpi_table *srat, struct acpi_numa_info *out)
{
	const u8 *t = srat->data;
	u32 off = SRAT_FIXED_LEN;
	int ret = ACPI_OK;

	*out = (struct acpi_numa_info){ .srat_revision = t[8] };
	default_distances(out);
	if (srat->len < SRAT_FIXED_LEN)
		return acpi_fail(out->error, ACPI_ERR_BAD_TABLE, "SRAT",
				 "shorter than its fixed part", srat->pa);
	while (!ret && off + 2 <= srat->len) {
		u8 elen = t[off + 1];

		if (elen < 2 || off + elen > srat->len)
			return acpi_fail(out->error, ACPI_ERR_BAD_TABLE, "SRAT", "bad entry length",
					 srat->pa + off);
		ret = srat_entry(out, t + off, elen, srat->pa + off);
		off += elen;
	}
	return ret ? ret : check_overlaps(out);
}

/*
 * The matrix must be symmetric with 10 on the diagonal and more than 10 elsewhere (Linux
 * ignores a SLIT breaking the last two rules; this kernel also wants symmetry, so that
 * "nearest" means the same seen from either side).
 */
static int check_slit(struct acpi_numa_info *out, const u8 *m, u64 n, u64 pa)
{
	for (u64 i = 0; i < n; i++) {
		if (m[i * n + i] != ACPI_LOCAL_DISTANCE)
			return fail2(out, "SLIT", "distance of locality ", i, " to itself is ",
				     m[i * n + i], pa);
		for (u64 j = i + 1; j < n; j++) {
			if (m[i * n + j] != m[j * n + i])
				return fail2(out, "SLIT", "asymmetric: distances ", m[i * n + j],
					     " and ", m[j * n + i], pa + SLIT_FIXED_LEN + i * n + j);
			if (m[i * n + j] <= ACPI_LOCAL_DISTANCE)
				return fail2(out, "SLIT", "remote distance of 10 or less: ",
					     m[i * n + j], " at column ", j, pa);
		}
	}
	return ACPI_OK;
}

int acpi_parse_slit(const struct acpi_table *slit, struct acpi_numa_info *out)
{
	const u8 *t = slit->data, *m = t + SLIT_FIXED_LEN;
	u64 n;
	int ret;

	if (slit->len < SLIT_FIXED_LEN)
		return acpi_fail(out->error, ACPI_ERR_BAD_TABLE, "SLIT",
				 "shorter than its fixed part", slit->pa);
	n = rd64(t + 36);
	if (!n || n > SLIT_MAX_LOCALITIES || SLIT_FIXED_LEN + n * n > slit->len)
		return fail2(out, "SLIT", "locality count ", n, " does not fit a table of length ",
			     slit->len, slit->pa);
	ret = check_slit(out, m, n, slit->pa);
	if (ret)
		return ret;
	for (unsigned int a = 0; a < out->nr_nodes; a++)
		if (out->pxm[a] >= n)
			return fail2(out, "SLIT", "node id out of range: proximity domain ",
				     out->pxm[a], ", localities ", n, slit->pa);
	for (unsigned int a = 0; a < out->nr_nodes; a++)
		for (unsigned int b = 0; b < out->nr_nodes; b++)
			out->distance[a][b] = m[out->pxm[a] * n + out->pxm[b]];
	out->has_slit = true;
	out->slit_localities = n;
	return ACPI_OK;
}

int acpi_parse_numa(const void *rsdp, size_t rsdp_len, acpi_map_fn map, void *ctx,
		    struct acpi_numa_info *out)
{
	struct acpi_table t;
	int ret;

	*out = (struct acpi_numa_info){ 0 };
	default_distances(out);
	ret = acpi_find_table(rsdp, rsdp_len, map, ctx, "SRAT", &t, out->error);
	if (ret)
		return ret;
	ret = acpi_parse_srat(&t, out);
	if (ret)
		return ret;
	ret = acpi_find_table(rsdp, rsdp_len, map, ctx, "SLIT", &t, out->error);
	if (ret == ACPI_ERR_NO_TABLE)
		return ACPI_OK;
	return ret ? ret : acpi_parse_slit(&t, out);
}
