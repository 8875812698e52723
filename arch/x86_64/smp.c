/*
 * x86-64 SMP bring-up: the BSP's early per-CPU setup, finding CPUs in the ACPI MADT, and
 * starting every AP at once with INIT-SIPI-SIPI through a trampoline page below 1 MiB.
 * Also the arch half of kernel/smp.h (IPIs, stopping CPUs). Cross-CPU calls are kernel/smp.c.
 */
#include "kernel/smp.h"
#include "kernel/acpi.h"
#include "kernel/bootinfo.h"
#include "kernel/cmdline.h"
#include "kernel/panic.h"
#include "kernel/printk.h"
#include "kernel/string.h"
#include "kernel/timer.h"
#include <arch/paging.h>
#include "cpu.h"
#include "io.h"

enum ap_state { AP_IDLE, AP_PENDING, AP_STARTING, AP_ONLINE, AP_ABANDONED };

#define AP_TIMEOUT_MS(n) (2000u + 20u * (n))	/* all APs; TCG runs n vCPUs on few cores */
#define STOP_TIMEOUT_US 200000u
#define LOW_MEM_END 0x100000ull		/* SIPI vectors reach pages below 1 MiB */
#define SZ_4G (4ull << 30)

u64 smp_trampoline_phys;
/* Read by ap_entry64 (trampoline.asm) before the AP has a stack. */
u32 smp_boot_apic_ids[MAX_CPUS];
u64 smp_boot_stacks[MAX_CPUS];
u32 smp_boot_count;

extern const char smp_trampoline_start[], smp_trampoline_end[];
extern const char tramp_gdt[], tramp_gdtr[], tramp_far32[], tramp_far64[], tramp_pm32[];
extern const char tramp_lm64[], tramp_cr3[], tramp_efer[], tramp_entry[], tramp_kernel_cr3[];
extern const char ap_entry64[];
extern char bsp_stack_top[];

/* Trampoline page tables: PML4[0] -> the first 2 MiB identity, upper half = kernel's. */
static u64 tramp_pml4[512] __aligned(PAGE_SIZE);
static u64 tramp_pdpt[512] __aligned(PAGE_SIZE);
static u64 tramp_pd[512] __aligned(PAGE_SIZE);

static u32 ap_state[MAX_CPUS];
static u32 aps_online;
static u32 cpus_stopped;
static u64 bsp_cr4;
static bool apic_ready;
static struct acpi_madt_info madt;

static unsigned int max_cpus = MAX_CPUS;
CMDLINE_UINT("smp.maxcpus", max_cpus, "start at most this many CPUs (1: boot CPU only)");
static unsigned int no_sipi_cpu;
CMDLINE_UINT("smp.test_no_sipi", no_sipi_cpu,
	     "fault injection: never send SIPI to this CPU index (tests the AP timeout)");

static void cpu_area_init(unsigned int cpu, u32 apic_id, void *stack_top)
{
	struct cpu *c = &cpus[cpu];

	c->arch.self = &c->arch;
	c->arch.cpu_id = cpu;
	c->arch.apic_id = apic_id;
	c->stack_top = stack_top;
	spin_lock_init(&c->call_lock, "smp_call_queue", SPIN_IRQSAFE);
}

/* Descriptor tables and GS base for this CPU: after this, arch_cpu_id() is right. */
static void cpu_tables_load(unsigned int cpu)
{
	gdt_load_cpu(cpu);
	idt_load();
	wrmsr(MSR_GS_BASE, (u64)(uintptr_t)&cpus[cpu]);
}

void arch_early_cpu_init(void)
{
	cpu_area_init(0, 0, bsp_stack_top);
	idt_init();
	cpu_tables_load(0);
	cpus[0].online = true;
	nr_cpus = 1;
}

/* ---- finding CPUs -------------------------------------------------------------------------- */

/* ACPI tables are below 4 GiB, which the direct map covers whole; anything else is bad. */
static const void *acpi_map(void *ctx, u64 pa, u64 len)
{
	(void)ctx;
	if (pa + len < pa || pa + len > SZ_4G)
		return NULL;
	return arch_phys_to_virt(pa);
}

