/*
 * x86-64 side of mm/arch_mm.h: how far the direct map reaches. arch/x86_64/paging.c already
 * maps all RAM of the memory map (up to DIRECT_MAP_MAX_PHYS) before mm starts, so extending it
 * is only a bounds check here; page tables of address spaces are elsewhere (mm/vm.c).
 */
#include "mm/arch_mm.h"
#include <arch/paging.h>

u64 arch_direct_map_boot_limit(void)
{
	return arch_direct_map_end();
}

u64 arch_direct_map_max(void)
{
	return arch_direct_map_end();
}

/* paging.c mapped every RAM region below arch_direct_map_end() at boot. */
int arch_map_direct(struct memblock *mb, u64 phys, u64 len)
{
	(void)mb;
	return phys + len <= arch_direct_map_end() && phys + len > phys ? 0 : -1;
}
