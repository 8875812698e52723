/* The live serial monitor (kernel/monitor.c). */
#ifndef KERNEL_MONITOR_H
#define KERNEL_MONITOR_H

#include "kernel/compiler.h"

extern bool monitor_enabled;	/* `shell` on the command line */
__noreturn void monitor_run(void);

#endif