/* Fill madt from the loader's RSDP or a BIOS-area scan. False: run on the BSP alone. */
static bool find_cpus(void)
{
	u8 rsdp[ACPI_RSDP_V2_LEN] = { 0 };
	size_t len = ACPI_RSDP_V2_LEN;
	int ret;

	if (boot_info.rsdp_present) {
		memcpy(rsdp, boot_info.rsdp_copy, sizeof(rsdp));
		len = boot_info.rsdp_revision >= 2 ? ACPI_RSDP_V2_LEN : ACPI_RSDP_V1_LEN;
	} else {
		u64 pa = acpi_scan_rsdp(acpi_map, NULL);

		if (!pa) {
			pr_warn("acpi: no RSDP from the loader or in the BIOS area: boot CPU only\n");
			return false;
		}
		memcpy(rsdp, acpi_map(NULL, pa, len), len);
		printk("acpi: RSDP found by scanning at 0x%llx\n", (unsigned long long)pa);
	}
	ret = acpi_parse_madt(rsdp, len, acpi_map, NULL, &madt);
	if (ret) {
		pr_warn("acpi: %s: boot CPU only\n", madt.error);
		return false;
	}
	printk("acpi: MADT via %s (OEM '%s', ACPI rev %u): %u CPUs enabled, %u disabled, "
	       "%u I/O APIC(s), LAPIC at 0x%llx%s\n", madt.used_xsdt ? "XSDT" : "RSDT",
	       madt.oem_id, madt.rsdp_revision, madt.nr_cpus_enabled, madt.nr_cpus_disabled,
	       madt.nr_ioapics, (unsigned long long)madt.lapic_phys,
	       madt.lapic_override ? " (override)" : "");
	if (madt.nr_cpus_enabled > madt.nr_cpus)
		pr_warn("acpi: the MADT lists %u CPUs; starting the first %u (MAX_CPUS)\n",
			madt.nr_cpus_enabled, madt.nr_cpus);
	if (madt.nr_duplicates)
		pr_warn("acpi: %u MADT entries repeat an APIC ID; ignored\n", madt.nr_duplicates);
	return true;
}

/* Give each MADT CPU but the BSP an index, an area and a stack. Returns the CPU count. */
static unsigned int assign_cpus(void)
{
	u32 bsp = cpus[0].arch.apic_id;
	unsigned int n = 1, skipped = 0;
	bool bsp_listed = false;

	for (unsigned int i = 0; i < madt.nr_cpus; i++) {
		u32 id = madt.cpus[i].apic_id;

		if (id == bsp) {
			bsp_listed = true;
		} else if (n >= max_cpus || (!apic_is_x2apic() && id > 0xfe)) {
			skipped++;
		} else {
			cpu_area_init(n, id, cpu_kstack_top(n));
			smp_boot_apic_ids[n] = id;
			smp_boot_stacks[n] = (u64)(uintptr_t)cpu_kstack_top(n);
			cpu_stacks_guard(n);
			n++;
		}
	}
	if (!bsp_listed)
		pr_warn("smp: the boot CPU (APIC id %u) is not in the MADT\n", bsp);
	if (skipped)
		pr_warn("smp: %u CPUs not started (smp.maxcpus=%u, or APIC id > 254 without x2APIC)\n",
			skipped, max_cpus);
	return n;
}

/* ---- the trampoline ------------------------------------------------------------------------ */

static bool range_overlaps(u64 a, u64 alen, u64 b, u64 blen)
{
	return a < b + blen && b < a + alen;
}

/* True if [pa, pa + 4 KiB) is usable RAM in the memory map and nothing of ours lives there. */
static bool page_is_free(u64 pa)
{
	bool usable = false;

	for (unsigned int i = 0; i < boot_info.nr_mmap; i++) {
		const struct mem_region *r = &boot_info.mmap[i];

		if (!range_overlaps(pa, PAGE_SIZE, r->base, r->length))
			continue;
		if (r->type != MEM_USABLE)
			return false;	/* overlapping entries: any non-usable one wins */
		if (r->base <= pa && pa + PAGE_SIZE <= r->base + r->length)
			usable = true;
	}
	return usable && !range_overlaps(pa, PAGE_SIZE, boot_info.mbi_phys, boot_info.mbi_size);
}

/* The highest free page below 1 MiB, skipping page 0 (real-mode IVT and BIOS data). */
static u64 pick_trampoline_page(void)
{
	for (u64 pa = LOW_MEM_END - PAGE_SIZE; pa >= PAGE_SIZE; pa -= PAGE_SIZE)
		if (page_is_free(pa))
			return pa;
	return 0;
}

