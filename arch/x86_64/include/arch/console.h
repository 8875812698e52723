/* Arch console and machine-exit hooks used by kernel/printk.c and the test framework. */
#ifndef ARCH_CONSOLE_H
#define ARCH_CONSOLE_H

#include "kernel/arch.h"	/* arch_console_write(), the part generic code uses */

void arch_console_init(void);
/* Read one byte from the console, or -1 if none is waiting. */
int arch_console_getc(void);
/* Leave QEMU through isa-debug-exit (status (code << 1) | 1); halts if the device is absent. */
__noreturn void arch_exit_qemu(u8 code);

#endif
