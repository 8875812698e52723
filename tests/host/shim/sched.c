/*
 * What the host's interleave points and spin waits do (arch_interleave_point, arch_cpu_relax):
 * take pending simulated interrupts, and in deterministic mode (mmtest --pct) let a seeded
 * PCT scheduler pick the one CPU thread that runs next, so that a run replays exactly from
 * its seed. Also a test's periodic "tick" interrupt and race-window delays. No mm logic.
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "kernel/arch.h"
#include "kernel/smp.h"
#include "tests/host/shim/shim.h"

#define PCT_MAX_THREADS 64
#define PCT_MAX_DEPTH 16

int host_interleave_armed;

static void (*tick_fn)(void);
static unsigned int tick_period;
static __thread unsigned long tick_polls;

/* Free-running mode: while CPU threads run, every NOISE_PERIOD-th interleave point of a thread
 * gives up its host core, as a host preemption at that instruction would. */
#define NOISE_PERIOD 64
static int noise_on;
static __thread unsigned long noise_points;

void host_set_noise(bool on)
{
	if (on == __atomic_load_n(&noise_on, __ATOMIC_RELAXED))
		return;
	__atomic_store_n(&noise_on, on, __ATOMIC_RELAXED);
	if (on)
		__atomic_fetch_add(&host_interleave_armed, 1, __ATOMIC_RELAXED);
	else
		__atomic_fetch_sub(&host_interleave_armed, 1, __ATOMIC_RELAXED);
}

/*
 * Deterministic mode: the state of the PCT scheduler, all under lock. Only the thread named
 * by current runs; each other one waits on its own cv[]. Priorities: higher runs first; the threads of a
 * group start with a random permutation of depth .. depth + n - 1, and change point i lowers
 * whoever is running at step change_at[i] to i + 1, below every starting priority.
 */
static struct pct {
	pthread_mutex_t lock;
	pthread_cond_t cv[PCT_MAX_THREADS];
	bool on;
	u64 rng;
	unsigned int depth;
	u64 steps, switches, budget;
	u64 change_at[PCT_MAX_DEPTH];
	unsigned int n, registered;
	int current;
	int prio[PCT_MAX_THREADS];
	bool alive[PCT_MAX_THREADS];
	bool spinning[PCT_MAX_THREADS];	/* spun, and nobody else has stepped since */
	bool halted[PCT_MAX_THREADS];	/* in hlt, and no IPI sent to it since */
} pct = { .lock = PTHREAD_MUTEX_INITIALIZER, .current = -1 };
static pthread_once_t pct_once = PTHREAD_ONCE_INIT;

static void pct_init(void)
{
	for (unsigned int t = 0; t < PCT_MAX_THREADS; t++)
		pthread_cond_init(&pct.cv[t], NULL);
}

static __thread int pct_me = -1;

