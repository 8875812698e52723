/*
 * Tests of the test framework itself (tests/ktest/): the filter, the seeded random numbers,
 * and that failures, aborts, skips and CPU exceptions inside a case are recorded as such.
 * Cases that must fail run nested (ktest_run_nested), so this suite itself stays green.
 */
#include "tests/ktest/ktest.h"
#include "kernel/smp.h"
#include "kernel/string.h"
#include "kernel/trap.h"

/* Globs: '*' spans any run (also empty), '?' exactly one character. */
static void ktest_glob_star_question(struct ktest *t)
{
	KT_EXPECT_TRUE(t, ktest_glob("boot.*", 6, "boot.cpus_online"));
	KT_EXPECT_TRUE(t, ktest_glob("*", 1, ""));
	KT_EXPECT_TRUE(t, ktest_glob("a*b*c", 5, "aXXbYbc"));
	KT_EXPECT_TRUE(t, ktest_glob("mm_?.x", 6, "mm_1.x"));
	KT_EXPECT_FALSE(t, ktest_glob("mm_?.x", 6, "mm_12.x"));
	KT_EXPECT_FALSE(t, ktest_glob("boot.*", 6, "bootx.a"));
	KT_EXPECT_FALSE(t, ktest_glob("a*c", 3, "abcd"));
}

/* A filter selects by suite (no '.') or suite.case; '-glob' excludes; empty means all. */
static void ktest_filter_select_exclude(struct ktest *t)
{
	KT_EXPECT_TRUE(t, ktest_filter_match("", "boot", "x"));
	KT_EXPECT_TRUE(t, ktest_filter_match("boot", "boot", "x"));
	KT_EXPECT_FALSE(t, ktest_filter_match("boot", "booty", "x"));
	KT_EXPECT_TRUE(t, ktest_filter_match("mm_*,boot.a*", "boot", "apic"));
	KT_EXPECT_FALSE(t, ktest_filter_match("mm_*,boot.a*", "boot", "timer"));
	KT_EXPECT_TRUE(t, ktest_filter_match("-boot.timer*", "boot", "apic"));
	KT_EXPECT_FALSE(t, ktest_filter_match("-boot.timer*", "boot", "timer_every_cpu"));
	KT_EXPECT_FALSE(t, ktest_filter_match("boot,-boot.t*", "boot", "timer"));
}

/* The same seed gives the same sequence; ktest_rand_below stays in range. */
static void ktest_rand_reproducible(struct ktest *t)
{
	u64 first[4];
	u64 saved = t->rng;

	for (int i = 0; i < 4; i++)
		first[i] = ktest_rand(t);
	t->rng = saved;
	for (int i = 0; i < 4; i++)
		KT_EXPECT_EQ(t, ktest_rand(t), first[i]);
	KT_EXPECT_NE(t, first[0], first[1]);
	for (int i = 0; i < 1000; i++)
		KT_ASSERT_LT(t, ktest_rand_below(t, 7), 7u);
}

/* ---- cases that must fail, run nested ---- */

static bool reached_after_assert;

static void nested_expect_fails(struct ktest *t)
{
	KT_EXPECT_EQ(t, 1 + 1, 3);
	KT_EXPECT_STREQ(t, "a", "b");
}

static void nested_assert_aborts(struct ktest *t)
{
	KT_ASSERT_TRUE(t, false);
	reached_after_assert = true;
}

static void nested_skips(struct ktest *t)
{
	KT_SKIP(t, "skipped on purpose (%d)", 42);
	reached_after_assert = true;
}

/* A read through an address no page table maps: a page fault (vector 14). */
static void nested_page_fault(struct ktest *t)
{
	volatile uintptr_t addr = 0x1000;

	(void)*(volatile const u64 *)addr;
	KT_FAIL(t, "the read of %p did not fault", (void *)addr);
}

/* ud2 through the compiler: an invalid-opcode exception (vector 6). */
static void nested_invalid_opcode(struct ktest *t)
{
	__builtin_trap();
}

/* An assertion fails inside a recovery point the case armed and so never ends. */
static void nested_assert_in_recovery_region(struct ktest *t)
{
	struct trap_recovery r;

	if (trap_recover_begin(&r)) {
		KT_ASSERT_TRUE(t, false);
		trap_recover_end(&r);
	}
}

