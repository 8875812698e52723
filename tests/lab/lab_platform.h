/*
 * What a scenario written once (tests/kernel/mm_private.c) needs from the platform it runs
 * on: a private allocator instance (in a lock model), the CPUs to run on. The kernel's side is
 * tests/lab/lab_platform.c (memory borrowed from the kernel's allocator, its online CPUs);
 * the host's is tests/host/harness.c (simulated RAM from 16 MiB up, 8 pthread CPUs).
 */
#ifndef LAB_LAB_PLATFORM_H
#define LAB_LAB_PLATFORM_H

#include "tests/ktest/ktest.h"
#include "mm/mm_test.h"
#include "kernel/smp.h"
#include "mm/fail_page_alloc.h"

/* Up to this many MAX_ORDER blocks (4 MiB each). */
#define LAB_NODE_MAX_BLOCKS 16

/*
 * An instance over nr_blocks MAX_ORDER blocks of memory, its memory map inside them, with
 * per-CPU lists sized for lab_nr_cpus() CPUs (pcp) or off (every free goes to the buddy
 * lists: exact per-order counts), in the boot's lock model (pcp_lock_default). NULL if the
 * memory cannot be had. One at a time.
 */
struct pglist_data *lab_node_create(unsigned int nr_blocks, bool pcp);
/* The same with lists on, in lock model `model` for the instance's life. */
struct pglist_data *lab_node_create_model(unsigned int nr_blocks, enum pcp_lock_model model);
/* The same with lists on, and nr_pcps of them per zone (more than there are CPUs: a
 * zone_pcp_update() or zone_pcp_disable() then takes longer, a wider window). */
struct pglist_data *lab_node_create_pcps(unsigned int nr_blocks, unsigned int nr_pcps);
void lab_node_destroy(struct pglist_data *pgdat);
/* A suite's .exit hook: destroys the instance a case left behind (a failed KT_ASSERT). */
void lab_node_exit(struct ktest *t);

/* The CPUs lab_run_on_cpus() runs on (kernel: those online; host: 8 threads). */
unsigned int lab_nr_cpus(void);
/* Run fn(arg) on every one of them at once, the caller's CPU included; return when all have. */
void lab_run_on_cpus(smp_call_fn fn, void *arg);
/* True in a run that must replay from its seed (the host's mmtest --pct): a case then waits
 * for conditions, not for time, and does fewer rounds. The kernel's runs are never. */
bool lab_deterministic(void);
/*
 * Run tick_fn as a timer interrupt on every CPU until lab_set_tick(NULL) (kernel: at each
 * 100 Hz tick; host: at every 256th interrupts-on poll point of a CPU thread). Set and clear
 * it between lab_run_on_cpus() calls; after the clear no CPU is in it. 0, or -1 if it cannot
 * be had (every tick hook slot taken).
 */
int lab_set_tick(void (*tick_fn)(void));

/*
 * A test's own per-CPU scratch array (kernel/smp.h's cpu_array_alloc(), zeroed) with fault
 * injection paused: under fail_page_alloc= the scaffolding must not fail, only the
 * allocations the test is about. Free with cpu_array_free().
 */
static inline void *lab_cpu_array_alloc(size_t size)
{
	void *array;

	fail_page_alloc_pause();
	array = cpu_array_alloc(size);
	fail_page_alloc_resume();
	return array;
}

#endif
