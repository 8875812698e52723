/*
 * Tests of the command-line parser (kernel/cmdline.c) on a private option table: splitting,
 * values of each type, errors, and the last-word-wins rule. The boot registry is not touched.
 */
#include "tests/ktest/ktest.h"
#include "kernel/bootinfo.h"
#include "kernel/cmdline.h"
#include "kernel/printk.h"
#include "kernel/string.h"

static bool opt_flag;
static unsigned int opt_uint;
static u64 opt_u64;
static char opt_str[8];
static char func_value[32];	/* last value given to set_func, "(bare)" for a bare word */

static int set_func(const char *val)
{
	const char *v = val ? val : "(bare)";
	size_t n = MIN(strlen(v), sizeof(func_value) - 1);

	if (val && !strcmp(val, "bad"))
		return -1;
	memcpy(func_value, v, n);
	func_value[n] = '\0';
	return 0;
}

static const struct cmdline_option o_flag = {
	.name = "t.flag", .help = "", .type = CMDLINE_T_BOOL, .var = &opt_flag };
static const struct cmdline_option o_uint = {
	.name = "t.uint", .help = "", .type = CMDLINE_T_UINT, .var = &opt_uint };
static const struct cmdline_option o_u64 = {
	.name = "t.u64", .help = "", .type = CMDLINE_T_U64, .var = &opt_u64 };
static const struct cmdline_option o_str = {
	.name = "t.str", .help = "", .type = CMDLINE_T_STRING, .var = opt_str,
	.size = sizeof(opt_str) };
static const struct cmdline_option o_func = {
	.name = "t.func", .help = "", .type = CMDLINE_T_FUNC, .set = set_func };
static const struct cmdline_option *const table[] = { &o_flag, &o_uint, &o_u64, &o_str, &o_func };

/* What the report callback saw: the last error and how many. */
struct seen {
	unsigned int n;
	enum cmdline_error last;
	char key[16];
};

static void record(enum cmdline_error err, const struct cmdline_token *tok,
		   const struct cmdline_option *opt, void *arg)
{
	struct seen *s = arg;
	size_t n = MIN(tok->key_len, sizeof(s->key) - 1);

	s->n++;
	s->last = err;
	memcpy(s->key, tok->key, n);
	s->key[n] = '\0';
}

static unsigned int apply(const char *line, struct seen *s)
{
	memset(s, 0, sizeof(*s));
	opt_flag = false;
	opt_uint = 0;
	opt_u64 = 0;
	opt_str[0] = '\0';
	func_value[0] = '\0';
	return cmdline_apply(line, table, ARRAY_SIZE(table), record, s);
}

/* Every type is set from its word; surrounding and repeated spaces do not matter. */
static void cmdline_apply_all_types(struct ktest *t)
{
	struct seen s;

	KT_EXPECT_EQ(t, apply("  t.flag t.uint=42\tt.u64=0x10K  t.str=abc t.func=x  ", &s), 0u);
	KT_EXPECT_TRUE(t, opt_flag);
	KT_EXPECT_EQ(t, opt_uint, 42u);
	KT_EXPECT_EQ(t, opt_u64, 0x4000u);
	KT_EXPECT_STREQ(t, opt_str, "abc");
	KT_EXPECT_STREQ(t, func_value, "x");
}

/* A later word overrides an earlier one (GRUB's line, then the fw_cfg one). */
static void cmdline_apply_last_wins(struct ktest *t)
{
	struct seen s;

	KT_EXPECT_EQ(t, apply("t.uint=1 t.flag t.uint=2 t.flag=off", &s), 0u);
	KT_EXPECT_EQ(t, opt_uint, 2u);
	KT_EXPECT_FALSE(t, opt_flag);
}

/* An unknown word is reported by name and the others still apply. */
static void cmdline_apply_unknown_reported(struct ktest *t)
{
	struct seen s;

	KT_EXPECT_EQ(t, apply("t.uint=7 nosuch=1 t.flag", &s), 1u);
	KT_EXPECT_EQ(t, s.last, CMDLINE_E_UNKNOWN);
	KT_EXPECT_STREQ(t, s.key, "nosuch");
	KT_EXPECT_EQ(t, opt_uint, 7u);
	KT_EXPECT_TRUE(t, opt_flag);
}

/* Bad values: junk, overflow, a bare word for an integer, a string too long, a FUNC refusal. */
static void cmdline_apply_bad_values(struct ktest *t)
{
	struct seen s;

	KT_EXPECT_EQ(t, apply("t.uint=12x", &s), 1u);
	KT_EXPECT_EQ(t, s.last, CMDLINE_E_VALUE);
	KT_EXPECT_EQ(t, apply("t.uint=4294967296", &s), 1u);
	KT_EXPECT_EQ(t, apply("t.u64=18446744073709551616", &s), 1u);
	KT_EXPECT_EQ(t, apply("t.u64=0x", &s), 1u);
	KT_EXPECT_EQ(t, apply("t.uint", &s), 1u);
	KT_EXPECT_EQ(t, s.last, CMDLINE_E_NEED_VALUE);
	KT_EXPECT_EQ(t, apply("t.str=12345678", &s), 1u);
	KT_EXPECT_EQ(t, s.last, CMDLINE_E_TOO_LONG);
	KT_EXPECT_EQ(t, apply("t.flag=maybe", &s), 1u);
	KT_EXPECT_EQ(t, apply("t.func=bad", &s), 1u);
	KT_EXPECT_EQ(t, s.last, CMDLINE_E_VALUE);
	KT_EXPECT_EQ(t, opt_uint, 0u);
}

