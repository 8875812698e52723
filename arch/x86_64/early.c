/* The first arch step of the BSP: a console and a provisional per-CPU head so arch_cpu_id() works. */
#include "kernel/arch.h"
#include <arch/console.h>
#include "io.h"

#define MSR_GS_BASE 0xc0000101

static struct arch_cpu_head boot_cpu_head = { .self = &boot_cpu_head };

void arch_early_init(void)
{
	wrmsr(MSR_GS_BASE, (u64)(uintptr_t)&boot_cpu_head);
	arch_console_init();
}
