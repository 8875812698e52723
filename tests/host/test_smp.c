/*
 * Host tests of kernel/smp.c's cross-CPU calls, on the host's CPU threads (the shim's IPIs,
 * tests/host/shim/cpu.c): the call ring's bound, descriptor reuse (TSan judges the ordering),
 * and CPUs that wait on each other with interrupts off. The kernel's own suite (smp,
 * tests/kernel/smp_calls.c) runs the same calls on real IPIs.
 */
#include <string.h>
#include "tests/host/harness.h"
#include "kernel/cmdline.h"
#include "kernel/smp.h"

#define SECOND_NS 1000000000ull		/* host arch_cycles() are nanoseconds */

/* The boot options every file registers (kernel/cmdline.h); the host has no boot line, so
 * a test sets what it needs itself, and puts it back. */
extern const struct cmdline_option *const __start_cmdline_options[];
extern const struct cmdline_option *const __stop_cmdline_options[];

static bool host_set_option(const char *name, const char *value)
{
	for (const struct cmdline_option *const *o = __start_cmdline_options;
	     o < __stop_cmdline_options; o++)
		if (!strcmp((*o)->name, name))
			return cmdline_set(*o, value, strlen(value)) == CMDLINE_OK;
	return false;
}

/* The CPU threads of a set come online one by one: a call to one not yet up is refused. */
static void wait_cpus_online(void)
{
	while (nr_cpus_online() < nr_cpus)
		arch_cpu_relax();
}

static void count_call(void *arg)
{
	__atomic_fetch_add((int *)arg, 1, __ATOMIC_RELAXED);
}

/* ---- the ring's bound ---- */

#define RING_SENDERS 5				/* cpus 2..6 */
#define RING_CALLS (RING_SENDERS * SMP_ASYNC_CALLS)	/* 40: more than the ring's 32 */

struct ring_run {
	int ran[RING_CALLS];		/* how often each call ran */
	int sends;			/* calls begun plus calls returned, by the senders */
	int full;			/* the target saw its ring full */
	int closed;			/* the target has turned interrupts off */
	unsigned int max_depth;		/* most calls the target saw queued at once */
};

static unsigned int ring_depth(unsigned int cpu)
{
	struct cpu *c = cpu_ptr(cpu);

	return READ_ONCE(c->call_tail) - READ_ONCE(c->call_head);
}

/*
 * cpu1 keeps interrupts off until its ring is full and the senders have made no progress for
 * 20 ms (each has sent all its calls, or waits for room); cpus 2..6 send it 8 calls each
 * without waiting (every async descriptor they have), so 8 of the 40 must wait for room.
 */
static void *ring_cpu(void *p)
{
	struct ring_run *r = *(struct ring_run **)p;
	unsigned int cpu = arch_cpu_id();

	wait_cpus_online();
	if (cpu == 1) {
		u64 end = arch_cycles() + 2 * SECOND_NS, since = arch_cycles();
		int sends = -1;

		arch_irq_disable();
		smp_store_release(&r->closed, 1);
		while (arch_cycles() < end && (!r->full || arch_cycles() - since < 20000000)) {
			unsigned int d = ring_depth(1);

			r->max_depth = MAX(r->max_depth, d);
			r->full |= d >= SMP_CALL_RING;
			if (READ_ONCE(r->sends) != sends) {
				sends = READ_ONCE(r->sends);
				since = arch_cycles();
			}
			arch_cpu_relax();
		}
		arch_irq_enable();	/* takes the call IPI: runs the ring */
	} else if (cpu >= 2 && cpu < 2 + RING_SENDERS) {
		int *mine = &r->ran[(cpu - 2) * SMP_ASYNC_CALLS];
		u64 end = arch_cycles() + 3 * SECOND_NS;
		bool done = false;

		while (!smp_load_acquire(&r->closed))	/* else cpu1 runs them as they come */
			arch_cpu_relax();

		for (unsigned int i = 0; i < SMP_ASYNC_CALLS; i++) {
			__atomic_fetch_add(&r->sends, 1, __ATOMIC_RELAXED);
			smp_call_function_single(1, count_call, &mine[i], false);
			__atomic_fetch_add(&r->sends, 1, __ATOMIC_RELAXED);
		}
		while (!done && arch_cycles() < end) {
			done = true;
			for (unsigned int i = 0; i < SMP_ASYNC_CALLS; i++)
				done &= smp_load_acquire(&mine[i]) != 0;
			arch_cpu_relax();
		}
	}
	return NULL;
}

/* A CPU's call ring holds SMP_CALL_RING calls: a sender that finds it full waits for room,
 * it never writes over a queued call. 40 calls at a CPU with interrupts off: at most 32
 * queued at once, and each runs exactly once. Window: the ring was seen full. */
