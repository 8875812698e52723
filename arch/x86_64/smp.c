/*
 * x86-64 SMP bring-up: the BSP's early per-CPU setup, finding CPUs in the ACPI MADT (xAPIC and
 * x2APIC entries, up to MAX_CPUS), and starting every AP at once with INIT-SIPI-SIPI through a
 * trampoline page below 1 MiB. Also the arch half of kernel/smp.h (IPIs, stopping CPUs).
 * Cross-CPU calls are kernel/smp.c.
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

/* An index's slot: IDLE -> PENDING (BSP, before INIT) -> STARTING (the AP's claim, in
 * trampoline.asm, which uses PENDING and STARTING by value) -> ONLINE (smp_ap_main), or
 * PENDING -> ABANDONED (the BSP's timeout): whichever compare-and-swap wins decides. */
enum ap_state { AP_IDLE = 0, AP_PENDING = 1, AP_STARTING = 2, AP_ONLINE = 3, AP_ABANDONED = 4 };

#define AP_TIMEOUT_MS(n) (2000u + 20u * (n))	/* all APs; TCG runs n vCPUs on few cores */
#define STOP_TIMEOUT_US 200000u
#define LOW_MEM_END 0x100000ull		/* SIPI vectors reach pages below 1 MiB */
#define SZ_4G (4ull << 30)
#define MSR_MISC_ENABLE 0x1a0
#define MISC_ENABLE_LIMIT_CPUID (1ull << 22)	/* "Limit CPUID Maxval": basic leaves end at 2 */

u64 smp_trampoline_phys;
/*
 * The APIC ID -> CPU index map, read by ap_entry64 (trampoline.asm) before the AP has a stack:
 * each AP scans smp_boot_apic_ids[0 .. smp_boot_count) for its own ID. It is sized by CPUs,
 * not by IDs: x2APIC IDs are 32 bits and sparse (a package's IDs start at a power of two, and
 * QEMU numbers a 1024-CPU machine up to 1023 but real ones skip), so an array indexed by APIC
 * ID would have to be 2^32 long; 1024 CPUs scanning 4 KiB each take microseconds.
 */
u32 smp_boot_apic_ids[MAX_CPUS];
u64 smp_boot_stacks[MAX_CPUS];
u32 smp_boot_count;
u32 smp_boot_state[MAX_CPUS];	/* enum ap_state; an AP claims its slot here before using it */
/* Where an AP reads its APIC ID (trampoline.asm, ap_read_apic_id): its x2APIC ID MSR if the
 * BSP is in x2APIC mode, else the xAPIC ID register at this address (the direct map). */
u32 smp_boot_x2apic;
u64 smp_boot_xapic_id;
/* CPUs that ran the trampoline and found no PENDING slot for their ID, which halted there
 * (written by them, read by the BSP), and the ID the last one read. */
u32 smp_boot_strays;
u32 smp_boot_stray_id;

extern const char smp_trampoline_start[], smp_trampoline_end[];
extern const char tramp_gdt[], tramp_gdtr[], tramp_far32[], tramp_far64[], tramp_pm32[];
extern const char tramp_lm64[], tramp_cr3[], tramp_efer[], tramp_entry[], tramp_kernel_cr3[];
extern const char ap_entry64[];
extern char bsp_stack_top[];

/* Trampoline page tables: PML4[0] -> the first 2 MiB identity, upper half = kernel's. */
static u64 tramp_pml4[512] __aligned(PAGE_SIZE);
static u64 tramp_pdpt[512] __aligned(PAGE_SIZE);
static u64 tramp_pd[512] __aligned(PAGE_SIZE);

static u8 nmi_lints[MAX_CPUS];		/* LINT pins the MADT makes NMI, per CPU (bit n: LINTn) */
static u32 aps_online;
static u32 aps_wake_at;		/* the AP that brings aps_online to this wakes the BSP */
static u32 cpus_stopped;
static u32 cpuid_unlocked;	/* CPUs whose firmware had limited CPUID (unlock_cpuid_leaves) */
static u64 bsp_cr4;
static bool apic_ready;
static bool have_madt;
static struct acpi_cpu madt_cpus[MAX_CPUS];
static struct acpi_madt_info madt = { .cpus = madt_cpus, .max_cpus = MAX_CPUS };

