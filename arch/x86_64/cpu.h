/*
 * x86-64 CPU plumbing shared by arch/x86_64 files only: descriptor tables, interrupt vectors,
 * the trap frame, the local APIC and timer internals. Generic code uses kernel/smp.h instead.
 */
#ifndef ARCH_X86_64_CPU_H
#define ARCH_X86_64_CPU_H

#include "kernel/compiler.h"

struct cpu;

/* Segment selectors of the per-CPU GDT (arch/x86_64/gdt.c); code/data match the boot GDT. */
#define SEL_KCODE 0x08
#define SEL_KDATA 0x10
#define SEL_TSS 0x18

/* Interrupt stack table slots (TSS.ist[n - 1]) for exceptions that need a known-good stack. */
#define IST_DOUBLE_FAULT 1	/* #DF and #MC: the kernel stack may be what overflowed */
#define IST_NMI 2		/* NMI: can arrive anywhere, including on a half-built frame */

/* Interrupt vectors. 0-31 are exceptions. */
#define VEC_NMI 2
#define VEC_DOUBLE_FAULT 8
#define VEC_PAGE_FAULT 14
#define VEC_MACHINE_CHECK 18
#define VEC_PIC_BASE 0x20	/* the masked 8259s are remapped here: 0x20-0x2f */
#define VEC_TIMER 0x30		/* LAPIC timer */
#define VEC_CALL 0xf0		/* smp_call_function queue */
#define VEC_WAKE 0xf1		/* wake from hlt; the handler only acknowledges */
#define VEC_SPURIOUS 0xff	/* LAPIC spurious vector: no EOI */

/* What isr.asm pushes, lowest address first: the C view of an interrupted context. */
struct trap_frame {
	u64 r15, r14, r13, r12, r11, r10, r9, r8;
	u64 rbp, rdi, rsi, rdx, rcx, rbx, rax;
	u64 vector, error_code;			/* error_code is 0 when the CPU pushes none */
	u64 rip, cs, rflags, rsp, ss;		/* pushed by the CPU */
};

/* Per-CPU stacks (arch/x86_64/gdt.c): every one has an unmapped guard page below it. */
#define KSTACK_SIZE (16 * 1024)
#define IST_STACK_SIZE (8 * 1024)

void *cpu_kstack_top(unsigned int cpu);
int cpu_stack_guard_owner(u64 addr);
/* Give cpu its stacks with unmapped guards (CPU 0: unmap the image's guards; panics if it
 * cannot; others: map pages from mm). Returns 0, or -1 if memory ran out. */
int cpu_stacks_init(unsigned int cpu);
/* Allocate the descriptor tables of CPUs 1 .. nr_cpu_ids - 1 (after mm_init). 0 or -1. */
int gdt_alloc_cpus(void);
/* Load this CPU's GDT, TSS (with IST stacks) and segment registers. */
void gdt_load_cpu(unsigned int cpu);
/* NULL if the calling CPU runs on cpu's GDT and TSS, else "GDT" or "TSS" (boot tests). */
const char *gdt_check_cpu(unsigned int cpu);
void idt_init(void);
void idt_load(void);

/* Control registers and MSRs. */
#define MSR_APIC_BASE 0x1b
#define MSR_EFER 0xc0000080
#define MSR_GS_BASE 0xc0000101
#define EFER_LMA (1u << 10)

static inline u64 read_cr0(void) { u64 v; __asm__ __volatile__("mov %%cr0, %0" : "=r"(v)); return v; }
static inline u64 read_cr2(void) { u64 v; __asm__ __volatile__("mov %%cr2, %0" : "=r"(v)); return v; }
static inline u64 read_cr3(void) { u64 v; __asm__ __volatile__("mov %%cr3, %0" : "=r"(v)); return v; }
static inline u64 read_cr4(void) { u64 v; __asm__ __volatile__("mov %%cr4, %0" : "=r"(v)); return v; }
static inline void write_cr4(u64 v) { __asm__ __volatile__("mov %0, %%cr4" : : "r"(v) : "memory"); }
static inline void write_cr0(u64 v) { __asm__ __volatile__("mov %0, %%cr0" : : "r"(v) : "memory"); }

/* Local APIC (arch/x86_64/apic.c). IDs are 32-bit: x2APIC mode uses all of them. */
void apic_init_bsp(u64 lapic_phys);
void apic_init_cpu(void);	/* enable this CPU's LAPIC (same mode as the BSP) */
bool apic_is_x2apic(void);
u32 apic_read_id(void);
volatile u32 *apic_xapic_reg(u32 reg);
void apic_eoi(void);
u32 apic_read(u32 reg);
void apic_write(u32 reg, u32 val);
/* Send vector (fixed delivery) to one APIC ID. Returns 0, or -1 if the ICR stayed busy. */
int apic_send_ipi(u32 apic_id, u8 vector);
int apic_send_nmi(u32 apic_id);
int apic_send_init(u32 apic_id);
int apic_send_sipi(u32 apic_id, u8 page);
/* INIT and SIPI to every CPU but the caller (destination shorthand), for bring-up. */
int apic_send_init_others(void);
int apic_send_sipi_others(u8 page);
/* Program this CPU's LINT pins in lints (bit n: LINTn) as NMI, per the MADT. */
void apic_set_nmi_lints(unsigned int lints);
void pic_disable(void);

/* LAPIC register offsets (xAPIC MMIO offset; x2APIC MSR = 0x800 + offset / 16). */
#define APIC_ID 0x20
#define APIC_TPR 0x80
#define APIC_EOI 0xb0
#define APIC_SVR 0xf0
#define APIC_ESR 0x280
#define APIC_ICR_LO 0x300
#define APIC_ICR_HI 0x310
#define APIC_LVT_TIMER 0x320
#define APIC_LVT_LINT0 0x350
#define APIC_LVT_LINT1 0x360
#define APIC_LVT_ERROR 0x370
#define APIC_TIMER_INIT 0x380
#define APIC_TIMER_CUR 0x390
#define APIC_TIMER_DIV 0x3e0
#define APIC_LVT_MASKED (1u << 16)
#define APIC_TIMER_PERIODIC (1u << 17)

/* Timer (arch/x86_64/timer.c). */
struct acpi_clocks;
/*
 * BSP, once: the TSC and LAPIC timer rates against the HPET, PM timer or PIT (clocks: from
 * ACPI). _begin() opens the first window, timer_calibrate() closes it (waiting for what is
 * left of its 20 ms) and sets cycles_khz; in between, nothing may touch the PIT or this CPU's
 * LAPIC timer, and nothing may use calibrated time (udelay, cycles_to_us).
 */
void timer_calibrate_begin(const struct acpi_clocks *clocks);
void timer_calibrate(void);
void timer_start_cpu(void);	/* this CPU: periodic LAPIC timer at TIMER_HZ */
void timer_interrupt(void);

/* Trap entry (arch/x86_64/trap.c), called by isr.asm for every vector. */
void trap_dispatch(struct trap_frame *f);
void smp_ap_main(unsigned int cpu);	/* arch/x86_64/smp.c: first C code of an AP */

#endif
