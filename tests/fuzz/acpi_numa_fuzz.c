/*
 * libFuzzer target for the SRAT and SLIT parser (kernel/acpi_numa.c), through the table
 * lookup of kernel/acpi.c. The input is a small "physical memory" as in acpi_fuzz.c: the
 * RSDP at offset 0, every table pointer an offset into the input.
 * Expect: any bytes are parsed or rejected with a message; no read outside the memory
 * (ASan), no undefined behaviour (UBSan); what is accepted keeps every promise of
 * kernel/acpi_numa.h (nodes in range, no overlap across nodes, a symmetric distance table
 * with 10 exactly on its diagonal).
 */
#include <stdlib.h>
#include <string.h>
#include "kernel/acpi_numa.h"
#include "tests/fuzz/fuzz_mem.h"

static bool overlap(const struct acpi_numa_memblk *a, const struct acpi_numa_memblk *b)
{
	return a->base < b->base + b->size && b->base < a->base + a->size;
}

static void check_accepted(const struct acpi_numa_info *info)
{
	if (info->nr_nodes < 1 || info->nr_nodes > ACPI_NUMA_MAX_NODES ||
	    info->nr_cpus > ACPI_NUMA_MAX_CPUS || info->nr_mem > ACPI_NUMA_MAX_MEMBLKS)
		abort();
	for (unsigned int i = 0; i < info->nr_cpus; i++)
		if (info->cpus[i].node >= info->nr_nodes)
			abort();
	for (unsigned int i = 0; i < info->nr_mem; i++) {
		if (info->mem[i].node >= info->nr_nodes || !info->mem[i].size)
			abort();
		for (unsigned int j = 0; j < i; j++)
			if (info->mem[i].node != info->mem[j].node &&
			    overlap(&info->mem[i], &info->mem[j]))
				abort();
	}
	for (unsigned int a = 0; a < info->nr_nodes; a++)
		for (unsigned int b = 0; b < info->nr_nodes; b++)
			if (info->distance[a][b] != info->distance[b][a] ||
			    (a == b) != (info->distance[a][b] == ACPI_LOCAL_DISTANCE))
				abort();
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	static struct acpi_numa_info info;
	unsigned char *copy = malloc(size ? size : 1);	/* exact size: ASan sees overreads */
	struct mem m = { copy, size };
	int rc;

	memcpy(copy, data, size);
	rc = acpi_parse_numa(copy, size < ACPI_RSDP_V2_LEN ? size : ACPI_RSDP_V2_LEN, fuzz_map,
			     &m, &info);
	if (rc == ACPI_OK)
		check_accepted(&info);
	else if (!memchr(info.error, 0, sizeof(info.error)) ||
		 (!info.error[0] && rc != ACPI_ERR_NO_TABLE))
		abort();	/* every rejection but "no SRAT" says why, NUL-terminated */
	free(copy);
	return 0;
}