static unsigned int no_sipi_cpu;
CMDLINE_UINT("smp.test_no_sipi", no_sipi_cpu,
	     "fault injection: never send SIPI to this CPU index (tests the AP timeout)");
static unsigned int start_batch;
CMDLINE_UINT("smp.start_batch", start_batch,
	     "start APs N at a time, each batch online before the next (0: all at once)");
static bool start_broadcast;
CMDLINE_BOOL("smp.start_broadcast", start_broadcast,
	     "1: one INIT-SIPI-SIPI to all-but-self instead of one per AP (not with smp.maxcpus)");
static unsigned int ap_timeout_ms;
CMDLINE_UINT("smp.ap_timeout_ms", ap_timeout_ms,
	     "give up on APs not online after this many ms (0: 2 s + 20 ms per AP started)");
#define INIT_UDELAY_AUTO (~0u)
static unsigned int init_udelay = INIT_UDELAY_AUTO;
CMDLINE_UINT("smp.init_udelay", init_udelay,
	     "microseconds between INIT and SIPI (default: 0 on Intel family 6+, AMD 0xf+, "
	     "Hygon 0x18+, else 10000, as Linux's cpu_init_udelay=)");

/* How long n APs started together may take: TCG runs them all on a few host cores. */
static unsigned int ap_timeout(unsigned int n)
{
	return ap_timeout_ms ? ap_timeout_ms : AP_TIMEOUT_MS(n);
}

static void cpu_area_init(unsigned int cpu, u32 apic_id, void *stack_top)
{
	struct cpu *c = cpu_ptr(cpu);

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
	wrmsr(MSR_GS_BASE, (u64)(uintptr_t)cpu_ptr(cpu));
}

/*
 * Firmware may limit CPUID to basic leaf 2 (IA32_MISC_ENABLE bit 22, "Limit CPUID Maxval", a
 * setting for old operating systems), which hides leaf 0xb (the x2APIC ID and topology) and
 * everything above. Linux clears it on every Intel CPU from family 6 model 0xd (Pentium M
 * "Dothan") on, on each CPU, as soon as it knows the vendor (early_init_intel(), now
 * intel_unlock_cpuid_leafs()); so does this, first thing on each CPU. Other vendors have no
 * such bit. Counted in cpuid_unlocked for the boot report.
 */
static void unlock_cpuid_leaves(void)
{
	u32 a, b, c, d, family, model;

	cpuid(0, 0, &a, &b, &c, &d);
	if (b != 0x756e6547 || d != 0x49656e69 || c != 0x6c65746e)	/* "Genu" "ineI" "ntel" */
		return;
	cpuid(1, 0, &a, &b, &c, &d);
	family = (a >> 8) & 0xf;
	model = ((a >> 4) & 0xf) | (family >= 6 ? ((a >> 16) & 0xf) << 4 : 0);
	if (family < 6 || (family == 6 && model < 0xd))
		return;
	if (!(rdmsr(MSR_MISC_ENABLE) & MISC_ENABLE_LIMIT_CPUID))
		return;
	wrmsr(MSR_MISC_ENABLE, rdmsr(MSR_MISC_ENABLE) & ~MISC_ENABLE_LIMIT_CPUID);
	__atomic_add_fetch(&cpuid_unlocked, 1, __ATOMIC_RELAXED);
}

void arch_early_cpu_init(void)
{
	unlock_cpuid_leaves();
	cpu_area_init(0, 0, bsp_stack_top);
	idt_init();
	cpu_tables_load(0);
	cpu_ptr(0)->online = true;
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
	if (madt.nr_x2apic_cpus || madt.nr_nmis)
		printk("acpi: %u CPUs from x2APIC entries (type 9); %u local APIC NMI entries "
		       "(type 4/10)\n", madt.nr_x2apic_cpus, madt.nr_nmis);
	if (madt.nr_cpus_enabled > madt.nr_cpus)
		pr_warn("acpi: the MADT lists %u CPUs; starting the first %u (MAX_CPUS)\n",
			madt.nr_cpus_enabled, madt.nr_cpus);
	if (madt.nr_duplicates || madt.nr_invalid_ids || madt.nr_nmis_ignored)
		pr_warn("acpi: ignored %u MADT entries repeating an APIC ID, %u with an invalid ID, "
			"%u NMI entries\n", madt.nr_duplicates, madt.nr_invalid_ids,
			madt.nr_nmis_ignored);
	return true;
}