/* Quotes keep spaces in a value; an unterminated quote is an error, not a hang. */
static void cmdline_next_quotes(struct ktest *t)
{
	struct seen s;

	KT_EXPECT_EQ(t, apply("t.func=\"a b  c\" t.uint=3", &s), 0u);
	KT_EXPECT_STREQ(t, func_value, "a b  c");
	KT_EXPECT_EQ(t, opt_uint, 3u);
	KT_EXPECT_EQ(t, apply("t.func=\"open t.uint=3", &s), 1u);
	KT_EXPECT_EQ(t, s.last, CMDLINE_E_QUOTE);
	KT_EXPECT_EQ(t, opt_uint, 0u);
}

/* Integer suffixes multiply by 1024^n and are checked for overflow. */
static void cmdline_parse_u64_suffixes(struct ktest *t)
{
	u64 v = 0;

	KT_EXPECT_TRUE(t, cmdline_parse_u64("2M", 2, &v));
	KT_EXPECT_EQ(t, v, 2ull << 20);
	KT_EXPECT_TRUE(t, cmdline_parse_u64("0x1g", 4, &v));
	KT_EXPECT_EQ(t, v, 1ull << 30);
	KT_EXPECT_TRUE(t, cmdline_parse_u64("18446744073709551615", 20, &v));
	KT_EXPECT_EQ(t, v, ~0ull);
	KT_EXPECT_FALSE(t, cmdline_parse_u64("17179869184G", 12, &v));
	KT_EXPECT_FALSE(t, cmdline_parse_u64("K", 1, &v));
	KT_EXPECT_FALSE(t, cmdline_parse_u64("", 0, &v));
}

/* A line that fitted is left alone; one that did not is cut back to its last whole word
 * (never applying half of "test=..."), and the start of what was dropped is returned. */
static void cmdline_cut_to_words_drops_cut_word(struct ktest *t)
{
	const char *line = "seed=7 test=boot.*,mm_pcp.*";
	char buf[17], dropped[8];

	memcpy(buf, line, sizeof(buf) - 1);		/* what fw_cfg kept: 16 of 27 bytes */
	buf[sizeof(buf) - 1] = '\0';
	KT_EXPECT_EQ(t, cmdline_cut_to_words(buf, sizeof(buf), strlen(line), dropped,
					     sizeof(dropped)), 6ul);
	KT_EXPECT_STREQ(t, buf, "seed=7");
	KT_EXPECT_STREQ(t, dropped, "test=bo");	/* the cut word's start, up to dropped's size */

	memcpy(buf, "seed=7", 7);
	KT_EXPECT_EQ(t, cmdline_cut_to_words(buf, sizeof(buf), 6, dropped, sizeof(dropped)), 6ul);
	KT_EXPECT_STREQ(t, buf, "seed=7");
	KT_EXPECT_STREQ(t, dropped, "");

	memset(buf, 'x', sizeof(buf) - 1);		/* one word longer than everything */
	buf[sizeof(buf) - 1] = '\0';
	KT_EXPECT_EQ(t, cmdline_cut_to_words(buf, sizeof(buf), 3000, dropped, sizeof(dropped)), 0ul);
	KT_EXPECT_STREQ(t, buf, "");
	KT_EXPECT_STREQ(t, dropped, "xxxxxxx");
}

/*
 * The boot's path for a boot loader's command line longer than boot_info keeps (4095
 * bytes): multiboot2_parse() copies what fits, cmdline_fit_boot() cuts it back to the last
 * whole word. Words of 9 characters and a space: the one at bytes 4090-4098 crosses the
 * limit. Expected: the parse knows the whole length; the kept line ends with the word
 * before (never half of one, as in "test=boot.*,mm_"). In the kernel, the runner's own
 * fw_cfg line comes after the loader's, all of it past the limit: the same result.
 */
static void cmdline_fit_boot_long_loader_line(struct ktest *t)
{
	static u8 mbi[8 + 8 + 4400 + 8 + 8];
	static struct boot_info bi;
	char *line = (char *)mbi + 16;
	const char *err;
	u32 total = sizeof(mbi) - 8, size = 8 + 4400, type = 1;

	memset(mbi, 0, sizeof(mbi));
	for (unsigned int w = 0; w < 440; w++)
		snprintf(line + 10 * w, 11, "w%08u ", w);
	line[4399] = '\0';	/* 4399 bytes and the NUL: the tag's 4400 */
	memcpy(mbi, &total, 4);
	memcpy(mbi + 8, &type, 4);
	memcpy(mbi + 12, &size, 4);
	memset(&bi, 0, sizeof(bi));
	KT_ASSERT_EQ(t, multiboot2_parse(mbi, sizeof(mbi), &bi, &err), 0);
	KT_EXPECT_EQ(t, bi.cmdline_len, (size_t)4399);
	KT_EXPECT_EQ(t, strlen(bi.cmdline), (size_t)BOOT_CMDLINE_MAX - 1);
	cmdline_fit_boot(&bi);
	KT_EXPECT_EQ(t, strlen(bi.cmdline), (size_t)4089);
	KT_EXPECT_STREQ(t, bi.cmdline + 4080, "w00000408");
}

static const struct ktest_case cmdline_cases[] = {
	KTEST_CASE(cmdline_apply_all_types),
	KTEST_CASE(cmdline_apply_last_wins),
	KTEST_CASE(cmdline_apply_unknown_reported),
	KTEST_CASE(cmdline_apply_bad_values),
	KTEST_CASE(cmdline_next_quotes),
	KTEST_CASE(cmdline_parse_u64_suffixes),
	KTEST_CASE(cmdline_cut_to_words_drops_cut_word),
	KTEST_CASE(cmdline_fit_boot_long_loader_line),
};
KTEST_SUITE(cmdline, cmdline_cases);