static void patch32(u8 *page, const char *field, u64 val)
{
	u32 v = (u32)val;

	memcpy(page + (field - smp_trampoline_start), &v, sizeof(v));
}

static void patch64(u8 *page, const char *field, u64 val)
{
	memcpy(page + (field - smp_trampoline_start), &val, sizeof(val));
}

static void trampoline_install(u64 pa)
{
	u8 *page = arch_phys_to_virt(pa);
	const u64 *kpml4 = arch_phys_to_virt(arch_kernel_cr3());

	BUILD_BUG_ON(sizeof(tramp_pml4) != PAGE_SIZE);
	memcpy(&tramp_pml4[256], &kpml4[256], 256 * sizeof(u64));
	tramp_pml4[0] = arch_virt_to_phys(tramp_pdpt) | PTE_P | PTE_W;
	tramp_pdpt[0] = arch_virt_to_phys(tramp_pd) | PTE_P | PTE_W;
	tramp_pd[0] = 0 | PTE_P | PTE_W | PTE_PS;	/* 0-2 MiB, holds the page */
	memcpy(page, smp_trampoline_start, (size_t)(smp_trampoline_end - smp_trampoline_start));
	patch32(page, tramp_gdtr + 2, pa + (u64)(tramp_gdt - smp_trampoline_start));
	patch32(page, tramp_far32, pa + (u64)(tramp_pm32 - smp_trampoline_start));
	patch32(page, tramp_far64, pa + (u64)(tramp_lm64 - smp_trampoline_start));
	patch64(page, tramp_cr3, arch_virt_to_phys(tramp_pml4));
	patch64(page, tramp_efer, rdmsr(MSR_EFER) & ~(u64)EFER_LMA);
	patch64(page, tramp_entry, (u64)(uintptr_t)ap_entry64);
	patch64(page, tramp_kernel_cr3, arch_kernel_cr3());
}

/* ---- starting APs -------------------------------------------------------------------------- */

/* INIT to all, 10 ms, SIPI to all, 200 us, SIPI again (Intel SDM 8.4.4.1), in parallel. */
static void send_startup(unsigned int n, u8 page)
{
	for (unsigned int i = 1; i < n; i++) {
		WRITE_ONCE(ap_state[i], AP_PENDING);
		if (apic_send_init(cpus[i].arch.apic_id))
			pr_warn("smp: INIT to APIC id %u not delivered\n", cpus[i].arch.apic_id);
	}
	mdelay(10);
	for (int round = 0; round < 2; round++) {
		for (unsigned int i = 1; i < n; i++)
			if (READ_ONCE(ap_state[i]) == AP_PENDING && i != no_sipi_cpu)
				apic_send_sipi(cpus[i].arch.apic_id, page);
		udelay(200);
	}
}

/* Sleep (hlt) until all n - 1 APs are online or the deadline passes; APs wake us by IPI. */
static void wait_for_aps(unsigned int n, u64 deadline)
{
	for (;;) {
		arch_irq_disable();
		if (READ_ONCE(aps_online) == n - 1 || (s64)(arch_cycles() - deadline) > 0)
			break;
		arch_wait_for_interrupt();
	}
	arch_irq_enable();
}

