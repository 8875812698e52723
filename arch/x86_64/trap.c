/*
 * Where every interrupt and exception lands (from isr.asm): device-like vectors (timer, IPIs)
 * are dispatched; an exception is either recovered (a kernel/trap.h recovery point armed on
 * this CPU) or becomes one panic report with all registers, the CPU number and a backtrace.
 */
#include "kernel/smp.h"
#include "kernel/trap.h"
#include "kernel/printk.h"
#include "kernel/panic.h"
#include "cpu.h"

static const char *const exception_names[32] = {
	"#DE divide error", "#DB debug", "NMI", "#BP breakpoint", "#OF overflow",
	"#BR bound range", "#UD invalid opcode", "#NM no FPU", "#DF double fault",
	"coprocessor overrun", "#TS invalid TSS", "#NP segment not present", "#SS stack fault",
	"#GP general protection", "#PF page fault", "reserved 15", "#MF x87 error",
	"#AC alignment check", "#MC machine check", "#XM SIMD error", "#VE virtualization",
	"#CP control protection", "reserved 22", "reserved 23", "reserved 24", "reserved 25",
	"reserved 26", "reserved 27", "#HV hypervisor injection", "#VC VMM communication",
	"#SX security", "reserved 31",
};

/* ---- backtraces: follow the saved-RBP chain, touching only mapped kernel addresses ---- */

/* True if the 16 bytes at va (a frame: saved rbp, return address) are mapped. */
static bool frame_mapped(u64 va)
{
	u64 *table = arch_phys_to_virt(read_cr3() & 0x000ffffffffff000ull);

	if (va < KERNEL_VMA || !IS_ALIGNED(va, 8) || (va & 0xfff) > 0xff0)
		return false;
	for (int level = 4; level >= 1; level--) {
		u64 e = table[(va >> (12 + 9 * (level - 1))) & 511];

		if (!(e & 1))
			return false;
		if (level == 1 || (e & (1u << 7)))
			return true;
		table = arch_phys_to_virt(e & 0x000ffffffffff000ull);
	}
	return false;
}

/* Print rip (if not 0), then the return address of each frame from rbp up. */
static void backtrace_from(u64 rbp, u64 rip)
{
	printk("  backtrace (addr2line -e build/smpmm.elf):\n");
	if (rip)
		printk("    0x%016llx\n", (unsigned long long)rip);
	for (int depth = 0; depth < 16 && frame_mapped(rbp); depth++) {
		const u64 *frame = (const u64 *)(uintptr_t)rbp;

		if (!frame[1])
			break;
		printk("    0x%016llx\n", (unsigned long long)frame[1]);
		if (frame[0] <= rbp)	/* frames go up the stack; anything else is garbage */
			break;
		rbp = frame[0];
	}
}

void arch_dump_stack(void)
{
	u64 rbp = (u64)(uintptr_t)__builtin_frame_address(0);

	backtrace_from(rbp, 0);
}

/* ---- fatal reports ------------------------------------------------------------------------ */

#define R(x) ((unsigned long long)(x))

static void dump_regs(const struct trap_frame *f)
{
	printk("  RIP %016llx  CS %04llx  RFLAGS %016llx\n", R(f->rip), R(f->cs), R(f->rflags));
	printk("  RSP %016llx  SS %04llx  error %llx\n", R(f->rsp), R(f->ss), R(f->error_code));
	printk("  RAX %016llx  RBX %016llx  RCX %016llx\n", R(f->rax), R(f->rbx), R(f->rcx));
	printk("  RDX %016llx  RSI %016llx  RDI %016llx\n", R(f->rdx), R(f->rsi), R(f->rdi));
	printk("  RBP %016llx  R8  %016llx  R9  %016llx\n", R(f->rbp), R(f->r8), R(f->r9));
	printk("  R10 %016llx  R11 %016llx  R12 %016llx\n", R(f->r10), R(f->r11), R(f->r12));
	printk("  R13 %016llx  R14 %016llx  R15 %016llx\n", R(f->r13), R(f->r14), R(f->r15));
	printk("  CR0 %016llx  CR2 %016llx  CR3 %016llx\n", R(read_cr0()), R(read_cr2()),
	       R(read_cr3()));
	printk("  CR4 %016llx\n", R(read_cr4()));
}

/*
 * A push into an unmapped stack guard page faults, and the fault's own frame cannot be pushed
 * either: the CPU double-faults onto its IST stack, with CR2 still naming the guard page.
 */
