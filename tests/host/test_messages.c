/*
 * Host tests of the messages a person reads when something is wrong: a failed KT_EXPECT
 * (tests/ktest/ktest_check.c) and the did-you-mean of a mistyped word (kernel/cmdline.c).
 */
#include "tests/host/harness.h"
#include "kernel/cmdline.h"
#include "kernel/string.h"

#define TWICE(x) ((x) * 2)

/* A case of its own for checks that must fail: their failures are its, not the caller's. */
static void scratch_case(struct ktest *scratch)
{
	static const struct ktest_case c = { .name = "scratch" };

	ktest_case_init(scratch, "host_messages", &c, 1, 0);
	host_console_reset();
}

/* A macro in a check prints as written, not as its expansion; a literal 0 is not echoed. */
static void ktest_expect_prints_expression_as_written(struct ktest *t)
{
	struct ktest scratch;
	int three = 3;

	scratch_case(&scratch);
	KT_EXPECT_EQ(&scratch, TWICE(three), 0);
	KT_EXPECT_EQ(t, scratch.status, KTEST_FAIL);
	KT_EXPECT_TRUE(t, host_console_contains(
		"# Expected TWICE(three) == 0, but TWICE(three) == 6 (0x6)\n"));
	KT_EXPECT_FALSE(t, host_console_contains("((three) * 2)"));
	KT_EXPECT_FALSE(t, host_console_contains("0 == 0"));
}

/* Both sides named: both echoed. Literal sides (5UL, -1, NULL, "abc"): only the other one. */
static void ktest_expect_echoes_only_named_sides(struct ktest *t)
{
	struct ktest scratch;
	unsigned long small = 3;
	int one = 1, two = 2, minus_two = -2;
	const char *word = "abd";
	int *p = &one;

	scratch_case(&scratch);
	KT_EXPECT_EQ(&scratch, one, two);
	KT_EXPECT_LE(&scratch, 5UL, small);
	KT_EXPECT_EQ(&scratch, minus_two, -1);
	KT_EXPECT_NULL(&scratch, p);
	KT_EXPECT_STREQ(&scratch, word, "abc");
	KT_EXPECT_EQ(&scratch, 1, 2);
	KT_EXPECT_EQ(t, scratch.nr_failed_checks, 6u);
	KT_EXPECT_TRUE(t, host_console_contains(
		"# Expected one == two, but one == 1 (0x1), two == 2 (0x2)\n"));
	KT_EXPECT_TRUE(t, host_console_contains("# Expected 5UL <= small, but small == 3 (0x3)\n"));
	KT_EXPECT_TRUE(t, host_console_contains("# Expected minus_two == -1, but minus_two == -2 ("));
	KT_EXPECT_TRUE(t, host_console_contains("# Expected p == NULL, but p == 0x"));
	KT_EXPECT_TRUE(t, host_console_contains(
		"# Expected word == \"abc\", but word == \"abd\"\n"));
	/* Nothing but literals: the values are the message. */
	KT_EXPECT_TRUE(t, host_console_contains("# Expected 1 == 2, but 1 == 1 (0x1), 2 == 2 (0x2)"));
}

/* Insertions, deletions, substitutions and neighbour swaps cost 1 each, case aside. */
static void cmdline_edit_distance_counts_edits(struct ktest *t)
{
	KT_EXPECT_EQ(t, cmdline_edit_distance("drian", 5, "drain", 5), 1u);	/* swap */
	KT_EXPECT_EQ(t, cmdline_edit_distance("pcpp", 4, "pcp", 3), 1u);	/* insertion */
	KT_EXPECT_EQ(t, cmdline_edit_distance("kitten", 6, "sitting", 7), 3u);
	KT_EXPECT_EQ(t, cmdline_edit_distance("", 0, "abc", 3), 3u);
	KT_EXPECT_EQ(t, cmdline_edit_distance("ca", 2, "abc", 3), 3u);	/* no edit of a swap */
	KT_EXPECT_EQ(t, cmdline_edit_distance("TEST", 4, "test", 4), 0u);
}

static const char *nearest(const char *word)
{
	static const char *const names[] = { "test", "seed", "mm.dump", "pcp.lock", "pcp.enable",
					     "ktest.timeout", "numa", "help" };
	struct cmdline_suggest sug;

	cmdline_suggest_init(&sug, word, strlen(word));
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		cmdline_suggest_try(&sug, names[i]);
	return sug.best ? sug.best : "(none)";
}

/* A typo gets the word it is a typo of; a word near nothing gets nothing. */
static void cmdline_suggest_nearest_or_none(struct ktest *t)
{
	KT_EXPECT_STREQ(t, nearest("tset"), "test");
	KT_EXPECT_STREQ(t, nearest("mm.dumb"), "mm.dump");
	KT_EXPECT_STREQ(t, nearest("pcp.lok"), "pcp.lock");
	KT_EXPECT_STREQ(t, nearest("ktest.timout"), "ktest.timeout");
	KT_EXPECT_STREQ(t, nearest("nmua"), "numa");
	KT_EXPECT_STREQ(t, nearest("frobnicate"), "(none)");
	KT_EXPECT_STREQ(t, nearest("xy"), "(none)");	/* two edits from "help": too far */
	KT_EXPECT_STREQ(t, nearest("pcp.x"), "(none)");
}

static const struct ktest_case message_cases[] = {
	KTEST_CASE(ktest_expect_prints_expression_as_written),
	KTEST_CASE(ktest_expect_echoes_only_named_sides),
	KTEST_CASE(cmdline_edit_distance_counts_edits),
	KTEST_CASE(cmdline_suggest_nearest_or_none),
};
KTEST_SUITE(host_messages, message_cases);
