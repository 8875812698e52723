/*
 * KTAP suite `protect`: the kernel's page protections hold. Each case makes a forbidden access
 * under a trap recovery point and expects the page fault it must cause (x86: vector 14, with
 * error-code bits P=1 present/protection, W=2 write, I=16 instruction fetch), and the one
 * access that must stay allowed (data through the direct map) is checked not to fault.
 */
#include "tests/ktest/ktest.h"
#include "kernel/trap.h"
#include "kernel/arch.h"
#include <arch/paging.h>

#define VEC_PF 14
#define PF_PRESENT 0x1
#define PF_WRITE 0x2
#define PF_FETCH 0x10

static const u64 protect_rodata_word = 0x1234;
static u8 protect_data_code[16] __aligned(16);

static void protect_target_function(void)
{
}

/* Write v to *p under a recovery point; returns the trap (vector 0 if none happened). */
static struct trap_recovery try_write(volatile u64 *p, u64 v)
{
	struct trap_recovery r = { .vector = 0 };

	if (trap_recover_begin(&r)) {
		*p = v;
		trap_recover_end(&r);
		r.vector = 0;
	}
	return r;
}

/* Kernel text is read-only: a write faults with P|W at exactly that address. */
static void protect_text_write_faults(struct ktest *t)
{
	volatile u64 *p = (volatile u64 *)(uintptr_t)&protect_target_function;
	struct trap_recovery r = try_write(p, 0xcc);

	KT_EXPECT_EQ(t, r.vector, VEC_PF);
	KT_EXPECT_EQ(t, r.error_code & (PF_PRESENT | PF_WRITE), PF_PRESENT | PF_WRITE);
	KT_EXPECT_EQ(t, r.fault_addr, (u64)(uintptr_t)p);
}

/*
 * The same page through the direct map (arch_phys_to_virt() of its physical address), the
 * alias every physical page has: read-only too, or the text could be rewritten from there.
 * The write would put back the bytes that are there, so a kernel without the protection
 * comes out of this test unharmed.
 */
static void protect_text_alias_write_faults(struct ktest *t)
{
	const void *text = (const void *)(uintptr_t)&protect_target_function;
	volatile u64 *alias = arch_phys_to_virt(arch_virt_to_phys(text));
	struct trap_recovery r = try_write(alias, *alias);

	KT_EXPECT_EQ(t, r.vector, VEC_PF);
	KT_EXPECT_EQ(t, r.error_code & (PF_PRESENT | PF_WRITE), PF_PRESENT | PF_WRITE);
	KT_EXPECT_EQ(t, r.fault_addr, (u64)(uintptr_t)alias);
}

/* .rodata is read-only too. */
static void protect_rodata_write_faults(struct ktest *t)
{
	struct trap_recovery r = try_write((volatile u64 *)(uintptr_t)&protect_rodata_word, 1);

	KT_EXPECT_EQ(t, r.vector, VEC_PF);
	KT_EXPECT_EQ(t, r.error_code & (PF_PRESENT | PF_WRITE), PF_PRESENT | PF_WRITE);
	KT_EXPECT_EQ(t, protect_rodata_word, 0x1234);
}

/* .data is not executable: jumping into it faults on the instruction fetch. */
static void protect_data_not_executable(struct ktest *t)
{
	struct trap_recovery r = { .vector = 0 };
	void (*fn)(void) = (void (*)(void))(uintptr_t)protect_data_code;

	if (!(arch_kernel_pte_flags(protect_data_code) & PTE_NX))
		KT_SKIP(t, "this CPU has no NX bit");
	protect_data_code[0] = 0xc3;	/* ret: harmless if it did run */
	if (trap_recover_begin(&r)) {
		fn();
		trap_recover_end(&r);
	}
	KT_EXPECT_EQ(t, r.vector, VEC_PF);
	KT_EXPECT_EQ(t, r.error_code & PF_FETCH, PF_FETCH);
}