static void report_stack_overflow(const struct trap_frame *f)
{
	int owner;

	if (f->vector != VEC_DOUBLE_FAULT && f->vector != VEC_PAGE_FAULT)
		return;
	owner = cpu_stack_guard_owner(read_cr2());
	if (owner < 0)
		owner = cpu_stack_guard_owner(f->rsp);
	if (owner >= 0)
		printk("  stack overflow on CPU %d: its stack ran into the guard page at 0x%llx\n",
		       owner, (unsigned long long)read_cr2());
}

static __noreturn void fatal_trap(const struct trap_frame *f, const char *what)
{
	struct cpu *c = this_cpu();

	panic_begin();
	printk("\nPANIC: cpu%u (APIC id %u): %s: vector %llu %s, error code 0x%llx\n",
	       c->arch.cpu_id, c->arch.apic_id, what, (unsigned long long)f->vector,
	       f->vector < 32 ? exception_names[f->vector] : "(not an exception)",
	       (unsigned long long)f->error_code);
	report_stack_overflow(f);
	if (f->vector == VEC_PAGE_FAULT)
		printk("  page fault at 0x%llx: %s, %s%s\n", (unsigned long long)read_cr2(),
		       f->error_code & 1 ? "protection violation" : "page not present",
		       f->error_code & 2 ? "write" : "read",
		       f->error_code & 16 ? " (instruction fetch)" : "");
	dump_regs(f);
	printk("  GS base %p, interrupt depth %u\n", (void *)c, c->irq_depth);
	backtrace_from(f->rbp, f->rip);
	panic_end();
}

/* ---- recovery ----------------------------------------------------------------------------- */

void trap_recovery_arm(struct trap_recovery *r)
{
	struct cpu *c = this_cpu();

	r->prev = c->recovery;
	r->irq_depth = c->irq_depth;
	WRITE_ONCE(c->recovery, r);
}

void trap_recover_end(struct trap_recovery *r)
{
	struct cpu *c = this_cpu();

	BUG_ON(c->recovery != r);
	WRITE_ONCE(c->recovery, r->prev);
}

/* Jump back to a recovery point if one covers this trap; return if none does. */
static void try_recover(struct trap_frame *f)
{
	struct cpu *c = this_cpu();
	struct trap_recovery *r = c->recovery;
	unsigned int outer_depth = c->irq_depth - 1;	/* before this exception */

	if (f->vector == VEC_NMI || f->vector == VEC_MACHINE_CHECK)
		return;
	if (r && r->irq_depth == outer_depth) {
		r->vector = (unsigned int)f->vector;
		r->error_code = f->error_code;
		r->ip = f->rip;
		r->fault_addr = f->vector == VEC_PAGE_FAULT ? read_cr2() : 0;
		c->recovery = r->prev;
		c->irq_depth = outer_depth;
		arch_longjmp(&r->jb, 1);
	}
}

/* ---- dispatch ----------------------------------------------------------------------------- */

static void handle_nmi(struct trap_frame *f)
{
	if (panic_in_progress())
		arch_halt_forever();	/* stopped by panic(); NMIs stay blocked: no iret */
	fatal_trap(f, "unexpected NMI");
}

void trap_dispatch(struct trap_frame *f)
{
	struct cpu *c = this_cpu();

	bool hardirq = f->vector >= 32;	/* an interrupt, not an exception */

	c->irq_depth++;
	c->arch.hardirq_depth += hardirq;
	if (f->vector == VEC_TIMER) {
		timer_interrupt();
		apic_eoi();
	} else if (f->vector == VEC_CALL) {
		c->ipis++;
		smp_call_interrupt();
		apic_eoi();
	} else if (f->vector == VEC_WAKE) {
		c->ipis++;
		apic_eoi();
	} else if (f->vector == VEC_SPURIOUS ||
		   (f->vector >= VEC_PIC_BASE && f->vector < VEC_PIC_BASE + 16)) {
		/* spurious: from the LAPIC or a masked 8259; no EOI */
	} else if (f->vector == VEC_NMI) {
		handle_nmi(f);
	} else if (f->vector < 32) {
		try_recover(f);
		fatal_trap(f, "exception");
	} else {
		fatal_trap(f, "unexpected interrupt");
	}
	c->arch.hardirq_depth -= hardirq;
	c->irq_depth--;
}
