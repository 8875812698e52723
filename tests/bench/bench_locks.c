/*
 * `bench=locks`: why kernel/spinlock.c is test-and-test-and-set. Three candidate spinlocks,
 * written out here in a few lines each, are hammered by 1..40 CPUs for a fixed time: every
 * CPU takes the lock, updates a shared counter, releases it, and does a little work outside.
 * Reported per point: acquisitions per second, and the longest single wait for the lock.
 * The interesting column is 40 vCPUs on 2 host cores: a FIFO lock (ticket) must hand the
 * lock to the one waiter whose turn it is, even when the host is not running that vCPU.
 */
#include "tests/bench/bench.h"
#include "kernel/cmdline.h"
#include "kernel/printk.h"
#include "kernel/smp.h"
#include "kernel/timer.h"

static unsigned int lock_bench_ms = 500;
CMDLINE_UINT("bench.lock_ms", lock_bench_ms, "locks bench: milliseconds per lock and CPU count (split into bench.windows)");

struct cand_lock {
	u32 word __cacheline_aligned;	/* TAS/TTAS: 0 free, 1 held */
	u32 next;			/* ticket: next ticket to hand out */
	u32 owner;			/* ticket: ticket now being served */
};

/* Test-and-set: every waiter keeps writing the line (an atomic exchange per spin). */
static void tas_lock(struct cand_lock *l)
{
	while (__atomic_exchange_n(&l->word, 1, __ATOMIC_ACQUIRE))
		arch_cpu_relax();
}

/* Test-and-test-and-set: waiters read until the lock looks free, then try once. */
static void ttas_lock(struct cand_lock *l)
{
	while (__atomic_exchange_n(&l->word, 1, __ATOMIC_ACQUIRE))
		while (READ_ONCE(l->word))
			arch_cpu_relax();
}

static void word_unlock(struct cand_lock *l)
{
	smp_store_release(&l->word, 0);
}

/* Ticket: strictly first come, first served. */
static void ticket_lock(struct cand_lock *l)
{
	u32 me = __atomic_fetch_add(&l->next, 1, __ATOMIC_RELAXED);

	while (smp_load_acquire(&l->owner) != me)
		arch_cpu_relax();
}

static void ticket_unlock(struct cand_lock *l)
{
	smp_store_release(&l->owner, l->owner + 1);
}

static const struct candidate {
	const char *name;
	void (*lock)(struct cand_lock *);
	void (*unlock)(struct cand_lock *);
} candidates[] = {
	{ "tas", tas_lock, word_unlock },
	{ "ttas", ttas_lock, word_unlock },
	{ "ticket", ticket_lock, ticket_unlock },
};

struct lock_run {
	const struct candidate *c;
	struct cand_lock lock;
	unsigned int cpus;
	u64 deadline;
	u64 counter;			/* protected by lock */
	u64 acquired[MAX_CPUS], max_wait[MAX_CPUS];
};

static void lock_bench_cpu(void *arg)
{
	struct lock_run *run = arg;
	unsigned int cpu = arch_cpu_id();
	volatile unsigned int spin;

	if (cpu >= run->cpus)
		return;
	while (arch_cycles() < READ_ONCE(run->deadline)) {
		u64 t0 = arch_cycles(), waited;

		run->c->lock(&run->lock);
		waited = arch_cycles() - t0;
		run->counter++;
		run->c->unlock(&run->lock);
		run->acquired[cpu]++;
		run->max_wait[cpu] = MAX(run->max_wait[cpu], waited);
		for (spin = 0; spin < 50; spin++)	/* work outside the lock */
			;
	}
}

/* One window: acquisitions per second (x1000); *worst_us and *exact accumulate. */
static u64 lock_bench_window(const struct candidate *c, unsigned int cpus, unsigned int ms,
			     u64 *worst_us, bool *exact)
{
	static struct lock_run run;
	u64 total = 0, start, elapsed_us;

	run = (struct lock_run){ .c = c, .cpus = cpus };
	start = arch_cycles();
	run.deadline = start + us_to_cycles((u64)ms * 1000);
	smp_run_on_all(lock_bench_cpu, &run);
	elapsed_us = MAX(cycles_to_us(arch_cycles() - start), 1ull);
	for (unsigned int i = 0; i < cpus; i++) {
		total += run.acquired[i];
		*worst_us = MAX(*worst_us, cycles_to_us(run.max_wait[i]));
	}
	*exact &= run.counter == total;
	return total * 1000000ull * 1000 / elapsed_us;
}

/* One point: bench.lock_ms split into bench_windows() windows, one sample each. */
static void lock_bench_point(const struct candidate *c, unsigned int cpus)
{
	unsigned int nwin = bench_windows(), ms = MAX(lock_bench_ms / nwin, 1u);
	u64 rate[BENCH_MAX_WINDOWS], worst = 0;
	bool exact = true;
	char metric[48], extra[96];

	for (unsigned int w = 0; w < nwin; w++)
		rate[w] = lock_bench_window(c, cpus, ms, &worst, &exact);
	printk("locks: %-6s %2u CPUs: %9llu acquisitions/s (+- %llu.%02llu%%, %u x %u ms), "
	       "longest wait %6llu us, counter %s\n", c->name, cpus,
	       (unsigned long long)(bench_mean(rate, nwin) / 1000),
	       (unsigned long long)(bench_rel_stddev_centi(rate, nwin) / 100),
	       (unsigned long long)(bench_rel_stddev_centi(rate, nwin) % 100), nwin, ms,
	       (unsigned long long)worst, exact ? "exact" : "WRONG");
	snprintf(metric, sizeof(metric), "%s.cpus%u", c->name, cpus);
	snprintf(extra, sizeof(extra), "\"model\":\"%s\",\"cpus\":%u,\"max_wait_us\":%llu,\"exact\":%s",
		 c->name, cpus, (unsigned long long)worst, exact ? "true" : "false");
	bench_emit("locks", metric, "acquisitions/s", true, rate, nwin, extra);
}

static void lock_bench(void)
{
	static const unsigned int points[] = { 1, 2, 4, 8, 16, 40 };

	for (unsigned int k = 0; k < ARRAY_SIZE(candidates); k++)
		for (unsigned int i = 0; i < ARRAY_SIZE(points) && points[i] <= nr_cpus_online(); i++)
			lock_bench_point(&candidates[k], points[i]);
}
BENCH_REGISTER(locks, lock_bench, "candidate spinlocks (tas, ttas, ticket) under contention on 1..40 CPUs");
