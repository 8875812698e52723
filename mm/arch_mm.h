/*
 * What mm/ needs from an architecture beyond kernel/arch.h: extending the direct map.
 * x86-64 implements it in arch/x86_64/mmu.c; the host harness in tests/host/shim/.
 */
#ifndef MM_ARCH_MM_H
#define MM_ARCH_MM_H

#include "kernel/compiler.h"

struct memblock;

/* Physical addresses below this are in the direct map when mm starts (x86-64: 4 GiB). */
u64 arch_direct_map_boot_limit(void);
/* No physical address at or above this can ever be mapped (size of the direct-map window). */
u64 arch_direct_map_max(void);
/*
 * Map physical [phys, phys + len) (page aligned) into the direct map at arch_phys_to_virt(),
 * taking page-table pages from memblock_alloc(mb). Returns 0, or -1 if it cannot (out of
 * page-table memory, or beyond arch_direct_map_max()); the range is then left unmapped.
 */
int arch_map_direct(struct memblock *mb, u64 phys, u64 len);

#endif
