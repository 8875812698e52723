/*
 * ktest: the in-kernel test framework. Suites of cases, registered at link time, print KTAP
 * version 1 on the console (readable unchanged by Linux's `kunit.py parse`). Not a benchmark
 * harness and not thread-safe: cases run one at a time on the CPU that calls ktest_run_all().
 *
 * Writing a suite (tests/kernel/<area>_<topic>.c; every file there is built in):
 *
 *	// No two online CPUs share an APIC ID.
 *	static void boot_apic_ids_unique(struct ktest *t)
 *	{
 *		KT_EXPECT_NE(t, cpu_ptr(0)->arch.apic_id, cpu_ptr(1)->arch.apic_id);
 *	}
 *
 *	static const struct ktest_case boot_cases[] = {
 *		KTEST_CASE(boot_apic_ids_unique),
 *	};
 *	KTEST_SUITE(boot, boot_cases);		// optional: , .init = f, .exit = g
 *
 * Each case is "suite.case" for the command-line filter: `test=boot.*,mm_*,-mm_pcp.slow_*`.
 * KT_EXPECT_* record a failure and go on; KT_ASSERT_* record it and end the case at once;
 * KT_SKIP ends the case as skipped. A CPU exception inside a case (caught by a kernel/trap.h
 * recovery point armed around each case) ends that case as failed and the run goes on; a
 * case still running after `ktest.timeout=` seconds ends the run as failed, named. ktest_rand() numbers
 * repeat with the printed `seed=`. Each case restarts fail_page_alloc's random decisions from
 * its own name (mm/fail_page_alloc.h), so `fail_page_alloc.seed=` repeats a case run alone.
 */
#ifndef KTEST_KTEST_H
#define KTEST_KTEST_H

#include "kernel/compiler.h"
#include "kernel/panic.h"	/* enum taint_flag */

enum ktest_status {
	KTEST_PASS = 0,
	KTEST_FAIL,
	KTEST_SKIP,
};

/* The state of the running case; the only argument every case and macro takes. */
struct ktest {
	const char *suite_name;
	const char *case_name;
	enum ktest_status status;
	unsigned int nr_failed_checks;	/* KT_EXPECT/KT_ASSERT failures so far */
	bool trapped;			/* the case ended by a CPU exception */
	u64 trap_vector, trap_ip;	/* valid if trapped */
	u64 seed;			/* per-case seed: hash of the run seed and "suite.case" */
	u64 rng;			/* ktest_rand() state, starts at seed */
	void *priv;			/* free for the suite's init/exit and its cases */
	int depth;			/* 0: a top-level case; 1: run by ktest_run_nested() */
	void *abort_ctx;		/* ktest.c private: where KT_ASSERT/KT_SKIP return to */
	char skip_reason[96];
};

typedef void (*ktest_fn)(struct ktest *t);

struct ktest_case {
	const char *name;
	ktest_fn run;
	const char *nofail;	/* non-NULL: fail_page_alloc is paused for the case, and why */
	bool concurrent;	/* CPUs race in it: the host also runs it under TSan and PCT */
};

struct ktest_suite {
	const char *name;
	const struct ktest_case *cases;
	size_t nr_cases;
	int (*init)(struct ktest *t);	/* optional, before each case; non-zero fails the case */
	void (*exit)(struct ktest *t);	/* optional, after each case (also after an abort) */
};

#define KTEST_CASE(fn) { .name = #fn, .run = fn }
/*
 * A case that checks exact results which need every allocation to succeed (all of memory
 * taken and counted, one page per list, a pin of exactly N faulted pages): with
 * `fail_page_alloc=` on it runs with injection paused, saying so with `why`. It must still
 * handle a NULL correctly, since memory can run out for real.
 */
#define KTEST_CASE_NOFAIL(fn, why) { .name = #fn, .run = fn, .nofail = why }
/*
 * A case whose point is a race between CPUs (host threads): the host harness runs it in its
 * ThreadSanitizer build and under the deterministic scheduler (mmtest -c, --pct) as well.
 */
