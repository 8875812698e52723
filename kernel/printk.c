/*
 * printk: format into a local buffer, then write the whole message under one lock, so lines
 * from many CPUs never interleave. Usable from the first C instruction. Not a log buffer.
 */
#include "kernel/printk.h"
#include "kernel/spinlock.h"
#include "kernel/arch.h"
#include "kernel/string.h"

#define PRINTK_LINE_MAX 512

static spinlock_t console_lock = SPINLOCK_INIT("console");
/* Set by panic(): stop taking the lock, a stopped CPU may hold it. */
static bool printk_emergency_mode;

void printk_emergency(void)
{
	WRITE_ONCE(printk_emergency_mode, true);
}

static void console_emit(const char *buf, size_t len)
{
	unsigned long flags;

	/* A fault while printing (or panic) must still get its message out. */
	if (READ_ONCE(printk_emergency_mode) || spin_is_held_by_me(&console_lock)) {
		arch_console_write(buf, len);
		return;
	}
	flags = spin_lock_irqsave(&console_lock);
	arch_console_write(buf, len);
	spin_unlock_irqrestore(&console_lock, flags);
}

void printk_raw(const char *s)
{
	console_emit(s, strlen(s));
}

void vprintk(const char *fmt, va_list ap)
{
	char buf[PRINTK_LINE_MAX];
	int n = vsnprintf(buf, sizeof(buf), fmt, ap);

	console_emit(buf, n < (int)sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

void printk(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintk(fmt, ap);
	va_end(ap);
}

void pr_cpu(const char *fmt, ...)
{
	char buf[PRINTK_LINE_MAX];
	int n = scnprintf(buf, sizeof(buf), "cpu%u: ", arch_cpu_id());
	va_list ap;

	va_start(ap, fmt);
	n += vscnprintf(buf + n, sizeof(buf) - (size_t)n, fmt, ap);
	va_end(ap);
	console_emit(buf, (size_t)n);
}

int vscnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
	int n = vsnprintf(buf, size, fmt, ap);

	if (n < 0 || !size)
		return 0;
	return (size_t)n < size ? n : (int)(size - 1);
}

int scnprintf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vscnprintf(buf, size, fmt, ap);
	va_end(ap);
	return n;
}
