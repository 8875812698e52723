/*
 * libFuzzer target for the ACPI parser (kernel/acpi.c). The input is a small "physical
 * memory": the RSDP sits at offset 0 and every table pointer is an offset into the input.
 * Expect: any bytes are parsed or rejected with a message naming the problem; no read
 * outside the memory (ASan), no undefined behaviour (UBSan), counts within their arrays.
 */
#include <stdlib.h>
#include <string.h>
#include "kernel/acpi.h"
#include "kernel/smp.h"	/* MAX_CPUS: the room the kernel gives the parser */
#include "tests/fuzz/fuzz_mem.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	static struct acpi_cpu room[MAX_CPUS];
	static struct acpi_madt_info info = { .cpus = room, .max_cpus = MAX_CPUS };
	unsigned char *copy = malloc(size ? size : 1);	/* exact size: ASan sees overreads */
	struct mem m = { copy, size };
	int rc;

	memcpy(copy, data, size);
	rc = acpi_parse_madt(copy, size < ACPI_RSDP_V2_LEN ? size : ACPI_RSDP_V2_LEN, fuzz_map, &m,
			     &info);
	if (rc == ACPI_OK) {
		if (info.nr_cpus > MAX_CPUS || info.nr_ioapics > ACPI_MAX_IOAPICS ||
		    info.nr_cpus > info.nr_cpus_enabled || info.nr_nmis > ACPI_MAX_NMIS ||
		    info.nr_x2apic_cpus > info.nr_cpus || info.cpus != room)
			abort();
		for (unsigned int i = 0; i < info.nr_nmis; i++)
			if (info.nmis[i].lint > 1)
				abort();
	} else if (!info.error[0] || !memchr(info.error, 0, sizeof(info.error))) {
		abort();	/* every rejection says why, NUL-terminated */
	}
	free(copy);
	return 0;
}
