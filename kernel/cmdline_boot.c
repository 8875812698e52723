/*
 * The boot command line applied to every registered option (the "cmdline_options" section),
 * with a message for each bad word. The parsing itself is in kernel/cmdline.c.
 */
#include "kernel/cmdline.h"
#include "kernel/arch.h"
#include "kernel/bootinfo.h"
#include "kernel/printk.h"
#include "kernel/string.h"

extern const struct cmdline_option *const __start_cmdline_options[];
extern const struct cmdline_option *const __stop_cmdline_options[];

static size_t nr_options(void)
{
	return (size_t)(__stop_cmdline_options - __start_cmdline_options);
}

static const char *const error_text[] = {
	[CMDLINE_OK] = "ok",
	[CMDLINE_E_UNKNOWN] = "unknown option",
	[CMDLINE_E_VALUE] = "bad value",
	[CMDLINE_E_NEED_VALUE] = "needs a value (key=value)",
	[CMDLINE_E_TOO_LONG] = "value too long",
	[CMDLINE_E_QUOTE] = "unterminated quote",
};

/* "key" or "key=value" of a token, truncated to fit buf. */
static void token_text(const struct cmdline_token *tok, char *buf, size_t size)
{
	size_t n = MIN(tok->key_len, size - 1);

	memcpy(buf, tok->key, n);
	if (tok->value && n + 1 < size) {
		buf[n++] = '=';
		size_t v = MIN(tok->value_len, size - 1 - n);

		memcpy(buf + n, tok->value, v);
		n += v;
	}
	buf[n] = '\0';
}

/* The registered option nearest to a mistyped key, or NULL. */
static const char *nearest_option(const char *key, size_t len)
{
	struct cmdline_suggest sug;

	cmdline_suggest_init(&sug, key, len);
	for (size_t i = 0; i < nr_options(); i++)
		cmdline_suggest_try(&sug, __start_cmdline_options[i]->name);
	return sug.best;
}

static void report(enum cmdline_error err, const struct cmdline_token *tok,
		   const struct cmdline_option *opt, void *arg)
{
	const char *near = err == CMDLINE_E_UNKNOWN ? nearest_option(tok->key, tok->key_len) : NULL;
	char word[128];

	token_text(tok, word, sizeof(word));
	if (strlen(word) == sizeof(word) - 1)	/* cut by token_text(): say so */
		snprintf(word + 60, sizeof(word) - 60, "... (%zu bytes)",
			 tok->key_len + (tok->value ? 1 + tok->value_len : 0));
	if (err == CMDLINE_E_UNKNOWN && near)
		printk("cmdline: unknown option: '%s' (ignored); did you mean '%s'? (the word "
		       "help lists all %zu options)\n", word, near, nr_options());
	else if (err == CMDLINE_E_UNKNOWN)
		printk("cmdline: unknown option: '%s' (ignored); the word help lists all %zu "
		       "options\n", word, nr_options());
	else
		printk("cmdline: %s: '%s' (ignored)%s%s\n", error_text[err], word,
		       opt ? "; " : "", opt ? opt->help : "");
}

/* Options sorted by name, printed one per line: selection sort over indices, n is small. */
void cmdline_print_options(void)
{
	const struct cmdline_option *const *opts = __start_cmdline_options;
	const char *last = "";
	size_t n = nr_options();

	printk("cmdline: valid options (%zu):\n", n);
	for (size_t printed = 0; printed < n; printed++) {
		const struct cmdline_option *next = NULL;

		for (size_t i = 0; i < n; i++)
			if (strcmp(opts[i]->name, last) > 0 &&
			    (!next || strcmp(opts[i]->name, next->name) < 0))
				next = opts[i];
		if (!next)
			break;
		printk("  %-20s %s\n", next->name, next->help);
		last = next->name;
	}
}

void cmdline_fit(char *buf, size_t cap, size_t wanted)
{
	char dropped[48];
	size_t kept = cmdline_cut_to_words(buf, cap, wanted, dropped, sizeof(dropped));

	if (kept == wanted)
		return;
	printk("cmdline: the command line is %zu bytes, the kernel keeps at most %zu: the %zu "
	       "bytes from '%s...' on are dropped (ignored), boot continues\n", wanted, cap - 1,
	       wanted - kept, dropped);
}

void cmdline_fit_boot(struct boot_info *bi)
{
	cmdline_fit(bi->cmdline, sizeof(bi->cmdline),
		    arch_fwcfg_cmdline(bi->cmdline, bi->cmdline_len, sizeof(bi->cmdline)));
}

static bool cmdline_help;
CMDLINE_BOOL("help", cmdline_help, "print this list of every option at boot");

void cmdline_init(const char *cmdline)
{
	unsigned int failed;

	failed = cmdline_apply(cmdline, __start_cmdline_options, nr_options(), report, NULL);
	if (cmdline_help)
		cmdline_print_options();
	if (failed)
		printk("cmdline: %u word(s) ignored, boot continues\n", failed);
}