#define KTEST_CASE_CONCURRENT(fn) { .name = #fn, .run = fn, .concurrent = true }
#define KTEST_CASE_CONCURRENT_NOFAIL(fn, why) \
	{ .name = #fn, .run = fn, .nofail = why, .concurrent = true }

/*
 * KTEST_SUITE(name, cases[, .init = f, .exit = g]): define and register a suite. The pointer
 * goes into the "ktest_suites" section, which linker.ld brackets with __start/__stop symbols.
 */
#define KTEST_SUITE(sname, case_array, ...)                                        \
	static const struct ktest_suite __ktest_suite_##sname = {                 \
		.name = #sname,                                                    \
		.cases = case_array,                                               \
		.nr_cases = ARRAY_SIZE(case_array),                                \
		__VA_ARGS__                                                        \
	};                                                                         \
	static const struct ktest_suite *const __ktest_suite_ptr_##sname           \
		__used __section("ktest_suites") __aligned(8) = &__ktest_suite_##sname

/* ---- running ------------------------------------------------------------------------- */

struct ktest_totals {
	unsigned int passed, failed, skipped;
};
/*
 * Run every selected case (the `test=` glob list, default all), print KTAP and a summary.
 * Returns the number of failed cases; *tot (if not NULL) gets every count.
 */
unsigned int ktest_run_all(struct ktest_totals *tot);
/* The `test=` filter as given ("*" without one), for messages. */
const char *ktest_filter_text(void);
/*
 * Leave QEMU through isa-debug-exit (unless `ktest.noexit`): pass if nothing failed and
 * something ran (a selected test, or other work such as a benchmark: other_work_ran).
 */
void ktest_finish(unsigned int failed, bool other_work_ran);
__noreturn void ktest_exit(bool pass);

/*
 * Run one case as a nested test of t (for tests of the framework itself, e.g. a case that
 * must fault): its output becomes diagnostics of t, its outcome is returned in *out.
 */
void ktest_run_nested(struct ktest *t, const struct ktest_case *c, struct ktest *out);

/*
 * The running case provokes, on purpose, the reports that add this taint (kernel/panic.h):
 * "BUG: Bad page state" (TAINT_BAD_PAGE) or a WARN_ON (TAINT_WARN). Any other such report
 * fails the case it came in, in the kernel and on the host alike (ktest_taints_end()).
 */
void ktest_expect_taint(enum taint_flag flag);

/*
 * For runners: the taint rule around one case. begin saves the counts and the announcements
 * of an enclosing case (ktest_run_nested()); end fails t for each taint added meanwhile that
 * t did not announce, and gives the enclosing case its announcements back.
 */
struct ktest_taints {
	unsigned long count[NR_TAINT_FLAGS];
	unsigned int outer_expected;
};
void ktest_taints_begin(struct ktest_taints *saved);
void ktest_taints_end(struct ktest *t, const struct ktest_taints *saved);

/* The selection logic, pure: does "suite.case" pass a `test=` filter? (exported for tests) */
bool ktest_filter_match(const char *filter, const char *suite, const char *tcase);
/* Shell-style glob: '*' any run, '?' any one character. */
bool ktest_glob(const char *pattern, size_t pattern_len, const char *s);

/*
 * For runners (the kernel's tests/ktest/ktest.c, the host's tests/host/harness.c): start t as
 * case c of suite at nesting depth, with its random numbers seeded from seed; then
 * __builtin_setjmp(t->abort_ctx) is where KT_ASSERT and KT_SKIP come back to.
 */
void ktest_case_init(struct ktest *t, const char *suite, const struct ktest_case *c, int depth,
		     u64 seed);
/* One splitmix64 step: the next number of the sequence *state walks. */
u64 ktest_splitmix64(u64 *state);

/* Per-case pseudo-random numbers (splitmix64): reproducible from the printed run seed. */
u64 ktest_rand(struct ktest *t);
/* Uniform in [0, n), n > 0. */
u64 ktest_rand_below(struct ktest *t, u64 n);

