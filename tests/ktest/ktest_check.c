/*
 * ktest's portable core, linked by the kernel (tests/ktest/ktest.c runs the cases) and by the
 * host harness (tests/host/harness.c does): a case's state, its random numbers, KT_ASSERT's
 * and KT_SKIP's way out, what KT_EXPECT_* evaluate and print, the taint rule both runners apply
 * around a case, and which "suite.case" names a
 * `test=` filter selects (pure functions). No platform code: output goes through printk.
 */
#include "tests/ktest/ktest.h"
#include "kernel/arch.h"
#include "kernel/printk.h"
#include "kernel/string.h"

/* ---- random numbers ------------------------------------------------------------------ */

/*
 * splitmix64 (Steele, Lea, Flood 2014): add the golden-ratio increment, then mix with two
 * xor-shift-multiply rounds. Every seed gives a full-period (2^64) sequence, so a per-case
 * seed derived by hashing is as good as any.
 */
u64 ktest_splitmix64(u64 *state)
{
	u64 z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

u64 ktest_rand(struct ktest *t)
{
	return ktest_splitmix64(&t->rng);
}

/* Lemire's multiply-shift would need 128-bit maths; rejection keeps it exact and simple. */
u64 ktest_rand_below(struct ktest *t, u64 n)
{
	u64 limit = ~0ull - (~0ull % n);	/* largest multiple of n, exclusive */
	u64 r;

	do
		r = ktest_rand(t);
	while (r >= limit);
	return r % n;
}

/* ---- the state of one case ------------------------------------------------------------ */

void ktest_case_init(struct ktest *t, const char *suite, const struct ktest_case *c, int depth,
		     u64 seed)
{
	memset(t, 0, sizeof(*t));
	t->suite_name = suite;
	t->case_name = c->name;
	t->status = KTEST_PASS;
	t->seed = seed;
	t->rng = t->seed;
	t->depth = depth;
}

__noreturn void ktest_abort(struct ktest *t)
{
	if (t->status == KTEST_PASS)
		t->status = KTEST_FAIL;
	__builtin_longjmp(t->abort_ctx, 1);
}

__noreturn void ktest_skip(struct ktest *t, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(t->skip_reason, sizeof(t->skip_reason), fmt, ap);
	va_end(ap);
	if (t->status == KTEST_PASS)
		t->status = KTEST_SKIP;
	__builtin_longjmp(t->abort_ctx, 1);
}

/* ---- checks ------------------------------------------------------------------------------ */

/* KTAP nesting: a case's diagnostics sit 4 spaces in, a nested case's 2 more. */
static const char *indent(const struct ktest *t)
{
	return t->depth ? "      " : "    ";
}

void ktest_printf(struct ktest *t, const char *fmt, ...)
{
	char buf[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	printk("%s# %s\n", indent(t), buf);
}

/* Any CPU of the case may fail a check (host tests check on every thread): atomically. */
static void record_failure(struct ktest *t, const char *file, int line)
{
	__atomic_fetch_add(&t->nr_failed_checks, 1, __ATOMIC_RELAXED);
	WRITE_ONCE(t->status, KTEST_FAIL);
	printk("%s# %s: EXPECTATION FAILED at %s:%d\n", indent(t), t->case_name, file, line);
}

void ktest_fail_at(struct ktest *t, const char *file, int line, const char *fmt, ...)
{
	char buf[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	record_failure(t, file, line);
	printk("%s# %s\n", indent(t), buf);
}

/* ---- taints: a report nobody announced fails the case ----------------------------------- */

static unsigned int taints_expected;	/* bits 1 << flag: announced by the running case */

void ktest_expect_taint(enum taint_flag flag)
{
	__atomic_fetch_or(&taints_expected, 1u << flag, __ATOMIC_RELAXED);
}

void ktest_taints_begin(struct ktest_taints *saved)
{
	for (unsigned int f = 0; f < NR_TAINT_FLAGS; f++)
		saved->count[f] = taint_count(f);
	saved->outer_expected = __atomic_exchange_n(&taints_expected, 0, __ATOMIC_RELAXED);
}

void ktest_taints_end(struct ktest *t, const struct ktest_taints *saved)
{
	static const char *const what[NR_TAINT_FLAGS] = {
		[TAINT_BAD_PAGE] = "'BUG: Bad page state' report",
		[TAINT_WARN] = "WARNING (WARN_ON)",
	};
	unsigned int expected = __atomic_load_n(&taints_expected, __ATOMIC_RELAXED);

	for (unsigned int f = 0; f < NR_TAINT_FLAGS; f++) {
		unsigned long n = taint_count(f) - saved->count[f];

		if (n && !(expected & (1u << f))) {
			ktest_printf(t, "%lu x %s came during this case, which did not expect one "
				     "(see above)", n, what[f]);
			__atomic_fetch_add(&t->nr_failed_checks, 1, __ATOMIC_RELAXED);
			WRITE_ONCE(t->status, KTEST_FAIL);
		}
	}
	__atomic_store_n(&taints_expected, saved->outer_expected, __ATOMIC_RELAXED);
}

static const char *const cmp_text[] = {
	[KT_EQ] = "==", [KT_NE] = "!=", [KT_LT] = "<",
	[KT_LE] = "<=", [KT_GT] = ">", [KT_GE] = ">=",
};

/* The comparison, as -1/0/1 of a versus b, against the operator. */
static bool cmp_holds(enum ktest_cmp op, int order)
{
	switch (op) {
	case KT_EQ: return order == 0;
	case KT_NE: return order != 0;
	case KT_LT: return order < 0;
	case KT_LE: return order <= 0;
	case KT_GT: return order > 0;
	case KT_GE: return order >= 0;
	}
	return false;
}

/*
 * Is text, as the check was written, the literal value itself (0, -1, 5UL, 0x10)? Then the
 * failure message leaves out its echo ("0 == 0 (0x0)"), as KUnit does.
 */
static bool is_literal(const char *text, unsigned long long value)
{
	unsigned long long v = 0;
	bool neg = *text == '-';
	const char *p = text + neg;
	unsigned int base = 10;

	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		base = 16;
		p += 2;
	}
	if (!*p)
		return false;
	for (; *p; p++) {
		unsigned int d;

		if (*p >= '0' && *p <= '9')
			d = (unsigned int)(*p - '0');
		else if (base == 16 && ((*p | 0x20) >= 'a' && (*p | 0x20) <= 'f'))
			d = (unsigned int)((*p | 0x20) - 'a' + 10);
		else
			break;
		v = v * base + d;
	}
	while (*p == 'u' || *p == 'U' || *p == 'l' || *p == 'L')
		p++;
	return !*p && (neg ? 0 - v : v) == value;
}

/* ", but A == 5 (0x5), B == 6 (0x6)", leaving out a side that is a literal. */
static void print_sides(const struct ktest *t, enum ktest_cmp op, const char *lhs,
			unsigned long long a, const char *rhs, unsigned long long b, bool is_signed)
{
	const char *texts[2] = { lhs, rhs };
	unsigned long long vals[2] = { a, b };
	bool both_literal = is_literal(lhs, a) && is_literal(rhs, b);
	char buf[400];
	size_t n;

	n = (size_t)scnprintf(buf, sizeof(buf), "Expected %s %s %s, but", lhs, cmp_text[op], rhs);
	for (int i = 0, shown = 0; i < 2 && n < sizeof(buf); i++) {
		if (!both_literal && is_literal(texts[i], vals[i]))
			continue;
		n += (size_t)scnprintf(buf + n, sizeof(buf) - n, is_signed ?
				       "%s %s == %lld (0x%llx)" : "%s %s == %llu (0x%llx)",
				       shown++ ? "," : "", texts[i], vals[i], vals[i]);
	}
	printk("%s# %s\n", indent(t), buf);
}

bool ktest_check_int(struct ktest *t, const char *file, int line, enum ktest_cmp op,
		     const char *lhs, long long a, const char *rhs, long long b)
{
	if (cmp_holds(op, (a > b) - (a < b)))
		return true;
	record_failure(t, file, line);
	print_sides(t, op, lhs, (unsigned long long)a, rhs, (unsigned long long)b, true);
	return false;
}

bool ktest_check_uint(struct ktest *t, const char *file, int line, enum ktest_cmp op,
		      const char *lhs, unsigned long long a, const char *rhs, unsigned long long b)
{
	if (cmp_holds(op, (a > b) - (a < b)))
		return true;
	record_failure(t, file, line);
	print_sides(t, op, lhs, a, rhs, b, false);
	return false;
}

bool ktest_check_ptr(struct ktest *t, const char *file, int line, enum ktest_cmp op,
		     const char *lhs, const void *a, const char *rhs, const void *b)
{
	uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;

	if (cmp_holds(op, (x > y) - (x < y)))
		return true;
	record_failure(t, file, line);
	if (!strcmp(rhs, "NULL"))	/* KT_EXPECT_NULL, KT_EXPECT_NOT_NULL */
		printk("%s# Expected %s %s NULL, but %s == %p\n", indent(t), lhs, cmp_text[op],
		       lhs, a);
	else
		printk("%s# Expected %s %s %s, but %s == %p, %s == %p\n", indent(t), lhs,
		       cmp_text[op], rhs, lhs, a, rhs, b);
	return false;
}

bool ktest_check_str(struct ktest *t, const char *file, int line, bool want_equal,
		     const char *lhs, const char *a, const char *rhs, const char *b)
{
	bool equal = a && b ? strcmp(a, b) == 0 : a == b;

	if (equal == want_equal)
		return true;
	record_failure(t, file, line);
	if (rhs[0] == '"')	/* a string literal: its value is its text */
		printk("%s# Expected %s %s %s, but %s == \"%s\"\n", indent(t), lhs,
		       want_equal ? "==" : "!=", rhs, lhs, a ? a : "(null)");
	else
		printk("%s# Expected %s %s %s, but %s == \"%s\", %s == \"%s\"\n", indent(t),
		       lhs, want_equal ? "==" : "!=", rhs, lhs, a ? a : "(null)", rhs,
		       b ? b : "(null)");
	return false;
}

bool ktest_check_true(struct ktest *t, const char *file, int line, bool want,
		      const char *expr, bool value)
{
	if (value == want)
		return true;
	record_failure(t, file, line);
	printk("%s# Expected %s to be %s\n", indent(t), expr, want ? "true" : "false");
	return false;
}

/* ---- the filter ---------------------------------------------------------------------- */

/*
 * Glob match with backtracking to the last '*' only: on a mismatch, the last star absorbs
 * one more character and matching resumes after it. Linear in practice, O(n*m) worst case.
 */
bool ktest_glob(const char *pat, size_t plen, const char *s)
{
	size_t p = 0, star = (size_t)-1;
	const char *resume = NULL;

	while (*s) {
		if (p < plen && (pat[p] == '?' || pat[p] == *s)) {
			p++;
			s++;
		} else if (p < plen && pat[p] == '*') {
			star = p++;
			resume = s;
		} else if (star != (size_t)-1) {
			p = star + 1;
			s = ++resume;
		} else {
			return false;
		}
	}
	while (p < plen && pat[p] == '*')
		p++;
	return p == plen;
}

static bool has_dot(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (s[i] == '.')
			return true;
	return false;
}

/* A pattern with a '.' is matched against "suite.case", one without against the suite. */
static bool pattern_matches(const char *pat, size_t len, const char *suite, const char *tcase)
{
	char full[128];

	if (!has_dot(pat, len))
		return ktest_glob(pat, len, suite);
	snprintf(full, sizeof(full), "%s.%s", suite, tcase);
	return ktest_glob(pat, len, full);
}

/*
 * filter: comma-separated globs; "-glob" excludes. A case runs if no positive glob is given
 * or one matches, and no exclusion matches. Empty filter: everything.
 */
bool ktest_filter_match(const char *filter, const char *suite, const char *tcase)
{
	bool have_positive = false, selected = false;
	const char *p = filter;

	while (*p) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		bool exclude = *p == '-';
		const char *pat = p + exclude;
		size_t plen = len - exclude;

		if (plen && pattern_matches(pat, plen, suite, tcase)) {
			if (exclude)
				return false;
			selected = true;
		}
		have_positive |= !exclude && plen;
		p += len + (end != NULL);
	}
	return selected || !have_positive;
}