/* Failed expectations fail the case but let it run to the end. */
static void ktest_expect_failure_recorded(struct ktest *t)
{
	static const struct ktest_case c = KTEST_CASE(nested_expect_fails);
	struct ktest out;

	ktest_run_nested(t, &c, &out);
	KT_EXPECT_EQ(t, out.status, KTEST_FAIL);
	KT_EXPECT_EQ(t, out.nr_failed_checks, 2u);
	KT_EXPECT_FALSE(t, out.trapped);
}

/* A failed assertion ends the case at once: the line after it never runs. */
static void ktest_assert_aborts_case(struct ktest *t)
{
	static const struct ktest_case c = KTEST_CASE(nested_assert_aborts);
	struct ktest out;

	reached_after_assert = false;
	ktest_run_nested(t, &c, &out);
	KT_EXPECT_EQ(t, out.status, KTEST_FAIL);
	KT_EXPECT_FALSE(t, reached_after_assert);
}

/* KT_SKIP ends the case as skipped, with its reason. */
static void ktest_skip_recorded(struct ktest *t)
{
	static const struct ktest_case c = KTEST_CASE(nested_skips);
	struct ktest out;

	reached_after_assert = false;
	ktest_run_nested(t, &c, &out);
	KT_EXPECT_EQ(t, out.status, KTEST_SKIP);
	KT_EXPECT_STREQ(t, out.skip_reason, "skipped on purpose (42)");
	KT_EXPECT_FALSE(t, reached_after_assert);
}

/* A page fault inside a case fails that case (vector 14 recorded) instead of hanging. */
static void ktest_exception_page_fault_fails_case(struct ktest *t)
{
	static const struct ktest_case c = KTEST_CASE(nested_page_fault);
	struct ktest out;

	ktest_run_nested(t, &c, &out);
	KT_EXPECT_EQ(t, out.status, KTEST_FAIL);
	KT_EXPECT_TRUE(t, out.trapped);
	KT_EXPECT_EQ(t, out.trap_vector, 14u);
	KT_EXPECT_EQ(t, out.nr_failed_checks, 0u);
}

/* An invalid opcode inside a case fails that case (vector 6), and the next case still runs. */
static void ktest_exception_invalid_opcode_fails_case(struct ktest *t)
{
	static const struct ktest_case c = KTEST_CASE(nested_invalid_opcode);
	struct ktest out;

	ktest_run_nested(t, &c, &out);
	KT_EXPECT_EQ(t, out.status, KTEST_FAIL);
	KT_EXPECT_TRUE(t, out.trapped);
	KT_EXPECT_EQ(t, out.trap_vector, 6u);
}

/*
 * A case that aborts inside its own trap_recover_begin() region leaves that point, in a dead
 * frame, on this CPU's recovery chain: ktest puts the chain back as it was (else the next
 * fault outside any newer point would jump into the dead frame), and faults in later cases
 * are still caught.
 */
static void ktest_abort_in_recovery_region_disarmed(struct ktest *t)
{
	static const struct ktest_case aborts = KTEST_CASE(nested_assert_in_recovery_region);
	static const struct ktest_case faults = KTEST_CASE(nested_page_fault);
	struct trap_recovery *before = this_cpu()->recovery;
	struct ktest out;

	KT_ASSERT_NOT_NULL(t, before);	/* ktest's own point around this case */
	ktest_run_nested(t, &aborts, &out);
	KT_EXPECT_EQ(t, out.status, KTEST_FAIL);
	KT_EXPECT_PTR_EQ(t, this_cpu()->recovery, before);
	ktest_run_nested(t, &faults, &out);
	KT_EXPECT_TRUE(t, out.trapped);
	KT_EXPECT_EQ(t, out.trap_vector, 14u);
}

static const struct ktest_case ktest_cases[] = {
	KTEST_CASE(ktest_glob_star_question),
	KTEST_CASE(ktest_filter_select_exclude),
	KTEST_CASE(ktest_rand_reproducible),
	KTEST_CASE(ktest_expect_failure_recorded),
	KTEST_CASE(ktest_assert_aborts_case),
	KTEST_CASE(ktest_skip_recorded),
	KTEST_CASE(ktest_exception_page_fault_fails_case),
	KTEST_CASE(ktest_exception_invalid_opcode_fails_case),
	KTEST_CASE(ktest_abort_in_recovery_region_disarmed),
};
KTEST_SUITE(ktest, ktest_cases);
