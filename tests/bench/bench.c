/* The benchmark registry and the BENCH output lines (tests/bench/bench.h). */
#include "tests/bench/bench.h"
#include "kernel/cmdline.h"
#include "kernel/math.h"
#include "kernel/printk.h"
#include "kernel/string.h"

extern const struct bench *const __start_bench_list[], *const __stop_bench_list[];

static char bench_names[128];
CMDLINE_STRING("bench", bench_names, "benchmarks to run after the tests: all, or a,b,c (see docs/bench.md)");
static unsigned int bench_nr_windows = 5;
CMDLINE_UINT("bench.windows", bench_nr_windows, "repeats (windows) of every point of page, scaling and locks: one sample each");

unsigned int bench_windows(void)
{
	return CLAMP(bench_nr_windows, 1u, (unsigned int)BENCH_MAX_WINDOWS);
}

bool bench_list_has(const char *list, const char *name)
{
	size_t len = strlen(name);

	if (!list[0] || !strcmp(list, "all"))
		return true;
	for (const char *p = list; *p;) {
		const char *comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);

		if (n == len && !strncmp(p, name, n))
			return true;
		p += n + (comma ? 1 : 0);
	}
	return false;
}

static bool bench_selected(const char *name)
{
	return bench_names[0] && bench_list_has(bench_names, name);
}

unsigned int bench_run_selected(void)
{
	unsigned int ran = 0;

	for (const struct bench *const *b = __start_bench_list; b < __stop_bench_list; b++) {
		if (!bench_selected((*b)->name))
			continue;
		printk("bench: %s: %s\n", (*b)->name, (*b)->help);
		(*b)->run();
		ran++;
	}
	if (bench_names[0] && !ran) {
		printk("bench: nothing matched bench=%s; the benchmarks are:\n", bench_names);
		bench_print_list();
	}
	return ran;
}

void bench_print_list(void)
{
	for (const struct bench *const *b = __start_bench_list; b < __stop_bench_list; b++)
		printk("  %-12s %s\n", (*b)->name, (*b)->help);
}

int bench_run_one(const char *name)
{
	for (const struct bench *const *b = __start_bench_list; b < __stop_bench_list; b++)
		if (!strcmp((*b)->name, name)) {
			(*b)->run();
			return 0;
		}
	return -1;
}

u64 bench_mean(const u64 *v, unsigned int n)
{
	u64 sum = 0;

	for (unsigned int i = 0; i < n; i++)
		sum += v[i];
	return n ? sum / n : 0;
}

/* Sample standard deviation / mean, in hundredths of a percent. */
u64 bench_rel_stddev_centi(const u64 *v, unsigned int n)
{
	u64 mean = bench_mean(v, n), var = 0;

	if (n < 2 || !mean)
		return 0;
	for (unsigned int i = 0; i < n; i++) {
		s64 d = (s64)(v[i] - mean);
		var += (u64)(d * d) / (n - 1);
	}
	return int_sqrt(var) * 10000 / mean;
}

void bench_emit(const char *bench, const char *metric, const char *unit, bool higher,
		const u64 *milli_samples, unsigned int n, const char *extra_json)
{
	static char line[8192];	/* benchmarks run on one CPU at a time */
	int pos = scnprintf(line, sizeof(line),
			    "BENCH {\"bench\":\"%s\",\"metric\":\"%s\",\"unit\":\"%s\",\"higher\":%s,"
			    "\"samples\":[", bench, metric, unit, higher ? "true" : "false");

	for (unsigned int i = 0; i < n && pos < (int)sizeof(line) - 64; i++)
		pos += scnprintf(line + pos, sizeof(line) - (size_t)pos, "%s%llu.%03llu", i ? "," : "",
				 (unsigned long long)(milli_samples[i] / 1000),
				 (unsigned long long)(milli_samples[i] % 1000));
	snprintf(line + pos, sizeof(line) - (size_t)pos, "]%s%s}\n", extra_json ? "," : "",
		 extra_json ? extra_json : "");
	printk_raw(line);
}
