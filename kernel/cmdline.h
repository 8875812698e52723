/*
 * Kernel command line: `key=value` words and bare flags, checked against a registry of known
 * options that subsystems declare next to the variable they set. Parsing is a pure function of
 * its input (kernel/cmdline.c, fuzzable on the host); kernel/cmdline_boot.c applies the boot
 * command line to the registry and prints what it did. Not a general-purpose argv library.
 *
 * Declaring an option (anywhere in the kernel, at file scope):
 *
 *	static bool mm_dump;
 *	CMDLINE_BOOL("mm.dump", mm_dump, "print the buddy free lists after boot");
 *	static unsigned int pcp_batch = 31;
 *	CMDLINE_UINT("pcp.batch", pcp_batch, "pages moved per PCP refill/drain");
 *	static char test_filter[256];
 *	CMDLINE_STRING("test", test_filter, "comma-separated globs of suite.case to run");
 *	static int set_mode(const char *val);   // val is NULL for a bare word
 *	CMDLINE_FUNC("pcp.lock", set_mode, "irqsave|trylock: how PCP lists are locked");
 *
 * Syntax: words separated by spaces; `key`, `key=value`, `key="value with spaces"`. A later
 * word overrides an earlier one (the fw_cfg line is appended after GRUB's). Booleans accept a
 * bare key (true) or =1/0, on/off, yes/no, true/false. Integers accept decimal or 0x hex with
 * an optional K, M or G suffix (x1024^n).
 */
#ifndef KERNEL_CMDLINE_H
#define KERNEL_CMDLINE_H

#include "kernel/compiler.h"

enum cmdline_type {
	CMDLINE_T_BOOL,		/* var: bool */
	CMDLINE_T_UINT,		/* var: unsigned int */
	CMDLINE_T_U64,		/* var: u64 */
	CMDLINE_T_STRING,	/* var: char[size], always NUL-terminated, truncation is an error */
	CMDLINE_T_FUNC,		/* set(value or NULL); non-zero return: bad value */
};

struct cmdline_option {
	const char *name;	/* the key, e.g. "pcp.lock" */
	const char *help;	/* one line, shown when an unknown option is given */
	enum cmdline_type type;
	void *var;		/* BOOL, UINT, U64, STRING */
	size_t size;		/* STRING: size of the buffer */
	int (*set)(const char *value);	/* FUNC */
};

/* One word of the command line; key and value point into the input, not NUL-terminated. */
struct cmdline_token {
	const char *key;
	size_t key_len;
	const char *value;	/* NULL for a bare word */
	size_t value_len;
};

enum cmdline_error {
	CMDLINE_OK = 0,
	CMDLINE_E_UNKNOWN,	/* no option with this key */
	CMDLINE_E_VALUE,	/* the value does not parse for the option's type */
	CMDLINE_E_NEED_VALUE,	/* a bare word for an option that needs `=value` */
	CMDLINE_E_TOO_LONG,	/* a value longer than the option's buffer */
	CMDLINE_E_QUOTE,	/* an opening '"' with no closing one */
};

/* Called for each word that was not applied; tok is valid only during the call. */
typedef void (*cmdline_report_fn)(enum cmdline_error err, const struct cmdline_token *tok,
				  const struct cmdline_option *opt, void *arg);

/*
 * Split the next word off *pos. Returns false at the end of the string. Sets *err to
 * CMDLINE_E_QUOTE for an unterminated quote (the word then runs to the end). Pure.
 */
bool cmdline_next(const char **pos, struct cmdline_token *tok, enum cmdline_error *err);

/* Parse one value as the option's type into its variable. Pure apart from writing opt->var. */
enum cmdline_error cmdline_set(const struct cmdline_option *opt, const char *value,
			       size_t value_len);

/*
 * Apply a whole command line to a table of options; each word that fails is passed to report.
 * Returns the number of words that failed. Touches nothing but the options' variables.
 */
unsigned int cmdline_apply(const char *cmdline, const struct cmdline_option *const *opts,
			   size_t nr_opts, cmdline_report_fn report, void *arg);

/*
 * A command line of `wanted` bytes that kept only the first cap - 1 in buf: cut back to whole
 * words (see kernel/cmdline.c); returns the length kept, the start of the rest in dropped.
 */
size_t cmdline_cut_to_words(char *buf, size_t cap, size_t wanted, char *dropped,
			    size_t dropped_len);