/* ---- checks: the macros below call these; they return true when the check held ------- */

enum ktest_cmp { KT_EQ, KT_NE, KT_LT, KT_LE, KT_GT, KT_GE };

bool ktest_check_int(struct ktest *t, const char *file, int line, enum ktest_cmp op,
		     const char *lhs, long long a, const char *rhs, long long b);
bool ktest_check_uint(struct ktest *t, const char *file, int line, enum ktest_cmp op,
		      const char *lhs, unsigned long long a, const char *rhs, unsigned long long b);
bool ktest_check_ptr(struct ktest *t, const char *file, int line, enum ktest_cmp op,
		     const char *lhs, const void *a, const char *rhs, const void *b);
bool ktest_check_str(struct ktest *t, const char *file, int line, bool want_equal,
		     const char *lhs, const char *a, const char *rhs, const char *b);
bool ktest_check_true(struct ktest *t, const char *file, int line, bool want,
		      const char *expr, bool value);
__printf(4, 5) void ktest_fail_at(struct ktest *t, const char *file, int line,
				  const char *fmt, ...);
/* A "# " diagnostic line belonging to the running case. */
__printf(2, 3) void ktest_printf(struct ktest *t, const char *fmt, ...);
/* End the running case now (after a failed KT_ASSERT). */
__noreturn void ktest_abort(struct ktest *t);
/* End the running case now as skipped. */
__noreturn __printf(2, 3) void ktest_skip(struct ktest *t, const char *fmt, ...);

/*
 * Each check macro stringifies its arguments itself (#a, #b) and hands the text down: a macro
 * argument that is passed on to another macro is expanded first, so stringified one level
 * down, MM_STAT(mm, poison_reads) would print as its expansion. A side written as a literal
 * (0, 5UL, NULL, "text") is not echoed back in the failure message.
 */
/* Compares as signed if either side is a signed type, else as unsigned. */
#define __KT_IS_SIGNED(x) ((__typeof__(x))-1 < (__typeof__(x))1)
#define __KT_CHECK(t, op, a, b, a_text, b_text)                                          \
	({                                                                               \
		__typeof__(a) __a = (a);                                                 \
		__typeof__(b) __b = (b);                                                 \
		(__KT_IS_SIGNED(__a) || __KT_IS_SIGNED(__b)) ?                           \
			ktest_check_int(t, __FILE__, __LINE__, op, a_text, (long long)__a,  \
					b_text, (long long)__b) :                        \
			ktest_check_uint(t, __FILE__, __LINE__, op, a_text,              \
					 (unsigned long long)__a, b_text,                \
					 (unsigned long long)__b);                       \
	})
#define __KT_PTR(t, op, a, b, a_text, b_text) \
	ktest_check_ptr(t, __FILE__, __LINE__, op, a_text, (const void *)(a), b_text, \
			(const void *)(b))

