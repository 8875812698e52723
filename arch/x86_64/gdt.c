/*
 * Per-CPU descriptor tables and stacks: each CPU has its own GDT (its TSS descriptor's busy
 * bit is per CPU) and TSS, whose IST slots give #DF/#MC and NMI stacks of their own. Every
 * stack here has an unmapped guard page below it, so an overflow faults instead of silently
 * corrupting the neighbour. CPU 0's are in the kernel image (it needs them before there is an
 * allocator); the others' are allocated for the CPUs there are. The shared IDT is in idt.c.
 */
#include "kernel/smp.h"
#include "kernel/panic.h"
#include "kernel/string.h"
#include "mm/mm.h"
#include <arch/paging.h>
#include "cpu.h"

struct tss {
	u32 reserved0;
	u64 rsp[3];		/* ring 0-2 stacks: unused, the kernel never leaves ring 0 */
	u64 reserved1;
	u64 ist[7];		/* IST1..IST7 */
	u64 reserved2;
	u16 reserved3;
	u16 iomap_base;
} __packed;
BUILD_BUG_ON(sizeof(struct tss) != 104);

struct cpu_tables {
	u64 gdt[5];		/* null, kernel code, kernel data, TSS (two slots) */
	struct tss tss;
} __aligned(16);

/*
 * One CPU's stacks, page aligned; guard pages are never mapped (CPU 0: unmapped from the image):
 *   [guard][kernel stack 16 KiB][guard][#DF/#MC stack 8 KiB][guard][NMI stack 8 KiB]
 * CPU n >= 1 has slot n of a virtual area at CPU_STACK_AREA (44 KiB each, 44 MiB for
 * MAX_CPUS), where only its stack pages are mapped, to pages from the allocator: 32 KiB of
 * memory per CPU that exists, and a guard-page fault names its CPU by the slot alone.
 */
struct cpu_stacks {
	u8 guard0[PAGE_SIZE];
	u8 kstack[KSTACK_SIZE];
	u8 guard1[PAGE_SIZE];
	u8 df_stack[IST_STACK_SIZE];
	u8 guard2[PAGE_SIZE];
	u8 nmi_stack[IST_STACK_SIZE];
} __aligned(PAGE_SIZE);

static struct cpu_tables boot_cpu_tables;
static struct cpu_tables *cpu_tables;	/* [nr_cpu_ids], slot 0 unused (gdt_alloc_cpus) */
static struct cpu_stacks boot_cpu_stacks;
#define stack_area ((struct cpu_stacks *)CPU_STACK_AREA)

#define GDT_CODE64 0x00209a0000000000ull	/* present, ring 0, code, L=1 */
#define GDT_DATA 0x0000920000000000ull		/* present, ring 0, data, writable */

static struct cpu_stacks *stacks_of(unsigned int cpu)
{
	return cpu ? &stack_area[cpu] : &boot_cpu_stacks;
}

static struct cpu_tables *tables_of(unsigned int cpu)
{
	return cpu ? &cpu_tables[cpu] : &boot_cpu_tables;
}

void *cpu_kstack_top(unsigned int cpu)
{
	return stacks_of(cpu)->kstack + KSTACK_SIZE;
}

static bool is_guard_offset(u64 off)
{
	return off < PAGE_SIZE || (off >= offsetof(struct cpu_stacks, guard1) &&
				   off < offsetof(struct cpu_stacks, df_stack)) ||
	       (off >= offsetof(struct cpu_stacks, guard2) &&
		off < offsetof(struct cpu_stacks, nmi_stack));
}

/* The CPU whose stack guard pages contain addr, or -1: names the CPU in an overflow report. */
int cpu_stack_guard_owner(u64 addr)
{
	u64 boot = (u64)(uintptr_t)&boot_cpu_stacks, area = CPU_STACK_AREA;
	extern char bsp_stack_guard[];	/* CPU 0 runs on the boot stack (entry64.asm) */

	if (addr - (u64)(uintptr_t)bsp_stack_guard < PAGE_SIZE)
		return 0;
	if (addr - boot < sizeof(boot_cpu_stacks))
		return is_guard_offset(addr - boot) ? 0 : -1;
	if (addr - area >= MAX_CPUS * sizeof(struct cpu_stacks))
		return -1;
	if (!is_guard_offset((addr - area) % sizeof(struct cpu_stacks)))
		return -1;
	return (int)((addr - area) / sizeof(struct cpu_stacks));
}

/* A zeroed page-table page for the stack area, from the page allocator. */
static u64 stack_table_page(void)
{
	struct page *page = alloc_page(GFP_KERNEL);

	if (!page)
		return 0;
	memset(page_address(page), 0, PAGE_SIZE);
	return page_to_phys(page);
}

