/*
 * Built-in benchmarks: registered like tests, selected with `bench=name,name` (or `all`),
 * run after the tests. Each prints readable lines and one machine-readable line per figure:
 *   BENCH {"bench":"gup","metric":"get_us","value":123.0,"samples":[...],"higher":false,...}
 * which tests/bench/bench.py collects. Not the test framework (tests/ktest/ktest.h).
 */
#ifndef BENCH_BENCH_H
#define BENCH_BENCH_H

#include "kernel/compiler.h"

struct bench {
	const char *name;
	const char *help;
	void (*run)(void);
};

#define BENCH_REGISTER(bname, fn, helptext)                                         \
	static const struct bench __bench_##bname = { #bname, helptext, fn };      \
	static const struct bench *const __bench_ptr_##bname                        \
		__used __section("bench_list") __aligned(8) = &__bench_##bname

/*
 * Every point of a benchmark is measured bench_windows() times (`bench.windows=`, default 5,
 * at most BENCH_MAX_WINDOWS) in one boot, one sample per window, so that each figure comes
 * with its spread (tests/bench/stats.py).
 */
#define BENCH_MAX_WINDOWS 32
unsigned int bench_windows(void);

/* True if name is one of the comma-separated list, or the list is empty or "all". */
bool bench_list_has(const char *list, const char *name);

/* Run the benchmarks named in `bench=` (comma-separated, or "all"); returns how many ran. */
unsigned int bench_run_selected(void);

/* Run one benchmark by name (the monitor's `bench`); 0, or -1 if there is none. */
int bench_run_one(const char *name);
/* One line per registered benchmark: its name and help. */
void bench_print_list(void);

/*
 * One BENCH line: bench and metric names, unit, whether higher is better, and n samples
 * (values scaled by 1/1000: pass milli-units so that integer code keeps three decimals).
 */
void bench_emit(const char *bench, const char *metric, const char *unit, bool higher,
		const u64 *milli_samples, unsigned int n, const char *extra_json);

/* Integer statistics for printing: mean and relative standard deviation in 0.01 % units. */
u64 bench_mean(const u64 *v, unsigned int n);
u64 bench_rel_stddev_centi(const u64 *v, unsigned int n);

#endif