/* Number the MADT's CPUs (kernel/smp.c): the BSP is 0; sets nr_cpu_ids. Nothing is allocated
 * yet (mm is not up). */
static void number_cpus(void)
{
	nr_cpu_ids = smp_number_cpus(&madt, cpu_ptr(0)->arch.apic_id,
				     apic_is_x2apic() ? 0xfffffffeu : 0xfeu, smp_boot_apic_ids,
				     nmi_lints);
}

/* Areas, descriptor tables and stacks for CPUs 1 .. nr_cpu_ids - 1. Returns how many CPUs
 * can be started (all, or 1 if memory ran out: said so). */
static unsigned int give_cpus_memory(void)
{
	unsigned int n = nr_cpu_ids;

	if (n < 2)
		return 1;
	if (smp_alloc_cpu_areas() || gdt_alloc_cpus()) {
		pr_warn("smp: no memory for %u CPU areas: boot CPU only\n", n);
		return 1;
	}
	for (unsigned int cpu = 1; cpu < n; cpu++) {
		if (cpu_stacks_init(cpu)) {
			pr_warn("smp: no memory for the stacks of cpu%u and up: %u CPUs\n", cpu, cpu);
			return cpu;
		}
		cpu_area_init(cpu, smp_boot_apic_ids[cpu], cpu_kstack_top(cpu));
		smp_boot_stacks[cpu] = (u64)(uintptr_t)cpu_kstack_top(cpu);
	}
	return n;
}

/* ---- the trampoline ------------------------------------------------------------------------ */

