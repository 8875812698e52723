/* Arch console and machine-exit hooks used by kernel/printk.c and the test framework. */
#ifndef ARCH_CONSOLE_H
#define ARCH_CONSOLE_H

#include "kernel/arch.h"	/* arch_console_write(), the part generic code uses */

void arch_console_init(void);
/* Read one byte from the console, or -1 if none is waiting. */
int arch_console_getc(void);
/* Leave QEMU through isa-debug-exit (status (code << 1) | 1); halts if the device is absent. */
__noreturn void arch_exit_qemu(u8 code);
/* Append the QEMU fw_cfg file "opt/smpmm/cmdline" (if any) to buf, as much as fits in cap
 * bytes with the NUL; returns the length the whole line has (cap or more: it was cut). */
size_t arch_fwcfg_cmdline(char *buf, size_t len, size_t cap);

#endif
