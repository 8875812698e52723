/* vsnprintf for the kernel: the printf subset listed in kernel/printk.h, no floating point. */
#include "kernel/printk.h"
#include "kernel/string.h"

struct fmt_spec {
	int width, precision;
	bool left, zero;
	int length;		/* 0 int, 1 long, 2 long long, -1 short, -2 char, 3 size_t */
};

struct out {
	char *buf;
	size_t size, pos;
};

static void out_char(struct out *o, char c)
{
	if (o->pos + 1 < o->size)
		o->buf[o->pos] = c;
	o->pos++;
}

static void out_padded(struct out *o, const char *s, size_t len, const struct fmt_spec *f)
{
	size_t pad = f->width > 0 && (size_t)f->width > len ? (size_t)f->width - len : 0;
	char padc = f->zero && !f->left ? '0' : ' ';

	/* Zero padding goes after a sign. */
	if (padc == '0' && len && s[0] == '-') {
		out_char(o, '-');
		s++, len--;
	}
	if (!f->left)
		while (pad--)
			out_char(o, padc);
	for (size_t i = 0; i < len; i++)
		out_char(o, s[i]);
	if (f->left)
		while (pad--)
			out_char(o, ' ');
}

static void out_number(struct out *o, unsigned long long v, bool neg, int base, bool upper,
		       const struct fmt_spec *f)
{
	const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
	char tmp[24], rev[24];
	size_t n = 0, m = 0;

	do {
		rev[n++] = digits[v % (unsigned)base];
		v /= (unsigned)base;
	} while (v);
	if (neg)
		tmp[m++] = '-';
	while (n)
		tmp[m++] = rev[--n];
	out_padded(o, tmp, m, f);
}

static const char *parse_spec(const char *p, struct fmt_spec *f, va_list *ap)
{
	*f = (struct fmt_spec){ .precision = -1 };
	for (;; p++) {
		if (*p == '-')
			f->left = true;
		else if (*p == '0')
			f->zero = true;
		else
			break;
	}
	if (*p == '*') {
		f->width = va_arg(*ap, int);
		p++;
	}
	while (*p >= '0' && *p <= '9')
		f->width = f->width * 10 + (*p++ - '0');
	if (*p == '.') {
		f->precision = 0;
		for (p++; *p >= '0' && *p <= '9'; p++)
			f->precision = f->precision * 10 + (*p - '0');
	}
	for (;; p++) {
		if (*p == 'l')
			f->length = f->length == 1 ? 2 : 1;
		else if (*p == 'h')
			f->length = f->length == -1 ? -2 : -1;
		else if (*p == 'z')
			f->length = 3;
		else
			break;
	}
	return p;
}

static unsigned long long arg_unsigned(const struct fmt_spec *f, va_list *ap)
{
	switch (f->length) {
	case 1: return va_arg(*ap, unsigned long);
	case 2: return va_arg(*ap, unsigned long long);
	case 3: return va_arg(*ap, size_t);
	case -1: return (unsigned short)va_arg(*ap, unsigned int);
	case -2: return (unsigned char)va_arg(*ap, unsigned int);
	default: return va_arg(*ap, unsigned int);
	}
}

static long long arg_signed(const struct fmt_spec *f, va_list *ap)
{
	switch (f->length) {
	case 1: return va_arg(*ap, long);
	case 2: return va_arg(*ap, long long);
	case 3: return (long long)va_arg(*ap, size_t);
	case -1: return (short)va_arg(*ap, int);
	case -2: return (signed char)va_arg(*ap, int);
	default: return va_arg(*ap, int);
	}
}

static void format_one(struct out *o, char conv, struct fmt_spec *f, va_list *ap)
{
	switch (conv) {
	case 'd':
	case 'i': {
		long long v = arg_signed(f, ap);
		out_number(o, v < 0 ? -(unsigned long long)v : (unsigned long long)v, v < 0, 10, false, f);
		break;
	}
	case 'u': out_number(o, arg_unsigned(f, ap), false, 10, false, f); break;
	case 'x': out_number(o, arg_unsigned(f, ap), false, 16, false, f); break;
	case 'X': out_number(o, arg_unsigned(f, ap), false, 16, true, f); break;
	case 'p':
		out_char(o, '0');
		out_char(o, 'x');
		f->zero = true;
		f->width = 16;
		out_number(o, (uintptr_t)va_arg(*ap, void *), false, 16, false, f);
		break;
	case 'c': {
		char c = (char)va_arg(*ap, int);
		out_padded(o, &c, 1, f);
		break;
	}
	case 's': {
		const char *s = va_arg(*ap, const char *);
		if (!s)
			s = "(null)";
		size_t len = f->precision >= 0 ? strnlen(s, (size_t)f->precision) : strlen(s);
		f->zero = false;
		out_padded(o, s, len, f);
		break;
	}
	case '%': out_char(o, '%'); break;
	default:
		out_char(o, '%');
		out_char(o, conv);
		break;
	}
}

int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
	struct out o = { buf, size, 0 };
	struct fmt_spec f;
	va_list aq;

	va_copy(aq, ap);
	for (const char *p = fmt; *p; p++) {
		if (*p != '%') {
			out_char(&o, *p);
			continue;
		}
		p = parse_spec(p + 1, &f, &aq);
		if (!*p)
			break;
		format_one(&o, *p, &f, &aq);
	}
	va_end(aq);
	if (size)
		buf[o.pos < size ? o.pos : size - 1] = '\0';
	return (int)o.pos;
}

int snprintf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return n;
}