static void smp_call_ring_full_senders_wait(struct ktest *t)
{
	static struct ring_run r;
	struct ring_run *args[8];
	unsigned int once = 0;

	memset(&r, 0, sizeof(r));
	for (unsigned int i = 0; i < 8; i++)
		args[i] = &r;
	run_on_cpus(8, ring_cpu, args, sizeof(args[0]));
	for (unsigned int i = 0; i < RING_CALLS; i++)
		once += r.ran[i] == 1;
	printk("%u of %u calls ran exactly once; at most %u queued at once (ring of %u)\n", once,
	       RING_CALLS, r.max_depth, SMP_CALL_RING);
	KT_EXPECT_LE(t, r.max_depth, (unsigned int)SMP_CALL_RING);
	KT_EXPECT_EQ(t, once, (unsigned int)RING_CALLS);
	if (!r.full)
		KT_SKIP(t, "no race: the ring never filled up");
}

/* ---- descriptors used again ---- */

struct reuse_run {
	int ran[4];
	unsigned int rounds;
	bool wait;
};

/*
 * cpus 0 and 2 send cpus 1 and 3 a stream of calls: without waiting (their 8 async
 * descriptors, each used again as soon as its target is done with it), or waiting (the
 * descriptor on the sender's stack, used again by the next call at once).
 */
static void *reuse_cpu(void *p)
{
	struct reuse_run *r = *(struct reuse_run **)p;
	unsigned int cpu = arch_cpu_id();
	u64 end;

	wait_cpus_online();
	if (cpu != 0 && cpu != 2)
		return NULL;
	for (unsigned int i = 0; i < r->rounds; i++)
		smp_call_function_single(cpu + 1, count_call, &r->ran[cpu + 1], r->wait);
	end = arch_cycles() + 10 * SECOND_NS;	/* a lost call: fail, do not hang */
	while (smp_load_acquire(&r->ran[cpu + 1]) < (int)r->rounds &&
	       (host_pct_on() || arch_cycles() < end))
		arch_cpu_relax();
	return NULL;
}

static void reuse_check(struct ktest *t, bool wait)
{
	static struct reuse_run r;
	struct reuse_run *args[4] = { &r, &r, &r, &r };

	memset(&r, 0, sizeof(r));
	r.rounds = host_pct_on() ? 30 : 2000;
	r.wait = wait;
	run_on_cpus(4, reuse_cpu, args, sizeof(args[0]));
	KT_EXPECT_EQ(t, r.ran[1], (int)r.rounds);
	KT_EXPECT_EQ(t, r.ran[3], (int)r.rounds);
}

/* An async call descriptor is free for the sender's next call once its last target is done
 * with it: that target touches it no more after its count went to 0, and the sender sees
 * everything the target did (TSan checks both). Every call runs once. */
static void smp_call_nowait_descriptor_reused_after_done(struct ktest *t)
{
	reuse_check(t, false);
}

/* The same for waited calls, whose descriptor lives in the sender's stack frame: after the
 * wait the frame is the next call's. */
static void smp_call_wait_descriptor_reused_after_done(struct ktest *t)
{
	reuse_check(t, true);
}

/* ---- waiting on each other ---- */

struct both_ways {
	int ready;
	int ran[2];
};

static void *both_ways_cpu(void *p)
{
	struct both_ways *b = *(struct both_ways **)p;
	unsigned int cpu = arch_cpu_id(), other = 1 - cpu;
	unsigned long flags;

	wait_cpus_online();
	flags = arch_irq_save();
	__atomic_fetch_add(&b->ready, 1, __ATOMIC_ACQ_REL);
	while (smp_load_acquire(&b->ready) < 2)
		arch_cpu_relax();
	smp_call_function_single(other, count_call, &b->ran[other], true);
	arch_irq_restore(flags);
	return NULL;
}

/* Two CPUs with interrupts off call each other and wait: each runs the other's call while
 * it waits (its own queue first), so both return. With a 2 s call timeout, a wait that
 * does not do so panics instead of hanging. */
static void smp_call_wait_irqs_off_both_ways(struct ktest *t)
{
	static struct both_ways b;
	struct both_ways *args[2] = { &b, &b };

	memset(&b, 0, sizeof(b));
	KT_ASSERT_TRUE(t, host_set_option("smp.call_timeout_ms", "2000"));
	run_on_cpus(2, both_ways_cpu, args, sizeof(args[0]));
	host_set_option("smp.call_timeout_ms", "0");
	KT_EXPECT_EQ(t, b.ran[0], 1);
	KT_EXPECT_EQ(t, b.ran[1], 1);
}

static const struct ktest_case smp_cases[] = {
	KTEST_CASE(smp_call_ring_full_senders_wait),
	KTEST_CASE_CONCURRENT(smp_call_nowait_descriptor_reused_after_done),
	KTEST_CASE_CONCURRENT(smp_call_wait_descriptor_reused_after_done),
	KTEST_CASE_CONCURRENT(smp_call_wait_irqs_off_both_ways),
};
KTEST_SUITE(host_smp, smp_cases);