static int map_stack(u8 *stack, size_t size)
{
	for (size_t off = 0; off < size; off += PAGE_SIZE) {
		struct page *page = alloc_page(GFP_KERNEL);

		if (!page || arch_map_kernel_page(stack + off, page_to_phys(page), stack_table_page))
			return -1;
	}
	return 0;
}

int cpu_stacks_init(unsigned int cpu)
{
	struct cpu_stacks *s = stacks_of(cpu);

	if (!cpu) {
		if (arch_unmap_kernel_page(s->guard0) || arch_unmap_kernel_page(s->guard1) ||
		    arch_unmap_kernel_page(s->guard2))
			panic("cpu0: cannot unmap the stack guard pages at %p", (void *)s);
		return 0;
	}
	if (map_stack(s->kstack, KSTACK_SIZE) || map_stack(s->df_stack, IST_STACK_SIZE) ||
	    map_stack(s->nmi_stack, IST_STACK_SIZE))
		return -1;	/* what was mapped stays: this CPU is not started */
	return 0;
}

int gdt_alloc_cpus(void)
{
	if (nr_cpu_ids > 1 && !cpu_tables)
		cpu_tables = cpu_array_alloc(sizeof(struct cpu_tables));
	return nr_cpu_ids > 1 && !cpu_tables ? -1 : 0;
}

/* A 16-byte system descriptor for an available 64-bit TSS at base. */
static void set_tss_desc(u64 *slot, u64 base)
{
	u64 limit = sizeof(struct tss) - 1;

	slot[0] = (limit & 0xffff) | (base & 0xffffff) << 16 | 0x89ull << 40 |
		  ((limit >> 16) & 0xf) << 48 | ((base >> 24) & 0xff) << 56;
	slot[1] = base >> 32;
}

static void build_tables(unsigned int cpu)
{
	struct cpu_tables *t = tables_of(cpu);

	t->gdt[0] = 0;
	t->gdt[1] = GDT_CODE64;
	t->gdt[2] = GDT_DATA;
	t->tss = (struct tss){ .iomap_base = sizeof(struct tss) };
	t->tss.ist[IST_DOUBLE_FAULT - 1] = (u64)(uintptr_t)(stacks_of(cpu)->df_stack + IST_STACK_SIZE);
	t->tss.ist[IST_NMI - 1] = (u64)(uintptr_t)(stacks_of(cpu)->nmi_stack + IST_STACK_SIZE);
	set_tss_desc(&t->gdt[3], (u64)(uintptr_t)&t->tss);
}

void gdt_load_cpu(unsigned int cpu)
{
	struct { u16 limit; u64 base; } __packed gdtr;

	build_tables(cpu);
	gdtr.limit = sizeof(tables_of(cpu)->gdt) - 1;
	gdtr.base = (u64)(uintptr_t)tables_of(cpu)->gdt;
	/* New GDT, then reload CS with a far return and the data segments; FS/GS stay as they
	 * are (loading a selector into GS could clear the GS base). */
	__asm__ __volatile__("lgdt %0\n\t"
			     "pushq %1\n\t"
			     "leaq 1f(%%rip), %%rax\n\t"
			     "pushq %%rax\n\t"
			     "lretq\n"
			     "1:\n\t"
			     "movw %w2, %%ax\n\t"
			     "movw %%ax, %%ds\n\t"
			     "movw %%ax, %%es\n\t"
			     "movw %%ax, %%ss\n\t"
			     "ltr %w3"
			     : : "m"(gdtr), "i"(SEL_KCODE), "i"(SEL_KDATA), "r"((u16)SEL_TSS)
			     : "rax", "memory");
}

/*
 * For arch_cpu_check_own_state() (smp.c): does the calling CPU run on cpu's own GDT and TSS?
 * NULL, or which of them is not cpu's.
 */
const char *gdt_check_cpu(unsigned int cpu)
{
	const struct cpu_tables *t = tables_of(cpu);
	struct { u16 limit; u64 base; } __packed gdtr;
	const u64 *desc;
	u64 base;
	u16 tr;

	__asm__ __volatile__("sgdt %0; str %1" : "=m"(gdtr), "=r"(tr));
	if (gdtr.base != (u64)(uintptr_t)t->gdt)
		return "GDT";
	desc = &t->gdt[tr / 8];
	base = ((desc[0] >> 16) & 0xffffff) | ((desc[0] >> 56) & 0xff) << 24 | desc[1] << 32;
	if (tr != SEL_TSS || base != (u64)(uintptr_t)&t->tss)
		return "TSS";
	return NULL;
}
