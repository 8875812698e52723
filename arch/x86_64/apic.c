/*
 * Local APIC driver: xAPIC through MMIO in the direct map, or x2APIC through MSRs when CPUID
 * has it (QEMU 7.2 TCG does not, so xAPIC is what runs there; QEMU 10 has it, and above 255
 * CPUs only x2APIC can name them: 32-bit IDs in IPIs). Registers, EOI, IPIs, the MADT's NMI
 * pins. Also puts the legacy 8259 PICs out of the way. The timer on top of it is in timer.c.
 */
#include "kernel/arch.h"
#include "kernel/bootinfo.h"
#include "kernel/cmdline.h"
#include "kernel/panic.h"
#include "kernel/printk.h"
#include "cpu.h"
#include "io.h"

#define APIC_BASE_ENABLE (1ull << 11)
#define APIC_BASE_EXTD (1ull << 10)	/* x2APIC mode */
#define APIC_SVR_ENABLE (1u << 8)
#define ICR_BUSY (1u << 12)		/* xAPIC delivery status: send pending */
#define ICR_ASSERT (1u << 14)
#define ICR_FIXED (0u << 8)
#define ICR_NMI (4u << 8)
#define ICR_INIT (5u << 8)
#define ICR_STARTUP (6u << 8)
#define ICR_ALL_BUT_SELF (3u << 18)	/* destination shorthand: the destination is ignored */
#define LVT_NMI (4u << 8)		/* LVT delivery mode NMI (edge, not masked) */
#define ICR_SPIN_LIMIT 1000000u		/* polls of a busy ICR (>= 100 ms even on fast hosts) */
#define X2APIC_MSR(reg) (0x800u + ((reg) >> 4))
#define SZ_4G (4ull << 30)

static bool x2apic_mode;
static volatile u32 *lapic_mmio;	/* xAPIC registers in the direct map */

static bool force_xapic;
CMDLINE_BOOL("apic.xapic", force_xapic, "use xAPIC (MMIO) even if the CPU has x2APIC");

bool apic_is_x2apic(void)
{
	return x2apic_mode;
}

u32 apic_read(u32 reg)
{
	if (x2apic_mode)
		return (u32)rdmsr(X2APIC_MSR(reg));
	return lapic_mmio[reg / 4];
}

void apic_write(u32 reg, u32 val)
{
	if (x2apic_mode)
		wrmsr(X2APIC_MSR(reg), val);
	else
		lapic_mmio[reg / 4] = val;
}

/* The address of xAPIC register reg in the direct map (starting APs read their ID there). */
volatile u32 *apic_xapic_reg(u32 reg)
{
	return &lapic_mmio[reg / 4];
}

u32 apic_read_id(void)
{
	return x2apic_mode ? apic_read(APIC_ID) : apic_read(APIC_ID) >> 24;
}

void apic_eoi(void)
{
	apic_write(APIC_EOI, 0);
}

/* Remap the 8259s to 0x20-0x2f (so a spurious IRQ 7 cannot look like #DF) and mask them. */
void pic_disable(void)
{
	static const u8 init[][2] = {
		{ 0x20, 0x11 }, { 0xa0, 0x11 },		/* ICW1: init, ICW4 follows */
		{ 0x21, VEC_PIC_BASE }, { 0xa1, VEC_PIC_BASE + 8 },	/* ICW2: vector base */
		{ 0x21, 0x04 }, { 0xa1, 0x02 },		/* ICW3: cascade on IRQ 2 */
		{ 0x21, 0x01 }, { 0xa1, 0x01 },		/* ICW4: 8086 mode */
		{ 0x21, 0xff }, { 0xa1, 0xff },		/* mask every line */
	};

	for (unsigned int i = 0; i < ARRAY_SIZE(init); i++)
		outb(init[i][0], init[i][1]);
}

/*
 * The xAPIC registers' physical address: the MADT's (madt_pa, 0 if there is no MADT) if it
 * can be, else IA32_APIC_BASE's, which is where the CPU decodes them. The MADT's cannot be
 * in usable RAM (Linux's ioremap() refuses RAM: every register write would land in someone's
 * memory), unaligned, or beyond the 4 GiB the boot direct map covers (xAPIC registers are
 * reached through it); the boot says which and goes on.
 */
static u64 lapic_base(u64 madt_pa)
{
	u64 msr_pa = rdmsr(MSR_APIC_BASE) & ~0xfffull;
	const char *why = madt_pa ? boot_mmio_problem(&boot_info, madt_pa, PAGE_SIZE, SZ_4G) : "";

	if (!why)
		return madt_pa;
	if (madt_pa)
		pr_warn("apic: the MADT's local APIC address 0x%llx is %s: using IA32_APIC_BASE's "
			"0x%llx\n", (unsigned long long)madt_pa, why, (unsigned long long)msr_pa);
	return msr_pa;
}

