/*
 * kmain: the bootstrap CPU's path from the first C instruction to the lab (kernel/lab.h).
 * Each step is one call; the subsystems live in their own files. APs start in
 * arch/x86_64/smp.c.
 */
#include "kernel/arch.h"
#include "kernel/bootinfo.h"
#include "kernel/printk.h"
#include "kernel/panic.h"
#include "kernel/string.h"
#include <arch/console.h>
#include "kernel/cmdline.h"
#include "kernel/lab.h"
#include <arch/paging.h>
#include "kernel/smp.h"
#include "kernel/numa.h"
#include "kernel/timer.h"
#include "mm/mm.h"
#include "mm/fail_page_alloc.h"

#define MB2_BOOT_MAGIC 0x36d76289u

struct boot_info boot_info;
u64 boot_tsc_start;	/* kernel/timer.h */

/*
 * Where the time from kernel entry to all CPUs online goes: the cycle counter at the end of
 * each step, printed as one "boot:" line once the counter is calibrated (docs/results.md).
 */
static struct boot_step {
	const char *name;
	u64 cycles;
} boot_steps[6];
static unsigned int nr_boot_steps;

static void boot_step(const char *name)
{
	if (nr_boot_steps < ARRAY_SIZE(boot_steps))
		boot_steps[nr_boot_steps++] = (struct boot_step){ name, arch_cycles() };
}

/* "boot: kernel entry to CPUs online 45.813 ms: boot report 8.012, paging 1.374, ..." */
static void print_boot_steps(void)
{
	char line[256] = "";
	u64 prev = boot_tsc_start, us;
	size_t n = 0;

	for (unsigned int i = 0; i < nr_boot_steps; i++) {
		us = cycles_to_us(boot_steps[i].cycles - prev);
		n += (size_t)scnprintf(line + n, sizeof(line) - n, "%s%s %llu.%03llu", i ? ", " : "",
				       boot_steps[i].name, (unsigned long long)us / 1000,
				       (unsigned long long)us % 1000);
		prev = boot_steps[i].cycles;
	}
	us = cycles_to_us(prev - boot_tsc_start);
	printk("boot: kernel entry to CPUs online %llu.%03llu ms: %s\n",
	       (unsigned long long)us / 1000, (unsigned long long)us % 1000, line);
}

extern char __kernel_phys_start[], __kernel_phys_end[];
void arch_early_init(void);

/* The loader's memory map as a table, as given (unsorted input is shown unsorted). */
static void print_memory_map(const struct boot_info *bi)
{
	u64 usable = 0;

	printk("memory map (%u entries from the loader%s%s):\n", bi->nr_mmap + bi->nr_mmap_dropped,
	       bi->nr_mmap_dropped ? ", the kernel keeps 256" : "",
	       bi->efi_mmap_present ? ", EFI memory map also present" : "");
	printk("  %-18s %-18s %10s  %s\n", "start", "end", "size KiB", "type");
	for (unsigned int i = 0; i < bi->nr_mmap; i++) {
		const struct mem_region *r = &bi->mmap[i];

		printk("  0x%016llx 0x%016llx %10llu  %s\n", (unsigned long long)r->base,
		       (unsigned long long)(r->base + r->length - 1),
		       (unsigned long long)(r->length >> 10), mem_type_name(r->type));
		if (r->type == MEM_USABLE)
			usable += r->length;
	}
	printk("  usable: %llu MiB\n", (unsigned long long)(usable >> 20));
}

/* One line, even for a command line longer than a printk line. */
static void print_cmdline(const char *cmdline)
{
	size_t len = strlen(cmdline);

	if (len <= 400)
		printk("command line: %s\n", cmdline);
	else
		printk("command line (%zu bytes; the first 400): %.400s ...\n", len, cmdline);
}

static void parse_boot_info(u32 magic, u64 mbi_phys)
{
	const char *err;
	u32 size;

	if (magic != MB2_BOOT_MAGIC)
		panic("no multiboot2 magic (eax=0x%x): boot smpmm with a multiboot2 loader", magic);
	memcpy(&size, arch_phys_to_virt(mbi_phys), 4);
	if (multiboot2_parse(arch_phys_to_virt(mbi_phys), size, &boot_info, &err))
		panic("bad multiboot2 information: %s", err);
	boot_info.mbi_phys = mbi_phys;
	boot_info.mbi_size = size;
	boot_info.kernel_phys_start = (u64)(uintptr_t)__kernel_phys_start;
	boot_info.kernel_phys_end = (u64)(uintptr_t)__kernel_phys_end;
	cmdline_fit_boot(&boot_info);
}

/*
 * The kernel without its lab (`make LAB=0`): nothing more to do once every CPU is up. The
 * lab's lab_main() (tests/lab/lab_main.c) replaces this one when it is linked in.
 */
__weak __noreturn void lab_main(void)
{
	if (nr_cpus_online() == nr_cpus)
		printk("smpmm: all CPUs online (%u); no lab built in, idling\n", nr_cpus);
	else
		printk("smpmm: %u of %u CPUs online; no lab built in, idling\n", nr_cpus_online(),
		       nr_cpus);
	for (;;)
		arch_wait_for_interrupt();
}

__noreturn void kmain(u32 magic, u64 mbi_phys)
{
	boot_tsc_start = arch_cycles();
	arch_early_init();
	arch_early_cpu_init();	/* GDT/TSS/IDT, GS base = cpu 0 area (arch/x86_64/smp.c) */
	printk("\nsmpmm: an SMP memory-management teaching kernel\n");
	parse_boot_info(magic, mbi_phys);
	printk("loader: %s\n", boot_info.loader_name);
	print_cmdline(boot_info.cmdline);
	printk("kernel image: 0x%llx-0x%llx\n", (unsigned long long)boot_info.kernel_phys_start,
	       (unsigned long long)boot_info.kernel_phys_end);
	print_memory_map(&boot_info);
	boot_step("boot report");
	arch_paging_init(&boot_info);
	boot_step("paging");

	/* ---- subsystem initialisation, in order (one call each) ---- */
	cmdline_init(boot_info.cmdline);
	numa_init(&boot_info);	/* nodes, their memory and distances: ACPI SRAT, SLIT */
	arch_smp_prepare();	/* ACPI MADT: how many CPUs (nr_cpu_ids), the BSP's local APIC */
	boot_step("ACPI");
	if (mm_init(&boot_info))	/* memblock, zones, the first chunks of each node's memory map */
		panic("mm_init: no memory to run on (the memory map above, the mm: line before this "
		      "one: why)");
	boot_step("mm_init");
	arch_smp_init();	/* timer, per-CPU areas and stacks, start every AP; interrupts on */
	boot_step("arch_smp_init");
	print_boot_steps();
	numa_cpus_init();	/* each CPU's node, by its APIC ID (kernel/numa.c) */
	mm_deferred_init();	/* the rest of the memory maps and free lists, on every CPU at once */
	mm_cpus_online();	/* per-CPU page list sizes for the CPUs now online (mm/mm_init.c) */
	fail_page_alloc_boot();	/* `fail_page_alloc=` armed: the boot's own allocations are spared */
	mm_boot_dump();		/* `mm.dump`: the allocator's tables, pagesets as the lab sees them */

	lab_main();		/* tests, benchmarks, soak, monitor (kernel/lab.h); never returns */
}