/* The highest free page below 1 MiB, skipping page 0 (real-mode IVT and BIOS data). */
static u64 pick_trampoline_page(void)
{
	for (u64 pa = LOW_MEM_END - PAGE_SIZE; pa >= PAGE_SIZE; pa -= PAGE_SIZE)
		if (boot_ram_is_free(&boot_info, pa, PAGE_SIZE))
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

static char cpu_vendor[13];
static unsigned int cpu_family;

/*
 * The wait between INIT and the first SIPI. The MP specification (1997) and the SDM's example
 * ask for 10 ms, and for 200 us after each SIPI; CPUs of this century do not need them. Linux
 * (arch/x86/kernel/smpboot.c, smp_quirk_init_udelay()) waits 0 on Intel family 6, AMD family
 * 0xf and later and Hygon 0x18 and later, and then spaces the SIPIs 10 us apart; older CPUs
 * keep the 10 ms. The later Intel families (15, 18, 19) are in too, as in the 2024 patch
 * "x86/apic: Fix smp init delay for extended Intel families". QEMU's default CPU model
 * (qemu64) is AMD family 0xf.
 */
static void choose_init_udelay(void)
{
	u32 a, b, c, d;

	cpuid(0, 0, &a, &b, &c, &d);
	memcpy(cpu_vendor, &b, 4);
	memcpy(cpu_vendor + 4, &d, 4);
	memcpy(cpu_vendor + 8, &c, 4);
	cpuid(1, 0, &a, &b, &c, &d);
	cpu_family = (a >> 8) & 0xf;
	if (cpu_family == 0xf)
		cpu_family += (a >> 20) & 0xff;
	if (init_udelay != INIT_UDELAY_AUTO)
		return;
	if ((!strcmp(cpu_vendor, "GenuineIntel") && cpu_family >= 6) ||
	    (!strcmp(cpu_vendor, "AuthenticAMD") && cpu_family >= 0xf) ||
	    (!strcmp(cpu_vendor, "HygonGenuine") && cpu_family >= 0x18))
		init_udelay = 0;
	else
		init_udelay = 10000;
}

/* After each SIPI: 10 us when the INIT wait is skipped, else the specification's 200 us. */
static unsigned int sipi_udelay(void)
{
	return init_udelay ? 200 : 10;
}

/*
 * INIT to each AP of [first, end), init_udelay, SIPI to each still pending, a short wait, and
 * the SIPI again (Intel SDM 8.4.4.1). The APs then run the trampoline in parallel.
 */
static void send_startup(unsigned int first, unsigned int end, u8 page)
{
	for (unsigned int i = first; i < end; i++) {
		WRITE_ONCE(smp_boot_state[i], AP_PENDING);
		if (apic_send_init(smp_boot_apic_ids[i]))
			pr_warn("smp: INIT to APIC id %u not delivered\n", smp_boot_apic_ids[i]);
	}
	udelay(init_udelay);
	for (int round = 0; round < 2; round++) {
		for (unsigned int i = first; i < end; i++)
			if (READ_ONCE(smp_boot_state[i]) == AP_PENDING && i != no_sipi_cpu)
				apic_send_sipi(smp_boot_apic_ids[i], page);
		udelay(sipi_udelay());
	}
}

/* The same with the all-but-self shorthand: three ICR writes whatever the CPU count. CPUs
 * that were not numbered (smp.maxcpus) run the trampoline too, find no index and halt. */
static void send_startup_broadcast(unsigned int n, u8 page)
{
	for (unsigned int i = 1; i < n; i++)
		WRITE_ONCE(smp_boot_state[i], AP_PENDING);
	apic_send_init_others();
	udelay(init_udelay);
	for (int round = 0; round < 2; round++) {
		apic_send_sipi_others(page);
		udelay(sipi_udelay());
	}
}

/*
 * Sleep (hlt) until `target` APs are online or the deadline passes. The AP that completes the
 * count wakes us by IPI (one wake-up, not one per AP); the tick checks the deadline.
 */
static void wait_for_aps(unsigned int target, u64 deadline)
{
	for (;;) {
		arch_irq_disable();
		if (READ_ONCE(aps_online) >= target || (s64)(arch_cycles() - deadline) > 0)
			break;
		arch_wait_for_interrupt();
	}
	arch_irq_enable();
}

/* After the deadline: give up on APs of [first, end) that never started; wait for ones that
 * did. Returns how many were given up on. */
static unsigned int abandon_late_aps(unsigned int first, unsigned int end, unsigned int ms)
{
	unsigned int abandoned = 0;

	for (unsigned int i = first; i < end; i++) {
		u32 expect = AP_PENDING;

		if (__atomic_compare_exchange_n(&smp_boot_state[i], &expect, AP_ABANDONED, false,
						__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			pr_warn("smp: cpu%u (APIC id %u) did not come up within %u ms: skipped\n", i,
				smp_boot_apic_ids[i], ms);
			abandoned++;
			continue;
		}
		while (READ_ONCE(smp_boot_state[i]) == AP_STARTING)	/* committed: a few us away */
			arch_cpu_relax();
	}
	return abandoned;
}

static unsigned long long ms_since(u64 t)
{
	return (unsigned long long)cycles_to_us(arch_cycles() - t) / 1000;
}

static const char *start_mode(unsigned int n, char *buf, size_t size)
{
	if (start_broadcast && no_sipi_cpu == 0)
		return "INIT-SIPI-SIPI broadcast";
	if (start_batch && start_batch < n - 1)
		snprintf(buf, size, "INIT-SIPI-SIPI per AP, %u at a time", start_batch);
	else
		snprintf(buf, size, "INIT-SIPI-SIPI per AP, all at once");
	return buf;
}

/*
 * The boot-time figure: kernel entry (kmain) to all CPUs online, and where arch_smp_init's
 * part went: t[0] its start, t[1] CPU areas ready, t[2] timer calibrated, t[3] first INIT.
 */
static void print_online(unsigned int n, const u64 t[4], bool started)
{
	char mode[64];

	if (!started) {
		printk("smp: 1 CPU online (no APs started), %llu ms from kernel entry\n",
		       ms_since(boot_tsc_start));
		return;
	}
	printk("smp: %u of %u CPUs online, %llu ms from kernel entry (%llu ms in arch_smp_init, "
	       "of which AP start-up %llu us, CPU areas %llu us, timer calibration %llu us; "
	       "trampoline at 0x%llx)\n", nr_cpus_online(), n, ms_since(boot_tsc_start),
	       ms_since(t[0]), (unsigned long long)cycles_to_us(arch_cycles() - t[3]),
	       (unsigned long long)cycles_to_us(t[1] - t[0]),
	       (unsigned long long)cycles_to_us(t[2] - t[1]),
	       (unsigned long long)smp_trampoline_phys);
	printk("smp: started by %s (%s APIC), %u us from INIT to SIPI (%s family 0x%x)\n",
	       start_mode(n, mode, sizeof(mode)), apic_is_x2apic() ? "x2" : "x", init_udelay,
	       cpu_vendor, cpu_family);
}

/* What went wrong or was repaired on the way, one line each (nothing when all is well). */
static void print_cpu_quirks(void)
{
	u32 strays = READ_ONCE(smp_boot_strays);

	if (strays)
		pr_warn("smp: %u CPU(s) ran the trampoline but found no pending slot for their APIC "
			"id (the last: id %u): halted there, no CPU's stack or tables touched\n",
			strays, READ_ONCE(smp_boot_stray_id));
	if (READ_ONCE(cpuid_unlocked))
		printk("smp: firmware had limited CPUID to leaf 2 on %u CPU(s) (IA32_MISC_ENABLE "
		       "bit 22): cleared, as Linux does\n", READ_ONCE(cpuid_unlocked));
}

/* Per AP, in batches of start_batch (default: one batch of all): each batch online (or given
 * up on after its own timeout) before the next is sent. */
static void start_in_batches(unsigned int n, u8 page)
{
	unsigned int batch = start_batch && start_batch < n - 1 ? start_batch : n - 1;
	unsigned int expect = 0;

	for (unsigned int first = 1; first < n; first += batch) {
		unsigned int end = MIN(first + batch, n), ms = ap_timeout(end - first);
		u64 t = arch_cycles();

		expect += end - first;
		WRITE_ONCE(aps_wake_at, expect);
		send_startup(first, end, page);
		wait_for_aps(expect, t + us_to_cycles(ms * 1000ull));
		expect -= abandon_late_aps(first, end, ms);
	}
}

/* Returns when the APs are online or given up on; the start time in *t0 (unset: none tried). */
static bool start_aps(unsigned int n, u64 *t0)
{
	u8 page;

	smp_trampoline_phys = pick_trampoline_page();
	if (!smp_trampoline_phys) {
		pr_warn("smp: no free page below 1 MiB for the AP trampoline: boot CPU only\n");
		return false;
	}
	page = (u8)(smp_trampoline_phys >> 12);
	trampoline_install(smp_trampoline_phys);
	choose_init_udelay();
	smp_boot_x2apic = apic_is_x2apic();
	smp_boot_xapic_id = smp_boot_x2apic ? 0 : (u64)(uintptr_t)apic_xapic_reg(APIC_ID);
	smp_boot_count = n;
	nr_cpus = n;
	*t0 = arch_cycles();
	if (start_broadcast && no_sipi_cpu == 0) {
		WRITE_ONCE(aps_wake_at, n - 1);
		send_startup_broadcast(n, page);
		wait_for_aps(n - 1, *t0 + us_to_cycles(ap_timeout(n) * 1000ull));
		abandon_late_aps(1, n, ap_timeout(n));
	} else {
		start_in_batches(n, page);
	}
	return true;
}

/*
 * Read the BSP's APIC ID, find the CPUs and number them: before mm_init sizes per-CPU data.
 * Then open the timer's measuring window, so that mm_init() runs while it is open.
 */
void arch_smp_prepare(void)
{
	have_madt = find_cpus();
	apic_init_bsp(have_madt ? madt.lapic_phys : 0);
	cpu_ptr(0)->arch.apic_id = apic_read_id();
	apic_ready = true;
	if (have_madt)
		number_cpus();
	apic_set_nmi_lints(nmi_lints[0]);
	timer_calibrate_begin(&madt.clocks);	/* zero (no HPET, no PM timer) without ACPI */
}

void arch_smp_init(void)
{
	u64 t[4] = { arch_cycles() };
	bool started = false;
	unsigned int n;

	pic_disable();
	cpu_stacks_init(0);
	bsp_cr4 = read_cr4();
	n = give_cpus_memory();
	t[1] = arch_cycles();
	timer_calibrate();	/* closes the window arch_smp_prepare() opened */
	timer_start_cpu();
	t[2] = arch_cycles();
	if (n > 1)
		started = start_aps(n, &t[3]);
	print_online(n, t, started);
	print_cpu_quirks();
	arch_irq_enable();
}

/*
 * First C code of an AP, on its own stack, with the kernel page tables: trampoline.asm has
 * claimed slot cpu (PENDING -> STARTING), so the BSP waits for us and no other CPU uses it.
 */
void smp_ap_main(unsigned int cpu)
{
	struct cpu *c = cpu_ptr(cpu);

	cpu_tables_load(cpu);
	write_cr4(bsp_cr4);
	unlock_cpuid_leaves();
	apic_init_cpu();
	apic_set_nmi_lints(nmi_lints[cpu]);
	timer_start_cpu();
	cpu_starting_hook(cpu);
	WRITE_ONCE(c->online, true);
	smp_store_release(&smp_boot_state[cpu], AP_ONLINE);
	if (__atomic_add_fetch(&aps_online, 1, __ATOMIC_ACQ_REL) >= READ_ONCE(aps_wake_at))
		apic_send_ipi(cpu_ptr(0)->arch.apic_id, VEC_WAKE);
	smp_idle_loop();
}

/* ---- the arch half of kernel/smp.h --------------------------------------------------------- */

void arch_send_call_ipi(unsigned int cpu)
{
	if (apic_send_ipi(cpu_ptr(cpu)->arch.apic_id, VEC_CALL))
		pr_warn("smp: call IPI to cpu%u not delivered (ICR busy)\n", cpu);
}

void arch_send_wake_ipi(unsigned int cpu)
{
	if (apic_send_ipi(cpu_ptr(cpu)->arch.apic_id, VEC_WAKE))
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
			apic_send_nmi(cpu_ptr(i)->arch.apic_id);
			sent++;
		}
	}
	for (u64 t0 = arch_cycles(); READ_ONCE(cpus_stopped) - before < sent;) {
		if (!cycles_khz || cycles_to_us(arch_cycles() - t0) > STOP_TIMEOUT_US)
			break;
		arch_cpu_relax();
	}
}

