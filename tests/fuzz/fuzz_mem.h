/*
 * The ACPI fuzz targets' "physical memory": the input itself, the RSDP at offset 0 and every
 * table pointer an offset into it. fuzz_map() is the parsers' map callback over it.
 */
#ifndef TESTS_FUZZ_FUZZ_MEM_H
#define TESTS_FUZZ_FUZZ_MEM_H

#include <stddef.h>
#include "kernel/compiler.h"

struct mem {
	const unsigned char *base;
	size_t size;
};

/* base + pa if [pa, pa + len) lies inside the memory, else NULL (the parser must refuse). */
static inline const void *fuzz_map(void *ctx, u64 pa, u64 len)
{
	struct mem *m = ctx;

	if (pa > m->size || len > m->size - pa)
		return NULL;
	return m->base + pa;
}

#endif
