/* Controls of the host shim (tests/host/shim/shim.c) for the harness and tests. */
#ifndef HOST_SHIM_H
#define HOST_SHIM_H

#include <pthread.h>
#include <setjmp.h>
#include "kernel/compiler.h"

extern u64 host_boot_map_limit;		/* what arch_direct_map_boot_limit() says */
extern unsigned long host_map_direct_calls;
extern bool host_verbose;		/* echo printk to stdout */
extern __thread jmp_buf *host_panic_jmp;	/* if set, panic() longjmps here */
extern __thread char host_panic_msg[256];

void host_phys_init(u64 size);
void host_phys_reset(void);
void host_console_reset(void);
bool host_console_contains(const char *needle);
void host_console_dump(void);
/* Everything printed since the last reset, NUL-terminated (a single-threaded reader's view);
 * *dropped: bytes that did not fit in the capture and are not in it. */
const char *host_console_text(size_t *dropped);
/* Mark this thread's CPU online (kernel/smp.c sends it calls) or offline, running what was
 * queued for it first (tests/host/shim/cpu.c). CPU 0 stays online. */
void host_cpu_online(bool online);

/*
 * A periodic simulated interrupt (tests/host/shim/sched.c): fn runs as an interrupt handler
 * (interrupts off) on whichever CPU thread polls with interrupts on, every period-th poll of
 * that thread (at random, 1 in period, in deterministic mode). NULL stops it.
 */
void host_set_tick(void (*fn)(void), unsigned int period);
void host_tick_poll(void);
/* Free-running mode: make every 64th interleave point of each thread a host yield (the
 * harness turns this on while CPU threads run). */
void host_set_noise(bool on);
/* Widen a race window: spin us microseconds taking interrupts if on (udelay); in
 * deterministic mode, two scheduling points. */
void host_race_delay(unsigned int us);

/*
 * Deterministic mode (mmtest --pct): begin/end one run of a test with its seed, bug depth d
 * and step estimate k; the harness calls group/enter/exit around each set of CPU threads.
 */
void host_pct_begin(u64 seed, unsigned int depth, u64 k);
void host_pct_end(u64 *steps, u64 *switches);
bool host_pct_on(void);
void host_pct_group(unsigned int n);
void host_pct_enter(unsigned int cpu);
void host_pct_exit(void);
/* This thread is a CPU thread under the deterministic scheduler; its hlt; an IPI to cpu. */
bool host_pct_thread(void);
void host_pct_halt(void);
void host_pct_kick(unsigned int cpu);

#endif