/* splitmix64: every random choice of a run comes from the run's seed, in program order. */
static u64 pct_rand(void)
{
	u64 z = (pct.rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* ---- simulated interrupts: a test's tick ---- */

void host_set_tick(void (*fn)(void), unsigned int period)
{
	if (fn && !tick_fn)
		__atomic_fetch_add(&host_interleave_armed, 1, __ATOMIC_RELAXED);
	else if (!fn && tick_fn)
		__atomic_fetch_sub(&host_interleave_armed, 1, __ATOMIC_RELAXED);
	tick_period = period ? period : 1;
	__atomic_store_n(&tick_fn, fn, __ATOMIC_RELEASE);
}

/* Called with interrupts on: every period-th poll of this thread (a random one in 1/period
 * in deterministic mode), run the tick as an interrupt handler. */
void host_tick_poll(void)
{
	void (*fn)(void) = __atomic_load_n(&tick_fn, __ATOMIC_ACQUIRE);
	bool due;

	if (!fn)
		return;
	due = pct_me >= 0 ? pct_rand() % tick_period == 0 : ++tick_polls % tick_period == 0;
	if (!due)
		return;
	host_irqs_off = 1;
	cpu_ptr(host_cpu_id)->irq_depth++;	/* interrupt context */
	fn();
	cpu_ptr(host_cpu_id)->irq_depth--;
	host_irqs_off = 0;
}

/* ---- deterministic mode (PCT) ---- */

bool host_pct_on(void)
{
	return pct.on;
}

bool host_pct_thread(void)
{
	return pct_me >= 0;
}

void host_pct_begin(u64 seed, unsigned int depth, u64 k)
{
	pthread_mutex_lock(&pct.lock);
	pct.rng = seed;
	pct.depth = depth < 1 ? 1 : depth > PCT_MAX_DEPTH ? PCT_MAX_DEPTH : depth;
	pct.steps = pct.switches = 0;
	/*
	 * Steps before a run counts as stuck: strict priorities may starve the holder of a
	 * lock that the others spin on while a higher thread walks on. A verify beside three
	 * deferred inits (gen seed 500161, PCT 500161) ran 2,617,565 steps where the same
	 * phase without change points ran k = 30,508 (86x), and finished: 50x, 2M at least,
	 * called it a hang. 200x, 10M at least (about 40 s here) for a real one.
	 */
	pct.budget = k ? (200 * k > 10000000 ? 200 * k : 10000000) : 500000000ull;
	for (unsigned int i = 0; i + 1 < pct.depth; i++) {
		bool dup;

		do {	/* d - 1 distinct change points, uniform in 1..k */
			pct.change_at[i] = k ? 1 + pct_rand() % k : 0;
			dup = false;
			for (unsigned int j = 0; j < i; j++)
				dup |= pct.change_at[j] == pct.change_at[i];
		} while (dup && k >= pct.depth);
	}
	pct.on = true;
	pthread_mutex_unlock(&pct.lock);
	__atomic_fetch_add(&host_interleave_armed, 1, __ATOMIC_RELAXED);
}

void host_pct_end(u64 *steps, u64 *switches)
{
	__atomic_fetch_sub(&host_interleave_armed, 1, __ATOMIC_RELAXED);
	pthread_mutex_lock(&pct.lock);
	pct.on = false;
	*steps = pct.steps;
	*switches = pct.switches;
	pthread_mutex_unlock(&pct.lock);
}

/*
 * The next thread to run: the highest-priority live thread that neither spins nor halts (a
 * spin cannot make progress until someone else has stepped: a waiter on a lock held by a
 * descheduled thread must let it run; a halted CPU waits for an IPI). If every live thread
 * spins or halts, take turns in CPU order after `after` among the spinners, so that each
 * re-checks its condition, and failing those among the halted (as a timer tick would wake
 * one). -1 if no thread is alive.
 */
static int pct_pick(int after)
{
	int best = -1;

	for (unsigned int t = 0; t < pct.n; t++)
		if (pct.alive[t] && !pct.spinning[t] && !pct.halted[t] &&
		    (best < 0 || pct.prio[t] > pct.prio[best]))
			best = (int)t;
	for (int halted = 0; halted < 2 && best < 0; halted++) {
		for (unsigned int i = 1; best < 0 && i <= pct.n; i++) {
			unsigned int t = ((unsigned int)(after < 0 ? 0 : after) + i) % pct.n;

			if (pct.alive[t] && (halted || !pct.halted[t]))
				best = (int)t;
		}
	}
	return best;
}

/* Hand the CPU to next (under lock); returns once it is our turn again. */
static void pct_switch(int me, int next)
{
	pct.current = next;
	pct.switches++;
	if (next >= 0)
		pthread_cond_signal(&pct.cv[next]);
	while (me >= 0 && pct.current != me)
		pthread_cond_wait(&pct.cv[me], &pct.lock);
}

static __attribute__((noreturn)) void pct_stuck(void)
{
	printf("pct: no progress after %llu steps: a deadlock, a livelock, or a wait loop "
	       "without arch_cpu_relax() (replay the seed above)\n", (unsigned long long)pct.steps);
	fflush(stdout);
	_exit(3);
}

/*
 * One PCT step of the running thread: count it, apply a priority change point that falls on
 * it, then run the highest-priority runnable thread (PCT, Burckhardt et al., ASPLOS 2010: a
 * bug that needs d ordering constraints is hit in one run with probability at least
 * 1 / (n k^(d-1)) for n threads and k steps). A spin marks the thread as not runnable until
 * another thread steps; any other step makes every spinner runnable again. A halt marks it
 * not runnable until an IPI is sent to it (host_pct_kick).
 */
enum pct_step_kind { PCT_STEP, PCT_SPIN, PCT_HALT };

static void pct_step(enum pct_step_kind kind)
{
	int me = pct_me, next;

	pthread_mutex_lock(&pct.lock);
	pct.steps++;
	for (unsigned int i = 0; i + 1 < pct.depth; i++)
		if (pct.change_at[i] == pct.steps)
			pct.prio[me] = (int)i + 1;
	if (kind != PCT_STEP) {
		pct.spinning[me] = true;
		pct.halted[me] = kind == PCT_HALT;
	} else {
		for (unsigned int t = 0; t < pct.n; t++)
			pct.spinning[t] = false;
	}
	if (pct.steps > pct.budget)
		pct_stuck();
	next = pct_pick(me);
	if (next != me)
		pct_switch(me, next);
	pct.halted[me] = false;
	pthread_mutex_unlock(&pct.lock);
}

/* An IPI to cpu: a halted CPU thread is runnable again. */
void host_pct_kick(unsigned int cpu)
{
	if (!pct.on || cpu >= PCT_MAX_THREADS)
		return;
	pthread_mutex_lock(&pct.lock);
	pct.halted[cpu] = false;
	pthread_mutex_unlock(&pct.lock);
}

/*
 * hlt in deterministic mode, for a CPU thread whose pending IPIs are taken (so nothing can
 * arrive between that check and this: one thread runs at a time). Returns when it is chosen
 * again: after an IPI, or when nothing else can run.
 */
void host_pct_halt(void)
{
	pct_step(PCT_HALT);
	host_irq_poll();
}

/* Before n CPU threads start: fresh random priorities; the highest goes first. */
void host_pct_group(unsigned int n)
{
	pthread_once(&pct_once, pct_init);
	pthread_mutex_lock(&pct.lock);
	pct.n = n < PCT_MAX_THREADS ? n : PCT_MAX_THREADS;
	pct.registered = 0;
	for (unsigned int t = 0; t < pct.n; t++) {
		pct.prio[t] = (int)(pct.depth + t);
		pct.alive[t] = true;
		pct.spinning[t] = false;
		pct.halted[t] = false;
	}
	for (unsigned int t = pct.n - 1; t > 0; t--) {	/* Fisher-Yates */
		unsigned int j = (unsigned int)(pct_rand() % (t + 1));
		int p = pct.prio[t];

		pct.prio[t] = pct.prio[j];
		pct.prio[j] = p;
	}
	pct.current = pct_pick(-1);
	pthread_mutex_unlock(&pct.lock);
}

/* A CPU thread joins the schedule: wait until every thread of the group has, and our turn. */
void host_pct_enter(unsigned int cpu)
{
	pthread_mutex_lock(&pct.lock);
	pct_me = (int)cpu;
	if (++pct.registered == pct.n && pct.current >= 0)
		pthread_cond_signal(&pct.cv[pct.current]);
	while (pct.registered < pct.n || pct.current != (int)cpu)
		pthread_cond_wait(&pct.cv[cpu], &pct.lock);
	pthread_mutex_unlock(&pct.lock);
}

void host_pct_exit(void)
{
	pthread_mutex_lock(&pct.lock);
	pct.alive[pct_me] = false;
	pct_switch(-1, pct_pick(pct_me));
	pct_me = -1;
	pthread_mutex_unlock(&pct.lock);
}

/* ---- the points ---- */

void host_interleave(void)
{
	host_irq_poll();
	if (pct_me >= 0) {
		pct_step(PCT_STEP);
		host_irq_poll();	/* what arrived while we were not running */
	} else if (__atomic_load_n(&noise_on, __ATOMIC_RELAXED) &&
		   ++noise_points % NOISE_PERIOD == 0) {
		sched_yield();
	}
}

void host_spin_wait(void)
{
	host_irq_poll();
	if (pct_me >= 0) {
		pct_step(PCT_SPIN);
		host_irq_poll();
	} else {
		sched_yield();
	}
}

/*
 * Widen a race window on purpose (a test's mm_test_hook): spin for us microseconds, taking
 * interrupts if they are on, as the kernel's udelay() does. In deterministic mode time means
 * nothing: a scheduling point, then a spin that lets the others step first, so that another
 * thread can both act (e.g. send a shootdown, taken here if interrupts are on) and then go on
 * (free what was shot down) before we do.
 */
void host_race_delay(unsigned int us)
{
	struct timespec ts;
	u64 end;

	if (pct_me >= 0) {
		host_interleave();
		host_spin_wait();
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	end = (u64)ts.tv_sec * 1000000000ull + (u64)ts.tv_nsec + us * 1000ull;
	do {
		arch_cpu_relax();
		clock_gettime(CLOCK_MONOTONIC, &ts);
	} while ((u64)ts.tv_sec * 1000000000ull + (u64)ts.tv_nsec < end);
}
