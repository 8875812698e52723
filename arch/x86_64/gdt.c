/*
 * Per-CPU descriptor tables and stacks: each CPU has its own GDT (its TSS descriptor's busy
 * bit is per CPU) and TSS, whose IST slots give #DF/#MC and NMI stacks of their own. Every
 * stack here has an unmapped guard page below it, so an overflow faults instead of silently
 * corrupting the neighbour. The shared IDT is in idt.c.
 */
#include "kernel/smp.h"
#include "kernel/panic.h"
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
 * One CPU's stacks, page aligned; each guard page is unmapped by cpu_stacks_guard():
 *   [guard][kernel stack 16 KiB][guard][#DF/#MC stack 8 KiB][guard][NMI stack 8 KiB]
 */
struct cpu_stacks {
	u8 guard0[PAGE_SIZE];
	u8 kstack[KSTACK_SIZE];
	u8 guard1[PAGE_SIZE];
	u8 df_stack[IST_STACK_SIZE];
	u8 guard2[PAGE_SIZE];
	u8 nmi_stack[IST_STACK_SIZE];
} __aligned(PAGE_SIZE);

static struct cpu_tables cpu_tables[MAX_CPUS];
static struct cpu_stacks cpu_stacks[MAX_CPUS];

#define GDT_CODE64 0x00209a0000000000ull	/* present, ring 0, code, L=1 */
#define GDT_DATA 0x0000920000000000ull		/* present, ring 0, data, writable */

void *cpu_kstack_top(unsigned int cpu)
{
	return cpu_stacks[cpu].kstack + KSTACK_SIZE;
}

/* The CPU whose stack guard pages contain addr, or -1: names the CPU in an overflow report. */
int cpu_stack_guard_owner(u64 addr)
{
	u64 base = (u64)(uintptr_t)cpu_stacks, off;
	extern char bsp_stack_guard[];	/* the boot stack, before cpu 0 moves to cpu_stacks[0] */

	if (addr - (u64)(uintptr_t)bsp_stack_guard < PAGE_SIZE)
		return 0;
	if (addr < base || addr >= base + sizeof(cpu_stacks))
		return -1;
	off = (addr - base) % sizeof(struct cpu_stacks);
	if (off < PAGE_SIZE || (off >= offsetof(struct cpu_stacks, guard1) &&
				off < offsetof(struct cpu_stacks, df_stack)) ||
	    (off >= offsetof(struct cpu_stacks, guard2) && off < offsetof(struct cpu_stacks, nmi_stack)))
		return (int)((addr - base) / sizeof(struct cpu_stacks));
	return -1;
}

void cpu_stacks_guard(unsigned int cpu)
{
	struct cpu_stacks *s = &cpu_stacks[cpu];

	if (arch_unmap_kernel_page(s->guard0) || arch_unmap_kernel_page(s->guard1) ||
	    arch_unmap_kernel_page(s->guard2))
		panic("cpu%u: cannot unmap the stack guard pages at %p", cpu, (void *)s);
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
	struct cpu_tables *t = &cpu_tables[cpu];

	t->gdt[0] = 0;
	t->gdt[1] = GDT_CODE64;
	t->gdt[2] = GDT_DATA;
	t->tss = (struct tss){ .iomap_base = sizeof(struct tss) };
	t->tss.ist[IST_DOUBLE_FAULT - 1] = (u64)(uintptr_t)(cpu_stacks[cpu].df_stack + IST_STACK_SIZE);
	t->tss.ist[IST_NMI - 1] = (u64)(uintptr_t)(cpu_stacks[cpu].nmi_stack + IST_STACK_SIZE);
	set_tss_desc(&t->gdt[3], (u64)(uintptr_t)&t->tss);
}

void gdt_load_cpu(unsigned int cpu)
{
	struct { u16 limit; u64 base; } __packed gdtr;

	build_tables(cpu);
	gdtr.limit = sizeof(cpu_tables[cpu].gdt) - 1;
	gdtr.base = (u64)(uintptr_t)cpu_tables[cpu].gdt;
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
