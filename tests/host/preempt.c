/*
 * A preemption injector for host race tests: a timer signal stops a CPU thread wherever it
 * is, as the host descheduling a vCPU would, until the other CPU threads have made a step (a
 * counter the test advances) or 0.2 ms have passed. Armed just before a call, with a short
 * random delay, it leaves that call's window of a few instructions open while the others run.
 * Test code only; it changes nothing in mm/.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>
#include "tests/host/harness.h"

static __thread timer_t preempt_timer;
static __thread bool preempt_ready;
static __thread unsigned long preempt_stops;
static __thread const u64 *preempt_progress;

static u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (u64)ts.tv_sec * 1000000000ull + (u64)ts.tv_nsec;
}

static void preempt_handler(int sig)
{
	u64 seen = smp_load_acquire(preempt_progress), until = now_ns() + 200000;

	(void)sig;
	preempt_stops++;
	do
		sched_yield();
	while (smp_load_acquire(preempt_progress) == seen && now_ns() < until);
}

void host_preempt_start(const u64 *progress)
{
	struct sigevent sev = { .sigev_notify = SIGEV_THREAD_ID, .sigev_signo = SIGURG };
	struct sigaction sa = { .sa_handler = preempt_handler, .sa_flags = SA_RESTART };

	preempt_progress = progress;
	sigaction(SIGURG, &sa, NULL);
	sev._sigev_un._tid = gettid();
	preempt_ready = !timer_create(CLOCK_MONOTONIC, &sev, &preempt_timer);
}

void host_preempt_arm(unsigned long delay_ns)
{
	struct itimerspec its = { .it_value = { 0, (long)MAX(delay_ns, 1ul) } };

	if (preempt_ready)
		timer_settime(preempt_timer, 0, &its, NULL);
}

unsigned long host_preempt_stop(void)
{
	if (preempt_ready)
		timer_delete(preempt_timer);
	preempt_ready = false;
	return preempt_stops;
}