void apic_init_bsp(u64 lapic_phys)
{
	u32 a, b, c, d;

	cpuid(1, 0, &a, &b, &c, &d);
	if (!(d & (1u << 9)))
		panic("this CPU has no local APIC: smpmm needs one for timers and IPIs");
	x2apic_mode = (c & (1u << 21)) && !force_xapic;
	if (rdmsr(MSR_APIC_BASE) & APIC_BASE_EXTD) {
		if (force_xapic)	/* x2APIC -> xAPIC needs a full disable: not worth it */
			pr_warn("apic: firmware left x2APIC mode on; ignoring apic.xapic\n");
		x2apic_mode = true;
	}
	lapic_phys = lapic_base(lapic_phys);
	lapic_mmio = arch_phys_to_virt(lapic_phys);
	apic_init_cpu();
	printk("apic: %s mode, LAPIC at 0x%llx, BSP APIC id %u\n",
	       x2apic_mode ? "x2APIC (MSR)" : "xAPIC (MMIO)", (unsigned long long)lapic_phys,
	       apic_read_id());
}

/* Allowed IA32_APIC_BASE transitions: disabled -> xAPIC -> x2APIC (SDM 10.12.5). */
void apic_init_cpu(void)
{
	u64 base = rdmsr(MSR_APIC_BASE);

	if (!(base & APIC_BASE_ENABLE))
		wrmsr(MSR_APIC_BASE, base |= APIC_BASE_ENABLE);
	if (x2apic_mode && !(base & APIC_BASE_EXTD))
		wrmsr(MSR_APIC_BASE, base | APIC_BASE_EXTD);
	apic_write(APIC_TPR, 0);
	apic_write(APIC_LVT_TIMER, APIC_LVT_MASKED);
	apic_write(APIC_LVT_LINT0, APIC_LVT_MASKED);
	apic_write(APIC_LVT_LINT1, APIC_LVT_MASKED);
	apic_write(APIC_LVT_ERROR, APIC_LVT_MASKED);
	apic_write(APIC_SVR, APIC_SVR_ENABLE | VEC_SPURIOUS);
	if (!x2apic_mode) {
		apic_write(APIC_ESR, 0);	/* back-to-back writes clear it */
		apic_write(APIC_ESR, 0);
	}
	apic_eoi();
}

/*
 * Make the LINT pins in lints (bit n: LINTn) deliver NMI on this CPU, as the MADT's local APIC
 * NMI entries (types 4 and 10) say; apic_init_cpu() left both masked. On a PC, LINT1 is the
 * board's NMI line (QEMU's `nmi` monitor command raises it).
 */
void apic_set_nmi_lints(unsigned int lints)
{
	if (lints & 1)
		apic_write(APIC_LVT_LINT0, LVT_NMI);
	if (lints & 2)
		apic_write(APIC_LVT_LINT1, LVT_NMI);
}

/* xAPIC: wait until the previous IPI has left. x2APIC has no delivery status to wait for. */
static int icr_wait_idle(void)
{
	if (x2apic_mode)
		return 0;
	for (u32 i = 0; i < ICR_SPIN_LIMIT; i++) {
		if (!(apic_read(APIC_ICR_LO) & ICR_BUSY))
			return 0;
		arch_cpu_relax();
	}
	return -1;
}

/*
 * Write the ICR: dest in the high half, command in the low half. Interrupts are off across
 * it so an interrupt handler cannot send its own IPI between the two xAPIC writes. The
 * fences order our earlier memory writes (the call queue) before the IPI: the x2APIC ICR
 * write is a WRMSR, which is not serialising (SDM 10.12.3: MFENCE; LFENCE first).
 */
static int icr_send(u32 dest, u32 cmd)
{
	unsigned long flags;
	int ret = 0;

	if (!x2apic_mode && dest > 0xff)
		return -1;	/* xAPIC cannot address it */
	flags = arch_irq_save();
	__asm__ __volatile__("mfence; lfence" ::: "memory");
	if (x2apic_mode) {
		wrmsr(X2APIC_MSR(APIC_ICR_LO), (u64)dest << 32 | cmd);
	} else {
		ret = icr_wait_idle();
		if (!ret) {
			apic_write(APIC_ICR_HI, dest << 24);
			apic_write(APIC_ICR_LO, cmd);
			ret = icr_wait_idle();
		}
	}
	arch_irq_restore(flags);
	return ret;
}

int apic_send_ipi(u32 apic_id, u8 vector)
{
	return icr_send(apic_id, ICR_ASSERT | ICR_FIXED | vector);
}

int apic_send_nmi(u32 apic_id)
{
	return icr_send(apic_id, ICR_ASSERT | ICR_NMI);
}

int apic_send_init(u32 apic_id)
{
	return icr_send(apic_id, ICR_ASSERT | ICR_INIT);
}

int apic_send_sipi(u32 apic_id, u8 page)
{
	return icr_send(apic_id, ICR_ASSERT | ICR_STARTUP | page);
}

int apic_send_init_others(void)
{
	return icr_send(0, ICR_ALL_BUT_SELF | ICR_ASSERT | ICR_INIT);
}

int apic_send_sipi_others(u8 page)
{
	return icr_send(0, ICR_ALL_BUT_SELF | ICR_ASSERT | ICR_STARTUP | page);
}
