/* Fatal errors and assertions. panic() stops every CPU and prints one report (kernel/panic.c). */
#ifndef KERNEL_PANIC_H
#define KERNEL_PANIC_H

#include "kernel/compiler.h"

__noreturn __printf(1, 2) void panic(const char *fmt, ...);
void warn_slowpath(const char *file, int line, const char *cond);

/*
 * Taint, as Linux's add_taint(): events after which the kernel carries on but its state is
 * suspect, counted since boot. bad_page() adds TAINT_BAD_PAGE, WARN_ON() TAINT_WARN; the test
 * runners (the kernel's and the host's) fail a case during which one was added that the case
 * did not announce.
 */
enum taint_flag { TAINT_BAD_PAGE, TAINT_WARN, NR_TAINT_FLAGS };
void add_taint(enum taint_flag flag);
unsigned long taint_count(enum taint_flag flag);

#define BUG() panic("BUG at %s:%d", __FILE__, __LINE__)
#define BUG_ON(cond)                                                              \
	do {                                                                      \
		if (unlikely(cond))                                               \
			panic("BUG_ON(%s) at %s:%d", #cond, __FILE__, __LINE__);  \
	} while (0)
/* WARN_ON(cond) prints once per call site with a location and evaluates to cond. */
#define WARN_ON(cond)                                                             \
	({                                                                        \
		bool __w = !!(cond);                                              \
		if (unlikely(__w))                                                \
			warn_slowpath(__FILE__, __LINE__, #cond);                 \
		__w;                                                              \
	})

/* Debug-only assertions: on with CONFIG_DEBUG_VM=1 (tests), type-checked but free when off. */
#ifndef CONFIG_DEBUG_VM
#define CONFIG_DEBUG_VM 1
#endif
#if CONFIG_DEBUG_VM
#define VM_BUG_ON(cond) BUG_ON(cond)
#define VM_WARN_ON(cond) ((void)WARN_ON(cond))
#else
#define VM_BUG_ON(cond) BUILD_BUG_ON_INVALID(cond)
#define VM_WARN_ON(cond) BUILD_BUG_ON_INVALID(cond)
#endif

#endif
