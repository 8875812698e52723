/*
 * Fault injection for the page allocator, after Linux's fail_page_alloc (mm/fail_page_alloc.c,
 * lib/fault-inject.c): alloc_pages_node() returns NULL on purpose, so that every caller's
 * failure path runs. Off unless `fail_page_alloc=` is given or a test turns it on; compiled
 * out of release builds (DEBUG_VM=0). Not a memory limit: nothing is reserved or held.
 */
#ifndef MM_FAIL_PAGE_ALLOC_H
#define MM_FAIL_PAGE_ALLOC_H

#include "mm/mm.h"

/* Release builds (DEBUG_VM=0, what `make bench` measures) have no hook at all. */
#ifndef CONFIG_FAIL_PAGE_ALLOC
#define CONFIG_FAIL_PAGE_ALLOC CONFIG_DEBUG_VM
#endif

/*
 * What to fail. The first four are the boot syntax
 * `fail_page_alloc=<interval>,<probability>,<space>,<times>`, with Linux's meaning; an
 * allocation is failed only if it passes every test below, in this order.
 */
struct fault_attr {
	unsigned long interval;	/* only every interval-th eligible call may fail (0, 1: all) */
	unsigned int probability; /* percent of those calls that fail; 0: off */
	long space;		/* pages: calls go through untouched until this many pages have
				 * been asked for (each call takes 2^order off it) */
	long times;		/* failures left to inject; -1: no limit */
	unsigned int min_order;	/* fail only orders >= this (Linux: min-order) */
	bool ignore_gfp_wait;	/* fail only allocations that cannot wait: no
				 * __GFP_DIRECT_RECLAIM (Linux: ignore-gfp-wait) */
	bool irq_only;		/* fail only in interrupt context */
	unsigned int verbose;	/* print the first `verbose` failures (not __GFP_NOWARN ones) */
	u64 seed;		/* the random decisions; the same seed repeats them */
};

/* Injected failures so far (since boot; never reset). */
struct fail_page_alloc_stats {
	u64 eligible;		/* calls that got as far as the interval and probability tests */
	u64 failed;		/* allocations failed on purpose */
	u64 failed_order[NR_ORDERS];
};

#if CONFIG_FAIL_PAGE_ALLOC
extern bool fail_page_alloc_armed;	/* probability > 0: the hook below looks further */
bool __should_fail_alloc_page(gfp_t gfp, unsigned int order, void *caller);
#endif

/*
 * The hook, first thing in alloc_pages_node() (and alloc_pages_bulk_node()): should this
 * allocation fail on purpose? When injection is off it is one load of a read-mostly flag
 * and a branch predicted not taken. __GFP_NOFAIL does not exist here: no caller needs it.
 */
static __always_inline bool should_fail_alloc_page(gfp_t gfp, unsigned int order)
{
#if CONFIG_FAIL_PAGE_ALLOC
	if (unlikely(READ_ONCE(fail_page_alloc_armed)))
		return __should_fail_alloc_page(gfp, order, __builtin_return_address(0));
#endif
	(void)gfp;
	(void)order;
	return false;
}

/* Parse "<interval>,<probability>,<space>,<times>" into a (other fields untouched); 0 or -1. */
int fault_attr_parse(const char *s, struct fault_attr *a);
/*
 * Replace the settings (a NULL: off) and start every CPU's decisions afresh from a->seed.
 * Only while no CPU allocates (boot, or a test between its phases). The counters in
 * struct fail_page_alloc_stats go on. Returns -1 if injection is not built in.
 */
int fail_page_alloc_configure(const struct fault_attr *a);
/* The settings, with times and space as they are now (consumed by failures and calls). */
void fail_page_alloc_get(struct fault_attr *a);
bool fail_page_alloc_enabled(void);
/*
 * Restart every CPU's random decisions and interval count from the seed and a name (the test
 * runner passes each case's), so that a case repeats alone: `fail_page_alloc.seed=S test=X`.
 * Only while no CPU allocates.
 */
void fail_page_alloc_reseed(const char *suite, const char *tcase);
/* Suspend injection for everyone (a test that needs every allocation to succeed); nests. */
void fail_page_alloc_pause(void);
void fail_page_alloc_resume(void);
void fail_page_alloc_read_stats(struct fail_page_alloc_stats *s);
/* Failures injected on this CPU since boot: did the NULL just seen come from injection? */
u64 fail_page_alloc_this_cpu_failed(void);
/* "<prefix>N allocations failed on purpose by fail_page_alloc (order 0: a, ...), of M eligible
 * calls (seed S)" */
void fail_page_alloc_print_stats(const char *prefix);
/*
 * kmain, once every CPU is up: pick the seed if none was given, print the settings
 * and arm injection, if fail_page_alloc= asked for it. Not earlier: SMP bring-up allocates
 * the per-CPU areas from the page allocator, and a boot that lost its APs tests nothing.
 */
void fail_page_alloc_boot(void);

#endif
