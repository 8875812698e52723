/* The live serial monitor (tests/lab/monitor.c). */
#ifndef LAB_MONITOR_H
#define LAB_MONITOR_H

#include "kernel/compiler.h"

extern bool monitor_enabled;	/* `shell` on the command line */
__noreturn void monitor_run(void);

#endif