/* Value parsers used by cmdline_set(), exported for tests. Return false on bad input. */
bool cmdline_parse_bool(const char *s, size_t len, bool *out);
bool cmdline_parse_u64(const char *s, size_t len, u64 *out);

/*
 * Did you mean: feed every valid word to cmdline_suggest_try(); best is then the nearest to
 * word by edit distance, if it is near enough to be a typo (one edit in a word of up to 4
 * characters, two up to 9, three beyond), else NULL. For the boot options and the monitor.
 */
#define CMDLINE_WORD_MAX 63
struct cmdline_suggest {
	const char *word;
	size_t len;
	const char *best;	/* NULL: nothing near */
	unsigned int dist;	/* best's distance; before any, the first distance too far */
};
void cmdline_suggest_init(struct cmdline_suggest *s, const char *word, size_t len);
void cmdline_suggest_try(struct cmdline_suggest *s, const char *candidate);
/* Insertions, deletions, substitutions and swaps of neighbours between a and b (no case). */
unsigned int cmdline_edit_distance(const char *a, size_t alen, const char *b, size_t blen);

/*
 * Boot side (kernel/cmdline_boot.c): apply the boot command line to every registered option.
 * An unknown word is reported with the nearest valid option (did you mean), a bad value with
 * the option's help line; boot goes on. `help` prints every option.
 */
void cmdline_init(const char *cmdline);
/*
 * buf (cap bytes) holds the first cap - 1 bytes of a command line of `wanted` bytes: if that
 * is not all of it, cut it to whole words and say what was dropped. Before cmdline_init().
 */
void cmdline_fit(char *buf, size_t cap, size_t wanted);
/* The boot command line in bi->cmdline: the loader's (bi->cmdline_len bytes, of which
 * bi->cmdline holds what fits), then the machine's own appended (arch_fwcfg_cmdline()),
 * fitted by cmdline_fit(). kmain, before cmdline_init(). */
struct boot_info;
void cmdline_fit_boot(struct boot_info *bi);
/* Print every registered option with its help line. */
void cmdline_print_options(void);

/* ---- registration: a pointer per option in the "cmdline_options" section ------------- */

#define __CMDLINE_CAT2(a, b) a##b
#define __CMDLINE_CAT(a, b) __CMDLINE_CAT2(a, b)
#define __CMDLINE_REGISTER(id, ...)                                                     \
	static const struct cmdline_option id = { __VA_ARGS__ };                        \
	static const struct cmdline_option *const __CMDLINE_CAT(id, _ptr)               \
		__used __section("cmdline_options") __aligned(8) = &id
#define __CMDLINE_ID __CMDLINE_CAT(__cmdline_opt_, __COUNTER__)
#define __CMDLINE_TYPECHECK(variable, type)                                             \
	_Static_assert(__builtin_types_compatible_p(__typeof__(variable), type),        \
		       "command-line option variable " #variable " must be " #type)

#define CMDLINE_BOOL(key, variable, helptext)                                           \
	__CMDLINE_TYPECHECK(variable, bool);                                            \
	__CMDLINE_REGISTER(__CMDLINE_ID, .name = key, .help = helptext,                 \
			   .type = CMDLINE_T_BOOL, .var = &(variable))
#define CMDLINE_UINT(key, variable, helptext)                                           \
	__CMDLINE_TYPECHECK(variable, unsigned int);                                    \
	__CMDLINE_REGISTER(__CMDLINE_ID, .name = key, .help = helptext,                 \
			   .type = CMDLINE_T_UINT, .var = &(variable))
#define CMDLINE_U64(key, variable, helptext)                                            \
	__CMDLINE_TYPECHECK(variable, u64);                                             \
	__CMDLINE_REGISTER(__CMDLINE_ID, .name = key, .help = helptext,                 \
			   .type = CMDLINE_T_U64, .var = &(variable))
#define CMDLINE_STRING(key, variable, helptext)                                         \
	__CMDLINE_TYPECHECK(&(variable)[0], char *);                                    \
	__CMDLINE_REGISTER(__CMDLINE_ID, .name = key, .help = helptext,                 \
			   .type = CMDLINE_T_STRING, .var = (variable), .size = sizeof(variable))
#define CMDLINE_FUNC(key, fn, helptext)                                                 \
	__CMDLINE_REGISTER(__CMDLINE_ID, .name = key, .help = helptext,                 \
			   .type = CMDLINE_T_FUNC, .set = (fn))

#endif
