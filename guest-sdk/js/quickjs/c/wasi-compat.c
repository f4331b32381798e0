/* Directed rounding for QuickJS's number formatting (wasi-compat.h). */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "wasi-compat.h"

#undef snprintf
#undef fesetround

static int round_mode = FE_TONEAREST;

int wasmcp_fesetround(int mode) {
	round_mode = mode;
	return 0;
}

/* More digits than a double's exact expansion has after the precision
 * asked for (at most 1074 fraction digits, 767 significant ones). */
#define EXACT 1100

/* bump adds one unit in the last place to the digits of s[0:n] (dots
 * skipped); returns 1 when it carried out of the first digit. */
static int bump(char *s, int n) {
	for (int i = n - 1; i >= 0; i--) {
		if (s[i] == '.')
			continue;
		if (s[i] != '9') {
			s[i]++;
			return 0;
		}
		s[i] = '0';
	}
	return 1;
}

/* directed formats d like fmt ("%.*f" or "%+.*e") with prec digits,
 * rounded toward +inf (up) or -inf (!up). */
static int directed(char *buf, size_t size, int e_format, int prec, double d, int up) {
	static char x[EXACT + 400];
	int neg = signbit(d);
	if (e_format)
		snprintf(x, sizeof x, "%+.*e", prec + EXACT, d);
	else
		snprintf(x, sizeof x, "%.*f", prec + EXACT, d);
	char out[EXACT + 400];
	int o = 0, i = 0;
	if (x[0] == '-' || x[0] == '+')
		out[o++] = x[i++];
	int first = o; /* the first digit */
	while (x[i] >= '0' && x[i] <= '9')
		out[o++] = x[i++];
	int kept = 0, rest = 0;
	if (x[i] == '.') {
		i++;
		if (prec > 0)
			out[o++] = '.';
		for (; x[i] >= '0' && x[i] <= '9'; i++) {
			if (kept < prec) {
				out[o++] = x[i];
				kept++;
			} else if (x[i] != '0') {
				rest = 1;
			}
		}
	}
	int exp = 0;
	if (e_format && (x[i] == 'e' || x[i] == 'E'))
		exp = atoi(x + i + 1);
	if (rest && (up ? !neg : neg) && bump(out + first, o - first)) {
		/* 9.99 -> 10.00: one more digit in front. */
		memmove(out + first + 1, out + first, o - first);
		out[first] = '1';
		o++;
		if (e_format) {
			/* 10.00e+N is 1.000e+(N+1): the dot moves left by one and
			 * the last digit goes. */
			if (prec > 0) {
				out[first + 1] = '.';
				out[first + 2] = '0';
			}
			o--;
			exp++;
		}
	}
	out[o] = 0;
	if (e_format)
		return snprintf(buf, size, "%se%c%02d", out, exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
	return snprintf(buf, size, "%s", out);
}

int wasmcp_snprintf(char *buf, size_t size, const char *fmt, ...) {
	va_list ap;
	va_start(ap, fmt);
	int n;
	int e_format = strcmp(fmt, "%+.*e") == 0;
	if (round_mode != FE_TONEAREST && (e_format || strcmp(fmt, "%.*f") == 0)) {
		int prec = va_arg(ap, int);
		double d = va_arg(ap, double);
		if (isfinite(d) && prec >= 0 && prec < 300)
			n = directed(buf, size, e_format, prec, d, round_mode == FE_UPWARD);
		else
			n = snprintf(buf, size, fmt, prec, d);
	} else {
		n = vsnprintf(buf, size, fmt, ap);
	}
	va_end(ap);
	return n;
}
