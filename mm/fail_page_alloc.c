/*
 * fail_page_alloc: deciding, for each allocation, whether to fail it on purpose (the hook is
 * should_fail_alloc_page() in mm/fail_page_alloc.h), and the boot options that set it up.
 * Not a memory limit, and not a model of any real shortage: failures are random.
 */
#include "mm/fail_page_alloc.h"
#include "kernel/cmdline.h"
#include "kernel/printk.h"
#include "kernel/smp.h"
#include "kernel/string.h"

#if CONFIG_FAIL_PAGE_ALLOC

/* One CPU's decisions and counts, on cache lines of their own, written only by that CPU. */
struct fail_cpu {
	u64 pos;		/* eligible calls since the last reseed: interval count, random index */
	u64 stream;		/* this CPU's random stream (from the seed, the case and the CPU) */
	u64 eligible;		/* eligible calls since boot */
	u64 failed[NR_ORDERS];	/* failures injected since boot, by order */
} __cacheline_aligned;

/*
 * Locking rules: attr is written only while no CPU allocates (fail_page_alloc_configure)
 * and read without locks. times and space are consumed by any CPU with compare-and-swap,
 * so neither limit is ever overrun. paused and verbose_left are atomic. A struct fail_cpu
 * belongs to its CPU; it is changed with atomic adds all the same, because an interrupt on
 * that CPU may allocate in the middle of the task's own allocation.
 */
static struct {
	struct fault_attr attr;
	long times, space;
	int paused;
	unsigned int verbose_left;
} fpa = { .attr = { .interval = 1, .times = -1 } };

/* Read on every allocation: its own line, written only by configure. */
bool fail_page_alloc_armed __cacheline_aligned;
static struct fail_cpu *fail_cpus;	/* [nr_fail_cpus]: fail_page_alloc_percpu_set() */
static unsigned int nr_fail_cpus;

static struct fail_cpu *this_fail_cpu(void)
{
	VM_BUG_ON(arch_cpu_id() >= nr_fail_cpus);
	return &fail_cpus[arch_cpu_id()];
}

size_t fail_page_alloc_percpu_size(void)
{
	return sizeof(struct fail_cpu);
}

