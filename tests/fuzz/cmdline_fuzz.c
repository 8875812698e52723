/*
 * libFuzzer target for the command-line parser (kernel/cmdline.c): any bytes, as a command
 * line, against options of every type. Checks that it terminates, never writes past a
 * buffer, keeps strings NUL-terminated, and reports at most one error per word.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "kernel/cmdline.h"

static bool f_bool;
static unsigned int f_uint;
static u64 f_u64;
static char f_str[8 + 1];	/* last byte: a canary the parser must never write */
static unsigned int f_calls;

static int f_set(const char *val)
{
	f_calls++;
	if (val && strlen(val) >= 256)
		abort();	/* set_func promises a bounded, NUL-terminated copy */
	return val && val[0] == 'x';
}

static const struct cmdline_option o_bool = {
	.name = "b", .help = "", .type = CMDLINE_T_BOOL, .var = &f_bool };
static const struct cmdline_option o_uint = {
	.name = "u", .help = "", .type = CMDLINE_T_UINT, .var = &f_uint };
static const struct cmdline_option o_u64 = {
	.name = "q", .help = "", .type = CMDLINE_T_U64, .var = &f_u64 };
static const struct cmdline_option o_str = {
	.name = "s", .help = "", .type = CMDLINE_T_STRING, .var = f_str, .size = 8 };
static const struct cmdline_option o_func = {
	.name = "f", .help = "", .type = CMDLINE_T_FUNC, .set = f_set };
static const struct cmdline_option *const opts[] = { &o_bool, &o_uint, &o_u64, &o_str, &o_func };

static unsigned int reports;

static void count(enum cmdline_error err, const struct cmdline_token *tok,
		  const struct cmdline_option *opt, void *arg)
{
	if (err == CMDLINE_OK || (tok->key_len == 0 && tok->value == NULL))
		abort();
	reports++;
}

/* Words as cmdline_next() sees them; each call must move forward. */
static unsigned int count_words(const char *s)
{
	struct cmdline_token tok;
	enum cmdline_error err;
	const char *pos = s, *prev;
	unsigned int n = 0;

	for (prev = pos; cmdline_next(&pos, &tok, &err); prev = pos, n++)
		if (pos <= prev || pos > s + strlen(s))
			abort();
	return n;
}

/* cmdline_cut_to_words() on the line as if it had to fit in a buffer of 1 + size % 32
 * bytes: the kept part is a prefix of the line that ends at a word's end, within the buffer. */
static void check_cut(const char *line, size_t size)
{
	size_t cap = 1 + size % 32, kept;
	char buf[32], dropped[8];

	memcpy(buf, line, MIN(size, cap - 1));
	buf[MIN(size, cap - 1)] = '\0';
	if (strlen(buf) != MIN(size, cap - 1))
		return;		/* a NUL inside: not a line fw_cfg would pass */
	kept = cmdline_cut_to_words(buf, cap, size, dropped, sizeof(dropped));
	if (kept != strlen(buf) || memcmp(buf, line, kept) || strnlen(dropped, 8) == 8)
		abort();
	if (size < cap ? kept != size : kept > cap - 1 || (kept && line[kept] != ' ' &&
							   line[kept] != '\t' &&
							   line[kept] != '\n' && line[kept] != '\r'))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *line = malloc(size + 1);
	unsigned int failed;

	memcpy(line, data, size);
	line[size] = '\0';
	f_str[8] = 0x5a;
	reports = 0;
	failed = cmdline_apply(line, opts, sizeof(opts) / sizeof(opts[0]), count, NULL);
	if (failed != reports || failed > count_words(line))
		abort();
	if (f_str[8] != 0x5a || strnlen(f_str, 8) == 8)
		abort();
	check_cut(line, size);
	free(line);
	return 0;
}
