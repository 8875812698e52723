/*
 * The interrupt descriptor table, shared by all CPUs: one interrupt gate per vector, each
 * pointing at its isr.asm stub. Gates clear IF on entry. What the vectors do is in trap.c.
 */
#include "kernel/compiler.h"
#include "cpu.h"

struct idt_gate {
	u16 offset_lo;
	u16 selector;
	u8 ist;			/* IST slot, 0 = the current stack */
	u8 type_attr;		/* 0x8e: present, ring 0, 64-bit interrupt gate */
	u16 offset_mid;
	u32 offset_hi;
	u32 reserved;
} __packed;
BUILD_BUG_ON(sizeof(struct idt_gate) != 16);

static struct idt_gate idt[256] __aligned(16);
extern const u64 isr_stub_table[256];	/* isr.asm */

static void set_gate(unsigned int vec, u64 handler, u8 ist)
{
	idt[vec] = (struct idt_gate){
		.offset_lo = (u16)handler,
		.selector = SEL_KCODE,
		.ist = ist,
		.type_attr = 0x8e,
		.offset_mid = (u16)(handler >> 16),
		.offset_hi = (u32)(handler >> 32),
	};
}

void idt_init(void)
{
	for (unsigned int v = 0; v < 256; v++)
		set_gate(v, isr_stub_table[v], 0);
	set_gate(VEC_DOUBLE_FAULT, isr_stub_table[VEC_DOUBLE_FAULT], IST_DOUBLE_FAULT);
	set_gate(VEC_MACHINE_CHECK, isr_stub_table[VEC_MACHINE_CHECK], IST_DOUBLE_FAULT);
	set_gate(VEC_NMI, isr_stub_table[VEC_NMI], IST_NMI);
}

void idt_load(void)
{
	struct { u16 limit; u64 base; } __packed idtr = { sizeof(idt) - 1, (u64)(uintptr_t)idt };

	__asm__ __volatile__("lidt %0" : : "m"(idtr) : "memory");
}
