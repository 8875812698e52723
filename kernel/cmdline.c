/*
 * Command-line parsing, as pure functions of their input: split words, parse values, apply
 * them to a table of options. No printing and no global state, so the host can fuzz it.
 * The boot-time registry and messages are in kernel/cmdline_boot.c.
 */
#include "kernel/cmdline.h"
#include "kernel/string.h"

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Scan a value starting at p: a "quoted" run, or up to the next space. */
static const char *scan_value(const char *p, struct cmdline_token *tok, enum cmdline_error *err)
{
	if (*p == '"') {
		const char *end = strchr(p + 1, '"');

		tok->value = p + 1;
		if (!end) {
			*err = CMDLINE_E_QUOTE;
			tok->value_len = strlen(p + 1);
			return p + 1 + tok->value_len;
		}
		tok->value_len = (size_t)(end - (p + 1));
		return end + 1;
	}
	tok->value = p;
	while (*p && !is_space(*p))
		p++;
	tok->value_len = (size_t)(p - tok->value);
	return p;
}

bool cmdline_next(const char **pos, struct cmdline_token *tok, enum cmdline_error *err)
{
	const char *p = *pos;

	*err = CMDLINE_OK;
	while (*p && is_space(*p))
		p++;
	if (!*p) {
		*pos = p;
		return false;
	}
	tok->key = p;
	while (*p && !is_space(*p) && *p != '=')
		p++;
	tok->key_len = (size_t)(p - tok->key);
	tok->value = NULL;
	tok->value_len = 0;
	if (*p == '=')
		p = scan_value(p + 1, tok, err);
	*pos = p;
	return true;
}

static bool word_is(const char *s, size_t len, const char *word)
{
	return strlen(word) == len && !strncmp(s, word, len);
}

bool cmdline_parse_bool(const char *s, size_t len, bool *out)
{
	static const char *const yes[] = { "1", "on", "yes", "true", "y" };
	static const char *const no[] = { "0", "off", "no", "false", "n" };

	for (size_t i = 0; i < ARRAY_SIZE(yes); i++) {
		if (word_is(s, len, yes[i])) {
			*out = true;
			return true;
		}
		if (word_is(s, len, no[i])) {
			*out = false;
			return true;
		}
	}
	return false;
}

static int digit_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return 99;
}

/* Decimal or 0x hex, then an optional K/M/G suffix; rejects overflow and trailing junk. */
bool cmdline_parse_u64(const char *s, size_t len, u64 *out)
{
	unsigned int base = 10, shift = 0;
	u64 v = 0;
	size_t i = 0;

	if (len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		i = 2;
	}
	if (len > i && (s[len - 1] == 'K' || s[len - 1] == 'k'))
		shift = 10;
	else if (len > i && (s[len - 1] == 'M' || s[len - 1] == 'm'))
		shift = 20;
	else if (len > i && (s[len - 1] == 'G' || s[len - 1] == 'g'))
		shift = 30;
	if (shift)
		len--;
	if (i == len)
		return false;
	for (; i < len; i++) {
		int d = digit_value(s[i]);

		if (d >= (int)base || v > (~0ull - (u64)d) / base)
			return false;
		v = v * base + (u64)d;
	}
	if (shift && v > (~0ull >> shift))
		return false;
	*out = v << shift;
	return true;
}

static enum cmdline_error set_string(const struct cmdline_option *opt, const char *value,
				     size_t len)
{
	if (len >= opt->size)
		return CMDLINE_E_TOO_LONG;
	memcpy(opt->var, value, len);
	((char *)opt->var)[len] = '\0';
	return CMDLINE_OK;
}

/* FUNC options get a NUL-terminated copy of the value (NULL for a bare word). */
static enum cmdline_error set_func(const struct cmdline_option *opt, const char *value,
				   size_t len)
{
	char buf[256];

	if (!value)
		return opt->set(NULL) ? CMDLINE_E_NEED_VALUE : CMDLINE_OK;
	if (len >= sizeof(buf))
		return CMDLINE_E_TOO_LONG;
	memcpy(buf, value, len);
	buf[len] = '\0';
	return opt->set(buf) ? CMDLINE_E_VALUE : CMDLINE_OK;
}

enum cmdline_error cmdline_set(const struct cmdline_option *opt, const char *value,
			       size_t value_len)
{
	u64 v;

	switch (opt->type) {
	case CMDLINE_T_BOOL:
		if (!value) {
			*(bool *)opt->var = true;
			return CMDLINE_OK;
		}
		return cmdline_parse_bool(value, value_len, opt->var) ? CMDLINE_OK : CMDLINE_E_VALUE;
	case CMDLINE_T_UINT:
	case CMDLINE_T_U64:
		if (!value)
			return CMDLINE_E_NEED_VALUE;
		if (!cmdline_parse_u64(value, value_len, &v))
			return CMDLINE_E_VALUE;
		if (opt->type == CMDLINE_T_U64) {
			*(u64 *)opt->var = v;
			return CMDLINE_OK;
		}
		if (v > 0xffffffffull)
			return CMDLINE_E_VALUE;
		*(unsigned int *)opt->var = (unsigned int)v;
		return CMDLINE_OK;
	case CMDLINE_T_STRING:
		return value ? set_string(opt, value, value_len) : CMDLINE_E_NEED_VALUE;
	case CMDLINE_T_FUNC:
		return set_func(opt, value, value_len);
	}
	return CMDLINE_E_VALUE;
}

