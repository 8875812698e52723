/*
 * `bench=c2c_selftest`: the c2c plugin's own cases, each in its own window (tests/c2c/check.py
 * boots them under the plugin and checks every count against the one MESI predicts). Each
 * case runs with interrupts off and reads its parameters before its begin marker, so that
 * nothing but the pattern itself is counted.
 */
#include "tests/bench/bench.h"
#include "tests/bench/c2c.h"
#include "kernel/arch.h"
#include "kernel/cmdline.h"
#include "kernel/printk.h"
#include "kernel/smp.h"

static unsigned int selftest_n = 1000;
CMDLINE_UINT("c2c.selftest_n", selftest_n, "c2c_selftest: accesses per CPU in each case");

static u64 shared_line[8] __aligned(64);
static u64 private_lines[MAX_CPUS][8] __aligned(64);

struct selftest {
	unsigned int a, b;		/* pingpong: the two writers; readers: the writer (a) */
	unsigned int cpus;		/* private: how many CPUs loop */
	unsigned long n;
};

/* Two CPUs store to one line n times each, in the same loop: a and b alternate. */
static void pingpong(void *arg)
{
	const struct selftest *t = arg;
	unsigned int cpu = arch_cpu_id();
	unsigned long n = (cpu == t->a || cpu == t->b) ? t->n : 0;
	volatile u64 *line = &shared_line[0];
	unsigned long flags = arch_irq_save();

	c2c_cpu_begin();
	for (unsigned long i = 0; i < n; i++)
		*line = i;
	c2c_cpu_end();
	arch_irq_restore(flags);
}

/* The first `cpus` CPUs each load and store their own line n times. */
static void private_loop(void *arg)
{
	const struct selftest *t = arg;
	unsigned int cpu = arch_cpu_id();
	unsigned long n = cpu < t->cpus ? t->n : 0;
	volatile u64 *line = &private_lines[cpu][0];
	unsigned long flags = arch_irq_save();

	c2c_cpu_begin();
	for (unsigned long i = 0; i < n; i++)
		*line += 1;
	c2c_cpu_end();
	arch_irq_restore(flags);
}

/* CPU a stores to the line once; every other CPU waits 200 loop turns (no memory access:
 * later, in its own clock, than a's store), then loads it n times. */
static void readers(void *arg)
{
	const struct selftest *t = arg;
	bool writer = arch_cpu_id() == t->a;
	unsigned long n = writer ? 0 : t->n;
	volatile u64 *line = &shared_line[0];
	unsigned long flags = arch_irq_save();
	u64 sum = 0;

	c2c_cpu_begin();
	if (writer)
		*line = 1;
	for (unsigned int i = 0; !writer && i < 200; i++)
		__asm__ __volatile__("");
	for (unsigned long i = 0; i < n; i++)
		sum += *line;
	c2c_cpu_end();
	arch_irq_restore(flags);
	(void)sum;
}

static void selftest_case(const char *name, void (*fn)(void *), struct selftest t)
{
	char json[96];

	snprintf(json, sizeof(json), "\"a\":%u,\"b\":%u,\"active\":%u,\"n\":%lu", t.a, t.b, t.cpus, t.n);
	c2c_window(name, json, fn, &t);
}

static void c2c_selftest(void)
{
	unsigned int last = nr_cpus - 1;

	if (nr_cpus < 2 || !cpu_online(last)) {
		printk("c2c_selftest: needs 2 or more CPUs, all online\n");
		return;
	}
	selftest_case("pingpong_same_socket", pingpong, (struct selftest){ .a = 0, .b = 1, .n = selftest_n });
	selftest_case("pingpong_two_sockets", pingpong, (struct selftest){ .a = 0, .b = last, .n = selftest_n });
	for (unsigned int cpus = 1; cpus < nr_cpus; cpus *= 2)
		selftest_case("private", private_loop, (struct selftest){ .cpus = cpus, .n = selftest_n });
	selftest_case("private", private_loop, (struct selftest){ .cpus = nr_cpus, .n = selftest_n });
	selftest_case("readers", readers, (struct selftest){ .a = 0, .n = selftest_n });
}
BENCH_REGISTER(c2c_selftest, c2c_selftest, "the c2c plugin's own cases: line transfers the model predicts exactly (tests/c2c/check.py)");