/* After the deadline: give up on APs that never started; wait for ones that did. */
static void abandon_late_aps(unsigned int n)
{
	for (unsigned int i = 1; i < n; i++) {
		u32 expect = AP_PENDING;

		if (__atomic_compare_exchange_n(&ap_state[i], &expect, AP_ABANDONED, false,
						__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			pr_warn("smp: cpu%u (APIC id %u) did not come up within %u ms: skipped\n", i,
				cpus[i].arch.apic_id, AP_TIMEOUT_MS(n));
			continue;
		}
		while (READ_ONCE(ap_state[i]) == AP_STARTING)	/* committed: a few us away */
			arch_cpu_relax();
	}
}

static unsigned long long ms_since(u64 t)
{
	return (unsigned long long)cycles_to_us(arch_cycles() - t) / 1000;
}

/* The boot-time figure: kernel entry (kmain) to all CPUs online, and where it went. */
static void print_online(unsigned int n, u64 t_smp_init, u64 t_aps)
{
	if (!t_aps) {
		printk("smp: 1 CPU online (no APs started), %llu ms from kernel entry\n",
		       ms_since(boot_tsc_start));
		return;
	}
	printk("smp: %u of %u CPUs online, %llu ms from kernel entry (%llu ms in arch_smp_init, "
	       "of which AP start-up %llu us; trampoline at 0x%llx)\n", nr_cpus_online(), n,
	       ms_since(boot_tsc_start), ms_since(t_smp_init),
	       (unsigned long long)cycles_to_us(arch_cycles() - t_aps),
	       (unsigned long long)smp_trampoline_phys);
}

/* Returns when the APs are online or given up on; the start time in *t0 (0: none tried). */
static void start_aps(unsigned int n, u64 *t0)
{
	smp_trampoline_phys = pick_trampoline_page();
	if (!smp_trampoline_phys) {
		pr_warn("smp: no free page below 1 MiB for the AP trampoline: boot CPU only\n");
		return;
	}
	trampoline_install(smp_trampoline_phys);
	smp_boot_count = n;
	nr_cpus = n;
	*t0 = arch_cycles();
	send_startup(n, (u8)(smp_trampoline_phys >> 12));
	wait_for_aps(n, *t0 + us_to_cycles(AP_TIMEOUT_MS(n) * 1000ull));
	abandon_late_aps(n);
}

void arch_smp_init(void)
{
	u64 t_init = arch_cycles(), t_aps = 0;
	bool have_madt = find_cpus();
	unsigned int n;

	apic_init_bsp(have_madt ? madt.lapic_phys : 0);
	cpus[0].arch.apic_id = apic_read_id();
	apic_ready = true;
	pic_disable();
	timer_calibrate(&madt.clocks);	/* zero (no HPET, no PM timer) without ACPI */
	timer_start_cpu();
	cpu_stacks_guard(0);
	bsp_cr4 = read_cr4();
	n = have_madt ? assign_cpus() : 1;
	if (n > 1)
		start_aps(n, &t_aps);
	print_online(n, t_init, t_aps);
	arch_irq_enable();
}

/* First C code of an AP, on its own stack, with the kernel page tables (trampoline.asm). */
void smp_ap_main(unsigned int cpu)
{
	struct cpu *c = &cpus[cpu];
	u32 expect = AP_PENDING;

	cpu_tables_load(cpu);
	write_cr4(bsp_cr4);
	if (!__atomic_compare_exchange_n(&ap_state[cpu], &expect, AP_STARTING, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		arch_halt_forever();	/* too late: the BSP gave up on us */
	apic_init_cpu();
	timer_start_cpu();
	cpu_starting_hook(cpu);
	WRITE_ONCE(c->online, true);
	smp_store_release(&ap_state[cpu], AP_ONLINE);
	__atomic_add_fetch(&aps_online, 1, __ATOMIC_ACQ_REL);
	apic_send_ipi(cpus[0].arch.apic_id, VEC_WAKE);
	smp_idle_loop();
}

/* ---- the arch half of kernel/smp.h --------------------------------------------------------- */

void arch_send_call_ipi(unsigned int cpu)
{
	if (apic_send_ipi(cpus[cpu].arch.apic_id, VEC_CALL))
		pr_warn("smp: call IPI to cpu%u not delivered (ICR busy)\n", cpu);
}

void arch_send_wake_ipi(unsigned int cpu)
{
	if (apic_send_ipi(cpus[cpu].arch.apic_id, VEC_WAKE))
		pr_warn("smp: wake IPI to cpu%u not delivered (ICR busy)\n", cpu);
}

__noreturn void arch_halt_forever(void)
{
	__atomic_add_fetch(&cpus_stopped, 1, __ATOMIC_RELEASE);
	for (;;)
		__asm__ __volatile__("cli; hlt" ::: "memory");
}

/* NMI every other online CPU (they halt in handle_nmi), then give them a moment to do so. */
void arch_stop_other_cpus(void)
{
	unsigned int self = arch_cpu_id(), sent = 0;
	u32 before = READ_ONCE(cpus_stopped);

	if (!apic_ready)
		return;
	for (unsigned int i = 0; i < nr_cpus; i++) {
		if (i != self && cpu_online(i)) {
			apic_send_nmi(cpus[i].arch.apic_id);
			sent++;
		}
	}
	for (u64 t0 = arch_cycles(); READ_ONCE(cpus_stopped) - before < sent;) {
		if (!cycles_khz || cycles_to_us(arch_cycles() - t0) > STOP_TIMEOUT_US)
			break;
		arch_cpu_relax();
	}
}