/* splitmix64's output function (Steele, Lea, Flood 2014): a strong 64-bit mix. */
static u64 mix64(u64 z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/*
 * The pos-th random number of a CPU: splitmix64 run from the CPU's stream value, computed
 * directly (no state to update), so a CPU's n-th decision depends only on the seed, the case,
 * the CPU and n, and never on what other CPUs or interrupts did meanwhile. Mapped onto
 * 0..99 by the high 32 bits (multiply-shift: uniform to within 2^-32).
 */
static unsigned int random_percent(const struct fail_cpu *c, u64 pos)
{
	u64 r = mix64(c->stream + pos * 0x9e3779b97f4a7c15ull);

	return (unsigned int)(((r >> 32) * 100) >> 32);
}

/* Let a call of `pages` pages through while space lasts (Linux: space > size). */
static bool consume_space(long pages)
{
	long s = READ_ONCE(fpa.space);

	while (s > pages)
		if (__atomic_compare_exchange_n(&fpa.space, &s, s - pages, false,
						__ATOMIC_RELAXED, __ATOMIC_RELAXED))
			return true;
	return false;
}

/* Take one of the failures left; false if none is (another CPU took the last one). */
static bool consume_time(void)
{
	long t = READ_ONCE(fpa.times);

	while (t != 0) {
		if (t < 0)
			return true;	/* -1: no limit */
		if (__atomic_compare_exchange_n(&fpa.times, &t, t - 1, false, __ATOMIC_RELAXED,
						__ATOMIC_RELAXED))
			return true;
	}
	return false;
}

static bool in_irq_context(void)
{
	return READ_ONCE(this_cpu()->irq_depth) != 0;
}

static void report_failure(gfp_t gfp, unsigned int order, void *caller)
{
	unsigned int left = READ_ONCE(fpa.verbose_left);

	if (gfp & __GFP_NOWARN)
		return;
	do {
		if (!left)
			return;
	} while (!__atomic_compare_exchange_n(&fpa.verbose_left, &left, left - 1, false,
					      __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	printk("fail_page_alloc: forcing a failure: order %u gfp 0x%x on cpu%u%s, caller %p\n",
	       order, gfp, arch_cpu_id(), in_irq_context() ? " in an interrupt" : "", caller);
}

/*
 * Linux's should_fail_ex() for the page allocator, tests in its order: the filters (order,
 * may wait, context), then times left, then space (the first `space` pages asked for go
 * through), then every interval-th call, then the probability. Interval and randomness are
 * per CPU (Linux counts interval globally): a CPU's decisions then depend only on its own
 * calls, which is what lets a run repeat from its seed.
 */
bool __should_fail_alloc_page(gfp_t gfp, unsigned int order, void *caller)
{
	const struct fault_attr *a = &fpa.attr;
	struct fail_cpu *c;
	u64 pos;

	VM_BUG_ON(order > MAX_ORDER);	/* the allocator refused it before asking */
	if (order < a->min_order || (a->ignore_gfp_wait && (gfp & __GFP_DIRECT_RECLAIM)) ||
	    (a->irq_only && !in_irq_context()) || READ_ONCE(fpa.paused))
		return false;
	if (!READ_ONCE(fpa.times) || consume_space(1l << order))
		return false;
	c = this_fail_cpu();
	__atomic_fetch_add(&c->eligible, 1, __ATOMIC_RELAXED);
	pos = __atomic_add_fetch(&c->pos, 1, __ATOMIC_RELAXED);
	if (a->interval > 1 && pos % a->interval)
		return false;
	if (random_percent(c, pos) >= a->probability || !consume_time())
		return false;
	__atomic_fetch_add(&c->failed[order], 1, __ATOMIC_RELAXED);
	report_failure(gfp, order, caller);
	return true;
}

/* FNV-1a over "suite.case", so that each case has its own stream for a given seed. */
static u64 name_hash(const char *suite, const char *tcase)
{
	u64 h = 0xcbf29ce484222325ull;

	for (const char *p = suite; p && *p; p++)
		h = (h ^ (u8)*p) * 0x100000001b3ull;
	h = (h ^ '.') * 0x100000001b3ull;
	for (const char *p = tcase; p && *p; p++)
		h = (h ^ (u8)*p) * 0x100000001b3ull;
	return h;
}

void fail_page_alloc_reseed(const char *suite, const char *tcase)
{
	u64 base = mix64(fpa.attr.seed ^ name_hash(suite, tcase));

	for (unsigned int cpu = 0; cpu < nr_fail_cpus; cpu++) {
		WRITE_ONCE(fail_cpus[cpu].pos, 0);
		fail_cpus[cpu].stream = mix64(base + cpu);
	}
}

/* Before this (a boot option parsed before mm_init) there are no slots: seed them now. */
void fail_page_alloc_percpu_set(void *mem, unsigned int nr_cpus)
{
	if (fail_cpus)
		return;	/* the first caller's (see mm/mm_test.h) */
	fail_cpus = mem;
	nr_fail_cpus = nr_cpus;
	fail_page_alloc_reseed(NULL, NULL);
}

int fail_page_alloc_configure(const struct fault_attr *a)
{
	WRITE_ONCE(fail_page_alloc_armed, false);
	if (!a) {
		fpa.attr.probability = 0;
		return 0;
	}
	fpa.attr = *a;
	WRITE_ONCE(fpa.times, a->times);
	WRITE_ONCE(fpa.space, a->space);
	WRITE_ONCE(fpa.verbose_left, a->verbose);
	fail_page_alloc_reseed(NULL, NULL);
	smp_store_release(&fail_page_alloc_armed, a->probability > 0);
	return 0;
}

void fail_page_alloc_get(struct fault_attr *a)
{
	*a = fpa.attr;
	a->times = READ_ONCE(fpa.times);
	a->space = READ_ONCE(fpa.space);
}

bool fail_page_alloc_enabled(void)
{
	return READ_ONCE(fail_page_alloc_armed);
}

void fail_page_alloc_pause(void)
{
	__atomic_fetch_add(&fpa.paused, 1, __ATOMIC_RELAXED);
}

void fail_page_alloc_resume(void)
{
	int old = __atomic_fetch_sub(&fpa.paused, 1, __ATOMIC_RELAXED);

	VM_BUG_ON(old <= 0);
	(void)old;
}

void fail_page_alloc_read_stats(struct fail_page_alloc_stats *s)
{
	*s = (struct fail_page_alloc_stats){ 0 };
	for (unsigned int cpu = 0; cpu < nr_fail_cpus; cpu++) {
		s->eligible += READ_ONCE(fail_cpus[cpu].eligible);
		for (unsigned int o = 0; o < NR_ORDERS; o++)
			s->failed_order[o] += READ_ONCE(fail_cpus[cpu].failed[o]);
	}
	for (unsigned int o = 0; o < NR_ORDERS; o++)
		s->failed += s->failed_order[o];
}

u64 fail_page_alloc_this_cpu_failed(void)
{
	const struct fail_cpu *c = this_fail_cpu();
	u64 n = 0;

	for (unsigned int o = 0; o < NR_ORDERS; o++)
		n += READ_ONCE(c->failed[o]);
	return n;
}

/* ---- boot options (kernel/cmdline.h) ---- */

/* A decimal number with an optional '-'; advances *p past it. */
static bool parse_field(const char **p, long *out)
{
	const char *s = *p;
	bool neg = *s == '-';
	long v = 0;

	s += neg;
	if (*s < '0' || *s > '9')
		return false;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (v > 100000000000l)
			return false;
		v = v * 10 + (*s - '0');
	}
	*out = neg ? -v : v;
	*p = s;
	return true;
}

int fault_attr_parse(const char *s, struct fault_attr *a)
{
	long f[4];

	for (int i = 0; i < 4; i++)
		if (!s || (i && *s++ != ',') || !parse_field(&s, &f[i]))
			return -1;
	/* Linux takes any value; these would only be typos (a times below -1 never ends). */
	if (*s || f[0] < 0 || f[1] < 0 || f[1] > 100 || f[2] < 0 || f[3] < -1)
		return -1;
	a->interval = (unsigned long)f[0];
	a->probability = (unsigned int)f[1];
	a->space = f[2];
	a->times = f[3];
	return 0;
}

static struct fault_attr boot_attr = { .interval = 1, .times = -1 };
static bool boot_given;

static int set_fail_page_alloc(const char *val)
{
	if (!val || fault_attr_parse(val, &boot_attr))
		return -1;
	boot_given = true;
	return 0;
}
CMDLINE_FUNC("fail_page_alloc", set_fail_page_alloc,
	     "<interval>,<probability>,<space>,<times>: fail page allocations on purpose "
	     "(times -1: no limit; docs/testing.md)");
CMDLINE_UINT("fail_page_alloc.min_order", boot_attr.min_order,
	     "fail_page_alloc: only orders >= this (default 0; Linux: 1)");
CMDLINE_BOOL("fail_page_alloc.ignore_gfp_wait", boot_attr.ignore_gfp_wait,
	     "fail_page_alloc: only allocations that cannot wait (Linux's default: on)");
CMDLINE_BOOL("fail_page_alloc.irq_only", boot_attr.irq_only,
	     "fail_page_alloc: only allocations in interrupt context");
CMDLINE_UINT("fail_page_alloc.verbose", boot_attr.verbose,
	     "fail_page_alloc: print the first N failures with their caller (default 0)");

static bool seed_given;

static int set_seed(const char *val)
{
	if (!val || !cmdline_parse_u64(val, strlen(val), &boot_attr.seed))
		return -1;
	seed_given = true;
	return 0;
}
CMDLINE_FUNC("fail_page_alloc.seed", set_seed,
	     "fail_page_alloc: seed of the random decisions (default: the TSC; printed)");

void fail_page_alloc_boot(void)
{
	if (!boot_given)
		return;
	if (!seed_given)
		boot_attr.seed = arch_cycles();
	fail_page_alloc_configure(&boot_attr);
	printk("fail_page_alloc: interval %lu, probability %u%%, space %ld, times %ld, min_order %u%s%s; "
	       "seed %llu (repeat with fail_page_alloc.seed=%llu)\n", boot_attr.interval,
	       boot_attr.probability, boot_attr.space, boot_attr.times, boot_attr.min_order,
	       boot_attr.ignore_gfp_wait ? ", only if it cannot wait" : "",
	       boot_attr.irq_only ? ", only in interrupts" : "", (unsigned long long)boot_attr.seed,
	       (unsigned long long)boot_attr.seed);
}

#else /* !CONFIG_FAIL_PAGE_ALLOC: the API stays, injection never happens */

size_t fail_page_alloc_percpu_size(void)
{
	return 0;
}

void fail_page_alloc_percpu_set(void *mem, unsigned int nr_cpus)
{
}

int fault_attr_parse(const char *s, struct fault_attr *a)
{
	return -1;
}

int fail_page_alloc_configure(const struct fault_attr *a)
{
	return a ? -1 : 0;
}

void fail_page_alloc_get(struct fault_attr *a)
{
	*a = (struct fault_attr){ .interval = 1, .times = -1 };
}

bool fail_page_alloc_enabled(void)
{
	return false;
}

void fail_page_alloc_reseed(const char *suite, const char *tcase)
{
}

void fail_page_alloc_pause(void)
{
}

void fail_page_alloc_resume(void)
{
}

void fail_page_alloc_read_stats(struct fail_page_alloc_stats *s)
{
	*s = (struct fail_page_alloc_stats){ 0 };
}

u64 fail_page_alloc_this_cpu_failed(void)
{
	return 0;
}

/* Say so, rather than run a whole test matrix row without the failures it asked for. */
static int set_fail_page_alloc(const char *val)
{
	printk("fail_page_alloc: not built into this kernel (a DEBUG_VM=0 release build)\n");
	return -1;
}
CMDLINE_FUNC("fail_page_alloc", set_fail_page_alloc,
	     "fail page allocations on purpose (debug builds only; docs/testing.md)");

void fail_page_alloc_boot(void)
{
}

#endif

void fail_page_alloc_print_stats(const char *prefix)
{
	struct fail_page_alloc_stats s;
	struct fault_attr a;
	char orders[160], seed[40] = "";
	int n = 0;

	fail_page_alloc_read_stats(&s);
	fail_page_alloc_get(&a);
	orders[0] = '\0';
	for (unsigned int o = 0; o < NR_ORDERS; o++)
		if (s.failed_order[o] && n < (int)sizeof(orders) - 24)
			n += scnprintf(orders + n, sizeof(orders) - (size_t)n, "%s%u: %llu",
				       n ? ", " : " (order ", o, (unsigned long long)s.failed_order[o]);
	if (fail_page_alloc_enabled())	/* else the failures came from tests with their own */
		snprintf(seed, sizeof(seed), " (seed %llu)", (unsigned long long)a.seed);
	printk("%s%llu allocations failed on purpose by fail_page_alloc%s%s, of %llu eligible "
	       "calls%s\n", prefix, (unsigned long long)s.failed, orders, n ? ")" : "",
	       (unsigned long long)s.eligible, seed);
}
