/* Console output: whole lines, never interleaved between CPUs. Implemented by kernel/printk.c. */
#ifndef KERNEL_PRINTK_H
#define KERNEL_PRINTK_H

#include <stdarg.h>
#include "kernel/compiler.h"

/*
 * printk() writes one formatted message atomically with respect to other CPUs. A message
 * should end with '\n'. Formats: %d %i %u %x %X %p %s %c %% with l, ll, z, h modifiers,
 * width, '-', '0' and precision for %s.
 */
__printf(1, 2) void printk(const char *fmt, ...);
void vprintk(const char *fmt, va_list ap);
/* Write s as it is, of any length, as one unit (for long machine-readable lines). */
void printk_raw(const char *s);
/* Like printk, but prefixed with "cpuN: " for the calling CPU. */
__printf(1, 2) void pr_cpu(const char *fmt, ...);

/* After panic(): print without the console lock (a stopped CPU may hold it). */
void printk_emergency(void);

int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap);
__printf(3, 4) int snprintf(char *buf, size_t size, const char *fmt, ...);
/*
 * Linux's scnprintf(): as snprintf, but returns what it wrote into buf (without the NUL):
 * at most size - 1, and 0 if size is 0. The bounded append, for a line built piece by piece:
 *	len += scnprintf(line + len, sizeof(line) - len, " %u", d);
 * len never passes sizeof(line) - 1, so the size argument cannot wrap (snprintf returns what
 * it would have written: the same line with it runs past the buffer once it is full).
 */
int vscnprintf(char *buf, size_t size, const char *fmt, va_list ap);
__printf(3, 4) int scnprintf(char *buf, size_t size, const char *fmt, ...);

#define pr_info(...) printk(__VA_ARGS__)
#define pr_warn(...) printk("WARNING: " __VA_ARGS__)
#define pr_err(...) printk("ERROR: " __VA_ARGS__)

#endif