/* ---- for the boot tests (kernel/smp.h) ----------------------------------------------------- */

int arch_cpu_check_own_state(char *why, size_t len)
{
	unsigned int cpu = arch_cpu_id();
	struct cpu *c = cpu_ptr(cpu);
	u64 sp = (u64)(uintptr_t)__builtin_frame_address(0), top = (u64)(uintptr_t)c->stack_top;
	const char *bad = gdt_check_cpu(cpu);

	if (apic_read_id() != c->arch.apic_id)
		snprintf(why, len, "cpu%u: its local APIC says id %u, cpu%u's is %u", cpu,
			 apic_read_id(), cpu, c->arch.apic_id);
	else if (rdmsr(MSR_GS_BASE) != (u64)(uintptr_t)c)
		snprintf(why, len, "cpu%u: GS base 0x%llx, not its area %p", cpu,
			 (unsigned long long)rdmsr(MSR_GS_BASE), (void *)c);
	else if (bad)
		snprintf(why, len, "cpu%u: runs on another CPU's %s", cpu, bad);
	else if (sp >= top || sp < top - KSTACK_SIZE)
		snprintf(why, len, "cpu%u: stack pointer 0x%llx outside its stack (top %p)", cpu,
			 (unsigned long long)sp, c->stack_top);
	else
		return 0;
	return -1;
}

/*
 * INIT-SIPI-SIPI once more to cpu, a CPU the BSP gave up on (ABANDONED: smp.test_no_sipi=),
 * as a late or repeated start-up would reach it: it runs the trampoline, finds its slot not
 * PENDING, and must halt without touching it. Returns 0 once it was counted as a stray
 * (within 1 s), -1 if it was not, or if cpu is not such a CPU.
 */
int arch_smp_start_again(unsigned int cpu)
{
	u32 strays = READ_ONCE(smp_boot_strays), id;
	u8 page = (u8)(smp_trampoline_phys >> 12);

	if (!cpu || cpu >= nr_cpus || !smp_trampoline_phys ||
	    READ_ONCE(smp_boot_state[cpu]) != AP_ABANDONED)
		return -1;
	id = smp_boot_apic_ids[cpu];
	apic_send_init(id);
	udelay(init_udelay);
	for (int round = 0; round < 2; round++) {
		apic_send_sipi(id, page);
		udelay(sipi_udelay());
	}
	for (unsigned int ms = 0; ms < 1000 && READ_ONCE(smp_boot_strays) == strays; ms++)
		mdelay(1);
	return READ_ONCE(smp_boot_strays) != strays ? 0 : -1;
}