#define KT_EXPECT_EQ(t, a, b) ((void)__KT_CHECK(t, KT_EQ, a, b, #a, #b))
#define KT_EXPECT_NE(t, a, b) ((void)__KT_CHECK(t, KT_NE, a, b, #a, #b))
#define KT_EXPECT_LT(t, a, b) ((void)__KT_CHECK(t, KT_LT, a, b, #a, #b))
#define KT_EXPECT_LE(t, a, b) ((void)__KT_CHECK(t, KT_LE, a, b, #a, #b))
#define KT_EXPECT_GT(t, a, b) ((void)__KT_CHECK(t, KT_GT, a, b, #a, #b))
#define KT_EXPECT_GE(t, a, b) ((void)__KT_CHECK(t, KT_GE, a, b, #a, #b))
#define KT_EXPECT_TRUE(t, c) ((void)ktest_check_true(t, __FILE__, __LINE__, true, #c, !!(c)))
#define KT_EXPECT_FALSE(t, c) ((void)ktest_check_true(t, __FILE__, __LINE__, false, #c, !!(c)))
#define KT_EXPECT_PTR_EQ(t, a, b) ((void)__KT_PTR(t, KT_EQ, a, b, #a, #b))
#define KT_EXPECT_PTR_NE(t, a, b) ((void)__KT_PTR(t, KT_NE, a, b, #a, #b))
#define KT_EXPECT_NULL(t, p) ((void)__KT_PTR(t, KT_EQ, p, NULL, #p, "NULL"))
#define KT_EXPECT_NOT_NULL(t, p) ((void)__KT_PTR(t, KT_NE, p, NULL, #p, "NULL"))
#define KT_EXPECT_STREQ(t, a, b) \
	((void)ktest_check_str(t, __FILE__, __LINE__, true, #a, a, #b, b))
#define KT_EXPECT_STRNE(t, a, b) \
	((void)ktest_check_str(t, __FILE__, __LINE__, false, #a, a, #b, b))
/* A failure with a free-form message; the case goes on. */
#define KT_FAIL(t, ...) ktest_fail_at(t, __FILE__, __LINE__, __VA_ARGS__)

#define KT_ASSERT_EQ(t, a, b) __KT_ASSERT_ON(t, __KT_CHECK(t, KT_EQ, a, b, #a, #b))
#define KT_ASSERT_NE(t, a, b) __KT_ASSERT_ON(t, __KT_CHECK(t, KT_NE, a, b, #a, #b))
#define KT_ASSERT_LT(t, a, b) __KT_ASSERT_ON(t, __KT_CHECK(t, KT_LT, a, b, #a, #b))
#define KT_ASSERT_LE(t, a, b) __KT_ASSERT_ON(t, __KT_CHECK(t, KT_LE, a, b, #a, #b))
#define KT_ASSERT_GT(t, a, b) __KT_ASSERT_ON(t, __KT_CHECK(t, KT_GT, a, b, #a, #b))
#define KT_ASSERT_GE(t, a, b) __KT_ASSERT_ON(t, __KT_CHECK(t, KT_GE, a, b, #a, #b))
#define KT_ASSERT_TRUE(t, c) \
	__KT_ASSERT_ON(t, ktest_check_true(t, __FILE__, __LINE__, true, #c, !!(c)))
#define KT_ASSERT_FALSE(t, c) \
	__KT_ASSERT_ON(t, ktest_check_true(t, __FILE__, __LINE__, false, #c, !!(c)))
#define KT_ASSERT_PTR_EQ(t, a, b) __KT_ASSERT_ON(t, __KT_PTR(t, KT_EQ, a, b, #a, #b))
#define KT_ASSERT_PTR_NE(t, a, b) __KT_ASSERT_ON(t, __KT_PTR(t, KT_NE, a, b, #a, #b))
#define KT_ASSERT_NOT_NULL(t, p) __KT_ASSERT_ON(t, __KT_PTR(t, KT_NE, p, NULL, #p, "NULL"))
#define KT_ASSERT_STREQ(t, a, b) \
	__KT_ASSERT_ON(t, ktest_check_str(t, __FILE__, __LINE__, true, #a, a, #b, b))
#define __KT_ASSERT_ON(t, check)           \
	do {                               \
		if (!(check))              \
			ktest_abort(t);    \
	} while (0)

/* End the case as skipped, with a reason: KT_SKIP(t, "needs %d CPUs", 2). */
#define KT_SKIP(t, ...) ktest_skip(t, __VA_ARGS__)
/* For a case about what only debug builds do (page-state reports, lockdep, fault injection,
 * race hooks): a release build (CONFIG_DEBUG_VM=0) skips it, saying what it lacks. */
#define KT_SKIP_UNLESS_DEBUG_VM(t, what)							\
	do {											\
		if (!CONFIG_DEBUG_VM)								\
			KT_SKIP(t, "release build (CONFIG_DEBUG_VM=0): %s", what);		\
	} while (0)

#endif