static const struct cmdline_option *find_option(const struct cmdline_option *const *opts,
						size_t nr, const char *key, size_t len)
{
	for (size_t i = 0; i < nr; i++)
		if (word_is(key, len, opts[i]->name))
			return opts[i];
	return NULL;
}

unsigned int cmdline_apply(const char *cmdline, const struct cmdline_option *const *opts,
			   size_t nr_opts, cmdline_report_fn report, void *arg)
{
	struct cmdline_token tok;
	enum cmdline_error err;
	unsigned int failed = 0;
	const char *pos = cmdline;

	while (cmdline_next(&pos, &tok, &err)) {
		const struct cmdline_option *opt = find_option(opts, nr_opts, tok.key, tok.key_len);

		if (err == CMDLINE_OK)
			err = opt ? cmdline_set(opt, tok.value, tok.value_len) : CMDLINE_E_UNKNOWN;
		if (err != CMDLINE_OK) {
			failed++;
			if (report)
				report(err, &tok, opt, arg);
		}
	}
	return failed;
}

/*
 * A command line of `wanted` bytes went into buf (cap bytes, NUL included) and kept only its
 * first cap - 1. Cut it back to the end of the last word before the limit, so that half a
 * word (say "test=boot.*,mm_p") is never applied; copy the start of what was dropped into
 * dropped.
 * Returns the length kept: wanted itself if everything fitted.
 */
size_t cmdline_cut_to_words(char *buf, size_t cap, size_t wanted, char *dropped,
			    size_t dropped_len)
{
	size_t keep = cap - 1, n;

	dropped[0] = '\0';
	if (wanted < cap)
		return wanted;
	while (keep && !is_space(buf[keep - 1]))
		keep--;		/* the word running into the limit may have been cut: drop it */
	n = MIN(cap - 1 - keep, dropped_len - 1);
	memcpy(dropped, buf + keep, n);
	dropped[n] = '\0';
	while (keep && is_space(buf[keep - 1]))
		keep--;
	buf[keep] = '\0';
	return keep;
}

/* ---- did you mean: the nearest valid word to a mistyped one -------------------------- */

static char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/*
 * Optimal string alignment distance (Levenshtein's insert, delete and substitute, plus a swap
 * of two neighbours, each costing 1), case-insensitive: d[i][j] is the distance between the
 * first i characters of a and the first j of b,
 *	d[i][j] = min(d[i-1][j] + 1, d[i][j-1] + 1, d[i-1][j-1] + (a[i] != b[j]),
 *		      d[i-2][j-2] + 1 if a[i-1..i] is b[j-1..j] swapped).
 * Three rows of the table are enough. Longer than CMDLINE_WORD_MAX: "far from everything".
 */
unsigned int cmdline_edit_distance(const char *a, size_t alen, const char *b, size_t blen)
{
	unsigned int rows[3][CMDLINE_WORD_MAX + 1];	/* row i is rows[i % 3] */

	if (alen > CMDLINE_WORD_MAX || blen > CMDLINE_WORD_MAX)
		return ~0u;
	for (size_t j = 0; j <= blen; j++)
		rows[0][j] = (unsigned int)j;
	for (size_t i = 1; i <= alen; i++) {
		unsigned int *cur = rows[i % 3], *prev = rows[(i - 1) % 3];
		const unsigned int *prev2 = rows[(i + 1) % 3];	/* row i - 2 */

		cur[0] = (unsigned int)i;
		for (size_t j = 1; j <= blen; j++) {
			bool same = lower(a[i - 1]) == lower(b[j - 1]);
			unsigned int d = MIN(MIN(prev[j], cur[j - 1]) + 1, prev[j - 1] + !same);

			if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) &&
			    lower(a[i - 2]) == lower(b[j - 1]))
				d = MIN(d, prev2[j - 2] + 1);
			cur[j] = d;
		}
	}
	return rows[alen % 3][blen];
}

void cmdline_suggest_init(struct cmdline_suggest *s, const char *word, size_t len)
{
	s->word = word;
	s->len = len;
	s->best = NULL;
	/* Within reach: one edit for a word of up to 4 characters, two up to 9, then three. */
	s->dist = len < 5 ? 2 : len < 10 ? 3 : 4;
}

void cmdline_suggest_try(struct cmdline_suggest *s, const char *candidate)
{
	unsigned int d = cmdline_edit_distance(s->word, s->len, candidate, strlen(candidate));

	if (d < s->dist) {
		s->dist = d;
		s->best = candidate;
	}
}