/* Nothing is mapped at address 0 (the boot identity map is gone). */
static void protect_null_pointer_faults(struct ktest *t)
{
	struct trap_recovery r = try_write((volatile u64 *)(uintptr_t)8, 1);

	KT_EXPECT_EQ(t, r.vector, VEC_PF);
	KT_EXPECT_EQ(t, r.error_code & PF_PRESENT, 0);
}

/* ... and through its direct-map alias, which still holds what the image's mapping shows. */
static void protect_rodata_alias_write_faults(struct ktest *t)
{
	volatile u64 *alias = arch_phys_to_virt(arch_virt_to_phys(&protect_rodata_word));
	struct trap_recovery r = try_write(alias, *alias);

	KT_EXPECT_EQ(t, *alias, 0x1234);
	KT_EXPECT_EQ(t, r.vector, VEC_PF);
	KT_EXPECT_EQ(t, r.error_code & (PF_PRESENT | PF_WRITE), PF_PRESENT | PF_WRITE);
}

/* The direct map's alias of .data stays writable: boot code writes page tables through it. */
static void protect_data_alias_writable(struct ktest *t)
{
	static u64 word = 1;
	volatile u64 *alias = arch_phys_to_virt(arch_virt_to_phys(&word));
	struct trap_recovery r = try_write(alias, 2);

	KT_EXPECT_EQ(t, r.vector, 0u);
	KT_EXPECT_EQ(t, READ_ONCE(word), 2u);
}

/*
 * The page-table flags themselves: text RX, rodata R+NX, data RW+NX, direct map RW+NX but for
 * its alias of text and rodata, R+NX.
 */
static void protect_section_flags(struct ktest *t)
{
	u64 nx = arch_kernel_pte_flags(protect_data_code) & PTE_NX;
	u64 text = arch_kernel_pte_flags((const void *)(uintptr_t)&protect_target_function);
	u64 ro = arch_kernel_pte_flags(&protect_rodata_word);
	u64 data = arch_kernel_pte_flags(protect_data_code);
	u64 direct = arch_kernel_pte_flags(arch_phys_to_virt(0x100000));
	u64 text_alias = arch_kernel_pte_flags(arch_phys_to_virt(
		arch_virt_to_phys((const void *)(uintptr_t)&protect_target_function)));
	u64 ro_alias = arch_kernel_pte_flags(arch_phys_to_virt(arch_virt_to_phys(&protect_rodata_word)));
	u64 data_alias = arch_kernel_pte_flags(arch_phys_to_virt(arch_virt_to_phys(protect_data_code)));

	KT_EXPECT_EQ(t, text & (PTE_P | PTE_W | PTE_NX), PTE_P);
	KT_EXPECT_EQ(t, ro & (PTE_P | PTE_W | PTE_NX), PTE_P | nx);
	KT_EXPECT_EQ(t, data & (PTE_P | PTE_W | PTE_NX), PTE_P | PTE_W | nx);
	KT_EXPECT_EQ(t, direct & (PTE_P | PTE_W | PTE_NX), PTE_P | PTE_W | nx);
	KT_EXPECT_EQ(t, text_alias & (PTE_P | PTE_W | PTE_NX), PTE_P | nx);
	KT_EXPECT_EQ(t, ro_alias & (PTE_P | PTE_W | PTE_NX), PTE_P | nx);
	KT_EXPECT_EQ(t, data_alias & (PTE_P | PTE_W | PTE_NX), PTE_P | PTE_W | nx);
}

static const struct ktest_case protect_cases[] = {
	KTEST_CASE(protect_text_write_faults),
	KTEST_CASE(protect_text_alias_write_faults),
	KTEST_CASE(protect_rodata_write_faults),
	KTEST_CASE(protect_rodata_alias_write_faults),
	KTEST_CASE(protect_data_alias_writable),
	KTEST_CASE(protect_data_not_executable),
	KTEST_CASE(protect_null_pointer_faults),
	KTEST_CASE(protect_section_flags),
};
KTEST_SUITE(protect, protect_cases);
