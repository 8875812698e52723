/*
 * Host implementations of what mm/ and kernel/ call outside themselves: the console under
 * kernel/printk.c, panic (catchable by tests), warn_slowpath, the mm/arch_mm.h direct-map
 * hooks, and the simulated physical memory. Nothing here is allocator logic.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "kernel/arch.h"
#include "kernel/panic.h"
#include "kernel/printk.h"
#include "kernel/timer.h"
#include "mm/arch_mm.h"
#include "mm/memblock.h"
#include "tests/host/shim/shim.h"

__thread unsigned int host_cpu_id;
__thread unsigned long host_irqs_off;
u8 *host_phys_base;
u64 host_phys_size;
u64 host_boot_map_limit = 4ull << 30;
unsigned long host_map_direct_calls;
bool host_verbose;

/* ---- console: every message goes to a capture buffer tests can search; stdout if verbose ---- */

static char capture[1 << 18];
static size_t capture_len, capture_dropped;
static pthread_mutex_t console_lock = PTHREAD_MUTEX_INITIALIZER;

/* kernel/printk.c's console hook: it formats and serializes, this keeps the bytes. */
void arch_console_write(const char *s, size_t len)
{
	pthread_mutex_lock(&console_lock);
	if (capture_len + len < sizeof(capture)) {
		memcpy(capture + capture_len, s, len);
		capture_len += len;
		capture[capture_len] = 0;
	} else {
		capture_dropped += len;
	}
	if (host_verbose)
		fwrite(s, 1, len, stdout);
	pthread_mutex_unlock(&console_lock);
}

void host_console_reset(void)
{
	pthread_mutex_lock(&console_lock);
	capture_len = 0;
	capture_dropped = 0;
	capture[0] = 0;
	pthread_mutex_unlock(&console_lock);
}

bool host_console_contains(const char *needle)
{
	bool found;

	pthread_mutex_lock(&console_lock);
	found = strstr(capture, needle) != NULL;
	pthread_mutex_unlock(&console_lock);
	return found;
}

const char *host_console_text(size_t *dropped)
{
	*dropped = capture_dropped;
	return capture;
}

void host_console_dump(void)
{
	pthread_mutex_lock(&console_lock);
	fputs(capture, stdout);
	pthread_mutex_unlock(&console_lock);
}

/* kernel/arch.h: the host has no second command line (no fw_cfg device). */
size_t arch_fwcfg_cmdline(char *buf, size_t len, size_t cap)
{
	return len;
}

/* ---- panic / warn ---- */

__thread jmp_buf *host_panic_jmp;
__thread char host_panic_msg[256];

void panic(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(host_panic_msg, sizeof(host_panic_msg), fmt, ap);
	va_end(ap);
	printk("PANIC: %s\n", host_panic_msg);
	if (host_panic_jmp)
		longjmp(*host_panic_jmp, 1);
	host_console_dump();
	fprintf(stderr, "PANIC (uncaught): %s\n", host_panic_msg);
	abort();
}

/* lockdep's reports end with a backtrace in the kernel; the host has the sites only. */
void arch_dump_stack(void)
{
	printk("  (no backtrace on the host: see the sites above)\n");
}

static unsigned long taints[NR_TAINT_FLAGS];

void add_taint(enum taint_flag flag)
{
	__atomic_fetch_add(&taints[flag], 1, __ATOMIC_RELAXED);
}

unsigned long taint_count(enum taint_flag flag)
{
	return __atomic_load_n(&taints[flag], __ATOMIC_RELAXED);
}

void warn_slowpath(const char *file, int line, const char *cond)
{
	add_taint(TAINT_WARN);
	printk("WARNING: %s at %s:%d\n", cond, file, line);
}

/* ---- time: arch_cycles() counts nanoseconds here ---- */

u64 cycles_to_us(u64 cycles)
{
	return cycles / 1000;
}

u64 us_to_cycles(u64 us)
{
	return us * 1000;
}

/* kernel/timer.h's busy wait, taking interrupts if they are on (sched.c). */
void udelay(u64 us)
{
	host_race_delay((unsigned int)us);
}

/* ---- physical memory and the direct map ---- */

void host_phys_init(u64 size)
{
	host_phys_base = mmap(NULL, size, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (host_phys_base == MAP_FAILED) {
		perror("mmap physical memory");
		exit(2);
	}
	host_phys_size = size;
}

/* Give every touched page back: the next test starts from zeroed "RAM". */
void host_phys_reset(void)
{
	madvise(host_phys_base, host_phys_size, MADV_DONTNEED);
}

u64 arch_direct_map_boot_limit(void)
{
	return host_boot_map_limit;
}

u64 arch_direct_map_max(void)
{
	return host_phys_size;
}

/* Everything is mapped already; model the page-table cost: one page per GiB touched. */
int arch_map_direct(struct memblock *mb, u64 phys, u64 len)
{
	host_map_direct_calls++;
	if (phys + len > host_phys_size || phys + len < phys)
		return -1;
	for (u64 gib = phys >> 30; gib <= (phys + len - 1) >> 30; gib++)
		if (!memblock_alloc(mb, PAGE_SIZE, PAGE_SIZE))
			return -1;
	return 0;
}
