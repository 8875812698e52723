/* Controls of the host shim (tests/host/shim/shim.c) for the harness and tests. */
#ifndef HOST_SHIM_H
#define HOST_SHIM_H

#include <pthread.h>
#include <setjmp.h>
#include "kernel/compiler.h"

extern u64 host_boot_map_limit;		/* what arch_direct_map_boot_limit() says */
extern unsigned long host_map_direct_calls;
extern unsigned long host_warnings;	/* warn_slowpath() calls */
extern unsigned long host_bad_page_reports;	/* "BUG: Bad page state" lines printed */
extern bool host_verbose;		/* echo printk to stdout */
extern __thread jmp_buf *host_panic_jmp;	/* if set, panic() longjmps here */
extern __thread char host_panic_msg[256];

void host_phys_init(u64 size);
void host_phys_reset(void);
void host_console_reset(void);
bool host_console_contains(const char *needle);
void host_console_dump(void);
/* Mark this thread's CPU as running (its mailbox takes cross-CPU calls) or not. */
void host_cpu_set_live(bool live);
/* Queue fn(arg) as an interrupt of this CPU, taken where it next polls with interrupts on. */
void host_irq_raise(void (*fn)(void *), void *arg);

#endif
